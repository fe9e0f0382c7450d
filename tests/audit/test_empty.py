"""An audit does not call the CPU wrong where the specification leaves the value undefined: ReduceMax and
ReduceMin over an empty axis. The reference gives OpenVINO's reference implementation's value, the report
notes that the value is undefined, and the comparison leaves those elements out; with nothing to reduce, the row
establishes nothing."""

from __future__ import annotations

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
