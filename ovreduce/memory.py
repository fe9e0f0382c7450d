"""The bound on a process's own memory: what sizes a tensor whose shape depends on input values, which no budget can
check before it is computed."""

from __future__ import annotations

import os

__all__ = ["bound_memory", "cgroup_memory", "data_limit", "data_size", "physical_memory"]


def bound_memory(limit: int) -> str | None:
    """Hold this process's data (its heap and private mappings: every tensor, OpenVINO's included) to ``limit`` bytes
    where the system can (Linux's RLIMIT_DATA, its soft limit: the process may raise it again): an allocation past it
    then fails, as an error of the work that asked for it, where it would have taken the machine's memory. Returns why
    it cannot (a hard limit below ``limit``), or None."""
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ImportError, AttributeError, ValueError, OverflowError, OSError) as exc:
        return str(exc) or type(exc).__name__
    return None


def data_limit() -> int | None:
    """The bound :func:`bound_memory` set on this process's data (RLIMIT_DATA's soft limit), in bytes; None where there
    is none or the system does not say."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    except (ImportError, AttributeError, ValueError, OSError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else soft


def physical_memory() -> int | None:
    """The machine's physical memory in bytes, where the system says (None elsewhere)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def cgroup_memory(root: str = "/") -> int | None:
    """The memory limit of this process's control group (a container's ``--memory``, a Kubernetes pod's limit, a
    systemd unit's ``MemoryMax``), the smallest of its group's and the groups above it, in bytes; None where there
    is none (``max``, or v1's "unlimited", beyond any machine's memory) or the system does not say (not Linux).
    Read from cgroup v2's ``memory.max`` and v1's ``memory.limit_in_bytes`` under ``/sys/fs/cgroup``: at the group
    ``/proc/self/cgroup`` names, or at the mount's root where that path is not in the mount (a container's view).
    ``root``: the file system's root these paths are read under."""
    try:
        with open(os.path.join(root, "proc/self/cgroup"), encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    found: list[int] = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        if controllers == "":
            folder, name = os.path.join(root, "sys/fs/cgroup"), "memory.max"
        elif "memory" in controllers.split(","):
            folder, name = os.path.join(root, "sys/fs/cgroup/memory"), "memory.limit_in_bytes"
        else:
            continue
        parts = [p for p in path.split("/") if p and p not in (".", "..")]
        for depth in range(len(parts), -1, -1):  # the group, then each above it (the mount's root last)
            try:
                with open(os.path.join(folder, *parts[:depth], name), encoding="ascii") as file:
                    text = file.read().strip()
            except (OSError, ValueError):
                continue
            if text.isdigit() and int(text) < 1 << 62:  # ("max"; v1's unlimited is about 2**63)
                found.append(int(text))
    return min(found, default=None)


def data_size() -> int | None:
    """This process's data in bytes, as the bound of :func:`bound_memory` counts it (Linux's ``VmData``: the heap,
    private mappings and threads' stacks); None where the system does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
