"""Every reduction in the registry on both backends, and the whole-model runner (read an IR from bytes, feed
it, run it with marked tensors). Everything runs on the installed OpenVINO runtime; nothing is mocked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as ops
import pytest

from ovreduce.backends.numpy import NumPyBackend
from ovreduce.backends.openvino import (
    LayerCache,
    OpenVINOBackend,
    check_precision,
    compile_options,
    model_inputs,
    read_ir,
    read_model,
    run_marked,
)
from ovreduce.compare import compare
from ovreduce.errors import InputError
from ovreduce.ops.registry import reductions

from .layers import layer

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"


@pytest.mark.parametrize("op_type", list(reductions()))
# (Empty axes are left out: OpenVINO's CPU plugin refuses them, "gets incorrect number of input/output dimensions".)
@pytest.mark.parametrize(("axes", "keep_dims"), [([1], False), ([0, 2], True), ([-1], True)], ids=["1", "02k", "-1k"])
def test_every_reduction_agrees_on_both_backends(op_type: str, axes: list[int], keep_dims: bool) -> None:
    op = reductions()[op_type]
    type_name = "boolean" if op.logical else "f32"
    spec = layer(op_type, type_name, [2, 3, 4], axes, keep_dims)
    rng = np.random.default_rng(3)
    data = rng.random((2, 3, 4)) < 0.5 if op.logical else rng.uniform(0.5, 2.0, (2, 3, 4)).astype(np.float32)
    reference = NumPyBackend().infer(spec, [data])
    candidate = OpenVINOBackend("CPU", "f32", cache=LayerCache(4)).infer(spec, [data])
    assert reference.ok and candidate.ok, (reference.error, candidate.error)
    assert reference.output is not None and candidate.output is not None
    assert compare(reference.output, candidate.output, atol=1e-6, rtol=1e-5).ok


@pytest.mark.parametrize("version", ["opset4", "opset8", "opset16"])
def test_layer_of_an_ir_version_runs(version: str) -> None:
    spec = dataclasses.replace(layer("ReduceL1", "f32", [2, 3], [1], False), version=version)
    result = OpenVINOBackend("CPU", "f32", cache=LayerCache(4)).infer(spec, [np.ones((2, 3), np.float32)])
    assert result.ok and result.output is not None, result.error
    np.testing.assert_array_equal(result.output, [3.0, 3.0])


# -- precisions -----------------------------------------------------------------------------------------------
def test_check_precision() -> None:
    for precision in ("f32", "f16", "bf16", "default"):
        check_precision(precision)
    with pytest.raises(InputError, match="precision 'f64' is not one of f32, f16, bf16, default"):
        check_precision("f64")
    assert compile_options("default") == {}
    assert compile_options("bf16") == {"INFERENCE_PRECISION_HINT": "bf16"}


# -- the whole-model runner -----------------------------------------------------------------------------------
def test_read_ir_from_bytes_is_the_model_read_from_files() -> None:
    xml, weights = SAMPLES / "all_reductions.xml", SAMPLES / "all_reductions.bin"
    from_bytes = read_ir(xml.read_bytes(), weights.read_bytes())
    from_files = read_model(xml, weights)
    assert [n.get_type_name() for n in from_bytes.get_ordered_ops()] == [
        n.get_type_name() for n in from_files.get_ordered_ops()
    ]
    arrays, described, _ = model_inputs(from_bytes, None, seed=0)
    a = run_marked(from_bytes, [], arrays, "CPU", "f32")
    b = run_marked(from_files, [], arrays, "CPU", "f32")
    assert [d.name for d in described] == [p.get_any_name() for p in from_files.inputs]
    for x, y in zip(a.outputs, b.outputs, strict=True):
        np.testing.assert_array_equal(x, y)


def test_run_marked_returns_each_mark_in_order() -> None:
    x = ops.parameter(ov.PartialShape([2, 3]), ov.Type.f32, name="x")
    relu = ops.relu(x)
    mean = ops.reduce_mean(relu, ops.constant(np.array([1], np.int64)), False)
    neg = ops.negative(mean)
    model = ov.Model([neg], [x], "m")
    data = np.array([[-1.0, 2.0, 4.0], [3.0, -5.0, 0.0]], np.float32)
    marks = [mean.output(0), x.output(0), relu.output(0), mean.output(0)]  # a mark twice, and an input
    run = run_marked(model, marks, {0: data}, "CPU", "f32")
    relu_out = np.maximum(data, 0)
    expected = [relu_out.mean(axis=1), data, relu_out, relu_out.mean(axis=1)]
    assert len(run.marked) == len(marks)
    for got, want in zip(run.marked, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    [final] = run.outputs
    np.testing.assert_allclose(final, -relu_out.mean(axis=1), rtol=1e-6)
    assert run.effective_precision == "f32"


def test_model_inputs_given_by_name_and_seeded() -> None:
    model = read_model(SAMPLES / "runtime_axes.xml")
    names = [p.get_any_name() for p in model.inputs]
    arrays, described, _ = model_inputs(model, None, seed=1)
    again, _, _ = model_inputs(model, None, seed=1)
    for i in arrays:
        np.testing.assert_array_equal(arrays[i], again[i])
    assert [d.origin.split(",")[0] for d in described] == ["seed 1", "its last axes", "its last axes"]
    given = {names[0]: arrays[0]}
    _, described, _ = model_inputs(model, given, seed=2)
    assert described[0].origin == "given"
    with pytest.raises(InputError, match="names no model input"):
        model_inputs(model, {"nope": arrays[0]}, seed=0)
