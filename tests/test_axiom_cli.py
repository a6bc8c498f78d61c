"""The operator commands: `concord keys create-staff|list-staff|revoke-staff` and `concord legislation
ingest FILE`."""

from __future__ import annotations

import json

import pytest

from tests.axiom_helpers import act
from tests.processes import concord


async def test_create_staff_key_prints_it_once_and_it_works(hub, runtime):
    code, out, err = await concord("keys", "create-staff", "--name", "Jo Curator", "--role", "curator")
    assert code == 0, err
    key = out.strip().splitlines()[-1]
    assert key.startswith("staff_sk_")
    assert "roles curator" in err
    # Ingest admits any staff key, whatever its roles.
    resp = await hub.post(
        "/api/axiom/legislation/ingest",
        json={"documents": [act("Dividing Fences Act 1991", "NSW")]},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert resp.status == 200, await resp.text()


@pytest.mark.slow
async def test_staff_keys_carry_roles_are_listed_without_secrets_and_revoked(hub, runtime):
    code, out, err = await concord(
        "keys", "create-staff", "--name", "Rey Both", "--role", "reviewer", "--role", "curator"
    )
    assert code == 0, err
    both = out.strip()
    code, out, err = await concord("keys", "create-staff", "--name", "Vi Reviewer", "--role", " Reviewer ")
    assert code == 0, err
    code, out, err = await concord("keys", "create-staff", "--name", "Cu Both", "--role", "curator,reviewer")
    assert code == 0, err

    code, out, err = await concord("keys", "list-staff")
    assert code == 0, err
    assert "staff_sk_" not in out
    listed = {row["name"]: row for row in map(json.loads, out.strip().splitlines())}
    assert set(listed["Rey Both"]) == {"id", "name", "roles", "createdAt", "revokedAt"}
    assert listed["Rey Both"]["roles"] == ["curator", "reviewer"]
    assert listed["Cu Both"]["roles"] == ["curator", "reviewer"]
    assert listed["Vi Reviewer"]["roles"] == ["reviewer"]
    assert listed["Rey Both"]["revokedAt"] is None

    key_id = listed["Rey Both"]["id"]
    code, out, err = await concord("keys", "revoke-staff", key_id)
    assert code == 0, err
    revoked = json.loads(out)
    assert revoked["id"] == key_id
    assert revoked["revokedAt"]
    code, out, _ = await concord("keys", "revoke-staff", key_id)  # again: nothing changes
    assert json.loads(out)["revokedAt"] == revoked["revokedAt"]
    resp = await hub.post(
        "/api/axiom/legislation/ingest",
        json={"documents": [act("Dividing Fences Act 1991", "NSW")]},
        headers={"Authorization": f"Bearer {both}"},
    )
    assert resp.status == 401, await resp.text()
    assert "revoked" in (await resp.json())["detail"]

    code, _, err = await concord("keys", "revoke-staff", "no-such-key")
    assert code == 2
    assert "no staff key with id no-such-key" in err


async def test_create_staff_key_needs_a_known_role(runtime):
    code, out, err = await concord("keys", "create-staff", "--name", "Nobody")
    assert code != 0
    assert not out
    assert "--role" in err
    for bad in ("admin", "curator,admin", ","):
        code, out, err = await concord("keys", "create-staff", "--name", "Nobody", "--role", bad)
        assert code == 2, (bad, out)
        assert not out
        assert err.startswith("error: role:"), err
    code, out, _ = await concord("keys", "list-staff")
    assert "Nobody" not in out


async def test_legislation_ingest_file(hub, runtime, tmp_path):
    path = tmp_path / "instruments.json"
    path.write_text(
        json.dumps({"documents": [act("Dividing Fences Act 1991", "NSW", ("s 7", "Contributions"))]})
    )
    code, out, _ = await concord("legislation", "ingest", str(path))
    assert code == 0
    assert "1 created" in out
    resp = await hub.get("/api/axiom/resolve", params={"citation": "Dividing Fences Act 1991 (NSW) s 7"})
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["sectionRef"] == "s 7"
    code, out, _ = await concord("legislation", "ingest", str(path))
    assert "1 unchanged" in out
    path.write_text(json.dumps({"documents": [{"title": "No jurisdiction Act 1990", "type": "act"}]}))
    code, _, err = await concord("legislation", "ingest", str(path))
    assert code != 0
    assert "jurisdiction" in err
