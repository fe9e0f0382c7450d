"""Shapes computed in floats, against the installed OpenVINO runtime.

A model exported from PyTorch computes sizes in floats: ``x.size(2) // p`` is ``Convert(f32) -> Divide -> Floor``,
``math.ceil(h / p) * p`` a ``Divide -> Ceiling -> Multiply``, ``int(math.sqrt(n))`` a ``Sqrt -> Convert``. OpenVINO
folds these as it infers shapes; ovreduce must fold them to the same values, bit for bit, in the types OpenVINO
computes them in, and where it does not fold one, say why rather than leave a dim silently unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.check.inspect import inspect_model
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .test_reduce_differential import to_shape
from .test_shape_bounds import _differences

REALS = ["f16", "bf16", "f32", "f64"]
INTEGERS = ["i32", "i64", "u32", "u8"]


def _c(values: Any, etype: str = "i64") -> Any:
    """A constant of ``etype`` (bf16 made by a Convert of f32, which OpenVINO folds as it makes the model)."""
    if etype in ("bf16", "f16"):  # (OpenVINO rounds the f32 values into the type as it makes the model)
        return ops.convert(ops.constant(np.array(values, np.float32)), etype)
    dtype = "bool" if etype == "boolean" else {"f16": "float16", "f32": "float32", "f64": "float64"}.get(etype)
    return ops.constant(np.array(values, dtype or {"i": "int", "u": "uint"}[etype[0]] + etype[1:]))


def _binary(f: Callable[..., Any], x: list[float], y: list[float]) -> Callable[[str], Any]:
    return lambda t: f(_c(x, t), _c(y, t))


def _unary(f: Callable[..., Any], x: list[float]) -> Callable[[str], Any]:
    return lambda t: f(_c(x, t))


_X = [7.0, 9.0, 2049.0, 0.3, -7.5, 4097.0, 1e-3]
_Y = [2.0, 3.0, 3.0, 0.1, 2.0, 3.0, 7.0]
VALUES: dict[str, Callable[[str], Any]] = {  # each over constants of the type it is given
    "Add": _binary(ops.add, _X, _Y),
    "Subtract": _binary(ops.subtract, _X, _Y),
    "Multiply": _binary(ops.multiply, _X, _Y),
    "Divide": _binary(ops.divide, _X, _Y),
    "Maximum": _binary(ops.maximum, _X, _Y),
    "Minimum": _binary(ops.minimum, _X, _Y),
    "FloorMod": _binary(ops.floor_mod, [7.5, -7.5, 1e30, 5.0, 0.3, 9.0], [2.0, 2.0, 7.0, -3.0, 0.1, 4.0]),
    "Mod": _binary(ops.mod, [7.5, -7.5], [2.0, 2.0]),
    "Power": _binary(ops.power, [2.0, 3.0, 2.0, 1.5, 0.5], [10.0, 3.0, -2.0, 2.0, -1.0]),
    "FloorMod of small values": _binary(ops.floor_mod, [7.5, -7.5, 9.0, 0.3], [2.0, 4.0, -4.0, 0.1]),
    "Power not exact": _binary(ops.power, [10.0, 3.0], [0.5, 3.0]),
    "SquaredDifference": _binary(ops.squared_difference, [7.0, 0.3], [2.0, 0.1]),
    "Equal": _binary(ops.equal, [7.0, 0.3, 2.0], [7.0, 0.1, 3.0]),
    "Less": _binary(ops.less, [7.0, 0.3, 2.0], [7.0, 0.1, 3.0]),
    "GreaterEqual": _binary(ops.greater_equal, [7.0, 0.3, 2.0], [7.0, 0.1, 3.0]),
    "Floor": _unary(ops.floor, [4.5, -4.5, 2.0, 0.3]),
    "Ceiling": _unary(ops.ceiling, [4.5, -4.5, 2.0, 0.3]),
    "Round half to even": _unary(lambda x: ops.round(x, "half_to_even"), [2.5, 3.5, -2.5, 0.49999997, 1.7]),
    "Round half away": _unary(lambda x: ops.round(x, "half_away_from_zero"), [2.5, 3.5, -2.5, 0.49999997, 1.7]),
    "Sqrt": _unary(ops.sqrt, [4.0, 2.0, 8.0, 1e6, 0.25]),
    "Negative": _unary(ops.negative, [4.5, 3.0]),
    "Abs": _unary(ops.abs, [-4.5, 3.0]),
    "Relu": _unary(ops.relu, [-4.5, 3.0]),
    "Sign": _unary(ops.sign, [-4.5, 3.0, 0.0]),
    "Clamp": _unary(lambda x: ops.clamp(x, 1.5, 3.7), [0.3, 2.0, 9.1, 3.69]),
    "Select": lambda t: ops.select(_c([True, False, True], "boolean"), _c([1.5, 2.0, 3.0], t), _c([0.25], t)),
    **{f"Convert to {d}": (lambda t, d=d: ops.convert(_c([3.7, 2.5, 100.9, 0.1, 0.0, 255.9], t), d))
       for d in ["i64", "i32", "u8", "u32", "boolean", *REALS]},
    **{f"Convert past {d}": (lambda t, d=d: ops.convert(_c([3.7, -3.7, 65520.0, 1e10], t), d))
       for d in ["i32", "u8", "u32", "f16", "bf16"]},
}  # fmt: skip
INTEGER_VALUES: dict[str, Callable[[str], Any]] = {
    "Power": _binary(ops.power, [2, 3, 2, 0, 7, 1], [10, 3, 0, 2, 0, 40]),
    "Power past the type": _binary(ops.power, [2, 10, 3], [3, 15, 40]),
    "Sqrt": _unary(ops.sqrt, [4, 5, 8, 2, 0, 9]),
    "Round": _unary(lambda x: ops.round(x, "half_to_even"), [4, 5]),
    **{
        f"Convert to {d}": (lambda t, d=d: ops.convert(_c(_fitting([3, 255, 2049, 16777217, (1 << 30) + 1], t), t), d))
        for d in REALS
    },
}


def _fitting(values: list[int], etype: str) -> list[int]:
    """The values an integral type holds."""
    bits = int(etype[1:])
    return [v for v in values if v < 1 << (bits - (etype[0] == "i"))]


def _ours(node: Any, tmp_path: Path) -> tuple[tuple[float, ...] | None, str]:
    """``node``'s value as ovreduce folds it (None where it does not), and its reason."""
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(node)], []), str(xml), compress_to_fp16=False)
    ir = load_ir(xml)
    try:
        (result,) = (layer for layer in ir.layers if layer.type == "Result")
        info = ShapeEngine(ir).result_value(result.id)
    finally:
        ir.close()
    if info.kind == "const" and info.values is not None:
        return tuple(float(v) for v in info.values), info.reason
    return info.reals, info.reason


def _integers(node: Any, scales: list[float]) -> Any:
    """``node``'s values as integers, exactly: each (through f64, exact) times its power of two, then to i64."""
    if node.get_output_element_type(0).is_real():
        node = ops.multiply(ops.convert(node, "f64"), _c(scales, "f64"))
    return ops.convert(node, "i64")


def _shape_inferred(node: Any, scales: list[float]) -> list[int] | None:
    """``node``'s values (times ``scales``) as OpenVINO's shape inference knows them: a Broadcast's target made of
    their magnitudes and signs; None where it does not know them."""
    whole = _integers(ops.reshape(node, _c([-1]), False), scales)
    flags = ops.convert(ops.less(whole, _c([0])), "i64")
    target = ops.concat([ops.add(ops.abs(whole), _c([1])), ops.add(flags, _c([1]))], 0)
    try:
        spread = ops.broadcast(ops.parameter([1], np.float32), target)
    except RuntimeError:  # (values no integer shows, such as an infinity converted: known, but no shape)
        return []
    shape = spread.get_output_partial_shape(0)
    if not shape.is_static:
        return None
    dims = [int(d) - 1 for d in shape.to_shape()]
    half = len(dims) // 2
    return [-m if sign else m for m, sign in zip(dims[:half], dims[half:], strict=True)]


def _scale(v: float, etype: str) -> float:
    """The power of two that makes ``v`` (a value of ``etype``) an integer."""
    if v == 0 or not math.isfinite(v) or etype in ("boolean", *INTEGERS, "i8", "i16", "u16", "u64"):
        return 1.0
    bits = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}[etype]
    return math.ldexp(1.0, bits - math.frexp(v)[1])


def _compare(name: str, etype: str, node: Any, tmp_path: Path) -> bool:
    """Whether ovreduce folds ``node`` to the values OpenVINO's shape inference computes, exactly; asserts it never
    folds another value, nor one OpenVINO does not compute. False where ovreduce does not fold (it then says why)."""
    out_type = node.get_output_element_type(0).get_type_name()
    count = math.prod(node.get_output_shape(0))
    got, reason = _ours(node, tmp_path)
    if got is None:
        openvinos = _shape_inferred(node, [1.0] * count)
        assert openvinos is None or reason, f"{name} of {etype}: ovreduce neither folds it nor says why ({openvinos})"
        return openvinos is None
    if not all(math.isfinite(v) for v in got):
        return True  # (no integer shows them; the Convert after them is not folded, with its reason)
    scales = [_scale(v, out_type) for v in got]
    want = _shape_inferred(node, scales)
    assert want is not None, f"{name} of {etype}: ovreduce folds {got}, OpenVINO does not compute it"
    assert [v * s for v, s in zip(got, scales, strict=True)] == want, (
        f"{name} of {etype}: ovreduce {got}, OpenVINO {[w / s for w, s in zip(want, scales, strict=True)]}"
    )
    return True


def _first_outputs(xml: Path) -> dict[str, Any]:
    """``inspect --all`` of ``xml``: each layer's first output (its shape and why a dim is unknown), by layer name."""
    ir = load_ir(xml)
    try:
        doc = inspect_model(ir, all_layers=True)
    finally:
        ir.close()
    return {view.layer_name: view.outputs[0] for view in doc.layers if view.outputs}


@pytest.mark.parametrize("name", VALUES)
def test_real_values_fold_to_openvinos_bit_for_bit(name: str, tmp_path: Path) -> None:
    """Each op over constants of each real type: the values ovreduce folds are OpenVINO's exactly (f16 and bf16
    computed in f32 and rounded back, f32 IEEE-rounded), it folds where OpenVINO's ``evaluate`` computes the op in
    that type and nowhere else, and it folds at least in f32."""
    folded = {}
    for etype in REALS:
        try:
            node = VALUES[name](etype)
        except RuntimeError:  # OpenVINO refuses the op in this type
            continue
        folded[etype] = _compare(name, etype, node, tmp_path)
    assert folded, name
    if name != "Mod" and "not exact" not in name and "past" not in name:
        assert folded.get("f32", True), f"{name} of f32 is not folded"


@pytest.mark.parametrize("name", INTEGER_VALUES)
def test_integer_values_of_power_sqrt_round_fold_to_openvinos(name: str, tmp_path: Path) -> None:
    """Power (a double power cast back), Sqrt (the root rounded), Round and Convert to a real type, of integers:
    folded where OpenVINO computes them (an integer past f16's or bf16's precision, a power past the type, aside)."""
    for etype in INTEGERS:
        try:
            node = INTEGER_VALUES[name](etype)
        except RuntimeError:
            continue
        folded = _compare(name, etype, node, tmp_path)
        if "past" not in name and not name.endswith(("f16", "bf16")):
            assert folded, f"{name} of {etype} is not folded"


def _unfold_target(x: Any, patch: int) -> Any:
    """MobileViT's ``unfolding``: the feature map's size rounded up to the patch (``math.ceil(h / p) * p``, in f32),
    then the patches along it (``new_h // p``: an i64 Divide, floored): ``[C * new_h // p, p, new_w // p, p]``."""
    shape = ops.shape_of(x)
    patches = []
    for axis in (2, 3):
        size = ops.convert(ops.gather(shape, _c(axis), _c(0)), "f32")
        new = ops.convert(ops.multiply(ops.ceiling(ops.divide(size, _c(float(patch), "f32"))), _c(float(patch), "f32")),
                          "i64")  # fmt: skip
        patches.append(ops.unsqueeze(ops.floor(ops.divide(new, _c(patch))), _c(0)))
    channels = ops.gather(shape, _c([1]), _c(0))
    first = ops.multiply(channels, patches[0])
    return ops.concat([first, _c([patch]), patches[1], _c([patch])], 0)


def _unfold_model(shape: str) -> ov.Model:
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    spread = ops.broadcast(_c(np.ones((1, 1, 1, 1)), "f32"), _unfold_target(x, 2))
    spread.set_friendly_name("patches")
    out = ops.reduce_mean(spread, _c([1, 3]), False)
    out.set_friendly_name("mean")
    return ov.Model([ops.result(out)], [x], "unfold")


@pytest.mark.parametrize("given", ["[2,3,8,12]", "[1,4,9,7]"])
def test_mobilevit_unfold_target_is_folded_as_openvino_folds_it(given: str, tmp_path: Path) -> None:
    """The patches' target of a static model (odd sizes too: ``9 / 2`` is 4.5 in f32, its ceiling 5), and of a
    dynamic one reshaped to it: every layer's shape is OpenVINO's, static."""
    xml = tmp_path / "static.xml"
    ov.save_model(_unfold_model(given), str(xml), compress_to_fp16=False)
    dynamic = tmp_path / "dynamic.xml"
    ov.save_model(_unfold_model("[?,?,?,?]"), str(dynamic), compress_to_fp16=False)
    for path, reshape in ((xml, None), (dynamic, given)):
        model = ov.Core().read_model(str(path))
        if reshape is not None:
            model.reshape({"x": ov.PartialShape(reshape)})
        assert (
            next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "patches")
            .get_output_partial_shape(0)
            .is_static
        )
        ir = load_ir(path)
        try:
            engine = ShapeEngine(ir, None if reshape is None else {"x": PartialShape.parse(reshape)})
            assert _differences(engine, model) == []
        finally:
            ir.close()


def test_a_dim_an_unfolded_value_leaves_unknown_says_why(tmp_path: Path) -> None:
    """A Reshape whose target ovreduce cannot fold (an Exp of sizes, which it does not compute) has dims it does not
    know where OpenVINO knows them: ``inspect`` says why on that port and on the ports after it, rather than leaving
    them silently ``-1``."""
    x = ops.parameter([2, 3, 8, 8], np.float32, name="x")
    size = ops.convert(ops.gather(ops.shape_of(x), _c([3]), _c(0)), "f32")
    odd = ops.convert(ops.exp(ops.multiply(size, _c([0.0], "f32"))), "i64")  # exp(0) = 1
    reshaped = ops.reshape(x, ops.concat([_c([6]), odd, _c([-1])], 0), False)
    reshaped.set_friendly_name("reshaped")
    after = ops.relu(reshaped)
    after.set_friendly_name("after")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(after)], [x]), str(xml), compress_to_fp16=False)
    assert ov.Core().read_model(str(xml)).output(0).get_partial_shape().is_static
    ports = _first_outputs(xml)
    for name in ("reshaped", "after"):
        port = ports[name]
        assert port.shape is not None and -1 in port.shape, (name, port)
        assert port.shape_reason is not None and "Exp" in port.shape_reason, (name, port)
    assert ports["x"].shape_reason is None


def test_integer_conversions_of_big_values_round_once() -> None:
    """An i64 converted to f32 rounds the integer itself to nearest-even (not through a double)."""
    from ovreduce.ir.dtypes import ELEMENT_TYPES
    from ovreduce.ops.reals import from_int

    f32 = ELEMENT_TYPES["f32"]
    for v in [(1 << 53) + 1, (1 << 62) + (1 << 38) + 1, 16777217, -16777219, (1 << 63) - 1]:
        assert from_int(v, f32) == float(np.int64(v).astype(np.float32)), v


def test_a_declared_dim_ovreduce_leaves_unknown_says_why(tmp_path: Path) -> None:
    """Swin's padding to its window (``(w - d % w) % w`` of a dim known at run time), the channels' pad an Exp of
    constants that OpenVINO folds and ovreduce does not compute: OpenVINO keeps the channels' 16 through the Pad, and
    the file declares it; where ovreduce leaves it unknown, the port and the ports after it say why instead of a silent
    ``-1``."""
    x = ops.parameter(ov.PartialShape("[?,?,16]"), np.float32, name="x")
    dim = ops.gather(ops.shape_of(x), _c([1]), _c(0))
    pad = ops.floor_mod(ops.subtract(_c([8]), ops.floor_mod(dim, _c([8]))), _c([8]))
    zero = ops.convert(ops.subtract(ops.exp(_c([0.0], "f32")), _c([1.0], "f32")), "i64")  # exp(0) - 1
    padded = ops.pad(x, _c([0, 0, 0]), ops.concat([_c([0]), pad, zero], 0), "constant")
    padded.set_friendly_name("padded")
    after = ops.relu(padded)
    after.set_friendly_name("after")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(after)], [x]), str(xml), compress_to_fp16=False)
    expected = {n.get_friendly_name(): to_shape(n.get_output_partial_shape(0)) for n in
                ov.Core().read_model(str(xml)).get_ordered_ops()}  # fmt: skip
    assert expected["padded"].dims is not None and expected["padded"].dims[2].is_static
    ports = _first_outputs(xml)
    assert ports["padded"].shape != expected["padded"].to_json(), "ovreduce knows the dim now: the case tests nothing"
    for name in ("padded", "after"):
        port = ports[name]
        if port.shape != expected[name].to_json():
            # the file's declaration, or the Pad's own word: a pad it does not bound leaves that dim unknown
            said = ("declares [?,?,16]", "Pad (padded) pads by pads_end computed at run time")
            assert port.shape_reason is not None and any(s in port.shape_reason for s in said), (name, port)
