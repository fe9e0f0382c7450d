"""The native shape rules against the installed OpenVINO runtime: every layer output of random op chains
(tests/ops/gen_chains.py), as ``read_model`` infers it and again after ``Model.reshape`` with random new
input shapes (static, dynamic, intervals), must be what ovreduce's shape engine infers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .gen_chains import _const, build_model, new_shape
from .test_reduce_differential import to_shape

SEED = 4242
MODELS = 25
CHAINS = 8  # 200 chains


def _compare(engine: ShapeEngine, model: Any) -> list[str]:
    """Every layer output whose shape differs (and a line when too few were compared to mean anything)."""
    layers = {layer.name: layer for layer in engine.model.layers}
    wrong = []
    compared = 0
    for node in model.get_ordered_ops():
        layer = layers.get(node.get_friendly_name())
        if layer is None or node.get_type_name() in ("Result", "Constant"):
            continue
        for index, port in enumerate(layer.outputs):
            expected = to_shape(node.get_output_partial_shape(index))
            state = engine.state((layer.id, port.id))
            compared += 1
            if state.origin == "unresolved" and "SmartReshape" in state.reason:
                continue  # a layer OpenVINO's reshape rewrites first, left to its inference (check asks it)
            if state.shape != expected:
                wrong.append(
                    f"{layer.type} {layer.name!r} output {index}: ovreduce {state.shape} ({state.origin} "
                    f"{state.reason}), OpenVINO {expected}"
                )
    if compared < 4 * CHAINS:
        wrong.append(f"only {compared} layer outputs compared")
    return wrong


@pytest.mark.parametrize("index", range(MODELS), ids=[f"s{SEED}-m{i:02d}" for i in range(MODELS)])
def test_every_layer_shape_matches_openvino(index: int, tmp_path: Path) -> None:
    seed = SEED + index
    built, chains = build_model(seed, CHAINS)
    xml = tmp_path / "chains.xml"
    ov.save_model(built, str(xml), compress_to_fp16=False)
    ir = load_ir(xml)
    try:
        _check(ir, xml, chains, seed)
    finally:
        ir.close()


@pytest.mark.parametrize("index", range(0, MODELS, 3), ids=[f"s{SEED}-m{i:02d}" for i in range(0, MODELS, 3)])
def test_every_layer_shape_matches_openvino_with_fp16_compressed_constants(index: int, tmp_path: Path) -> None:
    """Saved as ``ov.save_model`` saves by default (and optimum-intel exports): each float constant f16, behind a
    Convert marked ``decompression``, whose value OpenVINO does not compute as it reads the model (an Interpolate's
    scales, a float shape computation): the dims after it are dynamic to OpenVINO, and must be to ovreduce."""
    seed = SEED + index
    built, chains = build_model(seed, CHAINS)
    xml = tmp_path / "chains.xml"
    ov.save_model(built, str(xml))
    assert b'name="decompression"' in xml.read_bytes()
    ir = load_ir(xml)
    try:
        _check(ir, xml, chains, seed)
    finally:
        ir.close()


def _check(ir: Any, xml: Path, chains: list[Any], seed: int) -> None:
    core = ov.Core()

    assert _compare(ShapeEngine(ir), core.read_model(str(xml))) == []

    rng = random.Random(seed)
    reshape = {
        c.param.get_friendly_name(): new_shape(rng, [int(d) for d in c.param.get_partial_shape().to_shape()],
                                               c)
        for c in chains
    }  # fmt: skip
    model = core.read_model(str(xml))
    engine = ShapeEngine(ir, {name: PartialShape.parse(text) for name, text in reshape.items()})
    try:
        model.reshape({name: ov.PartialShape(text) for name, text in reshape.items()})
    except RuntimeError as exc:  # then ovreduce must refuse a layer too
        refusal = str(exc).splitlines()[0]
    else:
        refusal = ""
    if refusal:
        refused = [s.reason for s in (engine.state(r) for r in _outputs(ir)) if s.origin == "unresolved"]
        assert refused, f"OpenVINO refuses reshape {reshape} ({refusal}); ovreduce accepts it"
        return
    assert _compare(engine, model) == [], f"reshape {reshape}; chains {[c.steps for c in chains]}"


def _outputs(ir: Any) -> list[tuple[str, str]]:
    return [(layer.id, port.id) for layer in ir.layers for port in layer.outputs]


# -- shapes put together from ShapeOf's dims, as exports build them ---------------------------------------------
def _dim(x: Any, i: int) -> Any:
    return ops.gather(ops.shape_of(x, "i64"), ops.constant(np.array([i], np.int64)), ops.constant(np.int64(0)))


def _assembled(case: str) -> ov.Model:
    """One pattern of an export (an attention mask's expand, torch.chunk, a table repeated per batch), a ReduceMean
    of its result beside it."""
    if case == "variadic-split-runtime-lengths":  # only the split dim is unknown
        x, lengths = ops.parameter([1, 256, 8], np.float32), ops.parameter([2], np.int64)
        out, inputs = ops.variadic_split(x, ops.constant(np.int64(1)), lengths).output(0), [x, lengths]
    elif case == "reshape-to-shapeof-dims":  # [batch, 1, 1, seq]
        m = ops.parameter([-1, -1], np.float32)
        out, inputs = ops.reshape(m, ops.concat([_dim(m, 0), _const([1, 1], np.int64), _dim(m, 1)], 0), False), [m]
    elif case == "reshape-shapeof-dims-and-minus-one":
        x = ops.parameter([-1, -1, 64], np.float32)
        out, inputs = ops.reshape(x, ops.concat([_dim(x, 0), _dim(x, 1), _const([4, -1], np.int64)], 0), False), [x]
    elif case == "reshape-special-zero-beside-shapeof-dims":
        x = ops.parameter([-1, -1], np.float32)
        out, inputs = ops.reshape(x, ops.concat([_dim(x, 0), _const([0], np.int64), _dim(x, 1)], 0), True), [x]
    elif case == "tile-by-batch":
        p, table = ops.parameter([-1, -1], np.int64), ops.constant(np.ones((256, 8), np.float32))
        out, inputs = ops.tile(table, ops.concat([_dim(p, 0), _const([1, 1], np.int64)], 0)), [p]
    elif case == "broadcast-numpy-to-shapeof-dims":  # a data dim 5 under a target dim known at run time only
        x, y = ops.parameter([5, 1, -1], np.float32), ops.parameter([-1, -1], np.float32)
        out, inputs = ops.broadcast(x, ops.concat([_dim(y, 0), _const([4], np.int64), _dim(y, 1)], 0)), [x, y]
    elif case == "reshape-beside-a-type-maximum":  # OpenVINO's partial value knows no dim of the type's maximum
        x = ops.parameter([-1, -1], np.float32)
        target = ops.concat([_dim(x, 0), ops.constant(np.array([2**63 - 1], np.int64))], 0)
        out, inputs = ops.reshape(x, target, False), [x]
    elif case == "broadcast-to-an-i32-shapeof-of-the-type-maximum":
        x, y = ops.parameter([8], np.float32), ops.parameter([-1, 2**31 - 1], np.float32)
        out, inputs = ops.broadcast(x, ops.shape_of(y, "i32")), [x, y]
    elif case == "expand-to-a-target-of-reshaped-dims":  # bart's mask expand: [batch, 1, batch, seq] from scalars
        mask, ids = ops.parameter([-1, 1, -1, -1], np.float32), ops.parameter([-1, -1], np.int64)
        batch = ops.reshape(ops.gather(ops.shape_of(ids), _const(0, np.int64), _const(0, np.int64)),
                            _const([1], np.int64), False)  # fmt: skip
        seq = ops.unsqueeze(
            ops.gather(ops.shape_of(ids), _const(1, np.int64), _const(0, np.int64)), _const(0, np.int64)
        )
        target = ops.concat([batch, _const([1], np.int64), batch, seq], 0)
        out, inputs = ops.broadcast(mask, target, broadcast_spec="BIDIRECTIONAL"), [mask, ids]
    elif case == "expand-to-a-target-with-a-computed-dim":  # the repeat of KV heads: [batch, 2, 2, past + seq, 16]
        kv = ops.parameter([-1, 2, 1, -1, 16], np.float32)
        length = ops.add(_dim(kv, 3), _const([1], np.int64))  # a dim computed at run time: none of it known
        target = ops.concat([ops.gather(ops.shape_of(kv), _const([0, 1], np.int64), _const(0, np.int64)),
                             _const([2], np.int64), length, _const([16], np.int64)], 0)  # fmt: skip
        out, inputs = ops.broadcast(kv, target, broadcast_spec="BIDIRECTIONAL"), [kv]
    elif case == "expand-to-a-target-converted-to-i32":  # falcon's mask: the dims converted to i32 before the Concat
        mask, ids = ops.parameter([-1, 1, -1, -1], np.float32), ops.parameter([-1, -1], np.int64)
        batch, seq = ops.convert(_dim(ids, 0), "i32"), ops.convert(_dim(ids, 1), "i32")
        target = ops.concat([batch, _const([1], np.int32), seq, seq], 0)
        out, inputs = ops.broadcast(mask, target, broadcast_spec="BIDIRECTIONAL"), [mask, ids]
    elif case == "reshape-to-a-target-with-a-floored-dim":  # swin's windows: a Floor has no bounds in OpenVINO
        x = ops.parameter([-1, -1, 12], np.float32)
        half = ops.floor(ops.divide(_dim(x, 0), _const([2], np.int64)))
        out = ops.reshape(x, ops.concat([half, _const([2], np.int64), _dim(x, 1), _const([-1], np.int64)], 0), False)
        inputs = [x]
    elif case == "torch-chunk-lengths":  # torch.chunk(2, dim=1) as the PyTorch frontend writes its split lengths
        x = ops.parameter([1, 256, 8], np.float32)
        d = ops.gather(ops.shape_of(x, "i32"), ops.constant(np.int64(1)), ops.constant(np.int32(0)))
        odd = ops.greater(ops.floor_mod(d, _const(2, np.int32)), _const(0, np.int32))
        first = ops.unsqueeze(ops.add(ops.divide(d, _const(2, np.int32)), ops.convert(odd, "i32")), _const(0, np.int64))
        lengths = ops.concat([first, _const([-1], np.int32)], 0)
        out, inputs = ops.variadic_split(x, ops.constant(np.int64(1)), lengths).output(0), [x]
    elif case == "reshape-to-reductions-and-tests-of-the-shape":  # [min, max, all(d > 5 and not d < 0)]
        x = ops.parameter([6, 8], np.float32)
        shape = ops.shape_of(x, "i64")
        test = ops.logical_and(ops.greater(_dim(x, 0), _const(5, np.int64)),
                               ops.logical_not(ops.less(_dim(x, 1), _const(0, np.int64))))  # fmt: skip
        ones = ops.convert(ops.logical_or(test, ops.logical_xor(test, test)), "i64")
        target = ops.concat([ops.reduce_min(shape, _const([0], np.int64), True),
                             ops.reduce_max(shape, _const([0], np.int64), True), ones], 0)  # fmt: skip
        out, inputs = ops.reshape(x, target, False), [x]
    elif case == "flatten-to-the-size":  # ONNX's Size: ReduceProd of ShapeOf
        x = ops.parameter([4, 6, 8], np.float32)
        size = ops.reduce_prod(ops.shape_of(x, "i64"), _const([0], np.int64), True)
        out, inputs = ops.reshape(x, ops.concat([size, _const([1], np.int64)], 0), False), [x]
    elif case == "if-on-a-condition-of-the-shape":  # OpenVINO infers the branch taken only: [1, 2, 3], not rank ?
        x = ops.parameter([2, 3], np.float32)
        size = ops.reduce_prod(ops.shape_of(x, "i64"), _const([0], np.int64), False)
        cond = ops.logical_not(ops.equal(size, _const(0, np.int64)))
        branch = ops.if_op(cond.output(0))
        then_x, else_x = ops.parameter([2, 3], np.float32), ops.parameter([2, 3], np.float32)
        then_out = ops.result(ops.unsqueeze(then_x, _const(0, np.int64)))
        else_out = ops.result(ops.relu(else_x))
        branch.set_then_body(ov.Model([then_out], [then_x]))
        branch.set_else_body(ov.Model([else_out], [else_x]))
        branch.set_input(x.output(0), then_x, else_x)
        out, inputs = branch.set_output(then_out, else_out), [x]
    else:  # bidirectional
        x, y = ops.parameter([-1, 1, 8], np.float32), ops.parameter([-1, 3], np.float32)
        target = ops.concat([_dim(y, 0), _const([4, 1], np.int64)], 0)
        out, inputs = ops.broadcast(x, target, broadcast_spec="BIDIRECTIONAL"), [x, y]
    return ov.Model([ops.reduce_mean(out, _const([-1], np.int64), True)], inputs, case)


@pytest.mark.parametrize(
    "case",
    ["variadic-split-runtime-lengths", "reshape-to-shapeof-dims", "reshape-shapeof-dims-and-minus-one",
     "reshape-special-zero-beside-shapeof-dims", "tile-by-batch", "broadcast-numpy-to-shapeof-dims",
     "broadcast-bidirectional-to-shapeof-dims", "reshape-beside-a-type-maximum",
     "broadcast-to-an-i32-shapeof-of-the-type-maximum", "torch-chunk-lengths", "expand-to-a-target-of-reshaped-dims",
     "expand-to-a-target-with-a-computed-dim", "expand-to-a-target-converted-to-i32",
     "reshape-to-reductions-and-tests-of-the-shape", "flatten-to-the-size", "if-on-a-condition-of-the-shape"],
)  # fmt: skip
def test_a_shape_put_together_from_shapeof_dims_is_known_as_openvino_knows_it(case: str, tmp_path: Path) -> None:
    """The dims a target or repeats holds as constants, or as dims ShapeOf gives, stay known through Concat into the
    Reshape, Broadcast or Tile (OpenVINO's partial values); they were all dynamic, and the reduction after them too."""
    shape, wrong = _against_openvino(case, tmp_path)
    assert wrong == [] and shape is not None and any(d.is_static for d in shape.dims or ()), (wrong, shape)


def test_a_target_holding_a_value_openvino_cannot_bound_is_unknown_to_a_reshape(tmp_path: Path) -> None:
    """A Floor of a dim known at run time only has no bounds in OpenVINO: the whole Concat it is part of is unknown to
    a Reshape (every dim dynamic, its constant 2 included), as it is to ovreduce, never more precise."""
    shape, wrong = _against_openvino("reshape-to-a-target-with-a-floored-dim", tmp_path)
    assert wrong == [] and shape is not None and shape.dims is not None, (wrong, shape)
    assert not any(d.is_static for d in shape.dims[:3]), shape  # (the reduction keeps its last dim, as 1)


def _against_openvino(case: str, tmp_path: Path) -> tuple[PartialShape | None, list[str]]:
    """The shape of the case's reduction, and every layer whose shape is not OpenVINO's."""
    xml = tmp_path / "m.xml"
    ov.save_model(_assembled(case), str(xml), compress_to_fp16=False)
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir)
        wrong = [line for line in _compare(engine, ov.Core().read_model(str(xml))) if "compared" not in line]
        reduced = next(layer for layer in ir.layers if layer.type == "ReduceMean")
        shape = engine.state((reduced.id, reduced.outputs[0].id)).shape
    finally:
        ir.close()
    return shape, wrong
