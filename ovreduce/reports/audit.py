"""The ``ovreduce.audit/v1`` document: every reduction of a whole model run on one device and precision, and
:class:`AuditInput`, a model input as an audit or a conform fed it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ovreduce.reports.common import WIRE, JsonDocument
from ovreduce.reports.devices import Device
from ovreduce.reports.run import Comparison, Measured

__all__ = [
    "AuditDocument",
    "AuditInput",
    "AuditLayer",
    "DriftPart",
    "DriftSplit",
    "FinalOutput",
    "TargetHeadroom",
    "TargetStage",
    "TargetSummary",
]


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

    __pydantic_config__ = WIRE

    name: str
    identical: bool
    max_abs_diff: float | None
    max_rel_diff: float | None


@dataclass(frozen=True, slots=True)
class DriftPart(JsonDocument):
    """One part of a reduction's drift from the f32 run: the largest absolute and relative difference, both
    measured against the f32 run's output of the same reduction (so the parts of one split add up)."""

    __pydantic_config__ = WIRE

    max_abs: float | None
    max_rel: float | None  # over |f32 run's value|; infinite where the f32 value is 0 and this part is not


@dataclass(frozen=True, slots=True)
class DriftSplit(JsonDocument):
    """Where a reduction's drift from an f32 run of the whole model comes from (see :mod:`ovreduce.audit`).

    Element-wise ``total = from_input + added``, so ``total <= from_input + added`` for both maxima.
    """

    __pydantic_config__ = WIRE

    total: DriftPart  # audited output - f32 run's output
    from_input: DriftPart  # reference(audited input) - f32 run's output: what arrived with the input
    added: DriftPart  # audited output - reference(audited input): the reduction's own error
    limit: float | None  # the --fail-on-drift limit on total.max_rel (None: drift is reported only)
    exceeded: bool  # total.max_rel is above the limit (False without a limit)


@dataclass(frozen=True, slots=True)
class TargetStage(JsonDocument):
    """One op of a reduction's chain emulated in the target precision (see :mod:`ovreduce.headroom`)."""

    __pydantic_config__ = WIRE

    op: str  # "input" (what the chain receives), the range-changing op's type, the reduction's type (above: an op's)
    name: str | None  # the OpenVINO node's name (null: the input)
    layer_id: str | None
    largest: float | None  # the largest finite magnitude it reaches, computed in f64
    overflowed: int  # elements that first become inf or NaN in the target precision here
    underflowed: int | None  # non-zero elements that first flush to 0 here (null: not counted, see error_bound)
    kept: bool  # OpenVINO keeps this op in the original precision: emulated in f32 (the input: it arrives unrounded)


@dataclass(frozen=True, slots=True)
class TargetHeadroom(JsonDocument):
    """Whether one reduction survives the target precision, from its captured input chain."""

    __pydantic_config__ = WIRE

    # protected: OpenVINO keeps the whole chain in the original precision (an integer reduction's too); headroom:
    # finite and within the target's tolerance; overflow: inf or NaN where the f64 reference is finite; inaccurate:
    # finite, outside the tolerance; not-established: not examined (its input was not captured or cannot show it)
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
    # the elementwise ops above the chain that were captured, and the values they start from (the farthest first)
    above: tuple[TargetStage, ...] = ()


@dataclass(frozen=True, slots=True)
class TargetSummary(JsonDocument):
    """The model-level answer of ``audit --target``: does every reduction survive the target precision?"""

    __pydantic_config__ = WIRE

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

    __pydantic_config__ = WIRE

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

    __pydantic_config__ = WIRE

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
