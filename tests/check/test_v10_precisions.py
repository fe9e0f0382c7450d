"""A port precision of an IR v10 file is a legacy hint OpenVINO does not read: one that differs from OpenVINO's
type is an info (``openvino-legacy-precision``, natively ``legacy-precision``), never an error; in IR v11 it
stays an error. Differential against the installed OpenVINO: the precisions change none of its types or
outputs.

The model is the case of Model Optimizer's FP16 IR v10 files (face-detection-adas-0001): a DetectionOutput on
f16 inputs whose output port says FP32, where OpenVINO computes in f16 (and IR v10's legacy conversion gives
the model's output as f32).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset8 as o8
import pytest

from ovreduce import check_model, load_ir
from ovreduce.reports.check import ModelCheck

PRIORS, CLASSES = 4, 2
# the layer whose output port (and the input port of the Result it feeds) an edit makes FP32
EDITS = {"detection": "detection_out", "reduction": "rmax"}


def _model() -> ov.Model:
    """f16 loc, conf, priors -> DetectionOutput ``detection_out``; conf -> ReduceMax ``rmax``; each to a Result."""
    loc = o8.parameter([1, PRIORS * 4], ov.Type.f16, name="loc")
    conf = o8.parameter([1, PRIORS * CLASSES], ov.Type.f16, name="conf")
    priors = o8.parameter([1, 2, PRIORS * 4], ov.Type.f16, name="priors")
    rmax = o8.reduce_max(conf, o8.constant(np.array([1], np.int64)), keep_dims=True, name="rmax")
    attrs = {
        "keep_top_k": [PRIORS], "nms_threshold": 0.45, "background_label_id": 0, "top_k": PRIORS,
        "code_type": "caffe.PriorBoxParameter.CENTER_SIZE", "confidence_threshold": 0.01, "share_location": True,
        "variance_encoded_in_target": False, "normalized": True, "num_classes": CLASSES,
    }  # fmt: skip
    det = o8.detection_output(loc, conf, priors, attrs)
    det.set_friendly_name("detection_out")
    return ov.Model([o8.result(det), o8.result(rmax)], [loc, conf, priors], "det")


def _save(folder: Path, version: int, edit: str | None) -> Path:
    """The model saved by OpenVINO as IR ``version``; ``edit``: that layer's output port, and the input port of
    the Result it feeds, say FP32 (a consistent edge, as Model Optimizer wrote it)."""
    folder.mkdir(parents=True, exist_ok=True)
    xml = folder / "m.xml"
    ov.save_model(_model(), xml, compress_to_fp16=False)
    text = xml.read_text()
    text, count = re.subn(r'(<net\b[^>]*\bversion=")11"', rf'\g<1>{version}"', text, count=1)
    assert count == 1
    if edit is not None:
        layer_id = re.search(rf'<layer id="(\d+)" name="{EDITS[edit]}"', text)
        assert layer_id is not None
        start = text.index(f'name="{EDITS[edit]}"')
        output = text.index("<output>", start)
        port = text.index('precision="FP16"', output)
        text = text[:port] + 'precision="FP32"' + text[port + len('precision="FP16"') :]
        port_id = re.search(r'<port id="(\d+)" precision="FP32"', text[output:])
        assert port_id is not None
        edge = re.search(
            rf'<edge from-layer="{layer_id[1]}" from-port="{port_id[1]}" to-layer="(\d+)" to-port="(\d+)"', text
        )
        assert edge is not None
        result = text.index(f'<layer id="{edge[1]}"')
        port = text.index('precision="FP16"', text.index(f'<port id="{edge[2]}"', result))
        text = text[:port] + 'precision="FP32"' + text[port + len('precision="FP16"') :]
    xml.write_text(text)
    return xml


def _openvino_view(xml: Path) -> tuple[list[tuple[str, str, str]], list[np.ndarray[Any, Any]]]:
    """OpenVINO's (friendly name, type, element type) of every node output, and its outputs on fixed inputs."""
    core = ov.Core()
    model = core.read_model(xml)
    types = [
        (node.get_friendly_name(), node.get_type_name(), str(node.get_output_element_type(i)))
        for node in model.get_ordered_ops()
        for i in range(node.get_output_size())
    ]
    rng = np.random.default_rng(7)
    feeds = [rng.random(tuple(p.get_shape())).astype(p.get_element_type().to_dtype()) for p in model.inputs]
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    outputs = compiled.create_infer_request().infer(feeds)
    return types, [np.array(outputs[o]) for o in compiled.outputs]


def _check(xml: Path) -> ModelCheck:
    ir = load_ir(xml)
    try:
        return check_model(ir, engine="openvino")
    finally:
        ir.close()


@pytest.mark.parametrize("version", [10, 11])
@pytest.mark.parametrize("edit", list(EDITS))
def test_openvino_reads_no_port_precision(tmp_path: Path, version: int, edit: str) -> None:
    plain_types, plain_out = _openvino_view(_save(tmp_path / "plain", version, None))
    types, out = _openvino_view(_save(tmp_path / "edited", version, edit))
    assert [t[1:] for t in types] == [t[1:] for t in plain_types]  # (names the v10 conversion makes differ)
    kind = {"detection": "DetectionOutput", "reduction": "ReduceMax"}[edit]  # (v10 renames it: a Convert follows)
    assert [t for _, op, t in types if op == kind] == ["<Type: 'float16'>"], "not the FP32 the file declares"
    assert len(out) == len(plain_out) == 2
    for got, want in zip(out, plain_out, strict=True):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("version", [10, 11])
def test_a_consistent_file_is_clean(tmp_path: Path, version: int) -> None:
    checked = _check(_save(tmp_path, version, None))
    assert checked.ok and not checked.findings, checked.findings


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_v10_precision_that_openvino_does_not_compute_is_an_info(tmp_path: Path, edit: str) -> None:
    xml = _save(tmp_path, 10, edit)
    checked = _check(xml)
    layer = load_ir(xml).locate(EDITS[edit]).layer
    port = next(p for p in layer.outputs if p.precision is not None and p.precision.precision == "FP32")
    assert checked.ok, checked.findings
    assert {f.severity for f in checked.findings} == {"info"}
    ov_findings = [(f.code, f.layer_name, f.port) for f in checked.findings if f.code.startswith("openvino")]
    assert ov_findings == [("openvino-legacy-precision", EDITS[edit], port.id)]
    [said] = [f.message for f in checked.findings if f.code == "openvino-legacy-precision"]
    assert f"output port {port.id} declares precision FP32 but OpenVINO infers f16; " in said
    assert "legacy hint that OpenVINO does not read" in said
    native = {(f.code, f.layer_name) for f in checked.findings if not f.code.startswith("openvino")}
    assert native == ({("legacy-precision", "rmax")} if edit == "reduction" else set())


@pytest.mark.parametrize("edit", list(EDITS))
def test_the_same_precision_in_v11_is_an_error(tmp_path: Path, edit: str) -> None:
    checked = _check(_save(tmp_path, 11, edit))
    assert not checked.ok
    codes = {(f.code, f.severity, f.layer_name) for f in checked.findings}
    assert ("openvino-type-mismatch", "error", EDITS[edit]) in codes
    assert not any("legacy" in f.code for f in checked.findings)
    if edit == "reduction":
        assert ("precision-mismatch", "error", "rmax") in codes


@pytest.mark.parametrize("version", [10, 11])
def test_layers_of_translated_type_names_are_compared(tmp_path: Path, version: int) -> None:
    """OpenVINO's serializer writes opset1's Relu as ``ReLU`` and Softmax as ``SoftMax``; the reader translates
    them back. Those layers are compared too: a wrong declared dim of either is found."""
    x = o8.parameter([2, 3], np.float32, name="x")
    soft = ov.opset1.softmax(ov.opset1.relu(x, name="relu"), 1, name="soft")
    tail = o8.reduce_sum(soft, o8.constant(np.array([1], np.int64)), keep_dims=False, name="rs")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([o8.result(tail)], [x], "m"), xml, compress_to_fp16=False)
    text = re.sub(r'(<net\b[^>]*\bversion=")11"', rf'\g<1>{version}"', xml.read_text(), count=1)
    assert 'type="ReLU"' in text and 'type="SoftMax"' in text
    for name in ("relu", "soft"):  # the output's second dim, 3, declared 5 (and at the consumer: no edge finding)
        start = text.index(f'name="{name}"')
        output = text.index("<output>", start)
        text = text[:output] + text[output:].replace("<dim>3</dim>", "<dim>5</dim>", 1)
        consumer = text.index("<input>", text.index("</layer>", output))
        text = text[:consumer] + text[consumer:].replace("<dim>3</dim>", "<dim>5</dim>", 1)
    xml.write_text(text)
    checked = _check(xml)
    found = [(f.code, f.layer_name) for f in checked.findings if f.code.startswith("openvino")]
    assert found == [("openvino-shape-mismatch", "relu"), ("openvino-shape-mismatch", "soft")]
