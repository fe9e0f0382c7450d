"""FakeQuantize (nncf's int8 quantization: one before every Convolution and MatMul) and FakeConvert (FP8 emulation)
against the installed OpenVINO: IRs of random data, range, scale and shift shapes (static, interval and dynamic dims, a
dynamic rank now and then) and ``auto_broadcast`` modes, read as they are and reshaped at random. Each layer's shape
and the quantizing layer's element type must be OpenVINO's, and where OpenVINO refuses the model or the reshape,
ovreduce must refuse the layer in OpenVINO's words."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine
from ovreduce.ops.base import PortState
from ovreduce.shapes import PartialShape

from ..ir.irxml import edge, layer, net, port
from .test_shape_bounds import _differences

DIMS = ["1", "2", "3", "5", "?", "2..4", "1..", "0..3", "1..5"]
_PRECISIONS = {"f32": "FP32", "f16": "FP16", "bf16": "BF16", "i32": "I32", "boolean": "BOOL", "u8": "U8",
               "dynamic": "UNSPECIFIED"}  # fmt: skip


def _dims(text: str) -> list[int]:
    """A port's ``<dim>``s for a shape in OpenVINO's syntax (-1 where a dim is not static)."""
    if text == "...":
        return []
    return [int(d) if d.isdigit() else -1 for d in text.split(",") if d]


def _like(rng: random.Random, dim: str) -> str:
    """A dim of a range or scale beside a data dim: 1, the same, within it, or another (now and then a misfit)."""
    roll = rng.random()
    if roll < 0.35:
        return "1"
    if roll < 0.75:
        return dim
    if roll < 0.85 and ".." in dim:
        lo, _, hi = dim.partition("..")
        return str(max(int(lo or 0), 1) + (1 if hi else 2))
    return rng.choice(DIMS)


def _shape(rng: random.Random) -> str:
    """A data shape: a dynamic rank now and then, else rank 0 to 4 of any dims."""
    if rng.random() < 0.05:
        return "..."
    return ",".join(rng.choice(DIMS) for _ in range(rng.randint(0, 4)))


def _beside(rng: random.Random, data: str, mode: str) -> str:
    """A range's (or a scale's) shape beside the data's, as ``mode`` broadcasts it, a misfit now and then."""
    if data == "..." or rng.random() < 0.04:
        return _shape(rng)
    dims = data.split(",") if data else []
    if mode in ("none", "explicit"):
        return ",".join(_like(rng, d) if rng.random() < 0.1 else d for d in dims)
    if mode == "pdpd":  # from axis 0 (how the reader gives it), trailing ones ignored
        head = dims[: rng.randint(0, len(dims))]
        return ",".join([*(_like(rng, d) if rng.random() < 0.2 else d for d in head), *(["1"] * rng.randint(0, 1))])
    rank = rng.randint(0, len(dims) + (1 if rng.random() < 0.1 else 0))
    tail = dims[len(dims) - rank :] if rank <= len(dims) else ["1", *dims]
    return ",".join(_like(rng, d) for d in tail)


def _parameter(lid: int, name: str, shape: str, etype: str) -> str:
    return layer(lid, name, "Parameter", data={"shape": shape, "element_type": etype},
                 outputs=[port(0, _dims(shape), _PRECISIONS[etype], names=name)])  # fmt: skip


def _ir(op: str, shapes: list[str], etypes: list[str], data: dict[str, str]) -> str:
    """Parameters of ``shapes`` and ``etypes`` -> the op ``q`` -> Convert to f32 (of any type) -> ReLU -> Result."""
    version = "opset1" if op == "FakeQuantize" else "opset13"
    names = ["x", "a", "b", "c", "d"][: len(shapes)]
    layers = [_parameter(i, n, s, t) for i, (n, s, t) in enumerate(zip(names, shapes, etypes, strict=True))]
    ins = [port(i, _dims(s), _PRECISIONS[t]) for i, (s, t) in enumerate(zip(shapes, etypes, strict=True))]
    out = _dims(shapes[0])
    precision = _PRECISIONS[etypes[0]]
    layers += [
        layer(10, "q", op, version=version, data=data, inputs=ins, outputs=[port(len(shapes), out, precision)]),
        layer(11, "f32", "Convert", data={"destination_type": "f32"}, inputs=[port(0, out, precision)],
              outputs=[port(1, out)]),
        layer(12, "after", "ReLU", inputs=[port(0, out)], outputs=[port(1, out)]),
        layer(13, "out", "Result", inputs=[port(0, out)]),
    ]  # fmt: skip
    edges = [edge(i, 0, 10, i) for i in range(len(shapes))]
    edges += [edge(10, len(shapes), 11, 0), edge(11, 1, 12, 0), edge(12, 1, 13, 0)]
    return net(layers, edges)


def _fake_quantize(rng: random.Random) -> tuple[str, list[str], list[str], dict[str, str]]:
    mode = rng.choice(["numpy"] * 6 + ["none", "none", "pdpd", "explicit"])
    data = _shape(rng)
    etypes = [rng.choice(["f32"] * 6 + ["f16", "i32", "boolean"])] + [rng.choice(["f32"] * 8 + ["f16", "u8"])] * 4
    ranges = [_beside(rng, data, mode) for _ in range(4)]
    return "FakeQuantize", [data, *ranges], etypes, {"levels": "256", "auto_broadcast": mode}


def _fake_convert(rng: random.Random) -> tuple[str, list[str], list[str], dict[str, str]]:
    data = _shape(rng)
    scale = _beside(rng, data, "numpy")
    shapes = [data, scale]
    roll = rng.random()
    if roll < 0.6:
        shapes.append(scale if roll < 0.45 else _beside(rng, data, "numpy"))
    etype = rng.choice(["f32"] * 4 + ["f16", "bf16"])
    etypes = [etype] * len(shapes)
    if rng.random() < 0.1:  # mixed types, or types FakeConvert does not take
        etypes[rng.randrange(len(shapes))] = rng.choice(["f16", "i32", "u8"])
    return "FakeConvert", shapes, etypes, {"destination_type": rng.choice(["f8e4m3", "f8e5m2"])}


def _reshaped(rng: random.Random, shapes: list[str], op: str) -> dict[str, str]:
    """New shapes of the Parameters: the data's rank kept or not, the others beside it."""
    data = shapes[0] if rng.random() < 0.5 and shapes[0] != "..." else _shape(rng)
    data = ",".join(rng.choice(DIMS) if rng.random() < 0.5 else d for d in data.split(",")) if data else data
    names = ["x", "a", "b", "c", "d"][: len(shapes)]
    mode = "numpy" if op == "FakeConvert" else rng.choice(["numpy", "none"])
    return {n: f"[{s}]" for n, s in zip(names, [data, *(_beside(rng, data, mode) for _ in shapes[1:])], strict=True)}


def _refused_alike(state: PortState, refusal: str, op: str) -> str:
    """'' where ovreduce refuses the layer ``q`` in OpenVINO's words, else what it says instead."""
    said = state.reason.partition(f"{op} (q): ")[2]
    if state.shape is None and said and said in " ".join(refusal.split()):
        return ""
    return f"ovreduce {state.shape} {state.reason!r}, OpenVINO refuses it: {refusal.splitlines()[-1]}"


def _compare(case: int, xml: Path, op: str, shapes: list[str], rng: random.Random) -> tuple[list[str], int, int]:
    """The differences from OpenVINO of the model read as it is and reshaped: (lines, outputs compared, refusals)."""
    core, wrong, compared, refused = ov.Core(), [], 0, 0
    ir = load_ir(xml)
    try:
        (q,) = [lay for lay in ir.layers if lay.name == "q"]
        reshape = _reshaped(rng, shapes, op)
        for given in (None, reshape):
            engine = ShapeEngine(ir, None if given is None else {k: PartialShape.parse(v) for k, v in given.items()})
            state = engine.state((q.id, q.outputs[0].id))
            try:
                model = core.read_model(str(xml))
                if given is not None:
                    model.reshape({k: ov.PartialShape(v) for k, v in given.items()})
            except RuntimeError as exc:
                refused += 1
                said = _refused_alike(state, str(exc), op)
                wrong += [f"case {case} {shapes} reshape {given}: {said}"] if said else []
                if given is None:  # (nothing to reshape)
                    break
                continue
            compared += 1
            wrong += [f"case {case} {shapes} reshape {given}: {line}" for line in _differences(engine, model)]
            node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "q")
            etype = node.get_output_element_type(0).get_type_name()
            if state.element_type is None or state.element_type.name != etype:
                wrong.append(f"case {case} {shapes}: ovreduce's type {state.element_type}, OpenVINO's {etype}")
    finally:
        ir.close()
    return wrong, compared, refused


@pytest.mark.parametrize("op", ["FakeQuantize", "FakeConvert"])
@pytest.mark.parametrize("seed", range(3))
def test_the_shape_of_a_random_quantizing_layer_is_openvinos(op: str, seed: int, tmp_path: Path) -> None:
    rng = random.Random(f"{op}{seed}")
    wrong, compared, refused = [], 0, 0
    for case in range(150):
        kind, shapes, etypes, data = (_fake_quantize if op == "FakeQuantize" else _fake_convert)(rng)
        xml = tmp_path / f"{case}.xml"
        xml.write_text(_ir(kind, shapes, etypes, data))
        xml.with_suffix(".bin").write_bytes(b"")
        lines, seen, said = _compare(case, xml, op, shapes, rng)
        wrong += lines
        compared += seen
        refused += said
    assert compared >= 150 and refused >= 20, (compared, refused)
    assert wrong == [], "\n".join(wrong)


# -- what OpenVINO reads of the layer: its attributes, its element types ------------------------------------------
@pytest.mark.parametrize(
    ("op", "data", "etypes"),
    [
        ("FakeQuantize", {"levels": "256", "auto_broadcast": "numpy"}, ["i32", "f32"]),  # any type: the data's
        ("FakeQuantize", {"levels": "256", "auto_broadcast": "numpy"}, ["boolean", "u8"]),
        ("FakeQuantize", {"levels": "abc", "auto_broadcast": "numpy"}, ["f32", "f32"]),  # no number
        ("FakeQuantize", {"levels": "+7", "auto_broadcast": "numpy"}, ["f32", "f32"]),
        ("FakeQuantize", {"levels": "-1", "auto_broadcast": "numpy"}, ["f32", "f32"]),  # read, as size_t
        ("FakeQuantize", {"levels": "3.5"}, ["f32", "f32"]),  # 3; auto_broadcast numpy when absent
        ("FakeQuantize", {"levels": "256", "auto_broadcast": "NUMPY"}, ["f32", "f32"]),
        ("FakeQuantize", {"levels": "256", "auto_broadcast": "bad"}, ["f32", "f32"]),
        ("FakeQuantize", {"levels": "256", "auto_broadcast": "none"}, ["f32", "f32"]),  # [3] does not merge
        ("FakeConvert", {"destination_type": "f8e5m2"}, ["f16", "f16"]),
        ("FakeConvert", {"destination_type": "F8E4M3"}, ["bf16", "bf16"]),
        ("FakeConvert", {}, ["f32", "f32"]),  # f8e4m3 when absent
        ("FakeConvert", {"destination_type": "f16"}, ["f32", "f32"]),  # not an 8-bit float
        ("FakeConvert", {"destination_type": "f8e8m0"}, ["f32", "f32"]),
        ("FakeConvert", {"destination_type": "undefined"}, ["f32", "f32"]),
        ("FakeConvert", {"destination_type": "bad"}, ["f32", "f32"]),
        ("FakeConvert", {"destination_type": " f8e4m3"}, ["f32", "f32"]),
        ("FakeConvert", {"destination_type": "f8e4m3"}, ["f32", "f16"]),  # mixed types
        ("FakeConvert", {"destination_type": "f8e4m3"}, ["i32", "i32"]),
        ("FakeConvert", {"destination_type": "f16"}, ["i32", "f32"]),  # the destination is judged first
        ("FakeConvert", {"destination_type": "f8e4m3"}, ["dynamic", "f16"]),  # the scale's type, then
        ("FakeConvert", {"destination_type": "f8e4m3"}, ["dynamic", "i32"]),
    ],
)
def test_a_quantizing_layer_is_read_as_openvino_reads_it(
    op: str, data: dict[str, str], etypes: list[str], tmp_path: Path
) -> None:
    """A layer OpenVINO reads comes out in its shape and type, check clean; one it refuses is refused at that layer,
    in its words, and check reports it."""
    count = 5 if op == "FakeQuantize" else 2
    xml = tmp_path / "m.xml"
    xml.write_text(_ir(op, ["2,3", *["3"] * (count - 1)], [*etypes, *[etypes[-1]] * (count - 2)], data))
    xml.with_suffix(".bin").write_bytes(b"")
    try:
        node = next(n for n in ov.Core().read_model(str(xml)).get_ordered_ops() if n.get_friendly_name() == "q")
        refusal = ""
    except RuntimeError as exc:
        refusal = str(exc)
    ir = load_ir(xml)
    try:
        (q,) = [lay for lay in ir.layers if lay.name == "q"]
        state = ShapeEngine(ir).state((q.id, q.outputs[0].id))
        report = check_model(ir, engine="native")
    finally:
        ir.close()
    if refusal:
        assert _refused_alike(state, refusal, op) == ""
        assert [f.code for f in report.findings if f.layer_name == "q"] == ["layer-invalid"], report.findings
    else:
        assert state.shape == PartialShape.static([2, 3]), state
        assert state.element_type is not None
        assert state.element_type.name == node.get_output_element_type(0).get_type_name()
        assert report.ok, report.findings


# -- an nncf-quantized convolution --------------------------------------------------------------------------------
def _quantized_conv() -> ov.Model:
    """nncf's pattern: a FakeQuantize of the activations (per tensor) and of the weights (per output channel) before
    a Convolution, one more after its ReLU, and a global mean pooling."""
    x = ops.parameter([-1, 3, -1, -1], np.float32, name="pixel_values")
    low, high = ops.constant(np.float32(-1)), ops.constant(np.float32(1))
    fq_x = ops.fake_quantize(x, low, high, low, high, 256, name="fq_x")
    weights = ops.constant(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32))
    per_channel = [ops.constant(np.full((8, 1, 1, 1), v, np.float32)) for v in (-2, 2, -2, 2)]
    fq_w = ops.fake_quantize(weights, *per_channel, 255, name="fq_w")
    conv = ops.relu(ops.convolution(fq_x, fq_w, [1, 1], [0, 0], [0, 0], [1, 1], name="conv"), name="relu")
    ranges = [ops.constant(np.full((1, 8, 1, 1), v, np.float32)) for v in (0, 4, 0, 4)]
    fq = ops.fake_quantize(conv, *ranges, 256, name="fq")
    pool = ops.reduce_mean(fq, ops.constant(np.array([2, 3], np.int64)), True, name="pool")
    return ov.Model([ops.result(pool)], [x], "quantized")


@pytest.mark.parametrize("reshape", [None, "[2,3,16,16]", "[1..4,3,8..32,?]"])
def test_a_quantized_convolution_keeps_openvinos_dims(reshape: str | None, tmp_path: Path) -> None:
    """The ``1..`` a Convolution infers passes through the FakeQuantize after it (the file declares ``-1``), and under
    a reshape every layer after a FakeQuantize is known, natively, as OpenVINO knows it."""
    xml = tmp_path / "m.xml"
    ov.save_model(_quantized_conv(), str(xml), compress_to_fp16=False)
    model: Any = ov.Core().read_model(str(xml))
    if reshape is not None:
        model.reshape({"pixel_values": ov.PartialShape(reshape)})
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir, None if reshape is None else {"pixel_values": PartialShape.parse(reshape)})
        assert _differences(engine, model) == []
        for q in (lay for lay in ir.layers if lay.type in ("FakeQuantize", "ReduceMean")):
            assert engine.state((q.id, q.outputs[0].id)).origin == "inferred", q.name
    finally:
        ir.close()
    fq = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "fq")
    assert str(fq.get_output_partial_shape(0)) == {None: "[?,8,1..,1..]", "[2,3,16,16]": "[2,8,14,14]"}.get(
        reshape, "[1..4,8,6..30,1..]"
    )
