"""audit entity ids as long as the ids they name: audit_entries.entity_id VARCHAR(80) -> VARCHAR(120)

Legislation instrument ids are up to 120 characters (a default id is the jurisdiction and the title's slug),
and ingesting one with a longer id than 80 failed on PostgreSQL at its audit entry (a 500: value too long for
type character varying(80)). Widening a VARCHAR changes no row; SQLite ignores the length. The downgrade
narrows it back, which fails while a longer id is stored (truncating an audit record silently would be worse).

Revision ID: 0022_audit_entity_id_length
Revises: 0001_core
Create Date: 2026-11-23 12:45:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0022_audit_entity_id_length"
down_revision = "0001_core"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("audit_entries", schema=None) as batch_op:
        batch_op.alter_column(
            "entity_id", existing_type=sa.String(80), type_=sa.String(120), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("audit_entries", schema=None) as batch_op:
        batch_op.alter_column(
            "entity_id", existing_type=sa.String(120), type_=sa.String(80), existing_nullable=False
        )
