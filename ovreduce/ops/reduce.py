"""The Reduce* family: the family base (:class:`ReductionOp`: the shape rule, the type rules, the axes of a
layer) and one small class per op and version.

The rule is OpenVINO's ``reduce_shape_infer`` (src/core/shape_inference/include/reduce_shape_inference.hpp)
together with the checks of ``ArithmeticReductionKeepDims`` / ``LogicalReductionKeepDims::
validate_and_infer_types``, as OpenVINO 2026.4 behaves (verified against the installed runtime by
tests/ops/test_reduce_differential.py):

* data element type: anything but boolean for arithmetic reductions (OpenVINO's ``is_real() ||
  is_integral_number()``, which string and nf4 pass), boolean (or dynamic) for logical ones; axes element
  type "integral" in OpenVINO's sense: anything but boolean and the real types (nf4 and string pass);
* axes a scalar (one axis) or 1-D;
* constant axes and static data rank: every axis in ``[-r, r-1]`` (else an error), negative axes
  normalised, duplicates harmless, empty axes = identity; reduced dims become 1 (keep_dims) or disappear;
  kept dims pass through unchanged, intervals included;
* a scalar (r = 0) is validated as if it had rank 1: axes 0 and -1 are accepted and give a scalar without
  keep_dims, while with keep_dims OpenVINO fails writing ``1`` into the missing dim;
* otherwise (runtime axes or dynamic data rank): keep_dims gives the data rank with every dim dynamic;
  without keep_dims the rank is ``r - 1`` (never below 0) when the axes input is known to hold exactly one
  element and dynamic otherwise.

Each op also carries its reference kernel (the numerics live in :mod:`ovreduce.reference.openvino`,
imported when a kernel first runs) and its OpenVINO builder, from its own opset.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.axes import OPENVINO_AXES, normalize_axes
from ovreduce.ops.base import LAST_OPSET, Bounds, LayerContext, Op, PortState, ValueInfo, parse_bool_attr
from ovreduce.ops.rules import const_tensor, evaluates, partial_value, type_limits, unevaluated, wrapped
from ovreduce.shapes import Dimension, PartialShape

if TYPE_CHECKING:
    import numpy.typing as npt

    Array = npt.NDArray[Any]

__all__ = [
    "ReduceL1_4",
    "ReduceL2_4",
    "ReduceLogicalAnd_1",
    "ReduceLogicalOr_1",
    "ReduceMax_1",
    "ReduceMean_1",
    "ReduceMin_1",
    "ReduceProd_1",
    "ReduceSum_1",
    "ReductionInfo",
    "ReductionOp",
]

Allowance = Literal["sum", "mean"]


@dataclass(frozen=True, slots=True)
class ReductionInfo:
    """Everything the shape engine derived about one reduction layer."""

    layer: Layer
    op: ReductionOp
    keep_dims: bool
    keep_dims_text: str | None
    keep_dims_valid: bool
    data: PortState
    axes_state: PortState
    axes: ValueInfo
    output: PortState
    error: str | None  # OpenVINO-style shape inference error; names no layer

    def for_layer(self, layer: Layer) -> ReductionInfo:
        """The same analysis for ``layer``, a reduction with the same attributes and inputs."""
        return ReductionInfo(
            layer, self.op, self.keep_dims, self.keep_dims_text, self.keep_dims_valid, self.data,
            self.axes_state, self.axes, self.output, self.error,
        )  # fmt: skip


class ReductionOp(Op):
    """The family base: inputs (data, axes), attribute ``keep_dims``, one output of the data's type.

    Subclasses set ``type``, ``version``, ``opsets``, ``logical`` and ``allowance`` and give
    :meth:`kernel` and :meth:`build`.
    """

    logical: bool = False
    # The rounding allowance audit grants: "sum" (eps x the sum of the magnitudes reduced: Sum, L1),
    # "mean" (eps x their mean: Mean) or None (results that rounding the input cannot move that way).
    allowance: Allowance | None = None
    boolean_attributes = ("keep_dims",)
    layer_reads = "attributes"  # analyse reads the port counts too

    # -- rules ----------------------------------------------------------------------------------------------
    def check_types(self, data_type: ElementType | None, axes_type: ElementType | None) -> None:
        """OpenVINO's element type checks, with its messages.

        OpenVINO's predicates are looser than their messages: ``is_integral_number()`` is "not real and not
        boolean", so string and nf4 (which OpenVINO does not count as real) pass both the data check of the
        arithmetic reductions and the axes check.
        """
        if data_type is not None and data_type.kind != "dynamic":
            if self.logical and data_type.kind != "bool":
                raise ShapeInferenceError("Element type of data input must be boolean.")
            if not self.logical and data_type.kind == "bool":
                raise ShapeInferenceError(f"Element type of data input must be numeric. Got: {data_type}")
        if axes_type is not None and not _ov_integral_number(axes_type):
            raise ShapeInferenceError(f"Element type of axes input must be integer. Got: {axes_type}")

    def output_shape(
        self,
        data: PartialShape,
        axes_shape: PartialShape | None,
        axes: Sequence[int] | None,
        keep_dims: bool,
        *,
        data_type: ElementType | None = None,
        axes_type: ElementType | None = None,
    ) -> PartialShape:
        """The output shape as OpenVINO infers it.

        Args:
            data: shape of the data input.
            axes_shape: shape of the axes input (None when unknown).
            axes: the axes values when they are constant, else None.
            keep_dims: the attribute's value.
            data_type, axes_type: element types, checked when given.

        Raises:
            ShapeInferenceError: the inputs violate the op's rule (OpenVINO's message).
        """
        self.check_types(data_type, axes_type)
        if axes_shape is not None and axes_shape.rank is not None and axes_shape.rank > 1:
            raise ShapeInferenceError(f"Axes input must be a scalar or 1D input. Got: {axes_shape}")
        if data.dims is not None and axes is not None:
            normalized = set(normalize_axes(axes, len(data.dims), OPENVINO_AXES))
            if not data.dims and keep_dims and axes:
                # OpenVINO accepts axis 0/-1 of a scalar, then fails setting that dim to 1 (shape_util.cpp).
                raise ShapeInferenceError("Accessing out-of-range dimension")
            if keep_dims:
                return PartialShape(
                    tuple(Dimension.static(1) if i in normalized else d for i, d in enumerate(data.dims))
                )
            return PartialShape(tuple(d for i, d in enumerate(data.dims) if i not in normalized))
        if keep_dims:
            return PartialShape.dynamic(data.rank)
        if (
            data.rank is not None
            and axes_shape is not None
            and axes_shape.is_static
            and _element_count(axes_shape) == 1
        ):
            # OpenVINO computes the rank as Dimension(r) - 1, which an interval clamps at 0 for a scalar.
            return PartialShape.dynamic(max(data.rank - 1, 0))
        return PartialShape.dynamic()

    def analyse(self, ctx: LayerContext) -> ReductionInfo:
        """Everything about this reduction layer: attributes, inputs, axes, output, error."""
        layer = ctx.layer
        text = layer.data.get("keep_dims")
        keep_dims, valid = parse_bool_attr(text)
        if len(layer.inputs) != 2 or len(layer.outputs) != 1:
            unresolved = PortState(None, None, "unresolved")
            return ReductionInfo(
                layer, self, keep_dims, text, valid, unresolved, unresolved,
                ValueInfo("unresolved", None, "wrong number of ports"), unresolved,
                f"{layer.type} takes 2 inputs (data, axes) and gives 1 output; "
                f"this layer has {len(layer.inputs)} inputs and {len(layer.outputs)} outputs",
            )  # fmt: skip
        data = ctx.input(0)
        axes_state = ctx.input(1)
        axes = ctx.value(1)
        out, error = self._output(data, axes_state, axes, keep_dims)
        return ReductionInfo(layer, self, keep_dims, text, valid, data, axes_state, axes, out, error)

    def with_data(self, info: ReductionInfo, data: PortState) -> ReductionInfo:
        """``info`` with the data input's state known by other means (OpenVINO's inference), output again."""
        out, error = self._output(data, info.axes_state, info.axes, info.keep_dims)
        return replace(info, data=data, output=out, error=error)

    def _output(
        self, data: PortState, axes_state: PortState, axes: ValueInfo, keep_dims: bool
    ) -> tuple[PortState, str | None]:
        shape: PartialShape | None = None
        types = {"data_type": data.element_type, "axes_type": axes_state.element_type}
        try:
            if data.shape is None:
                # Types can still be checked; the shape cannot be inferred.
                self.output_shape(PartialShape.dynamic(), axes_state.shape, None, keep_dims, **types)
            elif axes.kind == "unresolved":
                self.output_shape(data.shape, axes_state.shape, None, keep_dims, **types)
            else:
                shape = self.output_shape(data.shape, axes_state.shape, _as_int64(axes.values), keep_dims, **types)
        except ShapeInferenceError as exc:
            return PortState(None, data.element_type, "unresolved"), exc.message
        if shape is None:
            return PortState(None, data.element_type, "unresolved"), None
        return PortState(shape, data.element_type, "inferred"), None

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        return [self.analyse(ctx).output]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """Constant integers (or booleans) reduced as OpenVINO folds them (``ReduceProd(ShapeOf(x))``, ONNX's Size,
        in a sub-graph's condition); Mean, L1 and L2 are not folded here."""
        folded = super().fold(ctx)
        if folded.kind == "runtime" and len(ctx.layer.inputs) == 2:
            return self._bounded(ctx, folded)
        data = const_tensor(ctx.value(0)) if len(ctx.layer.inputs) == 2 and folded.kind == "unresolved" else None
        etype, fold_with = ctx.input(0).element_type, _FOLDS.get(self.type)
        if data is None or fold_with is None or etype is None:
            return folded
        if not evaluates(self.type, etype):
            return unevaluated(ctx.layer, etype, folded)
        values, shape = data
        keep_dims, _ = parse_bool_attr(ctx.layer.data.get("keep_dims"))
        axes = _as_int64(ctx.value(1).values)
        if axes is None or 0 in shape or (not shape and keep_dims):  # (empty: left to OpenVINO; refused)
            return folded
        try:
            reduced = set(normalize_axes(axes, max(len(shape), 1), OPENVINO_AXES))
        except ShapeInferenceError:
            return folded
        kept = tuple(1 if i in reduced else d for i, d in enumerate(shape))
        out: list[int | None] = [None] * math.prod(kept)
        strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
        out_strides = [math.prod(kept[i + 1 :]) for i in range(len(kept))]
        for flat, value in enumerate(values):
            at = sum(((flat // strides[i]) % d) * out_strides[i] for i, d in enumerate(shape) if i not in reduced)
            held = out[at]
            out[at] = value if held is None else fold_with(held, value)
        result = tuple(v for v in out if v is not None)
        out_shape = kept if keep_dims else tuple(d for i, d in enumerate(shape) if i not in reduced)
        return ValueInfo("const", result if self.logical else wrapped(result, etype), shape=out_shape)

    def _bounded(self, ctx: LayerContext, folded: ValueInfo) -> ValueInfo:
        """A runtime 1-D value reduced whole (a shape's element count, its largest dim, ``max(-2, d)``) to the bounds
        OpenVINO's default bound evaluator gives it: the op over the elements' lower bounds and over their upper ones
        (no upper bound where one has none), negative ones too. A product with a negative factor is not monotonic, and
        OpenVINO's bounds of it may be out of order (``-1 * d`` of a dim ``1..5``: ``-1,-5``): those are not kept."""
        etype, bound = ctx.input(0).element_type, _BOUNDS.get(self.type)
        elements = partial_value(ctx, 0)
        if elements is None or bound is None or etype is None or not evaluates(self.type, etype):
            return folded
        if _as_int64(ctx.value(1).values) not in ((0,), (-1,)) or None in elements:
            return folded
        known = cast(list[Bounds], elements)
        result = bound(known)
        least, top = type_limits(etype)
        if result[0] >= top or result[0] < least or (result[1] is not None and result[1] < result[0]):
            return folded
        if (
            result[0] == result[1]
        ):  # bounds that meet (the least of a shape holding a 0): a constant, as OpenVINO has it
            keep_dims, _ = parse_bool_attr(ctx.layer.data.get("keep_dims"))
            return ValueInfo("const", (result[0],), shape=(1,) if keep_dims else ())
        return replace(folded, known=((result[0], None if result[1] is None or result[1] >= top else result[1]),))

    # -- execution ------------------------------------------------------------------------------------------
    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        """The reference result with OpenVINO semantics: ``data`` of an accepted type, ``axes`` normalised,
        sorted and unique; anything worth telling (an exact result that wrapped) appended to ``notes``."""
        raise NotImplementedError(f"{self.type} has no reference kernel")

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        """The op as an OpenVINO node, from its own opset, over ``data`` and ``axes`` (``openvino.Output``)."""
        raise NotImplementedError(f"{self.type} has no OpenVINO builder")

    def rounding_mass(self, data: Array, axes: Array, keep_dims: bool) -> Array | None:
        """The magnitudes behind audit's rounding allowance (to multiply by the type's epsilon): the sum
        ("sum") or mean ("mean") of ``|data|`` over ``axes``, in f64; None for other ops or non-float data."""
        import numpy as np

        from ovreduce.reference import openvino as ref

        if self.allowance is None or data.dtype.kind not in "fV":
            return None
        kernel = ref.kernel_mean if self.allowance == "mean" else ref.kernel_l1
        mass, _ = ref.run_kernel(kernel, False, np.abs(data.astype(np.float64)), axes, keep_dims)
        return np.asarray(mass, dtype=np.float64)


class _Arithmetic(ReductionOp):
    logical = False


class _Logical(ReductionOp):
    logical = True


def _ov_integral_number(etype: ElementType) -> bool:
    """OpenVINO's ``element::Type::is_integral_number()``: neither real (nf4 is not) nor boolean."""
    return etype.kind != "bool" and (etype.kind != "float" or etype.name == "nf4")


def _element_count(shape: PartialShape) -> int:
    count = 1
    for d in shape.to_list():
        count *= d
    return count


def _as_int64(values: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Axes as OpenVINO reads them (``get_input_const_data_as<int64_t>``): u64 values wrap to int64."""
    if values is None:
        return None
    return tuple(v - (1 << 64) if v >= 1 << 63 else v for v in values)


def _ref() -> Any:
    from ovreduce.reference import openvino as ref

    return ref


def _opset(n: int) -> Any:
    import importlib

    from ovreduce._openvino import openvino

    openvino()  # a clear BackendError when the runtime is missing
    return importlib.import_module(f"openvino.opset{n}")


# How two integer (or boolean) values reduce to one where :meth:`ReductionOp.fold` folds
_FOLDS: dict[str, Callable[[int, int], int]] = {
    "ReduceSum": operator.add, "ReduceProd": operator.mul, "ReduceMax": max, "ReduceMin": min,
    "ReduceLogicalAnd": min, "ReduceLogicalOr": max,
}  # fmt: skip
_BOUNDS: dict[str, Callable[[list[Bounds]], Bounds]] = {
    "ReduceProd": lambda b: (  # (an upper bound of 0 makes the product's 0, unknown factors or not)
        math.prod(lo for lo, _ in b),
        0 if any(hi == 0 for _, hi in b) else _all_or_none(math.prod, [hi for _, hi in b]),
    ),
    "ReduceMax": lambda b: (max(lo for lo, _ in b), _all_or_none(max, [hi for _, hi in b])),
    "ReduceMin": lambda b: (min(lo for lo, _ in b), min((hi for _, hi in b if hi is not None), default=None)),
}
"""How a reduction bounds a runtime value's elements reduced whole (OpenVINO evaluates ReduceSum's in no way)."""


def _all_or_none(fn: Callable[[list[int]], int], values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return fn(known) if len(known) == len(values) else None


_V1 = range(1, LAST_OPSET + 1)  # opset1 ... opset16
_V4 = range(4, LAST_OPSET + 1)


# -- the ops ------------------------------------------------------------------------------------------------
class ReduceMean_1(_Arithmetic):  # noqa: N801 - <Type>_<version>, as onnx.reference names its op classes
    type, version, opsets, allowance = "ReduceMean", "opset1", _V1, "mean"

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_mean(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_mean(data, axes, keep_dims)


class ReduceSum_1(_Arithmetic):  # noqa: N801
    type, version, opsets, allowance = "ReduceSum", "opset1", _V1, "sum"

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_sum(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_sum(data, axes, keep_dims)


class ReduceMax_1(_Arithmetic):  # noqa: N801
    type, version, opsets = "ReduceMax", "opset1", _V1

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_max(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_max(data, axes, keep_dims)


class ReduceMin_1(_Arithmetic):  # noqa: N801
    type, version, opsets = "ReduceMin", "opset1", _V1

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_min(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_min(data, axes, keep_dims)


class ReduceProd_1(_Arithmetic):  # noqa: N801
    type, version, opsets = "ReduceProd", "opset1", _V1

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_prod(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_prod(data, axes, keep_dims)


class ReduceL1_4(_Arithmetic):  # noqa: N801
    type, version, opsets, allowance = "ReduceL1", "opset4", _V4, "sum"

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_l1(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(4).reduce_l1(data, axes, keep_dims)


class ReduceL2_4(_Arithmetic):  # noqa: N801
    type, version, opsets = "ReduceL2", "opset4", _V4

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_l2(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(4).reduce_l2(data, axes, keep_dims)


class ReduceLogicalAnd_1(_Logical):  # noqa: N801
    type, version, opsets = "ReduceLogicalAnd", "opset1", _V1

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_logical_and(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_logical_and(data, axes, keep_dims)


class ReduceLogicalOr_1(_Logical):  # noqa: N801
    type, version, opsets = "ReduceLogicalOr", "opset1", _V1

    def kernel(self, data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return _ref().kernel_logical_or(data, axes, keep_dims, notes)  # type: ignore[no-any-return]

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        return _opset(1).reduce_logical_or(data, axes, keep_dims)
