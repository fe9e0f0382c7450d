"""An audit does not call the CPU wrong where the specification leaves the value undefined: ReduceMax and
ReduceMin over an empty axis. The reference gives OpenVINO's reference implementation's value, the report
notes that the value is undefined, and the comparison leaves those elements out; with nothing to reduce, the row
establishes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovreduce.audit import audit_model
from ovreduce.ir.parser import load_ir


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("etype", [ov.Type.f32, ov.Type.i32, ov.Type.u8])
def test_empty_max_and_min_are_undefined_not_wrong(tmp_path: Path, kind: str, etype: Any) -> None:
    x = ops.parameter([3, 0, 4], etype, name="x")
    axes = ops.constant(np.array([1], np.int64))
    red = (ops.reduce_max if kind == "max" else ops.reduce_min)(x, axes, False, name="empty")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.add(red, red, name="twice")], [x], "m"), path, compress_to_fp16=False)
    model = load_ir(path)
    try:
        doc = audit_model(model, precision="f32")
    finally:
        model.close()
    assert doc.error is None, doc.error
    (layer,) = doc.layers
    # not wrong, and nothing established either: an empty input cannot show an error
    assert layer.status == "not-established" and layer.not_established == "its input is empty", layer
    assert doc.ok and not doc.complete
    assert layer.undefined == 12 and layer.mismatched == 0
    assert any("undefined" in note for note in layer.notes), layer.notes


@pytest.mark.parametrize("shape", [(0, 8), (1, 0), (0, 0)])
def test_an_empty_input_runs_on_the_model_as_it_is(tmp_path: Path, shape: tuple[int, int]) -> None:
    """An empty batch or sequence (given, or shaped ``input_ids=[0,8]``): the audit reshaped the model to it before
    compiling, and OpenVINO's CPU plugin crashed the process compiling that (SIGFPE), where the model as it is runs
    the very input. The audit runs it so, says why, and its rows say the input is empty. Run as the command (a crash
    would end the test's process)."""
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    table = ops.constant(np.random.default_rng(0).standard_normal((100, 16)).astype(np.float32))
    rows = ops.gather(table, ids, ops.constant(np.int64(0)))
    mean = ops.reduce_mean(ops.power(rows, ops.constant(np.float32(2))), ops.constant(np.array([-1], np.int64)),
                           True, name="mean")  # fmt: skip
    weights = ops.constant(np.random.default_rng(1).standard_normal((16, 32)).astype(np.float32))
    out = ops.matmul(ops.divide(rows, ops.sqrt(mean)), weights, False, False)
    path, given = tmp_path / "m.xml", tmp_path / "ids.npy"
    ov.save_model(ov.Model([out.output(0)], [ids], "m"), path, compress_to_fp16=False)
    np.save(given, np.zeros(shape, np.int64))
    code = "import sys; from ovreduce.cli.entry import console; sys.argv[0] = 'ovreduce'; sys.exit(console())"
    for how in (["--input", f"input_ids={given}"], ["--shape", f"input_ids=[{shape[0]},{shape[1]}]"]):
        command = [sys.executable, "-c", code, "audit", str(path), "--precision", "f32", "--format", "json", *how]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        doc = json.loads(done.stdout)
        assert doc["error"] is None and [layer["not_established"] for layer in doc["layers"]] == [
            "its input is empty"], doc["layers"]  # fmt: skip
        assert any("'input_ids' is empty: the model ran as it is" in note for note in doc["notes"]), doc["notes"]
        assert doc["layers"][0]["input_shape"] == [*shape, 16] and doc["final_outputs"][0]["identical"], doc
