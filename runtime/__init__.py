"""The process runtime: the services one Concord process starts once and shares between its apps,
its scheduler and its in-process workers (runtime/process.py)."""
