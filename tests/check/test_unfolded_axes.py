"""Reduction axes computed by a constant sub-graph ovreduce does not fold (a Pad of Consts), against the installed
OpenVINO runtime: OpenVINO folds it as it reads the model, and refuses axes out of range. ``check`` asks OpenVINO
whether it reads such a model where the sub-graph is small (each layer of a static shape ovreduce infers), so a model
OpenVINO refuses is not called clean; past that, it does not let OpenVINO fold it, and says the axes are not
confirmed."""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.check import FOLD_BUDGET, check_model
from ovreduce.shapes import PartialShape


def _net(consts: str, axes: str, length: int) -> str:
    """x [2,3,4] and its ReduceMean over the axes layer 4 computes (``length`` of them) from Consts 1, 2 and 3, fed
    to its ports 0, 1 and 2."""
    dims = "<dim>2</dim><dim>3</dim><dim>4</dim>"
    return f"""<?xml version="1.0"?>
<net name="n" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3,4" element_type="f32"/>
<output><port id="0" precision="FP32">{dims}</port></output></layer>
{consts}
{axes}
<layer id="5" name="red" type="ReduceMean" version="opset1"><data keep_dims="false"/><input>
<port id="0" precision="FP32">{dims}</port><port id="1" precision="I64"><dim>{length}</dim></port></input>
<output><port id="2" precision="FP32"/></output></layer>
<layer id="6" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"/></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="5" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="4" to-port="0"/>
<edge from-layer="2" from-port="0" to-layer="4" to-port="1"/>
<edge from-layer="3" from-port="0" to-layer="4" to-port="2"/>
<edge from-layer="4" from-port="3" to-layer="5" to-port="1"/>
<edge from-layer="5" from-port="2" to-layer="6" to-port="0"/>
</edges></net>"""


def _ir(pad_end: int) -> str:
    """Axes Pad(axis, begin 0, end ``pad_end``) of three i64 [1] Consts."""
    one = "<dim>1</dim>"
    consts = "\n".join(
        f'<layer id="{i}" name="{name}" type="Const" version="opset1"><data element_type="i64" shape="1" '
        f'offset="{8 * (i - 1)}" size="8"/>\n<output><port id="0" precision="I64">{one}</port></output></layer>'
        for i, name in ((1, "axis"), (2, "begin"), (3, "end"))
    )
    pad = f"""<layer id="4" name="axes" type="Pad" version="opset12"><data pad_mode="constant"/><input>
<port id="0" precision="I64">{one}</port><port id="1" precision="I64">{one}</port>
<port id="2" precision="I64">{one}</port></input>
<output><port id="3" precision="I64"><dim>{1 + pad_end}</dim></port></output></layer>"""
    return _net(consts, pad, 1 + pad_end)


def _write(tmp_path: Path, axis: int, pad_end: int = 0) -> Path:
    xml = tmp_path / "m.xml"
    xml.write_text(_ir(pad_end))
    xml.with_suffix(".bin").write_bytes(struct.pack("<3q", axis, 0, pad_end))
    return xml


@pytest.mark.parametrize("axis", [7, -4, 1, -1])
def test_axes_of_a_small_unfolded_sub_graph_are_judged_by_openvino(tmp_path: Path, axis: int) -> None:
    xml = _write(tmp_path, axis)
    try:
        ov.Core().read_model(str(xml))
        refusal = None
    except RuntimeError as exc:
        refusal = str(exc).strip().splitlines()[-1]
    ir = load_ir(xml)
    try:
        checked = check_model(ir)
    finally:
        ir.close()
    assert checked.ok == (refusal is None), checked.findings
    assert (refusal is None) == (axis in (1, -1))  # what OpenVINO does: the axis in range of rank 3, or not
    if refusal is not None:
        [error] = [f for f in checked.findings if f.severity == "error"]
        assert error.code == "openvino-read-failed" and refusal in error.message


def test_axes_of_a_large_unfolded_sub_graph_are_not_folded_by_openvino(tmp_path: Path) -> None:
    """A Pad to more elements than ovreduce lets OpenVINO fold: not asked (OpenVINO would allocate them all), and the
    note says the axes are not confirmed, and why."""
    xml = _write(tmp_path, 7, FOLD_BUDGET)
    ir = load_ir(xml)
    try:
        checked = check_model(ir)
    finally:
        ir.close()
    assert not any(f.code == "openvino-read-failed" for f in checked.findings), checked.findings
    [reduction] = checked.reductions
    assert reduction.status == "unresolved"
    assert any("are not confirmed by OpenVINO" in n and f"{FOLD_BUDGET + 1} elements" in n for n in checked.notes), (
        checked.notes
    )


def _range_ir(count: int) -> str:
    """Axes Range(start, stop, step) of ``count`` elements, of three i64 scalar Consts."""
    consts = "".join(
        f'<layer id="{i}" name="c{i}" type="Const" version="opset1"><data element_type="i64" shape="" '
        f'offset="{8 * (i - 1)}" size="8"/><output><port id="0" precision="I64"/></output></layer>'
        for i in (1, 2, 3)
    )
    axes = f"""<layer id="4" name="axes" type="Range" version="opset4"><data output_type="i64"/><input>
<port id="0" precision="I64"/><port id="1" precision="I64"/><port id="2" precision="I64"/></input>
<output><port id="3" precision="I64"><dim>{count}</dim></port></output></layer>"""
    return _net(consts, axes, count)


def test_axes_of_a_range_of_3e9_elements_are_not_folded_by_openvino(tmp_path: Path) -> None:
    """A Range of 3e9 elements (24 GB, past the 4096 elements ovreduce computes) as axes: checked in a process of at
    most 4 GiB of address space, which OpenVINO folding it would exceed; the axes are said not confirmed."""
    count = 3_000_000_000
    xml = tmp_path / "m.xml"
    xml.write_text(_range_ir(count))
    xml.with_suffix(".bin").write_bytes(struct.pack("<3q", 0, count, 1))
    code = "import sys; from ovreduce.cli.entry import console; sys.argv[0] = 'ovreduce'; sys.exit(console())"
    limit = 4 << 30
    done = subprocess.run(
        [sys.executable, "-c", code, "check", str(xml), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [model] = json.loads(done.stdout)["models"]
    assert any("are not confirmed by OpenVINO" in n and f"{count} elements" in n for n in model["notes"]), model


@pytest.mark.parametrize(("shape", "refused"), [("[2,3,4]", False), ("[2,3,9]", True)])
def test_axes_from_the_shape_of_a_static_input_are_judged_by_openvino(
    tmp_path: Path, shape: str, refused: bool
) -> None:
    """Axes ``Pad(ShapeOf(x)[2] - 2)``: a constant to OpenVINO where x's shape is static (after ``--reshape`` too),
    which it folds and refuses where the axis is out of range (x=[2,3,9]: 7)."""
    x = ops.parameter(ov.PartialShape([2, 3, 4]), np.float32, name="x")
    dim = ops.gather(ops.shape_of(x), ops.constant(np.array([2])), ops.constant(np.array(0)))
    zero = ops.constant(np.array([0]))
    axes = ops.pad(ops.subtract(dim, ops.constant(np.array([2]))), zero, zero, "constant")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_mean(x, axes, False))], [x], "m"), str(xml))
    model = ov.Core().read_model(str(xml))
    try:
        model.reshape({"x": ov.PartialShape(shape)})
        refusal = None
    except RuntimeError as exc:
        refusal = str(exc).strip().splitlines()[-1]
    assert (refusal is not None) == refused
    ir = load_ir(xml)
    try:
        checked = check_model(ir, reshape={"x": PartialShape.parse(shape)})
    finally:
        ir.close()
    assert checked.ok == (refusal is None), checked.findings
    if refusal is not None:
        [error] = [f for f in checked.findings if f.severity == "error"]
        assert error.code == "openvino-read-failed" and refusal in error.message
