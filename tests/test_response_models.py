"""Response models (issue 10, item 5): every JSON operation of both apps declares the body it answers,
and the suite's clients check each real response against that declaration (tests/response_check.py).
These tests keep the check itself honest: it must catch a wrong body, or it proves nothing."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from tests.response_check import NOT_JSON, CheckedClient
from web.kernel.appkeys import BODY_LIMIT, ERROR_STYLE
from web.kernel.errors import HubError, Problem
from web.kernel.middleware import request_context
from web.kernel.routing import API, Api, Routes, json_response
from web.kernel.wire import Timestamp


def _operations() -> list[Any]:
    from web.docs.api import build_api as docs_api
    from web.hub.api import build_api as hub_api

    return [op for build in (hub_api, docs_api) for op in build().operations]


def test_every_json_operation_of_both_apps_declares_its_response_model():
    undeclared = [
        f"{op.method} {op.path}"
        for op in _operations()
        if op.response is None and (op.method, op.path) not in NOT_JSON
    ]
    assert undeclared == []


def test_the_listed_exceptions_are_real_operations():
    ops: dict[tuple[str, str], list[Any]] = {}
    for op in _operations():
        ops.setdefault((op.method, op.path), []).append(op)
    for key in NOT_JSON:
        assert key in ops, key
    for key in NOT_JSON:  # in one app at least (the hub's OAuth discovery paths, not the document API's)
        assert any(op.response is None for op in ops[key]), f"{key} declares a model: drop it from NOT_JSON"


async def test_the_suite_clients_check_both_apps(hub, docs):
    for client in (hub, docs):
        assert isinstance(client, CheckedClient)
        assert client.checker is not None
        before = client.checker.checked
        assert (await client.get("/healthz")).status == 200
        assert client.checker.checked == before + 1


# --- the check catches what it is for ----------------------------------------------------------------


class Thing(BaseModel):
    id: str
    count: int
    note: str | None
    createdAt: Timestamp


GOOD = {"id": "t1", "count": 2, "note": None, "createdAt": "2024-05-01T06:00:00+00:00"}
BODIES = {
    "good": (200, GOOD),
    "missing": (200, {k: v for k, v in GOOD.items() if k != "count"}),
    "wrong-type": (200, {**GOOD, "count": "2"}),
    "extra": (200, {**GOOD, "secret": "x"}),
    "bad-timestamp": (200, {**GOOD, "createdAt": "yesterday"}),
    "bad-error": (404, {"message": "no error or detail"}),
    "good-error": (404, {"error": "not_found", "detail": "no such thing", "field": "id"}),
}


def _tiny_app(style: str = "hub") -> web.Application:
    """An app built the way web/app.py builds both: an Api of route tables, the shared middleware."""
    table = Routes()

    @table.route("GET", "/things/{case}", summary="A thing", tags=["Things"], response=Thing)
    async def thing(request: web.Request) -> web.Response:
        status, body = BODIES[request.match_info["case"]]
        return json_response(body, status=status)

    @table.route("POST", "/things", summary="Make a thing", tags=["Things"], response=Thing, status=201)
    async def make(request: web.Request) -> web.Response:
        return json_response(GOOD)  # 200, but 201 is declared

    @table.route("GET", "/undeclared", summary="No model", tags=["Things"])
    async def undeclared(request: web.Request) -> web.Response:
        return json_response({"anything": True})

    api = Api("Tiny", "1.0.0", "A test app", HubError if style == "hub" else Problem, tables=[table])
    app = web.Application(middlewares=[request_context])
    app[API] = api
    app[ERROR_STYLE] = style
    app[BODY_LIMIT] = 1024
    api.add_routes(app)
    return app


async def test_a_body_matching_its_model_passes(aiohttp_client):
    client = await aiohttp_client(_tiny_app())
    resp = await client.get("/things/good")
    assert await resp.json() == GOOD
    resp = await client.get("/things/good-error")
    assert resp.status == 404
    assert client.checker.checked == 2


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", r'"count" is a required property'),
        ("wrong-type", r'count: "2" is not of type "integer"'),
        ("extra", r"Additional properties are not allowed \('secret' was unexpected\)"),
        ("bad-timestamp", r'createdAt: "yesterday" is not a "date-time"'),
        ("bad-error", r'"error" is a required property'),
    ],
)
async def test_a_wrong_body_fails_naming_the_operation_status_and_error(aiohttp_client, case, message):
    client = await aiohttp_client(_tiny_app())
    with pytest.raises(AssertionError, match=message) as failed:
        await client.get(f"/things/{case}")
    status = BODIES[case][0]
    assert f"GET /things/{case} -> {status}: operation GET /things/{{case}}" in str(failed.value)


async def test_a_wrong_status_and_an_undeclared_json_body_fail(aiohttp_client):
    client = await aiohttp_client(_tiny_app())
    with pytest.raises(AssertionError, match=r"operation POST /things: status 200, declared 201"):
        await client.post("/things")
    with pytest.raises(AssertionError, match=r"operation GET /undeclared answers JSON but declares no"):
        await client.get("/undeclared")


async def test_errors_of_unknown_routes_are_checked_against_the_error_model_too(aiohttp_client):
    client = await aiohttp_client(_tiny_app("problem"))
    resp = await client.get("/nowhere")
    assert resp.status == 404
    assert resp.content_type == "application/problem+json"
    assert client.checker.checked == 1
    wrong_type = r"error content type application/json, expected application/problem\+json"
    with pytest.raises(AssertionError, match=wrong_type):
        await client.get("/things/good-error")  # a hub error body on the problem+json app
