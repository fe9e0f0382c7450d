"""What every document shares: :class:`JsonDocument` and :class:`ErrorInfo`, the one policy for the floats
JSON has no number for (:func:`json_float`), and the one way to write a document as JSON (:func:`to_json`,
:func:`dumps`)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "NON_FINITE",
    "WIRE",
    "ErrorInfo",
    "JsonDocument",
    "dumps",
    "json_float",
    "layer_path",
    "path_text",
    "to_json",
    "unicode_text",
]

# How every document writes a float that is not finite (JSON has no such number): as one of these strings,
# KServe's spelling, which every strict JSON parser accepts and Python's float(), JavaScript's Number() and Go's
# strconv.ParseFloat read back. null stays "no value" (nothing measured, no tolerance would pass).
NON_FINITE = ("NaN", "Infinity", "-Infinity")
# The same policy for pydantic, which the REST API serialises its answers with (pydantic reads
# ``__pydantic_config__`` from a plain dataclass; a dict spares check importing pydantic).
WIRE = {"ser_json_inf_nan": "strings"}


def json_float(value: float) -> float | str:
    """A float as documents write it: itself when finite, else "NaN", "Infinity" or "-Infinity"."""
    if value - value == 0.0:  # NaN and the infinities give NaN
        return value
    if value != value:
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def layer_path(body_path: str | None, layer_id: str) -> str:
    """How a layer is addressed: its id, or inside a sub-graph body its path of ids (``12/then/110``)."""
    return layer_id if body_path is None else f"{body_path}/{layer_id}"


def to_json(doc: Any) -> Any:
    """A document (or any part of one) as JSON-ready Python values: objects (a dataclass's fields in their
    order), lists, strings, finite numbers, booleans and null; a non-finite float as :func:`json_float` writes it."""
    kind: type = type(doc)
    if kind is float:
        return json_float(doc)
    if kind is str or kind is int or kind is bool or doc is None:
        return doc
    if kind is list or kind is tuple:  # neither is a dataclass nor a Mapping
        return [to_json(v) for v in doc]
    if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
        return {name: to_json(getattr(doc, name)) for name in _field_names(kind)}
    if isinstance(doc, float):  # NumPy's float64, say
        return json_float(float(doc))
    if isinstance(doc, list | tuple):
        return [to_json(v) for v in doc]
    if isinstance(doc, Mapping):
        return {k: to_json(v) for k, v in doc.items()}
    return doc


def dumps(doc: Any, *, indent: bool = True) -> bytes:
    """A document (or any JSON-ready value) as JSON text in UTF-8: indented by two spaces and ending in a line
    break, or compact (``indent=False``, the REST API's answers).

    orjson writes dataclasses itself, fields in their order; but it writes a non-finite float as null, so a
    document whose classes have a field that may hold a float goes through :func:`to_json` first (a check
    document has none, and a 28,000-layer model's is written in a few milliseconds).
    """
    import orjson

    kind: type = type(doc)
    native = dataclasses.is_dataclass(kind) and not _may_hold_float(kind)
    option = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE if indent else 0
    try:
        return orjson.dumps(doc if native else to_json(doc), option=option)
    except orjson.JSONEncodeError:  # text that is not Unicode: a file name's undecodable bytes, as Python keeps them
        return orjson.dumps(unicode_text(to_json(doc)), option=option)


def path_text(path: str) -> str:
    """A file path as the reports write it: each byte that is not UTF-8 (a lone surrogate, as Python keeps it) as
    ``\\xff`` and each backslash doubled, so that the spelling names one file (``kd\\\\xff.xml`` is the name with a
    backslash, ``kd\\xff.xml`` the one with the byte 0xff)."""
    if path.isascii() and "\\" not in path:
        return path
    return path.replace("\\", "\\\\").encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def unicode_text(value: Any) -> Any:
    """``value`` with each undecodable byte Python keeps in a string (a lone surrogate) written as ``\\xff``."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {unicode_text(k): unicode_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unicode_text(v) for v in value]
    return value


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The JSON keys of a document class: its fields, in their order (orjson's and pydantic's order too)."""
    return tuple(f.name for f in dataclasses.fields(cls))


@cache
def _may_hold_float(annotation: Any) -> bool:
    """Whether a value of this type (a document class, or a field's annotation) may hold a float."""
    if annotation is float or annotation is Any:
        return True
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return any(_may_hold_float(a) for a in typing.get_type_hints(annotation).values())
    return any(_may_hold_float(a) for a in typing.get_args(annotation))


class JsonDocument:
    """What every document class has: :meth:`to_json`."""

    __slots__ = ()

    def to_json(self) -> Any:
        """This document as JSON-ready Python values (see :func:`to_json`)."""
        return to_json(self)


@dataclass(frozen=True, slots=True)
class ErrorInfo(JsonDocument):
    """Why something could not be done: a stable error code and the message, and where in the .xml the reader
    found the problem when it knows (1-based ``line`` and ``column``; null: not known)."""

    code: str
    message: str
    line: int | None = None
    column: int | None = None
