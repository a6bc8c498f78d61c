"""Staff keys carry roles: created with at least one known role, read back by authenticate, audited."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from domain.kernel.errors import BadRequest, Unauthorized
from domain.kernel.models import AuditEntry
from domain.people import staff


async def test_create_stores_roles_and_authenticate_returns_them(runtime):
    async with runtime.db.transaction() as session:
        made = await staff.create(session, name="  Cora  ", roles=["reviewer,curator", "curator"])
        reviewer = await staff.create(session, name="Rey", roles=["reviewer"])
    assert made["name"] == "Cora"
    assert made["roles"] == ["curator", "reviewer"]
    assert made["apiKey"].startswith(staff.STAFF_KEY_PREFIX)
    assert made["revokedAt"] is None
    async with runtime.db.read() as session:
        member = await staff.authenticate(session, made["apiKey"])
        only = await staff.authenticate(session, reviewer["apiKey"])
        entry = await session.scalar(
            select(AuditEntry).where(AuditEntry.op == "staff.key.create", AuditEntry.entity_id == made["id"])
        )
    assert member.actor.id == made["id"]
    assert member.actor.kind == "staff"
    assert member.roles == frozenset({"curator", "reviewer"})
    assert only.roles == frozenset({"reviewer"})
    assert entry is not None
    assert '"roles":["curator","reviewer"]' in (entry.after_json or "")
    assert made["apiKey"] not in (entry.after_json or "")


@pytest.mark.parametrize("roles", [[], [""], [" , "], ["admin"], ["curator", "Admin"], ["curators"]])
async def test_create_refuses_missing_or_unknown_roles_naming_role(runtime, roles):
    async with runtime.db.transaction() as session:
        with pytest.raises(BadRequest) as caught:
            await staff.create(session, name="Nobody", roles=roles)
    assert caught.value.extra["field"] == "role"
    assert caught.value.detail.startswith("role:")


async def test_revoked_and_unknown_keys_are_refused(runtime):
    from domain.kernel.context import SYSTEM

    async with runtime.db.transaction() as session:
        made = await staff.create(session, name="Gone", roles=["curator"])
        await staff.revoke(session, SYSTEM, made["id"])
    async with runtime.db.read() as session:
        with pytest.raises(Unauthorized, match="revoked"):
            await staff.authenticate(session, made["apiKey"])
        with pytest.raises(Unauthorized, match="invalid"):
            await staff.authenticate(session, staff.STAFF_KEY_PREFIX + "0" * 40)
        listed = {k["id"]: k for k in await staff.list_keys(session)}
    assert listed[made["id"]]["revokedAt"] is not None
    assert "apiKey" not in listed[made["id"]]
