"""The Reduce* family: which ops belong to it and the one shape rule they share.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.shapes import Dimension, PartialShape

__all__ = [
    "REDUCTIONS",
    "ReduceOp",
    "infer_reduce_shape",
    "normalize_axes",
    "parse_bool_attr",
]


@dataclass(frozen=True, slots=True)
class ReduceOp:
    """One member of the family: its IR type name, the opset it came in, and whether it is logical."""

    type: str
    opset: str
    logical: bool = False


REDUCTIONS: Mapping[str, ReduceOp] = {
    op.type: op
    for op in (
        ReduceOp("ReduceMean", "opset1"),
        ReduceOp("ReduceSum", "opset1"),
        ReduceOp("ReduceMax", "opset1"),
        ReduceOp("ReduceMin", "opset1"),
        ReduceOp("ReduceProd", "opset1"),
        ReduceOp("ReduceL1", "opset4"),
        ReduceOp("ReduceL2", "opset4"),
        ReduceOp("ReduceLogicalAnd", "opset1", logical=True),
        ReduceOp("ReduceLogicalOr", "opset1", logical=True),
    )
}


def parse_bool_attr(text: str | None, default: bool = False) -> tuple[bool, bool]:
    """Read a boolean attribute the way OpenVINO's IR reader does: ``(value, recognised)``.

    ``true``/``1`` and ``false``/``0`` are recognised case-insensitively; anything else (``yes``,
    ``" true"``, ``2``...) is silently replaced by the default, which this function reports as
    ``recognised=False`` so callers can warn about it.
    """
    if text is None:
        return default, True
    lowered = text.lower()
    if lowered in ("true", "1"):
        return True, True
    if lowered in ("false", "0"):
        return False, True
    return default, False


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """Axes in ``[-rank, rank-1]`` mapped to ``[0, rank-1]``; :class:`ShapeInferenceError` otherwise.

    The message is OpenVINO's: ``Axis 5 out of the tensor rank range [-2, 1].`` Like OpenVINO's
    ``is_axis_valid``, a scalar (``rank == 0``) is checked against ``[-1, 0]``; its valid axes have no
    dimension to map to, so they are dropped from the result.
    """
    bound = max(rank, 1)
    out = []
    for axis in axes:
        if not -bound <= axis < bound:
            raise ShapeInferenceError(f"Axis {axis} out of the tensor rank range [{-bound}, {bound - 1}].")
        if rank:
            out.append(axis + rank if axis < 0 else axis)
    return tuple(out)


def check_reduce_types(op: ReduceOp, data_type: ElementType | None, axes_type: ElementType | None) -> None:
    """OpenVINO's element type checks, with its messages.

    OpenVINO's predicates are looser than their messages: ``is_integral_number()`` is "not real and not
    boolean", so string and nf4 (which OpenVINO does not count as real) pass both the data check of the
    arithmetic reductions and the axes check.
    """
    if data_type is not None and data_type.kind != "dynamic":
        if op.logical and data_type.kind != "bool":
            raise ShapeInferenceError("Element type of data input must be boolean.")
        if not op.logical and data_type.kind == "bool":
            raise ShapeInferenceError(f"Element type of data input must be numeric. Got: {data_type}")
    if axes_type is not None and not _ov_integral_number(axes_type):
        raise ShapeInferenceError(f"Element type of axes input must be integer. Got: {axes_type}")


def _ov_integral_number(etype: ElementType) -> bool:
    """OpenVINO's ``element::Type::is_integral_number()``: neither real (nf4 is not) nor boolean."""
    return etype.kind != "bool" and (etype.kind != "float" or etype.name == "nf4")


def infer_reduce_shape(
    op: ReduceOp,
    data: PartialShape,
    axes_shape: PartialShape | None,
    axes: Sequence[int] | None,
    keep_dims: bool,
    *,
    data_type: ElementType | None = None,
    axes_type: ElementType | None = None,
) -> PartialShape:
    """The output shape of ``op`` as OpenVINO infers it.

    Args:
        data: shape of the data input.
        axes_shape: shape of the axes input (None when unknown).
        axes: the axes values when they are constant, else None.
        keep_dims: the attribute's value.
        data_type, axes_type: element types, checked when given.

    Raises:
        ShapeInferenceError: the inputs violate the op's rule (OpenVINO's message).
    """
    check_reduce_types(op, data_type, axes_type)
    if axes_shape is not None and axes_shape.rank is not None and axes_shape.rank > 1:
        raise ShapeInferenceError(f"Axes input must be a scalar or 1D input. Got: {axes_shape}")
    if data.dims is not None and axes is not None:
        normalized = set(normalize_axes(axes, len(data.dims)))
        if not data.dims and keep_dims and axes:
            # OpenVINO accepts axis 0/-1 of a scalar, then fails setting that dim to 1 (shape_util.cpp).
            raise ShapeInferenceError("Accessing out-of-range dimension")
        if keep_dims:
            return PartialShape(tuple(Dimension.static(1) if i in normalized else d for i, d in enumerate(data.dims)))
        return PartialShape(tuple(d for i, d in enumerate(data.dims) if i not in normalized))
    if keep_dims:
        return PartialShape.dynamic(data.rank)
    if data.rank is not None and axes_shape is not None and axes_shape.is_static and _element_count(axes_shape) == 1:
        # OpenVINO computes the rank as Dimension(r) - 1, which an interval clamps at 0 for a scalar.
        return PartialShape.dynamic(max(data.rank - 1, 0))
    return PartialShape.dynamic()


def _element_count(shape: PartialShape) -> int:
    count = 1
    for d in shape.to_list():
        count *= d
    return count
