"""What the deployment tests compare deploy/ against: Concord's settings, the commands its image can run,
the Dockerfile, and the Redis keys Dramatiq really uses for Concord's queues."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dramatiq
import dramatiq.cli
import yaml
from pydantic_settings import BaseSettings

import concord_cli
from domain.kernel.settings import Settings
from domain.market.settings import MarketSettings
from domain.work.settings import WorkSettings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
SCHEMAS = Path(__file__).resolve().parent / "schemas"

SETTINGS_CLASSES: tuple[type[BaseSettings], ...] = (Settings, MarketSettings, WorkSettings)


def load_yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def setting_names() -> dict[str, tuple[type[BaseSettings], str]]:
    """Every environment variable Concord reads, with its settings class and field."""
    names: dict[str, tuple[type[BaseSettings], str]] = {}
    for cls in SETTINGS_CLASSES:
        prefix = str(cls.model_config.get("env_prefix", ""))
        for field in cls.model_fields:
            names[f"{prefix}{field}".upper()] = (cls, field)
    return names


def dramatiq_env_names() -> set[str]:
    """The environment variables the installed Dramatiq reads itself (e.g. dramatiq_queue_prefetch)."""
    package = Path(dramatiq.__file__).resolve().parent
    found: set[str] = set()
    for source in package.rglob("*.py"):
        found.update(re.findall(r"getenv(?:_int)?\(\s*[\"'](dramatiq_[a-z_]+)[\"']", source.read_text()))
    return found


def validate_settings(env: dict[str, str]) -> None:
    """Build each settings class from `env` the way a process would (raises pydantic's ValidationError)."""
    names = setting_names()
    for cls in SETTINGS_CLASSES:
        values = {field: env[name] for name, (owner, field) in names.items() if owner is cls and name in env}
        cls.model_validate(values)


@dataclass(frozen=True)
class Dockerfile:
    env: dict[str, str]
    user: tuple[int, int]
    exposed: set[int]
    copied: set[str]
    copies: list[str]  # every COPY source in order, repeats included
    healthcheck_port: int


def dockerfile() -> Dockerfile:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    env: dict[str, str] = {}
    user: tuple[int, int] | None = None
    exposed: set[int] = set()
    copies: list[str] = []
    healthcheck_port = 0
    for line in text.splitlines():
        instruction, _, rest = line.strip().partition(" ")
        if instruction == "ENV":
            env.update(part.split("=", 1) for part in shlex.split(rest))  # type: ignore[misc]
        elif instruction == "USER":
            uid, _, gid = rest.strip().partition(":")
            user = (int(uid), int(gid or uid))
        elif instruction == "EXPOSE":
            exposed.update(int(port) for port in rest.split())
        elif instruction == "COPY":
            copies.extend(shlex.split(rest)[:-1])
        elif instruction == "HEALTHCHECK":
            match = re.search(r"127\.0\.0\.1:(\d+)/healthz", rest)
            assert match, "the image's HEALTHCHECK probes /healthz on a local port"
            healthcheck_port = int(match.group(1))
    assert user is not None, "the Dockerfile sets a USER"
    return Dockerfile(env, user, exposed, set(copies), copies, healthcheck_port)


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def check_command(command: list[str]) -> None:
    """Fail unless the image can run `command`: a `concord` subcommand its CLI accepts, Dramatiq's CLI with
    an importable broker module and accepted flags, or `sh -c` chaining such commands."""
    program, *args = command
    if program == "sh":
        assert args[0] == "-c", command
        for part in args[1].split("&&"):
            check_command(shlex.split(part))
        return
    if program == "concord":
        assert "concord" in pyproject()["project"]["scripts"]
        out = io.StringIO()
        code: str | int | None = "ran"
        # --help parses the whole command line (an unknown subcommand or flag exits 2) and stops before
        # anything runs.
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                concord_cli.main([*args, "--help"])
            except SystemExit as stop:
                code = stop.code
        assert code == 0, f"concord {' '.join(args)}: {out.getvalue()}"
        return
    if program == "dramatiq":
        parsed = dramatiq.cli.make_argument_parser().parse_args(args)
        assert parsed.broker == "workers.main", "Concord's workers start from workers.main (README)"
        assert importlib.util.find_spec(parsed.broker) is not None
        return
    raise AssertionError(f"the image has no command {program!r}")


def worker_options(command: list[str]) -> argparse.Namespace:
    """The options of a `concord worker` command, as the CLI parses them."""
    assert command[:2] == ["concord", "worker"], command
    return concord_cli.make_parser().parse_args(command[1:])


def check_liveness_probe(probe: list[str], alive_file: str) -> float:
    """Fail unless `probe` runs workers.liveness on `alive_file` with a bound well above how often the group
    touches it; the bound in seconds."""
    from workers.group import ALIVE_SECONDS

    program, flag, module, path, *rest = probe
    assert (program, flag, module) == ("python", "-m", "workers.liveness"), probe
    assert importlib.util.find_spec(module) is not None
    assert path == alive_file, "the probe checks the file the group touches"
    bound = float(rest[0]) if rest else 60.0
    assert bound >= 4 * ALIVE_SECONDS, "a busy machine may touch the file a little late"
    return bound
