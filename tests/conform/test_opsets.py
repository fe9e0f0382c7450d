"""Hand-built ReduceMean (opsets 1, 11, 13, 18) and Mean (6, 8, 13) models through ``conform``.

Each case states its expected output as hand-computed numbers. The test checks (1) our ONNX reference
gives those numbers, independently of OpenVINO, and (2) conform's verdict is the truth: it agrees exactly
when OpenVINO's own output (the converted model run directly, not through ovreduce) equals them.

The data is ``x[i, j, k] = 12*i + 4*j + k`` over shape (2, 3, 4), so every mean is easy to work out:
over k: ``12i + 4j + 1.5``; over j: ``12i + 4 + k``; over i: ``6 + 4j + k``; over everything: 11.5.

What OpenVINO 2026.4 does (measured): it agrees on every case below -- attribute and input axes,
keepdims absent (1), noop_with_empty_axes 0/1 with empty or missing axes, negative axes, and Mean with
and without broadcasting. The frontend removes an ``axes`` graph input declared with shape [0] from the
converted model; conform then uses the given value (and says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.conform import conform_model
from ovreduce.reference import onnx as onnx_ref

from . import onnx_models

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
OVER_K = np.array([[1.5, 5.5, 9.5], [13.5, 17.5, 21.5]], np.float32)  # 12i + 4j + 1.5
OVER_J = np.array([[4, 5, 6, 7], [16, 17, 18, 19]], np.float32)  # 12i + 4 + k
OVER_I_AND_K = np.array([7.5, 11.5, 15.5], np.float32)  # 6 + 4j + 1.5
OVER_I_AND_J = np.array([10, 11, 12, 13], np.float32)  # 6 + 4 + k
ALL = np.array(11.5, np.float32)


@dataclass(frozen=True)
class Case:
    opset: int
    expected: npt.NDArray[Any]
    axes_attr: list[int] | None = None
    axes_input: list[int] | None = None
    axes_as_graph_input: bool = False
    keepdims: int | None = None
    noop: int | None = None
    notes: list[str] = field(default_factory=list)

    def model(self) -> Any:
        return onnx_models.reduce_mean(
            self.opset, X.shape, axes_attr=self.axes_attr, axes_input=self.axes_input,
            axes_as_graph_input=self.axes_as_graph_input, keepdims=self.keepdims, noop_with_empty_axes=self.noop,
            out_shape=self.expected.shape if self.axes_as_graph_input else None,
        )  # fmt: skip

    def feeds(self) -> dict[str, npt.NDArray[Any]]:
        feeds = {"x": X}
        if self.axes_as_graph_input:
            feeds["axes"] = np.array(self.axes_input, np.int64).reshape(-1)
        return feeds

    def reference(self) -> npt.NDArray[Any]:
        axes = self.axes_input if self.opset >= 18 else self.axes_attr
        keepdims = 1 if self.keepdims is None else self.keepdims
        noop = 0 if self.noop is None else self.noop
        return onnx_ref.reduce_mean(X, axes, keepdims, noop, opset=self.opset)


REDUCE_MEAN = {
    # ReduceMean-1: axes attribute, absent = all axes; keepdims absent = 1
    "rm1-no-axes-keepdims-absent": Case(1, ALL.reshape(1, 1, 1)),
    "rm1-negative-axis": Case(1, OVER_K[..., None], axes_attr=[-1]),
    "rm1-two-axes-keepdims0": Case(1, OVER_I_AND_K, axes_attr=[0, 2], keepdims=0),
    # ReduceMean-11: negative axes in the schema's range
    "rm11-negative-axes": Case(11, OVER_I_AND_J.reshape(1, 1, 4), axes_attr=[-2, 0]),
    # ReduceMean-13 (bfloat16 added; still an attribute)
    "rm13-keepdims0": Case(13, OVER_J, axes_attr=[1], keepdims=0),
    "rm13-no-axes": Case(13, ALL.reshape(1, 1, 1)),
    # ReduceMean-18: axes is an optional input; noop_with_empty_axes decides what "no axes" means
    "rm18-axes-input": Case(18, OVER_J[:, None, :], axes_input=[1]),
    "rm18-axes-input-keepdims0": Case(18, OVER_I_AND_K, axes_input=[-1, 0], keepdims=0),
    "rm18-axes-missing": Case(18, ALL.reshape(1, 1, 1)),
    "rm18-axes-missing-noop1": Case(18, X, noop=1),
    "rm18-empty-axes-noop0": Case(18, ALL.reshape(1, 1, 1), axes_input=[], noop=0),
    "rm18-empty-axes-noop1": Case(18, X, axes_input=[], noop=1),
    "rm18-empty-axes-noop1-keepdims0": Case(18, X, axes_input=[], noop=1, keepdims=0),
    "rm18-axes-graph-input": Case(18, OVER_J[:, None, :], axes_input=[1], axes_as_graph_input=True),
    "rm18-empty-axes-graph-input-noop0": Case(18, ALL.reshape(1, 1, 1), axes_input=[], axes_as_graph_input=True),
    "rm18-empty-axes-graph-input-noop1": Case(18, X, axes_input=[], axes_as_graph_input=True, noop=1),
}


def _agrees(got: npt.NDArray[Any], expected: npt.NDArray[Any]) -> bool:
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=1e-5, atol=1e-5))


@pytest.mark.parametrize("name", REDUCE_MEAN)
def test_reference_matches_the_hand_computed_mean(name: str) -> None:
    case = REDUCE_MEAN[name]
    got = case.reference()
    assert got.dtype == np.float32
    assert got.shape == case.expected.shape
    np.testing.assert_array_equal(got, case.expected)


@pytest.mark.parametrize("name", REDUCE_MEAN)
def test_conform_reports_what_openvino_does(name: str, tmp_path: Path) -> None:
    case = REDUCE_MEAN[name]
    path = onnx_models.save(case.model(), tmp_path / f"{name}.onnx")
    report = conform_model(str(path), inputs=case.feeds())
    doc = report.to_json()
    [node] = doc["nodes"]
    assert node["op_type"] == "ReduceMean"
    assert node["version"] == case.opset
    assert node["observable"], node

    truth = _agrees(onnx_models.openvino_output(path, case.feeds()), case.expected)
    assert node["ok"] is truth
    assert doc["ok"] is truth
    assert node["status"] == ("ok" if truth else "disagree")
    if not truth:
        assert node["first_mismatch"] is not None or node["error"]


MEAN_A = np.array([[3, 6, 9], [12, 15, 18]], np.float32)
MEAN_B = np.array([30, 60, 90], np.float32)
MEAN_C = np.array([[300], [600]], np.float32)
# (3+30+300)/3 = 111, (6+60+300)/3 = 122, (9+90+300)/3 = 133; (12+30+600)/3 = 214, 225, 236
BROADCAST_MEAN = np.array([[111, 122, 133], [214, 225, 236]], np.float32)

MEAN = {
    # Mean-6: all shapes equal; (a + 2a + 3a) / 3 = 2a
    "mean6-equal-shapes": (6, [MEAN_A, 2 * MEAN_A, 3 * MEAN_A], 2 * MEAN_A),
    "mean6-one-input": (6, [MEAN_A], MEAN_A),
    # Mean-8: multidirectional broadcasting
    "mean8-broadcast": (8, [MEAN_A, MEAN_B, MEAN_C], BROADCAST_MEAN),
    # Mean-13: broadcasting with the *first* input the smallest (onnx.reference itself fails here)
    "mean13-broadcast-small-first": (13, [MEAN_B, MEAN_A, MEAN_C], BROADCAST_MEAN),
}


@pytest.mark.parametrize("name", MEAN)
def test_mean(name: str, tmp_path: Path) -> None:
    opset, arrays, expected = MEAN[name]
    np.testing.assert_array_equal(onnx_ref.mean(*arrays, opset=opset), expected)

    path = onnx_models.save(onnx_models.mean(opset, [a.shape for a in arrays]), tmp_path / f"{name}.onnx")
    feeds = {f"a{i}": a for i, a in enumerate(arrays)}
    doc = conform_model(str(path), inputs=feeds).to_json()
    [node] = doc["nodes"]
    assert (node["op_type"], node["version"], node["observable"]) == ("Mean", opset, True)
    truth = _agrees(onnx_models.openvino_output(path, feeds), expected)
    assert node["ok"] is truth
    assert doc["ok"] is truth


def test_other_reductions_are_checked_too(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.several_reductions(), tmp_path / "several.onnx")
    x = np.arange(15, dtype=np.float32).reshape(3, 5) - 7
    doc = conform_model(str(path), inputs={"x": x}).to_json()
    assert [(n["node"], n["op_type"], n["version"], n["status"]) for n in doc["nodes"]] == [
        ("sum", "ReduceSum", 13, "ok"),
        ("max", "ReduceMax", 18, "ok"),
        ("l2", "ReduceL2", 18, "ok"),
        ("mean", "ReduceMean", 18, "ok"),
    ]
    assert doc["ok"] is True


def test_generated_inputs_are_seeded(tmp_path: Path) -> None:
    path = onnx_models.save(REDUCE_MEAN["rm13-keepdims0"].model(), tmp_path / "m.onnx")
    first = conform_model(str(path), seed=3).to_json()
    again = conform_model(str(path), seed=3).to_json()
    assert first["inputs"] == [
        {"name": "x", "shape": [2, 3, 4], "element_type": "f32", "origin": "seed 3", "defaulted_dims": []}
    ]
    assert first["nodes"][0]["max_abs_error"] == again["nodes"][0]["max_abs_error"]
    assert first["ok"] is True
