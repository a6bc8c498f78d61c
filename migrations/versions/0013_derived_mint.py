"""derived mint: the system wallet's balance is no longer stored

The ledger's system mint became append-only (domain/kernel/ledger.py): transfers to and from it write their
ledger entries but never update its wallet row, so that no row is locked by every transfer. Its balance is
derived from its entries; the stored column is zeroed so that nothing reads a stale figure. The downgrade
puts the derived balance back into the column.

Revision ID: 0013_derived_mint
Revises: 0011_staff_sessions
Create Date: 2026-11-23 09:00:00.000000
"""

from alembic import op

revision = "0013_derived_mint"
down_revision = "0011_staff_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE wallets SET balance = 0 WHERE kind = 'system'")


def downgrade() -> None:
    op.execute(
        "UPDATE wallets SET balance = "
        "(SELECT COALESCE(SUM(CASE WHEN e.to_wallet = wallets.id THEN e.amount ELSE -e.amount END), 0) "
        "FROM ledger_entries e WHERE e.to_wallet = wallets.id OR e.from_wallet = wallets.id) "
        "WHERE kind = 'system'"
    )
