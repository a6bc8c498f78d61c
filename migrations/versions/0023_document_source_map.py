"""document source map: which body blocks of an uploaded DOCX each Markdown section came from

documents.source_map (JSON, nullable) is written by the conversion of a DOCX upload: per section of the
converted Markdown, its id and title, the block number of its heading paragraph in the original
word/document.xml, the range of its body blocks and a SHA-256 of its Markdown body. The DOCX download
applies merged section changes to the original file with it (domain/documents/docx_merge.py). Existing
rows keep NULL: their download is built from the Markdown with the original file's styles, headers and
footers. The downgrade drops the column.

Revision ID: 0023_document_source_map
Revises: 0005_documents
Create Date: 2026-11-23 12:40:00.000000
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0023_document_source_map"
down_revision = "0005_documents"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "source_map",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_column("source_map")
