"""Share links of a document: permission, access mode, expiry; tokens are stored hashed.

A link's token opens its one document to whoever holds it, within the link's `permission` (ReadOnly:
read; CommentOnly: and comment; FullReview: and resolve comments, decide objected proposals). A closed
link (`closed-individual`, `closed-org`) that is not `public` first needs the reviewer's address proven
with a one-time code mailed to it (6 digits, 10 minutes, 5 attempts, kept as a salted hash); the proof
lives in a session on that link (its cookie kept as a SHA-256). Expired and revoked links are Gone."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from domain.consensus import engine as consensus
from domain.consensus import sections
from domain.consensus.models import Proposal, ProposalVote
from domain.documents import comments, library, offload, proposals, share_events
from domain.documents.access import Caller
from domain.documents.models import Comment, Document, ShareLink, ShareLinkCode, ShareLinkSession
from domain.kernel import audit, events, keys
from domain.kernel.clock import iso, readable, utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.errors import BadRequest, Forbidden, Gone, NotFound, RateLimited
from domain.kernel.ids import new_id
from domain.kernel.sqlutil import execute_counted
from domain.kernel.sweeps import retention_cutoff

TOKEN_PREFIX = "shr_"


class Permission(StrEnum):
    """What a share link lets its holder do, each including the ones before it."""

    READ_ONLY = "ReadOnly"
    COMMENT_ONLY = "CommentOnly"
    FULL_REVIEW = "FullReview"


class AccessMode(StrEnum):
    """Who may open a share link: anyone holding it, the addresses it names, or an organisation's domain."""

    OPEN = "open"
    CLOSED_INDIVIDUAL = "closed-individual"
    CLOSED_ORG = "closed-org"


PERMISSIONS = tuple(p.value for p in Permission)
CODE_TTL = timedelta(minutes=10)
CODE_ATTEMPTS = 5
CODES_PER_HOUR = 5  # one-time codes mailed per link and address in an hour
SESSION_TTL = timedelta(hours=12)
_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)$"
)
EMAIL_PATTERN = _EMAIL.pattern  # what a share link takes as an address (the web models state it too)
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def _domain(value: str) -> str:
    value = value.strip().lower().lstrip("@")
    if not _DOMAIN.match(value):
        raise BadRequest(
            f"allowedDomain {value!r} is not a domain name like example.com", field="allowedDomain"
        )
    return value


def _emails(values: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i, raw in enumerate(values):
        email = raw.strip()
        match = _EMAIL.match(email)
        if not match or len(email) > 254:
            raise BadRequest(
                f"reviewerEmails[{i}] {raw!r} is not an email address", field=f"reviewerEmails.{i}"
            )
        local, domain = email.rsplit("@", 1)
        out.append(f"{local}@{domain.lower()}")
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Terms:
    """What a new share link grants, as its owner asks for it."""

    permission: str
    access_mode: str
    public: bool = False
    reviewer_emails: Sequence[str] = ()
    allowed_domain: str | None = None
    expires_in_hours: int = 168


@dataclass(frozen=True)
class Created:
    """A share link just made, with its token (shown this once: only its hash is kept) and review URL."""

    link: ShareLink
    token: str
    url: str


async def create(
    session: AsyncSession, caller: Caller, document_id: str, terms: Terms, *, base_url: str
) -> Created:
    doc = await library.get(session, caller, document_id)
    mode = terms.access_mode
    emails = _emails(terms.reviewer_emails)
    domain = _domain(terms.allowed_domain) if terms.allowed_domain else None
    if mode == "closed-individual" and not emails:
        raise BadRequest("accessMode closed-individual needs reviewerEmails", field="reviewerEmails")
    if mode == AccessMode.CLOSED_ORG:
        if domain is None:
            raise BadRequest("accessMode closed-org needs allowedDomain", field="allowedDomain")
        outside = [e for e in emails if not e.endswith("@" + domain)]
        if outside:
            raise BadRequest(f"reviewerEmails outside {domain}: {', '.join(outside)}", field="reviewerEmails")
    if mode == "open" and (emails or domain):
        raise BadRequest("accessMode open takes neither reviewerEmails nor allowedDomain", field="accessMode")
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    now = utcnow()
    link = ShareLink(
        id=new_id(),
        document_id=doc.id,
        org_id=doc.org_id,
        token_hash=keys.hash_key(token),
        permission=terms.permission,
        access_mode=mode,
        public=bool(terms.public),
        reviewer_emails=emails,
        allowed_domain=domain,
        created_by=caller.key_id,
        created_at=now,
        expires_at=now + timedelta(hours=int(terms.expires_in_hours or 168)),
    )
    session.add(link)
    await session.flush()
    data = share_events.link(link)
    events.append(session, library.stream(doc.id), "pact.share-link.created", caller.ctx, data=data)
    audit.record(session, caller.ctx, "share_link.create", "share_link", link.id, after=data)
    return Created(link, token, f"{base_url}/share/{token}")


def state(link: ShareLink) -> str:
    if link.revoked_at is not None:
        return "revoked"
    return "expired" if link.expires_at <= utcnow() else "active"


# ---- the owner's side: list, revoke --------------------------------------------------------------------


@dataclass(frozen=True)
class Links:
    """A document's share links, oldest first (revoked and expired ones included)."""

    document_id: str
    links: list[ShareLink]


async def list_links(session: AsyncSession, caller: Caller, document_id: str) -> Links:
    doc = await library.get(session, caller, document_id)
    rows = (
        await session.scalars(
            select(ShareLink)
            .where(ShareLink.document_id == doc.id)
            .order_by(ShareLink.created_at, ShareLink.id)
        )
    ).all()
    return Links(doc.id, list(rows))


async def revoke(session: AsyncSession, caller: Caller, document_id: str, link_id: str) -> ShareLink:
    doc = await library.get(session, caller, document_id)
    link = await session.scalar(
        select(ShareLink).where(ShareLink.id == link_id, ShareLink.document_id == doc.id).with_for_update()
        if 0 < len(link_id) <= 36
        else select(ShareLink).where(ShareLink.id == "")
    )
    if link is None:
        raise NotFound(f"share link {link_id} not found on document {doc.id}", code="share_link_not_found")
    before = share_events.owned(link, state(link))
    if link.revoked_at is None:
        link.revoked_at = utcnow()
        link.revoked_by = caller.key_id
        await session.execute(delete(ShareLinkSession).where(ShareLinkSession.link_id == link.id))
        events.append(
            session,
            library.stream(doc.id),
            "pact.share-link.revoked",
            caller.ctx,
            data=share_events.revoked(link),
        )
    after = share_events.owned(link, state(link))
    audit.record(session, caller.ctx, "share_link.revoke", "share_link", link.id, before=before, after=after)
    return link


# ---- the holder's side: a live link, its session, the address proof -------------------------------------


async def live_link(session: AsyncSession, token: str, *, content: bool = True) -> tuple[ShareLink, Document]:
    """The link a token names and its document: unknown → 404; revoked or expired → 410 Gone.

    `content=False` leaves the document's Markdown unread (the review page reads it only when its
    rendering of this version is not cached: a large document's text is megabytes); reading
    `doc.content` then raises, so a caller that needs it asks `content_of`."""
    link = None
    if token.startswith(TOKEN_PREFIX) and len(token) <= 100:
        link = await session.scalar(select(ShareLink).where(ShareLink.token_hash == keys.hash_key(token)))
    options = () if content else (defer(Document.content, raiseload=True),)
    doc = await session.get(Document, link.document_id, options=options) if link is not None else None
    if link is None or doc is None:
        raise NotFound("no share link has this token", code="share_link_not_found")
    if link.revoked_at is not None:
        raise Gone(
            f"this share link was revoked on {readable(link.revoked_at)}; ask the document's owner for a new "
            "one",
            code="share_link_revoked",
            revokedAt=iso(link.revoked_at),
        )
    if link.expires_at <= utcnow():
        raise Gone(
            f"this share link expired on {readable(link.expires_at)}; ask the document's owner for a new one",
            code="share_link_expired",
            expiredAt=iso(link.expires_at),
        )
    return link, doc


async def lookup(session: AsyncSession, token: str) -> tuple[ShareLink, Document]:
    """What any holder of the token may know before proving an address: the link's terms and its document
    (the reviewer list stays with the owner: GET /api/documents/{id}/share-links)."""
    return await live_link(session, token)


def needs_proof(link: ShareLink) -> bool:
    return link.access_mode != "open" and not link.public


@dataclass(frozen=True)
class Visit:
    """A holder of a live link, with the session its cookie names (if any)."""

    link: ShareLink
    doc: Document
    session: ShareLinkSession | None

    @property
    def admitted(self) -> bool:
        return not needs_proof(self.link) or (
            self.session is not None and self.session.verified_at is not None
        )

    @property
    def email(self) -> str | None:
        return self.session.email if self.session is not None and self.session.verified_at else None


async def content_of(session: AsyncSession, document_id: str) -> str:
    """A document's Markdown, read on its own (see `live_link`'s `content`)."""
    return await session.scalar(select(Document.content).where(Document.id == document_id)) or ""


async def visit(session: AsyncSession, token: str, cookie: str | None, *, content: bool = True) -> Visit:
    link, doc = await live_link(session, token, content=content)
    found = None
    if cookie and len(cookie) <= 100:
        found = await session.scalar(
            select(ShareLinkSession).where(
                ShareLinkSession.token_hash == keys.hash_key(cookie), ShareLinkSession.link_id == link.id
            )
        )
        if found is not None and found.expires_at <= utcnow():
            found = None
    return Visit(link, doc, found)


async def open_session(session: AsyncSession, link: ShareLink) -> tuple[str, ShareLinkSession]:
    """A new session on the link: the cookie value (shown once) and its row."""
    cookie = secrets.token_urlsafe(32)
    now = utcnow()
    row = ShareLinkSession(
        id=new_id(),
        link_id=link.id,
        token_hash=keys.hash_key(cookie),
        email=None,
        verified_at=None,
        created_at=now,
        expires_at=min(now + SESSION_TTL, link.expires_at),
    )
    session.add(row)
    await session.flush()
    return cookie, row


def csrf_token(cookie: str, link_id: str) -> str:
    """A per-visit form token bound to the session cookie: a random nonce and its HMAC under the cookie."""
    nonce = secrets.token_urlsafe(12)
    mac = hmac.new(cookie.encode(), f"{link_id}:{nonce}".encode(), hashlib.sha256).hexdigest()
    return f"{nonce}.{mac}"


def csrf_ok(cookie: str | None, link_id: str, token: str | None) -> bool:
    if not cookie or not token or "." not in token or len(token) > 200:
        return False
    nonce, mac = token.split(".", 1)
    want = hmac.new(cookie.encode(), f"{link_id}:{nonce}".encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, mac)


def _email(raw: str) -> str:
    email = (raw or "").strip()
    if not _EMAIL.match(email) or len(email) > 254:
        raise BadRequest(f"email {raw[:100]!r} is not an email address", field="email")
    return email.lower()


def _code_hash(salt: str, code: str) -> str:
    return hashlib.sha256(f"{salt}:{code}".encode()).hexdigest()


@dataclass(frozen=True)
class CodeRequest:
    email: str
    code: str | None  # None: the address may not review; nothing is mailed (and the answer looks the same)
    expires_at: datetime


def code_address(link: ShareLink, raw_email: str) -> str:
    """The address a code is asked for, normalised, once it is one the link could admit at all: 400 for
    a link that needs no address, for what is not an address, and for another domain than a closed-org
    link's. A closed-individual link's unlisted addresses pass (they get the same answer as listed ones)."""
    email = _email(raw_email)
    if not needs_proof(link):
        raise BadRequest(f"this share link is {link.access_mode} and needs no address", field="email")
    if link.access_mode == AccessMode.CLOSED_ORG:
        domain = link.allowed_domain or ""
        if not email.endswith("@" + domain):
            raise BadRequest(f"email: this link is for addresses at {domain} only", field="email")
    return email


async def request_code(session: AsyncSession, link: ShareLink, raw_email: str) -> CodeRequest:
    """A one-time code for an address, when the link admits it. A closed-org link refuses another domain
    plainly (400 naming email); a closed-individual link answers alike for listed and unlisted addresses,
    so that the reviewer list cannot be probed."""
    email = code_address(link, raw_email)
    now = utcnow()
    if link.access_mode == AccessMode.CLOSED_ORG:
        allowed = not link.reviewer_emails or email in {e.lower() for e in link.reviewer_emails}
    else:
        allowed = email in {e.lower() for e in link.reviewer_emails or []}
    if not allowed:
        return CodeRequest(email, None, now + CODE_TTL)
    recent = await session.scalar(
        select(func.count())
        .select_from(ShareLinkCode)
        .where(
            ShareLinkCode.link_id == link.id,
            ShareLinkCode.email == email,
            ShareLinkCode.created_at > now - timedelta(hours=1),
        )
    )
    if int(recent or 0) >= CODES_PER_HOUR:
        raise RateLimited(
            f"{CODES_PER_HOUR} codes were sent to this address in the last hour; try again later",
            retry_after=3600,
        )
    await session.execute(
        delete(ShareLinkCode).where(
            ShareLinkCode.link_id == link.id,
            ShareLinkCode.email == email,
            ShareLinkCode.used_at.is_(None),
            ShareLinkCode.created_at <= now - timedelta(hours=1),
        )
    )
    code = f"{secrets.randbelow(10**6):06d}"
    salt = secrets.token_hex(16)
    session.add(
        ShareLinkCode(
            id=new_id(),
            link_id=link.id,
            email=email,
            code_hash=_code_hash(salt, code),
            salt=salt,
            attempts=0,
            created_at=now,
            expires_at=now + CODE_TTL,
        )
    )
    await session.flush()
    return CodeRequest(email, code, now + CODE_TTL)


def code_mail(doc: Document, code: str, url: str) -> tuple[str, str]:
    subject = f"Your code to review {doc.title}"
    text = (
        f"Your one-time code is {code}\n\n"
        f'Enter it on the review page of "{doc.title}" ({url}) within 10 minutes.\n'
        "If you did not ask for it, ignore this mail.\n"
    )
    return subject, text


REFUSED_CODE = (
    f"the code is wrong or no longer valid (a code lasts a limited time and stops working after "
    f"{CODE_ATTEMPTS} wrong tries): check the latest mail, or ask for a new code"
)


@dataclass(frozen=True)
class CodeCheck:
    ok: bool
    detail: str
    cookie: str | None = None  # on success: the new session's cookie (a fresh one: no fixation)
    session: ShareLinkSession | None = None


async def confirm_code(
    session: AsyncSession, ctx: Context, visit_: Visit, raw_email: str, code: str
) -> CodeCheck:
    """Check a code against the address's newest live code; a wrong one spends an attempt (the caller
    commits either way and refuses afterwards). On success a new session holds the proven address and
    the visit's old session, if any, ends."""
    link = visit_.link
    email = _email(raw_email)
    code = (code or "").strip()
    if not re.fullmatch(r"\d{6}", code):
        raise BadRequest("code must be the 6 digits from the mail", field="code")
    now = utcnow()
    found = await session.scalar(
        select(ShareLinkCode)
        .where(
            ShareLinkCode.link_id == link.id, ShareLinkCode.email == email, ShareLinkCode.used_at.is_(None)
        )
        .order_by(ShareLinkCode.created_at.desc())
        .limit(1)
        .with_for_update()
    )
    # One answer for every refusal: no live code (an address that is not on a closed-individual list
    # never gets one), a spent code and a wrong code alike, so that a refusal tells nobody who is listed.
    refused = CodeCheck(False, REFUSED_CODE)
    if found is None or found.expires_at <= now or found.attempts >= CODE_ATTEMPTS:
        return refused
    if not hmac.compare_digest(found.code_hash, _code_hash(found.salt, code)):
        found.attempts += 1
        return refused
    found.used_at = now
    if visit_.session is not None:
        await session.delete(visit_.session)
    cookie, row = await open_session(session, link)
    row.email = email
    row.verified_at = now
    audit.record(
        session, ctx, "share_link.verify", "share_link", link.id, after=share_events.verified(email, row)
    )
    return CodeCheck(True, "address proven", cookie=cookie, session=row)


def reviewer_actor(visit_: Visit) -> Actor:
    who = visit_.email or "share-link reviewer"
    return Actor(id=visit_.link.id, name=who, key_hash="", kind="reviewer")


def commenter(visit_: Visit, author: str | None = None) -> str:
    """Who a comment is by: the proven address when there is one (a display name may stand before it, the
    address is kept: `Ann Lee (ann@example.com)`), else the name given, else a generic name."""
    shown = " ".join((author or "").split())
    if visit_.email:
        room = 196 - len(visit_.email)
        return f"{shown[:room]} ({visit_.email})" if shown and room > 0 else visit_.email
    return shown[:200] or "Reviewer (share link)"


def reviewer_caller(ctx: Context, visit_: Visit, author: str | None = None) -> Caller:
    name = commenter(visit_, author)
    return Caller(ctx=ctx, org_id=visit_.link.org_id, key_id=visit_.link.id, name=name)


def require_admitted(visit_: Visit) -> None:
    if not visit_.admitted:
        raise Forbidden(
            f"this share link is {visit_.link.access_mode}: prove your address with a one-time code first "
            "(POST /api/share/{token}/verification, then /verification/confirm)",
            code="share_verification_required",
        )


def require_permission(link: ShareLink, needed: str, doing: str) -> None:
    if PERMISSIONS.index(link.permission) < PERMISSIONS.index(needed):
        ways = " or ".join(PERMISSIONS[PERMISSIONS.index(needed) :])
        raise Forbidden(
            f"this share link's permission is {link.permission}; {doing} needs {ways}",
            code="share_permission",
            permission=link.permission,
            requiredPermission=needed,
        )


# ---- what a holder reads and does -------------------------------------------------------------------


async def objected(session: AsyncSession, doc: Document) -> list[Proposal]:
    rows = (
        await session.scalars(
            select(Proposal)
            .where(
                Proposal.resource_type == "document",
                Proposal.resource_id == doc.id,
                Proposal.status == "objected",
            )
            .order_by(Proposal.created_at, Proposal.id)
        )
    ).all()
    return list(rows)


@dataclass(frozen=True)
class Objection:
    agent_name: str
    reason: str | None
    created_at: datetime


@dataclass(frozen=True)
class Pending:
    """What a person deciding an objected proposal reads beside it: the section's heading and its text as
    it reads now (None when the section is gone), and the objections with their reasons."""

    proposal_id: str
    section_title: str
    current: str | None
    objections: tuple[Objection, ...]


async def pending(session: AsyncSession, doc: Document, proposal_ids: list[str]) -> dict[str, Pending]:
    """The decision context of the document's objected proposals `proposal_ids` (the FullReview page)."""
    if not proposal_ids:
        return {}
    rows = (
        await session.scalars(
            select(Proposal).where(Proposal.id.in_(proposal_ids), Proposal.resource_id == doc.id)
        )
    ).all()
    votes = (
        await session.scalars(
            select(ProposalVote)
            .where(ProposalVote.proposal_id.in_(proposal_ids), ProposalVote.kind == "object")
            .order_by(ProposalVote.id)
        )
    ).all()
    text = await content_of(session, doc.id) if doc.status == "ready" else ""
    await offload.outline(text)
    found: dict[str, Pending] = {}
    for p in rows:
        sec = sections.find(text, p.section_id) if text else None
        found[p.id] = Pending(
            proposal_id=p.id,
            section_title=(sec.title or "Introduction") if sec is not None else p.section_id,
            current=sections.body(text, sec) if sec is not None else None,
            objections=tuple(
                Objection(v.agent_name, v.reason, v.created_at) for v in votes if v.proposal_id == p.id
            ),
        )
    return found


@dataclass(frozen=True)
class SharedView:
    """What a share link shows: the link, the proven address (closed links), the document with its text
    (empty until ready, or when left out), its section tree (its top-level sections, each with its children),
    its comments and, for a FullReview link, its objected proposals."""

    link: ShareLink
    reviewer: str | None
    doc: Document
    content: str
    sections: list[sections.Section]
    comments: list[Comment]
    proposals: list[Proposal]


@dataclass(frozen=True)
class Decided:
    """An objected proposal a share link's holder decided, with the decision and the holder's note."""

    proposal: Proposal
    decision: str
    note: str


async def document_view(session: AsyncSession, visit_: Visit, *, with_sections: bool = True) -> SharedView:
    """What a share link shows; `with_sections=False` leaves the section tree and the text out (the review
    page renders the text as HTML and the tree once per version, not on every read, and reads the visit
    without the text: see `live_link`)."""
    require_admitted(visit_)
    link, doc = visit_.link, visit_.doc
    content = (doc.content or "") if doc.status == "ready" and with_sections else ""
    if with_sections:
        await offload.outline(content)  # its sections: parsed off the event loop when it is large
    rows = (
        await session.scalars(
            select(Comment).where(Comment.document_id == doc.id).order_by(Comment.created_at, Comment.id)
        )
    ).all()
    return SharedView(
        link=link,
        reviewer=visit_.email,
        doc=doc,
        content=content,
        sections=sections.top_level(content) if content and with_sections else [],
        comments=list(rows),
        proposals=await objected(session, doc) if link.permission == Permission.FULL_REVIEW else [],
    )


async def add_comment(
    session: AsyncSession,
    ctx: Context,
    visit_: Visit,
    *,
    text: str,
    paragraph_id: str | None = None,
    author: str | None = None,
) -> Comment:
    require_admitted(visit_)
    require_permission(visit_.link, "CommentOnly", "commenting")
    who = reviewer_caller(ctx, visit_, author)
    return await comments.create(session, who, visit_.doc.id, text=text, paragraph_id=paragraph_id or None)


async def resolve_comment(session: AsyncSession, ctx: Context, visit_: Visit, comment_id: str) -> Comment:
    require_admitted(visit_)
    require_permission(visit_.link, Permission.FULL_REVIEW, "resolving comments")
    return await comments.resolve_on(session, reviewer_caller(ctx, visit_), visit_.doc.id, comment_id)


async def decide(
    session: AsyncSession, ctx: Context, visit_: Visit, proposal_id: str, *, decision: str, note: str
) -> Decided:
    require_admitted(visit_)
    require_permission(visit_.link, Permission.FULL_REVIEW, "deciding proposals")
    note = (note or "").strip()
    if not note:
        raise BadRequest("note is required: say why", field="note")
    if decision not in ("approve", "reject"):
        raise BadRequest("decision must be approve or reject", field="decision")
    resource = proposals.DocumentResource(visit_.doc)
    found = await consensus.get_proposal(session, resource, proposal_id, lock=False)
    if found.status != "objected":
        raise BadRequest(
            f"proposal is {found.status}; a share link decides objected proposals only", field="proposalId"
        )
    proposal = await consensus.decide_paused(
        session, ctx, resource, proposals.POLICY, proposal_id, approve=decision == "approve"
    )
    data = share_events.decided(
        proposal.id, decision=decision, note=note, reviewer=visit_.email, link_id=visit_.link.id
    )
    events.append(
        session,
        library.stream(visit_.doc.id),
        "pact.proposal.decided",
        ctx,
        section_id=proposal.section_id,
        data=data,
        correlation_id=proposal.id,
    )
    audit.record(session, ctx, "share_link.decide", "proposal", proposal.id, after=data)
    return Decided(proposal, decision, note)


async def purge_access(session: AsyncSession) -> int:
    """Delete one-time codes and share sessions that expired more than the retention period ago (proofs
    of address stay in the audit trail)."""
    cutoff = retention_cutoff()
    codes = await execute_counted(session, delete(ShareLinkCode).where(ShareLinkCode.expires_at < cutoff))
    visits = await execute_counted(
        session, delete(ShareLinkSession).where(ShareLinkSession.expires_at < cutoff)
    )
    return codes + visits
