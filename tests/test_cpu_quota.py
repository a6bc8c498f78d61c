"""The processes `concord serve`, `web` and `worker` start by default follow the CPUs this process may use:
its affinity's cores, capped by its cgroups' CPU quota (infra/cpus.py). The quota is read from cgroup file
systems laid out here as the kernel shows them (v2 and v1, nested, in a container, mount points with escaped
characters), and, where this machine lets a test make a cgroup of its own, through a real server started
under a quota of one CPU."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from infra import cpus
from tests.conftest import RUN_ID
from tests.processes import answering_pids, command, start_server, stop

HOST_MOUNTS = """\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
29 24 0:26 / {v2} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
"""


def _proc(tmp: Path, cgroup: str, mountinfo: str) -> Path:
    proc = tmp / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text(mountinfo)
    return proc


def _write(directory: Path, **files: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name.replace("_", ".", 1)).write_text(text + "\n")


def test_cgroup_v2_takes_the_smallest_quota_along_the_path(tmp_path: Path) -> None:
    root = tmp_path / "fs" / "cgroup"
    _write(root, cpu_max="max 100000")
    _write(root / "system.slice", cpu_max="250000 100000")  # 2.5 CPUs for the slice
    _write(root / "system.slice" / "concord.service", cpu_max="max 100000")
    proc = _proc(tmp_path, "0::/system.slice/concord.service\n", HOST_MOUNTS.format(v2=root))
    assert cpus.cpu_quota(proc) == 2.5
    assert cpus.usable(64, cpus.cpu_quota(proc)) == 3  # rounded up: three processes share 2.5 CPUs
    assert cpus.usable(2, cpus.cpu_quota(proc)) == 2  # never more than the affinity's cores


def test_a_container_with_its_own_cgroup_namespace(tmp_path: Path) -> None:
    root = tmp_path / "container" / "cgroup"
    _write(root, cpu_max="200000 100000")  # docker run --cpus=2: the quota on the container's root
    proc = _proc(tmp_path, "0::/\n", HOST_MOUNTS.format(v2=root))
    assert cpus.cpu_quota(proc) == 2.0
    assert cpus.usable(64, cpus.cpu_quota(proc)) == 2


def test_cgroup_v1_cpu_hierarchy_and_a_path_outside_the_mounted_root(tmp_path: Path) -> None:
    # Without a cgroup namespace a container sees its host's path in /proc/self/cgroup, while its cpu
    # hierarchy is mounted at the container's own cgroup: the mount point is that cgroup.
    cpu = tmp_path / "fs" / "cgroup" / "cpu,cpuacct"
    _write(cpu, cpu_cfs_quota_us="50000", cpu_cfs_period_us="100000")
    mountinfo = (
        "30 25 0:27 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
        f"33 30 0:30 /docker/abc {cpu} rw - cgroup cgroup rw,cpu,cpuacct\n"
        f"34 30 0:31 /docker/abc {tmp_path / 'memory'} rw - cgroup cgroup rw,memory\n"
    )
    proc = _proc(tmp_path, "5:memory:/docker/abc\n4:cpu,cpuacct:/other/place\n", mountinfo)
    assert cpus.cpu_quota(proc) == 0.5
    assert cpus.usable(8, cpus.cpu_quota(proc)) == 1  # half a CPU is still one process


def test_cgroup_v1_nested_with_the_limit_on_a_parent_and_none_below(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu"
    _write(cpu, cpu_cfs_quota_us="-1", cpu_cfs_period_us="100000")
    _write(cpu / "kubepods", cpu_cfs_quota_us="300000", cpu_cfs_period_us="100000")
    _write(cpu / "kubepods" / "pod1", cpu_cfs_quota_us="-1", cpu_cfs_period_us="100000")
    mountinfo = f"33 30 0:30 / {cpu} rw - cgroup cgroup rw,cpu\n"
    proc = _proc(tmp_path, "3:cpu:/kubepods/pod1\n", mountinfo)
    assert cpus.cpu_quota(proc) == 3.0


def test_a_mount_point_with_a_space_is_read_where_it_is(tmp_path: Path) -> None:
    root = tmp_path / "with space"
    _write(root, cpu_max="100000 100000")
    escaped = str(root).replace(" ", "\\040")
    proc = _proc(tmp_path, "0::/\n", f"29 24 0:26 / {escaped} rw - cgroup2 cgroup2 rw\n")
    assert cpus.cpu_quota(proc) == 1.0


def test_no_quota_anywhere_leaves_the_affinity(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _write(root, cpu_max="max 100000")
    _write(root / "user.slice", cpu_max="max 100000")
    proc = _proc(tmp_path, "0::/user.slice\n", HOST_MOUNTS.format(v2=root))
    assert cpus.cpu_quota(proc) is None
    assert cpus.usable(6, None) == 6


@pytest.mark.parametrize(
    ("cgroup", "cpu_max"),
    [
        ("0::/\n", "garbage"),  # unreadable numbers
        ("0::/\n", "100000 0"),  # a zero period
        ("", "100000 100000"),  # no membership in the unified hierarchy
        ("not a cgroup line\n", "100000 100000"),
    ],
)
def test_what_cannot_be_read_counts_as_no_quota(tmp_path: Path, cgroup: str, cpu_max: str) -> None:
    root = tmp_path / "cgroup"
    _write(root, cpu_max=cpu_max)
    assert cpus.cpu_quota(_proc(tmp_path, cgroup, HOST_MOUNTS.format(v2=root))) is None


def test_no_proc_files_counts_as_no_quota(tmp_path: Path) -> None:
    assert cpus.cpu_quota(tmp_path / "nowhere") is None


def test_this_process_is_counted() -> None:
    assert 1 <= cpus.cores() <= cpus.affinity()


@contextlib.contextmanager
def _cgroup_of_one_cpu() -> Iterator[Path]:
    """A cpu cgroup of this machine's (v1) limited to one CPU, beside this process's own; skips where the
    machine has no such hierarchy or does not let this user make one."""
    proc = Path("/proc/self")
    membership = cpus._memberships((proc / "cgroup").read_text()).get(1)
    mounts = [m for m in cpus._cpu_mounts((proc / "mountinfo").read_text()) if m.version == 1]
    if membership is None or not mounts:
        pytest.skip("no cgroup v1 cpu hierarchy here to make a cgroup in (cgroup v2 hosts need delegation)")
    group = mounts[0].point / membership.lstrip("/") / f"concord-test-{RUN_ID}"
    try:
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text("100000")
    except OSError as exc:
        with contextlib.suppress(OSError):
            group.rmdir()
        pytest.skip(f"cannot make a cpu cgroup here ({exc.strerror}): it takes root on a cgroup v1 host")
    try:
        yield group
    finally:
        for _ in range(50):  # empty once the server's processes have been reaped
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


async def test_serve_under_a_quota_of_one_cpu_runs_one_process(runtime: Any, tmp_path: Path) -> None:
    if cpus.affinity() < 2:
        pytest.skip("one core: the default is one process with or without a quota")
    with _cgroup_of_one_cpu() as group:
        # The server joins the cgroup before it starts: `sh` writes its own pid there, then becomes concord.
        join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
        args = ["sh", "-c", join, str(group), command("concord"), "serve"]
        env = {"CONCORD_REDIS_URL": "", "CONCORD_WEB_PROCESSES": "0"}  # 0: one per usable CPU
        server = await start_server(args, env, tmp_path, runtime)
        try:
            assert server.proc.pid in {int(p) for p in (group / "cgroup.procs").read_text().split()}
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
                answered = await answering_pids(http, server.hub, want=2, tries=8)
            # One process serves, itself: no supervisor and no web processes under it.
            assert answered == {server.proc.pid}
            assert not server.children()
        finally:
            assert stop(server.proc) == 0
