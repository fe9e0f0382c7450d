"""Which constant values the shape engine folds, op by op and element type by element type, against OpenVINO.

OpenVINO's shape inference knows a shape built from constants only where its ``evaluate`` computes the op in the
values' type (a Multiply of i32 yes, of i8 no; a SquaredDifference never); where it does not, the dims stay unknown.
ovreduce must know the same dims, no more and no fewer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset8 as ops8
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .test_reduce_differential import to_shape

TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _c(values: Any, dtype: Any = np.int64) -> Any:
    return ops.constant(np.array(values, dtype))


def _binary(f: Callable[..., Any]) -> Callable[[Any], Any]:
    # a negative dividend where the type has one: Mod takes its sign, FloorMod the divisor's
    return lambda dtype: f(_c([7, -7 if np.dtype(dtype).kind == "i" else 9], dtype), _c([3], dtype))


def _reduction(f: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda dtype: f(_c([[1, 2], [2, 1]], dtype), _c([0]), False)


OPS: dict[str, Callable[[Any], Any]] = {
    **{name: _binary(f) for name, f in [
        ("Add", ops.add), ("Subtract", ops.subtract), ("Multiply", ops.multiply), ("Divide", ops.divide),
        ("Maximum", ops.maximum), ("Minimum", ops.minimum), ("FloorMod", ops.floor_mod), ("Mod", ops.mod),
        ("SquaredDifference", ops.squared_difference), ("Equal", ops.equal), ("NotEqual", ops.not_equal),
        ("Less", ops.less), ("LessEqual", ops.less_equal), ("Greater", ops.greater),
        ("GreaterEqual", ops.greater_equal), ("LogicalAnd", ops.logical_and), ("LogicalOr", ops.logical_or),
        ("LogicalXor", ops.logical_xor)]},
    "LogicalNot": lambda dtype: ops.logical_not(_c([2, 0], dtype)),
    "Floor": lambda dtype: ops.floor(_c([2, 1], dtype)),
    # torch.clamp, neg, relu, sign and abs of sizes; a negative value where the type has one
    "Clamp": lambda dtype: ops.clamp(_c([2, 1, 5], dtype), 1.5, 3.7),
    "Clamp beyond the type": lambda dtype: ops.clamp(_c([2, 1, 5], dtype), -1e30, 1e30),
    # (to the type's limits, whose Sign is a dim: the limit itself is past a Broadcast's target)
    "Clamp to infinity": lambda dtype: ops.sign(ops.clamp(_c([2, 1, 5], dtype), float("inf"), float("inf"))),
    "Clamp to minus infinity": lambda dtype: ops.sign(ops.clamp(_c([2, 1, 5], dtype), float("-inf"), float("-inf"))),
    **{name: (lambda dtype, f=f: f(_c([2, 0, -3 if np.dtype(dtype).kind == "i" else 7], dtype))) for name, f in [
        ("Negative", ops.negative), ("Relu", ops.relu), ("Sign", ops.sign), ("Abs", ops.abs)]},
    "Ceiling": lambda dtype: ops.ceiling(_c([2, 1], dtype)),
    "Broadcast": lambda dtype: ops.broadcast(_c([2, 1], dtype), _c([2, 2])),
    "Tile": lambda dtype: ops.tile(_c([[2, 1]], dtype), _c([2, 1, 2])),
    "Select": lambda dtype: ops.select(_c([[True], [False]], np.bool_), _c([2, 1, 0], dtype), _c([1], dtype)),
    "Slice": lambda dtype: ops8.slice(_c([2, 1, 3], dtype), _c([1]), _c([3]), _c([1])),
    "Gather": lambda dtype: ops8.gather(_c([2, 1, 3], dtype), _c([2, 0]), _c(0)),
    **{name: _reduction(f) for name, f in [
        ("ReduceSum", ops.reduce_sum), ("ReduceProd", ops.reduce_prod), ("ReduceMax", ops.reduce_max),
        ("ReduceMin", ops.reduce_min), ("ReduceLogicalAnd", ops.reduce_logical_and),
        ("ReduceLogicalOr", ops.reduce_logical_or)]},
}  # fmt: skip


def _broadcast_shapes(dims: Any, xml: Path) -> tuple[Any, Any]:
    """The shape of a Broadcast to ``[3, *dims]`` as ovreduce infers it and as OpenVINO does, of the model saved at
    ``xml``."""
    x = ops.parameter([1], np.float32)
    ov.save_model(ov.Model([ops.broadcast(x, ops.concat([_c([3]), dims], 0))], [x]), str(xml), False)
    expected = next(n for n in ov.Core().read_model(str(xml)).get_ordered_ops() if n.get_type_name() == "Broadcast")
    ir = load_ir(xml)
    try:
        layer = next(layer for layer in ir.layers if layer.type == "Broadcast")
        shape = ShapeEngine(ir).state((layer.id, layer.outputs[0].id)).shape
    finally:
        ir.close()
    return shape, to_shape(expected.get_output_partial_shape(0))


@pytest.mark.parametrize("name", OPS)
def test_a_target_built_from_constants_is_known_where_openvino_knows_it(name: str, tmp_path: Path) -> None:
    """Each op over two small constants of each type, its result (converted to i64, plus 40) a Broadcast's target:
    the Broadcast's shape is what OpenVINO infers, every dim known or none."""
    compared = 0
    for dtype in TYPES:
        try:
            value = OPS[name](dtype)
        except RuntimeError:  # OpenVINO refuses the op in this type (a Multiply of booleans)
            continue
        dims = ops.add(ops.reshape(ops.convert(value, "i64"), _c([-1]), False), _c(40))
        shape, want = _broadcast_shapes(dims, tmp_path / f"{np.dtype(dtype).name}.xml")
        assert shape == want, f"{name} of {np.dtype(dtype).name}: ovreduce {shape}, OpenVINO {want}"
        compared += 1
    assert compared >= 1, compared


AXES: dict[str, Callable[[], Any]] = {
    **{f"through {t}": (lambda t=t: ops.convert(ops.convert(_c([1]), t), "i64")) for t in [
        "f8e4m3", "f8e5m2", "f8e8m0", "nf4", "f4e2m1", "u4", "i4", "i16", "u16", "f64", "bf16", "f16", "boolean"]},
    **{f"Gather of {np.dtype(t).name}": (lambda t=t: ops.convert(ops8.gather(_c([1, 0], t), _c([0]), _c(0)), "i64"))
       for t in [np.int16, np.uint16, np.float64, np.int8, np.float16, np.float32]},
    "Multiply of i8": lambda: ops.convert(ops.multiply(_c([1], np.int8), _c([1], np.int8)), "i64"),
    "ReduceSum of i16": lambda: ops.convert(ops.reduce_sum(_c([[1]], np.int16), _c([0]), False), "i64"),
    "Floor of i64": lambda: ops.floor(_c([1])),
    "Convert to boolean": lambda: ops.convert(ops.convert(_c([2]), "boolean"), "i64"),
    "Convert to string": lambda: ops.convert(_c([2]), "string"),  # axes of strings: values OpenVINO never reads
}  # fmt: skip


def _reduced(axes: Any, keep_dims: bool, tmp_path: Path) -> tuple[PartialShape | None, PartialShape]:
    """The shape ovreduce and OpenVINO give a ReduceSum of an f32 [2,3,4] over ``axes``."""
    x = ops.parameter([2, 3, 4], np.float32)
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.reduce_sum(x, axes, keep_dims)], [x]), str(xml), False)
    expected = ov.Core().read_model(str(xml)).output(0).get_node().input_value(0).get_node()
    ir = load_ir(xml)
    try:
        (reduction,) = (r for r in ShapeEngine(ir).reductions if r.layer.name == expected.get_friendly_name())
    finally:
        ir.close()
    return reduction.output.shape, to_shape(expected.get_output_partial_shape(0))


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("axes", AXES)
def test_axes_computed_from_constants_are_known_where_openvino_knows_them(
    axes: str, keep_dims: bool, tmp_path: Path
) -> None:
    """A reduction's axes computed from constants through an op OpenVINO computes in their type, or not (an 8-bit
    float, nf4, i16 Gather, i8 Multiply): where it does not, OpenVINO's shape inference takes the axes as unknown,
    and the reduction's shape is as dynamic as OpenVINO's, not left unresolved, nor known."""
    ours, openvinos = _reduced(AXES[axes](), keep_dims, tmp_path)
    assert ours == openvinos


FLOAT_AXES: dict[str, Callable[[], Any]] = {
    f"{name} of {np.dtype(t).name}": (lambda f=f, t=t: ops.convert(f(t), "i64"))
    for name, f in [
        ("Add", lambda t: ops.add(_c([0.5], t), _c([0.5], t))),
        ("ReduceProd", lambda t: ops.reduce_prod(_c([[1.0]], t), _c([0]), False)),
        ("Floor", lambda t: ops.floor(_c([1.5], t))),
        ("Multiply", lambda t: ops.multiply(_c([1.0], t), _c([1.0], t))),
    ]
    for t in [np.float16, np.float32]
}


@pytest.mark.parametrize("axes", FLOAT_AXES)
def test_axes_computed_from_float_constants_are_never_another_shape(axes: str, tmp_path: Path) -> None:
    """OpenVINO computes these, and so does ovreduce where it folds the op in reals (:mod:`ovreduce.ops.reals`): the
    reduction's shape is OpenVINO's; a ReduceProd of reals, which it does not fold, leaves it unresolved (with its
    reason), never given a shape OpenVINO does not give (dynamic dims, as if OpenVINO left the value to run time)."""
    ours, openvinos = _reduced(FLOAT_AXES[axes](), True, tmp_path)
    assert ours in (None, openvinos) if axes.startswith("ReduceProd") else ours == openvinos


WRAPPED = [-(2**62) - 5, -(2**31) - 3, -300, -129, -1, 0, 3, 127, 128, 255, 256, 300, 65541, 2**32 + 6]
WRAPPED += [2**63 - 1, 2**64 - 1]  # (a wide type's largest is no bound to OpenVINO: its dim is unknown)
DESTINATIONS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "u1", "u2", "u3", "u4", "u6", "i4"]


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_an_integer_convert_that_wraps_is_folded_as_openvino_folds_it(destination: str, tmp_path: Path) -> None:
    """A Convert between integer types of values past the destination's range: OpenVINO's ``evaluate`` wraps them
    (i64 300 to u8 is 44, -1 to u8 255, 2^32 + 6 to i32 6, 300 to u4 12, 3 to u1 1), and its shape inference reads the
    dims so computed (here, through a Convert back to i64 and an Abs, a Broadcast's target); so does ovreduce."""
    compared = 0
    for dtype in TYPES[:-1]:
        info = np.iinfo(dtype)
        values = [v for v in WRAPPED if info.min <= v <= info.max]
        dims = ops.abs(ops.convert(ops.convert(_c(values, dtype), destination), "i64"))
        shape, want = _broadcast_shapes(dims, tmp_path / f"{np.dtype(dtype).name}.xml")
        assert shape == want, f"{np.dtype(dtype).name} to {destination}: ovreduce {shape}, OpenVINO {want}"
        compared += want.is_static
    assert compared >= 1, compared
