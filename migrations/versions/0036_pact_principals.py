"""pact principals: the principal a service key acts for, and a member's declared session profile

service_keys gains principal: the DID (did:web:org.example, …) an operator attests a key acts for when the
key is minted (`concord keys create --principal`); NULL for every existing key, which stays its own
principal (urn:concord:agent:…). pact_presence gains principal_id (the joining key's principal, recorded when
the member joins), pact_role (the PACT role it declared: observer, contributor, proposer) and contact (the
contact metadata it gave: email, escalation_hook), which `_status` and `manifest` serve under §17.13's
disclosure rules. pact_obligations gains principal_id: whom the owing member acted for when the obligation
arose, which its events carry. Existing rows keep NULL: their principal is the agent's urn, their role derived
from the area's role, no contact. The downgrade drops the five columns.

Revision ID: 0036_pact_principals
Revises: 0035_invites
Create Date: 2026-11-27 03:40:00.000000
"""

import sqlalchemy as sa
from alembic import op

from domain.kernel.db import JSONType

revision = "0036_pact_principals"
down_revision = "0035_invites"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (nullable, no default) on both databases, as 0029 and 0035 do.
    op.add_column("service_keys", sa.Column("principal", sa.String(length=255), nullable=True))
    op.add_column("pact_presence", sa.Column("principal_id", sa.String(length=255), nullable=True))
    op.add_column("pact_presence", sa.Column("pact_role", sa.String(length=16), nullable=True))
    op.add_column("pact_presence", sa.Column("contact", JSONType, nullable=True))
    op.add_column("pact_obligations", sa.Column("principal_id", sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pact_obligations") as batch:
        batch.drop_column("principal_id")
    with op.batch_alter_table("pact_presence") as batch:
        batch.drop_column("contact")
        batch.drop_column("pact_role")
        batch.drop_column("principal_id")
    with op.batch_alter_table("service_keys") as batch:
        batch.drop_column("principal")
