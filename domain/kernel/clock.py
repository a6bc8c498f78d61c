"""Time in one place so that every timestamp is aware UTC (identifiers: domain/kernel/ids.py).

Every wall-clock read goes through `clock` (`utcnow()` is `clock.now()`), so that tests, and a whole
suite run at another hour, can move it. `CONCORD_CLOCK_SHIFT_SECONDS` shifts it for a process and the
processes it starts (they inherit the environment); it keeps moving, it is never frozen. Timers that
measure durations use time.monotonic() and stay as they are."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import overload

SHIFT_ENV = "CONCORD_CLOCK_SHIFT_SECONDS"


class Clock:
    """The wall clock: the system's time in aware UTC plus a shift (zero unless set)."""

    def __init__(self, shift: timedelta = timedelta(0)) -> None:
        self.shift = shift

    def now(self) -> datetime:
        return datetime.now(UTC) + self.shift

    def advance(self, delta: timedelta) -> None:
        self.shift += delta


def shift_from_env() -> timedelta:
    raw = os.environ.get(SHIFT_ENV, "").strip()
    try:
        return timedelta(seconds=float(raw or 0))
    except ValueError:
        raise ValueError(f"{SHIFT_ENV} must be a number of seconds, not {raw!r}") from None


clock = Clock(shift_from_env())


def utcnow() -> datetime:
    return clock.now()


@overload
def iso(dt: datetime) -> str: ...
@overload
def iso(dt: None) -> None: ...
@overload
def iso(dt: datetime | None) -> str | None: ...


def iso(dt: datetime | None) -> str | None:
    """ISO 8601 in UTC; a naive value (SQLite gives them back) is taken as UTC."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()


@overload
def iso_z(dt: datetime) -> str: ...
@overload
def iso_z(dt: None) -> None: ...
@overload
def iso_z(dt: datetime | None) -> str | None: ...


def iso_z(dt: datetime | None) -> str | None:
    """`iso`, with UTC written `Z` as PACT writes its times (`2026-05-16T10:00:00Z`)."""
    text = iso(dt)
    return text[: -len("+00:00")] + "Z" if text is not None and text.endswith("+00:00") else text


def readable(dt: datetime) -> str:
    """A moment as people read it, in UTC: `26 Nov 2026 17:44 UTC`."""
    moment = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%d %b %Y %H:%M UTC")
