"""Dialect-specific SQL of the legislation store: full-text matching and ranking of section text, and the
bulk path's deferred indexing. PostgreSQL uses the expression GIN index of migration 0037
(`to_tsvector('english', title || ' ' || content)`), SQLite the FTS5 table `legislation_sections_fts` its
triggers keep in step (migration 0039: while a bulk import is under way, a new section's id waits in
`legislation_sections_fts_pending` instead). Keywords are the store's own (runs of ASCII letters and
digits, domain/axiom/legislation.py `keywords`), so both query languages take them as is."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BindParameter, ColumnClause, Select, bindparam, func, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom.models import LegislationSection

_PG_DOCUMENT: ColumnClause[Any] = literal_column(
    "to_tsvector('english', coalesce(legislation_sections.title, '') || ' ' || "
    "coalesce(legislation_sections.content, ''))"
)
_PG_INDEX = "ix_legislation_sections_fulltext"
_PG_CREATE_INDEX = (
    f"CREATE INDEX IF NOT EXISTS {_PG_INDEX} ON legislation_sections USING gin "
    "(to_tsvector('english', coalesce(title, '') || ' ' || coalesce(content, '')))"
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


# ------------------------------------------------------------------------------------ the bulk path


async def suspend_index(session: AsyncSession) -> None:
    """A bulk import begins (its row is written in this transaction). PostgreSQL: the GIN index goes (search
    stays correct without it, matching the expression row by row); SQLite: nothing more, the triggers
    see the row and defer."""
    if _postgres(session):
        await session.execute(text(f"DROP INDEX IF EXISTS {_PG_INDEX}"))


async def index_pending(session: AsyncSession, *, doc_ids: list[str] | None = None, limit: int = 0) -> int:
    """SQLite: index sections whose indexing a bulk import deferred (only those of `doc_ids` when given;
    at most `limit` when positive), and forget them; the number indexed. PostgreSQL: 0 (nothing is ever
    deferred row by row there)."""
    if _postgres(session):
        return 0
    if not await session.scalar(text("SELECT EXISTS (SELECT 1 FROM legislation_sections_fts_pending)")):
        return 0
    if doc_ids is not None:
        chosen = (
            "SELECT s.id FROM legislation_sections s WHERE s.doc_id IN :doc_ids "
            "AND s.id IN (SELECT section_id FROM legislation_sections_fts_pending)"
        )
        params: dict[str, Any] = {"doc_ids": doc_ids}
        binds: list[BindParameter[Any]] = [bindparam("doc_ids", expanding=True)]
    else:  # in id order, `limit` at a time: one statement and one transaction a chunk
        chosen = "SELECT section_id FROM legislation_sections_fts_pending ORDER BY section_id"
        params = {}
        binds = []
        if limit > 0:
            chosen += " LIMIT :limit"
            params["limit"] = limit
    await session.execute(
        text(
            "INSERT INTO legislation_sections_fts(rowid, title, content) "
            "SELECT s.id, s.title, coalesce(s.content, '') FROM legislation_sections s "
            f"WHERE s.id IN ({chosen})"
        ).bindparams(*binds),
        params,
    )
    # The same rows (this transaction is the only writer): the pending ids of sections just indexed.
    done = await session.execute(
        text(f"DELETE FROM legislation_sections_fts_pending WHERE section_id IN ({chosen})").bindparams(
            *binds
        ),
        params,
    )
    return int(getattr(done, "rowcount", 0) or 0)


async def index_incomplete(session: AsyncSession) -> bool:
    """Whether a bulk import left indexing undone (SQLite: sections pending; PostgreSQL: no GIN index)."""
    if _postgres(session):
        return not await session.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": _PG_INDEX})
    return bool(await session.scalar(text("SELECT EXISTS (SELECT 1 FROM legislation_sections_fts_pending)")))


async def restore_index(session: AsyncSession) -> bool:
    """PostgreSQL: the GIN index back when it is missing (built in one pass over the table); whether it
    was built. SQLite: False (its pending rows are indexed by index_pending)."""
    if not _postgres(session):
        return False
    missing = not await session.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": _PG_INDEX})
    if missing:
        await session.execute(text(_PG_CREATE_INDEX))
    return missing
