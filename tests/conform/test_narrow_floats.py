"""conform on f16 and bf16 ONNX reductions: ONNX defines the result in the tensor's type, so the reference is the
reduction rounded once to that type, judged at that type's tolerance, whether the node's output is a graph output or
a tensor conform marks (read in the type the model declares it in).

OpenVINO's CPU runs the converted model directly as the reference's counterpart: its f16 output is the f16 rounding
of the sum, which ONNX's definition asks for."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.compare import tolerances
from ovreduce.conform import conform_model

from . import onnx_models

_TYPES = {
    "f16": (TensorProto.FLOAT16, np.dtype(np.float16)),
    "bf16": (TensorProto.BFLOAT16, np.dtype(ml_dtypes.bfloat16)),
}


def _model(op: str, etype: int, *, squared_first: bool) -> onnx.ModelProto:
    """``y = op(x, axes=[1], keepdims=1)`` (opset 18) on ``x [2, 2]``; with ``squared_first`` the reduction reads
    ``x * x``, a tensor conform marks, and its output feeds an Identity, so that it is marked too."""
    nodes = []
    data, out = "x", "y"
    if squared_first:
        nodes.append(helper.make_node("Mul", ["x", "x"], ["sq"], name="sq"))
        data, out = "sq", "r"
    nodes.append(helper.make_node(op, [data, "axes"], [out], name="n", keepdims=1))
    if squared_first:
        nodes.append(helper.make_node("Identity", ["r"], ["y"], name="id"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", etype, [2, 2])],
        [helper.make_tensor_value_info("y", etype, [2, 1])],
        initializer=[numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model)
    return model


def _openvino(model: onnx.ModelProto, x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The converted model's output, computed by OpenVINO's CPU directly (f32 inference precision)."""
    import openvino as ov

    core = ov.Core()
    converted = core.read_model(model.SerializeToString())
    compiled = core.compile_model(converted, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    bf16 = x.dtype == ml_dtypes.bfloat16  # OpenVINO's Python API holds bf16 as 16-bit words
    type_ = ov.Type.bf16 if bf16 else ov.Type.f16
    request = compiled.create_infer_request()
    request.infer([ov.Tensor(np.ascontiguousarray(x.view(np.uint16)), ov.Shape(list(x.shape)), type_)])
    out = np.array(request.get_output_tensor(0).data)
    return out.view(np.uint16).view(ml_dtypes.bfloat16) if bf16 else out


@pytest.mark.parametrize("squared_first", [False, True], ids=["graph-output", "marked"])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceL2"])
@pytest.mark.parametrize("type_", ["f16", "bf16"])
def test_a_narrow_float_reduction_is_judged_in_its_own_type(type_: str, op: str, squared_first: bool) -> None:
    etype, dtype = _TYPES[type_]
    model = _model(op, etype, squared_first=squared_first)
    x = np.array([[0.1, 0.2], [1.0, 2.3]]).astype(dtype)
    got = _openvino(model, x)
    assert got.dtype == dtype, got.dtype
    doc = conform_model(model.SerializeToString(), inputs={"x": x}).to_json()
    [node] = [n for n in doc["nodes"] if n["node"] == "n"]
    assert node["status"] == "ok", node
    atol, rtol = tolerances(type_, None, x.size, 2, op=op)  # the declared type's, each output reducing two elements
    assert (node["atol"], node["rtol"]) == (atol, rtol), node
    # the reference is ONNX's: the reduction rounded once to the declared type, which OpenVINO's output is within
    # that type's tolerance of
    wide = x.astype(np.float64)
    data = wide * wide if squared_first else wide
    exact = {"ReduceSum": data.sum(1, keepdims=True), "ReduceMean": data.mean(1, keepdims=True),
             "ReduceL2": np.sqrt((data * data).sum(1, keepdims=True))}[op]  # fmt: skip
    np.testing.assert_allclose(got.astype(np.float64), exact.astype(dtype).astype(np.float64), atol=atol, rtol=rtol)
