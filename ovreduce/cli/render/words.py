"""Counts in words: a noun that agrees with its number."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural (``plural``, else ``noun + "s"``) unless the count is 1:
    ``1 reduction``, ``0 reductions``, ``14 layers``."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
