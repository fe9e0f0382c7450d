"""Precision headroom: would each reduction of a model survive a device that runs it in f16 or bf16?

Intel GPUs and NPUs run models in f16 and CPUs with AMX in bf16. A reduction breaks there when the op feeding
it changes the range (RMSNorm's ``Power(x, 2)``: one activation of magnitude 256 squares past f16's 65504),
or when its own result does. ``ovreduce audit --target f16|bf16`` answers it for each reduction of the model
from the values the audit captured:

**The chain.** A reduction and, where its data input comes straight from one, the elementwise op that
changes the range (``Power``, ``Exp``, ``Multiply``, ``SquaredDifference``, ``Divide``, ``Add``, ``Subtract``):
that op's inputs are captured too. What the chain receives arrives as captured (rounded to the target type on the way
in: a value an op further up reaches past the type's maximum overflows there); a Constant's values arrive as OpenVINO
converts a model's constants, a finite value past the type's maximum saturating to it.

**Above the chain.** A ``Sqrt``, a ``Log``, a ``Tanh`` or a ``Divide`` between an overflow and the chain brings the
values back into range, so the chain's input alone does not show it: the chain is followed up through the elementwise
ops above it (:data:`ABOVE_OPS`, :data:`ABOVE_DEPTH` ops of two computed inputs deep, :data:`ABOVE_NODES` ops per
reduction; one it reaches past them is named, ``Chain.above_unfollowed``) and the ops that only move values
(:data:`MOVING`: a Reshape into heads, a Transpose, a Concat; in no depth), whose inputs are captured too (a tensor
the audit captures already is not captured again; what does not fit the audit's limit on the elements it keeps is not
captured, and the row says so). Their largest values count in the headroom factor (the
row lists them in ``above``). The ops above that run in the target are emulated down to the chain, and where what
they deliver differs from the captured values rounded (a difference of close values cancels, a divisor rounds), the
chain receives what they deliver: the rounding above is the target's too. Where
a value above reaches the type's maximum in an op running in the target, the ops above are emulated down to the chain
(:func:`arrive`: each op as the chain's are, :data:`EMULATED`), and the chain receives what they deliver: an overflow
that reaches the reduction is placed at the op above where it happens; one that an op below saturates (a ``Tanh``,
a ``Clamp``) is not the reduction's. Where it passes through an op the emulation does not compute, or starts from a
captured value past the maximum that an op not followed computed (whether that op overflows, or saturates a Constant,
decides), whether it reaches the reduction is not known: the row is ``not-established`` and names them. An op above
that NumPy does not compute (a ``Gelu``, an ``Erf``) is computed as OpenVINO's own evaluation of it computes it, on what
arrives at it. Ops kept in the original precision receive what an op running in the target computed rounded, so their
chain is emulated from those values, not taken as captured.

**What OpenVINO keeps in the original precision.** OpenVINO keeps a node out of f16/bf16 compression where its
rt_info says so (``disable_fp16_compression``, serialised as ``precise``; OpenVINO reads it back as
``DisablePrecisionConversion``): the marks its mixed-precision passes leave and that a saved IR carries. They
are read from the nodes as OpenVINO itself reads the model. A marked op of the chain is emulated in f32; a
chain whose every op is marked is *protected*. OpenVINO's own marking pass (``MarkSugraphsToKeepInMixedPrecision``)
runs inside a device plugin's compile and is not reachable through the Python API (``save_model``'s
``compress_to_fp16`` compresses constants only, ``passes.ConvertFP32ToFP16`` marks nothing): a chain that
the GPU plugin would mark when it compiles is judged unmarked, and the document says so.

**The emulation.** Each op of the chain runs in NumPy as a device runs it in the target type: its inputs
rounded to the type (``numpy.float16``, ``ml_dtypes.bfloat16``), the op computed and its result rounded to the
type; the reduction accumulates its rounded input exactly and rounds its result. bf16 is rounded as the CPU's
conversion rounds it (AVX512-BF16's, on every CPU that runs bf16 natively): an f32 value below bf16's smallest normal
flushes to 0. Where a CPU running bf16 natively computes an op inside a kernel without storing its result (a snippets
``Subgraph``'s op before the one it stores, a LayerNorm in its MVN kernel, a bias in its MatMul's accumulator:
:func:`as_executed`), the op is computed in f32 and the ops of that kernel receive it unrounded, as the kernel, which
computes in f32, does. Against the f64 reference of the same chain on the same captured inputs it gives, per
reduction: the largest magnitude each stage reaches (in f64) against the type's finite maximum (the headroom factor),
the elements that overflow to inf and those that underflow to 0, and the error of the result judged by the target
type's tolerance.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.compare import Comparison, compare, tolerances
from ovreduce.ops.registry import reductions
from ovreduce.reference.evaluate import reduce_with_notes, undefined_elements

__all__ = [
    "CONVERSIONS",
    "FINITE_MAX",
    "RANGE_OPS",
    "TARGETS",
    "Above",
    "Arrival",
    "Chain",
    "Emulation",
    "Stage",
    "arrive",
    "as_executed",
    "bounded",
    "chain_of",
    "computed",
    "covers_prior_rounding",
    "disabled_conversions",
    "emulate",
    "kept_in_original_precision",
    "prior_errors",
    "run_on_device",
    "target_tolerances",
    "walk_above",
]

TARGETS = ("f16", "bf16")
TYPES: Mapping[str, Any] = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
FINITE_MAX: Mapping[str, float] = {"f16": 65504.0, "bf16": (2 - 2**-7) * 2.0**127}  # as ml_dtypes.finfo says
SMALLEST_NORMAL: Mapping[str, float] = {"f16": 2.0**-14, "bf16": 2.0**-126}
# What the target's conversion makes 0: f16 rounds to nearest down to half its smallest subnormal (2^-25); the CPU's
# bf16 conversion (AVX512-BF16's ``vcvtneps2bf16``, every CPU that runs bf16 natively) flushes every f32 value below
# bf16's smallest normal, 2^-126, to 0: its bf16 tensors hold no subnormal
_FLUSHES_BELOW: Mapping[str, float] = {"f16": 2.0**-25, "bf16": 2.0**-126}
# The elementwise ops that change the range of what a reduction receives (the ones OpenVINO's mixed-precision
# marking looks for on a reduction's input: Power, Exp, Multiply..., and the arithmetic that scales or shifts a
# value: a Power's square divided down still overflowed before the Divide), with the number of inputs they take.
RANGE_OPS: Mapping[str, int] = {
    "Power": 2, "Exp": 1, "Multiply": 2, "SquaredDifference": 2, "Divide": 2, "Add": 2, "Subtract": 2,
}  # fmt: skip
# The rt_info keys (without their ``_<version>`` suffix) by which OpenVINO keeps a node in its original
# precision: as set by its passes, as serialised in an IR, and as read back from one.
KEEP_MARKS = frozenset({"disable_fp16_compression", "precise", "DisablePrecisionConversion"})
_KEEP_KEYS = tuple(f"{mark}_0" for mark in sorted(KEEP_MARKS))


# What each node's ``DisablePrecisionConversion`` says in the IR being audited (node name -> its value: the
# conversions it disables, ``from:to`` pairs, the legacy ``precise`` read back as ``dynamic:f16``): OpenVINO's Python
# API gives the attribute but not its value, so it is read from the IR (:func:`disabled_conversions`)
CONVERSIONS: ContextVar[Mapping[str, str] | None] = ContextVar("ovreduce_disabled_conversions", default=None)


def disabled_conversions(layers: Sequence[Any]) -> dict[str, str]:
    """The value of each IR layer's ``DisablePrecisionConversion`` attribute, by layer name."""
    found: dict[str, str] = {}
    for layer in layers:
        for info in getattr(layer, "rt_info", ()) or ():
            attrs = dict(info.attrs)
            if attrs.get("name") == "DisablePrecisionConversion" and "value" in attrs:
                found[layer.name] = attrs["value"]
    return found


def _disables_f16(value: str) -> bool:
    """Whether a ``DisablePrecisionConversion`` value disables the conversion to f16 (``dynamic:f16``, ``f32:f16``,
    ``dynamic:bf16,f16``, ``dynamic:dynamic``): the one OpenVINO's CPU honours, at bf16 too; a mark of another
    conversion only (``f32:i8``, ``dynamic:bf16``) keeps the node out of neither f16 nor bf16 (its execution graph runs
    it in bf16). Read as OpenVINO serialises it (``disable_fp16_compression.cpp``): entries ``from:to1,to2`` joined by
    ``;``, a to-type of ``dynamic`` standing for any type."""
    for entry in value.split(";"):
        _source, colon, targets = entry.partition(":")
        if not colon:
            continue
        if any(to.strip() in ("f16", "dynamic") for to in targets.split(",")):
            return True
    return False


def kept_in_original_precision(node: Any) -> bool:
    """Whether OpenVINO keeps ``node`` out of f16/bf16 compression (its rt_info carries the mark; a
    ``DisablePrecisionConversion`` only where it disables the conversion to f16, where the IR's value is known)."""
    try:
        info = node.get_rt_info()
        if len(info) == 0 or not any(key in info for key in _KEEP_KEYS):  # listing the keys costs 20x more
            return False
    except Exception:  # a node without rt_info
        return False
    values = CONVERSIONS.get()
    value = None if values is None else values.get(node.get_friendly_name())
    if value is None or any(key in info for key in _KEEP_KEYS if not key.startswith("DisablePrecisionConversion")):
        return True
    return _disables_f16(value)


@dataclass
class Above:
    """An elementwise op above a reduction's chain (:func:`walk_above`): the mark of its output (captured), for each
    input the index of its mark or the value of its Constant, whether each arrives unrounded where the op is kept in
    the original precision (:func:`_arrives_unrounded`), and the inputs themselves (OpenVINO outputs, to name them)."""

    node: Any
    output: int
    inputs: list[int | npt.NDArray[Any]]
    unrounded: list[bool]
    sources: list[Any]
    kept: bool = False
    # for each input, whether its values flow into the output (not a shape, an axis, indices or a Select's condition)
    carries: list[bool] = field(default_factory=list)
    port: int = 0  # the output of the node that ``output`` captures (a Split has several)
    # for each input, whether the device computes it inside the kernel that computes this op, in f32, never storing it
    # in the target (:func:`as_executed`): it arrives unrounded, whatever this op runs in
    inside: list[bool] = field(default_factory=list)

    def within(self, k: int) -> bool:
        return bool(self.inside) and self.inside[k]

    @property
    def moves(self) -> bool:
        """Whether the op only moves or picks values (:data:`MOVING`): it changes none, in any precision."""
        return self.node.get_type_name() in MOVING

    def carried(self, k: int) -> bool:
        return not self.carries or self.carries[k]


@dataclass
class Chain:
    """A reduction's chain: the range-changing op feeding it (None: the reduction alone) and, for each of that
    op's inputs, the index of its mark (a captured tensor) or the value of its Constant. ``sources_kept`` says, for
    each input of the chain's first op, whether it arrives in the original precision (:func:`_arrives_unrounded`):
    a protected chain (every op kept) still receives an input an op running in the target type computed, rounded."""

    op: Any | None
    sources: list[int | npt.NDArray[Any]] = field(default_factory=list)
    op_kept: bool = False
    reduction_kept: bool = False
    sources_kept: list[bool] = field(default_factory=list)
    executed_in_f32: bool = False  # kept where the device's execution graph runs the op or reduction in f32, unmarked
    marks_overridden: bool = False  # marked, but the device's execution graph runs the op or reduction in the target
    executes: str | None = None  # what the device's execution graph of the model runs the reduction in (None: unknown)
    unknown: str | None = None  # why what the device's execution graph runs the chain in is not known, where it is not
    above: list[Above] = field(default_factory=list)  # the elementwise ops above the chain, captured (walk_above)
    entry: list[int | None] = field(default_factory=list)  # each chain input's mark (None: a Constant), once walked
    above_cut: str | None = None  # why the ops above the chain were not all captured, where they were not
    # the ops the walk above the chain reached and did not follow (past its depth or its count): their captured values
    # are taken as they are, rounded, and what they compute in the target (a difference that cancels) does not show
    above_unfollowed: list[Any] = field(default_factory=list)
    constant_valued: list[bool] = field(default_factory=list)  # each source holds only Constants' values (a mask)
    # for each input of the chain's first op, whether the device computes it inside the kernel that computes that op,
    # in f32, never storing it in the target (a snippets Subgraph's, an MVN's): it arrives unrounded (as_executed)
    sources_inside: list[bool] = field(default_factory=list)
    op_inside: bool = False  # the device computes the op inside the reduction's kernel, which receives it in f32
    reduction_inside: bool = False  # the device computes the reduction inside a kernel that does not store its result
    kernel: str | None = None  # the device's kernel that computes the chain inside it (in f32), where one does

    @property
    def constants(self) -> list[bool] | None:
        """For each input of the chain's op, whether OpenVINO converts its values as a Constant's (saturating past the
        type's largest): a Constant, or values moved from Constants only (``Select(keep, 0, lowest)``, a Broadcast of
        one: how an attention mask is exported); None for a chain without op."""
        if self.op is None:
            return None
        return [not isinstance(i, int) or moved for i, moved in zip(self.sources, self.constant_valued, strict=True)]

    @property
    def protected(self) -> bool:
        return self.reduction_kept and (self.op is None or self.op_kept)


def as_executed(
    chain: Chain, reduction: Any, executes: Mapping[str, str], target: str, inside: Collection[str] = frozenset()
) -> Chain:
    """``chain`` as the device's execution graph of the model in ``target`` (node name -> precision) runs it, over
    the marks: what it runs in f32 is kept in f32 as a mark keeps it (a CPU running a model in bf16 keeps some ops in
    f32 unmarked: those after the graph's last MatMul or convolution, for one), and what it runs in the target is
    not kept, marked or not. A node the graph does not name keeps its mark. ``inside``: the nodes the device computes
    inside a kernel without storing their result (an op a snippets ``Subgraph`` fuses before its output, a
    decomposed LayerNorm's or RMSNorm's ops in the CPU's MVN or RMS kernel, an op fused into a FullyConnected): the
    CPU's kernels compute in f32 and round to the target only what they store, so those are computed in f32 and every
    op of the kernel receives them unrounded."""

    def kept_as(node: Any, marked: bool) -> bool:
        if node.get_friendly_name() in inside:
            return True
        runs = executes.get(node.get_friendly_name())
        return True if runs == "f32" else False if runs == target else marked

    def within(source: Any) -> bool:
        return source.get_node().get_type_name() not in ("Parameter", "Constant") and (
            source.get_node().get_friendly_name() in inside
        )

    ops = [reduction] if chain.op is None else [chain.op]
    sources = [op.input_value(i) for op in ops for i in range(op.get_input_size())][: len(chain.sources_kept)]
    kept = replace(
        chain,
        op_kept=chain.op is not None and kept_as(chain.op, chain.op_kept),
        reduction_kept=kept_as(reduction, chain.reduction_kept),
        sources_kept=[  # a model's input or Constant arrives as given, whatever the graph converts it to
            was if source.get_node().get_type_name() in ("Parameter", "Constant") else kept_as(source.get_node(), was)
            for was, source in zip(chain.sources_kept, sources, strict=True)
        ],
    )
    kept.above = [
        replace(above, kept=kept_as(above.node, above.kept), unrounded=[
            was if source.get_node().get_type_name() in ("Parameter", "Constant") else kept_as(source.get_node(), was)
            for was, source in zip(above.unrounded, above.sources, strict=True)
        ])
        for above in chain.above
    ]  # fmt: skip
    for above in kept.above:
        above.inside = [within(source) for source in above.sources]
    kept.sources_inside = [within(source) for source in sources]
    kept.op_inside = chain.op is not None and chain.op.get_friendly_name() in inside
    kept.reduction_inside = reduction.get_friendly_name() in inside
    kept.executed_in_f32 = (kept.op_kept and not chain.op_kept) or (kept.reduction_kept and not chain.reduction_kept)
    kept.marks_overridden = (chain.op_kept and not kept.op_kept) or (chain.reduction_kept and not kept.reduction_kept)
    kept.executes = executes.get(reduction.get_friendly_name())
    return kept


def _arrives_unrounded(source: Any) -> bool:
    """Whether the output ``source`` reaches an op kept in its original precision unrounded: a Parameter (a device
    converts no input of the model), a Constant (kept where a kept op reads it), or the output of a kept op. Any other
    op runs in the target type, and a kept op receives its rounded output."""
    node = source.get_node()
    return node.get_type_name() in ("Parameter", "Constant") or kept_in_original_precision(node)


def chain_of(reduction: Any, marks: list[Any]) -> Chain:
    """The chain of the OpenVINO node ``reduction``; the inputs of its range-changing op that must be captured
    are appended to ``marks``."""
    chain = Chain(None, reduction_kept=kept_in_original_precision(reduction))
    producer = reduction.input_value(0).get_node()
    chain.sources_kept = [_arrives_unrounded(reduction.input_value(0))]
    if producer.get_type_name() not in RANGE_OPS or producer.get_input_size() != RANGE_OPS[producer.get_type_name()]:
        return chain
    if not all(producer.input_value(i).get_element_type().is_real() for i in range(producer.get_input_size())):
        return chain
    chain.op = producer
    chain.op_kept = kept_in_original_precision(producer)
    chain.sources_kept = []
    for i in range(producer.get_input_size()):
        source = producer.input_value(i)
        chain.sources_kept.append(_arrives_unrounded(source))
        if source.get_node().get_type_name() == "Constant":
            chain.sources.append(_constant(source.get_node()))
        else:
            chain.sources.append(len(marks))
            marks.append(source)
        chain.constant_valued.append(_constant_valued(source))
    return chain


# The ops that move or pick values without computing new ones, with the inputs whose values they carry (a ReduceMax
# or a ReduceMin picks one of its input's values, in any precision: a softmax's row max above its Subtract is what the
# ops above deliver to it, a fully masked row's the mask's saturated value, not the f32 run's past the type's range)
MOVING: Mapping[str, tuple[int, ...] | None] = {
    "Select": (1, 2), "Broadcast": (0,), "Convert": (0,), "Reshape": (0,), "Squeeze": (0,), "Unsqueeze": (0,),
    "Transpose": (0,), "Tile": (0,), "Gather": (0,), "StridedSlice": (0,), "Slice": (0,), "Concat": None,
    "Split": (0,), "VariadicSplit": (0,), "Pad": (0, 3), "DepthToSpace": (0,), "SpaceToDepth": (0,),
    "ShuffleChannels": (0,), "ScatterUpdate": (0, 2), "BatchToSpace": (0,), "SpaceToBatch": (0,),
    "ReduceMax": (0,), "ReduceMin": (0,),
}  # fmt: skip
# Ops that only move values too, but that OpenVINO's own evaluation (``Node.evaluate``) does not compute, so the walk
# above a chain cannot follow them: one it reaches is named in the row as not followed (``Chain.above_unfollowed``)
UNEVALUATED_MOVING = frozenset({
    "Roll", "GatherElements", "GatherND", "ReverseSequence", "Reverse", "ScatterElementsUpdate", "ScatterNDUpdate",
})  # fmt: skip


def _constant_valued(source: Any, budget: int = 32) -> bool:
    """Whether every value of the output ``source`` comes from a Constant through ops that only move or pick values
    (:data:`MOVING`): OpenVINO's f16 conversion converts those Constants, so such values saturate as theirs do."""
    todo, seen = [source], 0
    while todo:
        node = todo.pop().get_node()
        seen += 1
        kind = node.get_type_name()
        if seen > budget or (kind != "Constant" and kind not in MOVING):
            return False
        if kind != "Constant":
            carried = MOVING[kind]
            todo += [node.input_value(i) for i in (range(node.get_input_size()) if carried is None else carried)]
    return True


# The elementwise ops a chain is followed up through, above its range-changing op (or above the reduction where none
# feeds it): a Sqrt, a Log, a Tanh or a Divide between an overflow and the reduction brings the values back into the
# type's range, so the reduction's input alone does not show it. Those :func:`_apply` computes are emulated.
ABOVE_OPS = frozenset({
    "Add", "Subtract", "Multiply", "Divide", "Power", "SquaredDifference", "Maximum", "Minimum",
    "Sqrt", "Log", "Exp", "Tanh", "Sigmoid", "Abs", "Negative", "Relu", "Clamp", "Erf", "Gelu", "Swish", "HSwish",
    "HSigmoid", "SoftPlus", "Mish", "Sin", "Cos", "Floor", "Ceiling", "Sign",
})  # fmt: skip
EMULATED = frozenset({
    "Add", "Subtract", "Multiply", "Divide", "Power", "SquaredDifference", "Maximum", "Minimum",
    "Sqrt", "Log", "Exp", "Tanh", "Sigmoid", "Abs", "Negative", "Relu", "Clamp",
})  # fmt: skip
ABOVE_DEPTH = 4  # ops of two computed inputs or more followed up from the chain, at most, along any path
ABOVE_NODES = 8  # ops followed per reduction, at most (as many again that only move values)


def walk_above(chain: Chain, entry: Sequence[int | None], marks: list[Any], known: dict[Any, int], room: Any) -> None:
    """Follow ``chain`` up from its inputs (``entry``: the mark of each, None for a Constant) through the elementwise
    ops of :data:`ABOVE_OPS` (:data:`ABOVE_DEPTH` deep in ops of two computed inputs, :data:`ABOVE_NODES` ops at most;
    those reached past them are listed in ``chain.above_unfollowed``) and the ops that only move
    values (:data:`MOVING`: a Reshape into heads, a Transpose, a Concat; they change no value in any precision, so they
    count in no depth) into ``chain.above``; the inputs of those ops are captured (those a moving op does not carry
    values from, a shape, indices, a condition, too: it is computed on them): a tensor already marked (``known``:
    output -> mark) is not marked again, and a new one is appended to ``marks`` only where ``room(output)`` says it
    fits the audit's capture budget (else the walk stops there, and ``chain.above_cut`` says so)."""
    chain.entry = list(entry)
    ports = [chain.op.input_value(i) for i in range(chain.op.get_input_size())] if chain.op is not None else []
    queue: deque[tuple[Any, int, int]] = deque()
    first: dict[Any, int] = {}  # each input's port, with the mark of the first input it feeds
    for k, mark in enumerate(entry):
        if mark is not None:
            port = ports[k] if chain.op is not None else marks[mark]
            if port in first:  # the same tensor twice (a square as ``d * d``): the ops above deliver it to both
                chain.entry[k] = first[port]
                continue
            first[port] = mark
            queue.append((port, mark, 1))
    walked: set[Any] = set()
    while queue:
        port, mark, depth = queue.popleft()
        node = port.get_node()
        kind = node.get_type_name()
        if port in walked or (kind not in ABOVE_OPS and kind not in MOVING):
            if kind in UNEVALUATED_MOVING and node not in chain.above_unfollowed:
                chain.above_unfollowed.append(node)
            continue
        if (node.get_output_size() != 1 and kind not in _SPLITS) or not port.get_element_type().is_real():
            continue
        values = node.input_values()
        carried = MOVING.get(kind)
        carries = [kind not in MOVING or carried is None or k in carried for k in range(len(values))]
        if not all(value.get_element_type().is_real() for value, c in zip(values, carries, strict=True) if c):
            continue
        if kind in MOVING and not any(_on_data(value) for value, c in zip(values, carries, strict=True) if c):
            continue  # it moves a Constant's values only (an embedding's Gather from its table): as captured
        computing = sum(not above.moves for above in chain.above)
        # an op of one input computed from the model's inputs (a Multiply by a Constant, a Sqrt) or that moves values
        # is no level deeper: the depth counts the ops that combine such values, the counts bound the rest
        deeper = kind not in MOVING and sum(c and _on_data(value) for value, c in zip(values, carries, strict=True)) > 1
        if (
            depth - (not deeper) > ABOVE_DEPTH
            or (computing >= ABOVE_NODES and kind not in MOVING)
            or len(chain.above) >= 2 * ABOVE_NODES
        ):
            if node not in chain.above_unfollowed:
                chain.above_unfollowed.append(node)
            continue
        walked.add(port)
        inputs: list[int | npt.NDArray[Any]] = []
        further = []
        for value, carries_values in zip(values, carries, strict=True):
            source = value.get_node()
            if source.get_type_name() == "Constant":
                inputs.append(_constant(source))
                continue
            index = known.get(value)
            if index is None:
                if not room(value):
                    chain.above_cut = (f"the values above {kind} {node.get_friendly_name()!r} were "
                                       f"not captured: they would pass the audit's limit on the elements it keeps "
                                       f"(OVREDUCE_MAX_ELEMENTS)")  # fmt: skip
                    break
                index = known[value] = len(marks)
                marks.append(value)
            inputs.append(index)
            if carries_values:
                further.append((value, index, depth + deeper))
        else:
            chain.above.append(Above(node, mark, inputs, [_arrives_unrounded(v) for v in values], list(values),
                                     kept_in_original_precision(node), carries, port.get_index()))  # fmt: skip
            queue.extend(further)


def _on_data(port: Any, budget: int = 64) -> bool:
    """Whether the value of ``port`` depends on the model's inputs or state (a Parameter or ReadValue above it), not on
    Constants alone (a weight's decompression, which OpenVINO computes when it compiles); True where that is not found
    out within ``budget`` nodes."""
    todo, seen = [port.get_node()], set[Any]()
    while todo:
        node = todo.pop()
        kind = node.get_type_name()
        if kind in ("Parameter", "ReadValue") or len(seen) > budget:
            return True
        if node in seen:
            continue
        seen.add(node)
        todo += [value.get_node() for value in node.input_values()]
    return False


_SPLITS = frozenset({"Split", "VariadicSplit"})  # moving ops of several outputs, each followed on its own


def _moved(above: Above, args: Sequence[npt.NDArray[Any]], shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
    """What the op ``above``, which only moves values (:data:`MOVING`) or is one :func:`_apply` does not compute, makes
    of ``args`` (its values in f32, the others as captured) into its output of ``shape``: as OpenVINO's own evaluation
    of the op computes it (in f32)."""
    import openvino as ov

    kind = above.node.get_type_name()
    if kind == "Convert":  # (to a floating-point type: rounded by the op that receives it)
        return np.asarray(args[0], dtype=np.float32)
    data = np.asarray(args[0], dtype=np.float32)
    if kind in _SPLITS:
        axis = int(np.asarray(args[1]).reshape(-1)[0])
        axis = axis + data.ndim if axis < 0 else axis
        if kind == "Split":
            parts = np.split(data, int(above.node.get_attributes()["num_splits"]), axis=axis)
        else:
            lengths = [int(n) for n in np.asarray(args[2]).reshape(-1)]
            if -1 in lengths:
                lengths[lengths.index(-1)] = data.shape[axis] - (sum(lengths) + 1)
            parts = np.split(data, np.cumsum(lengths)[:-1], axis=axis)
        return np.asarray(parts[above.port], dtype=np.float32)
    tensors = [ov.Tensor(np.ascontiguousarray(np.asarray(a, np.float32) if carried else a))
               for a, carried in zip(args, [above.carried(k) for k in range(len(args))], strict=True)]  # fmt: skip
    out = ov.Tensor(ov.Type.f32, ov.Shape(list(shape)))
    if not above.node.evaluate([out], tensors):
        raise ValueError(f"OpenVINO does not evaluate {kind} {above.node.get_friendly_name()!r}")
    return np.array(out.data, dtype=np.float32, copy=True)


def _evaluated_above(
    above: Above, args: Sequence[npt.NDArray[Any]], values: Any, mark: int, target: str, by_output: Mapping[int, Above]
) -> npt.NDArray[Any] | None:
    """What an op above the chain that :func:`_apply` does not compute (a ``Gelu``, an ``Erf``, a ``Swish``) delivers
    in the target from ``args`` (what arrives at its inputs, rounded to the precision it runs in): OpenVINO's own
    evaluation of the op (``Node.evaluate``) in f32 on them, its result rounded. Where OpenVINO does not evaluate it,
    its captured output rounded, if what arrives at it is what was captured, rounded; None (not known) where it is not:
    what the op makes of inputs that differ from the captured ones is not known."""
    shape = np.shape(values(mark))
    try:
        return _rounded(_moved(above, args, shape), target, above.kept)
    except Exception:  # (an op OpenVINO does not evaluate on these inputs)
        pass
    for k, (index, arg) in enumerate(zip(above.inputs, args, strict=True)):
        if not above.carried(k) or not isinstance(index, int) or index not in by_output:
            continue
        captured = _rounded(values(index), target, above.kept)
        if not np.array_equal(np.asarray(arg, np.float64), np.asarray(captured, np.float64), equal_nan=True):
            return None
    return _rounded(values(mark), target, above.kept)


@dataclass
class Arrival:
    """What the ops above a chain deliver to it in the target type (:func:`arrive`)."""

    stages: list[Stage]  # each value it starts from and each op above (the farthest first)
    arrived: list[npt.NDArray[Any] | None] | None  # per chain input, its values in the target (None: emulated not)
    blocked: list[Any] = field(default_factory=list)  # what is not emulated and decides whether an overflow reaches
    # the chain: ops above not emulated, or a captured value past the type's maximum that an op not followed computed
    over: Stage | None = None  # where what the chain receives is not known: the stage that overflows first
    saturated: int = 0  # values of Constants past the type's largest that ops above convert to it (emulated)


def arrive(chain: Chain, values: Any, target: str) -> Arrival:
    """The ops above ``chain`` (``chain.above``) on the captured ``values`` (mark -> array): the largest magnitude
    each reaches, and, where a value above reaches the target type's finite maximum, the ops emulated down to the chain
    in the target (each op's inputs rounded, the op computed in f32 and its result rounded; a kept op in f32) and what
    arrives at each of the chain's inputs. Where they start from a captured value past the maximum (which an op not
    followed computed: from a Constant OpenVINO saturates, say, or overflowing), they are emulated with it saturated
    to the maximum, and again with it overflowing: an overflow reaching the chain either way is one, and one that
    reaches it only from such a value is not known (``blocked``). An op that :func:`_apply` does not compute delivers
    what OpenVINO's evaluation of it makes of what arrives finite (:func:`_evaluated_above`); where an overflow reaches
    it, what it delivers is not known (``blocked``)."""
    limit = FINITE_MAX[target]
    by_output = {above.output: above for above in chain.above}
    largest: dict[int, float] = {}

    def top(mark: int) -> float:
        if mark not in largest:
            largest[mark] = _largest(np.asarray(values(mark), dtype=np.float64))
        return largest[mark]

    leaves: dict[int, Any] = {}
    for above in chain.above:
        for k, (index, source) in enumerate(zip(above.inputs, above.sources, strict=True)):
            if isinstance(index, int) and index not in by_output and above.carried(k):
                leaves[index] = source
    # the captured values that reach the maximum where an op running in the target computes or receives them
    hot = {above.output for above in chain.above if not above.kept and top(above.output) >= limit}
    hot |= {index for above in chain.above
            for k, (index, unrounded) in enumerate(zip(above.inputs, above.unrounded, strict=True))
            if isinstance(index, int) and above.carried(k) and not (above.kept and unrounded)
            and top(index) >= limit}  # fmt: skip

    # A captured value past the maximum saturates where OpenVINO converts it as a Constant (it depends on no input of
    # the model: folded, then converted; or it is moved from Constants only: a mask's Select), and overflows where an
    # op running in the target computed it from the model's inputs (a ReduceMax of a masked row is -inf, as its own row
    # says); what an op kept in the original precision computed is converted on its way in, which may do either.
    constant = {index for index, source in leaves.items() if not _on_data(source) or _constant_valued(source)}
    unsure = {index for index, source in leaves.items()
              if index not in constant and kept_in_original_precision(source.get_node())}  # fmt: skip

    def figures() -> Arrival:
        stages = [Stage(source.get_node().get_type_name(), top(mark), node=source.get_node())
                  for mark, source in leaves.items()]  # fmt: skip
        stages += [Stage(above.node.get_type_name(), top(above.output), kept=above.kept, node=above.node)
                   for above in reversed(chain.above)]  # fmt: skip
        return Arrival(stages, None)

    def emulated(saturate: bool) -> Arrival:
        low: dict[int, npt.NDArray[Any] | None] = {}
        saturated = [0]  # values of Constants the ops above convert past the type's largest
        lost: dict[int, npt.NDArray[np.bool_]] = {}
        zeroed: dict[int, npt.NDArray[np.bool_]] = {}  # what each stage delivers as 0, not 0 exactly
        blocked: list[Any] = []
        stages: list[Stage] = []

        def lose(mark: int, out: npt.NDArray[Any], inherited: npt.NDArray[np.bool_], what: Any, kept: bool,
                 zeros_in: npt.NDArray[np.bool_] | None = None) -> None:  # fmt: skip
            """The stage of ``mark``: what it makes inf or NaN (not ``inherited`` so) and 0 (not 0 in ``zeros_in``
            already: each element is counted at the first stage that loses it)."""
            exact = np.asarray(values(mark), dtype=np.float64)
            gone = np.isfinite(exact) & ~np.isfinite(np.asarray(out, dtype=np.float64))
            try:
                before = np.broadcast_to(inherited, gone.shape)
            except ValueError:
                before = np.zeros(gone.shape, dtype=bool)
            try:
                zeros_before = np.broadcast_to(np.zeros((), bool) if zeros_in is None else zeros_in, gone.shape)
            except ValueError:
                zeros_before = np.ones(gone.shape, dtype=bool)
            lost[mark] = gone
            under, cancel = _zeros(exact, out)
            zeroed[mark] = under | cancel
            flushed, cancelled = under & ~before & ~zeros_before, cancel & ~before & ~zeros_before
            stages.append(Stage(what.get_type_name(), top(mark), int(np.count_nonzero(gone & ~before)),
                                int(np.count_nonzero(flushed)), kept, node=what,
                                cancelled=int(np.count_nonzero(cancelled))))  # fmt: skip

        def compute(mark: int) -> npt.NDArray[Any] | None:
            """The output of the op above that ``mark`` captures, in the precision it runs in (None: not known)."""
            if mark in low:
                return low[mark]
            above = by_output[mark]
            low[mark] = None
            args: list[npt.NDArray[Any]] = []
            inherited = np.zeros((), dtype=bool)
            zeros_in = np.zeros((), dtype=bool)
            for k, (index, unrounded, source) in enumerate(zip(above.inputs, above.unrounded, above.sources,
                                                               strict=True)):  # fmt: skip
                if not above.carried(k):  # a shape, axes, indices, a condition: as given
                    args.append(np.asarray(index if not isinstance(index, int) else values(index)))
                    continue
                if not isinstance(index, int):
                    args.append(np.asarray(index, np.float32) if above.kept else _converted_constant(index, target))
                    saturated[0] += 0 if above.kept else _saturated(index, target)
                    continue
                if index in by_output:
                    got = compute(index)
                    if got is None:
                        return None
                    arg = _rounded(got, target, above.kept or above.within(k))
                else:  # captured: rounded on its way into an op running in the target (or saturated: see above)
                    keep = (above.kept and unrounded) or above.within(k)
                    saturates = index in constant or (saturate and index in unsure)
                    arg = (_converted_constant(values(index), target) if saturates and not keep
                           else _rounded(values(index), target, keep))  # fmt: skip
                    if index not in lost:
                        lose(index, arg, np.zeros((), dtype=bool), source.get_node(), False)
                try:
                    inherited = inherited | lost[index]
                except ValueError:
                    inherited = np.ones((), dtype=bool)
                try:
                    zeros_in = zeros_in | zeroed[index]
                except ValueError:
                    zeros_in = np.ones((), dtype=bool)
                args.append(arg)
            kind = above.node.get_type_name()
            if kind in EMULATED:
                out = _rounded(_apply(kind, [a.astype(np.float32) for a in args], above.node), target, above.kept)
            elif above.moves:  # what it moves, as it moves it: no value changes, so none is lost here
                out = _rounded(_moved(above, args, np.shape(values(mark))), target, above.kept)
                inherited = zeros_in = np.ones((), dtype=bool)
            elif not inherited.any():  # what it computes from values that arrive finite: as OpenVINO's own evaluation
                # of the op computes it on what arrives (a Gelu of a difference that cancelled is the cancelled one's)
                evaluated = _evaluated_above(above, args, values, mark, target, by_output)
                if evaluated is None:
                    blocked.append(above.node)
                    return None
                out = evaluated
            else:
                blocked.append(above.node)
                return None
            lose(mark, out, inherited, above.node, above.kept, zeros_in)
            low[mark] = out
            return out

        arrived = [compute(mark) if mark is not None and mark in by_output else None for mark in chain.entry]
        if blocked:
            return Arrival(stages, None, blocked, next((st for st in stages if st.overflowed), None), saturated[0])
        return Arrival(stages, arrived, saturated=saturated[0])

    def reaches(arrival: Arrival) -> bool:
        """Whether an overflow above reaches the chain's inputs (or is not known to stay away)."""
        if arrival.arrived is None:
            return True
        return any(got is not None and not np.isfinite(np.asarray(got, dtype=np.float64)[
            np.isfinite(np.asarray(values(mark), dtype=np.float64))]).all()
            for mark, got in zip(chain.entry, arrival.arrived, strict=True))  # fmt: skip

    # all in the original precision, from values that arrive there unrounded: as captured (a kept Subtract of what
    # MatMuls running in the target computed still receives their outputs rounded, and cancels as they do)
    exact_leaves = all(unrounded for above in chain.above
                       for k, (index, unrounded) in enumerate(zip(above.inputs, above.unrounded, strict=True))
                       if isinstance(index, int) and index not in by_output and above.carried(k))  # fmt: skip
    if not hot and exact_leaves and all(above.kept for above in chain.above):
        return figures()
    if not hot:  # nothing above nears the maximum: what the ops above lose in the target (a difference of close
        # values cancelling, a divisor's rounding) still reaches the chain, where it differs from the captured values
        quiet = emulated(saturate=True)
        if quiet.arrived is None or all(
            got is None or np.array_equal(np.asarray(got, np.float64),
                                          np.asarray(_rounded(values(mark), target, False), np.float64), equal_nan=True)
            for mark, got in zip(chain.entry, quiet.arrived, strict=True)
        ):  # fmt: skip
            return figures()
        return Arrival(quiet.stages, quiet.arrived)
    mild = emulated(saturate=True)
    if reaches(mild) or not hot & unsure:
        return mild
    harsh = emulated(saturate=False)
    if not reaches(harsh):
        return mild
    # only a captured value past the maximum, as its op computes it in the target, decides
    mark = max(hot & unsure, key=top)
    node = leaves[mark].get_node()
    over = next(st for st in mild.stages if st.what == node.get_type_name() and st.largest == top(mark))
    return Arrival(mild.stages, None, [node], over)


@dataclass
class Stage:
    """One stage of the emulated chain: the largest magnitude it reaches in f64, and how many of its elements
    overflow to inf (or turn NaN) and underflow to 0 in the target type for the first time there."""

    what: str  # "input", the op's type, the reduction's type
    largest: float
    overflowed: int = 0
    underflowed: int | None = 0  # None: not counted (a bound covers them)
    kept: bool = False  # computed in f32: OpenVINO keeps this op in its original precision
    node: Any = None  # the OpenVINO node of a stage above the chain (:func:`arrive`)
    # elements that come out 0 though their exact value lies above the type's smallest subnormal: not an underflow, a
    # cancellation (a difference of values the type holds equal), counted apart from ``underflowed``
    cancelled: int = 0


# The smallest magnitude each type holds as a device computes it: its smallest subnormal, bf16's smallest normal (the
# CPU's conversion flushes what lies below it, :data:`_FLUSHES_BELOW`)
_SMALLEST_HELD = {"float16": 2.0**-24, "bfloat16": 2.0**-126, "float32": 2.0**-149, "float64": 2.0**-1074}


def _zeros(
    exact: npt.NDArray[np.float64], low: npt.NDArray[Any]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The elements of ``low`` (in the type it was computed in) that are 0 where ``exact`` is finite and not: those that
    underflow (their exact value below the smallest magnitude the type holds, which it cannot hold: its smallest
    subnormal, bf16's smallest normal) and those that cancel."""
    low64 = np.asarray(low, dtype=np.float64)
    zero = (exact != 0) & np.isfinite(exact) & (low64 == 0)
    tiny = _SMALLEST_HELD.get(np.asarray(low).dtype.name)
    under = zero if tiny is None else zero & (np.abs(exact) < tiny)
    return under, zero & ~under


@dataclass
class Emulation:
    """The chain emulated in the target type against its f64 reference."""

    result: npt.NDArray[Any] | None  # the reduction's output in the target type (None: bounded, not emulated)
    expected: npt.NDArray[np.float64]  # the f64 reference of the whole chain on the same inputs
    stages: list[Stage]
    comparison: Comparison | None  # the result against the reference (None: bounded)
    bound: float | None = None  # bounded: the largest error the target's rounding can cause, proven within tolerance
    undefined: npt.NDArray[np.bool_] | None = None  # output elements the specification leaves undefined (an empty max)
    saturated: int = 0  # values of Constants past the type's largest, which their conversion saturates to it
    clamped: int = 0  # output elements past the type's range holding its largest from saturated Constants: not judged
    # every output lies within the target's absolute tolerance of 0 (a result of zeros would pass it): the comparison
    # (or the bound) is then made with no absolute tolerance, relative to the outputs, or to the outputs plus what an
    # Add after the reduction adds to them (``added``: an RMSNorm's eps)
    relative: bool = False
    flushed: int = 0  # output elements the f64 reference holds non-zero that are 0 in the target (emulated only)
    # ... of which those lost to a cancellation (of their terms, or above them), not counted in ``flushed``
    cancelled: int = 0
    lost_largest: float | None = None  # the largest magnitude the f64 reference holds among the outputs lost
    added: float | None = None  # the least the Add after the reduction adds, where it was judged against it
    added_flushes: bool = False  # what the Add adds flushes to 0 in the target (an eps below what the type holds)

    @property
    def non_finite(self) -> int:
        """Output elements that are inf or NaN in the emulation where the f64 reference is finite (and defined)."""
        if self.result is None:
            return 0
        bad = np.isfinite(self.expected) & ~np.isfinite(np.asarray(self.result, dtype=np.float64))
        if self.undefined is not None:
            bad &= ~self.undefined
        return int(np.count_nonzero(bad))

    @property
    def ok(self) -> bool:
        return self.comparison.ok if self.comparison is not None else True

    @property
    def largest(self) -> float:
        return max((s.largest for s in self.stages), default=0.0)


def _largest(values: npt.NDArray[Any]) -> float:
    """The largest finite magnitude of ``values`` (0 for none)."""
    if values.size == 0:
        return 0.0
    top = float(np.max(np.abs(values)))
    if math.isfinite(top):
        return top
    finite = values[np.isfinite(values)]
    return float(np.max(np.abs(finite))) if finite.size else 0.0


def _rounded(values: npt.NDArray[Any], target: str, kept: bool) -> npt.NDArray[Any]:
    """``values`` rounded to the target type, or to f32 where OpenVINO keeps the op in its precision: to bf16 as the
    CPU's conversion rounds them, an f32 value below bf16's smallest normal flushed to 0 (:data:`_FLUSHES_BELOW`)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        data = np.asarray(values, dtype=np.float32)
        if kept:
            return data.astype(np.float32)
        if target == "bf16":
            data = np.where(np.abs(data) < np.float32(_FLUSHES_BELOW[target]), np.copysign(np.float32(0), data), data)
        return np.asarray(data).astype(TYPES[target])


def _converted_constant(values: npt.NDArray[Any], target: str) -> npt.NDArray[Any]:
    """A Constant's ``values`` as OpenVINO converts a model's constant to the target type: rounded, a finite value past
    the type's largest saturating to it (``convert_from_f32_to_f16_with_clamp`` for f16, the CPU plugin's conversion
    for bf16: float32's lowest, a causal mask's, becomes bf16's lowest, not -inf); an infinity stays one."""
    data = np.asarray(values, dtype=np.float32)
    limit = np.float32(FINITE_MAX[target])
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(data), np.clip(data, -limit, limit), data).astype(TYPES[target])


def _saturated(values: npt.NDArray[Any], target: str) -> int:
    """How many finite values of ``values`` lie past the target type's largest finite value."""
    data = np.asarray(values, dtype=np.float64)
    return int(np.count_nonzero(np.isfinite(data) & (np.abs(data) > FINITE_MAX[target])))


def _apply(op: str, args: Sequence[npt.NDArray[Any]], node: Any = None) -> npt.NDArray[Any]:
    """``op`` on ``args`` (f32 for an op of the target type: OpenVINO's reference computes a half-precision op in
    float and rounds its result); ``node`` gives a Clamp its bounds."""
    with np.errstate(all="ignore"):
        unary = {"Sqrt": np.sqrt, "Log": np.log, "Tanh": np.tanh, "Abs": np.abs, "Negative": np.negative}
        if op in unary:
            return np.asarray(unary[op](args[0]))
        if op == "Relu":
            return np.asarray(np.maximum(args[0], np.zeros((), args[0].dtype)))
        if op == "Sigmoid":
            one = np.ones((), args[0].dtype)
            return np.asarray(one / (one + np.exp(-args[0])))
        if op == "Clamp":
            bounds = node.get_attributes()
            return np.asarray(np.clip(args[0], np.asarray(bounds["min"], args[0].dtype),
                                      np.asarray(bounds["max"], args[0].dtype)))  # fmt: skip
        if op == "Maximum":
            return np.asarray(np.maximum(args[0], args[1]))
        if op == "Minimum":
            return np.asarray(np.minimum(args[0], args[1]))
        if op == "Power":
            return np.asarray(np.power(args[0], args[1]))
        if op == "Exp":
            return np.asarray(np.exp(args[0]))
        if op == "Multiply":
            return np.asarray(np.multiply(args[0], args[1]))
        if op == "SquaredDifference":
            return np.asarray(np.square(args[0] - args[1]))
        if op == "Divide":
            return np.asarray(np.divide(args[0], args[1]))
        if op == "Add":
            return np.asarray(np.add(args[0], args[1]))
        if op == "Subtract":
            return np.asarray(np.subtract(args[0], args[1]))
    raise ValueError(f"no emulation for {op}")


def computed(op: str, args: Sequence[npt.NDArray[Any]], node: Any = None) -> npt.NDArray[Any]:
    """The chain's ``op`` on ``args`` in their own type (f64 for an exact result): as the emulation computes it."""
    return _apply(op, args, node)


def _stage(what: str, exact: npt.NDArray[np.float64], low: npt.NDArray[Any], seen: npt.NDArray[np.bool_], kept: bool,
           inf_before: npt.NDArray[np.bool_] | None = None) -> tuple[Stage, npt.NDArray[np.bool_]]:  # fmt: skip
    """The stage's figures (those of its elements not in ``seen``, lost before it: an overflow is not counted only
    where ``inf_before`` says the element was inf or NaN before it, where given, for an input flushed to 0 is no inf,
    and a divisor's flush makes one here) and the elements lost up to and including it."""
    low64 = np.asarray(low, dtype=np.float64)
    lost = np.isfinite(exact) & ~np.isfinite(low64)
    flushed, cancelled = _zeros(exact, low)
    before = np.broadcast_to(seen, exact.shape)
    inf = before if inf_before is None else np.broadcast_to(inf_before, exact.shape)
    overflowed, underflowed = int(np.count_nonzero(lost & ~inf)), int(np.count_nonzero(flushed & ~before))
    stage = Stage(
        what, _largest(exact), overflowed, underflowed, kept, cancelled=int(np.count_nonzero(cancelled & ~before))
    )
    return stage, before | lost | flushed | cancelled


# The unit roundoff of each target (half its machine epsilon), and the reductions whose error the bound covers
_UNIT = {"f16": 2.0**-11, "bf16": 2.0**-8}
_BOUNDED = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"})


# The reductions whose result a rounding of each input by a relative amount moves by no more than that amount (of what
# they add): the emulation accumulates exactly, so its error does not grow with the elements reduced, and neither does
# the tolerance it is judged at. A product's grows (each factor's rounding compounds).
_ELEMENTWISE_ERROR = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2"})


def target_tolerances(target: str, input_size: int, output_size: int, reduction: str) -> tuple[float, float]:
    """(atol, rtol) a chain emulated in ``target`` is judged at: the target type's, not grown with the elements each
    output reduces where the rounding of its inputs, which is what the exactly accumulated emulation measures, does not
    grow with them (:data:`_ELEMENTWISE_ERROR`); as ``run``'s (:func:`tolerances`) for a reduction whose error does."""
    size = output_size if reduction in _ELEMENTWISE_ERROR else input_size
    return tolerances(target, None, size, output_size, op=reduction)


def _op_roundoff(op: str | None, inputs: Sequence[npt.NDArray[Any]], largest_in: float, u: float) -> float | None:
    """A bound on the relative error of the op's result in the target type (its inputs rounded, the op
    computed, its result rounded); None where no simple bound holds."""
    if op is None:
        return u
    if op == "Multiply":
        return (1 + u) ** 3 - 1
    if op == "Power" and len(inputs) == 2 and inputs[1].size == 1:
        p = abs(float(np.asarray(inputs[1]).reshape(-1)[0]))
        return (1 + u) ** (p + 1) * (1 + u) - 1 if p <= 8 and float(p).is_integer() else None
    if op == "Exp":
        return math.exp(largest_in * u) * (1 + u) - 1 if largest_in * u < 1 else None
    return None


def bounded(
    reduction: str,
    inputs: Sequence[npt.NDArray[Any]],
    observed: npt.NDArray[Any],
    expected: npt.NDArray[Any],
    axes: npt.NDArray[Any],
    keep_dims: bool,
    target: str,
    *,
    op: str | None = None,
    op_kept: bool = False,
    reduction_kept: bool = False,
    added: npt.NDArray[Any] | None = None,
    operands: Sequence[bool] | None = None,
) -> Emulation | None:
    """The cheap answer, where it is a proven one: when no value of the chain comes near the type's finite
    maximum and the largest error rounding to the type can cause (a forward error bound: every rounding off
    by at most the unit roundoff, or flushed below the smallest normal) is within the target's tolerance
    everywhere, the chain has headroom without being emulated element by element. None otherwise (or for a
    chain the bound does not cover): emulate it. ``observed`` is the reduction's input as the run computed it
    (the op's output), ``expected`` the reference on it. Where every output lies within the absolute tolerance of 0
    (a bound of any size up to them would pass it), the bound is compared relatively, without it (``added``: what an
    Add after the reduction adds to each output, which the outputs are then judged against as well). The input stage's
    largest is that of the data alone, as :func:`emulate` gives it: an input ``operands`` marks (a Constant operand of
    the op: an exponent, a scale) is no value of the chain."""
    if reduction not in _BOUNDED or op_kept or reduction_kept or observed.size == 0:
        return None
    u, limit, tiny = _UNIT[target], FINITE_MAX[target], SMALLEST_NORMAL[target]
    exponent = _integer_exponent(op, inputs)
    high = float(observed.max())  # a pass without a temporary: the cheap part
    # an even power or an exponential is never negative: no second pass for the smallest
    low = 0.0 if op == "Exp" or (exponent is not None and exponent % 2 == 0) else float(observed.min())
    largest = max(high, -low) if math.isfinite(low) and math.isfinite(high) else math.inf
    if op is None:
        largest_in = 0.0
    elif exponent is not None and exponent >= 1:  # |x|^p = |y|: the input's largest follows from the output's
        largest_in = largest ** (1 / exponent) * (1 + 2**-20)
    else:
        largest_in = max(_largest_or_inf(np.asarray(a)) for a in inputs)
    rel = _op_roundoff(op, inputs, largest_in, u)
    if rel is None or largest_in * (1 + u) >= limit or largest * (1 + 2 * rel) >= limit:
        return None
    scales = op == "Multiply" or (exponent is not None and exponent < 0)
    if scales and any(_subnormal(np.asarray(a), tiny) for a in inputs):
        return None  # a subnormal is rounded by up to half a subnormal step, no relative amount, which a product (a
        # factor of 6e4) or a reciprocal scales past any relative bound: emulate it
    exact = np.asarray(expected, dtype=np.float64)
    magnitude = np.abs(exact)
    top = float(magnitude.max()) if magnitude.size else 0.0
    if not math.isfinite(top):
        return None
    count = observed.size // max(exact.size, 1)
    atol, rtol = target_tolerances(target, observed.size, exact.size, reduction)
    if reduction in ("ReduceSum", "ReduceMean"):
        if low >= 0:  # no cancellation: the sum of magnitudes is the result itself
            mass = magnitude
        else:
            total = np.sum(np.abs(observed), axis=tuple(int(a) for a in np.asarray(axes).reshape(-1)),
                           keepdims=keep_dims, dtype=np.float64)  # fmt: skip
            mass = np.asarray(total / max(count, 1) if reduction == "ReduceMean" else total)
        if float(mass.max()) * (1 + 2 * rel) >= limit:
            return None
        # every rounding off by at most u (relative) or flushed below the smallest normal (absolute)
        error = (rel * (1 + 2**-20)) * mass + u * magnitude + (tiny if reduction == "ReduceMean" else tiny * count)
        allowed = atol + rtol * np.maximum(magnitude, mass)  # a sum that cancels is judged against what it adds
    else:
        error = (rel * (1 + 2**-20) + u) * magnitude + tiny
        allowed = atol + rtol * magnitude
    relative = _zeros_pass(magnitude, allowed, atol)
    if relative:  # the absolute tolerance decides nothing: the bound against the outputs (plus what is added) alone
        if added is not None and _flushes(np.asarray(added), target).any():
            return None  # what is added flushes to 0 in the target: it absorbs nothing there, emulate it
        scale = _plus(exact, added)
        if scale is None:
            return None
        allowed = rtol * np.abs(scale) + (allowed - atol - rtol * magnitude)  # (the rest: what a sum adds)
    if np.shape(error) != np.shape(allowed) or not bool((error <= allowed).all()):
        return None
    # what flushes to 0 on the way, counted as the emulation counts it: each element at the first stage that loses it
    lost = [_flushes(np.asarray(a), target) for a in (inputs if op is not None else [observed])]
    shown = largest if op is None else max(_largest(np.asarray(a)) for a in _chain_values(inputs, operands))
    stages = [Stage("input", shown, 0, sum(int(m.sum()) for m in lost))]
    if op is not None:
        flushed = _flushes(observed, target)
        for mask in lost:
            if mask.shape == observed.shape:
                flushed &= ~mask
        # an integer power's largest follows from the data's, as the emulation computes it (exactly, not as captured)
        reached = float(np.power(np.float64(shown), np.float64(exponent))) if exponent is not None and exponent >= 1 \
            else largest  # fmt: skip
        stages.append(Stage(op, reached, 0, int(flushed.sum())))
    stages.append(Stage(reduction, top, 0, int(_flushes(exact, target).sum())))
    return Emulation(None, exact, stages, None, float(np.max(error)) if error.size else 0.0, relative=relative,
                     added=_smallest(added) if relative else None)  # fmt: skip


def _propagated(
    op: str | None,
    inputs: Sequence[npt.NDArray[np.float64]],
    errors: Sequence[npt.NDArray[Any] | None],
    node: Any = None,
) -> npt.NDArray[np.float64] | None:
    """A bound, per element, on the absolute error of the op's output (the input itself where there is no op) that an
    absolute error of at most ``errors[i]`` (per element; None: none) in each input ``i`` causes; None where no simple
    bound holds."""
    magnitude = [np.abs(a) for a in inputs]
    given = [e is not None for e in errors]
    err = [np.zeros(()) if e is None else np.abs(np.asarray(e, dtype=np.float64)) for e in errors]
    with np.errstate(all="ignore"):
        if not any(given):
            return np.zeros(np.shape(computed(op, inputs, node) if op is not None else inputs[0]))
        if op is None or op in ("Abs", "Negative", "Relu", "Clamp", "Tanh"):  # (none moves a value further than it)
            return np.asarray(err[0] + np.zeros(np.shape(inputs[0])))
        if op == "Sigmoid":
            return np.asarray(err[0] / 4 + np.zeros(np.shape(inputs[0])))
        shape = np.broadcast_shapes(*(np.shape(a) for a in inputs))
        if op in ("Add", "Subtract"):  # each operand's error, whatever the sum cancels
            return np.asarray(sum(e for e, g in zip(err, given, strict=True) if g) + np.zeros(shape))
        if op in ("Maximum", "Minimum"):
            return np.asarray(np.maximum(err[0], err[1]) + np.zeros(shape))
        if op == "SquaredDifference":  # (d + e)^2 - d^2, the difference d off by e
            shift = err[0] + err[1]
            return np.asarray(2 * np.abs(inputs[0] - inputs[1]) * shift + shift * shift)
        if op == "Multiply":
            return np.asarray(magnitude[1] * err[0] + magnitude[0] * err[1] + err[0] * err[1] + np.zeros(shape))
        if op == "Divide":
            room = magnitude[1] - err[1]
            quotient = np.abs(np.asarray(computed(op, inputs, node), dtype=np.float64))
            return np.asarray(np.where(room > 0, (err[0] + quotient * err[1]) / room, np.inf))
        if op == "Power":
            exponent = _integer_exponent(op, inputs)
            if exponent is None or given[1] or abs(exponent) > 8:
                return None
            if exponent >= 0:
                return np.asarray((magnitude[0] + err[0]) ** exponent - magnitude[0] ** exponent)
            room = magnitude[0] - err[0]
            return np.asarray(np.where(room > 0, room**exponent - magnitude[0] ** exponent, np.inf))
        if op == "Exp":
            if float(np.max(err[0], initial=0.0)) >= 1:
                return None
            return np.asarray(np.exp(inputs[0]) * np.expm1(err[0]))
    return None


def _prior_error(
    op: str | None, inputs: Sequence[npt.NDArray[np.float64]], rounded: Sequence[bool], u: float, node: Any = None,
    carried: Sequence[npt.NDArray[Any] | None] | None = None,
) -> npt.NDArray[np.float64] | None:  # fmt: skip
    """A bound, per element, on the absolute error of the op's output (the reduction's input where there is no op) that
    the rounding already in each input ``rounded`` marks causes: each off by at most the unit roundoff ``u`` (relative),
    or, where ``carried`` gives it, by what the ops above the chain carry into it (:func:`prior_errors`); None where no
    simple bound holds."""
    errors = [
        None if not r else u * np.abs(a) if carried is None or carried[k] is None else carried[k]
        for k, (a, r) in enumerate(zip(inputs, rounded, strict=True))
    ]
    return _propagated(op, inputs, errors, node)


def prior_errors(chain: Chain, values: Any, captured_in: str) -> list[npt.NDArray[np.float64] | None]:
    """For each input of ``chain`` that an op above it computed (``chain.above``, from the captured ``values``: mark ->
    array), a bound, per element, on the absolute error its captured values carry from a run in ``captured_in`` (of
    unit roundoff u): each value captured from an op not followed off by at most ``u`` of itself (a model's input or
    Constant not at all), carried through the ops above (a Subtract of values near 1000 that bf16 rounded by up to 2 is
    off by up to 4, whatever the difference), and each of their results rounded once more; infinite where no bound
    holds (an op the bound does not cover). None for an input no op above computed."""
    u = _UNIT[captured_in]
    by_output = {above.output: above for above in chain.above}
    found: dict[int, npt.NDArray[np.float64]] = {}

    def error(mark: int) -> npt.NDArray[np.float64]:
        if mark in found:
            return found[mark]
        above = by_output[mark]
        out = np.asarray(values(mark), dtype=np.float64)
        found[mark] = np.full(out.shape, np.inf)  # (a cycle through state: no bound)
        args: list[npt.NDArray[Any]] = []
        errors: list[npt.NDArray[Any] | None] = []
        for k, (index, unrounded) in enumerate(zip(above.inputs, above.unrounded, strict=True)):
            raw = np.asarray(index if not isinstance(index, int) else values(index))
            if not above.carried(k):
                args.append(raw)
                continue
            args.append(np.asarray(raw, dtype=np.float64))
            errors.append(None if not isinstance(index, int) else error(index) if index in by_output
                          else None if unrounded else u * np.abs(np.asarray(raw, dtype=np.float64)))  # fmt: skip
        kind = above.node.get_type_name()
        got: npt.NDArray[Any] | None
        if above.moves:  # what it moves, each error with its value
            moved = [e if e is not None else np.zeros(np.shape(a)) for e, a in
                     zip(errors, [a for k, a in enumerate(args) if above.carried(k)], strict=True)]  # fmt: skip
            it = iter(moved)
            try:
                got = _moved(above, [next(it) if above.carried(k) else a for k, a in enumerate(args)], out.shape)
            except Exception:  # (an op OpenVINO does not evaluate: no bound)
                got = None
        else:
            got = _propagated(kind, args, errors, above.node) if kind in EMULATED else None
            if got is not None and not above.kept:  # its own result rounded once more in the run
                got = got + u * np.abs(out)
        bound = np.full(out.shape, np.inf) if got is None else np.asarray(got, dtype=np.float64)
        if bound.shape != out.shape:
            try:
                bound = np.broadcast_to(bound, out.shape)
            except ValueError:
                bound = np.full(out.shape, np.inf)
        found[mark] = bound
        return bound

    return [error(mark) if mark is not None and mark in by_output else None for mark in chain.entry]


def covers_prior_rounding(
    emu: Emulation, reduction: str, inputs: Sequence[npt.NDArray[Any]], rounded: Sequence[bool], axes: npt.NDArray[Any],
    keep_dims: bool, target: str, captured_in: str, op: str | None = None, node: Any = None,
    carried: Sequence[npt.NDArray[Any] | None] | None = None,
) -> bool:  # fmt: skip
    """Whether the emulation's result stays within its tolerance, and within the target's range, with the error added
    that the rounding to ``captured_in`` its inputs ``rounded`` marks carry already (captured from a run in that type,
    which the emulation, rounding them again, does not see) could cause: a bound per element from
    :func:`_prior_error` (``carried``: for each input an op above the chain computed, what the ops above carry into it,
    :func:`prior_errors`), added up as the reduction adds (a sum's or mean's, a max's or min's largest). False where no
    such bound holds (another reduction, another op), the comparison already fails, or it is judged relatively."""
    c = emu.comparison
    if emu.result is None or c is None or not c.ok or emu.relative or reduction not in _BOUNDED:
        return False
    exact_in = [np.asarray(a, dtype=np.float64) for a in inputs]
    per_element = _prior_error(op, exact_in, rounded, _UNIT[captured_in], node, carried)
    if per_element is None:
        return False
    values = np.abs(np.asarray(exact_in[0] if op is None else computed(op, exact_in, node), dtype=np.float64))
    dims = tuple(int(a) for a in np.asarray(axes).reshape(-1))
    sums = reduction in ("ReduceSum", "ReduceMean")
    with np.errstate(all="ignore"):
        limit = FINITE_MAX[target]  # (a value past it already is a saturated Constant's, judged by the emulation)
        if bool(np.any((values < limit) & (values + per_element >= limit))):
            return False  # the rounding already in the inputs may reach the type's maximum
        count = max(values.size // max(np.size(emu.expected), 1), 1) if reduction == "ReduceMean" else 1
        pick = np.sum if sums else np.max
        spread = np.asarray(pick(per_element, axis=dims, keepdims=keep_dims)) / count
        mass = np.asarray(np.sum(values, axis=dims, keepdims=keep_dims)) / count if sums else 0.0
        expected = np.asarray(emu.expected, dtype=np.float64)
        error = np.abs(np.asarray(emu.result, dtype=np.float64) - expected) + spread * (1 + 2**-20)
        allowed = c.atol + c.rtol * np.maximum(np.abs(expected), mass)
    if np.shape(error) != np.shape(allowed):
        return False
    judged = np.isfinite(expected) if emu.undefined is None else np.isfinite(expected) & ~emu.undefined
    return bool(np.all(error[judged] <= allowed[judged]))


def _zeros_pass(magnitude: npt.NDArray[Any], allowed: npt.NDArray[Any], atol: float) -> bool:
    """Whether a result of zeros passes the tolerance ``allowed`` (per output, its absolute part ``atol``) only by that
    absolute part: every output (``magnitude``: the reference's, f64) lies within it of 0, and not every one within
    the rest. The tolerance then decides nothing: no result the target gives, all zeros included, can fail it."""
    finite = np.isfinite(magnitude)
    if atol <= 0 or not finite.any():
        return False
    room = np.broadcast_to(np.asarray(allowed, dtype=np.float64), magnitude.shape)
    return bool((magnitude[finite] <= room[finite]).all()) and bool((magnitude[finite] > room[finite] - atol).any())


def _plus(values: npt.NDArray[Any], added: npt.NDArray[Any] | None) -> npt.NDArray[np.float64] | None:
    """``values + added`` in f64, broadcast as the Add broadcasts them (``added`` None: ``values``); None where they do
    not broadcast."""
    exact = np.asarray(values, dtype=np.float64)
    if added is None:
        return exact
    try:
        return np.asarray(exact + np.asarray(added, dtype=np.float64))
    except ValueError:
        return None


def _smallest(added: npt.NDArray[Any] | None) -> float | None:
    return None if added is None or np.size(added) == 0 else float(np.min(np.abs(np.asarray(added, np.float64))))


def _subnormal(values: npt.NDArray[Any], tiny: float) -> bool:
    """Whether some value of ``values`` is not 0 and below the smallest normal ``tiny`` of the target type."""
    magnitude = np.abs(values)
    return bool(np.any((magnitude < tiny) & (magnitude > 0)))


def _flushes(values: npt.NDArray[Any], target: str) -> npt.NDArray[np.bool_]:
    """The elements of ``values`` that are not 0 and round to 0 in ``target`` (:data:`_FLUSHES_BELOW`: f16 rounds half
    its smallest subnormal to 0, the CPU's bf16 conversion flushes every f32 value below bf16's smallest normal)."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    if target == "bf16":
        with np.errstate(over="ignore", under="ignore"):
            return (magnitude > 0) & (magnitude.astype(np.float32) < np.float32(_FLUSHES_BELOW[target]))
    return (magnitude > 0) & (magnitude <= _FLUSHES_BELOW[target])


def _integer_exponent(op: str | None, inputs: Sequence[npt.NDArray[Any]]) -> int | None:
    """Power's exponent where it is one integer (x^2...), else None."""
    if op != "Power" or len(inputs) != 2 or np.size(inputs[1]) != 1:
        return None
    p = float(np.asarray(inputs[1]).reshape(-1)[0])
    return int(p) if p.is_integer() else None


def _largest_or_inf(values: npt.NDArray[Any]) -> float:
    """The largest magnitude, inf where any value is not finite (the bound does not apply)."""
    if values.size == 0:
        return 0.0
    top = float(np.max(np.abs(values)))
    return top if math.isfinite(top) else math.inf


def _chain_values(inputs: Sequence[Any], operands: Sequence[bool] | None) -> list[Any]:
    """The inputs that are values of the chain: all but those ``operands`` marks (a Constant operand of the op: an
    exponent, a scale, an eps), unless it marks them all."""
    values = [a for a, fixed in zip(inputs, operands or [False] * len(inputs), strict=True) if not fixed]
    return values or list(inputs)


def emulate(
    reduction: str,
    data_or_inputs: Sequence[npt.NDArray[Any]],
    axes: npt.NDArray[Any],
    keep_dims: bool,
    target: str,
    *,
    op: str | None = None,
    op_kept: bool = False,
    reduction_kept: bool = False,
    sources_kept: Sequence[bool] | None = None,
    constants: Sequence[bool] | None = None,
    arrived: Sequence[npt.NDArray[Any] | None] | None = None,
    added: npt.NDArray[Any] | None = None,
    operands: Sequence[bool] | None = None,
    sources_inside: Sequence[bool] | None = None,
    op_inside: bool = False,
) -> Emulation:
    """The chain ``op`` (None: none) then ``reduction`` over ``axes`` emulated in ``target`` (``f16`` or
    ``bf16``) on ``data_or_inputs`` (the op's inputs, or the reduction's data alone), element by element,
    against the f64 reference of the same chain. An op or reduction OpenVINO keeps in its original precision
    (``*_kept``) is computed in f32; it receives an input in f32 only where ``sources_kept`` says the input arrives
    so (all, when not given), and rounded to the target where an op running in the target computed it. An input that
    ``constants`` marks is a Constant of the model, converted as OpenVINO converts one (:func:`_converted_constant`).
    An input ``arrived`` gives is received as the ops above the chain, emulated, deliver it (:func:`arrive`), not
    rounded from its values: what it lost above (inf, NaN) is counted there, not here. Where every output lies within
    the target's absolute tolerance of 0 (a result of zeros would pass it), the result is judged without it, relative
    to the outputs, or to the outputs plus ``added`` (what an Add after the reduction adds to each: an RMSNorm's eps),
    and the outputs that flush to 0 are counted (:attr:`Emulation.relative`, :attr:`Emulation.flushed`). An input
    ``operands`` marks (a Constant operand of the op: an exponent, a scale, an eps) is converted and counted, but is
    no value of the chain: the input stage's largest is the data's alone. An input ``sources_inside`` marks is computed
    inside the kernel that computes the chain's first op (in f32, never stored in the target: a snippets Subgraph's
    op, a CPU's MVN): it arrives unrounded, whatever that op runs in; ``op_inside``: the op is computed inside the
    reduction's kernel, which receives it unrounded."""
    exact_in = [np.asarray(a, dtype=np.float64) for a in data_or_inputs]
    first_kept = op_kept if op is not None else reduction_kept
    within = list(sources_inside or [False] * len(exact_in))
    unrounded = [(first_kept and kept) or inner
                 for kept, inner in zip(sources_kept or [True] * len(exact_in), within, strict=True)]  # fmt: skip
    constant = list(constants or [False] * len(exact_in))
    low_in = [np.asarray(a, dtype=np.float32) if kept else _converted_constant(a, target) if fixed
              else _rounded(a, target, False)
              for a, kept, fixed in zip(data_or_inputs, unrounded, constant, strict=True)]  # fmt: skip
    saturated = sum(_saturated(a, target) for a, kept, fixed in zip(exact_in, unrounded, constant, strict=True)
                    if fixed and not kept)  # fmt: skip
    given = list(arrived or [None] * len(exact_in))
    low_in = [low if got is None else _rounded(got, target, kept)
              for low, got, kept in zip(low_in, given, unrounded, strict=True)]  # fmt: skip
    entry = Stage("input", 0.0, kept=all(unrounded))
    masks, gone = [], []
    values = {id(a) for a in _chain_values(exact_in, operands)}
    for exact, low, kept, got in zip(exact_in, low_in, unrounded, given, strict=True):
        before = np.zeros((), dtype=bool) if got is None else ~np.isfinite(np.asarray(got, dtype=np.float64))
        # what arrives as 0 from the ops above was counted where it became 0 there
        arrived_zero = np.zeros((), dtype=bool) if got is None else (np.asarray(got, dtype=np.float64) == 0)
        stage, mask = _stage("input", exact, low, before | arrived_zero, kept, before)
        entry.largest = max(entry.largest, stage.largest) if id(exact) in values else entry.largest
        entry.overflowed += stage.overflowed
        entry.underflowed = (entry.underflowed or 0) + (stage.underflowed or 0)
        entry.cancelled += stage.cancelled
        masks.append(mask)
        # what is inf or NaN already: an input flushed to 0 is not, and what the op makes of it (x / 0) is the op's
        gone.append(before | (np.isfinite(exact) & ~np.isfinite(np.asarray(low, dtype=np.float64))))
    stages = [entry]
    if op is not None:
        exact_data = np.asarray(_apply(op, exact_in), dtype=np.float64)
        low_data = _rounded(_apply(op, [a.astype(np.float32) for a in low_in]), target, op_kept)
        seen = np.zeros(exact_data.shape, dtype=bool)
        lost = np.zeros(exact_data.shape, dtype=bool)
        for mask, inf in zip(masks, gone, strict=True):  # what the inputs lost already is not the op's
            try:
                seen = seen | np.broadcast_to(mask, exact_data.shape)
                lost = lost | np.broadcast_to(inf, exact_data.shape)
            except ValueError:
                continue
        stage, seen = _stage(op, exact_data, low_data, seen, op_kept, lost)
        stages.append(stage)
        # the reduction receives it in its own precision (unrounded from inside its own kernel)
        low_data = _rounded(low_data, target, reduction_kept or op_inside)
        # what a kept op's f32 output loses on its way into a reduction in the target type counts as the reduction's
        entering, _ = _stage(reduction, exact_data, low_data, seen, reduction_kept)
    else:
        exact_data, low_data = exact_in[0], low_in[0]
        entering = Stage(reduction, 0.0)
    expected, _ = reduce_with_notes(reduction, exact_data, axes, keep_dims)
    expected = np.asarray(expected, dtype=np.float64)
    accumulated, _ = reduce_with_notes(reduction, np.asarray(low_data, dtype=np.float64), axes, keep_dims)
    result = _rounded(np.asarray(accumulated, dtype=np.float64), target, reduction_kept)
    # what reached the reduction already lost shows in its result, but is not the reduction's
    inherited = ~np.isfinite(np.asarray(accumulated, dtype=np.float64))
    # an element the specification leaves undefined (a ReduceMax over nothing) reaches no value: none is judged
    undefined = undefined_elements(reduction, np.shape(exact_data), axes, keep_dims)
    defined = expected if undefined is None else np.where(undefined, np.nan, expected)
    stage, _ = _stage(reduction, defined, result, inherited, reduction_kept)
    stage.overflowed += entering.overflowed
    stage.underflowed = (stage.underflowed or 0) + (entering.underflowed or 0)
    stage.cancelled += entering.cancelled
    stages.append(stage)
    atol, rtol = target_tolerances(target, int(np.asarray(low_data).size), int(expected.size), reduction)
    # A sum that cancels is judged against what it adds (as run judges one): its inputs' rounding alone errs so much.
    # What it adds as the target holds it: a term that flushes to 0 is lost whole, which no rounding allowance covers.
    mass = reductions()[reduction].rounding_mass(np.asarray(low_data, dtype=np.float64), np.asarray(axes), keep_dims)
    # all it is allowed: rtol times what it adds, of which rtol times the outputs is the comparison's already (a sum of
    # terms of one sign adds no more than it holds: its tolerance is no wider than the type's rtol)
    with np.errstate(invalid="ignore"):
        excess = None if mass is None else np.maximum(np.asarray(mass, np.float64) - np.abs(expected), 0.0)
    # An output past the type's range that holds its largest where Constants saturated to it (a fully masked row's
    # max, of float32's lowest) is that conversion's, by design: no error of the reduction's to judge.
    low64 = np.asarray(result, dtype=np.float64)
    clamped = (np.abs(expected) > FINITE_MAX[target]) & np.isfinite(expected) & (np.abs(low64) == FINITE_MAX[target])
    clamped = clamped if saturated else np.zeros_like(clamped)
    judged_out = clamped if undefined is None else (clamped | undefined)
    comparison = compare(expected, low64, reference_name="f64 reference",
                         candidate_name=f"{target} emulation", atol=atol, rtol=rtol, exact=False,
                         allowance=None if excess is None else rtol * excess,
                         undefined=judged_out if judged_out.any() else undefined)  # fmt: skip
    allowance = None if excess is None else rtol * np.broadcast_to(excess, expected.shape)
    magnitude = np.where(judged_out, np.nan, np.abs(expected)) if judged_out.any() else np.abs(expected)
    relative = _zeros_pass(magnitude, atol + rtol * magnitude + (0.0 if allowance is None else allowance), atol)
    # what is added as the Add adds it in the target: its Constant converted (an eps its own rounding moves is judged at
    # that value on both sides; one the target flushes to 0 adds nothing there, against the exact one in the reference)
    held = None if added is None else np.asarray(np.asarray(added, np.float32) if reduction_kept
                                                 else _converted_constant(added, target), np.float64)  # fmt: skip
    dropped = None if held is None else (held == 0) & (np.asarray(added, np.float64) != 0)
    reference_added = None if added is None or held is None or dropped is None else np.where(dropped, added, held)
    scale = _plus(expected, reference_added) if relative else None
    if relative and scale is None:  # what is added does not broadcast to the outputs: judged against them alone
        added, held, scale = None, None, expected
    flushed, cancelled_out, lost_largest = 0, 0, None
    if relative and scale is not None:  # the absolute tolerance decides nothing: judged against the outputs (plus it)
        lost = (expected != 0) & np.isfinite(expected) & (low64 == 0) & ~judged_out
        shifted = low64 if held is None else low64 + held
        if held is not None and np.shape(shifted) == np.shape(lost):  # a sum the target holds as 0 where the exact one
            # is not (an eps flushed with the mean)
            lost = lost | ((np.asarray(shifted) == 0) & (scale != 0) & np.isfinite(scale) & ~judged_out)
        # an output is lost to an underflow where a value it reduces flushed to 0 or its exact value lies below what
        # the type holds; else to a cancellation (of its terms, or of a difference above them: values the target
        # holds equal), its exact value no underflow
        underflowed_in, _ = _zeros(np.asarray(exact_data, np.float64), low_data)
        dims = tuple(int(a) for a in np.asarray(axes).reshape(-1))
        tiny = _SMALLEST_HELD.get(np.dtype(TYPES[target]).name, 0.0)
        try:
            flushing = np.broadcast_to(np.any(underflowed_in, axis=dims, keepdims=keep_dims), lost.shape)
            flushing = flushing | (np.abs(np.broadcast_to(np.asarray(scale, np.float64), lost.shape)) < tiny)
        except ValueError:  # (what does not reduce to the outputs' shape: all counted as flushed)
            flushing = np.ones(lost.shape, dtype=bool)
        flushed = int(np.count_nonzero(lost & flushing))
        cancelled_out = int(np.count_nonzero(lost & ~flushing))
        reached = np.asarray(scale, np.float64)
        if lost.any() and reached.shape == lost.shape:
            lost_largest = float(np.max(np.abs(reached[lost])))
        comparison = compare(scale, shifted, reference_name="f64 reference",
                             candidate_name=f"{target} emulation", atol=0.0, rtol=rtol, exact=False,
                             allowance=allowance, undefined=judged_out if judged_out.any() else undefined)  # fmt: skip
    return Emulation(result, expected, stages, comparison, undefined=undefined, saturated=saturated,
                     clamped=int(np.count_nonzero(clamped)), relative=relative and scale is not None,
                     flushed=flushed, cancelled=cancelled_out, lost_largest=lost_largest,
                     added=_smallest(added) if scale is not None and relative else None,
                     added_flushes=bool(relative and held is not None and dropped is not None and dropped.any()),
                     )  # fmt: skip


def headroom_factor(largest: float, target: str) -> float | None:
    """How many times the largest magnitude fits below the type's finite maximum (None: nothing to scale)."""
    if largest <= 0 or not math.isfinite(largest):
        return None
    return FINITE_MAX[target] / largest


# The reductions and ops a chain can be rebuilt from on a device (opset13's builders): every op a chain can hold
_BUILDERS = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max",
             "ReduceMin": "reduce_min", "ReduceProd": "reduce_prod", "ReduceL1": "reduce_l1",
             "ReduceL2": "reduce_l2", "Power": "power", "Exp": "exp", "Multiply": "multiply",
             "SquaredDifference": "squared_difference", "Divide": "divide", "Add": "add",
             "Subtract": "subtract"}  # fmt: skip
assert set(RANGE_OPS) <= set(_BUILDERS), "a chain's op that cannot be rebuilt on a device"
# op, inputs, reduction, axes, keep_dims, and which inputs are Constants of the model (None: none)
ChainSpec = tuple[str | None, Sequence[npt.NDArray[Any]], str, npt.NDArray[Any], bool, Sequence[bool] | None]


def run_on_device(
    chains: Sequence[ChainSpec | None], device: str, target: str
) -> tuple[list[npt.NDArray[np.float64] | None], list[str | None]]:
    """Each chain (its op's inputs, the op, the reduction over its axes) rebuilt as a graph of the target type
    on the captured inputs rounded to it (an input that is a Constant of the model converted as OpenVINO converts one,
    a finite value past the type's largest saturating to it: :func:`_converted_constant`), all in one model compiled
    once for ``device`` at ``target`` and run once: the device's own result of each chain (None where a chain cannot
    be rebuilt), and what its execution graph runs each reduction in. Raises whatever OpenVINO raises."""
    import openvino as ov
    from openvino import opset13 as ops

    from ovreduce.backends.openvino import compile_model, runtime_precisions

    etype = {"f16": ov.Type.f16, "bf16": ov.Type.bf16}[target]
    params: list[Any] = []
    feeds: list[Any] = []
    outputs: list[Any] = []
    slots: list[int | None] = []
    for k, spec in enumerate(chains):
        if spec is None or spec[2] not in _BUILDERS or (spec[0] is not None and spec[0] not in _BUILDERS):
            slots.append(None)
            continue
        op, inputs, reduction, axes, keep_dims, constants = spec
        sources = []
        for array, constant in zip(inputs, constants or [False] * len(inputs), strict=True):
            param = ops.parameter(list(np.shape(array)), etype)
            params.append(param)
            feeds.append(_tensor_of(ov, np.asarray(array), etype, target, constant))
            sources.append(param)
        node = sources[0] if op is None else getattr(ops, _BUILDERS[op])(*sources)
        axes_node = ops.constant(np.asarray(axes, dtype=np.int64))
        reduced = getattr(ops, _BUILDERS[reduction])(node, axes_node, keep_dims)
        reduced.set_friendly_name(f"ovreduce_chain_{k}")
        slots.append(len(outputs))
        outputs.append(reduced)
    if not outputs:
        return [None] * len(chains), [None] * len(chains)
    compiled = compile_model(ov.Model(outputs, params, "ovreduce_chains"), device, target)
    request = compiled.create_infer_request()
    request.infer(feeds)
    executes = runtime_precisions(compiled)
    results: list[npt.NDArray[np.float64] | None] = []
    precisions: list[str | None] = []
    for k, slot in enumerate(slots):
        if slot is None:
            results.append(None)
            precisions.append(None)
            continue
        tensor = request.get_output_tensor(slot)
        data = np.array(tensor.data)
        if tensor.element_type == etype:
            data = data.view(np.uint16).view(TYPES[target])
        results.append(data.astype(np.float64))
        precisions.append(executes.get(f"ovreduce_chain_{k}"))
    return results, precisions


def _constant(node: Any) -> npt.NDArray[Any]:
    """A copy of a Constant's values (an f8 one's as f8, not its codes)."""
    from ovreduce.backends.openvino import constant_data

    return constant_data(node)


def _tensor_of(ov: Any, values: npt.NDArray[Any], etype: Any, target: str, constant: bool = False) -> Any:
    """``values`` rounded to the target type (round to nearest even) as an OpenVINO tensor of that type; a Constant's
    values as OpenVINO converts a model's constant (:func:`_converted_constant`)."""
    tensor = ov.Tensor(etype, ov.Shape(list(values.shape)))
    with np.errstate(over="ignore"):  # (what a kernel stored: a bf16 one holds no subnormal)
        rounded = _converted_constant(values, target) if constant else _rounded(values, target, False)
    bits = np.ascontiguousarray(rounded).view(np.uint16)
    np.copyto(np.asarray(tensor.data).view(np.uint16).reshape(values.shape), bits)
    return tensor
