"""A reduction's ``version`` is an opset that holds it, or OpenVINO reads no model with it: ``ReduceL2`` in opset1,
``opset0``, ``opset99``, ``extension``, an empty version. The reader refuses exactly those (differential against
``read_model``), where it applied another version's rule before and called the model clean."""

from __future__ import annotations

import struct
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.errors import IRStructureError


def _ir(op: str, version: str | None) -> str:
    attr = "" if version is None else f' version="{version}"'
    return f"""<?xml version="1.0"?>
<net name="n" version="11"><layers>
<layer id="0" name="data" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>
<layer id="1" name="axes" type="Const" version="opset1"><data element_type="i64" shape="1" offset="0" size="8"/>
<output><port id="0" precision="I64"><dim>1</dim></port></output></layer>
<layer id="2" name="red" type="{op}"{attr}><data keep_dims="false"/><input>
<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port><port id="1" precision="I64"><dim>1</dim></port></input>
<output><port id="2" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>2</dim></port>
</input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>"""


OPS = ["ReduceMean", "ReduceL1", "ReduceL2", "reducesum", "ReduceProd"]
VERSIONS = ["opset1", "opset3", "opset4", "opset16", "opset17", "opset18", "opset0", "opset01", "opset99", "Opset1",
            "extension", "", None]  # fmt: skip


def _read_as_openvino_reads(folder: Path, ir: str) -> tuple[str, pytest.ExceptionInfo[IRStructureError]] | None:
    """None where OpenVINO reads ``ir`` (and ovreduce's reader does); else OpenVINO's refusal and the reader's."""
    xml = folder / "m.xml"
    xml.write_text(ir)
    xml.with_suffix(".bin").write_bytes(struct.pack("<q", 1))
    try:
        ov.Core().read_model(str(xml))
    except RuntimeError as exc:
        with pytest.raises(IRStructureError, match="OpenVINO refuses the model") as info:
            load_ir(xml)
        return str(exc), info
    load_ir(xml)
    return None


def _said_as_openvino(
    found: tuple[str, pytest.ExceptionInfo[IRStructureError]], name: str, op: str, version: str
) -> None:
    """The reader's refusal names the layer and says what OpenVINO says: the opset lacks the type, or is unknown."""
    refused, info = found
    assert f"name='{name}'" in str(info.value)
    if "doesn't contain" in refused:
        assert f"Opset {version} doesn't contain the operation with type: {op}" in str(info.value)
    else:
        assert f"unsupported opset: {version!r}" in str(info.value)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("op", OPS)
def test_the_reader_refuses_the_versions_openvino_refuses(tmp_path: Path, op: str, version: str | None) -> None:
    found = _read_as_openvino_reads(tmp_path, _ir(op, version))
    if found is None:
        return
    refused, info = found
    if "doesn't contain" in refused:
        assert f"Opset {version} doesn't contain the operation with type: {op}" in str(info.value)
    if not version:
        assert "no opset in its 'version' attribute, which is missing or empty" in str(info.value)


@pytest.mark.parametrize("version", ["opset1", "opset16", "opset17", "opset18", "opset0", "extension", "", None])
@pytest.mark.parametrize("layer", ['type="Parameter" version="opset1"', 'type="Const" version="opset1"',
                                   'type="Result" version="opset1"'])  # fmt: skip
def test_the_irs_own_layers_versions_are_read_as_openvino_reads_them(
    tmp_path: Path, layer: str, version: str | None
) -> None:
    """Parameter (opset1 to 17), Const and Result (1 to 16), and a version on every layer: refused where OpenVINO
    refuses the model, read where it reads it."""
    kind = layer.split('"')[1]
    xml = tmp_path / "m.xml"
    xml.write_text(_ir("ReduceSum", "opset1").replace(layer, f'type="{kind}"' + ("" if version is None else
                                                                                 f' version="{version}"')))  # fmt: skip
    xml.with_suffix(".bin").write_bytes(struct.pack("<q", 1))
    try:
        ov.Core().read_model(str(xml))
        refused = False
    except RuntimeError:
        refused = True
    if not refused:
        load_ir(xml)
        return
    with pytest.raises(IRStructureError, match="OpenVINO refuses the model"):
        load_ir(xml)


@pytest.mark.parametrize("op", ["ReduceLogSumExp", "ReduceSumSquare", "ReduceMeanx", "Reduce", "REDUCELOGSUM"])
@pytest.mark.parametrize("version", ["opset1", "opset16", "opset17", "opset18"])
def test_a_type_named_like_a_reduction_that_no_opset_holds_is_refused(tmp_path: Path, op: str, version: str) -> None:
    """A layer typed ``Reduce...`` of no opset (ONNX's ``ReduceLogSumExp``, a typo) is judged by the rule of every
    other type: OpenVINO refuses the model, where the reader once read it as an unknown op and the model's
    reductions vanished from the report without a word."""
    found = _read_as_openvino_reads(tmp_path, _ir(op, version))
    assert found is not None, f"OpenVINO reads a {op} of {version}"
    _said_as_openvino(found, "red", op, version)


def test_openvinos_messages_are_the_same_in_every_read(tmp_path: Path) -> None:
    """OpenVINO names a node it validates by its type and a process-wide counter (``ReduceSum_3327596``): the
    message of the same model differed from one request to the next, and from the CLI's."""
    from ovreduce.check import check_model

    xml = tmp_path / "m.xml"
    xml.write_text(_ir("ReduceSum", "opset1"))
    xml.with_suffix(".bin").write_bytes(struct.pack("<q", 5))  # axis 5 of a rank-2 input
    messages = set()
    for _ in range(3):
        report = check_model(load_ir(xml), engine="openvino")
        messages.add(next(f.message for f in report.findings if f.code == "openvino-read-failed"))
    [message] = messages
    assert "'opset1::ReduceSum ReduceSum (" in message and "friendly_name 'ReduceSum'" in message, message


def _unary_ir(op: str, version: str, reached: bool = True) -> str:
    """data -> ``op`` (one input, one output of the same dims) -> ReduceSum -> Result; ``reached`` False: the op's
    output feeds nothing, and the reduction reads ``data`` itself."""
    ir = _ir("ReduceSum", "opset1").replace(
        '<layer id="3" name="out"',
        f'<layer id="4" name="odd" type="{op}" version="{version}"><input><port id="0" precision="FP32"><dim>2</dim>'
        f'<dim>3</dim></port></input><output><port id="1" precision="FP32"><dim>2</dim><dim>3</dim></port></output>'
        f'</layer>\n<layer id="3" name="out"',
    )
    feed = '<edge from-layer="0" from-port="0" to-layer="4" to-port="0"/>\n'
    if reached:
        feed += '<edge from-layer="4" from-port="1" to-layer="2" to-port="0"/>\n'
        ir = ir.replace('<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>\n', "")
    return ir.replace("<edges>", "<edges>" + feed)


def test_the_opset_tables_are_the_installed_openvinos(tmp_path: Path) -> None:
    """Every op type of every opset, in every opset: OpenVINO makes it in the opsets whose table (read from the
    installed OpenVINO) holds it, and its reader says the others "don't contain" it, as ovreduce's reader does."""
    from openvino.utils.node_factory import NodeFactory

    from ovreduce._openvino import opset_types

    tables = opset_types()
    assert {f"opset{n}" for n in range(1, 18)} <= set(tables), sorted(tables)
    every = {lowered: name for types in tables.values() for lowered, name in types.items()}
    xml = tmp_path / "m.xml"
    xml.with_suffix(".bin").write_bytes(struct.pack("<q", 1))
    core = ov.Core()
    for version, types in sorted(tables.items()):
        factory = NodeFactory(version)
        for index, (lowered, name) in enumerate(sorted(every.items())):
            if lowered in types:
                if lowered != "constant":  # (the one op the factory does not make)
                    factory.create(name)  # (raises where the opset holds no such op)
                continue
            with pytest.raises(RuntimeError, match=f"Couldn't create operation: {name}"):
                factory.create(name)
            if lowered in ("parameter", "constant", "result"):
                continue  # (judged as the reader reads them)
            for written in (name, name.upper())[index % 2 :]:  # (the reader finds a type in any case)
                xml.write_text(_unary_ir(written, version))
                try:
                    core.read_model(str(xml))
                    lacks = False
                except RuntimeError as exc:  # (an op it makes may refuse this layer's inputs or attributes)
                    lacks = "doesn't contain the operation" in str(exc)
                if not lacks:  # the reader takes MVN, ROIPooling and ReorgYolo of opset1 (as written) from opset2
                    assert (version, written) in {("opset1", n) for n in ("MVN", "ROIPooling", "ReorgYolo")}
                    refusal = ""
                    try:
                        load_ir(xml)
                    except IRStructureError as exc:
                        refusal = str(exc)
                    assert "doesn't contain" not in refusal, refusal
                else:
                    with pytest.raises(IRStructureError, match="OpenVINO refuses the model"):
                        load_ir(xml)  # (a sub-graph op without bodies is refused for that first)


@pytest.mark.parametrize(("op", "version"), [
    ("FancyOp", "opset1"), ("Gelu", "opset1"), ("Gelu", "opset2"), ("gelu", "opset7"), ("RELU", "opset1"),
    ("Relu", "opset17"), ("Relu", "opset16"), ("Convert", "opset17"), ("Relu", "opset18"), ("Relu", "opset0"),
    ("ReadValue", "opset2"), ("Swish", "opset4"), ("Mish", "opset3"), ("HSigmoid", "opset5"), ("Relu", "Opset1"),
    ("MVN", "opset1"), ("mvn", "opset1"), ("ReduceLogSumExp", "opset1"), ("ReduceSumSquare", "opset16"),
    ("Reduce", "opset1"), ("reducemeanx", "opset4"),
])  # fmt: skip
@pytest.mark.parametrize("reached", [True, False])
def test_an_op_its_opset_lacks_is_refused_where_openvino_builds_it(
    tmp_path: Path, op: str, version: str, reached: bool
) -> None:
    """Any op type, not only a reduction's: ``Gelu`` in opset1, ``Relu`` in opset17 or ``opset18``, a typo in a
    known opset. The reader refuses the model exactly where OpenVINO does (it once read such a model and called it
    clean), and reads it where no Result reaches the layer."""
    found = _read_as_openvino_reads(tmp_path, _unary_ir(op, version, reached))
    if found is not None:
        _said_as_openvino(found, "odd", op, version)
