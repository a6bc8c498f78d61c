"""An operation serialises its handler's value through its declared response model (issue 32): a handler
returns a dict, a list or a model instance, and the routing layer checks it strictly against `response=` and
writes it. An answer the model does not describe is a programming error, refused with a 500 in the app's
error body (and logged, naming the operation), and a test that meets one fails at the request.

A tiny Api with one route per case, served by aiohttp's test client: the routing layer's public interface."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import BaseModel, Field

from web.kernel.appkeys import BODY_LIMIT, ERROR_STYLE
from web.kernel.errors import HubError
from web.kernel.middleware import request_context
from web.kernel.replies import Reply
from web.kernel.routing import API, Api, Routes


class Item(BaseModel):
    itemId: str
    count: int


class Listing(BaseModel):
    items: list[Item]
    total: int
    note: str | None = Field(default=None, description="Only when there is one")
    links: dict[str, str] = Field(default_factory=dict, alias="_links")


class Flag(BaseModel):
    on: bool


@dataclass(frozen=True)
class Counted:
    """A record whose attributes are named as Listing's fields."""

    items: list[Item]
    total: int


routes = Routes()
# Each route answers the value its query's `case` names: what a handler of the Listing operation returned.
VALUES: dict[str, Any] = {
    "plain": {"items": [{"itemId": "a", "count": 2}], "total": 1},
    "noted": {"items": [], "total": 0, "note": None, "_links": {"self": "/x"}},
    "tuple": {"items": ({"itemId": "é", "count": 0},), "total": 1},
    "model": Listing(items=[Item(itemId="b", count=3)], total=1),
    "undeclared": {"items": [], "total": 0, "secret": "x"},
    "nested_undeclared": {"items": [{"itemId": "a", "count": 1, "extra": True}], "total": 1},
    "missing": {"items": []},
    "string_for_int": {"items": [], "total": "1"},
    "bool_for_int": {"items": [], "total": True},
    "other_model": Flag(on=True),
    "record": Counted([Item(itemId="c", count=1)], 1),
    "bad_record": Counted([], "one"),  # type: ignore[arg-type]
}


@routes.route("GET", "/listing", summary="A listing", tags=["Test"], response=Listing)
async def listing(request: web.Request) -> Any:
    return VALUES[request.query["case"]]


@routes.route(
    "POST", "/flag", summary="A flag", tags=["Test"], response=Flag, status=201, also={202: "Later"}
)
async def flag(request: web.Request) -> Any:
    if request.query.get("later"):
        return Reply({"on": False}, status=202, headers={"Retry-After": "3"})
    return {"on": True}


@routes.route("GET", "/untyped", summary="No model", tags=["Test"])
async def untyped(request: web.Request) -> Any:
    return {"any": "thing"}


def app() -> web.Application:
    application = web.Application(middlewares=[request_context])
    api = Api("Test", "1", "A test API", HubError, tables=[routes])
    application[API] = api
    application[ERROR_STYLE] = "hub"
    application[BODY_LIMIT] = 1024
    api.add_routes(application)
    return application


@pytest.fixture
async def plain() -> Any:
    """A client without the suite's response checker: what any caller gets."""
    client = TestClient(TestServer(app()))
    await client.start_server()
    yield client
    await client.close()


@pytest.fixture
async def checked(aiohttp_client: Any) -> Any:
    """The suite's client (tests/response_check.py CheckedClient)."""
    return await aiohttp_client(app())


async def test_a_dict_goes_out_as_given_through_the_model(checked):
    resp = await checked.get("/listing?case=plain")
    assert resp.status == 200
    assert resp.content_type == "application/json"
    # Fields the dict did not give (note, _links) do not appear as nulls or defaults.
    assert await resp.json() == {"items": [{"itemId": "a", "count": 2}], "total": 1}
    resp = await checked.get("/listing?case=noted")
    assert await resp.json() == {"items": [], "total": 0, "note": None, "_links": {"self": "/x"}}
    resp = await checked.get("/listing?case=tuple")
    assert await resp.json() == {"items": [{"itemId": "é", "count": 0}], "total": 1}


async def test_a_model_instance_goes_out_by_alias(checked):
    resp = await checked.get("/listing?case=model")
    assert resp.status == 200
    body = await resp.json()
    assert body == {"items": [{"itemId": "b", "count": 3}], "total": 1, "note": None, "_links": {}}


async def test_a_record_named_as_the_models_fields_goes_out_through_it(checked):
    resp = await checked.get("/listing?case=record")
    assert resp.status == 200
    body = await resp.json()
    assert body == {"items": [{"itemId": "c", "count": 1}], "total": 1, "note": None, "_links": {}}


async def test_the_status_is_the_routes_unless_a_reply_says_otherwise(checked):
    resp = await checked.post("/flag")
    assert resp.status == 201
    assert await resp.json() == {"on": True}
    resp = await checked.post("/flag?later=1")
    assert resp.status == 202
    assert resp.headers["Retry-After"] == "3"
    assert await resp.json() == {"on": False}


@pytest.mark.parametrize(
    ("case", "named"),
    [
        ("undeclared", "secret: Extra inputs are not permitted"),
        ("nested_undeclared", "items.0.extra: Extra inputs are not permitted"),
        ("missing", "total: Field required"),
        ("string_for_int", "total: Input should be a valid integer"),
        ("bool_for_int", "total: Input should be a valid integer"),
        ("other_model", "answered a Flag, not a Listing"),
        ("bad_record", "total: Input should be a valid integer"),
    ],
)
async def test_an_answer_the_model_does_not_describe_is_a_500_naming_the_operation(
    plain, caplog, case, named
):
    with caplog.at_level(logging.ERROR, logger="concord.web"):
        resp = await plain.get(f"/listing?case={case}")
    assert resp.status == 500
    body = await resp.json()
    assert body["error"] == "internal_error"
    assert "Listing" not in json.dumps(body)  # no internals to the client
    assert "secret" not in json.dumps(body)
    logged = [r for r in caplog.records if r.exc_info and "GET /listing" in str(r.exc_info[1])]
    assert logged, "the mismatch is logged with the operation"
    assert named in str(logged[0].exc_info[1])


async def test_a_handler_answering_a_value_without_a_model_is_refused(plain):
    resp = await plain.get("/untyped")
    assert resp.status == 500


async def test_the_suites_client_fails_the_test_at_the_request(checked):
    with pytest.raises(AssertionError, match=r"GET /listing.*total: Field required"):
        await checked.get("/listing?case=missing")
