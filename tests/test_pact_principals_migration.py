"""Migration 0036: a key's principal and a member's session profile (principal, PACT role, contact) come and
go with upgrade and downgrade; rows made before it keep working (NULL: the agent is its own principal)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel.db import make_engine
from tests.migration_support import scratch_database

BEFORE = "0035_invites"
THIS = "0036_pact_principals"
PROFILE = {"principal_id", "pact_role", "contact"}
INSERT = (
    "INSERT INTO pact_presence (resource_type, resource_id, member_id, attention_required, read_to_seq) "
    "VALUES ('document', 'd1', 'm1', false, 0)"
)
READ = "SELECT principal_id, pact_role, contact FROM pact_presence WHERE member_id = 'm1'"


def _shape(sync: sa.Connection) -> tuple[set[str], set[str]]:
    inspector = sa.inspect(sync)
    return (
        {c["name"] for c in inspector.get_columns("service_keys")}
        | {f"obligation.{c['name']}" for c in inspector.get_columns("pact_obligations")},
        {c["name"] for c in inspector.get_columns("pact_presence")},
    )


async def test_upgrade_and_downgrade() -> None:
    async with scratch_database("principals", [THIS]) as url:
        engine = make_engine(url, null_pool=True)
        try:
            async with engine.connect() as conn:
                key_columns, presence_columns = await conn.run_sync(_shape)
            assert {"principal", "obligation.principal_id"} <= key_columns
            assert PROFILE <= presence_columns

            await asyncio.to_thread(command.downgrade, migrations.config(url), BEFORE)
            async with engine.begin() as conn:
                key_columns, presence_columns = await conn.run_sync(_shape)
                assert not {"principal", "obligation.principal_id"} & key_columns
                assert not PROFILE & presence_columns
                await conn.execute(sa.text(INSERT))

            await asyncio.to_thread(command.upgrade, migrations.config(url), THIS)
            async with engine.connect() as conn:
                row = (await conn.execute(sa.text(READ))).one()
            assert tuple(row) == (None, None, None)
        finally:
            await engine.dispose()
