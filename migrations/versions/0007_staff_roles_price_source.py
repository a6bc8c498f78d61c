"""staff roles and price sources: staff_keys.roles, market_products.price_source

staff_keys.roles holds a key's roles, comma-separated ("curator", "reviewer" or "curator,reviewer").
Keys issued before roles existed were admitted by every staff route, so they keep that: existing rows
get "curator,reviewer" (the column's server default; new keys always name their roles).

market_products.price_source is the source of the product's newest observation (scrape, demo, import,
crowd, ...), kept beside its denormalised price; existing products take it from their newest row of
market_price_observations (latest observed_at, then highest id, as record_observation moves the price),
and stay null when they have none. The downgrade drops both columns.

The tables come from 0003_axiom (staff_keys) and 0004_market (market_products), so this revision
depends on them as well as following 0006_section_records.

Revision ID: 0007_staff_roles_price_source
Revises: 0004_market, 0006_section_records
Create Date: 2026-12-02 10:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_staff_roles_price_source"
down_revision = ("0004_market", "0006_section_records")
branch_labels = None
depends_on = ("0003_axiom",)  # staff_keys; 0004_market (market_products) is a parent

EVERY_ROLE = "curator,reviewer"

products = sa.table("market_products", sa.column("id"), sa.column("price_source"))
observations = sa.table(
    "market_price_observations",
    sa.column("id"),
    sa.column("product_id"),
    sa.column("source"),
    sa.column("observed_at"),
)


def upgrade() -> None:
    with op.batch_alter_table("staff_keys", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("roles", sa.String(length=64), nullable=False, server_default=EVERY_ROLE)
        )
    with op.batch_alter_table("market_products", schema=None) as batch_op:
        batch_op.add_column(sa.Column("price_source", sa.String(length=20), nullable=True))
    newest = (
        sa.select(observations.c.source)
        .where(observations.c.product_id == products.c.id)
        .order_by(observations.c.observed_at.desc(), observations.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    op.execute(sa.update(products).values(price_source=newest))


def downgrade() -> None:
    with op.batch_alter_table("market_products", schema=None) as batch_op:
        batch_op.drop_column("price_source")
    with op.batch_alter_table("staff_keys", schema=None) as batch_op:
        batch_op.drop_column("roles")
