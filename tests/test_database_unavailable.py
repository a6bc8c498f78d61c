"""When the database cannot serve (no connection can be made), a request is told to retry: 503 with
Retry-After and a plain reason, never a 500; once the database is back, the same request succeeds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests import conftest
from tests.conftest import PG_ADMIN_URL
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(
    not PG_ADMIN_URL,
    reason="refusing new connections to one database while the app runs needs PostgreSQL "
    "(ALTER DATABASE … ALLOW_CONNECTIONS); SQLite has no connections to refuse",
)


async def _refuse_connections(refuse: bool) -> None:
    await asyncio.to_thread(
        conftest._admin, f'ALTER DATABASE "{conftest.PG_DB}" ALLOW_CONNECTIONS {str(not refuse).lower()}'
    )
    if refuse:  # the pooled connections too: the next checkout has to connect
        await asyncio.to_thread(
            conftest._admin,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{conftest.PG_DB}' AND pid <> pg_backend_pid()",
        )


async def test_requests_get_503_with_retry_after_while_the_database_refuses_connections(
    hub: Any, docs: Any, register: Any
) -> None:
    agent = await register()
    topic = {"title": "Outage topic", "content": "# Answer\n\nYes.\n", "tier": "empirical"}
    await _refuse_connections(True)
    try:
        resp = await hub.post("/api/pact/topics", json=topic, headers=agent["headers"])
        assert resp.status == 503, await resp.text()
        assert resp.headers["Retry-After"].isdigit()
        body = await resp.json()
        assert "database" in body["detail"]
        assert "internal" not in body["detail"]
        on_docs = await docs.get("/api/documents", headers={"Authorization": "Bearer svc_sk_" + "0" * 40})
        assert on_docs.status == 503, await on_docs.text()
    finally:
        await _refuse_connections(False)

    async def created() -> bool:
        again = await hub.post("/api/pact/topics", json=topic, headers=agent["headers"])
        assert again.status in (201, 503), await again.text()
        return again.status == 201

    await eventually(created)
