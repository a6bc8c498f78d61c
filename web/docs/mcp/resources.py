"""Documents as MCP resources: the caller's documents (`resources/list`), the Markdown of a document or of
one section (`resources/read`), the two URI templates, completion of document and section ids, and the
watcher that tells `subscriptions/listen` streams when a followed document or section changes (woken by
the process's live events, infra/live)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote

import mcp_types as mt
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus

from domain.consensus import sections
from domain.documents import agents as tap
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.models import Document
from domain.kernel.db import Database
from domain.kernel.errors import BadRequest, DomainError, NotFound
from infra.live.hub import LiveEvent, LiveEvents, Watcher
from runtime.process import Runtime

log = logging.getLogger("concord.mcp")

MARKDOWN = "text/markdown"
DOCUMENT_TEMPLATE = "concord://documents/{documentId}"
SECTION_TEMPLATE = "concord://documents/{documentId}/sections/{sectionId}"
_URI = re.compile(r"^concord://documents/([^/?#]+)(?:/sections/([^/?#]+))?/?$")
PAGE = 100
COMPLETIONS = 100


@dataclass(frozen=True)
class Target:
    """What a resource URI names: a document, or one section of it."""

    document_id: str
    section_id: str | None = None

    @property
    def uri(self) -> str:
        base = f"concord://documents/{quote(self.document_id, safe='')}"
        return f"{base}/sections/{quote(self.section_id, safe=':')}" if self.section_id else base


def parse_uri(uri: str) -> Target | None:
    found = _URI.match(uri)
    if found is None:
        return None
    section = unquote(found.group(2)) if found.group(2) else None
    return Target(unquote(found.group(1)), section)


def document_uri(document_id: str) -> str:
    return Target(document_id).uri


def templates() -> list[mt.ResourceTemplate]:
    return [
        mt.ResourceTemplate(
            name="document",
            title="A document as Markdown",
            uri_template=DOCUMENT_TEMPLATE,
            description="The whole converted document (its id from resources/list or pact_list_documents).",
            mime_type=MARKDOWN,
        ),
        mt.ResourceTemplate(
            name="section",
            title="One section of a document as Markdown",
            uri_template=SECTION_TEMPLATE,
            description="One section: its heading and its own text (sectionId from pact_sections, e.g. "
            "sec:budget:line-items).",
            mime_type=MARKDOWN,
        ),
    ]


async def list_page(rt: Runtime, who: Caller, cursor: str | None) -> mt.ListResourcesResult:
    """A page of the caller's documents (newest first); the cursor is the next page's number."""
    page = 1
    if cursor:
        if not cursor.isdigit() or not 1 <= int(cursor) <= 100_000:
            raise BadRequest(f"cursor {cursor!r} is not one this server gave", field="cursor")
        page = int(cursor)
    async with rt.db.read() as session:
        found = await library.list_documents(session, who, tag=None, page=page, page_size=PAGE)
    resources = [
        mt.Resource(
            uri=document_uri(d.id),
            name=d.title,
            title=d.title,
            description=f"{d.status}, version {d.version}"
            + (f", tags: {', '.join(d.tags)}" if d.tags else ""),
            mime_type=MARKDOWN,
        )
        for d in found.rows
    ]
    more = page * PAGE < found.total
    return mt.ListResourcesResult(resources=resources, next_cursor=str(page + 1) if more else None)


async def read(rt: Runtime, who: Caller, uri: str) -> mt.ReadResourceResult:
    target = parse_uri(uri)
    if target is None:
        raise NotFound(
            f"unknown resource URI {uri!r}; use {DOCUMENT_TEMPLATE} or {SECTION_TEMPLATE}", code="unknown_uri"
        )
    async with rt.db.read() as session:
        if target.section_id is None:
            text = (await tap.content(session, who, target.document_id)).content
        else:
            found = await tap.section_content(session, who, target.document_id, target.section_id)
            text = found.content
    return mt.ReadResourceResult(contents=[mt.TextResourceContents(uri=uri, mime_type=MARKDOWN, text=text)])


async def check_readable(rt: Runtime, who: Caller, uris: Iterable[str]) -> dict[str, Target]:
    """The target of each of `uris`, a document (and section) the caller may read now, or the first error."""
    targets: dict[str, Target] = {}
    async with rt.db.read() as session:
        for uri in uris:
            target = parse_uri(uri)
            if target is None:
                raise NotFound(f"unknown resource URI {uri!r}", code="unknown_uri")
            doc = await library.get(session, who, target.document_id)
            if target.section_id is not None:
                tap.section_markdown(library.require_ready(doc), target.section_id)
            targets[uri] = target
    return targets


async def complete(
    rt: Runtime, who: Caller, argument: str, value: str, context: dict[str, str]
) -> mt.Completion:
    """Values for a `documentId` (the caller's documents) or a `sectionId` (of the documentId in context)."""
    values: list[str] = []
    async with rt.db.read() as session:
        if argument == "documentId":
            values = await library.ids_starting(session, who, value, limit=COMPLETIONS + 1)
        elif argument == "sectionId" and context.get("documentId"):
            try:
                doc = await library.get(session, who, context["documentId"])
            except DomainError:
                doc = None
            if doc is not None and doc.status == "ready" and doc.content is not None:
                ids = [s.id for s in sections.parse(doc.content)]
                values = [i for i in ids if i.startswith(value)] or [i for i in ids if value in i]
    return mt.Completion(values=values[:COMPLETIONS], total=len(values), has_more=len(values) > COMPLETIONS)


# ---- change notifications -----------------------------------------------------------------------------


def _fingerprint(doc: Document | None, target: Target) -> str:
    """What changes when the resource's Markdown may have changed."""
    if doc is None:
        return "gone"
    if target.section_id is None or doc.status != "ready" or doc.content is None:
        return f"{doc.status}:{doc.version}"
    found = sections.find(doc.content, target.section_id)
    if found is None:
        return "no-section"
    return hashlib.sha256(tap.section_markdown(doc.content, target.section_id).encode()).hexdigest()


class DocumentWatcher:
    """Follows the resources that open listen streams subscribed to, and publishes `ResourceUpdated` (with
    the URI as the client wrote it) on the bus when one changes. It looks at the database (so a change made
    by any process, a worker or the scheduler is seen, not only this one's) as soon as the process's live
    events (infra/live/hub.py) bring an event of a followed document, and every `interval` seconds besides
    (a change that wrote no event), only while something is followed."""

    def __init__(
        self,
        db: Database,
        bus: SubscriptionBus,
        interval: Callable[[], float],
        live: LiveEvents | None = None,
    ) -> None:
        self._db = db
        self._bus = bus
        self._interval = interval
        self._live = live
        self._followed: Counter[str] = Counter()
        self._targets: dict[str, tuple[Target, str]] = {}  # uri -> (target, organisation)
        self._seen: dict[str, str] = {}
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()  # an event of a followed document arrived
        self._documents: Counter[str] = Counter()  # followed URIs per document
        self._watchers: dict[str, Watcher] = {}  # document id -> its live events' watcher

    async def follow(self, who: Caller, followed: dict[str, Target]) -> None:
        """Start following the URIs of `followed` from their state now (a later change is published)."""
        for target in followed.values():  # first, so that no event between the read and the watch is missed
            await self._watch(target.document_id)
        try:
            async with self._db.read() as session:
                ids = {t.document_id for t in followed.values()}
                docs = await library.snapshots(session, {who.org_id}, ids)
        except BaseException:
            for target in followed.values():
                self._unwatch(target.document_id)
            raise
        for uri, target in followed.items():
            if not self._followed[uri]:
                self._seen[uri] = _fingerprint(docs.get(target.document_id), target)
                self._targets[uri] = (target, who.org_id)
            self._followed[uri] += 1
        self._wake.set()

    async def _watch(self, document_id: str) -> None:
        self._documents[document_id] += 1
        if self._documents[document_id] > 1 or self._live is None or not self._live.started:
            return
        try:
            watcher = await self._live.watch(library.stream(document_id), self._event_came)
        except DomainError:  # the process is stopping: the interval's look still runs meanwhile
            return
        if self._documents[document_id] > 0 and document_id not in self._watchers:
            self._watchers[document_id] = watcher
        else:  # unfollowed (or watched twice) while the watch started
            self._live.leave(watcher)

    def _event_came(self, _event: LiveEvent) -> None:
        self._changed.set()

    def unfollow(self, uris: Iterable[str]) -> None:
        for uri in uris:
            target = self._targets.get(uri)
            self._followed[uri] -= 1
            if self._followed[uri] <= 0:
                del self._followed[uri]
                self._seen.pop(uri, None)
                self._targets.pop(uri, None)
            if target is not None:
                self._unwatch(target[0].document_id)

    def _unwatch(self, document_id: str) -> None:
        self._documents[document_id] -= 1
        if self._documents[document_id] <= 0:
            del self._documents[document_id]
            watcher = self._watchers.pop(document_id, None)
            if watcher is not None and self._live is not None:
                self._live.leave(watcher)

    async def check(self) -> int:
        """Publish what changed since the last look; answers how many resources changed."""
        followed = {uri: self._targets[uri] for uri in self._followed if uri in self._targets}
        if not followed:
            return 0
        async with self._db.read() as session:
            docs = await library.snapshots(
                session, {org for _, org in followed.values()}, {t.document_id for t, _ in followed.values()}
            )
        changed = 0
        for uri, (target, _org) in followed.items():
            now = _fingerprint(docs.get(target.document_id), target)
            if uri in self._seen and self._seen[uri] != now:
                self._seen[uri] = now
                changed += 1
                await self._bus.publish(ResourceUpdated(uri=uri))
        return changed

    async def run(self) -> None:
        while True:
            if not self._followed:
                self._wake.clear()
                await self._wake.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=self._interval())
            self._changed.clear()
            try:
                await self.check()
            except Exception:  # a failed look (database away) is retried at the next interval
                log.exception("MCP document watcher: looking for changes failed")


def uris_of(params: mt.SubscriptionsListenRequestParams) -> list[str]:
    return list(dict.fromkeys(params.notifications.resource_subscriptions or []))
