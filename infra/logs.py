"""Logging of every Concord process: text or JSON lines (`CONCORD_LOG_FORMAT`), the request id on each record
logged while a request is handled, and APScheduler's per-run lines kept at DEBUG.

Dramatiq's CLI (`dramatiq workers.main`) sets up logging of its own in each of its processes: its parent's
lines ("booting up", the signals it forwards, a worker that died) and its fork processes' first line are in
its text format, whatever CONCORD_LOG_FORMAT says. `run_dramatiq` runs that CLI with Concord's handler in
every process of the group instead (the children inherit it when forked and write through Dramatiq's
pipes)."""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from typing import TextIO

import dramatiq.cli
from pythonjsonlogger.json import JsonFormatter

from domain.kernel.settings import Settings, get_settings

# Set by the web middleware for the duration of a request (tasks it starts inherit it).
REQUEST_ID: ContextVar[str | None] = ContextVar("concord_request_id", default=None)
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# APScheduler's executors log two INFO lines for every run of every job ('Running job "…"', 'Job "…" executed
# successfully'), several a second with the sweeps, and its scheduler two for each job it is given at start
# ('Adding job tentatively …', 'Added job "…"'): chatter, so they count as DEBUG here. "Scheduler started"
# stays INFO; a failing run is logged at ERROR by APScheduler and by the scheduler (concord.scheduler).
CHATTY = ("Running job", "Adding job tentatively", "Added job")


class RequestIdFilter(logging.Filter):
    """Adds `request_id` (None outside a request) to every record, for the JSON lines and the text format."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return True


class DemoteChatter(logging.Filter):
    """Turns APScheduler's per-run INFO lines and Alembic's list of the plugins it sets up (at every import)
    into DEBUG records (dropped unless DEBUG is on). A handler's filter, since a logger's own filters miss the
    records of its children (`apscheduler.executors.default`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        if record.name.startswith("apscheduler."):
            message = str(record.msg)
            if not (message.startswith(CHATTY) or message.endswith("executed successfully")):
                return True
        elif record.name != "alembic.runtime.plugins":
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


def json_formatter() -> logging.Formatter:
    """One JSON object per line: time (ISO 8601 UTC), level, logger, pid, message, request_id, the record's
    extra fields (an access line's method, route, status, duration_ms) and exc_info when there is one."""
    return JsonFormatter(
        "%(levelname)s %(name)s %(process)d %(message)s",
        rename_fields={"levelname": "level", "name": "logger", "process": "pid"},
        timestamp="time",
    )


class StandardError(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is when a record is written, as Python's last-resort handler does: a
    process that Dramatiq forks inherits the handler, then points `sys.stderr` at the pipe its parent reads
    and serialises, and the lines follow."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass  # always the current standard error


def handler(settings: Settings, stream: TextIO | None = None) -> logging.Handler:
    """A handler writing `CONCORD_LOG_FORMAT` lines to `stream` (the standard error of the moment by
    default)."""
    made = logging.StreamHandler(stream) if stream is not None else StandardError()
    json = settings.log_format == "json"
    made.setFormatter(json_formatter() if json else logging.Formatter(TEXT_FORMAT))
    made.addFilter(RequestIdFilter())
    made.addFilter(DemoteChatter())
    return made


def configure(settings: Settings) -> None:
    """The process's only root handler, at `CONCORD_LOG_LEVEL`."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler(settings))
    root.setLevel(settings.log_level.upper())


def run_dramatiq(argv: list[str]) -> int:
    """Dramatiq's CLI (`argv` as for `dramatiq`, e.g. `["workers.main", "-p", "2"]`) with Concord's log lines
    in every process of the group: configured here, in the parent, and inherited by the processes it forks,
    since Dramatiq is told not to set up its own (`--skip-logging`). Its `-v` gives way to
    CONCORD_LOG_LEVEL."""
    configure(get_settings())
    args = dramatiq.cli.make_argument_parser().parse_args(argv)  # type: ignore[no-untyped-call]
    args.skip_logging = True
    code: int = dramatiq.cli.main(args)  # type: ignore[no-untyped-call]
    return code
