"""com.microsoft QLinearReduceMean through ``conform``: exact on the quantized integers.

Semantics (onnxruntime's contrib operator; see ovreduce.reference.quantized):
``y = saturate(round_half_to_even(mean((x - x_zp) * x_scale) / y_scale) + y_zp)``.
Every expected value below is worked out by hand next to its row; the scales are 0.25 (exact in binary),
each row reduces two elements, so ``mean(...) / y_scale`` is simply ``(x0 + x1 - 2*x_zp) / 2``.

Which side is right when conform reports a disagreement? OpenVINO's ONNX frontend converts the node to
``Convert(x) - Convert(x_zp) -> * x_scale -> ReduceMean -> / y_scale -> Convert(to u8/i8) -> Add(y_zp)``
(in the 8-bit type). Measured on OpenVINO 2026.4 (CPU, f32), that graph:

* truncates toward zero instead of rounding half to even: 1.5 -> 1 (ONNX 2), -1.5 -> -1 (ONNX -2);
* wraps modulo 256 in the f32 -> u8/i8 Convert instead of saturating: -255 -> 1 (u8) / 1 (i8), 255 -> -1 (i8);
* then adds the zero point in the 8-bit type, where the CPU's Add saturates.

So, with these rows, OpenVINO gives u8 (zp 0 -> 1): [1, 1, 2, 3, 255, 255] for ONNX's [1, 1, 3, 3, 255, 255];
u8 (255 -> 254): [254, 254, 255, 255, 255, 255] for [254, 254, 252, 252, 0, 0]; i8 (-128 -> -127):
[-127, -127, -126, -125, -128, -128] for [-127, -127, -125, -125, 127, 127]; i8 (127 -> 126):
[126, 126, 125, 124, 127, 127] for [126, 126, 124, 124, -128, -128]. A mean far below the output range
comes out near the *top* of it (u8 [0, 0]: 255 instead of 0) and vice versa.

The case from the manual run (u8, x_zp 250, x_scale 0.1, y_scale 0.05, y_zp 3; "onnx 0 vs openvino 49"):
a mean of x of 145 dequantizes to (145 - 250) * 0.1 = -10.5; / 0.05 = -210; + 3 = -207, which saturates to
0 -- the reference is right. OpenVINO's 49 (measured again below, rows [140, 150]) is trunc(-210) wrapped
modulo 256 (46) plus 3. The tests below ask OpenVINO for its output rather than assume these numbers.

The tests assert the reference's values against the hand numbers (independently of OpenVINO), and that
conform's verdict, first mismatch and dequantized difference match OpenVINO's output obtained directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.conform import conform_model
from ovreduce.reference.quantized import qlinear_reduce_mean

from . import onnx_models

U8, I8 = np.uint8, np.int8


@dataclass(frozen=True)
class QCase:
    dtype: type[np.uint8] | type[np.int8]
    x_zero_point: int
    y_zero_point: int
    rows: list[list[int]]
    expected: list[int]  # by hand, one per row
    x_scale: float = 0.25
    y_scale: float = 0.25

    @property
    def data(self) -> npt.NDArray[Any]:
        return np.array(self.rows, self.dtype)

    @property
    def want(self) -> npt.NDArray[Any]:
        return np.array(self.expected, self.dtype).reshape(-1, 1)

    def model(self) -> Any:
        return onnx_models.qlinear_reduce_mean(
            self.dtype, self.data.shape, [len(self.rows), 1], axes=[1], keepdims=1, data_scale=self.x_scale,
            data_zero_point=self.x_zero_point, reduced_scale=self.y_scale, reduced_zero_point=self.y_zero_point,
        )  # fmt: skip


CASES = {
    "u8-zp0-to-zp1": QCase(
        U8,
        x_zero_point=0,
        y_zero_point=1,
        rows=[[0, 0], [1, 0], [3, 0], [5, 0], [255, 254], [255, 255]],
        expected=[
            1,  # 0 + 1
            1,  # 0.5 -> 0 (half to even) + 1; rounding after adding the zero point would give 2
            3,  # 1.5 -> 2, + 1
            3,  # 2.5 -> 2, + 1
            255,  # 254.5 -> 254, + 1
            255,  # 255 + 1 = 256 saturates
        ],
    ),
    "u8-zp255-to-zp254": QCase(
        U8,
        x_zero_point=255,
        y_zero_point=254,
        rows=[[255, 255], [254, 255], [252, 255], [250, 255], [0, 0], [0, 1]],
        expected=[
            254,  # 0 + 254
            254,  # -0.5 -> -0, + 254
            252,  # -1.5 -> -2, + 254
            252,  # -2.5 -> -2, + 254
            0,  # -255 + 254 = -1 saturates
            0,  # -254.5 -> -254, + 254 = 0
        ],
    ),
    "i8-zp-128-to-zp-127": QCase(
        I8,
        x_zero_point=-128,
        y_zero_point=-127,
        rows=[[-128, -128], [-127, -128], [-125, -128], [-123, -128], [127, 127], [127, 126]],
        expected=[
            -127,  # 0 - 127
            -127,  # 0.5 -> 0, - 127
            -125,  # 1.5 -> 2, - 127
            -125,  # 2.5 -> 2, - 127
            127,  # 255 - 127 = 128 saturates
            127,  # 254.5 -> 254, - 127 = 127
        ],
    ),
    "i8-zp127-to-zp126": QCase(
        I8,
        x_zero_point=127,
        y_zero_point=126,
        rows=[[127, 127], [126, 127], [124, 127], [122, 127], [-128, -128], [-128, -127]],
        expected=[
            126,  # 0 + 126
            126,  # -0.5 -> -0, + 126
            124,  # -1.5 -> -2, + 126
            124,  # -2.5 -> -2, + 126
            -128,  # -255 + 126 = -129 saturates
            -128,  # -254.5 -> -254, + 126 = -128
        ],
    ),
    "u8-zp250-scale0.1-manual-run": QCase(
        U8,
        x_zero_point=250,
        y_zero_point=3,
        rows=[[140, 150], [250, 250], [255, 255]],
        expected=[
            0,  # ((140-250)*0.1 + (150-250)*0.1)/2 = -10.5; / 0.05 = -210; + 3 = -207 saturates
            3,  # 0 / 0.05 = 0; + 3
            13,  # (255-250)*0.1 = 0.5 for both; / 0.05 = 10 (in f32 too); + 3
        ],
        x_scale=0.1,
        y_scale=0.05,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_reference_matches_the_hand_computed_values(name: str) -> None:
    case = CASES[name]
    got = qlinear_reduce_mean(
        case.data, np.float32(case.x_scale), case.dtype(case.x_zero_point), np.float32(case.y_scale),
        case.dtype(case.y_zero_point), [1], 1,
    )  # fmt: skip
    assert got.dtype == case.dtype
    np.testing.assert_array_equal(got, case.want)


@pytest.mark.parametrize("name", CASES)
def test_conform_tells_the_truth_on_the_quantized_integers(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    path = onnx_models.save(case.model(), tmp_path / f"{name}.onnx")
    report = conform_model(str(path), inputs={"x": case.data})
    doc = report.to_json()
    [node] = doc["nodes"]
    assert (node["op_type"], node["domain"], node["version"], node["observable"]) == (
        "QLinearReduceMean", "com.microsoft", 1, True,
    )  # fmt: skip
    assert node["exact"] is True
    assert (node["atol"], node["rtol"]) == (0.0, 0.0)

    openvino = onnx_models.openvino_output(path, {"x": case.data})
    assert openvino.shape == case.want.shape
    agree = bool(np.array_equal(openvino, case.want))
    assert node["ok"] is agree
    assert doc["ok"] is agree
    assert node["status"] == ("ok" if agree else "disagree")
    differs = openvino.astype(np.int32) != case.want.astype(np.int32)
    assert node["mismatched"] == int(differs.sum())
    # the dequantized difference: |got - want| * y_scale, at the worst element
    worst = float(np.max(np.abs(openvino.astype(np.int32) - case.want.astype(np.int32)))) * case.y_scale
    assert node["dequantized_max_abs_diff"] == pytest.approx(worst, rel=1e-6)
    if agree:
        assert node["first_mismatch"] is None
    else:
        index = [int(i) for i in np.argwhere(differs)[0]]
        assert node["first_mismatch"] == {
            "index": index,
            "reference": int(case.want[tuple(index)]),
            "candidate": int(openvino[tuple(index)]),
        }


def test_an_off_by_one_is_a_disagreement(tmp_path: Path) -> None:
    """1.5 rounds to 2 in ONNX; OpenVINO's truncation gives 1. One quantization step is not a tolerance."""
    case = QCase(U8, x_zero_point=0, y_zero_point=0, rows=[[3, 0]], expected=[2])
    path = onnx_models.save(case.model(), tmp_path / "off_by_one.onnx")
    doc = conform_model(str(path), inputs={"x": case.data}).to_json()
    [node] = doc["nodes"]
    openvino = onnx_models.openvino_output(path, {"x": case.data})
    assert node["first_mismatch"] is None or node["first_mismatch"]["reference"] == 2
    assert node["ok"] is bool(openvino[0, 0] == 2)
    if not node["ok"]:
        assert node["max_abs_error"] == abs(int(openvino[0, 0]) - 2)
        assert node["dequantized_max_abs_diff"] == pytest.approx(0.25 * abs(int(openvino[0, 0]) - 2))
