"""The documents of ``check`` and what every document shares: the part of :mod:`ovreduce.reports` that the
``check`` path needs, defined when ovreduce is imported. Import these names from :mod:`ovreduce.reports`.

The classes say ``__module__ = "ovreduce.reports"``: that is where they are documented, where pickle finds
them and where their (string) annotations are resolved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ovreduce.shapes import JsonShape

__all__ = [
    "WIRE",
    "CheckDocument",
    "ErrorInfo",
    "Finding",
    "JsonDocument",
    "ModelCheck",
    "ReductionCheck",
    "Severity",
    "Status",
    "layer_path",
    "to_json",
]

Severity = Literal["error", "warning", "info"]
Status = Literal["ok", "mismatch", "error", "unresolved"]

# Non-finite floats go over the wire as "NaN", "Infinity", "-Infinity" (KServe's spelling), not as null.
# (pydantic reads ``__pydantic_config__`` from a plain dataclass; a dict spares check importing pydantic.)
WIRE = {"ser_json_inf_nan": "strings"}


def layer_path(body_path: str | None, layer_id: str) -> str:
    """How a layer is addressed: its id, or inside a sub-graph body its path of ids (``12/then/110``)."""
    return layer_id if body_path is None else f"{body_path}/{layer_id}"


def to_json(doc: Any) -> Any:
    """A document (or any part of one) as JSON-ready Python values: objects, lists, strings, numbers."""
    kind: type = type(doc)
    if kind in _PLAIN:
        return doc
    if kind is list or kind is tuple:  # neither is a dataclass nor a Mapping
        return [v if type(v) in _PLAIN else to_json(v) for v in doc]
    names = _DOCUMENT_FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(doc) and not isinstance(doc, type):
        names = _DOCUMENT_FIELDS[kind] = _field_names(kind)
    if names is not None:
        out = {}
        for name in names:  # the plain values inline: a document has thousands of fields
            value = getattr(doc, name)
            out[name] = value if type(value) in _PLAIN else to_json(value)
        return out
    if isinstance(doc, list | tuple):
        return [to_json(v) for v in doc]
    if isinstance(doc, Mapping):
        return {k: to_json(v) for k, v in doc.items()}
    return doc


_PLAIN = frozenset((str, int, float, bool, type(None)))  # values that are their own JSON form
_DOCUMENT_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass type -> _field_names(type), asked once


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The JSON keys of a document class: its own fields first, then those it inherits."""
    names = [f.name for f in dataclasses.fields(cls)]
    inherited = {f.name for base in cls.__mro__[1:] if dataclasses.is_dataclass(base) for f in dataclasses.fields(base)}
    return tuple([n for n in names if n not in inherited] + [n for n in names if n in inherited])


class JsonDocument:
    """What every document class has: :meth:`to_json`."""

    __module__ = "ovreduce.reports"
    __slots__ = ()

    def to_json(self) -> Any:
        """This document as JSON-ready Python values (see :func:`to_json`)."""
        return to_json(self)


@dataclass(frozen=True, slots=True)
class ErrorInfo(JsonDocument):
    """Why something could not be done: a stable error code and the message, and where in the .xml the reader
    found the problem when it knows (1-based ``line`` and ``column``; null: not known)."""

    __module__ = "ovreduce.reports"

    code: str
    message: str
    line: int | None = None
    column: int | None = None


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
