"""Split, VariadicSplit, Select, Gather (``batch_dims`` too), ReduceMin/Max/Prod, Clamp, Abs and Tile of a shape
against the installed OpenVINO's reader: the ShapeOf of a Parameter of random static, interval and dynamic dims (or a
small integer constant) cut, picked, reduced, clamped or tiled at random, flattened and used as a Broadcast's target.
OpenVINO carries each element's bounds through these ops (``evaluate_lower``/``evaluate_upper``) and folds a
constant one (``evaluate``), so every layer's shape, the Broadcast's above all, must be what ovreduce infers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset1 as opset1
import openvino.opset7 as opset7
import openvino.opset13 as ops
import pytest

from ovreduce.shapes import PartialShape

from .test_shape_bounds import _both, _c
from .test_strided_slice_differential import DIMS, assert_openvinos_shapes

# the axes of a reduction of x[3,4,5] computed from s = ShapeOf(y[?,1,2,?]): each picks the static 2 (or the 0 of a
# shape holding one, in ReduceMin's case)
AXES = {
    "Split(s, 4)[2] - 1": lambda s: ops.subtract(ops.split(s, _c(0), 4).output(2), _c([1])),
    "VariadicSplit(s, [2, -1])[1][0:1] - 1": lambda s: ops.subtract(
        ops.slice(ops.variadic_split(s, _c(0), _c([2, -1])).output(1), _c([0]), _c([1]), _c([1])), _c([1])
    ),
    "Select([F, T, F, F], s, 0)[1]": lambda s: ops.gather(
        ops.select(ops.constant(np.array([False, True, False, False])), s, _c([0, 0, 0, 0])), _c([1]), _c(0)
    ),
    "ReduceMin(Concat(s, [0]))": lambda s: ops.unsqueeze(ops.reduce_min(ops.concat([s, _c([0])], 0), _c([0])), _c([0])),
    "Gather(s[None], [[2]], 1, batch_dims=1)[0] - 1": lambda s: ops.subtract(
        ops.reshape(ops.gather(ops.unsqueeze(s, _c([0])), _c([[2]]), _c(1), 1), _c([-1]), False), _c([1])
    ),
}


def _data(rng: random.Random) -> tuple[Any, list[Any]]:
    """A 1-D value: a shape (i64 or i32) with a part known only as bounds, or now and then a constant; and the
    Parameters it needs."""
    if rng.random() < 0.15:
        return _c([rng.randint(0, 6) for _ in range(rng.randint(1, 4))]), []
    x = ops.parameter(ov.PartialShape([ov.Dimension(str(rng.choice(DIMS))) for _ in range(rng.randint(1, 4))]),
                      np.float32, name="x")  # fmt: skip
    return ops.shape_of(x, rng.choice(["i64", "i32"])), [x]


def _lengths(rng: random.Random, total: int) -> list[int]:
    """Split lengths of ``total``, one of them -1 now and then."""
    cuts = sorted(rng.randint(0, total) for _ in range(rng.randint(0, 2)))
    lengths = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    if rng.random() < 0.5:
        lengths[rng.randrange(len(lengths))] = -1
    return lengths


def _op(rng: random.Random, data: Any) -> Any:
    n = data.get_output_partial_shape(0)[0].get_length()
    kind = rng.choice(["split", "variadic", "select", "gather", "reduce", "clamp", "abs", "tile"])
    if kind == "clamp":
        low = rng.choice([-5, 0, 0.5, 1, 2, 2.5])
        return ops.clamp(data, low, low + rng.choice([0, 0.5, 1, 3, 100, 1e30]))
    if kind == "abs":
        return ops.abs(data)
    if kind == "tile":
        return ops.tile(data, _c([rng.randint(0, 2) for _ in range(rng.randint(1, 2))]))
    if kind == "split":
        parts = rng.choice([p for p in range(1, n + 1) if n % p == 0])
        return ops.split(data, _c(rng.choice([0, -1])), parts).output(rng.randrange(parts))
    if kind == "variadic":
        lengths = _lengths(rng, n)
        return ops.variadic_split(data, _c(rng.choice([0, -1])), _c(lengths)).output(rng.randrange(len(lengths)))
    if kind == "select":
        cond = ops.constant(np.array([rng.random() < 0.5 for _ in range(rng.choice([1, n]))]))
        other = ops.convert_like(_c([rng.randint(0, 6) for _ in range(rng.choice([1, n]))]), data)
        return ops.select(cond, *((data, other) if rng.random() < 0.5 else (other, data)))
    if kind == "gather":
        picks = _c([[rng.randint(-n - 2, n + 1) for _ in range(rng.randint(1, 3))]])  # some past either end: 0
        return ops.gather(ops.unsqueeze(data, _c([0])), picks, _c(rng.choice([1, -1])), rng.choice([0, 1]))
    reduce = rng.choice([ops.reduce_min, ops.reduce_max, ops.reduce_prod])
    joined = ops.concat([data, ops.convert_like(_c([rng.randint(0, 6)]), data)], 0) if rng.random() < 0.5 else data
    return reduce(joined, _c([rng.choice([0, -1])]), rng.random() < 0.5)


def _model(rng: random.Random) -> ov.Model:
    data, params = _data(rng)
    target = ops.reshape(_op(rng, data), _c([-1]), False, name="flat")
    return ov.Model([ops.result(ops.broadcast(ops.constant(np.float32(0)), target, name="b"))], params)


@pytest.mark.parametrize("seed", range(4))
def test_a_shape_cut_picked_or_reduced_keeps_openvinos_bounds(seed: int, tmp_path: Path) -> None:
    assert_openvinos_shapes(_model, seed, 200, tmp_path)


@pytest.mark.parametrize("case", list(AXES))
def test_axes_cut_or_picked_from_a_shape_are_constant(case: str, tmp_path: Path) -> None:
    """The element each picks is a static dim of ``y`` (or the 0 a ReduceMin finds), so OpenVINO knows the axes and
    the reduction's shape, and so must ovreduce."""
    x, y = ops.parameter([3, 4, 5], np.float32, name="x"), ops.parameter([-1, 1, 2, -1], np.float32, name="y")
    red = ops.reduce_sum(x, ops.reshape(AXES[case](ops.shape_of(y)), _c([-1]), False), False, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x, y]), str(xml), compress_to_fp16=False)
    mine, openvino = _both(xml, "red")
    assert openvino == PartialShape.static([4, 5] if case.startswith("ReduceMin") else [3, 5])
    assert mine == openvino


@pytest.mark.parametrize("op", ["Clamp", "Abs", "Tile"])
def test_a_shape_known_in_part_keeps_its_known_dims_through_clamp_abs_and_tile(op: str, tmp_path: Path) -> None:
    """``torch.clamp`` of a size (and an Abs, a Tile) of ShapeOf(x[3,?]): OpenVINO keeps the static 3 and bounds the
    dynamic dim (by the Clamp's ``max``), so the Broadcast it sizes is ``[3,..100,1]`` or ``[3,?,1]``, not all
    dynamic."""
    x = ops.parameter([3, -1], np.float32, name="x")
    s = ops.shape_of(x)
    value = {"Clamp": lambda: ops.clamp(s, 0, 100), "Abs": lambda: ops.abs(s), "Tile": lambda: ops.tile(s, _c([1]))}
    target = ops.concat([value[op](), _c([1])], 0)
    red = ops.reduce_sum(ops.broadcast(ops.constant(np.float32(1)), target), _c([-1]), False, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x]), str(xml), compress_to_fp16=False)
    mine, openvino = _both(xml, "red")
    assert str(openvino) == ("[3,..100]" if op == "Clamp" else "[3,?]")
    assert mine == openvino


@pytest.mark.parametrize("gather", [opset1.gather, opset7.gather, ops.gather], ids=["v1", "v7", "v8"])
@pytest.mark.parametrize("index", [2, 5, -3])
@pytest.mark.parametrize("shape", [[2, 3], [2, -1]])
def test_a_shape_element_gathered_past_the_end_is_0(gather: Any, index: int, shape: list[int], tmp_path: Path) -> None:
    """An index past either end of ShapeOf(x[2,3]) (or of x[2,?]) picks no element: OpenVINO's reference gather leaves
    it 0 in every Gather version, so the Broadcast it sizes is ``[0,1]`` and the reduction after it ``[0]``."""
    x = ops.parameter(shape, np.float32, name="x")
    target = ops.concat([gather(ops.shape_of(x), _c([index]), _c(0)), _c([1])], 0)
    red = ops.reduce_sum(ops.broadcast(ops.constant(np.float32(1)), target), _c([1]), False, name="red")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(red)], [x]), str(xml), compress_to_fp16=False)
    mine, openvino = _both(xml, "red")
    assert openvino == PartialShape.static([0])
    assert mine == openvino
