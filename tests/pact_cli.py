"""The PACT reference CLI (TailorAU/pact `cli/`, MIT) as a client of the apps under test.

It is built outside the repository by `make pact-cli` (into ~/.cache/concord/pact-cli) or wherever
CONCORD_PACT_CLI points (its `cli/bin/pact.js`); without it the tests that drive it skip, saying how to build
it. Each run is a `node` subprocess started from the test's event loop (so the app answers it meanwhile),
configured the way the CLI reads its settings (cli/src/config.ts): PACT_BASE_URL and PACT_API_KEY (sent as
X-Api-Key), with HOME a folder of the test's own, where the CLI keeps its config and ~/.pact session files."""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CLI_ENV = "CONCORD_PACT_CLI"
DEFAULT_CLI = Path.home() / ".cache" / "concord" / "pact-cli" / "cli" / "bin" / "pact.js"
HOW_TO_BUILD = (
    "build it with `make pact-cli` (clones TailorAU/pact from PACT_SRC into ~/.cache/concord/pact-cli and "
    "runs npm ci && npm run build in cli/; needs git, Node.js 20+ and npm), or set CONCORD_PACT_CLI to a "
    "built cli/bin/pact.js"
)


def cli_script() -> Path:
    """The built CLI's entry point; skips the test, saying why and how to build it, when there is none."""
    script = Path(os.environ.get(CLI_ENV) or DEFAULT_CLI)
    if shutil.which("node") is None:
        pytest.skip(f"the PACT CLI needs Node.js, which is not installed: {HOW_TO_BUILD}")
    if not script.is_file() or not (script.parent.parent / "dist" / "index.js").is_file():
        pytest.skip(f"the PACT CLI is not built at {script}: {HOW_TO_BUILD}")
    return script


def base_url(client: Any) -> str:
    """The address an app under test (an aiohttp test client) listens on."""
    return str(client.make_url("/")).rstrip("/")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line.strip()]


class PactCli:
    """Runs the CLI against one app with one key."""

    def __init__(self, script: Path, home: Path) -> None:
        self.script = script
        self.home = home
        home.mkdir(parents=True, exist_ok=True)

    async def run(self, base: str, key: str | None, *args: str, timeout: float = 60) -> Run:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "NO_COLOR": "1"}
        env["PACT_BASE_URL"] = base
        if key is not None:
            env["PACT_API_KEY"] = key
        proc = await asyncio.create_subprocess_exec(
            "node",
            str(self.script),
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError(f"pact {' '.join(args)} did not finish within {timeout}s") from None
        assert proc.returncode is not None
        return Run(proc.returncode, out.decode(), err.decode())

    async def ok(self, base: str, key: str | None, *args: str) -> Run:
        """A run that must succeed (exit 0, nothing on standard error)."""
        done = await self.run(base, key, *args)
        assert done.code == 0, f"pact {' '.join(args)} exited {done.code}: {done.err or done.out}"
        assert not done.err.strip(), f"pact {' '.join(args)} wrote to standard error: {done.err}"
        return done


def pact_cli(tmp_path: Path) -> PactCli:
    """The built CLI with a HOME under the test's temporary folder (skips when the CLI is not built)."""
    return PactCli(cli_script(), tmp_path / "home")
