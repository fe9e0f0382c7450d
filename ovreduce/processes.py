"""What ovreduce's child processes share: each ends with the process that started it."""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["end_with_parent"]


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
