"""Run the suite at another hour: CONCORD_TEST_CLOCK names the wall-clock time the run starts at, and the
shift it implies goes to CONCORD_CLOCK_SHIFT_SECONDS, which the kernel clock of this process and of every
process the tests start reads. The clock keeps moving from there (TTLs and expiries still pass).

    CONCORD_TEST_CLOCK="05:30 Australia/Perth"      the latest 05:30 in Perth (21:30 UTC the day before)
    CONCORD_TEST_CLOCK="00:30"                       the latest 00:30 UTC
    CONCORD_TEST_CLOCK="2028-02-29T23:59:30+00:00"  that instant
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from domain.kernel.clock import SHIFT_ENV, clock, shift_from_env

ENV = "CONCORD_TEST_CLOCK"


def start_of_run(spec: str, now: datetime) -> datetime:
    """The instant `spec` names: an ISO 8601 datetime with an offset, or `HH:MM[:SS] [Zone]` meaning the
    latest such wall-clock time in that zone (UTC when none is given) at or before `now`."""
    spec = spec.strip()
    if "T" in spec:
        when = datetime.fromisoformat(spec)
        if when.tzinfo is None:
            raise ValueError(f"{ENV}={spec!r}: give the datetime an offset, e.g. +00:00")
        return when
    clock_time, _, zone_name = spec.partition(" ")
    zone = ZoneInfo(zone_name.strip() or "UTC")
    wall = time.fromisoformat(clock_time)
    today = now.astimezone(zone).date()
    for day in (today, today - timedelta(days=1)):
        when = datetime.combine(day, wall, tzinfo=zone)
        if when <= now:
            return when
    raise AssertionError("unreachable: yesterday's time is always in the past")


def apply() -> str | None:
    """Set CONCORD_CLOCK_SHIFT_SECONDS from CONCORD_TEST_CLOCK (before any process reads the clock);
    return a line for the test report when the clock is shifted."""
    spec = os.environ.get(ENV, "").strip()
    if spec:
        now = datetime.now(UTC)
        os.environ[SHIFT_ENV] = str((start_of_run(spec, now) - now).total_seconds())
    clock.shift = shift_from_env()
    if not clock.shift:
        return None
    hours = clock.shift.total_seconds() / 3600
    start = clock.now().isoformat(timespec="seconds")
    zone = os.environ.get("TZ", "unset")
    return f"clock: shifted {hours:+.2f} h, run started at {start} ({ENV}={spec!r}); TZ={zone}"
