"""Differential tests of reductions in sub-graph bodies against OpenVINO: random models with If, Loop and
TensorIterator bodies (nested too), saved with ``save_model``, checked under random reshapes (static, ``?`` and
``lo..hi`` dims) against OpenVINO's ``model.reshape``; and mutants with one declared dim altered inside a body,
flagged on exactly that layer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest

from ovreduce._openvino import bodies, clean_message, partial_shape
from ovreduce.check import check_model
from ovreduce.check.inspect import inspect_model
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import load_ir
from ovreduce.ops import subgraph
from ovreduce.ops.subgraph import merge_branches
from ovreduce.reports.common import dumps
from ovreduce.shapes import JsonShape, PartialShape
from tests.ir import subgraphs


def openvino_reductions(model: Any, prefix: str = "") -> dict[str, JsonShape]:
    """OpenVINO's output shape of every reduction, top level and in bodies, by name path."""
    out: dict[str, JsonShape] = {}
    for node in model.get_ordered_ops():
        name = node.get_friendly_name()
        if node.get_type_name().startswith("Reduce"):
            out[f"{prefix}{name}"] = partial_shape(node.get_output_partial_shape(0)).to_json()
        for role, body in bodies(node):
            out |= openvino_reductions(body, f"{prefix}{name}/{role}/")
    return out


def _name_key(model: IRModel, body_path: str | None, layer_name: str) -> str:
    names = {b.path: b.name_path for b in model.bodies()}
    return layer_name if body_path is None else f"{names[body_path]}/{layer_name}"


def _fully_known(shape: JsonShape) -> bool:
    return shape is not None and PartialShape.from_json(shape).is_static


# regressions: 85 a Loop output stale, 556 an If of a scalar and a 1-D, 180 and 331 a Pad declaring -1 for 1..,
# 705 and 830 a reshape OpenVINO refuses (a slicing axis out of range) with body reductions "ok"
@pytest.mark.parametrize("seed", [*range(40), 85, 180, 331, 556, 705, 830])
def test_reductions_under_a_random_reshape_agree_with_openvino(tmp_path: Path, seed: int) -> None:
    """Every reduction's shape under a random reshape is OpenVINO's after ``model.reshape``; where ovreduce
    cannot resolve one it says why, and OpenVINO does not know that shape fully either."""
    builder = subgraphs.RandomModel(seed, dynamic=True, no_rule=True)
    built = builder.model()
    path = subgraphs.save(built, tmp_path, f"random_{seed}")
    new_shape = builder.reshape(built.inputs[0].get_partial_shape().rank.get_length())
    model = load_ir(path)
    report = check_model(model, reshape={"x": PartialShape.parse(new_shape)})
    ov_model = ov.Core().read_model(path)
    refused = None
    try:
        ov_model.reshape({"x": ov.PartialShape(new_shape)})
    except Exception as exc:
        refused = clean_message(exc)
    inconsistent = [f.message for f in report.findings if f.code == "reshape-inconsistent"]
    assert not inconsistent or refused is not None, (
        "OpenVINO takes the reshape ovreduce says it refuses",
        inconsistent,
    )
    if refused is not None:  # OpenVINO refuses the reshape: so does ovreduce
        assert not report.ok, refused
        return
    expected = openvino_reductions(ov_model)
    got = {_name_key(model, r.body_path, r.layer_name): r for r in report.reductions}
    assert got.keys() == expected.keys()
    unresolved = {(f.body_path, f.layer_id): f.message for f in report.findings if f.code == "reduce-unresolved"}
    for key, r in got.items():
        if r.status == "unresolved":
            assert unresolved.get((r.body_path, r.layer_id)), f"{key}: unresolved without a reason"
            assert not _fully_known(expected[key]), f"{key}: OpenVINO knows {expected[key]}, ovreduce does not"
        else:
            assert r.status in ("ok", "mismatch"), (key, r.status)
            assert r.inferred_output_shape == expected[key], key


def test_a_loop_output_its_body_cannot_give_under_a_reshape_is_not_the_stale_declaration(tmp_path: Path) -> None:
    """A Loop whose body Result comes through a SpaceToDepth (no native rule): under a reshape its output is
    unresolved, saying why, instead of the dims the file declares for the old shape; the reduction after it then
    takes its input from OpenVINO, and agrees with OpenVINO (the file's dims gave [6, 1], 'ok')."""
    path = subgraphs.save(subgraphs.padded_loop_model(), tmp_path, "padded_loop")
    model = load_ir(path)
    reshape = {"x": PartialShape.parse("[4,6,2]")}
    loop = next(layer for layer in model.layers if layer.type == "Loop")
    state = ShapeEngine(model, reshape).state((loop.id, loop.outputs[0].id))
    assert state.shape is None
    assert (
        "body of Loop (Loop_1)" in state.reason and "no native shape rule for SpaceToDepth (S2D_body)" in state.reason
    )
    assert ShapeEngine(model).state((loop.id, loop.outputs[0].id)).shape == PartialShape.static([1, 6, 1])
    report = check_model(model, reshape=reshape)
    shapes = {(r.layer_name, r.input_shape_engine, r.status): r.inferred_output_shape for r in report.reductions}
    assert shapes == {
        ("ReduceSum_pad", "openvino", "mismatch"): [1, 12, 1],
        ("ReduceMax_after", "openvino", "mismatch"): [12, 1],
    }
    ov_model = ov.Core().read_model(path)
    ov_model.reshape({"x": ov.PartialShape("[4,6,2]")})
    assert openvino_reductions(ov_model) == {"Loop_1/body/ReduceSum_pad": [1, 12, 1], "ReduceMax_after": [12, 1]}


def test_a_reshape_that_takes_a_slicing_axis_away_is_refused(tmp_path: Path) -> None:
    """Reshaped to rank 1, the TensorIterator's slicing axis 1 is out of range: OpenVINO refuses the reshape, and so
    does ovreduce, on that layer; the body's reduction is unresolved with that reason, not 'ok' on the body's
    declared [2,2,4]."""
    path = subgraphs.save(subgraphs.ti_model(), tmp_path, "ti")
    with pytest.raises(Exception, match="out-of-range"):
        ov.Core().read_model(path).reshape({"x": ov.PartialShape("[6]")})
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse("[6]")})
    assert not report.ok
    [refusal] = [f for f in report.findings if f.code == "reshape-inconsistent"]
    assert refusal.layer_name == "TensorIterator_1"
    assert "axis 1 is out of range for the input's shape [6]" in refusal.message
    assert [(r.layer_name, r.status) for r in report.reductions] == [("ReduceMax_ti", "unresolved")]


@pytest.mark.parametrize("shape", ["[2,2]", "[1,1]", "[1]", "[]", "[?]", "..."])
def test_an_if_condition_of_rank_two_is_refused_under_a_reshape_as_openvino_refuses_it(
    tmp_path: Path, shape: str
) -> None:
    """OpenVINO takes an If's condition of rank 0 or 1 (or unknown) only: reshaped to [2,2] or [1,1] it refuses the
    model, and so does ovreduce, on the If; the model was called clean."""
    path = subgraphs.save(subgraphs.if_model(), tmp_path, "if")
    try:
        ov.Core().read_model(path).reshape({"cond": ov.PartialShape(shape)})
        refused = None
    except Exception as exc:
        refused = clean_message(exc)
    report = check_model(load_ir(path), reshape={"cond": PartialShape.parse(shape)})
    inconsistent = [f for f in report.findings if f.code == "reshape-inconsistent"]
    if refused is None:
        assert report.ok and not inconsistent, report.findings
        return
    assert "Rank of If condition input must be equal to 0 or 1" in refused
    assert [f.layer_name for f in inconsistent] == ["If_1"], report.findings
    assert "Rank of If condition input must be equal to 0 or 1" in inconsistent[0].message


def _openvino_if_output(then: str, other: str) -> Any:
    """OpenVINO's output shape of an If (runtime condition) whose bodies pass on inputs of these shapes."""
    cond = o8.parameter([], np.bool_)
    params, bodies = [], []
    for text in (then, other):
        params.append(o8.parameter(ov.PartialShape(text), np.float32))
        inner = o8.parameter(ov.PartialShape(text), np.float32)
        bodies.append((inner, ov.Model([o8.result(o8.relu(inner))], [inner])))
    node = o8.if_op(cond)
    node.set_then_body(bodies[0][1])
    node.set_else_body(bodies[1][1])
    node.set_input(params[0].output(0), bodies[0][0], None)
    node.set_input(params[1].output(0), None, bodies[1][0])
    out = node.set_output(bodies[0][1].get_results()[0], bodies[1][1].get_results()[0])
    ov.Model([out], [cond, *params]).validate_nodes_and_infer_types()
    return partial_shape(out.get_partial_shape())


@pytest.mark.parametrize(
    ("then", "other"),
    [("[]", "[1]"), ("[1]", "[]"), ("[]", "[3]"), ("[]", "[?]"), ("[]", "[1..3]"), ("[]", "[0]"), ("[]", "[]"),
     ("[]", "[2,3]"), ("[1]", "[2,3]"), ("[2]", "[5]"), ("[2,?]", "[2,4]"), ("[1..3,4]", "[2,4]"), ("...", "[1]")],
)  # fmt: skip
def test_if_merges_its_branches_as_openvino(then: str, other: str) -> None:
    """An If's output from its then- and else-Result shapes, different ranks included: a scalar and ``[1]``
    give ``[1]``, a scalar and another 1-D shape ``[?]`` (what a random reshape found wrong)."""
    assert merge_branches(PartialShape.parse(then), PartialShape.parse(other)) == _openvino_if_output(then, other)


def _mutate_dim(path: Path, line: int, index: int) -> None:
    """Add 1 to the ``index``-th ``<dim>`` after ``line`` (a ``<port>`` line of the saved XML)."""
    lines = path.read_text().splitlines(keepends=True)
    at = [i for i in range(line, len(lines)) if "<dim>" in lines[i]][index]
    value = int(lines[at].split("<dim>")[1].split("</dim>")[0])
    lines[at] = lines[at].replace(f"<dim>{value}</dim>", f"<dim>{value + 1}</dim>", 1)
    path.write_text("".join(lines))


@pytest.mark.parametrize("seed", range(40))
def test_a_dim_altered_in_a_body_is_flagged_on_that_layer(tmp_path: Path, seed: int) -> None:
    """One static declared dim altered inside a body (of a reduction's output, its consumers' inputs altered
    alike; or of one consumer's end of an edge) gives error findings on that one layer only."""
    rng = np.random.default_rng(1000 + seed)
    built = subgraphs.RandomModel(seed, dynamic=bool(seed % 2), always_body=True).model()
    path = subgraphs.save(built, tmp_path, f"m_{seed}")
    model = load_ir(path)
    assert check_model(model).ok
    # (body path, layer id, the port lines to alter, which dim, the finding expected)
    candidates: list[tuple[str, str, list[int], int, str]] = []
    for ref in model.bodies():
        graph = ref.body.graph
        for layer in graph.layers:
            static = [[i for i, d in enumerate(p.dims) if d != -1] for p in layer.inputs]
            for port, dims in zip(layer.inputs, static, strict=True):
                candidates += [(ref.path, layer.id, [port.line or 0], i, "edge-dims-mismatch") for i in dims]
            if layer.type.startswith("Reduce") and layer.outputs:
                port = layer.outputs[0]
                lines = [port.line or 0]
                for consumer, port_id in graph.consumers(layer.id, port.id):
                    lines.append(graph.input_port(graph.layer(consumer), port_id).line or 0)
                candidates += [(ref.path, layer.id, lines, i, "reduce-output-mismatch")
                               for i, d in enumerate(port.dims) if d != -1]  # fmt: skip
    if not candidates:
        pytest.skip("every dim in every body is dynamic")
    body_path, layer_id, lines, index, code = candidates[int(rng.integers(len(candidates)))]
    for line in lines:
        _mutate_dim(path, line, index)
    report = check_model(load_ir(path))
    errors = {(f.body_path, f.layer_id, f.code) for f in report.findings if f.severity == "error"}
    assert errors == {(body_path, layer_id, code)}


def _edited(tmp_path: Path, model: ov.Model, name: str, edits: list[tuple[str, str]]) -> Path:
    """``model`` saved, then its XML edited (each ``old`` text replaced once by ``new``)."""
    path = subgraphs.save(model, tmp_path, name)
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)
    return path


_CURRENT_ITERATION = (
    '<layer id="0" name="bp" type="Parameter" version="opset1">',
    '<layer id="20" name="it" type="Parameter" version="opset1"><data shape="2,2" element_type="i64" />'
    '<output><port id="0" precision="I64"><dim>2</dim><dim>2</dim></port></output></layer>'
    '<layer id="0" name="bp" type="Parameter" version="opset1">',
)


@pytest.mark.parametrize(
    ("name", "edits", "openvino_says"),
    [
        ("loop", [('<output axis="0" external_port_id="5"', '<output axis="7" external_port_id="5"')],
         "Axis 7 out of the tensor rank range"),
        ("loop", [_CURRENT_ITERATION, ('<output external_port_id="-1" internal_layer_id="8" purpose',
                                       '<input external_port_id="-1" internal_layer_id="20" purpose="current_iteration"'
                                       ' /><output external_port_id="-1" internal_layer_id="8" purpose')],
         "Rank of CurrentIteration input must be equal to 0 or 1"),
        ("ti", [('<output axis="1" external_port_id="1"', '<output axis="5" external_port_id="1"')],
         "out-of-range dimension"),
    ],
    ids=["loop-concat-axis", "loop-current-iteration-rank", "ti-concat-axis"],
)  # fmt: skip
def test_a_loop_or_tensor_iterator_openvino_refuses_is_an_error(
    name: str, edits: list[tuple[str, str]], openvino_says: str, tmp_path: Path
) -> None:
    """A concatenated output's axis beyond its body Result's rank, a current iteration Parameter of rank 2: OpenVINO
    refuses the file as it reads it. The check was clean, the layer's outputs kept their declared dims."""
    model = subgraphs.loop_model() if name == "loop" else subgraphs.ti_model()
    path = _edited(tmp_path, model, name, edits)
    with pytest.raises(RuntimeError, match=openvino_says):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    errors = [f for f in report.findings if f.severity == "error"]
    layer = "Loop_1" if name == "loop" else "TensorIterator_1"
    assert not report.ok and [(f.code, f.layer_name) for f in errors] == [("layer-invalid", layer)], report.findings
    assert openvino_says in errors[0].message and "OpenVINO refuses the model" in errors[0].message


def test_a_port_map_bound_of_minus_2_to_the_63_is_read_as_openvino_reads_it(tmp_path: Path) -> None:
    """``end="-9223372036854775808"`` is a 64-bit integer: it was refused as not one."""
    path = _edited(tmp_path, subgraphs.ti_model(), "ti", [('start="0" end="-1" stride="2" part_size="2" />',
                                                            'start="0" end="-9223372036854775808" stride="2" '
                                                            'part_size="2" />')])  # fmt: skip
    [node] = [n for n in ov.Core().read_model(str(path)).get_ops() if n.get_type_name() == "TensorIterator"]
    engine = ShapeEngine(load_ir(path))
    ti = engine.model.find_layer("TensorIterator_1")
    assert engine.state((ti.id, ti.outputs[0].id)).shape == partial_shape(node.get_output_partial_shape(0))


@pytest.mark.parametrize("part_size", [2**62, 2**63 - 1])
def test_a_huge_part_size_is_read_in_64_bit_arithmetic_as_openvino_reads_it(tmp_path: Path, part_size: int) -> None:
    """A concatenated output's ``trip count * part_size`` past int64 wraps in OpenVINO; ovreduce made a dim no int64
    holds, and ``inspect --format json`` died writing it (internal error)."""
    output = 'external_port_id="1" internal_layer_id="3" start="0" end="-1" stride="2" part_size='
    path = _edited(tmp_path, subgraphs.ti_model(), "ti", [(output + '"2"', f'{output}"{part_size}"')])
    [node] = [n for n in ov.Core().read_model(str(path)).get_ops() if n.get_type_name() == "TensorIterator"]
    model = load_ir(path)
    engine = ShapeEngine(model)
    ti = model.find_layer("TensorIterator_1")
    assert engine.state((ti.id, ti.outputs[0].id)).shape == partial_shape(node.get_output_partial_shape(0))
    dumps(inspect_model(model, all_layers=True))  # every dim fits the document's integers


def _nested_loops(x: Any, depth: int) -> Any:
    """``depth`` Loops, each body holding the next, a ReduceMean and an Add."""
    p = o8.parameter([2, 8], np.float32)
    inner = _nested_loops(p, depth - 1) if depth > 1 else o8.relu(p)
    y = o8.add(inner, o8.reduce_mean(inner, o8.constant(np.array([1], np.int64)), True))
    loop = o8.loop(o8.constant(np.int64(1)), o8.constant(np.array(True)))
    loop.set_function(ov.Model([o8.result(o8.constant(np.array(True))), o8.result(y)], [p]))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(p, x.output(0), y.output(0))
    return loop.get_iter_value(y.output(0), -1)


def test_bodies_nested_40_deep_are_read_as_openvino_reads_them(tmp_path: Path) -> None:
    """Nesting past 16 was refused ("the configured limit"), though OpenVINO reads it and docs/cli.md said any depth."""
    x = o8.parameter([2, 8], np.float32, name="x")
    model = ov.Model([o8.result(_nested_loops(x, 40))], [x])
    path = subgraphs.save(model, tmp_path, "deep")
    ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    assert report.ok and len(report.reductions) == 40 and {r.status for r in report.reductions} == {"ok"}


def test_a_tensor_iterator_concatenating_along_a_negative_axis_is_read_as_openvino_reads_it(tmp_path: Path) -> None:
    """OpenVINO counts a negative concatenation axis from the end; it was refused as out of range."""
    path = _edited(tmp_path, subgraphs.ti_model(), "ti", [('<output axis="1" external_port_id="1"',
                                                            '<output axis="-2" external_port_id="1"')])  # fmt: skip
    [node] = [n for n in ov.Core().read_model(str(path)).get_ops() if n.get_type_name() == "TensorIterator"]
    model = load_ir(path)
    engine = ShapeEngine(model)
    ti = model.find_layer("TensorIterator_1")
    assert engine.state((ti.id, ti.outputs[0].id)).shape == partial_shape(node.get_output_partial_shape(0))
    assert check_model(model).ok


def test_a_loop_body_condition_of_rank_2_is_an_error(tmp_path: Path) -> None:
    from lxml import etree

    x = o8.parameter([2, 3], np.float32, name="x")
    bx = o8.parameter([2, 3], np.float32)
    ry = o8.result(o8.add(bx, o8.constant(np.float32(1))))
    loop = o8.loop(o8.constant(np.int64(3)), o8.constant(np.bool_(True)))
    loop.set_friendly_name("Loop_1")
    loop.set_function(ov.Model([o8.result(o8.constant(np.array([True]))), ry], [bx]))
    loop.set_special_body_ports([-1, 0])
    loop.set_invariant_input(bx, x.output(0))
    out = loop.get_concatenated_slices(ry.output(0), 0, 1, 1, -1, 0)
    path = subgraphs.save(ov.Model([o8.reduce_sum(out, o8.constant(np.array([0], np.int64)), True)], [x]), tmp_path,
                          "m")  # fmt: skip
    tree = etree.parse(str(path))
    [const] = [el for el in tree.iter("layer") if el.get("type") == "Const" and el.find("data").get("shape") == "1"
               and el.find("data").get("element_type") == "boolean"]  # fmt: skip
    const.find("data").set("shape", "1,1")
    body = const.getparent().getparent()
    [edge] = [e for e in body.find("edges") if e.get("from-layer") == const.get("id")]
    [result] = [el for el in body.find("layers") if el.get("id") == edge.get("to-layer")]
    for port in (const.find("output").find("port"), result.find("input").find("port")):
        etree.SubElement(port, "dim").text = "1"
    tree.write(str(path))
    with pytest.raises(RuntimeError, match="Rank of BodyExecutionCondition output must be equal to 0 or 1"):
        ov.Core().read_model(str(path))
    errors = [f for f in check_model(load_ir(path)).findings if f.severity == "error"]
    assert [(f.code, f.layer_name) for f in errors] == [("layer-invalid", "Loop_1")], errors


@pytest.mark.parametrize("name", ["mm", "it's (2)"])
def test_a_body_layer_openvino_refuses_is_named_whatever_its_name(name: str, tmp_path: Path) -> None:
    """In a body OpenVINO's message names the layer as the file does: a quote in the name hid the match."""
    from lxml import etree

    x = o8.parameter([2, 3], np.float32, name="x")
    bx = o8.parameter([2, 3], np.float32, name="bx")
    mm = o8.matmul(bx, o8.constant(np.ones((3, 4), np.float32)), False, False)
    mm.set_friendly_name(name)
    ry = o8.result(o8.reduce_sum(mm, o8.constant(np.array([0], np.int64)), True))
    loop = o8.loop(o8.constant(np.int64(2)), o8.constant(np.bool_(True)))
    loop.set_function(ov.Model([o8.result(o8.constant(np.bool_(True))), ry], [bx]))
    loop.set_special_body_ports([-1, 0])
    loop.set_invariant_input(bx, x.output(0))
    out = loop.get_iter_value(ry.output(0), -1)
    path = subgraphs.save(ov.Model([o8.reduce_sum(out, o8.constant(np.array([0], np.int64)), True)], [x]), tmp_path,
                          "m")  # fmt: skip
    tree = etree.fromstring(path.read_bytes().replace(b'shape="2,3"', b'shape="2,5"', 1))  # the MatMul no longer fits
    for port in tree.iter("port"):
        if [d.text for d in port.findall("dim")] == ["2", "3"]:
            port.findall("dim")[1].text = "5"
    path.write_bytes(etree.tostring(tree))
    with pytest.raises(RuntimeError, match=re.escape(f"MatMul {name} (")):
        ov.Core().read_model(str(path))
    found = check_model(load_ir(path)).findings
    assert [f.layer_name for f in found if f.code == "layer-invalid"] == [name], found


def _carried_loop(path: Path, seed: str, other: str, stop: int) -> None:
    """A Loop of 4 iterations carrying ``xb`` (seeded with a ``seed``-shaped input) whose next value is a slice
    ``[0:stop]`` of an invariant ``other``-shaped input; ``xb`` is reduced in the body."""
    x, y = (o8.parameter(ov.PartialShape(s), np.float32, name=n) for s, n in ((seed, "x"), (other, "y")))
    it = o8.parameter([], np.int64, name="it")
    xb, yb = (o8.parameter(ov.PartialShape(s), np.float32, name=n) for s, n in ((seed, "xb"), (other, "yb")))
    one = o8.constant(np.array([1]))
    sliced = o8.slice(yb, o8.constant(np.array([0])), o8.constant(np.array([stop])), one)
    carried = o8.add(sliced, o8.reduce_sum(xb, o8.constant(np.array([0])), True))
    body = ov.Model([o8.result(o8.constant(np.array(True))), o8.result(carried)], [it, xb, yb], "body")
    loop = o8.loop(o8.constant(np.array(4, np.int64)), o8.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_merged_input(xb, x.output(0), body.get_results()[1].output(0))
    loop.set_invariant_input(yb, y.output(0))
    out = loop.get_iter_value(body.get_results()[1].output(0), -1)
    ov.save_model(ov.Model([o8.result(out)], [x, y], "m"), str(path), compress_to_fp16=False)


@pytest.mark.parametrize(
    ("seed", "other", "stop"),
    [("[1,6]", "[?,6]", 1), ("[3,6]", "[2..5,6]", 100), ("[1..4,6]", "[?,6]", 2), ("[2..,6]", "[?,6]", 2),
     ("[0,6]", "[0,6]", 1), ("[0,6]", "[?,6]", 2), ("[3,6]", "[3,6]", 100), ("[?,6]", "[1,6]", 1)],
)  # fmt: skip
def test_a_loop_carried_value_is_as_wide_as_openvino_makes_it(tmp_path: Path, seed: str, other: str, stop: int) -> None:
    """A carried dim is kept only where it contains what the body gives back, and a dim of 0 (the initial value's
    only) is dynamic, as OpenVINO's Loop relaxes them: ovreduce kept a 1 beside a ``..1`` and a 0, more precise
    than OpenVINO, in the body and in the reductions there."""
    path = tmp_path / "loop.xml"
    _carried_loop(path, seed, other, stop)
    loop = next(n for n in ov.Core().read_model(path).get_ordered_ops() if n.get_type_name() == "Loop")
    params = {p.get_friendly_name(): p for p in loop.get_function().get_parameters()}
    want = [partial_shape(params["xb"].get_partial_shape()), partial_shape(loop.get_output_partial_shape(0))]
    model = load_ir(path)
    try:
        engine = ShapeEngine(model)
        [layer] = [layer for layer in model.layers if layer.type == "Loop"]
        [xb] = [p for p in layer.bodies[0].graph.layers if p.name == "xb"]
        body = engine.body_engine(f"{layer.id}/body")
        got = [body.state((xb.id, xb.outputs[0].id)).shape, engine.state((layer.id, layer.outputs[0].id)).shape]
    finally:
        model.close()
    assert got == want


@pytest.mark.parametrize(("trips", "budget"), [(-1, None), (66, None), (10, None), (-1, 1000)])
def test_a_loop_rewalks_its_body_as_long_as_openvino_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trips: int, budget: int | None
) -> None:
    """70 carried values, each the next one's source, the first growing: each re-walk makes one more Parameter
    dynamic, and OpenVINO re-walks until none changes (or the trip count is spent); ovreduce stopped after 64, its
    last carried values ``[3]`` where OpenVINO's are ``[?]``, more precise than OpenVINO. Where the re-walks would
    visit more body layers than a file may cost (here a budget made small), every carried value is dynamic: less
    precise than OpenVINO's, never more."""
    if budget is not None:
        monkeypatch.setattr(subgraph, "_REWALK_LAYERS", budget)
    count = 70
    xs = [o8.parameter([3], np.float32, name=f"x{i}") for i in range(count)]
    xbs = [o8.parameter([3], np.float32, name=f"xb{i}") for i in range(count)]
    nexts = [o8.concat([xbs[0], xbs[0]], 0), *xbs[:-1]]
    results = [o8.result(o8.constant(np.array(True))), *(o8.result(v) for v in nexts)]
    loop = o8.loop(o8.constant(np.array(trips, np.int64)), o8.constant(np.array(True)))
    loop.set_function(ov.Model(results, xbs, "body"))
    loop.set_special_body_ports([-1, 0])
    for x, xb, result in zip(xs, xbs, results[1:], strict=True):
        loop.set_merged_input(xb, x.output(0), result.output(0))
    outs = [o8.result(loop.get_iter_value(result.output(0), -1)) for result in results[1:]]
    path = tmp_path / "loop.xml"
    ov.save_model(ov.Model(outs, xs, "m"), str(path), compress_to_fp16=False)
    got, want = subgraphs.output_shapes(path, "Loop")
    if budget is None:
        assert got == want
    else:
        assert all(g is not None and g.contains(w) for g, w in zip(got, want, strict=True)), got
        assert got[0] == PartialShape.dynamic(), got


def _invariant_loop() -> ov.Model:
    """A Loop of 3 iterations whose body Parameter ``bx`` takes x [6,4,5] as an invariant input, summed over axis 2."""
    x = o8.parameter([6, 4, 5], np.float32, name="x")
    bx = o8.parameter([6, 4, 5], np.float32, name="bx")
    summed = o8.reduce_sum(bx, o8.constant(np.array([2], np.int64)), keep_dims=True, name="body_rs")
    body = ov.Model([o8.result(o8.constant(True)), o8.result(summed)], [bx])
    loop = o8.loop(o8.constant(np.int64(3)), o8.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_invariant_input(bx, x.output(0))
    return ov.Model([loop.get_iter_value(summed.output(0), -1)], [x])


@pytest.mark.parametrize(
    ("model", "parameter"),
    [(_invariant_loop, "bx"), (subgraphs.nested_model, "bp"), (subgraphs.if_model, "tp"), (subgraphs.ti_model, "bp")],
    ids=["loop-invariant", "loop-sliced", "if", "tensor-iterator"],
)
def test_a_body_parameter_written_of_another_type_than_fed_is_said_as_openvino_types_it(
    tmp_path: Path, model: Any, parameter: str
) -> None:
    """A body Parameter the file writes f16 (``element_type`` and port precision) and its container feeds f32: OpenVINO
    types it f32 in a Loop or an If, from the container's input, and keeps the f16 in a TensorIterator. The finding
    says what the file writes (f16) and the type OpenVINO gives it; it said ``element_type f32`` and that OpenVINO
    uses the element_type, neither of which holds, and made a TensorIterator's Parameter f32."""
    path = subgraphs.save(model(), tmp_path, "m")
    text = path.read_text()
    start = text.index(f'name="{parameter}"')
    end = text.index("</layer>", start)
    layer = text[start:end].replace('element_type="f32"', 'element_type="f16"').replace('"FP32"', '"FP16"')
    path.write_text(text[:start] + layer + text[end:])
    container = next(op for op in ov.Core().read_model(path).get_ordered_ops() if bodies(op))
    typed = {p.get_friendly_name(): p.get_element_type() for _, b in bodies(container) for p in b.get_parameters()}
    found = check_model(load_ir(path)).findings
    said = [f.message for f in found if f.code == "precision-mismatch" and f.layer_name == parameter]
    if typed[parameter] == ov.Type.f16:
        assert said == []
    else:
        assert typed[parameter] == ov.Type.f32
        assert said == [
            "element_type f16, but its container feeds it f32, the type OpenVINO gives it; output port 0 declares "
            "precision FP16 (f16)"
        ]


def _openvino_ops(model: Any) -> int:
    """The ops of an ``openvino.Model``, its bodies' (nested ones too) included."""
    return sum(1 + sum(_openvino_ops(body) for _, body in bodies(op)) for op in model.get_ordered_ops())


@pytest.mark.parametrize("path", ["tests/exports/loop_trip_count/model.xml", "ir_samples/rmsnorm.xml"])
def test_layer_count_is_every_layer_bodies_included(path: str) -> None:
    """``layer_count`` (check's and inspect's documents, the text header "12 layers, 4 reductions") counted the top
    level only, beside a reduction count that includes the bodies (3 of those 4 were in them). It counts what
    OpenVINO reads: every op, each body's included."""
    file = Path(__file__).resolve().parents[2] / path
    model = load_ir(file)
    expected = _openvino_ops(ov.Core().read_model(file))
    assert check_model(model).layer_count == expected
    assert inspect_model(model).layer_count == expected
