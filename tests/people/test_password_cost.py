"""The Argon2id cost of people's passwords is the operator's (CONCORD_PASSWORD_HASH_*): a new hash is made
at the configured cost, a hash made at another cost still signs its person in, and that sign-in re-hashes
it at the configured one; a cost Argon2 cannot run is refused when the settings load."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import select

from domain.kernel.settings import Settings
from domain.people.models import User
from tests.people.conftest import PASSWORD


async def _stored_hash(runtime: Any, email: str) -> str:
    async with runtime.db.read() as session:
        found = await session.scalar(select(User.password_hash).where(User.email == email))
    assert found is not None
    return str(found)


def _cost(settings: Any, monkeypatch: pytest.MonkeyPatch, memory: int, passes: int, lanes: int) -> None:
    monkeypatch.setattr(settings, "password_hash_memory_kib", memory)
    monkeypatch.setattr(settings, "password_hash_time_cost", passes)
    monkeypatch.setattr(settings, "password_hash_parallelism", lanes)


async def test_hashes_follow_the_configured_cost_and_sign_in_upgrades_them(
    docs, runtime, settings, monkeypatch, create_user, login
):
    _cost(settings, monkeypatch, 64, 2, 2)
    await create_user(email="ada@example.org")
    made = await _stored_hash(runtime, "ada@example.org")
    assert made.startswith("$argon2id$v=19$m=64,t=2,p=2$"), made

    # The operator raises the cost: the old hash still signs Ada in, and that sign-in replaces it.
    _cost(settings, monkeypatch, 128, 1, 1)
    wrong = {"email": "ada@example.org", "password": "wrong password!"}
    resp = await docs.post("/api/auth/login", json=wrong)
    assert resp.status == 401, await resp.text()
    assert await _stored_hash(runtime, "ada@example.org") == made  # a failed sign-in changes nothing

    pair = await login(email="ada@example.org")
    assert (await docs.get("/api/documents", headers=pair["headers"])).status == 200
    upgraded = await _stored_hash(runtime, "ada@example.org")
    assert upgraded.startswith("$argon2id$v=19$m=128,t=1,p=1$"), upgraded

    # The new hash is the password's, and is kept while the cost stays.
    await login(email="ada@example.org", password=PASSWORD)
    assert await _stored_hash(runtime, "ada@example.org") == upgraded


def test_a_cost_argon2_cannot_run_is_refused_naming_the_setting():
    with pytest.raises(ValidationError, match="password_hash_memory_kib: at least 8 KiB a lane"):
        Settings(password_hash_memory_kib=16, password_hash_parallelism=4)
    with pytest.raises(ValidationError, match="password_hash_time_cost"):
        Settings(password_hash_time_cost=0)
    assert Settings(password_hash_memory_kib=32, password_hash_parallelism=4).password_hash_memory_kib == 32
