"""The topics area's statements: those where the two dialects differ, and the hot reads' (a topic's content,
its section source, the topic list and its dependencies), each built once and executed with bound parameters
on a bare connection (Database.read_connection: no ORM session, no per-request statement building). The rules
that use them are in the area's other modules."""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Select, bindparam, func, or_, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.models import Proposal
from domain.kernel.db import table_of
from domain.kernel.sqlutil import on_postgresql
from domain.topics.models import Topic, TopicDependency, TopicParticipant

_GRAPH_LOCK = 0x636F6E636F7264  # "concord"


async def lock_dependency_graph(session: AsyncSession) -> None:
    """Serialise changes to the topics' dependency graph for the rest of this transaction: PostgreSQL takes
    a transaction-scoped advisory lock; on SQLite the writer's BEGIN IMMEDIATE already serialises."""
    if on_postgresql(session):
        await session.execute(select(func.pg_advisory_xact_lock(_GRAPH_LOCK)))


TOPICS = table_of(Topic)
DEPENDENCIES = table_of(TopicDependency)
_PARTICIPANTS = table_of(TopicParticipant)
_PROPOSALS = table_of(Proposal)

# A topic's content and what the answer shows of it (`p_topic`).
CONTENT = select(
    *(TOPICS.c[name] for name in ("id", "title", "status", "version", "content", "updated_at"))
).where(TOPICS.c.id == bindparam("p_topic"))

# What a topic's section tree is read from (`p_topic`).
SECTION_SOURCE = select(TOPICS.c.id, TOPICS.c.version, TOPICS.c.content).where(
    TOPICS.c.id == bindparam("p_topic")
)

# The topics the topics `p_topics` depend on directly, with how, in the order they were linked: one level of
# a content read's resolved dependencies.
DEPENDED_ON = (
    select(
        DEPENDENCIES.c.relationship,
        *(TOPICS.c[name] for name in ("id", "title", "tier", "status", "version", "content")),
    )
    .join_from(DEPENDENCIES, TOPICS, TOPICS.c.id == DEPENDENCIES.c.depends_on_id)
    .where(DEPENDENCIES.c.topic_id.in_(bindparam("p_topics", expanding=True)))
    .order_by(DEPENDENCIES.c.created_at, DEPENDENCIES.c.depends_on_id)
)

# The ids the topics `p_topics` depend on (Core columns: the ORM's result machinery for two strings a row
# cost more than the statement), in the order they were linked.
DEPENDENCIES_OF = (
    select(DEPENDENCIES.c.topic_id, DEPENDENCIES.c.depends_on_id)
    .where(DEPENDENCIES.c.topic_id.in_(bindparam("p_topics", expanding=True)))
    .order_by(DEPENDENCIES.c.created_at, DEPENDENCIES.c.depends_on_id)
)

# The topic list's page: every column the answer shows (not the content, the largest), and each
# topic's counts as correlated subqueries on their indexes.
_PARTICIPANT_COUNT = (
    select(func.count())
    .where(_PARTICIPANTS.c.topic_id == TOPICS.c.id, _PARTICIPANTS.c.left_at.is_(None))
    .correlate(TOPICS)
    .scalar_subquery()
)
_PROPOSAL_COUNT = (
    select(func.count())
    .where(_PROPOSALS.c.resource_type == "topic", _PROPOSALS.c.resource_id == TOPICS.c.id)
    .correlate(TOPICS)
    .scalar_subquery()
)
_LISTED = select(
    *(c for c in TOPICS.c if c.name != "content"),
    _PARTICIPANT_COUNT.label("participants"),
    _PROPOSAL_COUNT.label("proposals"),
)


# The topics a listed topic depends on, in the order they were linked, as one array (NULL when none), for
# PostgreSQL's page statement: an ordered aggregate on the dependencies' primary key, per row of the page.
_DEPENDED = DEPENDENCIES.alias("listed_dependencies")
_DEPENDS_ON_ARRAY = (
    select(
        func.array_agg(
            aggregate_order_by(_DEPENDED.c.depends_on_id, _DEPENDED.c.created_at, _DEPENDED.c.depends_on_id)
        )
    )
    .where(_DEPENDED.c.topic_id == TOPICS.c.id)
    .correlate(TOPICS)
    .scalar_subquery()
)


class TopicListStatements(NamedTuple):
    """The topic list's statements for one combination of filters in one dialect.

    On PostgreSQL (`whole_page` true) `page` is the whole read in one round trip: each row also carries
    `total`, the count of every topic matching (`count(*) OVER ()`, computed before LIMIT and OFFSET, over the
    same index range the page reads), and `depends_on`, its dependencies as an ordered array; `total` is run
    only for a page that comes back empty past the end, where no row carries the count.

    On SQLite (`whole_page` false) `total` and `page` both run and the page's dependencies are
    DEPENDENCIES_OF: SQLite 3.40 has no ordered aggregate (json_group_array's order is not defined), and a
    window function makes it materialise the filtered topics and sort them (a scan and a temporary B-tree,
    where the page alone reads ix_topics_created_id backwards); its statements are calls in the process, not
    round trips."""

    page: Select[Any]
    total: Select[Any]
    whole_page: bool


@cache
def topic_list(tier: bool, status: bool, jurisdiction: bool, *, postgresql: bool) -> TopicListStatements:
    """The topic list's statements for the filters given and the dialect (each built once: building one costs
    its cache key again on every read). Parameters: `p_tier`, `p_status`, `p_jurisdiction` with its region
    prefix `p_region` (`AU-%`: AU matches AU-NSW), `p_limit`, `p_offset`."""
    conds: list[Any] = []
    if tier:
        conds.append(TOPICS.c.tier == bindparam("p_tier"))
    if status:
        conds.append(TOPICS.c.status == bindparam("p_status"))
    if jurisdiction:
        conds.append(
            or_(
                TOPICS.c.jurisdiction == bindparam("p_jurisdiction"),
                TOPICS.c.jurisdiction.like(bindparam("p_region")),
            )
        )
    newest_first = (TOPICS.c.created_at.desc(), TOPICS.c.id.desc())  # ix_topics_created_id, read backwards
    count = select(func.count()).select_from(TOPICS).where(*conds)
    listed = _LISTED
    if postgresql:
        listed = listed.add_columns(func.count().over().label("total"), _DEPENDS_ON_ARRAY.label("depends_on"))
    page = (
        listed.where(*conds).order_by(*newest_first).limit(bindparam("p_limit")).offset(bindparam("p_offset"))
    )
    return TopicListStatements(page, count, postgresql)
