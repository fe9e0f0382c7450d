"""The ops around the reductions: sources (Parameter, Const), Convert, the shape-preserving unary ops, and
ops known so far only for their boolean attributes (the shape rules of the others live in
:mod:`ovreduce.ops.elementwise`, :mod:`ovreduce.ops.nn` and :mod:`ovreduce.ops.movement`).

Versioned entries name the opsets OpenVINO 2026.4's IR reader finds them in. The shape-preserving unary
ops and the attribute-only ops are rules for every version of their type (``opsets=None``), as they were
before the registry: their versions differ in attributes ovreduce does not read.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import (
    LAST_OPSET,
    Bounds,
    LayerContext,
    Op,
    PortState,
    ValueInfo,
    declared_state,
    opset_number,
)
from ovreduce.ops.reals import REAL_UNARY, computed, from_int, real_tensor, round_half_away, rounded, to_int
from ovreduce.ops.rules import (
    EPS_MODE,
    GELU_MODE,
    MAX_VALUE_ELEMENTS,
    MVN_EPS_MODE,
    NOT_CONVERTED,
    ROUND_MODE,
    Enum,
    check_enums,
    converts,
    evaluates,
    exact,
    int_attr,
    normalize_axis,
    partial_value,
    pinned,
    real,
    real_attr,
    too_large,
    type_limits,
    typed,
    unevaluated,
    wrapped,
)
from ovreduce.shapes import PartialShape

__all__ = [
    "UNARY_SHAPE_PRESERVING",
    "Const0",
    "Convert0",
    "Declared",
    "Parameter0",
    "ShapePreserving",
]

# Ops whose single output has the shape and element type of input 0. OpenVINO's serializer writes Relu as
# "ReLU" and Softmax as "SoftMax" (its reader accepts both spellings).
UNARY_SHAPE_PRESERVING = frozenset(
    {
        "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Clamp", "Cos", "Cosh",
        "Elu", "Erf", "Exp", "Floor", "Gelu", "HSigmoid", "HSwish", "Log", "LogSoftmax", "LogicalNot",
        "Mish", "MVN", "Negative", "NormalizeL2", "ReLU", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
        "Sinh", "SoftMax", "Softmax", "SoftPlus", "SoftSign", "Sqrt", "Swish", "Tan", "Tanh",
    }
)  # fmt: skip
_ENUMS: dict[str, Mapping[str, Enum]] = {
    "Gelu": {"approximation_mode": GELU_MODE},
    "MVN": {"eps_mode": MVN_EPS_MODE},
    "NormalizeL2": {"eps_mode": EPS_MODE},
    "Round": {"mode": ROUND_MODE},
}
_REALS = {"MVN": ("eps",), "NormalizeL2": ("eps",), "Elu": ("alpha",), "Clamp": ("min", "max")}
_AXIS = frozenset({"Softmax", "SoftMax", "LogSoftmax"})
_NOT_BOOLEAN = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Cos", "Cosh", "Erf", "Exp", "Floor",
    "HSigmoid", "HSwish", "Log", "Negative", "ReLU", "Relu", "Sigmoid", "Sign", "Sin", "Sinh", "Sqrt", "Tan", "Tanh",
})  # fmt: skip
"""OpenVINO's unary arithmetic ops, which refuse a boolean or string input."""
_REAL_ONLY = {
    "Gelu": "Argument element type must be f16, bf16, f32, f64 or dynamic (got {}).",
    "Mish": "Element must be of floating point type, Got: {}",
    "Selu": "Input element types must be floating-point. Got: {}",
    "SoftPlus": "Input element type must be float. Got: {}",
    "SoftSign": "Input element type must be float, instead got: {}",
    "Swish": "Swish input tensor must be floating point type({}).",
}
"""The shape-preserving ops of real numbers only, and OpenVINO's words for any other input 0."""
_INPUTS = {"NormalizeL2": range(2, 3), "Selu": range(3, 4), "Swish": range(1, 3)}
"""The shape-preserving ops of more than one input (their data first); MVN takes its axes as a second from MVN-6."""
_FOLDED = frozenset({
    "LogicalNot", "Floor", "Ceiling", "Clamp", "Negative", "Relu", "ReLU", "Sign", "Abs", "Round",
})  # fmt: skip
"""The shape-preserving ops whose integer values fold (:meth:`ShapePreserving.fold`), in the types OpenVINO's
``evaluate`` computes them in."""
_REAL_FOLDED = frozenset({"Floor", "Ceiling", "Clamp", "Negative", "Relu", "ReLU", "Sign", "Abs", "Round", "Sqrt"})
"""The shape-preserving ops whose real values fold (:meth:`ShapePreserving._fold_reals`)."""


# -- sources ------------------------------------------------------------------------------------------------
class Parameter0(Op):
    """A model input: its ``shape`` attribute (or the caller's reshape), else its port's dims."""

    type = "Parameter"
    version = "opset1"
    opsets = range(1, LAST_OPSET + 2)  # opset17 holds Parameter too

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        layer = ctx.layer
        if ctx.reshape is not None:
            return [PortState(ctx.reshape, layer.element_type, "reshape")]
        if layer.shape is not None:
            return [PortState(layer.shape, layer.element_type, "parameter")]
        return [declared_state(layer.outputs[0], layer.element_type)]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        return ValueInfo("runtime", None, f"computed at run time from Parameter {ctx.layer.name!r}")


class Const0(Op):
    """A constant: its ``shape`` attribute; its values, when small, read from the weights."""

    type = "Const"
    version = "opset1"
    opsets = range(1, LAST_OPSET + 1)
    layer_reads = "own shape"

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        return [PortState(ctx.layer.shape, ctx.layer.element_type, "const")]

    def fold_key(self, layer: Layer) -> Hashable | None:
        """Where its bytes lie and how they read: a ``.bin`` shares the bytes of equal constants. (The type by
        name and the shape by dims: their hashes are plain tuples', asked once per Const a rule reads.)"""
        const, etype, shape = layer.const, layer.element_type, layer.shape
        if const is None:
            return None
        return (const.offset, const.size, const.count, etype and etype.name, shape and shape.dims, const.inline)

    def fold(self, ctx: LayerContext) -> ValueInfo:
        layer = ctx.layer
        const, etype = layer.const, layer.element_type
        assert const is not None and etype is not None
        if const.count > MAX_VALUE_ELEMENTS:
            return ValueInfo("unresolved", None, f"Const {layer.name!r} has {const.count} elements")
        if etype.is_packed:  # OpenVINO 2026.4 reads i4 0x0e as 14, u1 not at all ("Element not supported")
            return ValueInfo("unresolved", None, f"Const {layer.name!r} holds {etype} values, which ovreduce does not "
                                                 f"read (packed values; OpenVINO's shape inference reads them byte by "
                                                 f"byte or not at all where a layer takes the Const itself, and a "
                                                 f"Convert of u4 or i4 ones as the file writes them)")  # fmt: skip
        items: list[Any] = []
        if const.inline is not None:  # a `value` attribute's text: OpenVINO's data for it, the .bin not read
            items = _plain_values(etype, const.inline, const.count)
        elif ctx.weights is not None:
            nbytes = etype.nbytes(const.count)
            size = const.size if nbytes is None else nbytes
            raw = ctx.weights.read(const.offset, size, where=layer.where)
            items = _plain_values(etype, raw, const.count)
        shape = tuple(ctx.layer.shape.to_list()) if ctx.layer.shape is not None and ctx.layer.shape.is_static else None
        if etype.is_integral or etype.kind == "bool":
            return ValueInfo("const", tuple(int(v) for v in items), shape=shape)
        if etype.is_real:
            floats = [float(v) for v in items]
            if all(math.isfinite(v) and v == int(v) for v in floats):
                return ValueInfo("const", tuple(int(v) for v in floats), shape=shape)
            reals = tuple(floats)  # (an Interpolate's scales, an If's condition)
            return ValueInfo("unresolved", None, f"Const {layer.name!r} holds non-integral {etype} values", reals=reals,
                             shape=shape)  # fmt: skip
        return ValueInfo("unresolved", None, f"Const {layer.name!r} holds {etype} values")


_STRUCT_CODES = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}


def _plain_values(etype: ElementType, raw: bytes, count: int) -> list[Any]:
    """Const values as Python numbers; whole-byte integers and booleans without importing NumPy (``check``
    reads axes from nearly every model and should not pay for NumPy's import)."""
    code = _STRUCT_CODES.get(etype.name)
    if code is not None:
        return list(struct.unpack(f"<{count}{code}", raw))
    if etype.name == "boolean":
        return [int(b != 0) for b in raw]
    from ovreduce.ir.values import decode  # imports NumPy: only for the rarer types

    values: list[Any] = decode(etype, raw, count).tolist()
    return values


# -- shape-preserving ---------------------------------------------------------------------------------------
class ShapePreserving(Op):
    """Output 0 has the shape and element type of input 0 (the unary ops of :data:`UNARY_SHAPE_PRESERVING`)."""

    layer_reads = "attributes"

    def __init__(self, type: str, boolean_attributes: tuple[str, ...] = ()) -> None:
        self.type = type
        self.boolean_attributes = boolean_attributes
        self.checked = any(type in table for table in (_ENUMS, _REALS, _AXIS, _NOT_BOOLEAN, _REAL_ONLY, _INPUTS))
        self.checked |= type in ("Clamp", "MVN")

    def output_type(self, layer: Layer, src: PortState) -> ElementType | None:
        return src.element_type

    def input_counts(self, layer: Layer) -> range | None:
        if self.type != "MVN":
            return _INPUTS.get(self.type, range(1, 2))
        opset = opset_number(layer.version)
        return range(1, 3) if opset is None else range(2, 3) if opset >= 6 else range(1, 2)

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        layer = ctx.layer
        src = ctx.input(0)
        etype = self.output_type(layer, src)
        if src.shape is None:
            return [PortState(None, etype, "unresolved")]
        if self.checked:
            try:
                self._check(layer, src.shape)
                self._check_inputs(layer, [ctx.input(i) for i in range(len(layer.inputs))])
            except ShapeInferenceError as exc:  # OpenVINO's refusal: the layer breaks the model
                return [PortState(None, etype, "unresolved", f"{layer.type} ({layer.name}): {exc.message}")]
        return [PortState(src.shape, etype, "inferred")]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """A LogicalNot folds (a sub-graph's condition: ``Not(Equal(Size(x), 0))``), a Floor or Ceiling of integers
        (torch's ``//`` of sizes) is its input; a Clamp, Negative, Relu, Sign or Abs of integers (``torch.clamp`` of a
        size) folds as OpenVINO's ``evaluate`` computes it, in the types it does; and what :meth:`fold_values` folds,
        each value in the shape of input 0."""
        folded = super().fold(ctx)
        source = ctx.input(0).element_type if ctx.layer.inputs else None
        if source is not None and source.is_real and self.type in _REAL_FOLDED:
            real = self._fold_reals(ctx, folded, source)
            if real is not None:
                return real
        if source is not None and source.is_integral and self.type == "Sqrt":
            return self._integer_sqrt(ctx, folded, source)
        value = ctx.value(0) if self.type in _FOLDED and ctx.layer.inputs else None
        etype = ctx.input(0).element_type if value is not None else None
        if value is not None and value.values is not None and etype is not None and not evaluates(self.type, etype):
            folded = unevaluated(ctx.layer, etype, folded)
        if value is not None and value.values is not None and etype is not None and evaluates(self.type, etype):
            values = self._values(ctx.layer, etype, value.values)
            if values is not None:
                return ValueInfo("const", values, shape=value.shape)
        if folded.kind == "const" and folded.shape is None and ctx.layer.inputs:
            return ValueInfo("const", folded.values, shape=ctx.value(0).shape)
        if folded.kind == "runtime" and etype is not None and etype.is_integral and evaluates(self.type, etype):
            return self._bounds(ctx, etype, folded)
        return folded

    def _fold_reals(self, ctx: LayerContext, folded: ValueInfo, etype: ElementType) -> ValueInfo | None:
        """Over a constant of a real type (a size divided in f32, floored), the values as OpenVINO's ``evaluate``
        computes them (:mod:`ovreduce.ops.reals`), in the types it does; None where the input is not constant."""
        layer = ctx.layer
        info = ctx.value(0)
        tensor = real_tensor(info)
        if tensor is None or info.kind == "runtime" or len(layer.inputs) != 1:
            return None
        if not evaluates(self.type, etype):
            return unevaluated(layer, etype, folded)
        values, shape = tensor
        oversized = too_large(layer, shape)
        if oversized is not None:
            return oversized
        if self.type == "Clamp":
            low, high = (real_attr(layer, name, 0.0) for name in ("min", "max"))
            if math.isnan(low) or math.isnan(high):
                return None
            low, high = rounded(low, etype), rounded(high, etype)
            op: Callable[[float], float | None] = lambda v: low if v < low else high if v > high else v  # noqa: E731
        elif self.type == "Round":
            rounding = REAL_UNARY.get(layer.data.get("mode", "half_to_even").lower())
            if rounding is None:
                return None
            op = rounding
        else:
            op = REAL_UNARY[self.type]
        out: list[float | None] = []
        for v in values:
            r = op(v) if math.isfinite(v) else None
            out.append(None if r is None else rounded(r, etype))
        return computed(out, shape, etype, f"{layer.type} layer {layer.name!r}")

    def _integer_sqrt(self, ctx: LayerContext, folded: ValueInfo, etype: ElementType) -> ValueInfo:
        """A Sqrt of integers as OpenVINO's ``evaluate`` computes it: the double root of each, rounded half away from
        zero (the root of 8 is 3), in the types it does; not folded for a negative value."""
        if folded.kind != "unresolved" or ctx.value(0).kind != "const":
            return folded
        info = ctx.value(0)
        if not evaluates(self.type, etype):
            return unevaluated(ctx.layer, etype, folded)
        assert info.values is not None
        if any(v < 0 for v in info.values):
            return folded
        roots = [round_half_away(math.sqrt(float(v))) for v in info.values]
        return ValueInfo("const", tuple(int(r) for r in roots), shape=info.shape)

    def _bounds(self, ctx: LayerContext, etype: ElementType, folded: ValueInfo) -> ValueInfo:
        """The elements of a value known in part (a dim ShapeOf gives) through a Clamp or an Abs, as OpenVINO's default
        bound evaluator has them: the op of each lower bound and of each upper one (an unknown upper bound is the
        type's largest value: a Clamp's ``max`` bounds it; a lower bound above the upper one is none); an Abs keeps
        non-negative bounds, and turns bounds wholly below 0 round (``-3..-1`` is ``1..3``, as OpenVINO orders the Abs
        of each bound); of bounds across 0 it keeps none (OpenVINO's ordered ``|lo|..|hi|`` leaves values out: ``-1..8``
        is not ``1..8``). Constant when all are known exactly."""
        known = partial_value(ctx, 0) if self.type in ("Clamp", "Abs") else None
        if known is None:
            return folded
        if self.type == "Abs":
            top = type_limits(etype)[1]
            turned = tuple(
                b if b is None or b[0] >= 0
                else (-b[1], -b[0]) if b[1] is not None and b[1] < 0 and -b[0] <= top
                else None
                for b in known
            )  # fmt: skip
            shape = ctx.input(0).shape
            if shape is None or not shape.is_static:
                return replace(folded, known=turned)
            return pinned(folded, turned, tuple(shape.to_list()))
        top = type_limits(etype)[1]
        given = [b for b in known if b is not None]
        lows = self._values(ctx.layer, etype, tuple(b[0] for b in given))
        highs = self._values(ctx.layer, etype, tuple(top if b[1] is None else b[1] for b in given))
        if lows is None or highs is None:
            return folded
        pairs = iter(zip(lows, highs, strict=True))
        bounds = tuple(None if b is None else next(pairs) for b in known)
        clamped = tuple(  # (bounds out of order, of a min above the max, are none: OpenVINO's dim of them is dynamic)
            None if b is None or b[0] > b[1] else (b[0], None if b[1] >= top else b[1]) for b in bounds
        )
        shape = ctx.input(0).shape
        if shape is None or not shape.is_static:
            return replace(folded, known=clamped)
        return pinned(folded, clamped, tuple(shape.to_list()))

    def _values(self, layer: Layer, etype: ElementType, values: tuple[int, ...]) -> tuple[int, ...] | None:
        """Integers through the op (:data:`_FOLDED`), wrapped into ``etype``; None for a Clamp to NaN (no integer
        bounds). A Clamp's bounds as OpenVINO's ``evaluate`` takes them: the least integer not below ``min``, the
        greatest not above ``max``, each within the type's range (an infinite one its limit)."""
        if self.type == "Clamp":
            low, high = type_limits(etype)
            floor, ceiling = (real_attr(layer, name, 0.0) for name in ("min", "max"))
            if math.isnan(floor) or math.isnan(ceiling):
                return None
            least = low if floor <= low else high if floor >= high else math.ceil(floor)
            most = high if ceiling >= high else low if ceiling <= low else math.floor(ceiling)
            return tuple(least if v < least else most if v > most else v for v in values)
        step: Callable[[int], int] = {
            "LogicalNot": lambda v: int(not v),
            "Negative": lambda v: -v,
            "Relu": lambda v: max(v, 0),
            "ReLU": lambda v: max(v, 0),
            "Sign": lambda v: (v > 0) - (v < 0),
            "Abs": abs,
        }.get(self.type, lambda v: v)  # (Floor, Ceiling: integers are their own)
        return wrapped([step(v) for v in values], etype)

    def _check(self, layer: Layer, shape: PartialShape) -> None:
        """The attributes OpenVINO reads as it makes the op (numbers, enums, an axis), refused in its words."""
        check_enums(layer, _ENUMS.get(self.type, {}))
        reals = [real_attr(layer, name, 0.0) for name in _REALS.get(self.type, ())]
        if self.type == "Clamp" and reals[0] > reals[1]:
            raise ShapeInferenceError(
                f"Attribute 'min' must be less or equal than 'max'. Got: {reals[0]:g} and {reals[1]:g}"
            )
        if self.type in _AXIS and "axis" in layer.data:
            axis, rank = int_attr(layer, "axis", 1), shape.rank
            version = opset_number(layer.version)
            if rank is None or version is None:
                return
            rank = max(rank, 1)  # a scalar is checked as rank 1
            if self.type != "LogSoftmax" and version < 8:  # Softmax-1: an unsigned axis
                if not 0 <= axis < rank:
                    raise ShapeInferenceError(
                        f"Reduction axis ({axis % 2**64}) is out of bounds (argument shape: {shape})."
                    )
            else:
                normalize_axis(axis, rank)

    def _check_inputs(self, layer: Layer, states: list[PortState]) -> None:
        """The element types and ranks OpenVINO checks as it validates the op, refused in its words (where the type is
        the model's or inferred, not a port's precision after a layer without a rule)."""
        types = [typed(s) for s in states]
        first = types[0]
        arithmetic = self.type in _NOT_BOOLEAN or self.type == "Clamp"
        if first is not None and first.kind in ("bool", "string") and arithmetic:
            raise ShapeInferenceError(
                f"Input element type must be numeric. Got: {first}" if self.type == "Clamp"
                else f"This operation does not support input with element type: {first}"
            )  # fmt: skip
        if self.type == "Selu" and len({t for t in types if t is not None}) > 1:
            raise ShapeInferenceError(f"Input element types do not match : {' and '.join(map(str, types))}")
        if self.type == "Swish" and len(states) == 2:
            if types[1] is not None and first is not None and types[1] != first:
                raise ShapeInferenceError(f"Swish inputs must have the same type but they are: {first} and {types[1]}")
            beta = states[1].shape
            if beta is not None and beta.rank not in (None, 0):
                raise ShapeInferenceError(f"Swish input with beta must be scalar but it has rank: {beta.rank}")
        merged = next((t for t in types if t is not None), None) if self.type == "Selu" else first  # (its types merged)
        if merged is not None and not real(merged) and self.type in _REAL_ONLY:
            raise ShapeInferenceError(_REAL_ONLY[self.type].format(merged))
        axes = states[1].shape if len(states) == 2 and self.type in ("MVN", "NormalizeL2") else None
        if axes is not None and self.type == "MVN" and axes.rank not in (None, 1):
            raise ShapeInferenceError(f"Expected 1D tensor for the 'axes' input. Got: {axes}")
        if axes is not None and axes.rank not in (None, 0, 1):
            raise ShapeInferenceError(f"Input axes must be scalar or have rank equal to 1 (axes rank: {axes.rank}).")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.type!r})"


class Convert0(ShapePreserving):
    """Input 0's shape in the layer's ``destination_type``; constant integers pass when they fit."""

    version = "opset1"
    opsets = range(1, LAST_OPSET + 2)  # opset17 holds Convert too

    def __init__(self) -> None:
        super().__init__("Convert")

    def output_type(self, layer: Layer, src: PortState) -> ElementType | None:
        return layer.element_type

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Also the elements of a runtime value known in part (a dim ShapeOf gives, as i32), where they fit the
        destination type, as OpenVINO's bounds pass through a Convert; no value from or to a type OpenVINO does not
        convert (an 8-bit float, nf4, f4e2m1)."""
        folded = super().fold(ctx)
        dst = ctx.layer.element_type
        src = ctx.input(0).element_type if ctx.layer.inputs else None
        if folded.kind == "const" and src is not None and dst is not None and not converts(src, dst):
            return unevaluated(ctx.layer, src if src.name in NOT_CONVERTED else dst, folded)
        if src is not None and dst is not None and (src.is_real or dst.is_real) and converts(src, dst):
            real = self._convert_reals(ctx, src, dst)
            if real is not None:
                return real
            if folded.kind == "runtime" and src.is_integral and dst.name in _CONVERTED_REALS:
                return self._real_bounds(ctx, dst, folded)
        if folded.kind == "const" and src is not None and dst is not None and folded.values is not None:
            return self._largest_kept(ctx, src, dst, folded)
        known = partial_value(ctx, 0) if folded.kind == "runtime" and dst is not None and dst.is_integral else None
        if known is None or dst is None:
            return folded
        if dst.name == "boolean":
            flags = (exact(b) for b in known)
            return replace(folded, known=tuple(None if v is None else (int(v != 0),) * 2 for v in flags))
        lo, hi = type_limits(dst)  # an unknown upper bound stays one (the source type's largest value, the target's)
        fits = [b is not None and lo <= b[0] and (b[1] is None or b[1] <= hi) for b in known]
        return replace(folded, known=tuple(b if fit else None for b, fit in zip(known, fits, strict=True)))

    @staticmethod
    def _real_bounds(ctx: LayerContext, dst: ElementType, folded: ValueInfo) -> ValueInfo:
        """The elements of a runtime value of integers known in part (a dim ShapeOf gives) converted to a real type, as
        OpenVINO's Convert converts each bound (to the nearest value of the type; no upper bound stays none): integral
        values still, which a Convert back to an integer type reads (``2..5`` through f32 and back is ``2..5``). An
        element whose bound the type does not hold exactly where OpenVINO converts through another type first, or not
        finitely, is not known."""
        known = partial_value(ctx, 0)
        if known is None:
            return folded

        def real(v: int) -> int | None:
            r = from_int(v, dst)
            return None if r is None or not math.isfinite(r) else int(r)

        out: list[Bounds | None] = []
        for b in known:
            low = None if b is None else real(b[0])
            high = None if b is None or b[1] is None else real(b[1])
            out.append(None if b is None or low is None or (b[1] is not None and high is None) else (low, high))
        return replace(folded, known=tuple(out))

    def _convert_reals(self, ctx: LayerContext, src: ElementType, dst: ElementType) -> ValueInfo | None:
        """A constant from or to a real type as OpenVINO's Convert computes it: an integer to the nearest value of the
        real type, a real value toward zero to an integer (where it fits: beyond, the machine decides), one real type
        to another to nearest; None where the input is not constant."""
        layer = ctx.layer
        info = ctx.value(0)
        if info.kind == "runtime" or len(layer.inputs) != 1 or dst.name not in _CONVERTED_REALS | _INTEGERS:
            return None
        if src.name not in _CONVERTED_REALS | _INTEGERS:
            return None
        what = f"Convert layer {layer.name!r} to {dst}"
        if src.is_real:
            tensor = real_tensor(info)
            if tensor is None:
                return None
            values, shape = tensor
            out: list[float | None] = []
            for v in values:
                if dst.name == "boolean":
                    out.append(float(v != 0) if math.isfinite(v) else None)
                elif dst.is_integral:
                    n = to_int(v, dst)
                    out.append(None if n is None else float(n))
                else:
                    r = rounded(v, dst)  # (f64 to f16 or bf16 is not rounded twice by OpenVINO: exact ones only)
                    out.append(r if src.name != "f64" or dst.name == "f32" or r == v or not math.isfinite(v) else None)
            if dst.is_integral or dst.name == "boolean":
                if any(v is None for v in out):
                    lo, hi = type_limits(dst)
                    past = "" if dst.name == "boolean" else f"outside [{lo}, {hi}] or "
                    return ValueInfo("unresolved", None, f"{what} changes a value {past}not finite, which ovreduce "
                                                         f"does not fold", shape=shape)  # fmt: skip
                return ValueInfo("const", tuple(int(v) for v in out if v is not None), shape=shape)
            return computed(out, shape, dst, what)
        if info.kind != "const" or info.values is None:
            return None
        given = info.element_shape
        assert given is not None
        return computed([from_int(v, dst) for v in info.values], given, dst, what)

    @staticmethod
    def _largest_kept(ctx: LayerContext, src: ElementType, dst: ElementType, folded: ValueInfo) -> ValueInfo:
        """A constant as OpenVINO's bound evaluation has it through a Convert between integer types both wider than 16
        bits (``convert::evaluate_bound``, which its shape inference reads constants by too): a value at the source
        type's largest is the destination type's largest (no bound), not what the conversion makes of it (u32
        4294967295 to i64 is i64's largest, i64's largest to i32 is i32's)."""
        if not (src.is_integral and dst.is_integral and src.bitwidth > 16 and dst.bitwidth > 16):
            return folded
        given = ctx.value(0).values
        assert folded.values is not None
        if given is None or len(given) != len(folded.values):
            return folded
        top, most = type_limits(src)[1], type_limits(dst)[1]
        if top not in given:
            return folded
        values = tuple(most if v == top else w for v, w in zip(given, folded.values, strict=True))
        return replace(folded, values=values)

    def fold_values(self, layer: Layer, values: Sequence[tuple[int, ...]]) -> ValueInfo | None:
        """The values as OpenVINO's ``evaluate`` converts them: to boolean, 0 is false and the rest true; to another
        integer type, modulo its range, two's complement where signed (i64 -1 to u8 is 255, 300 to u4 12, 3 to u1 1;
        u64 2^64 - 1 to i64 -1)."""
        if not values:
            return None
        dst = layer.element_type
        if dst is None or dst.name == "dynamic":  # OpenVINO cannot evaluate it: "Tensor was not initialized."
            return ValueInfo("unresolved", None, f"Convert layer {layer.name!r} converts to no element type "
                                                 f"(destination_type dynamic or not given), which OpenVINO cannot "
                                                 f"evaluate")  # fmt: skip
        if dst.name == "boolean":  # any value but 0 is true
            return ValueInfo("const", tuple(int(v != 0) for v in values[0]))
        if dst.is_integral:
            return ValueInfo("const", wrapped(values[0], dst))
        return ValueInfo("const", values[0])


_CONVERTED_REALS = frozenset({"f16", "bf16", "f32", "f64"})
_INTEGERS = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "boolean"})
"""The types a Convert folds from and to (:meth:`Convert0._convert_reals`); the others' as the integer rules do."""


# -- attributes only ------------------------------------------------------------------------------------------
class Declared(Op):
    """An op without a shape rule yet (its outputs keep their declared dims), known for its attributes."""

    def __init__(self, type: str, boolean_attributes: tuple[str, ...] = ()) -> None:
        self.type = type
        self.boolean_attributes = boolean_attributes

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.type!r})"
