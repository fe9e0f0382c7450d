"""A declared output that contradicts the interval bounds OpenVINO infers through a shape computed at run time is a
reduce-output-mismatch, as one that contradicts a static shape is."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from ovreduce._openvino import partial_shape
from ovreduce.check import check_model
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape


def _flatten_mean(folder: Path, shape: str = "[2..5,3,4]") -> Path:
    """x[2..5,3,4] -> Reshape(x, Concat(Gather(ShapeOf(x), [0]), [-1])) -> ReduceMean axis 1 (keep_dims): OpenVINO
    infers [2..5,5..30] into the reduction and [2..5,1] out of it."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    batch = ops.gather(ops.shape_of(x), ops.constant(np.array([0])), ops.constant(np.int64(0)))
    flat = ops.reshape(x, ops.concat([batch, ops.constant(np.array([-1]))], 0), False)
    mean = ops.reduce_mean(flat, ops.constant(np.array([1])), True)
    mean.set_friendly_name("mean")
    path = folder / "flatten.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "flatten"), str(path), compress_to_fp16=False)
    return path


def _declared(path: Path, dims: list[int]) -> Path:
    """The model with the reduction's output declared as ``dims`` (a stale file)."""
    xml = path.read_text()
    body = re.search(r'<layer id="\d+" name="mean".*?</layer>', xml, re.S)
    assert body is not None
    output = re.search(r"<output>.*?</output>", body.group(0), re.S)
    assert output is not None
    port = re.sub(r"(<port [^>]*>).*?(\s*<rt_info>|\s*</port>)",
                  lambda m: m.group(1) + "".join(f"<dim>{d}</dim>" for d in dims) + m.group(2),
                  output.group(0), count=1, flags=re.S)  # fmt: skip
    stale = path.with_name("stale.xml")
    stale.write_text(xml.replace(body.group(0), body.group(0).replace(output.group(0), port)))
    stale.with_suffix(".bin").write_bytes(path.with_suffix(".bin").read_bytes())
    return stale


def test_a_flatten_keeps_openvinos_bounds(tmp_path: Path) -> None:
    path = _flatten_mean(tmp_path)
    node = next(n for n in ov.Core().read_model(str(path)).get_ordered_ops() if n.get_friendly_name() == "mean")
    report = check_model(load_ir(path))
    [reduction] = report.reductions
    assert report.ok and reduction.status == "ok", report.findings
    assert reduction.input_shape == partial_shape(node.get_input_partial_shape(0)).to_json() == ["2..5", "5..30"]
    assert reduction.inferred_output_shape == partial_shape(node.get_output_partial_shape(0)).to_json()


def test_a_declared_output_outside_openvinos_bounds_is_a_mismatch(tmp_path: Path) -> None:
    """[7,1] is outside [2..5,1]: an error (it passed as ok where the bounds were lost); [3,1] is within it, fine."""
    path = _flatten_mean(tmp_path)
    report = check_model(load_ir(_declared(path, [7, 1])))
    assert [f.code for f in report.findings if f.severity == "error"] == ["reduce-output-mismatch"], report.findings
    assert report.reductions[0].status == "mismatch"
    fine = check_model(load_ir(_declared(path, [3, 1])))
    assert not [f for f in fine.findings if f.severity == "error"], fine.findings


def test_a_reshape_to_interval_dims_keeps_openvinos_bounds(tmp_path: Path) -> None:
    """The static model x[4,3,4] checked with x reshaped to [2..5,3,4]: the reduction's input is OpenVINO's
    [2..5,5..30], not [?,?]."""
    path = _flatten_mean(tmp_path, "[4,3,4]")
    model = ov.Core().read_model(str(path))
    model.reshape({"x": ov.PartialShape("[2..5,3,4]")})
    node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "mean")
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse("[2..5,3,4]")})
    [reduction] = report.reductions
    assert reduction.input_shape == partial_shape(node.get_input_partial_shape(0)).to_json() == ["2..5", "5..30"]
