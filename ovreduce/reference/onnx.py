"""ONNX semantics of the Reduce* family and of Mean, in pure NumPy.

This module answers "what does ONNX say the output is". Its numerics are those of ONNX's own reference
implementation (``onnx.reference.ops.op_reduce_*`` and ``op_mean`` in onnx 1.23): the same NumPy calls
in the same order, so the results are bit-identical to ``onnx.reference.ReferenceEvaluator`` on everything
the evaluator supports. The ``onnx`` package itself is not imported (it is an optional dependency); the
per-opset rules below are encoded here and a test checks them against ``onnx.defs``.

How the semantics differ from OpenVINO and oneDNN Graph
-------------------------------------------------------
=====================  ==========================================  ==================  ===================
                       ONNX (this module)                          OpenVINO            oneDNN Graph
=====================  ==========================================  ==================  ===================
keepdims default       1 (reduced dims kept)                       keep_dims=false     keep_dims=false
axes                   attribute before the opset where axes       input 2, required   attribute *or*
                       became an input (ReduceSum-13, all others                       input, exactly one
                       -18), optional input from then on
empty / missing axes   reduce over **all** axes; from the input    identity            identity
                       opset on: identity if noop_with_empty_axes=1
repeated axes          error (onnx.reference; see below)           error (unique)      error (unique)
accumulation           in the input dtype (see "Numerics")         plugin-dependent    f32, rounded once
mean of 0 elements     NaN for floats (spec: "undefined")          --                  --
=====================  ==========================================  ==================  ===================

Rules encoded here (and where the specification is silent, what was decided)
---------------------------------------------------------------------------
* Versions: ReduceMean/L1/L2/Prod/SumSquare 1, 11, 13, 18; ReduceSum 1, 11, 13; ReduceMax/Min 1, 11, 12
  (+int8/uint8), 13 (+bfloat16), 18, 20 (+bool); ReduceLogSum/LogSumExp 1, 11, 13, 18, 28 (float types
  only); Mean 1, 6, 8 (broadcasting), 13 (+bfloat16). ``opset`` is the model's default-domain opset
  import, 1..28; the operator version is the newest one not newer than it.
* Before the axes-input version ``noop_with_empty_axes`` does not exist: passing it non-zero is an error.
* Axes must lie in [-r, r-1]. ReduceMean-1's text states no range, but onnx's shape inference and the
  reference evaluator accept negative axes at every opset, and so does this module.
* Repeated axes (also after normalisation, e.g. 1 and -2 at rank 3) are an :class:`InputError`: the
  reference evaluator fails on them (NumPy's "duplicate value in 'axis'"), although onnx's shape
  inference silently treats the list as a set.
* Integer inputs of ReduceLogSum/ReduceLogSumExp are refused at every opset: the schemas before opset 28
  list integer types, but ONNX never defined an integer logarithm, onnx.reference refuses them and
  opset 28 removed them.
* ReduceMean over zero elements: the spec says "undefined"; onnx.reference yields NaN (after NumPy's
  "Mean of empty slice" warning), which this module returns silently for floating types. For integer
  types the reference casts that NaN to an integer (a platform-dependent value); this module raises an
  :class:`InputError` instead. The other reductions over zero elements give their identities: Sum, L1,
  L2, SumSquare 0; Prod 1; Max -inf (integers: the type's minimum; bool: False); Min +inf (integers:
  the maximum; bool: True); LogSum and LogSumExp -inf.
* The output always has the input's dtype (the schemas say T -> T). onnx.reference's ReduceSumSquare
  returns int64/uint64 for int32/uint32 inputs (``np.sum`` widens); here that sum is cast back to T,
  wrapping as a fixed-width accumulator would.
* The input is read as a C-contiguous array, which is what the evaluator sees for tensors decoded
  from a model (the float16 numerics below depend on memory layout).

Numerics (what onnx.reference really computes)
----------------------------------------------
* ReduceMean is ``np.mean(x, axis, dtype=x.dtype)``: the sum is taken **in the input dtype**, then
  divided by the element count.

  - float16: NumPy's float16 ``add.reduce`` converts to float32 and sums pairwise *only within one inner
    loop along a contiguous reduced axis*; that partial result is rounded to float16, and reductions
    over outer (strided) axes add row by row with every partial sum rounded to float16. So the mean of
    4096 float16 ones is 1.0 along the last axis but 0.5 along axis 0 of a (4096, 2) array (the running
    float16 sum stops at 2048), and the mean of 70000 ones is inf (the sum overflows 65504). NumPy's own
    ``np.mean`` of float16 *without* ``dtype`` would accumulate in float32 and give 1.0 in all three
    cases; onnx.reference passes ``dtype=x.dtype`` and so does not get that. ``np.sum`` of float16
    (ReduceSum, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum) behaves the same way: float32 inside
    a contiguous inner loop, float16 everywhere else -- it is *not* a float32 accumulation.
  - bfloat16 (ml_dtypes): no pairwise float32 loop at all; every partial sum is rounded to bfloat16,
    so the sum of 1000 ones is 256 and their mean 0.256.
  - integers: the sum wraps in the input type; the division is float64 true division followed by a
    cast that truncates toward zero (mean of [-3, 0] is -1). int64/uint64 values above 2**53 lose
    precision in that float64 step, even for the identity (noop) case.
* ReduceSum, ReduceProd: ``np.sum``/``np.prod`` with ``dtype=x.dtype`` (wrapping integers).
  ReduceL1: ``sum(abs(x))`` (int32 sums in int64, then cast back). ReduceL2: ``sqrt(sum(square(x)))``
  (the square wraps in the input type), cast back, truncating for integers. ReduceSumSquare:
  ``sum(square(x))``. ReduceLogSum: ``log(sum(x))``. ReduceLogSumExp: ``log(sum(exp(x - m))) + m`` with
  ``m`` the maximum over the finite elements (infinities replaced by -inf before taking it), 0 for a slice without
  finite elements, which is then the definition ``log(sum(exp(x)))``: -inf for -inf only, +inf with a +inf
  (onnx.reference shifts those by -inf too and makes them NaN).
  ReduceMax/Min: ``np.maximum``/``np.minimum.reduce`` (NaN propagates).
* With noop_with_empty_axes=1 and empty axes the *reduction* is skipped but composite operators still do
  their elementwise steps (the opset-18 text): ReduceL1 returns ``|x|``, ReduceL2 ``|x|``, ReduceSumSquare
  ``x**2``, ReduceLogSum ``log(x)``.
* Mean: ``res = x0.copy(); res += x1; ...; res / n`` -- sequential left-to-right additions, each rounded
  to the input dtype, then one division in that dtype (float16 stays float16 throughout). onnx.reference
  adds in place into a copy of the *first* input, so it fails with a broadcasting error when the first
  input is not the largest; this module broadcasts the first input to the full output shape first and
  otherwise performs the identical operations.

Wide intermediates (``wide=True``: what ``ovreduce conform`` judges OpenVINO by)
-----------------------------------------------------------------------------
onnx.reference's fixed-width intermediates lose results the output type holds: an f32 mean of ``[3e38, 3e38]`` is
inf (the sum overflows), an f32 ReduceL2 of ``[1e20, 1e20]`` inf (the squares do), an int32 mean of
``[2147483647, 1]`` -1073741824 (the sum wraps), an int32 ReduceL2 of ``[50000]`` -2147483648. ONNX's text defines
the mean and the norm of the elements, and these are not them. With ``wide=True`` the same calls run on f64 for
f16, bf16 and f32 data and on the long double for f64 (rounded once to the type at the end), and an integer
ReduceMean or ReduceL2 is computed on Python integers: the mean truncated toward zero (as the float division's cast
does), the norm the floor of the exact one, saturating at the type's largest value where it does not fit. Integer
sums, products, squares and absolute values wrap to the exact result modulo 2^bits either way. Everything else
(axes, keepdims, noop_with_empty_axes, types, zero-size results, the LogSumExp shift) is as described above.

NumPy floating-point warnings (overflow, invalid, divide) are suppressed inside these functions; the
values are what the evaluator returns with the warnings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.errors import InputError
from ovreduce.ops.axes import AxesPolicy, normalize_axes

__all__ = [
    "MAX_OPSET",
    "REDUCE_OP_TYPES",
    "allowed_types",
    "mean",
    "op_version",
    "reduce",
    "reduce_mean",
]

MAX_OPSET: Final = 28
"""The newest default-domain opset whose rules this module encodes (onnx 1.23)."""

Axes = Sequence[int] | npt.NDArray[np.integer[Any]] | None

_HIGH: Final = frozenset({"double", "float", "float16", "int32", "int64", "uint32", "uint64"})
_HIGH_BF16: Final = _HIGH | {"bfloat16"}
_MINMAX_12: Final = _HIGH | {"int8", "uint8"}
_MINMAX_13: Final = _MINMAX_12 | {"bfloat16"}
_FLOATS: Final = frozenset({"double", "float", "float16"})
_FLOATS_BF16: Final = _FLOATS | {"bfloat16"}

_Versions = tuple[tuple[int, frozenset[str]], ...]
_COMMON: Final[_Versions] = ((1, _HIGH), (11, _HIGH), (13, _HIGH_BF16), (18, _HIGH_BF16))
_MINMAX: Final[_Versions] = (
    (1, _HIGH),
    (11, _HIGH),
    (12, _MINMAX_12),
    (13, _MINMAX_13),
    (18, _MINMAX_13),
    (20, _MINMAX_13 | {"bool"}),
)
_LOG: Final[_Versions] = (*_COMMON, (28, _FLOATS_BF16))

# op type -> ((since_version, allowed ONNX element types of T), ...), oldest first.
_SCHEMAS: Final[dict[str, _Versions]] = {
    "ReduceMean": _COMMON,
    "ReduceSum": ((1, _HIGH), (11, _HIGH), (13, _HIGH_BF16)),
    "ReduceMax": _MINMAX,
    "ReduceMin": _MINMAX,
    "ReduceProd": _COMMON,
    "ReduceL1": _COMMON,
    "ReduceL2": _COMMON,
    "ReduceLogSum": _LOG,
    "ReduceLogSumExp": _LOG,
    "ReduceSumSquare": _COMMON,
    "Mean": ((1, _FLOATS), (6, _FLOATS), (8, _FLOATS), (13, _FLOATS_BF16)),
}

REDUCE_OP_TYPES: Final = tuple(op for op in _SCHEMAS if op.startswith("Reduce"))
"""The ONNX reductions :func:`reduce` implements."""

# The operator version from which axes is an (optional) input and noop_with_empty_axes exists.
_AXES_INPUT_SINCE: Final = {op: (13 if op == "ReduceSum" else 18) for op in REDUCE_OP_TYPES}
_MEAN_BROADCAST_SINCE: Final = 8

_ONNX_TYPE_NAMES: Final[dict[np.dtype[Any], str]] = {
    np.dtype(np.float64): "double",
    np.dtype(np.float32): "float",
    np.dtype(np.float16): "float16",
    np.dtype(ml_dtypes.bfloat16): "bfloat16",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
}


def op_version(op_type: str, opset: int) -> int:
    """Return the version of ``op_type`` that a model importing default-domain ``opset`` uses.

    Args:
        op_type: one of :data:`REDUCE_OP_TYPES` or ``"Mean"``.
        opset: the model's default-domain opset, 1 to :data:`MAX_OPSET`.

    Raises:
        InputError: unknown operator, or an opset that is not an integer in [1, MAX_OPSET].
    """
    versions = _schema(op_type)
    if isinstance(opset, bool) or not isinstance(opset, int | np.integer):
        raise InputError(f"opset must be an integer in [1, {MAX_OPSET}]; got {opset!r}")
    if not 1 <= opset <= MAX_OPSET:
        raise InputError(
            f"opset {opset} is outside the default-domain opsets this reference encodes; "
            f"expected an integer in [1, {MAX_OPSET}]"
        )
    return max(since for since, _ in versions if since <= opset)


def allowed_types(op_type: str, opset: int) -> frozenset[str]:
    """Return the ONNX element type names (``"float"``, ``"bfloat16"``...) that T allows at ``opset``.

    Args:
        op_type: one of :data:`REDUCE_OP_TYPES` or ``"Mean"``.
        opset: the model's default-domain opset, 1 to :data:`MAX_OPSET`.

    Raises:
        InputError: unknown operator or opset out of range.
    """
    version = op_version(op_type, opset)
    return dict(_SCHEMAS[op_type])[version]


def reduce(
    op_type: str,
    data: npt.NDArray[Any],
    axes: Axes = None,
    keepdims: int = 1,
    noop_with_empty_axes: int = 0,
    *,
    opset: int = 18,
    wide: bool = False,
) -> npt.NDArray[Any]:
    """Compute an ONNX Reduce* operator as ONNX's reference implementation does (or, ``wide``, in wide intermediates).

    See the module docstring for the per-opset rules, the accumulation precision and the zero-element
    results.

    Args:
        op_type: ``"ReduceMean"``, ``"ReduceSum"``, ``"ReduceMax"``, ``"ReduceMin"``, ``"ReduceProd"``,
            ``"ReduceL1"``, ``"ReduceL2"``, ``"ReduceLogSum"``, ``"ReduceLogSumExp"`` or
            ``"ReduceSumSquare"``.
        data: the input tensor (a NumPy array; bfloat16 as ``ml_dtypes.bfloat16``).
        axes: the axes to reduce, each in [-r, r-1] and unique; ``None`` or empty means all axes
            (or none, with ``noop_with_empty_axes=1``). A sequence of ints or a 0-D/1-D integer array
            (the ``axes`` input tensor).
        keepdims: 1 (default) keeps reduced axes as size 1, 0 removes them.
        noop_with_empty_axes: 1 makes empty/missing axes the identity; only from the version where axes
            is an input (ReduceSum-13, the others -18).
        opset: the model's default-domain opset (1 to 28); picks the operator version.
        wide: compute with intermediates no result of the type overflows, wraps or rounds, rounding once to the
            type (see "Wide intermediates" in the module docstring), instead of onnx.reference's numerics.

    Returns:
        The reduced tensor, of ``data``'s dtype.

    Raises:
        InputError: unknown operator or opset; ``data`` not a NumPy array or of a type the operator
            version does not accept; keepdims/noop_with_empty_axes not 0 or 1; noop_with_empty_axes
            before it existed; axes malformed, out of range or repeated; an integer ReduceMean over
            zero elements.
    """
    if op_type not in REDUCE_OP_TYPES:
        raise InputError(f"unknown ONNX reduction {op_type!r}; expected one of {', '.join(REDUCE_OP_TYPES)}")
    version = op_version(op_type, opset)
    name = f"{op_type}-{version}"
    array = _as_array(data, f"{name} data")
    _check_type(array.dtype, name, dict(_SCHEMAS[op_type])[version], "data")
    if op_type in ("ReduceLogSum", "ReduceLogSumExp") and array.dtype.kind in "iu":
        raise InputError(
            f"{name} does not compute integer inputs (got {_type_name(array.dtype)}): ONNX defines no "
            f"integer logarithm, onnx.reference refuses them and {op_type}-28 removed integer types; "
            "cast the input to a floating type"
        )
    keep = _flag(keepdims, "keepdims", name)
    noop = _flag(noop_with_empty_axes, "noop_with_empty_axes", name)
    since = _AXES_INPUT_SINCE[op_type]
    if version < since and noop:
        raise InputError(
            f"{name} has no noop_with_empty_axes attribute (it appeared in {op_type}-{since}, when axes "
            f"became an input); got noop_with_empty_axes={noop}, expected 0 for opset {opset}"
        )
    normalized = _normalize_axes(axes, array.ndim, name)
    reduce_axes = normalized or (() if noop else tuple(range(array.ndim)))

    if array.size == 0:
        return _zero_size(op_type, array, reduce_axes, keep, name)
    with np.errstate(all="ignore"):
        if wide:
            return _wide_reduce(op_type, array, reduce_axes, keep)
        result = np.asarray(_KERNELS[op_type](array, reduce_axes, keep))
        return result.astype(array.dtype, copy=False)


def reduce_mean(
    data: npt.NDArray[Any],
    axes: Axes = None,
    keepdims: int = 1,
    noop_with_empty_axes: int = 0,
    *,
    opset: int = 18,
) -> npt.NDArray[Any]:
    """Compute ONNX ReduceMean; ``reduce("ReduceMean", ...)`` with the same arguments.

    Args:
        data: the input tensor.
        axes: the axes to reduce (``None``/empty: all axes, or none with ``noop_with_empty_axes=1``).
        keepdims: 1 (default) keeps reduced axes, 0 removes them.
        noop_with_empty_axes: 1 makes empty axes the identity (opset 18 and later).
        opset: the model's default-domain opset.

    Returns:
        The mean, of ``data``'s dtype (accumulated in that dtype, as onnx.reference does).

    Raises:
        InputError: as :func:`reduce`.
    """
    return reduce("ReduceMean", data, axes, keepdims, noop_with_empty_axes, opset=opset)


def mean(*inputs: npt.NDArray[Any], opset: int = 13, wide: bool = False) -> npt.NDArray[Any]:
    """Compute ONNX Mean (versions 1, 6, 8, 13): the element-wise mean of one or more tensors.

    Numerics are onnx.reference's: the inputs are added left to right in their dtype, then the sum is
    divided by the input count in that dtype.

    Args:
        *inputs: one or more tensors of one dtype (float16, float32, float64; bfloat16 from Mean-13).
            Before Mean-8 all shapes must be equal; from Mean-8 they broadcast NumPy-style.
        opset: the model's default-domain opset (1 to 28).
        wide: add and divide in a wider type (f64; the long double for f64), rounding once to the inputs' type.

    Returns:
        The element-wise mean, of the inputs' dtype and their (broadcast) shape.

    Raises:
        InputError: no inputs, an input that is not a NumPy array, mixed or disallowed dtypes, unequal
            shapes before Mean-8, shapes that do not broadcast from Mean-8, an opset out of range.
    """
    version = op_version("Mean", opset)
    name = f"Mean-{version}"
    if not inputs:
        raise InputError(f"{name} needs at least one input (the schema allows 1 to 2147483647); got none")
    arrays = [_as_array(x, f"{name} input {i}") for i, x in enumerate(inputs)]
    dtype = arrays[0].dtype
    _check_type(dtype, name, dict(_SCHEMAS["Mean"])[version], "input 0")
    for i, array in enumerate(arrays[1:], start=1):
        if array.dtype != dtype:
            raise InputError(
                f"{name}: all inputs must have one data type; input 0 is {_type_name(dtype)} "
                f"but input {i} is {_type_name(array.dtype)}"
            )
    shapes = [array.shape for array in arrays]
    if version < _MEAN_BROADCAST_SINCE:
        if any(shape != shapes[0] for shape in shapes):
            raise InputError(
                f"{name} requires all inputs to have the same shape (broadcasting arrived in Mean-8); "
                f"got shapes {', '.join(str(list(s)) for s in shapes)}"
            )
        shape = shapes[0]
    else:
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise InputError(
                f"{name}: input shapes {', '.join(str(list(s)) for s in shapes)} do not broadcast "
                "(multidirectional/NumPy broadcasting: each dim pair must be equal or contain a 1)"
            ) from None
    work = _wider(dtype) if wide else dtype
    with np.errstate(all="ignore"):
        total = np.array(np.broadcast_to(arrays[0], shape), dtype=work, copy=True)
        for array in arrays[1:]:
            total += array.astype(work)
        return np.asarray(total / len(arrays)).astype(dtype, copy=False)


# --- numerics: the calls onnx.reference makes --------------------------------------------------------

_Kernel = Callable[[npt.NDArray[Any], tuple[int, ...], bool], Any]


def _mean_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.mean(x, axis=axes, keepdims=keep, dtype=x.dtype)


def _sum_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)


def _prod_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.prod(x, axis=axes, keepdims=keep, dtype=x.dtype)


def _max_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    if keep:
        return np.maximum.reduce(x, axis=axes, keepdims=True)
    return np.maximum.reduce(x, axis=axes)


def _min_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    if keep:
        return np.minimum.reduce(x, axis=axes, keepdims=True)
    return np.minimum.reduce(x, axis=axes)


def _l1_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.sum(np.abs(x), axis=axes, keepdims=keep).astype(x.dtype)


def _l2_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.sqrt(np.sum(np.square(x), axis=axes, keepdims=keep)).astype(x.dtype)


def _sum_square_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.sum(np.square(x), axis=axes, keepdims=keep)


def _log_sum_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    return np.log(np.sum(x, axis=axes, keepdims=keep))


def _log_sum_exp_kernel(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> Any:
    finite_max = x.copy()
    finite_max[np.isinf(finite_max)] = -np.inf
    shift = np.array(finite_max.max(axis=axes, keepdims=True))  # (an array for a rank-0 input, whose max is a scalar)
    # A slice with no finite element (a fully masked row of -inf logits): no shift, so that it is the definition's
    # log(sum(exp(x))) -- -inf for -inf only, +inf with a +inf -- and not NaN (-inf - -inf, inf + -inf).
    shift[np.isneginf(shift)] = 0
    sums = np.sum(np.exp(np.subtract(x, shift)), axis=axes, keepdims=True, dtype=x.dtype)
    result = np.log(sums) + shift
    return result if keep else np.squeeze(result, axis=axes)


# --- wide intermediates ------------------------------------------------------------------------------


def _wider(dtype: np.dtype[Any]) -> Any:
    """The type a floating ``dtype`` is computed in with wide intermediates: f64, the long double for f64 (x86's
    80-bit extended type: 11 more bits and an exponent to 10^4932; where the platform's long double is f64 itself,
    f64)."""
    return np.longdouble if dtype == np.float64 else np.float64


def _wide_prod(x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> npt.NDArray[Any]:
    """A float ReduceProd in the wider type, and where a partial product left its range (eleven f32 factors of 1e30
    before their 1e-30s pass f64's; f64's 1e-300s the long double's) with mantissas and exponents kept apart, as
    ``run``'s reference computes it (:func:`ovreduce.reference.openvino.kernel_prod`): a product the type holds is not
    lost to an intermediate that overflowed or underflowed, rounded once to ``x``'s type."""
    from ovreduce.reference.openvino import split_prod

    wide = x.astype(_wider(x.dtype))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        acc = np.asarray(np.prod(wide, axis=axes, keepdims=keep))
    tiny = np.finfo(acc.dtype).tiny
    redo = ~np.isfinite(acc) | ((np.abs(acc) < tiny) & (acc != 0))
    if x.size:
        redo |= (acc == 0) & np.all(wide != 0, axis=axes, keepdims=keep)
    if x.size and redo.any():
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            acc = np.asarray(np.where(redo, split_prod(x, axes, keep).astype(acc.dtype), acc))
    with np.errstate(over="ignore", under="ignore"):
        return acc.astype(x.dtype)


def _wide_reduce(op_type: str, x: npt.NDArray[Any], axes: tuple[int, ...], keep: bool) -> npt.NDArray[Any]:
    """``op_type`` with wide intermediates, rounded once to ``x``'s type (see the module docstring)."""
    if x.dtype.kind in "fV" and op_type == "ReduceProd":
        return _wide_prod(x, axes, keep)
    if x.dtype.kind in "fV":  # (bfloat16 is a void-kind type)
        result = np.asarray(_KERNELS[op_type](x.astype(_wider(x.dtype)), axes, keep))
        return result.astype(x.dtype)
    if x.dtype.kind in "iu" and op_type == "ReduceMean" and x.dtype.itemsize <= 4 and x.size < 2**31:
        total = np.sum(x, axis=axes, keepdims=keep, dtype=np.int64)  # (exact: |sum| < 2^31 * 2^32)
        count = math.prod(x.shape[a] for a in axes)
        return np.asarray(np.where(total < 0, -(-total // count), total // count)).astype(x.dtype)
    if x.dtype.kind in "iu" and op_type in ("ReduceMean", "ReduceL2"):
        exact = np.asarray(np.sum(np.square(x.astype(object)) if op_type == "ReduceL2" else x.astype(object),
                                  axis=axes, keepdims=keep), dtype=object)  # fmt: skip
        if op_type == "ReduceL2":
            top = int(np.iinfo(x.dtype).max)  # a norm the type cannot hold saturates: a norm is never negative
            return np.asarray(np.frompyfunc(lambda v: min(math.isqrt(v), top), 1, 1)(exact)).astype(x.dtype)
        count = math.prod(x.shape[a] for a in axes)
        return np.asarray(np.frompyfunc(lambda v: -(-v // count) if v < 0 else v // count, 1, 1)(exact)).astype(x.dtype)
    # Integer sums, products, squares and absolute values wrap to the exact result modulo 2^bits: nothing to widen.
    return np.asarray(_KERNELS[op_type](x, axes, keep)).astype(x.dtype, copy=False)


_KERNELS: Final[dict[str, _Kernel]] = {
    "ReduceMean": _mean_kernel,
    "ReduceSum": _sum_kernel,
    "ReduceMax": _max_kernel,
    "ReduceMin": _min_kernel,
    "ReduceProd": _prod_kernel,
    "ReduceL1": _l1_kernel,
    "ReduceL2": _l2_kernel,
    "ReduceLogSum": _log_sum_kernel,
    "ReduceLogSumExp": _log_sum_exp_kernel,
    "ReduceSumSquare": _sum_square_kernel,
}


def _zero_size(op_type: str, array: npt.NDArray[Any], axes: tuple[int, ...], keep: bool, name: str) -> npt.NDArray[Any]:
    """Result of a reduction of a tensor with no elements (no NumPy reduction is run)."""
    out_shape = _output_shape(array.shape, axes, keep)
    if math.prod(out_shape) == 0:
        return np.empty(out_shape, dtype=array.dtype)
    # Some output element reduces over zero input elements.
    dtype = array.dtype
    value: Any
    if op_type in ("ReduceSum", "ReduceL1", "ReduceL2", "ReduceSumSquare"):
        value = 0
    elif op_type == "ReduceProd":
        value = 1
    elif op_type in ("ReduceLogSum", "ReduceLogSumExp"):
        value = -np.inf
    elif op_type == "ReduceMax":
        value = False if dtype == np.bool_ else (np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf)
    elif op_type == "ReduceMin":
        value = True if dtype == np.bool_ else (np.iinfo(dtype).max if dtype.kind in "iu" else np.inf)
    elif dtype.kind in "iu":  # ReduceMean
        raise InputError(
            f"{name}: the mean over zero elements is undefined in ONNX and {_type_name(dtype)} has no NaN "
            f"(input shape {list(array.shape)}, reduced axes {list(axes)} include a zero-length dim); "
            "expected every reduced dim to be non-zero"
        )
    else:
        value = np.nan
    return np.full(out_shape, value, dtype=dtype)


# --- validation helpers -----------------------------------------------------------------------------


def _schema(op_type: str) -> _Versions:
    if op_type not in _SCHEMAS:
        raise InputError(f"unknown ONNX operator {op_type!r}; expected one of {', '.join(_SCHEMAS)}")
    return _SCHEMAS[op_type]


def _type_name(dtype: np.dtype[Any]) -> str:
    return _ONNX_TYPE_NAMES.get(dtype, f"NumPy {dtype.name}")


def _as_array(value: object, what: str) -> npt.NDArray[Any]:
    if not isinstance(value, np.ndarray | np.generic):
        raise InputError(f"{what} must be a NumPy array; got {type(value).__name__}")
    return np.asarray(value, order="C")


def _check_type(dtype: np.dtype[Any], name: str, allowed: frozenset[str], what: str) -> None:
    if _ONNX_TYPE_NAMES.get(dtype) not in allowed:
        raise InputError(
            f"{name} does not accept {what} of type {_type_name(dtype)}; "
            f"allowed: {', '.join(f'tensor({t})' for t in sorted(allowed))}"
        )


def _flag(value: object, what: str, name: str) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    raise InputError(f"{name}: {what} must be 0 or 1; got {value!r}")


_AXES = AxesPolicy(
    out_of_range="{name}: axis {axis} is out of range for a rank-{rank} input; expected {expected}",
    rank0_expected="no axes (a rank-0 tensor has none)",
    repeated="{name}: axes {values} name axis {axis} more than once; axes must be unique "
    "(onnx.reference rejects repeated axes)",
)


def _normalize_axes(axes: object, rank: int, name: str) -> tuple[int, ...]:
    """Validate ``axes`` and return them in [0, rank) in the given order (empty for None/[])."""
    if axes is None:
        return ()
    if isinstance(axes, np.ndarray):
        if axes.dtype.kind not in "iu" or axes.ndim > 1:
            raise InputError(
                f"{name}: the axes tensor must be a 0-D or 1-D integer tensor; got {axes.ndim}-D {axes.dtype.name}"
            )
        values = [int(a) for a in axes.reshape(-1)]
    elif isinstance(axes, Sequence) and not isinstance(axes, str | bytes):
        values = []
        for a in axes:
            if isinstance(a, bool | np.bool_) or not isinstance(a, int | np.integer):
                raise InputError(f"{name}: axes must be integers; got {a!r} in {list(axes)!r}")
            values.append(int(a))
    else:
        raise InputError(f"{name}: axes must be a sequence of ints, an integer array or None; got {axes!r}")
    return normalize_axes(values, rank, _AXES, name=name)


def _output_shape(shape: tuple[int, ...], axes: tuple[int, ...], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)
