"""Fixtures of the reviewers' review tests: a reviewer's staff key, a document with a team of agents, a
local webhook that records what it receives."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from tests.axiom_helpers import staff_headers
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


@pytest.fixture
async def reviewer(runtime: Any) -> dict[str, str]:
    return await staff_headers(runtime, "Rey Reviewer", roles=("reviewer",))


@pytest.fixture
async def team(docs: Any, runtime: Any) -> dict[str, Any]:
    """A ready document (plan.md) joined by an editor and two reviewers (agents), as agents do."""
    roles = ("editor", "reviewer", "reviewer")
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, roles, strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return {"keys": keys, "doc": doc, "base": base}


@pytest.fixture
async def webhook(aiohttp_server: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The escalation webhook, on loopback: the bodies it received, in order."""
    received: list[dict] = []

    async def hook(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    server = await aiohttp_server(app)
    monkeypatch.setattr(settings, "escalation_webhook_url", str(server.make_url("/hook")))
    monkeypatch.setattr(settings, "outbound_trusted_hosts", [server.host])  # the operator's own service
    return received
