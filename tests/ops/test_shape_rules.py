"""The native shape rules on cases from OpenVINO's ``src/core/tests/type_prop/<op>.cpp`` (as data), and the
shape engine's behaviour under a reshape for an op it has no rule for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.ops.elementwise import broadcast_shapes
from ovreduce.shapes import PartialShape

from .test_reduce_differential import to_shape

# (input shapes, auto_broadcast, expected) from type_prop/binary_elementwise.cpp (and pdpd from
# type_prop/binary_ops.cpp): intervals stretch where they may hold 1.
BROADCAST_CASES = [
    ("[2,3,4]", "[3,4]", "numpy", "[2,3,4]"),
    ("[1..3]", "[5]", "numpy", "[5]"),
    ("[0..3]", "[1]", "numpy", "[..3]"),
    ("[2..4]", "[3..6]", "numpy", "[3..4]"),
    ("[?,3]", "...", "numpy", "..."),
    ("[2,?]", "[?,4]", "none", "[2,4]"),
    ("[2,3,4,5]", "[3,4]", "pdpd", "[2,3,4,5]"),
]


@pytest.mark.parametrize(("a", "b", "mode", "expected"), BROADCAST_CASES)
def test_broadcast_rules(a: str, b: str, mode: str, expected: str) -> None:
    axis = 1 if mode == "pdpd" else -1
    assert broadcast_shapes(PartialShape.parse(a), PartialShape.parse(b), mode, axis) == PartialShape.parse(expected)


def _weights(*shape: int) -> Any:
    return ops.constant(np.ones(shape, np.float32))


def _model(tmp_path: Path, body: Any) -> Path:
    x = ops.parameter([1, 3, 8, 8], ov.Type.f32, name="x")
    out = ops.reduce_mean(body(x), ops.constant(np.array([1], dtype=np.int64)), True)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x], "m"), str(xml), compress_to_fp16=False)
    return xml


# (what, the op between the Parameter and the ReduceMean, the shape after reshaping x to [2,3,48,W]: W=320,
# or 8 for MatMul, whose weights read it)
CASES = [
    ("conv", lambda x: ops.convolution(x, _weights(4, 3, 3, 3), [2, 2], [1, 1], [1, 1], [1, 1]), "[2,1,24,160]"),
    ("maxpool-ceil", lambda x: ops.max_pool(x, [3, 3], [1, 1], [0, 0], [0, 0], [2, 2], "ceil").output(0),
     "[2,1,17,107]"),
    ("matmul", lambda x: ops.matmul(x, ops.constant(np.ones([5, 8], np.float32)), False, True), "[2,1,48,5]"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "body", "expected"), CASES, ids=[c[0] for c in CASES])
def test_reshape_reaches_the_reduction(tmp_path: Path, what: str, body: Any, expected: str) -> None:
    xml = _model(tmp_path, body)
    new = [2, 3, 48, 8 if what == "matmul" else 320]
    model = load_ir(xml)
    try:
        engine = ShapeEngine(model, {"x": PartialShape.static(new)})
        (info,) = engine.reductions
        assert info.output.shape == PartialShape.parse(expected)
    finally:
        model.close()
    ov_model = ov.Core().read_model(str(xml))
    ov_model.reshape({"x": ov.PartialShape(new)})
    assert to_shape(ov_model.get_results()[0].get_output_partial_shape(0)) == PartialShape.parse(expected)


def _space_to_depth(x: Any) -> Any:
    return ops.space_to_depth(x, "blocks_first", 2)


def test_an_op_without_a_rule_is_stale_under_reshape(tmp_path: Path) -> None:
    model = load_ir(_model(tmp_path, _space_to_depth))
    try:
        plain = ShapeEngine(model)
        (info,) = plain.reductions
        assert info.data.origin == "declared"
        assert info.output.shape == PartialShape.parse("[1,1,4,4]")
        reshaped = ShapeEngine(model, {"x": PartialShape.parse("[2,3,48,320]")})
        (info,) = reshaped.reductions
        assert info.data.shape is None
        assert info.data.reason.startswith("no native shape rule for SpaceToDepth (")
        same = ShapeEngine(model, {"x": PartialShape.parse("[1,3,8,8]")})
        assert same.reductions[0].data.origin == "declared"  # the inputs are the declared ones: still valid
    finally:
        model.close()
