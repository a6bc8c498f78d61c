"""Full-text search over topics behind one interface: PostgreSQL full-text search (an expression GIN
index and websearch_to_tsquery) or SQLite FTS5 (the `topics_fts` table that triggers keep in sync;
migration 0003_axiom). Both take the same web-search style query: words (all must match), "quoted
phrases", `or` between alternatives and `-word` to exclude."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnClause, Select, func, literal_column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.sqlutil import on_postgresql
from domain.topics.models import Topic

_PG_DOCUMENT: ColumnClause[Any] = literal_column(
    "to_tsvector('english', coalesce(topics.title, '') || ' ' || coalesce(topics.canonical_claim, '') "
    "|| ' ' || coalesce(topics.content, ''))"
)
_TOKEN = re.compile(r'(-?)"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")


def fts5_query(q: str) -> str | None:
    """Translate a web-search style query into a safe FTS5 expression (None when nothing is left)."""
    parts: list[str] = []
    negated: list[str] = []
    pending_or = False
    for m in _TOKEN.finditer(q):
        neg, phrase, word = m.group(1), m.group(2), m.group(3)
        if word is not None and word.casefold() == "or":
            pending_or = bool(parts)
            continue
        if word is not None and word.startswith("-") and len(word) > 1:
            neg, word = "-", word[1:]
        words = _WORD.findall(phrase if phrase is not None else word or "")
        if not words:
            continue
        term = '"' + " ".join(words) + '"'
        if neg:
            negated.append(term)
        elif pending_or:
            parts[-1] = f"({parts[-1]} OR {term})"
        else:
            parts.append(term)
        pending_or = False
    if not parts:
        return None
    expr = " AND ".join(parts)
    for term in negated:
        expr = f"({expr}) NOT {term}"
    return expr


def has_words(q: str) -> bool:
    """Whether the query holds a word at all (a query without one is refused; one whose words are all
    excluded, or only `or`, matches nothing)."""
    return _WORD.search(q) is not None


def topic_matches(session: AsyncSession, q: str) -> Select[str, float] | None:
    """A subquery of (topic_id, relevance) for topics matching `q`, higher relevance first; None
    when the query has no searchable words (callers then match nothing)."""
    if fts5_query(q) is None:
        return None
    if on_postgresql(session):
        query = func.websearch_to_tsquery("english", q)
        return select(Topic.id.label("topic_id"), func.ts_rank(_PG_DOCUMENT, query).label("relevance")).where(
            _PG_DOCUMENT.op("@@")(query)
        )
    expr = fts5_query(q)
    if expr is None:
        return None
    return (
        select(
            literal_column("topics_fts.topic_id").label("topic_id"),
            (-func.bm25(literal_column("topics_fts"))).label("relevance"),
        )
        .select_from(text("topics_fts"))
        .where(text("topics_fts MATCH :fts_query").bindparams(fts_query=expr))
    )
