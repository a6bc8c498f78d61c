"""A JSON body is validated as strictly as its JSON Schema reads (issue 14): no value is coerced from another
JSON type, so what /openapi.json refuses the operation refuses too, with a 400 naming the field; an integer
field takes 9.0 as JSON Schema does; a query parameter given twice is refused, not read as its first; a form
that cannot be parsed is a 400."""

from __future__ import annotations

import pytest

from tests.test_topics import create_topic

TOPIC = {"title": "Strict bodies", "content": "# A\n\nSome text here.\n", "tier": "empirical"}


async def test_a_number_is_not_a_date_and_not_a_boolean(hub, register):
    agent = await register()
    for field, value in (("expiryDate", 0), ("effectiveDate", 1700000000), ("expiryDate", True)):
        resp = await hub.post("/api/pact/topics", headers=agent["headers"], json={**TOPIC, field: value})
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["field"] == field
    resp = await hub.post(
        "/api/pact/topics", headers=agent["headers"], json={**TOPIC, "expiryDate": "2030-01-01"}
    )
    assert resp.status == 201, await resp.text()

    for flag in (0, 1, "true"):
        resp = await hub.post(
            "/api/market/cart/optimise",
            json={"items": [{"query": "paint", "quantity": 1}], "preferPickup": flag},
        )
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["field"] == "preferPickup"

    spec = await (await hub.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    assert schemas["CartBody"]["properties"]["preferPickup"]["type"] == "boolean"
    expiry = schemas["TopicCreateBody"]["properties"]["expiryDate"]["anyOf"]
    assert {"type": "string", "format": "date"} in expiry


async def test_integers_take_whole_numbers_only(hub, register):
    agent = await register()
    resp = await hub.post("/api/pact/topics", headers=agent["headers"], json=TOPIC)
    topic = await resp.json()
    base = f"/api/pact/{topic['id']}"
    for score in ("9", 9.5, True):
        resp = await hub.post(
            f"{base}/salience", headers=agent["headers"], json={"sectionId": "sec:a", "score": score}
        )
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["field"] == "score"
    resp = await hub.post(
        f"{base}/salience", headers=agent["headers"], json={"sectionId": "sec:a", "score": 9.0}
    )
    assert resp.status in (200, 201), await resp.text()
    assert (await resp.json())["score"] == 9


async def test_a_repeated_query_parameter_is_refused(hub):
    resp = await hub.get("/api/pact/topics?limit=5&limit=6")
    assert resp.status == 400
    body = await resp.json()
    assert body["field"] == "limit"
    assert "once" in body["detail"]
    assert (await hub.get("/api/pact/topics?limit=5")).status == 200


async def test_a_query_string_asked_again_is_read_as_the_first_time(hub, register):
    """The topic list's queries are parsed once per query string and kept (a bounded set): a refused one is
    refused every time, and one asked after many others still reads as it did."""
    agent = await register()
    for n in range(3):
        await create_topic(hub, agent, title=f"Kept query {n}")
    for _ in range(2):
        resp = await hub.get("/api/pact/topics?limit=0")
        assert resp.status == 400
        assert (await resp.json())["field"] == "limit"
    first = await (await hub.get("/api/pact/topics?limit=2&offset=1")).json()
    assert (first["limit"], first["offset"], len(first["topics"])) == (2, 1, 2)
    for n in range(300):  # more distinct query strings than are kept
        assert (await hub.get(f"/api/pact/topics?limit=1&offset={n}")).status == 200
    again = await (await hub.get("/api/pact/topics?limit=2&offset=1")).json()
    assert again == first
    assert (await hub.get("/api/pact/topics?limit=0")).status == 400


@pytest.mark.parametrize(
    ("app", "path"),
    [("hub", "/review/sign-in"), ("docs", "/oauth/authorize"), ("docs", "/share/not-a-token/verify")],
)
async def test_an_unreadable_form_is_a_400_not_a_500(hub, docs, app, path):
    """A form body aiohttp cannot parse (multipart without its boundary, or without its closing one) is the
    client's mistake, whichever page's form it was posted to."""
    client = hub if app == "hub" else docs
    for content_type, body in (
        ("multipart/form-data", b"email=a%40b.example"),
        ("multipart/form-data; boundary=xx", b'--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\nv'),
    ):
        resp = await client.post(path, data=body, headers={"Content-Type": content_type})
        assert 400 <= resp.status < 500, (path, content_type, resp.status, await resp.text())
