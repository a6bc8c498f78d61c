"""Share links of a document: the owner creates, lists and revokes them (service key); the token's holder
reads the document and, as the link's permission allows, comments, resolves and decides through the
token-scoped API below (anonymous at the key level: the token is checked inside, and for a closed link
that is not public, the session cookie of a proven address). The HTML review page:
web/docs/sharing/pages.py."""

from __future__ import annotations

import logging

from aiohttp import web

from domain.documents import sharing
from domain.documents.models import ShareLink, ShareLinkSession
from domain.kernel import mail
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Forbidden, Unavailable
from web.docs.auth import caller
from web.docs.schemas import CommentOut, ShareLinkBody, ShareLinkLookup, ShareLinkOut
from web.docs.sharing import limits
from web.docs.sharing.schemas import (
    ConfirmBody,
    ShareCommentBody,
    ShareDecision,
    ShareDecisionBody,
    ShareLinkInfo,
    ShareLinkList,
    ShareSession,
    ShareView,
    VerificationBody,
    VerificationSent,
)
from web.kernel.access import Service
from web.kernel.replies import Answer, serialised
from web.kernel.request import context, runtime
from web.kernel.routing import Routes

log = logging.getLogger("concord.sharing")
routes = Routes()

AUTH = {401: "Missing, invalid or revoked API key", 403: "The key lacks the scope"}
TOKEN_ERRORS = {404: "No share link has this token", 410: "The share link expired or was revoked"}
CLOSED = {403: "A closed link whose address is not proven yet (code share_verification_required)"}
SENT = "If this address may review the document, a 6-digit code is on its way; it works for 10 minutes."


def base_url(request: web.Request) -> str:
    configured = runtime(request).settings.public_url
    return configured.rstrip("/") if configured else f"{request.scheme}://{request.host}"


def cookie_name(link: ShareLink) -> str:
    return f"concord_share_{link.id}"


def session_cookie(request: web.Request, link_id: str) -> str | None:
    return request.cookies.get(f"concord_share_{link_id}")


def set_session_cookie(
    request: web.Request, response: web.StreamResponse, link: ShareLink, cookie: str, row: ShareLinkSession
) -> None:
    response.set_cookie(
        cookie_name(link),
        cookie,
        max_age=max(1, int((row.expires_at - utcnow()).total_seconds())),
        path="/",
        httponly=True,
        # Lax, not Strict: the link is usually opened from a mail (another site), and a reviewer who proved
        # the address should not need a new code each time; cross-site POSTs still carry no cookie, and
        # every form also needs its CSRF token.
        samesite="Lax",
        secure=request.secure,
    )


async def visit(request: web.Request) -> sharing.Visit:
    token = request.match_info["token"]
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token)
        return await sharing.visit(session, token, session_cookie(request, link.id))


def reviewer_ctx(request: web.Request, found: sharing.Visit) -> Context:
    return context(request, sharing.reviewer_actor(found))


# ---- the owner's side -------------------------------------------------------------------------------


@routes.route(
    "POST",
    "/api/documents/{id}/share-link",
    summary="Create a share link (permission, access mode, expiry); its url opens the review page",
    tags=["Sharing"],
    body=ShareLinkBody,
    response=ShareLinkOut,
    status=201,
    access=Service("documents:write"),
    errors={**AUTH, 404: "No such document in the key's organisation"},
    aliases=["/api/masterdocuments/{id}/share-link"],
)
async def create_share_link(request: web.Request, body: ShareLinkBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        made = await sharing.create(
            session,
            who,
            request.match_info["id"],
            sharing.Terms(
                permission=body.permission,
                access_mode=body.accessMode,
                public=body.public,
                reviewer_emails=body.reviewerEmails,
                allowed_domain=body.allowedDomain,
                expires_in_hours=body.expiresInHours,
            ),
            base_url=base_url(request),
        )
    return ShareLinkOut.answer(made)


@routes.route(
    "GET",
    "/api/documents/{id}/share-links",
    summary="List a document's share links (active, expired and revoked; never their tokens)",
    tags=["Sharing"],
    response=ShareLinkList,
    access=Service("documents:write"),
    errors={**AUTH, 404: "No such document in the key's organisation"},
)
async def list_share_links(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await sharing.list_links(session, who, request.match_info["id"])
    return ShareLinkList.answer(found)


@routes.route(
    "DELETE",
    "/api/documents/{id}/share-links/{linkId}",
    summary="Revoke a share link: its token answers 410 Gone from now on and its sessions end",
    tags=["Sharing"],
    response=ShareLinkInfo,
    access=Service("documents:write"),
    errors={**AUTH, 404: "No such document in the key's organisation, or no such link on it"},
)
async def revoke_share_link(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        link = await sharing.revoke(session, who, request.match_info["id"], request.match_info["linkId"])
    return ShareLinkInfo.answer(link)


# ---- the token's holder ------------------------------------------------------------------------------


@routes.route(
    "GET",
    "/api/masterdocuments/share-link/{token}",
    summary="Look up a share link by its token: its terms and the document's title (no key needed)",
    tags=["Sharing"],
    response=ShareLinkLookup,
    errors=TOKEN_ERRORS,
    aliases=["/api/documents/share-link/{token}"],
)
async def lookup_share_link(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        link, doc = await sharing.lookup(session, request.match_info["token"])
    return ShareLinkLookup.answer(link, doc)


@routes.route(
    "GET",
    "/api/share/{token}",
    summary="The shared document: metadata, Markdown content, section tree, comments (and objected "
    "proposals for FullReview)",
    tags=["Sharing"],
    response=ShareView,
    errors={**TOKEN_ERRORS, **CLOSED},
)
async def share_view(request: web.Request) -> Answer:
    token = request.match_info["token"]
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token)
        found = await sharing.visit(session, token, session_cookie(request, link.id))
        view = await sharing.document_view(session, found)
    return ShareView.answer(view)


@routes.route(
    "POST",
    "/api/share/{token}/comments",
    summary="Comment on the shared document (CommentOnly or FullReview)",
    tags=["Sharing"],
    body=ShareCommentBody,
    response=CommentOut,
    status=201,
    errors={
        **TOKEN_ERRORS,
        **CLOSED,
        403: "The link's permission does not allow commenting, or the address is not proven yet",
    },
)
async def share_comment(request: web.Request, body: ShareCommentBody) -> Answer:
    found = await visit(request)
    async with runtime(request).db.transaction() as session:
        made = await sharing.add_comment(
            session,
            reviewer_ctx(request, found),
            found,
            text=body.text,
            paragraph_id=body.paragraphId,
            author=body.author,
        )
    return CommentOut.of(made)


@routes.route(
    "POST",
    "/api/share/{token}/comments/{commentId}/resolve",
    summary="Resolve a comment of the shared document (FullReview)",
    tags=["Sharing"],
    response=CommentOut,
    errors={
        **TOKEN_ERRORS,
        **CLOSED,
        403: "The link's permission does not allow resolving, or the address is not proven yet",
        404: "No such comment on this document (or no such link)",
    },
)
async def share_resolve(request: web.Request) -> Answer:
    found = await visit(request)
    async with runtime(request).db.transaction() as session:
        resolved = await sharing.resolve_comment(
            session, reviewer_ctx(request, found), found, request.match_info["commentId"]
        )
    return CommentOut.of(resolved)


@routes.route(
    "POST",
    "/api/share/{token}/proposals/{proposalId}/decide",
    summary="Approve or reject an objected proposal of the shared document, with a note (FullReview)",
    tags=["Sharing"],
    body=ShareDecisionBody,
    response=ShareDecision,
    errors={
        **TOKEN_ERRORS,
        **CLOSED,
        403: "The link's permission does not allow deciding, or the address is not proven yet",
        404: "No such proposal on this document (or no such link)",
        409: "The proposal is no longer open",
    },
)
async def share_decide(request: web.Request, body: ShareDecisionBody) -> Answer:
    found = await visit(request)
    async with runtime(request).db.transaction() as session:
        result = await sharing.decide(
            session,
            reviewer_ctx(request, found),
            found,
            request.match_info["proposalId"],
            decision=body.decision,
            note=body.note,
        )
    return ShareDecision.of_decision(result)


async def send_code(request: web.Request, email: str) -> sharing.CodeRequest:
    """Ask for a one-time code; mails it when the address may review (after the code is stored). The
    limits (web/docs/sharing/limits.py) come first, the same for every address the link could admit."""
    token = request.match_info["token"]
    await limits.before_code_request(request)
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token)
    await limits.code_request(request, link, sharing.code_address(link, email))
    async with runtime(request).db.transaction() as session:
        link, doc = await sharing.live_link(session, token)
        asked = await sharing.request_code(session, link, email)
    if asked.code is not None:
        subject, text = sharing.code_mail(doc, asked.code, f"{base_url(request)}/share/{token}")
        try:
            await mail.send(runtime(request).settings, asked.email, subject, text)
        except mail.MailError as exc:
            # The code is stored; the reviewer asks again once the relay answers (the operator sees why).
            log.warning("share-link code not mailed: %s", exc)
            raise Unavailable(
                "the code could not be mailed just now; try again in a minute",
                code="mail_unavailable",
                retry_after=60,
            ) from None
    return asked


async def check_code(request: web.Request, email: str, code: str) -> tuple[sharing.Visit, sharing.CodeCheck]:
    """Check a code, within the client's and the link's limits; a refused code spends the link's budget."""
    token = request.match_info["token"]
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token)
    await limits.before_confirm(request, link)
    async with runtime(request).db.transaction() as session:
        link, _ = await sharing.live_link(session, token)
        found = await sharing.visit(session, token, session_cookie(request, link.id))
        if not sharing.needs_proof(link):
            raise BadRequest(f"this share link is {link.access_mode} and needs no address", field="email")
        checked = await sharing.confirm_code(
            session, context(request, sharing.reviewer_actor(found)), found, email, code
        )
    if not checked.ok:
        await limits.wrong_code(request, link)
    return found, checked


@routes.route(
    "POST",
    "/api/share/{token}/verification",
    summary="Mail a one-time code to an address a closed link admits (the answer is the same for an "
    "address it does not, except a closed-org link's other domains)",
    tags=["Sharing"],
    body=VerificationBody,
    response=VerificationSent,
    status=202,
    errors={
        **TOKEN_ERRORS,
        429: "Too many codes asked from this client address, for this address, on this link or for this "
        "mail domain (`limit` says which); see Retry-After",
        503: "The mail relay failed; see Retry-After",
    },
)
async def request_verification(request: web.Request, body: VerificationBody) -> Answer:
    asked = await send_code(request, body.email)
    result = {"email": asked.email, "detail": SENT, "expiresInSeconds": int(sharing.CODE_TTL.total_seconds())}
    return result


@routes.route(
    "POST",
    "/api/share/{token}/verification/confirm",
    summary="Prove the address with the mailed code: sets the link's session cookie",
    tags=["Sharing"],
    body=ConfirmBody,
    response=ShareSession,
    errors={
        **TOKEN_ERRORS,
        403: "Wrong, expired or exhausted code (the detail says which)",
        429: "Too many codes tried from this client address, or too many wrong codes on this link (`limit` "
        "says which); see Retry-After",
    },
)
async def confirm_verification(request: web.Request, body: ConfirmBody) -> Answer:
    found, checked = await check_code(request, body.email, body.code)
    if not checked.ok or checked.cookie is None or checked.session is None:
        raise Forbidden(checked.detail, code="share_code_refused")
    response = serialised(
        request,
        {
            "email": checked.session.email,
            "expiresAt": iso(checked.session.expires_at),
            "cookie": cookie_name(found.link),
        },
    )
    set_session_cookie(request, response, found.link, checked.cookie, checked.session)
    return response
