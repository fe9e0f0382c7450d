"""``ovreduce audit``: which reduction of a whole model loses accuracy on this device and precision?

The model runs once on OpenVINO with every reduction's inputs and output marked as extra model outputs
(as Polygraphy's "mark all" does for other runtimes). Each reduction is then recomputed with the NumPy
reference (:mod:`ovreduce.reference.openvino`) from its *captured* input and compared with what OpenVINO
produced: the reduction's **own error**. The tolerance is that of the model's element type (an f32 model is
judged against f32 accuracy whatever precision it ran in). The verdict rests on the own error only:

``ok``     the reduction computed what it received within tolerance;
``error``  it did not (or OpenVINO's output could not be compared, or the reference refused its input);
``drift``  only with a drift limit (``--fail-on-drift REL``, ``fail_on_drift=REL``): its total drift's
           largest relative difference is above REL.

**Drift.** When the run is not plainly f32, the model also runs once in f32 (only the reductions' outputs
marked) and each reduction's output ``out`` is compared with the f32 run's output ``f32`` of the same
reduction (``drift``). With ``ref`` the reference applied to the input the reduction actually received,
the drift splits element-wise, exactly, as

    out - f32  =  (ref - f32)  +  (out - ref)
    total         from_input      added

``from_input`` is the drift that arrived with the input (the layers before the reduction ran in a lower
precision: nothing the reduction can help), ``added`` is the reduction's own error. Each part is reported
as its largest absolute difference and its largest difference relative to ``|f32|`` (one denominator for all
three), so ``total <= from_input + added`` holds for both maxima (``drift_split``). A model whose layers
run in bf16 drifts by design; that alone never fails the audit, so a healthy model gets the same verdict on
CPUs with and without bf16.

**Precisions.** The document names the requested precision, the inference precision the compiled model
reports (``effective_precision``) and, from the execution graph, what each reduction executes in
(``runtime_precision``; counted in ``reduction_precisions``): OpenVINO may run a reduction in f32 inside a
bf16 model, and marking a reduction's tensors can change its precision (the plain run's is kept too).

Marking outputs can change how OpenVINO fuses the graph, so the model also runs once plain, and the report
shows how far its final outputs moved between the two runs.

**Target precision.** With ``target`` (``f16``, ``bf16``) each row also says whether the reduction would
survive that precision, from its captured input chain (see :mod:`ovreduce.headroom`): protected, headroom,
overflow or inaccurate; the last two fail the audit.

**Cost.** Every step is linear in the number of reductions: OpenVINO's ops are walked once per model read,
outputs are indexed once per run, nodes are matched by name through dictionaries. :class:`AuditWork` counts
those steps so that a test can check that the count grows linearly with the model.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections import ChainMap, Counter, deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, ParamSpec, Protocol, cast

import numpy as np
import numpy.typing as npt

from ovreduce._openvino import clean_message, openvino, read_failure, read_ir_model
from ovreduce.backends.feeds import EMBEDDINGS, GROWING_MASKS, PAST, TOKEN_IDS, Embedder, conv_kernel, recipes
from ovreduce.backends.openvino import (
    KEPT_FACTOR,
    PROBED_TYPES,
    VIRTUAL_DEVICES,
    InferenceTimeoutError,
    MarkedRun,
    NextInputs,
    check_captured,
    check_device,
    check_kept,
    check_precision,
    compile_model,
    constant_data,
    describe_device,
    elements_bound,
    fit_model,
    fix_random_seeds,
    model_inputs,
    openvino_version,
    port_type_name,
    precision_support,
    run_marked,
    run_steps,
    runtime_kernels,
    runtime_precisions,
)  # fmt: skip
from ovreduce.check.openvino import v10_renamed
from ovreduce.compare import (
    NARROW_FLOAT_TOLERANCES,
    Comparison,
    cannot_show_error,
    compare,
    f64_computed_note,
    masked_note,
    refuse_invalid_options,
    rounding_allowance,
    tolerances,
    too_wide,
)
from ovreduce.errors import (
    DeviceNotAvailableError,
    InputError,
    IRStructureError,
    MemoryLimitError,
    OvReduceError,
    check_timeout,
)
from ovreduce.headroom import (
    ABOVE_DEPTH,
    ABOVE_NODES,
    CONVERSIONS,
    FINITE_MAX,
    MOVING,
    TARGETS,
    Chain,
    arrive,
    as_executed,
    bounded,
    chain_of,
    covers_prior_rounding,
    disabled_conversions,
    emulate,
    headroom_factor,
    kept_in_original_precision,
    prior_errors,
    run_on_device,
    target_tolerances,
    walk_above,
)
from ovreduce.infer import ShapeEngine
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.model import IRModel
from ovreduce.ops.reduce import ReductionOp
from ovreduce.ops.registry import reductions
from ovreduce.reference.evaluate import reduce_with_notes, undefined_elements
from ovreduce.reports.audit import (
    AuditDocument,
    AuditInput,
    AuditLayer,
    DriftPart,
    DriftSplit,
    FinalOutput,
    TargetHeadroom,
    TargetStage,
    TargetSummary,
)
from ovreduce.reports.run import comparison_fields
from ovreduce.run import rounding_mass
from ovreduce.scaling import SCALE_FACTOR, Basis, activations_scale_factor, basis
from ovreduce.shapes import PartialShape
from ovreduce.tensors import INPUT_ONLY_TYPES, UNMODELLED_TYPES

__all__ = ["AuditProgress", "AuditReport", "AuditTimings", "AuditWork", "LayerAudit", "audit_model"]


class AuditProgress(Protocol):
    """Told where the audit is: ``stage`` names the step under way ("compiling the audited run", "checking
    reduction 3 of 40"...), ``done`` of ``total`` steps are behind it. A step is reading the model, the
    compile or the inference of one run, or checking one reduction; ``total`` is known once the model is read
    (it grows by two if an f32 run turns out to be needed). A successful audit ends with ``("done", total,
    total)``."""

    def __call__(self, stage: str, done: int, total: int) -> object: ...


Status = Literal["ok", "drift", "error", "not-established", "not-audited"]
MAX_STEPS = 64  # decode steps of a stateful model, at most: each is a run of the whole model
_RANK: Mapping[str, int] = {"error": 0, "drift": 0, "ok": 1, "not-established": 2, "not-audited": 3}


@dataclass
class AuditWork:
    """How many items each per-item step of an audit touched: all of them grow linearly with the model
    (a test compares them on models of two sizes). Pass one to :func:`audit_model` to have it filled in."""

    ops_visited: int = 0  # OpenVINO nodes walked (each model read is walked once)
    layers_visited: int = 0  # IR layers walked to tie OpenVINO's nodes back to the file
    outputs_visited: int = 0  # compiled models' outputs fetched, indexed and looked up (MarkedRun.visited)
    lookups: int = 0  # by-name lookups: layer ids, execution precisions, the f32 run's nodes
    reductions_checked: int = 0  # reductions recomputed and compared
    sort_keys: int = 0  # sort keys computed to order the report

    @property
    def total(self) -> int:
        return (self.ops_visited + self.layers_visited + self.outputs_visited + self.lookups
                + self.reductions_checked + self.sort_keys)  # fmt: skip


@dataclass
class AuditTimings:
    """Where the checking time of an audit goes, for the benchmark (pass one to :func:`audit_model`): seconds
    in the NumPy reference on the captured inputs, in the whole check of each reduction (the reference, its
    tolerance and its comparison with OpenVINO's output), in the target precision's check (its chains found,
    bounded or emulated), and in running the chains on a device that executes the target natively (OpenVINO's
    compile and inference)."""

    reference_seconds: float = 0.0
    check_seconds: float = 0.0
    target_seconds: float = 0.0
    device_seconds: float = 0.0


@dataclass
class LayerAudit:
    """One reduction of the audited model, as the audit works it out."""

    name: str
    type: str
    layer_id: str | None
    keep_dims: bool
    axes: list[int] | None
    input_shape: list[int] | None
    element_type: str | None
    comparison: Comparison | None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    drift: Comparison | None = None  # this layer's output vs the same layer in an f32 run: the total drift
    split: DriftSplit | None = None  # ... split into what arrived with the input and what the layer added
    runtime_precision: str | None = None  # what the reduction executes in, in the audited graph
    plain_runtime_precision: str | None = None  # ... and in the plain graph (None: fused away)
    expected: npt.NDArray[Any] | None = field(default=None, repr=False)  # the reference on the captured input
    not_established: str | None = None  # why no verdict rests on this row (its input cannot show an error...)
    audited: bool = True  # False: its input could not be captured (a reduction inside a body)
    body_path: str | None = None  # the ids path of the body holding it (None: top level)
    step: int | None = None  # of a stateful run's steps, the one with its worst error (0: the first run)
    target: TargetHeadroom | None = None  # with a target precision: whether it survives it
    reference_seconds: float = field(default=0.0, repr=False)  # the NumPy reference's time on the captured input
    check_seconds: float = field(default=0.0, repr=False)  # ... and the whole check's (reference and comparison)

    @property
    def own_ok(self) -> bool:
        return self.error is None and self.comparison is not None and self.comparison.ok

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def failed(self) -> bool:
        return self.status in ("error", "drift") or (self.target is not None and self.target.failed)

    @property
    def status(self) -> Status:
        if not self.audited:
            return "not-audited"
        if not self.own_ok:
            return "error"
        if self.split is not None and self.split.exceeded:
            return "drift"
        return "ok" if self.not_established is None else "not-established"

    def sort_key(self) -> tuple[int, float, float]:
        """Failing first, then the established rows by decreasing own error and drift, then the rows that
        establish nothing and those that were not audited."""
        own = self.comparison.max_rel_error if self.comparison is not None else None
        drift = self.split.total.max_rel if self.split is not None else 0.0
        rank = 0 if self.failed else _RANK[self.status]  # failing on the target precision too
        return (rank, -(math.inf if own is None else own), -(math.inf if drift is None else drift))

    @property
    def document(self) -> AuditLayer:
        c = self.comparison
        return AuditLayer(
            layer_id=self.layer_id,
            layer_name=self.name,
            type=self.type,
            keep_dims=self.keep_dims,
            axes=None if self.axes is None else tuple(self.axes),
            input_shape=None if self.input_shape is None else tuple(self.input_shape),
            element_type=self.element_type,
            ok=self.ok,
            status=self.status,
            error=self.error if c is None else c.error,
            runtime_precision=self.runtime_precision,
            plain_runtime_precision=self.plain_runtime_precision,
            notes=tuple(self.notes),
            drift=self.drift,
            drift_split=self.split,
            # an input that could not show an error still showed one: the failure is established
            not_established=None if self.status in ("error", "drift") else self.not_established,
            body_path=self.body_path,
            step=self.step,
            target=self.target,
            **comparison_fields(c),
        )


@dataclass
class AuditReport:
    """The ``ovreduce.audit/v1`` document."""

    model: str
    device: str
    precision: str
    effective_precision: str | None
    inputs: list[AuditInput]
    layers: list[LayerAudit]
    final_outputs: list[FinalOutput]
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    fail_on_drift: float | None = None
    work: AuditWork = field(default_factory=AuditWork)
    steps: int = 0  # decode steps of a stateful model after its first run
    target: TargetSummary | None = None

    @property
    def ok(self) -> bool:
        """No reduction failed (and OpenVINO ran): rows that establish nothing fail nothing, but leave the
        audit incomplete (:attr:`complete`)."""
        return self.error is None and not any(layer.failed for layer in self.layers)

    @property
    def complete(self) -> bool:
        """Every reduction of the model, bodies included, audited on inputs that exercise it, and within
        tolerance; false for a model without reductions (nothing was audited)."""
        return self.error is None and bool(self.layers) and all(layer.ok and not layer.failed for layer in self.layers)

    def _key(self, layer: LayerAudit) -> tuple[int, float, float]:
        self.work.sort_keys += 1
        return layer.sort_key()

    @property
    def document(self) -> AuditDocument:
        """The ``ovreduce.audit/v1`` document: failing reductions first, then by decreasing error."""
        return AuditDocument(
            ok=self.ok,
            model=self.model,
            device=self.device,
            precision=self.precision,
            effective_precision=self.effective_precision,
            error=self.error,
            inputs=tuple(self.inputs),
            layers=tuple(layer.document for layer in sorted(self.layers, key=self._key)),
            final_outputs=tuple(self.final_outputs),
            notes=tuple(self.notes),
            seconds=round(self.seconds, 3),
            reduction_precisions=_precision_counts(layer.runtime_precision for layer in self.layers if layer.audited),
            plain_reduction_precisions=_precision_counts(
                layer.plain_runtime_precision for layer in self.layers if layer.audited
            ),
            fail_on_drift=self.fail_on_drift,
            openvino=openvino_version(),
            devices=(describe_device(self.device),),
            coverage={"reductions": len(self.layers), **Counter(layer.status for layer in self.layers)},
            complete=self.complete,
            steps=self.steps,
            target=self.target,
        )


def _precision_counts(precisions: Any) -> dict[str, int]:
    """How many reductions execute in each precision, most common first ("unknown": not in the graph)."""
    return dict(Counter(p or "unknown" for p in precisions).most_common())


_P = ParamSpec("_P")


def _reading_conversions(audit: Callable[_P, AuditDocument]) -> Callable[_P, AuditDocument]:
    """``audit`` with what the model's IR says each ``DisablePrecisionConversion`` disables known while it runs
    (:data:`ovreduce.headroom.CONVERSIONS`: OpenVINO's Python API does not give the value)."""

    @functools.wraps(audit)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> AuditDocument:
        model = args[0] if args else kwargs.get("model")
        layers = getattr(model, "layers", None)
        conversions = None if layers is None else disabled_conversions(layers)
        if conversions is not None and hasattr(model, "bodies"):  # a body's nodes (an If's), by their own names
            for ref in model.bodies():
                for name, value in disabled_conversions(ref.body.graph.layers).items():
                    conversions.setdefault(name, value)
        token = CONVERSIONS.set(conversions)
        try:
            return audit(*args, **kwargs)
        finally:
            CONVERSIONS.reset(token)

    return run


@_reading_conversions
def audit_model(
    model: IRModel,
    *,
    inputs: Mapping[str, npt.NDArray[Any]] | None = None,
    seed: int = 0,
    device: str = "CPU",
    precision: str = "default",
    atol: float | None = None,
    rtol: float | None = None,
    progress: AuditProgress | None = None,
    max_elements: int | None = None,
    shapes: Mapping[str, PartialShape] | None = None,
    fail_on_drift: float | None = None,
    work: AuditWork | None = None,
    timeout: float | None = None,
    steps: int = 0,
    origins: Mapping[str, str] | None = None,
    target: str | None = None,
    timings: AuditTimings | None = None,
    positions: tuple[int, str] | None = None,
    encoder: tuple[int, str] | None = None,
    image_size: tuple[tuple[int, int], str] | None = None,
    audio_length: tuple[int, str] | None = None,
    embed: Embedder | None = None,
) -> AuditDocument:
    """Audit every reduction of ``model`` on ``device`` at ``precision``.

    OpenVINO reads the very bytes ``model`` was parsed from, and the model is reshaped to its inputs (given
    arrays, ``shapes`` by input name, or defaults for dynamic dims: see
    :func:`ovreduce.backends.openvino.model_inputs`) before it compiles. A failure of OpenVINO (reading, compiling,
    inferring) is reported in the document, not raised. A reduction fails on its own error only; with
    ``fail_on_drift`` also when its output's largest relative difference from an f32 run of the whole model
    is above it. ``progress`` is told each step (see :class:`AuditProgress`); ``work``, when given, is filled
    with the counts of the audit's per-item steps; ``timings``, when given, with where the checking time went.

    ``steps`` decode steps follow the first run of a stateful model (an LLM), its state carried between them
    (see :func:`_decoding`); each row reports its worst step. ``origins`` says how given inputs were made, by
    input name (a prompt through a tokenizer, say), for the document. ``positions`` is how many positions the model
    takes and what says so (``config.json``'s ``n_positions``, say): a sequence that the inputs, past included, and
    the decode steps carry past them is refused (:func:`_refuse_positions`). ``encoder`` is how long the export's
    encoder output always is and what says so (Whisper's ``max_source_positions``): a seq2seq decoder's encoder
    inputs not given are made that long (see :func:`ovreduce.backends.openvino.model_inputs`). ``image_size`` is the
    height and width of the images the model takes and what says so (``config.json``'s ``image_size``): an image's
    dims left dynamic are at least that. ``audio_length`` is how many samples of a waveform make several frames of the
    model's feature encoder and what says so (``config.json``'s ``conv_kernel`` and ``conv_stride``): a waveform's
    length left dynamic (``input_values``) is at least that. ``embed`` makes token embeddings (``inputs_embeds``, a VLM
    language model's) of token ids as the export's runtime does (its text-embeddings model): those not given are
    its embeddings of seeded ids, and each decode step's new token's are its embeddings of the token chosen.

    ``target`` (``f16`` or ``bf16``) adds whether each reduction survives that precision, from its captured
    input chain (see :mod:`ovreduce.headroom`); a row that would overflow or leave the target's tolerance
    fails the audit. With a target, a ``device`` that is not present here is the device the target is meant
    for: the model runs on the CPU and the document says that the figures are emulated.

    ``timeout`` (seconds) bounds the whole audit: what was established when it runs out is reported (the audited
    run's rows; without the plain or f32 run, no final-output comparison or drift), with a note; an audited run
    that does not finish is the document's error. An inference that outlives it is left running in the
    background (OpenVINO cannot stop it: see :func:`ovreduce.backends.openvino.abandoned`).

    Raises:
        InputError: unusable inputs, an unknown precision, a negative or non-finite ``fail_on_drift`` (or one
            with ``precision`` f32 on the CPU: no drift is measured there), or a ``timeout`` that is not a positive
            number.
        DeviceNotAvailableError: the device is not available.
    """
    check_precision(precision)
    if target is not None and target not in TARGETS:
        raise InputError(f"target {target!r} is not one of {', '.join(TARGETS)}", parameter="target")
    cannot = device_refuses(device, target)
    if cannot is not None:
        raise InputError(f"target {target!r} on device {device!r}: {cannot}", parameter="target")
    meant_for = device
    try:
        check_device(device)
    except DeviceNotAvailableError:
        if target is None:
            raise
        device = "CPU"  # the target's device is not here: its precision is emulated from a CPU run
    refuse_invalid_options(atol=atol, rtol=rtol, seed=seed)
    if fail_on_drift is not None and not (math.isfinite(fail_on_drift) and fail_on_drift >= 0):
        raise InputError(
            f"fail_on_drift must be a finite number >= 0, not {fail_on_drift!r}", parameter="fail_on_drift"
        )
    if fail_on_drift is not None and precision == "f32" and meant_for.upper() == "CPU":
        raise InputError(
            f"a drift limit (fail_on_drift {fail_on_drift:g}) with precision 'f32' on the CPU: the audit runs in f32 "
            f"there, so no drift from an f32 run is measured and the limit has no effect; expected another "
            f"precision, or the limit left out",
            parameter="fail_on_drift",
        )
    check_timeout(timeout)
    if not 0 <= steps <= MAX_STEPS:
        raise InputError(f"steps must be from 0 to {MAX_STEPS}, not {steps!r}", parameter="steps")
    start = time.perf_counter()
    deadline = None if timeout is None else time.monotonic() + timeout
    work = work if work is not None else AuditWork()
    times = timings if timings is not None else AuditTimings()
    tell = _Steps(progress)
    tell("reading the model", 1)

    native: tuple[list[Any], list[str | None]] | None = None  # each chain's own run on the device, in the target
    # OpenVINO's activations scaling, as the model's runtime options ask it: applied by a GPU's f16 compile
    scale, scale_refused = activations_scale_factor(model.rt_info) if target is not None else (None, None)
    scale = scale if target == "f16" else None
    renamed: dict[str, tuple[str | None, str]] = {}  # IR v10's renamed output producers -> their layer (id, name)

    def report(
        effective: str | None,
        described: list[AuditInput],
        layers: list[LayerAudit],
        finals: list[FinalOutput],
        error: str | None,
        notes: list[str] | None = None,
    ) -> AuditDocument:
        summary = (None if target is None
                   else _target_summary(target, meant_for, device, effective, layers, native is not None,
                                        [*_scaling_notes(model, target, scale, scale_refused),
                                         *_made_up_notes(described, target)]))  # fmt: skip
        layers = [_by_layer(layer, renamed) for layer in layers]
        return AuditReport(model.source, device, precision, effective, described, layers, finals, error,
                           notes or [], time.perf_counter() - start, fail_on_drift, work, steps,
                           summary).document  # fmt: skip

    steady: dict[str, str] = {}  # IR v10's renamed output producers: layer name -> the name of the first read

    drawn: list[list[str]] = []  # the random ops of seeds 0 the first read found: those fixed, those not

    def read() -> Any:
        ov_model = read_ir_model(model)  # (in the service's worker: a crash of OpenVINO's reader is refused first)
        _steady_names(ov_model, model, steady)
        fixed, unfixed = fix_random_seeds(ov_model)  # every read draws the same: the runs compare precision only
        if not drawn:
            drawn.extend((fixed, unfixed))
        return ov_model

    static = not steps  # the runs compile the model reshaped to the inputs' shapes (decode steps change them)

    def fitted() -> Any:  # another copy, reshaped as the first was (not at all for decode steps)
        fresh = read()
        if static:
            fit_model(fresh, arrays)
        return fresh

    ShapeEngine(model)  # refuses what OpenVINO's reader would be killed by computing (a constant divided by 0)
    try:
        ov_model = read()
    except Exception as exc:  # OpenVINO refusing the model is a finding
        return report(
            None, [], [], [], f"OpenVINO could not read the model: {read_failure(exc, model.op_types(), model.source)}"
        )
    if steps and not ov_model.get_sinks():
        raise InputError(
            f"{steps} decode step(s) asked for, but {model.source} has no state (ReadValue/Assign) to carry "
            f"from one step to the next: audit it without steps", parameter="steps",
        )  # fmt: skip
    if steps:  # decode steps change the sequence length: the runs compile the model as it is, not reshaped
        probe, ov_model = ov_model, read()
    else:
        probe = ov_model
    if positions is not None:  # first on what was asked: OpenVINO's reshape may refuse a sequence past the table first
        _refuse_positions(probe, _asked(probe, inputs, shapes), steps, positions)
    arrays, described, notes = model_inputs(
        probe, inputs, seed, max_elements, shapes, origins, encoder, image_size, audio_length, embed
    )
    notes += _random_notes(*drawn)
    if positions is not None:
        _refuse_positions(probe, arrays, steps, positions)
    empty = _emptied(probe, arrays) if static else []
    if empty and _reshaped(as_is := read(), arrays):  # OpenVINO's CPU plugin crashes compiling a model reshaped to
        ov_model, static = as_is, False  # an empty dim, and runs one as it is on the same inputs
        notes.append(f"{', '.join(map(repr, empty))} {'is' if len(empty) == 1 else 'are'} empty: the model ran as it "
                     f"is (its dynamic shapes), not reshaped to the inputs' static shapes, as OpenVINO's CPU plugin "
                     f"cannot compile a model reshaped to an empty dimension")  # fmt: skip
    alone = bool(steps) and _mask_alone(probe, arrays, seed, read, device, precision, deadline)
    next_inputs, replay = _decoding(probe, arrays, steps, seed, alone, embed) if steps else (None, None)
    kinds = reductions()
    unbuilt = _unbuilt(model, kinds)
    ids = _layer_ids(model, work)
    kept_runs = (steps + 1) * (1 if precision == "f32" else 2)

    def marked(ov_model: Any) -> tuple[list[Any], Counter[str], list[Any], list[Any], list[Chain], _Branches]:
        """The reductions of a read of the model, the count of each node name, the tensors to mark and where each
        reduction's are, their chains (with a target), and the top-level Ifs' inputs (marked too)."""
        nodes = _reduction_nodes(ov_model, kinds, work)
        shared = Counter(op.get_friendly_name() for op in ov_model.get_ordered_ops())
        renamed.update((name, (ids.get(layer), layer)) for name, layer in v10_renamed(ov_model, model).items())
        ids.update((name, layer_id) for name, (layer_id, _) in renamed.items() if layer_id is not None)
        marks, slots = _marks(nodes)
        began = time.perf_counter()
        chains = [chain_of(node, marks) for node in nodes] if target is not None else []
        times.target_seconds += time.perf_counter() - began
        branches = _Branches(ov_model, marks, ids, max_elements)  # each top-level If's inputs, marked too
        branches.target = target
        if target is not None:
            began = time.perf_counter()
            _walk_above(chains, slots, marks, max_elements, kept_runs)
            times.target_seconds += time.perf_counter() - began
        return nodes, shared, marks, slots, chains, branches

    nodes, shared, marks, slots, chains, branches = marked(ov_model)
    # the audited run's steps, and the f32 run's, keep what is marked: each reduction's inputs and output
    check_kept(marks, max_elements, runs=kept_runs, what="the audit")
    runs = ["plain", "audited"] + (["f32"] if precision != "f32" else [])
    tell.total = 1 + 2 * len(runs) + len(nodes)
    truth: list[MarkedRun] = []
    plain: list[MarkedRun] = []
    late = f"the time limit of {timeout:g} s ran out" if timeout is not None else ""
    refused: str | None = None  # OpenVINO's failure on the model reshaped to the inputs' static shapes
    while True:  # the audited run first: the verdict rests on it; the plain and f32 runs add to it
        try:
            audited = run_steps(ov_model, marks, arrays, device, precision, next_inputs, tell.run("audited"),
                                deadline, widen=True)  # fmt: skip
            work.outputs_visited += sum(run.visited for run in audited)
            break
        except InferenceTimeoutError:
            unchecked = [_unchecked(node, ids, f"{late} during the audited run") for node in nodes]
            stopped = f"{late} during the audited run, before its bodies were run"
            return report(None, described, unchecked + unbuilt + _body_reductions(model, kinds, cut=stopped), [],
                          f"OpenVINO did not finish the audited run of the model: {late}", notes)  # fmt: skip
        except MemoryLimitError:  # too large for this process: the answer is the limit
            raise
        except _FeedError as own:  # ovreduce's, not OpenVINO's: a refusal stays one, a bug is reported as a bug
            raise own.error from None
        except InputError:  # inputs OpenVINO's plugin would crash on, refused before it runs
            raise
        except Exception as exc:  # compile or inference failure of the whole model
            as_is = read() if static else None
            static = False
            if as_is is not None and _reshaped(as_is, arrays):  # OpenVINO may refuse the static shapes, not the
                refused, ov_model = clean_message(exc), as_is  # inputs: the model as it is, as decode steps run it
                nodes, shared, marks, slots, chains, branches = marked(ov_model)
                tell.total += 2
                continue
            also = refused if refused != clean_message(exc) else None  # (the same failure: not the reshape's)
            cause = _made_for(described, tell.last, exc, _failed_step(replay), also)
            # (a model ovreduce will not give OpenVINO, which would crash on it, is said in ovreduce's words)
            failed = str(exc) if isinstance(exc, IRStructureError) else f"OpenVINO failed: {clean_message(exc)}{cause}"
            why = f"{failed} (the audited run)"
            unchecked = [_unchecked(node, ids, why) for node in nodes] + unbuilt
            return report(None, described, unchecked + _body_reductions(model, kinds, cut=why), [], failed, notes)
    if refused is not None:
        notes.append(f"OpenVINO failed to run the model reshaped to the inputs' static shapes ({refused}); it ran the "
                     f"model as it is (its dynamic shapes) on the same inputs: every run was compiled so, as decode "
                     f"steps are")  # fmt: skip
    check_captured(marks, audited, max_elements, what="the audit")
    effective = audited[0].effective_precision
    try:  # the same inputs, decode steps included, for every run: they differ in precision only
        plain = run_steps(fitted(), [], arrays, device, precision, replay, tell.run("plain"), deadline)
        work.outputs_visited += sum(run.visited for run in plain)
        if effective not in ("f32", None) or precision != "f32":
            if "f32" not in runs:  # a device that ignored the f32 hint: measure drift all the same
                tell.total += 2
            fresh = fitted()
            truth_marks = _same_nodes(fresh, nodes, kinds, work)
            truth = run_steps(fresh, truth_marks, arrays, device, "f32", replay, tell.run("f32"), deadline, widen=True)
            work.outputs_visited += sum(run.visited for run in truth)
    except InferenceTimeoutError:
        what = "the final outputs of a plain run are not compared" if not plain else "no drift is measured"
        notes.append(f"{late} after the audited run: {what}")
    except MemoryLimitError:  # too large for this process: the answer is the limit
        raise
    except Exception as exc:  # compile or inference failure of the whole model
        failed = f"OpenVINO failed: {clean_message(exc)}{_made_for(described, tell.last, exc)}"
        return report(None, described, [], [], failed, notes)
    _kernels_by_layer([*audited, *plain], renamed)
    if steps:
        step_fed = replay(1, audited[0]) if replay is not None and len(audited) > 1 else None
        notes.append(_steps_note(probe, len(audited) - 1, arrays, step_fed, embed))
        notes += _kv_cache_note(audited[0], truth[0] if truth else None, precision, plain[0] if plain else None)
    elif ov_model.get_sinks() and any(set(port.get_names()) & (TOKEN_IDS | EMBEDDINGS) for port in probe.inputs):
        notes.append(
            f"the model is stateful ({len(ov_model.get_sinks())} state variables, as its Assign layers count them: an "
            f"LLM's KV cache): this run started from empty state, so what reads the state was audited on none of it; "
            f"asking for N decode steps (steps N) audits them too, each reading what the runs before it stored"
        )
    if target == "bf16" and meant_for == device and _runs_natively(device, target):
        began = time.perf_counter()
        executes, kernels = _executed(plain, fitted, device, target, notes)
        repeated = _repeated_names(chains, nodes, shared)
        chains = [
            _within(as_executed(chain, node, _with_fused(executes, node, chain.op, *_above_nodes(chain)), target,
                                inside := _inside_kernels([node, *_chain_nodes(chain, node), *_above_nodes(chain)],
                                                          kernels)),
                    node, kernels, inside)
            if again is None
            else replace(chain, unknown=_named_alike(again, shared[again], "its chain", target))
            for chain, node, again in zip(chains, nodes, repeated, strict=True)
        ]  # fmt: skip
        chains = [chain if chain.unknown is not None or (moved := _moved_up(chain, executes, target)) is None
                  else replace(chain, unknown=moved) for chain in chains]  # fmt: skip
        if any(chain.executed_in_f32 for chain in chains):
            notes.append(f"{device}'s execution graph of the model in {target} runs some reductions or the ops feeding "
                         f"them in f32 (a CPU keeps, for one, what follows the graph's last MatMul or convolution in "
                         f"f32), or computes them inside a kernel that fuses them, in f32 (its MVN or RMS kernel, a "
                         f"snippets Subgraph, a MatMul's fused ops: a CPU's kernels compute in f32 and round to "
                         f"{target} only what they store): those are judged in f32, as it executes them")  # fmt: skip
        if any(chain.marks_overridden for chain in chains):
            notes.append(f"{device}'s execution graph of the model in {target} runs some reductions or the ops feeding "
                         f"them in {target} though the model marks them to stay in the original precision (a CPU "
                         f"fuses a marked op into a kernel that stores its result in {target}): those are judged in "
                         f"{target}, as it executes them")  # fmt: skip
        times.target_seconds += time.perf_counter() - began
    if target is not None and _runs_natively(device, target):
        began = time.perf_counter()
        try:
            native = run_on_device([_chain_spec(chains[k], slots[k], n, audited[0]) for k, n in enumerate(nodes)],
                                   device, target)  # fmt: skip
        except Exception as exc:  # the device refusing the rebuilt chains: the figures stay emulated
            notes.append(f"the reductions' chains could not run on {device} in {target}: {clean_message(exc)}")
        times.device_seconds += time.perf_counter() - began
    layers = []
    cut: str | None = None  # the time limit left reductions unchecked: the audit did not finish
    for k, node in enumerate(nodes):
        if deadline is not None and time.monotonic() > deadline:
            layers += [_unchecked(n, ids, f"{late} before it was checked") for n in nodes[k:]]
            cut = f"the audit did not finish: {late} with {len(nodes) - k} of {len(nodes)} reductions not checked"
            break
        tell(f"checking reduction {k + 1} of {len(nodes)}", 1)
        name = node.get_friendly_name()
        per_step = [
            _check_step(kinds[node.get_type_name()], node, ids.get(name), slots[k], k, run,
                        truth[step] if step < len(truth) else None, atol, rtol, fail_on_drift, target is not None)
            for step, run in enumerate(audited)
        ]  # fmt: skip
        times.reference_seconds += sum(row.reference_seconds for row in per_step)
        times.check_seconds += sum(row.check_seconds for row in per_step)
        unseen: str | None = None  # why the kernel the model runs is not the one observed (its tensors marked)
        if shared[name] == 1:  # (execution graphs name kernels by node name)
            for row in per_step:
                row.runtime_precision = audited[0].runtime_precision.get(name)
                row.plain_runtime_precision = plain[0].runtime_precision.get(name) if plain else None
            unseen = _runs_unobserved(per_step[0], plain[0] if plain else None, node)
        elif plain and plain[0].effective_precision not in ("f32", None):
            unseen = _named_alike(name, shared[name], "this one", plain[0].effective_precision)
        if target is not None:
            began = time.perf_counter()
            fed = (
                None
                if scale is None
                else basis(chains[k].op, node, [a.node for a in chains[k].above], _added_after(node) is not None)
            )
            headroom = _worst_target(
                [_target_scaled(fed, scale, chains[k], node, slots[k], run, target, ids, row, step if steps else None,
                                None if native is None or step else (native[0][k], native[1][k]), unseen)
                 for step, (run, row) in enumerate(zip(audited, per_step, strict=True))]
            )  # fmt: skip
            times.target_seconds += time.perf_counter() - began
            for row in per_step:
                row.expected = None
        layer = _worst_step(per_step)
        layer.target = headroom if target is not None else None
        work.reductions_checked += len(audited)
        work.lookups += 3
        # the row judges the kernel observed, not the one the model runs: nothing is established of that one
        layer.not_established = layer.not_established or unseen
        layers.append(layer)
    bodies = {ref.path: ref for ref in model.bodies()}  # to name each body's container as the rows name them
    audited_bodies = _across_steps([branches.audit(run, model, kinds, device, precision, deadline, atol, rtol, work)
                                    for run in audited])  # fmt: skip
    layers += unbuilt + [row for rows in audited_bodies.values() for row in rows]
    layers += _body_reductions(model, kinds, skip=set(audited_bodies))
    if target is not None:
        for row in layers:
            if row.target is None:  # a body's reduction, or one the time limit left: its chain was not captured
                why = row.not_established or "its input chain was not captured"
                if row.audited and row.body_path:
                    why = (f"its input chain inside {_body_words(bodies, row.body_path)} is not captured for the "
                           f"target precision")  # fmt: skip
                row.target = TargetHeadroom("not-established", False, f"not examined: {why}")
    finals = _final_outputs(ov_model, plain, audited, work)
    if any(not f.identical for f in finals) and marks:
        notes.append(
            "marking the reductions' tensors as outputs changed OpenVINO's graph (fusions), so the final outputs "
            "of the audited run differ from a plain run (see final_outputs)"
        )
    elif any(not f.identical for f in finals):  # nothing marked: the two runs compiled the same graph
        notes.append(
            "the final outputs of the audited run differ from a plain run of the same graph (nothing was marked in "
            "it): OpenVINO gives the model other outputs for the same inputs (see final_outputs)"
        )
    tell("done")
    return report(effective, described, layers, finals, cut, notes)


def device_refuses(device: str, target: str | None) -> str | None:
    """Why ``device`` never runs a model in ``target``, where OpenVINO's plugin for it refuses that inference
    precision: the GPU plugin's ``INFERENCE_PRECISION_HINT`` accepts f16, f32 or dynamic only (bf16 is an invalid value
    there), and it runs f16 by default; the NPU plugin's inference precisions are f32 and f16, and its hardware computes
    in f16 (OpenVINO's NPU device documentation); a GPU or NPU named through OpenVINO's virtual devices (``AUTO:GPU``,
    ``MULTI:GPU,CPU``, ``HETERO:NPU,CPU``, ``BATCH:GPU(4)``), which may place the model on it, is one too. None where it
    may."""
    if target != "bf16":
        return None
    kind = next((name for name in _physical_devices(device) if name in ("GPU", "NPU")), None)
    if kind is None:
        return None
    article = "an" if kind == "NPU" else "a"
    named = "" if device.split(".")[0].upper() == kind else f" ({device} puts the model on {article} {kind})"
    if kind == "NPU":
        return ("OpenVINO's NPU plugin never runs bf16: its inference precisions are f32 and f16, and the NPU computes "
                "in f16 (OpenVINO's NPU device documentation), so a bf16 verdict says nothing of what the NPU "
                f"computes{named}; expected f16, the precision an NPU runs")  # fmt: skip
    return ("OpenVINO's GPU plugin never runs bf16: its inference precision accepts f16, f32 or dynamic only (it "
            "refuses bf16 as an invalid value) and is f16 by default, so a bf16 verdict says nothing of what the GPU "
            f"computes{named}; expected f16, the precision a GPU runs")  # fmt: skip


_VIRTUAL_DEVICES = ("AUTO", "MULTI", "HETERO", "BATCH")


def _physical_devices(device: str) -> list[str]:
    """The device types ``device`` names (upper case, without their ``.n`` index): itself, or the devices a virtual
    device's list gives (``AUTO:GPU,CPU``, ``BATCH:GPU(4)``), as OpenVINO parses them."""
    head, colon, rest = device.partition(":")
    if colon and head.strip().upper() in _VIRTUAL_DEVICES:
        return [name for item in rest.split(",") for name in _physical_devices(item.split("(")[0].strip())]
    return [device.strip().split(".")[0].upper()]


def _random_notes(fixed: list[str], unfixed: list[str]) -> list[str]:
    """What the audit says of the model's random ops of seeds 0 (each compile would draw anew): their seeds fixed, so
    that the audited, plain and f32 runs draw the same values; or, where OpenVINO would not let them be fixed, that
    the runs' differences are the draws' too."""

    def named(ops: list[str]) -> str:
        return ", ".join(ops[:3]) + (f" and {len(ops) - 3} more" if len(ops) > 3 else "")

    notes = []
    if fixed:
        notes.append(f"the model draws random values ({named(fixed)}, of seeds 0: each compile of it draws anew); the "
                     f"audit fixed their seeds so that its runs draw the same, and the final outputs and drift "
                     f"compare precision and fusions only")  # fmt: skip
    if unfixed:
        notes.append(f"the model draws random values ({named(unfixed)}, of seeds 0), whose seeds OpenVINO did not let "
                     f"the audit fix: each run draws anew, so the final outputs' differences and the drift of what "
                     f"they feed are the draws' as much as the precision's")  # fmt: skip
    return notes


def _walk_above(chains: list[Chain], slots: list[tuple[int | npt.NDArray[Any], ...]], marks: list[Any],
                max_elements: int | None, runs: int) -> None:  # fmt: skip
    """Each chain followed up through the elementwise ops above it (:func:`ovreduce.headroom.walk_above`), their
    inputs marked where the audit's capture budget (:func:`check_kept`'s, for ``runs`` runs) has room for them: a
    tensor already marked is not marked again, and an audit that fits without them still fits."""
    known: dict[Any, int] = {}
    for index, port in enumerate(marks):
        known.setdefault(port, index)
    budget = None if max_elements is None else KEPT_FACTOR * max_elements
    used = runs * sum(elements_bound(port.get_partial_shape()) for port in marks)

    def room(port: Any) -> bool:
        nonlocal used
        need = runs * elements_bound(port.get_partial_shape())
        if budget is not None and used + need > budget:
            return False
        used += need
        return True

    for chain, slot in zip(chains, slots, strict=True):
        entry = ([i if isinstance(i, int) else None for i in chain.sources] if chain.op is not None
                 else [slot[0] if isinstance(slot[0], int) else None])  # fmt: skip
        walk_above(chain, entry, marks, known, room)


def _chain_nodes(chain: Chain, reduction: Any) -> list[Any]:
    """The op of ``chain`` and the nodes that compute its inputs (the reduction's data input where it has no op)."""
    if chain.op is None:
        return [reduction.input_value(0).get_node()]
    return [chain.op, *(value.get_node() for value in chain.op.input_values())]


def _above_nodes(chain: Chain) -> list[Any]:
    """The ops above ``chain`` and the ops whose captured outputs they start from."""
    return [*(above.node for above in chain.above),
            *(source.get_node() for above in chain.above for source in above.sources)]  # fmt: skip


# The ops that only move data that OpenVINO's MoveEltwiseUpThroughDataMov moves an elementwise op above
_DATA_MOVEMENT = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Transpose", "ShuffleChannels", "DepthToSpace",
                            "SpaceToDepth", "BatchToSpace", "SpaceToBatch", "Gather"})  # fmt: skip


def _moved_up(chain: Chain, executes: Mapping[str, str], precision: str) -> str | None:
    """Why what the device runs the chain's op in is not known where its execution graph does not name it because
    OpenVINO moved it: ``MoveEltwiseUpThroughDataMov`` (``src/common/transformations``, run by the CPU plugin) puts an
    elementwise op of one data input (its others scalar Constants) above the Reshape or Transpose feeding it, as a new
    node of a new name, which the graph runs in a precision of its own (an Exp in f32), where it is all that reads that
    data. None where the graph names the op, or the op is not one the pass moves."""
    op = chain.op
    if op is None or op.get_friendly_name() in executes or op.get_input_size() < 1:
        return None
    source = op.input_value(0).get_node()
    others = [op.input_value(i).get_node() for i in range(1, op.get_input_size())]
    if source.get_type_name() not in _DATA_MOVEMENT or not all(
        o.get_type_name() == "Constant" and int(np.prod(o.get_output_shape(0))) == 1 for o in others
    ):
        return None
    readers = [t.get_node() for t in op.input_value(0).get_target_inputs() if t.get_node().get_type_name() != "Result"]
    if readers != [op]:  # the pass moves it only where it is all that reads the moved data (not an RMSNorm's square)
        return None
    return (f"OpenVINO moves {_named(op)} above {_named(source)}, which only moves its data, as a node of a new name "
            f"(its MoveEltwiseUpThroughDataMov pass), and the execution graph runs that node in a precision of its "
            f"own: what the model runs its chain in, at {precision}, is not known")  # fmt: skip


def _named_alike(name: str, count: int, what: str, precision: str) -> str:
    """Why what the model runs ``what`` in, at ``precision``, is not known: ``count`` nodes share its ``name``."""
    return (
        f"{count} nodes of the model are named {name!r}, and its execution graph names kernels by node name: what "
        f"the model runs {what} in, at {precision}, is not known; give the nodes names of their own"
    )


def _repeated_names(chains: list[Chain], nodes: list[Any], shared: Mapping[str, int]) -> list[str | None]:
    """For each reduction, the name of its chain's op or its own that another node of the model has too (None: both
    are its own): an execution graph names kernels by node name, so what it runs such a node in is not known."""
    return [
        next((n.get_friendly_name() for n in (chain.op, node) if n is not None and shared[n.get_friendly_name()] > 1),
             None)
        for chain, node in zip(chains, nodes, strict=True)
    ]  # fmt: skip


def _runs_unobserved(layer: LayerAudit, plain: MarkedRun | None, node: Any) -> str | None:
    """Why the plain run executes reduction ``node`` in another precision than the audited run observed it in (its
    tensors made outputs), if it does: named in the plain execution graph in another precision, or fused there into
    a kernel (an RMS norm's) that runs in another precision than the one observed."""
    observed, runs = layer.runtime_precision, layer.plain_runtime_precision
    if plain is None or observed is None:
        return None
    if runs is not None:
        return None if runs == observed else (
            f"the model runs it in {runs}, and observed (its tensors made outputs) it ran in {observed}: its {runs} "
            f"execution was not examined")  # fmt: skip
    kernel = _fused_into(node, plain.runtime_precision) if observed in PROBED_TYPES else None
    if kernel is None or kernel[1] == observed:
        return None
    return (f"the model runs it fused into the kernel {kernel[0]!r} (its execution graph does not name the reduction), "
            f"in {kernel[1]}, and observed (its tensors made outputs) it ran alone in {observed}: its fused execution "
            f"was not examined")  # fmt: skip


_FUSED_REACH = 64
"""Nodes after a reduction looked at for the kernel of a plain execution graph that computes it fused."""


def _fused_into(node: Any, named: Mapping[str, str]) -> tuple[str, str] | None:
    """The kernel of a plain execution graph (``named``: each node name it names, with its precision) that executes
    reduction ``node`` fused, where the graph does not name the reduction: the nearest after it that it names (an RMS
    kernel is named after the norm's last Multiply). None where the reduction is computed from constants (folded),
    reaches the kernels only through shapes (ShapeOf), or no named node is found within :data:`_FUSED_REACH`."""
    if not named or not _runs_on_data(node):
        return None
    seen, queue = {node.get_friendly_name()}, deque([node])
    while queue and len(seen) <= _FUSED_REACH:
        for port in queue.popleft().outputs():
            for target in (t.get_node() for t in port.get_target_inputs()):
                name = target.get_friendly_name()
                if target.get_type_name() in ("ShapeOf", "Result", "Assign") or name in seen:
                    continue
                if name in named:
                    return name, named[name]
                seen.add(name)
                queue.append(target)
    return None


def _with_fused(executes: dict[str, str], *nodes: Any) -> Mapping[str, str]:
    """``executes`` (an execution graph's precision by node name) with those of ``nodes`` it does not name at the
    precision of the kernel that executes them fused (:func:`_fused_into`): a softmax's ReduceMax runs in the CPU's
    f32 Softmax kernel, and was judged in the target as if it ran alone."""
    fused = {}
    for node in nodes:
        if node is not None and node.get_friendly_name() not in executes:
            kernel = _fused_into(node, executes)
            if kernel is not None:
                fused[node.get_friendly_name()] = kernel[1]
    return ChainMap(fused, executes) if fused else executes


# The kernels OpenVINO's transformations fuse a pattern of ops into, which compute those ops inside in f32 (the CPU's
# MVN for a decomposed LayerNorm, its RMS for an RMSNorm, its Softmax): an op the execution graph does not name and
# that such a kernel after it computes is inside it. An op another kernel after it computes may be a renamed node of
# its own (a Subtract's negation fused into a MatMul named after it), which stores its result: not inside.
_FUSING_KERNELS = frozenset({"MVN", "RMS", "Softmax", "NormalizeL2", "ScaledDotProductAttention"})
# A MatMul or a convolution the graph does not name, read by an op the graph names in a kernel of these types: that
# kernel computes it and took the name of the op it fused after it (a Linear's bias Add), adding that op to its f32
# accumulator before it stores
_ACCUMULATING = frozenset({"MatMul", "Convolution", "GroupConvolution"})
_ACCUMULATOR_KERNELS = frozenset({"FullyConnected", "MatMul", "Convolution"})


def _inside_kernels(nodes: Sequence[Any], kernels: Mapping[str, tuple[str, str]]) -> frozenset[str]:
    """The names of ``nodes`` the device computes inside a kernel of its execution graph without storing their result
    (``kernels``: each node name the graph names, with the name and type of the kernel that computes it): a node the
    graph names whose every reader is computed by the same kernel (an op a snippets ``Subgraph`` or a FullyConnected
    fuses before the op whose result it stores), and a node it does not name, which a kernel of
    :data:`_FUSING_KERNELS` after it computes (a decomposed LayerNorm's ops in the CPU's MVN kernel, an RMSNorm's in its
    RMS kernel). The CPU's kernels compute in f32 whatever precision they run in: they round to it only what they load
    and store. A reader the graph does not know (a Result the audit added to capture a tensor, the Convert before it)
    is not one."""
    found = set()
    for node in nodes:
        if node is None or not kernels:
            continue
        name = node.get_friendly_name()
        if name not in kernels:
            if _kernel_of(node, kernels):
                found.add(name)
            continue
        readers = [_kernel_of(target.get_node(), kernels) for port in node.outputs()
                   for target in port.get_target_inputs()]  # fmt: skip
        known = [kernel for kernel in readers if kernel != ""]
        if known and all(kernel == kernels[name][0] for kernel in known):
            found.add(name)
    return frozenset(found)


def _within(chain: Chain, node: Any, kernels: Mapping[str, tuple[str, str]], inside: Collection[str]) -> Chain:
    """``chain`` with the kernel that computes it inside named, where the device computes its reduction, its op or
    what feeds that op inside a kernel that fuses them (``inside``: :func:`_inside_kernels`)."""
    if node.get_friendly_name() in inside or chain.op_inside:
        kernel = _kernel_of(node, kernels)
    elif any(chain.sources_inside):
        kernel = _kernel_of(node if chain.op is None else chain.op, kernels)
    else:
        return chain
    return replace(chain, kernel=kernel or None)


def _kernel_of(node: Any, kernels: Mapping[str, tuple[str, str]]) -> str | None:
    """The name of the kernel that computes ``node`` (``kernels``, as :func:`_inside_kernels`), or of the kernel of
    :data:`_FUSING_KERNELS` after it that computes it fused where the graph does not name it; None where neither is
    known (it is stored, read by no kernel, a Result of the model's, or renamed), but for a MatMul or convolution the
    kernel of its reader took the name of (:data:`_ACCUMULATING`); "" for a node the execution graph
    does not hold, which the audit added (a Result capturing a tensor, the Convert widening it)."""
    name = node.get_friendly_name()
    if name in kernels:
        return kernels[name][0]
    kind = node.get_type_name()
    if kind == "Result":
        return ""
    if kind == "Convert" and all(
        t.get_node().get_type_name() == "Result" and t.get_node().get_friendly_name() not in kernels
        for port in node.outputs()
        for t in port.get_target_inputs()
    ):
        return ""
    if kind == "ShapeOf":  # reads the shape, not the values
        return ""
    fused = _fused_into(node, _KernelTypes(kernels))
    if fused is not None and fused[1] in _FUSING_KERNELS:
        return kernels[fused[0]][0]
    if kind in _ACCUMULATING:
        readers = {kernels[t.get_node().get_friendly_name()] for port in node.outputs()
                   for t in port.get_target_inputs() if t.get_node().get_friendly_name() in kernels}  # fmt: skip
        if len(readers) == 1 and (kernel := next(iter(readers)))[1] in _ACCUMULATOR_KERNELS:
            return kernel[0]
    return None


class _KernelTypes(Mapping[str, str]):
    """Each node name an execution graph names, with the type of the kernel that computes it (a view of
    :func:`_inside_kernels`'s ``kernels``, for :func:`_fused_into`)."""

    def __init__(self, kernels: Mapping[str, tuple[str, str]]) -> None:
        self.kernels = kernels

    def __getitem__(self, name: str) -> str:
        return self.kernels[name][1]

    def __contains__(self, name: object) -> bool:
        return name in self.kernels

    def __iter__(self) -> Iterator[str]:
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)


def _folded_when_compiled(node: Any, budget: int = 256) -> bool:
    """Whether OpenVINO folds ``node`` into a Constant when it compiles (computing it in f32, before any conversion to
    f16 or bf16): it depends on no input or state of the model, and on no Constant behind a Convert (a compressed IR's
    decompression, which OpenVINO keeps from folding)."""
    seen: set[Any] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.get_type_name()
        if kind in ("Parameter", "ReadValue") or len(seen) > budget:
            return False
        if kind == "Convert" and current.input_value(0).get_node().get_type_name() == "Constant":
            return False
        if kind == "ShapeOf" and not current.get_input_partial_shape(0).is_static:
            return False
        for value in current.input_values():
            source = value.get_node()
            if source not in seen:
                seen.add(source)
                stack.append(source)
    return bool(node.get_type_name() != "Constant")


def _runs_on_data(node: Any) -> bool:
    """Whether ``node``'s value depends on the model's inputs or state (a Parameter or ReadValue before it), so that
    OpenVINO computes it as the model runs rather than folding it when it compiles."""
    seen, stack = set(), [node]
    while stack:
        current = stack.pop()
        kind = current.get_type_name()
        if kind in ("Parameter", "ReadValue"):
            return True
        if kind == "ShapeOf" and current.get_input_partial_shape(0).is_static:
            continue  # a static shape is a constant
        for value in reversed(current.input_values()):  # the first input first: the data's way, as a rule
            source = value.get_node()
            if source.get_friendly_name() not in seen:
                seen.add(source.get_friendly_name())
                stack.append(source)
    return False


def _target_step(
    chain: Chain, node: Any, slot: tuple[int | npt.NDArray[Any], ...], run: MarkedRun, target: str,
    ids: Mapping[str, str], layer: LayerAudit, step: int | None,
    on_device: tuple[npt.NDArray[Any] | None, str | None] | None = None, unseen: str | None = None,
    fused: bool = False,
) -> TargetHeadroom:  # fmt: skip
    """Whether reduction ``node`` survives ``target``, from what one run captured of its chain. ``unseen`` says why
    the kernel the model runs the reduction in is not the one the run observed (:func:`_runs_unobserved`): where the
    verdict's device figures are that observed kernel's (what it executes in, its output against the emulation), a
    survival is not established by them. ``fused``: the device runs the chain fused into a kernel that takes its input
    in the target and computes the op and the reduction in f32 (a GPU's RMS kernel)."""
    if layer.error is not None or layer.comparison is None:
        return TargetHeadroom("not-established", False, f"not examined: {layer.error or 'no output to compare'}",
                              step=step)  # fmt: skip
    data, axes, out = (_exact_float(run.marked[i]) if isinstance(i, int) else i for i in slot)
    inputs = [_exact_float(run.marked[i]) if isinstance(i, int) else i for i in chain.sources] if chain.op is not None \
        else [data]  # fmt: skip
    if all(np.asarray(a).dtype.kind in "iub" for a in inputs):  # (OpenVINO's f16 and bf16 conversions keep it so)
        return TargetHeadroom("protected", False, f"an integer reduction: OpenVINO's conversion to {target} leaves "
                              f"integer ops integer, so it computes it in its own type", step=step)  # fmt: skip
    if not all(np.asarray(a).dtype.kind == "f" for a in inputs):
        return TargetHeadroom("not-established", False, "not examined: its input is not floating-point", step=step)
    if _folded_when_compiled(node):
        return TargetHeadroom("protected", False, (
            f"it depends on no input of the model, from Constants that are not compressed: OpenVINO folds it, with "
            f"its chain, into a Constant when it compiles, computing it in f32, and the conversion to {target} "
            f"converts only that Constant (a value past {target}'s largest saturating to it)"), step=step)  # fmt: skip
    if np.size(data) == 0:  # nothing reaches it: no precision shows (an empty max is undefined, not an overflow)
        return TargetHeadroom("not-established", False, "not established: its input is empty", step=step)
    op_kept, reduction_kept = chain.op_kept or fused, chain.reduction_kept or fused
    # what the device executes the reduction in: as its execution graph of the model runs it where that was read, else
    # as the audited run (its tensors made outputs) executed it, where that run executed in the target precision
    on_target = run.effective_precision == target
    executes = chain.executes or (run.runtime_precision.get(node.get_friendly_name())
                                  if on_target and chain.unknown is None else None)  # fmt: skip
    # the device's figures are those of the kernel observed in the audited run (its tensors made outputs), which the
    # model, as it is, may not run: neither its execution graph nor the chain's own run on the device says otherwise
    observed = on_target and chain.executes is None
    if on_device is not None and on_device[0] is not None:  # the chain itself ran on the device, in the target
        out, executes, on_target, observed = on_device[0], on_device[1], True, False
    op_type = None if chain.op is None else chain.op.get_type_name()
    # Values captured from a run in a coarser type than the target carry its rounding: bf16's step near f16's
    # largest value is 256, so 65,450 is captured as 65,536. Past the limit by no more than that is unknown, and no
    # bound computed on such values settles anything.
    coarse = run.effective_precision == "bf16" and target == "f16" and not on_target
    # Values captured from a run in the target type itself hold no rounding the target adds: where an op of that run
    # computed the chain's input, its rounding to the target happened before the capture, and neither the emulation
    # nor the chain rebuilt on the device (from the same values) sees it
    # (a model's input or Constant is captured as given, and values moved from Constants only as the target converts
    # them)
    # (an input computed inside the op's kernel arrives unrounded, but the run captured it rounded: not given)
    count = len(chain.sources_kept)
    given = [(kept and not inner) or moved for kept, inner, moved in zip(
        chain.sources_kept, chain.sources_inside or [False] * count, chain.constant_valued or [False] * count,
        strict=True)]  # fmt: skip
    prerounded = (coarse or run.effective_precision == target) and not all(given)
    eps = _added_after(node)  # what an Add after the reduction adds to it (an RMSNorm's eps), where one does
    added = None if eps is None else eps[0]
    # the op's Constant operands (an exponent, a scale): converted, but no value that flows through the chain
    operands = chain.constants  # (a Constant behind a decompression Convert too: a compressed IR's exponent)
    if operands is not None and chain.op is not None:  # but rows a Gather looks up by the model's data (an
        # embedding table's, the ids': every LLM's first norm) are the values that flow through the chain
        operands = [fixed and not _looked_up(chain.op.input_value(i)) for i, fixed in enumerate(operands)]
    try:
        # the ops above the chain: their values, and where one reaches the type's maximum, what they deliver to it
        path = arrive(chain, lambda mark: _exact_float(run.marked[mark]), target) if chain.above else None
        arrived = None if path is None else path.arrived
        emu = None
        if layer.expected is not None and not coarse and not prerounded and arrived is None:  # a proven bound
            emu = bounded(node.get_type_name(), inputs, np.asarray(data), layer.expected, np.asarray(axes),
                          layer.keep_dims, target, op=op_type, op_kept=op_kept,
                          reduction_kept=reduction_kept, added=added, operands=operands)  # fmt: skip
        if emu is None:
            constants = chain.constants
            emu = emulate(node.get_type_name(), inputs, np.asarray(axes), layer.keep_dims, target, op=op_type,
                          op_kept=op_kept, reduction_kept=reduction_kept,
                          sources_kept=[False] * len(chain.sources_kept) if fused else chain.sources_kept,
                          constants=constants, arrived=arrived, added=added, operands=operands,
                          sources_inside=None if fused else chain.sources_inside,
                          op_inside=chain.op_inside and not fused)  # fmt: skip
    except Exception as exc:  # inputs the chain's ops refuse (shapes that do not broadcast...)
        return TargetHeadroom("not-established", False, f"not examined: the emulation failed: {exc}", step=step)
    nodes = {"input": None, **({} if chain.op is None else {chain.op.get_type_name(): chain.op})}
    nodes[node.get_type_name()] = node
    above = [] if path is None else path.stages
    stages = tuple(
        TargetStage(st.what, None if named is None else named.get_friendly_name(),
                    None if named is None else ids.get(named.get_friendly_name()),
                    st.largest, st.overflowed, st.underflowed, st.kept)
        for st in [*above, *emu.stages]
        for named in [st.node if st.node is not None else nodes.get(st.what)]
    )  # fmt: skip
    c = emu.comparison
    atol, rtol = ((c.atol, c.rtol) if c is not None
                  else target_tolerances(target, np.size(data), emu.expected.size, node.get_type_name()))  # fmt: skip
    # the target's absolute tolerance, where the row is judged without it (its outputs all lie within it of 0)
    absolute = target_tolerances(target, np.size(data), emu.expected.size, node.get_type_name())[0]
    judged_atol = 0.0 if emu.relative else atol
    atol = absolute if emu.relative else atol
    largest, limit = max([emu.largest, *(st.largest for st in above)]), FINITE_MAX[target]
    # values of Constants past the type's largest, which OpenVINO's conversion saturates: the chain's, and those the
    # ops above it convert where they are emulated (a mask added above a softmax's Subtract)
    saturated = emu.saturated + (path.saturated if path is not None and path.arrived is not None else 0)
    flushed = None if any(st.underflowed is None for st in stages) else sum(st.underflowed or 0 for st in stages)
    first = next((st for st in stages if st.overflowed), stages[-1])
    # what the original precision cannot hold either is no overflow of the target's
    lost_in_f32 = _lost_in_f32(run, np.asarray(data))
    # an output the target makes inf or NaN from input elements all finite in the f32 run is the target's overflow,
    # whatever the f32 run lost elsewhere (a -inf mask in another row, an exp(100) in another slice)
    own = _own_overflows(emu, np.asarray(data), np.asarray(axes), layer.keep_dims) if lost_in_f32 else 0
    if emu.non_finite and lost_in_f32 and not own:
        status: Any = "not-established"
        message = (f"not established: {lost_in_f32} of its {np.size(data)} input elements are not finite in the f32 "
                   f"run already ({_stage_name(first, stages)} reaches {_g(first.largest)}): {target} adds no "
                   f"overflow there to judge")  # fmt: skip
    elif emu.non_finite and coarse and first.largest is not None and first.largest <= limit * (1 + 2**-7):
        status = "not-established"
        message = (f"not established: {_stage_name(first, stages)} reaches {first.largest:.6g}, past {limit:.6g} by "
                   f"no more than bf16's rounding, and the values were captured from the bf16 run: an audit in "
                   f"precision f32 tells")  # fmt: skip
    elif chain.unknown is not None:  # what the emulation assumes of the device's execution may not hold
        status = "not-established"
        message = f"not established: {chain.unknown}"
    elif emu.non_finite:
        status = "overflow"
        what = _stage_name(first, stages)
        lost = f"{emu.non_finite} of {emu.expected.size} output element(s) inf or NaN in {target}"
        if first.overflowed and first.largest is not None and first.largest > limit:
            message = f"{what} reaches {_g(first.largest)} > {limit:.6g}: {lost}"
        else:  # no value passes the maximum: an input flushed to 0 made the inf (a divisor, a negative power's base)
            at = stages.index(first)
            zeros = sum(st.underflowed or 0 for st in stages[:at] if st.underflowed)
            made = (f"{what} makes {first.overflowed} element(s) inf or NaN in {target}" if first.overflowed
                    else f"its chain makes elements inf or NaN in {target}")  # fmt: skip
            peak = max(stages, key=lambda st: st.largest or 0.0)
            message = (made + (f" though no value reaches {limit:.6g} (largest {_g(largest)})" if largest <= limit
                               else "") + ": "
                       + (f"{zeros} element(s) before it flush to 0 in {target} (a divisor or a negative power's "
                          f"base of 0 gives inf); " if zeros else "")
                       + (f"{_stage_name(peak, stages)} reaches {_g(largest)} > {limit:.6g} too; " if largest > limit
                          else "")
                       + lost)  # fmt: skip
    elif c is not None and not c.ok and not (emu.relative and not emu.flushed and not emu.cancelled
                                             and emu.added is None):  # fmt: skip
        status = "inaccurate"
        if emu.relative:  # a value lost (flushed to 0), or an error against what the Add after it adds
            message = _relative_failure(emu, c, target, atol, eps)
        else:
            cancelled = sum(st.cancelled for st in [*above, *emu.stages])
            message = (f"off by {_g(c.max_rel_error)} relative in {target} (tolerance {c.rtol:.3g})"
                       + (f"; {flushed} non-zero element(s) flush to 0" if flushed else "")
                       + (f"; {cancelled} element(s) cancel to 0 in {target}, their exact values far above what it "
                          f"flushes (a difference of values {target} holds equal)" if cancelled else ""))  # fmt: skip
    elif path is not None and path.over is not None:  # an overflow above, through ops not emulated
        status = "not-established"
        over = stages[next(k for k, st in enumerate(path.stages) if st is path.over)]
        between = list(dict.fromkeys(f"{n.get_type_name()} {n.get_friendly_name()!r}" for n in path.blocked))
        message = (
            f"not established: {_stage_name(over, stages)} above its chain reaches {_g(over.largest)}, past "
            f"{target}'s largest finite value {limit:.6g}, "
        )
        if [over.name] == [n.get_friendly_name() for n in path.blocked]:  # a captured value an op not followed made
            message += (f"and whether that op overflows in {target} (or saturates, as a Constant past the maximum "
                        f"does) decides whether the reduction does: it is not emulated")  # fmt: skip
        else:
            message += (f"and {', '.join(between)} between it and the reduction {'is' if len(between) == 1 else 'are'}"
                        f" not emulated: whether the overflow reaches the reduction is not known")  # fmt: skip
    elif (
        prerounded
        and emu.bound is None
        and not covers_prior_rounding(
            emu,
            node.get_type_name(),
            inputs,
            [not g for g in given],
            np.asarray(axes),
            layer.keep_dims,
            target,
            str(run.effective_precision),
            op=op_type,
            node=chain.op,
            carried=None
            if not chain.above
            else prior_errors(chain, lambda mark: _exact_float(run.marked[mark]), str(run.effective_precision)),
        )
    ):  # inputs an op of a bf16 or f16 run computed, not given ones: their rounding in it is not bounded within
        status = "not-established"
        held = (f"which {target} holds exactly" if run.effective_precision != target
                else "rounded to it already")  # fmt: skip
        message = (f"not established: the emulation is within the tolerance, but it starts from values the "
                   f"{run.effective_precision} run captured, {held}: the rounding {target} adds to the chain's input "
                   f"does not show (nor in the chain's run on the device, from the same values), and no bound on the "
                   f"rounding settles it; an audit in precision f32 tells")  # fmt: skip
    elif (
        chain.reduction_kept and not chain.executed_in_f32 and not fused
        and (handed := _handed_down(node, emu, target)) is not None
    ):  # fmt: skip
        status = "overflow"  # kept in f32, but what it hands to an op running in the target is converted to it
        message = handed
    elif chain.protected:
        status = "protected"
        message = ("the device executes its chain in f32 in this model (its execution graph)" if chain.executed_in_f32
                   else "OpenVINO keeps its chain in the original precision (marked in the model)")  # fmt: skip
        if chain.kernel is not None:
            message += (f"; its kernel {chain.kernel!r} computes the chain in f32 inside, rounding to {target} only "
                        f"what it loads and stores")  # fmt: skip
    elif layer.not_established is not None:
        status = "not-established"
        message = f"not established: {layer.not_established}"
    elif unseen is not None and observed:
        status = "not-established"
        message = (f"not established: {unseen}; the device's figures here (what it executes the reduction in, its "
                   f"output against the emulation) are those of the kernel observed (largest magnitude "
                   f"{_g(largest)})")  # fmt: skip
    elif c is not None and not c.ok:  # judged relatively, nothing lost: the outputs are too small to tell
        status = "not-established"
        message = (f"not established: {_below_atol(emu, target, atol)}, so it is judged relative to them: off by "
                   f"{_g(c.max_rel_error)} (tolerance {c.rtol:.3g}), no output flushing to 0; whether an error of "
                   f"that size in outputs that small matters depends on what the model adds to them, which no "
                   f"Add of a Constant after it says")  # fmt: skip
    else:
        status = "headroom"
        top = max(stages, key=lambda st: st.largest or 0.0)
        factor = headroom_factor(largest, target)
        message = (f"largest magnitude {_g(largest)} ({_stage_name(top, stages)}): headroom x{_g(factor)}"
                   if factor is not None else "every value of its chain is 0")  # fmt: skip
        picks = node.get_type_name() in ("ReduceMax", "ReduceMin")  # (figures of what decides it: below)
        if (emu.saturated or (saturated and not picks)) and largest > limit:  # (only values the conversion
            # saturates reach past the limit)
            message = (f"largest magnitude {_g(largest)} ({_stage_name(top, stages)}), past {target}'s range only "
                       f"where Constants saturate to its largest")  # fmt: skip
        elif largest > limit and node.get_type_name() in ("ReduceMax", "ReduceMin"):
            # values past the range that overflow and still leave every output finite decide none of them (a fill
            # a max or min passes over, as a masked max pooling's -1e9): the figures are those of what decides them
            reached = np.abs(np.asarray(emu.expected, dtype=np.float64))
            deciding = float(np.max(reached[np.isfinite(reached)], initial=0.0))
            passed = sum(st.overflowed for st in stages)
            message = (f"largest magnitude {_g(deciding)} among the values that decide its outputs: headroom "
                       f"x{_g(headroom_factor(deciding, target))}; {passed} element(s) past {target}'s range (up to "
                       f"{_g(largest)}, {_stage_name(top, stages)}) overflow in {target} and decide none of its "
                       f"outputs (a fill the {node.get_type_name()} passes over)")  # fmt: skip
            largest = deciding
        if emu.bound is not None:
            message += f"; its error is at most {_g(emu.bound)} (a bound on the rounding, within the tolerance)"
        if emu.relative:
            message += f"; {_below_atol(emu, target, atol)}: judged relative to " + (
                "them" if eps is None else f"them plus the {_g(emu.added)} {_named(eps[1])} adds after it"
            )
            if emu.flushed:
                message += (f" ({emu.flushed} of its {emu.expected.size} output element(s) flush to 0 in {target}, "
                            f"within the tolerance of that sum)")  # fmt: skip
            if emu.cancelled:
                message += (f" ({emu.cancelled} of its {emu.expected.size} output element(s) cancel to 0 in "
                            f"{target}, within the tolerance of that sum)")  # fmt: skip
    wide = None if c is None or status != "headroom" else too_wide(c, np.size(data) // max(emu.expected.size, 1))
    if wide is not None:  # (a product's tolerance grows with its factors)
        message += f"; {wide}"
    back = next((st for st in stages[: len(above)] if st.overflowed), None)
    if back is not None and arrived is not None and status != "overflow" and not emu.non_finite:
        message += (f"; {_stage_name(back, stages)} above its chain overflows in {target}, and the ops below it bring "
                    f"its values back into range (emulated down to the reduction)")  # fmt: skip
    if chain.above_cut is not None:
        message += f"; {chain.above_cut}"
    if chain.above_unfollowed:
        message += f"; {_unfollowed(chain.above_unfollowed, ids, target)}"
    if saturated and status != "protected":
        message += (f"; {saturated} value(s) of a Constant past {target}'s largest finite value saturate to it, as "
                    f"OpenVINO converts a constant to {target}")  # fmt: skip
        if emu.clamped:
            message += (f" ({emu.clamped} output element(s) hold that largest value where the f64 reference lies past "
                        f"it: the conversion's, not judged)")  # fmt: skip
    if on_device is not None and on_device[0] is None and status != "protected":
        message += ("; its chain did not run on the device on its own: part of it is kept in the original precision, "
                    "or computed in f32 inside one of the device's kernels, which a graph of the target type cannot "
                    "rebuild")  # fmt: skip
    if (
        executes is not None
        and executes != target
        and not (status == "protected" and chain.executed_in_f32)
        and not (unseen is not None and observed)
    ):  # (the observed kernel's precision: said above)
        message += f"; {_device_note(executes)}"
    agree, diff = None, None
    # the device against the emulation; a bounded row has no element-wise result: against the f64 reference the
    # bound is proven around, within the bound and the tolerance
    predicted = emu.result if emu.result is not None else emu.expected
    # the chain rebuilt on the device starts from the captured values, not from what the ops above deliver
    rebuilt = on_device is not None and on_device[0] is not None
    if rebuilt and arrived is not None:
        message += "; the chain's run on the device starts from the captured values, not compared with the emulation"
    elif on_target and np.shape(out) == np.shape(predicted):
        agree, diff = _device_agreement(predicted, out, atol + (emu.bound or 0.0), rtol)
    return TargetHeadroom(
        status, status in ("overflow", "inaccurate"), message, largest, limit, headroom_factor(largest, target),
        sum(st.overflowed for st in stages), flushed, None if c is None else c.max_abs_error,
        None if c is None else c.max_rel_error, judged_atol, rtol, stages[len(above):], diff, agree, executes, step,
        emu.bound, stages[: len(above)],
    )  # fmt: skip


def _unfollowed(nodes: Sequence[Any], ids: Mapping[str, str], target: str) -> str:
    """That the walk above a chain reached ``nodes`` and did not follow them (past its depth or its count)."""
    named = [f"{_named(n)}" + (f" (layer {ids[n.get_friendly_name()]})" if n.get_friendly_name() in ids else "")
             for n in nodes[:3]]  # fmt: skip
    more = f" and {len(nodes) - 3} more" if len(nodes) > 3 else ""
    verb, whose = ("is", "its") if len(nodes) == 1 else ("are", "their")
    return (
        f"the ops above its chain are followed {ABOVE_DEPTH} ops of two computed inputs deep and {ABOVE_NODES} per "
        f"reduction at most, and not through an op OpenVINO does not evaluate (a Roll, a GatherND): "
        f"{', '.join(named)}{more} {verb} not followed, and {whose} captured values are taken as "
        f"they are, rounded to {target}: what {target} makes of them there (a difference that cancels, a divisor that "
        f"flushes to 0) does not show"
    )


def _as_declared(value: npt.NDArray[Any] | Any, parameter: Any) -> npt.NDArray[Any] | Any:
    """A captured value in the type ``parameter`` declares: an f16 or bf16 tensor is captured widened to f32."""
    dtype = element_type(port_type_name(parameter.output(0))).numpy
    return (
        value.astype(dtype) if isinstance(value, np.ndarray) and dtype is not None and value.dtype != dtype else value
    )


def _lost_in_f32(run: MarkedRun, data: npt.NDArray[Any]) -> int:
    """How many elements of a reduction's input the f32 run could not hold itself (inf or NaN in f32 already: no
    overflow of the target's). The capture holds what the run computed, in f32 where the model declares a tensor f16
    or bf16 (:func:`ovreduce.backends.openvino.run_marked` widens such marks)."""
    return int(np.count_nonzero(~np.isfinite(data))) if run.effective_precision == "f32" else 0


def _handed_down(node: Any, emu: Any, target: str) -> str | None:
    """Why the output of reduction ``node``, kept in the original precision, is lost where an op running in the target
    receives it: OpenVINO's ConvertPrecision puts a Convert to the target between a kept node and one that is not, and
    a value past the target's range converts to inf there (the emulation's result, in f32, is finite). None where
    every consumer is kept (or a Result: a model's output keeps its type), or nothing passes the range."""
    if emu.result is None:
        return None
    limit = FINITE_MAX[target]
    result = np.asarray(emu.result, dtype=np.float64)
    past = np.isfinite(result) & (np.abs(result) > limit)
    if not past.any():
        return None
    consumers = [port.get_node() for port in node.output(0).get_target_inputs()] if node.get_output_size() == 1 else []
    unkept = [c for c in consumers if c.get_type_name() != "Result" and not kept_in_original_precision(c)]
    if not unkept:
        return None
    return (f"{_named(node)} is kept in f32 and reaches {_g(float(np.max(np.abs(result[past]))))} > {limit:.6g}, "
            f"and {_named(unkept[0])}, which runs in {target}, receives it through the Convert to {target} OpenVINO "
            f"puts between them: {int(np.count_nonzero(past))} of {result.size} output element(s) inf in {target} "
            f"there")  # fmt: skip


def _own_overflows(emu: Any, data: npt.NDArray[Any], axes: npt.NDArray[Any], keep_dims: bool) -> int:
    """How many output elements the emulation makes inf or NaN (the f64 reference finite) whose input elements are
    all finite in the f32 run: the target's overflow, not the original precision's."""
    if emu.result is None:
        return 0
    bad = np.isfinite(emu.expected) & ~np.isfinite(np.asarray(emu.result, dtype=np.float64))
    if emu.undefined is not None:
        bad &= ~emu.undefined
    if data.ndim == 0:
        lost = ~np.isfinite(data)
    else:
        dims = tuple(sorted({int(a) % data.ndim for a in np.asarray(axes).reshape(-1)}))
        lost = np.any(~np.isfinite(data), axis=dims, keepdims=keep_dims)
    try:
        return int(np.count_nonzero(bad & ~np.broadcast_to(lost, bad.shape)))
    except ValueError:  # (shapes the reduction's output does not match: not told apart)
        return 0


def _added_after(node: Any) -> tuple[npt.NDArray[np.float64], Any] | None:
    """What every consumer of reduction ``node``'s output adds to it, where each is an Add of a Constant (an RMSNorm's
    ``mean(x²) + eps``; a Constant converted from another type counts): the values of the one adding the least, and
    that Add. None where a consumer is anything else, or there is none."""
    best: tuple[npt.NDArray[np.float64], Any] | None = None
    targets = list(node.output(0).get_target_inputs()) if node.get_output_size() == 1 else []
    for port in targets:
        add = port.get_node()
        if add.get_type_name() == "Result":  # (the audit's own, capturing it)
            continue
        if add.get_type_name() != "Add" or add.get_input_size() != 2:
            return None
        other = add.input_value(1 - port.get_index()).get_node()
        if other.get_type_name() == "Convert" and other.input_value(0).get_node().get_type_name() == "Constant":
            other = other.input_value(0).get_node()
        if other.get_type_name() != "Constant" or not other.get_output_element_type(0).is_real():
            return None
        values = np.asarray(constant_data(other), dtype=np.float64)
        if values.size == 0 or not np.isfinite(values).all():
            return None
        if best is None or float(np.min(np.abs(values))) < float(np.min(np.abs(best[0]))):
            best = (values, add)
    return best


def _named(node: Any) -> str:
    return f"{node.get_type_name()} {node.get_friendly_name()!r}"


def _below_atol(emu: Any, target: str, atol: float) -> str:
    """That every output of the row lies within the target's absolute tolerance of 0."""
    top = float(np.max(np.abs(emu.expected))) if np.size(emu.expected) else 0.0
    return (f"its outputs (largest {_g(top)}) all lie within {target}'s absolute tolerance ({atol:.3g}) of 0, which "
            f"would pass any result, zeros included")  # fmt: skip


def _relative_failure(emu: Any, c: Comparison, target: str, atol: float,
                      eps: tuple[npt.NDArray[np.float64], Any] | None) -> str:  # fmt: skip
    """The message of a row whose outputs all lie within the absolute tolerance of 0 and that fails relatively."""
    worst = f"their f64 reference values reach {_g(emu.lost_largest)}" if emu.lost_largest is not None else ""
    lost = ""
    if emu.flushed:
        lost += f"{emu.flushed} of its {emu.expected.size} output element(s) flush to 0 in {target}"
    if emu.cancelled:
        lost += (
            f"{'; ' if lost else ''}{emu.cancelled} of its {emu.expected.size} output element(s) cancel to 0 in "
            f"{target}, their terms or a difference above them cancelling, values {target} holds equal"
        )
    worst = f" ({worst})" if worst else ""
    lost = f"{lost}{worst}: their values are lost; " if lost else ""
    against = "them" if eps is None else f"them plus the {_g(emu.added)} {_named(eps[1])} adds after it"
    if eps is not None and emu.added_flushes:
        against += f" (which {target} holds as 0: it flushes, and adds nothing there)"
    return (
        f"{lost}{_below_atol(emu, target, atol)}; judged relative to {against}, it is off by "
        f"{_g(c.max_rel_error)} (tolerance {c.rtol:.3g})"
    )


def _executed(plain: list[MarkedRun], model: Callable[[], Any], device: str, target: str,
              notes: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:  # fmt: skip
    """What ``device``'s execution graph of the model as it is (no tensor observed) runs each node in at ``target``,
    and the kernel that computes each (:func:`runtime_kernels`): the plain run's, where it ran at it, else that of a
    compile of the model at it (no inference)."""
    if plain and plain[0].effective_precision == target:
        return plain[0].runtime_precision, plain[0].kernels
    try:
        compiled = compile_model(model(), device, target)
        return runtime_precisions(compiled), runtime_kernels(compiled)
    except Exception as exc:  # the figures stay those of an all-target device
        notes.append(f"the model could not be compiled for {device} in {target} to read what it executes in f32 "
                     f"({clean_message(exc)}): every chain is judged in {target}")  # fmt: skip
        return {}, {}


def _device_note(executes: str) -> str:
    return f"the device executes this reduction in {executes} (its execution graph)"


def _g(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _stage_name(stage: TargetStage, stages: tuple[TargetStage, ...]) -> str:
    """``Power 'x/pow' (layer 24)``, or ``the input of ...`` for the chain's input."""
    if stage.op == "input":
        after = next((stages[k + 1] for k, st in enumerate(stages[:-1]) if st is stage), None)
        return "the input of " + (_stage_name(after, stages) if after is not None else "the chain")
    where = f" (layer {stage.layer_id})" if stage.layer_id is not None else ""
    return f"{stage.op} {stage.name!r}{where}"


def _device_agreement(
    emulated: npt.NDArray[Any], device: npt.NDArray[Any], atol: float, rtol: float
) -> tuple[bool, float | None]:
    """Whether the device's own output in the target precision agrees with the emulation: the same elements
    non-finite, the finite ones within the tolerance; and their largest relative difference."""
    e, d = np.asarray(emulated, dtype=np.float64), np.asarray(device, dtype=np.float64)
    finite = np.isfinite(e) & np.isfinite(d)
    same = bool(np.array_equal(np.isfinite(e), np.isfinite(d)))
    if not finite.any():
        return same, None
    diff = np.abs(e[finite] - d[finite])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.abs(d[finite]) > 0, diff / np.abs(d[finite]), np.where(diff > 0, np.inf, 0.0))
    worst = float(rel.max())
    return same and bool(np.all(diff <= atol + rtol * np.abs(d[finite]))), (worst if math.isfinite(worst) else None)


class _ScaledMarks:
    """A run's captured values divided by a scale factor (the floating-point ones), as a device applying OpenVINO's
    activations scaling holds them; each divided when read."""

    def __init__(self, marked: Sequence[npt.NDArray[Any]], factor: float, kept: Collection[int] = ()) -> None:
        self.marked, self.factor, self.kept = marked, factor, kept

    def __getitem__(self, index: int) -> npt.NDArray[Any]:
        values = _exact_float(self.marked[index])
        if values.dtype.kind != "f" or index in self.kept:
            return values
        return np.asarray(values / values.dtype.type(self.factor))

    def __len__(self) -> int:
        return len(self.marked)


_FLOAT_TYPES = frozenset({"f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2"})


def _made_up_notes(described: Sequence[AuditInput], target: str) -> list[str]:
    """That the target's verdicts rest on floating-point inputs ovreduce made up (seeded normal values of scale 1),
    where any were: invented activations establish nothing of the model's real range."""
    made = [item.name for item in described if item.origin.startswith("seed ") and item.element_type in _FLOAT_TYPES]
    if not made:
        return []
    named = ", ".join(repr(name) for name in made[:5]) + (f" and {len(made) - 5} more" if len(made) > 5 else "")
    return [
        f"input{'s' if len(made) > 1 else ''} {named}: made up by ovreduce (seeded normal values of scale 1), not the "
        f"model's own activations, so what the target says of the {target} headroom rests on values of that range "
        f"and is not representative of the model's; give them as inputs"
    ]


def _scaling_notes(model: IRModel, target: str, scale: float | None, refused: str | None) -> list[str]:
    """What the target's notes say of the model's ``ACTIVATIONS_SCALE_FACTOR`` (nothing where it sets none)."""
    if refused is not None:
        return [refused]
    if scale is None and target == "bf16":
        factor = activations_scale_factor(model.rt_info)[0]
        return [] if factor is None else [
            f"the model's <rt_info><runtime_options> set {SCALE_FACTOR} {factor:g}: OpenVINO applies it in f16 only, "
            f"so not here"]  # fmt: skip
    if scale is None:
        return []
    return [
        f"the model's <rt_info><runtime_options> set {SCALE_FACTOR} {scale:g}: a GPU's f16 compile (on GPUs without "
        f"systolic arrays; not the CPU) divides the input of every MatMul and Convolution by it and moves the factor "
        f"down to the next normalization, where it cancels (OpenVINO's ActivationsScaling). A row whose chain takes "
        f"such values is judged on them divided by {scale:g}, as that device meets it, and gives the unscaled verdict "
        f"(a device that does not apply the factor) where it differs; a chain the scaling cannot be followed through "
        f"says so"
    ]


def _target_scaled(
    fed: Basis | None, scale: float | None, chain: Chain, node: Any, slot: tuple[int | npt.NDArray[Any], ...],
    run: MarkedRun, target: str, ids: Mapping[str, str], layer: LayerAudit, step: int | None,
    on_device: tuple[npt.NDArray[Any] | None, str | None] | None = None, unseen: str | None = None,
) -> TargetHeadroom:  # fmt: skip
    """:func:`_target_step`, on the values a device applying the model's activations scale factor (``scale``) holds
    where ``fed`` says the chain takes scaled values; with the unscaled verdict beside it where the two differ, and
    the reason where the scaling is not followed through the chain."""
    plain = _target_step(chain, node, slot, run, target, ids, layer, step, on_device, unseen)
    if fed is None or scale is None or fed.kind == "unscaled" or plain.status == "protected":
        return plain
    unscaled = f"{plain.status}: {plain.message}"
    if fed.kind == "unfollowed":
        if plain.failed:  # certain on every f16 device that does not apply the factor: the row fails
            return replace(plain, message=(
                f"{plain.message}; as a device that does not apply {SCALE_FACTOR} {scale:g} (the model's runtime "
                f"options) runs it (the CPU, a GPU with systolic arrays); for a device that applies it, not "
                f"established: ovreduce cannot follow OpenVINO's activations scaling through {fed.why}"))  # fmt: skip
        return replace(plain, status="not-established", failed=False, message=(
            f"not established for a device that applies {SCALE_FACTOR} {scale:g} (the model's runtime options): "
            f"ovreduce cannot follow OpenVINO's activations scaling through {fed.why}; as a device that does not "
            f"apply it runs it (the CPU, a GPU with systolic arrays): {unscaled}"))  # fmt: skip
    sources = [s if isinstance(s, int) or not fed.constants else s / s.dtype.type(scale) for s in chain.sources]
    kept = {s for i, s in enumerate(chain.sources) if i in fed.kept and isinstance(s, int)}  # a product's other factor
    # and everything above it that feeds it (a MoE's routing weight reached through a Reshape): the model's own values
    by_output = {a.output: a for a in chain.above}
    own: set[int] = set()
    todo = list(kept)
    while todo:
        found = by_output.get(todo.pop())
        if found is None or id(found) in own:
            continue
        own.add(id(found))
        for k, i in enumerate(found.inputs):
            if isinstance(i, int) and found.carried(k) and i not in kept:
                kept.add(i)
                todo.append(i)
    above = [  # an Add's or a Subtract's Constant operand above the chain is divided too, as its other operand is, and
        # the Constant values an op that moves values carries (a Concat's, a Select's fill), not its shape or indices
        replace(a, inputs=[i if isinstance(i, int) or id(a) in own
                           or not (a.node.get_type_name() in ("Add", "Subtract") or (a.moves and a.carried(k)))
                           else i / i.dtype.type(scale) for k, i in enumerate(a.inputs)])
        for a in chain.above
    ]  # fmt: skip
    scaled_chain = replace(chain, sources=sources, above=above)
    scaled_run = replace(
        run,
        marked=cast(Any, _ScaledMarks(run.marked, scale, kept)),
        effective_precision=None if run.effective_precision == target else run.effective_precision,
    )
    unbounded = replace(layer)
    unbounded.expected = None  # the reference of the unscaled values bounds nothing of the scaled ones
    row = _target_step(scaled_chain, node, slot, scaled_run, target, ids, unbounded, step, None, unseen,
                       fused=fed.fused)  # fmt: skip
    said = (f"; judged on its values divided by {SCALE_FACTOR} {scale:g}, as a device applying OpenVINO's "
            f"activations scaling holds them")  # fmt: skip
    if fed.fused:
        said += (", and as that device runs the norm, fused into its RMS kernel, which takes the input in "
                 f"{target} and accumulates its squares and their mean in f32")  # fmt: skip
    if plain.failed and not row.failed:  # certain on every f16 device that does not apply the factor: the row fails
        return replace(plain, message=(
            f"{plain.message}; as a device that does not apply {SCALE_FACTOR} {scale:g} (the model's runtime options) "
            f"runs it (the CPU, a GPU with systolic arrays); for a device that applies it: {row.status}: "
            f"{row.message}{said}"))  # fmt: skip
    if row.status != plain.status:
        said += (
            f"; unscaled, as a device that does not apply it (the CPU, a GPU with systolic arrays) runs it: {unscaled}"
        )
    return replace(row, message=row.message + said)


def _worst_target(per_step: list[TargetHeadroom]) -> TargetHeadroom:
    """Over the steps of a stateful run: the failing step first, then the one reaching the largest magnitude."""
    return min(per_step, key=lambda t: (0 if t.failed else 1, -(t.largest or 0.0)))


def _runs_natively(device: str, target: str) -> bool:
    """Whether ``device`` executes a reduction of the target type natively (as OpenVINO's execution graph
    of a probe says: see :func:`ovreduce.backends.openvino.precision_support`)."""
    try:
        support = precision_support(device)
    except Exception:  # a device that cannot be probed
        return False
    return support is not None and support[1].get(target) == target


def _chain_spec(
    chain: Chain, slot: tuple[int | npt.NDArray[Any], ...], node: Any, run: MarkedRun
) -> tuple[str | None, list[npt.NDArray[Any]], str, npt.NDArray[Any], bool, list[bool] | None] | None:
    """What :func:`run_on_device` rebuilds of one reduction's chain, from what the run captured (None: not
    floating-point, or marked to stay in the original precision: the device would not run it in the target; or its op
    fed by an op its kernel computes in f32 without storing it, which a graph of the target type cannot rebuild)."""
    if chain.op_kept or (chain.reduction_kept and not chain.reduction_inside) or any(chain.sources_inside):
        return None  # (a reduction whose result its kernel keeps in f32 is rebuilt: only its rounding differs)
    data, axes, _ = (run.marked[i] if isinstance(i, int) else i for i in slot)
    inputs = [run.marked[i] if isinstance(i, int) else i for i in chain.sources] if chain.op is not None else [data]
    if not all(np.asarray(a).dtype.kind == "f" for a in inputs):
        return None
    keep = bool(node.get_attributes().get("keep_dims", False))
    constants = chain.constants
    return (
        None if chain.op is None else chain.op.get_type_name(),
        inputs,
        node.get_type_name(),
        np.asarray(axes),
        keep,
        constants,
    )


def _target_summary(
    target: str,
    meant_for: str,
    device: str,
    effective: str | None,
    layers: list[LayerAudit],
    chains_ran: bool,
    scaling: Sequence[str] = (),
) -> TargetSummary:
    counts: dict[str, int] = dict(Counter(layer.target.status for layer in layers if layer.target is not None))
    executed = device if effective == target or chains_ran else None
    notes = []
    if meant_for != device:
        notes.append(f"{meant_for} is not available here: the model ran on {device}")
    if chains_ran:
        notes.append(f"{device} executes {target} reductions natively: each reduction's chain also ran on it as a "
                     f"{target} graph of its captured inputs, compared with the emulation (device_agrees), with what "
                     f"it executes the reduction in (device_precision); a row whose chain did not says so")  # fmt: skip
    elif executed is not None:
        notes.append(f"{device} ran the model in {target}: each row also compares the emulation with its output "
                     f"(device_agrees) and says what it executes the reduction in (device_precision)")  # fmt: skip
    elif effective is None and device.split(":", 1)[0].split(".", 1)[0].upper() in VIRTUAL_DEVICES:
        notes.append(f"{device} is a virtual device: it reports neither the precision it ran the model in nor what "
                     f"the device it chose executes {target} reductions in, so nothing was compared with a device "
                     f"running them; every {target} figure is NumPy's emulation from the values it captured (give "
                     f"the device itself, as device CPU, to compare)")  # fmt: skip
    else:
        notes.append(f"{device} ran the model in {effective or 'an unknown precision'} and does not execute "
                     f"{target} reductions natively: every {target} figure is NumPy's emulation from the values it "
                     f"captured")  # fmt: skip
    notes.append(
        "kept in the original precision: what the model's nodes are marked with (disable_fp16_compression, saved "
        "as 'precise'), as OpenVINO reads them; OpenVINO's own marking pass runs inside a device's compile and "
        "cannot be applied from here, so a chain a GPU compile would mark is judged unmarked"
    )
    notes.extend(scaling)
    return TargetSummary(cast(Any, target), meant_for, executed is None, executed, all(
        layer.target is None or not layer.target.failed for layer in layers), FINITE_MAX[target], counts,
        tuple(notes))  # fmt: skip


class _Steps:
    """Counts the audit's steps for an :class:`AuditProgress` (a no-op without one)."""

    def __init__(self, progress: AuditProgress | None) -> None:
        self.progress = progress
        self.done = 0
        self.total = 1
        self.last = ""  # the stage of a run under way: "compiling" or "inference"

    def __call__(self, stage: str, steps: int = 0) -> None:
        """Announce ``stage``, which will finish ``steps`` steps: counted after the call, so that a progress
        bar names the stage while it runs."""
        if self.progress is not None:
            self.progress(stage, self.done, self.total)
        self.done += steps

    def run(self, label: str) -> Callable[[str], None]:
        """The ``on_stage`` of :func:`run_marked` for the ``label`` run: two steps, compile and inference."""

        def stage(what: str) -> None:
            self.last = what
            self(f"compiling the {label} run" if what == "compiling" else f"inference of the {label} run", 1)

        return stage


def _reduction_nodes(ov_model: Any, kinds: Mapping[str, ReductionOp], work: AuditWork) -> list[Any]:
    """The model's reductions in OpenVINO's topological order (its ops walked once)."""
    ops = ov_model.get_ordered_ops()
    work.ops_visited += len(ops)
    return [n for n in ops if n.get_type_name() in kinds]


def _marks(nodes: list[Any]) -> tuple[list[Any], list[tuple[int | npt.NDArray[Any], ...]]]:
    """The tensors to mark as outputs, and for each reduction where its data, axes and output are: the index
    of a mark, or for Constant axes their value (read, not marked: a Result per Constant would only make
    OpenVINO's compile longer)."""
    marks: list[Any] = []
    slots: list[tuple[int | npt.NDArray[Any], ...]] = []
    for n in nodes:
        slot: list[int | npt.NDArray[Any]] = []
        for port in (n.input_value(0), n.input_value(1), n.output(0)):
            source = port.get_node()
            if len(slot) == 1 and source.get_type_name() == "Constant":
                slot.append(np.array(source.get_data(), copy=True))
            else:
                slot.append(len(marks))
                marks.append(port)
        slots.append(tuple(slot))
    return marks, slots


def _same_nodes(fresh: Any, nodes: list[Any], kinds: Mapping[str, ReductionOp], work: AuditWork) -> list[Any]:
    """The outputs of ``nodes``' counterparts in ``fresh`` (another read of the same model): matched by
    friendly name, a name used by several reductions matched in order, through one dictionary."""
    by_name: dict[str, deque[Any]] = {}
    for n in _reduction_nodes(fresh, kinds, work):
        by_name.setdefault(n.get_friendly_name(), deque()).append(n)
    work.lookups += len(nodes)
    return [by_name[n.get_friendly_name()].popleft().output(0) for n in nodes]


def _steady_names(ov_model: Any, model: IRModel, steady: dict[str, str]) -> None:
    """Give each node IR v10's conversion renamed in this read of the model the name the first read gave it
    (``steady``: layer name -> that name, filled by the first read). OpenVINO generates another at each read, and
    the audit's reads (audited, plain and f32 runs) find their nodes, and the execution graph its kernels, by name.
    The layer's own name cannot be given back: see :func:`ovreduce.check.openvino.v10_renamed`."""
    renamed = v10_renamed(ov_model, model)
    if not renamed:
        return
    for node in ov_model.get_ordered_ops():
        layer = renamed.get(node.get_friendly_name())
        if layer is not None:
            node.set_friendly_name(steady.setdefault(layer, node.get_friendly_name()))


def _check_step(
    op: ReductionOp,
    node: Any,
    layer_id: str | None,
    slot: tuple[int | npt.NDArray[Any], ...],
    k: int,
    run: MarkedRun,
    truth: MarkedRun | None,
    atol: float | None,
    rtol: float | None,
    fail_on_drift: float | None,
    keep_expected: bool = False,
) -> LayerAudit:
    """Reduction ``k`` of one step: its own error on what that step captured, and its drift from the f32 run's
    same step. ``keep_expected``: the reference's output stays on the row (for the target precision's check)."""
    data, axes, out = (run.marked[i] if isinstance(i, int) else i for i in slot)
    computed_in = run.runtime_precision.get(node.get_friendly_name()) or run.effective_precision
    layer = _audit_layer(op, node, layer_id, data, axes, out, atol, rtol, computed_in)
    if truth is not None:
        layer.drift = _drift(truth.marked[k], out, layer.element_type or "f32", data.size, atol, rtol)
        if layer.expected is not None:
            layer.split = _split(truth.marked[k], layer.expected, out, fail_on_drift)
    if not keep_expected:
        layer.expected = None  # not kept: the document has what it needs
    return layer


def _worst_step(per_step: list[LayerAudit]) -> LayerAudit:
    """A reduction's row over the steps of a stateful run: the step with its worst own error (failing first),
    that step's number where there were several, and established where any step's input could show an error."""
    if len(per_step) == 1:
        return per_step[0]

    def badness(layer: LayerAudit) -> tuple[int, float]:
        own = layer.comparison.max_rel_error if layer.comparison is not None else None
        return (0 if layer.failed else 1, -(math.inf if own is None else own))

    step = min(range(len(per_step)), key=lambda i: badness(per_step[i]))
    worst = per_step[step]
    worst.step = step
    established = [layer for layer in per_step if layer.not_established is None]
    worst.not_established = None if established else worst.not_established
    return worst


def _across_steps(per_step: list[dict[str, list[LayerAudit]]]) -> dict[str, list[LayerAudit]]:
    """The rows of the top-level Ifs' bodies over the runs of a stateful model (the first and each decode step), as a
    top-level reduction's are (:func:`_worst_step`): each reduction's worst step among those whose run took its
    branch, established where any of them could show an error; a body no run took (or none could run) keeps the first
    run's rows, which say why."""
    if len(per_step) == 1:
        return per_step[0]
    merged: dict[str, list[LayerAudit]] = {}
    for path, first in per_step[0].items():
        ran = [(k, rows[path]) for k, rows in enumerate(per_step)
               if path in rows and rows[path] and all(row.audited for row in rows[path])]  # fmt: skip
        if not ran:
            merged[path] = first
            continue
        rows = []
        for i in range(len(ran[0][1])):
            steps = [(k, found[i]) for k, found in ran if i < len(found)]
            worst = _worst_step([row for _, row in steps])
            worst.step = steps[worst.step or 0][0] if worst.step is not None else steps[0][0]
            taken = len(steps)
            worst.notes.append(f"judged over the {taken} of the {len(per_step)} runs (the first and its decode steps) "
                               f"whose If took this branch: the row shows the step of its worst error")  # fmt: skip
            rows.append(worst)
        merged[path] = rows
    return merged


def _decoding(
    ov_model: Any, first: Mapping[int, npt.NDArray[Any]], steps: int, seed: int, alone: bool = False,
    embed: Embedder | None = None,
) -> tuple[NextInputs, NextInputs]:  # fmt: skip
    """What each decode step of a stateful LLM gets, as generation feeds it, and a replay of the same feeds:
    the token input the argmax of the step before's last logits over the ids its embedding holds (seeded ids where
    the model has no ``logits``),
    the attention mask one longer (not an encoder's; of the new token alone for a Mamba-style model, or where
    ``alone`` says so: :func:`_mask_alone`), the next position, beams in order, an input whose length follows the
    token sequence zeros along the new token (:func:`_along_tokens`), every other input as it was. Every run
    replays the audited run's feeds, so that they differ in precision only."""
    made = recipes(ov_model)
    names = [set(port.get_names()) for port in ov_model.inputs]
    token, logits = _token_and_logits(ov_model, first, made)
    if token is not None and logits is not None and first[token].ndim == 2 and first[token].shape[1] == 0:
        raise InputError(
            f"{steps} decode step(s) asked for after an empty prompt ({ov_model.inputs[token].get_any_name()} is "
            f"{list(first[token].shape)}): each step feeds the token the one before predicts, and an empty prompt "
            f"predicts none; give a prompt of at least one token", parameter="steps",
        )  # fmt: skip
    rng = np.random.default_rng(seed + 1)
    recorded: list[Mapping[int, npt.NDArray[Any]]] = [first]
    # a Mamba-style model (its cache_position spans the conv state at the prefill) takes the new token's mask alone
    # and its place in the sequence at each step, as transformers' generate counts it (optimum-intel's Mamba runtime)
    mamba = alone or any(r.kind == "positions" and r.high for r in made)
    prompt = next((a.shape[1] for i, a in first.items() if names[i] & (TOKEN_IDS | EMBEDDINGS) and a.ndim >= 2), None)
    along: list[dict[int, dict[int, int]]] | None = None  # the inputs whose length follows the tokens: dims, sizes

    def next_inputs(step: int, before: MarkedRun) -> Mapping[int, npt.NDArray[Any]] | None:
        if step > steps:
            return None
        feeds: dict[int, npt.NDArray[Any]] = {}
        prior = next((a for j, a in recorded[-1].items() if names[j] & GROWING_MASKS and a.ndim == 2
                      and made[j].kind == "ones"), None)  # fmt: skip
        # the rows of the mask so far that attend no token (a row of padding alone): the new token is their first
        unattended = None if prior is None or mamba else ~(prior != 0).any(axis=-1, keepdims=True)
        for i, array in recorded[-1].items():
            kind, batch = made[i].kind, (array.shape[0] if array.ndim else 1)
            if i == token and array.ndim == 2:
                # the likeliest of the tokens the embedding holds (logits wider than its table name none there)
                chosen = (np.argmax(_last_position(before.outputs[logits])[:, : made[i].high], axis=-1)
                          if logits is not None else rng.integers(0, made[i].high, size=batch))  # fmt: skip
                feeds[i] = chosen.reshape(batch, 1).astype(array.dtype)
            elif token is None and names[i] & EMBEDDINGS and array.ndim == 3 and embed is not None:
                # the embedding of the likeliest token its table holds, as the export's runtime feeds it
                chosen = (np.argmax(_last_position(before.outputs[logits])[:, : embed.vocabulary], axis=-1)
                          if logits is not None else rng.integers(0, embed.vocabulary, size=batch))  # fmt: skip
                feeds[i] = _embedded(embed, chosen.reshape(batch, 1), (batch, 1, array.shape[2])).astype(array.dtype)
            elif token is None and names[i] & EMBEDDINGS and array.ndim == 3:  # no ids to feed: a new token's embedding
                feeds[i] = rng.standard_normal((batch, 1, array.shape[2])).astype(array.dtype)
            elif kind == "ids" and array.ndim == 2:
                feeds[i] = rng.integers(0, made[i].high, size=(batch, 1)).astype(array.dtype)
            elif kind == "ones" and array.ndim == 2 and names[i] & GROWING_MASKS and mamba:  # the new token's
                feeds[i] = np.ones((batch, 1), dtype=array.dtype)
            elif kind == "positions" and made[i].high and array.ndim == 1 and prompt is not None:
                feeds[i] = np.array([prompt + step - 1], dtype=array.dtype)
            elif kind == "ones" and array.ndim == 2 and names[i] & GROWING_MASKS:  # the mask so far (a given one's
                # padding kept), and the new token attended, as generation grows it
                feeds[i] = np.concatenate([array, np.ones((batch, 1), dtype=array.dtype)], axis=1)
            elif kind == "positions" and array.ndim == 2 and array.size:  # each row's next (a left-padded row's less)
                following = array.max(axis=-1, keepdims=True) + 1
                if unattended is not None and unattended.shape == following.shape:  # cumsum(mask) - 1: its first
                    following = np.where(unattended, 0, following)
                feeds[i] = following.astype(array.dtype)
            elif kind == "positions" and array.ndim == 3 and array.size and "position_ids" in names[i]:
                # per rotary section [sections, batch, tokens]: each row's next, one past its last in any section
                # (optimum-intel's rope_deltas), every section alike
                following = array.max(axis=(0, 2), keepdims=True) + 1
                feeds[i] = np.broadcast_to(following, (*array.shape[:2], 1)).astype(array.dtype)
            elif kind == "positions" and array.ndim >= 1 and array.size:
                feeds[i] = np.full((*array.shape[:-1], 1), int(array.max()) + 1, dtype=array.dtype)
            else:
                feeds[i] = array
        nonlocal along
        if along is None:  # (once: the first step's feeds tell every step's)
            along = [_along_tokens(ov_model, recorded[-1], feeds, prompt)]
        for i, sizes in along[0].items():  # no token of an image or another source in a step: zeros along it
            shape = tuple(sizes.get(d, n) for d, n in enumerate(feeds[i].shape))
            feeds[i] = np.zeros(shape, dtype=feeds[i].dtype)
        recorded.append(feeds)
        return feeds

    def replay(step: int, before: MarkedRun) -> Mapping[int, npt.NDArray[Any]] | None:
        return recorded[step] if step < len(recorded) else None

    return _own(next_inputs), replay


def _mask_alone(
    ov_model: Any, first: Mapping[int, npt.NDArray[Any]], seed: int, read: Callable[[], Any], device: str,
    precision: str, deadline: float | None,
) -> bool:  # fmt: skip
    """Whether the decode steps of a model with a conv state (a Mamba-class hybrid: a variable ``*.conv.*``, as
    optimum-intel names them) take an attention mask of the new token alone, not one longer, where no
    ``cache_position`` says so (:func:`ovreduce.backends.feeds.conv_kernel`): optimum-intel feeds ``[batch, 1]`` ones
    to such models but the few whose attention reads the whole mask (Granite-4.0's, LFM2's, Qwen3-Next's). The model
    says which: OpenVINO runs a first run and one step fed the mask one longer, and where it refuses that, one fed the
    new token's mask alone."""
    names = [set(port.get_names()) for port in ov_model.inputs]
    masks = [i for i, a in first.items() if names[i] & GROWING_MASKS and a.ndim == 2]
    conv = any(".conv." in str(sink.get_variable_id()) for sink in ov_model.get_sinks()
               if hasattr(sink, "get_variable_id"))  # fmt: skip
    if not masks or not conv or conv_kernel(ov_model) is not None:  # (a cache_position: the mask alone already)
        return False
    for alone in (False, True):
        feed, _ = _decoding(ov_model, first, 1, seed, alone)
        try:
            run_steps(read(), [], first, device, precision, feed, None, deadline)
        except (InferenceTimeoutError, MemoryLimitError, _FeedError):
            return False  # (the audited run meets the same)
        except Exception:  # OpenVINO refusing this mask beside the new token
            continue
        return alone
    return False


def _along_tokens(
    ov_model: Any, before: Mapping[int, npt.NDArray[Any]], feeds: Mapping[int, npt.NDArray[Any]], prompt: int | None
) -> dict[int, dict[int, int]]:
    """The inputs of a decode step's ``feeds`` kept as they ``before`` were whose length follows the token sequence
    (a VLM's language model's mask of the image's tokens and their embeddings, ``visual_pos_masks`` and
    ``deepstack_visual_embeds``: ``[batch, tokens]``, ``[layers, batch * tokens, hidden]``), each with the sizes its
    dims take in the step, by dim: a dim past the first as long as the prompt's tokens (or the batch's tokens) that
    OpenVINO's shape inference refuses beside the step's one new token, and accepts along it. Empty where there is
    none, or where the model's shapes take the inputs as they were."""
    token_input = next((a for i, a in feeds.items() if a.ndim >= 2 and before[i].ndim >= 2
                        and before[i].shape[1] == prompt and a.shape[1] == 1), None)  # fmt: skip
    if prompt is None or prompt <= 1 or token_input is None:
        return {}
    batch = token_input.shape[0]
    lengths = {prompt: 1, batch * prompt: batch}
    kept = {i: a for i, a in feeds.items() if a is before[i] and a.ndim >= 2}
    along = {i: {d: lengths[n] for d, n in enumerate(a.shape) if d and n in lengths} for i, a in kept.items()}
    along = {i: sizes for i, sizes in along.items() if sizes}
    if not along:
        return {}

    def accepted(shapes: Mapping[int, tuple[int, ...]]) -> bool:
        trial = ov_model.clone()
        try:
            trial.reshape({trial.inputs[i]: list(shape) for i, shape in shapes.items()})
        except Exception:  # OpenVINO's shape inference refusing these shapes together
            return False
        return True

    shapes = {i: tuple(a.shape) for i, a in feeds.items() if ov_model.inputs[i].get_element_type().get_type_name()
              != "string"}  # fmt: skip
    if accepted(shapes):
        return {}
    stepped = {i: tuple(sizes.get(d, n) for d, n in enumerate(shapes[i])) for i, sizes in along.items()}
    return along if accepted({**shapes, **stepped}) else {}


def _embedded(embed: Embedder, ids: npt.NDArray[Any], shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """``embed``'s embeddings of a decode step's ``ids``, which must be of ``shape``."""
    array = np.asarray(embed(ids))
    if array.shape != shape:
        raise InputError(f"{embed.source} gives embeddings of shape {list(array.shape)} for the new token, where "
                         f"the step takes {list(shape)}")  # fmt: skip
    return array


def _token_and_logits(ov_model: Any, first: Mapping[int, npt.NDArray[Any]], made: Sequence[Any]) -> tuple[
        int | None, int | None]:  # fmt: skip
    """The input a decode step feeds its new token to (token ids; else the first input of ids, where the model is not
    fed embeddings) and the output named ``logits`` its argmax is taken of, by index (None: there is none)."""
    outputs = [set(port.get_names()) for port in ov_model.outputs]
    logits = next((i for i, names in enumerate(outputs) if "logits" in names), None)
    names = [set(port.get_names()) for port in ov_model.inputs]
    ids = [i for i, r in enumerate(made) if r.kind == "ids" and i in first]
    # (a model fed embeddings has no token input: its token_type_ids are no token)
    token = next((i for i in ids if names[i] & TOKEN_IDS), ids[0] if ids and not _fed_embeddings(names) else None)
    return token, logits


def _refuse_positions(
    ov_model: Any, arrays: Mapping[int, npt.NDArray[Any]], steps: int, positions: tuple[int, str]
) -> None:
    """An :class:`InputError` where the sequence the audit would feed runs past the ``positions`` the model takes
    (their count, and what says so): the token ids' (or embeddings') length after the past given (each choice's, of
    a multiple-choice head's ``[batch, choices, tokens]`` ids), or the last
    position given or made (``position_ids``, ``cache_position`` along the tokens), plus ``steps`` decode steps. A
    position past the model's table is none it was made for (OpenVINO's Gather gives a learned table's rows past its
    end as zeros), so an audit there judges a computation the model never performs."""
    names = [set(port.get_names()) for port in ov_model.inputs]
    choices = {i for i in arrays if arrays[i].ndim == 3 and arrays[i].dtype.kind in "iu"}  # [batch, choices, tokens]
    ids = next((i for i in sorted(arrays) if names[i] & TOKEN_IDS and (arrays[i].ndim == 2 or i in choices)), None)
    if ids is None:
        ids = next((i for i in sorted(arrays) if names[i] & EMBEDDINGS and arrays[i].ndim == 3), None)
    if ids is None:
        return
    tokens = arrays[ids].shape[1 if names[ids] & EMBEDDINGS else -1]  # each choice's tokens are one sequence
    past = max((arrays[i].shape[2] for i in arrays if arrays[i].ndim == 4 and any(n.startswith(PAST) for n in names[i])
                and not any("encoder" in n for n in names[i])), default=0)  # fmt: skip
    span, said = past + tokens, f"{tokens} token(s) of {ov_model.inputs[ids].get_any_name()!r}" + (
        f" after a past of {past}" if past else "")  # fmt: skip
    mask = next((arrays[i] for i in sorted(arrays) if "attention_mask" in names[i] and arrays[i].ndim == 2
                 and arrays[i].shape[1] == past + tokens and arrays[i].size), None)  # fmt: skip
    flat = [
        i
        for i, n in enumerate(names)
        if "position_ids" in n and ov_model.inputs[i].get_partial_shape().rank.get_length() in (2, 3)
    ]  # (per rotary section too)
    if mask is not None and not mask.all() and flat:
        # a padded batch (left padding): the positions made along the mask number each row's attended tokens alone
        span = int(np.count_nonzero(mask, axis=-1).max())
        said = (f"{span} token(s) of {ov_model.inputs[ids].get_any_name()!r} attended in a row of the mask given"
                + (f", a past of {past} included" if past else ""))  # fmt: skip
    mamba = conv_kernel(ov_model) is not None  # (its cache_position spans the conv state, no sequence)
    for i in sorted(arrays):
        along = names[i] & {"position_ids"} or ("cache_position" in names[i] and not mamba)
        if along and arrays[i].size and np.issubdtype(arrays[i].dtype, np.integer) and int(arrays[i].max()) + 1 > span:
            span, said = int(arrays[i].max()) + 1, f"positions up to {int(arrays[i].max())} in {sorted(names[i])[0]!r}"
    count, where = positions
    if span + steps > count:
        then = f", then {steps} decode step(s)" if steps else ""
        raise InputError(
            f"the audit would feed positions 0..{span + steps - 1} ({said}{then}), more than the {count} positions "
            f"the model takes ({where}): positions past them are none the model was made for; give a shorter "
            f"sequence{' or fewer steps' if steps else ''}", parameter="steps" if steps else "shapes",
        )  # fmt: skip


def _asked(
    ov_model: Any, inputs: Mapping[str, Any] | None, shapes: Mapping[str, Any] | None
) -> dict[int, npt.NDArray[Any]]:
    """By input index, the arrays given and, for the token ids or embeddings, a static shape asked for (a view of
    zeros of that shape): what :func:`_refuse_positions` reads, before any input is made."""
    found: dict[int, npt.NDArray[Any]] = {}
    for i, port in enumerate(ov_model.inputs):
        names = set(port.get_names()) | {port.get_node().get_friendly_name(), str(i)}
        given = next((v for k, v in (inputs or {}).items() if k in names), None)
        shape = next((v for k, v in (shapes or {}).items() if k in names), None)
        if isinstance(given, np.ndarray) and given.dtype.kind in "iuf":
            found[i] = given
        elif given is None and shape is not None and shape.is_static and names & (TOKEN_IDS | EMBEDDINGS):
            found[i] = np.broadcast_to(np.zeros((), np.int64), shape.to_list())
    return found


def _last_position(logits: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The last position's logits, ``[batch, vocab]``: of ``[batch, positions, vocab]`` logits the last row of
    each batch; ``[batch, vocab]`` logits (exports that keep the last position only) are that already."""
    return logits if logits.ndim == 2 else logits.reshape(logits.shape[0], -1, logits.shape[-1])[:, -1]


class _FeedError(Exception):
    """ovreduce's own failure to make a decode step's inputs, called from between OpenVINO's runs: never reported
    as OpenVINO's."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _own(feed: NextInputs) -> NextInputs:
    """``feed`` with what it raises wrapped in :class:`_FeedError`, which the audit raises again as it was."""

    def fed(step: int, before: MarkedRun) -> Mapping[int, npt.NDArray[Any]] | None:
        try:
            return feed(step, before)
        except Exception as exc:
            raise _FeedError(exc) from exc

    return fed


def _made_for(
    inputs: Sequence[AuditInput], stage: str, exc: Exception, step: int = 0, refused: str | None = None
) -> str:
    """What a failure of OpenVINO in a run's ``stage`` may owe to: at decode ``step`` (1, 2...), to the inputs ovreduce
    made for that step, which no one can give; at the first run, to the integer inputs ovreduce made for the model
    (ids, counts, shapes it reads from the graph, or seeded integers where it reads nothing): named, and how to rule
    them out; nothing for a failure to compile, which no input causes; an input type the device refuses is said
    instead (:func:`_refused_types`). ``refused``: OpenVINO's failure on the model reshaped to the inputs' static
    shapes too, said after."""
    also = f"; reshaped to the inputs' static shapes, it failed too: {refused}" if refused is not None else ""
    refused_types = _refused_types(inputs, exc)
    if refused_types:
        return refused_types + also
    if step and stage == "inference":
        before = f"the first run and {step - 1} step(s) went through" if step > 1 else "the first run went through"
        return (f"; it failed at decode step {step}, on the inputs ovreduce makes for each step from the run before "
                f"(the new token, and what runs along it), which cannot be given: {before}, and an audit with fewer "
                f"steps audits them{also}")  # fmt: skip
    made = [i.name for i in inputs if i.origin != "given" and i.element_type.startswith(("i", "u"))]
    if not made or stage != "inference":
        return also
    shown = ", ".join(repr(name[:60]) for name in made[:5]) + (" ..." if len(made) > 5 else "")
    return (f"; it ran on integer inputs ovreduce made ({shown}): where they must fit what the model does with them "
            f"(indices, counts, shapes), give them{also}")  # fmt: skip


def _reshaped(ov_model: Any, arrays: Mapping[int, npt.NDArray[Any]]) -> bool:
    """Whether reshaping ``ov_model`` (a read of the model as it is) to ``arrays`` changes an input's shape."""
    ov = openvino()
    ports = ov_model.inputs
    return any(ports[i].get_partial_shape() != ov.PartialShape(list(a.shape)) for i, a in arrays.items()
               if port_type_name(ports[i]) != "string")  # fmt: skip


def _failed_step(replay: NextInputs | None) -> int:
    """The run a failed audited run of decode steps was at, from the feeds it recorded: the last step fed (0: the
    first run; always 0 without steps)."""
    step = 0
    while replay is not None and step <= MAX_STEPS and replay(step + 1, cast(MarkedRun, None)) is not None:
        step += 1
    return step


def _refused_types(inputs: Sequence[AuditInput], exc: Exception) -> str:
    """The inputs of a packed or 8-bit float type (:data:`INPUT_ONLY_TYPES`) that OpenVINO's failure names the type of
    (a CPU takes no u1, u3 or u6 input): each named, with what ovreduce fed it, so that the refusal is read as the
    device's and not the audit's."""
    words = set(re.findall(r"[A-Za-z0-9]+", str(exc)))
    refused = [i for i in inputs if i.element_type in INPUT_ONLY_TYPES and i.element_type in words]
    if not refused:
        return ""
    said = "; ".join(f"the model's input {i.name!r} is {i.element_type}" for i in refused[:5])
    types = ", ".join(sorted({i.element_type for i in refused}))
    return (f"; the device takes no {types} input ({said}): OpenVINO refused the type itself, not the values ovreduce "
            f"fed (packed as OpenVINO lays out such a tensor), so the model cannot run on this device with that input "
            f"as it is")  # fmt: skip


def _looked_up(source: Any, budget: int = 32) -> bool:
    """Whether the values of the output ``source``, moved from Constants only (:data:`MOVING`), are picked by a
    Gather of indices that are no Constant's (an embedding lookup of token ids): they vary with the model's input,
    as its data does, though OpenVINO converts them as a Constant's."""
    todo, seen = [source], 0
    while todo and seen < budget:
        node = todo.pop().get_node()
        seen += 1
        kind = node.get_type_name()
        if kind == "Gather":
            indices = node.input_value(1)
            while indices.get_node().get_type_name() == "Convert":
                indices = indices.get_node().input_value(0)
            if indices.get_node().get_type_name() != "Constant":
                return True
        if kind in MOVING:
            carried = MOVING[kind]
            todo += [node.input_value(i) for i in (range(node.get_input_size()) if carried is None else carried)]
    return False


def _emptied(ov_model: Any, arrays: Mapping[int, npt.NDArray[Any]]) -> list[str]:
    """The inputs of ``arrays`` with an empty dimension (a batch of 0, ids of no token), by name; a past key or value
    (empty at the first step of generation, which a reshaped model compiles) is none."""
    ports = ov_model.inputs
    return [ports[i].get_any_name() if ports[i].get_names() else ports[i].get_node().get_friendly_name()
            for i, a in sorted(arrays.items()) if 0 in a.shape and a.ndim
            and not any(name.startswith(PAST) for name in ports[i].get_names())]  # fmt: skip


def _fed_embeddings(names: Sequence[set[str]]) -> bool:
    """Whether a model of inputs of these names is fed token embeddings (``inputs_embeds``) and no token ids."""
    return any(n & EMBEDDINGS for n in names) and not any(n & TOKEN_IDS for n in names)


def _kv_cache_note(
    audited: MarkedRun, truth: MarkedRun | None, precision: str, plain: MarkedRun | None = None
) -> list[str]:
    """In which precision the audited run (and the f32 run, where there is one) kept the model's state, which the
    decode steps read: its KV cache (the past keys and values an attention kernel holds) as the compiled models report
    it, and the states no attention holds (a Mamba-style conv or SSM state, which the KV-cache property does not
    govern) of a floating-point type as their execution graphs write them; nothing the device does not say."""
    said = []
    if audited.kv_cache_precision is not None:
        how = ("asked in f32 with the f32 precision" if precision == "f32"
               else "the device's choice at this precision, or the model's <rt_info><runtime_options>")  # fmt: skip
        kv = "the KV cache (the past keys and values the attention reads, which the decode steps carry in the model's "
        kv += f"state) is kept in {audited.kv_cache_precision} in the audited and plain runs ({how})"
        if truth is not None and truth.kv_cache_precision is not None:
            kv += f"; the f32 run keeps it in {truth.kv_cache_precision}"
        said.append(kv)

    def kept(run: MarkedRun) -> str:
        real = [(kept, n) for kept, n in run.other_states if kept in ("f32", "f16", "bf16", "f64")]
        return ", ".join(f"{kept} ({n})" if len(real) > 1 else kept for kept, n in real)

    if kept(audited):
        count = sum(n for _, n in audited.other_states)
        other = "other " if audited.kv_cache_precision is not None else ""
        where = ("the audited and plain runs" if plain is None or kept(plain) == kept(audited)
                 else f"the audited run (compiled with its captures), {kept(plain)} in the plain run")  # fmt: skip
        state = (f"the model's {count} {other}state variable(s) that no attention holds (a Mamba-style conv or SSM "
                 f"state, which the device's KV_CACHE_PRECISION does not govern) are kept in {kept(audited)} in "
                 f"{where}, as OpenVINO's execution graph writes them")  # fmt: skip
        if truth is not None and kept(truth):
            state += f"; the f32 run keeps them in {kept(truth)}"
        said.append(state)
    return said


def _steps_note(
    ov_model: Any, decoded: int, first: Mapping[int, npt.NDArray[Any]], step: Mapping[int, npt.NDArray[Any]] | None,
    embed: Embedder | None = None,
) -> str:  # fmt: skip
    """What the decode steps were fed, as :func:`_decoding` feeds them, from the first run's inputs and the first
    step's (``step``): the argmax token only where the model has ``logits`` to take it of, and of the other inputs
    only those the model takes and the steps advanced."""
    variables = len(ov_model.get_sinks())
    made = recipes(ov_model)
    names = [set(port.get_names()) for port in ov_model.inputs]
    token, logits = _token_and_logits(ov_model, first, made)
    if token is not None and first[token].ndim == 2:
        label = ov_model.inputs[token].get_any_name()
        fed = [f"the argmax token of the step before (of its logits) as {label!r}" if logits is not None
               else f"a seeded random token id in [0, {made[token].high}) as {label!r} (the model has no 'logits' "
                    f"output to take the likeliest token of)"]  # fmt: skip
    elif _fed_embeddings(names) and embed is not None:
        fed = [f"the embedding of the argmax token of the step before (of its logits, through {embed.source})"
               if logits is not None else f"the embedding of a seeded random token id in [0, {embed.vocabulary}) "
               f"(through {embed.source}; the model has no 'logits' output to take the likeliest token of)"
               ]  # fmt: skip
    elif _fed_embeddings(names):
        fed = ["a new token's embedding (seeded normal values: the model takes no token ids)"]
    else:
        fed = []
    others = [ov_model.inputs[i].get_any_name() for i, r in enumerate(made)
              if r.kind == "ids" and i != token and i in first and first[i].ndim == 2]  # fmt: skip
    if others:
        fed.append(f"seeded random ids as {', '.join(map(repr, others))}")
    zeros: list[str] = []
    for i, array in sorted((step or {}).items()):
        before = first.get(i)
        if before is None or (array.shape == before.shape and np.array_equal(array, before)):
            continue  # as it was: an encoder's mask, beams, another input
        label = ov_model.inputs[i].get_any_name()
        if names[i] & GROWING_MASKS and array.ndim == 2:
            fed.append(f"an attention mask one longer ({label!r})" if array.shape[1] == before.shape[1] + 1
                       else f"an attention mask of the new token alone ({label!r} of ones [{array.shape[0]}, 1], "
                            f"as optimum-intel feeds a Mamba-style model)")  # fmt: skip
        elif "cache_position" in names[i]:
            fed.append(f"the new token's place in the sequence ({label!r})")
        elif "position_ids" in names[i]:
            fed.append(f"the next position ({label!r})")
        elif not array.any() and array.shape != before.shape:  # (:func:`_along_tokens`)
            zeros.append(label)
    if zeros:
        fed.append(f"zeros along the new token as {', '.join(map(repr, zeros))} (their length follows the token "
                   f"sequence, as no image's or other source's token is among the new ones: optimum-intel's "
                   f"placeholder)")  # fmt: skip
    said = (", ".join(fed[:-1]) + " and " + fed[-1] if len(fed) > 1 else fed[0]) if fed else "the first run's inputs"
    return (
        f"the model is stateful ({variables} state variables, as its Assign layers count them): one infer request "
        f"carried its state from the first run through {decoded} decode step(s), each fed {said}; every run "
        f"replayed the same feeds. A row shows the step of its worst error (0: the first run), the rows of a "
        f"top-level If's bodies too"
    )


def _final_outputs(ov_model: Any, plain: list[MarkedRun], audited: list[MarkedRun], work: AuditWork) -> list[Any]:
    """Each model output of the audited run against the plain run, its largest difference over the steps."""
    if not plain:
        return []
    ports = list(ov_model.outputs)[: len(plain[0].outputs)]  # listed once: the property builds every output's port
    work.outputs_visited += len(ports)
    finals = []
    for i, port in enumerate(ports):
        name = port.get_any_name() if port.get_names() else f"output {i}"
        pairs = list(zip(plain, audited, strict=False))
        if any(np.asarray(p.outputs[i]).dtype.kind in "SUO" for p, _ in pairs):  # text (a detokenizer's): no error
            same = all(np.array_equal(p.outputs[i], a.outputs[i]) for p, a in pairs)
            finals.append(FinalOutput(name, same, None, None))
            continue
        diffs = [
            compare(p.outputs[i], a.outputs[i], reference_name="plain run", candidate_name="audited run",
                    atol=0.0, rtol=0.0, exact=False)
            for p, a in pairs
        ]  # fmt: skip
        worst = max(diffs, key=lambda c: (c.mismatched, c.max_abs_error or 0.0))
        finals.append(FinalOutput(name, worst.mismatched == 0, worst.max_abs_error, worst.max_rel_error))
    return finals


def _unchecked(node: Any, ids: Mapping[str, str], why: str) -> LayerAudit:
    """A not-audited row for a top-level reduction the time limit left unchecked."""
    name = node.get_friendly_name()
    keep = bool(node.get_attributes().get("keep_dims", False))
    return LayerAudit(name, node.get_type_name(), ids.get(name), keep, None, None, None, None,
                      not_established=why, audited=False)  # fmt: skip


class _Branches:
    """The bodies of the model's top-level Ifs, audited from the whole run: each If's inputs are marked (as its
    condition and the values its bodies receive), and the branch the condition took is run on its own, on the
    values it received there, with its reductions marked. The branch not taken did not run: its reductions are
    listed as not audited, and so are those of Loop and TensorIterator bodies, which run once per iteration."""

    def __init__(self, ov_model: Any, marks: list[Any], ids: Mapping[str, str], max_elements: int | None) -> None:
        self.max_elements = max_elements
        self.target: str | None = None  # the precision each reduction of a body run is also judged in, if any
        self.ifs: list[tuple[Any, str, list[int | npt.NDArray[Any]]]] = []
        for node in ov_model.get_ordered_ops():
            if node.get_type_name() != "If" or node.get_friendly_name() not in ids:
                continue
            slot: list[int | npt.NDArray[Any]] = []
            for i in range(node.get_input_size()):
                source = node.input_value(i)
                if source.get_node().get_type_name() == "Constant":
                    slot.append(constant_data(source.get_node()))
                else:
                    slot.append(len(marks))
                    marks.append(source)
            self.ifs.append((node, ids[node.get_friendly_name()], slot))

    def audit(
        self, run: MarkedRun, model: IRModel, kinds: Mapping[str, ReductionOp], device: str, precision: str,
        deadline: float | None, atol: float | None, rtol: float | None, work: AuditWork,
    ) -> dict[str, list[LayerAudit]]:  # fmt: skip
        """Rows for both bodies of each If, by body path: the taken one's audited, the other's not audited."""
        out: dict[str, list[LayerAudit]] = {}
        refs = {ref.path: ref for ref in model.bodies()} if self.ifs else {}  # (walked once: to name the bodies)
        for node, if_id, slot in self.ifs:
            values = [run.marked[i] if isinstance(i, int) else i for i in slot]
            taken = 0 if bool(np.asarray(values[0]).reshape(-1)[0]) else 1
            roles = ("then", "else")
            for branch, role in enumerate(roles):
                path = f"{if_id}/{role}"
                try:
                    graph = model.graph_at(path)
                except OvReduceError:  # the IR has no such body (OpenVINO's reading differs): leave it listed
                    continue
                if branch != taken:
                    condition = "false" if taken else "true"
                    out[path] = [_unaudited(layer, f"inside {_body_words(refs, path)}, which did not run: the "
                                            f"condition was {condition}; {_run_alone(path, layer.id)}", path)
                                 for layer in graph.layers if layer.type in kinds]  # fmt: skip
                    for ref in refs.values():  # the bodies nested in it did not run either
                        if ref.path.startswith(f"{path}/"):
                            out[ref.path] = [_unaudited(layer, f"inside {_body_words(refs, ref.path)}, which did not "
                                                        f"run: the condition was {condition}; "
                                                        f"{_run_alone(ref.path, layer.id)}", ref.path)
                                             for layer in ref.body.graph.layers if layer.type in kinds]  # fmt: skip
                    continue
                body = node.get_then_body() if branch == 0 else node.get_else_body()
                params = body.get_parameters()
                feeds = {d.body_parameter_index: _as_declared(values[d.input_index], params[d.body_parameter_index])
                         for d in node.get_input_descriptions(branch)}  # fmt: skip
                # a body's input holds what the outer graph computed: as given only where the If received a model's
                # input or a Constant (or what an op kept in the original precision computed), else rounded by the run
                given = {d.body_parameter_index for d in node.get_input_descriptions(branch)
                         if _given(node.input_value(d.input_index))}  # fmt: skip
                words = _body_words(refs, path)
                outer = {d.body_parameter_index: node.input_value(d.input_index).get_node()
                         for d in node.get_input_descriptions(branch)}  # fmt: skip
                out[path] = self._run(body, feeds, graph, path, words, kinds, device, precision, deadline, atol, rtol,
                                      work, given, outer)  # fmt: skip
        return out

    def _run(
        self, body: Any, feeds: Mapping[int, npt.NDArray[Any]], graph: IRModel, path: str, words: str,
        kinds: Mapping[str, ReductionOp], device: str, precision: str, deadline: float | None,
        atol: float | None, rtol: float | None, work: AuditWork, given: Collection[int] = (),
        outer: Mapping[int, Any] | None = None,
    ) -> list[LayerAudit]:  # fmt: skip
        marked = body.clone()
        nodes = _reduction_nodes(marked, kinds, work)
        ids = _layer_ids(graph, work)
        marks, slots = _marks(nodes)
        chains = [chain_of(node, marks) for node in nodes] if self.target is not None else []
        params = marked.get_parameters()
        fed = {params[i] for i in range(len(params)) if i not in given}  # values the outer run computed, rounded
        for chain, node in zip(chains, nodes if chains else [], strict=True):  # (no chains without a target)
            ops = [node] if chain.op is None else [chain.op]
            sources = [op.input_value(i) for op in ops for i in range(op.get_input_size())][: len(chain.sources_kept)]
            chain.sources_kept = [kept and source.get_node() not in fed
                                  for kept, source in zip(chain.sources_kept, sources, strict=True)]  # fmt: skip
        if chains:  # the ops above each chain inside the body, captured from the body's run as at the top level
            _walk_above(chains, slots, marks, self.max_elements, 1)
            for chain in chains:
                for above in chain.above:
                    above.unrounded = [
                        unrounded and source.get_node() not in fed
                        for unrounded, source in zip(above.unrounded, above.sources, strict=True)
                    ]
        what = f"the audit of {words}"
        check_kept(marks, self.max_elements, what=what)
        try:
            run = run_marked(marked, marks, feeds, device, precision, deadline=deadline, widen=True)
            plain = run_marked(body.clone(), [], feeds, device, precision, deadline=deadline)  # what it executes
        except MemoryLimitError:  # too large for this process: the answer is the limit
            raise
        except Exception as exc:  # the body alone refused or did not finish: its reductions stay listed
            why = f"{words}, run alone on the values it received, failed: {clean_message(exc)}"
            return [_unaudited(layer, why, path) for layer in graph.layers if layer.type in kinds]
        check_captured(marks, [run], self.max_elements, what=what)
        rows = []
        for k, node in enumerate(nodes):
            name = node.get_friendly_name()
            row = _check_step(kinds[node.get_type_name()], node, ids.get(name), slots[k], k, run, None, atol, rtol,
                              None, self.target is not None)  # fmt: skip
            row.body_path = path
            if self.target is not None:  # its chain inside the body, captured from the body's run
                # (what the body run alone, its tensors made outputs, executes a reduction in is not what the If runs
                # it in, inside the whole model: its kernels are not the device's here, and no verdict rests on them)
                row.target = _target_step(chains[k], node, slots[k], replace(run, runtime_precision={}), self.target,
                                          ids, row, None)  # fmt: skip
                row.target = replace(
                    row.target,
                    message=f"{row.target.message}; judged from {words}, run alone"
                    + _outer_unfollowed(chains[k], node, params, fed, outer or {}, self.target),
                )
                row.expected = None
            row.runtime_precision = run.runtime_precision.get(name)
            row.plain_runtime_precision = plain.runtime_precision.get(name)
            row.not_established = row.not_established or _runs_unobserved(row, plain, node)
            row.notes.append(f"audited from {words}, run alone on the values the If gave it in the whole run")
            work.reductions_checked += 1
            rows.append(row)
        return rows


def _outer_unfollowed(chain: Chain, node: Any, params: Sequence[Any], fed: Collection[Any],
                      outer: Mapping[int, Any], target: str) -> str:  # fmt: skip
    """What a body's row says of the ops outside the body that computed what its chain receives: they are not
    followed, so what the target makes of them there (a difference that cancels) does not show ('' where the chain
    receives only a model's input, a Constant or nothing from outside)."""
    ops = [node] if chain.op is None else [chain.op]
    sources = [op.input_value(i).get_node() for op in ops for i in range(op.get_input_size())]
    sources += [source.get_node() for above in chain.above for source in above.sources]  # (the ops above it, followed)
    index = {param: k for k, param in enumerate(params)}
    named = list(dict.fromkeys(_named(outer[index[s]]) for s in sources
                               if s in fed and s in index and index[s] in outer))  # fmt: skip
    if not named:
        return ""
    verb, whose = ("is", "its") if len(named) == 1 else ("are", "their")
    return (f"; the ops above the If are not followed: {', '.join(named)} outside the body {verb} not followed, and "
            f"{whose} captured values reach the body as they are, rounded to {target}: what {target} makes of them "
            f"there (a difference that cancels, a divisor that flushes to 0) does not show")  # fmt: skip


def _given(source: Any) -> bool:
    """Whether the output ``source`` holds values no op of the run rounded: a model's input, a Constant, or what an op
    kept in the original precision computed."""
    node = source.get_node()
    return node.get_type_name() in ("Parameter", "Constant") or kept_in_original_precision(node)


def _unbuilt(model: IRModel, kinds: Mapping[str, ReductionOp]) -> list[LayerAudit]:
    """A not-audited row for each reduction of the file's top level that OpenVINO's reader does not build."""
    built = model.built()
    why = "it reaches no Result and no state write (Assign): OpenVINO does not build it, so no run computes it"
    return [_unaudited(layer, why, None) for layer in model.layers if layer.type in kinds and layer.id not in built]


def _unaudited(layer: Any, why: str, path: str | None) -> LayerAudit:
    """A not-audited row for the IR ``layer`` of the body at ``path`` (None: the top level), saying ``why``."""
    keep = layer.data.get("keep_dims", "false").strip().lower() == "true"
    return LayerAudit(layer.name, layer.type, layer.id, keep, None, None, None, None, not_established=why,
                      audited=False, body_path=path)  # fmt: skip


def _body_reductions(
    model: IRModel, kinds: Mapping[str, ReductionOp], skip: set[str] | None = None, cut: str | None = None
) -> list[LayerAudit]:
    """A not-audited row for each reduction inside an If, Loop or TensorIterator body (those at the body paths
    of ``skip`` excepted): OpenVINO runs a body inside its container's node, where no tensor of it can be
    marked as an output. The bodies of a top-level If are audited from the whole run, run alone: where ``cut``
    says why the whole run did not finish, that is their reason."""
    rows = []
    refs = {ref.path: ref for ref in model.bodies()}
    for ref in refs.values():
        if skip and ref.path in skip:
            continue
        container = ref.container
        for layer in ref.body.graph.layers:
            if layer.type not in kinds:
                continue
            why = (
                f"inside {_body_words(refs, ref.path)}: no tensor of a body can be captured from the whole model's "
                f"run; {_run_alone(ref.path, layer.id)}"
            )
            if cut is not None and container.type == "If" and ref.path.count("/") == 1:
                why = f"inside {_body_words(refs, ref.path)}: {cut}"
            rows.append(_unaudited(layer, why, ref.path))
    return rows


def _run_alone(path: str, layer_id: str) -> str:
    """How the reduction ``layer_id`` of the body at ``path`` runs on its own: a run of the layer by its path (the
    command's ``run --layer``, the service's layer run)."""
    return f"a run of layer `{path}/{layer_id}` runs it on its own"


def _body_words(refs: Mapping[str, Any], path: str) -> str:
    """The body at the ids ``path`` in words, its container named as a row names a top-level one (type, name and
    layer: ``the then body of If 'cond' (layer 2)``), and a nested one's with the ids path of its layer, within its
    container's body: ``the body of Loop 'steps' (layer 2/then/5), in the then body of If 'cond' (layer 2)``."""
    parts = []
    current: str | None = path
    while current is not None:
        ref = refs.get(current)
        if ref is None:  # (every path the audit names is one of the model's bodies)
            parts.append(f"the {current} body")
            break
        parent = current.rsplit("/", 2)[0] if current.count("/") >= 3 else None
        role = "the body" if ref.body.role == "body" else f"the {ref.body.role} body"
        where = ref.container.id if parent is None else f"{parent}/{ref.container.id}"
        parts.append(f"{role} of {ref.container.type} {ref.container.name!r} (layer {where})")
        current = parent
    return ", in ".join(parts)


def _exact_float(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array``, a bf16 one as f32 (exactly): NumPy does not count ml_dtypes' bfloat16 as a float kind."""
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def _by_layer(layer: LayerAudit, renamed: Mapping[str, tuple[str | None, str]]) -> LayerAudit:
    """``layer``, and its target's stages, named by the file's layer where OpenVINO's IR v10 conversion renamed the
    node (see :func:`ovreduce.check.openvino.v10_renamed`): OpenVINO's own name stays for what OpenVINO is asked."""
    if layer.body_path is None and layer.name in renamed:
        layer.layer_id, layer.name = renamed[layer.name]
    if layer.target is not None and any(stage.name in renamed for stage in layer.target.stages):
        stages = []
        for stage in layer.target.stages:
            if stage.name is not None and stage.name in renamed:
                stage_id, stage_name = renamed[stage.name]
                stage = replace(stage, layer_id=stage_id, name=stage_name)
            stages.append(stage)
        layer.target = replace(layer.target, stages=tuple(stages))
    return layer


def _kernels_by_layer(runs: Sequence[MarkedRun], renamed: Mapping[str, tuple[str | None, str]]) -> None:
    """Each run's precision of a node IR v10's conversion renamed, read from its reduction kernel: the execution
    graph names it by the layer's name where the plugin removed the Convert the conversion added (the node then
    takes the Convert's name, as OpenVINO's removal of a Convert before a model output does), by the generated one
    where the Convert stays."""
    for run in runs:
        for generated, (_, layer) in renamed.items():
            if generated not in run.reducing and layer in run.reducing and layer in run.runtime_precision:
                run.runtime_precision[generated] = run.runtime_precision[layer]


def _layer_ids(model: IRModel, work: AuditWork) -> dict[str, str]:
    """IR layer ids by name (names used once among the layers OpenVINO builds), to tie its nodes back to the file."""
    built = model.built()
    layers = [layer for layer in model.layers if layer.id in built]
    counts = Counter(layer.name for layer in layers)
    work.layers_visited += 3 * len(model.layers)
    return {layer.name: layer.id for layer in layers if counts[layer.name] == 1}


def _drift(
    truth: npt.NDArray[Any], out: npt.NDArray[Any], etype: str, count: int, atol: float | None, rtol: float | None
) -> Comparison:
    """This layer's output against the same layer in an f32 run of the whole model."""
    atol, rtol = tolerances(etype, None, count, out.size, atol, rtol)
    return compare(truth, out, reference_name="f32 run", candidate_name="audited run", atol=atol, rtol=rtol)


def _split(
    truth: npt.NDArray[Any], expected: npt.NDArray[Any], out: npt.NDArray[Any], limit: float | None
) -> DriftSplit | None:
    """``out - truth`` split into ``expected - truth`` (arrived with the input) and ``out - expected`` (added
    by the reduction), each measured against ``|truth|``. Elements where the three are not all finite count
    as infinitely relative unless they agree (NaN with NaN, the same infinity)."""
    if not (truth.shape == expected.shape == out.shape):
        return None
    t, e, o = (np.asarray(a, dtype=np.float64) for a in (truth, expected, out))
    finite = np.isfinite(t) & np.isfinite(e) & np.isfinite(o)
    scale = np.abs(np.where(finite, t, 0.0))

    def part(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> DriftPart:
        if a.size == 0:
            return DriftPart(0.0, 0.0)
        with np.errstate(invalid="ignore"):
            diff = np.where(finite, np.abs(a - b), 0.0)
            special_bad = ~finite & ~((np.isnan(a) & np.isnan(b)) | (a == b))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(scale > 0, diff / scale, np.where(diff > 0, np.inf, 0.0))
        if special_bad.any():  # a non-finite difference: infinite, never the finite elements' figures
            return DriftPart(math.inf, math.inf)
        return DriftPart(float(diff.max()), float(rel.max()))

    total = part(o, t)
    exceeded = limit is not None and (total.max_rel is None or total.max_rel > limit)
    return DriftSplit(total, part(e, t), part(o, e), limit, exceeded)


def _audit_layer(
    op: ReductionOp,
    node: Any,
    layer_id: str | None,
    data: npt.NDArray[Any],
    axes: npt.NDArray[Any],
    out: npt.NDArray[Any],
    atol: float | None,
    rtol: float | None,
    computed_in: str | None = None,
) -> LayerAudit:
    """A reduction's output against the reference on its captured inputs, at the tolerance of its element type; an f64
    one at that of the precision it executed in (``computed_in``: OpenVINO's CPU computes f64 in f32, a known defect,
    as ``run`` judges it, the rounding of its inputs to that precision allowed for), with a note where f64's would
    fail."""
    op_type = node.get_type_name()
    keep_dims = bool(node.get_attributes().get("keep_dims", False))
    etype = element_type(node.get_output_element_type(0).get_type_name()).name
    began = time.perf_counter()
    layer = LayerAudit(
        node.get_friendly_name(), op_type, layer_id, keep_dims,
        [int(a) for a in np.asarray(axes).reshape(-1).tolist()], list(data.shape), etype, None,
    )  # fmt: skip
    if etype in UNMODELLED_TYPES:  # (its captured tensors read as values: nf4's, a u4's)
        layer.audited = False
        layer.not_established = (
            f"it reduces {etype} data: OpenVINO's CPU reduces {etype} in a wider type and converts the result back to "
            f"{etype}, a conversion ovreduce's reference does not model"
        )
        return layer
    try:
        expected, notes = reduce_with_notes(op_type, data, axes, keep_dims)
    except Exception as exc:  # the reference refusing the captured tensors (e.g. runtime axes out of range)
        layer.error = f"reference failed: {exc}"
        return layer
    layer.reference_seconds = time.perf_counter() - began
    layer.notes = notes
    layer.expected = expected
    judged_in = computed_in if etype == "f64" else None
    asked = (atol, rtol)
    atol, rtol = tolerances(etype, judged_in, data.size, expected.size, atol, rtol, op=op_type)
    layer.not_established = cannot_show_error(data, axes, op_type, expected, atol)
    masked = masked_note(data, axes, op_type)
    if masked is not None:
        layer.notes.append(masked)
    try:  # output elements the specification leaves undefined (an empty ReduceMax) are left out
        undefined = undefined_elements(op_type, data.shape, axes, keep_dims)
    except OvReduceError:
        undefined = None
    undefined = undefined if undefined is not None and undefined.shape == out.shape else None
    mass = rounding_mass(op_type, data, axes, keep_dims, etype, *asked)  # (run's and conform's rule)
    allowance = rounding_allowance(mass, etype, judged_in, *asked)
    layer.comparison = compare(
        expected, out, reference_name="numpy", candidate_name="openvino", atol=atol, rtol=rtol,
        allowance=allowance, undefined=undefined,
    )  # fmt: skip
    wide = (None if asked[1] is not None or etype in NARROW_FLOAT_TOLERANCES  # (judged to one ulp of the type)
            else too_wide(layer.comparison, data.size // max(expected.size, 1), expected, allowance))  # fmt: skip
    if wide is not None:  # (an rtol given is the user's to judge)
        layer.notes.append(wide)
    if judged_in is not None and layer.comparison.ok:
        layer.notes += f64_computed_note(expected, out, layer.comparison, "OpenVINO", judged_in, data.size, *asked,
                                         mass=mass, undefined=undefined)  # fmt: skip
    layer.check_seconds = time.perf_counter() - began
    return layer
