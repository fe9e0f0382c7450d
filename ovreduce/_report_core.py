"""The documents of ``check`` and what every document shares: the part of :mod:`ovreduce.reports` that the
``check`` path needs, defined when ovreduce is imported. Import these names from :mod:`ovreduce.reports`.

The classes say ``__module__ = "ovreduce.reports"``: that is where they are documented, where pickle finds
them and where their (string) annotations are resolved.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ovreduce.shapes import JsonShape

__all__ = [
    "NON_FINITE",
    "WIRE",
    "CheckDocument",
    "ErrorInfo",
    "Finding",
    "JsonDocument",
    "ModelCheck",
    "ReductionCheck",
    "Severity",
    "Status",
    "dumps",
    "json_float",
    "layer_path",
    "to_json",
]

Severity = Literal["error", "warning", "info"]
Status = Literal["ok", "mismatch", "error", "unresolved"]

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
    return orjson.dumps(doc if native else to_json(doc), option=option)


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

    __module__ = "ovreduce.reports"
    __slots__ = ()

    def to_json(self) -> Any:
        """This document as JSON-ready Python values (see :func:`to_json`)."""
        return to_json(self)


@dataclass(frozen=True, slots=True)
class ErrorInfo(JsonDocument):
    """Why something could not be done: a stable error code and the message."""

    __module__ = "ovreduce.reports"

    code: str
    message: str


# -- check -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Finding(JsonDocument):
    """One problem (or remark) about a model, tied to a layer and port where it has one."""

    __module__ = "ovreduce.reports"

    code: str
    severity: Severity
    layer_id: str | None
    layer_name: str | None
    port: str | None
    line: int | None  # the layer's line in the XML
    message: str
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class ReductionCheck(JsonDocument):
    """One reduction layer as check sees it: declared against inferred output shape."""

    __module__ = "ovreduce.reports"

    layer_id: str
    layer_name: str
    type: str
    version: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    axes_kind: str
    element_type: str | None
    input_shape: JsonShape
    input_shape_resolved: bool
    # Who knows the input's shape: ovreduce's own rules, OpenVINO's inference (no native rule on the way), or
    # only the dims the producer declares (no rule, no reshape); None: unresolved.
    input_shape_engine: Literal["native", "openvino", "declared"] | None
    declared_output_shape: JsonShape
    declared_has_dims: bool
    inferred_output_shape: JsonShape
    inferred_output_resolved: bool
    status: Status
    openvino_checked: bool = False  # the model was also read by OpenVINO (engine "openvino")
    openvino_output_shape: JsonShape = None  # OpenVINO's shape (null: not matched, or a dynamic rank)
    openvino_output_resolved: bool = False  # OpenVINO's model has this layer, so openvino_output_shape is its shape
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class ModelCheck(JsonDocument):
    """The check of one model, or why it could not be read (``error``)."""

    __module__ = "ovreduce.reports"

    path: str
    ok: bool
    ir_version: int | None
    layer_count: int | None
    error: ErrorInfo | None
    findings: tuple[Finding, ...]
    reductions: tuple[ReductionCheck, ...]
    notes: tuple[str, ...] = ()  # what could not be analysed (a sub-graph body its layer's inputs do not feed)


@dataclass(frozen=True, slots=True)
class CheckDocument(JsonDocument):
    """``ovreduce.check/v1``: every model checked."""

    __module__ = "ovreduce.reports"

    ok: bool
    models: tuple[ModelCheck, ...]
    schema: Literal["ovreduce.check/v1"] = "ovreduce.check/v1"

    @property
    def unreadable(self) -> bool:
        return any(m.error is not None for m in self.models)
