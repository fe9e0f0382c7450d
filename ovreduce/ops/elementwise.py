"""Elementwise binary ops (arithmetic, comparison, logical), Select, FakeQuantize and FakeConvert, with OpenVINO's
``auto_broadcast``; and PReLU.

The rule is ``eltwise_shape_infer`` (src/core/shape_inference/include/eltwise_shape_inference.hpp) over
``PartialShape::broadcast_merge_into`` (src/core/src/partial_shape.cpp):

* ``none``: the shapes merge (every dim intersects);
* ``numpy``: right-aligned, each pair ``Dimension::broadcast_merge`` (an interval holding 1 stretches);
  either rank dynamic gives a dynamic rank;
* ``pdpd``: input 1 broadcasts into input 0 from the axis ``auto_broadcast.auto_broadcast_axis`` (0 when absent; -1:
  right-aligned) and may not be larger.

Arithmetic ops fold small integer values (``ShapeOf(x) * 2``, ``Rank - 1``), with NumPy broadcasting, wrapping as
the inputs' integer type does; and real ones (a size divided in f32) as :mod:`ovreduce.ops.reals` computes them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ovreduce.errors import IRStructureError, ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType, element_type
from ovreduce.ir.model import Layer
from ovreduce.ops.base import Bounds, LayerContext, PortState, ValueInfo
from ovreduce.ops.reals import REAL_BINARY, computed, real_tensor, rounded
from ovreduce.ops.rules import (
    AUTO_BROADCAST,
    BOOLEAN,
    ELEMENT_TYPE,
    ShapeRule,
    Tensor,
    bool_attr,
    broadcast_shape,
    broadcast_values,
    const_tensor,
    elements,
    evaluates,
    expanded,
    int_attr,
    partial_value,
    pinned,
    str_attr,
    too_large,
    type_limits,
    typed,
    unevaluated,
    wrapped,
)
from ovreduce.shapes import Dimension, PartialShape, broadcast_merge, merge

__all__ = [
    "ARITHMETIC",
    "BITWISE",
    "COMPARISON",
    "LOGICAL",
    "Binary",
    "Bitwise",
    "BitwiseNot13",
    "FakeConvert13",
    "FakeQuantize0",
    "PReLU0",
    "Select1",
    "broadcast_shapes",
]


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    return a // b


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a: int, b: int) -> int:  # the sign of the dividend, as C's %
    return a - b * _trunc_div(a, b)


def _floor_mod(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    return a % b


_F32 = ELEMENT_TYPES["f32"]


class _NotFoldedError(ArithmeticError):
    """Operands whose result ovreduce does not compute as OpenVINO does (an integer Power past a double's precision)."""


def _int_power(a: int, b: int) -> int:
    """OpenVINO's integer Power: ``std::pow`` in double, cast back; exact where the double power is."""
    if b < 0:
        if a == 0:
            raise _NotFoldedError(f"0 to the power {b}")
        return a**b if abs(a) == 1 else 0  # (the fraction truncated)
    result = int(a**b) if (abs(a) < 2**53 and b < 64) or abs(a) <= 1 else None
    if result is None or abs(result) >= 2**53:
        raise _NotFoldedError(f"{a} to the power {b}, past a double's 53 bits")
    return result


def _within(fn: Callable[[int, int], int], etype: ElementType) -> Callable[[int, int], int]:
    """``fn``, its results past ``etype``'s range not folded (a double cast to an integer that does not hold it is the
    machine's choice, not a wrap)."""
    lo, hi = type_limits(etype)

    def checked(a: int, b: int) -> int:
        result = fn(a, b)
        if not lo <= result <= hi:
            raise _NotFoldedError(f"{a} to the power {b}, past {etype}'s range")
        return result

    return checked


# type -> the integer function its values fold with (None: shape only)
ARITHMETIC: dict[str, Callable[[int, int], int] | None] = {
    "Add": lambda a, b: a + b,
    "Subtract": lambda a, b: a - b,
    "Multiply": lambda a, b: a * b,
    "Divide": None,  # pythondivision decides: see Binary.fold
    "Maximum": max,
    "Minimum": min,
    "FloorMod": _floor_mod,
    "Mod": _trunc_mod,
    "Power": _int_power,
    "SquaredDifference": None,  # OpenVINO evaluates it in no integer type: its dims stay unknown
}


_BoundsRule = Callable[[Bounds | None, Bounds | None, Callable[[int, int], int], ElementType], Bounds | None]


def _interval_bounds(
    x: Bounds | None, y: Bounds | None, fn: Callable[[int, int], int], etype: ElementType
) -> Bounds | None:
    """One element's bounds through ``fn`` as OpenVINO's ``interval_bound_evaluator`` gives them: ``fn`` over the four
    pairs of bounds, their least and greatest; ``(0, None)`` where an operand's upper bound is unknown (its type's
    largest value); None (not judged) where a result overflows ``etype``."""
    if x is None or y is None:
        return None
    (xl, xh), (yl, yh) = x, y
    if xh is None or yh is None:
        return (0, None)
    results = [fn(p, q) for p in (xl, xh) for q in (yl, yh)]
    if wrapped(results, etype) != tuple(results):  # (OpenVINO's wrap: not judged)
        return None
    high = max(results)
    return (min(results), None if high >= type_limits(etype)[1] else high)


def _divide_bounds(
    x: Bounds | None, y: Bounds | None, fn: Callable[[int, int], int], etype: ElementType
) -> Bounds | None:
    """One element's bounds through Divide as OpenVINO's ``Divide::evaluate_lower``/``evaluate_upper`` give them for a
    dividend not below 0 (a dim): over a positive divisor, the least dividend over the greatest divisor and the greatest
    over the least (no upper bound where that is 0); no bound at all where the divisor may be either side of 0;
    ``(0, None)`` where an upper bound is unknown. None (not judged) for a negative dividend or divisor, where
    OpenVINO's estimate is no monotonic function of the operands' bounds."""
    if x is None or y is None:
        return None
    (xl, xh), (yl, yh) = x, y
    if xh is None or yh is None:
        return (0, None)
    if yl < 0 < yh:
        return (type_limits(etype)[0], None)
    if xl < 0 or yh <= 0:
        return None
    high = None if yl == 0 else fn(xh, yl)
    return (fn(xl, yh), None if high is None or high >= type_limits(etype)[1] else high)


def _remainder_bounds(
    x: Bounds | None, y: Bounds | None, fn: Callable[[int, int], int], etype: ElementType
) -> Bounds | None:
    """One element's bounds through Mod or FloorMod: exact where both operands are; else, for a dividend not below 0
    and a divisor above it, the dividend's where it is below every divisor, else ``[0, greatest divisor - 1]``, which
    holds what OpenVINO estimates (``mod_interval``, or the remainders of the bounds' pairs) for any operands within
    these: a remainder is no monotonic function, so OpenVINO's narrower estimate would be wrong for operands ovreduce
    bounds more loosely than it does; ``(0, None)`` where an upper bound is unknown; None (not judged) where an
    operand may be negative or the divisor 0."""
    if x is None or y is None:
        return None
    (v1, v2), (m1, m2) = x, y
    if v1 == v2 and m1 == m2 and m1 != 0:
        return (wrapped([fn(v1, m1)], etype)[0],) * 2
    if v1 < 0 or m1 <= 0:
        return None
    if v2 is not None and v2 < m1:  # every dividend below every divisor: itself
        return (v1, v2)
    return (0, None if v2 is None or m2 is None else m2 - 1)


def _power_bounds(
    x: Bounds | None, y: Bounds | None, fn: Callable[[int, int], int], etype: ElementType
) -> Bounds | None:
    """One element's bounds through Power as OpenVINO's default bound evaluator gives them: the power of the lower
    bounds and that of the upper ones, which bound it for a base not below 0 and an exponent known exactly, not below 0
    (``d ** 2`` of a dim ``2..5`` is ``4..25``); no upper bound where the base has none and the exponent is 1 (to
    another, OpenVINO's power of its type's largest value is the machine's, or none). None (not judged) otherwise."""
    if x is None or y is None:
        return None
    (xl, xh), (yl, yh) = x, y
    if yl != yh or yl < 0 or xl < 0:
        return None
    try:
        low = fn(xl, yl)
        if xh is None:
            return (low, None) if yl == 1 else None
        high = fn(xh, yl)
    except _NotFoldedError:
        return None
    return (low, None if high >= type_limits(etype)[1] else high)


_BOUNDS_RULES: Mapping[str, _BoundsRule] = {
    # (OpenVINO's interval_bound_evaluator: the op over each pair of the operands' bounds, each op monotonic in each)
    "Add": _interval_bounds, "Subtract": _interval_bounds, "Multiply": _interval_bounds,
    "Maximum": _interval_bounds, "Minimum": _interval_bounds,
    "Divide": _divide_bounds, "Mod": _remainder_bounds, "FloorMod": _remainder_bounds, "Power": _power_bounds,
}  # fmt: skip
"""How each integer arithmetic op bounds an element of a runtime value from its operands' bounds."""


class _TrapError(ArithmeticError):
    """Operands on which OpenVINO's ``evaluate`` is killed by SIGFPE (x86 traps the integer division)."""


def _trapping(op_type: str, etype: ElementType, fn: Callable[[int, int], int]) -> Callable[[int, int], int]:
    """``fn``, raising :class:`_TrapError` on the operands OpenVINO 2026.4's ``evaluate`` of ``op_type`` in ``etype``
    divides in the machine's own instruction unchecked: the least i32 or i64 by -1 (Divide, Mod), an unsigned value
    by 0 (FloorMod)."""
    if op_type in ("Divide", "Mod") and etype.name in ("i32", "i64"):
        least = -(1 << (etype.bitwidth - 1))

        def overflow(a: int, b: int) -> int:
            if a == least and b == -1:
                raise _TrapError(f"{least} by -1, which overflows {etype}")
            return fn(a, b)

        return overflow
    if op_type == "FloorMod" and etype.name in ("u8", "u32", "u64"):

        def by_zero(a: int, b: int) -> int:
            if b == 0:
                raise _TrapError(f"{a} by 0")
            return fn(a, b)

        return by_zero
    return fn


# type -> the test its integer (or boolean) values fold with, to a boolean
_BOOLEAN: dict[str, Callable[[int, int], bool]] = {
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "Less": lambda a, b: a < b,
    "LessEqual": lambda a, b: a <= b,
    "Greater": lambda a, b: a > b,
    "GreaterEqual": lambda a, b: a >= b,
    "LogicalAnd": lambda a, b: bool(a) and bool(b),
    "LogicalOr": lambda a, b: bool(a) or bool(b),
    "LogicalXor": lambda a, b: bool(a) != bool(b),
}
COMPARISON = ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
_REAL_TESTS: dict[str, Callable[[float, float], bool]] = {
    "Equal": operator.eq, "NotEqual": operator.ne, "Less": operator.lt, "LessEqual": operator.le,
    "Greater": operator.gt, "GreaterEqual": operator.ge,
}  # fmt: skip
LOGICAL = ("LogicalAnd", "LogicalOr", "LogicalXor")


def broadcast_shapes(dst: PartialShape, src: PartialShape, mode: str, axis: int = -1) -> PartialShape:
    """``PartialShape::broadcast_merge_into`` (``merge_into`` for ``none``).

    Raises:
        ShapeInferenceError: the shapes do not broadcast (or, for ``none``, do not merge).
    """
    if mode == "none":
        if dst.dims is None:
            return src
        if src.dims is None:
            return dst
        if len(dst.dims) != len(src.dims):
            raise ShapeInferenceError("Argument shapes are inconsistent.")
        merged = [merge(a, b) for a, b in zip(dst.dims, src.dims, strict=True)]
        if any(m is None for m in merged):
            raise ShapeInferenceError("Argument shapes are inconsistent.")
        return PartialShape(tuple(m for m in merged if m is not None))
    if mode == "numpy":
        if dst.dims is None or src.dims is None:
            return PartialShape(None)
        rank = max(len(dst.dims), len(src.dims))
        one = Dimension.static(1)
        a = (one,) * (rank - len(dst.dims)) + dst.dims
        b = (one,) * (rank - len(src.dims)) + src.dims
        out = [broadcast_merge(x, y) for x, y in zip(a, b, strict=True)]
        if any(d is None for d in out):
            raise ShapeInferenceError("Argument shapes are inconsistent.")
        return PartialShape(tuple(d for d in out if d is not None))
    if mode == "pdpd":
        if dst.dims is None or src.dims is None:
            return PartialShape(None)
        dst_rank, src_rank = len(dst.dims), len(src.dims)
        if src_rank > dst_rank or axis < -1:
            raise ShapeInferenceError("Argument shapes are inconsistent.")
        start = dst_rank - src_rank if axis == -1 else axis
        if src_rank + start > dst_rank:
            raise ShapeInferenceError("Argument shapes are inconsistent.")
        dims = list(dst.dims)
        for i, s in enumerate(src.dims):
            d = dims[start + i]
            if d.is_static and s.is_static and s.lo > d.lo:
                raise ShapeInferenceError("Argument shapes are inconsistent.")
            bm = broadcast_merge(d, s)
            if bm is None:
                raise ShapeInferenceError("Argument shapes are inconsistent.")
            dims[start + i] = bm
        return PartialShape(tuple(dims))
    raise ShapeInferenceError(f"Unsupported auto broadcast specification: {mode!r}")


def _mode(layer: Layer) -> tuple[str, int]:
    mode = str_attr(layer, "auto_broadcast", "numpy")
    # pdpd's start axis, as OpenVINO's reader names it (an "axis" attribute is not read), 0 when absent
    return ("none" if mode == "explicit" else mode), int_attr(layer, "auto_broadcast.auto_broadcast_axis", 0)


def _equal_bounds(ctx: LayerContext, folded: ValueInfo) -> ValueInfo:
    """A runtime 1-D Equal of integers, each element's bounds where both operands' are known, as OpenVINO's
    ``Equal::evaluate_lower``/``evaluate_upper`` give them: true at least where both operands are one and the same
    value (``(1, 1)``), true at most where their intervals meet (else ``(0, 0)``: false whatever the run gives, which
    decides an If on it), ``(0, 1)`` in between."""
    shapes = [ctx.input(i).shape for i in range(2)]
    if any(s is None or s.rank is None or s.rank > 1 for s in shapes):
        return folded
    a, b = (partial_value(ctx, i) for i in range(2))
    if a is None or b is None or (len(a) != len(b) and 1 not in (len(a), len(b))):
        return folded
    n = max(len(a), len(b))

    def bounds(x: Bounds | None, y: Bounds | None) -> Bounds | None:
        if x is None or y is None:
            return None
        (x_lo, x_hi), (y_lo, y_hi) = x, y
        same = x_lo == x_hi == y_lo == y_hi
        meet = (y_hi is None or x_lo <= y_hi) and (x_hi is None or y_lo <= x_hi)  # (None: no upper bound)
        return (int(same), int(meet))

    pairs = zip(a * n if len(a) == 1 else a, b * n if len(b) == 1 else b, strict=True)
    return replace(folded, known=tuple(bounds(x, y) for x, y in pairs))


class Binary(ShapeRule):
    """An elementwise binary op: arithmetic (the inputs' type), comparison and logical (boolean)."""

    inputs = range(2, 3)

    def __init__(self, type: str, version: str, opsets: range, *, boolean_output: bool = False) -> None:
        self.type = type
        self.version = version
        self.opsets = opsets
        self.boolean_output = boolean_output
        self.enums = {"auto_broadcast": AUTO_BROADCAST}
        self.boolean_attributes = ("m_pythondiv",) if type == "Divide" else ()

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        a, b = typed(ctx.input(0)), typed(ctx.input(1))
        if a is not None and b is not None and a != b:
            raise ShapeInferenceError(f"Arguments do not have the same element type (arg0 element type: {a}, arg1 "
                                      f"element type: {b}).")  # fmt: skip
        etype = a or b
        if etype is not None and self.type in ARITHMETIC and etype.kind in ("bool", "string"):
            raise ShapeInferenceError(f"This operation does not support inputs with element type: {etype}")
        if etype is not None and self.type in LOGICAL and etype.kind != "bool":
            raise ShapeInferenceError(
                f"Operands for logical operators must have boolean element type but have element type {etype}."
            )
        mode, axis = _mode(ctx.layer)
        return [broadcast_shapes(inputs[0], inputs[1], mode, axis)]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        if self.boolean_output:
            return [BOOLEAN for _ in layer.outputs]
        return super().types(layer, inputs)

    def fold(self, ctx: LayerContext) -> ValueInfo:
        folded = super().fold(ctx)
        layer = ctx.layer
        fn = ARITHMETIC.get(self.type)
        if self.type in _BOOLEAN:
            test = _BOOLEAN[self.type]
            fn = lambda x, y: int(test(x, y))  # noqa: E731
        if self.type == "Divide":
            python_div = bool_attr(layer, "m_pythondiv", True)
            fn = _floor_div if python_div else _trunc_div
        etype = ctx.input(0).element_type
        if etype is not None and etype.is_real:
            real = self._fold_reals(ctx, folded, etype)
            return folded if real is None else real
        if self.type == "Power" and etype is not None and etype.is_integral:
            fn = _within(_int_power, etype)
        if folded.kind == "runtime" and fn is not None and etype is not None and self.type in _BOUNDS_RULES:
            return self._known_in_part(ctx, folded, fn, etype)
        if folded.kind == "runtime" and self.type == "Equal" and etype is not None and etype.is_integral:
            return _equal_bounds(ctx, folded)
        if folded.kind != "unresolved" or any(v.kind != "const" for v in ctx.input_values()):
            return folded
        a, b = (const_tensor(ctx.value(i)) for i in range(2))
        if a is None or b is None or fn is None or etype is None:
            return folded
        if not evaluates(self.type, etype):
            return unevaluated(layer, etype, folded)
        out_shape = broadcast_shape(a[1], b[1])
        oversized = None if out_shape is None else too_large(layer, out_shape)
        if oversized is not None:
            return oversized
        try:
            result = broadcast_values(a, b, _trapping(self.type, etype, fn))
        except _TrapError as exc:
            raise IRStructureError(
                f"{ctx.place()}: {layer.where}: divides the {etype} constant {exc}, a value the model's shapes "
                f"need; OpenVINO's reader, computing it, is killed by the signal SIGFPE instead of refusing the "
                f"model, so ovreduce refuses it",
                line=layer.line,
            ) from None
        except ZeroDivisionError:
            return ValueInfo("unresolved", None, f"{layer.type} layer {layer.name!r} divides by zero")
        except _NotFoldedError as exc:
            return ValueInfo("unresolved", None, f"{layer.type} layer {layer.name!r} computes {exc}, which ovreduce "
                                                 f"does not fold")  # fmt: skip
        if result is None:
            return folded
        out_type = BOOLEAN if self.boolean_output else etype
        return ValueInfo("const", wrapped(result[0], out_type), shape=result[1])

    def _fold_reals(self, ctx: LayerContext, folded: ValueInfo, etype: ElementType) -> ValueInfo | None:
        """Over constants of a real type (a size converted to f32 and divided, ``torch.floor_divide`` of sizes), the
        values as OpenVINO's ``evaluate`` computes them (:mod:`ovreduce.ops.reals`), in the types it does; None where
        an input is not constant (the integer rules then say what the value is)."""
        layer = ctx.layer
        values = [ctx.value(i) for i in range(len(layer.inputs))]
        tensors = [real_tensor(v) for v in values]
        a, b = tensors if len(tensors) == 2 else (None, None)
        if a is None or b is None or any(v.kind == "runtime" for v in values):
            return None
        if typed(ctx.input(1)) not in (None, etype):
            return None
        if not evaluates(self.type, etype):
            return unevaluated(layer, etype, folded)
        if self.type not in REAL_BINARY and self.type not in COMPARISON:
            return None
        out_shape = broadcast_shape(a[1], b[1])
        if out_shape is None:
            return None
        oversized = too_large(layer, out_shape)
        if oversized is not None:
            return oversized
        what = f"{layer.type} layer {layer.name!r}"
        if self.type in COMPARISON:
            test = _REAL_TESTS[self.type]
            result = broadcast_values(a, b, lambda x, y: int(test(x, y)) if not (math.isnan(x) or math.isnan(y))
                                      else None)  # fmt: skip
            assert result is not None
            flags = result[0]
            if any(f is None for f in flags):
                return computed([None], out_shape, etype, what)
            return ValueInfo("const", tuple(int(f) for f in flags if f is not None), shape=out_shape)
        op = REAL_BINARY[self.type]

        def element(x: float, y: float) -> float | None:
            if not (math.isfinite(x) and math.isfinite(y)):
                return None
            r = op(x, y)
            if r is None:
                return None
            if self.type == "Power" and etype.name != "f64" and rounded(r, _F32) != r:
                return None  # (a power rounded in f32: not what every powf gives)
            return rounded(r, etype)

        spread = broadcast_values(a, b, element)
        assert spread is not None
        return computed(spread[0], out_shape, etype, what)

    def _known_in_part(
        self, ctx: LayerContext, folded: ValueInfo, fn: Callable[[int, int], int], etype: ElementType
    ) -> ValueInfo:
        """A runtime 1-D value of integers, each element's bounds where both operands' are known (a dim ShapeOf gives at
        run time, plus one: a past length and the new tokens'), as OpenVINO's bounds pass through its arithmetic."""
        parts = [partial_value(ctx, i) for i in range(2)]
        shapes = [ctx.input(i).shape for i in range(2)]
        if not etype.is_integral or not evaluates(self.type, etype):
            return folded
        if any(s is None or s.rank is None or s.rank > 1 for s in shapes):
            return folded
        a, b = parts
        if a is None or b is None or (len(a) != len(b) and 1 not in (len(a), len(b))):
            return folded
        n = max(len(a), len(b))
        pairs = zip(a * n if len(a) == 1 else a, b * n if len(b) == 1 else b, strict=True)
        rule = _BOUNDS_RULES[self.type]
        return replace(folded, known=tuple(rule(x, y, fn, etype) for x, y in pairs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.type!r}, {self.version!r})"


def _picked_shape(
    layer: Layer, cond: tuple[int, ...], then: tuple[int, ...], other: tuple[int, ...]
) -> tuple[int, ...] | ValueInfo | None:
    """The shape a Select of constants picks into (NumPy-broadcast: ``else`` and ``then``, then the condition), its
    refusal where it is too large to fold, or None where the shapes do not broadcast."""
    both = broadcast_shape(other, then)
    shape = None if both is None else broadcast_shape(both, cond)
    if shape is None:
        return None
    oversized = too_large(layer, shape)
    return oversized if oversized is not None else tuple(shape)


class Select1(ShapeRule):
    """Select (cond, then, else): ``select_shape_infer``; the output has the type of ``then``."""

    type = "Select"
    inputs = range(3, 4)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.enums = {"auto_broadcast": AUTO_BROADCAST}
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        kinds = [typed(ctx.input(i)) for i in range(3)]
        if kinds[0] is not None and kinds[0].kind != "bool":
            raise ShapeInferenceError(f"Argument 0 must have boolean element type (element type: {kinds[0]}).")
        if kinds[1] is not None and kinds[2] is not None and kinds[1] != kinds[2]:
            raise ShapeInferenceError("Argument 1 and 2 element types must match.")
        cond, then, other = inputs
        mode, axis = _mode(ctx.layer)
        if mode == "pdpd":
            out = broadcast_shapes(then, other, mode, axis)
            return [broadcast_shapes(out, cond, mode, axis)]
        out = broadcast_shapes(other, then, mode, axis)
        return [broadcast_shapes(out, cond, mode, axis)]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        then = inputs[1].element_type if len(inputs) > 1 else None
        return [then if then is not None else port.precision for port in layer.outputs]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Over constants (``torch.where`` of sizes), each element of ``then`` where the condition holds, else of
        ``else``, NumPy-broadcast, in the types OpenVINO's ``evaluate`` computes it in."""
        folded = super().fold(ctx)
        layer = ctx.layer
        if folded.kind == "runtime" and len(layer.inputs) == 3:
            return self._bounded(ctx, folded)
        etype = ctx.input(1).element_type
        if len(layer.inputs) == 3 and etype is not None and etype.is_real and folded.kind == "unresolved":
            return self._fold_reals(ctx, folded, etype)
        if len(layer.inputs) != 3 or any(v.kind != "const" for v in ctx.input_values()):
            return folded
        if etype is not None and not evaluates(self.type, etype):
            return unevaluated(layer, etype, folded)
        tensors = [const_tensor(ctx.value(i)) for i in range(3)]
        cond, then, other = tensors
        if cond is None or then is None or other is None or _mode(layer)[0] == "pdpd":
            return folded
        shape = _picked_shape(layer, cond[1], then[1], other[1])
        if not isinstance(shape, tuple):
            return folded if shape is None else shape
        c, t, e = (expanded(tensor, shape) for tensor in (cond, then, other))
        if c is None or t is None or e is None:
            return folded
        return ValueInfo("const", tuple(a if k else b for k, a, b in zip(c, t, e, strict=True)), shape=shape)

    def _fold_reals(self, ctx: LayerContext, folded: ValueInfo, etype: ElementType) -> ValueInfo:
        """Over constants, ``then`` and ``else`` of a real type (non-integral values among them): each element picked,
        NumPy-broadcast, in the types OpenVINO's ``evaluate`` computes it in."""
        layer = ctx.layer
        cond = const_tensor(ctx.value(0))
        then, other = real_tensor(ctx.value(1)), real_tensor(ctx.value(2))
        if cond is None or then is None or other is None or _mode(layer)[0] == "pdpd":
            return folded
        if not evaluates(self.type, etype):
            return unevaluated(layer, etype, folded)
        shape = _picked_shape(layer, cond[1], then[1], other[1])
        if not isinstance(shape, tuple):
            return folded if shape is None else shape
        spread = [broadcast_values(t, (tuple(range(math.prod(shape))), shape), lambda v, _: v) for t in (then, other)]
        flags = expanded(cond, shape)
        if flags is None or spread[0] is None or spread[1] is None:
            return folded
        picked = [a if k else b for k, a, b in zip(flags, spread[0][0], spread[1][0], strict=True)]
        return computed(picked, shape, etype, f"{layer.type} layer {layer.name!r}")

    def _bounded(self, ctx: LayerContext, folded: ValueInfo) -> ValueInfo:
        """A runtime value picked from, where the condition is constant: each element's bounds those of the element of
        ``then`` or ``else`` it picks, as OpenVINO's ``evaluate_lower``/``evaluate_upper`` select them (the condition
        known exactly); constant where every element picked is known exactly."""
        cond = const_tensor(ctx.value(0))
        etype = ctx.input(1).element_type
        if cond is None or _mode(ctx.layer)[0] == "pdpd" or not evaluates(self.type, etype):
            return folded
        then, other = elements(ctx, 1), elements(ctx, 2)
        if then is None or other is None:
            return folded
        both = broadcast_shape(other[1], then[1])
        shape = None if both is None else broadcast_shape(both, cond[1])
        if shape is None or too_large(ctx.layer, shape) is not None:
            return folded
        # the indices of each operand's elements broadcast, then their bounds picked by them
        c, t, e = (expanded(tensor, shape) for tensor in (cond, _indices(then[1]), _indices(other[1])))
        if c is None or t is None or e is None:
            return folded
        return pinned(folded, tuple(then[0][a] if k else other[0][b] for k, a, b in zip(c, t, e, strict=True)), shape)


def _indices(shape: tuple[int, ...]) -> Tensor:
    """A tensor of ``shape`` holding its own flat indices."""
    return tuple(range(math.prod(shape))), shape


BITWISE = ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
"""The bitwise binary ops (opset13): ``BinaryElementwiseBitwise``, an elementwise op of integers or booleans."""


def _bitwise_type(etype: ElementType | None) -> None:
    """OpenVINO's refusal of a bitwise op's input of a floating-point type (its ``is_integral``: not real)."""
    if etype is not None and etype.is_real and etype.name != "nf4":
        raise ShapeInferenceError("The element type of the input tensor must be integer or boolean.")


class Bitwise(Binary):
    """BitwiseAnd, BitwiseOr, BitwiseXor-13: the inputs' element types merged and broadcast as ``auto_broadcast`` says
    (``validate_and_infer_elementwise_args``), of integers or booleans, in their type."""

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        a, b = typed(ctx.input(0)), typed(ctx.input(1))
        if a is not None and b is not None and a != b:
            raise ShapeInferenceError(f"Arguments do not have the same element type (arg0 element type: {a}, arg1 "
                                      f"element type: {b}).")  # fmt: skip
        mode, axis = _mode(ctx.layer)
        shape = broadcast_shapes(inputs[0], inputs[1], mode, axis)
        _bitwise_type(a or b)
        return [shape]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        return ShapeRule.fold(self, ctx)


class BitwiseNot13(ShapeRule):
    """BitwiseNot-13: input 0's shape and type, of integers or booleans."""

    type = "BitwiseNot"
    version = "opset13"
    inputs = range(1, 2)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        _bitwise_type(typed(ctx.input(0)))
        return [inputs[0]]


class FakeQuantize0(ShapeRule):
    """FakeQuantize-0 (opset1; nncf's and the POT's int8 quantization, before each Convolution and MatMul): data,
    ``input_low``, ``input_high``, ``output_low``, ``output_high``. Each of the four ranges is merged into the data's
    shape as ``auto_broadcast`` says (``fake_quantize.cpp``: merged for ``none``, broadcast-merged for ``numpy`` and
    ``pdpd``, each into what the ones before made of it), a range that does not fit refused; the output is the data's
    shape as it is (the ranges never widen it, even where they are larger) in the data's element type, of any type."""

    type = "FakeQuantize"
    version = "opset1"
    inputs = range(5, 6)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets
        self.enums = {"auto_broadcast": AUTO_BROADCAST}

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        int_attr(ctx.layer, "levels", 0)  # (read as OpenVINO reads it: a number it cannot read is refused)
        mode, axis = _mode(ctx.layer)
        merged = inputs[0]
        for i in range(1, 5):  # (each merge only checks the range: the output is the data's shape)
            merged = broadcast_shapes(merged, inputs[i], mode, axis)
        return [inputs[0]]


class PReLU0(ShapeRule):
    """PRelu-0 (opset1; the activation of every HiFi-GAN vocoder, of ONNX models' PRelu): data and slope, the output
    the data's shape and element type as they are. OpenVINO checks nothing of the slope as it reads the model
    (``prelu.cpp``: ``set_output_type(0, get_input_element_type(0), get_input_partial_shape(0))``); the IR writes the
    type ``PReLU``."""

    type = "PReLU"
    version = "opset1"
    inputs = range(2, 3)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        return [inputs[0]]


_FAKE_CONVERT_TYPES = ("f8e4m3", "f8e5m2")
_FAKE_CONVERT_INPUTS = ("bf16", "f16", "f32")


class FakeConvert13(ShapeRule):
    """FakeConvert-13 (FP8 emulation): data, ``scale`` and an optional ``shift``, of one element type among bf16, f16
    and f32, to a ``destination_type`` of f8e4m3 or f8e5m2 (``fake_convert.cpp``, its checks in that order). The shape
    is the data's with the scale numpy-broadcast-merged into it (a data dim ``?`` beside a scale's 4 is 4), which must
    stay compatible with the data's (a scale may not widen it), the scale's and the shift's compatible
    (``fake_convert_shape_inference.hpp``)."""

    type = "FakeConvert"
    version = "opset13"
    inputs = range(2, 4)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets
        self.enums = {"destination_type": ELEMENT_TYPE}

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        destination = element_type(layer.data.get("destination_type", _FAKE_CONVERT_TYPES[0]))
        if destination.name not in _FAKE_CONVERT_TYPES:
            raise ShapeInferenceError(f"Bad format for f8 conversion type: {destination}")
        etype = _merged_type([typed(ctx.input(i)) for i in range(len(layer.inputs))])
        if etype is not None and etype.name not in _FAKE_CONVERT_INPUTS:
            raise ShapeInferenceError(f"The element type of the input tensor must be a bf16, f16, f32 but got: {etype}")
        if len(inputs) == 3 and not inputs[1].compatible(inputs[2]):
            raise ShapeInferenceError("FakeConvert scale shape is not compatible with shift shape.")
        out = broadcast_shapes(inputs[0], inputs[1], "numpy")
        if not inputs[0].compatible(out):
            raise ShapeInferenceError(
                "FakeConvert support only unidirectional broadcasting, inputs cannot be broadcast into data."
            )
        return [out]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        """The inputs' one element type: the first known (the data's, unless that is dynamic)."""
        known = [s.element_type for s in inputs if s.element_type is not None and s.element_type.name != "dynamic"]
        first = known[0] if known else (inputs[0].element_type if inputs else None)
        return [first if first is not None else port.precision for port in layer.outputs]


def _merged_type(etypes: Sequence[ElementType | None]) -> ElementType | None:
    """``element::Type::merge`` over the inputs' types (None: dynamic or not known), OpenVINO's refusal of two
    different ones."""
    merged: ElementType | None = None
    for etype in etypes:
        if etype is not None and merged is not None and etype != merged:
            raise ShapeInferenceError("Mixed input types are not supported.")
        merged = merged or etype
    return merged
