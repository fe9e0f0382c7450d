"""Interval bounds of shapes computed at run time, against the installed OpenVINO runtime: a Parameter of interval
dims, its ShapeOf taken apart and put together again (Gather, Slice, StridedSlice, Concat, arithmetic, Convert,
Unsqueeze) into a Reshape, Tile or Broadcast, then a reduction. Every layer's shape, as ``read_model`` infers it and
again after ``Model.reshape`` of a static model, must be what ovreduce's shape engine infers: OpenVINO carries each
element's lower and upper bound through those ops, so a flatten of ``[2..5,3,4]`` is ``[2..5,5..30]``, not
``[?,?]``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .test_reduce_differential import to_shape


def _c(values: Any, dtype: Any = np.int64) -> Any:
    return ops.constant(np.array(values, dtype))


def _dim(shape: Any, i: int) -> Any:
    return ops.gather(shape, _c([i]), _c(0))


def _flatten(x: Any) -> Any:  # x.view(x.shape[0], -1)
    return ops.reshape(x, ops.concat([_dim(ops.shape_of(x), 0), _c([-1])], 0), False)


def _product_of_dims(x: Any) -> Any:  # [d0 * d1, -1]
    s = ops.shape_of(x)
    return ops.reshape(x, ops.concat([ops.multiply(_dim(s, 0), _dim(s, 1)), _c([-1])], 0), False)


def _sum_and_difference(x: Any) -> Any:  # [d0 + d1, d2 - 1, -1]
    s = ops.shape_of(x)
    first = ops.add(_dim(s, 0), _dim(s, 1))
    return ops.reshape(x, ops.concat([first, ops.subtract(_dim(s, 2), _c([1])), _c([-1])], 0), False)


def _slice_of_shape(x: Any) -> Any:  # x.view(*x.shape[:2], -1)
    head = ops.slice(ops.shape_of(x), _c([0]), _c([2]), _c([1]))
    return ops.reshape(x, ops.concat([head, _c([-1])], 0), False)


def _reshaped_slice_of_shape(x: Any) -> Any:  # the same, the head reshaped to 1-D on the way (a Flatten's export)
    head = ops.reshape(ops.slice(ops.shape_of(x), _c([0]), _c([2]), _c([1])), _c([-1]), False)
    return ops.reshape(x, ops.concat([head, _c([-1])], 0), False)


def _unsqueezed_and_squeezed_shape(x: Any) -> Any:  # the shape made 2-D and back on the way
    whole = ops.squeeze(ops.unsqueeze(ops.shape_of(x), _c([0])), _c([0]))
    return ops.reshape(x, ops.concat([_c([1]), whole], 0), False)


def _strided_slice_of_shape(x: Any) -> Any:  # the same, as the TensorFlow frontends write it
    head = ops.strided_slice(ops.shape_of(x), _c([0]), _c([2]), _c([1]), [0], [0])
    return ops.reshape(x, ops.concat([head, _c([-1])], 0), False)


def _dims_reordered(x: Any) -> Any:  # [d2, d0, d1]: every element a bound, no -1
    s = ops.shape_of(x)
    return ops.reshape(x, ops.concat([_dim(s, 2), _dim(s, 0), _dim(s, 1)], 0), False)


def _halved(x: Any) -> Any:  # [d0, d1 / 2, -1]
    s = ops.shape_of(x)
    return ops.reshape(x, ops.concat([_dim(s, 0), ops.divide(_dim(s, 1), _c([2])), _c([-1])], 0), False)


def _i32_converted(x: Any) -> Any:  # the dims as i32, then back, an unsqueezed scalar dim among them
    s = ops.shape_of(x, "i32")
    first = ops.unsqueeze(ops.gather(s, _c(0, np.int32), _c(0, np.int32)), _c(0))
    return ops.reshape(x, ops.convert(ops.concat([first, _c([-1], np.int32)], 0), "i64"), False)


def _to_the_size(x: Any) -> Any:  # ONNX's Size: [prod(shape), 1]
    return ops.reshape(x, ops.concat([ops.reduce_prod(ops.shape_of(x), _c([0]), True), _c([1])], 0), False)


def _tiled_by_the_least_and_largest(x: Any) -> Any:  # repeats [min(shape), 1, max(shape)]
    s = ops.shape_of(x)
    least, largest = ops.reduce_min(s, _c([0]), True), ops.reduce_max(s, _c([0]), False)
    return ops.tile(x, ops.concat([least, _c([1]), ops.unsqueeze(largest, _c(0))], 0))


def _tiled(x: Any) -> Any:  # repeated by its own first dim along the last axis
    return ops.tile(x, ops.concat([_c([1, 1]), _dim(ops.shape_of(x), 0)], 0))


def _broadcast(x: Any) -> Any:  # a constant [1, 1] spread to [d0, d1 * 2]
    s = ops.shape_of(x)
    target = ops.concat([_dim(s, 0), ops.multiply(_dim(s, 1), _c([2]))], 0)
    return ops.broadcast(_c(np.ones((1, 1)), np.float32), target)


def _broadcast_bidirectional(x: Any) -> Any:  # x expanded to [d1, d0, 1, d2]
    s = ops.shape_of(x)
    target = ops.concat([_dim(s, 1), _dim(s, 0), _c([1]), _dim(s, 2)], 0)
    return ops.broadcast(x, target, broadcast_spec="BIDIRECTIONAL")


CASES: dict[str, tuple[str, str, Callable[[Any], Any]]] = {  # the Parameter's shape, a static one, the graph
    "flatten": ("[2..5,3,4]", "[4,3,4]", _flatten),
    "multiply-two-gathered-dims": ("[2..5,1..5,6]", "[4,2,6]", _product_of_dims),
    "add-and-subtract-gathered-dims": ("[2..5,1..5,3..6,2]", "[4,2,3,2]", _sum_and_difference),
    "slice-of-shapeof": ("[2..5,3..4,6,7]", "[4,3,6,7]", _slice_of_shape),
    "reshaped-slice-of-shapeof": ("[2..5,3..4,6,7]", "[4,3,6,7]", _reshaped_slice_of_shape),
    "unsqueezed-and-squeezed-shapeof": ("[2..5,3..4,6]", "[4,3,6]", _unsqueezed_and_squeezed_shape),
    "strided-slice-of-shapeof": ("[2..5,3..4,6,7]", "[4,3,6,7]", _strided_slice_of_shape),
    "concat-of-dims-reordered": ("[2..5,3..4,..6]", "[4,3,6]", _dims_reordered),
    "divide-a-gathered-dim": ("[1..3,4..9,5]", "[2,6,5]", _halved),
    "i32-shapeof-converted": ("[2..5,3,4]", "[4,3,4]", _i32_converted),
    "reduce-prod-of-shapeof": ("[2..5,3,4]", "[4,3,4]", _to_the_size),
    "reduce-min-and-max-of-shapeof": ("[2..5,3,4]", "[4,3,4]", _tiled_by_the_least_and_largest),
    "tile-by-a-dim": ("[2..5,3,4]", "[4,3,4]", _tiled),
    "broadcast-numpy": ("[2..5,3..4]", "[4,3]", _broadcast),
    "broadcast-bidirectional": ("[2..5,3..4,6]", "[4,3,6]", _broadcast_bidirectional),
}


def _model(case: str, shape: str) -> ov.Model:
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    out = ops.reduce_mean(CASES[case][2](x), _c([0]), True)
    out.set_friendly_name("mean")
    return ov.Model([ops.result(out)], [x], case)


def _differences(engine: ShapeEngine, model: Any) -> list[str]:
    """Every layer output whose shape is not OpenVINO's."""
    layers = {layer.name: layer for layer in engine.model.layers}
    wrong = []
    for node in model.get_ordered_ops():
        if node.get_type_name() in ("Result", "Constant"):
            continue
        layer = layers[node.get_friendly_name()]
        for index, port in enumerate(layer.outputs):
            expected = to_shape(node.get_output_partial_shape(index))
            state = engine.state((layer.id, port.id))
            if state.shape != expected:
                wrong.append(f"{layer.type} {layer.name!r}: ovreduce {state.shape} {state.reason}, OpenVINO {expected}")
    return wrong


def _both(xml: Path, name: str) -> tuple[PartialShape | None, PartialShape]:
    """The named layer's output shape as ovreduce infers it and as OpenVINO does."""
    node = next(n for n in ov.Core().read_model(str(xml)).get_ordered_ops() if n.get_friendly_name() == name)
    ir = load_ir(xml)
    try:
        layer = next(layer for layer in ir.layers if layer.name == name)
        return ShapeEngine(ir).state((layer.id, layer.outputs[0].id)).shape, to_shape(node.get_output_partial_shape(0))
    finally:
        ir.close()


def _bounded(model: Any) -> bool:
    """Whether OpenVINO's reduction input holds an interval of two bounds (what the case is about)."""
    mean = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "mean")
    dims = to_shape(mean.get_input_partial_shape(0)).dims or ()
    return any(not d.is_static and d.hi is not None for d in dims)


@pytest.mark.parametrize("case", list(CASES))
def test_bounds_of_a_runtime_shape_are_openvinos(case: str, tmp_path: Path) -> None:
    xml = tmp_path / "m.xml"
    ov.save_model(_model(case, CASES[case][0]), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    assert _bounded(model)
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir), model) == []
    finally:
        ir.close()


@pytest.mark.parametrize("case", list(CASES))
def test_bounds_of_a_runtime_shape_after_reshape_are_openvinos(case: str, tmp_path: Path) -> None:
    """A static model (its shapes folded to constants) reshaped to the case's interval dims."""
    xml = tmp_path / "m.xml"
    ov.save_model(_model(case, CASES[case][1]), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    model.reshape({"x": ov.PartialShape(CASES[case][0])})
    assert _bounded(model)
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir, {"x": PartialShape.parse(CASES[case][0])}), model) == []
    finally:
        ir.close()


def test_a_strided_slice_of_a_constant_shape_is_folded(tmp_path: Path) -> None:
    """x[4,1,1]'s ShapeOf is constant: a StridedSlice of it is too, as OpenVINO folds it, and the Broadcast target it
    is part of known in whole ([1, 4, 4] from a y of [2..8]), not left dynamic."""
    x, y = ops.parameter([4, 1, 1], np.float32, name="x"), ops.parameter([ov.Dimension(2, 8)], np.float32, name="y")
    s = ops.shape_of(x)
    head = ops.strided_slice(s, _c([1]), _c([2]), _c([1]), [0], [0])
    target = ops.concat([head, _dim(s, 0), _dim(s, 0)], 0)
    out = ops.reduce_mean(ops.broadcast(y, target), _c([0]), True)
    out.set_friendly_name("mean")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x, y]), str(xml), compress_to_fp16=False)
    assert _both(xml, "mean") == (PartialShape.static([1, 4, 4]),) * 2


def test_a_zero_under_special_zero_leaves_the_element_count_unchecked(tmp_path: Path) -> None:
    """x[2,5,2,2] reshaped to the constant [4, 2, 0, 2, 2, 5, 2] with special_zero: OpenVINO checks no element count
    where a 0 copies an input dim (640 elements from 40 pass), so neither does ovreduce: the output is its shape, not
    a refusal."""
    x = ops.parameter([2, 5, 2, 2], np.float32, name="x")
    out = ops.reduce_mean(ops.reshape(x, _c([4, 2, 0, 2, 2, 5, 2]), True), _c([0]), True)
    out.set_friendly_name("mean")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x]), str(xml), compress_to_fp16=False)
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir), ov.Core().read_model(str(xml))) == []
    finally:
        ir.close()


@pytest.mark.parametrize("remainder", [ops.mod, ops.floor_mod])
def test_a_remainder_of_bounded_dims_holds_openvinos_estimate(remainder: Any, tmp_path: Path) -> None:
    """x[2..5,7..9] reshaped to [d0 % 3, d1 % d0, d0 % 6, -1]: a remainder is no monotonic function of its operands,
    so ovreduce bounds it by the divisor ([0, 2] and [0, 4]), which holds OpenVINO's estimate from the operands'
    bounds (FloorMod's [2] for 2..5 % 3) without resting on ovreduce's bounds being exactly OpenVINO's; a dividend
    below every divisor is its own remainder (2..5)."""
    x = ops.parameter(ov.PartialShape("[2..5,7..9]"), np.float32, name="x")
    s = ops.shape_of(x)
    d0, d1 = _dim(s, 0), _dim(s, 1)
    target = ops.concat([remainder(d0, _c([3])), remainder(d1, d0), remainder(d0, _c([6])), _c([-1])], 0)
    reshaped = ops.reshape(x, target, False)
    reshaped.set_friendly_name("reshaped")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(reshaped)], [x]), str(xml), compress_to_fp16=False)
    shape, openvinos = _both(xml, "reshaped")
    assert shape is not None and shape.contains(openvinos), (shape, openvinos)
    assert shape.dims is not None and [str(d) for d in shape.dims[:3]] == ["..2", "..4", "2..5"], shape


def test_a_value_reshaped_to_a_target_known_at_run_time_has_no_bounds(tmp_path: Path) -> None:
    """x's first dim (2..5) reshaped to a target OpenVINO cannot bound (min(max(ShapeOf(z), 1), 1)): OpenVINO passes
    bounds through a Reshape only where it knows the target, so the flatten that reads it has a dynamic rank, not
    ovreduce's ``[2..5,2..7]``."""
    x = ops.parameter(ov.PartialShape("[2..5,3]"), np.float32, name="x")
    z = ops.parameter(ov.PartialShape("[?]"), np.float32, name="z")
    one = ops.minimum(ops.maximum(ops.shape_of(z), _c([1])), _c([1]))
    first = ops.reshape(_dim(ops.shape_of(x), 0), one, False)
    out = ops.reshape(x, ops.concat([first, _c([-1])], 0), False)
    out.set_friendly_name("out")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x, z]), str(xml), compress_to_fp16=False)
    assert _both(xml, "out") == (PartialShape(None),) * 2


@pytest.mark.parametrize("shape", ["[?,0,3]", "[0,?]", "[?,0]", "[..4,0,?]"])
@pytest.mark.parametrize("output_type", ["i64", "i32"])
def test_the_element_count_of_a_shape_holding_a_0_is_0(shape: str, output_type: str, tmp_path: Path) -> None:
    """The flatten ``ov.save_model`` writes for ``reshape(x, [prod(shape)])``: a 0 dim beside an unbounded one makes
    the product's upper bound 0 to OpenVINO (``evaluate_upper`` with a 0 among the bounds), so the flat shape is
    ``[0]``, not ``[?]``."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    size = ops.convert(ops.reduce_prod(ops.shape_of(x, output_type), _c([0]), True), "i64")
    out = ops.reduce_sum(ops.reshape(x, size, False), _c([], np.int64), False, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x]), str(xml), compress_to_fp16=False)
    mine, openvino = _both(xml, "red")
    assert openvino == PartialShape.static([0])
    assert mine == openvino


_BIG = 2**62
_PAST_INT64: dict[str, Callable[[Any], Any]] = {  # x -> a layer of dims or bounds past int64
    "concat-of-three": lambda x: ops.concat([x, x, x], 0),
    "concat-of-two": lambda x: ops.concat([x, x], 0),
    "tile": lambda x: ops.tile(x, _c([4, 1])),
    "interpolate-by-8": lambda x: ops.interpolate(
        x, ops.constant(np.array([8.0, 1.0], np.float32)), "nearest", "scales", axes=_c([0, 1])
    ),
    "interpolate-by-1.5": lambda x: ops.interpolate(
        x, ops.constant(np.array([1.5, 1.0], np.float32)), "nearest", "scales", axes=_c([0, 1])
    ),
    "broadcast-to-a-multiple-of-the-shape": lambda x: ops.broadcast(
        ops.constant(np.float32(1)), ops.multiply(ops.shape_of(x), _c([4, 1]))
    ),
}


@pytest.mark.parametrize(
    "shape", [f"[{_BIG},4]", f"[1..{2**63 - 2},4]", f"[{_BIG}..{_BIG + 5},4]", f"[5..{_BIG},4]", "[3..,4]"]
)
@pytest.mark.parametrize("case", list(_PAST_INT64))
def test_dims_past_int64_are_openvinos(case: str, shape: str, tmp_path: Path) -> None:
    """OpenVINO's dims are int64, its interval arithmetic saturating at int64's largest value (no bound): a Concat,
    Tile or Interpolate past it leaves a "?" (its empty interval) or an unbounded interval, an Interpolate's float
    product past it a 0 (x86-64's conversion). ovreduce reported integers no int64 holds (``13835058055282163712``,
    ``3..27670116110564327418``). Every layer's shape, from the model as saved and after a reshape to ``shape``, is
    OpenVINO's, and no dim of the reduction's JSON is past int64."""
    from ovreduce.check import check_model

    x = ops.parameter(ov.PartialShape("[2,4]"), np.float32, name="x")
    out = ops.reduce_sum(_PAST_INT64[case](x), _c([1]), True, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x]), str(xml), compress_to_fp16=False)
    if case.startswith("broadcast") and ".." in shape:
        pytest.skip("a value's bounds past int64 wrap in OpenVINO ([2^62..2^62+5] * 4 is ..20): not judged by ovreduce")
    model = ov.Core().read_model(str(xml))
    model.reshape({"x": ov.PartialShape(shape)})
    ir = load_ir(xml)
    try:
        shapes = {"x": PartialShape.parse(shape)}
        assert _differences(ShapeEngine(ir, shapes), model) == []
        report = check_model(ir, reshape=shapes)
    finally:
        ir.close()
    [reduction] = report.reductions
    bounds = [int(b) for d in reduction.inferred_output_shape or [] for b in str(d).split("..") if b]
    assert all(-1 <= b < 2**63 - 1 for b in bounds), reduction.inferred_output_shape
