"""The review desk's HTML: the sign-in form, the queue, one escalation, one proposal, one deferred
work submission, and the message pages. Every value goes through `h`/`esc` (web/kernel/html.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from domain.consensus.models import EscalationPriority
from domain.people.staff_sessions import SignedIn
from domain.review.desk import Counts, EscalationRow, ProposalRow, ProposedChange, WorkRow
from domain.review.limits import ANSWER_MAX, NOTE_MAX
from domain.review.queue import DESK_STATUSES, DeskKind, DeskStatus, Filters, Page, ResourceType
from web.hub.pages import activity as activity_pages
from web.hub.pages import blocks, changes
from web.hub.pages.session import Flash
from web.kernel.html import Markup, esc, h, join, when

SITE = "Concord review desk"

# What a reviewer's decision did to the proposal, in the flash after it and on the answered page.
DECIDED = {"approve": "the proposal was approved", "reject": "the proposal was rejected"}


def nav(signed_in: SignedIn | None, counts: Counts | None = None, work_waiting: int | None = None) -> Markup:
    if signed_in is None:
        return Markup(
            '<nav aria-label="Review desk"><ul><li><a href="/docs">API reference</a></li></ul></nav>'
        )
    member = signed_in.member
    waiting = (counts.escalations + counts.proposals if counts else 0) + (work_waiting or 0)
    label = (
        h(
            'Queue <span class="count">{n}</span><span class="sr"> waiting</span>',
            n=waiting,
        )
        if counts is not None or work_waiting is not None
        else Markup("Queue")
    )
    return h(
        """<nav aria-label="Review desk"><ul>
<li><a href="/review/">{queue}</a></li>
<li><a href="/review/history">History</a></li>
{open}<li class="muted">Signed in as <strong>{name}</strong> ({roles})</li>
<li><form method="post" action="/review/sign-out">{csrf}
<button type="submit" class="secondary">Sign out</button></form></li>
</ul></nav>""",
        queue=label,
        open=h('<li><a href="{href}">Open proposals</a></li>\n', href=activity_pages.OPEN_PATH)
        if "reviewer" in member.roles
        else Markup(""),
        name=member.actor.name,
        roles=", ".join(sorted(member.roles)),
        csrf=blocks.csrf_field(signed_in.csrf_token),
    )


def sign_in(
    token: str, *, error: str | None = None, notice: Flash | str | None = None, next_path: str = "/review/"
) -> Markup:
    return h(
        """<h1>Sign in to the review desk</h1>
{messages}
<p>Reviewers answer escalations and decide proposals; curators decide deferred work.
Sign in once with the staff key your operator gave you (<code>staff_sk_…</code>); the desk then keeps you
signed in for a working day, or until you sign out.</p>
<form method="post" action="/review/sign-in" class="decision" aria-labelledby="sign-in-heading">
<h2 id="sign-in-heading">Your staff key</h2>
<input type="hidden" name="csrf" value="{token}">
<input type="hidden" name="next" value="{next_path}">
<div class="field">
<label for="key">Staff key</label>
<p class="hint" id="key-hint">Starts with staff_sk_. It is sent once and never stored in your browser.</p>
<input type="password" id="key" name="key" required autocomplete="off" spellcheck="false"
 aria-describedby="key-hint" autofocus>
</div>
<button type="submit">Sign in</button>
</form>""",
        messages=blocks.messages(notice, error),
        token=token,
        next_path=next_path,
    )


def message_page(heading: str, text: str, *, back: bool = True) -> Markup:
    return h(
        '<h1>{heading}</h1><div class="error" role="alert"><p>{text}</p></div>{back}',
        heading=heading,
        text=text,
        back=Markup('<p><a href="/review/">Back to the review desk</a></p>') if back else Markup(""),
    )


# --- the queue and the history ----------------------------------------------------------------------------

PAGE_PARAMS = {"escalations": "page", "proposals": "proposals_page", "work": "work_page"}
_STATUS_LABEL = {
    DeskStatus.OPEN: "open (waiting)",
    DeskStatus.ANSWERED: "answered",
    DeskStatus.DECIDED: "decided",
    DeskStatus.ALL: "all",
}


def filter_query(filters: Filters, **extra: int) -> dict[str, str]:
    query = {
        "kind": filters.kind.value,
        "priority": filters.priority.value if filters.priority else "all",
        "resource": filters.resource.value,
        "status": filters.status.value,
    }
    query.update({k: str(v) for k, v in extra.items()})
    return query


def _select(name: str, label: str, options: Iterable[tuple[str, str]], chosen: str) -> Markup:
    return blocks.select(f"f-{name}", name, label, options, chosen)


def filters_form(action: str, filters: Filters) -> Markup:
    return h(
        '<form method="get" action="{action}" class="filters" role="search" aria-label="Filter the lists">'
        "{kind}{priority}{resource}{status}"
        '<div class="field"><button type="submit">Show</button></div></form>',
        action=action,
        kind=_select("kind", "Kind", [(k.value, k.value) for k in DeskKind], filters.kind.value),
        priority=_select(
            "priority",
            "Priority",
            [("all", "all"), *[(p.value, p.value) for p in EscalationPriority]],
            filters.priority.value if filters.priority else "all",
        ),
        resource=_select(
            "resource", "From", [(r.value, r.value) for r in ResourceType], filters.resource.value
        ),
        status=_select(
            "status", "Status", [(s.value, _STATUS_LABEL[s]) for s in DESK_STATUSES], filters.status.value
        ),
    )


def _pager(action: str, filters: Filters, page: Page[Any], which: str) -> Markup:
    if page.total <= page.limit and page.number == 1:
        return Markup("")
    param = PAGE_PARAMS[which]

    def link(number: int, text: str, rel: str) -> Markup:
        href = f"{action}?{urlencode(filter_query(filters, **{param: number}))}#{which}"
        return h('<a href="{href}" rel="{rel}">{text}</a>', href=href, rel=rel, text=text)

    parts = []
    if page.number > 1:
        parts.append(link(page.number - 1, "← Previous page", "prev"))
    parts.append(h('<span aria-current="page">Page {n} of {of}</span>', n=page.number, of=page.pages))
    if page.number < page.pages:
        parts.append(link(page.number + 1, "Next page →", "next"))
    return h(
        '<nav class="pager" aria-label="Pages of the {which} list">{parts}</nav>',
        which=which,
        parts=join(parts, " "),
    )


def _count(page: Page[Any], noun: str, waiting: bool) -> Markup:
    """'No escalations waiting.', '1 escalation waiting.', '30 escalations (26–30 shown).'"""
    what = "waiting" if waiting else "found"
    if page.total == 0:
        return h('<p class="muted">No {noun}s {what}.</p>', noun=noun, what=what)
    plural = "" if page.total == 1 else "s"
    shown = ""
    if page.total > len(page.items) or page.offset:
        last = page.offset + len(page.items)
        shown = f" ({page.offset + 1}–{last} shown)" if page.items else " (none on this page)"
    return h(
        "<p>{total} {noun}{plural} {what}{shown}.</p>",
        total=page.total,
        noun=noun,
        plural=plural,
        what=what,
        shown=shown,
    )


def priority_badge(priority: EscalationPriority) -> Markup:
    return h('<span class="priority priority-{p}">{p}</span>', p=priority.value)


def _decision_text(decision: str | None) -> str:
    return {"approve": "approved the proposal", "reject": "rejected the proposal"}.get(decision or "", "")


def _escalation_rows(rows: Iterable[EscalationRow], waiting: bool) -> list[Markup]:
    out = []
    for e in rows:
        link = h(
            '<a href="/review/escalations/{id}">{question}</a>',
            id=e.escalation_id,
            question=blocks.clip(e.question),
        )
        source = h("{source}: {title}", source=e.resource_type, title=e.resource_title or e.resource_id)
        if waiting:
            out.append(
                h(
                    '<tr><td>{priority}</td><th scope="row">{link}</th><td>{kind}</td><td>{source}</td>'
                    "<td><code>{section}</code></td><td>{proposal}</td><td>{by}</td><td>{at}</td></tr>",
                    priority=priority_badge(e.priority),
                    link=link,
                    kind=_row_kind(e),
                    source=source,
                    section=e.section_id or "(whole)",
                    proposal=e.proposal_status or "none",
                    by=e.raised_by,
                    at=when(e.created_at.isoformat()),
                )
            )
        else:
            out.append(
                h(
                    '<tr><th scope="row">{link}</th><td>{status}</td><td>{priority}</td><td>{source}</td>'
                    "<td>{answer}</td><td>{decision}</td><td>{by}</td><td>{at}</td></tr>",
                    link=link,
                    status=e.status.value,
                    priority=priority_badge(e.priority),
                    source=source,
                    answer=blocks.clip(e.answer, 100),
                    decision=_decision_text(e.decision) or ("—" if e.answer is not None else ""),
                    by=e.answered_by,
                    at=when(e.answered_at.isoformat() if e.answered_at else None),
                )
            )
    return out


def _row_kind(e: EscalationRow) -> Markup:
    if e.kind == "question" and e.timeout_at is not None:
        return h("question, answer by {at}", at=when(e.timeout_at.isoformat()))
    return esc(e.kind)


def _proposal_rows(rows: Iterable[ProposalRow], waiting: bool) -> list[Markup]:
    out = []
    for p in rows:
        link = h(
            '<a href="/review/proposals/{id}">{summary}</a>',
            id=p.proposal_id,
            summary=blocks.clip(p.summary) or "(no summary)",
        )
        if waiting:
            out.append(
                h(
                    '<tr><th scope="row">{link}</th><td>{doc}</td><td><code>{section}</code></td>'
                    "<td>{author}</td><td>{objections}</td><td>{at}</td></tr>",
                    link=link,
                    doc=p.resource_title or p.resource_id,
                    section=p.section_id,
                    author=p.author,
                    objections=p.objections,
                    at=when(p.created_at.isoformat()),
                )
            )
        else:
            decision = {"approve": "approved", "reject": "rejected"}.get(p.decision or "", p.decision or "")
            out.append(
                h(
                    '<tr><th scope="row">{link}</th><td>{doc}</td><td>{decision}</td><td>{note}</td>'
                    "<td>{by}</td><td>{at}</td></tr>",
                    link=link,
                    doc=h("{kind}: {title}", kind=p.resource_type, title=p.resource_title or p.resource_id),
                    decision=decision or f"waiting ({p.status})",
                    note=blocks.clip(p.note, 100),
                    by=p.decided_by,
                    at=when(p.decided_at.isoformat() if p.decided_at else None),
                )
            )
    return out


def _work_rows(submissions: Iterable[Mapping[str, Any]]) -> list[Markup]:
    rows = []
    for s in submissions:
        obs = s["submission"] if isinstance(s["submission"], dict) else {}
        deferring = [c["code"] for c in s["checks"] if c.get("result") == "defer"]
        rows.append(
            h(
                '<tr><th scope="row"><a href="/review/work/{id}">{product}</a></th><td>{retailer}</td>'
                "<td>{price}</td><td>{why}</td><td>{agent}</td><td>{at}</td></tr>",
                id=s["submissionId"],
                product=blocks.clip(str(obs.get("productName") or s["submissionId"]), 80),
                retailer=(s["retailer"] or {}).get("name") or obs.get("retailerSlug") or "",
                price=_money(obs.get("priceCents")),
                why=", ".join(deferring) or "see the checks",
                agent=s["agentName"],
                at=when(s["createdAt"]),
            )
        )
    return rows


def queue(
    signed_in: SignedIn,
    *,
    action: str,
    filters: Filters,
    escalations: Page[EscalationRow] | None,
    proposals: Page[ProposalRow] | None,
    work: Page[Mapping[str, Any]] | None,
    decided_work: Page[WorkRow] | None = None,
) -> Markup:
    """The queue (`action` /review/) or the history (/review/history): filters, then one list per kind."""
    history = action.endswith("history")
    waiting = filters.status is DeskStatus.OPEN
    heading = "History: what people answered and decided" if history else "Review queue"
    parts: list[Markup] = [h("<h1>{h}</h1>", h=heading), filters_form(action, filters)]
    if filters.priority is not None and filters.kind is DeskKind.ALL:
        parts.append(
            Markup(
                '<p class="muted">Only escalations and questions have a priority: other lists are hidden.</p>'
            )
        )
    if escalations is not None:
        title = "Open escalations and questions" if waiting else "Escalations and questions"
        caption = (
            "Questions agents escalated or asked, most urgent first, then oldest first"
            if waiting
            else "Escalations and questions, latest answer first"
        )
        headers = (
            ("priority", "question", "kind", "from", "section", "proposal", "raised by", "raised")
            if waiting
            else ("question", "status", "priority", "from", "answer", "decision", "by", "when")
        )
        parts.append(
            h(
                '<section aria-labelledby="escalations"><h2 id="escalations">{title}</h2>'
                "{count}{table}{pager}</section>",
                title=title,
                count=_count(escalations, "escalation", waiting),
                table=blocks.table(caption, headers, _escalation_rows(escalations.items, waiting)),
                pager=_pager(action, filters, escalations, "escalations"),
            )
        )
    if proposals is not None:
        proposal_headers = (
            ("summary", "document", "section", "proposed by", "objections", "proposed")
            if waiting
            else ("summary", "on", "decision", "note", "by", "when")
        )
        parts.append(
            h(
                '<section aria-labelledby="proposals"><h2 id="proposals">{title}</h2>{count}{table}{pager}'
                "</section>",
                title="Objected document proposals" if waiting else "Proposals people decided",
                count=_count(proposals, "objected proposal" if waiting else "proposal", waiting),
                table=blocks.table(
                    "Proposals paused by an objection, oldest first"
                    if waiting
                    else "Proposals, latest decision first",
                    proposal_headers,
                    _proposal_rows(proposals.items, waiting),
                ),
                pager=_pager(action, filters, proposals, "proposals"),
            )
        )
    if work is not None:
        parts.append(
            h(
                '<section aria-labelledby="work"><h2 id="work">Deferred work submissions</h2>{count}{table}'
                "{pager}</section>",
                count=_count(work, "deferred submission", True),
                table=blocks.table(
                    "Observations the validator passed to a curator, oldest first",
                    ("product", "retailer", "price", "deferred because", "agent", "submitted"),
                    _work_rows(work.items),
                ),
                pager=_pager(action, filters, work, "work"),
            )
        )
    if decided_work is not None:
        rows = [
            h(
                '<tr><th scope="row"><a href="/review/work/{id}">{product}</a></th><td>{agent}</td>'
                "<td>{status}</td><td>{note}</td><td>{by}</td><td>{at}</td></tr>",
                id=w.submission_id,
                product=blocks.clip(w.product, 80),
                agent=w.agent,
                status=w.status,
                note=blocks.clip(w.note, 100),
                by=w.decided_by,
                at=when(w.decided_at.isoformat() if w.decided_at else None),
            )
            for w in decided_work.items
        ]
        parts.append(
            h(
                '<section aria-labelledby="work"><h2 id="work">Work submissions curators decided</h2>{count}'
                "{table}{pager}</section>",
                count=_count(decided_work, "submission", False),
                table=blocks.table(
                    "Observations, latest decision first",
                    ("product", "agent", "decision", "note", "by", "when"),
                    rows,
                ),
                pager=_pager(action, filters, decided_work, "work"),
            )
        )
    return join(parts)


def _deadline(e: dict[str, Any]) -> Markup | None:
    """A question's deadline: the agent stops waiting then (escalations have none)."""
    if not e["timeoutAt"]:
        return None
    if e["status"] == "timed-out":
        return h("{at} (timed out: nobody answered in time)", at=when(e["timeoutAt"]))
    return h("{at} (the agent waits for the answer until then)", at=when(e["timeoutAt"]))


def _money(cents: Any) -> str:
    if isinstance(cents, int) and not isinstance(cents, bool):
        return f"{cents / 100:,.2f}"
    return ""


def _section_of(e: dict[str, Any]) -> Markup:
    if e["sectionId"]:
        return h("<code>{s}</code>", s=e["sectionId"])
    if e["proposal"] is not None and e["proposal"]["sectionId"]:
        return h("<code>{s}</code> (the proposal's)", s=e["proposal"]["sectionId"])
    return Markup("the whole " + esc(e["source"]))


# --- one escalation -------------------------------------------------------------------------------------


def escalation(
    e: dict[str, Any],
    csrf: str,
    *,
    change: ProposedChange | None = None,
    open_on_section: Sequence[ProposedChange] = (),
    error: str | None = None,
    form: dict[str, str] | None = None,
) -> Markup:
    form = form or {}
    p = e["proposal"]
    proposal_html = Markup("")
    if change is not None:
        proposal_html = h(
            """<section aria-labelledby="proposal"><h2 id="proposal">The proposal it names</h2>
{facts}</section>
{changes}""",
            facts=blocks.facts(changes.facts(change)),
            changes=changes.change_sections(change),
        )
    if e["answer"] is not None:
        decided = e["answer"]["decision"]
        action = h(
            '<section aria-labelledby="answered"><h2 id="answered">{heading}</h2><pre>{text}</pre>'
            "<p>by {by}, {at}</p>{decision}</section>",
            heading="Closed" if e["status"] == "closed" else "Answered",
            text=e["answer"]["text"],
            by=e["answer"]["answeredBy"],
            at=when(e["answer"]["answeredAt"]),
            decision=h("<p>{d}.</p>", d=DECIDED[decided].capitalize()) if decided else Markup(""),
        )
    elif e["status"] == "timed-out":
        action = h(
            '<section aria-labelledby="timed-out"><h2 id="timed-out">Timed out</h2>'
            "<p>Nobody answered by {at}: the agent no longer waits for an answer.</p></section>",
            at=when(e["timeoutAt"]),
        )
    else:
        decision = Markup("")
        if p is not None and p["status"] in ("pending", "objected"):
            decision = blocks.radios(
                "decision",
                "Decide the proposal too?",
                [("", "No decision"), ("approve", "Approve (merge) it"), ("reject", "Reject it")],
                form.get("decision", ""),
                required=False,
            )
        action = h(
            """<form method="post" action="/review/escalations/{id}/answer" class="decision"
 aria-labelledby="answer-heading">
<h2 id="answer-heading">Your answer</h2>
{csrf}{answer}{decision}
<button type="submit">Send the answer</button>
</form>""",
            id=e["escalationId"],
            csrf=blocks.csrf_field(csrf),
            answer=blocks.textarea(
                "answer",
                "Answer",
                form.get("answer", ""),
                required=True,
                maxlength=ANSWER_MAX,
                hint="The agent that asked reads it, and the agents read it on the resource's event stream. "
                "One answer per question."
                if e["kind"] == "question"
                else "The agents read it on the resource's event stream. One answer per escalation.",
            ),
            decision=decision,
        )
    context_html = (
        Markup("")
        if not e["context"]
        else h(
            '<section aria-labelledby="context"><h2 id="context">Context the agent gave</h2>'
            "<pre>{text}</pre></section>",
            text=e["context"],
        )
    )
    section_html = (
        Markup("")
        if p is not None
        else h(
            '<section aria-labelledby="section-now"><h2 id="section-now">The section as it reads now</h2>'
            "{block}</section>",
            block=h("<pre>{t}</pre>", t=e["sectionText"])
            if e["sectionText"]
            else Markup('<p class="muted">No section text (the question is about the whole resource).</p>'),
        )
    )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>{heading} a {source}</h1>
{messages}
<section aria-labelledby="question"><h2 id="question">The question</h2><pre>{question}</pre>
{facts}</section>
{context}{section}{open_on_section}{proposal}{action}""",
        heading="Question from an agent on" if e["kind"] == "question" else "Escalation from",
        open_on_section=_open_on_section(open_on_section),
        context=context_html,
        source=e["source"],
        messages=blocks.messages(error=error),
        question=e["question"],
        facts=blocks.facts(
            [
                ("Status", e["status"]),
                (e["source"].capitalize(), _resource_link(e["source"], e["resourceId"], e["resourceTitle"])),
                ("Version", e["resourceVersion"]),
                ("Section", _section_of(e)),
                ("Priority", e["priority"]),
                ("Raised by", e["raisedByName"] or e["raisedBy"]),
                ("Raised", when(e["createdAt"])),
                ("Answer by", _deadline(e)),
            ]
        ),
        section=section_html,
        proposal=proposal_html,
        action=action,
    )


def _open_on_section(proposals: Sequence[ProposedChange]) -> Markup:
    """The proposals still open on the section an escalation names (it names no proposal): what the agents
    want that section to say, with their votes and objections, so the answer can judge it."""
    if not proposals:
        return Markup("")
    items = []
    for i, change in enumerate(proposals, start=1):
        decide = h(
            '<p><a href="/review/proposals/{id}">Decide this {status} proposal</a></p>',
            id=change.proposal_id,
            status=change.status,
        )
        items.append(
            h(
                """<article class="open-proposal" aria-labelledby="open-{i}">
<h3 id="open-{i}">{summary} <span class="muted">by {author}</span></h3>
{facts}{decide}{changes}</article>""",
                i=str(i),
                summary=change.summary,
                author=change.author,
                facts=blocks.facts(
                    [
                        ("Status", change.status),
                        ("Proposed", when(change.created_at.isoformat())),
                        ("Votes so far", changes.votes_text(change)),
                    ]
                ),
                decide=decide,
                changes=changes.change_sections(change, level=4, key=f"-{i}"),
            )
        )
    return h(
        """<section aria-labelledby="open-on-section">
<h2 id="open-on-section">Proposed on this section, not decided yet</h2>
<p>{count} open on this section. The agents read your answer as a judgement of what is proposed here:
say what you favour, and why.</p>
{items}</section>""",
        count="One proposal is" if len(proposals) == 1 else f"{len(proposals)} proposals are",
        items=join(items),
    )


def _resource_link(resource_type: str, resource_id: str, title: str | None) -> Markup:
    """A topic's or a document's name, linked to its page on the desk (what is open there, who is active)."""
    return h(
        '<a href="{href}">{t}</a>',
        href=activity_pages.path(resource_type, resource_id),
        t=title or resource_id,
    )


# --- one proposal ---------------------------------------------------------------------------------------

# What a reviewer is told above the decision form, by the proposal's status.
_DECIDING = {
    "objected": "An objection paused this proposal: it waits for a person's decision.",
    "pending": "The agents are still voting on this proposal. A person may decide it now (PACT §9.2): your "
    "decision overrides their votes, and they read it with your note on the {kind}'s event stream.",
}


def proposal(
    p: ProposedChange, csrf: str, *, error: str | None = None, form: dict[str, str] | None = None
) -> Markup:
    form = form or {}
    if p.status in _DECIDING:
        action = h(
            """<form method="post" action="/review/proposals/{id}/decide" class="decision"
 aria-labelledby="decide-heading">
<h2 id="decide-heading">Your decision</h2>
<p>{why}</p>
{csrf}{radios}{note}
<button type="submit">Record the decision</button>
</form>""",
            id=p.proposal_id,
            why=_DECIDING[p.status].format(kind=p.resource_type),
            csrf=blocks.csrf_field(csrf),
            radios=blocks.radios(
                "decision",
                "Decision",
                [("approve", "Approve (merge the proposed text)"), ("reject", "Reject")],
                form.get("decision", ""),
                required=True,
            ),
            note=blocks.textarea(
                "note",
                "Note",
                form.get("note", ""),
                required=True,
                maxlength=NOTE_MAX,
                hint="Why: the agents read it.",
            ),
        )
    else:
        action = h(
            '<p class="notice">This proposal is {status}: there is nothing to decide.</p>', status=p.status
        )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>{status} proposal on the {kind} “{title}”</h1>
{messages}
{facts}
{changes}
{action}""",
        status=p.status.capitalize(),
        kind=p.resource_type,
        title=_resource_link(p.resource_type, p.resource_id, p.resource_title),
        messages=blocks.messages(error=error),
        facts=blocks.facts(changes.facts(p)),
        changes=changes.change_sections(p),
        action=action,
    )


# --- one deferred work submission ------------------------------------------------------------------------


def _product_link(url: Any) -> Markup:
    if not isinstance(url, str) or not url:
        return Markup("")
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        return esc(url)
    return h('<a href="{url}" rel="noopener noreferrer nofollow">{url}</a>', url=url)


CURRENCY = "AUD"  # the market's prices are Australian dollars (domain/market/extract.py keeps AUD offers)
# The observation's fields as a person reads them, in the order a person reads them.
OBSERVED = {
    "productName": "Product",
    "productUrl": "Product page",
    "priceCents": "Price",
    "unitPriceCents": "Unit price",
    "unitPriceUnit": "Unit",
    "inStock": "In stock",
    "itemKey": "Item",
    "retailerSlug": "Retailer",
    "gtin": "GTIN",
    "observedAt": "Observed",
}


def _price(cents: Any, unit: Any = None) -> str:
    """`AUD 60.00`, `AUD 15.00 per L`; nothing for a missing or malformed amount."""
    if not isinstance(cents, int) or isinstance(cents, bool):
        return ""
    per = f" per {unit}" if isinstance(unit, str) and unit else ""
    return f"{CURRENCY} {cents / 100:,.2f}{per}"


def _observed_value(key: str, value: Any, obs: dict[str, Any]) -> Any:
    if key == "productUrl":
        return _product_link(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key == "priceCents":
        return _price(value)
    if key == "unitPriceCents":
        return _price(value, obs.get("unitPriceUnit"))
    if key.endswith("At") and isinstance(value, str):
        return when(value)
    if value is None:
        return Markup('<span class="muted">none</span>')
    return value


def work(
    s: dict[str, Any], csrf: str, *, error: str | None = None, form: dict[str, str] | None = None
) -> Markup:
    form = form or {}
    obs = s["submission"] if isinstance(s["submission"], dict) else {}
    retailer = s["retailer"] or {}
    checks = blocks.table(
        "The validator's checks",
        ("check", "result", "code", "detail"),
        [
            h(
                '<tr><th scope="row">{check}</th><td>{result}</td><td><code>{code}</code></td>'
                "<td>{detail}</td></tr>",
                check=c.get("check", ""),
                result=c.get("result", ""),
                code=c.get("code", ""),
                detail=c.get("detail", ""),
            )
            for c in s["checks"]
        ],
    )
    observed = blocks.table(
        "The observation as submitted",
        ("field", "value"),
        [
            h(
                '<tr><th scope="row">{label} <code class="muted">{k}</code></th><td>{v}</td></tr>',
                label=OBSERVED.get(k, ""),
                k=k,
                v=_observed_value(k, v, obs),
            )
            for k, v in sorted(
                obs.items(), key=lambda kv: list(OBSERVED).index(kv[0]) if kv[0] in OBSERVED else 99
            )
        ],
    )
    if s["status"] == "deferred":
        action = h(
            """<div class="side-by-side">
<form method="post" action="/review/work/{id}/accept" class="decision" aria-labelledby="accept-heading">
<h2 id="accept-heading">Accept</h2>
<p>The held credits are paid and the observation becomes market data.</p>
{csrf}{accept_note}
<button type="submit">Accept the observation</button>
</form>
<form method="post" action="/review/work/{id}/reject" class="decision" aria-labelledby="reject-heading">
<h2 id="reject-heading">Reject</h2>
<p>A defect is recorded; no credits move.</p>
{csrf}{reject_note}
<button type="submit" class="danger">Reject the observation</button>
</form>
</div>""",
            id=s["submissionId"],
            csrf=blocks.csrf_field(csrf),
            accept_note=blocks.textarea(
                "accept-note",
                "Note (optional)",
                form.get("accept-note", ""),
                required=False,
                maxlength=NOTE_MAX,
                hint="What you checked.",
            ),
            reject_note=blocks.textarea(
                "reject-note",
                "Why it is refused",
                form.get("reject-note", ""),
                required=True,
                maxlength=NOTE_MAX,
                hint="The agent reads it with the defect.",
            ),
        )
    else:
        action = h(
            '<p class="notice">This submission is {status}{by}: there is nothing to decide.</p>',
            status=s["status"],
            by=f" (by {s['decidedBy']})" if s.get("decidedBy") else "",
        )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>Deferred observation: {product}</h1>
{messages}
{facts}
<section aria-labelledby="notes"><h2 id="notes">The validator's notes</h2>{notes}{checks}</section>
<section aria-labelledby="observation"><h2 id="observation">The observation</h2>{observed}</section>
{action}""",
        product=obs.get("productName") or s["submissionId"],
        messages=blocks.messages(error=error),
        facts=blocks.facts(
            [
                ("Status", s["status"]),
                ("Product page", _product_link(obs.get("productUrl"))),
                (
                    "Retailer",
                    f"{retailer.get('name')} ({retailer.get('domain')})"
                    if retailer
                    else obs.get("retailerSlug"),
                ),
                ("Item", h("<code>{k}</code>", k=s["itemKey"]) if s.get("itemKey") else None),
                ("Price", _price(obs.get("priceCents"))),
                ("Unit price", _price(obs.get("unitPriceCents"), obs.get("unitPriceUnit"))),
                (
                    "In stock",
                    _observed_value("inStock", obs.get("inStock"), obs) if "inStock" in obs else None,
                ),
                ("Agent", s["agentName"]),
                ("Credits held", s["creditsHeld"]),
                ("Submitted", when(s["createdAt"])),
            ]
        ),
        notes=h("<pre>{n}</pre>", n=s["notes"]) if s["notes"] else Markup('<p class="muted">No notes.</p>'),
        checks=checks,
        observed=observed,
        action=action,
    )
