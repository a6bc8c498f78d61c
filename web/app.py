"""The two aiohttp applications and their shared middleware stack. Each app gets the process runtime; the
hub also attaches the web-only services its routes use (rate limits, read cache, citation index)."""

from __future__ import annotations

from aiohttp import web

from domain.axiom.citations import IndexHolder
from runtime.process import Runtime
from web.docs import api as docs_api
from web.docs.mcp import transport as mcp_server
from web.docs.oauth.challenge import bearer_challenge
from web.hub import api as hub_api
from web.hub.axiom.keys import CITATION_INDEX
from web.hub.pages import review as review_pages
from web.kernel import home
from web.kernel import metrics as metrics_route
from web.kernel.appkeys import APP_NAME, BODY_LIMIT, ERROR_STYLE, RATE_LIMITS, READ_CACHE, RUNTIME
from web.kernel.middleware import request_context, serve_hot_reads
from web.kernel.ratelimit import RateLimits
from web.kernel.readcache import ReadCache
from web.kernel.routing import API, Api, answer_every_method, json_response

REFERENCE = [
    home.Link("API reference", "/docs", "every operation, its parameters, bodies, responses and security"),
    home.Link("OpenAPI document", "/openapi.json", "the same, as OpenAPI 3.1 JSON for tools and clients"),
    home.Link(
        "PACT profile", "/.well-known/pact.json", "what this app implements of PACT v2.0.3, for its clients"
    ),
]
HUB_LINKS = [
    *REFERENCE,
    home.Link("Review desk", "/review/", "staff sign in with their key to answer escalations and decide"),
]
HUB_GUIDES = [
    home.Link("docs/hub.md", None, "registration, topics, content and sections, events, statistics, audit"),
    home.Link(
        "docs/consensus.md", None, "proposals and votes, lifecycle, intents, constraints, bounty, wallet"
    ),
    home.Link("docs/axiom.md", None, "commercial keys, verified facts, legislation, citation resolution"),
    home.Link(
        "docs/market.md", None, "products, comparison, price history, scraping, carts, fuel, quote rates"
    ),
    home.Link(
        "docs/work.md", None, "the work economy: claims, price observations, credits, curators, defects"
    ),
    home.Link(
        "docs/review.md", None, "people keep the final word: escalations, objected proposals, the desk"
    ),
    home.Link("docs/pact.md", None, "what Concord implements of PACT v2.0.3; /.well-known/pact.json"),
]
DOCS_GUIDES = [
    home.Link(
        "docs/documents.md", None, "service keys, upload and conversion, share links, comments, agents"
    ),
    home.Link(
        "docs/mcp.md", None, "the MCP server: connecting a client, tools, documents as resources, prompts"
    ),
    home.Link("docs/pact.md", None, "what Concord implements of PACT v2.0.3; /.well-known/pact.json"),
]


def _base_app(
    rt: Runtime,
    name: str,
    api: Api,
    style: str,
    body_limit: int,
    *,
    links: list[home.Link],
    guides: list[home.Link],
) -> web.Application:
    app = web.Application(middlewares=[request_context], client_max_size=body_limit)
    app[RUNTIME] = rt
    app[API] = api
    app[APP_NAME] = name
    app[ERROR_STYLE] = style
    app[BODY_LIMIT] = body_limit
    api.add_routes(app)

    # The OpenAPI document and the pages rendered from it are built when first asked for (once per process,
    # Api.document): a process that never serves them (a worker's, most of the suite's) does not pay the
    # half second their schemas take at start.
    async def openapi(_request: web.Request) -> web.Response:
        # The OpenAPI document itself: outside the Api, no model describes it.
        return json_response(api.document())

    app.router.add_get("/openapi.json", openapi)
    metrics_route.add_routes(app)  # for Prometheus, outside the API like /openapi.json
    app.on_startup.append(_start_live_events)
    app.on_shutdown.append(_end_event_streams)
    home.add_routes(app, api.document, site=api.title, links=links, guides=guides)
    return app


async def _start_live_events(app: web.Application) -> None:
    """The process's live events (one hub for both apps): only a process that serves an app follows them."""
    await app[RUNTIME].live.start()


async def _end_event_streams(app: web.Application) -> None:
    """On shutdown, before open connections are waited for: every event stream ends (its client resumes
    on another process with Last-Event-ID) rather than holding the stop until it times out."""
    app[RUNTIME].live.close()


def _rate_limits(app: web.Application, rt: Runtime) -> None:
    """Counted in Redis when configured, else in the machine's shared file under the supervisor; their
    Redis connections closed with the app."""
    app[RATE_LIMITS] = RateLimits(rt.settings, rt.supervised.rate_limit_path if rt.supervised else None)
    app.on_cleanup.append(_close_rate_limits)


async def _close_rate_limits(app: web.Application) -> None:
    await app[RATE_LIMITS].close()


def create_hub_app(rt: Runtime) -> web.Application:
    app = _base_app(
        rt, "hub", hub_api.build_api(), "hub", rt.settings.max_body_bytes, links=HUB_LINKS, guides=HUB_GUIDES
    )
    _rate_limits(app, rt)
    app[READ_CACHE] = ReadCache(rt.db, rt.generation, rt.settings.read_cache_seconds)
    serve_hot_reads(app, app[READ_CACHE])
    app[CITATION_INDEX] = IndexHolder(rt.generation.current)
    review_pages.add_routes(app)  # the review desk for people: HTML, outside the API's tables
    answer_every_method(app)  # last: every resource, the API's and the pages', answers each method
    return app


def create_metrics_app(rt: Runtime) -> web.Application:
    """`/metrics` alone, for a process that serves no app (`concord scheduler`): its sweep runs would
    otherwise be seen only where it shares `CONCORD_METRICS_DIR` with a web process, never in Kubernetes."""
    app = web.Application()
    app[RUNTIME] = rt
    app[ERROR_STYLE] = "hub"
    metrics_route.add_routes(app)
    return app


def create_docs_app(rt: Runtime) -> web.Application:
    app = _base_app(
        rt,
        "documents",
        docs_api.build_api(),
        "problem",
        rt.settings.max_upload_bytes,
        links=REFERENCE,
        guides=DOCS_GUIDES,
    )
    _rate_limits(app, rt)  # sign-ins (POST /api/auth/login), OAuth registrations
    app.middlewares.insert(0, bearer_challenge)  # outside the error rendering: it sees the 401 answered
    mcp_server.add_routes(app)
    answer_every_method(app)
    return app
