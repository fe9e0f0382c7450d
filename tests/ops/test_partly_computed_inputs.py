"""Shape inputs built partly from constants and partly from a ShapeOf (a Concat of both): OpenVINO's bound evaluation
knows each element's bounds, and so does ovreduce, so an explicit Broadcast's target and a StridedSlice's begin and
end give the dims OpenVINO gives, under every reshape, not wider ones."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce._openvino import partial_shape
from ovreduce.infer import ShapeEngine
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape


def _i64(*values: int) -> Any:
    return ops.constant(np.array(values, np.int64))


def _first_dim(x: Any) -> Any:
    return ops.gather(ops.shape_of(x), _i64(0), ops.constant(np.int64(0)))


def _explicit_broadcast(x: Any) -> Any:  # Broadcast(c[1], Concat(ShapeOf(x)[0], [2,3]), explicit [0])
    target = ops.concat([_first_dim(x), _i64(2, 3)], 0)
    return ops.broadcast(ops.constant(np.ones([1], np.float32)), target, _i64(0), "explicit")


def _slice_end_computed(x: Any) -> Any:  # StridedSlice(x, [0,1], Concat([-1], ShapeOf(x)[0]), begin_mask [1,0])
    end = ops.concat([_i64(-1), _first_dim(x)], 0)
    return ops.strided_slice(x, _i64(0, 1), end, _i64(1, 1), [1, 0], [0, 0])


def _slice_begin_computed(x: Any) -> Any:  # StridedSlice(x, Concat([1], ShapeOf(x)[0]), [0,0], end_mask [1,1])
    begin = ops.concat([_i64(1), _first_dim(x)], 0)
    return ops.strided_slice(x, begin, _i64(0, 0), _i64(1, 1), [0, 0], [1, 1])


def _slice_begin_end_computed(x: Any) -> Any:  # begin Concat([0], ShapeOf(x)[0] - 1), end Concat(ShapeOf(x)[0], [-1])
    first = _first_dim(x)
    begin = ops.concat([_i64(0), ops.subtract(first, _i64(1))], 0)
    end = ops.concat([first, _i64(-1)], 0)
    return ops.strided_slice(x, begin, end, _i64(1, 1), [0, 0], [0, 0])


GRAPHS: dict[str, Callable[[Any], Any]] = {
    "explicit Broadcast": _explicit_broadcast,
    "StridedSlice, end computed": _slice_end_computed,
    "StridedSlice, begin computed": _slice_begin_computed,
    "StridedSlice, begin and end computed": _slice_begin_end_computed,
}
RESHAPES = ["[?,3,?]", "[1..3,3,2..5]", "[2,3,4]", "[..6,5,4]", "[4..,3,4]", "[...]"]


@pytest.mark.parametrize("graph", list(GRAPHS))
def test_partly_computed_shape_inputs_give_openvinos_dims(graph: str, tmp_path: Path) -> None:
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    out = GRAPHS[graph](x)
    out.set_friendly_name("out")
    red = ops.reduce_sum(out, _i64(1), True)
    red.set_friendly_name("red")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x], "m"), str(path), compress_to_fp16=False)
    ir = load_ir(path)
    checked = 0
    for reshape in RESHAPES:
        model = ov.Core().read_model(str(path))
        try:
            model.reshape({"x": ov.PartialShape(reshape)})
        except RuntimeError:
            continue
        engine = ShapeEngine(ir, {"x": PartialShape.parse(reshape)})
        for node in model.get_ordered_ops():
            if node.get_friendly_name() not in ("out", "red"):
                continue
            layer = next(layer for layer in ir.layers if layer.name == node.get_friendly_name())
            state = engine.state((layer.id, layer.outputs[0].id))
            want = partial_shape(node.get_output_partial_shape(0))
            assert state.shape == want, (reshape, layer.name, state)
            checked += 1
    assert checked >= 6


def test_a_slice_by_a_begin_ovreduce_cannot_bound_says_why_its_dims_are_unknown(tmp_path: Path) -> None:
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    start = ops.parameter([1], np.int64, name="start")
    sliced = ops.strided_slice(x, ops.concat([_i64(0), start], 0), _i64(2, 3), _i64(1, 1), [0, 0], [0, 0])
    sliced.set_friendly_name("out")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(sliced)], [x, start], "m"), str(path), compress_to_fp16=False)
    ir = load_ir(path)
    engine = ShapeEngine(ir, {"x": PartialShape.parse("[?,3,4]")})
    layer = next(layer for layer in ir.layers if layer.name == "out")
    state = engine.state((layer.id, layer.outputs[0].id))
    model = ov.Core().read_model(str(path))
    model.reshape({"x": ov.PartialShape("[?,3,4]")})
    want = partial_shape(
        next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "out").get_output_partial_shape(0)
    )
    assert state.shape == want and not want.is_static
    assert "begin computed at run time" in state.reason, state
