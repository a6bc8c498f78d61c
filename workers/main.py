"""Entry module for Dramatiq's own CLI: `dramatiq workers.main`. Production runs `concord worker`
(workers/group.py) instead, whose parent restarts a worker process that dies: Dramatiq's stops them all."""

from domain.kernel.settings import get_settings
from infra import logs, metrics_dir

settings = get_settings()
logs.configure(settings)
metrics_dir.configure(settings)  # before prometheus_client is imported (by workers.broker)

from workers.broker import setup_broker  # noqa: E402

broker = setup_broker(settings)
