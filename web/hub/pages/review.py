"""The review desk's handlers (`/review/...` on the hub): sign in with a staff key once, then the queue of
the person's roles, one page per item with its context, and the decision forms. Each handler reads the
session, checks the form token on a POST (403 page without it), the role (403 page), calls the same domain
function as the review API and redirects (303) to the queue with a flash message; a refusal from the
domain (already decided, bad input) is shown on the item's page with its status, never a 500."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from domain.kernel.context import Context
from domain.kernel.errors import DomainError, NotFound, Unauthorized
from domain.people import staff_sessions as sessions
from domain.people.staff_sessions import SignedIn
from domain.review import escalations, proposals, resources
from domain.work import review as work_review
from web.hub.pages import views
from web.hub.pages.session import (
    CSRF_FIELD,
    FLASH_COOKIE,
    SESSION_COOKIE,
    SIGN_IN_COOKIE,
    SIGN_IN_FORM_SECONDS,
    clear_cookie,
    current,
    new_sign_in_token,
    same_token,
    set_cookie,
    set_flash,
    take_flash,
    ttl,
)
from web.kernel.forms import posted
from web.kernel.html import Markup, page
from web.kernel.request import context, runtime

QUEUE_LIMIT = 100
FORM = web.RequestKey("review_form", dict[str, str])
Role = str
PageHandler = Callable[[web.Request, SignedIn], Awaitable[web.StreamResponse]]


def render(
    request: web.Request, title: str, body: Markup, signed_in: SignedIn | None, *, status: int = 200
) -> web.Response:
    return page(
        title, body, site=views.SITE, home="/review/", nav=views.nav(signed_in), status=status, no_store=True
    )


def see_other(request: web.Request, location: str, flash: str | None = None) -> web.Response:
    response = web.Response(status=303, headers={"Location": location, "Cache-Control": "no-store"})
    if flash:
        set_flash(request, response, flash)
    return response


def sign_in_page(
    request: web.Request, *, status: int = 200, error: str | None = None, notice: str | None = None
) -> web.Response:
    token = new_sign_in_token()
    response = render(
        request, "Sign in", views.sign_in(token, error=error, notice=notice), None, status=status
    )
    set_cookie(request, response, SIGN_IN_COOKIE, token, SIGN_IN_FORM_SECONDS)
    return response


def refusal(
    request: web.Request, status: int, heading: str, text: str, signed_in: SignedIn | None
) -> web.Response:
    return render(request, heading, views.message_page(heading, text), signed_in, status=status)


async def read_form(request: web.Request) -> dict[str, str]:
    """The posted form's text fields (a file part or a NUL character reads as nothing)."""
    data = await posted(request)
    return {k: v for k, v in data.items() if isinstance(v, str) and "\x00" not in v}


def staff_ctx(request: web.Request, signed_in: SignedIn) -> Context:
    return context(request, signed_in.member.actor)


def guarded(
    role: Role | None, *, post: bool
) -> Callable[[PageHandler], Callable[[web.Request], Awaitable[web.StreamResponse]]]:
    """A page for signed-in staff (of `role` when given); a POST must carry the session's form token."""

    def wrap(handler: PageHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            signed_in, why = await current(request)
            if signed_in is None:
                response = sign_in_page(
                    request, status=401, notice=None, error=f"Sign in to continue{': ' + why if why else ''}."
                )
                if why:
                    clear_cookie(request, response, SESSION_COOKIE)
                return response
            if post:
                form = await read_form(request)
                if not same_token(form.get(CSRF_FIELD), signed_in.csrf_token):
                    return refusal(
                        request,
                        403,
                        "Form refused",
                        "This form did not carry the review desk's form token (or an old one). "
                        "Open the page again and resend it from there.",
                        signed_in,
                    )
                request[FORM] = form
            if role is not None and role not in signed_in.member.roles:
                return refusal(
                    request,
                    403,
                    "Not for your role",
                    f"This page is for staff with the {role} role; your key has "
                    f"{', '.join(sorted(signed_in.member.roles))}.",
                    signed_in,
                )
            return await handler(request, signed_in)

        return handle

    return wrap


def form_of(request: web.Request) -> dict[str, str]:
    return request[FORM]


# --- sign in, sign out, the queue ------------------------------------------------------------------------


async def desk(request: web.Request) -> web.StreamResponse:
    """GET /review/: the queue when signed in, else the sign-in form."""
    signed_in, why = await current(request)
    flash = take_flash(request)
    if signed_in is None:
        response = sign_in_page(request, error=f"{why[:1].upper()}{why[1:]}." if why else None, notice=flash)
        if why:
            clear_cookie(request, response, SESSION_COOKIE)
    else:
        roles = signed_in.member.roles
        async with runtime(request).db.read() as session:
            found_escalations = (
                await escalations.queue(session, status="open", source=None, limit=QUEUE_LIMIT, offset=0)
                if "reviewer" in roles
                else None
            )
            found_proposals = (
                await proposals.queue(session, status="objected", limit=QUEUE_LIMIT, offset=0)
                if "reviewer" in roles
                else None
            )
            found_work = (
                await work_review.queue(session, status="deferred", limit=QUEUE_LIMIT, offset=0)
                if "curator" in roles
                else None
            )
        body = views.queue(
            signed_in, escalations=found_escalations, proposals=found_proposals, work=found_work, flash=flash
        )
        response = render(request, "Review queue", body, signed_in)
    if flash:
        clear_cookie(request, response, FLASH_COOKIE)
    return response


async def desk_no_slash(_request: web.Request) -> web.StreamResponse:
    raise web.HTTPMovedPermanently("/review/")


async def sign_in(request: web.Request) -> web.StreamResponse:
    """POST /review/sign-in {key, csrf}: a session, its cookie, and the queue."""
    form = await read_form(request)
    if not same_token(form.get(CSRF_FIELD), request.cookies.get(SIGN_IN_COOKIE)):
        return sign_in_page(
            request,
            status=403,
            error="The sign-in form had expired or was not this desk's own: here is a fresh one, try again.",
        )
    try:
        async with runtime(request).db.transaction() as session:
            token, signed_in = await sessions.start(
                session, context(request), form.get("key"), ttl=ttl(request)
            )
    except Unauthorized as exc:
        return sign_in_page(request, status=401, error=f"That key was not accepted: {exc.detail}.")
    response = see_other(request, "/review/", f"Signed in as {signed_in.member.actor.name}.")
    set_cookie(request, response, SESSION_COOKIE, token, int(ttl(request).total_seconds()))
    clear_cookie(request, response, SIGN_IN_COOKIE)
    return response


@guarded(None, post=True)
async def sign_out(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    async with runtime(request).db.transaction() as session:
        await sessions.end(session, staff_ctx(request, signed_in), signed_in.session_id)
    response = see_other(request, "/review/", "Signed out.")
    clear_cookie(request, response, SESSION_COOKIE)
    return response


# --- items and decisions ----------------------------------------------------------------------------------


async def _load(
    request: web.Request,
    signed_in: SignedIn,
    what: str,
    load: Callable[[Any, str], Awaitable[dict[str, Any]]],
) -> dict[str, Any] | web.Response:
    try:
        async with runtime(request).db.read() as session:
            return await load(session, request.match_info["id"])
    except NotFound as exc:
        return refusal(request, 404, f"No such {what}", exc.detail, signed_in)


def _refused(exc: DomainError) -> str:
    reasons = {
        409: "This was not recorded",
        404: "This was not recorded",
        400: "Please check the form",
    }
    return f"{reasons.get(exc.status, 'This was not recorded')}: {exc.detail}."


async def escalation_item(session: Any, escalation_id: str) -> dict[str, Any]:
    """An escalation with its context; one that names a proposal but no section shows the text of the
    proposal's section as it reads now (`sectionText`), to set beside the proposed text."""
    item = await escalations.item(session, escalation_id)
    proposal = item["proposal"]
    if proposal is not None and item["sectionText"] is None and proposal["sectionId"]:
        found = await resources.infos(session, {(item["resourceType"], item["resourceId"])})
        info = found.get((item["resourceType"], item["resourceId"]))
        item["sectionText"] = resources.section_text(info.markdown if info else None, proposal["sectionId"])
    return item


@guarded("reviewer", post=False)
async def escalation_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "escalation", escalation_item)
    if isinstance(found, web.Response):
        return found
    return render(request, "Escalation", views.escalation(found, signed_in.csrf_token), signed_in)


@guarded("reviewer", post=True)
async def answer_escalation(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    form = form_of(request)
    text = form.get("answer", "").strip()
    decision = form.get("decision", "") or None
    error = None
    if not text:
        error = "Please check the form: write an answer."
    elif len(text) > 5000:
        error = "Please check the form: the answer is longer than 5000 characters."
    elif decision not in (None, "approve", "reject"):
        error = "Please check the form: the decision is approve, reject or none."
    if error is None:
        try:
            async with runtime(request).db.transaction() as session:
                await escalations.answer(
                    session,
                    staff_ctx(request, signed_in),
                    request.match_info["id"],
                    text=text,
                    decision=decision,
                )
        except DomainError as exc:
            return await _escalation_again(request, signed_in, exc.status, _refused(exc), form)
        done = f"Answer sent; {views.DECIDED[decision]}." if decision else "Answer sent."
        return see_other(request, "/review/", done)
    return await _escalation_again(request, signed_in, 400, error, form)


async def _escalation_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "escalation", escalation_item)
    if isinstance(found, web.Response):
        return found
    body = views.escalation(found, signed_in.csrf_token, error=error, form=form)
    return render(request, "Escalation", body, signed_in, status=status)


@guarded("reviewer", post=False)
async def proposal_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "proposal", proposals.item)
    if isinstance(found, web.Response):
        return found
    return render(request, "Objected proposal", views.proposal(found, signed_in.csrf_token), signed_in)


@guarded("reviewer", post=True)
async def decide_proposal(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    form = form_of(request)
    decision = form.get("decision", "")
    note = form.get("note", "").strip()
    error = None
    if decision not in ("approve", "reject"):
        error = "Please check the form: choose approve or reject."
    elif not note:
        error = "Please check the form: write a note saying why."
    elif len(note) > 2000:
        error = "Please check the form: the note is longer than 2000 characters."
    if error is None:
        try:
            async with runtime(request).db.transaction() as session:
                await proposals.decide(
                    session,
                    staff_ctx(request, signed_in),
                    request.match_info["id"],
                    decision=decision,
                    note=note,
                )
        except DomainError as exc:
            return await _proposal_again(request, signed_in, exc.status, _refused(exc), form)
        return see_other(
            request, "/review/", f"Proposal {'approved' if decision == 'approve' else 'rejected'}."
        )
    return await _proposal_again(request, signed_in, 400, error, form)


async def _proposal_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "proposal", proposals.item)
    if isinstance(found, web.Response):
        return found
    body = views.proposal(found, signed_in.csrf_token, error=error, form=form)
    return render(request, "Objected proposal", body, signed_in, status=status)


@guarded("curator", post=False)
async def work_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "submission", work_review.item)
    if isinstance(found, web.Response):
        return found
    return render(request, "Deferred observation", views.work(found, signed_in.csrf_token), signed_in)


def _work_decision(decision: str) -> PageHandler:
    async def decide(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
        form = form_of(request)
        field = f"{decision}-note"
        note = form.get(field, "").strip()
        error = None
        if decision == "reject" and not note:
            error = "Please check the form: say why the observation is refused."
        elif len(note) > 2000:
            error = "Please check the form: the note is longer than 2000 characters."
        if error is None:
            try:
                async with runtime(request).db.transaction() as session:
                    await work_review.decide(
                        session,
                        staff_ctx(request, signed_in),
                        request.match_info["id"],
                        decision=decision,
                        note=note,
                    )
            except DomainError as exc:
                return await _work_again(request, signed_in, exc.status, _refused(exc), form)
            return see_other(
                request,
                "/review/",
                "Observation accepted: credits paid."
                if decision == "accept"
                else "Observation rejected: a defect was recorded.",
            )
        return await _work_again(request, signed_in, 400, error, form)

    return decide


async def _work_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "submission", work_review.item)
    if isinstance(found, web.Response):
        return found
    body = views.work(found, signed_in.csrf_token, error=error, form=form)
    return render(request, "Deferred observation", body, signed_in, status=status)


def add_routes(app: web.Application) -> None:
    router = app.router
    router.add_get("/review", desk_no_slash)
    router.add_get("/review/", desk)
    router.add_post("/review/sign-in", sign_in)
    router.add_post("/review/sign-out", sign_out)
    router.add_get("/review/escalations/{id}", escalation_page)
    router.add_post("/review/escalations/{id}/answer", answer_escalation)
    router.add_get("/review/proposals/{id}", proposal_page)
    router.add_post("/review/proposals/{id}/decide", decide_proposal)
    router.add_get("/review/work/{id}", work_page)
    router.add_post("/review/work/{id}/accept", guarded("curator", post=True)(_work_decision("accept")))
    router.add_post("/review/work/{id}/reject", guarded("curator", post=True)(_work_decision("reject")))
