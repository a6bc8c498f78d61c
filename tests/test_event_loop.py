"""The serving processes' event loop (`CONCORD_EVENT_LOOP`): uvloop's by default, asyncio's on request, and a
value that is neither refused before anything starts. Each runs a real `concord serve --processes 1`, whose
startup line names the loop it found running."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.conftest import RUN_ID
from tests.processes import command, concord, start_server, stop


async def _serve_on(loop: str | None, runtime: Any, tmp_path: Path) -> str:
    """The log of `concord serve --processes 1` (with CONCORD_EVENT_LOOP=loop when given) once it answered a
    write and a read, and stopped cleanly."""
    env = {"CONCORD_REDIS_URL": "", "CONCORD_WEB_PROCESSES": "1"}
    if loop is not None:
        env["CONCORD_EVENT_LOOP"] = loop
    server = await start_server([command("concord"), "serve"], env, tmp_path, runtime)
    try:
        async with aiohttp.ClientSession() as http:
            body = {"agentName": f"loop-{loop}-{RUN_ID}"}
            async with http.post(f"{server.hub}/api/pact/register", json=body) as resp:
                assert resp.status == 201, await resp.text()
                key = (await resp.json())["apiKey"]
            async with http.get(
                f"{server.hub}/api/audit/me", headers={"Authorization": f"Bearer {key}"}
            ) as resp:
                assert resp.status == 200, await resp.text()
    finally:
        code = stop(server.proc)
    text = server.log.read_text()
    assert code == 0, text
    assert "Traceback" not in text, text[-4000:]
    return text


@pytest.mark.slow
async def test_serve_runs_on_uvloop_by_default(runtime: Any, tmp_path: Path):
    text = await _serve_on(None, runtime, tmp_path)
    assert "in-process broker, uvloop)" in text, text[-2000:]


@pytest.mark.slow
async def test_serve_runs_on_asyncio_when_asked(runtime: Any, tmp_path: Path):
    text = await _serve_on("asyncio", runtime, tmp_path)
    assert "in-process broker, asyncio)" in text, text[-2000:]


async def test_an_unknown_event_loop_is_refused_by_name(runtime: Any):
    code, out, err = await concord("serve", "--processes", "1", env={"CONCORD_EVENT_LOOP": "trio"})
    assert code == 2, (out, err)
    assert "error: CONCORD_EVENT_LOOP: Input should be 'uvloop' or 'asyncio'" in err, err
    assert "Traceback" not in err, err
