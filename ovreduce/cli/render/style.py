"""Terminal styling and plain-text tables shared by the text renderers."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["Style", "shape_text", "table"]


class Style:
    """ANSI colours, only for a terminal and only when NO_COLOR is unset."""

    def __init__(self, stream: TextIO | None = None) -> None:
        stream = stream or sys.stdout
        self.enabled = stream.isatty() and "NO_COLOR" not in os.environ

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def severity(self, sev: str, text: str | None = None) -> str:
        text = text or sev
        return {"error": self.red, "warning": self.yellow}.get(sev, self.dim)(text)


def shape_text(shape: Any) -> str:
    """A JSON shape (list/None) in OpenVINO's notation."""
    if shape is None:
        return "[...]"
    return "[" + ",".join("?" if d == -1 else str(d) for d in shape) + "]"


def table(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str = "  ") -> str:
    """Left-aligned columns; cells may hold ANSI codes (their width is measured without them)."""

    ansi = re.compile(r"\033\[[0-9;]*m")
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(ansi.sub("", cell)))
    lines = []
    for row in [header, *rows]:
        cells = [cell + " " * (widths[i] - len(ansi.sub("", cell))) for i, cell in enumerate(row)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return "\n".join(lines)
