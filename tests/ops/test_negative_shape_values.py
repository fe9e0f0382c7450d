"""A shape-like input computed to a negative value, against the installed OpenVINO runtime: Interpolate's sizes,
Broadcast's target, Tile's repeats, TopK's ``k``, OneHot's ``depth``, RandomUniform's shape and
ConvolutionBackpropData's output shape are read as a partial shape (``get_input_const_data_as_shape``): a Const
layer's values as they are, any other value through its bounds, which OpenVINO refuses where one is negative ("Value
for partial shape evaluation can't be lower than zero."). Each IR is built with OpenVINO's opset API on a value
``6 - d`` (or ``-d``, which OpenVINO bounds only where ``d`` is static) of a dim ``d``, saved, and reshaped by both so
that ``d`` is past 6 (a negative value, constant or of bounds) or not (every shape agrees)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
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
from .test_shape_bounds import _differences

REFUSAL = "Value for partial shape evaluation can't be lower than zero."


def _c(values: Any, dtype: Any = np.int64) -> Any:
    return ops.constant(np.array(values, dtype))


Graph = Callable[[Any, Any], Any]  # (x, the value 6 - d as a 1-D i64 of one element) -> the op


def _interpolate(x: Any, v: Any) -> Any:
    return ops.interpolate(x, ops.concat([_c([4]), v], 0), "nearest", "sizes", axes=_c([2, 3]))


def _broadcast(x: Any, v: Any) -> Any:
    return ops.broadcast(_c([1.0], np.float32), ops.concat([_c([1, 3, 4]), v], 0))


def _bidirectional(x: Any, v: Any) -> Any:
    return ops.broadcast(_c([1.0], np.float32), ops.concat([_c([1, 3, 4]), v], 0), broadcast_spec="bidirectional")


def _tile(x: Any, v: Any) -> Any:
    return ops.tile(x, ops.concat([_c([1, 1, 1]), v], 0))


def _topk(x: Any, v: Any) -> Any:
    return ops.topk(x, ops.squeeze(v, _c([0])), 3, "max", "value")


def _one_hot(x: Any, v: Any) -> Any:
    return ops.one_hot(ops.convert(x, np.int64), ops.squeeze(v, _c([0])), _c(1.0, np.float32), _c(0.0, np.float32), -1)


def _random_uniform(x: Any, v: Any) -> Any:
    return ops.random_uniform(ops.concat([_c([1, 3, 4]), v], 0), _c(0.0, np.float32), _c(1.0, np.float32), "f32")


def _deconvolution(x: Any, v: Any) -> Any:
    filters = _c(np.ones((3, 2, 1, 1)), np.float32)
    return ops.convolution_backprop_data(x, filters, [1, 1], output_shape=ops.concat([_c([4]), v], 0))


OPS: dict[str, Graph] = {
    "interpolate-sizes": _interpolate,
    "broadcast-target": _broadcast,
    "bidirectional-broadcast-target": _bidirectional,
    "tile-repeats": _tile,
    "topk-k": _topk,
    "one-hot-depth": _one_hot,
    "random-uniform-shape": _random_uniform,
    "convolution-backprop-output-shape": _deconvolution,
}

RESHAPES = {  # x's shape under reshape: d its last dim
    "negative-constant": "[1,3,4,8]",  # 6 - 8 folds to -2
    "negative-bounds": "[1,3,4,7..9]",  # -3..-1
    "bounds-across-zero": "[1,3,4,5..9]",  # -3..1
    "positive-constant": "[1,3,4,4]",
}


VALUES: dict[str, Callable[[Any], Any]] = {  # the value from the dim d, as a 1-D i64 of one element
    "six-less-d": lambda d: ops.subtract(_c([6]), d),  # of bounds (6 - hi .. 6 - lo)
    "negative-d": ops.negative,  # of no bounds to OpenVINO unless d is static: only a constant is refused
}


def _model(op: str, value: str = "six-less-d") -> ov.Model:
    x = ops.parameter(ov.PartialShape("[1,3,?,2..6]"), np.float32, name="x")
    d = ops.gather(ops.shape_of(x), _c([3]), _c(0))
    node = OPS[op](x, VALUES[value](d))
    node.set_friendly_name("op")
    return ov.Model([ops.result(ops.reduce_sum(node.output(0), _c([0]), True))], [x], op)


def _reshaped_by_openvino(xml: Path, shape: str) -> tuple[Any, str | None]:
    """The model at ``xml`` as OpenVINO reads it, and OpenVINO's refusal of reshaping its input x to ``shape`` (None
    where it reshapes it)."""
    model = ov.Core().read_model(str(xml))
    try:
        model.reshape({"x": ov.PartialShape(shape)})
    except RuntimeError as exc:
        return model, str(exc)
    return model, None


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("reshape", list(RESHAPES))
@pytest.mark.parametrize("op", list(OPS))
def test_a_shape_value_computed_negative_is_refused_as_openvino_refuses_it(
    op: str, reshape: str, value: str, tmp_path: Path
) -> None:
    xml = tmp_path / "m.xml"
    ov.save_model(_model(op, value), str(xml), compress_to_fp16=False)
    model, refusal = _reshaped_by_openvino(xml, RESHAPES[reshape])
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir, {"x": PartialShape.parse(RESHAPES[reshape])})
        if refusal is None:
            assert _differences(engine, model) == []
        else:
            layer = next(layer for layer in ir.layers if layer.name == "op")
            state = engine.state((layer.id, layer.outputs[0].id))
            assert state.shape is None, f"OpenVINO refuses the reshape, ovreduce infers {state.shape}"
            if reshape.startswith("negative") or value == "negative-d":
                assert REFUSAL in refusal
                assert REFUSAL in state.reason
    finally:
        ir.close()


CONST_LAYERS: dict[str, Callable[[Any], Any]] = {  # the op on x, its shape-like input a Const layer holding a -2
    "interpolate-sizes": lambda x: ops.interpolate(x, _c([4, -2]), "nearest", "sizes", axes=_c([2, 3])),
}


@pytest.mark.parametrize("op", list(CONST_LAYERS))
def test_a_const_layers_negative_value_is_read_as_openvino_reads_it(op: str, tmp_path: Path) -> None:
    """A Const layer's -2 (no bounds evaluated): OpenVINO reads it as it is, and so does ovreduce."""
    x = ops.parameter(ov.PartialShape("[1,3,4,4]"), np.float32, name="x")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(CONST_LAYERS[op](x))], [x], op), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir), model) == []
    finally:
        ir.close()


RESHAPE_TARGETS: dict[str, Callable[[Any, Any], Any]] = {  # (d0, d1) -> a Reshape target of x [d0, d1]
    "d0-less-five": lambda d0, d1: ops.concat([ops.subtract(d0, _c([5])), _c([4])], 0),
    "four-then-d0-less-five": lambda d0, d1: ops.concat([_c([4]), ops.subtract(d0, _c([5]))], 0),
    "both-less-five": lambda d0, d1: ops.concat([ops.subtract(d0, _c([5])), ops.subtract(d1, _c([5]))], 0),
    "d0-less-five-twice-then-d1": lambda d0, d1: ops.concat([ops.subtract(d0, _c([5]))] * 2 + [d1], 0),
}
RESHAPE_SHAPES = {  # x's shape, d0 first
    "negative-bounds": "[2..4,4]",  # d0 - 5 is -3..-1
    "below-minus-one": "[1..3,4]",  # -4..-2
    "minus-one-to-zero": "[4..5,4]",  # -1..0
    "across-zero": "[3..7,4]",  # -2..2
    "minus-one-exactly": "[4,4]",  # the -1
    "minus-one-beside-a-dynamic-dim": "[4,?]",
    "positive": "[6..8,4]",
}


@pytest.mark.parametrize("shape", list(RESHAPE_SHAPES))
@pytest.mark.parametrize("target", list(RESHAPE_TARGETS))
def test_a_reshape_target_of_negative_bounds_is_read_as_openvino_reads_it(
    target: str, shape: str, tmp_path: Path
) -> None:
    """A Reshape reads its target through its bounds (``get_pattern_and_minus_one_idx``): an element bounded exactly
    ``-1,-1`` is the -1, one with a single negative bound is a dynamic dim, and one whose bounds are both negative
    otherwise is OpenVINO's refusal ("Output pattern dim[0] has invalid bounds: -3,-1"), as it is ovreduce's."""
    x = ops.parameter(ov.PartialShape("[?,?]"), np.float32, name="x")
    s = ops.shape_of(x)
    node = ops.reshape(x, RESHAPE_TARGETS[target](_c_dim(s, 0), _c_dim(s, 1)), False)
    node.set_friendly_name("op")
    model = ov.Model([ops.result(ops.reduce_sum(node, _c([0]), True))], [x], target)
    xml = tmp_path / "m.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    read, refusal = _reshaped_by_openvino(xml, RESHAPE_SHAPES[shape])
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir, {"x": PartialShape.parse(RESHAPE_SHAPES[shape])})
        layer = next(layer for layer in ir.layers if layer.name == "op")
        state = engine.state((layer.id, layer.outputs[0].id))
        if refusal is None:
            assert _differences(engine, read) == []
        else:
            assert state.shape is None, f"OpenVINO refuses the reshape ({refusal}), ovreduce infers {state.shape}"
            said = next(line for line in refusal.splitlines() if "Output pattern" in line or "-1" in line)
            assert said.strip() in state.reason or "less than -1" in state.reason, (state.reason, refusal)
    finally:
        ir.close()


def _c_dim(shape: Any, i: int) -> Any:
    return ops.gather(shape, _c([i]), _c(0))


REDUCTIONS = {"max": ops.reduce_max, "min": ops.reduce_min, "prod": ops.reduce_prod}
REDUCED_CONSUMERS: dict[str, Callable[[Any, Any], Any]] = {  # (x [d0, 3], the reduced value [1]) -> the op
    "broadcast-target": lambda x, v: ops.broadcast(_c([[1.0]], np.float32), ops.concat([_c([4]), v], 0)),
    "tile-repeats": lambda x, v: ops.tile(x, ops.concat([_c([1]), v], 0)),
    "tile-last-repeat": lambda x, v: ops.tile(ops.unsqueeze(x, _c([0])), v),
    "reshape-target": lambda x, v: ops.reshape(x, ops.concat([v, _c([-1])], 0), False),
    "pad-end": lambda x, v: ops.pad(x, _c([0, 0]), ops.concat([v, _c([0])], 0), "constant"),
}


def _with_constant(xml: Path, name: str, value: int) -> None:
    """Write ``value`` into the i64 Const layer ``name`` of a saved IR (OpenVINO refuses to make a model whose shape
    it already finds wrong: the model is made with another value)."""
    layer = ET.parse(xml).getroot().find(f".//layer[@name='{name}']/data")
    assert layer is not None
    weights = bytearray(xml.with_suffix(".bin").read_bytes())
    offset = int(layer.attrib["offset"])
    weights[offset : offset + 8] = struct.pack("<q", value)
    xml.with_suffix(".bin").write_bytes(bytes(weights))


# A product of a negative constant and a dim of an upper bound is left out: OpenVINO's bounds of it are the product of
# the lower bounds and that of the upper ones, out of order (-1 * d of a dim 1..5 is "-1,-5"), which ovreduce does not
# keep (the value is unknown to it: where OpenVINO refuses the model, ovreduce leaves the dims it feeds unknown)
REDUCED = [
    (reduction, constant, shape)
    for reduction in REDUCTIONS
    for constant in (-2, -1, 2, 7)
    for shape in ("[1..5,3]", "[2,3]", "[?,3]", "[0..4,3]")
    if reduction != "prod" or constant > 0 or shape == "[?,3]"
]


@pytest.mark.parametrize(("reduction", "constant", "shape"), REDUCED)
@pytest.mark.parametrize("consumer", list(REDUCED_CONSUMERS))
def test_a_reduction_of_a_constant_and_a_dim_is_bounded_as_openvino_bounds_it(
    consumer: str, reduction: str, constant: int, shape: str, tmp_path: Path
) -> None:
    """``max(c, d)``, ``min(c, d)`` and ``c * d`` written as a ReduceMax/Min/Prod of ``Concat([c], d)``: OpenVINO's
    default bound evaluator reduces the lower bounds and the upper ones, negative ones too (``max(-2, d)`` of a dim
    ``1..5`` is ``1..5``; ``min(-2, d)`` is -2, which a shape refuses); ovreduce bounds it alike, and the op it feeds
    (a Tile of a repeat it cannot bound keeps the dims the repeat does not touch) infers or refuses as OpenVINO's."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    k = _c([3])
    k.set_friendly_name("k")
    value = REDUCTIONS[reduction](ops.concat([k, _c_dim(ops.shape_of(x), 0)], 0), _c([0]), True)
    node = REDUCED_CONSUMERS[consumer](x, value)
    node.set_friendly_name("op")
    model = ov.Model([ops.result(ops.reduce_sum(node, _c([0]), True))], [x], reduction)
    xml = tmp_path / "m.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    _with_constant(xml, "k", constant)
    try:
        read = ov.Core().read_model(str(xml))
        refusal = None
    except RuntimeError as exc:
        refusal = str(exc)
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir)
        layer = next(layer for layer in ir.layers if layer.name == "op")
        state = engine.state((layer.id, layer.outputs[0].id))
        if refusal is None:
            assert _differences(engine, read) == []
        else:
            assert state.shape is None, f"OpenVINO refuses it ({refusal}), ovreduce infers {state.shape}"
    finally:
        ir.close()


@pytest.mark.parametrize("shape", ["[2..4,3]", "[1..3,3]", "[5..8,3]", "[4,3]", "[?,3]"])
@pytest.mark.parametrize("consumer", list(REDUCED_CONSUMERS))
def test_an_abs_of_a_value_below_zero_keeps_its_bounds_turned_round(consumer: str, shape: str, tmp_path: Path) -> None:
    """``|d - 5|`` of a dim ``2..4`` (``-3..-1``) is ``1..3``, as OpenVINO orders the Abs of each bound; of bounds not
    below 0 it is as it was (a dim across 5 is left out: OpenVINO's ordered bounds of it leave values out)."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    value = ops.abs(ops.subtract(_c_dim(ops.shape_of(x), 0), _c([5])))
    node = REDUCED_CONSUMERS[consumer](x, value)
    node.set_friendly_name("op")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_sum(node, _c([0]), True))], [x], "abs"), str(xml), False)
    read = ov.Core().read_model(str(xml))
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir), read) == []
    finally:
        ir.close()


@pytest.mark.parametrize("consumer", list(REDUCED_CONSUMERS))
def test_dims_an_abs_across_zero_leaves_unknown_say_why(consumer: str, tmp_path: Path) -> None:
    """``|d - 5|`` of a dim ``1..8``, whose bounds ovreduce does not keep (OpenVINO's ``1..4`` leaves 0 out): the dims
    it leaves unknown where OpenVINO infers them say why, whichever op reads it."""
    x = ops.parameter(ov.PartialShape("[1..8,3]"), np.float32, name="x")
    node = REDUCED_CONSUMERS[consumer](x, ops.abs(ops.subtract(_c_dim(ops.shape_of(x), 0), _c([5]))))
    node.set_friendly_name("op")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(node)], [x], "abs"), str(xml), False)
    expected = to_shape(ov.Core().read_model(str(xml)).get_result().get_output_partial_shape(0))
    ir = load_ir(xml)
    try:
        layer = next(layer for layer in ir.layers if layer.name == "op")
        state = ShapeEngine(ir).state((layer.id, layer.outputs[0].id))
    finally:
        ir.close()
    assert state.shape is not None and state.shape != expected, (state.shape, expected)
    assert "may be known to OpenVINO" in state.reason and "(op)" in state.reason, state.reason


CARRIED: dict[str, Callable[[Any], Any]] = {  # a dim d (1-D i64 of one element) -> a value OpenVINO bounds from d's
    **{f"power-{e}": (lambda d, e=e: ops.power(d, _c([e]))) for e in (0, 1, 2, 3)},
    **{f"through-{t}": (lambda d, t=t: ops.convert(ops.convert(d, t), "i64")) for t in ("f16", "bf16", "f32", "f64")},
    "through-f32-from-i32": lambda d: ops.convert(ops.convert(ops.convert(d, "i32"), "f32"), "i64"),
}


@pytest.mark.parametrize("shape", ["[2..5,3]", "[?,3]", "[0..3,3]", "[1,3]", "[2..256,3]"])
@pytest.mark.parametrize("value", list(CARRIED))
@pytest.mark.parametrize("consumer", ["broadcast-target", "tile-repeats", "reshape-target", "pad-end"])
def test_bounds_go_through_power_and_a_real_convert_as_openvinos_do(
    consumer: str, value: str, shape: str, tmp_path: Path
) -> None:
    """``d ** 2`` of a dim ``2..5`` is ``4..25`` (the power of each bound), and ``d`` through f32 (or f16, bf16, f64)
    and back is ``2..5``, as OpenVINO's bound evaluation carries them into a Broadcast, Tile, Reshape or Pad."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    node = REDUCED_CONSUMERS[consumer](x, CARRIED[value](_c_dim(ops.shape_of(x), 0)))
    node.set_friendly_name("op")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_sum(node, _c([0]), True))], [x], value), str(xml), False)
    read = ov.Core().read_model(str(xml))
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir), read) == []
    finally:
        ir.close()
