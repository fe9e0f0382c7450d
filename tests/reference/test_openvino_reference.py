"""ovreduce.reference.openvino against the specification, hand-computed edge cases and exact arithmetic.

Expected values here are computed independently of the code under test: by hand (the tables), with
Python integers and ``fractions.Fraction`` (the spec examples and the property tests), and the error
messages are OpenVINO 2026.4's own text (as the installed runtime prints it for the same node).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ovreduce.errors import InputError, ShapeInferenceError
from ovreduce.reference.evaluate import reduce, reduce_mean, reduce_with_notes

BF16 = np.dtype(ml_dtypes.bfloat16)
ARITHMETIC = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2")
LOGICAL = ("ReduceLogicalAnd", "ReduceLogicalOr")
F32_MAX = float(np.finfo(np.float32).max)


def same(actual: npt.NDArray[Any], expected: npt.NDArray[Any]) -> None:
    """Same dtype, same shape, same values (NaN equal to NaN)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "biu":
        assert np.array_equal(actual, expected), (actual, expected)
    else:
        assert np.array_equal(actual.astype(np.float64), expected.astype(np.float64), equal_nan=True), (
            actual,
            expected,
        )


# -- the four examples of openvino-ReduceMean-1.rst ------------------------------------------------------------
def _spec_data() -> npt.NDArray[np.float32]:
    # Multiples of 1/8 in [-64, 64]: every partial sum is exact in float64, so the mean is a single rounding.
    rng = np.random.default_rng(20260401)
    return (rng.integers(-512, 513, size=(6, 12, 10, 24)) / 8).astype(np.float32)


def _mean_by_loops(data: npt.NDArray[np.float32], axes: Sequence[int], keep_dims: bool) -> npt.NDArray[np.float32]:
    """The spec's formula, element by element: output[i] = mean over j with j_k = i_k for k not in axes."""
    rank = data.ndim
    reduced = {a % rank for a in axes}
    sums: dict[tuple[int, ...], Fraction] = {}
    counts: dict[tuple[int, ...], int] = {}
    for index in itertools.product(*(range(d) for d in data.shape)):
        if keep_dims:
            key = tuple(0 if k in reduced else i for k, i in enumerate(index))
        else:
            key = tuple(i for k, i in enumerate(index) if k not in reduced)
        sums[key] = sums.get(key, Fraction(0)) + Fraction(float(data[index]))
        counts[key] = counts.get(key, 0) + 1
    out_shape = (
        tuple(1 if k in reduced else d for k, d in enumerate(data.shape))
        if keep_dims
        else tuple(d for k, d in enumerate(data.shape) if k not in reduced)
    )
    out = np.empty(out_shape, dtype=np.float32)
    for key, total in sums.items():
        out[key] = np.float32(float(total / counts[key]))
    return out


@pytest.mark.parametrize(
    ("axes", "keep_dims", "shape"),
    [
        pytest.param([2, 3], True, (6, 12, 1, 1), id="axes-2-3-keep"),
        pytest.param([2, 3], False, (6, 12), id="axes-2-3"),
        pytest.param([1], False, (6, 10, 24), id="axis-1"),
        pytest.param([-2], False, (6, 12, 24), id="axis-minus-2"),
    ],
)
def test_spec_examples(axes: list[int], keep_dims: bool, shape: tuple[int, ...]) -> None:
    data = _spec_data()
    out = reduce_mean(data, axes, keep_dims)
    assert out.shape == shape  # the output shapes printed in the specification
    same(out, _mean_by_loops(data, axes, keep_dims))


# -- hand-computed values ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    op: str
    dtype: Any
    data: Any
    axes: Any
    expected: Any
    keep_dims: bool = False
    note: str | None = None  # a substring every note must contain; None: no notes at all


I8, U8, I16, I32, I64, U64 = np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64
F16, F32, NAN, INF = np.float16, np.float32, float("nan"), float("inf")

VALUE_CASES = [
    # 8-bit means never leave the type's range, whatever the sum (OpenVINO's CPU plugin saturates the sum).
    Case("mean-u8-100x3", "ReduceMean", U8, [100, 100, 100], [0], 100),
    Case("mean-u8-255x2", "ReduceMean", U8, [255, 255], [0], 255),
    Case("mean-u8-trunc", "ReduceMean", U8, [2, 3, 3], [0], 2),  # 8/3 = 2.67
    Case("mean-i8-near-min", "ReduceMean", I8, [-128, -128, -127], [0], -127),  # -383/3 = -127.67
    Case("mean-i8-max", "ReduceMean", I8, [127, 127, 127], [0], 127),
    # C++ integer division: truncation toward zero, not floor.
    Case("mean-i32-minus-1.5", "ReduceMean", I32, [-1, -2], [0], -1),
    Case("mean-i32-minus-7/3", "ReduceMean", I32, [-7, 0, 0], [0], -2),
    Case("mean-i64-minus-11/3", "ReduceMean", I64, [-3, -4, -4], [0], -3),
    Case("mean-i32-plus-11/3", "ReduceMean", I32, [3, 4, 4], [0], 3),
    Case("mean-i8-minus-5/2", "ReduceMean", I8, [-5, 0], [0], -2),
    # Sums beyond the 64-bit range in the intermediate, means that fit.
    Case("mean-i64-2^62x3", "ReduceMean", I64, [2**62] * 3, [0], 2**62),
    Case("mean-i64-min-min", "ReduceMean", I64, [-(2**63), -(2**63)], [0], -(2**63)),
    Case("mean-i64-max-and-min", "ReduceMean", I64, [2**63 - 1, -(2**63)], [0], 0),  # -1/2 -> 0
    Case("mean-i32-max-max", "ReduceMean", I32, [2**31 - 1, 2**31 - 1], [0], 2**31 - 1),
    Case("mean-u64-near-2^64", "ReduceMean", U64, [2**64 - 1, 2**64 - 1, 2**64 - 3], [0], 2**64 - 2),
    Case("sum-u64-fits", "ReduceSum", U64, [2**63, 2**63 - 1], [0], 2**64 - 1),
    Case("max-u64-top", "ReduceMax", U64, [2**64 - 1, 1], [0], 2**64 - 1),
    Case("min-i64-bottom", "ReduceMin", I64, [5, -(2**63)], [0], -(2**63)),
    # Floats accumulate wide: f16 and f32 sums beyond their range still give the right mean.
    Case("mean-f16-70000-ones", "ReduceMean", F16, [1.0] * 70000, [0], 1.0),
    Case("mean-f16-60000x2", "ReduceMean", F16, [60000.0, 60000.0], [0], 60000.0),
    Case("sum-f16-120000-is-inf", "ReduceSum", F16, [60000.0, 60000.0], [0], INF),  # 120000 > 65504
    Case("l2-f16-300x2", "ReduceL2", F16, [300.0, 300.0], [0], 424.25),  # f16(424.26)
    Case("mean-f32-3e38x2", "ReduceMean", F32, [3e38, 3e38], [0], np.float32(3e38)),
    Case("l2-f32-3e20-4e20", "ReduceL2", F32, [3e20, 4e20], [0], np.float32(5e20)),
    Case("sum-f32-cancelling-1e38", "ReduceSum", F32, [1e38] * 4 + [-1e38] * 4, [0], 0.0),
    Case("mean-bf16-7/3", "ReduceMean", BF16, [1.0, 2.0, 4.0], [0], 2.328125),  # 1 + 21/128, times 2
    Case("mean-bf16-3e38x2", "ReduceMean", BF16, [3.0040553e38, 3.0040553e38], [0], 3.0040553e38),
    Case("sum-bf16-exact-260", "ReduceSum", BF16, [256.0, 1.0, 1.0, 1.0, 1.0], [0], 260.0),
    # Integer overflow of the result wraps modulo 2^bits, and says so.
    Case("sum-i8-wrap", "ReduceSum", I8, [100, 100], [0], -56, note="wraps modulo 2^8"),
    Case("sum-u8-wrap", "ReduceSum", U8, [200, 200], [0], 144, note="wraps modulo 2^8"),
    Case("sum-i32-wrap", "ReduceSum", I32, [2**30, 2**30], [0], -(2**31), note="wraps modulo 2^32"),
    Case("sum-i64-wrap", "ReduceSum", I64, [2**62, 2**62], [0], -(2**63), note="wraps modulo 2^64"),
    Case("sum-u64-wrap", "ReduceSum", U64, [2**63, 2**63], [0], 0, note="wraps modulo 2^64"),
    Case("prod-i16-wrap", "ReduceProd", I16, [256, 256], [0], 0, note="wraps modulo 2^16"),
    Case("prod-i8-neg-wrap", "ReduceProd", I8, [-16, 16], [0], 0, note="wraps modulo 2^8"),
    Case("prod-i8-neg-fits", "ReduceProd", I8, [-16, 8], [0], -128),
    Case("prod-i32-46341^2", "ReduceProd", I32, [46341, 46341], [0], 2147488281 - 2**32, note="wraps modulo 2^32"),
    Case("prod-i64-2^63", "ReduceProd", I64, [2**62, 2], [0], -(2**63), note="wraps modulo 2^64"),
    Case("prod-i64-max-fits", "ReduceProd", I64, [2**63 - 1, 1], [0], 2**63 - 1),
    Case("prod-i64-min-fits", "ReduceProd", I64, [-(2**62), 2], [0], -(2**63)),
    Case("prod-u64-2^64", "ReduceProd", U64, [2**32, 2**32], [0], 0, note="wraps modulo 2^64"),
    Case("prod-u64-fits", "ReduceProd", U64, [2**32, 2**32 - 1], [0], 2**64 - 2**32),
    Case("l1-i8-128", "ReduceL1", I8, [-128], [0], -128, note="wraps modulo 2^8"),
    Case("l1-i32-2^31", "ReduceL1", I32, [2**31 - 1, -1], [0], -(2**31), note="wraps modulo 2^32"),
    Case("l1-i64-fits", "ReduceL1", I64, [-(2**62), 2**62 - 1], [0], 2**63 - 1),
    # ReduceL2 of integers: floor(sqrt(exact sum of squares)).
    Case("l2-i32-3-4", "ReduceL2", I32, [3, 4], [0], 5),
    Case("l2-i32-sqrt3", "ReduceL2", I32, [1, 1, 1], [0], 1),
    Case("l2-i32-sqrt11", "ReduceL2", I32, [2, 2, 1, 1, 1], [0], 3),
    Case("l2-u8-squares-beyond-255", "ReduceL2", U8, [15, 15, 15], [0], 25),  # sqrt(675) = 25.98
    Case("l2-i8-squares-beyond-127", "ReduceL2", I8, [12, -12], [0], 16),  # sqrt(288) = 16.97
    Case("l2-i32-square-beyond-i32", "ReduceL2", I32, [46341, 0], [0], 46341),
    Case("l2-i64-2^62x2", "ReduceL2", I64, [2**62, -(2**62)], [0], 6521908912666391106),  # floor(2^62.5)
    Case("l2-u64-top", "ReduceL2", U64, [2**64 - 1], [0], 2**64 - 1),
    # A norm that does not fit saturates (a norm is never negative; OpenVINO's reduce_l2.hpp wraps the sum of squares
    # in the type at each step and takes the root of what is left: 6 for i8 [100, 100, 100], which is no norm).
    Case("l2-u8-saturates", "ReduceL2", U8, [200, 200], [0], 255, note="saturates at 255"),  # sqrt(80000) = 282
    Case("l2-i8-100x3", "ReduceL2", I8, [100, 100, 100], [0], 127, note="saturates at 127"),  # 173, not -83
    Case("l2-i8-127x2", "ReduceL2", I8, [127, -127], [0], 127, note="saturates at 127"),  # 179, not -77
    Case("l2-i8-minus-128", "ReduceL2", I8, [-128], [0], 127, note="saturates at 127"),  # |-128|, not -128
    Case("l2-i16-30000x2", "ReduceL2", I16, [30000, 30000], [0], 32767, note="saturates at 32767"),
    Case("l2-i32-beyond", "ReduceL2", I32, [2**31 - 1, 2**31 - 1], [0], 2**31 - 1, note="saturates at 2147483647"),
    Case("l2-i64-beyond", "ReduceL2", I64, [2**63 - 1, 2**63 - 1], [0], 2**63 - 1, note="saturates at"),
    # ReduceMax/ReduceMin propagate NaN wherever it is; infinities stay infinite.
    Case("max-nan-first", "ReduceMax", F32, [NAN, 1.0, 2.0], [0], NAN),
    Case("max-nan-middle", "ReduceMax", F32, [1.0, NAN, 2.0], [0], NAN),
    Case("max-nan-last", "ReduceMax", F32, [1.0, 2.0, NAN], [0], NAN),
    Case("min-nan-first", "ReduceMin", F32, [NAN, 1.0, 2.0], [0], NAN),
    Case("min-f16-nan", "ReduceMin", F16, [2.0, NAN, 1.0], [0], NAN),
    Case("max-bf16-nan", "ReduceMax", BF16, [NAN, 1.0, 2.0], [0], NAN),
    Case("max-of-minus-inf", "ReduceMax", F32, [-INF, -INF], [0], -INF),
    Case("min-of-inf", "ReduceMin", F32, [INF, INF], [0], INF),
    Case("max-bf16-minus-inf", "ReduceMax", BF16, [-INF, -INF], [0], -INF),
    Case("sum-nan", "ReduceSum", F32, [1.0, NAN, 2.0], [0], NAN),
    Case("sum-inf-minus-inf", "ReduceSum", F32, [INF, -INF], [0], NAN),
    # The logical pair.
    Case("and-rows", "ReduceLogicalAnd", np.bool_, [[True, False], [True, True]], [1], [False, True]),
    Case("or-rows", "ReduceLogicalOr", np.bool_, [[False, False], [True, False]], [1], [False, True]),
    Case("and-columns-keep", "ReduceLogicalAnd", np.bool_, [[True, False], [True, True]], [0], [[True, False]], True),
    Case("or-all", "ReduceLogicalOr", np.bool_, [[False, False], [False, True]], [0, 1], True),
]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_an_integer_l2_norm_is_never_negative_nor_below_its_largest_element(dtype: Any) -> None:
    """Over each type's whole range: the norm is the exact one where it fits, else the type's largest value."""
    info = np.iinfo(dtype)
    data = np.random.default_rng(7).integers(info.min, info.max, size=(64, 5), dtype=dtype, endpoint=True)
    out, _ = reduce_with_notes("ReduceL2", data, [1], False)
    exact = [math.isqrt(sum(int(v) ** 2 for v in row)) for row in data.tolist()]
    assert out.tolist() == [min(e, int(info.max)) for e in exact]


@pytest.mark.parametrize("case", VALUE_CASES, ids=lambda c: c.id)
def test_values(case: Case) -> None:
    data = np.array(case.data, dtype=case.dtype)
    out, notes = reduce_with_notes(case.op, data, case.axes, case.keep_dims)
    same(out, np.array(case.expected, dtype=case.dtype))
    if case.note is None:
        assert notes == []
    else:
        assert notes, "an exact result that does not fit must be noted"
        assert all(case.note in n and "does not fit" in n for n in notes), notes


# -- zero-size reductions: the documented identities -----------------------------------------------------------
# ReduceMax/ReduceMin of an empty set are undefined in the specification; the reference gives what OpenVINO's
# reference implementation gives (tests/reference/test_openvino_evaluate.py checks it against OpenVINO itself):
# max from f32's lowest finite value (-inf once rounded to f16/bf16), min from +inf.
def _identity(op: str, dtype: Any) -> Any:
    dt = np.dtype(dtype)
    if op in ("ReduceMax", "ReduceMin") and dt.kind in "iu":
        return np.iinfo(dt).min if op == "ReduceMax" else np.iinfo(dt).max
    lowest = -INF if dt in (F16, BF16) else -F32_MAX
    highest = INF
    return {
        "ReduceMean": 0,
        "ReduceSum": 0,
        "ReduceProd": 1,
        "ReduceL1": 0,
        "ReduceL2": 0,
        "ReduceMax": lowest,
        "ReduceMin": highest,
        "ReduceLogicalAnd": True,
        "ReduceLogicalOr": False,
    }[op]


ZERO_SIZE = [
    pytest.param(op, dtype, keep, id=f"{op}-{np.dtype(dtype).name}-{'keep' if keep else 'drop'}")
    for op in ARITHMETIC + LOGICAL
    for dtype in ((np.bool_,) if op in LOGICAL else (F32, F16, BF16, I32, I8, U8, I64, U64))
    for keep in (True, False)
]


@pytest.mark.parametrize(("op", "dtype", "keep"), ZERO_SIZE)
def test_zero_size_reduction_gives_identity(op: str, dtype: Any, keep: bool) -> None:
    out = reduce(op, np.zeros((2, 0, 3), dtype=dtype), [1], keep)
    shape = (2, 1, 3) if keep else (2, 3)
    fill = _identity(op, dtype)
    expected = (
        np.full(shape, fill, np.float64).astype(dtype) if np.dtype(dtype).kind in "fV" else np.full(shape, fill, dtype)
    )
    same(out, expected)


@pytest.mark.parametrize("op", ARITHMETIC + LOGICAL)
def test_zero_size_kept_axis_stays_empty(op: str) -> None:
    dtype = np.bool_ if op in LOGICAL else F32
    out = reduce(op, np.zeros((0, 4), dtype=dtype), [1], False)
    assert out.shape == (0,)
    assert out.dtype == np.dtype(dtype)


# -- empty axes: the identity, element by element -------------------------------------------------------------
EMPTY_AXES = [
    pytest.param(op, dtype, keep, id=f"{op}-{np.dtype(dtype).name}-{'keep' if keep else 'drop'}")
    for op in ARITHMETIC + LOGICAL
    for dtype in ((np.bool_,) if op in LOGICAL else (F32, I32, BF16))
    for keep in (True, False)
]


@pytest.mark.parametrize(("op", "dtype", "keep"), EMPTY_AXES)
def test_empty_axes_is_identity(op: str, dtype: Any, keep: bool) -> None:
    if dtype is np.bool_:
        data = np.array([[True, False], [False, True]])
        expected = data
    else:
        data = np.array([[1.5, -2.0], [3.0, -4.0]] if np.dtype(dtype).kind != "i" else [[1, -2], [3, -4]], dtype)
        expected = np.abs(data) if op in ("ReduceL1", "ReduceL2") else data
    for axes in ([], np.array([], dtype=np.int64), np.zeros((0,), dtype=np.int32)):
        same(reduce(op, data, axes, keep), expected)


# -- axes: duplicates, negatives, scalars; keep_dims -----------------------------------------------------------
M = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=F32)


@pytest.mark.parametrize(
    ("axes", "expected"),
    [
        pytest.param([1, 1], [3.0, 7.0], id="duplicate"),
        pytest.param([-1, 1], [3.0, 7.0], id="negative-and-positive-same-axis"),
        pytest.param([-2], [4.0, 6.0], id="negative"),
        pytest.param([0, -2, 0], [4.0, 6.0], id="three-times-the-same"),
        pytest.param(np.int64(1), [3.0, 7.0], id="scalar-axes"),
        pytest.param(1, [3.0, 7.0], id="python-int-axes"),
        pytest.param(np.array(-1, dtype=np.int32), [3.0, 7.0], id="scalar-i32-axes"),
        pytest.param([1, -1, 0], 10.0, id="all-with-duplicates"),
    ],
)
def test_axes_forms(axes: Any, expected: Any) -> None:
    same(reduce("ReduceSum", M, axes), np.array(expected, dtype=F32))


@pytest.mark.parametrize(
    ("keep_dims", "shape"), [pytest.param(True, (1, 3, 1), id="keep"), pytest.param(False, (3,), id="drop")]
)
def test_keep_dims(keep_dims: bool, shape: tuple[int, ...]) -> None:
    data = np.arange(24, dtype=F32).reshape(2, 3, 4)
    out = reduce("ReduceMean", data, [0, 2], keep_dims)
    # Channel c holds 4c + {0, 1, 2, 3} and 12 + 4c + {0, 1, 2, 3}: mean 4c + 7.5.
    same(out, np.array([7.5, 11.5, 15.5], dtype=F32).reshape(shape))


def test_keep_dims_defaults_to_false() -> None:
    assert reduce("ReduceSum", np.ones((2, 3), F32), [1]).shape == (2,)


@pytest.mark.parametrize(
    ("axes", "keep_dims"),
    [
        pytest.param([], False, id="empty-drop"),
        pytest.param([], True, id="empty-keep"),
        pytest.param([0], False, id="axis-0"),
        pytest.param([-1], False, id="axis-minus-1"),
    ],
)
@pytest.mark.parametrize("dtype", [F32, BF16, I64, U64, I8, U8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ARITHMETIC)
def test_scalar_data(op: str, dtype: Any, axes: list[int], keep_dims: bool) -> None:
    magnitude = 2.5 if np.dtype(dtype).kind in "fV" else 5
    signed = np.dtype(dtype).kind != "u"
    # Reducing one element gives it back; the norms give its absolute value.
    value = -magnitude if signed and op in ("ReduceL1", "ReduceL2") else magnitude
    same(reduce(op, np.array(value, dtype), axes, keep_dims), np.array(magnitude, dtype))


def test_scalar_data_axis_with_keep_dims_fails_as_in_openvino() -> None:
    # OpenVINO accepts axis 0 of a scalar, then fails writing the kept dim: "Accessing out-of-range dimension".
    with pytest.raises(ShapeInferenceError, match=r"^Accessing out-of-range dimension$"):
        reduce("ReduceSum", np.float32(5.0), [0], True)


# -- errors with OpenVINO's messages ---------------------------------------------------------------------------
D = np.zeros((2, 3, 4), dtype=F32)
B = np.zeros((2, 3, 4), dtype=np.bool_)

ERROR_CASES = [
    pytest.param("ReduceSum", D, [3], "Axis 3 out of the tensor rank range [-3, 2].", id="axis-too-large"),
    pytest.param("ReduceSum", D, [-4], "Axis -4 out of the tensor rank range [-3, 2].", id="axis-too-small"),
    pytest.param("ReduceMean", D, [0, 5], "Axis 5 out of the tensor rank range [-3, 2].", id="second-axis-bad"),
    pytest.param("ReduceLogicalAnd", B, [3], "Axis 3 out of the tensor rank range [-3, 2].", id="logical-axis"),
    pytest.param("ReduceSum", np.float32(1), [1], "Axis 1 out of the tensor rank range [-1, 0].", id="scalar-axis-1"),
    pytest.param(
        "ReduceSum", D, np.array([[0, 1]]), "Axes input must be a scalar or 1D input. Got: [1,2]", id="axes-2d"
    ),
    pytest.param("ReduceSum", D, np.array([[1]]), "Axes input must be a scalar or 1D input. Got: [1,1]", id="axes-1x1"),
    pytest.param(
        "ReduceSum",
        D,
        np.array([1.0], dtype=np.float32),
        "Element type of axes input must be integer. Got: f32",
        id="axes-f32",
    ),
    pytest.param(
        "ReduceSum", D, np.array([True]), "Element type of axes input must be integer. Got: boolean", id="axes-bool"
    ),
    pytest.param("ReduceMean", B, [0], "Element type of data input must be numeric. Got: boolean", id="bool-data-mean"),
    pytest.param("ReduceSum", B, [0], "Element type of data input must be numeric. Got: boolean", id="bool-data-sum"),
    pytest.param("ReduceLogicalAnd", D, [0], "Element type of data input must be boolean.", id="f32-data-and"),
    pytest.param(
        "ReduceLogicalOr",
        np.zeros((2, 3), np.int32),
        [0],
        "Element type of data input must be boolean.",
        id="i32-data-or",
    ),
]


@pytest.mark.parametrize(("op", "data", "axes", "message"), ERROR_CASES)
def test_errors_carry_openvinos_message(op: str, data: Any, axes: Any, message: str) -> None:
    with pytest.raises(ShapeInferenceError) as info:
        reduce(op, data, axes)
    assert str(info.value) == message
    assert info.value.code == "shape"


def test_unknown_op_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown reduction 'ReduceAvg'"):
        reduce("ReduceAvg", D, [0])


# -- properties: float32 through one rounding, integers through Python arithmetic -------------------------------
@st.composite
def arrays_and_axes(draw: st.DrawFn, dtype: Any, elements: st.SearchStrategy[Any]) -> tuple[Any, list[int], bool]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    data = draw(hnp.arrays(dtype, shape, elements=elements))
    rank = len(shape)
    keep_dims = draw(st.booleans())
    if rank == 0:
        axes = [] if keep_dims else draw(st.lists(st.sampled_from([0, -1]), max_size=2))
    else:
        axes = draw(st.lists(st.integers(-rank, rank - 1), max_size=rank + 1))
    return data, axes, keep_dims


def _rows(data: npt.NDArray[Any], axes: list[int], keep_dims: bool) -> tuple[list[list[Any]], tuple[int, ...]]:
    """The values each output element reduces (as Python scalars), and the output shape."""
    rank = data.ndim
    reduced = sorted({a % rank for a in axes}) if rank else []
    kept = [k for k in range(rank) if k not in reduced]
    outputs = math.prod(data.shape[k] for k in kept)
    count = math.prod(data.shape[k] for k in reduced)
    rows: list[list[Any]] = np.transpose(data, kept + reduced).reshape(outputs, count).tolist()
    if keep_dims:
        return rows, tuple(1 if k in reduced else data.shape[k] for k in range(rank))
    return rows, tuple(data.shape[k] for k in kept)


# Multiples of 2^-10 below 2^12 in magnitude: sums of up to 625 of them are exact in float64, so computing in
# float64 and rounding once to float32 is fully determined, and Fraction arithmetic gives the same bits.
EXACT_F32 = st.integers(-(2**22), 2**22).map(lambda k: k / 1024.0)


@settings(max_examples=150, deadline=None)
@given(case=arrays_and_axes(np.float32, EXACT_F32), op=st.sampled_from(["ReduceSum", "ReduceMean"]))
def test_float32_sum_and_mean_round_once(case: tuple[Any, list[int], bool], op: str) -> None:
    data, axes, keep_dims = case
    rows, shape = _rows(data, axes, keep_dims)
    values = []
    for row in rows:
        total = sum((Fraction(v) for v in row), Fraction(0))
        values.append(float(total / len(row)) if op == "ReduceMean" and row else float(total))
    expected = np.array(values, dtype=np.float64).astype(np.float32).reshape(shape)
    same(reduce(op, data, axes, keep_dims), expected)


@settings(max_examples=150, deadline=None)
@given(
    case=arrays_and_axes(np.float32, st.floats(width=32, allow_nan=True, allow_infinity=True)),
    op=st.sampled_from(["ReduceMax", "ReduceMin"]),
)
def test_float32_max_and_min_are_exact_and_propagate_nan(case: tuple[Any, list[int], bool], op: str) -> None:
    data, axes, keep_dims = case
    rows, shape = _rows(data, axes, keep_dims)
    pick = max if op == "ReduceMax" else min
    values = []
    for row in rows:
        if not row:  # undefined in the specification; OpenVINO's reference starts from lowest() / infinity()
            values.append(-F32_MAX if op == "ReduceMax" else INF)
        elif any(math.isnan(v) for v in row):
            values.append(NAN)
        else:
            values.append(pick(row))
    expected = np.array(values, dtype=np.float64).astype(np.float32).reshape(shape)
    same(reduce(op, data, axes, keep_dims), expected)


INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@st.composite
def int_cases(draw: st.DrawFn) -> tuple[Any, list[int], bool]:
    dtype = draw(st.sampled_from(INT_TYPES))
    info = np.iinfo(dtype)
    return draw(arrays_and_axes(dtype, st.integers(int(info.min), int(info.max))))


@settings(max_examples=200, deadline=None)
@given(case=int_cases())
def test_integer_mean_is_exact_sum_truncated_toward_zero(case: tuple[Any, list[int], bool]) -> None:
    data, axes, keep_dims = case
    rows, shape = _rows(data, axes, keep_dims)
    values = []
    for row in rows:
        total = sum(int(v) for v in row)
        quotient = abs(total) // len(row) if row else 0
        values.append(quotient if total >= 0 else -quotient)
    same(reduce("ReduceMean", data, axes, keep_dims), np.array(values, dtype=object).astype(data.dtype).reshape(shape))


@settings(max_examples=200, deadline=None)
@given(case=int_cases())
def test_integer_sum_is_exact_sum_modulo_2_pow_bits(case: tuple[Any, list[int], bool]) -> None:
    data, axes, keep_dims = case
    rows, shape = _rows(data, axes, keep_dims)
    info = np.iinfo(data.dtype)
    wrapped = []
    overflowed = False
    for row in rows:
        total = sum(int(v) for v in row)
        overflowed |= not info.min <= total <= info.max
        value = total % 2**info.bits
        wrapped.append(value - 2**info.bits if info.min < 0 and value > info.max else value)
    out, notes = reduce_with_notes("ReduceSum", data, axes, keep_dims)
    same(out, np.array(wrapped, dtype=object).astype(data.dtype).reshape(shape))
    assert bool(notes) == overflowed


def _exact(op: str, row: list[float]) -> float:
    """``op`` of ``row`` in exact arithmetic (Fraction; the root of a Fraction through its numerator and denominator
    as Python integers), rounded once to the nearest float64."""
    values = [Fraction(v) for v in row]
    if op == "ReduceSum":
        return float(sum(values))
    if op == "ReduceMean":
        return float(sum(values) / len(values))
    if op == "ReduceProd":
        return float(math.prod(values))
    squares = sum(v * v for v in values)
    scale = 2**2200  # sqrt(n / d) = isqrt(n * d * scale^2) / (d * scale), to well past float64's 53 bits
    return float(Fraction(math.isqrt(squares.numerator * squares.denominator * scale * scale),
                          squares.denominator * scale))  # fmt: skip


@pytest.mark.parametrize(
    ("op", "dtype", "rows"),
    [
        pytest.param("ReduceMean", np.float64, [[1e308, 1e308], [1.0, 2.0]], id="mean-1e308-twice"),
        pytest.param(
            "ReduceSum", np.float64, [[1e308, 1e308, -1e308], [1.0, 2.0, 3.0]], id="sum-past-the-top-and-back"
        ),
        pytest.param("ReduceL2", np.float64, [[1e200, 1e200], [3.0, 4.0]], id="l2-squares-overflow"),
        pytest.param("ReduceL2", np.float64, [[1e-200, 1e-200], [3.0, 4.0]], id="l2-squares-underflow"),
        pytest.param("ReduceProd", np.float64, [[1e300, 1e300, 1e-300], [1.0, 2.0, 3.0]], id="prod-past-the-top"),
        pytest.param("ReduceProd", np.float64, [[1e-300, 1e-300, 1e300], [1.0, 2.0, 3.0]], id="prod-past-the-bottom"),
        pytest.param("ReduceProd", np.float32, [[1e38] * 9 + [1e-38] * 9, [1.0] * 18], id="f32-prod-past-f64s-top"),
    ],
)
def test_float_accumulates_without_overflowing_where_the_result_fits(
    op: str, dtype: Any, rows: list[list[float]]
) -> None:
    """The reference of f64 data, whose accumulator is f64 itself, does not overflow (nor underflow) on the way to a
    result that fits f64: the mean of [1e308, 1e308] is 1e308, not inf, as the f32 mean of [3e38, 3e38] is 3e38. (An
    f32 product can pass f64's range too.)"""
    data = np.array(rows, dtype)
    got = reduce(op, data, [1])
    want = np.array([_exact(op, [float(v) for v in row]) for row in data]).astype(dtype)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("op", "row", "expected"),
    [
        pytest.param("ReduceSum", [1e308, 1e308], math.inf, id="sum"),
        pytest.param("ReduceProd", [1e300, 1e300], math.inf, id="prod"),
        pytest.param("ReduceProd", [-1e300, 1e300], -math.inf, id="prod-negative"),
        pytest.param("ReduceProd", [1e-300, 1e-300], 0.0, id="prod-underflows"),
        pytest.param("ReduceProd", [1e300, 1e300, 0.0], 0.0, id="prod-with-a-zero"),  # exactly 0, not inf * 0
        pytest.param("ReduceProd", [math.inf, 0.0], math.nan, id="prod-inf-times-zero"),
        pytest.param("ReduceL2", [1.5e308, 1.5e308], math.inf, id="l2"),
        pytest.param("ReduceSum", [math.inf, -math.inf], math.nan, id="sum-infinities"),
    ],
)
def test_f64_results_past_its_range_are_still_ieee(op: str, row: list[float], expected: float) -> None:
    """Where the exact result is past f64's range it is inf (or 0), and infinities and NaN combine as IEEE says."""
    got = reduce(op, np.array(row, np.float64), [0])
    assert np.array_equal(got, np.array(expected), equal_nan=True), got
