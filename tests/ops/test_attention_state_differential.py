"""ScaledDotProductAttention-13, BitwiseAnd/Or/Xor/Not-13, ReadValue-3/6 and Assign-3/6 against the installed OpenVINO:
random input shapes (static, zero-sized, interval and dynamic dims, dynamic ranks) and element types, each written as
an IR of Parameters into one layer named ``op``, read as it is and again after ``Model.reshape`` to other random shapes.
ovreduce must infer the shape and element type OpenVINO infers, and refuse (leave unresolved, saying why) the models
and reshapes it refuses. Then a small stateful-LLM-like model (ReadValue -> Concat -> SDPA -> ... -> Assign, a causal
mask of BitwiseAnd) under ``check --reshape`` and ``inspect --all --reshape``: every port resolved, each OpenVINO's."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset6 as o6
import openvino.opset13 as o13
import pytest
from openvino.op.util import Variable, VariableInfo

from ovreduce import load_ir
from ovreduce.cli import main
from ovreduce.infer import ShapeEngine
from ovreduce.ops.base import PortState
from ovreduce.shapes import PartialShape

from ..ir.irxml import edge, layer, net, port
from .test_reduce_differential import to_shape

Shape = list[int | str] | None  # None: a dynamic rank
_PRECISION = {"f32": "FP32", "f16": "FP16", "i32": "I32", "i64": "I64", "u8": "U8", "boolean": "BOOL"}


def _text(shape: Shape) -> str:
    return "..." if shape is None else ",".join(map(str, shape))


def _dims(shape: Shape) -> list[int]:
    return [d if isinstance(d, int) else -1 for d in shape or ()]


def _write(folder: Path, inputs: Sequence[tuple[Shape, str]], op: tuple[str, str], data: dict[str, str]) -> Path:
    """An IR of one Parameter per input (shape, element type) into the layer ``op``, whose output is the model's."""
    layers = [layer(i, f"p{i}", "Parameter", data={"shape": _text(shape), "element_type": etype},
                    outputs=[port(0, _dims(shape), _PRECISION[etype], names=f"p{i}")])
              for i, (shape, etype) in enumerate(inputs)]  # fmt: skip
    n = len(inputs)
    layers.append(layer(100, "op", op[0], version=op[1], data=data,
                        inputs=[port(i, _dims(shape), _PRECISION[t]) for i, (shape, t) in enumerate(inputs)],
                        outputs=[port(n, (), "FP32")]))  # fmt: skip
    layers.append(layer(200, "out", "Result", inputs=[port(0)]))
    edges = [edge(i, 0, 100, i) for i in range(n)] + [edge(100, n, 200, 0)]
    xml = folder / "m.xml"
    xml.write_text(net(layers, edges))
    return xml


Outcome = tuple[PartialShape, str] | None  # (shape, element type); None: refused


def _both(core: ov.Core, xml: Path, reshape: Sequence[Shape] | None) -> tuple[Outcome, PortState]:
    """OpenVINO's output (None: it refuses the file or the reshape) and ovreduce's state of the layer ``op``."""
    new = {} if reshape is None else {f"p{i}": _partial(s) for i, s in enumerate(reshape)}
    try:
        model = core.read_model(xml)
        if new:
            model.reshape({name: ov.PartialShape(_text(s) if s is not None else "...")
                           for name, s in zip(new, reshape or (), strict=True)})  # fmt: skip
        out = model.output(0)
        expected: Outcome = (to_shape(out.get_partial_shape()), out.get_element_type().get_type_name())
    except RuntimeError:
        expected = None
    ir = load_ir(xml)
    try:
        (op,) = [lay for lay in ir.layers if lay.name == "op"]
        return expected, ShapeEngine(ir, new).state((op.id, op.outputs[0].id))
    finally:
        ir.close()


def _partial(shape: Shape) -> PartialShape:
    return PartialShape.parse(_text(shape))


def _ovreduce(state: PortState) -> Outcome:
    if state.shape is None:
        return None
    etype = state.element_type
    return state.shape, "dynamic" if etype is None else etype.name


def _same(expected: Outcome, state: PortState) -> bool:
    if expected is None:  # a refusal: unresolved, saying why
        return state.shape is None and bool(state.reason)
    return _ovreduce(state) == (expected[0], {"boolean": "boolean"}.get(expected[1], expected[1]))


DIMS: list[int | str] = [0, 1, 1, 2, 2, 3, 4, "?", "1..3", "0..2", "2..", "2..4"]


def _vary(rng: random.Random, shape: Shape) -> Shape:
    """``shape`` with some dims swapped for random ones (a reshape that often fits, sometimes not)."""
    if shape is None or rng.random() < 0.05:
        return None if rng.random() < 0.5 else [rng.choice(DIMS) for _ in range(rng.randint(2, 5))]
    return [rng.choice(DIMS) if rng.random() < 0.3 else d for d in shape]


def _check(rng: random.Random, tmp: Path, cases: int, draw: Callable[[random.Random], Any]) -> tuple[list[str], int]:
    core = ov.Core()
    wrong, refused = [], 0
    for case in range(cases):
        inputs, op, data = draw(rng)
        folder = tmp / str(case)
        folder.mkdir()
        xml = _write(folder, inputs, op, data)
        for reshape in (None, [_vary(rng, s) for s, _ in inputs]):
            expected, state = _both(core, xml, reshape)
            refused += expected is None
            if expected is None and reshape is None:  # (a file OpenVINO refuses is not reshaped)
                if not _same(expected, state):
                    wrong.append(f"{op} {data} {inputs}: ovreduce {_ovreduce(state)}, OpenVINO refuses it")
                break
            if not _same(expected, state):
                wrong.append(f"{op} {data} {inputs} reshaped to {reshape}: ovreduce {_ovreduce(state)} "
                             f"{state.reason!r}, OpenVINO {expected}")  # fmt: skip
    return wrong, refused


def _sdpa(rng: random.Random) -> Any:
    batch = [rng.choice([1, 2, 3, "?", "1..2"]) for _ in range(rng.randint(0, 2))]
    big = [2, 3, 4, 5, "?", "2..4", 1]
    L, S, E, Ev = (rng.choice(big) for _ in range(4))  # noqa: N806

    def some(*dims: int | str) -> Shape:
        if rng.random() < 0.06:
            return None
        lead = [rng.choice([1, *batch]) if batch and rng.random() < 0.3 else d for d in batch]
        if rng.random() < 0.1:
            lead = lead[1:]
        shape = [*lead, *dims]
        return [rng.choice(DIMS) if rng.random() < 0.08 else d for d in shape]

    types = ["f32", "f32", "f32", "f32", "f32", "f32"]
    if rng.random() < 0.15:
        types[rng.randrange(6)] = rng.choice(["f16", "i32", "boolean"])
    inputs: list[tuple[Shape, str]] = [(some(L, E), types[0]), (some(S, E), types[1]), (some(S, Ev), types[2])]
    count = rng.choice([3, 4, 4, 5, 5, 6])
    if count >= 4:
        mask = rng.choice([some(L, S), some(1, S), some(L, 1), [S], [], some(rng.choice(big), S)])
        inputs.append((mask, rng.choice(["f32", "f32", "boolean"]) if types[3] == "f32" else types[3]))
    if count >= 5:
        inputs.append((rng.choice([[], [], [1], [2], ["?"], [1, 1]]), types[4]))
    if count >= 6:
        q = inputs[0][0]
        sink = [*(q or [2, 3])[:-1], 1] if rng.random() < 0.6 else rng.choice([[2, 3, 1], [1, 1, 1, 1], [2, 1]])
        inputs.append(([rng.choice(DIMS) if rng.random() < 0.2 else d for d in sink], types[5]))
    return inputs, ("ScaledDotProductAttention", "opset13"), {"causal": rng.choice(["false", "false", "true"])}


@pytest.mark.parametrize("seed", range(4))
def test_an_attention_shape_is_openvinos(seed: int, tmp_path: Path) -> None:
    wrong, refused = _check(random.Random(seed), tmp_path, 150, _sdpa)
    assert refused >= 10, refused
    assert wrong == [], "\n".join(wrong)


def _bitwise(rng: random.Random) -> Any:
    op = rng.choice(["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"])
    etype = rng.choice(["boolean", "boolean", "i32", "u8", "i64", "f32"])

    def some() -> Shape:
        return None if rng.random() < 0.08 else [rng.choice(DIMS) for _ in range(rng.randint(0, 4))]

    if op == "BitwiseNot":
        return [(some(), etype)], (op, "opset13"), {}
    other = etype if rng.random() < 0.9 else rng.choice(["boolean", "i32"])
    return [(some(), etype), (some(), other)], (op, "opset13"), {"auto_broadcast": rng.choice(["numpy"] * 4 + ["none"])}


@pytest.mark.parametrize("seed", range(3))
def test_a_bitwise_shape_is_openvinos(seed: int, tmp_path: Path) -> None:
    wrong, refused = _check(random.Random(seed), tmp_path, 150, _bitwise)
    assert refused >= 10, refused
    assert wrong == [], "\n".join(wrong)


def _variable(rng: random.Random) -> Any:
    op = rng.choice([("ReadValue", "opset6")] * 4 + [("ReadValue", "opset3")])
    init = None if rng.random() < 0.08 else [rng.choice([1, 2, 3, "?", "1..4", 0]) for _ in range(rng.randint(0, 4))]
    etype = rng.choice(["f32", "f32", "f16", "i64"])
    data = {"variable_id": "v"}
    if op == ("ReadValue", "opset6"):
        if rng.random() < 0.85:  # relaxing the init value's shape, mostly
            shape = None if init is None or rng.random() < 0.1 else [rng.choice(["?", d, d, "0..4"]) for d in init]
            data["variable_shape"] = _text(shape)
        if rng.random() < 0.85:
            data["variable_type"] = rng.choice([etype, etype, etype, "dynamic", "f32"])
        if rng.random() < 0.25:
            return [], op, data
    return [(init, etype)], op, data


@pytest.mark.parametrize("seed", range(3))
def test_a_variable_shape_is_openvinos(seed: int, tmp_path: Path) -> None:
    wrong, refused = _check(random.Random(seed), tmp_path, 120, _variable)
    assert refused >= 5, refused
    assert wrong == [], "\n".join(wrong)


def _stateful(folder: Path) -> Path:
    """A one-layer decoder as optimum-intel exports it, in small: the KV cache in variables (ReadValue-6 of a zero init
    value, reordered by ``beam_idx``, the new keys and values concatenated, Assign-6 back), a causal mask of BitwiseAnd
    and BitwiseNot, ScaledDotProductAttention with a mask and a scale, the heads merged, a projection and an RMS norm's
    ReduceMean."""
    hidden, heads, size = 16, 2, 8
    x = o13.parameter(ov.PartialShape([-1, -1, hidden]), np.float32, name="inputs_embeds")
    keep = o13.parameter(ov.PartialShape([-1, 1, -1, -1]), ov.Type.boolean, name="attention_mask")
    causal = o13.parameter(ov.PartialShape([1, 1, -1, -1]), ov.Type.boolean, name="causal")
    beam = o13.parameter(ov.PartialShape([-1]), np.int32, name="beam_idx")
    batch = o13.gather(o13.shape_of(x), o13.constant(np.array([0], np.int64)), o13.constant(np.int64(0)))

    def split(scale: float) -> Any:
        w = o13.constant(np.full((hidden, hidden), scale, np.float32))  # (unequal: a reshape merges equal branches)
        t = o13.reshape(o13.matmul(x, w, False, False), o13.constant(np.array([0, 0, heads, size], np.int64)), True)
        return o13.transpose(t, o13.constant(np.array([0, 2, 1, 3], np.int64)))

    q = split(1.0)
    shape = o13.concat([batch, o13.constant(np.array([heads, 0, size], np.int64))], 0)
    sinks = []
    caches = []
    for scale, name in ((2.0, "key"), (3.0, "value")):
        info = VariableInfo()
        info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, heads, -1, size]), ov.Type.f32, name
        var = Variable(info)
        init = o13.broadcast(o13.constant(np.float32(scale)), shape)
        past = o6.read_value(init, var)
        both = o13.concat([o13.gather(past, beam, o13.constant(np.int64(0))), split(scale)], 2)
        sinks.append(o6.assign(both, var))
        caches.append(both)
    mask = o13.bitwise_and(keep, o13.bitwise_not(o13.bitwise_not(causal)))
    attn = o13.scaled_dot_product_attention(q, caches[0], caches[1], mask, o13.constant(np.float32(0.35)))
    merged = o13.reshape(o13.transpose(attn, o13.constant(np.array([0, 2, 1, 3], np.int64))),
                         o13.constant(np.array([0, 0, hidden], np.int64)), True)  # fmt: skip
    out = o13.matmul(merged, o13.constant(np.ones((hidden, hidden), np.float32)), False, False)
    norm = o13.reduce_mean(o13.multiply(out, out), o13.constant(np.array([-1], np.int64)), True)
    model = ov.Model([o1.result(o13.divide(out, o13.sqrt(norm)))], sinks, [x, keep, causal, beam], "decoder")
    xml = folder / "decoder.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


RESHAPE = {"inputs_embeds": "[2,3,16]", "attention_mask": "[2,1,3,7]", "causal": "[1,1,3,7]", "beam_idx": "[2]"}


def test_a_stateful_decoder_is_resolved_under_a_reshape_as_openvino_infers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every port of every layer, the variables', the attention's and the mask's included, resolved under a reshape
    by ``inspect --all --reshape``, each OpenVINO's shape and element type after the same ``Model.reshape``; and
    ``check --reshape`` checks the model's reduction natively (no OpenVINO shape engine needed)."""
    xml = _stateful(tmp_path)
    reshape = [f"{name}={shape}" for name, shape in RESHAPE.items()]
    model = ov.Core().read_model(xml)
    model.reshape({name: ov.PartialShape(shape) for name, shape in RESHAPE.items()})
    expected = {(node.get_friendly_name(), i): (to_shape(node.get_output_partial_shape(i)),
                                               node.get_output_element_type(i).get_type_name())
                for node in model.get_ordered_ops() for i in range(node.get_output_size())}  # fmt: skip
    assert main(["inspect", str(xml), "--all", "--format", "json", *(f"--reshape={r}" for r in reshape)]) == 0
    doc = json.loads(capsys.readouterr().out)
    types = {layer["type"] for layer in doc["layers"]}
    assert {"ReadValue", "Assign", "ScaledDotProductAttention", "BitwiseAnd", "BitwiseNot"} <= types
    wrong, compared = [], 0
    for lay in doc["layers"]:
        for index, out in enumerate(lay["outputs"]):
            want = expected.get((lay["layer_name"], index))
            if want is None:  # (a Const the reshape folded away)
                assert lay["type"] == "Const", lay["layer_name"]
                continue
            got = (PartialShape.from_json(out["shape"]) if out["shape_resolved"] else None, out["element_type"])
            compared += 1
            if got != (want[0], {"boolean": "boolean"}.get(want[1], want[1])):
                wrong.append(f"{lay['type']} {lay['layer_name']!r} output {index}: ovreduce {got}, OpenVINO {want}")
    assert compared > 40 and wrong == [], "\n".join(wrong)
    assert main(["check", str(xml), "--format", "json", *(f"--reshape={r}" for r in reshape)]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["models"]
    (reduction,) = checked["reductions"]
    assert (reduction["input_shape_engine"], reduction["status"], reduction["input_shape"]) == (
        "native",
        "ok",
        [2, 3, 16],
    )
    assert reduction["inferred_output_shape"] == [2, 3, 1] and checked["notes"] == []


def test_a_port_left_unresolved_under_a_reshape_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under a reshape, the output of an op without a native rule (SpaceToDepth), and each output after it, is
    unresolved: ``inspect --all`` says why on each port (``shape_reason``), and ``inspect --layer`` in its listing."""
    x = o13.parameter(ov.PartialShape([-1, 4, 6]), np.float32, name="x")
    moved = o13.space_to_depth(x, "blocks_first", 1)
    moved.set_friendly_name("s2d")
    relu = o13.relu(moved)
    relu.set_friendly_name("after")
    mean = o13.reduce_mean(relu, o13.constant(np.array([2], np.int64)), True)
    xml = tmp_path / "s2d.xml"
    ov.save_model(ov.Model([o1.result(mean)], [x], "m"), str(xml), compress_to_fp16=False)
    main(["inspect", str(xml), "--all", "--format", "json", "--reshape", "x=[2,4,6]"])
    doc = json.loads(capsys.readouterr().out)
    ports = {lay["layer_name"]: lay["outputs"][0] for lay in doc["layers"] if lay["outputs"]}
    for name in ("s2d", "after"):
        assert not ports[name]["shape_resolved"], ports[name]
        assert ports[name]["shape_reason"] == "no native shape rule for SpaceToDepth (s2d)", ports[name]
    assert ports["x"]["shape_resolved"] and ports["x"]["shape_reason"] is None
    main(["inspect", str(xml), "--layer", "after", "--reshape", "x=[2,4,6]"])
    assert "unresolved (unresolved: no native shape rule for SpaceToDepth (s2d))" in capsys.readouterr().out


def test_a_variable_is_a_value_known_at_run_time(tmp_path: Path) -> None:
    """A reduction over the axes a ReadValue gives (of a constant init value): its axes are known at run time only, not
    a constant subgraph ovreduce fails to fold, and its output is OpenVINO's (a variable's state is no constant,
    whatever initialises it)."""
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([1]), ov.Type.i64, "axes"
    var = Variable(info)
    axes = o6.read_value(o13.constant(np.array([1], np.int64)), var)
    x = o13.parameter(ov.PartialShape([4, 6]), np.float32, name="x")
    out = o13.reduce_sum(x, axes, True)
    out.set_friendly_name("op")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([o1.result(out)], [o6.assign(axes, var)], [x], "m"), str(xml))
    expected = to_shape(ov.Core().read_model(xml).output(0).get_partial_shape())
    assert expected == PartialShape.dynamic(2)
    ir = load_ir(xml)
    try:
        (op,) = [lay for lay in ir.layers if lay.name == "op"]
        engine = ShapeEngine(ir)
        assert engine.state((op.id, op.outputs[0].id)).shape == expected
        got = engine.axes_of(op)
        assert (got.kind, got.reason) == ("runtime", "the state of the variable 'axes', known at run time only")
    finally:
        ir.close()


HOSTILE_VARIABLES = [
    ({"variable_shape": "abc", "variable_type": "f32"}, True),
    ({"variable_shape": "abc", "variable_type": "f32"}, False),
    ({"variable_shape": "2,3", "variable_type": "xyz"}, True),
    ({"variable_shape": "2,3", "variable_type": "xyz"}, False),
    ({"variable_shape": "2,3", "variable_type": "undefined"}, True),
    ({"variable_shape": "-1,3", "variable_type": "F32"}, False),
    ({"variable_shape": "[2,3]", "variable_type": "f32"}, True),
    ({"variable_shape": "1..0,3", "variable_type": "f32"}, True),  # (an empty interval relaxes nothing)
]


@pytest.mark.parametrize(("data", "init"), HOSTILE_VARIABLES, ids=[f"{d}-{i}" for d, i in HOSTILE_VARIABLES])
def test_a_variable_written_oddly_is_read_as_openvino_reads_it(
    data: dict[str, str], init: bool, tmp_path: Path
) -> None:
    xml = _write(tmp_path, [([2, 3], "f32")] if init else [], ("ReadValue", "opset6"), {"variable_id": "v", **data})
    expected, state = _both(ov.Core(), xml, None)
    assert _same(expected, state), (expected, state)


def _assign(folder: Path, given: tuple[Shape, str], variable: dict[str, str], version: str) -> Path:
    """x -> Assign (named ``op``) of the variable ``v``, which a ReadValue-6 of ``variable``'s attributes declares."""
    shape, etype = given
    layers = [
        layer(0, "x", "Parameter", data={"shape": _text(shape), "element_type": etype},
              outputs=[port(0, _dims(shape), _PRECISION[etype], names="x")]),
        layer(1, "rv", "ReadValue", version="opset6", data={"variable_id": "v", **variable}, outputs=[port(0, ())]),
        layer(2, "op", "Assign", version=version, data={"variable_id": "v"},
              inputs=[port(0, _dims(shape), _PRECISION[etype])], outputs=[port(1, _dims(shape), _PRECISION[etype])]),
        layer(3, "out", "Result", inputs=[port(0)]),
    ]  # fmt: skip
    xml = folder / "m.xml"
    xml.write_text(net(layers, [edge(0, 0, 2, 0), edge(1, 0, 3, 0)]))
    return xml


@pytest.mark.parametrize("seed", range(3))
def test_an_assign_is_checked_against_its_variable_as_openvino_checks_it(seed: int, tmp_path: Path) -> None:
    """Assign-6 of an input its variable's declared shape or type does not admit: OpenVINO's reader takes it, a reshape
    (which validates the model again) refuses it; ovreduce the same, saying why."""
    rng = random.Random(seed)
    core = ov.Core()
    wrong, refused = [], 0
    for case in range(80):
        shape = None if rng.random() < 0.08 else [rng.choice([1, 2, 3, "?", "1..4"]) for _ in range(rng.randint(1, 3))]
        etype = rng.choice(["f32", "f32", "i64"])
        variable = {}
        if rng.random() < 0.9:
            like = shape or [2, 3]
            variable["variable_shape"] = rng.choice([_text([rng.choice(["?", d, d, "0..4", 2]) for d in like]), "...",
                                                     _text(like[:-1])])  # fmt: skip
        if rng.random() < 0.9:
            variable["variable_type"] = rng.choice([etype, etype, "dynamic", "f32"])
        folder = tmp_path / str(case)
        folder.mkdir()
        xml = _assign(folder, (shape, etype), variable, "opset6")
        for reshape in (None, _vary(rng, shape)):
            try:
                model = core.read_model(xml)
                if reshape is not None:
                    model.reshape({"x": ov.PartialShape(_text(reshape))})
                (node,) = [n for n in model.get_ordered_ops() if n.get_friendly_name() == "op"]
                expected: Outcome = (
                    to_shape(node.get_output_partial_shape(0)),
                    node.get_output_element_type(0).get_type_name(),
                )
            except RuntimeError:
                expected = None
            ir = load_ir(xml)
            try:
                (op,) = [lay for lay in ir.layers if lay.name == "op"]
                new = {} if reshape is None else {"x": _partial(reshape)}
                state = ShapeEngine(ir, new).state((op.id, op.outputs[0].id))
            finally:
                ir.close()
            refused += expected is None
            if not _same(expected, state):
                wrong.append(f"{variable} {shape} {etype} reshaped to {reshape}: ovreduce {_ovreduce(state)} "
                             f"{state.reason!r}, OpenVINO {expected}")  # fmt: skip
    assert refused >= 5, refused
    assert wrong == [], "\n".join(wrong)


def test_a_reshape_an_assign_s_variable_does_not_admit_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --reshape`` of x[2,3] into Assign-6 of a variable of [2,3] to x=[4,3]: OpenVINO refuses the reshape at
    the Assign, and check says so (the model as read is clean, as OpenVINO reads it)."""
    xml = _assign(tmp_path, ([2, 3], "f32"), {"variable_shape": "2,3", "variable_type": "f32"}, "opset6")
    model = ov.Core().read_model(xml)
    with pytest.raises(RuntimeError, match="The shape specified in the Variable is not compatible"):
        model.reshape({"x": ov.PartialShape([4, 3])})
    assert main(["check", str(xml)]) == 0
    capsys.readouterr()
    assert main(["check", str(xml), "--format", "json", "--reshape", "x=[4,3]"]) == 1
    (checked,) = json.loads(capsys.readouterr().out)["models"]
    (found,) = checked["findings"]
    assert (found["code"], found["severity"], found["layer_name"]) == ("reshape-inconsistent", "error", "op"), found
    assert "Input shape: [4,3] Variable shape: [2,3]" in found["message"], found
