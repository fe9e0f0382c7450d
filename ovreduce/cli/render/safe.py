"""Text from files, made safe to print: one mechanism for every renderer.

Layer names, attribute values, file names and ONNX node names come from files an attacker may have written.
Printed raw, a carriage return or line feed forges report lines ("1 model checked: 1 clean"), an ESC starts
a terminal control sequence, a C1 control or a bidirectional override reorders what the reader sees. The
renderers therefore never print a document's strings as they are: :func:`printable` returns a copy of a
document whose every string has those characters escaped (``\\n``, ``\\x1b``, ``\\u202e``), and the styles
(colours) are added afterwards by ovreduce itself. :func:`xml_safe` does the same for XML 1.0, which cannot
carry most control characters at all, even as character references.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

__all__ = ["escape", "printable", "xml_safe"]

T = TypeVar("T")

# C0 controls and DEL, C1 controls, the Unicode line and paragraph separators, bidirectional embeddings,
# overrides and isolates, and the zero-width joiner family that can hide text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every control, separator and bidirectional character written as an escape."""
    return _UNSAFE.sub(_escaped, text) if _UNSAFE.search(text) else text


def printable(value: T) -> T:
    """A copy of ``value`` (a document: dataclasses, tuples, lists, dicts, strings) with every string
    :func:`escape`-d; other values are returned as they are."""
    return _printable(value)  # type: ignore[no-any-return]


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return escape(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _printable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_printable(v) for v in value)
    if isinstance(value, list):
        return [_printable(v) for v in value]
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    return value


# XML 1.0 allows only TAB, LF, CR and the characters from U+0020 on (less the surrogates, U+FFFE and U+FFFF);
# a character reference to anything else (&#1;) is not well-formed either.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry written as a visible escape (``\\x1b``)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else
                        f"\\u{ord(m.group()):04x}", text)  # fmt: skip
