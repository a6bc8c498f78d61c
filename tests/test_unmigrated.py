"""A database without this version's migrations: an operator command says to run `concord migrate` (exit 2,
no traceback), and a server, the scheduler or a worker group refuses to start with the same words instead
of answering 500s. A database a newer Concord migrated further is not refused. On SQLite files of the tests'
own (the check reads alembic's version table, the same on PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import free_port, start, stop

CONCORD = [sys.executable, "-m", "concord_cli"]
ADVICE = "run `concord migrate`"


@pytest.fixture
def empty(tmp_path: Path) -> dict[str, str]:
    """Settings on a database of its own, never migrated, and the in-process broker."""
    return {
        **os.environ,
        "CONCORD_DATA_DIR": str(tmp_path),
        "CONCORD_DATABASE_URL": "",
        "CONCORD_REDIS_URL": "",
        "CONCORD_METRICS_PORT": str(free_port()),
    }


def concord(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CONCORD, *args], env=env, capture_output=True, text=True, timeout=120)


def test_an_operator_command_on_an_unmigrated_database_says_to_migrate(empty: dict[str, str]):
    done = concord(["keys", "list-staff"], empty)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.startswith("error: the database "), done.stderr
    assert ADVICE in done.stderr

    assert concord(["migrate"], empty).returncode == 0
    done = concord(["keys", "list-staff"], empty)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("command", [["serve"], ["serve", "--processes", "2"], ["scheduler"]])
def test_a_server_refuses_to_start_on_an_unmigrated_database(empty: dict[str, str], command: list[str]):
    env = {**empty, "CONCORD_HUB_PORT": str(free_port()), "CONCORD_DOCS_PORT": str(free_port())}
    done = concord(command, env)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert ADVICE in done.stderr.strip().splitlines()[-1], done.stderr


def test_a_database_behind_by_one_migration_is_refused_and_named(empty: dict[str, str], tmp_path: Path):
    from migrations import upgrade

    upgrade(f"sqlite+aiosqlite:///{tmp_path / 'concord.db'}", "heads")
    with sqlite3.connect(tmp_path / "concord.db") as db:  # as a database of the release before the latest
        (latest,) = db.execute(
            "SELECT version_num FROM alembic_version WHERE version_num LIKE '0042%'"
        ).fetchone()
        db.execute(
            "UPDATE alembic_version SET version_num = '0041_events_person_index' WHERE version_num = ?",
            (latest,),
        )
    done = concord(["scheduler"], empty)
    assert done.returncode == 1, done.stderr[-3000:]
    assert latest in done.stderr, done.stderr
    assert ADVICE in done.stderr


async def test_a_database_a_newer_concord_migrated_is_not_refused(empty: dict[str, str], tmp_path: Path):
    assert (await asyncio.to_thread(concord, ["migrate"], empty)).returncode == 0
    with sqlite3.connect(tmp_path / "concord.db") as db:  # a revision this code does not know yet
        db.execute("INSERT INTO alembic_version (version_num) VALUES ('9999_from_a_later_release')")
    log = tmp_path / "scheduler.log"
    proc = start([*CONCORD, "scheduler"], {**empty, "CONCORD_LOG_LEVEL": "INFO"}, log)
    try:
        for _ in range(1200):  # serving its metrics: past the check (a loaded machine takes long to start)
            if "scheduler metrics on" in log.read_text() or proc.poll() is not None:
                break
            await asyncio.sleep(0.1)
        assert "scheduler metrics on" in log.read_text(), log.read_text()[-3000:]
        assert proc.poll() is None, log.read_text()[-3000:]
    finally:
        code = stop(proc)
    # 0, or the signal's code when it came just before the process's own SIGTERM handler was in place.
    assert code in (0, -signal.SIGTERM), log.read_text()[-3000:]
    assert "concord migrate" not in log.read_text()
