"""The composition root: the services one Concord process starts once and shares between its apps, its
scheduler and its in-process workers (runtime/process.py). Nothing but the entry points (concord_cli.py, the
apps' factories, the benches and tests) imports it; what it is built from lives in infra/."""
