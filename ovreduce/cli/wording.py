"""The library's messages in command-line terms: the library speaks of inputs and shapes, the CLI of flags.

Each rule rewrites one library message (matched on its stable wording) into the flags that give the thing
it asks for; a message no rule matches is shown as the library wrote it. tests/cli pins every rule.
"""

from __future__ import annotations

import re

__all__ = ["in_flag_terms"]

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"give them as input 1 \(or the Parameter's name\)"),
        "give them with --input 1=FILE (or the Parameter's name)",
    ),
    (
        re.compile(r"has a dynamic rank; give its shape, or an input array"),
        "has a dynamic rank; give its shape with --shape NAME=SHAPE or an --input file",
    ),
    (re.compile(r"^the shape given for "), "--shape for "),
    (re.compile(r"^input ('.*?') names no model input"), r"--input \1 names no model input"),
    (re.compile(r"^cannot save the converted IR in (.*?): "), r"--save-ir \1: "),
)


def in_flag_terms(message: str) -> str:
    """``message`` with what it asks for named by the command line's flags."""
    for pattern, replacement in _RULES:
        message = pattern.sub(replacement, message)
    return message
