"""ovreduce.reference.onednn: oneDNN Graph ReduceMean's rules and its f32 accumulation."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.errors import InputError
from ovreduce.reference.onednn import reduce_mean

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("source", ["axes_attr", "axes_input"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_empty_axes_is_the_identity(source: str, dtype: Any) -> None:
    src = np.arange(6, dtype=np.float32).reshape(2, 3).astype(dtype)
    got = reduce_mean(src, **{source: []}, keep_dims=True)
    assert got.dtype == src.dtype
    np.testing.assert_array_equal(got, src)
    assert got is not src


def test_channel_axis_example_of_the_specification() -> None:
    # dst[0, ...] = sum_i src[i, ...] / channelNum, with axis 0 and keep_dims = true.
    src = np.random.default_rng(0).uniform(-1, 1, (5, 3, 4)).astype(np.float32)
    expected = src.astype(np.float64).sum(axis=0, keepdims=True) / 5
    got = reduce_mean(src, axes_attr=[0], keep_dims=True)
    assert got.shape == (1, 3, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)  # f32 sum of 5 values in [-1, 1]


@pytest.mark.parametrize(
    ("axes", "keep_dims", "shape"),
    [
        pytest.param([1], False, (2, 4), id="default-drops"),
        pytest.param([1], True, (2, 1, 4), id="keep"),
        pytest.param([-1, 0], False, (3,), id="negative"),
        pytest.param([0, 1, 2], False, (), id="all"),
    ],
)
def test_output_shapes(axes: list[int], keep_dims: bool, shape: tuple[int, ...]) -> None:
    src = np.ones((2, 3, 4), np.float32)
    assert reduce_mean(src, axes_input=np.array(axes, np.int32), keep_dims=keep_dims).shape == shape
    assert reduce_mean(src, axes_attr=axes, keep_dims=keep_dims).shape == shape


def test_keep_dims_defaults_to_false() -> None:
    assert reduce_mean(np.ones((2, 3), np.float32), axes_attr=[1]).shape == (2,)


@pytest.mark.parametrize(
    ("src", "axes", "expected"),
    [
        # 70000 ones: the f32 sum 70000 is exact, 70000/70000 = 1; an f16 sum would overflow to inf.
        pytest.param(np.ones(70000, np.float16), [0], 1.0, id="f16-70000-ones"),
        # f32: 2048+1+1+1+1 = 2052, /5 = 410.4 -> f16 410.5 (an f16 sum stays 2048 -> 409.6 -> 409.5).
        pytest.param(np.array([2048, 1, 1, 1, 1], np.float16), [0], 410.5, id="f16-round-once"),
        # 1000 bf16 ones: f32 mean 1.0 (a bf16 running sum stalls at 256 -> 0.256).
        pytest.param(np.ones(1000, BF16), [0], 1.0, id="bf16-1000-ones"),
        # f32: (256+1+1+1)/4 = 64.75, a tie between bf16 64.5 and 65.0 -> 65.0 (even mantissa);
        # a bf16 sum would stay at 256 (256+1 ties back to 256) -> 64.0.
        pytest.param(np.array([256, 1, 1, 1], BF16), [-1], 65.0, id="bf16-round-once"),
    ],
)
def test_accumulates_in_f32_and_rounds_once(src: npt.NDArray[Any], axes: list[int], expected: float) -> None:
    got = reduce_mean(src, axes_attr=axes)
    assert got.dtype == src.dtype
    assert got.shape == ()
    assert float(got) == expected


def test_rank_zero_src_with_empty_axes() -> None:
    src = np.array(2.5, np.float32)
    assert reduce_mean(src, axes_input=[]) == np.float32(2.5)


def test_mean_of_zero_elements_is_nan() -> None:
    got = reduce_mean(np.zeros((2, 0), np.float16), axes_attr=[1], keep_dims=True)
    assert got.shape == (2, 1)
    assert got.dtype == np.float16
    assert np.isnan(got).all()


def test_empty_output_without_zero_element_mean() -> None:
    assert reduce_mean(np.zeros((0, 3), np.float32), axes_attr=[1]).shape == (0,)


# --- errors ------------------------------------------------------------------------------------------


def test_both_axes_sources_is_an_error() -> None:
    with pytest.raises(InputError, match=r"exactly one of the axes attribute .* both were given"):
        reduce_mean(np.ones(2, np.float32), axes_attr=[0], axes_input=[0])


def test_neither_axes_source_is_an_error() -> None:
    with pytest.raises(InputError, match=r"exactly one of the axes attribute .* neither was given"):
        reduce_mean(np.ones(2, np.float32))


@pytest.mark.parametrize(
    ("src", "kwargs", "match"),
    [
        pytest.param(np.ones(2, np.int32), {"axes_attr": [0]}, r"f32, bf16 and f16 only; got int32", id="int"),
        pytest.param(np.ones(2, np.float64), {"axes_attr": [0]}, r"f32, bf16 and f16 only; got float64", id="f64"),
        pytest.param([1.0, 2.0], {"axes_attr": [0]}, r"src must be a NumPy array; got list", id="list"),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_attr": [2]},
            r"axis 2 in the axes attribute is out of range for a rank-2 src; expected \[-2, 1\]",
            id="axis-out-of-range",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_input": np.array([-3])},
            r"axis -3 in the axes input is out of range",
            id="input-axis-out-of-range",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_attr": [0, -2]},
            r"the axes attribute \[0, -2\] names axis 0 more than once; axes must be unique",
            id="duplicate",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_input": np.array([[0]])},
            r"the axes input must be a 1-D integer tensor; got 2-D int64",
            id="input-2d",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_input": np.array([0.0])},
            r"the axes input must be a 1-D integer tensor; got 1-D float64",
            id="input-float",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_attr": [1.0]},
            r"the axes attribute must hold integers; got 1\.0",
            id="attr-float",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_attr": 1},
            r"the axes attribute must be a sequence of ints; got 1",
            id="attr-int",
        ),
        pytest.param(
            np.ones((2, 3), np.float32),
            {"axes_attr": [1], "keep_dims": 1},
            r"keep_dims must be a bool \(true/false\); got 1",
            id="keep-dims-int",
        ),
        pytest.param(
            np.array(1.0, np.float32),
            {"axes_attr": [0]},
            r"axis 0 in the axes attribute is out of range for a rank-0 src; expected no axes",
            id="rank-0",
        ),
    ],
)
def test_errors(src: Any, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        reduce_mean(src, **kwargs)
