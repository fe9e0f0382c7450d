"""The OpenVINO-semantics reference of a registered reduction, by its type name.

:mod:`ovreduce.reference.openvino` holds the numerics; each op of :mod:`ovreduce.ops.reduce` names its
kernel, and these functions find the op in the registry (a toy op registered in a test is found too).
Every registered reduction also has its function here, named after its type (:func:`alias`):
``reduce_mean(data, axes, keep_dims=False)`` is ``reduce("ReduceMean", data, axes, keep_dims)``, and so on
for ``reduce_logical_and``, ``reduce_l2``... and a toy op's ``reduce_toy_sum_square``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.ops.registry import reduction, reductions
from ovreduce.reference.openvino import describe_empty_extreme, normalized_axes, run_kernel

__all__ = ["alias", "reduce", "reduce_with_notes", "undefined_elements"]

Array = npt.NDArray[Any]

# The ops whose specification leaves the value of a reduction over an empty set undefined ("Reducing empty
# tensor results in an undefined behavior", ReduceMax-1 and ReduceMin-1).
_UNDEFINED_WHEN_EMPTY = {"ReduceMax": True, "ReduceMin": False}  # op type -> its reference starts from lowest()


def undefined_elements(
    op_type: str,
    data_shape: Sequence[int],
    axes: Sequence[int] | Array | int,
    keep_dims: bool = False,
    *,
    version: str = "",
) -> npt.NDArray[np.bool_] | None:
    """The output elements whose value the specification leaves undefined, as a boolean mask of the output's
    shape; None when every output element is defined (or there are none).

    For ReduceMax and ReduceMin that is every output element when a reduced dim has size 0 (each reduces an
    empty set); every other reduction is defined everywhere. Comparisons exclude these elements
    (``ovreduce.compare.compare(..., undefined=mask)``); the reference still gives a value for them.

    Raises:
        InputError: an unknown op.
        ShapeInferenceError: axes out of range, not integer, or of rank > 1 (as :func:`reduce`).
    """
    op = reduction(op_type, version)
    if op.type not in _UNDEFINED_WHEN_EMPTY:
        return None
    shape = tuple(int(d) for d in data_shape)
    normalized = normalized_axes(np.broadcast_to(np.zeros((), np.int8), shape), axes, keep_dims)
    if not normalized or all(shape[a] for a in normalized):
        return None
    kept = [1 if a in normalized else d for a, d in enumerate(shape) if keep_dims or a not in normalized]
    if not all(kept):
        return None  # no output elements
    return np.ones(kept, dtype=np.bool_)


def reduce_with_notes(
    op_type: str,
    data: npt.ArrayLike,
    axes: Sequence[int] | Array | int,
    keep_dims: bool = False,
    *,
    version: str = "",
) -> tuple[Array, list[str]]:
    """:func:`reduce`, plus notes on anything worth telling (an exact result that wrapped; a ReduceMax or
    ReduceMin over an empty set, whose value the specification leaves undefined: see
    :func:`undefined_elements`).

    ``version`` (an IR's ``opsetN``) picks the version of the op in the registry; by default its newest.

    Raises:
        InputError: an unknown op or an element type the op does not take.
        ShapeInferenceError: axes out of range, not integer, or of rank > 1 (OpenVINO's messages).
    """
    op = reduction(op_type, version)
    result, notes = run_kernel(op.kernel, op.logical, data, axes, keep_dims)
    if op.type in _UNDEFINED_WHEN_EMPTY:
        array = np.asarray(data)
        if undefined_elements(op.type, array.shape, axes, keep_dims, version=version) is not None:
            notes.append(
                f"{op.type} over an empty set (a reduced dim has size 0): the specification leaves the value "
                f"undefined; the reference gives OpenVINO's reference implementation's "
                f"{describe_empty_extreme(array.dtype, _UNDEFINED_WHEN_EMPTY[op.type])}"
            )
    return result, notes


def reduce(op_type: str, data: npt.ArrayLike, axes: Sequence[int] | Array | int, keep_dims: bool = False) -> Array:
    """Reduce ``data`` over ``axes`` with OpenVINO semantics (see :mod:`ovreduce.reference.openvino`).

    Args:
        op_type: a registered reduction (:func:`ovreduce.ops.registry.reductions`): ``ReduceMean``,
            ``ReduceLogicalAnd``...
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


def alias(op_type: str) -> str:
    """The name of ``op_type``'s function here: ``reduce_`` and the type without ``Reduce`` in snake case
    (``ReduceLogicalAnd``: ``reduce_logical_and``, ``ReduceL1``: ``reduce_l1``)."""
    return "reduce_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op_type.removeprefix("Reduce")).lower()


def __getattr__(name: str) -> Callable[..., Array]:
    """``reduce_mean`` and the others: :func:`reduce` of the registered reduction :func:`alias` names so."""
    op_type = next((t for t in reductions() if alias(t) == name), None)
    if op_type is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def fn(data: npt.ArrayLike, axes: Sequence[int] | Array | int, keep_dims: bool = False) -> Array:
        return reduce(op_type, data, axes, keep_dims)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{op_type}`` with OpenVINO semantics; see :func:`reduce`."
    return fn


def __dir__() -> list[str]:
    return sorted([*globals(), *(alias(t) for t in reductions())])
