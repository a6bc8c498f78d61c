"""Each app's pages for people: `GET /` says what the app is and where to read on, `GET /docs` is the API
reference rendered on the server from the app's own OpenAPI document (operations grouped by tag, with
their parameters, bodies, responses and security, then the schemas), with no script and no CDN."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from web.kernel import apiref, favicon
from web.kernel.html import SCRIPT_PATH, STYLESHEET_PATH, Markup, esc, h, join, page, script, stylesheet


@dataclass(frozen=True)
class Link:
    label: str
    href: str | None  # None: a name to look up (a guide in the repository), not a link
    what: str


# The home page and the plain reference of each shared document (Api.document), rendered once per process
# when first asked for (rendering every operation takes a tenth of a second, and every app built, each
# test's included, serves them); the document is kept with its pages so that its id in the key stays its own.
_PAGES: dict[tuple[int, tuple[Link, ...], tuple[Link, ...]], tuple[dict[str, Any], Markup, Markup]] = {}


def add_routes(
    app: web.Application,
    document: Callable[[], dict[str, Any]],
    *,
    site: str,
    links: Sequence[Link],
    guides: Sequence[Link],
) -> None:
    """`/`, `/docs` and the stylesheet, for an app called `site` whose OpenAPI document `document()` gives
    (its Api's shared one)."""

    def pages() -> tuple[Markup, Markup]:
        spec = document()
        key = (id(spec), tuple(links), tuple(guides))
        if (known := _PAGES.get(key)) is None:
            known = _PAGES[key] = (spec, _home(spec, links, guides), _reference(spec))
        return known[1], known[2]

    async def home(_request: web.Request) -> web.Response:
        return page(site, pages()[0], site=site)

    app.router.add_get("/", home)
    apiref.add_routes(app, document, site=site, nav=_nav(), plain=lambda: pages()[1])
    favicon.add_routes(app)
    app.router.add_get(STYLESHEET_PATH, stylesheet)
    app.router.add_get(SCRIPT_PATH, script)


def _nav() -> Markup:
    return Markup(
        '<nav aria-label="Site"><ul><li><a href="/">Home</a></li><li><a href="/docs">API reference</a></li>'
        '<li><a href="/openapi.json">OpenAPI JSON</a></li></ul></nav>'
    )


def _link_row(link: Link) -> Markup:
    target = (
        h('<a href="{href}">{label}</a>', href=link.href, label=link.label)
        if link.href
        else h("<code>{label}</code>", label=link.label)
    )
    return h('<tr><th scope="row">{target}</th><td>{what}</td></tr>', target=target, what=link.what)


def _home(spec: dict[str, Any], links: Sequence[Link], guides: Sequence[Link]) -> Markup:
    info = spec["info"]
    count = sum(len(methods) for methods in spec["paths"].values())
    return h(
        """<h1>{title}</h1>
<p>{description}</p>
<p class="muted">API version {version}; {count} operations.</p>
<h2 id="start">Where to go</h2>
<table>
<caption>Pages and documents this server answers</caption>
<thead><tr><th scope="col">page</th><th scope="col">what</th></tr></thead>
<tbody>{links}</tbody>
</table>
<h2 id="guides">Guides</h2>
<p>The guides are Markdown files in the Concord repository (<code>docs/</code>), each with curl examples.</p>
<table>
<caption>Guides for this API</caption>
<thead><tr><th scope="col">guide</th><th scope="col">what it covers</th></tr></thead>
<tbody>{guides}</tbody>
</table>
""",
        title=info["title"],
        description=info.get("description", ""),
        version=info["version"],
        count=count,
        links=join(_link_row(link) for link in links),
        guides=join(_link_row(guide) for guide in guides),
    )


# --- the reference ------------------------------------------------------------------------------------

METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def _ref_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return str(ref).rsplit("/", 1)[-1] if isinstance(ref, str) else None


def type_of(schema: Any) -> Markup:
    """A short human reading of a JSON schema: a linked schema name, a type, a list of, one of."""
    if not isinstance(schema, dict) or not schema:
        return Markup("any")
    name = _ref_name(schema)
    if name:
        return h('<a href="#schema-{name}">{name}</a>', name=name)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return join((type_of(s) for s in schema[key]), " | ")
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return type_of(schema["allOf"][0])
    if "enum" in schema:
        return join((h("<code>{v}</code>", v=v) for v in schema["enum"]), " | ")
    if "const" in schema:
        return h("<code>{v}</code>", v=schema["const"])
    kind = schema.get("type")
    if kind == "array":
        return h("list of {item}", item=type_of(schema.get("items")))
    if kind == "object" and "additionalProperties" in schema and not schema.get("properties"):
        return h("map of {item}", item=type_of(schema["additionalProperties"]))
    if isinstance(kind, list):
        return join(kind, " | ")
    text = str(kind or "any")
    if schema.get("format"):
        text += f" ({schema['format']})"
    return esc(text)


def _limits(schema: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
        ("default", "default"),
    ):
        if key in schema:
            parts.append(f"{label} {json.dumps(schema[key])}")
    return "; ".join(parts)


def _operation(path: str, method: str, op: dict[str, Any]) -> Markup:
    anchor = op.get("operationId") or f"{method}_{path}"
    params = op.get("parameters", [])
    params_html = (
        h(
            """<table>
<caption>Parameters</caption>
<thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">required</th>
<th scope="col">type</th><th scope="col">description</th></tr></thead>
<tbody>{rows}</tbody>
</table>""",
            rows=join(
                h(
                    '<tr><th scope="row"><code>{name}</code></th><td>{where}</td><td>{required}</td>'
                    '<td>{type}</td><td>{description} <span class="muted">{limits}</span></td></tr>',
                    name=p["name"],
                    where=p["in"],
                    required="yes" if p.get("required") else "no",
                    type=type_of(p.get("schema")),
                    description=p.get("description", ""),
                    limits=_limits(p.get("schema", {})),
                )
                for p in params
            ),
        )
        if params
        else Markup("")
    )
    body = op.get("requestBody")
    body_html = Markup("")
    if body:
        contents = body.get("content", {})
        body_html = h(
            "<p><strong>Request body</strong> ({required}): {types}</p>",
            required="required" if body.get("required") else "optional",
            types=join(
                (h("<code>{ct}</code> {t}", ct=ct, t=type_of(c.get("schema"))) for ct, c in contents.items()),
                "; ",
            ),
        )
    responses = op.get("responses", {})
    responses_html = h(
        """<table>
<caption>Responses</caption>
<thead><tr><th scope="col">status</th><th scope="col">description</th><th scope="col">body</th></tr></thead>
<tbody>{rows}</tbody>
</table>""",
        rows=join(
            h(
                '<tr><th scope="row">{status}</th><td>{description}</td><td>{types}</td></tr>',
                status=status,
                description=r.get("description", ""),
                types=join(
                    (
                        h("<code>{ct}</code> {t}", ct=ct, t=type_of(c.get("schema")))
                        for ct, c in r.get("content", {}).items()
                    ),
                    "; ",
                ),
            )
            for status, r in responses.items()
        ),
    )
    security = op.get("security")
    security_html = (
        h(
            "<p><strong>Security:</strong> {schemes}</p>",
            schemes=join(
                (
                    h(
                        "<code>{name}</code>{scopes}",
                        name=name,
                        scopes=f" ({', '.join(scopes)})" if scopes else "",
                    )
                    for requirement in security
                    for name, scopes in requirement.items()
                ),
                ", ",
            ),
        )
        if security
        else Markup("<p><strong>Security:</strong> none (anonymous)</p>")
    )
    return h(
        """<section class="op" aria-labelledby="{anchor}">
<h3 id="{anchor}"><span class="method">{method}</span> <code>{path}</code></h3>
<p>{summary}</p>
<p class="muted">{description}</p>
{security}{params}{body}{responses}
</section>""",
        anchor=anchor,
        method=method.upper(),
        path=path,
        summary=op.get("summary", ""),
        description=op.get("description", ""),
        security=security_html,
        params=params_html,
        body=body_html,
        responses=responses_html,
    )


def _schema(name: str, schema: dict[str, Any]) -> Markup:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    table = (
        h(
            """<table>
<caption>Fields of {name}</caption>
<thead><tr><th scope="col">field</th><th scope="col">type</th><th scope="col">required</th>
<th scope="col">description</th></tr></thead>
<tbody>{rows}</tbody>
</table>""",
            name=name,
            rows=join(
                h(
                    '<tr><th scope="row"><code>{field}</code></th><td>{type}</td><td>{required}</td>'
                    '<td>{description} <span class="muted">{limits}</span></td></tr>',
                    field=field,
                    type=type_of(prop),
                    required="yes" if field in required else "no",
                    description=prop.get("description", "") if isinstance(prop, dict) else "",
                    limits=_limits(prop) if isinstance(prop, dict) else "",
                )
                for field, prop in props.items()
            ),
        )
        if props
        else h("<p>{t}</p>", t=type_of(schema))
    )
    return h(
        '<section aria-labelledby="schema-{name}"><h3 id="schema-{name}">{name}</h3><p class="muted">{d}</p>'
        "{table}</section>",
        name=name,
        d=schema.get("description", ""),
        table=table,
    )


def _reference(spec: dict[str, Any]) -> Markup:
    groups: dict[str, list[Markup]] = {}
    for path, methods in spec["paths"].items():
        for method in METHODS:
            op = methods.get(method)
            if op is not None:
                tag = (op.get("tags") or ["Other"])[0]
                groups.setdefault(tag, []).append(_operation(path, method, op))
    tags = sorted(groups)
    schemes = spec.get("components", {}).get("securitySchemes", {})
    schemas = spec.get("components", {}).get("schemas", {})
    return h(
        """<h1>{title}: API reference</h1>
<p>{description}</p>
<p>Rendered from this server's <a href="/openapi.json">OpenAPI document</a> (OpenAPI {openapi}, API version
{version}).</p>
<nav aria-label="Contents"><h2 id="contents">Contents</h2><ul class="toc">{toc}
<li><a href="#security">Security schemes</a></li><li><a href="#schemas">Schemas</a></li></ul></nav>
{groups}
<h2 id="security">Security schemes</h2>
<table>
<caption>How to authenticate</caption>
<thead><tr><th scope="col">scheme</th><th scope="col">type</th><th scope="col">description</th></tr></thead>
<tbody>{schemes}</tbody>
</table>
<h2 id="schemas">Schemas</h2>
{schemas}
""",
        title=spec["info"]["title"],
        description=spec["info"].get("description", ""),
        openapi=spec.get("openapi", ""),
        version=spec["info"]["version"],
        toc=join(h('<li><a href="#tag-{slug}">{tag}</a></li>', slug=_slug(tag), tag=tag) for tag in tags),
        groups=join(
            h(
                '<section aria-labelledby="tag-{slug}"><h2 id="tag-{slug}">{tag}</h2>{ops}</section>',
                slug=_slug(tag),
                tag=tag,
                ops=join(groups[tag]),
            )
            for tag in tags
        ),
        schemes=join(
            h(
                '<tr><th scope="row"><code>{name}</code></th><td>{type}</td><td>{description}</td></tr>',
                name=name,
                type=" ".join(str(s.get(k, "")) for k in ("type", "scheme", "in", "name") if s.get(k)),
                description=s.get("description", ""),
            )
            for name, s in schemes.items()
        ),
        schemas=join(_schema(name, schemas[name]) for name in sorted(schemas)),
    )


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "other"
