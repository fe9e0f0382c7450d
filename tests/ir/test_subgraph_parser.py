"""Sub-graph bodies as OpenVINO's serializer writes them (If, Loop, TensorIterator, nested), and malformed ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ovreduce.check import check_paths
from ovreduce.errors import IRStructureError, IRVersionError, LimitExceededError, NotFoundError, WeightsError
from ovreduce.ir.parser import ParseLimits, load_ir, parse_ir
from ovreduce.ir.weights import Weights
from tests.ir import subgraphs


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("subgraphs")
    builders = {
        "if": subgraphs.if_model,
        "loop": subgraphs.loop_model,
        "ti": subgraphs.ti_model,
        "nested": subgraphs.nested_model,
    }
    return {name: subgraphs.save(build(), folder, name) for name, build in builders.items()}


def test_if_has_then_and_else_bodies_with_their_port_maps(saved: dict[str, Path]) -> None:
    model = load_ir(saved["if"])
    node = next(layer for layer in model.layers if layer.type == "If")
    assert [b.role for b in node.bodies] == ["then", "else"]
    then = node.body("then")
    assert then is not None
    assert [layer.type for layer in then.graph.layers][-1] == "Result"
    assert [(m.external_port_id, then.graph.layer(m.internal_layer_id).type) for m in then.inputs] == [(1, "Parameter")]
    assert [then.graph.layer(m.internal_layer_id).type for m in then.outputs] == ["Result"]
    assert [b.path for b in model.bodies()] == [f"{node.id}/then", f"{node.id}/else"]


def test_loop_port_map_slices_merges_and_back_edges(saved: dict[str, Path]) -> None:
    model = load_ir(saved["loop"])
    node = next(layer for layer in model.layers if layer.type == "Loop")
    body = node.body("body")
    assert body is not None
    sliced = [m for m in body.inputs if m.axis is not None]
    assert [(m.axis, m.start, m.end, m.stride, m.part_size) for m in sliced] == [(0, 0, -1, 1, 1)]
    assert len(body.back_edges) == 1
    back = body.back_edges[0]
    assert body.graph.layer(back.from_layer).type == "Result"
    assert body.graph.layer(back.to_layer).type == "Parameter"
    assert any(m.purpose == "execution_condition" and m.external_port_id == -1 for m in body.outputs)


def test_tensor_iterator_body(saved: dict[str, Path]) -> None:
    model = load_ir(saved["ti"])
    node = next(layer for layer in model.layers if layer.type == "TensorIterator")
    body = node.body("body")
    assert body is not None
    assert [(m.axis, m.part_size, m.stride) for m in body.inputs] == [(1, 2, 2)]


def test_nested_bodies_are_addressable_by_ids_and_names(saved: dict[str, Path]) -> None:
    model = load_ir(saved["nested"])
    loop = next(layer for layer in model.layers if layer.type == "Loop")
    body = loop.body("body")
    assert body is not None
    inner = next(layer for layer in body.graph.layers if layer.type == "If")
    by_names = model.locate("Loop_1/body/If_inner/then/ReduceMean_nested")
    assert by_names.layer.name == "ReduceMean_nested"
    assert by_names.body_path == f"{loop.id}/body/{inner.id}/then"
    by_ids = model.locate(by_names.path)
    assert by_ids.layer is by_names.layer and by_ids.graph is by_names.graph
    assert model.locate(f"{loop.id}/body/If_inner/then/ReduceMean_nested").layer is by_names.layer  # mixed
    assert [b.name_path for b in model.bodies()] == [
        "Loop_1/body", "Loop_1/body/If_inner/then", "Loop_1/body/If_inner/else",
    ]  # fmt: skip
    with pytest.raises(
        NotFoundError, match=r"no layer with id or name .* \(nor a path into one of its sub-graph bodies\)"
    ):
        model.locate("Loop_1/body/If_inner/body/ReduceMean_nested")


def _edit(path: Path, old: str, new: str, count: int = 1) -> bytes:
    text = path.read_text()
    assert old in text, old
    return text.replace(old, new, count).encode()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('internal_layer_id="0" start=', 'internal_layer_id="77" start=',
         r"<port_map> <input>: internal_layer_id=77: the body has no layer with that id; expected a body Parameter"),
        ('external_port_id="2" internal_layer_id="0"', 'external_port_id="9" internal_layer_id="0"',
         r"external_port_id=9 but the layer has 4 inputs; expected 0 to 3"),
        ('part_size="1"', 'part_size="0"', r"part_size=0; expected a positive integer"),
        ('axis="0" external', 'axis="x" external', r"axis='x' is not an integer"),
        ("<back_edges>\n\t\t\t\t<edge from-layer=", "<back_edges>\n\t\t\t\t<edge from-layer=\"0\" x=",
         r"<back_edges> <edge> from-layer=0 is .*\(Parameter\); expected a body Result"),
        ("<body>", "<bodyx>", r"<port_map> without <body>; expected the body it maps"),
        ('external_port_id="5" internal_layer_id="10"', 'external_port_id="4" internal_layer_id="10"',
         r"<port_map> maps 1 of its 2 output ports; expected an <output> for each"),  # the second of port 4 unread
        ('<edge from-layer="9" to-layer="1" />',
         '<edge from-layer="9" to-layer="1" />\n<edge from-layer="10" to-layer="1" />',
         r"<back_edges> <edge> to-layer=1: the Parameter is already fed by the back edge at line 43; expected one"),
    ],
    ids=["unknown-internal-layer", "external-port-out-of-range", "part-size-zero", "axis-not-integer",
         "back-edge-from-parameter", "port-map-without-body", "output-port-mapped-twice",
         "parameter-fed-twice"],
)  # fmt: skip
def test_malformed_loop_is_refused_precisely(saved: dict[str, Path], old: str, new: str, message: str) -> None:
    xml = _edit(saved["loop"], old, new)
    if new == "<bodyx>":
        xml = xml.replace(b"</body>", b"</bodyx>")
    with pytest.raises(IRStructureError, match=message) as info:
        parse_ir(xml, Weights(saved["loop"].with_suffix(".bin")), source="loop.xml")
    assert re.match(r"loop\.xml:\d+: ", str(info.value)) and str(info.value).count("loop.xml") == 1, info.value


def test_body_without_layers_is_refused(saved: dict[str, Path]) -> None:
    text = saved["if"].read_text()
    start, end = text.index("<else_body>") + len("<else_body>"), text.index("</else_body>")
    with pytest.raises(IRStructureError, match=r"<else_body> has no <layers> element"):
        parse_ir((text[:start] + text[end:]).encode(), Weights(saved["if"].with_suffix(".bin")), source="if.xml")


def test_layer_limit_counts_body_layers(saved: dict[str, Path]) -> None:
    model = load_ir(saved["if"])
    top = len(model.layers)
    with pytest.raises(LimitExceededError, match="layers"):
        load_ir(saved["if"], limits=ParseLimits(max_layers=top + 1))


def test_body_depth_limit(saved: dict[str, Path]) -> None:
    load_ir(saved["nested"], limits=ParseLimits(max_body_depth=2))
    with pytest.raises(LimitExceededError, match="nested more than 1 deep") as refused:
        load_ir(saved["nested"], limits=ParseLimits(max_body_depth=1))
    # the line the message names is the document's line too (an unreadable model's "line" was null)
    assert refused.value.line is not None and f":{refused.value.line}: " in refused.value.message
    entry = check_paths([saved["nested"]], limits=ParseLimits(max_body_depth=1)).models[0]
    assert entry.error is not None and entry.error.line == refused.value.line


_HUGE = "1" * 5000  # int() refuses more than 4300 digits with a bare ValueError


@pytest.mark.parametrize(
    ("old", "new", "error", "message"),
    [
        ('axis="0" external', f'axis="{_HUGE}" external', IRStructureError,
         r"<port_map> <input>: axis='1{20}.* is not an integer; expected a 64-bit integer"),
        ('stride="1" part_size="1" />\n\t\t\t\t<input', f'stride="-{_HUGE}" part_size="1" />\n\t\t\t\t<input',
         IRStructureError, r"stride='-1{20}.* is not an integer; expected a 64-bit integer"),
        ("<dim>5</dim>", f"<dim>{_HUGE}</dim>", IRStructureError, r"<dim>1{20}.* is out of range"),
        ('offset="0" size="8"', f'offset="{_HUGE}" size="8"', WeightsError, r"offset=1{20}.*is out of range"),
        ('version="11"', f'version="{_HUGE}"', IRVersionError, r"IR version '1{20}.* is not supported"),
    ],
    ids=["axis", "stride", "dim", "const-offset", "ir-version"],
)  # fmt: skip
def test_integers_of_thousands_of_digits_are_refused_precisely(
    saved: dict[str, Path], old: str, new: str, error: type[Exception], message: str
) -> None:
    xml = _edit(saved["loop"], old, new)
    with pytest.raises(error, match=message):
        parse_ir(xml, Weights(saved["loop"].with_suffix(".bin")), source="loop.xml")


def test_an_empty_interval_openvino_writes_is_read_as_openvino_reads_it(tmp_path: Path) -> None:
    """Reshape of x[5..7] into [8, -1] leaves no size for the -1 dim (1..0): OpenVINO writes it as such in the shape
    of the body Parameters it feeds, and reads it back. ovreduce reads it as a dynamic dim (it refused the file)."""
    import numpy as np
    import openvino as ov
    import openvino.opset8 as o8
    import openvino.opset13 as ops

    from ovreduce.check import check_model

    x = ops.parameter(ov.PartialShape("[5..7]"), np.float32, name="x")
    split = ops.reshape(x, ops.constant(np.array([8, -1], np.int64)), special_zero=False)
    inner = [ops.parameter(split.get_output_partial_shape(0), np.float32) for _ in range(2)]
    sums = [ops.reduce_sum(p, ops.constant(np.array([1], np.int64)), False) for p in inner]
    branch = o8.if_op(ops.constant(np.array(True)))
    results = [ops.result(s) for s in sums]
    branch.set_then_body(ov.Model([results[0]], [inner[0]], "then"))
    branch.set_else_body(ov.Model([results[1]], [inner[1]], "else"))
    branch.set_input(split.output(0), inner[0], inner[1])
    out = branch.set_output(results[0], results[1])
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(out)], [x], "m"), str(path), compress_to_fp16=False)
    assert 'shape="8,1..0"' in path.read_text()
    ov.Core().read_model(str(path))  # OpenVINO reads it
    report = check_model(load_ir(path))
    assert report.ok and [r.inferred_output_shape for r in report.reductions] == [[8], [8]], report.findings


def _stateful_loop(folder: Path) -> str:
    """A Loop whose body reads and writes a variable of its own ("body"), beside a top-level one ("top")."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as op
    from openvino.op.util import Variable, VariableInfo

    def variable(name: str) -> Variable:
        info = VariableInfo()
        info.data_shape, info.data_type, info.variable_id = ov.PartialShape([2]), ov.Type.f32, name
        return Variable(info)

    p, x, bp = (op.parameter([2], np.float32, name=n) for n in ("p", "x", "bp"))
    top, own = variable("top"), variable("body")
    read = op.read_value(bp, own)
    write = op.assign(read, own)
    write.set_friendly_name("body_assign")
    add = op.add(read, bp)
    body = ov.Model([op.result(op.constant(np.array(True))), op.result(add)], [write], [bp], "body")
    loop = op.loop(op.constant(np.array(2, np.int64)), op.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(bp, x.output(0), add.output(0))
    top_write = op.assign(p, top)
    top_write.set_friendly_name("top_assign")
    model = ov.Model([op.result(loop.get_iter_value(add.output(0), -1)), op.result(op.read_value(p, top))],
                     [top_write], [x, p], "m")  # fmt: skip
    ov.save_model(model, folder / "base.xml", compress_to_fp16=False)
    return (folder / "base.xml").read_text()


@pytest.mark.parametrize(("writer", "variable"), [("body_assign", "top"), ("top_assign", "body")])
def test_a_body_has_variables_of_its_own(tmp_path: Path, writer: str, variable: str) -> None:
    """OpenVINO keeps the variables of each graph apart: an Assign of a body writing the top level's variable, or
    one of the top level writing a body's, is refused (both were read)."""
    import openvino as ov

    xml = _stateful_loop(tmp_path)
    ov.Core().read_model(tmp_path / "base.xml")  # as saved, read
    load_ir(tmp_path / "base.xml")
    own = "body" if variable == "top" else "top"
    mutated = re.sub(rf'(name="{writer}" type="Assign" version="opset6">\s*<data variable_id=)"{own}"',
                     rf'\1"{variable}"', xml)  # fmt: skip
    assert mutated != xml
    path = tmp_path / "m.xml"
    path.write_text(mutated)
    (tmp_path / "m.bin").write_bytes((tmp_path / "base.bin").read_bytes())
    with pytest.raises(RuntimeError):
        ov.Core().read_model(path)
    with pytest.raises(IRStructureError, match=rf"it writes the variable '{variable}', but no ReadValue of its graph"):
        load_ir(path)
