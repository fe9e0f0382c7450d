"""com.microsoft QLinearReduceMean (onnxruntime contrib operator) in pure NumPy.

``Output = Dequantize(Input) -> ReduceMean on fp32 data -> Quantize(output)``, per tensor:

1. dequantize: ``(x - data_zero_point) * data_scale``, the difference exact in int32, then float32;
2. mean over ``axes`` in float32 (``np.mean`` with a float32 accumulator; NumPy sums pairwise along a
   contiguous axis), i.e. float32 sum divided by the element count;
3. quantize: ``round_half_to_even(mean / reduced_scale) + reduced_zero_point``, saturated to the data
   type's range (u8 [0, 255], i8 [-128, 127]). The rounding comes *before* the zero point is added, as in
   ONNX QuantizeLinear and onnxruntime's MLAS (``onnxruntime/core/mlas/lib/quantize.cpp``:
   "Output = Saturate(RoundToEven(Input / Scale) + ZeroPoint)"). The two orders differ on exact halves
   with an odd zero point: mean/scale = 2.5 with zero point 1 gives 3 here; rounding *after* adding the
   zero point -- how OpenVINO's ONNX frontend composes QLinearSigmoid/LeakyRelu/AveragePool
   (``src/frontends/onnx/frontend/src/op/com.microsoft/qlinear_operators.cpp``: Round(Divide(result,
   scale) + Convert(zp)), HALF_TO_EVEN) -- would give round(3.5) = 4.

How it differs from the other ReduceMean semantics
--------------------------------------------------
==================  =====================================  ================  ===================
                    QLinearReduceMean (this module)        ONNX ReduceMean   OpenVINO / oneDNN
==================  =====================================  ================  ===================
axes / keepdims     both required attributes               optional          axes required /
                                                                             exactly one source
empty axes          reduce over **all** axes (see below)   all axes          identity
keepdims default    none (required); 1 in ORT's shape      1                 false
                    inference when absent
accumulation        float32 on dequantized values          input dtype       f32 (oneDNN)
result              requantized to u8/i8, saturating       input dtype       input dtype
==================  =====================================  ================  ===================

Decisions where the specification is silent
-------------------------------------------
* Empty ``axes``: reduce over all axes. The operator text only says "the default is to reduce over all
  the dimensions"; onnxruntime's schema (``onnxruntime/core/graph/contrib_ops/quantization_defs.cc``,
  the QLinearReduceMean shape-inference function) keeps no input dim when ``axes`` is empty, commented
  "axes empty means reduce all dim". I found no kernel registration for QLinearReduceMean in
  onnxruntime's sources (``onnxruntime/contrib_ops/cpu/quantization/qlinear_global_average_pool.cc``
  implements QLinearGlobalAveragePool, a different op), so that schema function is the only executable
  statement of the rule; it also matches ONNX ReduceMean before opset 18.
* ``axes=None`` or ``keepdims=None`` is an :class:`InputError`: both attributes are declared required.
* Axes must be in [-r, r-1] (the schema's shape inference checks this) and unique (the schema does not
  check; a repeated axis is rejected as in every other semantics here).
* Scales: float32, one element (a scalar or a 1-element tensor of any rank -- onnxruntime's shape
  inference insists on rank 0; a Python ``float`` is also taken), finite and > 0.
* Zero points: ``None`` means 0; otherwise a NumPy scalar or 1-element array of exactly the data's
  dtype (the schema types them T).
* A mean over zero elements has no value to quantize: :class:`InputError` (an empty *output* is fine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ovreduce.errors import InputError
from ovreduce.ops.axes import AxesPolicy, normalize_axes

__all__ = ["dequantize", "qlinear_reduce_mean"]

_OP: Final = "QLinearReduceMean"
_QUANTIZED_TYPES: Final = (np.dtype(np.uint8), np.dtype(np.int8))

Scale = float | np.floating[Any] | npt.NDArray[np.float32]
ZeroPoint = np.integer[Any] | npt.NDArray[np.integer[Any]] | None


def qlinear_reduce_mean(
    data: npt.NDArray[np.uint8] | npt.NDArray[np.int8],
    data_scale: Scale,
    data_zero_point: ZeroPoint,
    reduced_scale: Scale,
    reduced_zero_point: ZeroPoint,
    axes: Sequence[int] | None,
    keepdims: int | None,
) -> npt.NDArray[Any]:
    """Compute com.microsoft QLinearReduceMean-1: dequantize, float32 mean, requantize.

    Args:
        data: uint8 or int8 tensor.
        data_scale: the input scale (float32 scalar or 1-element tensor, finite, > 0).
        data_zero_point: the input zero point, of ``data``'s dtype; ``None`` for 0.
        reduced_scale: the output scale (float32 scalar or 1-element tensor, finite, > 0).
        reduced_zero_point: the output zero point, of ``data``'s dtype; ``None`` for 0.
        axes: axes to reduce, each in [-r, r-1] and unique; empty means all axes. Required.
        keepdims: 1 keeps reduced axes as size 1, 0 removes them. Required.

    Returns:
        The requantized mean, of ``data``'s dtype.

    Raises:
        InputError: ``data`` not a uint8/int8 NumPy array; a scale that is not a positive finite
            float32 scalar; a zero point of another dtype or size; ``axes`` or ``keepdims`` missing or
            malformed; axes out of range or repeated; a mean over zero elements.
    """
    array = _quantized_array(data, f"{_OP} data")
    in_scale = _scale(data_scale, f"{_OP} data_scale")
    in_zero = _zero_point(data_zero_point, array.dtype, f"{_OP} data_zero_point")
    out_scale = _scale(reduced_scale, f"{_OP} reduced_scale")
    out_zero = _zero_point(reduced_zero_point, array.dtype, f"{_OP} reduced_zero_point")
    if axes is None:
        raise InputError(
            f"{_OP} requires the axes attribute (the schema declares it required); got None. "
            "Pass [] to reduce over all axes"
        )
    if keepdims is None:
        raise InputError(f"{_OP} requires the keepdims attribute (the schema declares it required); got None")
    if isinstance(keepdims, bool | np.bool_) or not (isinstance(keepdims, int | np.integer) and keepdims in (0, 1)):
        raise InputError(f"{_OP}: keepdims must be 0 or 1; got {keepdims!r}")
    keep = bool(keepdims)
    reduce_axes = _normalize_axes(axes, array.ndim) or tuple(range(array.ndim))

    if math.prod(array.shape[a] for a in reduce_axes) == 0:
        kept = [1 if i in reduce_axes else d for i, d in enumerate(array.shape)]
        shape = kept if keep else [d for i, d in enumerate(array.shape) if i not in reduce_axes]
        if math.prod(shape) == 0:
            return np.empty(shape, dtype=array.dtype)
        raise InputError(
            f"{_OP}: the mean over zero elements has no quantized value (input shape {list(array.shape)}, "
            f"reduced axes {list(reduce_axes)} include a zero-length dim); expected non-zero reduced dims"
        )
    info = np.iinfo(array.dtype)
    with np.errstate(all="ignore"):
        real = _dequantize(array, in_scale, in_zero)
        averaged = np.mean(real, axis=reduce_axes, keepdims=keep, dtype=np.float32)
        quantized = np.rint(np.asarray(averaged, dtype=np.float32) / out_scale) + np.float32(out_zero)
        return np.asarray(np.clip(quantized, info.min, info.max)).astype(array.dtype)


def dequantize(
    q: npt.NDArray[np.uint8] | npt.NDArray[np.int8],
    scale: Scale,
    zero_point: ZeroPoint = None,
) -> npt.NDArray[np.float32]:
    """Dequantize a per-tensor u8/i8 tensor: ``(q - zero_point) * scale`` in float32.

    Reports use it to show a quantized difference in real units.

    Args:
        q: uint8 or int8 tensor.
        scale: float32 scalar or 1-element tensor (a Python float is taken too), finite, > 0.
        zero_point: of ``q``'s dtype; ``None`` for 0.

    Returns:
        The float32 tensor, of ``q``'s shape.

    Raises:
        InputError: ``q`` not a uint8/int8 NumPy array, a bad scale or zero point.
    """
    array = _quantized_array(q, "dequantize input")
    return _dequantize(
        array, _scale(scale, "dequantize scale"), _zero_point(zero_point, array.dtype, "dequantize zero_point")
    )


def _dequantize(array: npt.NDArray[Any], scale: np.float32, zero_point: int) -> npt.NDArray[np.float32]:
    shifted = array.astype(np.int32) - np.int32(zero_point)
    return shifted.astype(np.float32) * scale


def _quantized_array(value: object, what: str) -> npt.NDArray[Any]:
    if not isinstance(value, np.ndarray | np.generic):
        raise InputError(f"{what} must be a NumPy array; got {type(value).__name__}")
    array = np.asarray(value)
    if array.dtype not in _QUANTIZED_TYPES:
        raise InputError(f"{what} must be uint8 or int8 (tensor(uint8)/tensor(int8)); got {array.dtype.name}")
    return array


def _scale(value: object, what: str) -> np.float32:
    if isinstance(value, bool | np.bool_):
        raise InputError(f"{what} must be a float32 scalar; got {value!r}")
    if isinstance(value, int | float):
        scale = np.float32(value)
    elif isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype != np.float32:
            raise InputError(f"{what} must be float32 (tensor(float)); got {array.dtype.name}")
        if array.size != 1:
            raise InputError(f"{what} must be a scalar or a 1-element tensor; got shape {list(array.shape)}")
        scale = np.float32(array.reshape(()))
    else:
        raise InputError(f"{what} must be a float32 scalar or 1-element array; got {type(value).__name__}")
    if not (np.isfinite(scale) and scale > 0):
        raise InputError(f"{what} must be finite and > 0; got {scale}")
    return scale


def _zero_point(value: object, dtype: np.dtype[Any], what: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, np.ndarray | np.generic):
        raise InputError(
            f"{what} must be a NumPy {dtype.name} scalar or 1-element array (the data's type); "
            f"got {type(value).__name__}"
        )
    array = np.asarray(value)
    if array.dtype != dtype:
        raise InputError(f"{what} must have the data's dtype {dtype.name}; got {array.dtype.name}")
    if array.size != 1:
        raise InputError(f"{what} must be a scalar or a 1-element tensor; got shape {list(array.shape)}")
    return int(array.reshape(()))


_AXES = AxesPolicy(
    not_integer="{op}: axes must be integers; got {value!r} in {items!r}",
    out_of_range="{op}: axis {axis} is out of range for a rank-{rank} input; expected {expected}",
    rank0_expected="no axes (a rank-0 tensor has none)",
    repeated="{op}: axes {values} name axis {axis} more than once; axes must be unique",
)


def _normalize_axes(axes: object, rank: int) -> tuple[int, ...]:
    if not isinstance(axes, Sequence | np.ndarray) or isinstance(axes, str | bytes):
        raise InputError(f"{_OP}: axes must be a sequence of ints; got {axes!r}")
    values = list(np.asarray(axes).reshape(-1)) if isinstance(axes, np.ndarray) else list(axes)
    return normalize_axes(values, rank, _AXES, op=_OP)
