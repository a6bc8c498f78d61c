"""One topic's or document's page on the review desk (PACT v2.0.3 §9.3, a summary instead of every event):
who is active, what is open and where proposals compete, what merged lately, what waits for a person, and
every open proposal linked to the page where a person decides it (§9.2)."""

from __future__ import annotations

from urllib.parse import urlencode

from domain.consensus.policies import ApprovalPolicy
from domain.review.activity import Activity, OpenProposal, OpenResource
from domain.review.limits import NOTE_MAX
from domain.review.queue import Page, ResourceType
from domain.topics.leaving import RemovedAgent
from web.hub.pages import blocks
from web.kernel.diff_html import plural
from web.kernel.html import Markup, h, join, when


def path(resource_type: str, resource_id: str) -> str:
    """The desk's page of a topic or a document."""
    return f"/review/{resource_type}s/{resource_id}"


NAMES_SHOWN = 20  # agents named in the summary; the count covers them all


def _agents(names: tuple[str, ...]) -> Markup:
    if not names:
        return Markup("<li><strong>No agents</strong> active.</li>")
    more = len(names) - NAMES_SHOWN
    return h(
        "<li><strong>{count}</strong> active: {names}{more}.</li>",
        count=plural(len(names), "agent"),
        names=", ".join(names[:NAMES_SHOWN]),
        more=f" and {more} more" if more > 0 else "",
    )


def _open_line(a: Activity) -> Markup:
    if not a.open_total:
        return Markup("<li><strong>No proposal</strong> open: nothing is left to decide.</li>")
    return h(
        "<li><strong>{count}</strong> open{objected}: each is yours to decide.</li>",
        count=plural(a.open_total, "proposal"),
        objected=f" ({a.objected_total} paused by an objection)" if a.objected_total else "",
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


def _shown(a: Activity) -> str:
    listed = len(a.open_proposals)
    return f" (the {listed} oldest of {a.open_total})" if a.open_total > listed else ""


# The policies as a person chooses among them (PACT §5; web/kernel/wire.py APPROVAL_POLICY_TEXT for agents).
POLICY_LABELS = {
    ApprovalPolicy.CONCORD_DEFAULT: "concord-default: two approvals merge, two rejections refuse",
    ApprovalPolicy.OBJECTION_BASED: "objection-based: merges when its time runs out, unless an agent objects",
    ApprovalPolicy.SINGLE: "single: one approval merges",
    ApprovalPolicy.MAJORITY: "majority: most of the agents who may vote approve",
    ApprovalPolicy.UNANIMOUS: "unanimous: every agent who may vote approves",
    ApprovalPolicy.HUMAN_ONLY: "human-only: every proposal waits for a person's decision",
    ApprovalPolicy.AUTO: "auto: a proposal merges as it is made",
}


def _policy_form(a: Activity, csrf: str, form: dict[str, str]) -> Markup:
    """A topic's approval policy, and the form a person sets it with (PACT §9.2)."""
    chosen = form.get("approvalPolicy") or a.approval.policy.value
    return h(
        """<form method="post" action="{action}" class="decision" aria-labelledby="policy-heading">
<h2 id="policy-heading">Approval policy</h2>
<p>Its proposals follow <strong>{now}</strong>. Switch it to <em>human-only</em> to take the topic into
people's hands: every pending proposal is put before the reviewers, and the agents' votes are refused until
it is switched back.</p>
{csrf}<div class="field"><label for="approvalPolicy">Policy</label>
<select id="approvalPolicy" name="approvalPolicy" required>{options}</select></div>
{note}
<button type="submit">Set the policy</button>
</form>""",
        action=path(a.resource_type, a.resource_id) + "/approval-policy",
        now=a.approval.policy.value,
        csrf=blocks.csrf_field(csrf),
        options=join(
            h(
                '<option value="{v}"{selected}>{label}</option>',
                v=p.value,
                label=label,
                selected=Markup(" selected") if p.value == chosen else Markup(""),
            )
            for p, label in POLICY_LABELS.items()
        ),
        note=blocks.textarea(
            "note",
            "Note",
            form.get("note", ""),
            required=True,
            maxlength=NOTE_MAX,
            hint="Why: the audit trail keeps it.",
        ),
    )


def _removed_row(r: RemovedAgent) -> Markup:
    return h(
        '<tr><th scope="row">{name}</th><td>{by}</td><td>{at}</td><td>{why}</td></tr>',
        name=r.agent_name,
        by=r.removed_by or "",
        at=when(r.removed_at.isoformat()),
        why=r.note or "",
    )


def _agent_form(
    a: Activity,
    action: str,
    heading: str,
    explain: str,
    agents: list[tuple[str, str]],
    form: dict[str, str],
    *,
    csrf: str,
    hint: str,
    button: Markup,
) -> Markup:
    """A form acting on one of a topic's agents: which one (the list it may act on) and why."""
    return h(
        """<form method="post" action="{action}" class="decision" aria-labelledby="{action_id}-heading">
<h3 id="{action_id}-heading">{heading}</h3>
<p>{explain}</p>
{csrf}{agent}{note}
{button}
</form>""",
        action=path(a.resource_type, a.resource_id) + f"/agents/{action}",
        action_id=action,
        heading=heading,
        explain=explain,
        csrf=blocks.csrf_field(csrf),
        agent=blocks.select(
            f"{action}-agent",
            "agentId",
            "Agent",
            agents,
            form.get("agentId", ""),
            required=True,
            placeholder="Choose an agent",
        ),
        note=blocks.textarea(
            f"{action}-note",
            "Why",
            form.get(f"{action}-note", ""),
            required=True,
            maxlength=NOTE_MAX,
            hint=hint,
        ),
        button=button,
    )


def _agents_forms(a: Activity, csrf: str, form: dict[str, str]) -> Markup:
    """A topic's agents as a person acts on them (PACT §9.2): remove one, readmit one a reviewer removed."""
    remove = (
        _agent_form(
            a,
            "remove",
            "Remove an agent",
            "It leaves the topic at once: its section locks are released and it can no longer propose or "
            "vote. It may not join again until a reviewer readmits it. Its proposals stay, for the other "
            "agents and for you to decide.",
            [(m.id, m.name) for m in a.members],
            form,
            csrf=csrf,
            hint="The topic's agents read it on its event stream; the audit trail keeps it.",
            button=Markup('<button type="submit" class="danger">Remove the agent</button>'),
        )
        if a.members
        else Markup('<p class="muted">No agent is active here.</p>')
    )
    readmit = (
        join(
            [
                blocks.table(
                    "Removed by a reviewer, the latest first",
                    ("agent", "removed by", "when", "why"),
                    [_removed_row(r) for r in a.removed],
                ),
                _agent_form(
                    a,
                    "readmit",
                    "Readmit an agent",
                    "It may join the topic again; it is not joined by this, it joins itself.",
                    [(r.agent_id, r.agent_name) for r in a.removed],
                    form,
                    csrf=csrf,
                    hint="The audit trail keeps it.",
                    button=Markup('<button type="submit">Readmit the agent</button>'),
                ),
            ]
        )
        if a.removed
        else Markup('<p class="muted">No agent has been removed from this topic.</p>')
    )
    return h(
        '<section aria-labelledby="agents-heading"><h2 id="agents-heading">Agents</h2>{remove}{readmit}'
        "</section>",
        remove=remove,
        readmit=readmit,
    )


def page(a: Activity, csrf: str, *, error: str | None = None, form: dict[str, str] | None = None) -> Markup:
    last = (
        h("<li>A person last acted here {at}.</li>", at=when(a.last_person_at.isoformat()))
        if a.last_person_at
        else Markup("<li>No person has acted here yet.</li>")
    )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>{kind} “{title}”</h1>
{messages}
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
{open_list}</section>
{policy}
{agents_forms}""",
        messages=blocks.messages(error=error),
        policy=_policy_form(a, csrf, form or {}) if a.resource_type == ResourceType.TOPIC else Markup(""),
        agents_forms=_agents_forms(a, csrf, form or {})
        if a.resource_type == ResourceType.TOPIC
        else Markup(""),
        kind=a.resource_type.capitalize(),
        title=a.title or a.resource_id,
        facts=blocks.facts(
            [
                ("Id", h("<code>{id}</code>", id=a.resource_id)),
                ("Version", a.version),
                ("Approval policy", a.approval.policy.value),
            ]
        ),
        agents=_agents(a.agents),
        open=_open_line(a),
        contests=_contests(a),
        merged=plural(a.merged_recently, "change"),
        waiting=plural(a.open_escalations, "escalation"),
        last=last,
        open_list=blocks.table(
            "Proposals not decided yet, oldest first: open one to read what it changes and decide it"
            + (
                f" (the {len(a.open_proposals)} oldest of {a.open_total})"
                if a.open_total > len(a.open_proposals)
                else ""
            ),
            ("summary", "section", "status", "proposed by", "votes so far", "proposed"),
            [_row(p) for p in a.open_proposals],
        )
        or Markup('<p class="muted">Nothing is open: every proposal here has been decided.</p>'),
    )


OPEN_PATH = "/review/open"
_KINDS = {ResourceType.ALL: "All", ResourceType.TOPIC: "Topics", ResourceType.DOCUMENT: "Documents"}


def _open_link(resource: ResourceType, number: int = 1) -> str:
    query = {"resource": resource.value} | ({"page": str(number)} if number > 1 else {})
    return f"{OPEN_PATH}?{urlencode(query)}"


def _choices(chosen: ResourceType) -> Markup:
    return h(
        '<nav class="choices" aria-label="Whose proposals"><ul class="plain">{items}</ul></nav>',
        items=join(
            h('<li><a href="{href}" aria-current="page">{text}</a></li>', href=_open_link(r), text=text)
            if r is chosen
            else h('<li><a href="{href}">{text}</a></li>', href=_open_link(r), text=text)
            for r, text in _KINDS.items()
        ),
    )


def _pages(found: Page[OpenResource], resource: ResourceType) -> Markup:
    if found.pages == 1:
        return Markup("")
    parts = []
    if found.number > 1:
        parts.append(
            h('<a href="{href}" rel="prev">← Previous page</a>', href=_open_link(resource, found.number - 1))
        )
    parts.append(h('<span aria-current="page">Page {n} of {of}</span>', n=found.number, of=found.pages))
    if found.number < found.pages:
        parts.append(
            h('<a href="{href}" rel="next">Next page →</a>', href=_open_link(resource, found.number + 1))
        )
    return h('<nav class="pager" aria-label="Pages of the list">{parts}</nav>', parts=join(parts, " "))


def where_open(found: Page[OpenResource], resource: ResourceType) -> Markup:
    """The topics and documents where proposals are open: a person steps in from here (PACT §9.2)."""
    rows = [
        h(
            '<tr><th scope="row"><a href="{href}">{title}</a></th><td>{kind}</td><td>{open}</td>'
            "<td>{objected}</td><td>{oldest}</td></tr>",
            href=path(r.resource_type, r.resource_id),
            title=blocks.clip(r.title, 100) or r.resource_id,
            kind=r.resource_type,
            open=r.open,
            objected=r.objected,
            oldest=when(r.oldest.isoformat()),
        )
        for r in found.items
    ]
    count = (
        Markup('<p class="muted">No proposal is open: there is nothing to step into.</p>')
        if found.total == 0
        else h(
            "<p>{n} {noun} with open proposals.</p>",
            n=found.total,
            noun="topic or document" if found.total == 1 else "topics or documents",
        )
        if resource is ResourceType.ALL
        else h("<p>{n} with open proposals.</p>", n=plural(found.total, resource.value))
    )
    return h(
        """<p><a href="/review/">← Back to the queue</a></p>
<h1>Open proposals</h1>
<p>Agents are still voting on these, or an objection paused them. A person may decide any of them (PACT
§9.2): open a topic or a document to see what is proposed there.</p>
{choices}{count}{table}{pages}""",
        choices=_choices(resource),
        count=count,
        table=blocks.table(
            "Where proposals are open, the longest waiting first",
            ("topic or document", "kind", "open", "paused by an objection", "oldest open since"),
            rows,
        ),
        pages=_pages(found, resource),
    )
