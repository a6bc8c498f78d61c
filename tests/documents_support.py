"""Helpers for the document API tests: service keys made the way the operator makes them, uploads,
and the shared fixture folder (../shared/fixtures/documents beside the repository). Documents the tests
build themselves are in tests/built_documents.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.waiting import eventually

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "documents"
ALL_SCOPES = "documents:read,documents:write,comments:read,comments:write,tap:read,tap:write"


def fixture_path(name: str = "") -> Path:
    """A shared fixture (the folder when no name is given); skips the test, saying why, when absent."""
    if not FIXTURES.is_dir():
        pytest.skip(
            f"shared fixtures not found at {FIXTURES} (they come with ../shared beside the repository; "
            "the documents the tests build are converted either way)"
        )
    return FIXTURES / name


async def make_key(
    runtime: Any,
    org: str = "Acme",
    scopes: str = ALL_SCOPES,
    name: str | None = None,
    principal: str | None = None,
) -> dict:
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM

    async with runtime.db.transaction() as session:
        made = await servicekeys.create(
            session,
            SYSTEM,
            org_name=org,
            scopes=servicekeys.parse_scopes(scopes),
            name=name,
            principal=principal,
        )
    made["headers"] = {"X-Api-Key": made["apiKey"]}
    return made


async def upload(docs: Any, key: dict, data: bytes, filename: str, **fields: str) -> Any:
    form = aiohttp.FormData()
    for k, v in fields.items():
        form.add_field(k, v)
    form.add_field("file", data, filename=filename, content_type="application/octet-stream")
    return await docs.post("/api/documents", data=form, headers=key["headers"])


async def upload_ready(docs: Any, key: dict, data: bytes, filename: str, **fields: str) -> dict:
    resp = await upload(docs, key, data, filename, **fields)
    assert resp.status == 202, await resp.text()
    doc = await resp.json()
    return await wait_status(docs, key, doc["id"], "ready")


async def wait_status(docs: Any, key: dict, doc_id: str, status: str) -> dict:
    async def check() -> dict | None:
        resp = await docs.get(f"/api/documents/{doc_id}", headers=key["headers"])
        body = await resp.json()
        if body["status"] not in ("processing", status):
            raise AssertionError(f"document ended {body['status']}: {body.get('error')}")
        return body if body["status"] == status else None

    return await eventually(check, timeout=30)


async def content(docs: Any, key: dict, doc_id: str) -> str:
    resp = await docs.get(f"/api/tap/{doc_id}/content", headers=key["headers"])
    assert resp.status == 200, await resp.text()
    return (await resp.json())["content"]
