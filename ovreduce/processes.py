"""What ovreduce's child processes share: each ends with the process that started it, and multiprocessing's helper
processes start with Ctrl-C ignored; and how many to run at once by default."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

__all__ = ["end_with_parent", "start_fork_server", "usable_cpus"]


def end_with_parent(parent: int | None) -> None:
    """Have the system end this process (SIGKILL) when the process that started it ends, whatever ended it (SIGKILL,
    the OOM killer, a signal it does not pass on), where the system can (Linux): without it, a child left running
    OpenVINO's inference holds its CPU and its parent's caller's pipes until its own time limit. At once where
    ``parent`` (its pid, where known) ended before that was asked."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if parent is not None and os.getppid() != parent:
            os._exit(1)


def start_fork_server(context: Any) -> None:
    """Start the fork server ``context``'s processes are forked from (and multiprocessing's resource tracker, which it
    starts first) with Ctrl-C ignored, as each ignores it once it has imported, and so do the processes forked from
    the server: a terminal's Ctrl-C reaches the whole process group, and one pressed while a helper imports (a
    second or more) ended it with a traceback, or a worker waiting for its first job with another, besides the
    program's own line. The program ignores its own Ctrl-C only for the instant of the start; it stops its workers
    itself. Signal handlers are the main thread's: from another thread (or for a context that forks from no server)
    nothing is done here, and the first process started starts the fork server."""
    if context.get_start_method() != "forkserver" or threading.current_thread() is not threading.main_thread():
        return
    import multiprocessing.forkserver

    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, handler)


def usable_cpus() -> int:
    """The number of CPUs this process may run on (its affinity, which ``taskset``, a container's ``--cpuset-cpus`` and
    a Kubernetes pod's exclusive CPUs set), where the system says; else the machine's CPU count. The default number of
    processes that run at once: ``check -j``'s workers, the service's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (a system without affinities)
        return os.cpu_count() or 1
