"""Port-map entries with a negative ``external_port_id``, held to ``read_model``.

OpenVINO keys a port map's ``<input>`` and ``<output>`` entries by ``external_port_id`` and reads the first of each
(``parse_input_description``, ``parse_output_description``, ``parse_purpose_attribute`` in ``ir_deserializer.cpp``).
Of a negative one it reads the ``internal_layer_id`` as a number and nothing more, unless it is a Loop's
``execution_condition`` output or ``current_iteration`` input, or an input it slices or a back edge feeds (which it
refuses: an input description of no port). A slicing axis is read as an unsigned integer, whatever the port declares.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import IRStructureError, load_ir
from ovreduce._openvino import partial_shape
from ovreduce.infer import ShapeEngine
from tests.ir import subgraphs

_CONDITION = re.compile(r'<output external_port_id="-1" internal_layer_id="\d+" purpose="execution_condition" />')


def _loop(folder: Path) -> Path:
    """A Loop merging x [2,3,4] through a body ReduceSum, with a concatenated ReduceMean output."""
    xl = ops.parameter([2, 3, 4], ov.Type.f32, name="xl")
    bp = ops.parameter([2, 3, 4], ov.Type.f32, name="bp")
    add = ops.add(bp, ops.reduce_sum(bp, ops.constant(np.array([1], np.int64)), True))
    body = ov.Model(
        [
            ops.result(ops.constant(True)),
            ops.result(add),
            ops.result(ops.reduce_mean(add, ops.constant(np.array([0, 2], np.int64)), False)),
        ],
        [bp],
    )
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bp, xl.output(0), body.get_results()[1].output(0))
    last = loop.get_iter_value(body.get_results()[1].output(0), -1)
    cat = loop.get_concatenated_slices(body.get_results()[2].output(0), 0, 1, 1, -1, 0)
    path = folder / "loop.xml"
    ov.save_model(ov.Model([last, cat], [xl], "loop"), str(path), compress_to_fp16=False)
    assert _CONDITION.search(path.read_text())
    return path


def _body_const(text: str) -> str:
    found = re.search(r'<layer id="(\d+)" name="[^"]*" type="Const"', text.split("<body>")[1])
    assert found is not None
    return found[1]


@pytest.mark.parametrize(
    "entry",
    [
        '<output external_port_id="-1" internal_layer_id="{const}" />',  # a body Const, not a Result
        '<output external_port_id="-5" internal_layer_id="999" />',  # no body layer, an id below -1
        '<output external_port_id="-1" internal_layer_id="-4" />',  # a second -1: never read at all
        '<input external_port_id="-1" internal_layer_id="999" />',  # no body layer
        '<input external_port_id="-1" internal_layer_id="{const}" />',  # a body Const, not a Parameter
    ],
)
def test_an_entry_openvino_does_not_resolve_is_read_as_openvino_reads_it(tmp_path: Path, entry: str) -> None:
    path = _loop(tmp_path)
    text = path.read_text()
    condition = _CONDITION.search(text)[0]  # type: ignore[index]
    path.write_text(text.replace(condition, condition + "\n" + entry.format(const=_body_const(text))))
    ov.Core().read_model(str(path))
    load_ir(path)


def test_a_condition_after_another_output_of_its_id_is_not_read(tmp_path: Path) -> None:
    path = _loop(tmp_path)
    text = path.read_text()
    condition = _CONDITION.search(text)[0]  # type: ignore[index]
    result = re.search(r'<output axis="0" external_port_id="\d+" internal_layer_id="(\d+)"', text)[1]  # type: ignore[index]
    shadow = f'<output external_port_id="-1" internal_layer_id="{result}" />'
    path.write_text(text.replace(condition, shadow + "\n" + condition))
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))
    with pytest.raises(IRStructureError, match='has no <output purpose="execution_condition">'):
        load_ir(path)


@pytest.mark.parametrize("extra", ['axis="0" ', ""])
def test_an_input_of_no_port_that_is_sliced_or_fed_back_is_refused(tmp_path: Path, extra: str) -> None:
    path = _loop(tmp_path)
    text = path.read_text()
    merged = re.search(r'<input external_port_id="2" internal_layer_id="(\d+)" />', text)
    assert merged is not None
    path.write_text(
        text.replace(merged[0], merged[0] + f'\n<input {extra}external_port_id="-1" internal_layer_id="{merged[1]}" />')
    )
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))
    with pytest.raises(IRStructureError, match="external_port_id=-1 is no input port"):
        load_ir(path)


def test_a_negative_slicing_axis_is_refused_where_the_port_declares_no_dims(tmp_path: Path) -> None:
    path = _loop(tmp_path)
    text = path.read_text().replace('<input external_port_id="2"', '<input axis="-1" external_port_id="2"')
    text = re.sub(
        r'(type="Loop".*?<input>.*?<port id="2" precision="FP32")>\s*(?:<dim>\d+</dim>\s*)+</port>',
        r"\1 />",
        text,
        count=1,
        flags=re.S,
    )
    path.write_text(text)
    with pytest.raises(RuntimeError, match="not an unsigned 64 bit integer"):
        ov.Core().read_model(str(path))
    with pytest.raises(IRStructureError, match="axis=-1; expected an axis of 0 or more"):
        load_ir(path)


def test_a_condition_of_an_id_below_minus_one_is_read(tmp_path: Path) -> None:
    """OpenVINO finds a Loop's condition by its purpose, whatever the negative id: ovreduce refused an id of -2."""
    path = _loop(tmp_path)
    text = path.read_text()
    condition = _CONDITION.search(text)[0]  # type: ignore[index]
    path.write_text(text.replace(condition, condition.replace('external_port_id="-1"', 'external_port_id="-2"')))
    ov.Core().read_model(str(path))
    load_ir(path).close()


def _counted_loop(folder: Path) -> Path:
    """A Loop slicing x [2,12,5] in threes along axis 1 into a body ReduceMean, its body also taking the current
    iteration (a body-only Parameter: ``external_port_id="-1"``, ``purpose="current_iteration"``)."""
    bx = ops.parameter([2, 3, 5], ov.Type.f32)
    it = ops.parameter([], ov.Type.i64)
    mean = ops.reduce_mean(bx, ops.constant(np.array([1], np.int64)), False, name="body_mean")
    scaled = ops.multiply(mean, ops.convert(it, ov.Type.f32))
    body = ov.Model([ops.result(scaled), ops.result(ops.constant(True))], [bx, it])
    loop = ops.loop(ops.constant(np.int64(4)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([1, 1])
    x = ops.parameter([2, 12, 5], ov.Type.f32, name="x")
    loop.set_sliced_input(bx, x.output(0), 0, 3, 3, -1, 1)
    out = loop.get_concatenated_slices(scaled.output(0), 0, 1, 1, -1, 1)
    path = folder / "counted.xml"
    ov.save_model(ov.Model([ops.result(out)], [x], "counted"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("ext", ["-2", "-3", "-100", str(-(2**31)), str(-(2**63)), "-0001"])
def test_a_current_iteration_of_an_id_below_minus_one_is_read(tmp_path: Path, ext: str) -> None:
    """OpenVINO finds a Loop's current iteration by its purpose, whatever the negative id, as its condition: ovreduce
    refused an id of -2 ("expected 0 to 0 (or -1 for a body-only Parameter; OpenVINO refuses the model)")."""
    from ovreduce.check import check_model

    path = _counted_loop(tmp_path)
    text = path.read_text()
    entry = re.search(r'<input external_port_id="-1" internal_layer_id="\d+" purpose="current_iteration" />', text)
    assert entry is not None
    path.write_text(text.replace(entry[0], entry[0].replace('"-1"', f'"{ext}"')))
    model = ov.Core().read_model(str(path))
    ir = load_ir(path)
    try:
        report = check_model(ir)
    finally:
        ir.close()
    assert report.ok, [f.message for f in report.findings]
    [loop] = [op for op in model.get_ordered_ops() if op.get_type_name() == "Loop"]
    [mean] = [op for op in loop.get_function().get_ordered_ops() if op.get_friendly_name() == "body_mean"]
    [reduction] = report.reductions
    assert reduction.inferred_output_shape == [d.get_length() for d in mean.get_output_partial_shape(0)]


def test_a_second_output_of_one_port_is_not_read(tmp_path: Path) -> None:
    """OpenVINO keeps the first <output> of an external_port_id (a std::map's emplace) and reads the model:
    ovreduce refused the second ("already mapped")."""
    path = _loop(tmp_path)
    text = path.read_text()
    condition = _CONDITION.search(text)[0]  # type: ignore[index]
    concat = re.search(r'<output axis="0" external_port_id="(\d+)" internal_layer_id="\d+"', text)
    plain = re.search(r'<output external_port_id="\d+" internal_layer_id="(\d+)" />', text)
    assert concat is not None and plain is not None
    second = f'<output external_port_id="{concat[1]}" internal_layer_id="{plain[1]}" />'
    path.write_text(text.replace(condition, condition + "\n" + second))
    model = ov.Core().read_model(str(path))
    ir = load_ir(path)
    try:
        [loop] = [layer for layer in ir.layers if layer.type == "Loop"]
        [body] = loop.bodies
        [kept] = [m for m in body.outputs if m.external_port_id == int(concat[1])]
        assert kept.axis == 0, "the first <output> of the port is the one read"
    finally:
        ir.close()
    assert model is not None


@pytest.mark.parametrize(
    "entry",
    [
        '<output external_port_id="-1" internal_layer_id="{const}" purpose="execution_condition" />',
        '<input external_port_id="-1" internal_layer_id="999" purpose="current_iteration" />',
    ],
)
def test_a_tensor_iterators_purpose_is_not_read(tmp_path: Path, entry: str) -> None:
    """Only a Loop's port map has special ports (``parse_purpose_attribute``): OpenVINO reads a TensorIterator's
    negative entry with a purpose as a number, whatever layer it names; ovreduce looked the layer up and refused."""
    x = ops.parameter([2, 6, 4], ov.Type.f32, name="x")
    bp = ops.parameter([2, 2, 4], ov.Type.f32, name="bp")
    body = ov.Model([ops.result(ops.reduce_max(bp, ops.constant(np.array([2], np.int64)), True))], [bp])
    ti = ov.opset8.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(bp, x.output(0), 0, 2, 2, -1, 1)
    out = ti.get_concatenated_slices(body.get_results()[0].output(0), 0, 2, 2, -1, 1)
    path = tmp_path / "ti.xml"
    ov.save_model(ov.Model([out], [x], "ti"), str(path), compress_to_fp16=False)
    text = path.read_text()
    const = re.search(r'<layer id="(\d+)" name="[^"]*" type="Const"', text.split("<body>")[1])
    assert const is not None
    path.write_text(text.replace("</port_map>", entry.format(const=const[1]) + "\n</port_map>", 1))
    ov.Core().read_model(str(path))
    load_ir(path).close()


@pytest.mark.parametrize("external", ["9", "0"], ids=["after-the-ports", "before-the-ports"])
def test_an_output_past_the_loops_ports_is_read_as_openvino_reads_it(tmp_path: Path, external: str) -> None:
    """A third ``<output>`` of a Loop of two output ports: OpenVINO reads it, its outputs taking the entries in the
    order of their ids (the last one an output that feeds nothing); the model was refused ("maps 3 outputs")."""
    path = _loop(tmp_path)
    text = path.read_text()
    condition = _CONDITION.search(text)
    assert condition is not None
    result = re.search(r'<output axis="0" external_port_id="4" internal_layer_id="(\d+)"', text)
    assert result is not None
    path.write_text(text.replace(condition[0], f'{condition[0]}<output external_port_id="{external}" '
                                               f'internal_layer_id="{result[1]}" />'))  # fmt: skip
    got, want = subgraphs.output_shapes(path, "Loop")
    assert got == want[: len(got)]


def _if(folder: Path, condition: bool | None) -> Path:
    """An If over x [2,3,4] whose bodies map a ReduceSum (then) or ReduceMax (else) over axis 1 to its one output, each
    body holding a second, unmapped Result (a ReLU of its Parameter); the condition a constant or a Parameter."""
    x = ops.parameter([2, 3, 4], ov.Type.f32, name="x")
    params = [x]
    if condition is None:
        cond = ops.parameter([], ov.Type.boolean, name="cond")
        params.append(cond)
    else:
        cond = ops.constant(condition)
    tp, ep = ops.parameter([2, 3, 4], ov.Type.f32, name="tp"), ops.parameter([2, 3, 4], ov.Type.f32, name="ep")
    axis = ops.constant(np.array([1], np.int64))
    then = ov.Model([ops.result(ops.reduce_sum(tp, axis, False)), ops.result(ops.relu(tp))], [tp])
    other = ov.Model([ops.result(ops.reduce_max(ep, axis, False)), ops.result(ops.relu(ep))], [ep])
    node = ops.if_op(cond)
    node.set_then_body(then)
    node.set_else_body(other)
    node.set_input(x.output(0), tp, ep)
    out = node.set_output(then.get_results()[0], other.get_results()[0])
    path = folder / "if.xml"
    ov.save_model(ov.Model([out], params, "if"), str(path), compress_to_fp16=False)
    return path


def _extra_if_output(path: Path, roles: tuple[str, ...], external: str) -> None:
    """One more <output> in each of ``roles``' port maps, mapping the body's unmapped Result to ``external``."""
    text = path.read_text()
    for role in roles:
        body = text.split(f"<{role}_body>")[1].split(f"</{role}_body>")[0]
        mapped = re.search(
            rf"<{role}_port_map>.*?<output external_port_id=\"\d+\" internal_layer_id=\"(\d+)\"", text, re.S
        )
        results = re.findall(r'<layer id="(\d+)" name="[^"]*" type="Result"', body)
        assert mapped is not None and len(results) == 2
        [free] = [r for r in results if r != mapped[1]]
        entry = f'<output external_port_id="{external}" internal_layer_id="{free}" />'
        text = text.replace(f"</{role}_port_map>", f"{entry}</{role}_port_map>")
    path.write_text(text)


@pytest.mark.parametrize("external", ["9", "0"], ids=["after-the-ports", "before-the-ports"])
@pytest.mark.parametrize(("condition", "roles"), [(None, ("then", "else")), (True, ("then",)), (False, ("then",)),
                                                  (True, ("else",)), (False, ("then", "else"))])  # fmt: skip
def test_an_output_past_the_ifs_ports_is_read_as_openvino_reads_it(
    tmp_path: Path, external: str, condition: bool | None, roles: tuple[str, ...]
) -> None:
    """An <output> past an If's ports, in both port maps (or in either, under a constant condition): OpenVINO reads the
    model, its outputs taking each body's entries in the order of their ids; ovreduce refused it ("maps 2 outputs but
    the layer has 1 output ports"), a model OpenVINO reads."""
    path = _if(tmp_path, condition)
    _extra_if_output(path, roles, external)
    node = next(n for n in ov.Core().read_model(path).get_ordered_ops() if n.get_type_name() == "If")
    model = load_ir(path)
    try:
        [layer] = [layer for layer in model.layers if layer.type == "If"]
        got = ShapeEngine(model).state((layer.id, layer.outputs[0].id)).shape
    finally:
        model.close()
    assert got == partial_shape(node.get_output_partial_shape(0))


def test_an_output_past_the_ifs_ports_in_one_body_is_refused_where_both_are_inferred(tmp_path: Path) -> None:
    """Under a condition that is not constant, an <output> past the ports in the then-body's port map only: OpenVINO
    refuses the model (the output is not associated with results in else_body), and so does ovreduce."""
    path = _if(tmp_path, None)
    _extra_if_output(path, ("then",), "9")
    with pytest.raises(RuntimeError, match="not associated with results in else_body"):
        ov.Core().read_model(str(path))
    model = load_ir(path)
    try:
        with pytest.raises(IRStructureError, match="not associated with results in else_body"):
            ShapeEngine(model)
    finally:
        model.close()
