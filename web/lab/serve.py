"""`concord pact lab --port PORT`: the conformance lab in one process, on loopback only, with a data
directory of its own (a temporary one unless `--data-dir` is given) and the in-process broker: migrate,
seed the fixtures, serve until stopped. Off by default; `concord serve` never starts it."""

from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import signal
import tempfile
from pathlib import Path

from domain.kernel.settings import Settings, get_settings
from domain.lab.fixtures import HEARTBEAT_TIMEOUT_SECONDS

log = logging.getLogger("concord.lab")


class NotLoopback(ValueError):
    """The lab was asked to listen beyond this machine."""


def require_loopback(host: str) -> str:
    """The host if it is a loopback address (or `localhost`); the lab never listens on anything else."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise NotLoopback(
        f"the PACT lab listens on loopback only (127.0.0.1, ::1 or localhost), not {host!r}: it accepts "
        "X-Pact-Principal as identity, which no server reachable from elsewhere may do"
    )


def lab_settings(data_dir: Path, host: str, port: int) -> Settings:
    """The lab's own settings, made this process's settings (its workers read them too): its data
    directory's SQLite file and the in-process broker, whatever the environment says for the real server."""
    os.environ["CONCORD_DATA_DIR"] = str(data_dir)
    os.environ["CONCORD_DATABASE_URL"] = f"sqlite+aiosqlite:///{(data_dir / 'concord.db').resolve()}"
    os.environ["CONCORD_HOST"] = host
    os.environ["CONCORD_DOCS_PORT"] = str(port)
    os.environ["CONCORD_PACT_HEARTBEAT_TIMEOUT_SECONDS"] = str(HEARTBEAT_TIMEOUT_SECONDS)
    for name in ("CONCORD_REDIS_URL", "CONCORD_METRICS_DIR"):
        os.environ.pop(name, None)
    get_settings.cache_clear()
    settings = get_settings()
    assert settings.redis_url is None
    assert settings.data_dir == data_dir
    return settings


async def serve_lab(settings: Settings, port: int, stop: object | None = None) -> None:
    """Seed and serve until SIGINT/SIGTERM (or `stop`, an asyncio.Event, for tests)."""
    import asyncio

    from aiohttp import web

    from domain.lab.fixtures import Lab
    from runtime.process import Runtime
    from web.kernel.server import Runner
    from web.lab.app import create_lab_app

    rt = await Runtime.start(settings, relay=True, scheduler=False)
    runner: web.AppRunner | None = None
    try:
        lab = Lab(rt.db, settings.blob_dir)
        await lab.reset()  # a reused --data-dir starts from the fixtures too
        runner = Runner(create_lab_app(rt, lab), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, settings.host, port).start()
        log.info("PACT conformance lab on http://%s:%d (data in %s)", settings.host, port, settings.data_dir)
        print(f"PACT conformance lab on http://{settings.host}:{port}", flush=True)
        if not isinstance(stop, asyncio.Event):
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        if runner is not None:
            await runner.cleanup()
        await rt.stop()


def run(host: str, port: int, data_dir: str | None) -> int:
    import asyncio

    from migrations import upgrade

    require_loopback(host)
    own = data_dir is None
    path = Path(tempfile.mkdtemp(prefix="concord-pact-lab-")) if own else Path(str(data_dir))
    path.mkdir(parents=True, exist_ok=True)
    try:
        settings = lab_settings(path, host, port)
        upgrade(settings.db_url)
        asyncio.run(serve_lab(settings, port))
    finally:
        if own:
            shutil.rmtree(path, ignore_errors=True)
    return 0
