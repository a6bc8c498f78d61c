"""Both APIs take an escalation's text as `question` (the spec's name) or `message` (the PACT CLI's): one of
them is required, both only when they agree, and each answer carries the text under both names."""

from __future__ import annotations

from typing import Any

import pytest

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready

BODIES = [
    {"question": "Is it legal?"},
    {"message": "Is it legal?"},
    {"question": "Is it legal?", "message": "Is it legal?"},
]


async def _doc_escalate(docs: Any, runtime: Any) -> Any:
    key = await make_key(runtime, org="Acme", name="asker")
    doc = await upload_ready(docs, key, b"# Plan\n\nIntro.\n", "plan.md")
    base = f"/api/tap/{doc['id']}"
    assert (
        await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": "Asker"})
    ).status == 201

    async def post(body: dict[str, Any]) -> Any:
        return await docs.post(f"{base}/escalate", headers=key["headers"], json=body)

    return post


async def _hub_escalate(hub: Any, register: Any) -> Any:
    topic_id, (agent, *_) = await open_topic(hub, register)

    async def post(body: dict[str, Any]) -> Any:
        return await hub.post(f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json=body)

    return post


@pytest.mark.parametrize("app", ["hub", "docs"])
async def test_question_or_message_on_both_apis(app, hub, docs, runtime, register):
    post = await (_hub_escalate(hub, register) if app == "hub" else _doc_escalate(docs, runtime))
    for body in BODIES:
        resp = await post(body)
        assert resp.status == 201, (body, await resp.text())
        raised = await resp.json()
        assert (raised["question"], raised["message"]) == ("Is it legal?", "Is it legal?")

    resp = await post({"question": "Is it legal?", "message": "Is it wise?"})
    assert resp.status == 400
    refused = await resp.json()
    assert refused["field"] == "question"
    assert refused["fields"] == ["question", "message"]
    assert "question and message" in refused["detail"]

    for body in ({}, {"priority": "low" if app == "docs" else "normal"}):
        resp = await post(body)
        assert resp.status == 400
        refused = await resp.json()
        assert refused["field"] == "question"
        assert "question (or message) is required" in refused["detail"]


async def test_openapi_documents_both_names(hub, docs):
    for client, path in ((hub, "/api/pact/{topicId}/escalate"), (docs, "/api/tap/{docId}/escalate")):
        spec = await (await client.get("/openapi.json")).json()
        ref = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        schema = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert {"question", "message"} <= set(schema["properties"]), path
        # One of the two with some text (the other absent or null): what the schema can say of "both only
        # if equal".
        assert [branch["required"] for branch in schema["oneOf"]] == [["question"], ["message"]], path
        for branch in schema["oneOf"]:
            given, other = branch["required"][0], {"question": "message", "message": "question"}
            assert branch["properties"][given] == {"type": "string", "pattern": r"\S"}, path
            assert branch["properties"][other[given]] == {"type": "null"}, path
        assert "both only if equal" in schema["description"], path
