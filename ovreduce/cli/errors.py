"""The CLI's own error: a command line that cannot be carried out (exit status 2)."""

from __future__ import annotations

from ovreduce.errors import OvReduceError

__all__ = ["UsageError"]


class UsageError(OvReduceError):
    """The command line is wrong (an option's value, a missing file, a pattern that matches nothing)."""

    code = "usage"
