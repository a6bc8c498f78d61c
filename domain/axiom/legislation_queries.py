"""Dialect-specific SQL of the legislation store: full-text matching and ranking of section text. PostgreSQL
uses the expression GIN index of migration 0037 (`to_tsvector('english', title || ' ' || content)`), SQLite
the FTS5 table `legislation_sections_fts` its triggers keep in step. Keywords are the store's own (runs of
ASCII letters and digits, domain/axiom/legislation.py `keywords`), so both query languages take them as is."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnClause, Select, func, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom.models import LegislationSection

_PG_DOCUMENT: ColumnClause[Any] = literal_column(
    "to_tsvector('english', coalesce(legislation_sections.title, '') || ' ' || "
    "coalesce(legislation_sections.content, ''))"
)


def _postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def section_matches(session: AsyncSession, words: list[str], *, any_word: bool, tag: str) -> Select[Any]:
    """(section_pk, relevance) of the sections whose heading or text holds every one of `words` (any one
    with any_word), the most relevant highest. `tag` names the bound parameter (unique per statement)."""
    if _postgres(session):
        query = func.to_tsquery("english", (" | " if any_word else " & ").join(words))
        return select(
            LegislationSection.id.label("section_pk"),
            (func.ts_rank(_PG_DOCUMENT, query, 1) * 10).label("relevance"),
        ).where(_PG_DOCUMENT.op("@@")(query))
    expr = (" OR " if any_word else " AND ").join(f'"{w}"' for w in words)
    return (
        select(
            literal_column("legislation_sections_fts.rowid").label("section_pk"),
            (-func.bm25(literal_column("legislation_sections_fts"))).label("relevance"),
        )
        .select_from(text("legislation_sections_fts"))
        .where(text(f"legislation_sections_fts MATCH :{tag}").bindparams(**{tag: expr}))
    )
