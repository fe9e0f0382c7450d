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


@pytest.mark.parametrize(("etype", "byte"), [("i4", 0x7C), ("u4", 0x21)])
def test_packed_axes_through_a_convert_are_unresolved_for_the_reason_that_holds(
    tmp_path: Path, etype: str, byte: int
) -> None:
    """Through a Convert, OpenVINO converts u4 and i4 values as the file writes them (i4 0x7c is axes [-4, 7]):
    the reason ovreduce gives for leaving them unresolved is its own limit, not that OpenVINO misreads them."""
    dims = "".join(f"<dim>{d}</dim>" for d in range(2, 10))
    kept = "<dim>2</dim><dim>3</dim><dim>4</dim><dim>5</dim><dim>6</dim><dim>7</dim><dim>8</dim><dim>9</dim>"
    xml = tmp_path / f"{etype}.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<net name="n" version="11"><layers>
<layer id="0" name="data" type="Parameter" version="opset1"><data shape="2,3,4,5,6,7,8,9" element_type="f32"/>
<output><port id="0" precision="FP32">{dims}</port></output></layer>
<layer id="1" name="axes" type="Const" version="opset1"><data element_type="{etype}" shape="2" offset="0" size="1"/>
<output><port id="0" precision="{etype.upper()}"><dim>2</dim></port></output></layer>
<layer id="2" name="cv" type="Convert" version="opset1"><data destination_type="i64"/><input><port id="0"
precision="{etype.upper()}"><dim>2</dim></port></input><output><port id="1" precision="I64"><dim>2</dim></port></output>
</layer>
<layer id="3" name="red" type="ReduceSum" version="opset1"><data keep_dims="false"/><input>
<port id="0" precision="FP32">{kept}</port><port id="1" precision="I64"><dim>2</dim></port></input>
<output><port id="2" precision="FP32"/></output></layer>
<layer id="4" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"/></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="3" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="2" from-port="1" to-layer="3" to-port="1"/>
<edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
</edges></net>""")
    xml.with_suffix(".bin").write_bytes(bytes([byte]))
    written = [byte & 0xF, byte >> 4]  # low nibble first
    if etype == "i4":
        written = [v - 16 if v >= 8 else v for v in written]
    reduced = ov.Core().read_model(str(xml)).get_result().get_output_partial_shape(0)
    axes = {a % 8 for a in written}
    assert str(reduced) == str(ov.PartialShape([d for i, d in enumerate(range(2, 10)) if i not in axes]))
    report = check_model(load_ir(xml))
    [reduction] = report.reductions
    assert reduction.status == "unresolved" and reduction.axes is None, reduction
    [said] = [f.message for f in report.findings if f.code == "reduce-unresolved"]
    assert f"Const 'axes' holds {etype} values, which ovreduce does not read" in said
    assert "a Convert of u4 or i4 ones as the file writes them" in said, said
