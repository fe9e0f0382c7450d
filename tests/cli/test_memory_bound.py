"""The commands' default memory bound is the smaller of the machine's physical memory and the memory limit of the
process's control group (a container's ``--memory``, a pod's limit, a systemd unit's ``MemoryMax``): a bound past
that limit is never reached, the kernel kills the command at the limit first, with no message.

The control group files are written under a folder standing for the file system's root (no control group of the
system is made or changed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ovreduce.memory import cgroup_memory, physical_memory

GIB = 1 << 30
UNLIMITED_V1 = "9223372036854771712"  # what cgroup v1 answers for no limit


def _root(tmp_path: Path, cgroup: str, files: dict[str, str]) -> str:
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text(cgroup)
    for name, text in files.items():
        path = tmp_path / "sys" / "fs" / "cgroup" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return str(tmp_path)


@pytest.mark.parametrize(
    ("cgroup", "files", "expected"),
    [
        ("0::/\n", {"memory.max": str(2 * GIB)}, 2 * GIB),  # v2, a container's own namespace
        ("0::/\n", {"memory.max": "max"}, None),
        ("0::/a/b\n", {"memory.max": "max", "a/memory.max": str(GIB), "a/b/memory.max": str(3 * GIB)}, GIB),
        ("0::/kubepods/pod1\n", {"memory.max": str(GIB)}, GIB),  # the group is the mount's root (not in the mount)
        ("4:memory:/docker/abc\n0::/\n", {"memory/docker/abc/memory.limit_in_bytes": str(GIB)}, GIB),  # v1
        ("4:memory:/docker/abc\n", {"memory/memory.limit_in_bytes": UNLIMITED_V1}, None),
        ("4:cpu,memory:/x\n", {"memory/x/memory.limit_in_bytes": str(GIB)}, GIB),
        ("1:cpu:/\n", {}, None),
    ],
    ids=["v2", "v2-max", "v2-nested", "v2-namespaced", "v1", "v1-unlimited", "v1-joined", "none"],
)
def test_the_control_group_s_limit(tmp_path: Path, cgroup: str, files: dict[str, str], expected: int | None) -> None:
    assert cgroup_memory(_root(tmp_path, cgroup, files)) == expected


def test_a_machine_without_control_groups_has_no_limit(tmp_path: Path) -> None:
    assert cgroup_memory(str(tmp_path)) is None


@pytest.mark.skipif(sys.platform != "linux", reason="the memory bound is the system's (Linux)")
@pytest.mark.parametrize("limit", [GIB, 1 << 61], ids=["below", "above"])
def test_the_default_bound_is_the_smaller_and_says_which(tmp_path: Path, limit: int) -> None:
    """With a control group limit below physical memory the bound is that limit, and the message of a command that
    reaches it says so; above it (or none), the machine's physical memory, as before."""
    root = _root(tmp_path, "0::/\n", {"memory.max": str(limit)})
    code = (
        "import functools, os, resource\n"
        "from ovreduce import memory\n"
        f"memory.cgroup_memory = functools.partial(memory.cgroup_memory, {root!r})\n"
        "os.environ.pop('OVREDUCE_MAX_WORKER_BYTES', None)\n"
        "from ovreduce.cli import options\n"
        "options.bound_memory()\n"
        "print(resource.getrlimit(resource.RLIMIT_DATA)[0])\n"
        "print(options.MEMORY_BOUND)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    soft, said = done.stdout.splitlines()
    physical = physical_memory()
    assert physical is not None
    if limit < physical:
        assert int(soft) == limit
        assert said == f"the memory limit of the process's control group (its container's), {limit} bytes"
    else:
        assert int(soft) == physical
        assert said == f"the machine's physical memory, {physical} bytes"
