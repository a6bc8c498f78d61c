"""What a `concord` process imports before it does anything: the heavy optional libraries load where they are
used (a cart solved, a page scraped, a file converted or downloaded, the first MCP request), never in the
import chain of a command or a server that has not used them. A test of import structure, not of time."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import free_port, ready, start, stop

# Each costs a process 0.1–0.4 s of CPU to import (measured with -X importtime on 2026-11-27).
HEAVY = {"scipy", "numpy", "mcp", "mcp_types", "extruct", "rdflib", "pyRdfa", "pypdf", "docx", "bs4"}
CONCORD = [sys.executable, "-X", "importtime", "-m", "concord_cli"]


def imported(report: str) -> set[str]:
    """The top-level packages named in an -X importtime report."""
    names = set()
    for line in report.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([*CONCORD, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stderr


@pytest.fixture
def fresh(tmp_path: Path) -> dict[str, str]:
    """This run's settings with a database of its own (SQLite in `tmp_path`, empty until migrated): no job
    left by another test can make the server convert, scrape or solve anything."""
    return {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp_path),
        "CONCORD_DATABASE_URL": "",
        "CONCORD_REDIS_URL": "",
    }


def test_the_cli_and_migrate_import_none_of_the_heavy_libraries(fresh: dict[str, str]):
    help_report = run(["--help"], fresh)
    assert {"argparse", "domain"} <= imported(help_report)  # the report is there: the check below can fail
    assert imported(help_report) & HEAVY == set()
    migrate_report = run(["migrate"], fresh)
    assert {"sqlalchemy", "alembic"} <= imported(migrate_report)
    assert imported(migrate_report) & HEAVY == set()


@pytest.mark.slow
async def test_a_serving_process_imports_none_of_them(fresh: dict[str, str], tmp_path: Path):
    """`concord serve` in one process (both apps, the scheduler, in-process workers: every module a web,
    worker or scheduler process loads), started until both apps answer, imports none of them."""
    await asyncio.to_thread(run, ["migrate"], fresh)
    hub_port, docs_port = free_port(), free_port()
    env = {**fresh, "CONCORD_HUB_PORT": str(hub_port), "CONCORD_DOCS_PORT": str(docs_port)}
    log = tmp_path / "serve.log"
    proc = start([*CONCORD, "serve", "--processes", "1"], env, log)
    try:
        await ready(proc, log, f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{docs_port}")
    finally:
        code = stop(proc)
    report = log.read_text()
    assert code == 0, report[-4000:]
    assert {"web", "runtime", "scheduler", "workers", "aiohttp"} <= imported(report)
    assert imported(report) & HEAVY == set()
