"""Shape inputs other than a reduction's axes (a Pad's pads, an Unsqueeze's or a Slice's axes, a Reshape's target)
computed by a constant sub-graph ovreduce does not fold (an integer ReduceMean), against the installed OpenVINO
runtime: OpenVINO folds it as it reads the model and may refuse what it computes (pads of another length than the
rank, an axis out of range). ``check`` asks OpenVINO whether it reads such a model where the sub-graph is small, as it
does for axes, so a model OpenVINO refuses is not called clean; past that, it says the value is not confirmed."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.check import FOLD_BUDGET, check_model
from ovreduce.shapes import PartialShape


def _c(values: Any) -> Any:
    return ops.constant(np.array(values, dtype=np.int64))


def _unfolded(values: list[int]) -> Any:
    """``values`` as the mean of two equal rows of i64: OpenVINO folds it, ovreduce does not."""
    return ops.reduce_mean(_c([values, values]), _c([0]), False)


OPS: dict[str, tuple[str, Callable[[Any], Any]]] = {  # the shape x is written with, and the op on it
    "pad-begin": ("[?,?]", lambda x: ops.pad(x, _unfolded([0, 1]), _c([0, 0]), "constant")),
    "pad-end": ("[?,?]", lambda x: ops.pad(x, _c([0, 0]), _unfolded([1, 0]), "constant")),
    "unsqueeze-axes": ("[?,?,?]", lambda x: ops.unsqueeze(x, _unfolded([3]))),
    "slice-axes": ("[?,?,?]", lambda x: ops.slice(x, _c([0]), _c([1]), _c([1]), _unfolded([2]))),
    "reshape-target": ("[?,?,?]", lambda x: ops.reshape(x, _unfolded([0, 0, 0, -1]), True)),
}
RESHAPES = ["[2,3]", "[2,3,4]"]


def _judged(xml: Path, reshape: str | None = None) -> tuple[str | None, Any]:
    """What OpenVINO says reading the model at ``xml`` and reshaping its input x to ``reshape`` (its refusal's last
    line; None where it takes both), and ovreduce's check of the model under the same reshape."""
    try:
        model = ov.Core().read_model(str(xml))
        if reshape is not None:
            model.reshape({"x": ov.PartialShape(reshape)})
        refusal = None
    except RuntimeError as exc:
        refusal = str(exc).strip().splitlines()[-1]
    ir = load_ir(xml)
    try:
        return refusal, check_model(ir, reshape=None if reshape is None else {"x": PartialShape.parse(reshape)})
    finally:
        ir.close()


@pytest.mark.parametrize("reshape", RESHAPES)
@pytest.mark.parametrize("op", list(OPS))
def test_a_shape_input_of_a_small_unfolded_sub_graph_is_judged_by_openvino(
    op: str, reshape: str, tmp_path: Path
) -> None:
    shape, build = OPS[op]
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    y = ops.reduce_sum(build(x), _c([0]), True)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(y)], [x], op), str(xml), compress_to_fp16=False)
    refusal, checked = _judged(xml, reshape)
    assert checked.ok == (refusal is None), (refusal, checked.findings)
    if refusal is not None:
        [error] = [f for f in checked.findings if f.severity == "error"]
        assert error.code == "openvino-read-failed" and refusal in error.message


def test_every_case_has_openvino_refuse_one_reshape_and_read_the_other(tmp_path: Path) -> None:
    """What the cases rest on: OpenVINO folds each value and refuses the model under one of the reshapes only."""
    for op, (shape, build) in OPS.items():
        x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
        xml = tmp_path / f"{op}.xml"
        ov.save_model(ov.Model([ops.result(build(x))], [x], op), str(xml), compress_to_fp16=False)
        refused = []
        for reshape in RESHAPES:
            model = ov.Core().read_model(str(xml))
            try:
                model.reshape({"x": ov.PartialShape(reshape)})
            except RuntimeError:
                refused.append(reshape)
        assert len(refused) == 1, (op, refused)


def test_pads_of_a_large_unfolded_sub_graph_are_not_folded_by_openvino(tmp_path: Path) -> None:
    """Pads the mean of more elements than ovreduce lets OpenVINO fold: not asked, and a note says the pads are not
    confirmed, and why."""
    rows = FOLD_BUDGET // 2 + 1
    x = ops.parameter(ov.PartialShape("[?,?]"), np.float32, name="x")
    many = ops.broadcast(_c([0]), _c([rows, 2]))
    pad = ops.pad(x, ops.reduce_mean(many, _c([0]), False), _c([0, 0]), "constant")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_sum(pad, _c([0]), True))], [x], "m"), str(xml))
    ir = load_ir(xml)
    try:
        checked = check_model(ir, reshape={"x": PartialShape.parse("[2,3,4]")})
    finally:
        ir.close()
    assert not any(f.code == "openvino-read-failed" for f in checked.findings), checked.findings
    assert any(
        "is not confirmed by OpenVINO" in n and "Pad" in n and f"{rows * 2 + 2} elements" in n for n in checked.notes
    ), checked.notes


@pytest.mark.parametrize("last", [4, -5])
def test_a_target_put_together_of_a_dim_and_an_unfolded_sub_graph_is_judged_by_openvino(
    last: int, tmp_path: Path
) -> None:
    """A Reshape to ``Concat(ShapeOf(x)[0], mean)``: known at run time in part (a dim of ``2..3``), the rest a constant
    sub-graph ovreduce does not fold; OpenVINO folds that part, and refuses a target element of -5 ("Output pattern
    dim[1] has invalid bounds: -5,-5"), which ovreduce does not know: it asks OpenVINO."""
    x = ops.parameter(ov.PartialShape("[2..3,4]"), np.float32, name="x")
    dim = ops.gather(ops.shape_of(x), _c([0]), _c(0))
    mean = _unfolded([4])
    mean.set_friendly_name("mean")
    reshaped = ops.reshape(x, ops.concat([dim, mean], 0), False)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_sum(reshaped, _c([0]), True))], [x], "m"), str(xml))
    weights = bytearray(xml.with_suffix(".bin").read_bytes())  # the rows of the mean: [[4], [4]] made [[last], [last]]
    at = weights.find(struct.pack("<2q", 4, 4))
    weights[at : at + 16] = struct.pack("<2q", last, last)
    xml.with_suffix(".bin").write_bytes(bytes(weights))
    refusal, checked = _judged(xml)
    assert (refusal is None) == (last == 4)
    assert checked.ok == (refusal is None), (refusal, checked.findings)
    if refusal is not None:
        [error] = [f for f in checked.findings if f.severity == "error"]
        assert error.code == "openvino-read-failed" and refusal in error.message


@pytest.mark.parametrize("reshape", ["[2..3,3]", "[2..3,3,4]"])
def test_pads_put_together_of_a_dim_and_an_unfolded_sub_graph_are_judged_by_openvino(
    reshape: str, tmp_path: Path
) -> None:
    """Pads ``Concat(ShapeOf(x)[0], mean)``: known at run time in part (a dim of ``2..3``), the rest a constant
    sub-graph ovreduce does not fold; OpenVINO folds that part, and refuses pads of another length than the rank."""
    x = ops.parameter(ov.PartialShape("[?,?]"), np.float32, name="x")
    dim = ops.gather(ops.shape_of(x), _c([0]), _c(0))
    pad = ops.pad(x, ops.concat([dim, _unfolded([1])], 0), _c([0, 0]), "constant")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_sum(pad, _c([0]), True))], [x], "m"), str(xml))
    refusal, checked = _judged(xml, reshape)
    assert (refusal is None) == (reshape == "[2..3,3]")
    assert checked.ok == (refusal is None), (refusal, checked.findings)
    if refusal is not None:
        [error] = [f for f in checked.findings if f.severity == "error"]
        assert error.code in ("openvino-read-failed", "reshape-inconsistent"), error
        assert "length of pads_begin" in error.message, error
