"""OpenVINO's activations scaling, as a model's ``<rt_info><runtime_options>`` asks it (``ACTIVATIONS_SCALE_FACTOR``).

optimum-intel writes ``ACTIVATIONS_SCALE_FACTOR`` 8.0 into every text-generation export. A GPU's f16 compile (on GPUs
without systolic arrays; the CPU has no such property) applies it with ``ov::pass::activations_scaling``
(``src/common/transformations/.../activations_scaling.cpp`` and the GPU plugin's transformations pipeline):
``ScaleDownSingleLayer`` multiplies the data input of every ``MatMul`` and ``Convolution`` by ``1/factor`` (and a
per-channel or scalar bias Add's constant), puts a ``Multiply`` by ``factor`` after it, and the low-precision passes
move that Multiply down as they move a dequantization's, through the ops a scalar multiply commutes with (data
movement, Add, Subtract, Concat, a Multiply by a Constant, the reductions ReduceSum/Mean/Max/Min), until a
normalization (MVN, RMS, GroupNormalization: fused beforehand) drops it, ``Norm(x * c) = Norm(x)``. Where it cannot
move further (an Exp, a Power that is not a fused norm's) it multiplies the values back before that op.

So the values between a MatMul or Convolution and the next normalization are the model's divided by ``factor``;
elsewhere they are as they are. :func:`basis` says which holds for a reduction's chain, as far as it can follow the
passes from the model's graph (OpenVINO nodes), and why not where it cannot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ovreduce.ir.model import RtInfo

__all__ = ["SCALE_FACTOR", "Basis", "activations_scale_factor", "basis", "rms_fused", "runtime_option"]

SCALE_FACTOR = "ACTIVATIONS_SCALE_FACTOR"

# The ops whose output the passes scale down: their data input is divided by the factor.
_SCALED = frozenset({"MatMul", "Convolution"})
# The ops a scalar Multiply moves through, with the inputs that carry the scaled values (None: every input).
_CARRY: dict[str, tuple[int, ...] | None] = {
    "Reshape": (0,), "Transpose": (0,), "Squeeze": (0,), "Unsqueeze": (0,), "Convert": (0,), "Gather": (0,),
    "StridedSlice": (0,), "Slice": (0,), "Split": (0,), "VariadicSplit": (0,), "Broadcast": (0,), "Concat": None,
    "Add": None, "Subtract": None,
}  # fmt: skip
# What starts with the model's own values.
_SOURCES = frozenset({"Parameter", "Constant", "ReadValue"})
# The ops before which the passes multiply the factor back: their output holds the model's own values.
_UNDONE = frozenset({
    "Exp", "Log", "Sqrt", "Power", "Tanh", "Sigmoid", "Erf", "Gelu", "Swish", "HSwish", "HSigmoid", "SoftPlus",
    "Mish", "Softmax", "LogSoftmax", "Sin", "Cos", "Abs", "Floor", "Ceiling", "Sign", "SquaredDifference", "MVN",
    "NormalizeL2", "GroupNormalization", "ReduceL1", "ReduceL2", "ReduceProd", "TopK", "ShapeOf",
})  # fmt: skip
# The reductions the passes move the Multiply through: a reduction fed scaled values gives scaled values.
LINEAR_REDUCTIONS = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"})
_WALKED = 512  # nodes looked at per chain, at most


def runtime_option(rt_info: Sequence[RtInfo], name: str) -> str | None:
    """The ``value`` the model's ``<rt_info><runtime_options><NAME value=.../>`` gives (None: none)."""
    for item in rt_info:
        if item.tag != "runtime_options":
            continue
        for option in item.children:
            if option.tag == name:
                return dict(option.attrs).get("value")
    return None


def activations_scale_factor(rt_info: Sequence[RtInfo]) -> tuple[float | None, str | None]:
    """The ``ACTIVATIONS_SCALE_FACTOR`` the model's runtime options set, where it is a positive number (OpenVINO
    applies none at 0 or below: -1 is its default, off), and what is wrong with a value that is not one."""
    text = runtime_option(rt_info, SCALE_FACTOR)
    if text is None:
        return None, None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        return None, (f"the model's <rt_info><runtime_options> sets {SCALE_FACTOR} to {text!r}, which is not a finite "
                      f"number: the f16 emulation applies no scaling")  # fmt: skip
    return (value if value > 0 else None), None


@dataclass(frozen=True, slots=True)
class Basis:
    """How a device applying the factor feeds a reduction's chain: ``scaled`` (the chain's captured values divided by
    the factor; ``constants``: its op's Constant operands too, an Add's or a Subtract's), ``unscaled`` (the model's
    own values; ``kept``: the inputs of its op that do, a product's other factor), or ``unfollowed`` (``why``: the
    passes' effect on it is not followed here)."""

    kind: Literal["scaled", "unscaled", "unfollowed"]
    why: str | None = None
    constants: bool = False
    kept: tuple[int, ...] = ()  # the inputs of the chain's op that hold the model's own values (a product's)
    # an RMSNorm's mean square, which the GPU fuses into its RMS kernel: that kernel takes the f16 input and accumulates
    # its squares and their mean in f32 (``rms_kernel_base.cpp``: the accumulator of an f16 input is f32)
    fused: bool = False


def _named(node: Any) -> str:
    return f"{node.get_type_name()} {node.get_friendly_name()!r}"


def _constant(output: Any) -> bool:
    node = output.get_node()
    if node.get_type_name() == "Convert":
        node = node.input_value(0).get_node()
    return bool(node.get_type_name() == "Constant")


class _Walk:
    """Whether outputs hold scaled values, followed up the graph (each node once)."""

    def __init__(self) -> None:
        self.seen: dict[Any, str] = {}
        self.why: str | None = None

    def state(self, output: Any) -> str:
        """``scaled``, ``unscaled`` or ``unfollowed`` (:attr:`why` says why) for the values of ``output``."""
        node = output.get_node()
        if node in self.seen:
            return self.seen[node]
        if len(self.seen) >= _WALKED:
            self.why = self.why or "the graph above its chain, too far to follow"
            return "unfollowed"
        self.seen[node] = "unscaled"  # (a cycle through a state variable starts from its own values)
        self.seen[node] = found = self._state(node)
        return found

    def _state(self, node: Any) -> str:
        kind = node.get_type_name()
        if kind in _SCALED:
            return "scaled"
        if kind in _SOURCES or kind in _UNDONE:
            return "unscaled"
        if kind in ("Multiply", "Divide") and node.get_input_size() == 2:
            operands = [node.input_value(i) for i in range(2)]
            data = [o for o in operands if not _constant(o)]
            if len(data) == 2:
                states = [self.state(o) for o in data]
                if "unfollowed" in states:
                    return "unfollowed"
                if _one_factor(kind, states) is not None:  # the Multiply moves past it: its product carries it
                    return "scaled"
                if "scaled" in states:
                    self.why = self.why or f"{_named(node)}, of two values scaled"
                    return "unfollowed"
                return "unscaled"
            return self.state(data[0]) if data else "unscaled"
        carried = _CARRY.get(kind, ())
        if kind in _CARRY or kind in LINEAR_REDUCTIONS:
            inputs = range(node.get_input_size()) if carried is None else (carried or (0,))
            states = [self.state(node.input_value(i)) for i in inputs if i < node.get_input_size()]
            if "scaled" in states:  # an Add moves the Multiply past it by dividing its other operand
                return "scaled"
            return "unfollowed" if "unfollowed" in states else "unscaled"
        states = [self.state(node.input_value(i)) for i in range(node.get_input_size())]
        if "scaled" in states:  # what the passes make of it is not known here
            self.why = self.why or f"{_named(node)}, an op whose effect on it ovreduce does not know"
            return "unfollowed"
        return "unfollowed" if "unfollowed" in states else "unscaled"


def _one_factor(kind: str, states: Sequence[str]) -> int | None:
    """The input of a product (or a quotient's numerator) of two computed values that alone carries the factor, so
    that the result carries it once; None where none does, or both (or the divisor) do."""
    if kind == "Multiply" and sorted(states) == ["scaled", "unscaled"]:
        return states.index("scaled")
    if kind == "Divide" and list(states) == ["scaled", "unscaled"]:
        return 0
    return None


def linear(node: Any) -> bool:
    """Whether a scalar Multiply moves through ``node`` unchanged, whose inputs then all carry the factor: an Add or a
    Subtract (the passes divide its other operand, a Constant too), an op that only moves values (a Reshape, a Concat:
    the values it carries, a Constant's too), a Multiply or Divide by a Constant."""
    kind = node.get_type_name()
    if kind in _CARRY:  # an Add, a Subtract, or an op that moves values (a Reshape, a Concat)
        return True
    return kind in ("Multiply", "Divide") and any(_constant(node.input_value(i)) for i in range(node.get_input_size()))


def basis(chain_op: Any | None, reduction: Any, above: Sequence[Any], normalized: bool) -> Basis:
    """How a device applying the factor feeds the chain of OpenVINO node ``reduction`` (its range-changing op
    ``chain_op``, None: none; ``above``: the ops above the chain, emulated from their own captured inputs;
    ``normalized``: an Add of a Constant follows the reduction, an eps, as in the RMS or layer norm OpenVINO fuses)."""
    walk = _Walk()
    op = reduction if chain_op is None else chain_op
    entries = [op.input_value(i) for i in range(op.get_input_size() if chain_op is not None else 1)]
    states = [walk.state(e) for e in entries if not _constant(e)]
    if "unfollowed" in states:
        return Basis("unfollowed", walk.why)
    if "scaled" not in states:
        return Basis("unscaled")
    kind, name = reduction.get_type_name(), _named(reduction)
    if kind not in LINEAR_REDUCTIONS:
        return Basis("unscaled")  # the factor is multiplied back before it
    bent = next((node for node in above if not linear(node)), None)
    if bent is not None:  # its captured inputs do not carry the factor as the op's output does
        return Basis("unfollowed", f"{_named(bent)} above its chain, emulated from its own captured inputs")
    if chain_op is None:
        return Basis("scaled")
    op_kind = chain_op.get_type_name()
    if op_kind in ("Add", "Subtract"):
        return Basis("scaled", constants=True)
    if op_kind in ("Multiply", "Divide") and any(_constant(e) for e in entries):
        return Basis("scaled")
    one = _one_factor(op_kind, states) if len(states) == 2 else None
    if one is not None:  # a product of a scaled value and one of the model's own (a MoE's routing weight)
        return Basis("scaled", kept=(1 - one,))
    squares = op_kind == "SquaredDifference" or (
        op_kind == "Power" and _constant(entries[1]) and _exponent(entries[1]) == 2.0
    ) or (op_kind == "Multiply" and entries[0] == entries[1])  # fmt: skip
    if squares and kind == "ReduceMean" and normalized and op_kind == "SquaredDifference":  # a layer norm's variance
        return Basis("scaled")
    if squares and kind == "ReduceMean" and normalized and rms_fused(chain_op, reduction):  # an RMS norm's mean
        return Basis("scaled", fused=True)  # square, fused into the RMS kernel: fed the scaled values
    if op_kind in ("Power", "Exp", "SquaredDifference"):
        return Basis("unscaled")  # the factor is multiplied back before the op
    return Basis("unfollowed", f"{_named(chain_op)} feeding {name}")


def _consumers(output: Any) -> list[Any]:
    """The nodes that read ``output`` (the audit's own Results, capturing it, left out)."""
    return [port.get_node() for port in output.get_target_inputs() if port.get_node().get_type_name() != "Result"]


def _other(node: Any, output: Any) -> Any | None:
    """The input of a two-input ``node`` that is not ``output`` (None where both or neither are)."""
    values = node.input_values()
    if len(values) != 2 or (values[0] == output) == (values[1] == output):
        return None
    return values[1] if values[0] == output else values[0]


def rms_fused(chain_op: Any, reduction: Any) -> bool:
    """Whether OpenVINO's RMSFusion fuses the norm whose mean square ``chain_op -> reduction`` computes into one RMS
    op (``transformations/common_optimizations/rms_fusion.cpp``, which the GPU plugin runs): ``x * 1/Sqrt(ReduceMean(
    x², one axis, the last) + eps)`` (the reciprocal a ``Power`` of -1 or a ``Divide`` of 1, or the whole a ``Power``
    of -0.5), multiplying the same ``x`` that was squared. A mean square that is no such norm's (a log-energy, a mean
    over another axis) is not fused: the factor is multiplied back before its square."""
    if chain_op.get_input_size() < 1 or reduction.get_input_size() != 2:
        return False
    x = chain_op.input_value(0)
    axes = reduction.input_value(1).get_node()
    if axes.get_type_name() != "Constant":
        return False
    from ovreduce.backends.openvino import constant_data

    found = [int(v) for v in constant_data(axes).reshape(-1)]
    rank = reduction.get_input_partial_shape(0).rank
    if len(found) != 1 or not (found[0] == -1 or (rank.is_static and found[0] == rank.get_length() - 1)):
        return False
    adds = _consumers(reduction.output(0))
    if len(adds) != 1 or adds[0].get_type_name() != "Add":
        return False
    add = adds[0].output(0)
    reciprocals = []
    for node in _consumers(add):
        kind = node.get_type_name()
        if kind == "Power" and node.input_value(0) == add and _exponent(node.input_value(1)) == -0.5:
            reciprocals.append(node.output(0))
        elif kind == "Sqrt":
            for inverse in _consumers(node.output(0)):
                other = _other(inverse, node.output(0))
                if other is None:
                    continue
                if (
                    inverse.get_type_name() == "Power"
                    and inverse.input_value(0) == node.output(0)
                    and _exponent(other) == -1.0
                ) or (
                    inverse.get_type_name() == "Divide"
                    and inverse.input_value(1) == node.output(0)
                    and _exponent(other) == 1.0
                ):
                    reciprocals.append(inverse.output(0))
    return any(
        node.get_type_name() == "Multiply" and _other(node, reciprocal) == x
        for reciprocal in reciprocals
        for node in _consumers(reciprocal)
    )


def _exponent(output: Any) -> float | None:
    node = output.get_node()
    if node.get_type_name() == "Convert":
        node = node.input_value(0).get_node()
    if node.get_type_name() != "Constant":
        return None
    from ovreduce.backends.openvino import constant_data  # (an f8 Constant's values, not its codes)

    values = constant_data(node)
    flat = [float(v) for v in values.reshape(-1)]
    return flat[0] if flat and all(v == flat[0] for v in flat) else None
