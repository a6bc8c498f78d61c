"""The review desk's HTML: the sign-in form, the queue, one escalation, one objected proposal, one deferred
work submission, and the message pages. Every value goes through `h`/`esc` (web/kernel/html.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from domain.people.staff_sessions import SignedIn
from web.kernel.html import Markup, esc, h, join, when

SITE = "Concord review desk"

# What a reviewer's decision did to the proposal, in the flash after it and on the answered page.
DECIDED = {"approve": "the proposal was approved", "reject": "the proposal was rejected"}


def csrf_field(token: str) -> Markup:
    return h('<input type="hidden" name="csrf" value="{token}">', token=token)


def nav(signed_in: SignedIn | None) -> Markup:
    if signed_in is None:
        return Markup(
            '<nav aria-label="Review desk"><ul><li><a href="/docs">API reference</a></li></ul></nav>'
        )
    member = signed_in.member
    return h(
        """<nav aria-label="Review desk"><ul>
<li><a href="/review/">Queue</a></li>
<li class="muted">Signed in as <strong>{name}</strong> ({roles})</li>
<li><form method="post" action="/review/sign-out">{csrf}
<button type="submit" class="secondary">Sign out</button></form></li>
</ul></nav>""",
        name=member.actor.name,
        roles=", ".join(sorted(member.roles)),
        csrf=csrf_field(signed_in.csrf_token),
    )


def messages(flash: str | None = None, error: str | None = None) -> Markup:
    parts = []
    if flash:
        parts.append(h('<div class="flash" role="status"><p>{m}</p></div>', m=flash))
    if error:
        parts.append(h('<div class="error" role="alert"><p>{m}</p></div>', m=error))
    return join(parts)


def sign_in(token: str, *, error: str | None = None, notice: str | None = None) -> Markup:
    return h(
        """<h1>Sign in to the review desk</h1>
{messages}
<p>Reviewers answer escalations and decide objected document proposals; curators decide deferred work.
Sign in once with the staff key your operator gave you (<code>staff_sk_…</code>); the desk then keeps you
signed in for a working day, or until you sign out.</p>
<form method="post" action="/review/sign-in" class="decision" aria-labelledby="sign-in-heading">
<h2 id="sign-in-heading">Your staff key</h2>
<input type="hidden" name="csrf" value="{token}">
<div class="field">
<label for="key">Staff key</label>
<p class="hint" id="key-hint">Starts with staff_sk_. It is sent once and never stored in your browser.</p>
<input type="password" id="key" name="key" required autocomplete="off" spellcheck="false"
 aria-describedby="key-hint" autofocus>
</div>
<button type="submit">Sign in</button>
</form>""",
        messages=messages(notice, error),
        token=token,
    )


def message_page(heading: str, text: str, *, back: bool = True) -> Markup:
    return h(
        '<h1>{heading}</h1><div class="error" role="alert"><p>{text}</p></div>{back}',
        heading=heading,
        text=text,
        back=Markup('<p><a href="/review/">Back to the review desk</a></p>') if back else Markup(""),
    )


# --- the queue ------------------------------------------------------------------------------------------


def _count(shown: int, total: int, noun: str) -> Markup:
    """'No escalations waiting.', '1 escalation waiting.', '2 escalations waiting.'"""
    if total == 0:
        return h('<p class="muted">No {noun}s waiting.</p>', noun=noun)
    more = f" (the oldest {shown} shown)" if total > shown else ""
    plural = "" if total == 1 else "s"
    return h("<p>{total} {noun}{plural} waiting{more}.</p>", total=total, noun=noun, plural=plural, more=more)


def _table(caption: str, headers: Iterable[str], rows: list[Markup]) -> Markup:
    if not rows:
        return Markup("")
    return h(
        "<table><caption>{caption}</caption><thead><tr>{headers}</tr></thead><tbody>{rows}</tbody></table>",
        caption=caption,
        headers=join(h('<th scope="col">{c}</th>', c=c) for c in headers),
        rows=join(rows),
    )


def _clip(text: str | None, size: int = 140) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1] + "…"


def queue(
    signed_in: SignedIn,
    *,
    escalations: dict[str, Any] | None,
    proposals: dict[str, Any] | None,
    work: dict[str, Any] | None,
    flash: str | None,
) -> Markup:
    parts: list[Markup] = [Markup("<h1>Review queue</h1>"), messages(flash)]
    if escalations is not None:
        rows = [
            h(
                '<tr><th scope="row"><a href="/review/escalations/{id}">{question}</a></th>'
                "<td>{kind}</td><td>{source}: {title}</td>"
                "<td><code>{section}</code></td><td>{proposal}</td><td>{by}</td><td>{at}</td></tr>",
                id=e["escalationId"],
                question=_clip(e["question"]),
                kind=_kind(e),
                source=e["source"],
                title=e["resourceTitle"] or e["resourceId"],
                section=e["sectionId"] or "(whole)",
                proposal=f"{e['proposal']['status']}" if e["proposal"] else "none",
                by=e["raisedByName"] or e["raisedBy"],
                at=when(e["createdAt"]),
            )
            for e in escalations["escalations"]
        ]
        parts.append(
            h(
                '<section aria-labelledby="escalations">'
                '<h2 id="escalations">Open escalations and questions</h2>{count}{table}</section>',
                count=_count(len(rows), escalations["total"], "escalation"),
                table=_table(
                    "Questions agents escalated or asked, oldest first",
                    ("question", "kind", "from", "section", "proposal", "raised by", "raised"),
                    rows,
                ),
            )
        )
    if proposals is not None:
        rows = [
            h(
                '<tr><th scope="row"><a href="/review/proposals/{id}">{summary}</a></th><td>{doc}</td>'
                "<td><code>{section}</code></td><td>{author}</td><td>{objections}</td><td>{at}</td></tr>",
                id=p["proposalId"],
                summary=_clip(p["summary"]) or "(no summary)",
                doc=p["documentTitle"] or p["documentId"],
                section=p["sectionId"],
                author=p["authorName"] or p["authorId"],
                objections=len(p["objections"]),
                at=when(p["createdAt"]),
            )
            for p in proposals["proposals"]
        ]
        parts.append(
            h(
                '<section aria-labelledby="proposals"><h2 id="proposals">Objected document proposals</h2>'
                "{count}{table}</section>",
                count=_count(len(rows), proposals["total"], "objected proposal"),
                table=_table(
                    "Proposals paused by an objection, oldest first",
                    ("summary", "document", "section", "proposed by", "objections", "proposed"),
                    rows,
                ),
            )
        )
    if work is not None:
        rows = []
        for s in work["submissions"]:
            obs = s["submission"] if isinstance(s["submission"], dict) else {}
            deferring = [c["code"] for c in s["checks"] if c.get("result") == "defer"]
            rows.append(
                h(
                    '<tr><th scope="row"><a href="/review/work/{id}">{product}</a></th><td>{retailer}</td>'
                    "<td>{price}</td><td>{why}</td><td>{agent}</td><td>{at}</td></tr>",
                    id=s["submissionId"],
                    product=_clip(str(obs.get("productName") or s["submissionId"]), 80),
                    retailer=(s["retailer"] or {}).get("name") or obs.get("retailerSlug") or "",
                    price=_money(obs.get("priceCents")),
                    why=", ".join(deferring) or "see the checks",
                    agent=s["agentName"],
                    at=when(s["createdAt"]),
                )
            )
        parts.append(
            h(
                '<section aria-labelledby="work"><h2 id="work">Deferred work submissions</h2>{count}{table}'
                "</section>",
                count=_count(len(rows), work["total"], "deferred submission"),
                table=_table(
                    "Observations the validator passed to a curator, oldest first",
                    ("product", "retailer", "price", "deferred because", "agent", "submitted"),
                    rows,
                ),
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


def _kind(e: dict[str, Any]) -> Markup:
    """An escalation, or a question the agent waits on (with its deadline)."""
    if e["kind"] == "question":
        return h("question, answer by {at}", at=when(e["timeoutAt"]))
    return Markup("escalation")


def _money(cents: Any) -> str:
    if isinstance(cents, int) and not isinstance(cents, bool):
        return f"{cents / 100:,.2f}"
    return ""


def _text_block(label_id: str, heading: str, text: str | None, empty: str) -> Markup:
    body = h("<pre>{t}</pre>", t=text) if text else h('<p class="muted">{e}</p>', e=empty)
    return h('<div><h3 id="{id}">{heading}</h3>{body}</div>', id=label_id, heading=heading, body=body)


def _facts(pairs: Iterable[tuple[str, Any]]) -> Markup:
    return h(
        '<dl class="facts">{items}</dl>',
        items=join(h("<dt>{k}</dt><dd>{v}</dd>", k=k, v=v) for k, v in pairs if v not in (None, "")),
    )


def _textarea(name: str, label: str, value: str, *, required: bool, maxlength: int, hint: str) -> Markup:
    return h(
        """<div class="field"><label for="{name}">{label}</label>
<p class="hint" id="{name}-hint">{hint}</p>
<textarea id="{name}" name="{name}" maxlength="{maxlength}" aria-describedby="{name}-hint"{required}>
{value}</textarea>
</div>""",
        name=name,
        label=label,
        hint=hint,
        maxlength=maxlength,
        required=Markup(" required") if required else Markup(""),
        value=value,
    )


def _radios(name: str, legend: str, options: list[tuple[str, str]], chosen: str, *, required: bool) -> Markup:
    return h(
        "<fieldset><legend>{legend}</legend>{options}</fieldset>",
        legend=legend,
        options=join(
            h(
                '<input type="radio" id="{name}-{value}" name="{name}" value="{value}"{checked}{required}>'
                '<label for="{name}-{value}">{label}</label>',
                name=name,
                value=value,
                label=label,
                checked=Markup(" checked") if value == chosen else Markup(""),
                required=Markup(" required") if required else Markup(""),
            )
            for value, label in options
        ),
    )


def _section_of(e: dict[str, Any]) -> Markup:
    if e["sectionId"]:
        return h("<code>{s}</code>", s=e["sectionId"])
    if e["proposal"] is not None and e["proposal"]["sectionId"]:
        return h("<code>{s}</code> (the proposal's)", s=e["proposal"]["sectionId"])
    return Markup("the whole " + esc(e["source"]))


# --- one escalation -------------------------------------------------------------------------------------


def escalation(
    e: dict[str, Any], csrf: str, *, error: str | None = None, form: dict[str, str] | None = None
) -> Markup:
    form = form or {}
    p = e["proposal"]
    proposal_html = Markup("")
    if p is not None:
        proposal_html = h(
            """<section aria-labelledby="proposal"><h2 id="proposal">The proposal it names</h2>
{facts}
<div class="side-by-side">{current}{proposed}</div></section>""",
            facts=_facts(
                [
                    ("Status", p["status"]),
                    ("Summary", p["summary"]),
                    ("Proposed by", p["authorName"] or p["authorId"]),
                    (
                        "Votes",
                        f"{p['votes']['approve']} approve, {p['votes']['reject']} reject, "
                        f"{p['votes']['object']} object",
                    ),
                ]
            ),
            current=_text_block("current", "The section now", e["sectionText"], "No current text."),
            proposed=_text_block("proposed", "The proposed text", p["newContent"], "Empty."),
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
            decision = _radios(
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
            csrf=csrf_field(csrf),
            answer=_textarea(
                "answer",
                "Answer",
                form.get("answer", ""),
                required=True,
                maxlength=5000,
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
{context}{section}{proposal}{action}""",
        heading="Question from an agent on" if e["kind"] == "question" else "Escalation from",
        context=context_html,
        source=e["source"],
        messages=messages(error=error),
        question=e["question"],
        facts=_facts(
            [
                ("Status", e["status"]),
                (e["source"].capitalize(), e["resourceTitle"] or e["resourceId"]),
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


# --- one objected proposal ------------------------------------------------------------------------------


def proposal(
    p: dict[str, Any], csrf: str, *, error: str | None = None, form: dict[str, str] | None = None
) -> Markup:
    form = form or {}
    objections = join(
        h(
            '<li><strong>{who}</strong>: {reason} <span class="muted">({at})</span></li>',
            who=o["agentName"] or o["agentId"],
            reason=o["reason"] or "(no reason given)",
            at=when(o["createdAt"]),
        )
        for o in p["objections"]
    )
    if p["status"] == "objected":
        action = h(
            """<form method="post" action="/review/proposals/{id}/decide" class="decision"
 aria-labelledby="decide-heading">
<h2 id="decide-heading">Your decision</h2>
{csrf}{radios}{note}
<button type="submit">Record the decision</button>
</form>""",
            id=p["proposalId"],
            csrf=csrf_field(csrf),
            radios=_radios(
                "decision",
                "Decision",
                [("approve", "Approve (merge the proposed text)"), ("reject", "Reject")],
                form.get("decision", ""),
                required=True,
            ),
            note=_textarea(
                "note",
                "Note",
                form.get("note", ""),
                required=True,
                maxlength=2000,
                hint="Why: the agents read it.",
            ),
        )
    else:
        action = h(
            '<p class="notice">This proposal is {status}: there is nothing to decide.</p>', status=p["status"]
        )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>Objected proposal on {doc}</h1>
{messages}
{facts}
<section aria-labelledby="texts"><h2 id="texts">Section <code>{section}</code>: now and proposed</h2>
<div class="side-by-side">{current}{proposed}</div></section>
<section aria-labelledby="objections"><h2 id="objections">Objections</h2><ul>{objections}</ul></section>
{action}""",
        doc=p["documentTitle"] or p["documentId"],
        messages=messages(error=error),
        facts=_facts(
            [
                ("Status", p["status"]),
                ("Summary", p["summary"]),
                ("Proposed by", p["authorName"] or p["authorId"]),
                ("Proposed", when(p["createdAt"])),
                ("Document version", p["documentVersion"]),
                ("Based on version", p["baseVersion"]),
                (
                    "Votes",
                    f"{p['votes']['approve']} approve, {p['votes']['reject']} reject, "
                    f"{p['votes']['object']} object",
                ),
            ]
        ),
        section=p["sectionId"],
        current=_text_block("current", "The section now", p["currentText"], "No current text."),
        proposed=_text_block("proposed", "The proposed text", p["proposedText"], "Empty."),
        objections=objections or Markup("<li>None recorded.</li>"),
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
    checks = _table(
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
    observed = _table(
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
            csrf=csrf_field(csrf),
            accept_note=_textarea(
                "accept-note",
                "Note (optional)",
                form.get("accept-note", ""),
                required=False,
                maxlength=2000,
                hint="What you checked.",
            ),
            reject_note=_textarea(
                "reject-note",
                "Why it is refused",
                form.get("reject-note", ""),
                required=True,
                maxlength=2000,
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
        messages=messages(error=error),
        facts=_facts(
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
