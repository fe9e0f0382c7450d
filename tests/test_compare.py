"""ovreduce.compare: special values, exact integer comparison, located mismatches, minimal tolerances and
the default tolerances (per type, sqrt(n)-scaled, by the precision the candidate computed in)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.backends.base import BackendResult, LayerSpec
from ovreduce.backends.numpy import NumPyBackend
from ovreduce.compare import DEFAULT_TOLERANCES, compare, default_tolerances
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.run import run_spec
from ovreduce.shapes import PartialShape

F32_MAX = float(np.finfo(np.float32).max)
NAN, INF = math.nan, math.inf


def f32(*values: float) -> npt.NDArray[np.float32]:
    return np.array(values, dtype=np.float32)


# -- NaN and infinities ---------------------------------------------------------------------------------------
def test_nan_at_the_same_index_passes() -> None:
    c = compare(f32(1.0, NAN, 3.0), f32(1.0, NAN, 3.0))
    assert c.ok and bool(c)
    assert c.nan == {"reference": 1, "candidate": 1}
    assert c.mismatched == 0


@pytest.mark.parametrize(
    ("reference", "candidate", "index"),
    [
        pytest.param(f32(NAN, 2.0), f32(1.0, 2.0), [0], id="nan-vs-number"),
        pytest.param(f32(1.0, 2.0), f32(1.0, NAN), [1], id="number-vs-nan"),
        pytest.param(f32(NAN, 2.0), f32(2.0, NAN), [0], id="nan-at-other-index"),
        pytest.param(f32(INF), f32(NAN), [0], id="inf-vs-nan"),
    ],
)
def test_nan_against_anything_else_fails(reference: Any, candidate: Any, index: list[int]) -> None:
    c = compare(reference, candidate, atol=1e30, rtol=1e30)  # no tolerance excuses it
    assert not c.ok and not bool(c)
    assert c.first_mismatch is not None and c.first_mismatch["index"] == index
    assert c.required_atol is None and c.required_rtol is None  # no tolerance would pass
    json.dumps(c.to_json(), allow_nan=False)  # the JSON form holds no bare NaN


@pytest.mark.parametrize(
    ("reference", "candidate", "ok"),
    [
        pytest.param(f32(INF, -INF), f32(INF, -INF), True, id="same-infinities"),
        pytest.param(f32(INF), f32(-INF), False, id="opposite-infinities"),
        pytest.param(f32(-INF), f32(-F32_MAX), False, id="minus-inf-vs-minus-flt-max"),
        pytest.param(f32(F32_MAX), f32(INF), False, id="flt-max-vs-inf"),
    ],
)
def test_infinities_must_match_exactly(reference: Any, candidate: Any, ok: bool) -> None:
    c = compare(reference, candidate, atol=1e300, rtol=1e300)
    assert c.ok is ok
    if not ok:
        assert c.first_mismatch is not None
        assert {c.first_mismatch["reference"], c.first_mismatch["candidate"]} & {"Infinity", "-Infinity"}
        json.dumps(c.to_json(), allow_nan=False)


@pytest.mark.parametrize(
    ("reference", "candidate", "nonfinite"),
    [
        pytest.param(f32(*[3e38] * 24), f32(*[INF] * 24), 24, id="3e38-vs-inf"),
        pytest.param(f32(NAN, 2.0, 3.0), f32(1.0, 2.0, 3.5), 1, id="nan-vs-number-and-a-finite-mismatch"),
        pytest.param(f32(INF, 1.0), f32(-INF, 1.0), 1, id="opposite-infinities"),
        pytest.param(f32(1.0, 2.0), f32(1.0, -INF), 1, id="finite-vs-minus-inf"),
    ],
)
def test_a_mismatch_on_a_non_finite_value_is_an_infinite_error(reference: Any, candidate: Any, nonfinite: int) -> None:
    c = compare(reference, candidate, atol=1e-5, rtol=1e-5)
    assert not c.ok and c.nonfinite_mismatched == nonfinite <= c.mismatched
    assert (c.max_abs_error, c.max_rel_error) == (INF, INF)  # never 0.0: the statistics count them
    assert c.required_atol is None and c.required_rtol is None
    doc = json.loads(json.dumps(c.to_json(), allow_nan=False))
    assert (doc["max_abs_error"], doc["max_rel_error"], doc["nonfinite_mismatched"]) == (
        "Infinity",
        "Infinity",
        nonfinite,
    )


def test_matching_non_finite_values_leave_the_finite_statistics() -> None:
    c = compare(f32(NAN, INF, -INF, 1.0), f32(NAN, INF, -INF, 1.5), atol=0.0, rtol=0.0)
    assert not c.ok and (c.mismatched, c.nonfinite_mismatched) == (1, 0)
    assert (c.max_abs_error, c.max_rel_error, c.required_atol) == (0.5, 0.5, 0.5)
    assert (c.nan, c.inf) == ({"reference": 1, "candidate": 1}, {"reference": 2, "candidate": 2})


def test_a_relative_error_over_a_zero_reference_is_infinite_not_null() -> None:
    for c in (compare(f32(0.0, 1.0), f32(0.5, 1.0), atol=0.1), compare(np.array([0], np.int8), np.array([2], np.int8))):
        assert c.max_rel_error == INF and c.nonfinite_mismatched == 0
        assert c.required_rtol is None  # no rtol passes it
        assert c.to_json()["max_rel_error"] == "Infinity"


# -- exact comparison of integers and booleans -------------------------------------------------------------------
def test_integers_are_compared_exactly_unless_a_tolerance_is_given() -> None:
    c = compare(np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32))
    assert not c.ok and c.exact
    assert (c.atol, c.rtol) == (0.0, 0.0)
    assert c.mismatched == 1
    assert c.first_mismatch == {"index": [2], "reference": 3, "candidate": 4}
    assert c.max_abs_error == 1.0
    # a tolerance given is taken as it is (a user accepting a known difference), the values still read as integers
    c = compare(np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32), atol=1.0)
    assert c.ok and not c.exact and (c.atol, c.rtol, c.max_abs_error) == (1.0, 0.0, 1.0)
    c = compare(np.array([2**63 - 1], np.int64), np.array([2**63 - 3], np.int64), atol=1.0)
    assert not c.ok and c.max_abs_error == 2.0 and c.first_mismatch is not None
    c = compare(np.array([100, 10], np.uint8), np.array([85, 9], np.uint8), rtol=0.1)
    assert not c.ok and c.mismatched == 1 and c.first_mismatch == {"index": [0], "reference": 100, "candidate": 85}


@pytest.mark.parametrize(
    ("reference", "candidate", "ok", "max_abs"),
    [
        pytest.param(np.array([5], np.uint64), np.array([5], np.int64), True, 0.0, id="u64-vs-i64-equal"),
        pytest.param(np.array([2**63], np.uint64), np.array([-(2**63)], np.int64), False, 2.0**64, id="same-bits"),
        pytest.param(np.array([2**64 - 1], np.uint64), np.array([-1], np.int64), False, 2.0**64, id="u64-max-vs-m1"),
        pytest.param(np.array([2**64 - 1], np.uint64), np.array([2**64 - 2], np.uint64), False, 1.0, id="u64-adjacent"),
        pytest.param(np.array([2**63 - 1], np.int64), np.array([2**63 - 2], np.int64), False, 1.0, id="i64-adjacent"),
        pytest.param(np.array([200], np.uint8), np.array([-56], np.int8), False, 256.0, id="u8-vs-i8-same-bits"),
        pytest.param(np.array([True, False]), np.array([True, True]), False, 1.0, id="bool"),
    ],
)
def test_exact_integer_edges(reference: Any, candidate: Any, ok: bool, max_abs: float) -> None:
    c = compare(reference, candidate)
    assert c.ok is ok and c.exact
    assert c.max_abs_error == max_abs  # computed exactly, not through float64 (where 2^64-1 == 2^64-2)
    if not ok:
        assert c.first_mismatch is not None
        assert c.first_mismatch["reference"] == reference.reshape(-1)[0].item() or reference.dtype == np.bool_


# -- where the first mismatch is ----------------------------------------------------------------------------------
def test_first_mismatch_is_the_first_in_row_major_order() -> None:
    reference = np.zeros((3, 4), np.float32)
    candidate = reference.copy()
    candidate[2, 0] = 5.0
    candidate[1, 2] = -1.5
    c = compare(reference, candidate, atol=1e-3)
    assert c.mismatched == 2 and c.total == 12
    assert c.first_mismatch == {"index": [1, 2], "reference": 0.0, "candidate": -1.5}
    assert c.max_abs_error == 5.0


def test_scalar_mismatch_has_an_empty_index() -> None:
    c = compare(np.array(1.0, np.float32), np.array(2.0, np.float32))
    assert c.first_mismatch == {"index": [], "reference": 1.0, "candidate": 2.0}


def test_shape_mismatch_is_reported_not_compared() -> None:
    c = compare(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
    assert not c.ok
    assert c.error == "shape [3, 2] differs from the reference's [2, 3]"


def test_zero_size_outputs_agree() -> None:
    assert compare(np.zeros((2, 0), np.float32), np.zeros((2, 0), np.float32)).ok


# -- the smallest tolerances that pass ------------------------------------------------------------------------------
MINIMAL_CASES = [
    # (reference, candidate, atol, rtol): float32 outputs that fail at these tolerances
    pytest.param(f32(1.0, 2.0, 3.0), f32(1.0, 2.001, 2.9), 0.0, 0.0, id="no-tolerance"),
    pytest.param(f32(100.0, -0.5), f32(100.2, -0.5001), 1e-4, 1e-4, id="both"),
    pytest.param(f32(1e-3, 1e3), f32(1.1e-3, 1.0001e3), 1e-6, 1e-6, id="wide-range"),
    # (ae - atol) / |ref| lands an ulp short here: the old formula's rtol did not pass.
    pytest.param(f32(1.6115931272506714), f32(1.6116218566894531), 1e-08, 0.0, id="rounding-regression"),
]
_rng = np.random.default_rng(11)
for _i in range(6):
    _ref = (_rng.standard_normal(8) * 10.0 ** _rng.integers(-3, 3)).astype(np.float32)
    _cand = (_ref + _rng.standard_normal(8) * 10.0 ** _rng.integers(-6, -1)).astype(np.float32)
    MINIMAL_CASES.append(pytest.param(_ref, _cand, 1e-9, 1e-7, id=f"random-{_i}"))


@pytest.mark.parametrize(("reference", "candidate", "atol", "rtol"), MINIMAL_CASES)
def test_required_tolerances_are_minimal(reference: Any, candidate: Any, atol: float, rtol: float) -> None:
    c = compare(reference, candidate, atol=atol, rtol=rtol)
    assert not c.ok
    assert c.required_atol is not None and c.required_atol > 0
    assert compare(reference, candidate, atol=c.required_atol, rtol=rtol).ok
    assert not compare(reference, candidate, atol=c.required_atol * (1 - 1e-9), rtol=rtol).ok
    if c.required_rtol is not None:
        assert c.required_rtol > 0
        assert compare(reference, candidate, atol=atol, rtol=c.required_rtol).ok
        assert not compare(reference, candidate, atol=atol, rtol=c.required_rtol * (1 - 1e-9)).ok


def test_no_rtol_passes_where_the_reference_is_zero() -> None:
    c = compare(f32(0.0, 1.0), f32(1e-3, 1.0), atol=1e-4)
    assert c.required_rtol is None  # no relative tolerance covers an error at a zero reference
    assert c.required_atol is not None
    assert compare(f32(0.0, 1.0), f32(1e-3, 1.0), atol=c.required_atol).ok


# -- default tolerances -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        pytest.param("f64", (1e-12, 1e-9), id="f64"),
        pytest.param("f32", (1e-5, 1e-5), id="f32"),
        pytest.param("f16", (1e-3, 1e-3), id="f16"),
        pytest.param("bf16", (1e-2, 1e-2), id="bf16"),
        pytest.param("i32", (0.0, 0.0), id="i32"),
        pytest.param("u8", (0.0, 0.0), id="u8"),
        pytest.param("boolean", (0.0, 0.0), id="boolean"),
    ],
)
def test_default_tolerances_per_type(type_name: str, expected: tuple[float, float]) -> None:
    # The table in compare's module docstring, for one element reduced at the output's own precision.
    assert default_tolerances(type_name) == expected
    assert default_tolerances(type_name, type_name, 1) == expected


@pytest.mark.parametrize(
    ("type_name", "count", "rtol"),
    [
        pytest.param("f32", 100, 1e-5, id="f32-short"),  # 2^-23 * 10 < 1e-5
        pytest.param("f32", 10**6, 2.0**-23 * 1000, id="f32-million"),
        pytest.param("f16", 10**4, 2.0**-10 * 100, id="f16"),
        pytest.param("bf16", 256, 2.0**-7 * 16, id="bf16"),
        pytest.param("f64", 10**8, 1e-9, id="f64"),  # 2^-52 * 1e4 < 1e-9
        pytest.param("f32", 0, 1e-5, id="zero-count"),
    ],
)
def test_rtol_grows_like_sqrt_n(type_name: str, count: int, rtol: float) -> None:
    atol, got = default_tolerances(type_name, None, count)
    assert got == pytest.approx(rtol, rel=1e-12)
    assert atol == DEFAULT_TOLERANCES[type_name][0]


@pytest.mark.parametrize(
    ("output", "computed_in", "expected"),
    [
        pytest.param("f32", "bf16", "bf16", id="f32-in-bf16"),
        pytest.param("f32", "f16", "f16", id="f32-in-f16"),
        pytest.param("f16", "bf16", "bf16", id="f16-in-bf16"),
        pytest.param("f16", "f32", "f16", id="f16-in-f32-stays-f16"),
        pytest.param("f64", "f32", "f32", id="f64-in-f32"),
        pytest.param("f32", None, "f32", id="unknown"),
    ],
)
def test_effective_precision_sets_the_tolerances(output: str, computed_in: str | None, expected: str) -> None:
    assert default_tolerances(output, computed_in, 1) == DEFAULT_TOLERANCES[expected]
    assert default_tolerances("i32", computed_in, 1) == (0.0, 0.0)  # integers stay exact


class _Fixed:
    """A backend returning a fixed output and claiming a compute precision (a stand-in for a device)."""

    def __init__(self, output: npt.NDArray[Any], precision: str) -> None:
        self.name = f"fixed-{precision}"
        self.output = output
        self.precision = precision

    def infer(self, spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]]) -> BackendResult:
        return BackendResult(self.name, self.output, None, self.precision)


@pytest.mark.parametrize(("precision", "ok"), [("bf16", True), ("f32", False)])
def test_f32_output_computed_in_bf16_gets_bf16_tolerances(precision: str, ok: bool) -> None:
    spec = LayerSpec(
        "ReduceSum", False, ELEMENT_TYPES["f32"], PartialShape.static([2, 4]),
        ELEMENT_TYPES["i64"], PartialShape.static([1]), (1,),
    )  # fmt: skip
    data = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5]], np.float32)
    off_by_half_a_percent = np.array([10.0, 2.0], np.float32) * np.float32(1.005)
    report = run_spec(spec, [data], [NumPyBackend(), _Fixed(off_by_half_a_percent, precision)])
    (c,) = report.comparisons
    assert (c.atol, c.rtol) == default_tolerances("f32", precision, 4)
    assert c.ok is ok


# -- elements the specification leaves undefined ---------------------------------------------------------------
@pytest.mark.parametrize(
    "candidate",
    [
        pytest.param(f32(-INF, -INF), id="minus-inf"),
        pytest.param(f32(-F32_MAX, -F32_MAX), id="lowest"),
        pytest.param(f32(NAN, 0.0), id="nan-and-zero"),
        pytest.param(f32(INF, 12.5), id="anything"),
    ],
)
def test_undefined_elements_pass_whatever_they_hold(candidate: npt.NDArray[np.float32]) -> None:
    reference = f32(-F32_MAX, -F32_MAX)
    c = compare(reference, candidate, atol=1e-5, rtol=1e-5, undefined=np.ones(2, np.bool_))
    assert c.ok and c.mismatched == 0 and c.total == 2 and c.undefined == 2
    assert (c.max_abs_error, c.max_rel_error, c.required_atol, c.required_rtol) == (0.0, 0.0, 0.0, 0.0)
    assert c.first_mismatch is None
    assert c.nan == {"reference": 0, "candidate": 0} and c.inf == {"reference": 0, "candidate": 0}


def test_without_the_mask_the_same_outputs_mismatch() -> None:
    c = compare(f32(-F32_MAX, -F32_MAX), f32(-INF, -INF), atol=1e-5, rtol=1e-5)
    assert not c.ok and c.mismatched == 2 and c.undefined == 0
    assert c.inf == {"reference": 0, "candidate": 2}


def test_defined_elements_are_still_compared_and_located() -> None:
    reference = np.array([[1.0, -F32_MAX], [3.0, -F32_MAX]], np.float32)
    candidate = np.array([[1.0, -INF], [3.5, NAN]], np.float32)
    undefined = np.array([[False, True], [False, True]])
    c = compare(reference, candidate, atol=1e-3, undefined=undefined)
    assert not c.ok and c.mismatched == 1 and c.total == 4 and c.undefined == 2
    assert c.first_mismatch == {"index": [1, 0], "reference": 3.0, "candidate": 3.5}
    assert c.max_abs_error == 0.5
    assert c.required_atol is not None and math.isclose(c.required_atol, 0.5)
    assert c.nan == {"reference": 0, "candidate": 0} and c.inf == {"reference": 0, "candidate": 0}


def test_a_mask_broadcasts_to_the_output() -> None:
    reference = np.full((2, 3), -F32_MAX, np.float32)
    candidate = np.full((2, 3), -INF, np.float32)
    c = compare(reference, candidate, undefined=np.array(True))
    assert c.ok and c.undefined == 6 and c.total == 6


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64, np.uint64])
def test_undefined_integers_are_left_out_of_the_exact_comparison(dtype: Any) -> None:
    info = np.iinfo(dtype)
    reference = np.array([info.min, 7, info.max], dtype)
    candidate = np.array([info.max, 7, info.min], dtype)
    c = compare(reference, candidate, undefined=np.array([True, False, False]))
    assert c.exact and not c.ok and c.mismatched == 1 and c.undefined == 1
    assert c.first_mismatch is not None and c.first_mismatch["index"] == [2]
    assert c.max_abs_error == float(int(info.max) - int(info.min))
    c = compare(reference, candidate, undefined=np.array([True, False, True]))
    assert c.ok and c.mismatched == 0 and c.undefined == 2 and c.max_abs_error == 0.0


def test_undefined_appears_in_the_documents() -> None:
    from ovreduce.reports.run import Measured, comparison_fields

    c = compare(f32(1.0, -F32_MAX), f32(1.0, -INF), undefined=np.array([False, True]))
    assert c.to_json()["undefined"] == 1
    assert comparison_fields(c)["undefined"] == 1
    assert Measured(**comparison_fields(c)).to_json()["undefined"] == 1
    assert compare(f32(1.0), f32(1.0)).to_json()["undefined"] == 0  # present, 0, when nothing was left out
    assert json.loads(json.dumps(c.to_json()))["undefined"] == 1


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        pytest.param(np.array(2**64 - 1, np.uint64), np.array(2**31 - 1, np.uint64), id="u64-scalar"),
        pytest.param(np.array(-(2**63), np.int64), np.array(2**63 - 1, np.int64), id="i64-scalar"),
        pytest.param(np.array(2**64 - 1, np.uint64), np.array(-1, np.int64), id="mixed-scalar"),
    ],
)
def test_64_bit_scalars_whose_difference_exceeds_int64(reference: Any, candidate: Any) -> None:
    c = compare(reference, candidate)
    assert not c.ok and c.mismatched == 1 and c.first_mismatch is not None and c.first_mismatch["index"] == []
    assert c.max_abs_error == float(abs(int(candidate) - int(reference)))


@pytest.mark.filterwarnings("error")
def test_relative_errors_past_float_range_are_infinite_without_a_warning() -> None:
    """An error of 1e300 on a subnormal reference: NumPy's overflow warning reached the server's log."""
    comparison = compare(np.array([1e-310, 1e-323]), np.array([1e300, 0.0]), atol=0.0, rtol=1e-5)
    assert not comparison.ok and comparison.max_rel_error == math.inf and comparison.mismatched == 2


def test_a_nan_allowance_allows_nothing_and_leaves_no_nan_figures() -> None:
    """The rounding mass of NaN inputs is NaN: the minimum atol came out "NaN" and the rtol a subnormal."""
    comparison = compare(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol=0.0, rtol=1e-5, allowance=np.array(np.nan))
    assert not comparison.ok and comparison.mismatched == 1 and comparison.allowance_max == 0.0
    assert comparison.required_atol is not None and math.isclose(comparison.required_atol, 0.5 - 2e-5, rel_tol=1e-6)


def test_a_max_or_min_gets_no_tolerance_for_rounding_that_adds_up() -> None:
    """A ReduceMax returns one of its inputs: nothing rounds n times. Its rtol grew like √n all the same (2.47 for a
    bf16 max over 100,000 elements, under which a result twice too large agreed); a sum's still grows."""
    from ovreduce.compare import tolerances

    assert tolerances("f32", "bf16", 100_000, 1, op="ReduceMax") == (1e-2, 1e-2)
    assert tolerances("f32", "bf16", 100_000, 1, op="ReduceLogicalOr") == (1e-2, 1e-2)
    assert tolerances("f32", "bf16", 100_000, 1, op="ReduceSum")[1] > 2
    assert tolerances("f32", "bf16", 100_000, 1)[1] > 2  # an op not named: as before


# -- masked elements of a max or a min ----------------------------------------------------------------------------
def _masked(op: str, fill: float) -> npt.NDArray[Any]:
    data = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    data[np.arange(8), np.arange(8) % 4] = fill  # one per row, as masked_fill(mask, -inf) leaves them before a max
    return data


@pytest.mark.parametrize("etype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("op", "fill"), [("ReduceMax", -INF), ("ReduceMin", INF)])
def test_a_max_over_masked_scores_agrees_and_says_the_masked_elements_decided_nothing(
    op: str, fill: float, etype: str
) -> None:
    """Run on OpenVINO against the reference: the agreement stands (each output is a finite element a kernel that
    drops or misreads one shows), and a note says the masked elements were there; in bf16 too (a void-kind type of
    ml_dtypes, whose masked elements went unsaid), the usual type of masked attention maxes in LLM exports."""
    from ovreduce.run import make_backends

    spec = LayerSpec(
        op, False, ELEMENT_TYPES[etype], PartialShape.static([8, 4]), ELEMENT_TYPES["i64"], PartialShape.static([1]),
        (1,),
    )  # fmt: skip
    data = _masked(op, fill).astype(ELEMENT_TYPES[etype].numpy)
    report = run_spec(spec, [data], make_backends(["numpy", "openvino"]))
    assert report.ok and report.not_established is None, report.notes
    assert report.notes == [
        f"8 of its 32 input elements are {fill:g} (masked): each slice it reduces holds a finite element besides, so "
        "they decided no output, and it is judged on the finite elements"
    ]


def test_masked_elements_decide_a_sum_a_min_of_minus_inf_and_a_slice_of_nothing_else() -> None:
    from ovreduce.compare import cannot_show_error, masked_note

    data = _masked("ReduceMax", -INF)
    for op in ("ReduceSum", "ReduceMin"):
        assert cannot_show_error(data, [1], op) == "8 of its 32 input elements are not finite", op
        assert masked_note(data, [1], op) is None
    # (ONNX's ReduceLogSumExp adds exp(-inf) = 0 for a masked score: as a max, it decides no slice holding more)
    assert cannot_show_error(data, [1], "ReduceLogSumExp") is None
    assert masked_note(data, [1], "ReduceLogSumExp") == masked_note(data, [1], "ReduceMax") is not None
    assert cannot_show_error(data, [0], "ReduceMax") is None  # every column holds finite scores too
    data[2] = -INF
    assert cannot_show_error(data, [1], "ReduceMax") == (
        "11 of its 32 input elements are not finite, and 1 of the slices it reduces (axes [1] of input shape [8, 4]) "
        "hold nothing else: -inf is their output, whatever a kernel misses"
    )
    assert masked_note(data, [1], "ReduceMax") is None
    data = _masked("ReduceMax", -INF)
    data[0, 3] = NAN  # a NaN decides a max wherever it is
    assert cannot_show_error(data, [1], "ReduceMax") == "9 of its 32 input elements are not finite"
    data[0, 3] = INF  # and so does the other infinity
    assert cannot_show_error(data, [1], "ReduceMax") == "9 of its 32 input elements are not finite"
    assert masked_note(data, [1], "ReduceMax") is None
    constant = np.where(np.isinf(_masked("ReduceMax", -INF)), -INF, 3.0)
    assert cannot_show_error(constant, [1], "ReduceMax") == (
        "every one of its 24 input elements that are not -inf (masked, 8 more) is 3.0"
    )


def test_an_output_of_no_finite_element_cannot_show_an_error_in_bf16_too() -> None:
    """A bf16 sum whose every output overflows (both sides inf) was an established agreement, where f32's is not:
    the check that none of the outputs is finite asked for a NumPy float kind, and bf16 is void-kind."""
    import ml_dtypes

    from ovreduce.compare import cannot_show_error

    data = np.array([[3e38, 3e38], [2e38, 3e38]])
    for dtype in (np.float32, ml_dtypes.bfloat16):
        expected = np.array([np.inf, np.inf]).astype(dtype)
        assert cannot_show_error(data.astype(dtype), [1], "ReduceSum", expected) == (
            "none of the 2 output elements the reference computes is finite, whatever a kernel adds"
        ), dtype


@pytest.mark.parametrize(
    ("op", "etype", "value", "blind"),
    [
        ("ReduceSum", "f32", 1.0, False),  # 128 ones: a kernel that misses one gives 127
        ("ReduceMean", "u8", 100, False),  # OpenVINO's CPU gives 85 (the u8 row of the defect table)
        ("ReduceL2", "f32", 2.0, False),
        ("ReduceProd", "u16", 300, False),  # wraps to what no kernel that misses a factor reaches
        ("ReduceSum", "f32", 0.0, True),  # zeros: a kernel that misses elements gives 0 all the same
        ("ReduceProd", "f32", 1.0, True),  # ones: a product of any of them is 1
        ("ReduceMax", "f32", 3.0, True),  # the result is one of the elements, whichever a kernel reads
    ],
)
def test_a_constant_input_shows_the_error_of_a_kernel_that_misses_an_element_where_its_value_does(
    op: str, etype: str, value: float, blind: bool
) -> None:
    """A constant input was said to "cannot show an error" for every reduction, though a sum of 128 ones is 127 where
    a kernel misses one, and the defect table's first row is a constant input OpenVINO's CPU gets wrong (a u8 mean of
    [100, 100, 100] is 85). The rule holds for a max, a min and a logical reduction, and for the values that show no
    missed element (0 for a sum, 0 and 1 for a product): run establishes the agreement elsewhere."""
    from ovreduce.compare import cannot_show_error
    from ovreduce.run import make_backends

    size = 2 if etype == "u16" else 128
    data = np.full(size, value).astype(ELEMENT_TYPES[etype].numpy)
    said = cannot_show_error(data, [0], op)
    assert (said == f"every one of its {size} input elements is {data[0].item()!r}") if blind else said is None, said
    slices = np.tile(data, (3, 1))  # three slices of one repeated value each
    assert (cannot_show_error(slices, [1], op) is not None) == blind
    spec = LayerSpec(
        op, False, ELEMENT_TYPES[etype], PartialShape.static([size]), ELEMENT_TYPES["i64"], PartialShape.static([1]),
        (0,),
    )  # fmt: skip
    report = run_spec(spec, [data], make_backends(["numpy", "openvino"]))
    assert (report.not_established is not None) == (blind and report.ok), report.notes
    assert report.ok or (op, etype) == ("ReduceMean", "u8"), report.comparisons
