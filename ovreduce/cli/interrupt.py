"""The program's answer to a Ctrl-C that comes where :func:`ovreduce.cli.entry.main` does not take it: while its
modules load, and while it ends. Standard library only, so that it is in place before anything else loads."""

from __future__ import annotations

import os
from types import FrameType

__all__ = ["interrupted"]


def interrupted(signum: int, frame: FrameType | None) -> None:
    """Said as main says it, exit 130 (Python would print a traceback of the import or the exit it stopped, and end
    by the signal)."""
    os.write(2, b"ovreduce: interrupted\n")
    os._exit(130)
