"""The Reduce* family with OpenVINO's semantics, computed the way they should be computed.

This follows OpenVINO's specification and reference implementation (src/core/reference/include/openvino/
reference/reduce_*.hpp) for shapes, axes and types, and is *right* where OpenVINO's runtimes are not:

* **Axes**: in ``[-r, r-1]`` (else :class:`~ovreduce.errors.ShapeInferenceError` with OpenVINO's message),
  negative axes normalised, duplicates count once, **empty axes are the identity** (each element reduced
  on its own: ReduceL1/ReduceL2 of an element is its absolute value). ``keep_dims`` defaults to false.
* **Floats** (f16, bf16, f32, f8...) accumulate in f64 and round once to the output type, so f16 and bf16
  never overflow in the accumulator (a ReduceMean of 70,000 f16 ones is 1.0, not inf) and an f32 mean of
  values near 3e38 is not inf. f64 accumulates in f64, without overflowing on the way to a result that fits (the mean
  of ``[1e308, 1e308]`` is 1e308: an overflowed sum is redone scaled by a power of two, a norm scaled by its largest
  element's, a product with mantissas and exponents apart). ReduceMax/ReduceMin propagate NaN (IEEE ``maximum``;
  OpenVINO's reference loses a NaN that comes first).
* **Integers** are summed exactly (Python integers where int64 could overflow; no wrap-around, whatever
  the width). ReduceMean divides the exact sum with truncation toward zero (C++ integer division), so its
  result always fits. A ReduceSum/ReduceProd/ReduceL1 whose exact value does not fit the output type wraps
  modulo 2^bits, as OpenVINO's reference does; :func:`reduce_with_notes` says when that happened.
  ReduceL2 of integers is ``floor(sqrt(exact sum of squares))``; a norm that does not fit the output type (a norm is
  never negative: only its top can overflow) saturates at the type's largest value, and is noted. (OpenVINO's reference
  implementation, reduce_l2.hpp, adds the squares in the output type, wrapping at each step, and takes the root of
  what is left: 6 for int8 ``[100, 100, 100]``, whose norm is 173. No norm is that.)
* **Zero-size reductions** (reducing an axis of length 0): ReduceMean and ReduceSum give 0 (OpenVINO returns
  the empty sum rather than 0/0), ReduceProd 1, ReduceL1/L2 0, ReduceLogicalAnd true, ReduceLogicalOr false.
  ReduceMax and ReduceMin of an empty set are undefined in the specification ("Reducing empty tensor results in
  an undefined behavior"); they give what OpenVINO's reference implementation gives (see
  :func:`empty_extreme`): ReduceMax ``numeric_limits<T>::lowest()`` (the lowest *finite* value; f16 and bf16
  are evaluated in f32, whose lowest value rounds to -inf in them), ReduceMin ``numeric_limits<T>::infinity()``
  where T has one (+inf) and ``max()`` otherwise; integers their type's minimum and maximum.

How this differs from the other ReduceMean semantics (see :mod:`ovreduce.reference.onnx`,
:mod:`ovreduce.reference.onednn`): ONNX defaults keepdims to 1 and treats empty axes as *all* axes (unless
noop_with_empty_axes=1); oneDNN Graph, like OpenVINO, defaults keep_dims to false and treats empty axes as
the identity, but accepts only f32/bf16/f16.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.errors import ElementTypeError, ShapeInferenceError
from ovreduce.ir.dtypes import element_type_for_numpy
from ovreduce.ops.axes import OPENVINO_AXES, normalize_axes
from ovreduce.shapes import PartialShape

__all__ = [
    "describe_empty_extreme",
    "empty_extreme",
    "kernel_l1",
    "kernel_l2",
    "kernel_logical_and",
    "kernel_logical_or",
    "kernel_max",
    "kernel_mean",
    "kernel_min",
    "kernel_prod",
    "kernel_sum",
    "normalized_axes",
    "run_kernel",
]

Array = npt.NDArray[Any]
_INT64_LIMIT = 2**63
_BUFFER_ELEMENTS = 1 << 20


def normalized_axes(data: Array, axes: Sequence[int] | Array | int, keep_dims: bool) -> tuple[int, ...]:
    """The axes of ``data`` that OpenVINO reduces, sorted and unique; OpenVINO's errors otherwise."""
    values = np.asarray(axes)
    if values.ndim > 1:
        raise ShapeInferenceError(f"Axes input must be a scalar or 1D input. Got: {PartialShape.static(values.shape)}")
    if values.size and values.dtype.kind not in "iu":
        raise ShapeInferenceError(f"Element type of axes input must be integer. Got: {_type_name(values.dtype)}")
    if values.dtype == np.uint64:  # read through int64 (get_input_const_data_as<int64_t>): 2^64-1 is axis -1
        values = values.view(np.int64)
    normalized = normalize_axes([int(a) for a in values.reshape(-1).tolist()], data.ndim, OPENVINO_AXES)
    if data.ndim == 0 and keep_dims and values.size:
        # OpenVINO accepts axis 0/-1 of a scalar, then fails setting that dim to 1 (as ops.reduce does).
        raise ShapeInferenceError("Accessing out-of-range dimension")
    return tuple(sorted(set(normalized)))


def _type_name(dtype: np.dtype[Any]) -> str:
    """OpenVINO's name for a NumPy dtype in messages (``f32``, ``boolean``), as OpenVINO writes it."""
    try:
        return element_type_for_numpy(dtype).name
    except ElementTypeError:
        return str(dtype)


def _count(data: Array, axes: tuple[int, ...]) -> int:
    return math.prod(data.shape[a] for a in axes)


def _is_float(data: Array) -> bool:
    return data.dtype.kind == "f" or data.dtype.kind == "V" or data.dtype.name in _ML_FLOATS


_ML_FLOATS = {"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn"}


def _exact_int_sum(values: Array, axes: tuple[int, ...], keep_dims: bool) -> Array:
    """Exact sum of integers over ``axes``: int64 when it cannot overflow, Python ints otherwise."""
    if values.size == 0:
        return np.asarray(np.sum(values.astype(np.int64), axis=axes, keepdims=keep_dims))
    count = max(_count(values, axes), 1)
    bound = max(abs(int(values.min())), abs(int(values.max()))) * count
    if bound < _INT64_LIMIT:
        return np.asarray(np.sum(values.astype(np.int64), axis=axes, keepdims=keep_dims))
    return np.asarray(np.sum(values.astype(object), axis=axes, keepdims=keep_dims), dtype=object)


def _fit_int(exact: Array, dtype: np.dtype[Any], what: str, notes: list[str]) -> Array:
    """Exact integers into ``dtype``: unchanged when they fit, else wrapped modulo 2^bits (and noted)."""
    info = np.iinfo(dtype)
    flat = np.asarray(exact).reshape(-1)
    if flat.size == 0:
        return np.zeros(np.shape(exact), dtype=dtype)
    lo, hi = int(min(flat.tolist())), int(max(flat.tolist()))
    if info.min <= lo and hi <= info.max:
        return np.asarray(exact).astype(dtype)
    notes.append(
        f"the exact {what} ({lo if lo < info.min else hi}) does not fit in {dtype}; "
        f"the result wraps modulo 2^{info.bits} as in OpenVINO's reference implementation"
    )
    mask = (1 << info.bits) - 1
    wrapped = np.array([int(v) & mask for v in flat.tolist()], dtype=np.uint64)
    if info.bits == 64:
        return wrapped.view(np.int64 if info.min < 0 else np.uint64).astype(dtype).reshape(np.shape(exact))
    unsigned = wrapped.astype(np.dtype(f"u{info.bits // 8}"))
    return unsigned.view(dtype).reshape(np.shape(exact))


def _round_float(values: Any, dtype: np.dtype[Any]) -> Array:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values).astype(dtype)


_SCALE = 128
"""The power of two an f64 sum whose accumulator overflowed is redone at (2^128 times smaller: exact)."""
_PROD_CHUNK = 512
"""Mantissas (in [0.5, 1)) multiplied at once by :func:`split_prod`: their product stays a normal f64."""


def _float_sum(data: Array, axes: tuple[int, ...], keep_dims: bool, divisor: int = 1) -> Array:
    """The sum of float ``data`` over ``axes`` in f64, divided by ``divisor``. f64 data accumulates in f64 itself:
    a slice of finite elements whose partial sums overflow on the way to a result that fits (``[1e308, 1e308,
    -1e308]``, the mean of ``[1e308, 1e308]``) is summed again scaled down by 2^128 (exact: a power of two) and
    scaled back after the division, the same rounding as the plain sum wherever that did not overflow."""
    acc = np.asarray(np.sum(data, axis=axes, keepdims=keep_dims, dtype=np.float64))
    if divisor > 1:
        acc = acc / divisor
    if data.dtype != np.float64 or data.size == 0 or np.isfinite(acc).all():
        return acc
    redo = ~np.isfinite(acc) & np.all(np.isfinite(data), axis=axes, keepdims=keep_dims)
    if not redo.any():
        return acc
    scaled = np.sum(np.ldexp(data, -_SCALE), axis=axes, keepdims=keep_dims) / divisor
    return np.asarray(np.where(redo, np.ldexp(scaled, _SCALE), acc))


def split_prod(data: Array, axes: tuple[int, ...], keep_dims: bool) -> Array:
    """The product of float ``data`` over ``axes`` with mantissas and exponents kept apart (:func:`numpy.frexp`), so
    that no partial product overflows or underflows: ``[1e300, 1e300, 1e-300]`` is 1e300, not inf."""
    wide = data.astype(np.float64)
    lead = [n for i, n in enumerate(wide.shape) if i not in axes]
    rows = np.moveaxis(wide, axes, tuple(range(wide.ndim - len(axes), wide.ndim))).reshape(math.prod(lead), -1)
    mantissa = np.ones(rows.shape[0])
    exponent = np.zeros(rows.shape[0], np.int64)
    for start in range(0, rows.shape[1], _PROD_CHUNK):
        parts, powers = np.frexp(rows[:, start : start + _PROD_CHUNK])
        mantissa, renormalized = np.frexp(mantissa * np.prod(parts, axis=1))
        exponent += powers.sum(axis=1, dtype=np.int64) + renormalized
    # past +-2200 the result is inf or 0 whatever the mantissa: clipped to an exponent any platform's ldexp takes
    product = np.ldexp(mantissa, np.clip(exponent, -2200, 2200).astype(np.int32))
    shape = [1 if i in axes else n for i, n in enumerate(wide.shape)] if keep_dims else lead
    return product.reshape(shape)


# -- the kernels (the ops of ovreduce.ops.reduce call them) ---------------------------------------------------------
def kernel_sum(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
    if _is_float(data):
        return _round_float(_float_sum(data, axes, keep_dims), data.dtype)
    return _fit_int(_exact_int_sum(data, axes, keep_dims), data.dtype, "sum", notes)


def kernel_mean(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
    count = _count(data, axes)
    if _is_float(data):
        return _round_float(_float_sum(data, axes, keep_dims, count), data.dtype)
    total = _exact_int_sum(data, axes, keep_dims)
    if count == 0:
        return np.zeros(np.shape(total), dtype=data.dtype)
    if total.dtype != object:
        # C++ integer division truncates toward zero; NumPy's // floors.
        quotient = np.abs(total) // count * np.sign(total)
        return quotient.astype(data.dtype)
    flat = [(abs(int(v)) // count) * (1 if v >= 0 else -1) for v in total.reshape(-1).tolist()]
    return np.array(flat, dtype=object).reshape(total.shape).astype(data.dtype)


# OpenVINO's ReduceMax/ReduceMin evaluate these in f32 and convert the result back (Node.evaluate and constant
# folding in 2026.4: the f16 maximum of [-inf] is -inf, not f16's lowest -65504).
_EVALUATED_IN_F32 = {"float16", "bfloat16"}
# The float types without an infinity (numeric_limits<T>::has_infinity is false in OpenVINO's headers).
_NO_INFINITY = {"float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn"}


def empty_extreme(dtype: npt.DTypeLike, lowest: bool) -> Array:
    """What OpenVINO's reference implementation gives for ReduceMax (``lowest``) or ReduceMin over an empty
    set, as a 0-d array of ``dtype`` (the specification leaves the value undefined).

    reduce_max.hpp starts from ``numeric_limits<T>::lowest()``, reduce_min.hpp from ``infinity()`` where T
    has one and ``max()`` otherwise. OpenVINO 2026.4 evaluates f32, f16 and bf16 (the latter two in f32, so
    f32's lowest value -3.4028235e38 becomes -inf in them), i8, i32, i64, u8, u32, u64; for the types it
    cannot evaluate (f64, i16, u16, f8, f4) this is the same header instantiated for T.
    """
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        ints = np.iinfo(dt)
        return np.asarray(ints.min if lowest else ints.max, dtype=dt)
    import ml_dtypes

    # f16/bf16's lowest is f32's, converted (it rounds to -inf).
    info: Any = ml_dtypes.finfo(np.float32 if lowest and dt.name in _EVALUATED_IN_F32 else dt)  # type: ignore[no-untyped-call]
    source = info.min if lowest else info.max if dt.name in _NO_INFINITY else np.inf
    with np.errstate(over="ignore"):
        return np.asarray(source).astype(dt)


def describe_empty_extreme(dtype: npt.DTypeLike, lowest: bool) -> str:
    """:func:`empty_extreme`'s value and where it comes from, in words (for a note)."""
    dt = np.dtype(dtype)
    value = empty_extreme(dt, lowest)
    shown = str(value[()])
    name = _type_name(dt)
    if dt.kind in "iu":
        return f"{shown}, the {'lowest' if lowest else 'highest'} value of {name}"
    if lowest and dt.name in _EVALUATED_IN_F32:
        return f"{shown}: OpenVINO evaluates {name} in f32, whose lowest finite value rounds to -inf in {name}"
    if lowest or dt.name in _NO_INFINITY:
        return f"{shown}, the {'lowest' if lowest else 'highest'} finite value of {name}"
    return f"{shown}, the infinity of {name}"  # reduce_min.hpp prefers infinity() to max()


def _extreme(fn: Callable[..., Array], identity: str) -> Callable[[Array, tuple[int, ...], bool, list[str]], Array]:
    def run(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        if _count(data, axes) == 0 and axes:
            shape = np.sum(np.zeros(data.shape, dtype=np.int8), axis=axes, keepdims=keep_dims).shape
            return np.full(shape, empty_extreme(data.dtype, identity == "lowest"), dtype=data.dtype)
        if _is_float(data) and data.dtype.kind != "f":
            return _round_float(fn(data.astype(np.float32), axis=axes, keepdims=keep_dims), data.dtype)
        return np.asarray(fn(data, axis=axes, keepdims=keep_dims))

    return run


def kernel_prod(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
    if _is_float(data):
        with np.errstate(over="ignore", invalid="ignore"):
            acc = np.asarray(np.prod(data, axis=axes, keepdims=keep_dims, dtype=np.float64))
        # a partial product past f64's range (f64 data, or 9 f32 factors of 1e38 before their 1e-38s): split
        # (or below its normal range: 1e-300 * 1e-300 is 0 before the 1e300), where no factor is 0 itself
        redo = ~np.isfinite(acc) | ((np.abs(acc) < np.finfo(np.float64).tiny) & (acc != 0))
        if data.size and (acc == 0).any():
            redo |= (acc == 0) & np.all(data != 0, axis=axes, keepdims=keep_dims)
        if data.size and redo.any():
            acc = np.asarray(np.where(redo, split_prod(data, axes, keep_dims), acc))
        return _round_float(acc, data.dtype)
    # Exact products can grow without bound; arithmetic modulo 2^64 is exact in the bits that survive the
    # wrap, and a float64 magnitude tells whether any wrapping happened.
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 in the magnitude of a product with a 0
        wrapped = np.prod(data.astype(np.uint64), axis=axes, keepdims=keep_dims, dtype=np.uint64)
        magnitude = np.prod(np.abs(data.astype(np.float64)), axis=axes, keepdims=keep_dims)
    info = np.iinfo(data.dtype)
    negative = np.sum(data < 0, axis=axes, keepdims=keep_dims) % 2 == 1
    overflow = np.where(negative, magnitude > -float(info.min), magnitude > float(info.max)).reshape(-1)
    if info.bits == 64:
        # float64 cannot tell 2^63 - 1 from 2^63 (nor 2^64 - 1 from 2^64): near the limits, decide exactly.
        near = np.flatnonzero((magnitude >= 2.0**62) & (magnitude < 2.0**66))
        if near.size:
            moved = np.moveaxis(data, axes, tuple(range(data.ndim - len(axes), data.ndim)))
            rows = moved.reshape(-1, _count(data, axes))
            for i in near.tolist():
                overflow[i] = not info.min <= math.prod(rows[i].tolist()) <= info.max
    if np.any(overflow):
        notes.append(
            f"the exact product does not fit in {data.dtype}; the result wraps modulo 2^{info.bits} as in "
            f"OpenVINO's reference implementation"
        )
    bits = np.dtype(f"u{info.bits // 8}")
    return np.asarray(wrapped.astype(bits).view(data.dtype))


def kernel_l1(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
    if _is_float(data):
        acc = np.sum(np.abs(data), axis=axes, keepdims=keep_dims, dtype=np.float64)  # |x| is exact in any type
        return _round_float(acc, data.dtype)
    values = data.astype(object) if data.dtype.itemsize == 8 else np.abs(data.astype(np.int64))
    if values.dtype == object:
        values = np.asarray(np.abs(values), dtype=object)  # np.abs of a 0-d object array is a Python int
    return _fit_int(_exact_int_sum(values, axes, keep_dims), data.dtype, "L1 norm", notes)


def kernel_l2(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
    if _is_float(data):
        wide = data.astype(np.float64)
        if data.dtype != np.float64 or data.size == 0:  # squares of any narrower type fit f64 and stay normal
            return _round_float(np.sqrt(np.sum(wide * wide, axis=axes, keepdims=keep_dims)), data.dtype)
        # f64's squares can overflow (1e200) or underflow (1e-200): each slice is scaled by the power of two of its
        # largest element first (exact, and the same rounding as unscaled wherever that neither overflows nor
        # underflows), hypot's way
        peak = np.max(np.abs(wide), axis=axes, keepdims=True)
        _, power = np.frexp(np.where(np.isfinite(peak), peak, 1.0))
        scaled = np.ldexp(wide, -power)
        acc = np.ldexp(np.sqrt(np.sum(scaled * scaled, axis=axes, keepdims=True)), power)
        return _round_float(acc if keep_dims else np.squeeze(acc, axis=axes), data.dtype)
    beyond_int64 = data.dtype.itemsize == 8 or data.dtype == np.uint32
    squares = np.asarray(data.astype(object) ** 2, dtype=object) if beyond_int64 else data.astype(np.int64) ** 2
    total = _exact_int_sum(squares, axes, keep_dims)
    roots = [math.isqrt(int(v)) for v in np.asarray(total).reshape(-1).tolist()]
    top = int(np.iinfo(data.dtype).max)
    if roots and max(roots) > top:
        notes.append(
            f"the exact L2 norm ({max(roots)}) does not fit in {data.dtype}; the result saturates at {top}, its "
            f"largest value: a norm is never negative (OpenVINO's own reduce_l2.hpp adds the squares in "
            f"{data.dtype}, wrapping, and takes the root of what is left, which is no norm)"
        )
    return np.array([min(r, top) for r in roots], dtype=data.dtype).reshape(np.shape(total))


def _logical(fn: Callable[..., Array]) -> Callable[[Array, tuple[int, ...], bool, list[str]], Array]:
    def run(data: Array, axes: tuple[int, ...], keep_dims: bool, notes: list[str]) -> Array:
        return np.asarray(fn(data.astype(np.bool_), axis=axes, keepdims=keep_dims))

    return run


kernel_max = _extreme(np.max, "lowest")
kernel_min = _extreme(np.min, "highest")
kernel_logical_and = _logical(np.all)
kernel_logical_or = _logical(np.any)


def run_kernel(
    kernel: Callable[[Array, tuple[int, ...], bool, list[str]], Array],
    logical: bool,
    data: npt.ArrayLike,
    axes: Sequence[int] | Array | int,
    keep_dims: bool,
) -> tuple[Array, list[str]]:
    """Check ``data`` and ``axes`` as OpenVINO does, then run ``kernel`` (one of the ``kernel_*`` above) with
    the axes normalised; returns the result in the output type and notes on anything worth telling."""
    array = np.asarray(data)
    if logical and array.dtype != np.bool_:
        raise ShapeInferenceError("Element type of data input must be boolean.")
    if not logical and not (_is_float(array) or array.dtype.kind in "iu"):
        raise ShapeInferenceError(f"Element type of data input must be numeric. Got: {_type_name(array.dtype)}")
    normalized = normalized_axes(array, axes, keep_dims)
    notes: list[str] = []
    # NumPy casts to the float64 accumulator in buffers of 8192 elements by default, which makes an f32 sum
    # take 2.5 copies' time; buffers of 2^20 elements (12 MiB for f32 -> f64) bring it near 1.5.
    previous_bufsize = np.setbufsize(_BUFFER_ELEMENTS)
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # inf - inf is NaN, f32 overflow is inf, quietly (IEEE)
            result = kernel(array, normalized, keep_dims, notes)
    finally:
        np.setbufsize(previous_bufsize)
    return np.asarray(result, dtype=array.dtype if not logical else np.bool_), notes
