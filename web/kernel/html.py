"""Server-rendered HTML for people (the apps' home and reference pages, the hub's review pages, the document
API's share and sign-in pages): a tiny template helper that escapes every value it is given, the page layout
with its landmarks, the one stylesheet (`/assets/concord.css`) and one small script (`/assets/concord.js`),
both served by the app itself. The script only shows dates in the reader's time zone: every page works
without it, dates then read in UTC. No inline script or style, no external asset."""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

STYLESHEET_PATH = "/assets/concord.css"
SCRIPT_PATH = "/assets/concord.js"
# What a page may load: its own stylesheet, script and images, nothing else; forms post to its own origin.
CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class Markup(str):
    """Text that is already HTML: `h` and `join` keep it as it is and escape everything else. Two pieces of
    Markup added together stay Markup (a plain `str` subclass would give a `str`, which `h` then escaped);
    Markup and a plain string still give a plain string, as `str` does."""

    __slots__ = ()

    def __add__(self, other: str) -> str:
        joined = str.__add__(self, other)
        return Markup(joined) if isinstance(other, Markup) else joined


# The stylesheet and the script, as every page's <head> links them.
ASSETS = Markup(
    f'<link rel="stylesheet" href="{STYLESHEET_PATH}">\n<script src="{SCRIPT_PATH}" defer></script>'
)


def esc(value: Any) -> Markup:
    """A value as HTML text: Markup stays, None reads as nothing, anything else is escaped."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("")
    return Markup(html.escape(str(value), quote=True))


def h(template: str, /, **values: Any) -> Markup:
    """`template` (trusted HTML with `{name}` fields) with every value escaped unless it is Markup."""
    return Markup(template.format(**{name: esc(value) for name, value in values.items()}))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(esc(sep).join(esc(part) for part in parts))


def page(
    title: str,
    body: Markup,
    *,
    site: str,
    home: str = "/",
    nav: Markup | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
    no_store: bool = False,
    head: Markup | None = None,
    script: bool = True,
) -> web.Response:
    """A whole HTML page: banner (site name, navigation), the main content, a footer; `script=False` leaves
    out the date script (a page that promises to run none)."""
    document = h(
        """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{full_title}</title>
{assets}
{head}
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="banner">
<p class="brand"><a href="{home}">{site}</a></p>
{nav}
</header>
<main id="main" tabindex="-1">
{body}
</main>
<footer class="footer"><p>Concord: agents reach consensus; people keep the final word.</p></footer>
</body>
</html>
""",
        title=title,
        full_title=title if title == site else f"{title} · {site}",
        site=site,
        assets=ASSETS if script else Markup(f'<link rel="stylesheet" href="{STYLESHEET_PATH}">'),
        home=home,
        nav=nav or Markup(""),
        head=head or Markup(""),
        body=body,
    )
    response = web.Response(text=document, status=status, content_type="text/html", charset="utf-8")
    response.headers.update(SECURITY_HEADERS)
    if no_store:
        response.headers["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


STYLESHEET = """
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b57d0;
  --bg: #ffffff; --panel: #f6f8fa; --ok: #116329; --ok-bg: #dafbe1; --bad: #82071e; --bad-bg: #ffebe9;
  --focus: #bf5700; }
* { box-sizing: border-box; }
html { font-size: 100%; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem 1rem; }
.skip:focus { left: .5rem; z-index: 10; }
.banner { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 1rem;
  padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--panel); }
.brand { margin: 0; font-weight: 700; font-size: 1.15rem; }
.brand a { color: var(--ink); text-decoration: none; }
.banner nav ul { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; margin: 0; padding: 0;
  align-items: center; }
.banner form { display: inline; margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
main:focus { outline: none; }
.footer { border-top: 1px solid var(--line); color: var(--muted); padding: .75rem 1.5rem; font-size: .9rem; }
h1 { font-size: 1.6rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
p, ul, ol, dl { margin: 0 0 1rem; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--panel); border: 1px solid var(--line);
  border-radius: 6px; padding: .75rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; margin: 0 0 1rem; }
caption { text-align: left; font-weight: 600; padding: 0 0 .4rem; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); padding: .45rem .6rem; }
thead th { background: var(--panel); border-bottom: 2px solid var(--line); }
.muted { color: var(--muted); }
/* Phones: a table scrolls inside its own box rather than widening the page; long words wrap. */
dd, p, li, h1, h2, h3, h4, h5, code { overflow-wrap: anywhere; }
td, th { overflow-wrap: break-word; }
td code, th code { overflow-wrap: normal; }
@media (max-width: 48rem) {
  main { padding: 1rem; }
  .banner { padding: .75rem 1rem; }
  table { display: block; overflow-x: auto; max-width: 100%; }
  td { min-width: 7rem; }
  td:last-child { min-width: 14rem; }
  html dl.facts { grid-template-columns: minmax(0, 1fr); }  /* `html`: over the rules further down */
  html dl.facts dd { margin-bottom: .5rem; }
  html .method { min-width: 0; }
}
.flash, .error, .notice { border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; border: 1px solid; }
.flash p, .error p, .notice p { margin: 0; }
.flash { background: var(--ok-bg); color: var(--ok); border-color: #4ac26b; }
.error { background: var(--bad-bg); color: var(--bad); border-color: #ff8182; }
.notice { background: var(--panel); border-color: var(--line); }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
@media (max-width: 48rem) { .side-by-side { grid-template-columns: 1fr; } }
.side-by-side h3, .side-by-side h5 { margin-top: 0; }
.open-proposal { border-top: 1px solid var(--line); margin-top: 1.5rem; padding-top: .25rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
form.decision { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 0 0 1rem;
  max-width: 48rem; }
fieldset { border: 0; padding: 0; margin: 0 0 1rem; }
legend { font-weight: 600; padding: 0; margin-bottom: .35rem; }
label { display: block; font-weight: 600; margin: 0 0 .35rem; }
fieldset label { display: inline; font-weight: 400; margin: 0 1.25rem 0 .35rem; }
fieldset input[type=radio], fieldset input[type=checkbox] { margin: 0; vertical-align: middle; }
ul.choices { list-style: none; padding: 0; }
ul.choices li { margin: 0 0 .35rem; }
form.decision h2, form.decision h3 { margin-top: 0; }
.hint { color: var(--muted); font-size: .9rem; margin: -.2rem 0 .5rem; }
input[type=text], input[type=password], textarea { width: 100%; max-width: 48rem; font: inherit;
  padding: .5rem .6rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--ink); }
textarea { min-height: 6rem; }
.field { margin: 0 0 1rem; }
button { font: inherit; font-weight: 600; padding: .5rem 1rem; border-radius: 6px; cursor: pointer;
  border: 1px solid #1f6feb; background: var(--accent); color: #fff; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
.banner button { padding: .25rem .75rem; }
.method { display: inline-block; min-width: 4.2rem; text-align: center; font-weight: 700; border-radius: 4px;
  padding: 0 .4rem; margin-right: .4rem; background: var(--panel); border: 1px solid var(--line); }
.op { border-top: 1px solid var(--line); padding-top: .5rem; }
.toc { columns: 2 16rem; }
/* The review desk: tables scroll in their own box, the comparison of a section now and proposed, filters,
   pages, priorities. Insertions are underlined and deletions struck through, so they read without colour. */
.scroll { overflow-x: auto; max-width: 100%; margin: 0 0 1rem; }
.scroll table { margin: 0; }
.scroll:focus-visible { outline-offset: 0; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.change ins { text-decoration: underline; text-decoration-thickness: 2px; background: var(--ok-bg);
  color: var(--ok); }
.change del { text-decoration: line-through; text-decoration-thickness: 2px; background: var(--bad-bg);
  color: var(--bad); }
ol.diff { list-style: none; padding: 0; margin: 0 0 1rem; border: 1px solid var(--line); border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92em; }
ol.diff li { padding: .2rem .6rem; border-bottom: 1px solid var(--line); white-space: pre-wrap;
  overflow-wrap: anywhere; }
ol.diff li:last-child { border-bottom: 0; }
ol.diff li.same { color: var(--muted); }
ol.diff li.deleted { background: var(--bad-bg); border-left: 4px double var(--bad); }
ol.diff li.inserted { background: var(--ok-bg); border-left: 4px solid var(--ok); }
ol.diff li.changed { border-left: 4px dashed var(--accent); }
ol.diff .tag { display: inline-block; font-family: system-ui, sans-serif; font-size: .8rem; font-weight: 700;
  margin-right: .6rem; }
.md { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow-wrap: anywhere; }
.md table { display: block; overflow-x: auto; }
.md > :last-child { margin-bottom: 0; }
details { margin: 0 0 1rem; }
summary { cursor: pointer; font-weight: 600; margin: 0 0 .5rem; }
.side-by-side > * { min-width: 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin: 0 0 1rem; }
form.filters .field { margin: 0; }
select { font: inherit; padding: .4rem .5rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff;
  color: var(--ink); max-width: 100%; }
.pager { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin: 0 0 1rem; }
.priority { display: inline-block; border: 1px solid var(--line); border-radius: 4px; padding: 0 .4rem;
  font-size: .85rem; font-weight: 600; }
.priority-urgent { border: 2px solid var(--bad); color: var(--bad); background: var(--bad-bg); }
.priority-high { border-color: var(--bad); color: var(--bad); }
.priority-low { color: var(--muted); }
.count { display: inline-block; min-width: 1.5rem; text-align: center; border-radius: 999px;
  padding: 0 .45rem; background: var(--accent); color: #fff; font-size: .85rem; font-weight: 700; }
ul.plain { list-style: none; padding: 0; margin: 0; }
nav.choices ul.plain { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; margin: 0 0 1rem; }
nav.choices a[aria-current] { font-weight: 600; text-decoration: none; color: inherit; }
/* The share pages (web/docs/sharing/html.py): one column, the document between rules, comments and proposals
   as blocks; the comparison of a proposal is the desk's (.change, ol.diff) beside .compare's two texts. */
.sheet { max-width: 52rem; margin: 0 auto; padding: 1rem 1.5rem; }
.sheet main { max-width: none; padding: 0; }
.sheet h1 { margin-top: .5rem; }
.sheet form { margin: 0 0 1rem; }
.sheet form button { margin-top: .75rem; }
.sheet input[type=email] { width: 100%; max-width: 36rem; font: inherit; padding: .5rem .6rem;
  border: 1px solid #8c959f; border-radius: 6px; }
.sheet label { margin-top: .75rem; }
.sheet fieldset label { margin-top: 0; }
img { max-width: 100%; height: auto; }
.doc { border-top: 1px solid var(--line); border-bottom: 1px solid var(--line); padding: .5rem 0;
  margin: 0 0 1rem; overflow-wrap: anywhere; }
.doc table { display: block; overflow-x: auto; max-width: 100%; width: auto; }
.note { background: var(--ok-bg); color: var(--ok); border: 1px solid #4ac26b; border-radius: 6px;
  padding: .75rem 1rem; }
p.error { margin: 0 0 1rem; }
.comment { border-left: 3px solid var(--line); padding-left: .75rem; margin: .75rem 0; }
.footnotes { font-size: .9rem; border-top: 1px solid var(--line); margin-top: 1rem; }
.footnotes-sep { display: none; }
.proposal { border: 1px solid var(--line); border-radius: 6px; padding: .25rem 1rem 1rem; margin: 1rem 0; }
.proposal fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; min-width: 0; }
.compare { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.compare > * { min-width: 0; }
.compare .scroll, .compare pre { margin: 0; }
h4, h5, h6 { font-size: 1rem; margin: .75rem 0 .25rem; }
@media (max-width: 40rem) { .compare { grid-template-columns: 1fr; } .sheet { padding: .75rem 1rem; } }
@media (max-width: 40rem) {
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack, table.stack caption, table.stack tbody, table.stack tr, table.stack td, table.stack th {
    display: block; }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.stack td, table.stack th { border: 0; padding: .1rem 0; overflow-wrap: anywhere; }
  table.stack [data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: var(--muted); }
  main { padding: 1rem; }
  .banner { padding: .75rem 1rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin: 0 0 .5rem; }
  dl.facts dd, dl.facts dt { overflow-wrap: anywhere; }
}
"""


# Shows every <time datetime> of the page in the reader's time zone and language (the server wrote it in UTC,
# which stays in the title, and on the page when the browser runs no script).
SCRIPT = """"use strict";
(function () {
  function local() {
    var format;
    try {
      format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
        year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
        hourCycle: "h23", timeZoneName: "short"
      });
    } catch (e) {
      return;
    }
    var times = document.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var t = times[i];
      var moment = new Date(t.getAttribute("datetime"));
      if (isNaN(moment.getTime()) || t.getAttribute("datetime").length < 11) continue;
      if (!t.title) t.title = t.textContent;
      t.textContent = format.format(moment);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", local);
  else local();
})();
"""


def _asset(text: str, content_type: str) -> web.Response:
    response = web.Response(text=text, content_type=content_type, charset="utf-8")
    response.headers["Cache-Control"] = "public, max-age=3600"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


async def stylesheet(_request: web.Request) -> web.Response:
    return _asset(STYLESHEET, "text/css")


async def script(_request: web.Request) -> web.Response:
    return _asset(SCRIPT, "text/javascript")


def when(value: str | None) -> Markup:
    """An ISO timestamp as a readable UTC time in a <time> element (the script shows it in the reader's time
    zone)."""
    if not value:
        return Markup("")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return esc(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return h('<time datetime="{iso}">{text}</time>', iso=value, text=moment.strftime("%d %b %Y %H:%M UTC"))
