"""HTML of the share-link review page: plain server-rendered markup with the apps' one stylesheet and date
script (web/kernel/html.py, served by the document API itself), no inline style or script, no external
assets. Every piece of text from the database is escaped; the document's Markdown is
rendered by markdown-it with raw HTML off (it escapes any HTML the Markdown holds). Characters XML and
HTML have no place for (control characters, U+FFFE/U+FFFF) are shown as visible ones (xmltext.safe)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from domain.consensus.models import Proposal
from domain.consensus.sections import Section
from domain.documents import share_render, xmltext
from domain.documents.share_render import Rendered
from domain.documents.sharing import Pending, SharedView
from domain.kernel.clock import iso
from domain.review.diff import section_diff
from web.kernel.diff_html import diff_list
from web.kernel.html import ASSETS, when

# What each permission lets the reader do, as the page says it (the enum names are the API's).
PERMISSION_WORDS = {
    "ReadOnly": "reading",
    "CommentOnly": "reading and commenting",
    "FullReview": "full review (reading, commenting, resolving comments and deciding objected proposals)",
}


def esc(text: str) -> str:
    """Text for HTML: escaped, with every character XML cannot carry made visible."""
    return escape(xmltext.safe(text))


def page(title: str, body: str, *, lang: str = "en") -> str:
    return (
        f'<!doctype html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title>{ASSETS}</head>\n"
        f'<body>\n<div class="sheet">{body}</div>\n</body></html>\n'
    )


def message(title: str, text: str) -> str:
    body = f'<main id="content"><h1>{esc(title)}</h1><p role="alert">{esc(text)}</p></main>'
    return page(title, body)


def _status(note: str | None, error: str | None) -> str:
    out = ""
    if note:
        out += f'<p class="note" role="status">{esc(note)}</p>'
    if error:
        out += f'<p class="error" role="alert">{esc(error)}</p>'
    return out


def _hidden(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(csrf)}">'


def email_form(action: str, title: str, mode: str, csrf: str, *, error: str | None = None) -> str:
    who = "one of the invited reviewers" if mode == "closed-individual" else "an address of the organisation"
    body = (
        f'<main id="content"><h1>Review “{esc(title)}”</h1>{_status(None, error)}'
        f"<p>This link is for {who}. Enter your email address and we will mail you a 6-digit code.</p>"
        f'<form method="post" action="{esc(action)}">{_hidden(csrf)}'
        '<label for="email">Your email address</label>'
        '<input type="email" id="email" name="email" autocomplete="email" required>'
        '<button type="submit">Send me a code</button></form></main>'
    )
    return page(f"Review {title}", body)


def code_form(
    action: str, again: str, title: str, email: str, csrf: str, *, note: str | None, error: str | None
) -> str:
    body = (
        f'<main id="content"><h1>Review “{esc(title)}”</h1>{_status(note, error)}'
        f'<form method="post" action="{esc(action)}">{_hidden(csrf)}'
        f'<input type="hidden" name="email" value="{esc(email)}">'
        f"<p>Code sent to <strong>{esc(email)}</strong> if it may review this document.</p>"
        '<label for="code">6-digit code from the mail</label>'
        '<input type="text" id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" '
        'autocomplete="one-time-code" required>'
        '<button type="submit">Open the document</button></form>'
        f'<p><a href="{esc(again)}">Use another address or ask for a new code</a></p></main>'
    )
    return page(f"Review {title}", body)


def _toc(nodes: list[Section], article: Rendered | None) -> str:
    if not nodes:
        return ""
    items = "".join(
        f'<li><a href="{_href(n.id, article)}">{esc(n.title or "Introduction")}</a>'
        f"{_toc(n.children, article)}</li>"
        for n in nodes
    )
    return f"<ul>{items}</ul>"


def _href(section_id: str, article: Rendered | None) -> str:
    """A section's place: `#id` in a one-page document, else `?page=N#id` on the page that holds it (the
    same on every page, so the tree is rendered once per version)."""
    if article is None or article.count == 1:
        return esc(f"#{section_id}")
    return esc(f"?page={article.page_of.get(section_id, 1)}#{section_id}")


def _pager(article: Rendered) -> str:
    """Links between the pages of a large document (nothing for a one-page document)."""
    if article.count == 1:
        return ""
    links = [f"Page {article.number} of {article.count}"]
    if article.number > 1:
        links.append(f'<a href="?page={article.number - 1}" rel="prev">Previous page</a>')
    if article.number < article.count:
        links.append(f'<a href="?page={article.number + 1}" rel="next">Next page</a>')
    return f'<nav class="pager" aria-label="Pages of the document"><p>{" · ".join(links)}</p></nav>'


def _flat(nodes: list[Section], depth: int = 0) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for n in nodes:
        out.append((n.id, "\u2014 " * depth + (n.title or "Introduction")))
        out.extend(_flat(n.children, depth + 1))
    return out


def review_page(
    base: str,
    view: SharedView,
    csrf: str,
    *,
    note: str | None,
    error: str | None,
    article: Rendered | None = None,
    tree: Callable[[], list[Section]] | None = None,
    media: str | None = None,
    pending: dict[str, Pending] | None = None,
) -> str:
    """The review page; `article` is the document's HTML (one page of it for a large document), `tree`
    gives the section tree when `view` has none (asked only when the version's tree is not rendered yet)."""
    sections_of = tree or (lambda: view.sections)
    link, doc = view.link, view.doc
    perm = link.permission
    title = doc.title
    who = f" as {view.reviewer}" if view.reviewer else ""
    parts = [
        '<a class="skip" href="#document">Skip to the document</a>',
        f'<header><h1 id="title">{esc(title)}</h1>',
        f"<p>Shared with you{esc(who)} for <strong>{esc(PERMISSION_WORDS.get(perm, perm))}</strong>; "
        f"this link works until {when(iso(link.expires_at))}.</p>",
        f"{_status(note, error)}</header>",
    ]
    toc = (
        _toc(sections_of(), article)
        if article is None
        else share_render.memo(article.key, "toc", lambda: _toc(sections_of(), article))
    )
    if toc:
        parts.append(f'<nav aria-labelledby="toc"><h2 id="toc">Sections</h2>{toc}</nav>')
    parts.append("<main>")
    if doc.status != "ready" or article is None:
        status = esc(doc.status)
        parts.append(f'<p id="document" role="status">The document is {status}; come back later.</p>')
    else:
        pager = _pager(article)
        rendered = article.html if media is None else with_media(article.html, media)
        body = f'<article id="document" class="doc" aria-labelledby="title">{rendered}</article>'
        parts.append(f"{pager}{body}{pager}")
    comments = view.comments
    parts.append(f'<section aria-labelledby="comments"><h2 id="comments">Comments ({len(comments)})</h2>')
    if not comments:
        parts.append("<p>No comments yet.</p>")
    for c in comments:
        where = f' on <a href="#{esc(c.paragraph_id)}">{esc(c.paragraph_id)}</a>' if c.paragraph_id else ""
        state = " (resolved)" if c.resolved else ""
        parts.append(
            f'<article class="comment" aria-label="Comment by {esc(c.author)}">'
            f"<p><strong>{esc(c.author)}</strong>{where}, "
            f"{when(iso(c.created_at))}{state}</p>"
            f"<p>{esc(c.text)}</p>"
        )
        if perm == "FullReview" and not c.resolved:
            parts.append(
                f'<form method="post" action="{esc(base)}/comments/{esc(c.id)}/resolve">'
                f"{_hidden(csrf)}"
                f'<button type="submit" aria-label="Resolve the comment by {esc(c.author)}">'
                "Resolve</button></form>"
            )
        parts.append("</article>")
    if perm in ("CommentOnly", "FullReview"):

        def build() -> str:
            return "".join(
                f'<option value="{esc(sid)}">{esc(label)}</option>' for sid, label in _flat(sections_of())
            )

        options = build() if article is None else share_render.memo(article.key, "options", build)
        parts.append(
            '<h3 id="add">Add a comment</h3>'
            f'<form method="post" action="{esc(base)}/comments" aria-labelledby="add">'
            f"{_hidden(csrf)}"
            '<label for="text">Comment</label>'
            '<textarea id="text" name="text" rows="4" required maxlength="10000"></textarea>'
            '<label for="paragraphId">On section (optional)</label>'
            '<select id="paragraphId" name="paragraphId"><option value="">The whole document</option>'
            f"{options}</select>"
            f"{_identity(view.reviewer)}"
            '<button type="submit">Add comment</button></form>'
        )
    parts.append("</section>")
    if perm == "FullReview":
        props = view.proposals
        parts.append(
            f'<section aria-labelledby="proposals"><h2 id="proposals">Objected proposals ({len(props)})</h2>'
        )
        if not props:
            parts.append("<p>No proposal waits for a decision.</p>")
        for p in props:
            pid = esc(p.id)
            ctx = (pending or {}).get(p.id)
            heading = ctx.section_title if ctx else p.section_id
            parts.append(
                f'<article class="proposal" aria-labelledby="p-{pid}"><h3 id="p-{pid}">'
                f"{esc(p.summary or 'Proposal')}</h3>"
                f"<p>By <strong>{esc(p.author_name)}</strong> on the section "
                f'<a href="{_href(p.section_id, article)}">{esc(heading)}</a>, '
                f"{when(iso(p.created_at))}. Votes so far: {_votes(p)}.</p>"
                f"{_objections(ctx)}{_before_after(pid, ctx, p.new_content)}"
                f'<form method="post" action="{esc(base)}/proposals/{pid}/decide">{_hidden(csrf)}'
                f"<fieldset><legend>Your decision</legend>"
                f'<input type="radio" id="a-{pid}" name="decision" value="approve" required>'
                f'<label for="a-{pid}">Approve</label> '
                f'<input type="radio" id="r-{pid}" name="decision" value="reject">'
                f'<label for="r-{pid}">Reject</label>'
                "</fieldset>"
                f'<label for="n-{pid}">Note (why)</label>'
                f'<textarea id="n-{pid}" name="note" rows="2" required maxlength="4000"></textarea>'
                '<button type="submit">Decide</button></form></article>'
            )
        parts.append("</section>")
    parts.append("</main>")
    return page(f"{title} (review)", "\n".join(parts))


def with_media(html: str, base: str) -> str:
    """The document's HTML with its package images (`media/image1.png`, as a DOCX converts) served through
    the link (`{base}/media/image1.png`). markdown-it escapes every quote of the text, so `src="` occurs
    only in its own attributes."""
    return html.replace(' src="media/', f' src="{esc(base)}/media/')


def _identity(email: str | None) -> str:
    """Who the comment is by: the proven address (a display name may be added before it), or a name."""
    if email:
        return (
            f"<p>You comment as <strong>{esc(email)}</strong>, the address you proved.</p>"
            '<label for="author">Display name (optional, shown before your address)</label>'
            '<input type="text" id="author" name="author" maxlength="120" autocomplete="name">'
        )
    return (
        '<label for="author">Your name (optional)</label>'
        '<input type="text" id="author" name="author" maxlength="200" autocomplete="name">'
    )


def _votes(p: Proposal) -> str:
    return esc(f"{p.approve_count} for, {p.reject_count} against, {p.object_count} objecting")


def _objections(ctx: Pending | None) -> str:
    if ctx is None or not ctx.objections:
        return ""
    items = "".join(
        f"<li><strong>{esc(o.agent_name)}</strong> objected on {when(iso(o.created_at))}: "
        f"{esc(o.reason or 'no reason given')}</li>"
        for o in ctx.objections
    )
    return f'<h4>Objections</h4><ul class="objections">{items}</ul>'


def _before_after(pid: str, ctx: Pending | None, proposed: str) -> str:
    """What the proposal changes, line by line and word by word (as on the review desk), then the section as
    it reads now beside the proposed text (plain Markdown, both sides)."""
    now = (
        f"<pre>{esc(ctx.current)}</pre>"
        if ctx is not None and ctx.current is not None
        else "<p>The section is no longer in the document.</p>"
    )
    changes = (
        f'<div class="change"><h4>What it changes</h4>{diff_list(section_diff(ctx.current, proposed))}</div>'
        if ctx is not None and ctx.current is not None
        else ""
    )
    return (
        changes + '<div class="compare">'
        f'<div><h4 id="now-{pid}">Now</h4><div class="scroll" role="region" aria-labelledby="now-{pid}" '
        f'tabindex="0">{now}</div></div>'
        f'<div><h4 id="new-{pid}">Proposed</h4><div class="scroll" role="region" aria-labelledby="new-{pid}" '
        f'tabindex="0"><pre>{esc(proposed)}</pre></div></div></div>'
    )
