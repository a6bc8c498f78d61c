"""Housekeeping of share links: one-time codes and browser sessions that expired more than
`CONCORD_RETENTION_DAYS` (7) ago are deleted by the hourly sweep; the link itself stays (its owner still
lists it) and a reviewer simply proves the address again."""

from __future__ import annotations

from datetime import timedelta

from domain import wiring
from domain.kernel import sweeps
from tests.sharing.conftest import code_from_dir


async def purge(runtime) -> int:
    item = next(s for s in wiring.SWEEPS if s.name == "documents.purge_share_access")
    return await sweeps.run(runtime.db, item, "test")


async def test_expired_codes_and_sessions_are_purged(docs, shared, runtime, mail_dir, clock):
    link = await shared["link"](
        permission="CommentOnly", accessMode="closed-org", allowedDomain="acme.com", expiresInHours=720
    )
    token = link["token"]
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "bob@acme.com"})
    assert resp.status == 202, await resp.text()
    code = code_from_dir(mail_dir, "bob@acme.com")
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": code}
    )
    assert resp.status == 200, await resp.text()
    assert (await docs.get(f"/api/share/{token}")).status == 200
    assert await purge(runtime) == 0  # nothing expired yet

    clock.advance(timedelta(days=7, hours=13))  # the code (10 min) and the session (12 h) are long gone
    assert await purge(runtime) == 2
    resp = await docs.get(f"/api/share/{token}")
    assert resp.status == 403, await resp.text()  # the old cookie proves nothing any more
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "bob@acme.com"})
    assert resp.status == 202
    code = code_from_dir(mail_dir, "bob@acme.com")
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": code}
    )
    assert resp.status == 200
    owner_list = f"/api/documents/{shared['doc']['id']}/share-links"
    listed = await docs.get(owner_list, headers=shared["owner"]["headers"])
    assert listed.status == 200
    assert link["id"] in await listed.text()  # the link itself is kept
