"""Values computed at run time whose bounds meet, and shape inputs known in part, against the installed OpenVINO's
reader.

OpenVINO's bound evaluation takes a value of up to 10 elements whose lower and upper bounds meet (``d * 0`` is
``0..0``, ``min(d, 2)`` of a ``d`` of ``3..6`` is ``2..2``) as the constant they pin down: every op after it evaluates
it (a Negative, a Convert), and every shape inference reads it as a constant. ovreduce must infer the shape
``read_model`` infers through each such op. And a Pad, or an Interpolate's sizes, with one element ovreduce does not
bound (OpenVINO does) keeps the dims the other elements fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset13

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.ops.base import PortState
from ovreduce.shapes import Dimension, PartialShape

Node = ov.Node


def _c(values: object, dtype: type = np.int64) -> Node:
    return opset13.constant(np.array(values, dtype=dtype))


def _dim(x: Node, index: int) -> Node:
    return opset13.gather(opset13.shape_of(x), _c([index]), _c(0))


PINNED: dict[str, Callable[[Node], Node]] = {  # a value of one element whose bounds meet
    "times-zero": lambda d: opset13.multiply(d, opset13.subtract(_c([3]), _c([3]))),
    "minimum": lambda d: opset13.minimum(d, _c([2])),
}
THEN: dict[str, Callable[[Node], Node]] = {  # an op with no bound rule of its own: OpenVINO evaluates it
    "negative": opset13.negative,
    "convert-i32-i64": lambda v: opset13.convert(opset13.convert(v, "i32"), "i64"),
    "add-itself": lambda v: opset13.add(v, v),
    "power": lambda v: opset13.power(v, _c([2])),
    "as-is": lambda v: v,
}


def _shape(pshape: ov.PartialShape) -> PartialShape:
    if pshape.rank.is_dynamic:
        return PartialShape(None)
    return PartialShape(
        tuple(Dimension(d.get_min_length(), None if d.get_max_length() < 0 else d.get_max_length()) for d in pshape)
    )


def _both(xml: Path, names: list[str]) -> tuple[dict[str, PartialShape], dict[str, PortState]]:
    """OpenVINO's shapes of every op, and ovreduce's states of the layers ``names``."""
    model = ov.Core().read_model(xml)
    expected = {op.get_friendly_name(): _shape(op.get_output_partial_shape(0)) for op in model.get_ops()}
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir)
        got = {layer.name: engine.state((layer.id, layer.outputs[0].id)) for layer in ir.layers if layer.name in names}
    finally:
        ir.close()
    return expected, got


@pytest.mark.parametrize("then", list(THEN))
@pytest.mark.parametrize("pinned", list(PINNED))
def test_a_value_whose_bounds_meet_is_a_constant_to_every_op_after_it(pinned: str, then: str, tmp_path: Path) -> None:
    x = opset13.parameter(ov.PartialShape([ov.Dimension(1, 4), ov.Dimension(3, 6)]), ov.Type.f32, name="x")
    value = THEN[then](PINNED[pinned](_dim(x, 1)))
    pad = opset13.pad(x, opset13.concat([_c([1]), value], 0), _c([0, 0]), "constant")
    pad.set_friendly_name("pad")
    target = opset13.concat([_c([2]), opset13.abs(value), _c([3])], 0)
    broadcast = opset13.broadcast(_c([1.0], np.float32), target)
    broadcast.set_friendly_name("broadcast")
    red = opset13.reduce_sum(pad, _c([0]), False)
    red.set_friendly_name("red")
    model = ov.Model([opset13.result(red), opset13.result(broadcast)], [x], "m")
    xml = tmp_path / "m.xml"
    ov.save_model(model, xml, compress_to_fp16=False)
    names = ["pad", "broadcast", "red"]
    expected, got = _both(xml, names)
    assert {n: got[n].shape for n in names} == {n: expected[n] for n in names}


def _padded_in_part(x: Node) -> Node:
    begin = opset13.concat([opset13.abs(opset13.subtract(_dim(x, 0), _c([4]))), _c([4]), _c([0])], 0)
    return opset13.pad(x, begin, _c([0, 0, 0]), "constant")


def _sized_in_part(x: Node) -> Node:
    product = opset13.reduce_prod(opset13.gather(opset13.shape_of(x), _c([0, 1]), _c(0)), _c([0]), True)
    sizes = opset13.concat([_c([3]), opset13.abs(opset13.subtract(product, _c([8])))], 0)
    return opset13.interpolate(x, sizes, "nearest", "sizes", axes=_c([1, 2]))


@pytest.mark.parametrize(
    ("make", "fixed"), [(_padded_in_part, [1]), (_sized_in_part, [0, 1])], ids=["pad", "interpolate-sizes"]
)
def test_a_shape_input_known_in_part_keeps_the_dims_its_known_elements_fix(
    make: Callable[[Node], Node], fixed: list[int], tmp_path: Path
) -> None:
    """The element ovreduce does not bound (an Abs of a value that may be either side of 0) leaves its own dim
    unknown; the dims the other elements fix are OpenVINO's, and the others at most as wide as OpenVINO's."""
    x = opset13.parameter(ov.PartialShape([ov.Dimension(1, 5), 3, -1]), ov.Type.f32, name="x")
    op = make(x)
    op.set_friendly_name("op")
    red = opset13.reduce_sum(op, _c([2]), True)
    red.set_friendly_name("red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([opset13.result(red)], [x], "m"), xml, compress_to_fp16=False)
    expected, got = _both(xml, ["op", "red"])
    assert "may be known to OpenVINO" in got["op"].reason  # the dim left unknown says why
    for name in ("op", "red"):
        want, have = expected[name], got[name].shape
        assert have is not None and have.dims is not None and want.dims is not None
        assert len(have.dims) == len(want.dims), (name, want, have)
        for i, (w, h) in enumerate(zip(want.dims, have.dims, strict=True)):
            if i in fixed:
                assert h == w, (name, i, want, have)
            else:
                assert h == w or h == Dimension.dynamic(), (name, i, want, have)
