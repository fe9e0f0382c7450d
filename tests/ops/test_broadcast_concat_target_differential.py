"""A Broadcast whose target a Concat puts together of one-element pieces OpenVINO cannot evaluate (a dim of a ShapeOf
of a dynamic rank, a Parameter's value, a Floor of a dim) next to Consts, against the installed OpenVINO's reader:
OpenVINO keeps each Const piece's value as a dim of the target (and the others dynamic) in every mode, so ovreduce
must infer the shape ``read_model`` infers, for every data shape and mode, and for the layers after it (a Squeeze
that keeps the static dim, a reduction over it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset1, opset13

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import Dimension, PartialShape

Node = ov.Node
Target = Callable[[Node, Node, Node], Node]


def _c(values: object, dtype: type = np.int64) -> Node:
    return opset13.constant(np.array(values, dtype=dtype))


def _dim0(x: Node) -> Node:
    return opset13.gather(opset13.shape_of(x), _c([0]), _c(0))


TARGETS: dict[str, Target] = {
    "dim-then-const": lambda x, p, y: opset13.concat([_dim0(x), _c([2])], 0),
    "const-then-dim": lambda x, p, y: opset13.concat([_c([3]), _dim0(x)], 0),
    "param-then-const": lambda x, p, y: opset13.concat([p, _c([2])], 0),
    "three-pieces": lambda x, p, y: opset13.concat([_dim0(x), _c([2]), _dim0(x)], 0),
    "scalar-dim-unsqueezed": lambda x, p, y: opset13.concat(
        [opset13.unsqueeze(opset13.gather(opset13.shape_of(x), _c(0), _c(0)), _c(0)), _c([1]), _c([4])], 0
    ),
    "dim-plus-one": lambda x, p, y: opset13.concat([opset13.add(_dim0(x), _c([1])), _c([2])], 0),
    "zero-dim": lambda x, p, y: opset13.concat([_dim0(x), _c([0])], 0),
    "minus-one-piece": lambda x, p, y: opset13.concat([_dim0(x), _c([-1]), _c([2])], 0),
    "negative-piece": lambda x, p, y: opset13.concat([_c([-3]), _dim0(x), _c([2])], 0),
    "convert-is-no-const": lambda x, p, y: opset13.concat([_dim0(x), opset13.convert(_c([2], np.int32), "i64")], 0),
    "more-elements-than-pieces": lambda x, p, y: opset13.concat([_dim0(x), _c([2, 5])], 0),
    "floor-of-a-ranked-dim": lambda x, p, y: opset13.concat(
        [
            _c([4]),
            opset13.convert(
                opset13.floor(opset13.divide(opset13.convert(_dim0(y), "f32"), _c(2.0, np.float32))), "i64"
            ),
            _c([3]),
        ],
        0,
    ),
    "i32-pieces": lambda x, p, y: opset13.concat(
        [opset13.gather(opset13.shape_of(x, "i32"), _c([0], np.int32), _c(0, np.int32)), _c([2], np.int32)], 0
    ),
}

DATA: dict[str, Callable[[Node], Node]] = {
    "const-1": lambda x: _c([1.0], np.float32),
    "const-3x1": lambda x: _c([[1.0], [1.0], [1.0]], np.float32),
    "dynamic-rank": lambda x: x,
}


def _shape(pshape: ov.PartialShape) -> PartialShape:
    if pshape.rank.is_dynamic:
        return PartialShape(None)
    return PartialShape(tuple(Dimension.static(d.get_length()) if d.is_static else Dimension.dynamic() for d in pshape))


def _model(folder: Path, target: Target, data: Callable[[Node], Node], mode: str) -> Path:
    x = opset13.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="x")
    p = opset13.parameter(ov.PartialShape([1]), ov.Type.i64, name="p")
    y = opset13.parameter(ov.PartialShape([-1, 3, 4]), ov.Type.f32, name="y")
    t = target(x, p, y)
    d = data(x)
    if mode == "explicit":
        b = opset13.broadcast(_c([1.0], np.float32), t, _c([0]), "explicit")
    else:  # (pdpd: written numpy, then its mode rewritten in the IR; the Python API builds no Broadcast-3 pdpd)
        b = opset13.broadcast(d, t, "numpy" if mode == "pdpd" else mode)
    b.set_friendly_name("op")
    squeezed = opset1.squeeze(b, _c([-1]))
    squeezed.set_friendly_name("squeezed")
    red = opset13.reduce_sum(b, _c([0]), True)
    red.set_friendly_name("red")
    model = ov.Model([opset13.result(red), opset13.result(squeezed)], [x, p, y], "m")
    xml = folder / "m.xml"
    ov.save_model(model, xml, compress_to_fp16=False)
    if mode == "pdpd":
        text = xml.read_text()
        assert text.count('mode="numpy"') == 1
        xml.write_text(text.replace('mode="numpy"', 'mode="pdpd"'))
    return xml


def _ovreduce(xml: Path, names: list[str]) -> dict[str, PartialShape | None]:
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir)
        out: dict[str, PartialShape | None] = {}
        for layer in ir.layers:
            if layer.name in names:
                out[layer.name] = engine.state((layer.id, layer.outputs[0].id)).shape
        return out
    finally:
        ir.close()


@pytest.mark.parametrize("mode", ["numpy", "bidirectional", "explicit", "pdpd"])
def test_a_concat_target_keeps_its_const_pieces_as_openvino_does(mode: str, tmp_path: Path) -> None:
    core = ov.Core()
    wrong, compared = [], 0
    for tname, target in TARGETS.items():
        for dname, data in DATA.items():
            if mode == "explicit" and dname != "const-1":
                continue
            folder = tmp_path / f"{tname}-{dname}"
            folder.mkdir()
            try:
                xml = _model(folder, target, data, mode)
            except RuntimeError:  # OpenVINO refuses to build it: nothing to compare
                continue
            try:
                model = core.read_model(xml)
            except RuntimeError:  # refused: ovreduce's refusals are compared elsewhere
                continue
            expected = {op.get_friendly_name(): _shape(op.get_output_partial_shape(0)) for op in model.get_ops()}
            names = ["op", "squeezed", "red"]
            got = _ovreduce(xml, names)
            compared += 1
            for name in names:
                if got.get(name) != expected[name]:
                    wrong.append(f"{tname} {dname} {name}: OpenVINO {expected[name]}, ovreduce {got.get(name)}")
    assert compared >= 10
    assert not wrong, "\n".join(wrong)
