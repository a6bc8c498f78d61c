"""One topic's or document's page on the review desk (PACT v2.0.3 §9.3, a summary instead of every event):
who is active, what is open and where proposals compete, what merged lately, what waits for a person, and
every open proposal linked to the page where a person decides it (§9.2)."""

from __future__ import annotations

from domain.review.activity import Activity, OpenProposal
from web.hub.pages import blocks
from web.kernel.diff_html import plural
from web.kernel.html import Markup, h, join, when


def path(resource_type: str, resource_id: str) -> str:
    """The desk's page of a topic or a document."""
    return f"/review/{resource_type}s/{resource_id}"


def _agents(names: tuple[str, ...]) -> Markup:
    if not names:
        return Markup("<li><strong>No agents</strong> active.</li>")
    return h(
        "<li><strong>{count}</strong> active: {names}.</li>",
        count=plural(len(names), "agent"),
        names=", ".join(names),
    )


def _open_line(a: Activity) -> Markup:
    objected = sum(1 for p in a.open_proposals if p.status == "objected")
    return h(
        "<li><strong>{count}</strong> open{objected}: each is yours to decide.</li>",
        count=plural(len(a.open_proposals), "proposal"),
        objected=f" ({objected} paused by an objection)" if objected else "",
    )


def _contests(a: Activity) -> Markup:
    if not a.contested:
        return Markup("<li>No section has competing proposals.</li>")
    items = join(
        h(
            "<li><code>{section}</code>: {count} from {authors}</li>",
            section=c.section_id,
            count=plural(c.proposals, "proposal"),
            authors=", ".join(c.authors),
        )
        for c in a.contested
    )
    return h(
        '<li><strong>{count}</strong> with competing proposals (only one can stand):<ul class="plain">{items}'
        "</ul></li>",
        count=plural(len(a.contested), "section"),
        items=items,
    )


def _row(p: OpenProposal) -> Markup:
    return h(
        '<tr><th scope="row"><a href="/review/proposals/{id}">{summary}</a></th>'
        "<td><code>{section}</code></td><td>{status}</td><td>{author}</td><td>{votes}</td><td>{at}</td></tr>",
        id=p.proposal_id,
        summary=blocks.clip(p.summary) or "(no summary)",
        section=p.section_id,
        status=p.status,
        author=p.author,
        votes=f"{plural(p.approvals, 'approval')}, {plural(p.rejections, 'rejection')}, "
        f"{plural(p.objections, 'objection')}",
        at=when(p.created_at.isoformat()),
    )


def page(a: Activity) -> Markup:
    last = (
        h("<li>A person last acted here {at}.</li>", at=when(a.last_person_at.isoformat()))
        if a.last_person_at
        else Markup("<li>No person has acted here yet.</li>")
    )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>{kind} “{title}”</h1>
{facts}
<section aria-labelledby="glance"><h2 id="glance">At a glance</h2>
<ul class="glance">
{agents}
{open}
{contests}
<li><strong>{merged}</strong> merged in the last hour.</li>
<li><strong>{waiting}</strong> waiting for a person.</li>
{last}
</ul></section>
<section aria-labelledby="open-proposals"><h2 id="open-proposals">Open proposals</h2>
{open_list}</section>""",
        kind=a.resource_type.capitalize(),
        title=a.title or a.resource_id,
        facts=blocks.facts([("Id", h("<code>{id}</code>", id=a.resource_id)), ("Version", a.version)]),
        agents=_agents(a.agents),
        open=_open_line(a),
        contests=_contests(a),
        merged=plural(a.merged_recently, "change"),
        waiting=plural(a.open_escalations, "escalation"),
        last=last,
        open_list=blocks.table(
            "Proposals not decided yet, oldest first: open one to read what it changes and decide it",
            ("summary", "section", "status", "proposed by", "votes so far", "proposed"),
            [_row(p) for p in a.open_proposals],
        )
        or Markup('<p class="muted">Nothing is open: every proposal here has been decided.</p>'),
    )
