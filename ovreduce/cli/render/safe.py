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
from functools import cache
from typing import Any, TypeVar

__all__ = ["columns", "escape", "printable", "quoted", "xml_safe"]

T = TypeVar("T")

# C0 controls and DEL, C1 controls, the Unicode line and paragraph separators, bidirectional embeddings,
# overrides and isolates, and the zero-width joiner family that can hide text. (Compiled on first use: most
# text is printable ASCII, which holds none of them and never reaches the pattern.)
# And the lone surrogates: a byte of a file name or an argument that is not UTF-8, as Python keeps it (U+DC80..U+DCFF
# for 0x80..0xFF), which no UTF-8 output can carry; written as the byte, ``\xe9``, as the reports write a path.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff\ud800-\udfff]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _escaped(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    return _code(ord(ch))


def _code(code: int) -> str:
    """The escape of one character: ``\\x1b``, ``\\u202e``; a byte Python keeps as a lone surrogate (not UTF-8), as
    that byte: ``\\xe9``."""
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every control, separator and bidirectional character written as an escape."""
    if text.isascii() and text.isprintable():  # U+0020..U+007E only: nothing to escape
        return text
    unsafe = _pattern(_UNSAFE)
    return unsafe.sub(_escaped, text) if unsafe.search(text) else text


def columns(text: str) -> int:
    """The columns of a terminal ``text`` takes (no colour codes in it): two for an East Asian wide or full-width
    character (``平``), none for a combining mark (the accent of ``e\u0301``), one for any other."""
    if text.isascii():
        return len(text)
    import unicodedata

    total = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def quoted(text: str) -> str:
    """A string already made printable (:func:`escape`, :func:`printable`) in quotes, as the reports show a name:
    ``repr`` would escape its escapes again (``'nl\\\\nline'`` where the table shows ``nl\\nline``)."""
    return f"'{text}'"


def printable(value: T) -> T:
    """``value`` (a document: dataclasses, tuples, lists, dicts, strings) with every string :func:`escape`-d:
    a copy of each part that holds a string to escape, the part itself where there is none; other values are
    returned as they are."""
    return _printable(value)  # type: ignore[no-any-return]


# A dataclass type -> the names of its fields that __init__ takes (what dataclasses.replace can set).
_INIT_FIELDS: dict[type, tuple[str, ...]] = {}
_AS_IS = frozenset((int, float, bool, type(None)))  # values with no string in them


def _printable(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return value if value.isascii() and value.isprintable() else escape(value)
    if kind in _AS_IS:
        return value
    if isinstance(value, str):
        return escape(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _INIT_FIELDS.get(kind)
        if names is None:
            names = _INIT_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value) if f.init)
        changes = {}
        for name in names:  # the common values inline: a document has thousands of fields
            old = getattr(value, name)
            kind = type(old)
            if kind in _AS_IS or (kind is str and old.isascii() and old.isprintable()):
                continue
            new = _printable(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value
    if isinstance(value, tuple | list):
        if all(type(v) in _AS_IS for v in value):  # shapes, axes: nothing to escape
            return value
        items = [_printable(v) for v in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        pairs = [(_printable(k), _printable(v)) for k, v in value.items()]
        same = all(k is old_k and v is old_v for (k, v), (old_k, old_v) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    return value


# XML 1.0 allows only TAB, LF, CR and the characters from U+0020 on (less the surrogates, U+FFFE and U+FFFF);
# a character reference to anything else (&#1;) is not well-formed either. The class lists what is left out
# (the complement of [^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff], which takes 8 ms to compile).
_NOT_XML = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry written as a visible escape (``\\x1b``)."""
    if text.isascii() and text.isprintable():  # U+0020..U+007E only: all of it is XML
        return text
    return _pattern(_NOT_XML).sub(lambda m: _code(ord(m.group())), text)
