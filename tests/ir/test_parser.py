"""Well-formed IR: what the parser keeps, checked against OpenVINO's own reader where it has an opinion."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ovreduce import IRStructureError, NotFoundError, load_ir, parse_ir
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.ir.model import IRModel, RtInfo
from ovreduce.ir.values import decode
from ovreduce.shapes import PartialShape

from .irxml import chain, const, const_add, edge, layer, net, parameter, port, result, unary

REDUCTIONS = {
    "ReduceMean": ops.reduce_mean, "ReduceSum": ops.reduce_sum, "ReduceMax": ops.reduce_max,
    "ReduceMin": ops.reduce_min, "ReduceProd": ops.reduce_prod, "ReduceL1": ops.reduce_l1,
    "ReduceL2": ops.reduce_l2,
}  # fmt: skip


def _ov_dims(shape: ov.PartialShape) -> tuple[int, ...]:
    """A port's <dim> list as OpenVINO writes it: -1 for any non-static dim."""
    return tuple(d.get_length() if d.is_static else -1 for d in shape)


@pytest.fixture(scope="module")
def reductions_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ov.Model]:
    """Every Reduce* op, saved by OpenVINO: Parameter f32[2,?,4,1..5] -> reductions -> Results."""
    x = ops.parameter(ov.PartialShape("[2,?,4,1..5]"), ov.Type.f32, name="x")
    results = []
    for i, (name, op) in enumerate(REDUCTIONS.items()):
        axes = ops.constant(np.array([1, -1][: 1 + i % 2], dtype=np.int64))
        node = op(x, axes, keep_dims=bool(i % 2))
        node.set_friendly_name(name)
        results.append(ops.result(node))
    boolean = ops.convert(x, ov.Type.boolean)
    for name, op in (("ReduceLogicalAnd", ops.reduce_logical_and), ("ReduceLogicalOr", ops.reduce_logical_or)):
        node = op(boolean, ops.constant(np.int32(2)), keep_dims=False)  # a scalar axis: no <dim>
        node.set_friendly_name(name)
        results.append(ops.result(node))
    model = ov.Model(results, [x], "reductions")
    path = tmp_path_factory.mktemp("reductions") / "model.xml"
    ov.save_model(model, path, compress_to_fp16=False)
    return path, ov.Core().read_model(path)


def test_openvino_saved_model_matches_openvino_reader(reductions_model: tuple[Path, ov.Model]) -> None:
    path, ov_model = reductions_model
    model = load_ir(path)
    assert model.ir_version == 11
    assert model.name == "reductions"
    ours = {layer.name: layer for layer in model.layers}
    for node in ov_model.get_ordered_ops():
        layer = ours.pop(node.get_friendly_name())
        assert layer.type == {"Constant": "Const"}.get(node.get_type_name(), node.get_type_name())
        # A Result has an output in OpenVINO's graph but none in the IR.
        for i, out in enumerate(node.outputs() if layer.type != "Result" else ()):
            port = layer.outputs[i]
            assert port.dims == _ov_dims(out.get_partial_shape()), layer.where
            assert port.precision is ELEMENT_TYPES[out.get_element_type().get_type_name()]
            assert set(port.names) == out.get_names()
        for i, inp in enumerate(node.inputs()):
            assert layer.inputs[i].dims == _ov_dims(inp.get_partial_shape()), layer.where
    assert not ours, f"layers OpenVINO does not have: {sorted(ours)}"
    x = model.find_layer("x")
    assert x.shape == PartialShape.parse("[2,?,4,1..5]")
    assert x.element_type is ELEMENT_TYPES["f32"]


def test_reduction_data_and_axes(reductions_model: tuple[Path, ov.Model]) -> None:
    model = load_ir(reductions_model[0])
    mean = model.find_layer("ReduceMean")
    assert dict(mean.data) == {"keep_dims": "false"}
    assert model.find_layer("ReduceSum").data["keep_dims"] == "true"
    with pytest.raises(TypeError):
        mean.data["keep_dims"] = "true"  # type: ignore[index]
    # The axes Const: found through the edge, decoded from the .bin.
    producer = model.producer(mean.id, mean.inputs[1].id)
    assert producer is not None
    axes = model.layer(producer[0])
    assert axes.type == "Const" and axes.const is not None and model.weights is not None
    assert axes.element_type is not None
    raw = model.weights.read(axes.const.offset, axes.const.size)
    assert decode(axes.element_type, raw, axes.const.count).tolist() == [1]
    (consumer,) = model.consumers(mean.id, mean.outputs[0].id)
    assert model.layer(consumer[0]).type == "Result"


def test_scalar_port_has_no_dims(reductions_model: tuple[Path, ov.Model]) -> None:
    model = load_ir(reductions_model[0])
    land = model.find_layer("ReduceLogicalAnd")
    axis_port = land.inputs[1]
    assert axis_port.dims == () and not axis_port.has_dims
    producer = model.producer(land.id, axis_port.id)
    assert producer is not None
    scalar = model.layer(producer[0])
    assert scalar.shape == PartialShape(()) and scalar.outputs[0].dims == ()
    assert scalar.const is not None and scalar.const.count == 1 and scalar.const.size == 4


@pytest.mark.parametrize("version", [10, 11])
def test_ir_versions_10_and_11(version: int, tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain(version=str(version)))
    model = load_ir(xml)
    assert model.ir_version == version
    assert [layer.type for layer in model.layers] == ["Parameter", "ReLU", "Result"]
    assert model.weights is None  # no .bin beside it, none needed
    ov.Core().read_model(str(xml))  # OpenVINO reads both versions too


def test_layer_attributes_and_lines(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    model = load_ir(xml)
    relu = model.find_layer("relu")
    assert (relu.id, relu.name, relu.type, relu.version) == ("1", "relu", "ReLU", "opset1")
    lines = xml.read_text().splitlines()
    assert relu.line is not None and '<layer id="1" name="relu"' in lines[relu.line - 1]
    assert relu.inputs[0].line is not None and '<port id="0"' in lines[relu.inputs[0].line - 1]
    assert [e.line for e in model.edges] == [i + 1 for i, text in enumerate(lines) if text.startswith("<edge ")]
    assert relu.where == "layer id=1 name='relu' (ReLU)"


@pytest.mark.parametrize(
    ("attr", "names"),
    [
        pytest.param("a\\,b,c", ("a,b", "c"), id="escaped-comma"),
        pytest.param("x", ("x",), id="single"),
        pytest.param("\\,,a", (",", "a"), id="lone-comma-name"),
        pytest.param("a\\,\\,b", ("a,,b",), id="two-escaped-commas"),
        pytest.param(" sp ,t", (" sp ", "t"), id="spaces-kept"),
        pytest.param("d\\e", ("d\\e",), id="backslash-not-before-comma"),
        pytest.param("a,a", ("a",), id="a-name-twice"),  # OpenVINO's names are a set: inspect lists each once
        pytest.param("a,b,a", ("a", "b"), id="a-name-twice-among-others"),
        pytest.param("a\\,b,a\\,b", ("a,b",), id="an-escaped-name-twice"),
    ],
)
def test_port_names(attr: str, names: tuple[str, ...], tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(net([parameter().replace('names="x"', f'names="{attr}"'), result(1)], [edge(0, 0, 1, 0)]))
    assert load_ir(xml).layers[0].outputs[0].names == names
    assert ov.Core().read_model(str(xml)).input().get_names() == set(names)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.text(alphabet="ab,\\ é", min_size=1, max_size=5), min_size=1, max_size=3))
@example({"a", "\\", ",a"})  # written "\\,a,\\,a": one name to OpenVINO, which reads a set
def test_port_names_written_by_openvino_read_alike(names: set[str]) -> None:
    """Whatever names OpenVINO writes, ovreduce reads back what OpenVINO's reader reads back."""
    x = ops.parameter([1], ov.Type.f32)
    x.output(0).set_names(names)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.xml"
        ov.save_model(ov.Model([ops.result(x)], [x]), path)
        theirs = ov.Core().read_model(path).input().get_names()
        ours = load_ir(path).layers[0].outputs[0].names
    assert set(ours) == theirs
    assert len(ours) == len(set(ours))


def _rt_as_json(items: tuple[RtInfo, ...]) -> list[dict[str, object]]:
    return [item.to_json() for item in items]


def test_rt_info_kept_at_every_level(tmp_path: Path) -> None:
    layer_rt = '<rt_info><attribute name="fused_names" version="0" value="a,b"/></rt_info>'
    port_rt = '<rt_info><attribute name="layout" version="0" layout="[N,C]"/></rt_info>'
    param = parameter().replace("</port>", port_rt + "</port>").replace("</layer>", layer_rt + "</layer>")
    model_rt = (
        '<rt_info><info name="OpenVINO Runtime" value="2026"/>'
        '<conversion_parameters><framework value="onnx"/><info name="k" value="v"/></conversion_parameters>'
        "<!-- a comment is dropped --></rt_info>"
    )
    xml = tmp_path / "model.xml"
    xml.write_text(net([param, unary(1), result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)], extra=model_rt))
    model = load_ir(xml)
    assert _rt_as_json(model.rt_info) == [
        {"tag": "info", "name": "OpenVINO Runtime", "value": "2026"},
        {"tag": "conversion_parameters", "children": [
            {"tag": "framework", "value": "onnx"}, {"tag": "info", "name": "k", "value": "v"}]},
    ]  # fmt: skip
    x = model.find_layer("x")
    assert _rt_as_json(x.rt_info) == [{"tag": "attribute", "name": "fused_names", "version": "0", "value": "a,b"}]
    assert _rt_as_json(x.outputs[0].rt_info) == [
        {"tag": "attribute", "name": "layout", "version": "0", "layout": "[N,C]"}
    ]
    assert model.find_layer("relu").rt_info == ()
    json.dumps(_rt_as_json(model.rt_info))  # serializable as is


def test_rt_info_written_by_openvino(tmp_path: Path) -> None:
    x = ops.parameter([1], ov.Type.f32, name="x")
    model = ov.Model([ops.result(x)], [x], "m")
    model.set_rt_info("hello", ["custom", "key"])
    ov.save_model(model, tmp_path / "m.xml")
    ours = {item.tag: item for item in load_ir(tmp_path / "m.xml").rt_info}
    assert ours["custom"].children == (RtInfo("key", (("value", "hello"),)),)


def test_layers_come_back_in_topological_order(tmp_path: Path) -> None:
    # File order: Result, Add, ReLU, Parameter y, Parameter x; edges x->relu->add, y->add, add->result.
    add = layer(1, "add", "Add", inputs=[port(0, (1, 3)), port(1, (1, 3))], outputs=[port(2, (1, 3))])
    layers = [result(0), add, unary(2), parameter(3, name="y"), parameter(4, name="x")]
    edges = [edge(4, 0, 2, 0), edge(2, 1, 1, 0), edge(3, 0, 1, 1), edge(1, 2, 0, 0)]
    xml = tmp_path / "model.xml"
    xml.write_text(net(layers, edges))
    model = load_ir(xml)
    order = [layer.name for layer in model.layers]
    assert order == ["y", "x", "relu", "add", "out"]  # producers first; file order among the ready
    position = {layer.id: i for i, layer in enumerate(model.layers)}
    assert all(position[e.from_layer] < position[e.to_layer] for e in model.edges)
    assert model.input_producers(model.find_layer("add")) == (("2", "1"), ("3", "0"))
    assert model.consumers("4", "0") == (("2", "0"),)
    assert model.producer("4", "0") is None


def test_find_layer(tmp_path: Path) -> None:
    layers = [parameter(0, name="x"), unary(1, name="twin"), unary(2, name="twin"), unary(3, name="0"), result(4)]
    edges = [edge(0, 0, 1, 0), edge(1, 1, 2, 0), edge(2, 1, 3, 0), edge(3, 1, 4, 0)]
    xml = tmp_path / "model.xml"
    xml.write_text(net(layers, edges))
    model = load_ir(xml)
    assert model.find_layer("x").id == "0"
    assert model.find_layer("4").name == "out"  # by id
    assert model.find_layer("0").name == "x"  # ids win over a layer *named* "0"
    with pytest.raises(NotFoundError, match=r"layer name 'twin' is used by several layers \(ids 1, 2\); give the id"):
        model.find_layer("twin")
    with pytest.raises(NotFoundError, match=r"no layer with id or name 'nope' in .*model\.xml") as info:
        model.find_layer("nope")
    assert info.value.code == "not_found"
    with pytest.raises(KeyError):
        model.layer("99")


def test_dynamic_rank_parameter_has_no_dims(tmp_path: Path) -> None:
    x = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="x")
    ov.save_model(ov.Model([ops.result(ops.relu(x))], [x]), tmp_path / "m.xml")
    model = load_ir(tmp_path / "m.xml")
    layer_x = model.find_layer("x")
    assert layer_x.shape == PartialShape(None)
    assert layer_x.outputs[0].dims == () and not layer_x.outputs[0].has_dims


def test_const_at_the_very_end_of_the_bin(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(const_add(const(1, "w", shape="1,3", offset="4", size="12", dims=(1, 3))))
    values = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    (tmp_path / "model.bin").write_bytes(b"\xff" * 4 + values.tobytes())
    model = load_ir(xml)
    w = model.find_layer("w")
    assert w.const is not None and model.weights is not None
    assert (w.const.offset, w.const.size, w.const.count) == (4, 12, 3)
    assert w.element_type is not None
    got = decode(w.element_type, model.weights.read(w.const.offset, w.const.size), w.const.count)
    np.testing.assert_array_equal(got, values)
    model.close()


def test_explicit_bin_path(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(const_add(const(1, "w", shape="1,3", size="12", dims=(1, 3))))
    (tmp_path / "weights.data").write_bytes(bytes(12))
    model = load_ir(xml, tmp_path / "weights.data")
    assert model.weights is not None and model.weights.size == 12


def test_parse_ir_from_bytes_with_in_memory_weights() -> None:
    from ovreduce.ir.weights import Weights

    text = const_add(const(1, "w", shape="1,3", size="12", dims=(1, 3)))
    model = parse_ir(text.encode(), Weights(np.arange(3, dtype=np.float32).tobytes()), source="upload.xml")
    assert model.source == "upload.xml"
    w = model.find_layer("w")
    assert w.const is not None and model.weights is not None
    assert model.weights.read(w.const.offset, w.const.size) == np.arange(3, dtype=np.float32).tobytes()


def test_model_is_immutable(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    model: IRModel = load_ir(xml)
    with pytest.raises(AttributeError):
        model.layers[0].name = "y"  # type: ignore[misc]
    assert isinstance(model.layers, tuple) and isinstance(model.edges, tuple)


# -- lazy weights ----------------------------------------------------------------------------------------
_LAZY_PROBE = """
import json, sys
from ovreduce import load_ir
def peak_kib():  # this address space only (ru_maxrss would include the parent's peak)
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
before = peak_kib()
model = load_ir(sys.argv[1])
parsed = peak_kib()
w = model.find_layer("w")
tail = model.weights.read(w.const.offset, w.const.size)
read = peak_kib()
model.close()
print(json.dumps({"parse_kib": parsed - before, "read_kib": read - parsed, "tail": tail.hex(),
                  "size": model.weights.size}))
"""


def test_large_bin_is_not_read_by_parsing(tmp_path: Path) -> None:
    """A 200 MB .bin (sparse) must not be read to parse the XML, nor to read one Const at its end."""
    total = 200 * 1024 * 1024
    xml = tmp_path / "model.xml"
    xml.write_text(const_add(const(1, "w", shape="1,3", offset=str(total - 12), size="12", dims=(1, 3))))
    with open(tmp_path / "model.bin", "wb") as fh:
        fh.truncate(total - 12)
        fh.seek(total - 12)
        fh.write(np.array([1, 2, 3], dtype=np.float32).tobytes())
    proc = subprocess.run([sys.executable, "-c", _LAZY_PROBE, str(xml)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["size"] == total
    assert report["tail"] == np.array([1, 2, 3], dtype=np.float32).tobytes().hex()
    assert report["parse_kib"] < 16 * 1024, report  # far below 200 MB
    assert report["read_kib"] < 16 * 1024, report


# -- graph order, generated ----------------------------------------------------------------------------------
def _add(lid: int, name: str) -> str:
    return layer(lid, name, "Add", inputs=[port(0, (1, 3)), port(1, (1, 3))], outputs=[port(2, (1, 3))])


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_generated_dags_come_back_topologically_sorted(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 12), label="layers")
    parents = [data.draw(st.tuples(st.integers(0, i - 1), st.integers(0, i - 1))) for i in range(1, n)]
    ids = data.draw(st.permutations(range(100, 100 + n)), label="ids")  # layer k gets id ids[k]
    file_order = data.draw(st.permutations(range(n)), label="file order")
    texts = {0: parameter(ids[0], name="n0")} | {k: _add(ids[k], f"n{k}") for k in range(1, n)}
    edges = [edge(ids[a], 0 if a == 0 else 2, ids[k], 0) for k, (a, _) in enumerate(parents, 1)]
    edges += [edge(ids[b], 0 if b == 0 else 2, ids[k], 1) for k, (_, b) in enumerate(parents, 1)]
    edges = data.draw(st.permutations(edges), label="edge order")
    model = parse_ir(net([texts[k] for k in file_order], edges).encode())
    position = {layer.id: i for i, layer in enumerate(model.layers)}
    assert sorted(position) == sorted(str(i) for i in ids)
    assert all(position[e.from_layer] < position[e.to_layer] for e in model.edges)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(0, 5), st.randoms(use_true_random=False))
def test_cycle_message_names_only_the_cycle(ring: int, tail: int, rnd: object) -> None:
    """Parameter feeds a ring of Adds; a chain hangs below the ring. Only the ring is to blame."""
    texts = [parameter(0, name="p")]
    edges = []
    for k in range(ring):  # ring member k: input 0 from the Parameter, input 1 from member k-1 (mod ring)
        texts.append(_add(1 + k, f"ring{k}"))
        edges += [edge(0, 0, 1 + k, 0), edge(1 + (k - 1) % ring, 2, 1 + k, 1)]
    previous = 1
    for t in range(tail):
        lid = 1 + ring + t
        texts.append(unary(lid, f"tail{t}"))
        edges.append(edge(previous, 2 if previous <= ring else 1, lid, 0))
        previous = lid
    rnd.shuffle(texts)  # type: ignore[attr-defined]
    with pytest.raises(IRStructureError) as info:
        parse_ir(net(texts, edges).encode(), source="model.xml")
    named = re.findall(r"id=\d+ '(\w+)'", str(info.value))
    assert sorted(named) == [f"ring{k}" for k in range(ring)], str(info.value)
