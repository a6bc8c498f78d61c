"""Migration 0007: staff keys issued before roles existed get both roles (every staff route admitted
them), and each product's price_source is its newest observation's source; the downgrade drops both.

Runs on its own database (a file on SQLite, a database of its own on PostgreSQL), migrated step by step."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from alembic import command

import migrations
from domain.kernel import keys
from domain.kernel.db import Database, UTCDateTime, make_engine
from domain.people import staff
from tests.migration_support import scratch_database

old = sa.MetaData()
staff_keys = sa.Table(
    "staff_keys",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("name", sa.String(128)),
    sa.Column("key_hash", sa.String(64)),
    sa.Column("created_at", UTCDateTime()),
    sa.Column("revoked_at", UTCDateTime()),
)
retailers = sa.Table(
    "market_retailers",
    old,
    sa.Column("slug", sa.String(64)),
    sa.Column("name", sa.String(200)),
    sa.Column("domain", sa.String(253)),
    sa.Column("delivery_fee_cents", sa.Integer()),
    sa.Column("pickup_available", sa.Boolean()),
    sa.Column("pickup_fee_cents", sa.Integer()),
    sa.Column("demo", sa.Boolean()),
    sa.Column("created_at", UTCDateTime()),
)
products = sa.Table(
    "market_products",
    old,
    sa.Column("id", sa.String(36)),
    sa.Column("retailer_slug", sa.String(64)),
    sa.Column("sku", sa.String(120)),
    sa.Column("name", sa.String(300)),
    sa.Column("norm_name", sa.String(300)),
    sa.Column("url", sa.String(2000)),
    sa.Column("category", sa.String(40)),
    sa.Column("pack_size", sa.Float()),
    sa.Column("pack_unit", sa.String(16)),
    sa.Column("tier", sa.String(10)),
    sa.Column("pickup_available", sa.Boolean()),
    sa.Column("demo", sa.Boolean()),
    sa.Column("price_cents", sa.Integer()),
    sa.Column("in_stock", sa.Boolean()),
    sa.Column("observed_at", UTCDateTime()),
    sa.Column("scrape_enabled", sa.Boolean()),
    sa.Column("created_at", UTCDateTime()),
)
observations = sa.Table(
    "market_price_observations",
    old,
    sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=True),
    sa.Column("product_id", sa.String(36)),
    sa.Column("price_cents", sa.Integer()),
    sa.Column("in_stock", sa.Boolean()),
    sa.Column("source", sa.String(20)),
    sa.Column("observed_at", UTCDateTime()),
    sa.Column("stale", sa.Boolean()),
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
BEFORE = ("0003_axiom", "0004_market", "0006_section_records")


@pytest.fixture
async def scratch_url() -> AsyncIterator[str]:
    """A database of its own, at the schema before 0007."""
    async with scratch_database("0007", BEFORE) as url:
        yield url


def _product(pid: str, sku: str, price: int | None, at: datetime | None) -> dict[str, object]:
    return {
        "id": pid,
        "retailer_slug": "alpha",
        "sku": sku,
        "name": sku,
        "norm_name": sku,
        "url": f"https://alpha.example/{sku}",
        "category": "general",
        "pack_size": 1.0,
        "pack_unit": "item",
        "tier": "standard",
        "pickup_available": True,
        "demo": False,
        "price_cents": price,
        "in_stock": True,
        "observed_at": at,
        "scrape_enabled": True,
        "created_at": T0,
    }


def _obs(pid: str, source: str, at: datetime) -> dict[str, object]:
    return {
        "product_id": pid,
        "price_cents": 100,
        "in_stock": True,
        "source": source,
        "observed_at": at,
        "stale": False,
    }


async def test_old_keys_get_both_roles_and_products_their_newest_source(scratch_url: str) -> None:
    secret = keys.generate(staff.STAFF_KEY_PREFIX)
    key_id = str(uuid.uuid4())
    history, tie, bare = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    later = T0 + timedelta(days=1)
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                staff_keys.insert(),
                [{"id": key_id, "name": "Old Hand", "key_hash": keys.hash_key(secret), "created_at": T0}],
            )
            await conn.execute(
                retailers.insert(),
                [
                    {
                        "slug": "alpha",
                        "name": "Alpha",
                        "domain": "alpha.example",
                        "delivery_fee_cents": 0,
                        "pickup_available": False,
                        "pickup_fee_cents": 0,
                        "demo": False,
                        "created_at": T0,
                    }
                ],
            )
            await conn.execute(
                products.insert(),
                [
                    _product(history, "history", 100, later),
                    _product(tie, "tie", 100, T0),
                    _product(bare, "bare", None, None),
                ],
            )
            # Inserted out of time order: the newest by observed_at wins, then the later row on a tie.
            await conn.execute(
                observations.insert(),
                [
                    _obs(history, "import", later),
                    _obs(history, "scrape", T0),
                    _obs(tie, "demo", T0),
                    _obs(tie, "crowd", T0),
                ],
            )
    finally:
        await engine.dispose()

    await migrations.upgrade_async(scratch_url, "heads")

    db = Database(scratch_url)
    try:
        async with db.read() as session:
            member = await staff.authenticate(session, secret)
            listed = await staff.list_keys(session)
            rows = await session.execute(sa.text("SELECT id, price_source FROM market_products"))
            sources: dict[str, str | None] = {pid: source for pid, source in rows}
        async with db.transaction() as session:
            fresh = await staff.create(session, name="New Hand", roles=["reviewer"])
        async with db.read() as session:
            assert (await staff.authenticate(session, fresh["apiKey"])).roles == {"reviewer"}
    finally:
        await db.dispose()
    assert member.actor.id == key_id
    assert member.roles == {"curator", "reviewer"}
    assert [k["roles"] for k in listed] == [["curator", "reviewer"]]
    assert sources == {history: "import", tie: "crowd", bare: None}

    await asyncio.to_thread(command.downgrade, migrations.config(scratch_url), "0006_section_records")
    engine = make_engine(scratch_url, null_pool=True)
    try:
        async with engine.connect() as conn:

            def columns(c: sa.Connection, table: str) -> set[str]:
                return {col["name"] for col in sa.inspect(c).get_columns(table)}

            assert "roles" not in await conn.run_sync(columns, "staff_keys")
            assert "price_source" not in await conn.run_sync(columns, "market_products")
            count = await conn.scalar(sa.select(sa.func.count()).select_from(staff_keys))
            assert count == 2
    finally:
        await engine.dispose()
