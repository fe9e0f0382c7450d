"""PReLU (every HiFi-GAN vocoder's activation) and RandomUniform (a dropout kept at inference: SpeechT5's decoder
prenet) against the installed OpenVINO: IRs of random data and slope shapes and types, of random shape, min and max
inputs (constants of any value, ShapeOf of a Parameter taken apart, a Parameter's value), attributes and types, read as
they are and reshaped at random. Each layer's shape and the op's element type must be OpenVINO's, and where OpenVINO
refuses the model or the reshape, ovreduce must refuse the op in OpenVINO's words."""

from __future__ import annotations

import random
from pathlib import Path

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

DIMS = ["1", "2", "3", "5", "?", "2..4", "1..", "0..3"]
_PRECISIONS = {"f32": "FP32", "f16": "FP16", "bf16": "BF16", "i32": "I32", "i64": "I64", "u8": "U8",
               "i16": "I16", "boolean": "BOOL"}  # fmt: skip
_NUMPY = {"f32": "<f4", "f16": "<f2", "bf16": "<f4", "i32": "<i4", "i64": "<i8", "u8": "u1", "boolean": "u1"}


def _dims(text: str) -> list[int]:
    """A port's ``<dim>``s for a shape in OpenVINO's syntax (-1 where a dim is not static)."""
    if text == "...":
        return []
    return [int(d) if d.isdigit() else -1 for d in text.split(",") if d]


def _shape(rng: random.Random, most: int = 4) -> str:
    """A shape: a dynamic rank now and then, else rank 0 to ``most`` of any dims."""
    if rng.random() < 0.05:
        return "..."
    return ",".join(rng.choice(DIMS) for _ in range(rng.randint(0, most)))


class _Net:
    """A model being written: its layers, edges and the .bin of its constants."""

    def __init__(self) -> None:
        self.layers: list[str] = []
        self.edges: list[str] = []
        self.weights = b""
        self.next = 0
        self.parameters: dict[str, str] = {}

    def add(self, name: str, ltype: str, ins: list[tuple[int, str, str]], out: tuple[str, str] | None,
            data: dict[str, str] | None = None, version: str = "opset1") -> tuple[int, str, str]:  # fmt: skip
        """A layer of inputs ``(layer id, dims, type)`` and one output ``(dims, type)``; its output as an input."""
        lid = self.next
        self.next += 1
        ports = [port(i, _dims(dims), _PRECISIONS[etype]) for i, (_, dims, etype) in enumerate(ins)]
        outs = [] if out is None else [port(len(ins), _dims(out[0]), _PRECISIONS[out[1]], names=name)]
        self.layers.append(layer(lid, name, ltype, data=data, inputs=ports, outputs=outs, version=version))
        self.edges += [edge(src, _out_port(src, self), lid, i) for i, (src, _, _) in enumerate(ins)]
        return (lid, out[0], out[1]) if out is not None else (lid, "", "")

    def const(self, name: str, etype: str, shape: str, values: list[float]) -> tuple[int, str, str]:
        info = np.iinfo(_NUMPY[etype]) if etype[0] in "iu" else None
        kept = values if info is None else [min(max(int(v), info.min), info.max) for v in values]
        if etype == "bf16":  # (the upper half of each f32, exact for the values written here)
            raw = (np.array(kept, "<f4").view("<u4") >> 16).astype("<u2").tobytes()
        else:
            raw = np.array(kept, _NUMPY[etype]).tobytes()
        data = {"element_type": etype, "shape": shape, "offset": str(len(self.weights)), "size": str(len(raw))}
        self.weights += raw
        return self.add(name, "Const", [], (shape, etype), data)

    def parameter(self, name: str, shape: str, etype: str) -> tuple[int, str, str]:
        self.parameters[name] = shape
        return self.add(name, "Parameter", [], (shape, etype), {"shape": shape, "element_type": etype})

    def write(self, xml: Path) -> None:
        xml.write_text(net(self.layers, self.edges))
        xml.with_suffix(".bin").write_bytes(self.weights + bytes(8))  # (a Const of no elements needs a file)


def _out_port(lid: int, model: _Net) -> int:
    """The output port id of layer ``lid`` (its inputs come first)."""
    return model.layers[lid].count("<port ") - 1


# -- RandomUniform -------------------------------------------------------------------------------------------------
def _ints(rng: random.Random, count: int) -> list[int]:
    return [rng.choice([-2, -1, 0, 1, 2, 3, 7, 2**31 - 1, 2**62]) if rng.random() < 0.3 else rng.randint(1, 6)
            for _ in range(count)]  # fmt: skip


_FAULTS = ("shape type", "shape rank", "bound type", "bound shape", "order", "output type", "attribute")
"""What a case gets wrong, now and then (one at a time, so that each of OpenVINO's checks is reached)."""
_ODD_ATTRIBUTES = {
    "alignment": ["mock", "pytorch", "PyTorch", "bad"], "op_seed": ["abc", "-1", "1.5", "+3"],
    "global_seed": ["7", "x"], "output_type": ["undefined", "dynamic", "bad", "F32"], "none": [""],
}  # fmt: skip


def _shape_input(rng: random.Random, m: _Net, x: tuple[int, str, str], fault: str) -> tuple[int, str, str]:
    """The shape a RandomUniform draws into: a constant, ShapeOf of ``x`` (taken apart, less a constant), a Convert of
    a constant (a value, not a Const), or a Parameter's value."""
    roll = rng.random()
    etype = rng.choice(["u8", "f32", "i16"]) if fault == "shape type" else rng.choice(["i64", "i64", "i32"])
    if roll < 0.3 or fault == "shape rank":
        count = rng.randint(0, 4)
        shape = rng.choice(["", f"1,{count}"]) if fault == "shape rank" else str(count)
        values = _ints(rng, max(count, 1) if shape == "" else count)
        if etype == "u8":
            values = [v % 256 for v in values]
        return m.const("shape", etype if etype != "i16" else "i32", shape, values[:1] if shape == "" else values)
    if roll < 0.7:
        length = str(len(_dims(x[1]))) if x[1] != "..." else "?"
        if etype not in ("i32", "i64"):  # (a ShapeOf gives i32 or i64 only)
            source = m.add("shape_i64", "ShapeOf", [x], (length, "i64"), {"output_type": "i64"}, version="opset3")
            return m.add("shape", "Convert", [source], (length, etype), {"destination_type": etype})
        source = m.add("shape", "ShapeOf", [x], (length, etype), {"output_type": etype}, version="opset3")
        if rng.random() < 0.3 and x[1] not in ("...", ""):
            count = len(_dims(x[1]))
            picked = [rng.randrange(count) for _ in range(rng.randint(1, 3))]
            index = m.const("picked", "i64", str(len(picked)), picked)
            axis = m.const("axis", "i64", "", [0])
            source = m.add("part", "Gather", [source, index, axis], (str(len(picked)), etype), {"batch_dims": "0"},
                           version="opset8")  # fmt: skip
        if rng.random() < 0.25 and source[1] != "?":
            less = m.const("less", etype, source[1], [rng.randint(0, 3) for _ in range(int(source[1]))])
            source = m.add("less_shape", "Subtract", [source, less], (source[1], etype))
        return source
    if roll < 0.8:
        count = rng.randint(0, 3)
        values = m.const("shape_f", "f32", str(count), [float(rng.randint(0, 5)) for _ in range(count)])
        return m.add("shape", "Convert", [values], (str(count), etype), {"destination_type": etype})
    return m.parameter("shape", rng.choice(["3", "1", "0", "?", "2..4", "...", "1.."]), etype)


def _bound(rng: random.Random, m: _Net, name: str, etype: str, value: float, fault: str) -> tuple[int, str, str]:
    """A min or max: a constant of one element (a scalar, or 1-D), a Parameter now and then; of another type or shape
    where the case's fault is that."""
    if fault == "bound type":
        etype = rng.choice(["f32", "f16", "i32"])
    if rng.random() < 0.1:
        odd = ["2..", "2", "1,1"] if fault == "bound shape" else ["", "1", "?", "1.."]
        return m.parameter(name, rng.choice(odd), etype)
    shape = rng.choice(["2", "1,1"] if fault == "bound shape" else ["", "", "1"])
    count = {"": 1, "1": 1, "2": 2, "1,1": 1}[shape]
    if etype in ("i32", "i64", "u8"):
        value = float(int(value)) if value == value else 0.0
    return m.const(name, etype, shape, [value] * count)


def _random_uniform(rng: random.Random, xml: Path) -> dict[str, str]:
    """A RandomUniform ``q`` of random inputs and attributes into a Result; the Parameters' names and shapes."""
    fault = rng.choice(_FAULTS) if rng.random() < 0.35 else ""
    m = _Net()
    x = m.parameter("x", _shape(rng), "f32")
    shape = _shape_input(rng, m, x, fault)
    out_type = rng.choice(["u8", "boolean"] if fault == "output type" else ["f32"] * 4 + ["f16", "bf16", "i32", "i64"])
    low = rng.choice([0.0, -1.5, 0.25, 3.0])
    high = rng.choice([low, low - 1, float("nan")]) if fault == "order" else low + rng.choice([1.0, 0.5, 4.0])
    low_in = _bound(rng, m, "low", out_type if out_type != "boolean" else "u8", low, fault)
    high_in = _bound(rng, m, "high", low_in[2], high, "bound type" if fault == "bound type" and rng.random() < 0.5
                     else fault if fault != "bound type" else "")  # fmt: skip
    data = {"output_type": out_type, "op_seed": "0", "global_seed": "0", "alignment": "tensorflow"}
    if fault == "attribute":
        attribute = rng.choice(["alignment", "op_seed", "global_seed", "output_type", "none"])
        data[attribute] = rng.choice(_ODD_ATTRIBUTES[attribute])
        data = {k: v for k, v in data.items() if k != "none" and not (k == "output_type" and rng.random() < 0.2)}
    written = data.get("output_type", "f32").lower()
    q = m.add("q", "RandomUniform", [shape, low_in, high_in], ("", written if written in _PRECISIONS else "f32"), data,
              version="opset8")  # fmt: skip
    m.add("out", "Result", [q], None)
    m.write(xml)
    return {name: shape for name, shape in m.parameters.items() if name in ("x", "shape")}


def _reshaped(rng: random.Random, shapes: dict[str, str]) -> dict[str, str]:
    """New shapes of the Parameters: ``x`` of its rank, another's (a shape's, a slope's) as it is or another."""
    given = {}
    for name, shape in shapes.items():
        if name == "x":  # (of its rank: the ShapeOf taken apart picks its dims)
            dims = shape.split(",") if shape not in ("", "...") else []
            new = ",".join(rng.choice(DIMS) for _ in dims) if shape != "..." else _shape(rng)
        else:
            new = rng.choice(["3", "1", "?", "2..4", "..."]) if rng.random() < 0.5 else shape
        given[name] = f"[{new}]" if new != "..." else "[...]"
    return given


def _refused_alike(state: PortState, refusal: str, op: str) -> str:
    """'' where ovreduce refuses the layer ``q`` in OpenVINO's words, else what it says instead."""
    said = state.reason.partition(f"{op} (q): ")[2]
    if state.shape is None and said and said in " ".join(refusal.split()):
        return ""
    return f"ovreduce {state.shape} {state.reason!r}, OpenVINO refuses it: {refusal.splitlines()[-1]}"


def _compare(xml: Path, op: str, given: dict[str, str] | None) -> tuple[list[str], bool]:
    """The differences from OpenVINO of the model read, reshaped to ``given`` when given; and whether OpenVINO read
    (and reshaped) it."""
    ir = load_ir(xml)
    try:
        (q,) = [lay for lay in ir.layers if lay.name == "q"]
        engine = ShapeEngine(ir, None if given is None else {k: PartialShape.parse(v) for k, v in given.items()})
        state = engine.state((q.id, q.outputs[0].id))
        try:
            model = ov.Core().read_model(str(xml))
            if given is not None:
                model.reshape({k: ov.PartialShape(v) for k, v in given.items()})
        except RuntimeError as exc:
            said = _refused_alike(state, str(exc), op)
            return ([f"reshape {given}: {said}"] if said else []), False
        wrong = [f"reshape {given}: {line}" for line in _differences(engine, model)]
        node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "q")
        etype = node.get_output_element_type(0).get_type_name()
        if state.element_type is None or state.element_type.name != etype:
            wrong.append(f"reshape {given}: ovreduce's type {state.element_type}, OpenVINO's {etype}")
        return wrong, True
    finally:
        ir.close()


@pytest.mark.parametrize("seed", range(3))
def test_the_shape_of_a_random_uniform_is_openvinos(seed: int, tmp_path: Path) -> None:
    rng = random.Random(f"RandomUniform{seed}")
    wrong, read, refused = [], 0, 0
    for case in range(150):
        xml = tmp_path / f"{case}.xml"
        shapes = _random_uniform(rng, xml)
        for given in (None, _reshaped(rng, shapes)):
            lines, ok = _compare(xml, "RandomUniform", given)
            wrong += [f"case {case} {shapes}: {line}" for line in lines]
            read += ok
            refused += not ok
            if not ok and given is None:
                break
    assert read >= 100 and refused >= 30, (read, refused)
    assert wrong == [], "\n".join(wrong)


# -- PReLU ---------------------------------------------------------------------------------------------------------
def _prelu(rng: random.Random, xml: Path) -> dict[str, str]:
    m = _Net()
    data_type = rng.choice(["f32"] * 5 + ["f16", "i32", "u8"])
    x = m.parameter("x", _shape(rng), data_type)
    slope = m.parameter("slope", _shape(rng, 2), rng.choice([data_type] * 4 + ["f32", "i64"]))
    if rng.random() < 0.3:
        slope = m.const("slope_c", "f32", "1", [0.25])
    q = m.add("q", "PReLU", [x, slope], (x[1], data_type))
    r = m.add("after", "Add", [q, q], (x[1], data_type))
    m.add("out", "Result", [r], None)
    m.write(xml)
    return m.parameters


@pytest.mark.parametrize("seed", range(2))
def test_the_shape_of_a_prelu_is_openvinos(seed: int, tmp_path: Path) -> None:
    rng = random.Random(f"PReLU{seed}")
    wrong, read = [], 0
    for case in range(100):
        xml = tmp_path / f"{case}.xml"
        shapes = _prelu(rng, xml)
        for given in (None, _reshaped(rng, shapes)):
            lines, ok = _compare(xml, "PReLU", given)
            wrong += [f"case {case} {shapes}: {line}" for line in lines]
            read += ok
    assert read >= 150, read
    assert wrong == [], "\n".join(wrong)


# -- under --reshape, through check ---------------------------------------------------------------------------------
def _vocoder_and_dropout() -> ov.Model:
    """A HiFi-GAN block's PReLU and a decoder prenet's dropout (a RandomUniform of the input's shape, compared with
    the rate), then a mean: the layers SpeechT5's exports hold."""
    x = ops.parameter([-1, 16, -1], np.float32, name="x")
    act = ops.prelu(x, ops.constant(np.float32([0.1])), name="act")
    noise = ops.random_uniform(ops.shape_of(x), ops.constant(np.float32(0)), ops.constant(np.float32(1)), "f32", 0, 0,
                               name="noise")  # fmt: skip
    keep = ops.convert(ops.greater_equal(noise, ops.constant(np.float32(0.5))), "f32", name="keep")
    dropped = ops.multiply(act, keep, name="dropped")
    mean = ops.reduce_mean(dropped, ops.constant(np.array([-1], np.int64)), True, name="mean")
    return ov.Model([ops.result(mean)], [x], "m")


@pytest.mark.parametrize("reshape", [None, "[2,16,10]", "[1..4,16,8..32]"])
def test_a_dropout_and_a_prelu_keep_openvinos_dims_under_a_reshape(reshape: str | None, tmp_path: Path) -> None:
    """Every layer after a PReLU or a RandomUniform is known natively, as OpenVINO knows it, and check is clean."""
    xml = tmp_path / "m.xml"
    ov.save_model(_vocoder_and_dropout(), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    given = None if reshape is None else {"x": PartialShape.parse(reshape)}
    if reshape is not None:
        model.reshape({"x": ov.PartialShape(reshape)})
    ir = load_ir(xml)
    try:
        engine = ShapeEngine(ir, given)
        assert _differences(engine, model) == []
        for name in ("act", "noise", "mean"):
            (found,) = [lay for lay in ir.layers if lay.name == name]
            assert engine.state((found.id, found.outputs[0].id)).origin == "inferred", name
        report = check_model(ir, engine="native", reshape=given)
    finally:
        ir.close()
    assert report.ok, report.findings
