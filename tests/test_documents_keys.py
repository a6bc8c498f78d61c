"""Service keys, scopes and organisations on the document API."""

from __future__ import annotations

from tests.documents_support import make_key, upload_ready


async def test_missing_invalid_and_revoked_keys_get_401(docs, runtime):
    resp = await docs.get("/api/documents")
    assert resp.status == 401
    body = await resp.json()
    assert resp.content_type == "application/problem+json"
    assert body["status"] == 401
    assert body["type"]
    assert body["title"]
    resp = await docs.get("/api/documents", headers={"X-Api-Key": "svc_sk_nope"})
    assert resp.status == 401
    resp = await docs.get("/api/documents", headers={"X-Api-Key": "pact_sk_0123"})
    assert resp.status == 401
    key = await make_key(runtime)
    resp = await docs.get("/api/documents", headers={"Authorization": f"Bearer {key['apiKey']}"})
    assert resp.status == 200
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM

    async with runtime.db.transaction() as session:
        await servicekeys.revoke(session, SYSTEM, key["id"])
    resp = await docs.get("/api/documents", headers=key["headers"])
    assert resp.status == 401
    assert (await resp.json())["code"] == "revoked_api_key"


async def test_scope_is_enforced_per_endpoint(docs, runtime):
    reader = await make_key(runtime, scopes="documents:read")
    resp = await docs.get("/api/documents", headers=reader["headers"])
    assert resp.status == 200
    resp = await docs.post("/api/documents", headers=reader["headers"], data=b"x")
    assert resp.status == 403
    assert (await resp.json())["requiredScope"] == "documents:write"
    resp = await docs.get("/api/comments/search", headers=reader["headers"])
    assert resp.status == 403
    resp = await docs.post("/api/tap/x/join", headers=reader["headers"], json={"agentName": "a"})
    assert resp.status == 403


async def test_no_key_sees_another_organisations_documents(docs, runtime):
    acme = await make_key(runtime, org="Acme")
    globex = await make_key(runtime, org="Globex")
    doc = await upload_ready(docs, acme, b"# Plan\n\nSecret.\n", "plan.md", tags="q1")
    for path in (
        f"/api/documents/{doc['id']}",
        f"/api/documents/{doc['id']}/download",
        f"/api/tap/{doc['id']}/content",
        f"/api/tap/{doc['id']}/sections",
    ):
        resp = await docs.get(path, headers=globex["headers"])
        assert resp.status == 404, path
    resp = await docs.get("/api/documents", headers=globex["headers"])
    assert (await resp.json())["total"] == 0
    resp = await docs.post(
        f"/api/tap/{doc['id']}/join", headers=globex["headers"], json={"agentName": "spy", "role": "editor"}
    )
    assert resp.status == 404


def test_cli_creates_lists_and_revokes_keys(capsys, database):
    import concord_cli

    assert (
        concord_cli.main(["keys", "create", "--org", "Initech", "--scopes", "documents:read,tap:read"]) == 0
    )
    out = capsys.readouterr()
    secret = out.out.strip()
    assert secret.startswith("svc_sk_")
    assert concord_cli.main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert "Initech" in listing
    assert secret not in listing
    import json

    row = next(json.loads(line) for line in listing.splitlines() if "Initech" in line)
    assert row["scopes"] == ["documents:read", "tap:read"]
    assert concord_cli.main(["keys", "revoke", row["id"]]) == 0
    assert json.loads(capsys.readouterr().out)["revokedAt"]
    assert concord_cli.main(["keys", "create", "--org", "Initech", "--scopes", "bogus"]) == 2


async def test_openapi_and_malformed_requests_never_500(docs, runtime):
    resp = await docs.get("/openapi.json")
    spec = await resp.json()
    assert spec["openapi"] == "3.1.0"
    assert "multipart/form-data" in spec["paths"]["/api/documents"]["post"]["requestBody"]["content"]
    for path in (
        "/api/tap/{docId}/join",
        "/api/tap/{docId}/sections/{sectionId}/lock",
        "/api/comments/search",
    ):
        assert path in spec["paths"]
    key = await make_key(runtime)
    h = key["headers"]
    cases = [
        ("POST", "/api/documents", {"Content-Type": "multipart/form-data"}, b"garbage"),
        ("POST", "/api/documents", {"Content-Type": "multipart/form-data; boundary=xx"}, b"--xx\r\nbroken"),
        ("POST", "/api/comments", {"Content-Type": "application/json"}, b"[1,2]"),
        ("POST", "/api/comments", {"Content-Type": "application/json"}, b"{not json"),
        (
            "POST",
            "/api/tap/" + "x" * 300 + "/join",
            {"Content-Type": "application/json"},
            b'{"agentName":"a"}',
        ),
        ("GET", "/api/tap/nope/sections", {}, b""),
        ("PUT", "/api/comments/" + "y" * 100 + "/resolve", {}, b""),
    ]
    for method, path, headers, body in cases:
        resp = await docs.request(method, path, headers={**h, **headers}, data=body)
        assert 400 <= resp.status < 500, (path, resp.status, await resp.text())
