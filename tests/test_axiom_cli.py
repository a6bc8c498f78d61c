"""The operator commands: `concord keys create-staff` and `concord legislation ingest FILE`."""

from __future__ import annotations

import asyncio
import json
import sys

from tests.axiom_helpers import act


async def concord(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "concord_cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_create_staff_key_prints_it_once_and_it_works(hub, runtime):
    code, out, _ = await concord("keys", "create-staff", "--name", "Jo Curator")
    assert code == 0
    key = out.strip().splitlines()[-1]
    assert key.startswith("staff_sk_")
    resp = await hub.post(
        "/api/axiom/legislation/ingest",
        json={"documents": [act("Dividing Fences Act 1991", "NSW")]},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert resp.status == 200, await resp.text()


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
