"""The NumPy reference against OpenVINO's CPU plugin (inference precision f32), through ``run_spec``.

Part 1: on *benign* data, where none of the CPU plugin's known defects can trigger, every reduction type,
element type, axis pattern and keep_dims value must agree within the default tolerances.

Part 2: one test per known defect class of the CPU plugin (OpenVINO 2026.4.1, see /tmp/ovprobe), asserting
that ovreduce *reports* it: a failed comparison located at the wrong element, or an OpenVINO result with a
``failed:`` error carrying OpenVINO's message, with the NumPy result present and correct. These assert the
defect as observed: when an OpenVINO release fixes one, its test fails, and that is how we learn of it.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.backends.numpy import NumPyBackend
from ovreduce.backends.openvino import OpenVINOBackend
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.reports.common import json_float
from ovreduce.run import RunReport, run_spec
from tests.cpu import cpu_output, reduction_executes_in, reduction_isa

from .layers import array, describe, layer, run

ARITHMETIC = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2")
LOGICAL = ("ReduceLogicalAnd", "ReduceLogicalOr")
TYPES = ("f32", "f16", "bf16", "f64", "i32", "i64", "i8", "u8", "u64")
F32_MAX = float(np.finfo(np.float32).max)
BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)

# Every pattern reduces 1, 4, 16, 64 or 256 elements of a [4, 16, 4] tensor: powers of two (an f64 mean is
# then exact even in f32) and perfect squares (so is an f64 L2 norm of equal magnitudes).
SHAPE = (4, 16, 4)
PATTERNS: dict[str, tuple[tuple[int, ...], Any]] = {
    "innermost": (SHAPE, [2]),
    "outermost": (SHAPE, [0]),
    "middle": (SHAPE, [1]),
    "all": (SHAPE, [0, 1, 2]),
    "empty": (SHAPE, []),
    "duplicate": (SHAPE, [1, 1, 2]),
    "negative": (SHAPE, [-1, -3]),
    "scalar-axes": (SHAPE, 1),
    "scalar-data": ((), []),
}


def _quota(rng: np.random.Generator, n: int, counts: dict[float, int], rest: float) -> npt.NDArray[Any]:
    """``n`` values holding at most ``counts[v]`` of each v, the rest ``rest``, shuffled."""
    values = [v for v, c in counts.items() for _ in range(min(c, n))][:n]
    return rng.permutation(np.array(values + [rest] * (n - len(values)), dtype=np.float64))


def benign(op: str, type_name: str, shape: tuple[int, ...], rng: np.random.Generator) -> npt.NDArray[Any]:
    """Seeded data on which the CPU plugin computes correctly (within tolerance) for ``op``.

    8-bit types: every subset sum and sum of squares stays inside the type (its accumulator saturates);
    i32/i64/u64: far below 2**24 (i32 goes through f32, 64-bit types through i32); f64: values whose sums,
    means over 2^k elements, products and (equal-magnitude) L2 norms are exact in f32, which the plugin
    computes f64 in; other floats: normal values of moderate magnitude (products: magnitudes near 1).
    """
    n = math.prod(shape)
    prod = op == "ReduceProd"
    if type_name == "boolean":
        values: npt.NDArray[Any] = rng.integers(0, 2, size=n).astype(np.bool_)
    elif type_name == "f64":
        if prod:
            values = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], size=n)
        elif op == "ReduceL2":
            values = rng.choice([-0.75, 0.75], size=n)
        else:
            values = rng.integers(-32, 33, size=n) / 8
    elif type_name in ("f32", "f16", "bf16"):
        values = rng.uniform(0.5, 1.5, size=n) * rng.choice([-1.0, 1.0], size=n) if prod else rng.standard_normal(n)
    elif type_name == "i8":
        values = rng.choice([-1.0, 1.0], size=n) if prod else _quota(rng, n, {1.0: 60, -1.0: 60}, 0.0)
    elif type_name == "u8":
        values = _quota(rng, n, {2.0: 7}, 1.0) if prod else _quota(rng, n, {1.0: 200}, 0.0)
    else:  # i32, i64, u64
        signed = type_name != "u64"
        if prod:
            values = _quota(rng, n, {2.0: 20}, 1.0) * (rng.choice([-1.0, 1.0], size=n) if signed else 1.0)
        else:
            values = rng.integers(-50 if signed else 0, 51, size=n).astype(np.float64)
    return np.asarray(values.astype(ELEMENT_TYPES[type_name].numpy).reshape(shape))


def _matrix() -> list[Any]:
    cases = []
    for op in ARITHMETIC + LOGICAL:
        for type_name in ("boolean",) if op in LOGICAL else TYPES:
            for pattern in PATTERNS:
                for keep in (True, False):
                    if pattern == "empty" and not keep:
                        continue  # the CPU plugin cannot compile it: test_empty_axes_without_keep_dims_...
                    cases.append(pytest.param(op, type_name, pattern, keep, id=f"{op}-{type_name}-{pattern}-{keep}"))
    return cases


@pytest.mark.parametrize(("op", "type_name", "pattern", "keep_dims"), _matrix())
def test_numpy_and_cpu_agree_on_benign_data(op: str, type_name: str, pattern: str, keep_dims: bool) -> None:
    shape, axes = PATTERNS[pattern]
    rng = np.random.default_rng(zlib.crc32(f"{op}-{type_name}-{pattern}".encode()))
    data = benign(op, type_name, shape, rng)
    report = run(layer(op, type_name, shape, axes, keep_dims), [data])
    assert [r.ok for r in report.results] == [True, True], describe(report)
    assert len(report.comparisons) == 1
    assert report.comparisons[0].ok, describe(report)
    assert report.ok


# -- known defects of the CPU plugin ---------------------------------------------------------------------------
def _mismatch(
    report: RunReport, index: list[int], reference: Any, candidate: Any, *, numpy_output: Any | None = None
) -> None:
    """The comparison failed, located at ``index`` with these values, and the NumPy result is right."""
    numpy_result, ov_result = report.results
    assert numpy_result.ok and ov_result.ok, describe(report)
    if numpy_output is not None:
        assert np.array_equal(numpy_result.output, numpy_output, equal_nan=True), describe(report)
    (comparison,) = report.comparisons
    assert not comparison.ok, describe(report)
    assert not report.ok
    assert comparison.first_mismatch is not None
    assert comparison.first_mismatch["index"] == index, describe(report)
    for key, value in (("reference", reference), ("candidate", candidate)):
        got = comparison.first_mismatch[key]
        if isinstance(value, float) and math.isnan(value):
            assert got == "NaN", describe(report)
        else:
            assert got == value, describe(report)


def _saturate(value: int, type_name: str) -> int:
    info = np.iinfo(ELEMENT_TYPES[type_name].numpy)
    return max(int(info.min), min(int(info.max), value))


def _trunc_div(a: int, b: int) -> int:
    return abs(a) // b * (1 if a >= 0 else -1)


U8_SATURATION = [
    # (op, data, exact result, what the CPU computes: the u8 accumulator saturates at 255)
    pytest.param("ReduceMean", [100, 100, 100], 100, _saturate(300, "u8") // 3, id="mean-100x3-gives-85"),
    pytest.param("ReduceMean", [200, 200], 200, _saturate(400, "u8") // 2, id="mean-200x2-gives-127"),
    pytest.param("ReduceSum", [200, 200], 400 - 256, _saturate(400, "u8"), id="sum-saturates-not-wraps"),
    pytest.param("ReduceL2", [15, 15, 15], 25, math.isqrt(_saturate(675, "u8")), id="l2-squares-saturate"),
]


@pytest.mark.parametrize(
    ("count", "value"),
    [
        pytest.param(164, 200, id="200x164-exact-32800"),
        pytest.param(300, 200, id="200x300-exact-60000"),
        pytest.param(40000, 1, id="1x40000-exact-40000"),
    ],
)
def test_u8_sum_of_a_1d_input_reaching_32768_gives_0(count: int, value: int) -> None:
    """ReduceSum over a 1-D u8 input on CPU saturates at 255 while the exact sum stays below 32768, and gives 0 from
    32768 on (200 x 164 = 32800 -> 0, 200 x 163 = 32600 -> 255): not saturation, and not the reference's wrap (96 for
    200 x 300). ovreduce reports exactly what OpenVINO computes."""
    values = [value] * count
    exact = value * count
    direct = cpu_output("ReduceSum", "u8", array("u8", values), [0], False)
    assert int(direct) == 0, direct  # recorded: 0, on every CPU checked
    below = cpu_output("ReduceSum", "u8", array("u8", [1] * 32767), [0], False)
    assert int(below) == 255  # one less: saturated
    report = run(layer("ReduceSum", "u8", [count], [0], False), [array("u8", values)])
    _mismatch(report, [], exact % 256, 0, numpy_output=np.array(exact % 256, np.uint8))


@pytest.mark.parametrize(
    ("op", "shape", "axes", "value", "exact", "below"),
    [
        # ReduceL1 sums |x| in the same u8 accumulator: 200 x 163 (32600) saturates, 200 x 164 (32800) gives 0
        pytest.param("ReduceL1", [164], [0], 200, 32800 % 256, ("ReduceL1", [163], 255), id="l1-200x164"),
        pytest.param("ReduceMean", [164], [0], 200, 200, ("ReduceMean", [163], 255 // 163), id="mean-200x164"),
        pytest.param("ReduceL1", [164, 2], [0], 200, 32800 % 256, ("ReduceL1", [163, 2], 255), id="l1-200x164-axis-0"),
        # ReduceL2's squares pass through it too: one element whose square reaches 32768 (182^2 = 33124) gives 0, one
        # below (181^2 = 32761) the root of a square saturated at 255
        pytest.param("ReduceL2", [1], [0], 200, 200, ("ReduceL2", [1], math.isqrt(255)), id="l2-one-200"),
        pytest.param("ReduceL2", [1], [0], 182, 182, ("ReduceL2", [1], math.isqrt(255)), id="l2-one-182"),
        pytest.param("ReduceL2", [2], [0], 181, math.isqrt(2 * 181**2), None, id="l2-181x2"),
        pytest.param("ReduceL2", [2, 2], [1], 200, 255, None, id="l2-rank2-axis-1"),
        pytest.param("ReduceL2", [32, 2], [0], 200, 255, None, id="l2-rank2-axis-0"),
    ],
)
def test_u8_l1_mean_and_l2_reaching_32768_give_0(
    op: str, shape: list[int], axes: list[int], value: int, exact: int, below: tuple[str, list[int], int] | None
) -> None:
    """A u8 ReduceL1, ReduceMean or ReduceL2 whose sum (of |x|, of x, of the squares) reaches 32768 gives 0 on CPU, as
    a ReduceSum does: a u8 ReduceL2 of the one element 200 is 0. Just below, the accumulator saturates at 255 (a norm
    of 181 is 15, the root of 255). The reference gives the exact value (a norm past 255 saturates, a sum wraps)."""
    data = np.full(shape, value, np.uint8)
    direct = cpu_output(op, "u8", data, axes, False)
    assert not direct.any(), direct  # recorded: 0, on every CPU checked
    if below is not None:
        other, smaller, saturated = below
        fewer = np.full(smaller, value if other != "ReduceL2" else 181, np.uint8)
        assert np.unique(cpu_output(other, "u8", fewer, axes, False)).tolist() == [saturated]
    report = run(layer(op, "u8", shape, axes, False), [data])
    out = [n for i, n in enumerate(shape) if i not in axes]
    _mismatch(report, [0] * len(out), exact, 0, numpy_output=np.full(out, exact, np.uint8))


def test_rank_6_identity_with_keep_dims_is_wrong() -> None:
    """ReduceSum over f32 data of rank 6 (or more) with empty axes and keep_dims=true, the identity, gives the
    first two elements and 0 for the others on CPU ([2,2,2,2,2,2]: 62 of 64 wrong); ranks 1 to 5 are right."""
    for rank in (5, 6):
        data = (np.arange(2**rank) + 1).astype(np.float32).reshape((2,) * rank)
        direct = cpu_output("ReduceSum", "f32", data, [], True)
        report = run(layer("ReduceSum", "f32", list(data.shape), [], True), [data])
        (_, ov_result) = report.results
        assert ov_result.output is not None
        assert np.array_equal(ov_result.output, direct), describe(report)  # what OpenVINO computes, reported
        if rank == 5:
            assert report.ok and np.array_equal(direct, data), describe(report)
            continue
        assert int(np.sum(direct != data)) == 62, direct  # recorded: the first two right, the rest 0
        assert np.array_equal(direct.reshape(-1)[2:], np.zeros(62, np.float32))
        _mismatch(report, [0, 0, 0, 0, 1, 0], 3.0, 0.0, numpy_output=data)


@pytest.mark.parametrize(
    "shape", [(1, 1, 1, 1, 1, 8), (4, 4, 1, 1, 1, 1), (3, 1, 1, 1, 1, 1), (2, 3, 1, 1, 1, 2), (3, 2, 2, 2, 2, 2, 2)]
)
def test_rank_6_identity_keeps_as_many_elements_as_the_first_dim(shape: tuple[int, ...]) -> None:
    """The identity (empty axes, keep_dims=true) at rank >= 6 keeps the first d0 elements in memory order, d0 being
    the first dimension, and gives 0 for the rest: [1,1,1,1,1,8] keeps 1 of 8, [4,4,1,1,1,1] 4 of 16, [3,1,1,1,1,1]
    all 3."""
    data = (np.arange(math.prod(shape)) + 1).astype(np.float32).reshape(shape)
    direct = cpu_output("ReduceSum", "f32", data, [], True)
    kept = shape[0]
    assert np.array_equal(direct.reshape(-1)[:kept], data.reshape(-1)[:kept]), direct  # recorded
    assert not direct.reshape(-1)[kept:].any(), direct
    report = run(layer("ReduceSum", "f32", list(shape), [], True), [data])
    if kept == data.size:
        assert report.ok, describe(report)
    else:
        first = [int(i) for i in np.unravel_index(kept, shape)]
        _mismatch(report, first, float(kept + 1), 0.0, numpy_output=data)


_FLT_MAX = float(np.finfo(np.float32).max)


@pytest.mark.parametrize(
    ("op", "type_name", "start"),
    [
        ("ReduceMax", "f32", -_FLT_MAX),
        ("ReduceMin", "f32", _FLT_MAX),
        ("ReduceMax", "i32", np.iinfo(np.int32).min),
        ("ReduceProd", "f32", 1.0),
        ("ReduceMean", "f32", 0.0),
        ("ReduceLogicalAnd", "boolean", True),
    ],
)
def test_rank_6_identity_gives_the_reductions_start_value_past_the_first_dim(
    op: str, type_name: str, start: Any
) -> None:
    """Past the first d0 elements the rank >= 6 identity gives the kernel's start value, not always 0: ∓FLT_MAX for
    a float ReduceMax/Min, the integer extreme for an integer one, 1 for ReduceProd, true for ReduceLogicalAnd, and 0
    for the sums and norms."""
    shape = (1, 1, 1, 1, 1, 8)
    data = array(type_name, [1.0, 0.0] * 4) if type_name == "boolean" else array(type_name, list(range(1, 9)))
    data = data.reshape(shape)
    direct = cpu_output(op, type_name, data, [], True)
    assert direct.reshape(-1)[0] == data.reshape(-1)[0], direct  # the first d0 = 1 element kept
    assert np.all(direct.reshape(-1)[1:] == start), direct  # recorded: the rest are the start value
    report = run(layer(op, type_name, list(shape), [], True), [data])
    assert not report.ok and np.array_equal(report.results[1].output, direct), describe(report)


_RANK_6 = (3, 2, 3, 2, 3, 2)


def _truncated_and_nearest(
    op: str, data: npt.NDArray[Any], axes: list[int]
) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """An integer ReduceMean (toward zero) or ReduceL2 (the floor) as OpenVINO's reference computes it, and the same
    rounded to nearest instead."""
    unique = tuple(sorted(set(axes)))
    wide = data.astype(np.int64)
    if op == "ReduceMean":
        value = wide.sum(axis=unique) / math.prod(data.shape[a] for a in unique)
        return np.trunc(value), np.round(value)
    root = np.sqrt((wide * wide).sum(axis=unique))
    return np.floor(root), np.round(root)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceL2"])
@pytest.mark.parametrize(
    ("axes", "rounds"),
    [
        ([0], False),
        ([0, 1], False),
        ([2, 3, 4], False),
        ([0, 1, 2, 3, 4, 5], False),
        ([0, 0], True),
        ([0, 2], True),
        ([0, 1, 3], True),
        ([0, 1, 2, 4], True),
        ([0, 1, 2, 3, 5], True),
        ([1, 1, 2], True),
    ],
)
def test_rank_6_integer_mean_and_l2_over_axes_not_one_run_round_to_nearest(
    op: str, axes: list[int], rounds: bool
) -> None:
    """An i32 ReduceMean or ReduceL2 at rank 6 over axes that are not one contiguous run (two to five of them, or a
    repeated one) gives the nearest integer on CPU, where one run of axes truncates as OpenVINO's reference does (the
    mean toward zero, the norm's floor); at rank 5 every set of axes truncates."""
    data = np.random.default_rng(1).integers(0 if op == "ReduceL2" else -50, 50, _RANK_6).astype(np.int32)
    truncated, nearest = _truncated_and_nearest(op, data, axes)
    assert (truncated != nearest).any()  # the data tell the two apart
    direct = cpu_output(op, "i32", data, axes, False)
    assert np.array_equal(direct, nearest if rounds else truncated), (direct, truncated)  # recorded
    if max(axes) < 5:  # the same axes at rank 5 truncate
        five = np.ascontiguousarray(data[..., 0])
        assert np.array_equal(cpu_output(op, "i32", five, axes, False), _truncated_and_nearest(op, five, axes)[0])
    report = run(layer(op, "i32", list(_RANK_6), axes, False), [data])
    (_, ov_result) = report.results
    assert ov_result.output is not None and np.array_equal(ov_result.output, direct), describe(report)
    assert report.ok != rounds, describe(report)


@pytest.mark.parametrize("axes", [[0, 0], [0, -6], [0, 5]], ids=["0-0", "0-minus-6", "0-5"])
def test_rank_6_integer_mean_over_two_axes_rounds_up(axes: list[int]) -> None:
    """ReduceMean over i32 data of rank 6 with two axes (a duplicated one, or two distinct ones) gives 4 on CPU for a
    mean of 3.5, where the same layer over axis [0] truncates to 3 as OpenVINO's reference does (rank 5: 3)."""
    data = np.full((2,) * 6, 3, np.int32)
    data[0] = 4
    exact = np.full((2,) * (5 if axes != [0, 5] else 4), 3, np.int32)  # trunc(3.5)
    direct = cpu_output("ReduceMean", "i32", data, axes, False)
    assert np.unique(direct).tolist() == [4], direct  # recorded
    assert np.unique(cpu_output("ReduceMean", "i32", data, [0], False)).tolist() == [3]
    five = data[..., 0]
    assert np.unique(cpu_output("ReduceMean", "i32", five, [0, 0], False)).tolist() == [3]  # rank 5 truncates
    report = run(layer("ReduceMean", "i32", list(data.shape), axes, False), [data])
    _mismatch(report, [0] * exact.ndim, 3, 4, numpy_output=exact)


@pytest.mark.parametrize(
    ("type_name", "values", "reference", "cpu"),
    [
        # the norm 42426 fits i32, then wraps to i16 on the way back: a negative norm
        pytest.param("i16", [30000, 30000], 32767, 42426 - 2**16, id="i16-norm-wraps-negative"),
        # each square passes i32's range: INT_MIN, as the i32 overflow row says, and 0 back in u16
        pytest.param("u16", [60000, 60000], 65535, 0, id="u16-squares-past-i32"),
        pytest.param("u16", [46341], 46341, 0, id="u16-one-square-past-i32"),
    ],
)
def test_16_bit_l2_is_executed_in_i32_and_wrapped_back(
    type_name: str, values: list[int], reference: int, cpu: int
) -> None:
    """ReduceL2 over i16 [30000, 30000] on CPU gives -23110: the plugin executes i16 and u16 in i32 and converts the
    result back by wrapping, so a norm past the type's range comes out negative (or 0, where a square passes i32's
    range). The reference saturates a norm that does not fit (a norm is never negative)."""
    assert reduction_executes_in(type_name) == "i32"  # recorded
    data = array(type_name, values)
    assert cpu_output("ReduceL2", type_name, data, [0], True).tolist() == [cpu]  # recorded
    assert cpu_output("ReduceSum", type_name, data, [0], True).tolist() == [int(data.sum(dtype=data.dtype))]  # wraps
    report = run(layer("ReduceL2", type_name, [len(values)], [0], True), [data])
    _mismatch(report, [0], reference, cpu, numpy_output=array(type_name, [reference]))


_PAST_2_POW_24 = [16384] * 1024 + [1]  # 2**24 + 1 in any order: each partial sum below 2**24 is exact, the last is not


@pytest.mark.parametrize(
    ("op", "type_name", "values"),
    [
        pytest.param("ReduceSum", "i16", _PAST_2_POW_24, id="i16-sum"),
        pytest.param("ReduceSum", "u16", _PAST_2_POW_24, id="u16-sum"),
        pytest.param("ReduceL1", "i16", [-v for v in _PAST_2_POW_24], id="i16-l1"),
        pytest.param("ReduceL1", "u16", _PAST_2_POW_24, id="u16-l1"),
    ],
)
def test_16_bit_sums_past_2_pow_24_are_rounded_through_f32_before_the_wrap(
    op: str, type_name: str, values: list[int]
) -> None:
    """ReduceSum over i16 ``[16384] * 1024 + [1]`` (exactly 2**24 + 1) on CPU gives 0, where the reference's wrap of
    the exact sum gives 1: the plugin executes i16 and u16 in i32, whose sums pass through f32 (2**24 + 1 rounds to
    2**24), and wraps that back. Means and products of them wrap as the reference's do."""
    assert reduction_executes_in(type_name) == "i32"  # recorded
    data = array(type_name, values)
    exact = sum(abs(v) for v in values)
    assert exact == 2**24 + 1 and float(np.float32(exact)) == 2**24
    report = run(layer(op, type_name, [len(values)], [0], True), [data])
    wrapped = array(type_name, [(exact % 2**16)])  # the reference: the exact result wrapped to 16 bits, 1
    _mismatch(report, [0], 1, 2**24 % 2**16, numpy_output=wrapped)
    mean = run(layer("ReduceMean", type_name, [len(values)], [0], True), [array(type_name, _PAST_2_POW_24)])
    assert mean.ok, describe(mean)


@pytest.mark.parametrize(("op", "values", "exact", "cpu"), U8_SATURATION)
def test_u8_accumulator_saturates(op: str, values: list[int], exact: int, cpu: int) -> None:
    """ReduceMean over u8 [100, 100, 100] on CPU gives 85 (= trunc(255 / 3)): the plugin sums in a u8 that
    saturates at 255 (Reduce[jit_avx512_I8 in:u8 out:u8]); the exact mean is 100 and fits."""
    report = run(layer(op, "u8", [len(values)], [0], True), [array("u8", values)])
    _mismatch(report, [0], exact, cpu, numpy_output=array("u8", [exact]))


I8_SATURATION = [
    pytest.param(
        "ReduceMean", (3,), [0], [-120, -120, -120], -120, _trunc_div(_saturate(-360, "i8"), 3), id="mean-minus-120x3"
    ),
    pytest.param(
        "ReduceMean", (3,), [0], [-128, -128, -127], -127, _trunc_div(_saturate(-383, "i8"), 3), id="mean-near-min"
    ),
    # ReduceL2's square saturates too: the norm of the one element 100 is the root of 127
    pytest.param("ReduceL2", (1,), [0], [100], 100, math.isqrt(_saturate(100**2, "i8")), id="l2-square-saturates"),
    # Reducing axes 0 and 2 in two passes: the partial sum 120 + 120 saturates to 127 before -240 is added.
    pytest.param(
        "ReduceSum", (2, 1, 2), [0, 2], [120, 120, -120, -120], 0, _saturate(240, "i8") - 240, id="sum-partial-sums"
    ),
]


@pytest.mark.parametrize(("op", "shape", "axes", "values", "exact", "cpu"), I8_SATURATION)
def test_i8_accumulator_saturates(
    op: str, shape: tuple[int, ...], axes: list[int], values: list[int], exact: int, cpu: int
) -> None:
    """ReduceMean over i8 [-120, -120, -120] on CPU gives -42 (= trunc(-128 / 3)): the i8 accumulator
    saturates at -128; ReduceSum of [[120, 120]], [[-120, -120]] over axes [0, 2] gives -113, not 0."""
    report = run(layer(op, "i8", shape, axes, False), [array("i8", values).reshape(shape)])
    out_index = [0] * (len(shape) - len(axes))
    _mismatch(report, out_index, exact, cpu)


@pytest.mark.parametrize(
    ("op", "type_name", "values", "exact", "cpu"),
    [
        pytest.param("ReduceSum", "i64", [2**32 + 1], 2**32 + 1, 1, id="i64-sum-2^32+1-gives-1"),
        pytest.param("ReduceMax", "i64", [2**31, 5], 2**31, 5, id="i64-max-2^31-lost"),
        pytest.param("ReduceSum", "u64", [2**63 + 7], 2**63 + 7, 7, id="u64-sum-keeps-low-32-bits"),
        pytest.param("ReduceMax", "u64", [2**64 - 1, 1], 2**64 - 1, 1, id="u64-max-top-is-minus-1"),
    ],
)
def test_i64_and_u64_are_executed_as_i32(op: str, type_name: str, values: list[int], exact: int, cpu: int) -> None:
    """ReduceSum over i64 [4294967297] on CPU gives 1: the plugin inserts Convert i64->i32 before the
    reduction (Convert[unknown_i64 in:i64 out:i32]; Reduce[jit_avx512_i32]), keeping the low 32 bits."""
    report = run(layer(op, type_name, [len(values)], [0], True), [array(type_name, values)])
    _mismatch(report, [0], exact, cpu, numpy_output=array(type_name, [exact]))


@pytest.mark.parametrize(
    ("op", "values", "exact", "cpu"),
    [
        pytest.param("ReduceMax", [3_000_000_000, 1], 3_000_000_000, 1, id="max-above-2^31-is-negative"),
        pytest.param("ReduceMin", [3_000_000_000, 5], 5, 3_000_000_000, id="min-above-2^31-is-negative"),
    ],
)
def test_u32_is_executed_as_signed_i32(op: str, values: list[int], exact: int, cpu: int) -> None:
    """ReduceMax over u32 [3000000000, 1] on CPU gives 1: the plugin executes u32 as i32 (the reduction's runtime
    precision), where 3000000000 is negative."""
    report = run(layer(op, "u32", [len(values)], [0], True), [array("u32", values)])
    _mismatch(report, [0], exact, cpu, numpy_output=array("u32", [exact]))
    assert report.results[1].runtime_precision == "i32", describe(report)


@pytest.mark.parametrize(
    ("op", "values", "exact"),
    [
        pytest.param("ReduceMax", [2**24 + 1, 0], 2**24 + 1, id="max"),
        pytest.param("ReduceMin", [2**24 + 1, 2**30], 2**24 + 1, id="min"),
        pytest.param("ReduceSum", [2**24 + 1, 0], 2**24 + 1, id="sum"),
        pytest.param("ReduceMean", [2**24 + 1, 2**24 + 1], 2**24 + 1, id="mean"),
        pytest.param("ReduceMax", [807299705, 1], 807299705, id="max-below-2^31"),
    ],
)
def test_u32_is_rounded_through_f32_above_2_pow_24(op: str, values: list[int], exact: int) -> None:
    """ReduceMax over u32 [16777217, 0] on CPU gives 16777216, [807299705, 1] 807299712: values a signed i32 holds
    exactly are rounded through f32 as i32's are, not only those past 2**31 that turn negative."""
    cpu = int(np.float32(exact))  # the CPU's value is exactly the f32 rounding of the exact one
    assert cpu != exact
    report = run(layer(op, "u32", [len(values)], [0], True), [array("u32", values)])
    _mismatch(report, [0], exact, cpu, numpy_output=array("u32", [exact]))


@pytest.mark.parametrize(
    ("op", "values", "exact", "cpu"),
    [
        pytest.param("ReduceSum", [2**24 + 1, 0], 2**24 + 1, 2**24, id="sum"),
        pytest.param("ReduceMax", [2**24 + 1, 2**24], 2**24 + 1, 2**24, id="max"),
        pytest.param("ReduceMin", [2**24 + 1, 2**24 + 3], 2**24 + 1, 2**24, id="min"),
    ],
)
def test_i32_is_rounded_through_f32_above_2_pow_24(op: str, values: list[int], exact: int, cpu: int) -> None:
    """ReduceSum over i32 [16777217, 0] on CPU gives 16777216: the values pass through f32, which holds
    integers exactly only up to 2**24 (16777217 rounds to 16777216)."""
    assert float(np.float32(exact)) == cpu  # the CPU's value is exactly the f32 rounding of the exact one
    report = run(layer(op, "i32", [len(values)], [0], True), [array("i32", values)])
    _mismatch(report, [0], exact, cpu)


@pytest.mark.parametrize(
    ("op", "values", "exact", "cpu"),
    [
        pytest.param("ReduceMean", [2**31 - 1, 2**31 - 1], 2**31 - 1, -(2**31) // 2, id="mean-int-max-twice"),
        pytest.param("ReduceSum", [-(2**30), -(2**30), -5], 2**32 - 2**31 - 5, -(2**31), id="sum-below-int-min"),
        pytest.param("ReduceL2", [46341, 0], 46341, -(2**31), id="l2-square-beyond-int-max"),
    ],
)
def test_i32_overflow_gives_int_min(op: str, values: list[int], exact: int, cpu: int) -> None:
    """ReduceMean over i32 [2147483647, 2147483647] on CPU gives -1073741824: the sum (2**32 - 2, in f32)
    converts to INT_MIN, the "integer indefinite" of the x86 conversion, which is then halved."""
    report = run(layer(op, "i32", [len(values)], [0], True), [array("i32", values)])
    _mismatch(report, [0], exact, cpu)


def _as_on_this_cpu(
    report: RunReport, type_name: str, values: list[float], exact: float, recorded: dict[str, float]
) -> None:
    """A known defect whose value depends on what the CPU executes the reduction in (``recorded``: the CPU's
    value by that precision, read from OpenVINO): ovreduce reports the precision OpenVINO reports and exactly
    the output OpenVINO computes, and disagrees exactly when that is not the exact value; where this CPU's
    condition has a recorded value, the output is that value. (A CPU whose condition no row records, say one
    that executes f16 natively, is still held to OpenVINO's own output: nothing is skipped.)"""
    executes = reduction_executes_in(type_name)
    (_, ov_result) = report.results
    assert ov_result.runtime_precision == executes, describe(report)
    spec = report.spec
    assert spec.axes is not None
    direct = cpu_output(spec.type, type_name, array(type_name, values), spec.axes, spec.keep_dims)
    assert ov_result.output is not None
    assert np.array_equal(ov_result.output, direct, equal_nan=True), describe(report)
    cpu = float(direct.reshape(-1)[0])
    if executes in recorded:
        assert cpu == recorded[executes] or (math.isnan(cpu) and math.isnan(recorded[executes])), describe(report)
    if (math.isnan(exact) and math.isnan(cpu)) or exact == cpu:
        assert report.ok, describe(report)
    else:
        _mismatch(report, [0], json_float(exact), json_float(cpu))


# A NaN is lost together with every element before it: a 1-D max/min is that of the elements after the last NaN
# (the kernel's max(acc, x) returns x where acc is NaN), the same where a bf16 reduction executes natively and where
# it executes through f32; an f8e4m3 or f8e5m2 one, which executes in f32, too.
NAN_LOST = {"f32": 1.0, "bf16": 1.0}


@pytest.mark.parametrize(
    ("op", "type_name", "values", "cpu"),
    [
        pytest.param("ReduceMax", "f32", [math.nan, 1.0, 2.0], {"f32": 2.0}, id="max-f32-nan-first"),
        pytest.param("ReduceMax", "f32", [5.0, math.nan, 1.0], {"f32": 1.0}, id="max-f32-larger-before-nan"),
        pytest.param("ReduceMin", "f32", [math.nan, 1.0, 2.0], {"f32": 1.0}, id="min-f32-nan-first"),
        pytest.param("ReduceMin", "f32", [1.0, 5.0, math.nan, 2.0], {"f32": 2.0}, id="min-f32-smaller-before-nan"),
        pytest.param("ReduceMin", "f32", [*range(1, 8), math.nan, *range(9, 17)], {"f32": 9.0}, id="min-f32-16"),
        pytest.param("ReduceMax", "f16", [5.0, math.nan, 1.0], NAN_LOST, id="max-f16"),
        pytest.param("ReduceMax", "bf16", [5.0, math.nan, 1.0], NAN_LOST, id="max-bf16"),
        pytest.param("ReduceMax", "f8e4m3", [5.0, math.nan, 1.0], NAN_LOST, id="max-f8e4m3"),
        pytest.param("ReduceMax", "f8e5m2", [1.0, 5.0, math.nan, 2.0], {"f32": 2.0}, id="max-f8e5m2"),
        pytest.param("ReduceMin", "f8e5m2", [1.0, 5.0, math.nan, 2.0], {"f32": 2.0}, id="min-f8e5m2"),
    ],
)
def test_reduce_max_and_min_lose_nan_and_what_comes_before(
    op: str, type_name: str, values: list[float], cpu: dict[str, float]
) -> None:
    """ReduceMax over f32 [5, NaN, 1] on CPU gives 1: the plugin's max/min lose a NaN that is not last and every
    element before it, a max below the largest element (IEEE maximum propagates the NaN; the reference does)."""
    report = run(layer(op, type_name, [len(values)], [0], True), [array(type_name, values)])
    _as_on_this_cpu(report, type_name, values, math.nan, cpu)
    assert report.comparisons[0].nan == {"reference": 1, "candidate": 0}


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("size", [2, 3, 8, 16, 17, 100])
def test_a_1d_max_or_min_keeps_a_last_nan(op: str, size: int) -> None:
    """A NaN last in a 1-D input comes out: the kernel's last max(acc, NaN) is NaN."""
    values = [*map(float, range(1, size)), math.nan]
    report = run(layer(op, "f32", [size], [0], True), [array("f32", values)])
    assert report.ok, describe(report)
    assert report.comparisons[0].nan == {"reference": 1, "candidate": 1}


# The f32 vector width of the CPU plugin's reduction kernels, by the instruction set they use.
VECTOR_F32 = {"avx512": 16, "avx2": 8}


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("width", [8, 16, 17, 24, 32])
@pytest.mark.parametrize("rows", [(2,), (2, 3)], ids=["rank2", "rank3"])
def test_a_nan_last_in_a_row_of_whole_vectors_gives_the_identity(op: str, width: int, rows: tuple[int, ...]) -> None:
    """Reducing the innermost axis of a rank >= 2 input whose rows are a whole number of vectors (16 f32 with AVX512,
    8 with AVX2), a NaN last in its row is lost with the whole row: ReduceMax gives -FLT_MAX, the kernel's identity;
    a row with a scalar tail (17 on both, 24 with AVX512) keeps it."""
    shape = [*rows, width]
    values = np.arange(1, math.prod(shape) + 1, dtype=np.float32).reshape(shape)
    values[..., -1] = np.nan
    axis = len(shape) - 1
    report = run(layer(op, "f32", shape, [axis], True), [values])
    (_, ov_result) = report.results
    direct = cpu_output(op, "f32", values, [axis], True)
    assert ov_result.output is not None and np.array_equal(ov_result.output, direct, equal_nan=True), describe(report)
    vector = VECTOR_F32.get(reduction_isa("f32"))
    if vector is not None:  # an instruction set no value is recorded for is held to OpenVINO's own output above
        identity = -F32_MAX if op == "ReduceMax" else F32_MAX
        want = identity if width % vector == 0 else math.nan
        assert np.array_equal(direct, np.full([*rows, 1], want, np.float32), equal_nan=True), describe(report)
    if np.isnan(direct).all():
        assert report.ok, describe(report)
    else:
        _mismatch(report, [0] * len(shape), math.nan, json_float(float(direct.reshape(-1)[0])))


# Executed natively, bf16's own largest finite value comes out; executed through f32, the f32 kernel gives
# -FLT_MAX, which rounds to -inf in bf16: the exact result, by accident.
BF16_LOWEST = {"bf16": -BF16_MAX, "f32": -math.inf}
BF16_HIGHEST = {"bf16": BF16_MAX, "f32": math.inf}


@pytest.mark.parametrize(
    ("op", "type_name", "values", "exact", "cpu"),
    [
        pytest.param("ReduceMax", "f32", [-math.inf, -math.inf], -math.inf, {"f32": -F32_MAX}, id="max-f32-minus-inf"),
        pytest.param("ReduceMin", "f32", [math.inf, math.inf], math.inf, {"f32": F32_MAX}, id="min-f32-inf"),
        pytest.param("ReduceMax", "bf16", [-math.inf, -math.inf], -math.inf, BF16_LOWEST, id="max-bf16-minus-inf"),
        pytest.param("ReduceMin", "bf16", [math.inf, math.inf], math.inf, BF16_HIGHEST, id="min-bf16-inf"),
    ],
)
def test_infinities_become_the_largest_finite_value(
    op: str, type_name: str, values: list[float], exact: float, cpu: dict[str, float]
) -> None:
    """ReduceMax over f32 [-inf, -inf] on CPU gives -3.4028235e38 (-FLT_MAX): the plugin starts max from
    the lowest finite value instead of -inf, so -inf inputs come out finite."""
    report = run(layer(op, type_name, [len(values)], [0], True), [array(type_name, values)])
    _as_on_this_cpu(report, type_name, values, exact, cpu)
    (_, ov_result) = report.results
    assert ov_result.output is not None
    assert report.comparisons[0].inf == {"reference": 1, "candidate": int(np.isinf(ov_result.output).sum())}


@pytest.mark.parametrize(
    ("op", "values", "exact"),
    [
        pytest.param("ReduceMean", [3e38, 3e38], float(np.float32(3e38)), id="mean-3e38x2"),
        pytest.param("ReduceL2", [3e20, 4e20], float(np.float32(5e20)), id="l2-squares-overflow"),
        pytest.param("ReduceSum", [1e38] * 4 + [-1e38] * 4, 0.0, id="sum-cancelling-partial-sums"),
    ],
)
def test_f32_intermediate_overflow(op: str, values: list[float], exact: float) -> None:
    """ReduceMean over f32 [3e38, 3e38] on CPU gives inf: the f32 sum 6e38 overflows before the division,
    although the mean (3e38) is finite; the reference accumulates in f64."""
    report = run(layer(op, "f32", [len(values)], [0], True), [array("f32", values)])
    _mismatch(report, [0], exact, "Infinity")
    (comparison,) = report.comparisons  # failed on the infinity: an infinite error, not the finite elements' 0
    assert (comparison.nonfinite_mismatched, comparison.max_abs_error, comparison.max_rel_error) == (
        1,
        math.inf,
        math.inf,
    )


def test_f32_intermediate_underflow_shows_only_without_the_absolute_tolerance() -> None:
    """ReduceL2 over f32 [1e-30, 1e-30] on CPU gives 0: the squares (1e-60) underflow, although the result
    (1.4e-30) is an ordinary f32 number. The default atol (1e-5) passes it; --atol 0 shows it."""
    spec = layer("ReduceL2", "f32", [2], [0], True)
    data = array("f32", [1e-30, 1e-30])
    assert run(spec, [data]).ok
    strict = run_spec(spec, [data], [NumPyBackend(), OpenVINOBackend()], atol=0.0, rtol=1e-5)
    _mismatch(strict, [0], float(np.float32(math.sqrt(2) * 1e-30)), 0.0)


def test_f32_intermediate_underflow_of_a_product_is_its_whole_value() -> None:
    """ReduceProd over f32 [1e-30, 1e-30, 1e30, 1e30] on CPU gives 0: the partial product 1e-60 underflows before the
    large factors, and the result, 1, is lost whole: `run` disagrees at the default tolerances."""
    values = [1e-30, 1e-30, 1e30, 1e30]
    direct = cpu_output("ReduceProd", "f32", array("f32", values), [0], True)
    assert direct.tolist() == [0.0], direct  # recorded
    report = run(layer("ReduceProd", "f32", [4], [0], True), [array("f32", values)])
    _mismatch(report, [0], 1.0, 0.0)


@pytest.mark.parametrize(
    ("op", "values", "exact", "cpu"),
    [
        pytest.param("ReduceSum", [1e300], 1e300, F32_MAX, id="sum-1e300-gives-flt-max"),
        pytest.param("ReduceMax", [1e300, -1e300], 1e300, F32_MAX, id="max-1e300-gives-flt-max"),
        pytest.param("ReduceMin", [1e-300, 1e-100], 1e-300, 0.0, id="min-1e-300-flushed-to-0"),
    ],
)
def test_f64_is_computed_in_f32(op: str, values: list[float], exact: float, cpu: float) -> None:
    """ReduceSum over f64 [1e300] on CPU gives 3.4028235e38 (FLT_MAX): the plugin converts f64 to f32 around
    the reduction (Convert[f64->f32]; Reduce[jit_avx512_f32]; Convert[f32->f64]), saturating what f32
    cannot hold. (The rounding of ordinary values to f32 is within the f32 tolerances ovreduce gives a
    candidate that computes in f32; with f64 tolerances it is reported too, see the next test.)"""
    report = run(layer(op, "f64", [len(values)], [0], True), [array("f64", values)])
    if cpu == 0.0:  # |1e-300 - 0| is within any atol: only f64's own tolerances show it
        report = run_spec(report.spec, report.inputs, [NumPyBackend(), OpenVINOBackend()], atol=0.0, rtol=1e-9)
    _mismatch(report, [0], exact, cpu)


def test_f64_rounding_to_f32_shows_with_f64_tolerances() -> None:
    """ReduceSum over f64 [1.0, 1e-8] on CPU gives exactly 1.0 (1e-8 is below half an f32 ulp of 1); with
    the default tolerances (f32's, since the candidate computes in f32) it passes, with f64's it does not."""
    spec = layer("ReduceSum", "f64", [2], [0], True)
    data = array("f64", [1.0, 1e-8])
    assert run(spec, [data]).ok
    strict = run_spec(spec, [data], [NumPyBackend(), OpenVINOBackend()], atol=1e-12, rtol=1e-9)
    _mismatch(strict, [0], 1.0 + 1e-8, 1.0)


def test_f32_long_sum_accumulates_rounding_error() -> None:
    """ReduceSum over 1,000,000 f32 copies of 0.1 on CPU gives 100958.34: about 1% off the exact
    100000.0015, far beyond the sqrt(n) * eps error of a well-ordered f32 sum (the tolerance ovreduce
    allows, rtol 1.2e-4 here)."""
    values = np.full(1_000_000, 0.1, dtype=np.float32)
    report = run(layer("ReduceSum", "f32", [values.size], [0], True), [values])
    (comparison,) = report.comparisons
    assert not comparison.ok, describe(report)
    assert comparison.max_rel_error is not None and comparison.max_rel_error > 1e-3
    assert comparison.rtol == pytest.approx(2.0**-23 * 1000)
    assert report.results[0].output is not None
    assert float(report.results[0].output[0]) == float(np.float32(1_000_000 * float(np.float32(0.1))))


def _assert_failed_with(report: RunReport, message: str, numpy_output: npt.NDArray[Any]) -> None:
    numpy_result, ov_result = report.results
    assert numpy_result.ok, describe(report)
    assert numpy_result.output is not None
    assert numpy_result.output.shape == numpy_output.shape
    assert np.array_equal(numpy_result.output, numpy_output), describe(report)
    assert not ov_result.ok and ov_result.output is None
    assert ov_result.error is not None and ov_result.error.startswith("failed: "), describe(report)
    assert message in ov_result.error, describe(report)
    assert report.comparisons == []  # nothing to compare with
    assert not report.ok


@pytest.mark.parametrize("op", ARITHMETIC + LOGICAL)
def test_empty_axes_without_keep_dims_fails_to_compile(op: str) -> None:
    """ReduceMean with constant empty axes and keep_dims=false (the identity) does not compile on CPU:
    "ReduceMean node with name '...' gets incorrect number of input/output dimensions!" (with
    keep_dims=true it compiles and is the identity)."""
    type_name = "boolean" if op in LOGICAL else "f32"
    data = np.array([[True, False], [False, True]]) if op in LOGICAL else array("f32", [[1.5, -2.0], [3.0, 4.0]])
    spec = layer(op, type_name, [2, 2], [], False)
    report = run(spec, [data])
    expected = np.abs(data) if op in ("ReduceL1", "ReduceL2") else data
    _assert_failed_with(
        report, f"{op} node with name '{spec.layer_name}' gets incorrect number of input/output", expected
    )


def test_runtime_axes_with_dynamic_output_rank_fail_to_compile() -> None:
    """ReduceMean with runtime axes of shape [2] and keep_dims=false has an output of dynamic rank, which
    the CPU plugin refuses: "CPU plug-in doesn't support ReduceMean operation with dynamic rank"."""
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    report = run(layer("ReduceMean", "f32", [2, 3, 4], None, False, axes_count=2), [data, np.array([0, 2])])
    _assert_failed_with(
        report,
        "CPU plug-in doesn't support ReduceMean operation with dynamic rank",
        np.array([7.5, 11.5, 15.5], np.float32),
    )


def test_dynamic_rank_data_runs_at_the_inputs_shape() -> None:
    """The CPU plugin refuses a data Parameter of dynamic rank ("CPU plug-in doesn't support Parameter
    operation with dynamic rank"), so the layer is compiled for its input's shape, as a reshaped model."""
    data = np.ones((2, 3), dtype=np.float32)
    report = run(layer("ReduceSum", "f32", "...", [0], True), [data])
    assert report.ok, describe(report)
    assert np.array_equal(report.outputs["openvino:CPU"], np.full((1, 3), 2.0, np.float32))
