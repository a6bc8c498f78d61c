"""Literal paths win over placeholders for every method: walks every route of both apps and checks that a
request to a route's path reaches that route's resource whatever the method, and that over HTTP a literal
path answers a method it does not serve (OPTIONS, HEAD, any other) with 405 and its own Allow, never the
methods of a placeholder route that also matches it (/api/axiom/legislation/{docId} and .../ingest)."""

from __future__ import annotations

import re

from aiohttp import hdrs, web
from aiohttp.test_utils import make_mocked_request

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND")


def _resources(app: web.Application) -> list[web.Resource]:
    return [r for r in app.router.resources() if isinstance(r, web.Resource)]


def _served(resource: web.Resource) -> set[str]:
    return {route.method for route in resource} - {hdrs.METH_ANY}


def _sample(resource: web.Resource) -> str:
    """A path the resource matches: its placeholders filled with a value no literal segment has."""
    return re.sub(r"{[^}]+}", "sample-0", resource.canonical)


async def test_every_route_answers_every_method_of_its_own_path(hub, docs):
    for client in (hub, docs):
        app = client.server.app
        resources = _resources(app)
        canonical = [r.canonical for r in resources]
        assert sorted({c for c in canonical if canonical.count(c) > 1}) == []  # a second one is never reached
        for resource in resources:
            path = _sample(resource)
            for method in METHODS:
                match = await app.router.resolve(make_mocked_request(method, path, app=app))
                assert match.route.resource is resource, (method, path, match.route.resource)


async def test_a_literal_path_answers_405_with_its_own_allow(hub, docs):
    checked = 0
    for client in (hub, docs):
        for resource in _resources(client.server.app):
            if "{" in resource.canonical:
                continue
            served = _served(resource)
            allow = ",".join(sorted(served))
            for method in sorted({"OPTIONS", "HEAD", *(set(METHODS) - {"PROPFIND"})} - served):
                resp = await client.request(method, resource.canonical)
                assert resp.status == 405, (method, resource.canonical, resp.status)
                assert resp.headers["Allow"] == allow, (method, resource.canonical)
                checked += 1
    assert checked > 100


async def test_ingest_is_not_taken_for_an_instrument_id(hub):
    for method in ("OPTIONS", "HEAD", "GET", "PUT"):
        resp = await hub.request(method, "/api/axiom/legislation/ingest")
        assert (resp.status, resp.headers["Allow"]) == (405, "POST"), method
        if method != "HEAD":
            body = await resp.json()
            assert body["detail"] == f"{method} is not allowed on /api/axiom/legislation/ingest"
    # The placeholder route still answers its own path.
    resp = await hub.request("OPTIONS", "/api/axiom/legislation/some-act")
    assert (resp.status, resp.headers["Allow"]) == (405, "GET")
