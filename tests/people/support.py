"""A signed-in person made quickly, for tests that need one among other credentials (the access matrix):
the person is added with a password hashed at the suite's Argon2id cost (tests/conftest.py), then signs in
through the domain."""

from __future__ import annotations

from typing import Any

PASSWORD = "correct horse battery"


async def person_headers(runtime: Any, *, org: str, scopes: list[str], email: str) -> dict[str, str]:
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM
    from domain.people import user_sessions as sessions
    from domain.people import users
    from domain.people.models import User

    async with runtime.db.transaction() as session:
        found = await servicekeys.organisation(session, org, create=True)
        hashed = await users.hash_password(PASSWORD)
        session.add(User(org_id=found.id, email=email, password_hash=hashed, scopes=scopes))
        await session.flush()
        pair = await sessions.login(session, SYSTEM, runtime.settings, email=email, password=PASSWORD)
    return {"Authorization": f"Bearer {pair.access_token}"}
