"""conform's reference numerics and tolerances, against OpenVINO's CPU and against exact arithmetic.

The ONNX reference conform judges OpenVINO by computes each node with wide intermediates and rounds once (f64 for
f16/bf16/f32, the long double for f64, Python integers for an integer mean or norm), so that a result the output type
holds is never lost to an intermediate that overflowed or wrapped; and a sum or mean is allowed rtol times the sum
(mean) of |x| it reduces, the rounding rule ``run`` applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.conform import conform_model

from . import onnx_models

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}  # fmt: skip


def _one_node(path: Path, op: str, x: npt.NDArray[Any], axes: list[int] | None, *, keepdims: int = 0) -> Path:
    """A one-node opset-18 model of ``op`` over graph input ``x`` (of ``x``'s type and shape)."""
    inputs, initializers = ["x"], []
    if axes is not None:
        inputs.append("axes")
        initializers.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    node = helper.make_node(op, inputs, ["y"], name="r", keepdims=keepdims)
    etype = _TYPES[x.dtype]
    over = range(x.ndim) if not axes else [a % x.ndim for a in axes]
    shape = [1 if i in over else d for i, d in enumerate(x.shape) if keepdims or i not in over]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", etype, list(x.shape))],
                              [helper.make_tensor_value_info("y", etype, shape)], initializer=initializers)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    return onnx_models.save(model, path)


def test_a_long_f32_sum_is_allowed_the_rounding_of_what_it_adds(tmp_path: Path) -> None:
    """An f32 ReduceSum of 4,096 activation-sized values per row, conform's own generated input and a given one:
    OpenVINO's sums lie within rtol times the sum of |x| of the exact (f64) sums, so conform agrees, as run does."""
    x = np.random.default_rng(1).normal(0, 1000, (64, 4096)).astype(np.float32)
    path = _one_node(tmp_path / "sum.onnx", "ReduceSum", x, [1])
    exact = x.astype(np.float64).sum(axis=1)
    got = onnx_models.openvino_output(path, {"x": x})
    mass = np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(got - exact) <= 1e-5 + 1e-5 * (np.abs(exact) + mass))  # OpenVINO's sum is right
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.allowance_max == pytest.approx(1e-5 * mass.max()), node
    node = conform_model(path).nodes[0]  # its own input (seed 0)
    assert node.status == "ok" and node.allowance_max is not None, node


def test_a_reduction_of_a_scalar_is_checked(tmp_path: Path) -> None:
    """ReduceLogSumExp of a rank-0 input (ONNX reduces its zero axes: the identity) is compared with OpenVINO's."""
    x = np.array(-2.5, np.float32)
    path = _one_node(tmp_path / "lse0.onnx", "ReduceLogSumExp", x, None, keepdims=1)
    got = onnx_models.openvino_output(path, {"x": x})
    assert got == x, got
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.error is None, node
