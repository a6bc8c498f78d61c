"""The review page a share link's `url` opens (GET /share/{token}) and the forms it posts. Anonymous at
the key level: the token is checked inside, a closed link that is not public asks for the reviewer's
address and the mailed code first, and every form carries a CSRF token bound to the link's session
cookie (HttpOnly, SameSite=Lax). Errors are pages too (410 for an expired or revoked link)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from aiohttp import web

from domain.consensus import sections
from domain.documents import offload, share_media, share_render, sharing
from domain.kernel.errors import BadRequest, DomainError, Forbidden
from web.docs.sharing import html as share_html
from web.docs.sharing.links import check_code, send_code, session_cookie, set_session_cookie
from web.kernel.forms import posted
from web.kernel.html import CSP
from web.kernel.request import context, runtime
from web.kernel.routing import Routes

routes = Routes()

HTML = "text/html"
MAX_PAGE = 100_000
ERRORS = {
    403: "The form's CSRF token is missing or stale, or the link's permission does not allow it (a page)",
    404: "No share link has this token (a page)",
    410: "The share link expired or was revoked (a page)",
}
NOTES = {
    "comment": "Your comment was added.",
    "resolved": "The comment is resolved.",
    "decided": "Your decision is recorded.",
    "verified": "Your address is proven; welcome.",
}
TITLES = {404: "Link not found", 410: "Link no longer works", 403: "Not allowed", 429: "Too many requests"}

Page = Callable[..., Awaitable[web.StreamResponse]]


def html(text: str, status: int = 200) -> web.Response:
    response = web.Response(text=text, status=status, content_type=HTML)
    response.headers["Content-Security-Policy"] = CSP
    return _private(response)


def _private(response: web.Response) -> web.Response:
    """Headers of every answer under /share/{token}: the token is in the path, so no Referer carries it
    away, and nothing is cached on the way."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def as_page(fn: Page) -> Page:
    """Domain refusals as pages with their status instead of problem+json."""

    @wraps(fn)
    async def run(request: web.Request, **kwargs: Any) -> web.StreamResponse:
        try:
            return await fn(request, **kwargs)
        except DomainError as exc:
            title = TITLES.get(exc.status, "Cannot do that")
            return html(share_html.message(title, exc.detail), exc.status)

    return run


def _base(request: web.Request) -> str:
    return f"/share/{request.match_info['token']}"


async def _visit_with_session(request: web.Request) -> tuple[sharing.Visit, str, Any]:
    """The visit, its cookie value, and a new session row when the browser had none (to set)."""
    token = request.match_info["token"]
    async with runtime(request).db.transaction() as session:
        # The document's text is not read here: the page reads it only when its rendering is not cached.
        link, _ = await sharing.live_link(session, token, content=False)
        cookie = session_cookie(request, link.id)
        found = await sharing.visit(session, token, cookie, content=False)
        if found.session is not None and cookie is not None:
            return found, cookie, None
        cookie, row = await sharing.open_session(session, link)
        return sharing.Visit(found.link, found.doc, row), cookie, row


async def _form(request: web.Request) -> tuple[sharing.Visit, dict[str, str]]:
    """A posted form's visit, after its CSRF token checks out against the session cookie."""
    token = request.match_info["token"]
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token)
        cookie = session_cookie(request, link.id)
        found = await sharing.visit(session, token, cookie)
    data = await posted(request)
    form = {k: v for k, v in data.items() if isinstance(v, str)}
    if found.session is None or not sharing.csrf_ok(cookie, link.id, form.get("csrf")):
        raise Forbidden(
            "this form is stale or did not come from the review page (CSRF check failed): reload the page "
            "and try again",
            code="csrf_failed",
        )
    return found, form


def _retry_later(response: web.Response, exc: DomainError) -> web.Response:
    """A refusal that passes with time (a limit, the mail relay) tells the browser when (Retry-After)."""
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _redirect(request: web.Request, done: str) -> web.Response:
    raise web.HTTPSeeOther(f"{_base(request)}?done={done}")


async def _render(
    request: web.Request, *, status: int = 200, error: str | None = None, page: int = 1
) -> web.Response:
    found, cookie, new_row = await _visit_with_session(request)
    csrf = sharing.csrf_token(cookie, found.link.id)
    if not found.admitted:
        text = share_html.email_form(
            f"{_base(request)}/verify", found.doc.title, found.link.access_mode, csrf
        )
    else:
        doc = found.doc
        loaded: list[str] = []

        async def markdown() -> str:
            if not loaded:
                async with runtime(request).db.read() as session:
                    loaded.append(await sharing.content_of(session, doc.id))
            return loaded[0]

        # Rendered before the read below opens (off the event loop for a large document, and cached).
        article = (
            await share_render.page(doc.id, doc.version, markdown, page) if doc.status == "ready" else None
        )
        async with runtime(request).db.read() as session:
            view = await sharing.document_view(session, found, with_sections=article is None)
        content = ""
        # The parts of the page built from the section tree, once per version (the comment form's list of
        # sections only where the link lets a person comment).
        parts = ("toc", "options") if found.link.permission in ("CommentOnly", "FullReview") else ("toc",)
        if article is not None and not share_render.memoized(article.key, *parts):
            content = await markdown()
            await offload.outline(content)  # the tree is rendered from its sections: none parsed here
        note = NOTES.get(request.query.get("done", ""))
        pending: dict[str, sharing.Pending] = {}
        if view.proposals:
            async with runtime(request).db.read() as session:
                ids = [p.id for p in view.proposals]
                pending = await sharing.pending(session, doc, ids)
        text = share_html.review_page(
            _base(request),
            view,
            csrf,
            note=note,
            error=error,
            article=article,
            tree=lambda: sections.top_level(content),  # known: share_render.page parsed it
            media=_base(request) if doc.kind == "docx" else None,
            pending=pending,
        )
    response = html(text, status)
    if new_row is not None:
        set_session_cookie(request, response, found.link, cookie, new_row)
    return response


@routes.route(
    "GET",
    "/share/{token}",
    summary="The review page of a share link (HTML): the document, its sections and comments, and the "
    "forms the link's permission allows; a closed link asks for the address and the mailed code first. "
    "A document over 256 KB of Markdown is shown a page at a time: ?page=N (from 1)",
    tags=["Sharing"],
    errors={
        **ERRORS,
        400: "page is not a whole number from 1 (a page)",
        404: "No share link has this token, or the document has no such page (a page)",
    },
    content_type=HTML,
)
@as_page
async def review_page(request: web.Request) -> web.StreamResponse:
    # Read here, not declared as the operation's query: a refusal must be a page like every other one
    # (the declared query's 400 is the API's problem+json).
    pages = request.query.getall("page", ["1"])
    raw = pages[0].strip()
    if len(pages) > 1 or not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        raise BadRequest(f"page: one whole number from 1 to {MAX_PAGE}", field="page")
    return await _render(request, page=int(raw))


@routes.route(
    "POST",
    "/share/{token}/verify",
    summary="Review page form: mail a one-time code to an address (HTML)",
    tags=["Sharing"],
    errors={
        **ERRORS,
        400: "Not an address, or outside a closed-org link's domain (a page)",
        429: "Too many codes asked (from this address, for this address, on this link or for this mail "
        "domain): the form again, saying when to try again (a page, Retry-After)",
        503: "The mail relay failed: the form again, saying so (a page)",
    },
    content_type=HTML,
)
@as_page
async def verify_form(request: web.Request) -> web.StreamResponse:
    found, form = await _form(request)
    cookie = session_cookie(request, found.link.id) or ""
    csrf = sharing.csrf_token(cookie, found.link.id)
    try:
        asked = await send_code(request, form.get("email", ""))
    except DomainError as exc:
        if exc.status not in (400, 429, 503):  # a bad address, a limit, the relay down: the form again
            raise
        text = share_html.email_form(
            f"{_base(request)}/verify", found.doc.title, found.link.access_mode, csrf, error=exc.detail
        )
        return _retry_later(html(text, exc.status), exc)
    text = share_html.code_form(
        f"{_base(request)}/code", _base(request), found.doc.title, asked.email, csrf, note=None, error=None
    )
    return html(text)


@routes.route(
    "POST",
    "/share/{token}/code",
    summary="Review page form: prove the address with the mailed code; sets the session cookie (HTML)",
    tags=["Sharing"],
    errors={
        **ERRORS,
        429: "Too many codes tried from this address, or too many wrong codes on this link: the form "
        "again, saying when to try again (a page, Retry-After)",
    },
    content_type=HTML,
)
@as_page
async def code_form(request: web.Request) -> web.StreamResponse:
    found, form = await _form(request)
    email = form.get("email", "")
    refusal: DomainError | None = None
    try:
        _, checked = await check_code(request, email, form.get("code", ""))
    except DomainError as exc:
        if exc.status not in (400, 429):  # a malformed code or a limit: the form again, saying why
            raise
        checked, refusal = sharing.CodeCheck(False, exc.detail), exc
    if not checked.ok or checked.cookie is None or checked.session is None:
        cookie = session_cookie(request, found.link.id) or ""
        text = share_html.code_form(
            f"{_base(request)}/code",
            _base(request),
            found.doc.title,
            email,
            sharing.csrf_token(cookie, found.link.id),
            note=None,
            error=checked.detail,
        )
        if refusal is not None and refusal.status == 429:
            return _retry_later(html(text, 429), refusal)
        return html(text, 403)
    response = web.HTTPSeeOther(f"{_base(request)}?done=verified")
    set_session_cookie(request, response, found.link, checked.cookie, checked.session)
    raise response


@routes.route(
    "POST",
    "/share/{token}/comments",
    summary="Review page form: add a comment (CommentOnly, FullReview); redirects back to the page",
    tags=["Sharing"],
    errors=ERRORS,
    content_type=HTML,
)
@as_page
async def comment_form(request: web.Request) -> web.StreamResponse:
    found, form = await _form(request)
    text = form.get("text", "").strip()
    if not text or len(text) > 10_000:
        return await _render(request, status=400, error="text: write a comment of 1 to 10000 characters")
    async with runtime(request).db.transaction() as session:
        await sharing.add_comment(
            session,
            context(request, sharing.reviewer_actor(found)),
            found,
            text=text,
            paragraph_id=form.get("paragraphId") or None,
            author=form.get("author", "").strip()[:200] or None,
        )
    return _redirect(request, "comment")


@routes.route(
    "POST",
    "/share/{token}/comments/{commentId}/resolve",
    summary="Review page form: resolve a comment (FullReview); redirects back to the page",
    tags=["Sharing"],
    errors=ERRORS,
    content_type=HTML,
)
@as_page
async def resolve_form(request: web.Request) -> web.StreamResponse:
    found, _ = await _form(request)
    async with runtime(request).db.transaction() as session:
        await sharing.resolve_comment(
            session, context(request, sharing.reviewer_actor(found)), found, request.match_info["commentId"]
        )
    return _redirect(request, "resolved")


@routes.route(
    "POST",
    "/share/{token}/proposals/{proposalId}/decide",
    summary="Review page form: approve or reject an objected proposal with a note (FullReview)",
    tags=["Sharing"],
    errors=ERRORS,
    content_type=HTML,
)
@as_page
async def decide_form(request: web.Request) -> web.StreamResponse:
    found, form = await _form(request)
    async with runtime(request).db.transaction() as session:
        await sharing.decide(
            session,
            context(request, sharing.reviewer_actor(found)),
            found,
            request.match_info["proposalId"],
            decision=form.get("decision", ""),
            note=form.get("note", ""),
        )
    return _redirect(request, "decided")


@routes.route(
    "GET",
    "/share/{token}/media/{name}",
    summary="An image of the shared document (a DOCX's picture, as its page shows it), read from the "
    "uploaded package: the link must be live and, when it is closed, the address proven",
    tags=["Sharing"],
    errors={
        403: "The link is closed and this browser has not proven an address",
        404: "No share link has this token, or its document holds no such image",
        410: "The share link expired or was revoked",
    },
    content_type="image/png",
    alternatives=["image/jpeg", "image/gif", "image/webp", "image/bmp"],
)
async def media(request: web.Request) -> web.StreamResponse:
    token = request.match_info["token"]
    async with runtime(request).db.read() as session:
        link, _ = await sharing.live_link(session, token, content=False)
        found = await sharing.visit(session, token, session_cookie(request, link.id), content=False)
    sharing.require_admitted(found)
    doc = found.doc

    async def markdown() -> str:
        async with runtime(request).db.read() as session:
            return await sharing.content_of(session, doc.id)

    shown = await share_render.media_names(doc.id, doc.version, markdown)
    image = await share_media.image(doc, request.match_info["name"], shown)
    response = web.Response(body=image.data, content_type=image.media_type)
    response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response.headers["Content-Disposition"] = "inline"
    return _private(response)
