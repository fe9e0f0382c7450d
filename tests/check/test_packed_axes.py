"""Axes in a Const of a packed integer type (i4, u4, u2, u1): OpenVINO 2026.4's shape inference does not read them as
the file writes them (i4 0x0e is 14, not -2; u1 and u2 are "Element not supported"). ``check`` makes no claim on
them: the reduction is unresolved, never "ok" where OpenVINO refuses the model."""

from __future__ import annotations

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
