"""ONNX's own backend node tests for ReduceMean and Mean through ``conform``, and ReduceMean through ``run``.

Each case (``onnx.backend.test.case.node``) carries the model and the input/expected-output arrays of
ONNX's data sets. The case's inputs go to ``conform`` (Python API ``inputs=``); the converted IR is kept
with ``save_ir`` and its ReduceMean layer executed with ``run_layer`` on the same inputs. Both our
reference and OpenVINO's output must equal ONNX's expected output within a tight tolerance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovreduce.conform import conform_model
from ovreduce.infer import ShapeEngine
from ovreduce.ir.parser import load_ir
from ovreduce.ops.registry import reductions
from ovreduce.reference import onnx as onnx_ref
from ovreduce.run import run_layer

from . import onnx_models

REDUCE_MEAN_CASES = onnx_models.backend_node_cases("ReduceMean")
MEAN_CASES = onnx_models.backend_node_cases("Mean")
TIGHT = {"rtol": 1e-6, "atol": 1e-6}


def _attrs(case: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in case.model.graph.node[0].attribute}


def _opset(case: Any) -> int:
    return next(imp.version for imp in case.model.opset_import if imp.domain in ("", "ai.onnx"))


def test_onnx_ships_the_cases() -> None:
    names = {c.name for c in REDUCE_MEAN_CASES}
    assert len(REDUCE_MEAN_CASES) >= 8
    assert {"test_reduce_mean_default_axes_keepdims_example", "test_reduce_mean_do_not_keepdims_random"} <= names
    assert {c.name for c in MEAN_CASES} >= {"test_mean_example", "test_mean_one_input", "test_mean_two_inputs"}


@pytest.mark.parametrize("case", REDUCE_MEAN_CASES, ids=lambda c: c.name)
def test_reduce_mean_case_conforms_and_runs(case: Any, tmp_path: Path) -> None:
    model = onnx_models.save(case.model, tmp_path / f"{case.name}.onnx")
    feeds = onnx_models.case_inputs(case)
    expected = onnx_models.case_expected(case)
    data, axes = feeds["data"], feeds["axes"]
    attrs = _attrs(case)

    # Our ONNX reference on the case's inputs gives ONNX's expected output.
    ours = onnx_ref.reduce_mean(data, axes, attrs.get("keepdims", 1), attrs.get("noop_with_empty_axes", 0),
                                opset=_opset(case))  # fmt: skip
    np.testing.assert_allclose(ours, expected, **TIGHT)
    assert ours.shape == expected.shape

    report = conform_model(str(model), inputs=feeds, save_ir=str(tmp_path / "ir"))
    doc = report.to_json()
    assert doc["ok"], doc
    [node] = doc["nodes"]
    assert (node["op_type"], node["version"], node["status"]) == ("ReduceMean", 18, "ok")
    assert node["max_abs_error"] <= 1e-6
    assert node["total"] == expected.size
    assert report.saved_ir is not None

    # The converted IR's ReduceMean layer, run on its own: NumPy (OpenVINO semantics) and OpenVINO.
    ir = load_ir(report.saved_ir)
    try:
        [layer] = [lay for lay in ir.layers if lay.type in reductions()]
        assert layer.type == "ReduceMean"
        given = {"data": data}
        if axes.size:
            given["axes"] = axes  # the frontend kept ONNX's axes input as a Parameter named "axes"
        else:
            # ONNX's empty axes mean "all axes": the frontend drops the (statically empty) input and feeds
            # the layer Range(0, rank) computed from ShapeOf of the static data shape; the shape engine folds
            # that subgraph, so the axes are constant: exactly all of them.
            axes_info = ShapeEngine(ir).axes_of(layer)
            assert (axes_info.kind, axes_info.values) == ("const", tuple(range(data.ndim)))
        run = run_layer(ir, layer.id, inputs=given)
    finally:
        ir.close()
    assert run.ok, run.to_json()
    assert set(run.outputs) == {"numpy", "openvino:CPU"}
    for output in run.outputs.values():
        assert output.shape == expected.shape
        np.testing.assert_allclose(output, expected, **TIGHT)


@pytest.mark.parametrize("case", MEAN_CASES, ids=lambda c: c.name)
def test_mean_case_conforms(case: Any, tmp_path: Path) -> None:
    model = onnx_models.save(case.model, tmp_path / f"{case.name}.onnx")
    feeds = onnx_models.case_inputs(case)
    expected = onnx_models.case_expected(case)
    np.testing.assert_allclose(onnx_ref.mean(*feeds.values(), opset=_opset(case)), expected, **TIGHT)

    report = conform_model(str(model), inputs=feeds, save_ir=str(tmp_path / "ir"))
    doc = report.to_json()
    assert doc["ok"], doc
    [node] = doc["nodes"]
    assert (node["op_type"], node["status"]) == ("Mean", "ok")
    assert node["max_abs_error"] <= 1e-6
    # Mean becomes element-wise Add/Multiply in the IR: there is no reduction layer to `run`, so Mean is
    # checked through conform only.
    assert report.saved_ir is not None
    ir = load_ir(report.saved_ir)
    try:
        assert not [lay for lay in ir.layers if lay.type in reductions()]
    finally:
        ir.close()


_EMPTY_AXES_OPS = (
    "ReduceMean",
    "ReduceSum",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
)
EMPTY_AXES_CASES = [c for op in _EMPTY_AXES_OPS
                    for c in onnx_models.backend_node_cases(op)
                    if "default_axes" in c.name or "empty_axes_input_noop" in c.name]  # fmt: skip


@pytest.mark.parametrize("case", EMPTY_AXES_CASES, ids=lambda c: c.name)
def test_a_removed_axes_input_of_no_elements_is_taken_as_empty(case: Any, tmp_path: Path) -> None:
    """ONNX's default-axes (and empty-axes noop) tests declare their ``axes`` graph input with static shape [0]; the
    frontend drops it from the converted model. Without a value given, conform said the node's ``axes`` was fused
    away: not observable, exit 1, with generated inputs (its default). A tensor of no elements has one value, the
    empty one: it is used, said in a note, and the node is compared (conforming, as with ONNX's own inputs)."""
    model = onnx_models.save(case.model, tmp_path / "default_axes.onnx")
    for inputs in ({}, {"data": onnx_models.case_inputs(case)["data"]}):
        doc = conform_model(str(model), inputs=inputs).to_json()
        [node] = doc["nodes"]
        assert (node["status"], node["observable"], node["missing_tensors"]) == ("ok", True, []), doc
        assert doc["ok"], doc
        assert any("'axes'" in n and "static shape [0]" in n and "empty tensor" in n for n in doc["notes"]), doc


def test_removed_axes_input_with_a_value_is_used_and_noted(tmp_path: Path) -> None:
    case = next(c for c in REDUCE_MEAN_CASES if c.name == "test_reduce_mean_default_axes_keepdims_random")
    model = onnx_models.save(case.model, tmp_path / "default_axes.onnx")
    report = conform_model(str(model), inputs=onnx_models.case_inputs(case))
    assert report.ok
    assert [i.name for i in report.inputs] == ["data"]
    assert any("'axes'" in note and "removed" in note for note in report.notes)
