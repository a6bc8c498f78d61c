"""Documents of an organisation: upload, conversion job, list, metadata and DOCX download."""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import policies
from domain.documents import blobs, library_events, offload, sandbox, xmltext
from domain.documents.access import Caller
from domain.documents.detect import Unsupported, detect
from domain.documents.models import Comment, Document, DocumentAgent, DocumentStatus, DocumentTag, ShareLink
from domain.kernel import audit, events, outbox
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from domain.kernel.errors import BadRequest, Conflict, NotFound, Unprocessable
from domain.kernel.ids import new_id
from domain.kernel.outbox import Job
from domain.kernel.settings import get_settings

log = logging.getLogger("concord.documents")
MAX_TAGS = 20
_TAG = re.compile(r"^[\w .:/+-]{1,64}$")


def stream(document_id: str) -> str:
    return events.stream_of("document", document_id)


def parse_tags(raw: str | list[str] | None) -> list[str]:
    if not raw:
        return []
    items = raw if isinstance(raw, list) else raw.split(",")
    tags = list(dict.fromkeys(t.strip() for t in items if t and t.strip()))
    if len(tags) > MAX_TAGS:
        raise BadRequest(f"at most {MAX_TAGS} tags", field="tags")
    for t in tags:
        if not _TAG.match(t):
            raise BadRequest(f"tag {t!r} must be 1-64 letters, digits, spaces or .:/+-_", field="tags")
    return tags


def tag_key(tag: str) -> str:
    """The form a tag is matched in: the list's tag filter is case-insensitive."""
    return tag.casefold()


def tag_rows(doc: Document) -> list[DocumentTag]:
    """The document_tags rows of a document (each case-folded tag once), written with the document."""
    return [
        DocumentTag(document_id=doc.id, tag_key=key, org_id=doc.org_id, created_at=doc.created_at)
        for key in dict.fromkeys(tag_key(t) for t in doc.tags or [])
    ]


def title_from(filename: str | None) -> str:
    stem = Path((filename or "").replace("\x00", "")).stem
    title = " ".join(re.sub(r"[_]+", " ", stem).split())
    return title[:500] or "Untitled document"


async def get(
    session: AsyncSession, caller: Caller, document_id: str, *, for_update: bool = False
) -> Document:
    """The caller's organisation's document, or 404 (another organisation's looks the same as none)."""
    doc = None
    if 0 < len(document_id) <= 36:
        stmt = select(Document).where(Document.id == document_id)
        if for_update:
            stmt = stmt.with_for_update()
        doc = await session.scalar(stmt)
    if doc is None or doc.org_id != caller.org_id:
        raise NotFound(f"document {document_id} not found", code="document_not_found")
    return doc


@dataclass(frozen=True)
class DocumentPage:
    """A page of the organisation's documents, newest first."""

    rows: list[Document]
    total: int
    page: int
    page_size: int


@dataclass(frozen=True)
class Metadata:
    """A document with its counts: its reviewers (active reviewer agents and the addresses of its live share
    links) and its comments."""

    doc: Document
    reviewers: int
    comments_total: int
    comments_resolved: int


async def create(
    session: AsyncSession,
    caller: Caller,
    *,
    document_id: str,
    blob_path: str,
    size: int,
    sha256: str,
    kind: str,
    media_type: str,
    filename: str | None,
    title: str | None,
    tags: list[str],
    approval: policies.Approval = policies.DEFAULT_APPROVAL,
) -> Document:
    now = utcnow()
    doc = Document(
        id=document_id,
        org_id=caller.org_id,
        owner_key_id=caller.key_id,
        title=(title or "").strip()[:500] or title_from(filename),
        filename=(filename or "").replace("\x00", "")[:500] or None,
        kind=kind,
        media_type=media_type,
        size_bytes=size,
        sha256=sha256,
        blob_path=blob_path,
        tags=tags,
        status=DocumentStatus.PROCESSING,
        version=0,
        approval_policy=approval.policy.value,
        allow_self_approval=approval.allow_self_approval,
        created_at=now,
        updated_at=now,
    )
    session.add(doc)
    await session.flush()
    session.add_all(tag_rows(doc))
    events.append(
        session,
        stream(doc.id),
        "pact.document.uploaded",
        caller.ctx,
        data={"title": doc.title, "format": kind},
    )
    audit.record(
        session, caller.ctx, "document.upload", "document", doc.id, after=library_events.snapshot(doc)
    )
    outbox.enqueue(session, CONVERT_JOB, {"document_id": doc.id})
    return doc


def new_document_id() -> str:
    return new_id()


async def accept_upload(
    db: Database,
    caller: Caller,
    writer: blobs.BlobWriter,
    *,
    filename: str | None,
    title: str | None,
    tags: str | list[str] | None,
    field: str,
    approval: policies.Approval = policies.DEFAULT_APPROVAL,
) -> Document:
    """Type-check a staged upload from its bytes, keep it and record the document (conversion queued).

    The one path for REST multipart uploads and MCP base64 uploads; the staged file is discarded on any error.
    """
    try:
        try:
            kind = await asyncio.to_thread(detect, writer.path, filename)
        except Unsupported as exc:
            error = blobs.UnsupportedMediaType if exc.status == 415 else Unprocessable
            raise error(exc.reason, field=field) from None
        parsed_tags = parse_tags(tags)
        document_id = new_document_id()
        rel = writer.commit(document_id)
    except BaseException:
        writer.discard()
        raise
    async with db.transaction() as session:
        return await create(
            session,
            caller,
            document_id=document_id,
            blob_path=rel,
            size=writer.size,
            sha256=writer.sha256,
            kind=kind.kind,
            media_type=kind.media_type,
            filename=filename,
            title=title,
            tags=parsed_tags,
            approval=approval,
        )


async def _finish(session: AsyncSession, doc: Document, *, markdown: str | None, error: str | None) -> None:
    before = {"status": doc.status}
    doc.updated_at = utcnow()
    if error is None:
        doc.status = DocumentStatus.READY
        doc.content = markdown or ""
        doc.version = 1
        doc.error = None
        event = "pact.document.ready"
    else:
        doc.status = DocumentStatus.FAILED
        doc.error = error[:2000]
        event = "pact.document.failed"
    events.append(session, stream(doc.id), event, None, data={"status": doc.status, "error": doc.error})
    audit.record(
        session, SYSTEM, "document.convert", "document", doc.id, before=before, after={"status": doc.status}
    )


async def mark_failed(session: AsyncSession, payload: dict[str, Any], reason: str) -> None:
    """Retries exhausted: the document fails with a sentence; the job's own error (an exception's text,
    perhaps a server path) stays on the job row and in the log for the operator."""
    doc = await session.get(Document, payload.get("document_id", ""))
    if doc is not None and doc.status == DocumentStatus.PROCESSING:
        log.warning("conversion of %s kept failing: %s", doc.id, reason)
        error = "conversion kept failing: the stored upload could not be read or the result stored"
        await _finish(session, doc, markdown=None, error=f"{error}; upload the file again")


async def prepare_conversion(db: Database, payload: dict[str, Any]) -> sandbox.Outcome | None:
    """The conversion itself, with no transaction open: what it needs is read in a short read-only unit of
    work, and the upload is converted in a child process within the conversion limits (sandbox.py).
    None when the document is no longer waiting for it (a job delivered twice)."""
    async with db.read() as session:
        row = (
            await session.execute(
                select(Document.status, Document.kind, Document.blob_path).where(
                    Document.id == payload["document_id"]
                )
            )
        ).first()
    if row is None or row.status != DocumentStatus.PROCESSING:
        return None
    settings = get_settings()
    limits = sandbox.Limits(memory_mb=settings.convert_memory_mb, cpu_seconds=settings.convert_cpu_seconds)
    path = blobs.path_of(settings.blob_dir, row.blob_path)
    outcome = await asyncio.to_thread(sandbox.run, row.kind, path, limits)
    if outcome.detail:
        log.warning("conversion of %s failed: %s", payload["document_id"], outcome.detail)
    return outcome


async def convert_job(session: AsyncSession, payload: dict[str, Any]) -> None:
    """Store the conversion's outcome (prepared by `prepare_conversion`): the document becomes ready, or
    failed with a plain reason. Only a document still processing takes it, so a job delivered twice takes
    effect once. A missing blob or a broken database raise instead, so the job is retried."""
    outcome = payload.get(outbox.PREPARED)
    if not isinstance(outcome, sandbox.Outcome):
        return
    doc = await session.get(Document, payload["document_id"])
    if doc is None or doc.status != DocumentStatus.PROCESSING:
        return
    if outcome.error is not None:
        await _finish(session, doc, markdown=None, error=outcome.error)
        return
    doc.conversion_ms = outcome.elapsed_ms
    doc.source_map = outcome.source_map
    await _finish(session, doc, markdown=outcome.markdown, error=None)


CONVERT_JOB = Job("documents.convert", convert_job, on_failure=mark_failed, prepare=prepare_conversion)


async def list_documents(
    session: AsyncSession, caller: Caller, *, tag: str | None, page: int, page_size: int
) -> DocumentPage:
    """A page of the organisation's documents, newest first, optionally only those with a tag.

    Paged in SQL by offset (the spec's page and pageSize): the ids of the page are read off an index in
    the list's order (documents (org_id, created_at, id), or document_tags (org_id, tag_key, created_at,
    document_id) with a tag), and only that page's documents are loaded. The total counts the same index
    range."""
    id_col: Any
    if tag:
        id_col, created = DocumentTag.document_id, DocumentTag.created_at
        where = [DocumentTag.org_id == caller.org_id, DocumentTag.tag_key == tag_key(tag)]
    else:
        id_col, created = Document.id, Document.created_at
        where = [Document.org_id == caller.org_id]
    total = int(await session.scalar(select(func.count(id_col)).where(*where)) or 0)
    ids = list(
        (
            await session.scalars(
                select(id_col)
                .where(*where)
                .order_by(created.desc(), id_col.desc())
                .limit(page_size)
                .offset((page - 1) * page_size)
            )
        ).all()
    )
    found = {d.id: d for d in (await session.scalars(select(Document).where(Document.id.in_(ids)))).all()}
    return DocumentPage([found[i] for i in ids], total, page, page_size)


async def ids_starting(session: AsyncSession, caller: Caller, prefix: str, *, limit: int) -> list[str]:
    """Ids of the organisation's documents that start with `prefix` (newest first), at most `limit`:
    what a client completes a document id from."""
    stmt = select(Document.id).where(Document.org_id == caller.org_id)
    if prefix:
        stmt = stmt.where(Document.id.startswith(prefix, autoescape=True))
    stmt = stmt.order_by(Document.created_at.desc(), Document.id.desc()).limit(limit)
    return list((await session.scalars(stmt)).all())


async def snapshots(session: AsyncSession, org_ids: set[str], ids: set[str]) -> dict[str, Document]:
    """The documents among `ids` that belong to one of `org_ids`, by id (a watcher's look at what it
    follows; a document of another organisation, or gone, is simply absent)."""
    if not ids:
        return {}
    rows = await session.scalars(select(Document).where(Document.id.in_(ids), Document.org_id.in_(org_ids)))
    return {d.id: d for d in rows.all()}


async def reviewers_count(session: AsyncSession, doc: Document) -> int:
    agents = (
        await session.scalars(
            select(DocumentAgent.agent_name).where(
                DocumentAgent.document_id == doc.id,
                DocumentAgent.status == "active",
                DocumentAgent.role == "reviewer",
            )
        )
    ).all()
    emails: set[str] = set()
    now = utcnow()
    for link in (await session.scalars(select(ShareLink).where(ShareLink.document_id == doc.id))).all():
        if link.expires_at > now and link.revoked_at is None:
            emails.update(e.casefold() for e in link.reviewer_emails or [])
    return len(agents) + len(emails)


async def metadata(session: AsyncSession, caller: Caller, document_id: str) -> Metadata:
    doc = await get(session, caller, document_id)
    total, resolved = (
        await session.execute(
            select(func.count(Comment.id), func.count(Comment.id).filter(Comment.resolved.is_(True))).where(
                Comment.document_id == doc.id
            )
        )
    ).one()
    return Metadata(doc, await reviewers_count(session, doc), int(total or 0), int(resolved or 0))


def _docx_of(doc: Document, markdown: str) -> bytes:
    # Deferred: python-docx, BeautifulSoup cost a process ~0.12 s of CPU at start-up; only downloads use them.
    from domain.documents import docx_merge, export_docx

    if doc.kind == "docx":
        try:
            path = blobs.path_of(get_settings().blob_dir, doc.blob_path)
            if doc.version <= 1:  # no change merged yet: the very file that was uploaded
                return path.read_bytes()
            return docx_merge.merge(path, markdown, doc.source_map, title=doc.title)
        except FileNotFoundError:
            log.warning("the upload of document %s is missing; its download is built from Markdown", doc.id)
    return export_docx.to_docx(markdown, title=doc.title)


def require_ready(doc: Document) -> str:
    if doc.status == DocumentStatus.PROCESSING:
        raise Conflict("the document is still being converted; try again shortly", code="document_processing")
    if doc.status != DocumentStatus.READY or doc.content is None:
        raise Unprocessable(f"the document could not be converted: {doc.error}", code="document_failed")
    return doc.content


@dataclass(frozen=True)
class Download:
    data: bytes
    filename: str
    replaced: int  # characters a Word file cannot hold, written as visible ones (xmltext.safe)


async def ready_content(doc: Document) -> str:
    """`require_ready`'s Markdown, with its sections known (parsed off the event loop if it is large), so
    reading sections of it costs no parse."""
    content = require_ready(doc)
    await offload.outline(content)
    return content


async def download(session: AsyncSession, caller: Caller, document_id: str) -> Download:
    """The document as DOCX: an uploaded DOCX is the original file (with merged section changes applied
    to it once there are any, docx_merge.py); any other upload is built from its Markdown."""
    doc = await get(session, caller, document_id)
    markdown = require_ready(doc)
    data = await asyncio.to_thread(_docx_of, doc, markdown)
    name = re.sub(r"[^\w .-]+", "", doc.title).strip()[:100] or "document"
    # The original upload (version 1 of a DOCX) is sent as it is: its text was XML already.
    written = doc.kind != "docx" or doc.version > 1
    replaced = xmltext.unsafe_count(markdown) + xmltext.unsafe_count(doc.title) if written else 0
    if replaced:
        log.info(
            "download of %s: %d characters a Word file cannot hold written as visible ones", doc.id, replaced
        )
    return Download(data, f"{name}.docx", replaced)
