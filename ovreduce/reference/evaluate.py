"""The OpenVINO-semantics reference of a registered reduction, by its type name.

:mod:`ovreduce.reference.openvino` holds the numerics; each op of :mod:`ovreduce.ops.reduce` names its
kernel, and these functions find the op in the registry (a toy op registered in a test is found too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy.typing as npt

from ovreduce.ops.registry import reduction
from ovreduce.reference.openvino import run_kernel

__all__ = [
    "reduce",
    "reduce_l1",
    "reduce_l2",
    "reduce_logical_and",
    "reduce_logical_or",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reduce_with_notes",
]

Array = npt.NDArray[Any]


def reduce_with_notes(
    op_type: str,
    data: npt.ArrayLike,
    axes: Sequence[int] | Array | int,
    keep_dims: bool = False,
    *,
    version: str = "",
) -> tuple[Array, list[str]]:
    """:func:`reduce`, plus notes on anything worth telling (an exact result that wrapped).

    ``version`` (an IR's ``opsetN``) picks the version of the op in the registry; by default its newest.

    Raises:
        InputError: an unknown op or an element type the op does not take.
        ShapeInferenceError: axes out of range, not integer, or of rank > 1 (OpenVINO's messages).
    """
    op = reduction(op_type, version)
    return run_kernel(op.kernel, op.logical, data, axes, keep_dims)


def reduce(op_type: str, data: npt.ArrayLike, axes: Sequence[int] | Array | int, keep_dims: bool = False) -> Array:
    """Reduce ``data`` over ``axes`` with OpenVINO semantics (see :mod:`ovreduce.reference.openvino`).

    Args:
        op_type: ``ReduceMean``, ``ReduceSum``, ``ReduceMax``, ``ReduceMin``, ``ReduceProd``, ``ReduceL1``,
            ``ReduceL2``, ``ReduceLogicalAnd`` or ``ReduceLogicalOr``.
        data: the input; its dtype is the element type (use ``ml_dtypes.bfloat16`` for bf16).
        axes: a scalar or 1-D sequence of axes in ``[-r, r-1]``; empty means the identity.
        keep_dims: keep reduced axes as dims of size 1 (OpenVINO's default is false).

    Returns:
        An array of ``data``'s dtype (bool for the logical reductions).

    Raises:
        InputError: an unknown op or an element type the op does not take.
        ShapeInferenceError: axes out of range, not integer, or of rank > 1 (OpenVINO's messages).
    """
    return reduce_with_notes(op_type, data, axes, keep_dims)[0]


def _named(op_type: str) -> Callable[..., Array]:
    def fn(data: npt.ArrayLike, axes: Sequence[int] | Array | int, keep_dims: bool = False) -> Array:
        return reduce(op_type, data, axes, keep_dims)

    fn.__name__ = "reduce_" + op_type.removeprefix("Reduce").lower().replace("logical", "logical_")
    fn.__doc__ = f"``{op_type}`` with OpenVINO semantics; see :func:`reduce`."
    return fn


reduce_mean = _named("ReduceMean")
reduce_sum = _named("ReduceSum")
reduce_max = _named("ReduceMax")
reduce_min = _named("ReduceMin")
reduce_prod = _named("ReduceProd")
reduce_l1 = _named("ReduceL1")
reduce_l2 = _named("ReduceL2")
reduce_logical_and = _named("ReduceLogicalAnd")
reduce_logical_or = _named("ReduceLogicalOr")
