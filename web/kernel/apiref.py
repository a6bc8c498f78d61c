"""The interactive API reference (`GET /docs`): Swagger UI, from the `swagger-ui-py` package's built assets,
served by the app itself (no CDN), reading the app's own `/openapi.json`: operations grouped by tag with a
filter, request and response examples, schemas inline, and "try it out" against this server. Beside it a
sidebar of every operation, rendered on the server, links into Swagger UI's deep links. Without script the
page says where the reference without script is (`/docs/plain`, rendered on the server from the same
document), and the sidebar's links still lead there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

from aiohttp import web

from web.kernel.html import Markup, h, join, page

ASSETS = "/assets/swagger-ui"
STATIC = Path(str(files("swagger_ui"))) / "static"  # the swagger-ui-py package's built Swagger UI
# The bundle's files the page loads, and their media types (nothing else of the package is served).
FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "start.js": "text/javascript",  # ours: the page's start-up (a CSP without inline script)
    "LICENSE": "text/plain",
}
_cache: dict[str, bytes] = {}  # the files as read once per process
METHODS = ("get", "post", "put", "patch", "delete")

# Swagger UI's own script and styles from this origin, its inline style attributes, its SVG icons as data
# URLs, and its requests ("try it out", the OpenAPI document) to this origin only.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

START = """"use strict";
// Swagger UI over this server's own OpenAPI document (see web/kernel/apiref.py).
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") { return; }
  document.documentElement.classList.add("has-script");
  window.ui = window.SwaggerUIBundle({
    url: root.getAttribute("data-spec"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    filter: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 2,
    displayRequestDuration: true,
    showExtensions: false,
    tryItOutEnabled: false,
    syntaxHighlight: { activated: true, theme: "agate" },
    layout: "BaseLayout"
  });
  // The sidebar's links are Swagger UI's deep links (#/Tag_name/operationId): open the operation they name
  // and bring it into view, also when the page is already open.
  function reveal() {
    var found = /^#\/([^/]+)\/(.+)$/.exec(window.location.hash);
    if (!found) { return; }
    var tag = decodeURIComponent(found[1]).replace(/_/g, " ");
    var op = decodeURIComponent(found[2]);
    window.ui.layoutActions.show(["operations-tag", tag], true);
    window.ui.layoutActions.show(["operations", tag, op], true);
    window.setTimeout(function () {
      var block = document.getElementById("operations-" + tag.replace(/ /g, "_") + "-" + op) ||
        document.getElementById("operations-" + tag + "-" + op);
      if (block) { block.scrollIntoView(); }
    }, 60);
  }
  window.addEventListener("hashchange", reveal);
});
"""

STYLE = """
.reference { display: grid; grid-template-columns: 17rem minmax(0, 1fr); gap: 1.5rem; align-items: start; }
.reference .ops { position: sticky; top: 0; max-height: 100vh; overflow-y: auto; font-size: .9rem;
  border-right: 1px solid var(--line); padding-right: .75rem; }
.reference .ops ul { list-style: none; padding: 0; margin: 0 0 .75rem; }
.reference .ops li { margin: 0 0 .2rem; }
.reference .ops h2 { font-size: 1rem; margin: .75rem 0 .25rem; }
.reference .ops .method { min-width: 3.4rem; font-size: .75rem; }
#swagger-ui { min-width: 0; }
.swagger-ui .wrapper { padding: 0; }
.js-only { display: none; }
.has-script .js-only { display: block; }
.has-script .no-js { display: none; }
@media (max-width: 48rem) {
  .reference { grid-template-columns: minmax(0, 1fr); }
  .reference .ops { position: static; max-height: 40vh; border-right: 0;
    border-bottom: 1px solid var(--line); }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-path { max-width: 100%; word-break: break-all; }
  .swagger-ui table { display: block; overflow-x: auto; }
  .swagger-ui .model-box, .swagger-ui .highlight-code, .swagger-ui .microlight { max-width: 100%;
    overflow-x: auto; }
}
"""


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    for path, methods in spec["paths"].items():
        for method in METHODS:
            op = methods.get(method)
            if op is not None:
                yield (op.get("tags") or ["default"])[0], method, path, op


def _deep_link(tag: str, op: dict[str, Any], method: str, path: str) -> str:
    """Swagger UI's deep link of an operation (`#/{tag}/{operationId}`, spaces as underscores)."""
    return f"#/{tag.replace(' ', '_')}/{op.get('operationId') or method + path}"


def sidebar(spec: dict[str, Any]) -> Markup:
    groups: dict[str, list[Markup]] = {}
    for tag, method, path, op in _operations(spec):
        groups.setdefault(tag, []).append(
            h(
                '<li><a href="{href}" title="{summary}"><span class="method">{method}</span>'
                "<code>{path}</code></a></li>",
                href=_deep_link(tag, op, method, path),
                summary=op.get("summary", ""),
                method=method.upper(),
                path=path,
            )
        )
    return join(
        h(
            "<h2>{tag}</h2><ul>{items}</ul>",
            tag=tag,
            items=join(items),
        )
        for tag, items in sorted(groups.items())
    )


# The `/docs` page of each shared document (Api.document), rendered once per process; the document is
# kept with its page so that its id in the key stays its own.
_BODIES: dict[int, tuple[dict[str, Any], Markup]] = {}


def _body(spec: dict[str, Any]) -> Markup:
    count = sum(1 for _ in _operations(spec))
    return h(
        """<style>{style}</style>
<h1>{title}: API reference</h1>
<p>{count} operations, from this server's <a href="/openapi.json">OpenAPI document</a>.
<span class="no-js">This page needs script for its interactive reference: read
<a href="/docs/plain">the reference without script</a> instead.</span>
<span class="js-only">Filter by tag in the box below; open an operation for its parameters, request and
response examples and schemas, and try it against this server. The same reference
<a href="/docs/plain">without script</a>.</span></p>
<div class="reference">
<nav class="ops" aria-label="Operations"><details open><summary>Operations</summary>{sidebar}</details></nav>
<div id="swagger-ui" data-spec="/openapi.json"><noscript><p><a href="/docs/plain">Read the reference without
script</a>.</p></noscript></div>
</div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="{assets}/start.js"></script>
""",
        style=Markup(STYLE),
        title=spec["info"]["title"],
        count=count,
        sidebar=sidebar(spec),
        assets=ASSETS,
    )


def add_routes(
    app: web.Application,
    document: Callable[[], dict[str, Any]],
    *,
    site: str,
    nav: Markup,
    plain: Callable[[], Markup],
) -> None:
    """`/docs` (Swagger UI and the sidebar), `/docs/plain` (the reference without script, `plain()`) and the
    assets, for the OpenAPI document `document()` gives; each page rendered when first asked for."""
    head = Markup(f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">')

    def body() -> Markup:
        spec = document()
        if (known := _BODIES.get(id(spec))) is None:
            known = _BODIES[id(spec)] = (spec, _body(spec))
        return known[1]

    async def docs(_request: web.Request) -> web.Response:
        return page(
            "API reference", body(), site=site, nav=nav, head=head, headers={"Content-Security-Policy": CSP}
        )

    async def docs_plain(_request: web.Request) -> web.Response:
        return page("API reference (no script)", plain(), site=site, nav=nav, script=False)

    async def asset(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        kind = FILES.get(name)
        if kind is None:
            raise web.HTTPNotFound()
        data = _cache.get(name)
        if data is None:
            data = START.encode() if name == "start.js" else (STATIC / name).read_bytes()
            _cache[name] = data
        response = web.Response(body=data, content_type=kind, charset="utf-8")
        response.headers["Cache-Control"] = "public, max-age=86400"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    app.router.add_get("/docs", docs)
    app.router.add_get("/docs/plain", docs_plain)
    app.router.add_get(ASSETS + "/{name}", asset)
