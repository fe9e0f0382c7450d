"""oneDNN Graph ReduceMean in pure NumPy.

oneDNN Graph's ReduceMean (``dnnl::graph::op::kind::ReduceMean``) takes its axes from the ``axes``
attribute *or* from a second input tensor -- exactly one of the two -- and, like OpenVINO's ReduceMean-1,
treats empty axes as the identity and defaults ``keep_dims`` to false. Sources are f32, bf16 or f16
(the axes tensor is s32 in oneDNN's type table; any integer values are taken here).

Numerics: the source is converted to float32, summed with a float32 accumulator (NumPy's pairwise
summation along a contiguous axis; oneDNN's own summation order is implementation-defined), divided by
the element count in float32, and converted to the source type once at the end. There is no rounding to
bf16/f16 along the way, so the mean of 70000 f16 ones is exactly 1.0 (ONNX's reference, which sums in
f16, overflows to inf).

How it differs from the other semantics
---------------------------------------
=====================  ===========================  ====================================  ================
                       oneDNN Graph (this module)   ONNX ReduceMean                       OpenVINO
=====================  ===========================  ====================================  ================
axes                   attribute xor input          attribute (<18) or optional input     input, required
empty axes             identity                     all axes (identity only with          identity
                                                    noop_with_empty_axes=1, opset >= 18)
keep_dims default      false                        keepdims=1                            false
types                  f32, bf16, f16               floats and 32/64-bit integers         any numeric
accumulation           f32, one final rounding      the input dtype                       plugin-dependent
=====================  ===========================  ====================================  ================

Where the specification is silent: a mean over zero elements (a reduced dim of length 0) is NaN, as 0/0
in float32 (an empty output is simply empty); a rank-0 source accepts only empty axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.errors import InputError
from ovreduce.ops.axes import AxesPolicy, normalize_axes

__all__ = ["reduce_mean"]

_OP: Final = "oneDNN Graph ReduceMean"
_SOURCE_TYPES: Final = {
    np.dtype(np.float32): "f32",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
}

AxesValue = Sequence[int] | npt.NDArray[np.integer[Any]]


def reduce_mean(
    src: npt.NDArray[Any],
    *,
    axes_attr: Sequence[int] | None = None,
    axes_input: AxesValue | None = None,
    keep_dims: bool = False,
) -> npt.NDArray[Any]:
    """Compute oneDNN Graph ReduceMean: f32 accumulation, one rounding to the source type.

    Args:
        src: f32, bf16 (``ml_dtypes.bfloat16``) or f16 tensor.
        axes_attr: the ``axes`` attribute (a list of s64). Give exactly one of ``axes_attr`` and
            ``axes_input``.
        axes_input: the second input, a 1-D integer tensor (or a sequence of ints).
        keep_dims: keep reduced axes as size 1 (default false: remove them).

    Returns:
        The mean, of ``src``'s dtype. Empty axes return a copy of ``src``.

    Raises:
        InputError: both or neither axes sources given; ``src`` not a NumPy array or not f32/bf16/f16;
            axes not integers, not 1-D, out of [-r, r-1] or repeated; ``keep_dims`` not a bool.
    """
    if (axes_attr is None) == (axes_input is None):
        given = "both were given" if axes_attr is not None else "neither was given"
        raise InputError(
            f"{_OP} needs exactly one of the axes attribute (axes_attr) and the axes input tensor (axes_input); {given}"
        )
    if not isinstance(src, np.ndarray | np.generic):
        raise InputError(f"{_OP} src must be a NumPy array; got {type(src).__name__}")
    array = np.asarray(src)
    if array.dtype not in _SOURCE_TYPES:
        raise InputError(f"{_OP} supports src types f32, bf16 and f16 only; got {array.dtype.name}")
    if not isinstance(keep_dims, bool | np.bool_):
        raise InputError(f"{_OP}: keep_dims must be a bool (true/false); got {keep_dims!r}")
    if axes_attr is not None:
        axes = _normalize_axes(axes_attr, array.ndim, "axes attribute")
    else:
        axes = _normalize_axes(axes_input, array.ndim, "axes input")
    if not axes:
        return array.copy()

    keep = bool(keep_dims)
    if math.prod(array.shape[a] for a in axes) == 0:
        kept = [1 if i in axes else d for i, d in enumerate(array.shape)]
        shape = kept if keep else [d for i, d in enumerate(array.shape) if i not in axes]
        return np.full(shape, np.nan, dtype=array.dtype)
    with np.errstate(all="ignore"):
        averaged = np.mean(array.astype(np.float32), axis=axes, keepdims=keep, dtype=np.float32)
        return np.asarray(averaged, dtype=np.float32).astype(array.dtype)


_AXES = AxesPolicy(
    not_integer="{op}: the {what} must hold integers; got {value!r}",
    out_of_range="{op}: axis {axis} in the {what} is out of range for a rank-{rank} src; expected {expected}",
    rank0_expected="no axes (a rank-0 src has none)",
    repeated="{op}: the {what} {values} names axis {axis} more than once; axes must be unique",
)


def _normalize_axes(axes: object, rank: int, what: str) -> tuple[int, ...]:
    if isinstance(axes, np.ndarray):
        if axes.dtype.kind not in "iu" or axes.ndim != 1:
            raise InputError(f"{_OP}: the {what} must be a 1-D integer tensor; got {axes.ndim}-D {axes.dtype.name}")
        values: list[Any] = list(axes)
    elif isinstance(axes, Sequence) and not isinstance(axes, str | bytes):
        values = list(axes)
    else:
        raise InputError(f"{_OP}: the {what} must be a sequence of ints; got {axes!r}")
    return normalize_axes(values, rank, _AXES, op=_OP, what=what)
