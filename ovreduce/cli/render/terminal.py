"""The terminal's width, the one thing every command asks of :mod:`~ovreduce.cli.render.width` (which
re-exports it); kept apart so that a command whose output goes to a pipe or a file (no fitting) does not
import the fitting code at all."""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["MIN_WIDTH", "terminal_width"]

MIN_WIDTH = 20  # below this nothing is readable anyway: wrap as if the terminal were this wide


def terminal_width(stream: TextIO | None = None) -> int | None:
    """The width to fit text to: ``OVREDUCE_WIDTH`` when set, else the terminal's when ``stream`` (standard
    output by default) is a terminal, else ``None`` (print as is).

    Raises:
        UsageError: ``OVREDUCE_WIDTH`` is not a number of columns (``abc``, ``-1``, ``80px``), as every other
            ``OVREDUCE_*`` setting the command line reads; the program asks this before the command runs.
    """
    forced = os.environ.get("OVREDUCE_WIDTH", "").strip()
    if forced:
        if forced.isascii() and forced.isdigit():
            digits = forced.lstrip("0")  # (int() refuses more than 4,300 digits; no line is 10^18 wide)
            width = int(digits or "0") if len(digits) <= 18 else 10**18
            return max(width, MIN_WIDTH) if width > 0 else None
        from ovreduce.cli.errors import UsageError

        raise UsageError(f"OVREDUCE_WIDTH={forced[:30]!r}: expected a number of columns (0: no fitting)")
    stream = stream or sys.stdout
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or unusual stream: no terminal
        return None
    import shutil  # on a terminal only (it imports bz2, lzma...)

    return max(shutil.get_terminal_size().columns, MIN_WIDTH)
