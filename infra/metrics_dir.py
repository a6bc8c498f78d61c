"""Where the processes of a machine write their Prometheus samples (infra/metrics.py).

prometheus-client chooses its multiprocess mode when it is imported, from `PROMETHEUS_MULTIPROC_DIR`: so
this module imports nothing of it, and the entry points (concord_cli.py, workers/main.py) call `configure`
first."""

from __future__ import annotations

import os
from pathlib import Path

from domain.kernel.settings import Settings

ENV = "PROMETHEUS_MULTIPROC_DIR"
SUPERVISED_SUBDIR = "metrics"


def configure(settings: Settings, shared_directory: str | None = None) -> str | None:
    """`CONCORD_METRICS_DIR`, else the supervisor's shared directory (`--processes N`), else one already in
    the environment; None: this process counts alone. Call before prometheus_client is imported."""
    if settings.metrics_dir is not None:
        chosen: str | None = str(settings.metrics_dir)
    elif shared_directory is not None:
        chosen = str(Path(shared_directory) / SUPERVISED_SUBDIR)
    else:
        chosen = os.environ.get(ENV) or None
    if chosen is None:
        return None
    Path(chosen).mkdir(parents=True, exist_ok=True)
    os.environ[ENV] = chosen
    return chosen
