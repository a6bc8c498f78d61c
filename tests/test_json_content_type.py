"""A JSON body is read only when it is sent as JSON (issue 29): `application/json` or a `+json` type. A
cross-site HTML form can post `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data`
without a preflight, so an operation that parsed such a body as JSON could be driven from any page (a share
link's comment, with the link's cookie). Every operation that reads a JSON body answers 415 otherwise, in its
app's error shape, and says so in /openapi.json."""

from __future__ import annotations

from typing import Any

import pytest

from tests.axiom_helpers import axiom_key, staff_headers
from tests.documents_support import make_key
from web.docs.api import build_api as build_docs_api
from web.hub.api import build_api as build_hub_api
from web.kernel.access import Agent, Anonymous, Commercial, Service, Staff
from web.kernel.routing import Operation

APPS = {"hub": build_hub_api(), "docs": build_docs_api()}
# Operations that parse a JSON body: a declared body model, or a JSON body the handler reads itself.
JSON_BODIES = [
    (app, op)
    for app, api in APPS.items()
    for op in api.operations
    if op.body is not None or (op.documented_body is not None and op.body_media == "application/json")
]
NOT_JSON_TYPES = (
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "application/jsonp",
    "text/json-ish",
)


def _id(case: tuple[str, Operation]) -> str:
    app, op = case
    return f"{app}:{op.method} {op.path}"


async def _headers(hub: Any, runtime: Any, register: Any, op: Operation) -> dict[str, str]:
    """A credential the operation accepts, so that the request reaches the body."""
    if isinstance(op.access, Anonymous):
        return {}
    if isinstance(op.access, Agent):
        return dict((await register())["headers"])
    if isinstance(op.access, Commercial):
        return dict((await axiom_key(hub))["headers"])
    if isinstance(op.access, Staff):
        return await staff_headers(runtime)
    assert isinstance(op.access, Service), op.access
    return dict((await make_key(runtime, org="Media Org"))["headers"])


def test_the_list_holds_the_operations_it_must():
    found = {(app, op.method, op.path) for app, op in JSON_BODIES}
    for expected in (
        ("docs", "POST", "/api/share/{token}/comments"),
        ("docs", "POST", "/api/share/{token}/verification"),
        ("docs", "POST", "/api/auth/refresh"),
        ("docs", "POST", "/oauth/register"),
        ("hub", "POST", "/api/pact/register"),
        ("hub", "POST", "/api/axiom/legislation/ingest"),
    ):
        assert expected in found


@pytest.mark.parametrize("case", JSON_BODIES, ids=_id)
async def test_a_json_body_of_another_media_type_is_a_415(hub, docs, runtime, register, case):
    app, op = case
    client = hub if app == "hub" else docs
    headers = await _headers(hub, runtime, register, op)
    path = op.path.replace("{", "").replace("}", "")  # any id: the media type is checked before it
    for media in NOT_JSON_TYPES:
        resp = await client.request(
            op.method, path, data=b'{"text": "hello"}', headers={**headers, "Content-Type": media}
        )
        text = await resp.text()
        assert resp.status == 415, (media, text)
        body = await resp.json(content_type=None)
        if op.error_model is not None:  # OAuth's own error body
            assert body["error"] == "invalid_client_metadata", body
            assert "application/json" in body["error_description"]
        elif app == "docs":
            assert resp.content_type == "application/problem+json"
            assert body["code"] == "unsupported_media_type"
            assert "application/json" in body["detail"]
        else:
            assert body["error"] == "unsupported_media_type"
            assert "application/json" in body["detail"]
    # No Content-Type at all is not JSON either.
    resp = await client.request(op.method, path, data=b'{"text": "hello"}', headers={**headers})
    assert resp.status == 415, await resp.text()


async def test_json_types_with_parameters_and_suffixes_are_read(docs, shared_open_link):
    token = shared_open_link
    for media in ("application/json", "application/json; charset=utf-8", "application/merge+json"):
        resp = await docs.post(
            f"/api/share/{token}/comments", data=b'{"text": "Read as JSON"}', headers={"Content-Type": media}
        )
        assert resp.status == 201, (media, await resp.text())
    # A body-less call of an operation whose body is optional needs no media type.
    resp = await docs.post("/api/auth/logout")
    assert resp.status == 401  # no credential: the body was not the problem


async def test_a_cross_site_form_cannot_comment_through_a_share_link(docs, shared_open_link):
    """What a page on another site can send without a preflight: a text/plain form whose body is JSON."""
    token = shared_open_link
    resp = await docs.post(
        f"/api/share/{token}/comments",
        data=b'{"text": "forged", "x": "="}',
        headers={"Content-Type": "text/plain", "Origin": "https://attacker.example"},
    )
    assert resp.status == 415, await resp.text()
    view = await (await docs.get(f"/api/share/{token}")).json()
    assert view["comments"] == []


@pytest.mark.parametrize("app", APPS)
def test_openapi_documents_the_json_media_type_and_the_415(app):
    spec = APPS[app].openapi()
    for path, methods in spec["paths"].items():
        for method, entry in methods.items():
            content = entry.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            assert set(content) == {"application/json"}, (method, path)
            assert "415" in entry["responses"], (method, path)
            assert "application/json" in entry["responses"]["415"]["description"]


@pytest.fixture
async def shared_open_link(docs: Any, runtime: Any) -> str:
    from tests.documents_support import upload_ready

    owner = await make_key(runtime, org="Media Org", name="Owner")
    doc = await upload_ready(docs, owner, b"# Plan\n\nText.\n", "plan.md")
    resp = await docs.post(
        f"/api/documents/{doc['id']}/share-link",
        headers=owner["headers"],
        json={"permission": "CommentOnly", "accessMode": "open"},
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["token"])
