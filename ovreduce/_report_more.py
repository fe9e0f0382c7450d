"""The documents of ``inspect``, ``run``, ``audit``, ``conform`` and ``devices``: the part of
:mod:`ovreduce.reports` defined on first use (a frozen dataclass costs about half a millisecond to define, and
``ovreduce check`` needs none of these). Import these names from :mod:`ovreduce.reports`.

The classes say ``__module__ = "ovreduce.reports"``: that is where they are documented, where pickle finds
them and where their (string) annotations are resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ovreduce._report_core import WIRE as _WIRE
from ovreduce._report_core import Finding, JsonDocument, ReductionCheck
from ovreduce.shapes import JsonShape

__all__ = [
    "AuditDocument",
    "AuditInput",
    "AuditLayer",
    "BackendRun",
    "Comparison",
    "ConformDocument",
    "ConformNode",
    "Device",
    "DevicesDocument",
    "DriftPart",
    "DriftSplit",
    "FinalOutput",
    "InspectDocument",
    "LayerView",
    "Measured",
    "PortView",
    "Producer",
    "RunDocument",
    "RunLayer",
    "TargetHeadroom",
    "TargetStage",
    "TargetSummary",
    "TensorInfo",
    "comparison_fields",
]


@dataclass(frozen=True)
class Comparison(JsonDocument):
    """The comparison of one candidate output with one reference; truthy when they agree.

    Made by :func:`ovreduce.compare.compare`; ``first_mismatch`` locates the first failing element.
    """

    __module__ = "ovreduce.reports"

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


# -- inspect -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Producer(JsonDocument):
    """The output port that feeds an input port."""

    __module__ = "ovreduce.reports"

    layer_id: str
    layer_name: str
    type: str
    port: str


@dataclass(frozen=True, slots=True)
class PortView(JsonDocument):
    """A port as declared, and its shape and element type as ovreduce resolves them."""

    __module__ = "ovreduce.reports"

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

    __module__ = "ovreduce.reports"

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

    __module__ = "ovreduce.reports"

    path: str
    name: str
    ir_version: int
    layer_count: int
    reduction_count: int
    layers: tuple[LayerView, ...]
    schema: Literal["ovreduce.inspect/v1"] = "ovreduce.inspect/v1"


@dataclass(frozen=True, slots=True)
class Device(JsonDocument):
    """An OpenVINO device available here."""

    __module__ = "ovreduce.reports"

    device: str
    full_name: str | None = None
    capabilities: tuple[str, ...] | None = None  # OpenVINO's OPTIMIZATION_CAPABILITIES (BF16: bf16 instructions)
    default_inference_precision: str | None = None
    architecture: str | None = None
    # What OpenVINO executes on this device, asked of it by compiling a one-reduction model (null: a virtual
    # device). Results that depend on the CPU's instructions differ between machines exactly where these do.
    # Requested precision (f32, f16, bf16, default) -> the inference precision the compiled model reports:
    inference_precisions: dict[str, str] | None = None
    # A reduction's element type (f32, bf16, f16) -> the precision it executes in (the same type: natively;
    # f32: emulated through f32):
    reduction_precisions: dict[str, str] | None = None


# -- run -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunLayer(JsonDocument):
    """What defines the layer that ran."""

    __module__ = "ovreduce.reports"

    layer_id: str
    layer_name: str
    type: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    element_type: str


@dataclass(frozen=True, slots=True)
class TensorInfo(JsonDocument):
    """A tensor's name (input index), shape and KServe datatype."""

    __module__ = "ovreduce.reports"

    name: str
    shape: tuple[int, ...]
    datatype: str | None
    defaulted_dims: tuple[int, ...] = ()  # dims that were dynamic and that ovreduce chose a size for


@dataclass(frozen=True, slots=True)
class BackendRun(JsonDocument):
    """What one backend produced; ``precision``/``effective_precision`` only for OpenVINO backends."""

    __module__ = "ovreduce.reports"

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
    runtime_precision: str | None = None  # what the reduction executed in, from OpenVINO's execution graph


@dataclass(frozen=True, slots=True)
class RunDocument(JsonDocument):
    """``ovreduce.run/v1``: one layer run on several backends, each compared with the first that succeeded."""

    __module__ = "ovreduce.reports"

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
    # The OpenVINO version and what each OpenVINO device that ran executes (see Device): the results depend on it
    openvino: str | None = None
    devices: tuple[Device, ...] = ()


# -- audit ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AuditInput(JsonDocument):
    """A model input as the audit (or conform) fed it."""

    __module__ = "ovreduce.reports"

    name: str
    shape: tuple[int, ...]
    element_type: str
    origin: str  # "given" or "seed N"
    defaulted_dims: tuple[int, ...] = ()  # dims that were dynamic and that ovreduce chose a size for


@dataclass(frozen=True, slots=True)
class FinalOutput(JsonDocument):
    """How far one model output moved between the plain run and the run with marked tensors."""

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    name: str
    identical: bool
    max_abs_diff: float | None
    max_rel_diff: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Measured(JsonDocument):
    """A comparison's measurements carried inline by a row (null where nothing was compared); see
    :func:`comparison_fields`. In JSON they follow the row's own fields."""

    __module__ = "ovreduce.reports"

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

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    max_abs: float | None
    max_rel: float | None  # over |f32 run's value|; None: infinite (the f32 value is 0 and this part is not)


@dataclass(frozen=True, slots=True)
class DriftSplit(JsonDocument):
    """Where a reduction's drift from an f32 run of the whole model comes from (see :mod:`ovreduce.audit`).

    Element-wise ``total = from_input + added``, so ``total <= from_input + added`` for both maxima.
    """

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    total: DriftPart  # audited output - f32 run's output
    from_input: DriftPart  # reference(audited input) - f32 run's output: what arrived with the input
    added: DriftPart  # audited output - reference(audited input): the reduction's own error
    limit: float | None  # the --fail-on-drift limit on total.max_rel (None: drift is reported only)
    exceeded: bool  # total.max_rel is above the limit (False without a limit)


@dataclass(frozen=True, slots=True)
class TargetStage(JsonDocument):
    """One op of a reduction's chain emulated in the target precision (see :mod:`ovreduce.headroom`)."""

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    op: str  # "input" (what the chain receives), the range-changing op's type, or the reduction's type
    name: str | None  # the OpenVINO node's name (null: the input)
    layer_id: str | None
    largest: float | None  # the largest finite magnitude it reaches, computed in f64
    overflowed: int  # elements that first become inf or NaN in the target precision here
    underflowed: int | None  # non-zero elements that first flush to 0 here (null: not counted, see error_bound)
    kept: bool  # OpenVINO keeps this op in the original precision: emulated in f32


@dataclass(frozen=True, slots=True)
class TargetHeadroom(JsonDocument):
    """Whether one reduction survives the target precision, from its captured input chain."""

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    # protected: OpenVINO keeps the whole chain in the original precision; headroom: finite and within the
    # target's tolerance; overflow: inf or NaN where the f64 reference is finite; inaccurate: finite, outside
    # the tolerance; not-established: not examined (its input was not captured or cannot show it)
    status: Literal["protected", "headroom", "overflow", "inaccurate", "not-established"]
    failed: bool  # overflow or inaccurate: fails the audit
    message: str
    largest: float | None = None  # the largest magnitude any op of the chain reaches (f64)
    finite_max: float | None = None  # the target type's largest finite value
    headroom: float | None = None  # finite_max / largest (null: nothing non-zero, or not examined)
    overflowed: int | None = None  # null: not examined
    underflowed: int | None = None  # null: not examined, or not counted (the error bound covers them)
    max_abs_error: float | None = None  # the emulated result against the f64 reference of the chain
    max_rel_error: float | None = None
    atol: float | None = None  # the target type's tolerance the error is judged by
    rtol: float | None = None
    stages: tuple[TargetStage, ...] = ()
    # the emulation against the device's own output, where the audited run executed in the target precision (a
    # row settled by error_bound: the f64 reference against it, within the bound and the tolerance)
    device_max_rel_diff: float | None = None
    device_agrees: bool | None = None  # the same elements non-finite, the finite ones within the tolerance
    device_precision: str | None = None  # what the device executes the reduction in (its execution graph)
    step: int | None = None  # a stateful run's step this row comes from (null: one run)
    # a proven bound on the error rounding to the target can cause, within the tolerance, where one holds: then
    # the chain is not emulated element by element (max_*_error and the flushed counts are null)
    error_bound: float | None = None


@dataclass(frozen=True, slots=True)
class TargetSummary(JsonDocument):
    """The model-level answer of ``audit --target``: does every reduction survive the target precision?"""

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    precision: Literal["f16", "bf16"]
    device: str  # the device the target is meant for, as asked (it may not be present here)
    emulated: bool  # true: the figures are NumPy's emulation only, no device here executed the target precision
    executed_on: str | None  # the device that ran the audited run in the target precision (null: none)
    ok: bool  # no reduction overflows or leaves the target's tolerance
    finite_max: float
    counts: dict[str, int]  # rows by target status
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuditLayer(Measured):
    """One reduction of the audited model: its own error against the reference (inline), and its drift."""

    __module__ = "ovreduce.reports"

    __pydantic_config__ = _WIRE

    layer_id: str | None
    layer_name: str
    type: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    input_shape: tuple[int, ...] | None
    element_type: str | None
    ok: bool
    # error: its own error; drift: its drift is above --fail-on-drift; not-established: within tolerance, but on
    # an input that cannot show an error (constant, all zeros, non-finite, empty); not-audited: ovreduce could not
    # capture its input (a reduction inside an If, Loop or TensorIterator body)
    status: Literal["ok", "drift", "error", "not-established", "not-audited"]
    error: str | None
    runtime_precision: str | None
    plain_runtime_precision: str | None
    notes: tuple[str, ...]
    drift: Comparison | None  # the output against an f32 run of the whole model: the total drift
    drift_split: DriftSplit | None = None  # that drift split into what arrived with the input and what was added
    not_established: str | None = None  # why no verdict rests on this row (null: the verdict stands)
    body_path: str | None = None  # the ids path of the body holding the reduction ("12/body"); null: top level
    step: int | None = None  # a stateful run's step with its worst error (0: the first run); null: one run
    target: TargetHeadroom | None = None  # with a target precision: whether this reduction survives it


@dataclass(frozen=True, slots=True)
class AuditDocument(JsonDocument):
    """``ovreduce.audit/v1``: every reduction of a whole model run on one device and precision."""

    __module__ = "ovreduce.reports"

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
    # The OpenVINO version and what the device executes (see Device): the verdicts depend on it
    openvino: str | None = None
    devices: tuple[Device, ...] = ()
    # How many of the model's reductions (bodies included) each row status holds; the audit is complete when
    # every reduction was audited on inputs that exercise it (every row ok), and says so in the text verdict
    coverage: dict[str, int] = field(default_factory=dict)
    complete: bool = True
    steps: int = 0  # decode steps run after the first run of a stateful model (its state carried between them)
    target: TargetSummary | None = None  # with a target precision (f16, bf16): the model's headroom verdict


# -- conform -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ConformNode(Measured):
    """One ONNX node of interest and what OpenVINO's conversion made of it (measurements inline)."""

    __module__ = "ovreduce.reports"

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

    __module__ = "ovreduce.reports"

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
    # The OpenVINO version and what the device executes (see Device): the results depend on it
    openvino: str | None = None
    devices: tuple[Device, ...] = ()


# -- devices -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DevicesDocument(JsonDocument):
    """``ovreduce.devices/v1``."""

    __module__ = "ovreduce.reports"

    devices: tuple[Device, ...]
    schema: Literal["ovreduce.devices/v1"] = "ovreduce.devices/v1"
    openvino: str | None = None  # the OpenVINO version
