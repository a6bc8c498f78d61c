"""events: a partial index on (stream, seq) of the events people wrote (actor_kind 'Individual')

The review desk's page of a topic or document says when a person last acted on it: the latest such event of
its stream. Without this index that read walks the stream's events backwards through uq_events_stream_seq
until it meets one, every event of a stream no person ever touched (a million on a busy topic). The index
holds only people's events (decisions, answers), a few rows a stream. Partial indexes are plain on both
databases (PostgreSQL, and SQLite since 3.8).

Revision ID: 0041_events_person_index
Revises: 0040_legislation_doc_index
Create Date: 2026-11-28 11:30:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = "0041_events_person_index"
down_revision = "0040_legislation_doc_index"
branch_labels = None
depends_on = None

_INDEX = "ix_events_person"
_PERSON = sa.text("actor_kind = 'Individual'")


def upgrade() -> None:
    op.create_index(
        _INDEX, "events", ["stream", "seq"], unique=False, postgresql_where=_PERSON, sqlite_where=_PERSON
    )


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="events")
