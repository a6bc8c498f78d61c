"""How many CPUs this process may use: the cores of its CPU affinity (which taskset and cpusets narrow), and
no more than the CPU quota of its cgroups (a container's `--cpus`, a Kubernetes CPU limit, a systemd unit's
CPUQuota), which the affinity does not show. `concord serve`, `web` and `worker` start one process per such
CPU unless told otherwise: counting the host's cores, a container limited to two CPUs on a 64-core host would
start 64 processes, each with its own memory, to share two CPUs' time.

The quota is read from the cgroup file systems this process sees (/proc/self/mountinfo) at the path of its
own cgroup (/proc/self/cgroup), and at each ancestor up to the mount's root, the smallest quota winning:
cgroup v2's `cpu.max` ("max 100000" or "QUOTA PERIOD") and cgroup v1's `cpu.cfs_quota_us` over
`cpu.cfs_period_us` (-1: none). A fractional quota is rounded up (1.5 CPUs: two processes, which together
use the one and a half). Anything unreadable counts as no quota."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_OCTAL = re.compile(r"\\([0-7]{3})")  # mountinfo escapes space, tab, newline and backslash this way


def cores() -> int:
    """The CPUs this process may use: its affinity's cores, capped by its cgroups' CPU quota."""
    return usable(affinity(), cpu_quota())


def usable(count: int, quota: float | None) -> int:
    """`count` cores capped by a quota of CPUs (rounded up), at least one."""
    return max(1, min(count, math.ceil(quota)) if quota is not None else count)


def affinity() -> int:
    """The cores this process may run on (its CPU affinity, which containers and taskset narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class _Mount:
    root: str  # the cgroup path the mount shows at its mount point
    point: Path
    version: int  # 1 or 2


def cpu_quota(proc: Path = Path("/proc/self")) -> float | None:
    """The smallest CPU quota, in CPUs, of the process's cgroups and their ancestors; None where none is set
    or the files cannot be read (not Linux, no cgroup file system mounted)."""
    try:
        memberships = _memberships((proc / "cgroup").read_text())
        mountinfo = (proc / "mountinfo").read_text()
    except OSError:
        return None
    quotas = [
        quota
        for mount in _cpu_mounts(mountinfo)
        if (path := memberships.get(mount.version)) is not None
        for quota in _quotas(mount, path)
    ]
    return min(quotas, default=None)


def _memberships(text: str) -> dict[int, str]:
    """The process's cgroup path in the unified hierarchy (2) and in the v1 hierarchy holding `cpu` (1)."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        number, controllers, path = parts
        if number == "0" and not controllers:
            found[2] = path
        elif "cpu" in controllers.split(","):
            found[1] = path
    return found


def _cpu_mounts(mountinfo: str) -> list[_Mount]:
    """The mounts of the unified hierarchy and of the v1 hierarchy that holds the `cpu` controller."""
    mounts: list[_Mount] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 5:
            continue
        after = fields[fields.index("-") + 1 :]
        if len(after) < 3:
            continue
        kind, options = after[0], after[2].split(",")
        root, point = _unescape(fields[3]), Path(_unescape(fields[4]))
        if kind == "cgroup2":
            mounts.append(_Mount(root, point, 2))
        elif kind == "cgroup" and "cpu" in options:
            mounts.append(_Mount(root, point, 1))
    return mounts


def _unescape(field: str) -> str:
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def _quotas(mount: _Mount, path: str) -> list[float]:
    """The quotas set on the cgroup at `path` and on its ancestors, as far up as the mount shows them. A path
    outside the mount's root (a container's cgroup mounted at its own root without a cgroup namespace) is
    read at the mount point: the container's own cgroup."""
    cgroup, root = PurePosixPath(path), PurePosixPath(mount.root)
    inside = cgroup.relative_to(root) if cgroup.is_relative_to(root) else PurePosixPath()
    here = mount.point / inside
    levels = [here, *here.parents[: len(inside.parts)]]  # up to the mount point, not above it
    return [quota for level in levels if (quota := _quota(level, mount.version)) is not None]


def _quota(directory: Path, version: int) -> float | None:
    try:
        if version == 2:
            limit, _, period = (directory / "cpu.max").read_text().partition(" ")
            if limit.strip() == "max":
                return None
            return int(limit) / int(period)
        quota = int((directory / "cpu.cfs_quota_us").read_text())
        if quota < 0:
            return None
        return quota / int((directory / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError, ZeroDivisionError):
        return None
