"""Reshape's -1 against the installed OpenVINO's reader: random input shapes (zero-sized, interval and dynamic dims,
a dynamic rank) and constant patterns (0, -1, with and without ``special_zero``), each written as an IR. ovreduce must
infer the shape ``read_model`` infers, and refuse the models it refuses. OpenVINO's empty interval (``1..0``, which
it gives a -1 that no count fits where a dim is an interval) is a dynamic dim to ovreduce."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.ops.base import PortState
from ovreduce.shapes import Dimension, PartialShape

DIMS = [0, 0, 1, 2, 3, 4, 5, 6, 8, "?", "2..4", "0..3", "1..", "2..", "3..12"]
PATTERN = [0, 0, -1, -1, 1, 2, 3, 4, 6, 8, 12, 24]


def _write(folder: Path, shape: list[int | str] | None, pattern: list[int], special_zero: bool) -> Path:
    """An IR of a Parameter of ``shape`` (None: a dynamic rank), a Const ``pattern`` (i64) and a Reshape."""
    dims = "".join(f"<dim>{-1 if d == '?' else d}</dim>" for d in shape or ())
    data = np.asarray(pattern, np.int64).tobytes()
    count = f"<dim>{len(pattern)}</dim>"
    text = "..." if shape is None else ",".join(map(str, shape))
    (folder / "m.bin").write_bytes(data)
    (folder / "m.xml").write_text(f"""<?xml version="1.0"?>
<net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{text}" element_type="f32"/><output>
<port id="0" precision="FP32" names="x">{dims}</port></output></layer>
<layer id="1" name="pattern" type="Const" version="opset1"><data element_type="i64" shape="{len(pattern)}" offset="0"
 size="{len(data)}"/><output><port id="0" precision="I64">{count}</port></output></layer>
<layer id="2" name="op" type="Reshape" version="opset1"><data special_zero="{str(special_zero).lower()}"/><input>
<port id="0">{dims}</port><port id="1">{count}</port></input><output><port id="2" precision="FP32"/></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0"/></input></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>""")
    return folder / "m.xml"


def _shape(pshape: ov.PartialShape) -> PartialShape:
    if pshape.rank.is_dynamic:
        return PartialShape(None)
    bounds = [(d.get_min_length(), d.get_max_length()) for d in pshape]  # an empty interval: -1 and -1, or lo > hi
    return PartialShape(tuple(Dimension(lo, None if hi < 0 else hi) if lo >= 0 and (hi < 0 or lo <= hi)
                              else Dimension.dynamic() for lo, hi in bounds))  # fmt: skip


def read_both(core: ov.Core, xml: Path) -> tuple[PartialShape | None, PortState]:
    """The shape ``read_model`` gives the model's first output (None: it refuses the file), and ovreduce's state of
    the first output of the layer named ``op``."""
    try:
        expected = _shape(core.read_model(xml).output(0).get_partial_shape())
    except RuntimeError:
        expected = None
    ir = load_ir(xml)
    try:
        (layer,) = [layer for layer in ir.layers if layer.name == "op"]
        return expected, ShapeEngine(ir).state((layer.id, layer.outputs[0].id))
    finally:
        ir.close()


@pytest.mark.parametrize("seed", range(4))
def test_the_minus_one_of_a_reshape_is_openvinos(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    core = ov.Core()
    wrong, compared, refused = [], 0, 0
    for case in range(200):
        shape = None if rng.random() < 0.1 else [rng.choice(DIMS) for _ in range(rng.randint(0, 4))]
        pattern = [rng.choice(PATTERN) for _ in range(rng.randint(1, 4))]
        if pattern.count(-1) != 1:
            continue
        special_zero = rng.random() < 0.5
        folder = tmp_path / str(case)
        folder.mkdir()
        xml = _write(folder, shape, pattern, special_zero)
        expected, state = read_both(core, xml)
        refused += expected is None
        compared += 1
        if state.shape != expected:
            wrong.append(f"{shape} -> {pattern} (special_zero={special_zero}): ovreduce {state.shape} "
                         f"{state.reason}, OpenVINO {expected}")  # fmt: skip
    assert compared >= 25 and refused >= 1, (compared, refused)  # (each seed meets refusals too)
    assert wrong == []
