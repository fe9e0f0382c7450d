"""ovreduce.reference.quantized: QLinearReduceMean on hand-computed cases, and its error paths.

Every expected value below is worked out by hand in the comment next to it:
deq = (x - zp) * scale; m = mean(deq); q = round_half_even(m / reduced_scale) + reduced_zp, saturated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.errors import InputError
from ovreduce.reference.quantized import dequantize, qlinear_reduce_mean

U8 = np.uint8
I8 = np.int8
F32 = np.float32

CASES = [
    pytest.param(
        # rows: (1+4)/2 = 2.5 -> 2, (3+4)/2 = 3.5 -> 4, (0+5)/2 = 2.5 -> 2  (ties to even)
        np.array([[1, 4], [3, 4], [0, 5]], U8),
        F32(1),
        None,
        F32(1),
        None,
        [1],
        0,
        np.array([2, 4, 2], U8),
        id="u8-half-to-even",
    ),
    pytest.param(
        # as above, then + reduced_zp 1 after rounding: 2+1, 4+1, 2+1 (rounding after would give 4, 4, 4)
        np.array([[1, 4], [3, 4], [0, 5]], U8),
        F32(1),
        None,
        F32(1),
        U8(1),
        [1],
        0,
        np.array([3, 5, 3], U8),
        id="u8-rounds-before-adding-zero-point",
    ),
    pytest.param(
        # zp 255: deq = [[0, -2], [-27.5, 0]]; means -1, -13.75; / 0.25 -> -4, -55; + 200 -> 196, 145
        np.array([[255, 251], [200, 255]], U8),
        F32(0.5),
        U8(255),
        F32(0.25),
        U8(200),
        [1],
        1,
        np.array([[196], [145]], U8),
        id="u8-zero-point-255-keepdims",
    ),
    pytest.param(
        # zp 0: mean (250+255)/2 = 252.5; / 0.5 -> 505 -> saturates to 255
        np.array([[250, 255]], U8),
        F32(1),
        U8(0),
        F32(0.5),
        U8(0),
        [1],
        0,
        np.array([255], U8),
        id="u8-saturates-high",
    ),
    pytest.param(
        # zp 255: deq -255, -253; mean -254; + 0 -> -254 -> saturates to 0
        np.array([[0, 2]], U8),
        F32(1),
        U8(255),
        F32(1),
        None,
        [-1],
        0,
        np.array([0], U8),
        id="u8-saturates-low",
    ),
    pytest.param(
        # zp -128: deq 0, 255; mean 127.5 -> 128 (even); + (-128) -> 0
        np.array([[-128, 127]], I8),
        F32(1),
        I8(-128),
        F32(1),
        I8(-128),
        [1],
        0,
        np.array([0], I8),
        id="i8-zero-point-minus-128",
    ),
    pytest.param(
        # zp 127, scale 0.5: deq 0, -127.5, -63.5, -63; sum -254, mean -63.5 -> -64 (even); + 127 -> 63
        np.array([[127, -128, 0, 1]], I8),
        F32(0.5),
        I8(127),
        F32(1),
        I8(127),
        [1],
        0,
        np.array([63], I8),
        id="i8-zero-point-127-negative-half",
    ),
    pytest.param(
        # zp 127: deq -255, -255; mean -255; + (-128) -> -383 -> saturates to -128
        np.array([[-128, -128]], I8),
        F32(1),
        I8(127),
        F32(1),
        I8(-128),
        [0, 1],
        0,
        np.array(-128, I8),
        id="i8-saturates-low",
    ),
    pytest.param(
        # zp -128: deq 255, 255; mean 255; / 0.5 -> 510 -> saturates to 127
        np.array([[127, 127]], I8),
        F32(1),
        I8(-128),
        F32(0.5),
        None,
        [1],
        1,
        np.array([[127]], I8),
        id="i8-saturates-high",
    ),
    pytest.param(
        # axis -1: (-1-2)/2 = -1.5 -> -2, (-3-4)/2 = -3.5 -> -4
        np.array([[-1, -2], [-3, -4]], I8),
        F32(1),
        None,
        F32(1),
        None,
        [-1],
        1,
        np.array([[-2], [-4]], I8),
        id="i8-negative-axis-halves",
    ),
    pytest.param(
        # x[i,j,k] = 4i + 2j + k; mean over i and k = 2.5 + 2j -> j=0: 2.5 -> 2, j=1: 4.5 -> 4
        np.arange(8, dtype=U8).reshape(2, 2, 2),
        F32(1),
        None,
        F32(1),
        None,
        [-1, -3],
        0,
        np.array([2, 4], U8),
        id="u8-two-negative-axes",
    ),
    pytest.param(
        # empty axes = all axes: (1+2+3+5)/4 = 2.75 -> 3
        np.array([[1, 2], [3, 5]], U8),
        F32(1),
        None,
        F32(1),
        None,
        [],
        1,
        np.array([[3]], U8),
        id="u8-empty-axes-reduce-all-keepdims",
    ),
    pytest.param(
        np.array([[1, 2], [3, 5]], U8),
        F32(1),
        None,
        F32(1),
        None,
        [],
        0,
        np.array(3, U8),
        id="u8-empty-axes-reduce-all",
    ),
    pytest.param(
        # 1-element scale tensors: deq 4*0.5, 6*0.5 = 2, 3; mean 2.5; / 0.25 -> 10
        np.array([[4, 6]], U8),
        np.array([0.5], F32),
        None,
        np.array([[0.25]], F32),
        None,
        [1],
        0,
        np.array([10], U8),
        id="one-element-scale-tensors",
    ),
    pytest.param(
        # zero points as 1-element arrays: deq (10-2)*1, (20-2)*1 = 8, 18; mean 13; + 7 -> 20
        np.array([[10, 20]], U8),
        1.0,
        np.array([2], U8),
        1.0,
        np.array([7], U8),
        [1],
        0,
        np.array([20], U8),
        id="python-float-scales-array-zero-points",
    ),
]


@pytest.mark.parametrize(("data", "scale", "zp", "out_scale", "out_zp", "axes", "keepdims", "expected"), CASES)
def test_qlinear_reduce_mean(
    data: npt.NDArray[Any],
    scale: Any,
    zp: Any,
    out_scale: Any,
    out_zp: Any,
    axes: list[int],
    keepdims: int,
    expected: npt.NDArray[Any],
) -> None:
    got = qlinear_reduce_mean(data, scale, zp, out_scale, out_zp, axes, keepdims)
    assert got.dtype == data.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_zero_size_output_is_empty() -> None:
    got = qlinear_reduce_mean(np.zeros((0, 3), U8), F32(1), None, F32(1), None, [1], 1)
    assert got.shape == (0, 1)
    assert got.dtype == U8


@pytest.mark.parametrize(
    ("q", "scale", "zp", "expected"),
    [
        pytest.param(np.array([0, 128, 255], U8), F32(0.5), U8(128), [-64.0, 0.0, 63.5], id="u8"),
        pytest.param(np.array([-128, 127], I8), F32(2), I8(-128), [0.0, 510.0], id="i8"),
        pytest.param(np.array([[3]], U8), np.array([0.25], F32), None, [[0.75]], id="default-zp"),
    ],
)
def test_dequantize(q: npt.NDArray[Any], scale: Any, zp: Any, expected: list[Any]) -> None:
    got = dequantize(q, scale, zp)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(expected, np.float32))


# --- errors ------------------------------------------------------------------------------------------

GOOD: dict[str, Any] = {
    "data": np.array([[1, 2], [3, 4]], U8),
    "data_scale": F32(1),
    "data_zero_point": U8(0),
    "reduced_scale": F32(1),
    "reduced_zero_point": None,
    "axes": [1],
    "keepdims": 1,
}


@pytest.mark.parametrize(
    ("change", "match"),
    [
        pytest.param({"axes": None}, r"requires the axes attribute .* got None", id="axes-missing"),
        pytest.param({"keepdims": None}, r"requires the keepdims attribute .* got None", id="keepdims-missing"),
        pytest.param({"keepdims": 2}, r"keepdims must be 0 or 1; got 2", id="keepdims-2"),
        pytest.param({"keepdims": True}, r"keepdims must be 0 or 1; got True", id="keepdims-bool"),
        pytest.param({"data": np.array([1.0], F32)}, r"data must be uint8 or int8 .* got float32", id="data-f32"),
        pytest.param({"data": np.array([1], np.int32)}, r"data must be uint8 or int8 .* got int32", id="i32"),
        pytest.param({"data": [1, 2]}, r"data must be a NumPy array; got list", id="data-list"),
        pytest.param(
            {"data_scale": np.array(1.0)}, r"data_scale must be float32 \(tensor\(float\)\); got float64", id="f64"
        ),
        pytest.param(
            {"reduced_scale": np.array([1, 2], F32)},
            r"reduced_scale must be a scalar or a 1-element tensor; got shape \[2\]",
            id="scale-2-elements",
        ),
        pytest.param({"data_scale": F32(0)}, r"data_scale must be finite and > 0; got 0\.0", id="scale-0"),
        pytest.param({"reduced_scale": -1.0}, r"reduced_scale must be finite and > 0; got -1\.0", id="neg"),
        pytest.param({"data_scale": F32(np.nan)}, r"data_scale must be finite and > 0; got nan", id="nan"),
        pytest.param({"data_scale": True}, r"data_scale must be a float32 scalar; got True", id="bool"),
        pytest.param({"data_scale": "1"}, r"data_scale must be a float32 scalar or 1-element array; got str", id="str"),
        pytest.param(
            {"data_zero_point": 3},
            r"data_zero_point must be a NumPy uint8 scalar or 1-element array .* got int",
            id="zp-python-int",
        ),
        pytest.param(
            {"reduced_zero_point": I8(0)},
            r"reduced_zero_point must have the data's dtype uint8; got int8",
            id="zp-dtype",
        ),
        pytest.param(
            {"data_zero_point": np.array([0, 0], U8)},
            r"data_zero_point must be a scalar or a 1-element tensor; got shape \[2\]",
            id="zp-2-elements",
        ),
        pytest.param({"axes": [2]}, r"axis 2 is out of range for a rank-2 input; expected \[-2, 1\]", id="axis-2"),
        pytest.param({"axes": [-3]}, r"axis -3 is out of range for a rank-2 input", id="axis-minus-3"),
        pytest.param({"axes": [1, -1]}, r"axes \[1, -1\] name axis 1 more than once", id="duplicate"),
        pytest.param({"axes": [0.0]}, r"axes must be integers; got 0\.0", id="axis-float"),
        pytest.param({"axes": "0"}, r"axes must be a sequence of ints; got '0'", id="axes-str"),
        pytest.param(
            {"data": np.zeros((2, 0), U8)},
            r"the mean over zero elements has no quantized value \(input shape \[2, 0\]",
            id="zero-elements",
        ),
    ],
)
def test_qlinear_reduce_mean_errors(change: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        qlinear_reduce_mean(**(GOOD | change))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        pytest.param((np.array([1.0], F32), F32(1)), r"dequantize input must be uint8 or int8", id="float"),
        pytest.param((np.array([1], U8), F32(0)), r"dequantize scale must be finite and > 0", id="scale"),
        pytest.param((np.array([1], U8), F32(1), I8(0)), r"zero_point must have the data's dtype uint8", id="zp"),
    ],
)
def test_dequantize_errors(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(InputError, match=match):
        dequantize(*args)
