"""Precision headroom: would each reduction of a model survive a device that runs it in f16 or bf16?

Intel GPUs and NPUs run models in f16 and CPUs with AMX in bf16. A reduction breaks there when the op feeding
it changes the range (RMSNorm's ``Power(x, 2)``: one activation of magnitude 256 squares past f16's 65504),
or when its own result does. ``ovreduce audit --target f16|bf16`` answers it for each reduction of the model
from the values the audit captured:

**The chain.** A reduction and, where its data input comes straight from one, the elementwise op that
changes the range (``Power``, ``Exp``, ``Multiply``, ``SquaredDifference``, ``Divide``, ``Add``, ``Subtract``):
that op's inputs are captured too. Anything further up arrives as captured (rounded to the target type on the way
in: a value an op further up reaches past the type's maximum overflows there); a Constant's values arrive as OpenVINO
converts a model's constants, a finite value past the type's maximum saturating to it.

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
type; the reduction accumulates its rounded input exactly and rounds its result. Against the f64 reference of
the same chain on the same captured inputs it gives, per reduction: the largest magnitude each stage reaches
(in f64) against the type's finite maximum (the headroom factor), the elements that overflow to inf and those
that underflow to 0, and the error of the result judged by the target type's tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.compare import Comparison, compare, tolerances
from ovreduce.ops.registry import reductions
from ovreduce.reference.evaluate import reduce_with_notes, undefined_elements

__all__ = [
    "FINITE_MAX",
    "RANGE_OPS",
    "TARGETS",
    "Chain",
    "Emulation",
    "Stage",
    "as_executed",
    "bounded",
    "chain_of",
    "emulate",
    "kept_in_original_precision",
    "run_on_device",
]

TARGETS = ("f16", "bf16")
TYPES: Mapping[str, Any] = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
FINITE_MAX: Mapping[str, float] = {"f16": 65504.0, "bf16": (2 - 2**-7) * 2.0**127}  # as ml_dtypes.finfo says
SMALLEST_NORMAL: Mapping[str, float] = {"f16": 2.0**-14, "bf16": 2.0**-126}
_FLUSHES_BELOW: Mapping[str, float] = {"f16": 2.0**-25, "bf16": 2.0**-134}  # half the smallest subnormal: rounds to 0
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


def kept_in_original_precision(node: Any) -> bool:
    """Whether OpenVINO keeps ``node`` out of f16/bf16 compression (its rt_info carries the mark)."""
    try:
        info = node.get_rt_info()
        return len(info) > 0 and any(key in info for key in _KEEP_KEYS)  # listing the keys costs 20x more
    except Exception:  # a node without rt_info
        return False


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

    @property
    def protected(self) -> bool:
        return self.reduction_kept and (self.op is None or self.op_kept)


def as_executed(chain: Chain, reduction: Any, executes: Mapping[str, str], target: str) -> Chain:
    """``chain`` as the device's execution graph of the model in ``target`` (node name -> precision) runs it, over
    the marks: what it runs in f32 is kept in f32 as a mark keeps it (a CPU running a model in bf16 keeps some ops in
    f32 unmarked: those after the graph's last MatMul or convolution, for one), and what it runs in the target is
    not kept, marked or not (a CPU fuses a marked RMSNorm into one kernel and runs that in bf16). A node the graph
    does not name keeps its mark."""

    def kept_as(node: Any, marked: bool) -> bool:
        runs = executes.get(node.get_friendly_name())
        return True if runs == "f32" else False if runs == target else marked

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
            chain.sources.append(np.array(source.get_node().get_data(), copy=True))
        else:
            chain.sources.append(len(marks))
            marks.append(source)
    return chain


@dataclass
class Stage:
    """One stage of the emulated chain: the largest magnitude it reaches in f64, and how many of its elements
    overflow to inf (or turn NaN) and underflow to 0 in the target type for the first time there."""

    what: str  # "input", the op's type, the reduction's type
    largest: float
    overflowed: int = 0
    underflowed: int | None = 0  # None: not counted (a bound covers them)
    kept: bool = False  # computed in f32: OpenVINO keeps this op in its original precision


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
    """``values`` rounded to the target type, or to f32 where OpenVINO keeps the op in its precision."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.asarray(values, dtype=np.float32).astype(np.float32 if kept else TYPES[target])


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


def _apply(op: str, args: Sequence[npt.NDArray[Any]]) -> npt.NDArray[Any]:
    with np.errstate(all="ignore"):
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


def _stage(what: str, exact: npt.NDArray[np.float64], low: npt.NDArray[Any], seen: npt.NDArray[np.bool_],
           kept: bool) -> tuple[Stage, npt.NDArray[np.bool_]]:  # fmt: skip
    """The stage's figures (those of its elements not in ``seen``, lost before it) and the elements lost up
    to and including it."""
    low64 = np.asarray(low, dtype=np.float64)
    lost = np.isfinite(exact) & ~np.isfinite(low64)
    flushed = (exact != 0) & np.isfinite(exact) & (low64 == 0)
    before = np.broadcast_to(seen, exact.shape)
    overflowed, underflowed = int(np.count_nonzero(lost & ~before)), int(np.count_nonzero(flushed & ~before))
    stage = Stage(what, _largest(exact), overflowed, underflowed, kept)
    return stage, before | lost | flushed


# The unit roundoff of each target (half its machine epsilon), and the reductions whose error the bound covers
_UNIT = {"f16": 2.0**-11, "bf16": 2.0**-8}
_BOUNDED = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"})


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
) -> Emulation | None:
    """The cheap answer, where it is a proven one: when no value of the chain comes near the type's finite
    maximum and the largest error rounding to the type can cause (a forward error bound: every rounding off
    by at most the unit roundoff, or flushed below the smallest normal) is within the target's tolerance
    everywhere, the chain has headroom without being emulated element by element. None otherwise (or for a
    chain the bound does not cover): emulate it. ``observed`` is the reduction's input as the run computed it
    (the op's output), ``expected`` the reference on it."""
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
    atol, rtol = tolerances(target, None, observed.size, exact.size, op=reduction)
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
        allowed = atol + rtol * (magnitude + mass)  # a sum that cancels is judged against what it adds, as in run
    else:
        error = (rel * (1 + 2**-20) + u) * magnitude + tiny
        allowed = atol + rtol * magnitude
    if np.shape(error) != exact.shape or not bool((error <= allowed).all()):
        return None
    # what flushes to 0 on the way, counted as the emulation counts it: each element at the first stage that loses it
    lost = [_flushes(np.asarray(a), target) for a in (inputs if op is not None else [observed])]
    stages = [Stage("input", largest_in if op is not None else largest, 0, sum(int(m.sum()) for m in lost))]
    if op is not None:
        flushed = _flushes(observed, target)
        for mask in lost:
            if mask.shape == observed.shape:
                flushed &= ~mask
        stages.append(Stage(op, largest, 0, int(flushed.sum())))
    stages.append(Stage(reduction, top, 0, int(_flushes(exact, target).sum())))
    return Emulation(None, exact, stages, None, float(np.max(error)) if error.size else 0.0)


def _subnormal(values: npt.NDArray[Any], tiny: float) -> bool:
    """Whether some value of ``values`` is not 0 and below the smallest normal ``tiny`` of the target type."""
    magnitude = np.abs(values)
    return bool(np.any((magnitude < tiny) & (magnitude > 0)))


def _flushes(values: npt.NDArray[Any], target: str) -> npt.NDArray[np.bool_]:
    """The elements of ``values`` that are not 0 and round to 0 in ``target``."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
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
) -> Emulation:
    """The chain ``op`` (None: none) then ``reduction`` over ``axes`` emulated in ``target`` (``f16`` or
    ``bf16``) on ``data_or_inputs`` (the op's inputs, or the reduction's data alone), element by element,
    against the f64 reference of the same chain. An op or reduction OpenVINO keeps in its original precision
    (``*_kept``) is computed in f32; it receives an input in f32 only where ``sources_kept`` says the input arrives
    so (all, when not given), and rounded to the target where an op running in the target computed it. An input that
    ``constants`` marks is a Constant of the model, converted as OpenVINO converts one (:func:`_converted_constant`)."""
    exact_in = [np.asarray(a, dtype=np.float64) for a in data_or_inputs]
    first_kept = op_kept if op is not None else reduction_kept
    unrounded = [first_kept and kept for kept in (sources_kept or [True] * len(exact_in))]
    constant = list(constants or [False] * len(exact_in))
    low_in = [np.asarray(a, dtype=np.float32) if kept else _converted_constant(a, target) if fixed
              else _rounded(a, target, False)
              for a, kept, fixed in zip(data_or_inputs, unrounded, constant, strict=True)]  # fmt: skip
    saturated = sum(_saturated(a, target) for a, kept, fixed in zip(exact_in, unrounded, constant, strict=True)
                    if fixed and not kept)  # fmt: skip
    entry = Stage("input", 0.0, kept=all(unrounded))
    masks = []
    for exact, low, kept in zip(exact_in, low_in, unrounded, strict=True):
        stage, mask = _stage("input", exact, low, np.zeros((), dtype=bool), kept)
        entry.largest = max(entry.largest, stage.largest)
        entry.overflowed += stage.overflowed
        entry.underflowed = (entry.underflowed or 0) + (stage.underflowed or 0)
        masks.append(mask)
    stages = [entry]
    if op is not None:
        exact_data = np.asarray(_apply(op, exact_in), dtype=np.float64)
        low_data = _rounded(_apply(op, [a.astype(np.float32) for a in low_in]), target, op_kept)
        seen = np.zeros(exact_data.shape, dtype=bool)
        for mask in masks:  # what the inputs lost already is not the op's
            try:
                seen = seen | np.broadcast_to(mask, exact_data.shape)
            except ValueError:
                continue
        stage, seen = _stage(op, exact_data, low_data, seen, op_kept)
        stages.append(stage)
        low_data = _rounded(low_data, target, reduction_kept)  # the reduction receives it in its own precision
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
    stages.append(stage)
    atol, rtol = tolerances(target, None, int(np.asarray(low_data).size), int(expected.size), op=reduction)
    # A sum that cancels is judged against what it adds (as run judges one): its inputs' rounding alone errs so much.
    # What it adds as the target holds it: a term that flushes to 0 is lost whole, which no rounding allowance covers.
    mass = reductions()[reduction].rounding_mass(np.asarray(low_data, dtype=np.float64), np.asarray(axes), keep_dims)
    comparison = compare(expected, np.asarray(result, dtype=np.float64), reference_name="f64 reference",
                         candidate_name=f"{target} emulation", atol=atol, rtol=rtol, exact=False,
                         allowance=None if mass is None else rtol * mass, undefined=undefined)  # fmt: skip
    return Emulation(result, expected, stages, comparison, undefined=undefined, saturated=saturated)


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


def _tensor_of(ov: Any, values: npt.NDArray[Any], etype: Any, target: str, constant: bool = False) -> Any:
    """``values`` rounded to the target type (round to nearest even) as an OpenVINO tensor of that type; a Constant's
    values as OpenVINO converts a model's constant (:func:`_converted_constant`)."""
    tensor = ov.Tensor(etype, ov.Shape(list(values.shape)))
    with np.errstate(over="ignore"):
        rounded = (_converted_constant(values, target) if constant
                   else np.asarray(values, dtype=np.float32).astype(TYPES[target]))  # fmt: skip
    bits = np.ascontiguousarray(rounded).view(np.uint16)
    np.copyto(np.asarray(tensor.data).view(np.uint16).reshape(values.shape), bits)
    return tensor
