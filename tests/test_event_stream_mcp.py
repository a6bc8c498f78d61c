"""The MCP server's `subscriptions/listen` hears of a followed document's change as soon as the process's
live events bring one of its events (infra/live), not at the watcher's next interval."""

from __future__ import annotations

from typing import Any

import anyio

from tests.documents_support import make_key, upload_ready
from tests.test_mcp import connect

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"


async def test_a_listen_stream_hears_a_merge_before_the_watch_interval(docs, runtime, settings, monkeypatch):
    monkeypatch.setattr(settings, "mcp_watch_seconds", 60)  # beyond the wait below: only an event can wake it
    keys = [await make_key(runtime, org="Listen Org", name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    uri = f"concord://documents/{doc['id']}"
    async with connect(docs, keys[1]) as client, client.listen(resource_subscriptions=[uri]) as changes:
        assert changes.honored.resource_subscriptions == [uri]
        body = {"sectionId": "sec:plan:budget", "content": "More money.", "summary": "s"}
        resp = await docs.post(f"{base}/proposals", headers=keys[0]["headers"], json=body)
        assert resp.status == 201, await resp.text()
        proposal_id = (await resp.json())["proposalId"]
        for key in keys[1:]:
            resp = await docs.post(f"{base}/proposals/{proposal_id}/approve", headers=key["headers"])
            assert resp.status == 200, await resp.text()
        heard: list[Any] = []
        with anyio.fail_after(30):
            async for event in changes:
                heard.append(getattr(event, "uri", None))
                if uri in heard:
                    break
    assert uri in heard
