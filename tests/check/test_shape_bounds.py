"""A declared output that contradicts the interval bounds OpenVINO infers through a shape computed at run time is a
reduce-output-mismatch, as one that contradicts a static shape is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

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


def _if_on_a_dim(folder: Path, rhs_input: bool, comparison: str = "equal") -> Path:
    """x[?,5,4] -> If(Squeeze(Equal(Gather(ShapeOf(x), [0]), rhs))): then ReduceMean axis 0 ([5,4]), else ReduceMean
    axes [0,2] keep_dims ([1,5,1]) -> ReduceSum 'after' over axis -1: [5] or [1,5], of dynamic rank where the condition
    is not known. ``rhs`` is the constant [1], or ShapeOf(y) of an input y[?] (``rhs_input``); ``comparison`` the
    opset13 function in place of Equal."""
    from openvino import opset8

    x = ops.parameter([-1, 5, 4], np.float32, name="x")
    y = ops.parameter([-1], np.float32, name="y")
    d0 = ops.gather(ops.shape_of(x), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
    rhs = ops.shape_of(y) if rhs_input else ops.constant(np.array([1], np.int64))
    cond = ops.squeeze(getattr(ops, comparison)(d0, rhs), ops.constant(np.array([0], np.int64)))
    tx, ex = ops.parameter([-1, 5, 4], np.float32), ops.parameter([-1, 5, 4], np.float32)
    then = ops.result(ops.reduce_mean(tx, ops.constant(np.array([0], np.int64)), False))
    other = ops.result(ops.reduce_mean(ex, ops.constant(np.array([0, 2], np.int64)), True))
    branch = opset8.if_op(cond.output(0))
    branch.set_then_body(ov.Model([then], [tx]))
    branch.set_else_body(ov.Model([other], [ex]))
    branch.set_input(x.output(0), tx, ex)
    after = ops.reduce_sum(branch.set_output(then, other), ops.constant(np.array([-1], np.int64)), False)
    after.set_friendly_name("after")
    path = folder / "if_on_a_dim.xml"
    ov.save_model(ov.Model([ops.result(after)], [x, y], "if_on_a_dim"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize(
    ("rhs_input", "x", "y"),
    [
        (False, "[2..3,5,4]", "[3]"),  # 2..3 is never 1: decided false, the else branch
        (False, "[1,?,4]", "[3]"),  # dim 0 is 1 though the shape is dynamic: decided true, the then branch
        (False, "[1..3,5,4]", "[3]"),  # may be 1: undecided
        (False, "[0..1,5,4]", "[3]"),
        (True, "[2..3,5,4]", "[4..6]"),  # the intervals do not meet: false
        (True, "[2..3,5,4]", "[1..5]"),  # one interval holds the other: undecided
        (True, "[2..3,5,4]", "[3..3]"),  # they meet at 3: undecided
        (True, "[3,?,4]", "[3]"),  # both 3: true
        (True, "[?,5,4]", "[?]"),
    ],
)
def test_an_if_on_a_dim_is_decided_by_bounds_as_openvino_decides_it(
    tmp_path: Path, rhs_input: bool, x: str, y: str
) -> None:
    """OpenVINO takes an If's condition as constant where its bounds are equal (``get_constant_from_source``), and
    Equal's bounds hold where the operands' intervals decide it (``Equal::evaluate_lower``/``evaluate_upper``): the
    reduction after the If is inferred from the branch taken, as OpenVINO infers it."""
    path = _if_on_a_dim(tmp_path, rhs_input)
    model = ov.Core().read_model(str(path))
    model.reshape({"x": ov.PartialShape(x), "y": ov.PartialShape(y)})
    node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "after")
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse(x), "y": PartialShape.parse(y)})
    [reduction] = [r for r in report.reductions if r.layer_name == "after"]
    assert reduction.input_shape == partial_shape(node.get_input_partial_shape(0)).to_json(), (x, y)
    assert reduction.inferred_output_shape == partial_shape(node.get_output_partial_shape(0)).to_json(), (x, y)


@pytest.mark.parametrize("comparison", ["not_equal", "less", "greater_equal"])
def test_an_if_on_another_comparison_of_a_dim_is_not_decided_by_bounds(tmp_path: Path, comparison: str) -> None:
    """Of the comparisons, OpenVINO bounds Equal alone: NotEqual, Less, GreaterEqual of 2..3 and 1 leave the If
    undecided (both branches merged: a dynamic rank), as ovreduce does."""
    path = _if_on_a_dim(tmp_path, False, comparison)
    model = ov.Core().read_model(str(path))
    model.reshape({"x": ov.PartialShape("[2..3,5,4]")})
    node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "after")
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse("[2..3,5,4]")})
    [reduction] = [r for r in report.reductions if r.layer_name == "after"]
    assert reduction.inferred_output_shape == partial_shape(node.get_output_partial_shape(0)).to_json()


def _reshaped_both(model: ov.Model, path: Path, x: str, name: str) -> tuple[Any, Any]:
    """``model`` saved as ``path`` and its input ``x`` reshaped to ``x`` by OpenVINO and by ovreduce's check: the
    reduction ``name`` as each sees it (ovreduce's row, OpenVINO's node)."""
    ov.save_model(model, str(path), compress_to_fp16=False)
    read = ov.Core().read_model(str(path))
    read.reshape({"x": ov.PartialShape(x)})
    node = next(n for n in read.get_ordered_ops() if n.get_friendly_name() == name)
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse(x)})
    [reduction] = [r for r in report.reductions if r.layer_name == name]
    return reduction, node


@pytest.mark.parametrize("x", ["[2..3,6]", "[1..3,6]", "[1,6]", "[?,6]"])
def test_an_equal_of_a_dim_bounds_a_shape_computed_from_it(tmp_path: Path, x: str) -> None:
    """Reshape(x, [Convert(Equal(ShapeOf(x)[0], 1)) + 1, -1]) -> ReduceMean: Equal's bounds (false, true or either)
    pass through the Convert and the Add into the Reshape's target, as OpenVINO's do."""
    xp = ops.parameter([-1, 6], np.float32, name="x")
    d0 = ops.gather(ops.shape_of(xp), ops.constant(np.array([0])), ops.constant(np.int64(0)))
    flag = ops.convert(ops.equal(d0, ops.constant(np.array([1], np.int64))), np.int64)
    target = ops.concat([ops.add(flag, ops.constant(np.array([1], np.int64))), ops.constant(np.array([-1]))], 0)
    mean = ops.reduce_mean(ops.reshape(xp, target, False), ops.constant(np.array([1], np.int64)), False)
    mean.set_friendly_name("mean")
    reduction, node = _reshaped_both(ov.Model([ops.result(mean)], [xp]), tmp_path / "equal_flag.xml", x, "mean")
    assert reduction.input_shape == partial_shape(node.get_input_partial_shape(0)).to_json(), x


@pytest.mark.parametrize("x", ["[2..3,4]", "[1,4]", "[1..3,4]", "[?,4]"])
def test_a_loop_on_a_dim_is_decided_by_bounds_as_openvino_decides_it(tmp_path: Path, x: str) -> None:
    """A Loop of 3 iterations whose execution condition is Equal(ShapeOf(x)[0], 1): where the bounds say it is false
    (2..3), OpenVINO runs no iteration and its concatenated output is [0]; elsewhere 3 slices of [1,4]."""
    from openvino import opset5

    xp = ops.parameter([-1, 4], np.float32, name="x")
    d0 = ops.gather(ops.shape_of(xp), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
    cond = ops.squeeze(ops.equal(d0, ops.constant(np.array([1], np.int64))), ops.constant(np.array([0], np.int64)))
    inner = ops.parameter([1, 4], np.float32)
    body_out, body_cond = ops.result(ops.relu(inner)), ops.result(ops.constant(np.array(True)))
    loop = opset5.loop(ops.constant(np.int64(3)).output(0), cond.output(0))
    loop.set_function(ov.Model([body_cond, body_out], [inner]))
    loop.set_special_body_ports([-1, 0])
    one = [ops.constant(np.array([v])) for v in (0, 1, 1)]
    loop.set_invariant_input(inner, ops.slice(xp, *one).output(0))
    out = loop.get_concatenated_slices(body_out.output(0), 0, 1, 1, -1, 0)
    after = ops.reduce_sum(out, ops.constant(np.array([0], np.int64)), False)
    after.set_friendly_name("after")
    reduction, node = _reshaped_both(ov.Model([ops.result(after)], [xp]), tmp_path / "loop_on_a_dim.xml", x, "after")
    assert reduction.input_shape == partial_shape(node.get_input_partial_shape(0)).to_json(), x
    assert reduction.inferred_output_shape == partial_shape(node.get_output_partial_shape(0)).to_json(), x
