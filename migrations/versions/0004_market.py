"""market: retailers, products, prices, quote items, carts, fuel

Revision ID: 0004_market
Revises: 0001_core
Create Date: 2026-11-22 11:21:08.236631
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import domain.kernel.db

revision = "0004_market"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_cart_optimisations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column(
            "request",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "result",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_cart_optimisations")),
    )
    op.create_table(
        "market_fuel_stations",
        sa.Column("id", sa.String(length=80), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("brand", sa.String(length=120), nullable=True),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("address", sa.String(length=500), nullable=True),
        sa.Column("suburb", sa.String(length=120), nullable=True),
        sa.Column("state", sa.String(length=3), nullable=False),
        sa.Column("postcode", sa.String(length=8), nullable=True),
        sa.Column("latitude", sa.Float(), nullable=False),
        sa.Column("longitude", sa.Float(), nullable=False),
        sa.Column("demo", sa.Boolean(), nullable=False),
        sa.Column("updated_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_fuel_stations")),
    )
    with op.batch_alter_table("market_fuel_stations", schema=None) as batch_op:
        batch_op.create_index("ix_market_fuel_stations_lat_lon", ["latitude", "longitude"], unique=False)
        batch_op.create_index("ix_market_fuel_stations_state", ["state"], unique=False)

    op.create_table(
        "market_quote_items",
        sa.Column("key", sa.String(length=80), nullable=False),
        sa.Column("unit", sa.String(length=8), nullable=False),
        sa.Column("description", sa.String(length=300), nullable=False),
        sa.Column("category", sa.String(length=20), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_market_quote_items")),
    )
    op.create_table(
        "market_retailers",
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("delivery_fee_cents", sa.Integer(), nullable=False),
        sa.Column("free_delivery_over_cents", sa.Integer(), nullable=True),
        sa.Column("pickup_available", sa.Boolean(), nullable=False),
        sa.Column("pickup_fee_cents", sa.Integer(), nullable=False),
        sa.Column("demo", sa.Boolean(), nullable=False),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("slug", name=op.f("pk_market_retailers")),
    )
    op.create_table(
        "market_fuel_current",
        sa.Column("station_id", sa.String(length=80), nullable=False),
        sa.Column("fuel_type", sa.String(length=10), nullable=False),
        sa.Column("cents_per_litre", sa.Float(), nullable=False),
        sa.Column("priced_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["station_id"],
            ["market_fuel_stations.id"],
            name=op.f("fk_market_fuel_current_station_id_market_fuel_stations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("station_id", "fuel_type", name=op.f("pk_market_fuel_current")),
    )
    with op.batch_alter_table("market_fuel_current", schema=None) as batch_op:
        batch_op.create_index(
            "ix_market_fuel_current_fuel_price", ["fuel_type", "cents_per_litre"], unique=False
        )

    op.create_table(
        "market_fuel_prices",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("station_id", sa.String(length=80), nullable=False),
        sa.Column("fuel_type", sa.String(length=10), nullable=False),
        sa.Column("cents_per_litre", sa.Float(), nullable=False),
        sa.Column("priced_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["station_id"],
            ["market_fuel_stations.id"],
            name=op.f("fk_market_fuel_prices_station_id_market_fuel_stations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_fuel_prices")),
        sa.UniqueConstraint("station_id", "fuel_type", "priced_at", name="uq_market_fuel_prices_point"),
    )
    op.create_table(
        "market_products",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("retailer_slug", sa.String(length=64), nullable=False),
        sa.Column("sku", sa.String(length=120), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("norm_name", sa.String(length=300), nullable=False),
        sa.Column("brand", sa.String(length=120), nullable=True),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("ean", sa.String(length=14), nullable=True),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("pack_size", sa.Float(), nullable=False),
        sa.Column("pack_unit", sa.String(length=16), nullable=False),
        sa.Column("item_key", sa.String(length=80), nullable=True),
        sa.Column("tier", sa.String(length=10), nullable=False),
        sa.Column("pickup_available", sa.Boolean(), nullable=False),
        sa.Column("demo", sa.Boolean(), nullable=False),
        sa.Column("price_cents", sa.Integer(), nullable=True),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("observed_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("scrape_enabled", sa.Boolean(), nullable=False),
        sa.Column("last_scraped_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("scrape_status", sa.String(length=40), nullable=True),
        sa.Column("scrape_error", sa.Text(), nullable=True),
        sa.Column("created_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_key"],
            ["market_quote_items.key"],
            name=op.f("fk_market_products_item_key_market_quote_items"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["retailer_slug"],
            ["market_retailers.slug"],
            name=op.f("fk_market_products_retailer_slug_market_retailers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_products")),
        sa.UniqueConstraint("retailer_slug", "sku", name="uq_market_products_retailer_sku"),
    )
    with op.batch_alter_table("market_products", schema=None) as batch_op:
        batch_op.create_index("ix_market_products_ean", ["ean"], unique=False)
        batch_op.create_index("ix_market_products_item_key", ["item_key"], unique=False)
        batch_op.create_index("ix_market_products_norm_name", ["norm_name"], unique=False)

    op.create_table(
        "market_price_observations",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("product_id", sa.String(length=36), nullable=False),
        sa.Column("price_cents", sa.Integer(), nullable=False),
        sa.Column("unit_price_cents", sa.Float(), nullable=True),
        sa.Column("unit", sa.String(length=8), nullable=True),
        sa.Column("in_stock", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("observed_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("stale", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["market_products.id"],
            name=op.f("fk_market_price_observations_product_id_market_products"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_price_observations")),
    )
    with op.batch_alter_table("market_price_observations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_market_price_observations_product_time", ["product_id", "observed_at"], unique=False
        )
        batch_op.create_index("ix_market_price_observations_stale", ["stale", "observed_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("market_price_observations", schema=None) as batch_op:
        batch_op.drop_index("ix_market_price_observations_stale")
        batch_op.drop_index("ix_market_price_observations_product_time")

    op.drop_table("market_price_observations")
    with op.batch_alter_table("market_products", schema=None) as batch_op:
        batch_op.drop_index("ix_market_products_norm_name")
        batch_op.drop_index("ix_market_products_item_key")
        batch_op.drop_index("ix_market_products_ean")

    op.drop_table("market_products")
    op.drop_table("market_fuel_prices")
    with op.batch_alter_table("market_fuel_current", schema=None) as batch_op:
        batch_op.drop_index("ix_market_fuel_current_fuel_price")

    op.drop_table("market_fuel_current")
    op.drop_table("market_retailers")
    op.drop_table("market_quote_items")
    with op.batch_alter_table("market_fuel_stations", schema=None) as batch_op:
        batch_op.drop_index("ix_market_fuel_stations_state")
        batch_op.drop_index("ix_market_fuel_stations_lat_lon")

    op.drop_table("market_fuel_stations")
    op.drop_table("market_cart_optimisations")
