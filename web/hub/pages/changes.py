"""The review desk's view of what a proposal changes (domain/review/desk.py's ProposedChange): the
line-by-line comparison with deleted and inserted lines and words marked `<del>`/`<ins>` and named in words
(so they read without colour), the section before and after rendered from Markdown, and the raw Markdown
behind a `<details>` toggle (no script). Also the proposal's facts: summary, author, citations, votes and
the objections' reasons."""

from __future__ import annotations

from domain.review.desk import ProposedChange, Vote
from domain.review.diff import rendered
from web.kernel.diff_html import diff_list, plural
from web.kernel.html import Markup, h, join, when


def _markdown_block(heading: str, text: str | None, empty: str, level: int) -> Markup:
    body = (
        Markup(f'<div class="md">{rendered(text)}</div>') if text else h('<p class="muted">{e}</p>', e=empty)
    )
    return h("<div><h{n}>{heading}</h{n}>{body}</div>", n=str(level), heading=heading, body=body)


def _raw_block(heading: str, text: str | None, level: int) -> Markup:
    return h("<div><h{n}>{heading}</h{n}><pre>{t}</pre></div>", n=str(level), heading=heading, t=text or "")


def votes_text(change: ProposedChange) -> str:
    return (
        f"{plural(change.approvals, 'approval')}, {plural(change.rejections, 'rejection')}, "
        f"{plural(change.objection_count, 'objection')}"
    )


def _vote(v: Vote) -> Markup:
    return h(
        '<li><strong>{who}</strong> {kind}{reason} <span class="muted">({at})</span></li>',
        who=v.agent,
        kind={"approve": "approved", "reject": "rejected", "object": "objected"}.get(v.kind, v.kind),
        reason=h(": {r}", r=v.reason) if v.reason else Markup(""),
        at=when(v.at.isoformat()),
    )


def section_name(change: ProposedChange) -> Markup:
    if change.section_title:
        return h("“{title}” <code>{id}</code>", title=change.section_title, id=change.section_id)
    return h("<code>{id}</code>", id=change.section_id)


def facts(change: ProposedChange) -> list[tuple[str, object]]:
    citations = (
        h('<ul class="plain">{items}</ul>', items=join(h("<li>{c}</li>", c=c) for c in change.citations))
        if change.citations
        else None
    )
    return [
        ("Status", change.status),
        ("Summary", change.summary),
        ("Proposed by", change.author),
        ("Proposed", when(change.created_at.isoformat())),
        ("Section", section_name(change)),
        ("Based on version", change.base_version),
        (f"{change.resource_type.capitalize()} version now", change.resource_version),
        ("Votes so far", votes_text(change)),
        ("Citations", citations),
    ]


def change_sections(change: ProposedChange, *, level: int = 2, key: str = "") -> Markup:
    """What it changes (the comparison, before and after rendered, raw Markdown), objections, votes; `key`
    tells the headings' ids apart where a page shows several proposals."""
    objections = change.objections
    others = tuple(v for v in change.votes if v.kind != "object")
    return h(
        """<section class="change" aria-labelledby="changes{key}">
<h{n} id="changes{key}">What it changes in {section}</h{n}>
{settled}{diff}
<div class="side-by-side">{before}{after}</div>
<details><summary>Show the raw Markdown</summary>
<div class="side-by-side">{raw_before}{raw_after}</div></details>
</section>
<section aria-labelledby="objections{key}"><h{n} id="objections{key}">Objections</h{n}><ul>{objections}</ul>
</section>
<section aria-labelledby="votes{key}"><h{n} id="votes{key}">Other votes</h{n}><ul>{votes}</ul></section>""",
        n=str(level),
        key=key,
        section=section_name(change),
        settled=Markup("")
        if change.status in ("pending", "objected")
        else h(
            '<p class="notice">This proposal is {status}: it is compared with the section as it reads now.'
            "</p>",
            status=change.status,
        ),
        diff=diff_list(change.diff),
        before=_markdown_block("The section now", change.before, "No current text.", level + 1),
        after=_markdown_block("Proposed", change.after, "Empty: the proposal clears the section.", level + 1),
        raw_before=_raw_block("Now, as Markdown", change.before, level + 2),
        raw_after=_raw_block("Proposed, as Markdown", change.after, level + 2),
        objections=join(_vote(v) for v in objections) or Markup("<li>None recorded.</li>"),
        votes=join(_vote(v) for v in others) or Markup("<li>None yet.</li>"),
    )
