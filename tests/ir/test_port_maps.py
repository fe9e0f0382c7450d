"""Port maps and bodies of If, Loop and TensorIterator, read as OpenVINO reads them: each mutant of a saved model is
refused by ovreduce exactly where OpenVINO's ``read_model`` refuses it, and otherwise gives OpenVINO's reduction shapes
(a body is validated on its Parameters' declared shapes as it is read, before its container feeds it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovreduce._openvino import clean_message
from ovreduce.check import check_model
from ovreduce.errors import IRStructureError
from ovreduce.ir.parser import load_ir
from tests.check.test_body_differential import _name_key, openvino_reductions
from tests.ir import subgraphs
from tests.ir.test_differential import _chain


def _drop(pattern: str) -> Callable[[str], str]:
    """The first line that matches ``pattern`` removed."""

    def mutate(xml: str) -> str:
        found = re.search(rf"^[^\n]*{pattern}[^\n]*\n", xml, re.MULTILINE)
        assert found is not None, pattern
        return xml[: found.start()] + xml[found.end() :]

    return mutate


def _constant_condition(xml: str) -> str:
    """The If's condition Parameter made a boolean Const, true: a byte the test appends to the model's .bin."""
    found = re.search(r'type="Parameter" version="opset1">\s*<data shape="" element_type="boolean" />', xml)
    assert found is not None
    return xml.replace(found[0], 'type="Const" version="opset1">\n\t\t\t<data element_type="boolean" shape="" '
                                 'offset="APPENDED" size="1" />', 1)  # fmt: skip


def _false_condition(xml: str) -> str:
    """The If's condition a boolean Const, false: the second byte the test appends to the model's .bin."""
    return _constant_condition(xml).replace('offset="APPENDED"', 'offset="APPENDED_FALSE"', 1)


def _drop_output_of(port_map: str) -> Callable[[str], str]:
    """The first <output> of ``port_map`` removed."""

    def mutate(xml: str) -> str:
        start = xml.index(f"<{port_map}>")
        found = re.compile(r"\n[^\n]*<output [^\n]*").search(xml, start, xml.index(f"</{port_map}>"))
        assert found is not None
        return xml[: found.start()] + xml[found.end() :]

    return mutate


def _duplicate_first_input(xml: str) -> str:
    """The port map's first <input> given twice, the copy slicing another axis."""
    found = re.search(r'(<input axis=")0(" external_port_id="\d+"[^>]*/>)', xml)
    assert found is not None
    return xml.replace(found[0], found[0] + found[1] + "1" + found[2], 1)


def _nth(xml: str, old: str, new: str, n: int) -> str:
    """``xml`` with the ``n``-th ``old`` (from 1) replaced by ``new``."""
    at = -1
    for _ in range(n):
        at = xml.index(old, at + 1)
    return xml[:at] + new + xml[at + len(old) :]


def _back_edge_to_sliced(xml: str) -> str:
    """The Loop's back edge sent to the body Parameter its port map slices (OpenVINO reads no back edge there)."""
    edge = re.search(r'<back_edges>\s*<edge from-layer="\d+" to-layer="(\d+)"', xml)
    sliced = re.search(r'<input axis="\d+" external_port_id="\d+" internal_layer_id="(\d+)"', xml)
    assert edge is not None and sliced is not None and edge[1] != sliced[1]
    return xml[: edge.start(1)] + sliced[1] + xml[edge.end(1) :]


def _back_edge(end: str, to: Callable[[str], str]) -> Callable[[str], str]:
    """The Loop's back edge with its ``end`` (``from-layer`` or ``to-layer``) sent to the layer ``to`` picks."""

    def mutate(xml: str) -> str:
        edge = re.search(rf'<back_edges>\s*<edge [^>]*{end}="(\d+)"', xml)
        assert edge is not None
        return xml[: edge.start(1)] + to(xml) + xml[edge.end(1) :]

    return mutate


def _ir_v10(xml: str) -> str:
    return xml.replace('<net name="loop_model" version="11">', '<net name="loop_model" version="10">', 1)


def _second_output_unused(xml: str) -> str:
    """The Loop's second output feeding nothing: its Result and that Result's edge removed."""
    edge = re.search(r'\n\s*<edge from-layer="4" from-port="5" to-layer="(\d+)" to-port="0" />', xml)
    assert edge is not None
    result = re.search(rf'\n\s*<layer id="{edge[1]}" name="[^"]*" type="Result".*?</layer>', xml, re.DOTALL)
    assert result is not None
    return xml[: result.start()] + xml[result.end() : edge.start()] + xml[edge.end() :]


def _one_output_loop() -> ov.Model:
    return subgraphs.loop_model(last_only=True)


def _one_output_loop_reduced() -> ov.Model:
    """The one-output Loop, reduced after it: where the port map names no condition, the Loop's output has a dynamic
    rank to OpenVINO, and so has the reduction's."""
    model = _one_output_loop()
    axes = ov.opset8.constant(np.array([0], np.int64))
    reduced = ov.opset8.reduce_max(model.get_results()[0].input_value(0), axes, keep_dims=False, name="after")
    return ov.Model([reduced], model.get_parameters(), "loop_model")


_NO_CONDITION = _drop('purpose="execution_condition"')


def _body_reduction(xml: str) -> str:
    found = re.search(r'<layer id="(\d+)" name="ReduceMean_loop"', xml)
    assert found is not None
    return found[1]


CASES = {
    "if-no-else-output": (subgraphs.if_model, _drop(r'<output external_port_id="\d+" internal_layer_id="\d+" />\s*$')),
    "if-const-no-else-output": (subgraphs.if_model, _chain(_constant_condition, _drop(
        r'<output external_port_id="\d+" internal_layer_id="\d+" />\s*$'))),
    # a Loop whose port map names no execution_condition OpenVINO builds with one output, checking no more: it
    # refuses an edge from another output port, or (in an IR v11) a second output port
    # an If of constant condition has as many outputs as its then-branch maps (or the branch taken, if more)
    "if-const-no-then-output": (subgraphs.if_model, _chain(_constant_condition, _drop_output_of("then_port_map"))),
    "if-const-false-no-then-output": (subgraphs.if_model, _chain(_false_condition, _drop_output_of("then_port_map"))),
    "if-const-false-no-else-output": (subgraphs.if_model, _chain(_false_condition, _drop_output_of("else_port_map"))),
    "if-const-false-no-output": (subgraphs.if_model, _chain(_false_condition, _drop_output_of("then_port_map"),
                                                            _drop_output_of("else_port_map"))),
    "loop-no-condition": (subgraphs.loop_model, _NO_CONDITION),
    "loop-no-condition-v10": (subgraphs.loop_model, _chain(_NO_CONDITION, _ir_v10)),
    "loop-no-condition-second-output-unused": (subgraphs.loop_model, _chain(_NO_CONDITION, _second_output_unused)),
    "loop-no-condition-second-output-unused-v10": (subgraphs.loop_model, _chain(_NO_CONDITION, _second_output_unused,
                                                                                _ir_v10)),
    "loop-one-output-no-condition": (_one_output_loop, _NO_CONDITION),
    "loop-one-output-no-condition-v10": (_one_output_loop, _chain(_NO_CONDITION, _ir_v10)),
    "loop-one-output-no-condition-reduced": (_one_output_loop_reduced, _NO_CONDITION),
    "loop-one-output-no-purpose": (_one_output_loop, lambda x: x.replace(' purpose="execution_condition"', "")),
    "loop-one-output-purpose-case": (_one_output_loop, lambda x: x.replace('purpose="execution_condition"',
                                                                           'purpose="EXECUTION_CONDITION"')),
    "loop-one-output-no-condition-input-unmapped": (_one_output_loop, _chain(_NO_CONDITION, _drop(
        r'<input external_port_id="3"'))),
    "loop-one-output-no-condition-output-unmapped": (_one_output_loop, _chain(_NO_CONDITION, _drop(
        r'<output external_port_id="4"'))),
    "loop-unknown-purpose": (subgraphs.loop_model, lambda x: x.replace('purpose="execution_condition"', 'purpose="x"')),
    "loop-purpose-case": (subgraphs.loop_model,
                          lambda x: x.replace('purpose="execution_condition"', 'purpose="Execution_Condition"')),
    "loop-input-twice": (subgraphs.loop_model, _duplicate_first_input),
    "loop-body-parameter-rank-2": (subgraphs.loop_model, lambda x: x.replace('shape="1,3,4"', 'shape="3,4"', 1)),
    "loop-body-parameter-dynamic": (subgraphs.loop_model, lambda x: x.replace('shape="1,3,4"', 'shape="?,3,?"', 1)),
    "if-body-parameter-rank-1": (subgraphs.if_model, lambda x: x.replace('<data shape="2,3,4"', '<data shape="6"', 2)
                                 .replace('<data shape="6"', '<data shape="2,3,4"', 1)),
    "nested-body-parameter-rank-1": (subgraphs.nested_model, lambda x: _nth(x, 'shape="1,6"', 'shape="6"', 2)),
    "nested-outer-parameter-rank-1": (subgraphs.nested_model, lambda x: _nth(x, 'shape="1,6"', 'shape="6"', 1)),
    "loop-back-edge-to-sliced-parameter": (subgraphs.loop_model, _back_edge_to_sliced),
    # OpenVINO looks up the back edge of each Parameter it does not slice, and reads nothing else of the others
    "loop-back-edge-to-no-layer": (subgraphs.loop_model, _back_edge("to-layer", lambda _: "99")),
    "loop-back-edge-to-a-reduction": (subgraphs.loop_model, _back_edge("to-layer", _body_reduction)),
    "loop-back-edge-between-no-layers": (subgraphs.loop_model, _chain(_back_edge("to-layer", lambda _: "99"),
                                                                      _back_edge("from-layer", lambda _: "98"))),
    "loop-back-edge-from-no-layer": (subgraphs.loop_model, _back_edge("from-layer", lambda _: "98")),
    "loop-back-edge-from-a-reduction": (subgraphs.loop_model, _back_edge("from-layer", _body_reduction)),
    "loop-input-unmapped": (subgraphs.loop_model, _drop(r'<input external_port_id="3"')),
    "loop-input-renumbered": (subgraphs.loop_model, lambda x: x.replace('<input external_port_id="3"',
                                                                        '<input external_port_id="31"')),
    "loop-output-unmapped": (subgraphs.loop_model, _drop(r'<output external_port_id="4"')),
    "loop-output-renumbered": (subgraphs.loop_model, lambda x: x.replace('<output external_port_id="4"',
                                                                         '<output external_port_id="41"')),
    "ti-input-renumbered": (subgraphs.ti_model, lambda x: x.replace('<input axis="1" external_port_id="0"',
                                                                    '<input axis="1" external_port_id="7"')),
    "ti-no-input": (subgraphs.ti_model, _drop(r"<input axis=")),
    "ti-no-output": (subgraphs.ti_model, _drop(r"<output axis=")),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_a_port_map_is_refused_where_openvino_refuses_it(tmp_path: Path, case: str) -> None:
    build, mutate = CASES[case]
    saved = subgraphs.save(build(), tmp_path, "saved")
    path = tmp_path / "m.xml"
    xml = saved.read_text()
    mutated = mutate(xml)
    assert mutated != xml
    weights = saved.with_suffix(".bin").read_bytes()
    appended = mutated.replace('offset="APPENDED_FALSE"', f'offset="{len(weights) + 1}"')
    path.write_text(appended.replace('offset="APPENDED"', f'offset="{len(weights)}"'))
    path.with_suffix(".bin").write_bytes(weights + b"\x01\x00")
    try:
        ov_model = ov.Core().read_model(path)
        refused = None
    except Exception as exc:
        refused = clean_message(exc)
    if refused is not None:
        with pytest.raises(IRStructureError, match="OpenVINO refuses the model") as info:
            check_model(load_ir(path))
        assert info.value.line is not None  # where in the file, in the message as printed too
        assert str(info.value).startswith(f"{path}:{info.value.line}: "), str(info.value)
        return
    model = load_ir(path)
    report = check_model(model)
    got = {_name_key(model, r.body_path, r.layer_name): r.inferred_output_shape for r in report.reductions}
    assert got == openvino_reductions(ov_model)


@pytest.mark.parametrize("version", ["10", "11"])
def test_a_loop_whose_body_takes_its_condition_is_read_as_openvino_reads_it(tmp_path: Path, version: str) -> None:
    """OpenVINO's own test model loop_2d_add.xml (an IR v10) maps the Loop's condition input (external port 1) to a
    body Parameter, merged with the condition Result by a back edge: OpenVINO reads it, and ovreduce counted that
    entry among the other inputs and refused the model; as a v10, it also took the body's Result feeding on a
    Parameter for a clash of names (OpenVINO names the model's inputs and outputs only, not a body's)."""
    data = Path(__file__).parent / "data"
    path = tmp_path / "loop_2d_add.xml"
    path.write_text((data / "loop_2d_add.xml").read_text().replace('version="11"', f'version="{version}"', 1))
    path.with_suffix(".bin").write_bytes((data / "loop_2d_add.bin").read_bytes())
    ov.Core().read_model(path)
    report = check_model(load_ir(path))
    assert report.ok and not report.findings, report.findings


def test_a_loop_slicing_its_scalar_condition_is_refused_as_openvino_refuses_it(tmp_path: Path) -> None:
    """loop_2d_add.xml with its condition's port-map entry slicing axis 0 of that scalar: OpenVINO refuses the model
    ("Accessing out-of-range dimension"), and so does ovreduce, on the Loop."""
    data = Path(__file__).parent / "data"
    path = tmp_path / "loop.xml"
    xml = (data / "loop_2d_add.xml").read_text()
    path.write_text(xml.replace('<input external_port_id="1"', '<input axis="0" external_port_id="1"', 1))
    path.with_suffix(".bin").write_bytes((data / "loop_2d_add.bin").read_bytes())
    with pytest.raises(RuntimeError, match="Accessing out-of-range dimension"):
        ov.Core().read_model(path)
    report = check_model(load_ir(path))
    assert not report.ok
    [refusal] = [f for f in report.findings if f.code == "layer-invalid"]
    assert refusal.layer_name == "a_final5" and "OpenVINO refuses the model too" in refusal.message, refusal


@pytest.mark.parametrize("values", [b"\x01\x00", b""])
def test_an_if_condition_constant_of_other_than_one_value_is_refused(tmp_path: Path, values: bytes) -> None:
    """OpenVINO refuses an If whose condition is a constant of two values or of none ("The number of values in the If
    condition constant is greater than 1"); ovreduce took it for a condition it could not decide."""
    saved = subgraphs.save(subgraphs.if_model(), tmp_path, "saved")
    weights = saved.with_suffix(".bin").read_bytes()
    size = len(values)
    declared = f'shape="{size}" offset="{len(weights)}" size="{size}"'
    xml = _constant_condition(saved.read_text()).replace('shape="" offset="APPENDED" size="1"', declared)
    port = r'(name="cond"[^>]*>\s*<data [^>]*/>\s*<output>\s*<port [^>]*>)'
    xml = re.sub(port, rf"\1<dim>{size}</dim>", xml, count=1)
    path = tmp_path / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(weights + values)
    with pytest.raises(RuntimeError, match="The number of values in the If condition constant is greater than 1"):
        ov.Core().read_model(path)
    report = check_model(load_ir(path))
    [refusal] = [f for f in report.findings if f.code == "layer-invalid"]
    assert refusal.layer_name == "If_1" and "OpenVINO refuses the model at this layer too" in refusal.message


@pytest.mark.parametrize(
    ("written", "declared"),
    [('offset="0" shape="1" size="8"/>\n<output><port id="1" precision="I64"><dim>1</dim></port>',
      'offset="21" shape="2" size="16"/>\n<output><port id="1" precision="I64"><dim>2</dim></port>'),
     ('offset="8" shape="" size="1"/>\n<output><port id="1" precision="BOOL"/>',
      'offset="37" shape="2" size="2"/>\n<output><port id="1" precision="BOOL"><dim>2</dim></port>')],
    ids=["trip count", "execution condition"],
)  # fmt: skip
def test_a_loop_trip_count_or_condition_constant_of_several_values_is_refused(
    tmp_path: Path, written: str, declared: str
) -> None:
    """OpenVINO refuses a Loop whose trip count or condition is a constant of two values ("The number of values in the
    TripCount constant is greater than 1"); ovreduce walked it as a Loop of unknown trips, and said OK."""
    data = Path(__file__).parent / "data"
    xml = (data / "loop_2d_add.xml").read_text()
    assert written in xml
    path = tmp_path / "loop.xml"
    path.write_text(xml.replace(written, declared, 1))
    weights = (data / "loop_2d_add.bin").read_bytes()
    path.with_suffix(".bin").write_bytes(weights + (3).to_bytes(8, "little") * 2 + b"\x01\x01")
    with pytest.raises(RuntimeError, match=r"The number of values in the (TripCount|Condition) constant is greater"):
        ov.Core().read_model(path)
    report = check_model(load_ir(path))
    [refusal] = [f for f in report.findings if f.code == "layer-invalid"]
    assert refusal.layer_name == "a_final5" and "constant is greater than 1" in refusal.message, refusal


def _float_condition_if(condition: float) -> ov.Model:
    """An If on an f32 Const condition over x [2,3,4] (then: ReduceSum axis 2 to [2,3]; else: ReduceMax axis 1 kept,
    [2,1,4]), then ``top``, a ReduceMean over axis 0 of its output."""
    x = ov.opset8.parameter([2, 3, 4], np.float32, name="x")
    tp = ov.opset8.parameter([2, 3, 4], np.float32, name="tp")
    ep = ov.opset8.parameter([2, 3, 4], np.float32, name="ep")
    then_body = ov.Model([ov.opset8.result(ov.opset8.reduce_sum(tp, subgraphs._axes([2]), keep_dims=False))], [tp])
    else_body = ov.Model([ov.opset8.result(ov.opset8.reduce_max(ep, subgraphs._axes([1]), keep_dims=True))], [ep])
    node = ov.opset8.if_op(ov.opset8.constant(np.array(condition, np.float32)))
    node.set_then_body(then_body)
    node.set_else_body(else_body)
    node.set_input(x.output(0), tp, ep)
    out = node.set_output(then_body.get_results()[0], else_body.get_results()[0])
    return ov.Model([ov.opset8.reduce_mean(out, subgraphs._axes([0]), keep_dims=False, name="top")], [x])


def _float_trip_count_loop(trips: float, condition: float) -> ov.Model:
    """A Loop of an f32 Const trip count whose body condition is an f32 Const, concatenating a ReduceSum of x [2,3]
    along axis 0, then ``top``, a ReduceMean over axis 1 of it."""
    x = ov.opset5.parameter([2, 3], np.float32, name="x")
    bp = ov.opset5.parameter([2, 3], np.float32, name="bp")
    reduced = ov.opset5.reduce_sum(bp, subgraphs._axes([1]), keep_dims=True)
    keep_going = ov.opset5.result(ov.opset5.constant(np.array(condition, np.float32)))
    body = ov.Model([keep_going, ov.opset5.result(reduced)], [bp])
    node = ov.opset5.loop(ov.opset5.constant(np.array(trips, np.float32)), ov.opset5.constant(np.array(True)))
    node.set_function(body)
    node.set_special_body_ports([-1, 0])
    node.set_invariant_input(bp, x.output(0))
    stacked = node.get_concatenated_slices(reduced.output(0), 0, 1, 1, -1, 0)
    return ov.Model([ov.opset5.reduce_mean(stacked, subgraphs._axes([1]), keep_dims=False, name="top")], [x])


@pytest.mark.parametrize(
    "model",
    [
        *(pytest.param(lambda c=c: _float_condition_if(c), id=f"if-{c}") for c in (0.5, -0.25, 0.0, float("nan"))),
        *(
            pytest.param(lambda t=t, c=c: _float_trip_count_loop(t, c), id=f"loop-{t}-{c}")
            for t in (2.5, 2.999, 0.5, -0.5, -1.5, 3.0, -2.0, -7.0)  # (below -1: no iteration, as 0)
            for c in (1.0, 0.5, 0.0)
        ),
    ],
)
def test_a_constant_condition_or_trip_count_of_a_float_type_is_read_as_openvino_casts_it(
    tmp_path: Path, model: Callable[[], ov.Model]
) -> None:
    """OpenVINO reads a constant If or Loop condition of another type than boolean as ``cast_vector<bool>`` makes it
    (0.5 and NaN are true: the If infers its then body alone) and a trip count as ``cast_vector<int64_t>`` does
    (2.5 is 2 iterations, -0.5 none); ovreduce took a non-integral float for a value it could not know, and merged both
    branches (a dynamic rank) or left the concatenated dim dynamic."""
    path = subgraphs.save(model(), tmp_path, "m")
    ov_model = ov.Core().read_model(path)
    loaded = load_ir(path)
    report = check_model(loaded)
    got = {_name_key(loaded, r.body_path, r.layer_name): r.inferred_output_shape for r in report.reductions}
    assert got == openvino_reductions(ov_model)
