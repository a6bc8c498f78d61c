"""The review desk's handlers (`/review/...` on the hub): sign in with a staff key once, then the queue of
the person's roles, one page per item with its context, and the decision forms. Each handler reads the
session, checks the form token on a POST (403 page without it), the role (403 page), calls the same domain
function as the review API and redirects (303) to the queue with a flash message; a refusal from the
domain (already decided, bad input) is shown on the item's page with its status, never a 500."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from domain.consensus.models import EscalationPriority
from domain.consensus.policies import ApprovalPolicy
from domain.kernel.context import Context
from domain.kernel.errors import DomainError, NotFound, Unauthorized
from domain.people import staff_sessions as sessions
from domain.people.staff_sessions import SignedIn
from domain.review import activity, escalations, proposals, resources
from domain.review import desk as queues
from domain.review import policy as review_policy
from domain.review.activity import Activity
from domain.review.desk import ProposedChange
from domain.review.limits import ANSWER_MAX, NOTE_MAX
from domain.review.queue import DESK_STATUSES, PAGE_SIZE, DeskKind, DeskStatus, Filters, Page, ResourceType
from domain.topics import leaving
from domain.work import review as work_review
from web.hub.pages import activity as activity_pages
from web.hub.pages import blocks, views
from web.hub.pages.session import (
    CSRF_FIELD,
    FLASH_COOKIE,
    HOME,
    SESSION_COOKIE,
    SIGN_IN_COOKIE,
    SIGN_IN_FORM_SECONDS,
    Flash,
    clear_cookie,
    current,
    new_sign_in_token,
    safe_next,
    same_token,
    set_cookie,
    set_flash,
    take_flash,
    ttl,
)
from web.hub.review.schemas import EscalationItem
from web.hub.work.schemas import ReviewItem
from web.kernel.forms import posted
from web.kernel.html import Markup, page
from web.kernel.request import context, runtime

MAX_PAGE = 100_000
FORM = web.RequestKey("review_form", dict[str, str])
Role = str
PageHandler = Callable[[web.Request, SignedIn], Awaitable[web.StreamResponse]]


async def render(
    request: web.Request, title: str, body: Markup, signed_in: SignedIn | None, *, status: int = 200
) -> web.Response:
    """A desk page; the navigation counts what waits for the signed-in person's roles. A signed-in page
    shows the flash the browser carries (once: its cookie is cleared)."""
    counts, work_waiting = None, None
    flash = take_flash(request) if signed_in is not None else None
    if flash:
        body = Markup(blocks.messages(flash) + body)
    if signed_in is not None:
        roles = signed_in.member.roles
        async with runtime(request).db.read() as session:
            if "reviewer" in roles:
                counts = await queues.waiting(session)
            if "curator" in roles:
                found = await work_review.queue(session, status="deferred", limit=1, offset=0)
                work_waiting = found.total
    response = page(
        title,
        body,
        site=views.SITE,
        home="/review/",
        nav=views.nav(signed_in, counts, work_waiting),
        status=status,
        no_store=True,
    )
    if flash:
        clear_cookie(request, response, FLASH_COOKIE)
    return response


def see_other(request: web.Request, location: str, flash: str | Flash | None = None) -> web.Response:
    response = web.Response(status=303, headers={"Location": location, "Cache-Control": "no-store"})
    if flash:
        set_flash(request, response, flash)
    return response


async def sign_in_page(
    request: web.Request,
    *,
    status: int = 200,
    error: str | None = None,
    notice: Flash | str | None = None,
    next_path: str = HOME,
) -> web.Response:
    token = new_sign_in_token()
    body = views.sign_in(token, error=error, notice=notice, next_path=safe_next(next_path))
    response = await render(request, "Sign in", body, None, status=status)
    set_cookie(request, response, SIGN_IN_COOKIE, token, SIGN_IN_FORM_SECONDS)
    return response


async def refusal(
    request: web.Request, status: int, heading: str, text: str, signed_in: SignedIn | None
) -> web.Response:
    return await render(request, heading, views.message_page(heading, text), signed_in, status=status)


def _asked_for(request: web.Request) -> str:
    """The page to come back to after signing in: the page itself, or for a form's POST the item's page."""
    if request.method == "GET":
        return request.path_qs
    parts = request.path.rstrip("/").split("/")
    return "/".join(parts[:-1]) if len(parts) == 5 else HOME  # /review/<kind>/<id>/<action>


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
                response = await sign_in_page(
                    request,
                    status=401,
                    notice=None,
                    error=f"Sign in to continue{': ' + why if why else ''}.",
                    next_path=_asked_for(request),
                )
                if why:
                    clear_cookie(request, response, SESSION_COOKIE)
                return response
            if post:
                form = await read_form(request)
                if not same_token(form.get(CSRF_FIELD), signed_in.csrf_token):
                    return await refusal(
                        request,
                        403,
                        "Form refused",
                        "This form did not carry the review desk's form token (or an old one). "
                        "Open the page again and resend it from there.",
                        signed_in,
                    )
                request[FORM] = form
            if role is not None and role not in signed_in.member.roles:
                return await refusal(
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


class BadFilter(Exception):
    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


def _pick(query: Mapping[str, str], field: str, allowed: Sequence[str], default: str) -> str:
    value = query.get(field, "").strip() or default
    if value not in allowed:
        raise BadFilter(field, f"{field}: {value[:40]!r} is not one of {', '.join(allowed)}")
    return value


def _page_number(query: Mapping[str, str], field: str) -> int:
    raw = query.get(field, "").strip() or "1"
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        raise BadFilter(field, f"{field}: {raw[:40]!r} is not a page number (1 to {MAX_PAGE})")
    return int(raw)


def parse_filters(query: Mapping[str, str], default_status: DeskStatus) -> tuple[Filters, dict[str, int]]:
    """The desk's filters from the query string; a value outside its vocabulary is a BadFilter naming it."""
    priority = _pick(query, "priority", ["all", *EscalationPriority, "normal"], "all")
    filters = Filters(
        kind=DeskKind(_pick(query, "kind", list(DeskKind), DeskKind.ALL)),
        priority=None if priority == "all" else EscalationPriority.parse(priority),
        resource=ResourceType(_pick(query, "resource", list(ResourceType), ResourceType.ALL)),
        status=DeskStatus(_pick(query, "status", list(DESK_STATUSES), default_status)),
    )
    pages = {which: _page_number(query, param) for which, param in views.PAGE_PARAMS.items()}
    return filters, pages


async def _lists(
    request: web.Request, signed_in: SignedIn, action: str, default_status: DeskStatus
) -> web.Response:
    try:
        filters, pages = parse_filters(request.query, default_status)
    except BadFilter as exc:
        return await refusal(request, 400, "Filter refused", f"{exc.detail}.", signed_in)
    roles = signed_in.member.roles
    size = PAGE_SIZE

    def offset(which: str) -> int:
        return (pages[which] - 1) * size

    async with runtime(request).db.read() as session:
        found_escalations = (
            await queues.escalation_page(session, filters, offset=offset("escalations"))
            if "reviewer" in roles and queues.shows_escalations(filters)
            else None
        )
        found_proposals = (
            await queues.proposal_page(session, filters, offset=offset("proposals"))
            if "reviewer" in roles and queues.shows_proposals(filters)
            else None
        )
        found_work: Page[Mapping[str, Any]] | None = None
        decided_work: Page[queues.WorkRow] | None = None
        if "curator" in roles and queues.shows_work(filters):
            if filters.status is DeskStatus.OPEN:
                work = await work_review.queue(session, status="deferred", limit=size, offset=offset("work"))
                rows = tuple(ReviewItem.review_fields(r) for r in work.items)
                found_work = Page(rows, work.total, offset("work"), size)
            else:  # waiting work is on the queue; answered, decided and all read the curators' decisions
                decided_work = await queues.work_history(session, offset=offset("work"))
    body = views.queue(
        signed_in,
        action=action,
        filters=filters,
        escalations=found_escalations,
        proposals=found_proposals,
        work=found_work,
        decided_work=decided_work,
    )
    title = "History" if action.endswith("history") else "Review queue"
    return await render(request, title, body, signed_in)


async def desk(request: web.Request) -> web.StreamResponse:
    """GET /review/: the queue when signed in (filters and pages in the query), else the sign-in form."""
    signed_in, why = await current(request)
    if signed_in is not None:
        return await _lists(request, signed_in, HOME, DeskStatus.OPEN)
    flash = take_flash(request)
    response = await sign_in_page(
        request,
        error=f"{why[:1].upper()}{why[1:]}." if why else None,
        notice=flash,
        next_path=request.query.get("next", HOME),
    )
    if why:
        clear_cookie(request, response, SESSION_COOKIE)
    if flash:
        clear_cookie(request, response, FLASH_COOKIE)
    return response


@guarded(None, post=False)
async def history(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    """GET /review/history: what people answered and decided, latest first (status=answered by default)."""
    return await _lists(request, signed_in, "/review/history", DeskStatus.ANSWERED)


async def desk_no_slash(_request: web.Request) -> web.StreamResponse:
    raise web.HTTPMovedPermanently("/review/")


async def sign_in(request: web.Request) -> web.StreamResponse:
    """POST /review/sign-in {key, csrf}: a session, its cookie, and the queue."""
    form = await read_form(request)
    if not same_token(form.get(CSRF_FIELD), request.cookies.get(SIGN_IN_COOKIE)):
        return await sign_in_page(
            request,
            next_path=form.get("next", HOME),
            status=403,
            error="The sign-in form had expired or was not this desk's own: here is a fresh one, try again.",
        )
    try:
        async with runtime(request).db.transaction() as session:
            token, signed_in = await sessions.start(
                session, context(request), form.get("key"), ttl=ttl(request)
            )
    except Unauthorized as exc:
        return await sign_in_page(
            request,
            status=401,
            error=f"That key was not accepted: {exc.detail}.",
            next_path=form.get("next", HOME),
        )
    response = see_other(request, safe_next(form.get("next")), f"Signed in as {signed_in.member.actor.name}.")
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
    load: Callable[[Any, str], Awaitable[Any]],
) -> Any:
    """The item the path names, or a 404 page (a web.Response) when there is none."""
    try:
        async with runtime(request).db.read() as session:
            found = await load(session, request.match_info["id"])
    except NotFound as exc:
        return await refusal(request, 404, f"No such {what}", exc.detail, signed_in)
    if found is None:
        return await refusal(
            request, 404, f"No such {what}", f"{what} {request.match_info['id']!r} not found", signed_in
        )
    return found


def _refused(exc: DomainError) -> str:
    reasons = {
        409: "This was not recorded",
        404: "This was not recorded",
        400: "Please check the form",
    }
    return f"{reasons.get(exc.status, 'This was not recorded')}: {exc.detail}."


def _name(text: str, size: int = 80) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= size else text[: size - 1] + '…'}”"


@dataclass(frozen=True)
class EscalationView:
    """An escalation as its page shows it: its item, what the proposal it names changes, and, for an open
    escalation that names a section and no proposal, the proposals still open on that section."""

    item: dict[str, Any]
    change: ProposedChange | None
    open_on_section: list[ProposedChange]


async def escalation_item(session: Any, escalation_id: str) -> EscalationView:
    """An escalation with its context and, when it names a proposal, what that proposal changes; when it
    names only a section and still waits for an answer, what is proposed there (the reviewer judges it)."""
    found = await escalations.item(session, escalation_id)
    item = EscalationItem.fields(found)
    proposal = item["proposal"]
    change = await queues.proposed_change(session, proposal["proposalId"]) if proposal is not None else None
    if proposal is not None and item["sectionText"] is None and proposal["sectionId"]:
        infos = await resources.infos(session, {(item["resourceType"], item["resourceId"])})
        info = infos.get((item["resourceType"], item["resourceId"]))
        item["sectionText"] = resources.section_text(info.markdown if info else None, proposal["sectionId"])
    open_on_section = await queues.open_on_escalated_section(session, found)
    return EscalationView(item, change, open_on_section)


@guarded("reviewer", post=False)
async def escalation_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "escalation", escalation_item)
    if isinstance(found, web.Response):
        return found
    body = views.escalation(
        found.item, signed_in.csrf_token, change=found.change, open_on_section=found.open_on_section
    )
    return await render(request, "Escalation", body, signed_in)


@guarded("reviewer", post=True)
async def answer_escalation(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    form = form_of(request)
    text = form.get("answer", "").strip()
    decision = form.get("decision", "") or None
    error = None
    if not text:
        error = "Please check the form: write an answer."
    elif len(text) > ANSWER_MAX:
        error = f"Please check the form: the answer is longer than {ANSWER_MAX} characters."
    elif decision not in (None, "approve", "reject"):
        error = "Please check the form: the decision is approve, reject or none."
    if error is None:
        try:
            async with runtime(request).db.transaction() as session:
                done = await escalations.answer(
                    session,
                    staff_ctx(request, signed_in),
                    request.match_info["id"],
                    text=text,
                    decision=decision,
                )
        except DomainError as exc:
            return await _escalation_again(request, signed_in, exc.status, _refused(exc), form)
        flash = Flash(
            "Answer sent to ",
            f"/review/escalations/{done.item.escalation.id}",
            _name(done.item.escalation.message),
            f"; {views.DECIDED[decision]}." if decision else ".",
        )
        return see_other(request, HOME, flash)
    return await _escalation_again(request, signed_in, 400, error, form)


async def _escalation_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "escalation", escalation_item)
    if isinstance(found, web.Response):
        return found
    body = views.escalation(
        found.item,
        signed_in.csrf_token,
        change=found.change,
        open_on_section=found.open_on_section,
        error=error,
        form=form,
    )
    return await render(request, "Escalation", body, signed_in, status=status)


@guarded("reviewer", post=False)
async def proposal_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "proposal", queues.proposed_change)
    if isinstance(found, web.Response):
        return found
    body = views.proposal(found, signed_in.csrf_token)
    return await render(request, _proposal_title(found), body, signed_in)


def _chosen_with_note(
    form: Mapping[str, str], field: str, allowed: Sequence[str] | None, ask: str, *, note_field: str = "note"
) -> tuple[str, str, str | None]:
    """A decision form's choice (`field`, one of `allowed`; None: any, but something) and its note, and the
    error that refuses it."""
    chosen, note = form.get(field, ""), form.get(note_field, "").strip()
    if (chosen not in allowed) if allowed is not None else not chosen:
        return chosen, note, f"Please check the form: {ask}."
    if not note:
        return chosen, note, "Please check the form: write a note saying why."
    if len(note) > NOTE_MAX:
        return chosen, note, f"Please check the form: the note is longer than {NOTE_MAX} characters."
    return chosen, note, None


@guarded("reviewer", post=True)
async def decide_proposal(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    form = form_of(request)
    decision, note, error = _chosen_with_note(
        form, "decision", ("approve", "reject"), "choose approve or reject"
    )
    if error is None:
        try:
            async with runtime(request).db.transaction() as session:
                done = await proposals.decide(
                    session,
                    staff_ctx(request, signed_in),
                    request.match_info["id"],
                    decision=decision,
                    note=note,
                )
        except DomainError as exc:
            return await _proposal_again(request, signed_in, exc.status, _refused(exc), form)
        flash = Flash(
            "Proposal ",
            f"/review/proposals/{done.item.proposal.id}",
            _name(done.item.proposal.summary or done.item.proposal.section_id),
            f" {'approved' if decision == 'approve' else 'rejected'}.",
        )
        return see_other(request, HOME, flash)
    return await _proposal_again(request, signed_in, 400, error, form)


async def _proposal_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "proposal", queues.proposed_change)
    if isinstance(found, web.Response):
        return found
    body = views.proposal(found, signed_in.csrf_token, error=error, form=form)
    return await render(request, _proposal_title(found), body, signed_in, status=status)


def _proposal_title(change: ProposedChange) -> str:
    return f"{change.status.capitalize()} proposal"


@guarded("reviewer", post=False)
async def open_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    """GET /review/open: the topics and documents where proposals are open, for a person to step in."""
    try:
        resource = ResourceType(_pick(request.query, "resource", list(ResourceType), ResourceType.ALL))
        number = _page_number(request.query, "page")
    except BadFilter as exc:
        return await refusal(request, 400, "Filter refused", f"{exc.detail}.", signed_in)
    async with runtime(request).db.read() as session:
        found = await activity.where_open(session, resource, offset=(number - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    return await render(request, "Open proposals", activity_pages.where_open(found, resource), signed_in)


def _activity_loader(resource_type: ResourceType) -> Callable[[Any, str], Awaitable[Activity]]:
    async def load(session: Any, resource_id: str) -> Activity:
        return await activity.activity(session, resource_type, resource_id)

    return load


async def _show_resource(
    request: web.Request,
    signed_in: SignedIn,
    resource_type: ResourceType,
    *,
    status: int = 200,
    error: str | None = None,
    form: dict[str, str] | None = None,
) -> web.StreamResponse:
    found = await _load(request, signed_in, resource_type.value, _activity_loader(resource_type))
    if isinstance(found, web.Response):
        return found
    title = f"{resource_type.value.capitalize()} {_name(found.title or found.resource_id, 60)}"
    body = activity_pages.page(found, signed_in.csrf_token, error=error, form=form)
    return await render(request, title, body, signed_in, status=status)


def _resource_page(resource_type: ResourceType) -> PageHandler:
    """A topic's or a document's page: the summary a person reads before stepping in (PACT §9.3)."""

    async def show(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
        return await _show_resource(request, signed_in, resource_type)

    return show


@guarded("reviewer", post=True)
async def set_topic_policy(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    """POST /review/topics/{id}/approval-policy {approvalPolicy, note}: a person sets the topic's policy."""
    form = form_of(request)
    chosen, note, error = _chosen_with_note(
        form, "approvalPolicy", list(ApprovalPolicy), "choose one of the policies"
    )
    if error is None:
        try:
            async with runtime(request).db.transaction() as session:
                done = await review_policy.set_topic_policy(
                    session,
                    staff_ctx(request, signed_in),
                    request.match_info["id"],
                    policy=ApprovalPolicy(chosen),
                    note=note,
                )
        except DomainError as exc:
            return await _show_resource(
                request, signed_in, ResourceType.TOPIC, status=exc.status, error=_refused(exc), form=form
            )
        where = activity_pages.path(ResourceType.TOPIC, done.topic_id)
        said = (
            f" now follows {done.after.policy.value}."
            if done.changed
            else f" already follows {done.after.policy.value}: nothing changed."
        )
        return see_other(request, where, Flash("The topic ", where, _name(done.title), said))
    return await _show_resource(request, signed_in, ResourceType.TOPIC, status=400, error=error, form=form)


def _participant_action(action: str) -> PageHandler:
    """POST /review/topics/{id}/agents/remove|readmit {agentId, <action>-note}: a person removes an agent from
    the topic or readmits one a reviewer removed (PACT §9.2)."""
    act = leaving.remove if action == "remove" else leaving.readmit

    async def decide(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
        form = form_of(request)
        agent_id, note, error = _chosen_with_note(
            form, "agentId", None, "choose an agent", note_field=f"{action}-note"
        )
        if error is not None:
            return await _show_resource(
                request, signed_in, ResourceType.TOPIC, status=400, error=error, form=form
            )
        try:
            async with runtime(request).db.transaction() as session:
                done = await act(
                    session, staff_ctx(request, signed_in), request.match_info["id"], agent_id, note
                )
        except DomainError as exc:
            return await _show_resource(
                request, signed_in, ResourceType.TOPIC, status=exc.status, error=_refused(exc), form=form
            )
        where = activity_pages.path(ResourceType.TOPIC, done.topic_id)
        if action == "remove":
            said = "was removed from the topic." if done.changed else "was removed already: nothing changed."
        else:
            said = "may join the topic again." if done.changed else "was not removed: nothing changed."
        return see_other(request, where, Flash(f"The agent “{done.agent_name}” {said}"))

    return decide


async def _work_item(session: Any, submission_id: str) -> dict[str, Any]:
    """A submission as the work page shows it: the review API's item by wire name (its ReviewItem)."""
    return ReviewItem.review_fields(await work_review.item(session, submission_id))


@guarded("curator", post=False)
async def work_page(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
    found = await _load(request, signed_in, "submission", _work_item)
    if isinstance(found, web.Response):
        return found
    return await render(request, "Deferred observation", views.work(found, signed_in.csrf_token), signed_in)


def _work_decision(decision: str) -> PageHandler:
    async def decide(request: web.Request, signed_in: SignedIn) -> web.StreamResponse:
        form = form_of(request)
        field = f"{decision}-note"
        note = form.get(field, "").strip()
        error = None
        if decision == "reject" and not note:
            error = "Please check the form: say why the observation is refused."
        elif len(note) > NOTE_MAX:
            error = f"Please check the form: the note is longer than {NOTE_MAX} characters."
        if error is None:
            try:
                async with runtime(request).db.transaction() as session:
                    done = await work_review.decide(
                        session,
                        staff_ctx(request, signed_in),
                        request.match_info["id"],
                        decision=decision,
                        note=note,
                    )
            except DomainError as exc:
                return await _work_again(request, signed_in, exc.status, _refused(exc), form)
            observed = done.submission.submission
            product = observed.get("productName") if isinstance(observed, dict) else None
            flash = Flash(
                "Observation ",
                f"/review/work/{request.match_info['id']}",
                _name(str(product or request.match_info["id"])),
                " accepted: credits paid." if decision == "accept" else " rejected: a defect was recorded.",
            )
            return see_other(request, HOME, flash)
        return await _work_again(request, signed_in, 400, error, form)

    return decide


async def _work_again(
    request: web.Request, signed_in: SignedIn, status: int, error: str, form: dict[str, str]
) -> web.StreamResponse:
    found = await _load(request, signed_in, "submission", _work_item)
    if isinstance(found, web.Response):
        return found
    body = views.work(found, signed_in.csrf_token, error=error, form=form)
    return await render(request, "Deferred observation", body, signed_in, status=status)


def add_routes(app: web.Application) -> None:
    router = app.router
    router.add_get("/review", desk_no_slash)
    router.add_get("/review/", desk)
    router.add_get("/review/history", history)
    router.add_post("/review/sign-in", sign_in)
    router.add_post("/review/sign-out", sign_out)
    router.add_get("/review/escalations/{id}", escalation_page)
    router.add_post("/review/escalations/{id}/answer", answer_escalation)
    router.add_get("/review/proposals/{id}", proposal_page)
    router.add_post("/review/proposals/{id}/decide", decide_proposal)
    router.add_get("/review/work/{id}", work_page)
    router.add_get(activity_pages.OPEN_PATH, open_page)
    for resource_type in (ResourceType.TOPIC, ResourceType.DOCUMENT):
        router.add_get(
            activity_pages.path(resource_type, "{id}"),
            guarded("reviewer", post=False)(_resource_page(resource_type)),
        )
    router.add_post(activity_pages.path(ResourceType.TOPIC, "{id}") + "/approval-policy", set_topic_policy)
    for action in ("remove", "readmit"):
        router.add_post(
            activity_pages.path(ResourceType.TOPIC, "{id}") + f"/agents/{action}",
            guarded("reviewer", post=True)(_participant_action(action)),
        )
    router.add_post("/review/work/{id}/accept", guarded("curator", post=True)(_work_decision("accept")))
    router.add_post("/review/work/{id}/reject", guarded("curator", post=True)(_work_decision("reject")))
