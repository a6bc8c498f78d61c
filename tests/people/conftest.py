"""Fixtures of the people tests: a person of an organisation, created as the operator does
(`concord users create`, the password on standard input), and a sign-in through HTTP."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

PASSWORD = "correct horse battery"
ALL_SCOPES = "documents:read,documents:write,comments:read,comments:write,tap:read,tap:write"


@pytest.fixture
def create_user(
    runtime: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Runs `concord users create` with the password on standard input; the created person (JSON)."""
    import concord_cli

    async def make(
        email: str = "Ada@Example.org", org: str = "Acme", scopes: str = ALL_SCOPES, password: str = PASSWORD
    ) -> dict[str, Any]:
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        argv = ["users", "create", "--org", org, "--email", email, "--scopes", scopes]
        code = await asyncio.to_thread(concord_cli.main, argv)
        out = capsys.readouterr()
        assert code == 0, out.err
        assert password not in out.out + out.err
        return dict(json.loads(out.out))

    return make


@pytest.fixture
def login(docs: Any) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Signs in through POST /api/auth/login; the token pair, with `headers` carrying the access token."""

    async def do(email: str = "ada@example.org", password: str = PASSWORD, **extra: Any) -> dict[str, Any]:
        resp = await docs.post("/api/auth/login", json={"email": email, "password": password, **extra})
        assert resp.status == 200, await resp.text()
        pair = dict(await resp.json())
        pair["headers"] = {"Authorization": f"Bearer {pair['accessToken']}"}
        return pair

    return do
