"""ANSI colours for the text renderers: only on a terminal that shows them (``TERM`` not ``dumb``), and only when
``NO_COLOR`` is unset or empty (https://no-color.org)."""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["Style"]


class Style:
    """ANSI colours, only for a terminal that shows them and only when NO_COLOR is unset or empty."""

    def __init__(self, stream: TextIO | None = None) -> None:
        stream = stream or sys.stdout
        self.enabled = (stream.isatty() and not os.environ.get("NO_COLOR")
                        and os.environ.get("TERM") != "dumb")  # fmt: skip

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
