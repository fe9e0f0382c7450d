"""Axes in a Const of a packed integer type (i4, u4, u2, u1): OpenVINO 2026.4's shape inference does not read them as
the file writes them (i4 0x0e is 14, not -2; u1 and u2 are "Element not supported"). ``check`` makes no claim on
them: the reduction is unresolved, never "ok" where OpenVINO refuses the model."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model


def _ir(etype: str, byte: int) -> str:
    dims = "<dim>2</dim><dim>3</dim><dim>4</dim>"
    return f"""<?xml version="1.0"?>
<net name="n" version="11"><layers>
<layer id="0" name="data" type="Parameter" version="opset1"><data shape="2,3,4" element_type="f32"/>
<output><port id="0" precision="FP32">{dims}</port></output></layer>
<layer id="1" name="axes" type="Const" version="opset1"><data element_type="{etype}" shape="1" offset="0" size="1"/>
<output><port id="0" precision="{etype.upper()}"><dim>1</dim></port></output></layer>
<layer id="2" name="red" type="ReduceSum" version="opset1"><data keep_dims="true"/><input>
<port id="0" precision="FP32">{dims}</port><port id="1" precision="{etype.upper()}"><dim>1</dim></port></input>
<output><port id="2" precision="FP32"><dim>2</dim><dim>1</dim><dim>4</dim></port></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>2</dim><dim>1</dim>
<dim>4</dim></port></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>"""


@pytest.mark.parametrize(("etype", "byte"), [("i4", 0x0E), ("u1", 0x80), ("u2", 0x01), ("u4", 0x01)])
def test_packed_axes_are_not_claimed(tmp_path: Path, etype: str, byte: int) -> None:
    xml = tmp_path / f"{etype}.xml"
    xml.write_text(_ir(etype, byte))
    xml.with_suffix(".bin").write_bytes(bytes([byte]))
    try:
        ov.Core().read_model(str(xml))
        refused = False
    except RuntimeError:
        refused = True
    assert refused == (etype != "u4")  # what OpenVINO does today: the reason for making no claim
    [reduction] = check_model(load_ir(xml)).reductions
    assert reduction.status == "unresolved" and reduction.axes is None, reduction


# Each element type OpenVINO's IR reader takes for a Const, holding axis 1 (or, packed, a byte of it).
_AXIS_ONE = {
    "boolean": b"\x01", "bf16": b"\x80\x3f", "f16": b"\x00\x3c", "f32": struct.pack("<f", 1),
    "f64": struct.pack("<d", 1),
    "i4": b"\x01", "i8": b"\x01", "i16": struct.pack("<h", 1), "i32": struct.pack("<i", 1), "i64": struct.pack("<q", 1),
    "u1": b"\x80", "u2": b"\x40", "u3": b"\x20\x00\x00", "u4": b"\x01", "u6": b"\x04\x00\x00", "u8": b"\x01",
    "u16": struct.pack("<H", 1), "u32": struct.pack("<I", 1), "u64": struct.pack("<Q", 1), "nf4": b"\x0f",
    "f8e4m3": b"\x38", "f8e5m2": b"\x3c", "f8e8m0": b"\x7f", "f4e2m1": b"\x02",
    "string": struct.pack("<iii", 1, 0, 1) + b"1",
}  # fmt: skip


@pytest.mark.parametrize("etype", list(_AXIS_ONE))
def test_axes_of_every_element_type_are_judged_as_openvino_judges_them(tmp_path: Path, etype: str) -> None:
    """Where OpenVINO refuses the model for its axes (a type its shape inference cannot read, a byte read as an axis
    out of range), check does not call it clean; where OpenVINO reads it, check finds no error."""
    raw = _AXIS_ONE[etype]
    xml = tmp_path / f"{etype}.xml"
    precision = {"boolean": "BOOL", "f16": "FP16", "f32": "FP32", "f64": "FP64"}.get(etype, etype.upper())
    text = _ir(etype, 0).replace(f'"{etype.upper()}"', f'"{precision}"').replace('size="1"', f'size="{len(raw)}"')
    xml.write_text(text)
    xml.with_suffix(".bin").write_bytes(raw)
    try:
        ov.Core().read_model(str(xml))
        refused = ""
    except RuntimeError as exc:
        refused = str(exc)
    report = check_model(load_ir(xml))
    errors = [f.message for f in report.findings if f.severity == "error"]
    assert bool(errors) == bool(refused), (refused, errors)


def test_axes_out_of_range_behind_a_subgraph_ovreduce_does_not_fold_are_not_called_clean(tmp_path: Path) -> None:
    """Axes through an op ovreduce does not fold (a Pad of a Const): OpenVINO folds them as it reads the model and
    refuses an axis out of range; check, asking OpenVINO, does not call the model clean."""
    import numpy as np
    import openvino.opset13 as ops

    x = ops.parameter([2, 3, 4], np.float32, name="x")
    axis = ops.constant(np.array([1], np.int64), name="ax")
    zero = ops.constant(np.array([0], np.int64))
    red = ops.reduce_mean(x, ops.pad(axis, zero, zero, "constant"), True)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x], "m"), str(xml), compress_to_fp16=False)
    ov.Core().read_model(str(xml))  # axis 1: read
    assert check_model(load_ir(xml)).ok
    offset = int(re.search(r'name="ax" type="Const"[^>]*>\s*<data [^>]*offset="(\d+)"', xml.read_text())[1])
    weights = bytearray(xml.with_suffix(".bin").read_bytes())
    weights[offset : offset + 8] = struct.pack("<q", 7)
    xml.with_suffix(".bin").write_bytes(bytes(weights))
    with pytest.raises(RuntimeError, match="out of the tensor rank range"):
        ov.Core().read_model(str(xml))
    report = check_model(load_ir(xml))
    assert not report.ok and "openvino-read-failed" in {f.code for f in report.findings}, report.findings
