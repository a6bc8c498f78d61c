"""Housekeeping of sign-ins: the hourly sweeps delete sessions and refresh tokens that can no longer be
used once `CONCORD_RETENTION_DAYS` (7) have passed, and never a live one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from domain import wiring
from domain.kernel import sweeps
from tests.pages.support import sign_in, staff_key


async def sweep(runtime: Any, name: str) -> int:
    item = next(s for s in wiring.SWEEPS if s.name == name)
    return await sweeps.run(runtime.db, item, "test")


async def test_ended_and_expired_sign_ins_are_purged_and_live_ones_kept(
    docs, runtime, create_user, login, clock
):
    await create_user()
    ended = await login()
    assert (await docs.post("/api/auth/logout", json={"refreshToken": ended["refreshToken"]})).status == 200
    live = await login()
    assert await sweep(runtime, "people.purge_user_sessions") == 0  # nothing is old enough yet

    clock.advance(timedelta(days=8))
    # The ended session and its token go; the live one (its refresh token lives 30 days) stays.
    assert await sweep(runtime, "people.purge_user_sessions") == 2
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": ended["refreshToken"]})
    assert resp.status == 401
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": live["refreshToken"]})
    assert resp.status == 200, await resp.text()
    renewed = await resp.json()

    # Past every refresh token's life, the session can never be renewed: it goes with its tokens.
    clock.advance(timedelta(days=30 + 8))
    assert await sweep(runtime, "people.purge_user_sessions") == 3  # two used/expired tokens + the session
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": renewed["refreshToken"]})
    assert resp.status == 401
    assert await sweep(runtime, "people.purge_user_sessions") == 0


async def test_review_desk_sessions_are_purged_after_they_end(hub, runtime, clock):
    key = await staff_key(runtime, "Rita", ("reviewer",))
    csrf = await sign_in(hub, key)
    resp = await hub.post("/review/sign-out", data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    await sign_in(hub, key)  # a new sign-in, still live
    assert await sweep(runtime, "people.purge_sessions") == 0

    clock.advance(timedelta(days=7, hours=1))
    assert await sweep(runtime, "people.purge_sessions") == 1  # the signed-out one only
    page = await hub.get("/review/")
    assert page.status == 200
    assert 'name="key"' in await page.text()  # the second sign-in expired after 8 h: sign in again
    clock.advance(timedelta(hours=8))  # now 7 days past its expiry too
    assert await sweep(runtime, "people.purge_sessions") == 1
    assert await sweep(runtime, "people.purge_sessions") == 0
