"""The documents ovreduce produces: one typed definition each, and the one way to turn them into JSON.

Every class here is a frozen dataclass whose field names are the JSON keys, in the order they are
written. The CLI renders them (text, JUnit, SARIF, JSON), and the REST API uses the same classes as its
response models, so a renamed field is a type error everywhere at once rather than a silent change of the
wire format. Documents hold plain values only (strings, numbers, lists of dims), never server-side state:
nothing in them is a file the reader did not name.

=========================  ====================================================================
document                   class
=========================  ====================================================================
``ovreduce.check/v1``      :class:`CheckDocument` (one :class:`ModelCheck` per model)
``ovreduce.inspect/v1``    :class:`InspectDocument`
``ovreduce.run/v1``        :class:`RunDocument`
``ovreduce.audit/v1``      :class:`AuditDocument`
``ovreduce.conform/v1``    :class:`ConformDocument`
``ovreduce.devices/v1``    :class:`DevicesDocument`
=========================  ====================================================================

Measured values (errors, times) are floats; a value that is not finite stays a float (NaN, inf) here,
and each renderer writes it as its format allows (the API as the strings "NaN", "Infinity").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from ovreduce.shapes import JsonShape

__all__ = [
    "AuditDocument",
    "AuditInput",
    "AuditLayer",
    "BackendRun",
    "CheckDocument",
    "Comparison",
    "ConformDocument",
    "ConformNode",
    "Device",
    "DevicesDocument",
    "DriftPart",
    "DriftSplit",
    "ErrorInfo",
    "FinalOutput",
    "Finding",
    "InspectDocument",
    "JsonDocument",
    "LayerView",
    "Measured",
    "ModelCheck",
    "PortView",
    "Producer",
    "ReductionCheck",
    "RunDocument",
    "RunLayer",
    "Severity",
    "Status",
    "TensorInfo",
    "comparison_fields",
    "layer_path",
    "to_json",
]

Severity = Literal["error", "warning", "info"]
Status = Literal["ok", "mismatch", "error", "unresolved"]

# Non-finite floats go over the wire as "NaN", "Infinity", "-Infinity" (KServe's spelling), not as null.
# (pydantic reads ``__pydantic_config__`` from a plain dataclass; a dict spares check importing pydantic.)
_WIRE = {"ser_json_inf_nan": "strings"}


def layer_path(body_path: str | None, layer_id: str) -> str:
    """How a layer is addressed: its id, or inside a sub-graph body its path of ids (``12/then/110``)."""
    return layer_id if body_path is None else f"{body_path}/{layer_id}"


def to_json(doc: Any) -> Any:
    """A document (or any part of one) as JSON-ready Python values: objects, lists, strings, numbers."""
    if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
        return {name: to_json(getattr(doc, name)) for name in _field_names(type(doc))}
    if isinstance(doc, list | tuple):
        return [to_json(v) for v in doc]
    if isinstance(doc, Mapping):
        return {k: to_json(v) for k, v in doc.items()}
    return doc


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The JSON keys of a document class: its own fields first, then those it inherits."""
    names = [f.name for f in dataclasses.fields(cls)]
    inherited = {f.name for base in cls.__mro__[1:] if dataclasses.is_dataclass(base) for f in dataclasses.fields(base)}
    return tuple([n for n in names if n not in inherited] + [n for n in names if n in inherited])


class JsonDocument:
    """What every document class has: :meth:`to_json`."""

    __slots__ = ()

    def to_json(self) -> Any:
        """This document as JSON-ready Python values (see :func:`to_json`)."""
        return to_json(self)


# -- shared parts ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ErrorInfo(JsonDocument):
    """Why something could not be done: a stable error code and the message."""

    code: str
    message: str


@dataclass(frozen=True)
class Comparison(JsonDocument):
    """The comparison of one candidate output with one reference; truthy when they agree.

    Made by :func:`ovreduce.compare.compare`; ``first_mismatch`` locates the first failing element.
    """

    __pydantic_config__ = _WIRE

    reference: str
    candidate: str
    ok: bool
    total: int
    mismatched: int
    atol: float
    rtol: float
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    required_atol: float | None = None  # the smallest atol that passes at this rtol (None: none would)
    required_rtol: float | None = None  # the smallest rtol that passes at this atol (None: none would)
    first_mismatch: dict[str, Any] | None = None
    nan: dict[str, int] = field(default_factory=dict)
    inf: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # why no element-wise comparison was possible (shape or type differ)
    exact: bool = False
    allowance_max: float | None = None  # the largest per-element allowance added to atol, if any
    # Elements left out of the comparison because the specification leaves their value undefined (a ReduceMax
    # over an empty set); they count in ``total``, never in ``mismatched`` or the error figures.
    undefined: int = 0

    def __bool__(self) -> bool:
        return self.ok


def comparison_fields(c: Comparison | None) -> dict[str, Any]:
    """A comparison's measurements as the keyword arguments of a row that carries them inline
    (:class:`AuditLayer`, :class:`ConformNode`); nothing when there was no comparison."""
    if c is None:
        return {}
    return {
        "max_abs_error": c.max_abs_error,
        "max_rel_error": c.max_rel_error,
        "mismatched": c.mismatched,
        "total": c.total,
        "atol": c.atol,
        "rtol": c.rtol,
        "exact": c.exact,
        "required_atol": c.required_atol,
        "required_rtol": c.required_rtol,
        "first_mismatch": c.first_mismatch,
        "nan": c.nan,
        "inf": c.inf,
        "allowance_max": c.allowance_max,
        "undefined": c.undefined,
    }


# -- check -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Finding(JsonDocument):
    """One problem (or remark) about a model, tied to a layer and port where it has one."""

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

    ok: bool
    models: tuple[ModelCheck, ...]
    schema: Literal["ovreduce.check/v1"] = "ovreduce.check/v1"

    @property
    def unreadable(self) -> bool:
        return any(m.error is not None for m in self.models)


# -- inspect -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Producer(JsonDocument):
    """The output port that feeds an input port."""

    layer_id: str
    layer_name: str
    type: str
    port: str


@dataclass(frozen=True, slots=True)
class PortView(JsonDocument):
    """A port as declared, and its shape and element type as ovreduce resolves them."""

    port: str
    precision: str | None
    names: tuple[str, ...]
    declared_shape: JsonShape
    declared_has_dims: bool
    shape: JsonShape
    shape_resolved: bool
    shape_origin: str
    element_type: str | None
    producer: Producer | None = None  # input ports only


@dataclass(frozen=True, slots=True)
class LayerView(JsonDocument):
    """One layer with its attributes, ports, findings and (for a reduction) its check."""

    layer_id: str
    layer_name: str
    type: str
    version: str
    line: int | None
    attributes: dict[str, str]
    inputs: tuple[PortView, ...]
    outputs: tuple[PortView, ...]
    findings: tuple[Finding, ...]
    reduction: ReductionCheck | None = None
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class InspectDocument(JsonDocument):
    """``ovreduce.inspect/v1``: the reductions of a model (or the layers asked for)."""

    path: str
    name: str
    ir_version: int
    layer_count: int
    reduction_count: int
    layers: tuple[LayerView, ...]
    schema: Literal["ovreduce.inspect/v1"] = "ovreduce.inspect/v1"


# -- run -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunLayer(JsonDocument):
    """What defines the layer that ran."""

    layer_id: str
    layer_name: str
    type: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    element_type: str


@dataclass(frozen=True, slots=True)
class TensorInfo(JsonDocument):
    """A tensor's name (input index), shape and KServe datatype."""

    name: str
    shape: tuple[int, ...]
    datatype: str | None
    defaulted_dims: tuple[int, ...] = ()  # dims that were dynamic and that ovreduce chose a size for


@dataclass(frozen=True, slots=True)
class BackendRun(JsonDocument):
    """What one backend produced; ``precision``/``effective_precision`` only for OpenVINO backends."""

    __pydantic_config__ = _WIRE

    backend: str
    ok: bool
    shape: tuple[int, ...] | None
    datatype: str | None
    error: str | None
    seconds: float
    precision: str | None = None  # the precision asked for
    effective_precision: str | None = None  # the precision the device reports it computed in
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunDocument(JsonDocument):
    """``ovreduce.run/v1``: one layer run on several backends, each compared with the first that succeeded."""

    __pydantic_config__ = _WIRE

    ok: bool
    layer: RunLayer
    inputs: tuple[TensorInfo, ...]
    results: tuple[BackendRun, ...]
    comparisons: tuple[Comparison, ...]
    notes: tuple[str, ...]
    schema: Literal["ovreduce.run/v1"] = "ovreduce.run/v1"
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level
    # agree: every backend ran and agrees with the first; disagree; failed: a backend failed; nothing-compared:
    # one backend ran, so nothing was compared
    outcome: Literal["agree", "disagree", "failed", "nothing-compared"] = "agree"


# -- audit ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AuditInput(JsonDocument):
    """A model input as the audit (or conform) fed it."""

    name: str
    shape: tuple[int, ...]
    element_type: str
    origin: str  # "given" or "seed N"
    defaulted_dims: tuple[int, ...] = ()  # dims that were dynamic and that ovreduce chose a size for


@dataclass(frozen=True, slots=True)
class FinalOutput(JsonDocument):
    """How far one model output moved between the plain run and the run with marked tensors."""

    __pydantic_config__ = _WIRE

    name: str
    identical: bool
    max_abs_diff: float | None
    max_rel_diff: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Measured(JsonDocument):
    """A comparison's measurements carried inline by a row (null where nothing was compared); see
    :func:`comparison_fields`. In JSON they follow the row's own fields."""

    max_abs_error: float | None = None
    max_rel_error: float | None = None
    mismatched: int | None = None
    total: int | None = None
    atol: float | None = None
    rtol: float | None = None
    exact: bool | None = None
    required_atol: float | None = None
    required_rtol: float | None = None
    first_mismatch: dict[str, Any] | None = None
    nan: dict[str, int] | None = None
    inf: dict[str, int] | None = None
    allowance_max: float | None = None
    undefined: int | None = None


@dataclass(frozen=True, slots=True)
class DriftPart(JsonDocument):
    """One part of a reduction's drift from the f32 run: the largest absolute and relative difference, both
    measured against the f32 run's output of the same reduction (so the parts of one split add up)."""

    __pydantic_config__ = _WIRE

    max_abs: float | None
    max_rel: float | None  # over |f32 run's value|; None: infinite (the f32 value is 0 and this part is not)


@dataclass(frozen=True, slots=True)
class DriftSplit(JsonDocument):
    """Where a reduction's drift from an f32 run of the whole model comes from (see :mod:`ovreduce.audit`).

    Element-wise ``total = from_input + added``, so ``total <= from_input + added`` for both maxima.
    """

    __pydantic_config__ = _WIRE

    total: DriftPart  # audited output - f32 run's output
    from_input: DriftPart  # reference(audited input) - f32 run's output: what arrived with the input
    added: DriftPart  # audited output - reference(audited input): the reduction's own error
    limit: float | None  # the --fail-on-drift limit on total.max_rel (None: drift is reported only)
    exceeded: bool  # total.max_rel is above the limit (False without a limit)


@dataclass(frozen=True, slots=True)
class AuditLayer(Measured):
    """One reduction of the audited model: its own error against the reference (inline), and its drift."""

    __pydantic_config__ = _WIRE

    layer_id: str | None
    layer_name: str
    type: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    input_shape: tuple[int, ...] | None
    element_type: str | None
    ok: bool
    status: Literal["ok", "drift", "error"]  # error: its own error; drift: its drift is above --fail-on-drift
    error: str | None
    runtime_precision: str | None
    plain_runtime_precision: str | None
    notes: tuple[str, ...]
    drift: Comparison | None  # the output against an f32 run of the whole model: the total drift
    drift_split: DriftSplit | None = None  # that drift split into what arrived with the input and what was added


@dataclass(frozen=True, slots=True)
class AuditDocument(JsonDocument):
    """``ovreduce.audit/v1``: every reduction of a whole model run on one device and precision."""

    __pydantic_config__ = _WIRE

    ok: bool
    model: str
    device: str
    precision: str
    effective_precision: str | None
    error: str | None
    inputs: tuple[AuditInput, ...]
    layers: tuple[AuditLayer, ...]  # failing first, then by decreasing error
    final_outputs: tuple[FinalOutput, ...]
    notes: tuple[str, ...]
    seconds: float
    schema: Literal["ovreduce.audit/v1"] = "ovreduce.audit/v1"
    # effective_precision is what the compiled model reports (INFERENCE_PRECISION_HINT); what the reductions
    # actually execute in is read from the execution graph, counted by precision ("unknown": not found there)
    reduction_precisions: dict[str, int] = field(default_factory=dict)  # in the audited run
    plain_reduction_precisions: dict[str, int] = field(default_factory=dict)  # in the plain run
    fail_on_drift: float | None = None  # the limit on a reduction's relative drift, if one was asked for


# -- conform -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ConformNode(Measured):
    """One ONNX node of interest and what OpenVINO's conversion made of it (measurements inline)."""

    __pydantic_config__ = _WIRE

    node: str
    op_type: str
    domain: str
    version: int | None
    observable: bool
    missing_tensors: tuple[str, ...]
    status: Literal["ok", "disagree", "error", "not-observable"]
    ok: bool
    error: str | None
    notes: tuple[str, ...]
    dequantized_max_abs_diff: float | None = None  # QLinearReduceMean: the difference in real values


@dataclass(frozen=True, slots=True)
class ConformDocument(JsonDocument):
    """``ovreduce.conform/v1``: an ONNX model's mean/reduce nodes against ONNX semantics."""

    __pydantic_config__ = _WIRE

    ok: bool
    model: str
    opset: int | None
    device: str
    precision: str
    error: str | None
    inputs: tuple[AuditInput, ...]
    nodes: tuple[ConformNode, ...]
    saved_ir: str | None
    notes: tuple[str, ...]
    seconds: float
    schema: Literal["ovreduce.conform/v1"] = "ovreduce.conform/v1"


# -- devices -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Device(JsonDocument):
    """An OpenVINO device available here."""

    device: str
    full_name: str | None = None
    capabilities: tuple[str, ...] | None = None
    default_inference_precision: str | None = None
    architecture: str | None = None


@dataclass(frozen=True, slots=True)
class DevicesDocument(JsonDocument):
    """``ovreduce.devices/v1``."""

    devices: tuple[Device, ...]
    schema: Literal["ovreduce.devices/v1"] = "ovreduce.devices/v1"
