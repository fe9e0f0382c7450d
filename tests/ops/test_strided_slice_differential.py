"""StridedSlice of a shape against the installed OpenVINO's reader: the ShapeOf of a Parameter of random static,
interval and dynamic dims (or a small integer constant of rank 1 to 3) sliced with random begins, ends, strides
(negative ones too) and begin, end, new-axis, shrink-axis and ellipsis masks, flattened and used as a Broadcast's
target. OpenVINO carries each element's bounds through the slice (``evaluate_lower``/``evaluate_upper``) and folds a
constant one (``evaluate``), so every layer's shape, the Broadcast's above all, must be what ovreduce infers."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .test_shape_bounds import _both, _c, _differences

# the axes of a reduction of x[3,4,5] picked from s = ShapeOf(y[1,?,2]): each picks the static 2 (or nothing)
AXES = {
    "s[2] (shrink) - 1": lambda s: ops.unsqueeze(ops.subtract(ops.strided_slice(s, _c([2]), _c([3]), _c([1]), [0], [0],
                                                                                [0], [1]), _c(1)), _c([0])),
    "s[2:1:-1] - 1": lambda s: ops.subtract(ops.strided_slice(s, _c([2]), _c([1]), _c([-1]), [0], [0]), _c([1])),
    "s[-1::-3] - 1": lambda s: ops.subtract(ops.strided_slice(s, _c([-1]), _c([0]), _c([-3]), [0], [1]), _c([1])),
    "s[None, 2:3] - 1": lambda s: ops.subtract(ops.strided_slice(s, _c([0, 2]), _c([0, 3]), _c([1, 1]), [0, 0], [0, 0],
                                                                 [1, 0]), _c([[1]])),
    "s[..., 2:3] - 1": lambda s: ops.subtract(ops.strided_slice(s, _c([0, 2]), _c([0, 3]), _c([1, 1]), [0, 0], [0, 0],
                                                                [0, 0], [0, 0], [1, 0]), _c([1])),
    "s[0:1:-1]": lambda s: ops.strided_slice(s, _c([0]), _c([1]), _c([-1]), [0], [0]),
}  # fmt: skip

DIMS = [1, 2, 3, 5, "?", "2..4", "0..3", "1..", "3..8"]
STRIDES = [-3, -2, -1, -1, 1, 1, 2, 3]


def _data(rng: random.Random) -> Any:
    """The sliced value: a shape (i64 or i32) with a part known only as bounds, or now and then a constant."""
    if rng.random() < 0.2:
        shape = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
        return _c(np.array([rng.randint(0, 6) for _ in range(int(np.prod(shape)))]).reshape(shape))
    x = ops.parameter(ov.PartialShape([ov.Dimension(str(rng.choice(DIMS))) for _ in range(rng.randint(1, 4))]),
                      np.float32, name="x")  # fmt: skip
    return ops.shape_of(x, rng.choice(["i64", "i32"]))


def _masks(rng: random.Random, count: int) -> list[list[int]]:
    """begin, end, new-axis, shrink-axis and ellipsis masks: at most one ellipsis, and an axis in one of the last three
    at most (where two meet, OpenVINO's shape inference and its evaluation disagree, and it fails on its own check)."""
    ends = [[int(rng.random() < 0.3) for _ in range(count)] for _ in range(2)]
    kinds = [rng.choice(["new", "shrink", "shrink", "", "", "", ""]) for _ in range(count)]
    if rng.random() < 0.25:
        kinds[rng.randrange(count)] = "ellipsis"
    return [*ends, *([int(kind == name) for kind in kinds] for name in ("new", "shrink", "ellipsis"))]


def _model(rng: random.Random) -> ov.Model:
    data = _data(rng)
    count = rng.randint(1, min(3, data.get_output_partial_shape(0).rank.get_length() + 1))
    begin, end = ([rng.randint(-5, 5) for _ in range(count)] for _ in range(2))
    strides = [rng.choice(STRIDES) for _ in range(count)]
    sliced = ops.strided_slice(data, _c(begin), _c(end), _c(strides), *_masks(rng, count), name="ss")
    target = ops.reshape(sliced, _c([-1]), False, name="flat")
    out = ops.broadcast(ops.constant(np.float32(0)), target, name="b")
    params = [data.input_value(0).get_node()] if data.get_type_name() == "ShapeOf" else []
    return ov.Model([ops.result(out)], params)


def assert_openvinos_shapes(build: Callable[[random.Random], ov.Model], seed: int, cases: int, tmp_path: Path) -> None:
    """Every layer's shape is OpenVINO's reader's, in ``cases`` models ``build`` makes from ``seed`` (one it cannot
    make, OpenVINO refusing it, is skipped), each flattening its value into a Broadcast ``b``: at least 100 are
    compared, and at least 50 of them give ``b`` a dim OpenVINO bounds."""
    rng = random.Random(seed)
    core = ov.Core()
    wrong, compared, known = [], 0, 0
    for case in range(cases):
        try:
            built = build(rng)
        except RuntimeError:  # a model OpenVINO refuses to make (a shrink past the end, more axes than the rank)
            continue
        xml = tmp_path / f"{case}.xml"
        ov.save_model(built, str(xml), compress_to_fp16=False)
        model = core.read_model(str(xml))
        out = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "b").get_output_partial_shape(0)
        known += out.rank.is_static and any(d.get_max_length() >= 0 for d in out)
        ir = load_ir(xml)
        try:
            wrong += [f"case {case}: {line}" for line in _differences(ShapeEngine(ir), model)]
        finally:
            ir.close()
        compared += 1
    assert compared >= 100 and known >= 50, (compared, known)
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("seed", range(4))
def test_a_strided_slice_of_a_shape_keeps_openvinos_bounds(seed: int, tmp_path: Path) -> None:
    assert_openvinos_shapes(_model, seed, 250, tmp_path)


@pytest.mark.parametrize("case", list(AXES))
def test_axes_picked_from_a_shape_by_a_strided_slice_are_constant(case: str, tmp_path: Path) -> None:
    """TensorFlow's ``tf.shape(y)[2] - 1`` (a StridedSlice with a shrink-axis mask) and its kin: the element picked is
    a static dim, so OpenVINO knows the axes and the reduction's shape, and so must ovreduce."""
    x, y = ops.parameter([3, 4, 5], np.float32, name="x"), ops.parameter([1, -1, 2], np.float32, name="y")
    red = ops.reduce_sum(x, ops.reshape(AXES[case](ops.shape_of(y)), _c([-1]), False), False, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x, y]), str(xml), compress_to_fp16=False)
    mine, openvino = _both(xml, "red")
    assert openvino == PartialShape.static([3, 4, 5] if case == "s[0:1:-1]" else [3, 5])
    assert mine == openvino
