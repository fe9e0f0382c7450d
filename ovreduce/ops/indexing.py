"""TopK, Roll, CumSum, GatherElements, the scatters (ScatterUpdate, ScatterElementsUpdate, ScatterNDUpdate), OneHot,
NonZero and GatherND: the ops of a mixture-of-experts router (TopK picks the experts, a ReduceSum normalises their
weights, a OneHot of the experts picked is summed into each expert's tokens, NonZero and GatherND find them), of
rotary embeddings (Roll) and of cache updates.

Each rule is ``shape_infer`` of src/core/shape_inference/include/<op>_shape_inference.hpp, with the element types each
op's ``validate_and_infer_types`` checks (src/core/src/op/topk.cpp, util/topk_base.cpp, roll.cpp, cum_sum.cpp,
gather_elements.cpp, util/scatter_base.cpp, util/scatter_elements_update_base.cpp, scatter_elements_update.cpp,
util/scatter_nd_base.cpp, scatter_nd_update.cpp), as OpenVINO 2026.4 has them:

* TopK-1/3/11: the data's shape with the dim at ``axis`` made ``k``: a constant ``k`` (0 included) whatever that dim
  is; a ``k`` known as an interval (a dim ShapeOf gives) the least of the two lower bounds to the least of the two
  upper ones; a ``k`` known at run time only, ``0`` to the dim's upper bound. Both outputs have that shape: the
  values in the data's type, the indices in ``index_element_type`` (i32 or i64);
* Roll-7 and CumSum-3: the data's shape and type (Roll's constant axes within its rank);
* GatherElements-6: the indices' shape, its dims other than ``axis`` merged with the data's;
* ScatterUpdate-3, ScatterElementsUpdate-3/12, ScatterNDUpdate-3/15: the data's shape, the updates' checked against
  the data's and the indices'.
* OneHot-1/16 (one_hot_shape_inference.hpp, util/one_hot_base.cpp): the indices' shape with ``depth`` inserted at
  ``axis`` (of the output's rank), in ``on_value``'s type: a constant ``depth`` (not negative) that dim, a ``depth``
  known as an interval (a dim ShapeOf gives) that interval, else dynamic. OpenVINO normalises the axis once, as its
  reader makes the node, against the indices' rank then: a reshape to another rank keeps that axis (and refuses it
  out of range), so the rule asks for the indices' rank as read;
* NonZero-3 (non_zero.cpp): ``[rank, count]`` in ``output_type`` (i32 or i64), ``count`` the product of ``0..1`` and
  every dim; ``[?,?]`` for a scalar or a dynamic rank; constant data (as OpenVINO evaluates it) gives both exactly;
* GatherND-5/8 (gather_nd_shape_inference.hpp): the batch dims (data's merged with the indices'), the indices' middle
  dims, then the data's dims past the index tuple; GatherND-5 fuses the batch dims into one (their product).

Their values are not folded (known at run time only, or constants ovreduce does not fold), but for the scatters'
(without a reduction) of integers (a shape put together at run time, one dim of it replaced): folded where every input
is constant, else each element's bounds, as OpenVINO's default bound evaluator has them (the data's and the updates'
lower bounds scattered, and their upper ones), where the indices (and the axis) are known exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, cast

from ovreduce.errors import ElementTypeError, ShapeInferenceError
from ovreduce.ir.dtypes import ElementType, element_type
from ovreduce.ir.model import Layer
from ovreduce.ops.axes import OPENVINO_AXES, normalize_axes
from ovreduce.ops.base import Bounds, LayerContext, LayerReads, PortState, ValueInfo
from ovreduce.ops.rules import (
    BOOLEAN,
    ELEMENT_TYPE,
    Enum,
    ShapeRule,
    bool_attr,
    bounds_dim,
    elements,
    exact,
    int_attr,
    int_value,
    normalize_axis,
    partial_value,
    pinned,
    real,
    shape_value,
    str_attr,
    typed,
)
from ovreduce.shapes import Dimension, PartialShape, dim_mul, merge

__all__ = [
    "CumSum3",
    "GatherElements6",
    "GatherND",
    "NonZero3",
    "OneHot",
    "Roll7",
    "ScatterElementsUpdate",
    "ScatterNDUpdate",
    "ScatterUpdate3",
    "TopK",
]

TOPK_MODE: Enum = ("op::TopKMode", frozenset({"max", "min"}))
TOPK_SORT: Enum = ("op::TopKSortType", frozenset({"none", "index", "value"}))
ND_REDUCTION: Enum = ("op::v15::ScatterNDUpdate::Reduction", frozenset({"none", "sum", "sub", "prod", "min", "max"}))
ELEMENTS_REDUCTION: Enum = (
    "op::v12::ScatterElementsUpdate::Reduction",
    frozenset({"none", "sum", "prod", "min", "max", "mean"}),
)
_INDEX_TYPES = frozenset({"i32", "i64"})


def _integral_number(etype: ElementType) -> bool:
    """``element::Type::is_integral_number``: an integer type, not boolean."""
    return etype.is_integral


def _merged(a: PortState, b: PortState) -> tuple[ElementType | None, bool]:
    """``element::Type::merge`` of two inputs' types (where the model gives them): the type, and whether they merge."""
    ta, tb = typed(a), typed(b)
    if ta is not None and tb is not None and ta != tb:
        return None, False
    return ta if ta is not None else tb, True


_FOLDED_TYPES = frozenset({"i32", "i64", "u32", "u64", "boolean"})


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _unravel(flat: int, shape: Sequence[int]) -> list[int]:
    index = []
    for stride, size in zip(_strides(shape), shape, strict=True):
        index.append(flat // stride % size if size else 0)
    return index


def _flat(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _flat_index(index: Sequence[int], shape: Sequence[int]) -> int:
    return sum(i * s for i, s in zip(index, _strides(shape), strict=True))


def _exact_ints(ctx: LayerContext, index: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Input ``index``'s values and shape where each element is known exactly (``has_and_set_bound``); else None."""
    found = elements(ctx, index)
    if found is None:
        return None
    values = tuple(exact(b) for b in found[0])
    if None in values:
        return None
    return tuple(v for v in values if v is not None), found[1]


Writes = Callable[[tuple[int, ...], tuple[int, ...]], list[tuple[int, int]] | str | None]


def _scattered(ctx: LayerContext, base: ValueInfo, updates_port: int, writes: Writes) -> ValueInfo:
    """The value of a scatter of integers: the data's elements with the updates' written where ``writes`` says (pairs of
    flat positions: the data's, the updates'; None where ovreduce does not fold them; OpenVINO's refusal of an index out
    of range, in its words), as OpenVINO's evaluation and
    default bound evaluator have it (:func:`~ovreduce.ops.rules.pinned`); ``base`` (the base rule's) otherwise."""
    etype = typed(ctx.input(0))
    if etype is None or etype.name not in _FOLDED_TYPES or base.kind == "const":
        return base
    data, updates = elements(ctx, 0), elements(ctx, updates_port)
    if data is None or updates is None:
        return base
    pairs = writes(data[1], updates[1])
    if pairs is None:
        return base
    if isinstance(pairs, str):  # (OpenVINO's evaluation refuses the indices: the consumer asking for the value fails)
        return ValueInfo("unresolved", None, f"{ctx.layer.type} ({ctx.layer.name}): {pairs}")
    out: list[Bounds | None] = list(data[0])
    for dst, src in pairs:
        out[dst] = updates[0][src]
    return pinned(base, tuple(out), data[1])


def _scalar_rank(shape: PartialShape) -> bool:
    return shape.rank in (None, 0)


class TopK(ShapeRule):
    """TopK-1 (opset1, opset2), TopK-3 (opset3 ... opset10) and TopK-11 (opset11 on): data and a scalar ``k``."""

    type = "TopK"
    inputs = range(2, 3)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.enums = {"mode": TOPK_MODE, "sort": TOPK_SORT, "index_element_type": ELEMENT_TYPE}
        self.boolean_attributes = ("stable",) if version == "opset11" else ()

    @staticmethod
    def _index_type(layer: Layer) -> ElementType | None:
        """``index_element_type`` (i32 where the layer does not say); None where it names no type."""
        try:
            return element_type(layer.data.get("index_element_type", "i32"))
        except ElementTypeError:
            return None

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        data = inputs[0].element_type if inputs else None
        index = self._index_type(layer)
        ports = layer.outputs
        found = [data, index]
        return [found[i] if i < 2 and found[i] is not None else port.precision for i, port in enumerate(ports)]

    def _check_types(self, ctx: LayerContext) -> None:
        layer = ctx.layer
        if (
            self.version == "opset11"
            and bool_attr(layer, "stable", False)
            and str_attr(layer, "sort", "none") == "none"
        ):
            raise ShapeInferenceError(
                "Stable sort can only be used when TopK's sorting mode is set to 'VALUE' or 'INDEX'.none"
            )
        k_type = typed(ctx.input(1))
        if k_type is not None:
            if self.version == "opset1" and k_type.name not in ("i8", "i32", "i64"):
                raise ShapeInferenceError(f"K input element type must be i8, i32 or i64 (got {k_type}).")
            if not _integral_number(k_type):
                raise ShapeInferenceError(
                    f"K input has to be an integer type, which does match the provided one:{k_type}"
                )

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        self._check_types(ctx)
        data, k_shape = inputs[0], inputs[1]
        axis = int_attr(layer, "axis", 0)  # (a layer without it: OpenVINO's TopK of axis 0, max, sort none, i32)
        if data.dims is not None:
            normalize_axis(axis, len(data.dims))
        index = self._index_type(layer)
        if index is not None and index.name not in _INDEX_TYPES:
            raise ShapeInferenceError(f"Index element type attribute should be either 'i32' or 'i64'. Got: {index}")
        if data.dims is not None and len(data.dims) == 0:
            raise ShapeInferenceError("Input rank must be greater than 0.")
        if not _scalar_rank(k_shape):
            raise ShapeInferenceError("The 'K' input must be a scalar.")
        if data.dims is None:
            return [data, data]
        at = normalize_axis(axis, len(data.dims))
        dims = list(data.dims)
        dims[at] = self._k_dim(ctx, dims[at])
        out = PartialShape(tuple(dims))
        return [out, out]

    @staticmethod
    def _k_dim(ctx: LayerContext, dim: Dimension) -> Dimension:
        """The dim at ``axis``, as ``k`` makes it (``get_input_const_data_as_shape``: its constant value, else its
        bounds)."""
        shape_value(ctx, 1)  # a k computed to a negative value: OpenVINO's refusal
        const = int_value(ctx, 1)
        if const is not None:
            if len(const) != 1:
                raise ShapeInferenceError(
                    f"Only one value (scalar) should be provided as the 'K' input to TopK (got {len(const)} elements)."
                )
            if const[0] < 0:
                raise ShapeInferenceError(f"The value of 'K' must be greater or equal to zero. (got {const[0]}).")
            return Dimension.static(const[0])
        known = partial_value(ctx, 1)
        k = bounds_dim(known[0]) if known is not None and len(known) == 1 else None
        if known is not None and len(known) != 1:
            raise ShapeInferenceError(
                f"Only one value (scalar) should be provided as the 'K' input to TopK (got {len(known)} elements)."
            )
        if k is None:
            return Dimension(0, dim.hi)
        if k.is_static:
            return k
        lower = min(dim.lo, k.lo)
        if dim.hi is None:
            return Dimension(lower, None)
        return Dimension(lower, dim.hi if k.hi is None else min(dim.hi, k.hi))


class Roll7(ShapeRule):
    """Roll-7: data, shift and axes; the data's shape."""

    type = "Roll"
    version = "opset7"
    inputs = range(3, 4)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        for index, what in ((1, "Shift"), (2, "Axes")):
            etype = typed(ctx.input(index))
            if etype is not None and etype.name not in _INDEX_TYPES:
                raise ShapeInferenceError(f"{what} must have int32 or int64 element type.")
        data, shift, axes = inputs[0], inputs[1], inputs[2]
        if shift.rank is not None:
            if shift.rank > 1:
                raise ShapeInferenceError("Shift must be a scalar or 1D tensor.")
            if shift.rank == 1 and not shift.compatible(axes):
                raise ShapeInferenceError("If shift is a 1D vector, axes must be a 1D tensor of the same size.")
        if axes.rank is not None and axes.rank > 1:
            raise ShapeInferenceError("Axes must be a scalar or 1D tensor.")
        values = int_value(ctx, 2)
        if data.rank is not None and values is not None:
            normalize_axes(values, data.rank, OPENVINO_AXES)
        return [data]


class CumSum3(ShapeRule):
    """CumSum-3: data and an axis of i32 or i64; the data's shape."""

    type = "CumSum"
    version = "opset3"
    inputs = range(2, 3)
    boolean_attributes = ("exclusive", "reverse")

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        etype = typed(ctx.input(1))
        if etype is not None and etype.name not in _INDEX_TYPES:
            raise ShapeInferenceError(f"axis element type must be either int64_t or int32_t but got ({etype}).")
        return [inputs[0]]  # (OpenVINO checks nothing of the axis's shape or value)


class GatherElements6(ShapeRule):
    """GatherElements-6: data and indices of one rank; the indices' shape, its dims off ``axis`` merged with the
    data's."""

    type = "GatherElements"
    version = "opset6"
    inputs = range(2, 3)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        etype = typed(ctx.input(1))
        if etype is not None and etype.name not in _INDEX_TYPES:
            raise ShapeInferenceError(f"indices must be of int32 or int64 type. But instead got: {etype}")
        data, indices = inputs[0], inputs[1]
        if indices.dims is not None and len(indices.dims) < 1:
            raise ShapeInferenceError("indices rank must be >= 1.")
        if data.dims is None:
            return [indices]
        if len(data.dims) < 1:
            raise ShapeInferenceError("data rank must be >= 1.")
        axis = normalize_axis(int_attr(ctx.layer, "axis", 0), len(data.dims))
        if indices.dims is None:
            dims = list(data.dims)
            dims[axis] = Dimension.dynamic()
            return [PartialShape(tuple(dims))]
        if len(data.dims) != len(indices.dims):
            raise ShapeInferenceError(f"data and indices rank must be equal. But instead got: {len(data.dims)} and "
                                      f"{len(indices.dims)}")  # fmt: skip
        out: list[Dimension] = []
        for i, (d, j) in enumerate(zip(data.dims, indices.dims, strict=True)):
            m = j if i == axis else merge(d, j)
            if m is None:
                raise ShapeInferenceError(
                    f"Shapes {data} and {indices} are not consistent, `data` and `indices` must have equal or "
                    f"intersecting dimensions, except for the dimension at axis index.{axis}"
                )
            out.append(m)
        return [PartialShape(tuple(out))]


class ScatterUpdate3(ShapeRule):
    """ScatterUpdate-3: data, indices, updates and an axis; the data's shape, in the data's type."""

    type = "ScatterUpdate"
    version = "opset3"
    inputs = range(4, 5)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        data_t, indices_t, updates_t, axis_t = (typed(ctx.input(i)) for i in range(4))
        if indices_t is not None and not _integral_number(indices_t):
            raise ShapeInferenceError("Indices element type must be of an integral number type.")
        if data_t is not None and updates_t is not None and data_t != updates_t:
            raise ShapeInferenceError(f"Element types for input data and updates do not match (data element type: "
                                      f"{data_t}, updates element type: {updates_t}).")  # fmt: skip
        if axis_t is not None and not _integral_number(axis_t):
            raise ShapeInferenceError("Axis element type must be of an integral number type.")
        data, indices, updates, axis_shape = inputs
        if not (axis_shape.compatible(PartialShape(())) or axis_shape.compatible(PartialShape.static([1]))):
            raise ShapeInferenceError(f"Axis input shape is required to be scalar or 1D tensor. Got: {axis_shape}")
        ranks = (data.rank, indices.rank, updates.rank)
        if None not in ranks:
            dr, ir, ur = (r for r in ranks if r is not None)
            if ur != ir + dr - 1:
                raise ShapeInferenceError(f"Updates rank is expected to be rank(indices) + rank(data) - 1. Got: "
                                          f"rank(data) = {dr}, rank(indices) = {ir}, rank(updates) = {ur}")  # fmt: skip
        if data.dims is None:
            return [data]
        value = int_value(ctx, 3)
        if not value:
            return [data]
        axis = normalize_axis(value[0], len(data.dims))
        if indices.dims is not None and updates.dims is not None:
            ir = len(indices.dims)
            u, d = updates.dims, data.dims
            fits = all(u[axis + i].compatible(indices.dims[i]) for i in range(ir))
            fits = fits and all(u[i].compatible(d[i]) for i in range(axis))
            fits = fits and all(u[ir - 1 + i].compatible(d[i]) for i in range(axis + 1, len(d)))
            if not fits:
                raise ShapeInferenceError(
                    f"Updates shape must have appropriate dimensions equal to indices and data dimensions. Updates "
                    f"shape:{updates}, data shape: {data}, indices_shape: {indices}, axis: {axis}."
                )
        return [data]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Integers scattered along a constant axis at indices known exactly (their bounds where not constant)."""
        indices, axis = _exact_ints(ctx, 1), _exact_ints(ctx, 3)

        def writes(data: tuple[int, ...], updates: tuple[int, ...]) -> list[tuple[int, int]] | str | None:
            if indices is None or axis is None or len(axis[0]) < 1 or not data:
                return None
            at = axis[0][0] + len(data) if axis[0][0] < 0 else axis[0][0]
            if not 0 <= at < len(data) or updates != (*data[:at], *indices[1], *data[at + 1 :]):
                return None
            wrong = next((i for i in indices[0] if not 0 <= i < data[at]), None)
            if wrong is not None:
                return f"ScatterUpdate indices value {wrong} is out of bounds for axis {at} of size {data[at]}"
            strides, pairs = _strides(data), []
            lead = len(indices[1])
            for src in range(_flat(updates)):
                where = _unravel(src, updates)
                spot = [*where[:at], indices[0][_flat_index(where[at : at + lead], indices[1])], *where[at + lead :]]
                pairs.append((sum(i * s for i, s in zip(spot, strides, strict=True)), src))
            return pairs

        return _scattered(ctx, super().fold(ctx), 2, writes)


class ScatterElementsUpdate(ShapeRule):
    """ScatterElementsUpdate-3 (opset3 ... opset11) and -12 (its ``reduction`` and ``use_init_val``): the data's
    shape; indices and updates of one shape, of the data's rank."""

    type = "ScatterElementsUpdate"
    inputs = range(4, 5)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        if version == "opset12":
            self.enums = {"reduction": ELEMENTS_REDUCTION}
            self.boolean_attributes = ("use_init_val",)

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        merged = _merged(inputs[0], inputs[2])[0] if len(inputs) > 2 else None
        first = merged if merged is not None else inputs[0].element_type if inputs else None
        return [first if first is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        states = [ctx.input(i) for i in range(4)]
        data_t, indices_t, _, axis_t = (typed(s) for s in states)
        if self.version == "opset12" and str_attr(ctx.layer, "reduction", "none") == "mean" and data_t == BOOLEAN:
            raise ShapeInferenceError("The 'mean' reduction type is not supported for boolean tensors")
        if indices_t is not None and real(indices_t):
            raise ShapeInferenceError(f"Indices element type must be integral_number, but is: {indices_t}")
        if axis_t is not None and real(axis_t):
            raise ShapeInferenceError(f"Axis element type must be integral_number, but is: {axis_t}")
        if not _merged(states[0], states[2])[1]:
            raise ShapeInferenceError(f"Data type and updates type are required to be the same. Got: {data_t} and: "
                                      f"{typed(states[2])}")  # fmt: skip
        data, indices, updates, axis_shape = inputs
        if axis_shape.rank not in (None, 0, 1):
            raise ShapeInferenceError(f"Axis input shape are required to be scalar or 1D tensor. Got: {axis_shape}")
        if data.rank is not None and indices.rank is not None and data.rank != indices.rank:
            raise ShapeInferenceError(f"Indices rank and data rank are required to be equal. Got: {indices.rank} and: "
                                      f"{data.rank}")  # fmt: skip
        if not indices.compatible(updates):
            raise ShapeInferenceError(f"Indices and updates input shapes are required to be equal. Got: {indices} "
                                      f"and: {updates}")  # fmt: skip
        value = int_value(ctx, 3)
        if data.rank is not None and value:
            if axis_t is not None and axis_t.kind == "bool":  # (its value is read as int64: a boolean is not)
                raise ShapeInferenceError(f"Element not supported (Axis of {axis_t})")
            normalize_axes(value[:1], data.rank, OPENVINO_AXES)
        return [data]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Integers scattered (without a reduction) at indices and along an axis known exactly (their bounds where not
        constant); an index from the end counts back from the axis's size, as OpenVINO's evaluation takes it."""
        indices, axis = _exact_ints(ctx, 1), _exact_ints(ctx, 3)
        plain = self.version != "opset12" or str_attr(ctx.layer, "reduction", "none") == "none"

        def writes(data: tuple[int, ...], updates: tuple[int, ...]) -> list[tuple[int, int]] | str | None:
            if indices is None or axis is None or not axis[0] or not plain or not data or indices[1] != updates:
                return None
            at = axis[0][0] + len(data) if axis[0][0] < 0 else axis[0][0]
            if not 0 <= at < len(data) or len(updates) != len(data):
                return None
            if any(u > d for i, (u, d) in enumerate(zip(updates, data, strict=True)) if i != at):
                return None
            strides, pairs = _strides(data), []
            for src, given in enumerate(indices[0]):
                where = _unravel(src, updates)
                index = given + data[at] if given < 0 else given
                if not 0 <= index < data[at]:
                    return f"ScatterElementsUpdate index {given} is out of bounds for the axis of size {data[at]}"
                where[at] = index
                pairs.append((sum(i * s for i, s in zip(where, strides, strict=True)), src))
            return pairs

        return _scattered(ctx, super().fold(ctx), 2, writes)


class ScatterNDUpdate(ShapeRule):
    """ScatterNDUpdate-3 (opset4 ... opset14) and -15 (its ``reduction``): the data's shape; the updates
    ``indices.shape[:-1] + data.shape[indices.shape[-1]:]``."""

    type = "ScatterNDUpdate"
    inputs = range(3, 4)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        if version == "opset15":
            self.enums = {"reduction": ND_REDUCTION}

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        merged = _merged(inputs[0], inputs[2])[0] if len(inputs) > 2 else None
        first = merged if merged is not None else inputs[0].element_type if inputs else None
        return [first if first is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        states = [ctx.input(i) for i in range(3)]
        indices_t = typed(states[1])
        if indices_t is not None and indices_t.name not in _INDEX_TYPES:
            raise ShapeInferenceError("Indices element type must be i64 or i32")
        if not _merged(states[0], states[2])[1]:
            raise ShapeInferenceError("Updates element type must be the same as inputs")
        data, indices, updates = inputs
        if indices.rank == 0 or data.rank == 0:
            raise ShapeInferenceError("Indices rank and inputs_rank are expected to be at least 1")
        if data.dims is None or indices.dims is None:
            return [data]
        last = indices.dims[-1]
        if not last.is_static:
            return [data]
        depth, lead = last.lo, len(indices.dims) - 1
        if depth > len(data.dims):
            raise ShapeInferenceError("Last dimension of indices can be at most the rank of inputs")
        if updates.dims is None:
            return [data]
        expected = len(data.dims) + lead - depth
        if len(updates.dims) != expected and expected != 0:
            raise ShapeInferenceError(
                "Rank of updates must be rank of inputs + rank of indices - last dimension of indices - 1"
            )
        given = list(updates.dims)
        wanted_lead, wanted_rest = indices.dims[:lead], data.dims[depth:]
        if not all(i < len(given) and d.compatible(given[i]) for i, d in enumerate(wanted_lead)):
            raise ShapeInferenceError("updates_shape[0:indices_rank-1] shape must be indices_shape[:-1]")
        if not all(lead + i < len(given) and d.compatible(given[lead + i]) for i, d in enumerate(wanted_rest)):
            raise ShapeInferenceError("updates_shape[indices_rank-1:] shape must be input_shape[indices_shape[-1]:]")
        return [data]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Integers scattered (without a reduction) at indices known exactly (their bounds where not constant)."""
        indices = _exact_ints(ctx, 1)
        plain = self.version != "opset15" or str_attr(ctx.layer, "reduction", "none") == "none"

        def writes(data: tuple[int, ...], updates: tuple[int, ...]) -> list[tuple[int, int]] | str | None:
            if indices is None or not plain or not indices[1] or not data:
                return None
            depth, lead = indices[1][-1], indices[1][:-1]
            if depth > len(data) or updates != (*lead, *data[depth:]):
                return None
            strides, block, pairs = _strides(data), _flat(data[depth:]), []
            for j in range(_flat(lead)):
                given = indices[0][j * depth : (j + 1) * depth]
                if any(not -n <= i < n for i, n in zip(given, data, strict=False)):
                    return "Index is out of bounds"
                spot = [i + n if i < 0 else i for i, n in zip(given, data, strict=False)]  # (from the end, as OpenVINO)
                start = sum(i * s for i, s in zip(spot, strides, strict=False))
                pairs += [(start + k, j * block + k) for k in range(block)]
            return pairs

        return _scattered(ctx, super().fold(ctx), 2, writes)


class ReadContext(LayerContext, Protocol):
    """What OneHot asks besides its inputs: an input's state as OpenVINO's reader made it, before a reshape."""

    def as_read(self, index: int) -> PortState | None:
        """Input ``index``'s state in the model as read (without the reshape); None where ovreduce does not know it."""
        ...

    def reshaped(self) -> bool:
        """Whether the model is reshaped so that OpenVINO validates every node again."""
        ...


NEGATIVE_INDICES: Enum = ("op::v16::OneHot::NegativeIndicesMode", frozenset({"ignore_negative", "normalize"}))


class OneHot(ShapeRule):
    """OneHot-1 (opset1 ... opset15) and -16 (its ``negative_indices_mode``): indices, a scalar ``depth``, scalar
    ``on_value`` and ``off_value``; the indices' shape with ``depth`` inserted at ``axis``, in ``on_value``'s type."""

    type = "OneHot"
    inputs = range(4, 5)
    # (not memoised: the axis is normalised against the indices' rank as read, which its inputs' states do not hold)
    layer_reads: LayerReads | None = None  # type: ignore[assignment]

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        if version == "opset16":
            self.enums = {"negative_indices_mode": NEGATIVE_INDICES}

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        on = inputs[2].element_type if len(inputs) > 2 else None
        return [on if on is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        states = [ctx.input(i) for i in range(4)]
        indices_t, depth_t, on_t, off_t = (typed(s) for s in states)
        if indices_t is not None and real(indices_t):
            raise ShapeInferenceError("Indices must be integral element type.")
        if depth_t is not None and real(depth_t):
            raise ShapeInferenceError("Depth must be integral element type.")
        if on_t is not None and off_t is not None and on_t != off_t:
            raise ShapeInferenceError("on_value element type must be compatible with off_value element type.")
        indices = inputs[0]
        axis = self._axis(cast(ReadContext, ctx), int_attr(ctx.layer, "axis", 0))
        if indices.dims is not None:  # (resolve_axis, before the shape inference)
            self._normalized(axis, len(indices.dims))
        for shape, what in ((inputs[1], "depth"), (inputs[2], "on_value"), (inputs[3], "off_value")):
            if shape.is_static and shape.rank != 0:
                raise ShapeInferenceError(f"{what} input must be scalar.")
        if indices.dims is None:
            return [indices]
        rank = len(indices.dims)
        at = self._normalized(axis, rank)
        dims = list(indices.dims)
        dims.insert(at, self._depth(ctx))
        return [PartialShape(tuple(dims))]

    @staticmethod
    def _normalized(axis: int, rank: int) -> int:
        """``normalize_axis`` of an axis of the output (rank + 1), in OpenVINO's words."""
        if not -rank - 1 <= axis <= rank:
            raise ShapeInferenceError(f"Axis {axis} out of the tensor rank range [{-rank - 1}, {rank}].")
        return axis + rank + 1 if axis < 0 else axis

    def _axis(self, ctx: ReadContext, axis: int) -> int:
        """The axis as OpenVINO validates the layer: normalised once, as its reader makes the node, against the
        indices' rank then (a reshape to another rank keeps that axis)."""
        if axis >= 0 or not ctx.reshaped():
            return axis
        read = ctx.as_read(0)
        if read is None or read.shape is None or read.shape.rank is None:
            return axis
        return self._normalized(axis, read.shape.rank)

    @staticmethod
    def _depth(ctx: LayerContext) -> Dimension:
        """``depth`` as a dim (``get_input_const_data_as_shape``: its constant value, else its bounds)."""
        shape_value(ctx, 1)  # a depth computed to a negative value: OpenVINO's refusal
        const = int_value(ctx, 1)
        if const is not None:
            if any(v < 0 for v in const):
                raise ShapeInferenceError("OneHot depth value can't be negative.")
            return Dimension.static(const[0]) if len(const) == 1 else Dimension.dynamic()
        known = partial_value(ctx, 1)
        if known is None or len(known) != 1:
            return Dimension.dynamic()
        if known[0] is not None and known[0][1] is not None and known[0][1] < 0:
            raise ShapeInferenceError("OneHot depth value can't be negative.")
        found = bounds_dim(known[0])
        return found if found is not None else Dimension.dynamic()


class NonZero3(ShapeRule):
    """NonZero-3: the ``[rank, count]`` indices of the data's non-zero elements, in ``output_type`` (i64 where the
    layer does not say): ``count`` from 0 to the data's size; ``[?,?]`` of a scalar or data of dynamic rank; both
    known where the data is constant (as OpenVINO evaluates it)."""

    type = "NonZero"
    version = "opset3"
    inputs = range(1, 2)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets
        self.enums = {"output_type": ELEMENT_TYPE}

    @staticmethod
    def _output_type(layer: Layer) -> ElementType | None:
        try:
            return element_type(layer.data.get("output_type", "i64"))
        except ElementTypeError:
            return None

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        etype = self._output_type(layer)
        return [etype if etype is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        etype = self._output_type(ctx.layer)
        if etype is None or etype.name not in _INDEX_TYPES:
            raise ShapeInferenceError("Output type must be i32 or i64")
        data = inputs[0]
        counted = self._counted(ctx)
        if counted is not None:
            rank, count = counted
            if rank == 0:
                return [PartialShape.static([1, 1] if count else [0, 0])]
            return [PartialShape.static([rank, count])]
        if data.dims is None or len(data.dims) == 0:
            return [PartialShape.dynamic(2)]
        count_dim = Dimension(0, 1)
        for d in data.dims:
            count_dim = dim_mul(count_dim, d)
        return [PartialShape((Dimension.static(len(data.dims)), count_dim))]

    @staticmethod
    def _counted(ctx: LayerContext) -> tuple[int, int] | None:
        """The data's rank and number of non-zero elements, where the data is constant (OpenVINO evaluates it)."""
        info = ctx.value(0)
        if info.kind != "const" and info.reals is None:
            found = _exact_ints(ctx, 0)
            return None if found is None else (len(found[1]), sum(1 for v in found[0] if v))
        shape = ctx.input(0).shape
        if shape is None or not shape.is_static:
            return None
        numbers: Sequence[float] | None = info.values if info.kind == "const" else info.reals
        if numbers is None or len(numbers) != _flat(shape.to_list()):
            return None
        return len(shape.to_list()), sum(1 for v in numbers if v != 0)


class GatherND(ShapeRule):
    """GatherND-5 (opset5 ... opset7: the batch dims fused into one) and -8 (opset8 on: kept): data and indices of
    integers; the batch dims, the indices' middle dims, then the data's dims past the tuple an index gives."""

    type = "GatherND"
    inputs = range(2, 3)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        indices_t = typed(ctx.input(1))
        if indices_t is not None and not _integral_number(indices_t):
            raise ShapeInferenceError(f"The indices type is expected to be an integer type. Got: {indices_t}")
        batch = int_attr(ctx.layer, "batch_dims", 0)
        data, indices = inputs[0], inputs[1]
        if data.dims is not None:
            if len(data.dims) == 0:
                raise ShapeInferenceError("Data rank must be at least 1.")
            if len(data.dims) <= batch:
                raise ShapeInferenceError("Number of batch dimensions must not exceed a rank of data.")
        if indices.dims is not None:
            if len(indices.dims) == 0:
                raise ShapeInferenceError("Indices rank must be at least 1.")
            if len(indices.dims) <= batch:
                raise ShapeInferenceError("Number of batch dimensions must not exceed a rank of indices.")
        if data.dims is None or indices.dims is None or not indices.dims[-1].is_static:
            return [PartialShape.dynamic()]
        depth = indices.dims[-1].lo
        if depth + batch > len(data.dims):
            raise ShapeInferenceError(
                "Length of a tuple with indices must not exceed a rank of data tensor excluding batch dimensions."
            )
        out: list[Dimension] = []
        for d, i in zip(data.dims[:batch], indices.dims[:batch], strict=True):
            m = merge(d, i)
            if m is None:
                raise ShapeInferenceError("Batch dimensions of data and indices must be the same.")
            out.append(m)
        out += [*indices.dims[batch:-1], *data.dims[batch + depth :]]
        if self.version == "opset5" and batch > 1:
            fused = Dimension.static(1)
            for d in out[:batch]:
                fused = dim_mul(fused, d)
            out = [fused, *out[batch:]]
        return [PartialShape(tuple(out))]
