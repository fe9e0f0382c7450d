"""IR v10 compared like with like, and no finding without a basis: hand-made IRs written by OpenVINO."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ovreduce import check_model, load_ir
from ovreduce._openvino import openvino
from ovreduce.reports.check import ModelCheck


def _save(tmp_path: Path, version: int, edit: str = "") -> Path:
    """An IR (f16 Parameter -> ReduceMean -> Result, i64 Parameter -> ReduceMax -> Result, boolean Parameter
    -> ReduceLogicalAnd -> Result, a Split feeding a Result per port) saved by OpenVINO as ``version``;
    ``edit`` breaks one declaration."""
    ov = openvino()
    ops = ov.opset13
    x = ops.parameter([2, 3, 4], ov.Type.f16, name="x")
    mean = ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), keep_dims=False, name="rm")
    y = ops.parameter([2, 3], ov.Type.i64, name="y")
    rmax = ops.reduce_max(y, ops.constant(np.array([1], np.int64)), keep_dims=True, name="rmax")
    b = ops.parameter([2, 3], ov.Type.boolean, name="b")
    rand = ops.reduce_logical_and(b, ops.constant(np.array([0], np.int64)), keep_dims=False, name="rand")
    split = ops.split(mean, ops.constant(np.int64(1)), 2, name="sp")
    results = [ops.result(n, name=f"out{i}") for i, n in enumerate([rmax, rand, split.output(0), split.output(1)])]
    ov.save_model(ov.Model(results, [x, y, b], "m"), tmp_path / "m.xml", compress_to_fp16=False)
    text = (tmp_path / "m.xml").read_text()
    text = re.sub(r'(<net\b[^>]*\bversion=")11"', rf'\g<1>{version}"', text, count=1)
    if edit == "parameter":  # x's port says FP32, its element_type says f16
        text = _in_layer(text, "x", 'precision="FP16"', 'precision="FP32"')
    elif edit == "output":  # rmax's output port says FP32, an i64 ReduceMax gives i64
        text = _in_layer(text, "rmax", 'precision="I64" names="out0"', 'precision="FP32" names="out0"')
    (tmp_path / "m.xml").write_text(text)
    return tmp_path / "m.xml"


def _in_layer(text: str, name: str, old: str, new: str) -> str:
    start = text.index(f'name="{name}"')
    end = text.index("</layer>", start)
    assert old in text[start:end]
    return text[:start] + text[start:end].replace(old, new) + text[end:]


def _check(xml: Path, engine: str = "openvino") -> ModelCheck:
    ir = load_ir(xml)
    try:
        return check_model(ir, engine="openvino" if engine == "openvino" else "native")
    finally:
        ir.close()


@pytest.mark.parametrize("version", [10, 11])
def test_a_consistent_ir_is_clean_in_both_versions(tmp_path: Path, version: int) -> None:
    checked = _check(_save(tmp_path, version))
    assert checked.ir_version == version
    assert checked.ok and not checked.findings, checked.findings
    # the producers of v10 outputs, renamed by OpenVINO's legacy conversion, are still matched
    assert all(r.openvino_output_resolved for r in checked.reductions)


@pytest.mark.parametrize("version", [10, 11])
@pytest.mark.parametrize(
    ("edit", "layer", "expected"),
    [
        ("parameter", "x", "output port 0 declares precision FP32 but OpenVINO infers f16"),
        ("output", "rmax", "output port 2 declares precision FP32 but OpenVINO infers i64"),
    ],
)
def test_a_precision_openvino_does_not_compute_is_flagged(
    tmp_path: Path, version: int, edit: str, layer: str, expected: str
) -> None:
    """An error in IR v11; in IR v10, where a port precision is a legacy hint OpenVINO does not read, an info
    (``tests/check/test_v10_precisions.py`` shows OpenVINO's types and outputs do not change)."""
    checked = _check(_save(tmp_path, version, edit))
    ov_findings = [(f.code, f.layer_name, f.message) for f in checked.findings if f.code.startswith("openvino")]
    if version == 11:
        assert ov_findings == [("openvino-type-mismatch", layer, expected)]
    else:
        [(code, name, message)] = ov_findings
        assert (code, name) == ("openvino-legacy-precision", layer) and message.startswith(f"{expected}; ")
        assert checked.ok and {f.severity for f in checked.findings} == {"info"}, checked.findings


def test_a_logical_reduction_of_f32_data_has_one_finding(tmp_path: Path) -> None:
    xml = _save(tmp_path, 11)
    text = xml.read_text().replace('element_type="boolean"', 'element_type="f32"')
    xml.write_text(_in_layer(text, "b", 'precision="BOOL"', 'precision="FP32"'))
    checked = _check(xml, "native")
    on_rand = [f.code for f in checked.findings if f.layer_name == "rand"]
    # OpenVINO rejects the data type, so the BOOL output has nothing to be compared with; the edge's own
    # BOOL/FP32 disagreement is a fact of the file and stays
    assert sorted(on_rand) == ["edge-precision-mismatch", "reduce-invalid"]
