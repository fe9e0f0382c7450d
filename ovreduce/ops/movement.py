"""Data movement ops, whose shapes read their inputs' values: Reshape, Transpose, Concat, Squeeze, Unsqueeze,
Gather, Split, VariadicSplit, Tile, Broadcast; and ShapeOf and Range, where shapes become values, and RandomUniform,
where a value becomes a shape.

Written after OpenVINO's ``<op>_shape_inference.hpp``. A value a rule needs that is not constant leaves
what OpenVINO infers without it: the rank when it is known, every dim dynamic. Values fold through
Reshape, Squeeze, Unsqueeze, Concat, Gather, ShapeOf and Range (a value keeps its own shape), so that
axes computed from a shape (``Range(0, Rank(ShapeOf(x)))``) are constant wherever OpenVINO knows them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import cast

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import Bounds, LayerContext, PortState, ValueInfo, parse_bool_attr
from ovreduce.ops.elementwise import broadcast_shapes
from ovreduce.ops.reals import real_tensor
from ovreduce.ops.rules import (
    AUTO_BROADCAST,
    BROADCAST,
    ELEMENT_TYPE,
    MAX_VALUE_ELEMENTS,
    PAD_MODE,
    TYPED,
    Enum,
    ShapeRule,
    Tensor,
    bool_attr,
    bounds_dim,
    check_enums,
    const_tensor,
    elements,
    evaluates,
    exact_value,
    expanded,
    int_attr,
    int_value,
    ints_attr,
    normalize_axis,
    partial_value,
    pinned,
    real,
    shape_value,
    str_attr,
    too_large,
    type_limits,
    typed,
    unevaluated,
    value_ports,
    wrapped,
)
from ovreduce.shapes import INT64_MAX, Dimension, PartialShape, const_dim, dim_mul, dim_sum, f32, merge

__all__ = [
    "Broadcast",
    "Concat0",
    "Gather",
    "Pad",
    "RandomUniform8",
    "Range4",
    "Reshape1",
    "ShapeOf",
    "Slice8",
    "Split1",
    "Squeeze",
    "StridedSlice1",
    "Tile0",
    "Transpose1",
    "Unsqueeze0",
    "VariadicSplit1",
]


def _axes_shape(shape: PartialShape) -> PartialShape:
    """The shape of a Squeeze's or Unsqueeze's axes input, refused as OpenVINO refuses it when of rank 2 or more."""
    if shape.rank is not None and shape.rank > 1:
        raise ShapeInferenceError(f"Second input (axes) should not be of rank higher than 1. Got: {shape.rank}")
    return shape


def _bounds(ctx: LayerContext, index: int, values: tuple[int | None, ...] | None) -> tuple[int | None, ...] | None:
    """Slice bounds as OpenVINO reads them (``get_input_bounds``): an i32 value at its type's limit is int64's."""
    etype = ctx.input(index).element_type
    if values is None or etype is None or etype.name != "i32":
        return values
    return tuple(_I64_MAX if v == (1 << 31) - 1 else _I64_MIN if v == -(1 << 31) else v for v in values)


def _input_bounds(ctx: LayerContext, index: int) -> tuple[tuple[int, int] | None, ...] | None:
    """A 1-D input as ``get_input_bounds`` of shape_inference's utils.hpp reads it: each element's lower and upper
    bound in int64 (a constant's ``(v, v)``), an i32 or i64 bound at its type's least or largest value read as
    int64's (an upper bound not known, its type's largest); None for an element ovreduce does not know, and None when
    it knows none."""
    etype = ctx.input(index).element_type
    const = int_value(ctx, index)
    known: tuple[Bounds | None, ...] | None = None if const is None else tuple((v, v) for v in const)
    if known is None:
        info, shape = ctx.value(index), ctx.input(index).shape
        if info.kind != "runtime" or shape is None or shape.rank != 1 or etype is None or not etype.is_integral:
            return None
        known = info.known
    if known is None:
        return None
    low, top = type_limits(etype) if etype is not None and etype.is_integral else (_I64_MIN, _I64_MAX)
    limits = etype is not None and etype.name in ("i32", "i64")

    def bound(v: int) -> int:
        return _I64_MIN if limits and v <= low else _I64_MAX if limits and v >= top else v

    return tuple(None if b is None else (bound(b[0]), bound(top if b[1] is None else b[1])) for b in known)


def _length(shape: PartialShape) -> int | None:
    """The element count of a 1-D (or scalar) value's shape when static."""
    if shape.dims is None or len(shape.dims) > 1:
        return None
    if not shape.dims:
        return 1
    return shape.dims[0].lo if shape.dims[0].is_static else None


def _bounds_lost(ctx: LayerContext, index: int, what: str) -> str | None:
    """Why dims a layer leaves unknown may be known to OpenVINO: input ``index`` (``what``: "by repeats") is computed
    at run time and ovreduce has lost the bounds of some of its elements (an Abs of a value across 0), which OpenVINO's
    bound evaluation may have; None where it knows each element's (or nothing of the value: neither may OpenVINO)."""
    if index >= len(ctx.layer.inputs) or int_value(ctx, index) is not None:
        return None
    known = partial_value(ctx, index)
    if known is None or None not in known:
        return None
    layer = ctx.layer
    return (
        f"dims ovreduce leaves unknown here may be known to OpenVINO: {layer.type} ({layer.name}) {what} computed "
        f"at run time whose elements' bounds ovreduce does not all know (OpenVINO's bound evaluation may)"
    )


class _ValueShaped(ShapeRule):
    """A rule whose output 0 holds values computed from its inputs' values (:meth:`fold_tensor`)."""

    # Whether it only reshapes its input 0: a runtime value (a dim ShapeOf gives at run time, picked by a scalar index;
    # a shape unsqueezed) stays known in part through it, its elements in their order, as OpenVINO's bounds pass
    # through a Reshape, Squeeze, Unsqueeze whose other inputs (the target, the axes) it knows exactly
    reshapes_only = False

    def fold(self, ctx: LayerContext) -> ValueInfo:
        folded = super().fold(ctx)
        data = ctx.value(0) if self.reshapes_only and folded.kind == "runtime" and ctx.layer.inputs else None
        if data is not None and data.known is not None and self._reshapes_known(ctx):
            return replace(folded, known=data.known)
        if folded.kind != "unresolved" or any(v.kind != "const" for v in ctx.input_values()):
            return folded
        tensors = [const_tensor(ctx.value(i)) for i in range(len(ctx.layer.inputs))]
        if any(t is None for t in tensors):
            return folded
        out = self.infer(ctx)
        shape = out[0].shape if out else None
        if shape is None or not shape.is_static:
            return folded
        oversized = too_large(ctx.layer, shape.to_list())
        if oversized is not None:
            return oversized
        result = self.fold_tensor(ctx, [t for t in tensors if t is not None], tuple(shape.to_list()))
        return folded if result is None else ValueInfo("const", result, shape=tuple(shape.to_list()))

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        """The output's flat values; by default input 0's values in the output's shape."""
        return inputs[0][0]

    @staticmethod
    def _reshapes_known(ctx: LayerContext) -> bool:
        """Whether OpenVINO's bounds of input 0 go through: its other inputs known exactly (``has_and_set_bound``)."""
        for index in range(1, len(ctx.layer.inputs)):
            given = exact_value(ctx, index)
            if given is None or None in given:
                return False
        return True


# -- Reshape, Squeeze, Unsqueeze --------------------------------------------------------------------------
class Reshape1(_ValueShaped):
    """Reshape-1: ``special_zero`` (0 copies the input dim), one -1 (inferred from the element count)."""

    reshapes_only = True

    value_inputs = value_ports((1, "Shape pattern", ""))

    type = "Reshape"
    inputs = range(2, 3)
    version = "opset1"
    boolean_attributes = ("special_zero",)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data, target_shape = inputs[0], inputs[1]
        if target_shape.rank not in (None, 1):
            raise ShapeInferenceError(f"Pattern shape must have rank 1, got {target_shape}")
        pattern = self._pattern(ctx, target_shape)
        if pattern is None:
            return [PartialShape.dynamic(_length(target_shape))]
        special_zero = bool_attr(ctx.layer, "special_zero", False)
        out: list[Dimension | None] = []
        for i, p in enumerate(pattern):
            if p is None:
                out.append(None)
            elif isinstance(p, int):
                raise ShapeInferenceError("Dim size cannot be less than -1")
            elif p == _ZERO and special_zero:
                if data.dims is None:
                    out.append(Dimension.dynamic())
                elif i >= len(data.dims):
                    raise ShapeInferenceError(f"'0' dimension is out of range (axis {i} of input shape {data})")
                else:
                    out.append(data.dims[i])
            else:
                out.append(p)
        if None in out:
            # dims copied by special_zero are in neither product; of a dynamic rank, they make both unknown, and the
            # -1 is an output dim of the product (as OpenVINO's reshape has them)
            copied = {i for i, p in enumerate(pattern) if p == _ZERO and special_zero}
            ins = None if data.dims is None else [d for i, d in enumerate(data.dims) if i not in copied]
            outs = [d or Dimension.dynamic() for i, d in enumerate(out) if i not in copied and (d or ins is None)]
            out[out.index(None)] = self._minus_one(ins, outs, unknown=ins is None and bool(copied))
        elif (
            data.is_static
            and all(d is not None and d.is_static for d in out)
            and not (special_zero and _ZERO in pattern)
        ):
            # (OpenVINO counts no elements where special_zero meets a 0)
            n_in = _product_static(data.to_list())
            n_out = _product_static([d.lo for d in out if d is not None])
            if n_in != n_out:
                raise ShapeInferenceError(
                    f"Requested output shape {PartialShape(tuple(d for d in out if d is not None))} is incompatible "
                    f"with input shape {data}"
                )
        return [PartialShape(tuple(d for d in out if d is not None))]

    def loose(self, ctx: LayerContext) -> str | None:
        return _bounds_lost(ctx, 1, "reshapes to a target")

    @staticmethod
    def _pattern(ctx: LayerContext, target_shape: PartialShape) -> list[Dimension | int | None] | None:
        """The target as OpenVINO's ``get_pattern_and_minus_one_idx`` reads its bounds: a dim per element, None for
        the -1 (an int for a constant's other negative element, which is refused); None where ovreduce does not read
        it (a runtime target it does not know). Of a runtime target, in element order as OpenVINO meets them, a second
        element bounded exactly ``-1,-1`` and an element whose bounds are both negative otherwise (``-3,-1``) are its
        refusals."""
        target = int_value(ctx, 1)
        if target is not None:
            if target.count(-1) > 1:
                raise ShapeInferenceError("More than one dimension has size of -1 (-1)")
            return [None if v == -1 else Dimension.static(v) if v >= 0 else v for v in target]
        bounds = partial_value(ctx, 1)
        if bounds is None:
            return None
        pattern: list[Dimension | int | None] = []
        for i, b in enumerate(bounds):
            if b is None:  # a dim ShapeOf gives at run time is never -1
                pattern.append(Dimension.dynamic())
            elif b == (-1, -1):
                if None in pattern:
                    raise ShapeInferenceError("More than one dimension has size of -1")
                pattern.append(None)
            elif b[0] >= -1:  # OpenVINO's Dimension(-1, hi) is 0..hi
                pattern.append(Dimension(max(b[0], 0), b[1]))
            elif b[1] is None or b[1] >= 0:  # only the upper bound valid
                pattern.append(Dimension.dynamic())
            else:
                raise ShapeInferenceError(f"Output pattern dim[{i}] has invalid bounds: {b[0]},{b[1]}")
        return pattern

    @staticmethod
    def _minus_one(ins: list[Dimension] | None, outs: list[Dimension], *, unknown: bool) -> Dimension:
        """The -1 dim, as ``Product::calculate`` and ``resolve_minus_one_dim`` of reshape_shape_inference.hpp have it
        from the input dims ``ins`` and the other output dims ``outs`` (``unknown``: both products are): an input dim
        cancels an equal static output dim (not 0); the static dims' products are kept apart from the others', dropped
        where they are equal; the -1 is the input's over the output's (an interval: the least over the greatest, the
        greatest over the least)."""
        static = [1, 1]  # the static dims' products, of the input and of the outputs
        dynamic = [Dimension.dynamic() if unknown else Dimension.static(1)] * 2
        left = list(outs)
        for side, dims in enumerate((ins or (), left)):
            for d in list(dims):
                if side == 0 and d.is_static and d.lo != 0 and d in left:
                    left.remove(d)
                elif d.is_static:
                    static[side] *= d.lo
                else:
                    dynamic[side] = dim_mul(dynamic[side], d)
        if static[0] != static[1]:
            dynamic = [dim_mul(dynamic[side], Dimension.static(static[side])) for side in (0, 1)]
        if static[1] == 0 and static[0] != 0:
            raise ShapeInferenceError(
                "Cannot infer '-1' dimension with zero-size output dimension unless at least one input dimension is "
                "also zero-size"
            )
        numerator, denominator = dynamic
        exact = numerator.is_static and denominator.is_static
        hi: int | None
        if exact:
            lo, hi = -(-numerator.lo // denominator.lo), numerator.lo // denominator.lo
        else:
            hi = numerator.hi
            if hi is not None and denominator.lo != 0 and not denominator.is_fully_dynamic:
                hi //= denominator.lo
            elif hi is not None:
                hi = None
            lo = numerator.lo
            if denominator.hi != 0:  # ``ceil_div`` by the greatest (its type's largest value when unbounded)
                lo = 0 if lo == 0 else 1 + (lo - 1) // (INT64_MAX if denominator.hi is None else denominator.hi)
        if hi is not None and hi < lo:  # empty: refused where it is a static dim, else OpenVINO's empty dim
            if exact and static[1] != 0:
                raise ShapeInferenceError("Non-'-1' output dimensions do not evenly divide the input dimensions")
            return Dimension.dynamic()
        return Dimension(lo, hi)


_ZERO = Dimension.static(0)


def _product_static(values: Sequence[int]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


class Squeeze(_ValueShaped):
    """Squeeze-0 / Squeeze-15 (``squeeze_shape_inference.hpp``): removes the dims the axes point at that may be 1
    (one pointed at that cannot be 1 stays), or, with no axes or empty ones, every dim of size 1. Squeeze-15's
    ``allow_axis_skip`` makes the rank dynamic where a pointed dynamic dim may or may not be 1."""

    reshapes_only = True

    value_inputs = value_ports((1, "Axes", "~"))  # (floats are cast to integers)
    type = "Squeeze"
    inputs = range(1, 3)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.boolean_attributes = ("allow_axis_skip",) if version == "opset15" else ()

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data = inputs[0]
        one = Dimension.static(1)
        pointed: set[int] = set()
        if len(inputs) >= 2:
            axes_shape = _axes_shape(inputs[1])
            axes = int_value(ctx, 1)
            if axes is None or data.dims is None:
                if data.dims and axes_shape.is_static and _length(axes_shape) == 1:  # one axis, value unknown
                    if not any(d.compatible(one) for d in data.dims):
                        return [data]
                    return [PartialShape.dynamic(len(data.dims) - 1 if self.version == "opset1" else None)]
                return [PartialShape(None)]
            pointed = {normalize_axis(a, len(data.dims)) for a in axes}
        if data.dims is None:
            return [data]
        if not pointed:
            if any(not d.is_static and d.compatible(one) for d in data.dims):
                return [PartialShape(None)]  # which of them are 1 is known only at run time
            return [PartialShape(tuple(d for d in data.dims if d != one))]
        skip = parse_bool_attr(ctx.layer.data.get("allow_axis_skip"))[0] if self.version == "opset15" else False
        if skip and any(not d.is_static and d.compatible(one) for i, d in enumerate(data.dims) if i in pointed):
            return [PartialShape(None)]
        return [PartialShape(tuple(d for i, d in enumerate(data.dims) if i not in pointed or not d.compatible(one)))]


class Unsqueeze0(_ValueShaped):
    value_inputs = value_ports((1, "Axes", "~"))  # (floats are cast to integers)
    type = "Unsqueeze"
    inputs = range(2, 3)
    version = "opset1"
    reshapes_only = True

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        """``unsqueeze_shape_inference.hpp``: axes normalised against the rank their distinct values make; two that
        name one place after that (``[2, -1]`` of a 1-D input) insert once, and one past the end appends."""
        data = inputs[0]
        _axes_shape(inputs[1])
        axes = int_value(ctx, 1)
        if data.dims is None or axes is None:  # OpenVINO 2026.4 gives no rank even for one axis of unknown value
            return [PartialShape(None)]
        if not axes:
            raise ShapeInferenceError("'axes' input is mandatory")
        distinct = set(axes)
        out = list(data.dims)
        for axis in sorted({normalize_axis(a, len(data.dims) + len(distinct)) for a in distinct}):
            if axis > len(out) + 1:
                raise ShapeInferenceError(f"provided 'axes' value {axis} is not valid.")
            out.insert(axis, Dimension.static(1))  # past the end: appended, as list.insert does
        return [PartialShape(tuple(out))]


# -- Transpose, Concat, Gather ----------------------------------------------------------------------------
class Transpose1(_ValueShaped):
    type = "Transpose"
    inputs = range(2, 3)
    version = "opset1"
    value_inputs = value_ports((1, "Input order", "1"))

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data, order_shape = inputs[0], inputs[1]
        order = int_value(ctx, 1)
        if data.dims is None:
            n = _length(order_shape)
            return [PartialShape.dynamic(n) if n else PartialShape(None)]
        rank = len(data.dims)
        n = _length(order_shape)
        if n is not None and n not in (0, rank):
            raise ShapeInferenceError("Input order must have shape [n], where n is the rank of arg.")
        if order is None:
            return [PartialShape.dynamic(rank)]
        if not order:
            return [PartialShape(tuple(reversed(data.dims)))]
        if len(order) != rank or sorted(order) != list(range(rank)):
            raise ShapeInferenceError(f"Permutation {list(order)} is not valid for input shape {data}")
        return [PartialShape(tuple(data.dims[i] for i in order))]

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        values, shape = inputs[0]
        if len(shape) <= 1:
            return values
        return None


class Concat0(_ValueShaped):
    """Concat-0: the ``axis`` dims add up, the others merge."""

    type = "Concat"
    inputs = range(1, 2**31)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        if len({t for t in (typed(ctx.input(i)) for i in range(len(inputs))) if t is not None}) > 1:
            raise ShapeInferenceError("Argument element types are inconsistent.")
        axis = int_attr(ctx.layer, "axis", 0)
        out: list[Dimension] | None = None
        along: list[Dimension] = []  # (summed at once: past int64 the sum stays "?", as OpenVINO's)
        for shape in inputs:
            if shape.dims is None:
                along.append(Dimension.dynamic())
                continue
            if not shape.dims:  # (OpenVINO's words name no layer)
                raise ShapeInferenceError(f"Accessing out-of-range dimension (a scalar has no axis {axis} to "
                                          f"concatenate along)")  # fmt: skip
            a = normalize_axis(axis, len(shape.dims), "Concatenation axis")
            dims = list(shape.dims)
            along.append(dims[a])
            if out is None:
                out = dims
                continue
            if len(out) != len(dims):
                raise ShapeInferenceError("Argument shapes are inconsistent; they must have the same rank.")
            for i, d in enumerate(dims):
                if i == a:
                    continue
                m = merge(out[i], d)
                if m is None:
                    raise ShapeInferenceError(
                        "Argument shapes are inconsistent; they must have the same rank, and must have equal "
                        "dimension everywhere except on the concatenation axis"
                    )
                out[i] = m
        if out is None:
            return [PartialShape(None)]
        out[normalize_axis(axis, len(out), "Concatenation axis")] = dim_sum(along)
        return [PartialShape(tuple(out))]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Also the elements of 1-D values partly known (a shape put together from ShapeOf's dims and constants), as
        OpenVINO's partial values know them; those of a part ovreduce does not fold (a constant sub-graph OpenVINO
        folds) are not known, the others kept."""
        folded = super().fold(ctx)
        if folded.kind != "runtime" or not ctx.layer.inputs:
            return folded
        known: list[Bounds | None] = []
        for index in range(len(ctx.layer.inputs)):
            info, part = ctx.value(index), partial_value(ctx, index)
            shape = ctx.input(index).shape
            if part is None and info.kind == "unresolved" and info.reals is None and shape is not None:
                # a constant sub-graph ovreduce does not fold (OpenVINO does): elements not known, the others kept
                length = _length(shape) if shape.rank == 1 else None
                part = None if length is None else (None,) * length
            if part is None or (info.kind == "const" and info.element_shape != (len(part),)):
                return self._pieces(ctx, folded)
            known += part
            if len(known) > MAX_VALUE_ELEMENTS:  # a value too large to compute: its elements are not kept either
                return folded
        return replace(folded, known=tuple(known))

    @staticmethod
    def _pieces(ctx: LayerContext, folded: ValueInfo) -> ValueInfo:
        """``folded`` knowing its :attr:`~ovreduce.ops.base.ValueInfo.pieces` where the Concat gives a 1-D value of as
        many elements as it has inputs (each Const input's first element, as OpenVINO's Broadcast reads them)."""
        count = len(ctx.layer.inputs)
        total = 0
        for index in range(count):
            shape = ctx.input(index).shape
            if shape is None or shape.dims is None or len(shape.dims) != 1 or not shape.dims[0].is_static:
                return folded
            total += shape.dims[0].lo
        if total != count:
            return folded
        pieces: list[int | None] = []
        for index in range(count):
            const = int_value(ctx, index) if ctx.input(index).origin == "const" else None
            pieces.append(const[0] if const else None)
        return replace(folded, pieces=tuple(pieces))

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        axis = normalize_axis(int_attr(ctx.layer, "axis", 0), len(out_shape))
        outer = _product_static(out_shape[:axis])
        chunks = []
        for values, shape in inputs:
            inner = _product_static(shape[axis:])
            chunks.append([values[o * inner : (o + 1) * inner] for o in range(outer)])
        return tuple(v for o in range(outer) for chunk in chunks for v in chunk[o])


class Gather(_ValueShaped):
    """Gather-1/7/8: data[:axis] + indices[batch_dims:] + data[axis+1:]; ``axis`` a value, ``batch_dims``
    an attribute (Gather-1 has none)."""

    value_inputs = value_ports((1, "Indices", ""), (2, "Axis", ""))

    type = "Gather"
    inputs = range(3, 4)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets

    def _batch_dims(self, ctx: LayerContext, indices_rank: int | None) -> int:
        """``batch_dims`` as OpenVINO reads it (``get_batch_dims``): a negative one counts from the indices' rank, and
        may stay negative (an index from the end)."""
        batch_dims = 0 if self.version == "opset1" else int_attr(ctx.layer, "batch_dims", 0)
        return batch_dims + indices_rank if batch_dims < 0 and indices_rank is not None else batch_dims

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data, indices = inputs[0], inputs[1]
        axis_value = int_value(ctx, 2)
        batch_dims = self._batch_dims(ctx, None if indices.dims is None else len(indices.dims))
        if batch_dims < 0 and indices.dims is None:
            return [PartialShape(None)]
        if indices.dims is not None and batch_dims > len(indices.dims):
            raise ShapeInferenceError(f"The batch_dims must be <= indices_rank. But instead got: batch_dims = "
                                      f"{batch_dims}, indices_rank = {len(indices.dims)}")  # fmt: skip
        if axis_value is not None and len(axis_value) != 1:
            raise ShapeInferenceError("Axis input must be a scalar or a 1-D tensor of one element")
        axis = None if axis_value is None else axis_value[0]
        if data.dims == ():
            raise ShapeInferenceError(
                "Accessing out-of-range dimension (the data is a scalar: no axis to gather along)"
            )
        if axis is not None and data.dims is not None:
            axis = normalize_axis(axis, len(data.dims))
        if axis is not None and batch_dims > axis >= 0:  # known without the data's rank
            raise ShapeInferenceError(
                f"The batch_dims {batch_dims} must be less than or equal to the axis value {axis}"
            )
        if data.dims is None or indices.dims is None:
            return [PartialShape(None)]
        if axis is None:
            return [PartialShape.dynamic(len(data.dims) + len(indices.dims) - 1 - batch_dims)]
        # gather_shape_inference.hpp's four loops, indices from the end as PartialShape's operator[] takes them
        rank = len(indices.dims)
        out: list[Dimension] = []
        try:
            for i in range(len(data.dims) + rank - 1 - batch_dims):
                if i < batch_dims:
                    m = merge(data.dims[i], indices.dims[i])
                    if m is None:
                        raise ShapeInferenceError("Data and indices batch dimensions must match")
                    out.append(m)
                elif i < axis:
                    out.append(data.dims[i])
                elif i < axis + rank - batch_dims:
                    out.append(indices.dims[batch_dims - axis + i])
                else:
                    out.append(data.dims[batch_dims + 1 - rank + i])
        except IndexError:
            raise ShapeInferenceError("Accessing out-of-range dimension") from None
        return [PartialShape(tuple(out))]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Also the elements constant indices pick from a value known in part (a ShapeOf of a partly dynamic shape,
        unsqueezed too, with ``batch_dims``): constant when all are known, as OpenVINO folds them; no constant data of
        a type OpenVINO does not gather (i16, u16, f64)."""
        etype = ctx.input(0).element_type if ctx.layer.inputs else None
        constant = all(v.kind == "const" for v in ctx.input_values())
        if constant and etype is not None and not evaluates(self.type, etype):
            return unevaluated(ctx.layer, etype, super().fold(ctx))
        folded = super().fold(ctx)
        data = elements(ctx, 0) if folded.kind == "runtime" and len(ctx.layer.inputs) == 3 else None
        indices, axis = (const_tensor(ctx.value(i)) for i in (1, 2)) if data is not None else (None, None)
        if data is None or indices is None or axis is None or len(axis[0]) != 1:
            return folded
        plan = self._positions(ctx, data[1], indices, axis[0][0])
        if plan is None:
            return folded
        return pinned(folded, tuple((0, 0) if i is None else data[0][i] for i in plan[0]), plan[1])

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        (values, shape), indices, (axis, _) = inputs
        plan = self._positions(ctx, shape, indices, axis[0])
        return None if plan is None or plan[1] != out_shape else tuple(0 if i is None else values[i] for i in plan[0])

    def _positions(
        self, ctx: LayerContext, shape: tuple[int, ...], indices: Tensor, axis: int
    ) -> tuple[list[int | None], tuple[int, ...]] | None:
        """The flat positions in data of ``shape`` that the gather takes, in the output's order, and the output's
        shape, as OpenVINO's reference ``gather`` takes them (``batch_dims`` leading dims shared by data and indices;
        a negative index counts from the end; an index out of range, even so, takes none, and its elements are 0 in
        every Gather version); None where it would not gather."""
        flat, index_shape = indices
        batch = self._batch_dims(ctx, len(index_shape))
        if not shape or not -len(shape) <= axis < len(shape):
            return None
        axis %= len(shape)
        if not 0 <= batch <= axis or batch > len(index_shape) or shape[:batch] != index_shape[:batch]:
            return None
        batches, outer = math.prod(shape[:batch]), math.prod(shape[batch:axis])
        size, inner = shape[axis], math.prod(shape[axis + 1 :])
        per_batch = math.prod(index_shape[batch:])
        picks = [i + size if i < 0 else i for i in flat]
        positions = [
            ((b * outer + o) * size + pick) * inner + k if 0 <= (pick := picks[b * per_batch + j]) < size else None
            for b in range(batches) for o in range(outer) for j in range(per_batch) for k in range(inner)
        ]  # fmt: skip
        return positions, (*shape[:axis], *index_shape[batch:], *shape[axis + 1 :])


# -- Split, VariadicSplit, Tile, Broadcast ------------------------------------------------------------------
class Split1(ShapeRule):
    """Split-1: ``num_splits`` equal parts along the axis value."""

    value_inputs = value_ports((1, "'axis' input", "0"))

    type = "Split"
    inputs = range(2, 3)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data = inputs[0]
        parts = int_attr(ctx.layer, "num_splits", 0)  # none written: OpenVINO reads 0 and refuses it
        if parts == 0:
            raise ShapeInferenceError("Attribute 'num_splits' must be greater than zero. Got: 0")
        parts %= 1 << 64  # OpenVINO reads it as an unsigned size: -1 is 2**64 - 1
        count = min(parts, len(ctx.layer.outputs))  # the shapes of the ports the layer has, however many parts
        axis_value = int_value(ctx, 1)
        if data.dims is None:
            return [data] * count
        if data.dims == ():
            raise ShapeInferenceError("Accessing out-of-range dimension (the data is a scalar: no axis to split)")
        if axis_value is None:
            return [PartialShape.dynamic(len(data.dims))] * count
        axis = normalize_axis(axis_value[0], len(data.dims))
        d = data.dims[axis]
        if d.is_static and d.lo % parts:
            raise ShapeInferenceError(
                f"Dimension of data input shape along 'axis': {d.lo} must be evenly divisible by 'num_splits' "
                f"attribute value: {parts}"
            )
        if d.is_static:
            part = Dimension.static(d.lo // parts)
        else:  # split_shape_inference.hpp: each bound times 1/num_splits in float32, truncated
            if d.hi is not None and d.hi < parts:
                raise ShapeInferenceError(
                    f"The interval maximum of the dimension for data input shape along 'axis' must be greater or "
                    f"equal to 'num_splits' attribute. Got: {d} and {parts}"
                )
            share = f32(1.0 / f32(parts))
            part = Dimension(int(f32(f32(d.lo) * share)), None if d.hi is None else int(f32(f32(d.hi) * share)))
        dims = list(data.dims)
        dims[axis] = part
        return [PartialShape(tuple(dims))] * count

    def fold(self, ctx: LayerContext) -> ValueInfo:
        return self.fold_output(ctx, 0)

    def fold_output(self, ctx: LayerContext, index: int) -> ValueInfo:
        return self.fold_outputs(ctx, index + 1)[index]

    def fold_outputs(self, ctx: LayerContext, count: int) -> Sequence[ValueInfo]:
        """The parts of a value constant or known in part, as OpenVINO's ``evaluate`` and its bounds (the axis known
        exactly) split it."""
        parts = int_attr(ctx.layer, "num_splits", 0)  # none written: OpenVINO reads 0 and refuses it
        axis, data = int_value(ctx, 1), _split_data(ctx)
        if axis is None or len(axis) != 1 or data is None or not data[1] or parts <= 0:
            return (super().fold(ctx),) * count
        size = data[1][normalize_axis(axis[0], len(data[1]))] // parts
        return _split_parts(super().fold(ctx), data, axis[0], [size] * parts, count)


class VariadicSplit1(ShapeRule):
    """VariadicSplit-1: parts of ``split_lengths`` along ``axis`` (one -1 takes the rest)."""

    value_inputs = value_ports((1, "Axis", "01"), (2, "Split lengths", "1"))

    type = "VariadicSplit"
    inputs = range(3, 4)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data = inputs[0]
        n = _length(inputs[2])  # one output per split length, whatever the layer declares
        n = len(ctx.layer.outputs) if n is None else n
        axis_value, lengths = int_value(ctx, 1), int_value(ctx, 2)
        axis_dims = inputs[1].dims
        if axis_dims and (len(axis_dims) != 1 or not axis_dims[0].compatible(Dimension.static(1))):
            raise ShapeInferenceError(f"Axis should be a scalar or of shape [1]. Got {inputs[1]} instead.")
        if data.dims is None:
            return [data] * n
        if axis_value is None:
            return [PartialShape.dynamic(len(data.dims))] * n
        if data.dims == ():
            raise ShapeInferenceError("Accessing out-of-range dimension (the data is a scalar: no axis to split)")
        axis = normalize_axis(axis_value[0], len(data.dims))
        if lengths is None:  # only the split dim is unknown (variadic_split_shape_inference.hpp)
            return [PartialShape(tuple(Dimension.dynamic() if i == axis else d for i, d in enumerate(data.dims)))] * n
        rest = None  # the index of the one length -1, which takes what the others leave
        for i, v in enumerate(lengths):
            if v < -1:
                raise ShapeInferenceError(f"Invalid value {v} in split lengths input. Should be >= -1.")
            if v == -1:
                if rest is not None:
                    raise ShapeInferenceError(f"Cannot infer split with multiple -1 values at {rest} and {i}")
                rest = i
        known = sum(v for v in lengths if v != -1)
        d = data.dims[axis]
        sizes = list(lengths)
        if d.is_static:
            if rest is not None:
                sizes[rest] = d.lo - known
            elif known != d.lo:
                raise ShapeInferenceError(
                    f"Total length of splits: {known} must match the length of the chosen axis: {d}"
                )
        out = []
        for v in sizes:
            dims = list(data.dims)
            # OpenVINO's Dimension(v): -1 is dynamic (a rest of -1 too), a rest below it an empty dim
            dims[axis] = const_dim(v)
            out.append(PartialShape(tuple(dims)))
        return out

    def fold(self, ctx: LayerContext) -> ValueInfo:
        return self.fold_output(ctx, 0)

    def fold_output(self, ctx: LayerContext, index: int) -> ValueInfo:
        return self.fold_outputs(ctx, index + 1)[index]

    def fold_outputs(self, ctx: LayerContext, count: int) -> Sequence[ValueInfo]:
        """The parts of a value constant or known in part, as OpenVINO's ``evaluate`` and its bounds (the axis and the
        split lengths known exactly) split it."""
        axis, lengths, data = int_value(ctx, 1), int_value(ctx, 2), _split_data(ctx)
        if axis is None or len(axis) != 1 or lengths is None or data is None or not data[1] or lengths.count(-1) > 1:
            return (super().fold(ctx),) * count
        size = data[1][normalize_axis(axis[0], len(data[1]))]
        rest = size - sum(v for v in lengths if v != -1)
        sizes = [rest if v == -1 else v for v in lengths]
        return _split_parts(super().fold(ctx), data, axis[0], sizes, count)


def _split_data(ctx: LayerContext) -> tuple[tuple[Bounds | None, ...], tuple[int, ...]] | None:
    """The data a Split or VariadicSplit splits, as far as it is known; None where OpenVINO evaluates no part of it
    (an axis of other than an integer type, ``has_evaluate``)."""
    if len(ctx.layer.inputs) < 2:
        return None
    axis_type = ctx.input(1).element_type
    return elements(ctx, 0) if axis_type is not None and axis_type.is_integral else None


def _split_parts(
    folded: ValueInfo, data: tuple[tuple[Bounds | None, ...], tuple[int, ...]], axis: int, sizes: list[int], count: int
) -> tuple[ValueInfo, ...]:
    """Parts ``0 .. count - 1`` of ``data`` cut along ``axis`` in parts of ``sizes``: each constant where every element
    it holds is known exactly, else ``folded`` (the layer's value as the base rule has it) with the elements it knows
    when runtime; ``folded`` for a part past ``sizes``."""
    known, shape = data
    axis = normalize_axis(axis, len(shape))
    if any(v < 0 for v in sizes) or sum(sizes) != shape[axis]:
        return (folded,) * count
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    parts: list[ValueInfo] = []
    begin = 0
    for size in sizes[:count]:
        picked = tuple(
            known[(o * shape[axis] + i) * inner + k] for o in range(outer) for i in range(begin, begin + size)
            for k in range(inner)
        )  # fmt: skip
        parts.append(pinned(folded, picked, (*shape[:axis], size, *shape[axis + 1 :])))
        begin += size
    return (*parts, *(folded,) * (count - len(parts)))


class Tile0(_ValueShaped):
    """Tile-0: each dim times its repeat; values fold (``torch.repeat`` of sizes)."""

    type = "Tile"
    inputs = range(2, 3)
    version = "opset1"
    value_inputs = value_ports((1, "Tile repeats", "1"))

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data, repeats_shape = inputs[0], inputs[1]
        repeats = shape_value(ctx, 1)  # a repeat ShapeOf gives at run time is a dim: never negative
        if repeats is not None and int_value(ctx, 1) is None and any(r is not None and r[0] < 0 for r in repeats):
            repeats = None  # a negative constant beside runtime repeats: not judged
        if repeats is None:
            n = _length(repeats_shape)
            if data.dims is None or n is None:
                return [PartialShape(None)]
            return [PartialShape.dynamic(max(len(data.dims), n))]
        if data.dims is None:
            return [PartialShape(None)]
        if any(r is not None and r[0] < 0 for r in repeats):
            raise ShapeInferenceError("Tile repeats must be non-negative")
        rank = max(len(data.dims), len(repeats))
        dims = (Dimension.static(1),) * (rank - len(data.dims)) + data.dims
        reps = [Dimension.static(1)] * (rank - len(repeats)) + [bounds_dim(r) or Dimension.dynamic() for r in repeats]
        return [PartialShape(tuple(dim_mul(d, r) for d, r in zip(dims, reps, strict=True)))]

    def loose(self, ctx: LayerContext) -> str | None:
        return _bounds_lost(ctx, 1, "tiles by repeats")

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Also the elements of a value known in part (a ShapeOf of a partly dynamic shape) tiled by constant repeats,
        as OpenVINO's default bound evaluator tiles their bounds (``has_and_set_bound`` of the repeats)."""
        folded = super().fold(ctx)
        data = elements(ctx, 0) if folded.kind == "runtime" and len(ctx.layer.inputs) == 2 else None
        repeats = int_value(ctx, 1) if data is not None else None
        if data is None or repeats is None or any(r < 0 for r in repeats):
            return folded
        known, shape = data
        rank = max(len(shape), len(repeats))
        dims = (1,) * (rank - len(shape)) + shape
        out_shape = tuple(d * r for d, r in zip(dims, (1,) * (rank - len(repeats)) + repeats, strict=True))
        if math.prod(out_shape) > MAX_VALUE_ELEMENTS:
            return folded
        return pinned(folded, tuple(known[at] for at in _tiled(shape, out_shape)), out_shape)

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        values, shape = inputs[0]
        return tuple(values[at] for at in _tiled(shape, out_shape))


def _tiled(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> Iterator[int]:
    """The flat position in data of ``shape`` of each output element of a Tile to ``out_shape``, in order: the data's
    at its index modulo the data's dims (padded with 1 in front)."""
    dims = (1,) * (len(out_shape) - len(shape)) + shape
    strides = [math.prod(dims[axis + 1 :]) for axis in range(len(dims))]
    return (sum(i % d * s for i, d, s in zip(index, dims, strides, strict=True))
            for index in itertools.product(*map(range, out_shape)))  # fmt: skip


class Broadcast(_ValueShaped):
    """Broadcast-1/3: ``mode`` numpy (the target shape), bidirectional (numpy rules both ways), explicit
    (the target shape, data dims placed by ``axes_mapping``). Values fold through the numpy and bidirectional modes
    (torch's ``split`` into equal parts broadcasts a part's size to a list of sizes)."""

    value_inputs = value_ports((1, "Target shape", "1"), (2, "Axes mapping", ""))

    type = "Broadcast"

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.enums = {"mode": AUTO_BROADCAST if version == "opset1" else BROADCAST}

    def input_counts(self, layer: Layer) -> range:
        """Broadcast-3 takes an axes mapping in its explicit mode only, Broadcast-1 in its pdpd mode too (it reads
        one there) and in any other (where it reads none)."""
        mode = str_attr(layer, "mode", "numpy")
        if self.version == "opset1":
            return range(3, 4) if mode == "pdpd" else range(2, 4)
        return range(3, 4) if mode in ("explicit", "none") else range(2, 3)

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data, target_shape = inputs[0], inputs[1]
        mode = str_attr(ctx.layer, "mode", "numpy")
        if mode in ("explicit", "none") and len(inputs) == 2:  # Broadcast-1 without axes mapping: numpy, as OpenVINO
            mode = "numpy"  # reads it (Broadcast-3 takes no such count)
        shape_value(ctx, 1)  # a target computed to a negative value: OpenVINO's refusal
        target = int_value(ctx, 1)
        if mode in ("explicit", "none"):
            self._check_axes_mapping(ctx, data, inputs[2], target)
        pieces = ctx.value(1).pieces if target is None else None
        if pieces is not None and partial_value(ctx, 1) is None:  # its bounds do not evaluate: a Concat's Consts
            return [self._of_pieces(data, pieces, mode)]
        if mode in ("explicit", "none") and target is None:  # the target's elements as far as they are known
            given = partial_value(ctx, 1)
            if given is not None and all(b is None or b[0] >= 0 for b in given):
                return [PartialShape(tuple(bounds_dim(b) or Dimension.dynamic() for b in given))]
        known = partial_value(ctx, 1) if mode in ("numpy", "bidirectional") and data.dims is not None else None
        if known is not None and all(b is None or b[0] >= 0 for b in known):  # the target, or ShapeOf's dims' bounds
            wanted = tuple(bounds_dim(b) or Dimension.dynamic() for b in known)
            return [self._known_in_part(data.dims or (), wanted, mode)]
        if target is None:
            n = _length(target_shape)
            if mode == "bidirectional":  # a target of n dims unknown, merged with the data's (numpy rules), as
                if n is None or data.dims is None:  # broadcast_base_shape_infer merges them
                    return [PartialShape(None)]
                return [broadcast_shapes(PartialShape.dynamic(n), data, "numpy")]
            return [PartialShape.dynamic(n) if n is not None else PartialShape(None)]
        if any(v < 0 for v in target):
            raise ShapeInferenceError(f"Broadcast target shape {list(target)} holds a negative dim")
        target_ps = PartialShape.static(target)
        if mode == "bidirectional":
            return [broadcast_shapes(data, target_ps, "numpy")]
        if mode == "pdpd" and data.dims is None:  # set_result_shape_pdpd: the target's rank, no dim known
            return [PartialShape.dynamic(len(target))]
        if mode == "pdpd" and data.dims is not None:
            if len(data.dims) > len(target):
                raise ShapeInferenceError(
                    f"Broadcast target_shape has smaller rank {len(target)} than arg shape {len(data.dims)}"
                )
            return [self._pdpd(data.dims, target)]
        return [target_ps]

    def loose(self, ctx: LayerContext) -> str | None:
        return _bounds_lost(ctx, 1, "broadcasts to a target")

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        if str_attr(ctx.layer, "mode", "numpy") not in ("numpy", "bidirectional"):
            return None
        return expanded(inputs[0], out_shape)

    @classmethod
    def _of_pieces(cls, data: PartialShape, pieces: tuple[int | None, ...], mode: str) -> PartialShape:
        """The result of a target a Concat puts together of one-element pieces whose bounds do not evaluate, as
        ``broadcast_base_shape_infer`` reads it: each Const piece's value a dim (a negative one, -1 too, 0), the others
        dynamic."""
        wanted = tuple(Dimension.dynamic() if v is None else const_dim(max(v, 0)) for v in pieces)
        if mode in ("explicit", "none"):
            return PartialShape(wanted)
        if data.dims is None:  # (validated against a data rank only; bidirectional then knows no rank)
            return PartialShape(None) if mode == "bidirectional" else PartialShape.dynamic(len(wanted)) if mode == (
                "pdpd") else PartialShape(wanted)  # fmt: skip
        if mode == "pdpd":
            return cls._pdpd_in_part(data.dims, wanted)
        return cls._known_in_part(data.dims, wanted, mode)

    @staticmethod
    def _pdpd_in_part(data: tuple[Dimension, ...], target: tuple[Dimension, ...]) -> PartialShape:
        """``set_result_shape_pdpd`` (axis 0) of a target known in part: a data dim 1 takes the target's, a target
        dim 1 the data's, other dims merge."""
        if len(data) > len(target):
            raise ShapeInferenceError(
                f"Broadcast target_shape has smaller rank {len(target)} than arg shape {len(data)}"
            )
        out = list(target)
        for i, t in enumerate(target):
            if i >= len(data):
                raise ShapeInferenceError("Accessing out-of-range dimension (pdpd aligns the data with the target's "
                                          "first dims)")  # fmt: skip
            d = data[i]
            if d.is_static and d.lo == 1:
                continue
            if t.is_static and t.lo == 1:
                out[i] = d
                continue
            m = merge(t, d)
            if m is None:
                raise ShapeInferenceError(f"Broadcast incorrect target shape. Expecting either 1 or {d} . Got {t}")
            out[i] = m
        return PartialShape(tuple(out))

    @staticmethod
    def _known_in_part(data: tuple[Dimension, ...], target: tuple[Dimension, ...], mode: str) -> PartialShape:
        """The numpy or bidirectional result of a target known in whole or in part (its elements' bounds): a dim it
        does not know is dynamic (numpy) or the data's where that is static and not 1 (bidirectional)."""
        wanted = PartialShape(target)
        if mode == "bidirectional":
            return broadcast_shapes(PartialShape(data), wanted, "numpy")
        if len(data) > len(target):
            raise ShapeInferenceError(
                f"Broadcast target_shape has smaller rank {len(target)} than arg shape {len(data)}"
            )
        for d, t in zip(reversed(data), reversed(target), strict=False):
            if t.is_static and d.is_static and d.lo not in (1, t.lo):
                raise ShapeInferenceError(f"Broadcast incorrect target shape. Expecting either 1 or {t.lo}. Got {d.lo}")
        return wanted

    @staticmethod
    def _pdpd(data: tuple[Dimension, ...], target: tuple[int, ...]) -> PartialShape:
        """``set_result_shape_pdpd`` from the mode's axis, 0 in an IR: each target dim against the data's dim of the
        same index (a data dim 1 takes the target's, a target dim 1 the data's)."""
        out = [Dimension.static(t) for t in target]
        for i, t in enumerate(target):
            if i >= len(data):
                raise ShapeInferenceError("Accessing out-of-range dimension (pdpd aligns the data with the target's "
                                          "first dims)")  # fmt: skip
            d = data[i]
            if t == 1 and not (d.is_static and d.lo == 1):
                out[i] = d
            elif d.is_static and d.lo not in (1, t):
                raise ShapeInferenceError(f"Broadcast incorrect target shape. Expecting either 1 or {d.lo} . Got {t}")
        return PartialShape(tuple(out))

    @staticmethod
    def _check_axes_mapping(
        ctx: LayerContext, data: PartialShape, axes_shape: PartialShape, target: tuple[int, ...] | None
    ) -> None:
        """Explicit mode's ``axes_mapping``: one axis per data dim, sorted, within the target, each data dim 1 or
        the target's dim there (``broadcast_base_shape_infer``, ``validate_target_shape_none``)."""
        if data.dims is None or axes_shape.dims is None or not axes_shape.is_static or len(axes_shape.dims) != 1:
            return
        count = axes_shape.dims[0].lo
        rank = 1 if not data.dims and count > 0 else len(data.dims)
        if count != rank:
            raise ShapeInferenceError(f"Broadcast axes_mapping shape {axes_shape} doesn't match rank of input tensor "
                                      f"{rank}")  # fmt: skip
        mapping = int_value(ctx, 2)
        if target is None or mapping is None:
            return
        if list(mapping) != sorted(mapping):
            raise ShapeInferenceError(f"Broadcast doesn't permit transposes. axes_mapping {list(mapping)} not in "
                                      f"sorted order")  # fmt: skip
        one = Dimension.static(1)
        for i, axis in enumerate(mapping):
            if not 0 <= axis < len(target):
                raise ShapeInferenceError(f"Broadcast axes_mapping[{i}]: {axis} exceeds target rank {len(target)}")
            wanted = Dimension.static(target[axis])
            if not data.dims and not wanted.compatible(one):
                raise ShapeInferenceError(f"Broadcast target[axes_mapping[0]]. Expected 1. Got {wanted}")
            if data.dims and not (wanted.compatible(data.dims[i]) or data.dims[i].compatible(one)):
                raise ShapeInferenceError(f"Broadcast target[axes_mapping[{i}]] Expected {data.dims[i]}. Got {wanted}")


# -- ShapeOf, Range ---------------------------------------------------------------------------------------
class ShapeOf(ShapeRule):
    """ShapeOf-1/3: a 1-D tensor of the input's rank; its value is the shape when that is static."""

    type = "ShapeOf"
    inputs = range(1, 2)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.enums = {} if version == "opset1" else {"output_type": ELEMENT_TYPE}

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        # (ShapeOf-3 without output_type has none: OpenVINO's default is the dynamic type)
        if self.version != "opset1" and str_attr(ctx.layer, "output_type", "dynamic") not in ("i32", "i64"):
            raise ShapeInferenceError("Output type must be i32 or i64")
        rank = inputs[0].rank
        return [PartialShape((Dimension.dynamic() if rank is None else Dimension.static(rank),))]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        name = "i64" if self.version == "opset1" else str_attr(layer, "output_type", "i64")
        return [ELEMENT_TYPES.get(name, ELEMENT_TYPES["i64"])]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        layer = ctx.layer
        state = ctx.input(0)
        if state.shape is not None and state.shape.is_static:
            dims = tuple(state.shape.to_list())
            etype = self.types(layer, [state])[0]
            assert etype is not None
            if wrapped(dims, etype) != dims:  # an i32 ShapeOf of a dim past 2**31 - 1: OpenVINO leaves it unknown
                return ValueInfo("runtime", None, f"ShapeOf {layer.name!r} of {state.shape} into {etype}, which "
                                                  f"does not hold its dims (OpenVINO does not fold it)")  # fmt: skip
            return ValueInfo("const", dims, shape=(len(dims),))
        if state.shape is None:
            return ValueInfo("unresolved", None, state.reason or f"the input of ShapeOf {layer.name!r} is unresolved")
        known: tuple[Bounds | None, ...] | None = None
        if state.shape.dims is not None:  # each dim's bounds, as OpenVINO's ShapeOf evaluates them (its min and max
            etype = self.types(layer, [state])[0]  # shapes; an upper bound past the type's largest value is that value)
            assert etype is not None
            top = type_limits(etype)[1]
            known = tuple(
                None if d.lo > top else (d.lo, None if d.hi is None or d.hi >= top else d.hi) for d in state.shape.dims
            )
        return ValueInfo("runtime", None, f"ShapeOf {layer.name!r} of the dynamic shape {state.shape}", known=known)


def _range_count(start: int, stop: int, step: int) -> int:
    """``range_shape_inference.hpp``'s element count: ``max(ceil((stop - start) / step), 0)`` computed in double
    (each value, the span and the quotient rounded to it), then cast to uint32, which x86-64 does through int64,
    keeping its low 32 bits: a count of 2^32 + 5 is 5, one past int64 (int64's smallest value) 0."""
    first, last, by = float(start), float(stop), float(step)
    span = 0.0 if (by > 0 and first >= last) or (by < 0 and first <= last) else last - first
    strided = math.ceil(abs(span) / abs(by))
    return strided % 2**32 if strided < 2**63 else 0


class Range4(_ValueShaped):
    """Range-4: ``max(ceil((stop - start) / step), 0)`` elements of ``output_type``, counted as OpenVINO counts them
    (:func:`_range_count`: modulo 2^32)."""

    value_inputs = value_ports((0, "'start' input", "0~"), (1, "'stop' input", "0~"), (2, "'step' input", "0~"))

    type = "Range"
    inputs = range(3, 4)
    version = "opset4"

    def __init__(self, opsets: range) -> None:
        self.enums = {"output_type": ELEMENT_TYPE}
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        values = [int_value(ctx, i) for i in range(3)]
        if values[2] == (0,):  # checked on its own, whatever the other inputs
            raise ShapeInferenceError("'step' cannot be zero, nan, or infinite.")
        if any(v is None or len(v) != 1 for v in values):
            return [PartialShape.dynamic(1)]
        start, stop, step = (v[0] for v in values if v is not None)
        return [PartialShape.static([_range_count(start, stop, step)])]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        name = str_attr(layer, "output_type", "")
        return [ELEMENT_TYPES.get(name, layer.outputs[0].precision if layer.outputs else None)]

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        start, step = inputs[0][0][0], inputs[2][0][0]
        values = tuple(start + i * step for i in range(out_shape[0]))
        etype = self.types(ctx.layer, [])[0]
        return wrapped(values, etype) if etype is not None and etype.is_integral else values


_PHILOX_ALIGNMENT: Enum = ("ov::op::PhiloxAlignment", frozenset({"pytorch", "tensorflow", "mock"}))
_SHAPE_TYPES = ("i32", "i64")


def _given_type(state: PortState) -> ElementType | None:
    """An input's element type where the model gives it or a rule infers it, the dynamic type included (None: a
    port's precision after a layer without a rule, which is not judged)."""
    return state.element_type if state.origin in TYPED else None


class RandomUniform8(ShapeRule):
    """RandomUniform-8 (opset8; torch's dropout kept at inference, ``bernoulli``): ``shape``, ``min_val``, ``max_val``;
    the output is of ``output_type`` and of the shape ``shape``'s value gives (``random_uniform.cpp``,
    ``random_uniform_shape_inference.hpp``). Refused as OpenVINO refuses it: a ``shape`` not of i32 or i64, or not
    1-D; ``min_val`` and ``max_val`` of different types, or of a type not ``output_type``'s, which must be a real type,
    i32 or i64; either not a scalar nor of one element; constant ones not in order (``min_val < max_val``); the
    alignment ``mock``. A constant ``shape`` gives its dims (-1 dynamic, another negative 0), one computed before run
    time its elements' bounds (a negative one refused), any other its length's dims, all dynamic. ovreduce draws no
    values: its output is no constant to the rules after it."""

    type = "RandomUniform"
    version = "opset8"
    inputs = range(3, 4)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        # the attributes as OpenVINO's reader visits them: output_type, op_seed, global_seed, alignment
        check_enums(layer, {"output_type": ELEMENT_TYPE})
        int_attr(layer, "op_seed", 0)
        int_attr(layer, "global_seed", 0)
        check_enums(layer, {"alignment": _PHILOX_ALIGNMENT})
        shape_type, low_type, high_type = (_given_type(ctx.input(i)) for i in range(3))
        if shape_type is not None and shape_type.name not in (*_SHAPE_TYPES, "dynamic"):
            raise ShapeInferenceError("Type of the input should be int32 or int64.")
        if low_type is not None and high_type is not None and low_type != high_type:
            raise ShapeInferenceError("'min_val' should have the same type as 'max_val'.")
        out = ELEMENT_TYPES.get(str_attr(layer, "output_type", "dynamic"))
        if out is None or not (real(out) or out.name in _SHAPE_TYPES) or (low_type is not None and low_type != out):
            raise ShapeInferenceError("'min_val' and 'max_val' should have the same type as 'out_type' attribute.")
        if str_attr(layer, "alignment", "tensorflow") == "mock":
            raise ShapeInferenceError("Unknown alignment mode provided to RandomUniform.")
        shape = inputs[0]
        if shape.rank is not None and shape.rank != 1:
            raise ShapeInferenceError("The rank of the tensor defining output shape must be equal to 1.")
        one = (PartialShape.static([]), PartialShape.static([1]))
        for index, what in ((1, "Min"), (2, "Max")):
            if not any(inputs[index].compatible(s) for s in one):
                raise ShapeInferenceError(f"{what} value must be a scalar or one element 1D tensor.")
        low, high = real_tensor(ctx.value(1)), real_tensor(ctx.value(2))
        if low is not None and high is not None and low[0] and high[0] and not low[0][0] < high[0][0]:
            raise ShapeInferenceError(f"Min value must be less than max value. Got min value: {low[0][0]:g}, max "
                                      f"value: {high[0][0]:g}")  # fmt: skip
        return [self._drawn_shape(ctx, shape)]

    @staticmethod
    def _drawn_shape(ctx: LayerContext, shape: PartialShape) -> PartialShape:
        """The output's shape from ``shape``'s value (``get_input_const_data_as_shape``): a Const's values as dims, a
        value computed before run time as ``evaluate_as_partial_shape`` reads its bounds, else ``shape``'s length of
        dynamic dims (its upper bound's, where it is an interval; a dynamic rank where it has none)."""
        const = int_value(ctx, 0)
        if const is not None and ctx.input(0).origin == "const":
            return PartialShape(tuple(const_dim(v) for v in const))
        known = shape_value(ctx, 0)
        if known is not None and None not in known:
            dims = [bounds_dim(b) for b in known]
            return PartialShape(tuple(d if d is not None else Dimension.dynamic() for d in dims))
        if shape.dims is None or shape.dims[0].hi is None:
            return PartialShape(None)
        return PartialShape.dynamic(shape.dims[0].hi)

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        out = ELEMENT_TYPES.get(str_attr(layer, "output_type", ""))
        return [out if out is not None else port.precision for port in layer.outputs]


# -- Pad, StridedSlice ------------------------------------------------------------------------------------------
class Pad(ShapeRule):
    """Pad-1 / Pad-12 (``pad_shape_inference.hpp``): each dim plus its ``pads_begin`` and ``pads_end`` values
    (negative ones too, ``dim::padded``); the ``pad_mode`` checks on static dims. Pads computed at run time are read
    by their elements' bounds, as OpenVINO's ``get_input_bounds`` reads them (a dim padded by a dim of ``2..5`` is the
    dim plus ``2..5``); pads OpenVINO has no bounds of leave the rank, every dim dynamic, and a pad ovreduce alone does
    not bound its own dim."""

    value_inputs = value_ports((1, "pads_begin", ""), (2, "pads_end", ""))

    type = "Pad"
    inputs = range(3, 5)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.enums = {"pad_mode": PAD_MODE}

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        mode = str_attr(ctx.layer, "pad_mode", "constant")
        if mode == "constant" and len(inputs) == 4 and inputs[3].rank not in (None, 0):
            raise ShapeInferenceError(f"Argument for padding value is not a scalar (shape: {inputs[3]}).")
        if mode == "constant" and len(inputs) == 4:
            arg, pad = typed(ctx.input(0)), typed(ctx.input(3))
            if arg is not None and pad is not None and arg != pad:
                raise ShapeInferenceError(
                    f"Argument element types do not match (input arg element type: {arg}, arg_pad element type: {pad})."
                )
        for port, name in ((1, "pads_begin"), (2, "pads_end")):
            if inputs[port].rank not in (None, 1):
                raise ShapeInferenceError(f"Argument for {name} is not 1D.")
        data = inputs[0]
        if data.dims is None:
            return [PartialShape(None)]
        rank = len(data.dims)
        begin, end = _pad_bounds(ctx, 1), _pad_bounds(ctx, 2)
        if begin is None or end is None:
            for port, name in ((1, "pads_begin"), (2, "pads_end")):
                n = _length(inputs[port])
                if n is not None and n > rank:
                    raise ShapeInferenceError(f"Number of elements of {name} must be >= 0 and <= arg rank")
            return [PartialShape.dynamic(rank)]
        for values, name in ((begin, "pads_begin"), (end, "pads_end")):
            if len(values) != rank:
                raise ShapeInferenceError(
                    f"length of {name} mismatches with rank of input, expect {rank}, but got {len(values)}"
                )
        out = []
        for d, b, e in zip(data.dims, begin, end, strict=True):
            if b is None or e is None:  # a pad ovreduce does not know: its dim alone is unknown
                out.append(Dimension.dynamic())
                continue
            if d.is_static:
                _check_pad_mode(mode, d.lo, b[0], e[0])
            out.append(_padded_by_bounds(d, b, e))
        return [PartialShape(tuple(out))]

    def loose(self, ctx: LayerContext) -> str | None:
        layer = ctx.layer
        computed = [name for i, name in ((1, "pads_begin"), (2, "pads_end")) if int_value(ctx, i) is None]
        if not computed or all((b := _input_bounds(ctx, i)) is not None and None not in b for i in (1, 2)):
            return None  # constant, or each element's bounds known (as OpenVINO's): the dims are OpenVINO's
        return (f"dims ovreduce leaves unknown here may be known to OpenVINO: {layer.type} ({layer.name}) pads by "
                f"{' and '.join(computed)} computed at run time whose elements' bounds ovreduce does not all know "
                f"(OpenVINO's bound evaluation may)")  # fmt: skip


def _pad_bounds(ctx: LayerContext, index: int) -> tuple[tuple[int, int] | None, ...] | None:
    """Pads as ``get_input_bounds`` reads them (:func:`_input_bounds`); None where OpenVINO's bound evaluation has none.
    An element ovreduce does not know (where OpenVINO does) is None: its dim is dynamic, the others kept."""
    return _input_bounds(ctx, index)


def _padded_by_bounds(d: Dimension, begin: tuple[int, int], end: tuple[int, int]) -> Dimension:
    """One output dim of Pad (``pad_shape_inference.hpp``): the dim's lower bound plus the pads' lower bounds and its
    upper bound plus their upper bounds (``dim::padded``: a bound gone negative is OpenVINO's -1, a lower bound 0 and
    an upper one infinite), in int64 arithmetic; infinite where a pad may be anything from 0 up (``is_inf_padding``);
    the dim as it is where both sums are 0."""
    diff_lb, diff_ub = _i64(begin[0] + end[0]), _i64(begin[1] + end[1])
    if diff_lb == 0 and diff_ub == 0:
        return d
    lb = _padded_i64(d.lo, diff_lb)
    inf = any(p[0] == 0 and p[1] in (-1, _I64_MAX) for p in (begin, end))
    ub = -1 if inf or d.hi is None else _padded_i64(d.hi, diff_ub)
    lo, hi = 0 if lb in (-1, _I64_MAX) else lb, None if ub in (-1, _I64_MAX) else ub  # (int64's largest: no bound)
    return Dimension.dynamic() if hi is not None and hi < lo else Dimension(lo, hi)  # (an empty interval: '?')


def _i64(value: int) -> int:
    """``value`` wrapped to int64, as C++'s addition of two int64 bounds gives it."""
    return (value + 2**63) % 2**64 - 2**63


def _padded_i64(bound: int, pad: int) -> int:
    """``dim::padded`` of dimension_util.hpp on one int64 bound: -1 where the sum (wrapped) is negative."""
    total = _i64(bound + pad)
    return -1 if total < 0 else total


def _check_pad_mode(mode: str, dim: int, begin: int, end: int) -> None:
    if begin > 0 or end > 0:
        if mode == "edge" and dim < 1:
            raise ShapeInferenceError(
                "EDGE padding mode requires an input of dimension of at least 1 at each spatial axis."
            )
        if mode == "reflect" and dim < 2:
            raise ShapeInferenceError(
                "REFLECT padding mode requires an input of dimension of at least 2 at each spatial axis."
            )
    if mode == "reflect" and not (begin < dim and end < dim):
        raise ShapeInferenceError(
            "REFLECT padding mode requires that 'pads_begin[D]' and 'pads_end[D]' must be not greater than "
            "'data_shape[D] - 1'."
        )
    if mode == "symmetric" and not (begin <= dim and end <= dim):
        raise ShapeInferenceError(
            "SYMMETRIC padding mode requires that 'pads_begin[D]' and 'pads_end[D]' must be not greater than "
            "'data_shape[D]'."
        )


_I64_MAX = (1 << 63) - 1
_I64_MIN = -(1 << 63)


def _tdiv(a: int, b: int) -> int:
    """C++ integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _sliced_value(dim: int, start: int, stop: int, step: int) -> int:
    """``slice::get_sliced_value`` (slice_shape_inference_utils.hpp); ``dim`` -1 is infinite, and so is the
    result -1."""
    reverse = step < 0
    norm_dim = _I64_MAX if dim == -1 else dim
    norm_dim_max = norm_dim == _I64_MAX
    start_lt_min = start < 0
    diff_sign = start_lt_min != (stop < 0)
    start_max = start == _I64_MAX
    start_limit = start_max or start == _I64_MIN
    stop_max = stop == _I64_MAX
    any_max = start_max or stop_max
    if norm_dim_max and (diff_sign or any_max or start_limit):
        if reverse:
            ub = -1 if (start_lt_min or any_max) else -1 - start
        elif start_lt_min and not start_limit:
            ub = -start if stop_max else stop
        else:
            ub = -1
        lb = 0
    else:
        lower_max = norm_dim - 1 if reverse else norm_dim
        upper_min = -1 if reverse else 0
        lb = min(max(start + norm_dim if start < 0 else start, 0), lower_max)
        ub = min(max(stop + norm_dim if stop < 0 else stop, upper_min), norm_dim)
    if norm_dim_max and lb == 0 and ub == -1:
        return -1
    value = min(0, ub - lb) if reverse else max(0, ub - lb)
    if step == -1:
        value = -value
    elif value != 0 and step != 1:
        value = value + 1 if reverse else value - 1
        value = _tdiv(value, step) + 1
    return value


def _slice_dim(dim: Dimension, start: int, stop: int, step: int) -> Dimension:
    """``slice::make_dim`` for constant start and stop (bounds that do not cross zero)."""
    lb = _sliced_value(dim.lo, start, stop, step)
    ub = _sliced_value(-1 if dim.hi is None else dim.hi, start, stop, step)
    hi = None if ub < 0 or ub >= _I64_MAX else ub  # OpenVINO's upper bound INT64_MAX is no bound
    lo = max(lb, 0)
    if hi is not None and lo > hi:
        # OpenVINO's Dimension(lb, ub) is then the empty interval [s_max, s_max], which reads back (and is
        # written to IR) as a dynamic dim: so is it here
        return Dimension.dynamic()
    return Dimension(lo, hi)


def _stride_and_extent(strides: Sequence[int], axis: int, dim: Dimension) -> tuple[int, int]:
    """A StridedSlice axis's stride (1 past the strides given) and the extent its masks stand for (the dim's upper
    bound, int64's largest where it has none)."""
    stride = strides[axis] if axis < len(strides) else 1
    if stride == 0:
        raise ShapeInferenceError("Stride must be non-zero")
    return stride, _I64_MAX if dim.hi is None else dim.hi


def _slice_dim_by_bounds(dim: Dimension, start: tuple[int, int], stop: tuple[int, int], step: int) -> Dimension:
    """``slice::make_dim`` (slice_shape_inference_utils.hpp) of start and stop bounds: a bound pair crossing zero whose
    lower bound is within the dim (from its end) is read from 0, and whose upper bound is within it up to -1 (its
    end); the least sliced length takes the start's upper and the stop's lower bound (a negative step: the other
    way round), on the dim's lower bound, and the greatest the others on its upper bound."""
    hi = -1 if dim.hi is None else dim.hi

    def adjusted(b: tuple[int, int]) -> tuple[int, int]:
        if not (b[0] < 0 <= b[1]):
            return b
        return (0 if hi == -1 or b[0] + hi >= 0 else b[0], -1 if hi == -1 or b[1] < hi else b[1])

    (start_lb, start_ub), (stop_lb, stop_ub) = adjusted(start), adjusted(stop)
    if step > 0:
        lb, ub = _sliced_value(dim.lo, start_ub, stop_lb, step), _sliced_value(hi, start_lb, stop_ub, step)
    else:
        lb, ub = _sliced_value(dim.lo, start_lb, stop_ub, step), _sliced_value(hi, start_ub, stop_lb, step)
    upper = None if ub < 0 or ub >= _I64_MAX else ub  # OpenVINO's upper bound INT64_MAX is no bound
    lower = max(lb, 0)
    return Dimension.dynamic() if upper is not None and lower > upper else Dimension(lower, upper)


def _plan_axis(size: int, begin: int, end: int, stride: int, begin_masked: bool, end_masked: bool) -> list[int]:
    """The indices a ``begin:end:stride`` slice of a dim of ``size`` takes, in order (``make_slice_plan``): a
    negative begin or end counts from the end, then each is clipped (a begin to the last index when the stride is
    negative, an end to -1)."""
    reverse = stride < 0
    if begin_masked:
        begin = size - 1 if reverse else 0
    elif begin < 0:
        begin += size
    begin = max(0, min(size - (1 if reverse else 0), begin))
    if end_masked:
        end = -1 if reverse else size
    elif end < 0:
        end += size
    end = max(-1 if reverse else 0, min(size, end))
    step = abs(stride)
    if reverse:  # the leftmost index taken, then forwards
        end += max(0, begin - end - 1) % step
        begin, end = end + 1, begin + 1
    taken = list(range(begin, max(begin, end), step))
    return taken[::-1] if reverse else taken


_MASKS = ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")


def _mask(layer: Layer, name: str) -> set[int]:
    values = ints_attr(layer, name) or ()
    return {i for i, v in enumerate(values) if v == 1}


class StridedSlice1(_ValueShaped):
    """StridedSlice-1 (``strided_slice_shape_inference.hpp``): constant ``begin``/``end``/``strides`` with
    ``begin_mask``, ``end_mask``, ``new_axis_mask``, ``shrink_axis_mask`` and ``ellipsis_mask``. Begin or end
    values computed at run time slice each dim by their elements' bounds where ovreduce knows them all (a Concat of
    constants and ShapeOf dims), as OpenVINO's ``get_input_bounds`` does; otherwise each sliced dim is ``[0, its
    upper bound]``, as OpenVINO does when it has no bounds, and the output says why (OpenVINO may know them)."""

    value_inputs = value_ports((1, "Begin", ""), (2, "End", ""), (3, "Strides", ""))

    type = "StridedSlice"
    inputs = range(3, 5)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        masks = [ints_attr(layer, name) or () for name in _MASKS]  # checked as the op is made, before any shape
        if any(v not in (0, 1) for mask in masks for v in mask):
            raise ShapeInferenceError("All masks of StridedSlice must have be 0 or 1")
        if any(mask and len(mask) != len(masks[0]) for mask in masks):
            raise ShapeInferenceError("All masks of StridedSlice must have the same size")
        for i, name in enumerate(("Begin", "End", "Strides")[: len(inputs) - 1], start=1):
            if inputs[i].rank not in (None, 1):
                raise ShapeInferenceError(f"{name} input must be 1D (has rank: {inputs[i].rank})")
        data = inputs[0]
        if data.dims is None:
            return [PartialShape(None)]
        rank = len(data.dims)
        begin, end = int_value(ctx, 1), int_value(ctx, 2)
        strides = int_value(ctx, 3) if len(inputs) > 3 else (1,) * len(begin) if begin is not None else None
        begin, end = (
            cast(tuple[int, ...] | None, _bounds(ctx, 1, begin)),
            cast(tuple[int, ...] | None, _bounds(ctx, 2, end)),
        )
        # begin or end computed at run time: each element's bounds (get_input_bounds), where all are known
        ranges: tuple[list[tuple[int, int]], list[tuple[int, int]]] | None = None
        if begin is None or end is None:
            given = [_input_bounds(ctx, 1), _input_bounds(ctx, 2)]
            if all(g is not None and None not in g for g in given):
                ranges = (
                    [cast(tuple[int, int], b) for b in given[0] or ()],
                    [cast(tuple[int, int], b) for b in given[1] or ()],
                )
                if strides is None and len(inputs) <= 3:
                    strides = (1,) * len(ranges[0])
        number_axes = _length(inputs[1]) if inputs[1].rank == 1 else None
        end_axes = _length(inputs[2]) if inputs[2].rank == 1 else None
        if number_axes is not None and end_axes is not None:
            if number_axes != end_axes:
                raise ShapeInferenceError("Begin and end need to have same number of values.")
        elif end_axes is not None:
            number_axes = end_axes
        if strides is not None:
            if number_axes is not None and number_axes != len(strides):
                raise ShapeInferenceError("Stride needs to have same number of values as begin and end.")
            number_axes = len(strides)
        if number_axes is None:
            return [PartialShape(None)]
        ellipsis = _mask(layer, "ellipsis_mask")
        if len(ellipsis) > 1:
            raise ShapeInferenceError("At most one ellipsis is allowed.")
        new_axis = _mask(layer, "new_axis_mask")
        begin_mask, end_mask = _mask(layer, "begin_mask"), _mask(layer, "end_mask")
        shrink = _mask(layer, "shrink_axis_mask")
        if not ellipsis and rank + len(new_axis) < number_axes:
            raise ShapeInferenceError(
                "Input rank plus number of new axis has to be at least the size of Lower and Upper bounds vector."
            )
        out: list[Dimension] = []
        index = 0
        for axis in range(number_axes):
            if axis in ellipsis:
                before = sum(1 for i in range(axis) if i not in new_axis)
                after_new = sum(1 for i in range(axis + 1, len(begin)) if i in new_axis) if begin is not None else 0
                after = number_axes - axis - after_new - 1
                hidden = rank - after - before
                for _ in range(max(hidden, 0)):
                    out.append(self._dim(data, index))
                    index += 1
            elif axis in new_axis:
                out.append(Dimension.static(1))
            elif axis in shrink:
                index += 1
            elif begin is not None and end is not None and strides is not None:
                dim = self._dim(data, index)
                stride, norm_dim = _stride_and_extent(strides, axis, dim)
                if stride < 0:
                    default_start, default_stop = norm_dim, -1 - norm_dim
                else:
                    default_start, default_stop = 0, norm_dim
                start = default_start if axis in begin_mask else begin[axis]
                stop = default_stop if axis in end_mask else end[axis]
                out.append(_slice_dim(dim, start, stop, stride))
                index += 1
            elif ranges is not None and strides is not None and axis < min(len(ranges[0]), len(ranges[1])):
                dim = self._dim(data, index)
                stride, norm_dim = _stride_and_extent(strides, axis, dim)
                if stride < 0:
                    first, last = (norm_dim, norm_dim), (-1 - norm_dim, -1 - norm_dim)
                else:
                    first, last = (0, 0), (norm_dim, norm_dim)
                start_b = first if axis in begin_mask else ranges[0][axis]
                stop_b = last if axis in end_mask else ranges[1][axis]
                out.append(_slice_dim_by_bounds(dim, start_b, stop_b, stride))
                index += 1
            else:
                out.append(Dimension(0, self._dim(data, index).hi))
                index += 1
        out.extend(data.dims[index:])
        return [PartialShape(tuple(out))]

    def loose(self, ctx: LayerContext) -> str | None:
        layer = ctx.layer
        computed = [
            name for i, name in ((1, "begin"), (2, "end")) if i < len(layer.inputs) and int_value(ctx, i) is None
        ]
        if not computed or all((b := _input_bounds(ctx, i)) is not None and None not in b for i in (1, 2)):
            return None  # constant, or each element's bounds known (as OpenVINO's): the dims are OpenVINO's
        return (f"dims ovreduce leaves unknown here may be known to OpenVINO: {layer.type} ({layer.name}) slices with "
                f"a {' and '.join(computed)} computed at run time whose elements' bounds ovreduce does not all know "
                f"(OpenVINO's bound evaluation may)")  # fmt: skip

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """A constant input sliced (``evaluate``), and the elements of a value known in part (a ShapeOf of a partly
        dynamic shape) kept through it as OpenVINO's ``evaluate_lower``/``evaluate_upper`` keep them: begin, end and
        strides known exactly, each bound sliced as the value would be. Constant when all it picks are known."""
        folded = super().fold(ctx)
        known = partial_value(ctx, 0) if folded.kind == "runtime" and self._reshapes_known(ctx) else None
        shape = ctx.input(0).shape
        if known is None or shape is None or not shape.is_static or math.prod(shape.to_list()) != len(known):
            return folded
        plan = self._plan(ctx, tuple(shape.to_list()), [int_value(ctx, i) for i in range(1, len(ctx.layer.inputs))])
        if plan is None:
            return folded
        return pinned(folded, tuple(known[i] for i in plan[0]), plan[1])

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        values, shape = inputs[0]
        plan = self._plan(ctx, shape, [t[0] for t in inputs[1:]])
        return None if plan is None or plan[1] != out_shape else tuple(0 if i is None else values[i] for i in plan[0])

    @staticmethod
    def _plan(
        ctx: LayerContext, shape: tuple[int, ...], given: Sequence[tuple[int, ...] | None]
    ) -> tuple[list[int], tuple[int, ...]] | None:
        """The flat indices the slice takes from data of ``shape``, in the output's order, and the output's shape, as
        OpenVINO's ``make_slice_plan`` and reference ``strided_slice`` compute them; None where it would not."""
        if len(given) == 2 and given[0] is not None:
            given = [*given, (1,) * len(given[0])]
        if len(given) != 3 or any(v is None for v in given):
            return None
        begins, ends, strides = cast(list[tuple[int, ...]], given)
        layer = ctx.layer
        begin_mask, end_mask = _mask(layer, "begin_mask"), _mask(layer, "end_mask")
        new_axis, shrink, ellipsis = (_mask(layer, name) for name in ("new_axis_mask", "shrink_axis_mask",
                                                                     "ellipsis_mask"))  # fmt: skip
        count = len(begins)
        if len(ends) != count or len(strides) != count or 0 in strides or len(ellipsis & set(range(count))) > 1:
            return None
        real = [i for i in range(count) if i not in ellipsis and i not in new_axis]
        if len(real) > len(shape):
            return None
        spread = len(shape) - len(real)  # the axes the ellipsis (or an implicit one at the end) stands for
        picks: list[list[int]] = []  # per data axis, the indices taken, in output order
        out: list[int] = []

        def expand() -> None:
            for _ in range(spread):
                size = shape[len(picks)]
                picks.append(list(range(size)))
                out.append(size)

        for i in range(count):
            if i in new_axis:
                out.append(1)
            elif i in ellipsis and i not in shrink:
                expand()
            elif len(picks) >= len(shape):  # an ellipsis that is also a shrink: OpenVINO's plan overruns
                return None
            elif i in shrink:
                size = shape[len(picks)]
                if not -size <= begins[i] < size:
                    return None
                picks.append([begins[i] % size])
            else:
                size = shape[len(picks)]
                picks.append(_plan_axis(size, begins[i], ends[i], strides[i], i in begin_mask, i in end_mask))
                out.append(len(picks[-1]))
        if not ellipsis & set(range(count)):
            expand()
        if len(picks) != len(shape):
            return None
        steps = [math.prod(shape[axis + 1 :]) for axis in range(len(shape))]
        indices = [sum(i * step for i, step in zip(index, steps, strict=True)) for index in itertools.product(*picks)]
        return indices, tuple(out)

    @staticmethod
    def _dim(data: PartialShape, index: int) -> Dimension:
        assert data.dims is not None
        if index >= len(data.dims):
            raise ShapeInferenceError(f"the slice reaches axis {index} of a tensor of rank {len(data.dims)}")
        return data.dims[index]


_SLICE_INPUTS = ("start", "stop", "step", "axes")
_SLICE_EVALUATED = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})


class Slice8(_ValueShaped):
    """Slice-8 (``slice_shape_inference.hpp``): ``start``, ``stop`` and ``step`` along ``axes`` (by default the first
    ones). Start and stop elements known before run time by their bounds only (a stop ShapeOf gives of ``1..64``) give
    the sliced dim OpenVINO's ``make_dim`` makes of them; a sliced dim whose start or stop element is not known at all,
    or whose step is not constant, is ``[0, its upper bound]``, as OpenVINO makes it where it has no bounds for them;
    axes that are not constant leave every dim so. Values fold through it, and the elements of a
    1-D value known in part (a ShapeOf of a partly dynamic shape) stay known, as OpenVINO's bounds pass through."""

    value_inputs = value_ports(*((i, f"Slice `{name}`", "") for i, name in enumerate(_SLICE_INPUTS, start=1)))

    type = "Slice"
    inputs = range(4, 6)
    version = "opset8"

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        if len(inputs) not in (4, 5):
            raise ShapeInferenceError(f"Slice has to have 4 or 5 inputs. Got: {len(inputs)}")
        data = inputs[0]
        if data.dims is None:
            return [PartialShape(None)]
        rank = len(data.dims)
        if rank == 0:
            raise ShapeInferenceError("Slice `data` input can't be a scalar.")
        for shape, name in zip(inputs[1:], _SLICE_INPUTS, strict=False):
            if shape.dims is not None and len(shape.dims) != 1:
                raise ShapeInferenceError(f"Slice `{name}` input must be a 1D tensor. Got rank: {len(shape.dims)}")
            if shape.dims is not None and shape.dims[0].lo > rank:
                raise ShapeInferenceError(f"Slice `{name}` input dim size can't be bigger than `data` rank.")
        start_shape, stop_shape, step_shape = inputs[1:4]
        if not (start_shape.compatible(stop_shape) and start_shape.compatible(step_shape)
                and stop_shape.compatible(step_shape)):  # fmt: skip
            raise ShapeInferenceError("Slice `start`, `stop`, `step` inputs must have compatible shapes.")
        start, stop, steps = _input_bounds(ctx, 1), _input_bounds(ctx, 2), int_value(ctx, 3)
        axes: dict[int, int] | None = None  # axis -> its index in start, stop and step; None: not known
        if len(inputs) == 5:
            if not inputs[4].compatible(start_shape):
                raise ShapeInferenceError(
                    "Slice `axes` input must have compatible shape with `start`, `stop`, `step` inputs."
                )
            given = int_value(ctx, 4)
            if given is not None:
                axes = {normalize_axis(a, rank): i for i, a in enumerate(given)}
                if len(axes) != len(given):
                    raise ShapeInferenceError("Slice values in `axes` input must be unique.")
        else:  # by default the first axes, as many as start has elements (known from its shape or its value)
            count = _length(start_shape) if start_shape.dims is not None else None
            count = len(start) if count is None and start is not None else count
            axes = None if count is None else {i: i for i in range(count)}
        out: list[Dimension] = []
        for axis, dim in enumerate(data.dims):
            i = axes.get(axis) if axes is not None else None
            if axes is not None and i is None:
                out.append(dim)  # not sliced
                continue
            begin = start[i] if start is not None and i is not None and i < len(start) else None
            end = stop[i] if stop is not None and i is not None and i < len(stop) else None
            if steps is not None and start is not None and stop is not None and i is not None and i < len(steps):
                if steps[i] == 0:
                    raise ShapeInferenceError("Step must be non-zero")
                if begin is not None and end is not None:
                    out.append(_slice_dim_by_bounds(dim, begin, end, steps[i]))
                    continue
            out.append(Dimension(0, dim.hi))
        return [PartialShape(tuple(out))]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Also the elements a constant slice picks from a 1-D value known in part: constant when all are known."""
        folded = super().fold(ctx)
        known = partial_value(ctx, 0) if folded.kind == "runtime" else None
        cut = self._cut(ctx) if known is not None else None
        return folded if cut is None or known is None else _sliced(folded, known, cut)

    def fold_tensor(
        self, ctx: LayerContext, inputs: list[Tensor], out_shape: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        values, shape = inputs[0]
        cut = self._cut(ctx)
        return None if cut is None or len(shape) != 1 else tuple(values[i] for i in _picked(shape[0], cut))

    @staticmethod
    def _cut(ctx: LayerContext) -> slice | None:
        """The slice of a 1-D value: constant start, stop and step of one element, along axis 0; None for any
        other, or where OpenVINO does not evaluate the layer
        (``Slice::has_evaluate``: start and axes of an integer type of 8 to 64 bits)."""
        ports = (1, 4) if len(ctx.layer.inputs) == 5 else (1,)
        if not all((t := ctx.input(p).element_type) is not None and t.name in _SLICE_EVALUATED for p in ports):
            return None
        given = [int_value(ctx, i) for i in range(1, len(ctx.layer.inputs))]
        if len(given) < 3 or any(v is None or len(v) != 1 for v in given) or given[2] == (0,):
            return None
        if given[3:] not in ([], [(0,)], [(-1,)]):
            return None
        (begin,), (end,), (step,) = cast(list[tuple[int]], given[:3])
        return slice(begin, end, step)


def _sliced(folded: ValueInfo, known: tuple[Bounds | None, ...], cut: slice) -> ValueInfo:
    """The elements ``cut`` picks from a runtime 1-D value known in part: constant when all are known exactly."""
    picked = tuple(known[i] for i in _picked(len(known), cut))
    return pinned(folded, picked, (len(picked),))


def _picked(size: int, cut: slice) -> range:
    """The indices a slice of a dim of ``size`` takes, as OpenVINO's shape inference counts them
    (``slice::get_sliced_value``): a negative start or stop counts from the end, then each is clipped to the dim,
    a start to its last element when the step is negative (not before the first, as Python's slices clip it)."""
    begin, end, step = cast(tuple[int, int, int], (cut.start, cut.stop, cut.step))
    begin, end = (v + size if v < 0 else v for v in (begin, end))
    if step > 0:
        return range(min(max(begin, 0), size), min(max(end, 0), size), step)
    return range(min(max(begin, 0), size - 1), min(max(end, -1), size), step)
