"""event chain: PACT §6.1 links and the §6.4 hash chain on every event stream

events gains correlation_id and in_response_to (what links related events) and prev_hash (the hash of the
stream's previous event as served). event_streams gains last_hash (the hash of the stream's last event, read
with the counter's lock so that a writer chains without reading an event), root_seq (the sequence number of
the stream's latest signed `pact.log.root` event, 0 for none) and window_opened_at (when the window the next
root closes was opened).

Existing events keep NULL links and NULL prev_hash: they were served without a chain, so none is invented
for them. A stream's first event after this migration carries prev_hash "GENESIS-v202" (its last_hash is
NULL and its sequence numbers do not start at 1), and existing streams keep window_opened_at NULL, which the
first root sweep takes as due: their history gets a signed root soon after the upgrade. The downgrade drops
the columns (the chain and its links are lost; the events stay).

Revision ID: 0027_event_chain
Revises: 0022_audit_entity_id_length
Create Date: 2026-11-24 09:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

import domain.kernel.db

revision = "0027_event_chain"
down_revision = "0022_audit_entity_id_length"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("correlation_id", sa.String(length=80), nullable=True))
        batch_op.add_column(sa.Column("in_response_to", sa.String(length=80), nullable=True))
        batch_op.add_column(sa.Column("prev_hash", sa.String(length=64), nullable=True))
    with op.batch_alter_table("event_streams", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("root_seq", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("window_opened_at", domain.kernel.db.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("event_streams", schema=None) as batch_op:
        batch_op.drop_column("window_opened_at")
        batch_op.drop_column("root_seq")
        batch_op.drop_column("last_hash")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_column("prev_hash")
        batch_op.drop_column("in_response_to")
        batch_op.drop_column("correlation_id")
