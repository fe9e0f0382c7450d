"""``audit --target``: what a row's verdict rests on and states, against OpenVINO's own computation.

A row states the tolerance it was judged at; a pass from a bf16 capture is not settled by a bound computed on
values that capture rounded; an overflow the model has in f32 already is not charged to the target.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.audit import audit_model
from ovreduce.backends.openvino import precision_support
from ovreduce.compare import tolerances
from ovreduce.headroom import TYPES

AXIS = np.array([1], np.int64)


def _target_row(path: Path, data: np.ndarray[Any, Any], precision: str, target: str) -> dict[str, Any]:
    doc = audit_model(load_ir(path), precision=precision, inputs={"x": data}, target=target).to_json()
    return next(row["target"] for row in doc["layers"] if row.get("target"))


def test_a_bound_settled_max_states_the_tolerance_it_was_judged_at(tmp_path: Path) -> None:
    """A ReduceMax's tolerance does not grow with its input's size as a sum's does: a row the rounding bound settles
    states the picking op's tolerance, the one the bound was proven within."""
    x = ops.parameter([1, 64], np.float32, name="x")
    top = ops.reduce_max(ops.exp(x), ops.constant(AXIS), True)
    ov.save_model(ov.Model([top], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(1).uniform(-1, 0, (1, 64)).astype(np.float32)  # outputs up to 1: above the atol
    row = _target_row(tmp_path / "m.xml", data, "f32", "f16")
    assert row["status"] == "headroom" and row["error_bound"] is not None, row
    assert (row["atol"], row["rtol"]) == tolerances("f16", None, 64, 1, op="ReduceMax"), row
    assert (row["atol"], row["rtol"]) != tolerances("f16", None, 64, 1, op="ReduceSum")


def _f16_evaluation(data: np.ndarray[Any, Any], scale: float) -> float:
    """OpenVINO's own f16 result of ``ReduceMean(x * scale)`` (``Node.evaluate`` of each op in f16)."""
    x = ops.parameter(list(data.shape), ov.Type.f16)
    product = ops.multiply(x, ops.constant(np.float16(scale)))
    mean = ops.reduce_mean(product, ops.constant(AXIS), True)

    def evaluate(node: Any, inputs: list[ov.Tensor]) -> ov.Tensor:
        out = ov.Tensor(node.get_output_element_type(0), node.get_output_partial_shape(0).to_shape())
        assert node.evaluate([out], inputs)
        return out

    middle = evaluate(product, [ov.Tensor(data.astype(np.float16)), ov.Tensor(np.array(scale, np.float16))])
    return float(np.asarray(evaluate(mean, [middle, ov.Tensor(AXIS)]).data).reshape(-1)[0])


def test_a_bound_from_a_bf16_capture_settles_no_f16_verdict(tmp_path: Path) -> None:
    """128.49 x 510 overflows f16 (128.49 is 128.5 there, and 128.5 x 510 = 65535), as OpenVINO's f16 evaluation
    computes; a default-precision run on a bf16 CPU captures 128.49 as 128, from which the bound "settled" the row.
    From a bf16 capture the row is not established; from an f32 one it is the overflow."""
    support = precision_support("CPU")
    if support is None or support[1].get("bf16") != "bf16":
        pytest.skip("this CPU runs no bf16 natively: a default-precision run captures in f32")
    x = ops.parameter([1, 64], np.float32, name="x")
    mixed = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32)), False, False)  # so that a bf16 run rounds x
    mean = ops.reduce_mean(ops.multiply(mixed, ops.constant(np.float32(510))), ops.constant(AXIS), True)
    ov.save_model(ov.Model([mean], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).uniform(100, 120, (1, 64)).astype(np.float32)
    data[0, 0] = 128.49
    assert not np.isfinite(_f16_evaluation(data, 510.0))
    assert _target_row(tmp_path / "m.xml", data, "f32", "f16")["status"] == "overflow"
    row = _target_row(tmp_path / "m.xml", data, "default", "f16")
    assert row["status"] == "not-established" and "precision f32" in row["message"], row


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_an_overflow_the_model_has_in_f32_is_not_the_targets(tmp_path: Path, target: str) -> None:
    """exp(100) is inf in f32 already: the target adds no overflow there, and the row does not fail for it."""
    x = ops.parameter([1, 8], np.float32, name="x")
    top = ops.reduce_max(ops.exp(x), ops.constant(AXIS), True)
    ov.save_model(ov.Model([top], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.array([[1, 2, 3, 100, 0, 0, 0, 0]], np.float32)
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(np.float32(100)))
    row = _target_row(tmp_path / "m.xml", data, "f32", target)
    assert row["status"] == "not-established" and "not finite in the f32 run" in row["message"], row
    assert not row["failed"]
    # a value only the target cannot hold is still its overflow
    row = _target_row(tmp_path / "m.xml", np.array([[1, 2, 3, 80, 0, 0, 0, 0]], np.float32), "f32", target)
    # (bf16 holds exp(80); a CPU that runs bf16 natively executes this chain in f32: protected)
    assert row["status"] in (("overflow",) if target == "f16" else ("headroom", "protected")), row


@pytest.mark.parametrize("made", ["select", "broadcast", "constant"])
def test_a_mask_moved_from_constants_saturates_as_openvino_converts_it(tmp_path: Path, made: str) -> None:
    """An attention mask of float32's lowest, as torch.where(keep, 0, finfo.min) exports it (a Select of Constants), a
    Broadcast of one, or the Constant itself, added to scores, then a row max with one row fully masked: OpenVINO's
    f16 conversion (ConvertFP32ToFP16) saturates the Constants to f16's lowest, so every row max is finite. The
    Select's output was rounded to -inf (a false overflow), and the fully masked row's max, f16's lowest against
    float32's, was called inaccurate: it is the conversion's, not judged."""
    lowest = np.finfo(np.float32).min
    scores = ops.parameter([2, 8], np.float32, name="x")
    keep = ops.parameter([2, 8], ov.Type.boolean, name="keep")
    kept = np.ones((2, 8), bool)
    kept[1, :] = False
    mask = {
        "select": lambda: ops.select(keep, ops.constant(np.float32(0)), ops.constant(lowest)),
        "broadcast": lambda: ops.select(keep, ops.constant(np.float32(0)),
                                        ops.broadcast(ops.constant(np.float32(lowest)), ops.constant([2, 8]))),
        "constant": lambda: ops.constant(np.where(kept, 0, lowest).astype(np.float32)),
    }[made]()  # fmt: skip
    top = ops.reduce_max(ops.add(scores, mask), ops.constant(AXIS), True)
    params = [scores, keep] if made != "constant" else [scores]
    ov.save_model(ov.Model([top], params), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    feeds = {"x": data, "keep": kept} if made != "constant" else {"x": data}
    converted = ov.Core().read_model(tmp_path / "m.xml")
    manager = ov.passes.Manager()
    manager.register_pass(ov.passes.ConvertFP32ToFP16())
    manager.run_passes(converted)
    device = ov.Core().compile_model(converted, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    assert np.isfinite(device({**feeds, "x": data.astype(np.float16)})[0]).all()  # OpenVINO's f16 model
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs=feeds, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer.get("target"))
    assert row["status"] == "headroom" and not row["failed"], row
    assert "saturate" in row["message"] and "not judged" in row["message"], row


def _f16_mean_of_squares(data: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """OpenVINO's own f16 result of ``ReduceMean(Power(x, 2))`` over the last axis (``Node.evaluate`` in f16)."""
    x = ops.parameter(list(data.shape), ov.Type.f16)
    square = ops.power(x, ops.constant(np.float16(2)))
    mean = ops.reduce_mean(square, ops.constant(np.array([-1], np.int64)), True)

    def evaluate(node: Any, inputs: list[ov.Tensor]) -> ov.Tensor:
        out = ov.Tensor(node.get_output_element_type(0), node.get_output_partial_shape(0).to_shape())
        assert node.evaluate([out], inputs)
        return out

    middle = evaluate(square, [ov.Tensor(data.astype(np.float16)), ov.Tensor(np.array(2, np.float16))])
    out = evaluate(mean, [middle, ov.Tensor(np.array([-1], np.int64))])
    return np.asarray(out.data).astype(np.float64)


def _mean_of_squares(tmp_path: Path, eps: float | np.ndarray[Any, Any] | None) -> Path:
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    node = ops.reduce_mean(ops.power(x, ops.constant(np.float32(2))), ops.constant(np.array([-1], np.int64)), True)
    if eps is not None:  # an RMSNorm's mean(x²) + eps, then its rsqrt
        node = ops.sqrt(ops.add(node, ops.constant(np.asarray(eps, np.float32))))
    ov.save_model(ov.Model([node], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    return tmp_path / "m.xml"


def test_outputs_that_all_flush_to_zero_are_inaccurate_not_within_the_absolute_tolerance(tmp_path: Path) -> None:
    """x ~ 2e-5 squares to ~4e-10, below f16's smallest subnormal: OpenVINO's f16 evaluation gives every mean as 0. The
    f16 atol (1e-3) is a million times each output, so it would pass zeros: the row is judged relatively, and the
    values lost fail it, the count of outputs flushed to 0 said."""
    data = (np.random.default_rng(0).standard_normal((1, 8, 64)) * 2e-5).astype(np.float32)
    reference = np.mean(data.astype(np.float64) ** 2, axis=-1, keepdims=True)
    assert (_f16_mean_of_squares(data) == 0).all() and (reference > 0).all()
    row = _target_row(_mean_of_squares(tmp_path, None), data, "f32", "f16")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert "8 of its 8 output element(s) flush to 0 in f16" in row["message"], row
    assert row["atol"] == 0.0 and row["max_rel_error"] == 1.0, row


@pytest.mark.parametrize("wide", [False, True])
def test_outputs_flushed_to_zero_that_an_eps_after_them_outweighs_are_within_tolerance(
    tmp_path: Path, wide: bool
) -> None:
    """The same means followed by ``+ 1e-6`` (an RMSNorm's eps; or one per channel, which the Add broadcasts the means
    to): OpenVINO's f16 zeros plus eps are within f16's rtol of the reference's means plus eps, so the loss does not
    show in what the model computes next: headroom, the row saying what it was judged against and what flushed."""
    data = (np.random.default_rng(0).standard_normal((1, 8, 64)) * 2e-5).astype(np.float32)
    reference = np.mean(data.astype(np.float64) ** 2, axis=-1, keepdims=True)
    eps = np.full((1, 1, 64), 1e-6, np.float32) if wide else 1e-6
    row = _target_row(_mean_of_squares(tmp_path, eps), data, "f32", "f16")
    assert np.all(np.abs(_f16_mean_of_squares(data) - reference) <= row["rtol"] * (reference + 1e-6))
    assert row["status"] == "headroom", row
    assert "plus the 1e-06 Add" in row["message"] and "8 of its 8 output element(s) flush to 0" in row["message"], row


def test_subnormal_outputs_off_relatively_with_nothing_after_them_are_not_established(tmp_path: Path) -> None:
    """x in [4e-4, 6e-4] squares to ~2.5e-7, which f16 holds as a subnormal (steps of 6e-8): no mean flushes to 0 in
    OpenVINO's f16 evaluation, but it is off by more than the rtol relative to the means, all far below the atol:
    whether that matters depends on what the model adds to them, which nothing says: not established, not a pass."""
    data = np.random.default_rng(2).uniform(4e-4, 6e-4, (1, 8, 64)).astype(np.float32)
    reference = np.mean(data.astype(np.float64) ** 2, axis=-1, keepdims=True)
    f16 = _f16_mean_of_squares(data)
    row = _target_row(_mean_of_squares(tmp_path, None), data, "f32", "f16")
    assert (f16 != 0).all() and np.max(np.abs(f16 - reference) / reference) > row["rtol"]
    assert row["status"] == "not-established" and not row["failed"], row
    assert "judged relative to them" in row["message"] and "no output flushing to 0" in row["message"], row


def test_normal_outputs_below_the_absolute_tolerance_are_judged_relatively(tmp_path: Path) -> None:
    """Means of ~4e-4 (x ~ 0.02) are below f16's atol but normal in f16: relative to them OpenVINO's f16 result is
    within the rtol, and the row passes, saying it was judged relatively."""
    data = np.random.default_rng(3).uniform(0.015, 0.025, (1, 8, 64)).astype(np.float32)
    reference = np.mean(data.astype(np.float64) ** 2, axis=-1, keepdims=True)
    row = _target_row(_mean_of_squares(tmp_path, None), data, "f32", "f16")
    assert np.max(np.abs(_f16_mean_of_squares(data) - reference) / reference) <= row["rtol"]
    assert row["status"] == "headroom" and "judged relative to them" in row["message"], row


def _f16_power_mean(tmp_path: Path, power: bool) -> Path:
    """An IR whose tensors the model declares f16 (as a legacy FP16 IR's are): ``ReduceMean(Power(x, 2))``, or
    ``ReduceMean(Abs(x * x))`` (an Abs feeds the reduction: its chain has no op)."""
    x = ops.parameter([2, 16], ov.Type.f16, name="x")
    fed = ops.power(x, ops.constant(np.float16(2))) if power else ops.abs(ops.multiply(x, x))
    mean = ops.reduce_mean(fed, ops.constant(AXIS), True)
    mean.set_friendly_name("var")
    ov.save_model(ov.Model([ops.sqrt(mean)], [x], "m"), tmp_path / "m.xml", compress_to_fp16=False)
    return tmp_path / "m.xml"


def test_an_f16_models_own_overflow_is_the_f16_targets(tmp_path: Path) -> None:
    """Squares of ~300 pass f16's 65504 in a model declared f16: OpenVINO's f16 evaluation of the Power gives inf,
    while its CPU runs the model in f32 (finite outputs). The capture of the f16-declared Power output is inf, which
    is f16's rounding of it, not the f32 run's: the row is the f16 overflow, not one "in the f32 run already"."""
    path = _f16_power_mean(tmp_path, power=True)
    data = (np.random.default_rng(0).standard_normal((2, 16)) * 100 + 300).astype(np.float16)
    square = ops.power(ops.parameter([2, 16], ov.Type.f16), ops.constant(np.float16(2)))
    out = ov.Tensor(ov.Type.f16, ov.Shape([2, 16]))
    assert square.evaluate([out], [ov.Tensor(data), ov.Tensor(np.array(2, np.float16))])
    assert not np.isfinite(np.asarray(out.data)).all()  # OpenVINO's own f16 Power overflows
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    assert np.isfinite(compiled(data)[0]).all()  # its f32 run does not
    doc = audit_model(load_ir(path), precision="f32", inputs={"x": data}, target="f16").to_json()
    row = next(row for row in doc["layers"] if row.get("target"))
    assert row["target"]["status"] == "overflow" and "f32 run already" not in row["target"]["message"], row
    # the reduction OpenVINO ran received finite f32 values: its own row is judged on them, not on f16 infs
    assert row["status"] == "ok" and row["not_established"] is None, row


def test_an_f16_capture_holds_what_the_f32_run_computed(tmp_path: Path) -> None:
    """A reduction of an f16-declared tensor that no chain op feeds (an Abs of a product) past f16's range: OpenVINO's
    f32 run holds 90,000, and the audit captures it so (widened to f32, not rounded to the declared f16's inf): the
    row is the f16 overflow of the reduction's input, and the reduction's own row is judged on finite values."""
    path = _f16_power_mean(tmp_path, power=False)
    data = np.random.default_rng(1).uniform(290, 310, (2, 16)).astype(np.float16)  # ~90,000: inf in f16, not f32
    doc = audit_model(load_ir(path), precision="f32", inputs={"x": data}, target="f16").to_json()
    row = next(row for row in doc["layers"] if row.get("target"))
    assert row["target"]["status"] == "overflow" and "f32 run already" not in row["target"]["message"], row
    assert row["status"] == "ok" and row["not_established"] is None, row


def test_a_bf16_target_from_a_bf16_capture_is_not_established(tmp_path: Path) -> None:
    """bf16 rounds each Exp input after the MatMul down by ~0.11, so each exponential is ~11% low, as OpenVINO's own
    bf16 run of the model shows. Captured from a bf16 run those inputs are bf16 values already: neither the emulation
    nor the chain rebuilt on the device from them sees the rounding. From an f32 capture the row is inaccurate; from a
    bf16 one it is not established, never headroom."""
    support = precision_support("CPU")
    if support is None or support[1].get("bf16") != "bf16":
        pytest.skip("this CPU runs no bf16 natively: a default-precision run captures in f32")
    n = 16
    x = ops.parameter([2, n], np.float32, name="x")
    mixed = ops.matmul(x, ops.constant(np.eye(n, dtype=np.float32)), False, False)
    total = ops.reduce_sum(ops.exp(mixed), ops.constant(AXIS), True)
    out = ops.matmul(total, ops.constant(np.ones((1, 4), np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.stack([40 + 0.25 * np.arange(n) + 0.11, 20 + 0.125 * np.arange(n) + 0.055]).astype(np.float32)
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    exact = np.exp(data.astype(np.float64)).sum(-1)
    assert np.max(np.abs(compiled(data)[0][:, 0] - exact) / exact) > 0.05  # OpenVINO's bf16 run is that far off
    assert _target_row(tmp_path / "m.xml", data, "f32", "bf16")["status"] == "inaccurate"
    for precision in ("default", "bf16"):
        row = _target_row(tmp_path / "m.xml", data, precision, "bf16")
        assert row["status"] == "not-established" and "precision f32" in row["message"], (precision, row)


def _evaluated(node: Any, inputs: list[np.ndarray[Any, Any]], shape: list[int]) -> np.ndarray[Any, Any]:
    """OpenVINO's own f16 evaluation of ``node`` (``Node.evaluate``) on ``inputs``."""
    out = ov.Tensor(ov.Type.f16, ov.Shape(shape))
    assert node.evaluate([out], [ov.Tensor(np.ascontiguousarray(t)) for t in inputs])
    return np.array(out.data, copy=True)


def test_a_difference_that_cancels_above_the_chain_is_judged(tmp_path: Path) -> None:
    """``ReduceSum((a - b) ** 2)`` of a and b near 1000 that differ by about 0.05: f16's step at 1000 is 0.5, so the f16
    Subtract above the chain cancels, and OpenVINO's own f16 evaluation of the ops is several times off. The chain
    received the captured f32 difference rounded to f16, as if the Subtract had computed it exactly: `headroom`."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
    total = ops.reduce_sum(ops.power(ops.subtract(a, b), ops.constant(np.float32(2))), ops.constant(AXIS), False)
    ov.save_model(ov.Model([total], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)

    def f16() -> Any:
        return ops.parameter([2, 64], ov.Type.f16)

    diff = _evaluated(ops.subtract(f16(), f16()), [av.astype(np.float16), bv.astype(np.float16)], [2, 64])
    square = _evaluated(ops.power(f16(), ops.constant(np.float16(2))), [diff, np.array(2, np.float16)], [2, 64])
    summed = _evaluated(ops.reduce_sum(f16(), ops.constant(AXIS), False), [square, AXIS], [2]).astype(np.float64)
    exact = ((av.astype(np.float64) - bv) ** 2).sum(-1)
    assert np.max(np.abs(summed - exact) / exact) > 0.5  # OpenVINO's f16 result is that far off
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(row["target"] for row in doc["layers"] if row.get("target"))
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["max_rel_error"] > 0.5, row


def test_values_above_the_chain_that_f16_holds_as_captured_keep_the_chain_as_it_was(tmp_path: Path) -> None:
    """The same squared distance of values that do not cancel (a and b apart by about 100): what the Subtract delivers
    in f16 is its captured difference rounded, and the row has headroom, as OpenVINO's f16 evaluation agrees."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
    total = ops.reduce_sum(ops.power(ops.subtract(a, b), ops.constant(np.float32(2))), ops.constant(AXIS), False)
    ov.save_model(ov.Model([total], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    rng = np.random.default_rng(0)
    av = rng.uniform(-2, 2, (2, 64)).astype(np.float32)
    bv = rng.uniform(-2, 2, (2, 64)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(row["target"] for row in doc["layers"] if row.get("target"))
    assert row["status"] == "headroom", row


@pytest.mark.parametrize("n", [16, 4096])
def test_a_chains_tolerance_does_not_grow_with_the_elements_it_sums(tmp_path: Path, n: int) -> None:
    """Exp of values bf16 rounds down by ~0.11 is ~11% low however many are summed (OpenVINO's own bf16 evaluation of
    the Exp says so): the emulation accumulates exactly, so its error does not grow with n, and the tolerance it is
    judged at does not either (bf16's rtol grown with 4,096 elements, 0.5, passed it)."""
    x = ops.parameter([2, n], np.float32, name="x")
    mixed = ops.matmul(x, ops.constant(np.eye(n, dtype=np.float32)), False, False)  # a bf16 CPU rounds x here
    total = ops.reduce_sum(ops.exp(mixed), ops.constant(AXIS), True)
    out = ops.matmul(total, ops.constant(np.ones((1, 4), np.float32)), False, False)  # (a bf16 CPU: its chain in bf16)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    base = np.float32(40.0) + np.float32(0.25) * (np.arange(n) % 16).astype(np.float32)
    data = np.stack([base + np.float32(0.11), base / 2 + np.float32(0.055)]).astype(np.float32)
    exp = ops.exp(ops.parameter([2, n], ov.Type.bf16))
    out = ov.Tensor(ov.Type.bf16, ov.Shape([2, n]))
    assert exp.evaluate([out], [_bf16_tensor(data)])
    own = np.array(out.data).view(np.uint16).view(TYPES["bf16"]).astype(np.float64)
    exact = np.exp(data.astype(np.float64))
    assert np.max(np.abs(own.sum(-1) - exact.sum(-1)) / exact.sum(-1)) > 0.05  # OpenVINO's bf16 Exp: that far off
    row = _target_row(tmp_path / "m.xml", data, "f32", "bf16")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["rtol"] == tolerances("bf16", None, 1, 1)[1], row


def _bf16_tensor(data: np.ndarray[Any, Any]) -> ov.Tensor:
    tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(data.shape)))
    np.copyto(np.asarray(tensor.data).view(np.uint16), data.astype(TYPES["bf16"]).view(np.uint16))
    return tensor


def _small_divisors() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Ratios near 45 whose first row divides by about 1e-8, which f16 flushes to 0."""
    rng = np.random.default_rng(0)
    y = (1e-8 * (1 + rng.random((2, 8)))).astype(np.float32)
    x = (y * (40 + rng.random((2, 8)) * 10)).astype(np.float32)
    y[1] = 1e-2 * (1 + rng.random(8))
    x[1] = y[1] * (40 + rng.random(8) * 10)
    return x, y


def _f16_ratio(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    def f16() -> Any:
        return ops.parameter(list(x.shape), ov.Type.f16)

    return _evaluated(ops.divide(f16(), f16()), [x.astype(np.float16), y.astype(np.float16)], list(x.shape))


@pytest.mark.parametrize("above", [False, True])
def test_an_inf_from_a_divisor_flushed_to_zero_is_placed_at_the_divide(tmp_path: Path, above: bool) -> None:
    """``x / y`` with y near 1e-8: f16 holds y as 0, so the quotient is inf, as OpenVINO's own f16 Divide gives, though
    no value comes near 65504. As the chain's op (then a ReduceSum) or above it (then a Power and a ReduceMean) the
    overflow is the Divide's, counted there, and no comparison with the maximum is claimed."""
    x, y = _small_divisors()
    assert not np.isfinite(_f16_ratio(x, y)[0]).all() and np.isfinite(_f16_ratio(x, y)[1]).all()
    a, b = ops.parameter([2, 8], np.float32, name="x"), ops.parameter([2, 8], np.float32, name="y")
    ratio = ops.divide(a, b, name="ratio")
    fed = ops.power(ratio, ops.constant(np.float32(2))) if above else ratio
    reduced = (ops.reduce_mean if above else ops.reduce_sum)(fed, ops.constant(AXIS), False)
    ov.save_model(ov.Model([reduced], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": x, "y": y}, target="f16").to_json()
    row = next(row["target"] for row in doc["layers"] if row.get("target"))
    assert row["status"] == "overflow" and row["failed"], row
    assert row["message"].startswith("Divide 'ratio'") and "> 65504" not in row["message"], row
    assert "flush to 0" in row["message"] and row["overflowed"] > 0, row


@pytest.mark.parametrize("fill", [-1e9, float(np.finfo(np.float32).min)])
def test_a_max_over_a_fill_it_passes_over_gives_the_headroom_of_what_decides_it(tmp_path: Path, fill: float) -> None:
    """A masked max pooling (``Select(mask, x, -1e9) -> ReduceMax`` over tokens, two of eight padded): the fill is -inf
    (or saturates) in f16 and decides no output. The row has headroom, and its figures are those of the values that
    decide the outputs, not a factor below 1 from the fill."""
    x = ops.parameter([1, 8, 16], np.float32, name="x")
    mask = np.ones((1, 8, 1), bool)
    mask[:, 6:] = False
    pooled = ops.reduce_max(ops.select(ops.constant(mask), x, ops.constant(np.float32(fill))),
                            ops.constant(AXIS), False)  # fmt: skip
    ov.save_model(ov.Model([pooled], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).standard_normal((1, 8, 16)).astype(np.float32)
    row = _target_row(tmp_path / "m.xml", data, "f32", "f16")
    assert row["status"] == "headroom", row
    assert row["headroom"] is not None and row["headroom"] > 1, row
    assert row["largest"] == pytest.approx(float(np.max(np.abs(data[:, :6].max(axis=1)))), rel=1e-6), row


def _marked_square_mean(tmp_path: Path, value: str) -> Path:
    """``MatMul -> Power(., 2) -> ReduceMean -> MatMul`` whose Power and ReduceMean carry ``DisablePrecisionConversion``
    with ``value`` (the conversions it disables), as an IR writes it."""
    x = ops.parameter([2, 16], np.float32, name="x")
    mixed = ops.matmul(x, ops.constant(np.eye(16, dtype=np.float32)), False, False)
    square = ops.power(mixed, ops.constant(np.float32(2)), name="sq")
    mean = ops.reduce_mean(square, ops.constant(AXIS), True, name="var")
    out = ops.matmul(mean, ops.constant(np.ones((1, 4), np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    text = (tmp_path / "m.xml").read_text()
    for name in ("sq", "var"):
        text = re.sub(rf'(<layer id="\d+" name="{name}" type="\w+" version="opset1">\s*(<data [^>]*/>)?)',
                      lambda m: m.group(1) + f'<rt_info><attribute name="DisablePrecisionConversion" version="0" '
                      f'value="{value}" /></rt_info>', text)  # fmt: skip
    (tmp_path / "m.xml").write_text(text)
    return tmp_path / "m.xml"


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("dynamic:f16", "protected"),
        ("f32:i8", "overflow"),
        ("dynamic:bf16,f16", "protected"),
        ("dynamic:dynamic", "protected"),
        ("f32:i8;dynamic:f16", "protected"),
        ("dynamic:bf16", "overflow"),
    ],
)
def test_a_precision_mark_protects_only_where_it_disables_the_conversion(
    tmp_path: Path, value: str, status: str
) -> None:
    """OpenVINO honours what a ``DisablePrecisionConversion`` disables: a CPU running bf16 natively keeps the chain
    marked ``dynamic:f16`` (the legacy ``precise``) in f32, and runs the one marked ``f32:i8`` in bf16. Only the first
    protects the chain; the second's squares of ~300 overflow f16. A mark of several to-types (``dynamic:bf16,f16``:
    entries joined by ';', their to-types by ',') or of ``dynamic`` (any type) disables f16 too, as OpenVINO's
    execution graph shows."""
    path = _marked_square_mean(tmp_path, value)
    support = precision_support("CPU")
    if support is not None and support[1].get("bf16") == "bf16":
        compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        runs = {op.get_friendly_name(): op.get_rt_info()["runtimePrecision"].astype(str)
                for op in compiled.get_runtime_model().get_ordered_ops()}  # fmt: skip
        assert runs["var"] == ("f32" if status == "protected" else "bf16"), runs
    # squares of 300 overflow f16; their means (one such value among 16 near 100) do not, so what the kept mean hands
    # the unmarked MatMul after it holds in f16
    data = (np.random.default_rng(0).standard_normal((2, 16)) * 10 + 100).astype(np.float32)
    data[:, 0] = 300
    row = _target_row(path, data, "f32", "f16")
    assert row["status"] == status, row


def test_a_difference_bf16_cancels_above_the_chain_is_not_confirmed_by_the_rebuilt_chain(tmp_path: Path) -> None:
    """``MatMul(a) - MatMul(b)``, squared and summed, of a and b near 1000 that differ by 0.05: bf16's step there is 4,
    and OpenVINO's own bf16 compile of the model is many times off. The Subtract is above the chain: emulated in bf16,
    the row is inaccurate, and the chain rebuilt on the device from the captured difference confirms nothing."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")

    def eye() -> Any:
        return ops.constant(np.eye(64, dtype=np.float32))

    diff = ops.subtract(ops.matmul(a, eye(), False, False), ops.matmul(b, eye(), False, False))
    total = ops.reduce_sum(ops.power(diff, ops.constant(np.float32(2))), ops.constant(AXIS), True)
    out = ops.matmul(total, ops.constant(np.ones((1, 4), np.float32)), False, False)
    ov.save_model(ov.Model([out], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    support = precision_support("CPU")
    if support is not None and support[1].get("bf16") == "bf16":
        compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        exact = ((av.astype(np.float64) - bv) ** 2).sum(-1)
        assert np.max(np.abs(compiled([av, bv])[0][:, 0] - exact) / exact) > 1  # OpenVINO's bf16 run: that far off
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="bf16").to_json()
    row = next(row["target"] for row in doc["layers"] if row.get("target"))
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["device_agrees"] is not True, row


def _save_if_of_a_reduced_square(path: Path, reduce: Any, square: str, reduced: str, other: str) -> None:
    """At ``path``: an If on the boolean ``c`` whose then body reduces ``Power(x, 2)`` (named ``square``) with
    ``reduce`` (named ``reduced``) over the last axis of x ([2, 16] f32), and whose else body takes x's ReduceMax
    (``other``)."""
    x = ops.parameter([2, 16], np.float32, name="x")
    cond = ops.parameter([], ov.Type.boolean, name="c")
    inner = ops.parameter([2, 16], np.float32)
    squared = ops.power(inner, ops.constant(np.float32(2)), name=square)
    then_body = ov.Model([ops.result(reduce(squared, ops.constant(AXIS), True, name=reduced))], [inner])
    given = ops.parameter([2, 16], np.float32)
    else_body = ov.Model([ops.result(ops.reduce_max(given, ops.constant(AXIS), True, name=other))], [given])
    branch = ops.if_op(cond)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(x.output(0), inner, given)
    out = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    ov.save_model(ov.Model([out], [x, cond]), path, compress_to_fp16=False)


def test_a_reduction_in_the_body_an_if_took_is_judged_for_the_target(tmp_path: Path) -> None:
    """An If whose then body holds ``Power(x, 2) -> ReduceMean`` of x near 300 (squares past 65504, as OpenVINO's f16
    Power gives inf): the body the condition took is audited, run alone on what the If gave it, and its chain is judged
    for f16 as a top-level one is: the overflow, not "not examined". The body not taken stays not examined."""
    _save_if_of_a_reduced_square(tmp_path / "m.xml", ops.reduce_mean, "body/sq", "body/var", "else/max")
    data = (np.random.default_rng(0).standard_normal((2, 16)) * 100 + 300).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data, "c": np.array(True)},
                      target="f16").to_json()  # fmt: skip
    rows = {row["layer_name"]: row["target"] for row in doc["layers"]}
    assert rows["body/var"]["status"] == "overflow" and "then body" in rows["body/var"]["message"], rows
    assert rows["else/max"]["status"] == "not-established", rows


def test_a_variance_of_features_near_their_mean_is_not_passed_in_bf16(tmp_path: Path) -> None:
    """A variance as torch exports it (``x - mean`` then ``Multiply(d, d)`` then ReduceMean) of features of mean 1 and
    spread 1%: bf16 (step 2^-7 near 1) cancels the difference, as OpenVINO's own bf16 compile of the model shows (the
    variance far off its f32 one). The Subtract above the chain is emulated in bf16: the row is not headroom."""
    rng = np.random.default_rng(0)
    h = ops.parameter([1, 64, 32], np.float32, name="h")
    weights = np.eye(32, dtype=np.float32) + 0.001 * rng.standard_normal((32, 32)).astype(np.float32)
    x = ops.matmul(h, ops.constant(weights), False, False)
    mean = ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), True)
    d = ops.subtract(x, mean)
    var = ops.reduce_mean(ops.multiply(d, d), ops.constant(np.array([1], np.int64)), False, name="var")
    out = ops.matmul(ops.sqrt(var), ops.constant(rng.standard_normal((32, 8)).astype(np.float32)), False, False)
    ov.save_model(ov.Model([out], [h]), tmp_path / "m.xml", compress_to_fp16=False)
    data = (1.0 + 0.01 * rng.standard_normal((1, 64, 32))).astype(np.float32)
    support = precision_support("CPU")
    if support is not None and support[1].get("bf16") == "bf16":
        both = ov.Model([ops.result(var)], [h])
        f32, bf16 = (ov.Core().compile_model(both, "CPU", {"INFERENCE_PRECISION_HINT": hint})(data)[0]
                     for hint in ("f32", "bf16"))  # fmt: skip
        assert np.abs(bf16 - f32).max() / np.abs(f32).max() > 0.0625  # OpenVINO's bf16 variance: that far off
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"h": data}, target="bf16").to_json()
    row = next(row["target"] for row in doc["layers"] if row["layer_name"] == "var")
    assert row["status"] in ("inaccurate", "not-established"), row


def _moved_difference(move: str, etype: Any) -> ov.Model:
    """``Subtract(a, b) -> <move> -> Power(., 2) -> ReduceSum`` of ``etype``: the difference split into heads (a
    Reshape), reordered (a Transpose) or joined to itself (a Concat) before it is squared, as multi-head code does."""
    a, b = (ops.parameter([2, 64], etype, name=name) for name in "ab")
    diff = ops.subtract(a, b, name="diff")
    moved = {
        "Reshape": lambda: ops.reshape(diff, ops.constant(np.int64([2, 8, 8])), False),
        "Transpose": lambda: ops.transpose(
            ops.reshape(diff, ops.constant(np.int64([2, 8, 8])), False), ops.constant(np.int64([0, 2, 1]))
        ),
        "Concat": lambda: ops.concat([diff, diff], 1),
        "Pad": lambda: ops.pad(
            diff,
            ops.constant(np.int64([0, 1])),
            ops.constant(np.int64([0, 1])),
            "constant",
            ops.constant(np.asarray(0, dtype=etype)),
        ),
        "DepthToSpace": lambda: ops.reshape(
            ops.depth_to_space(
                ops.reshape(diff, ops.constant(np.int64([2, 16, 2, 2])), False),
                "blocks_first",
                2,
            ),
            ops.constant(np.int64([2, 8, 8])),
            False,
        ),
    }[move]()
    square = ops.power(moved, ops.constant(np.asarray(2, dtype=etype)))
    axes = ops.constant(np.arange(1, len(moved.get_output_partial_shape(0)), dtype=np.int64))
    return ov.Model([ops.reduce_sum(square, axes, False, name="dist2")], [a, b])


@pytest.mark.parametrize("move", ["Reshape", "Transpose", "Concat", "Pad", "DepthToSpace"])
def test_a_difference_that_cancels_above_ops_that_move_it_is_judged(tmp_path: Path, move: str) -> None:
    """The squared distance of a and b near 1000 that differ by about 0.05, the difference moved before the square:
    f16's Subtract cancels, and OpenVINO's own f16 evaluation of the model is several times off. A Reshape, a Transpose,
    a Concat, a zero Pad or a DepthToSpace changes no value: the walk above the chain goes through it to the
    Subtract, which is emulated."""
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    ov.save_model(_moved_difference(move, np.float32), tmp_path / "m.xml", compress_to_fp16=False)
    out = [ov.Tensor(ov.Type.f16, ov.Shape([2]))]
    assert _moved_difference(move, np.float16).evaluate(
        out, [ov.Tensor(av.astype(np.float16)), ov.Tensor(bv.astype(np.float16))]
    )
    exact = ((av.astype(np.float64) - bv) ** 2).sum(-1) * (2 if move == "Concat" else 1)
    assert np.max(np.abs(out[0].data.astype(np.float64) - exact) / exact) > 1  # OpenVINO's f16 result: that far off
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "dist2")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert "Subtract" in [stage["op"] for stage in row["above"]], row
    assert row["max_rel_error"] > 1, row


def _matmul_sum(tmp_path: Path, op: str) -> Path:
    """``ReduceSum((MatMul(a) <op> MatMul(b)) * 0.5)``, then a MatMul (so that a bf16 CPU runs the chain in bf16): the
    ``<op>`` above the chain's Multiply."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")

    def eye() -> Any:
        return ops.constant(np.eye(64, dtype=np.float32))

    combined = getattr(ops, op)(ops.matmul(a, eye(), False, False), ops.matmul(b, eye(), False, False))
    half = ops.multiply(combined, ops.constant(np.float32(0.5)))
    total = ops.reduce_sum(half, ops.constant(AXIS), True, name="total")
    out = ops.matmul(total, ops.constant(np.ones((1, 4), np.float32)), False, False)
    ov.save_model(ov.Model([out], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    return tmp_path / "m.xml"


@pytest.mark.parametrize("op", ["subtract", "add"])
def test_a_bf16_capture_bounds_the_rounding_the_ops_above_the_chain_carry(tmp_path: Path, op: str) -> None:
    """The sum of differences of MatMul outputs near 1000 that differ by about 0.05, audited at a bf16 CPU's default
    precision for bf16: the capture holds the bf16 run's differences, so the emulation, the chain's run on the device
    and the capture agree. bf16's rounding of the MatMul outputs (step 4) is the whole difference, as OpenVINO's own
    bf16 run of the model shows (many times off): the bound on what the capture's rounding costs starts above the
    chain, and the row is not established (audit with --precision f32). A sum of the same values adds that rounding to
    no more than it holds, and the bound passes it, as OpenVINO's bf16 run is within bf16's tolerance."""
    support = precision_support("CPU")
    if support is None or support[1].get("bf16") != "bf16":
        pytest.skip("this CPU runs no bf16 natively: a default-precision run captures in f32")
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    path = _matmul_sum(tmp_path, op)
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    exact = (av.astype(np.float64) + (bv if op == "add" else -bv.astype(np.float64))).sum(-1) / 2
    off = np.max(np.abs(compiled([av, bv])[0][:, 0] - exact) / np.abs(exact))
    assert (off < 0.01) if op == "add" else (off > 1), off  # OpenVINO's own bf16 run of the model
    doc = audit_model(load_ir(path), precision="default", inputs={"a": av, "b": bv}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "total")
    if op == "add":
        assert row["status"] == "headroom", row
    else:
        assert row["status"] == "not-established" and "precision f32" in row["message"], row


def _shifted_difference(etype: Any, shifts: int) -> ov.Model:
    """``Subtract(a, b)`` through ``Multiply 2 -> Add 0 -> Maximum -1e4 -> Minimum 1e4`` and ``shifts`` Adds of inputs
    ``z0, z1...`` (zeros), then ``Power 2 -> ReduceSum``, of ``etype``."""

    def constant(value: float) -> Any:
        return ops.constant(np.asarray(value, dtype=etype))

    a, b = (ops.parameter([2, 64], etype, name=name) for name in "ab")
    zeros = [ops.parameter([2, 64], etype, name=f"z{k}") for k in range(shifts)]
    y = ops.subtract(a, b, name="diff")
    y = ops.minimum(ops.maximum(ops.add(ops.multiply(y, constant(2.0)), constant(0.0)), constant(-1e4)), constant(1e4))
    for z in zeros:
        y = ops.add(y, z)
    total = ops.reduce_sum(ops.power(y, constant(2.0)), ops.constant(AXIS), False, name="dist2")
    return ov.Model([total], [a, b, *zeros])


@pytest.mark.parametrize("shifts", [0, 4])
def test_a_difference_that_cancels_ops_above_the_chain_is_judged_or_named(tmp_path: Path, shifts: int) -> None:
    """A cancelling Subtract (a and b near 1000 that differ by about 0.05) four ops of one computed input above the
    chain: OpenVINO's own f16 evaluation of the model is several times off, and the walk above the chain reaches it (a
    Multiply by a Constant, a Maximum with one is no level deeper): `inaccurate`. Four Adds of two computed inputs
    below it put it past the walk's depth: the row names it as not followed, its captured values taken as they are."""
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    zeros = {f"z{k}": np.zeros((2, 64), np.float32) for k in range(shifts)}
    out = [ov.Tensor(ov.Type.f16, ov.Shape([2]))]
    feeds = [ov.Tensor(v.astype(np.float16)) for v in (av, bv, *zeros.values())]
    assert _shifted_difference(np.float16, shifts).evaluate(out, feeds)
    exact = (4 * (av.astype(np.float64) - bv) ** 2).sum(-1)
    assert np.max(np.abs(out[0].data.astype(np.float64) - exact) / exact) > 1  # OpenVINO's f16 result: that far off
    ov.save_model(_shifted_difference(np.float32, shifts), tmp_path / "m.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv, **zeros}, target="f16")
    row = next(layer.target for layer in doc.layers if layer.layer_name == "dist2")
    assert row is not None
    if shifts:
        assert "Subtract 'diff' (layer " in row.message and "is not followed" in row.message, row
    else:
        assert row.status == "inaccurate" and row.failed, row


def test_a_sum_of_terms_of_one_sign_is_judged_at_the_types_rtol(tmp_path: Path) -> None:
    """``ReduceSum(Exp(x))`` of x in [4, 6) 0.4 of f16's step above a value it holds: f16 rounds each down by that much,
    so each exponential is about 0.16% low, as OpenVINO's own f16 evaluation of the ops gives. A sum of terms of one
    sign adds no more than it holds: it is judged at f16's rtol (0.001), not twice it, and the row is `inaccurate`."""
    step = 2.0**-8  # f16's step in [4, 8)
    data = (4 + (np.arange(128).reshape(2, 64) * 2 + 0.4) * step).astype(np.float32)
    x = ops.parameter([2, 64], np.float32, name="x")
    total = ops.reduce_sum(ops.exp(x), ops.constant(AXIS), False, name="total")
    ov.save_model(ov.Model([total], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    exp = _evaluated(ops.exp(ops.parameter([2, 64], ov.Type.f16)), [data.astype(np.float16)], [2, 64])
    summed = _evaluated(
        ops.reduce_sum(ops.parameter([2, 64], ov.Type.f16), ops.constant(AXIS), False), [exp, AXIS], [2]
    )
    exact = np.exp(data.astype(np.float64)).sum(-1)
    off = np.max(np.abs(summed.astype(np.float64) - exact) / exact)
    assert 0.001 < off < 0.002, off  # OpenVINO's own f16 result: past f16's rtol, within twice it
    row = _target_row(tmp_path / "m.xml", data, "f32", "f16")
    assert row["rtol"] == 0.001 and row["max_rel_error"] > row["rtol"], row
    assert row["status"] == "inaccurate" and row["failed"], row


def test_a_body_input_an_outer_op_computed_is_not_taken_as_given(tmp_path: Path) -> None:
    """``MatMul -> If(then: Exp -> ReduceSum) -> MatMul``, the MatMul output near 40.1: bf16 rounds each value by up to
    0.125, and OpenVINO's own bf16 run of the model is past bf16's tolerance. At a bf16 CPU's default precision the body
    receives the outer MatMul's output rounded already, which no emulation of the body sees: the row is not established
    (audit with --precision f32), as the same chain at the top level is; a body's input is no input of the model."""
    support = precision_support("CPU")
    if support is None or support[1].get("bf16") != "bf16":
        pytest.skip("this CPU runs no bf16 natively: a default-precision run captures in f32")
    x = ops.parameter([2, 16], np.float32, name="x")
    cond = ops.parameter([], ov.Type.boolean, name="c")
    h = ops.matmul(x, ops.constant(np.eye(16, dtype=np.float32)), False, False)
    inner = ops.parameter([2, 16], np.float32)
    then_sum = ops.reduce_sum(ops.exp(inner), ops.constant(AXIS), True, name="then_sum")
    then_body = ov.Model([ops.result(then_sum)], [inner])
    other = ops.parameter([2, 16], np.float32)
    else_body = ov.Model([ops.result(ops.reduce_max(other, ops.constant(AXIS), True))], [other])
    branch = ops.if_op(cond)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(h.output(0), inner, other)
    out = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    y = ops.matmul(out, ops.constant(np.ones((1, 4), np.float32)), False, False)
    ov.save_model(ov.Model([y], [x, cond]), tmp_path / "m.xml", compress_to_fp16=False)
    data = (40 + np.random.default_rng(0).standard_normal((2, 16)) * 0.05 + 0.11).astype(np.float32)
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    exact = np.exp(data.astype(np.float64)).sum(-1)
    assert np.max(np.abs(compiled([data, np.array(True)])[0][:, 0] - exact) / exact) > 0.01  # OpenVINO's bf16 run
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"x": data, "c": np.array(True)}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "then_sum")
    assert row["status"] == "not-established" and "precision f32" in row["message"], row


def _masked_softmax(etype: Any) -> ov.Model:
    """A decomposed softmax over ``scores + Select(keep, 0, lowest)`` (a masked fill as torch exports it), of
    ``etype``."""
    s = ops.parameter([2, 8], etype, name="s")
    keep = ops.parameter([2, 8], ov.Type.boolean, name="keep")
    low = np.finfo(np.float32).min if etype == np.float32 else -65504
    masked = ops.add(s, ops.select(keep, ops.constant(np.array(0, etype)), ops.constant(np.array(low, etype))))
    top = ops.reduce_max(masked, ops.constant(np.int64([-1])), True, name="max")
    e = ops.exp(ops.subtract(masked, top))
    den = ops.reduce_sum(e, ops.constant(np.int64([-1])), True, name="den")
    return ov.Model([ops.divide(e, den)], [s, keep])


def test_a_fully_masked_rows_nan_is_an_overflow_not_a_flush(tmp_path: Path) -> None:
    """One fully masked row of scores near -20: in f16 the mask saturates to -65504, -65504 - 20 rounds to -inf, the
    row's max is -inf and ``x - max`` NaN, as OpenVINO's own f16 evaluation of the model gives. The max is computed from
    the model's inputs, so in f16 it is -inf, not a Constant's saturated value: the denominator's row is the overflow,
    not a flush to 0 brought back into range."""
    scores = np.array([[-20, -25, -30, -22, -21, -24, -26, -23], [1, 2, 3, 4, 5, 6, 7, 8]], np.float32)
    keep = np.array([[False] * 8, [True] * 8])
    out = [ov.Tensor(ov.Type.f16, ov.Shape([2, 8]))]
    assert _masked_softmax(np.float16).evaluate(out, [ov.Tensor(scores.astype(np.float16)), ov.Tensor(keep)])
    assert np.isnan(out[0].data[0]).all() and np.isfinite(out[0].data[1]).all()  # OpenVINO's own f16 result
    ov.save_model(_masked_softmax(np.float32), tmp_path / "m.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"s": scores, "keep": keep}, target="f16")
    row = next(layer.target for layer in doc.layers if layer.layer_name == "den")
    assert row is not None and row.status == "overflow" and row.failed, row
    assert "back into range" not in row.message and "flush" not in row.message, row.message


def test_a_compressed_irs_exponent_is_no_value_of_the_chain(tmp_path: Path) -> None:
    """An RMSNorm saved as ``save_model`` saves by default (``compress_to_fp16``), as optimum-intel exports: its
    exponent 2 is an f16 Constant behind a decompression Convert. It is no value of the chain, as the plain Constant of
    the model saved uncompressed is: both rows give the same largest magnitude (the Power's input), not 4 (2**2)."""
    x = ops.parameter([2, 64], np.float32, name="x")
    h = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32)), False, False)
    mean = ops.reduce_mean(ops.power(h, ops.constant(np.float32(2))), ops.constant(np.int64([-1])), True, name="ms")
    y = ops.multiply(h, ops.power(ops.add(mean, ops.constant(np.float32(1e-6))), ops.constant(np.float32(-0.5))))
    for compressed in (True, False):
        ov.save_model(ov.Model([y], [x]), tmp_path / f"{compressed}.xml", compress_to_fp16=compressed)
    data = (np.random.default_rng(0).standard_normal((2, 64)) * 0.05).astype(np.float32)
    rows = [_target_row(tmp_path / f"{compressed}.xml", data, "f32", "f16") for compressed in (True, False)]
    assert rows[0]["largest"] == rows[1]["largest"] == pytest.approx(float(np.max(np.abs(data))), rel=1e-6), rows
    assert [s["largest"] for s in rows[0]["stages"]] == [s["largest"] for s in rows[1]["stages"]], rows


def test_an_overflow_from_a_flushed_base_does_not_deny_the_values_past_the_maximum(tmp_path: Path) -> None:
    """``Power(x * Power(v, -0.5), 2) -> ReduceMean`` with v = 1e-9 in one row: f16 flushes v to 0, so its rsqrt is
    inf (as OpenVINO's own f16 evaluation gives), and the exact squares reach 1.35e7, past 65504 too. The message names
    the flush and does not say that no value reaches the maximum."""
    x, v = ops.parameter([2, 64], np.float32, name="x"), ops.parameter([2, 1], np.float32, name="v")
    scaled = ops.multiply(x, ops.power(v, ops.constant(np.float32(-0.5))))
    mean = ops.reduce_mean(ops.power(scaled, ops.constant(np.float32(2))), ops.constant(AXIS), True, name="ms")
    ov.save_model(ov.Model([mean], [x, v]), tmp_path / "m.xml", compress_to_fp16=False)
    xv = (np.random.default_rng(0).standard_normal((2, 64)) * 0.05).astype(np.float32)
    vv = np.array([[1e-9], [0.5]], np.float32)
    rsqrt = _evaluated(ops.power(ops.parameter([2, 1], ov.Type.f16), ops.constant(np.float16(-0.5))),
                       [vv.astype(np.float16), np.array(-0.5, np.float16)], [2, 1])  # fmt: skip
    assert np.isinf(rsqrt[0, 0]) and np.isfinite(rsqrt[1, 0])  # OpenVINO's own f16 Power of the flushed base
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": xv, "v": vv}, target="f16")
    row = next(layer.target for layer in doc.layers if layer.layer_name == "ms")
    assert row is not None and row.status == "overflow" and row.largest is not None and row.largest > 65504, row
    assert "no value reaches" not in row.message and "flush to 0" in row.message, row.message
    assert f"reaches {row.largest:.3g} > 65504" in row.message, row.message


def test_an_element_flushed_above_the_chain_is_counted_once(tmp_path: Path) -> None:
    """``ReduceMean(Abs(a * b))`` whose first row's products are near 1e-9, which f16 flushes to 0 (as OpenVINO's own
    f16 Multiply gives), and whose second row's are near 0.01: each flushed element is counted once, at the Multiply
    that loses it, not again at the Abs below it and at the chain's input (three times the elements it holds)."""
    rng = np.random.default_rng(0)
    a = rng.uniform(1, 2, (2, 64)).astype(np.float32)
    b = rng.uniform(1, 2, (2, 64)).astype(np.float32)
    a[0] *= 3e-5
    b[0] *= 3e-5
    a[1] *= 0.1
    b[1] *= 0.1
    pa, pb = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
    mean = ops.reduce_mean(ops.abs(ops.multiply(pa, pb)), ops.constant(AXIS), True, name="mae")
    ov.save_model(ov.Model([mean], [pa, pb]), tmp_path / "m.xml", compress_to_fp16=False)

    def f16() -> Any:
        return ops.parameter([2, 64], ov.Type.f16)

    product = _evaluated(ops.multiply(f16(), f16()), [a.astype(np.float16), b.astype(np.float16)], [2, 64])
    flushed = int(np.count_nonzero(product == 0))  # OpenVINO's own f16 products that come out 0
    assert flushed > 0
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": a, "b": b}, target="f16")
    row = next(layer.target for layer in doc.layers if layer.layer_name == "mae")
    assert row is not None and row.underflowed is not None and row.underflowed <= a.size, row
    assert [stage.underflowed for stage in row.above if stage.op != "Parameter"] == [flushed, 0], row.above
    assert row.stages[0].underflowed == 0, row.stages  # (the chain's input: what arrives as 0 was counted above)


def test_zeros_a_difference_cancels_to_are_no_underflow(tmp_path: Path) -> None:
    """``ReduceSum((a - b) ** 2)`` of a and b near 1000 that differ by 0.01 to 0.15: f16 holds most pairs equal, so
    their difference is 0, as OpenVINO's own f16 Subtract gives, though every exact difference lies far above what f16
    flushes. Those zeros are a cancellation: the row counts none as flushing to 0 and says how many cancel."""
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.uniform(0.01, 0.15, (2, 64))).astype(np.float32)
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
    total = ops.reduce_sum(ops.power(ops.subtract(a, b), ops.constant(np.float32(2))), ops.constant(AXIS), False)
    ov.save_model(ov.Model([total], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)

    def f16() -> Any:
        return ops.parameter([2, 64], ov.Type.f16)

    diff = _evaluated(ops.subtract(f16(), f16()), [av.astype(np.float16), bv.astype(np.float16)], [2, 64])
    zeros = int(np.count_nonzero(diff == 0))  # OpenVINO's own f16 differences that come out 0
    assert zeros > 0
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16")
    row = next(layer.target for layer in doc.layers if layer.target is not None)
    assert row.status == "inaccurate" and row.underflowed == 0, row
    assert f"{zeros} element(s) cancel to 0 in f16" in row.message and "flush to 0" not in row.message, row.message


def _activated_difference(kind: str, etype: Any) -> ov.Model:
    """``Subtract(a, b) -> <kind> -> Power(., 2) -> ReduceSum`` of ``etype``: an activation between the difference and
    the square, an op the emulation leaves to OpenVINO's own evaluation."""
    a, b = (ops.parameter([2, 64], etype, name=name) for name in "ab")
    diff = ops.subtract(a, b, name="diff")
    act = {
        "Gelu": lambda: ops.gelu(diff, "erf"),
        "Erf": lambda: ops.erf(diff),
        "Swish": lambda: ops.swish(diff, ops.constant(np.asarray(1.0, dtype=etype))),
        "Mish": lambda: ops.mish(diff),
    }[kind]()
    square = ops.power(act, ops.constant(np.asarray(2, dtype=etype)))
    return ov.Model([ops.reduce_sum(square, ops.constant(AXIS), False, name="red")], [a, b])


@pytest.mark.parametrize("kind", ["Gelu", "Erf", "Swish", "Mish"])
def test_a_difference_that_cancels_above_an_activation_is_judged(tmp_path: Path, kind: str) -> None:
    """The squared activation of a difference of a and b near 1000 that differ by about 0.05: f16's Subtract cancels,
    and OpenVINO's own f16 evaluation of the model is several times off. The activation between them is computed as
    OpenVINO evaluates it on what the Subtract delivers in f16, not taken from its captured f32 output as if its input
    had arrived exact: the row is as far off as OpenVINO is."""
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    ov.save_model(_activated_difference(kind, np.float32), tmp_path / "m.xml", compress_to_fp16=False)
    out, exact = [ov.Tensor(ov.Type.f16, ov.Shape([2]))], [ov.Tensor(ov.Type.f32, ov.Shape([2]))]
    assert _activated_difference(kind, np.float16).evaluate(
        out, [ov.Tensor(av.astype(np.float16)), ov.Tensor(bv.astype(np.float16))]
    )
    assert _activated_difference(kind, np.float32).evaluate(exact, [ov.Tensor(av), ov.Tensor(bv)])
    reference = exact[0].data.astype(np.float64)
    off = float(np.max(np.abs(out[0].data.astype(np.float64) - reference) / np.abs(reference)))
    assert off > 1  # OpenVINO's f16 result: that far off
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "red")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["max_rel_error"] == pytest.approx(off, rel=0.05), row


def _kept_difference_of_matmuls(tmp_path: Path) -> tuple[Path, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``MatMul(a) - MatMul(b) -> Power(., 2) -> ReduceSum`` of a and b near 1000 that differ by about 0.05, whose
    Subtract, Power and ReduceSum carry ``DisablePrecisionConversion`` ``dynamic:f16`` and whose MatMuls do not."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")

    def eye() -> Any:
        return ops.constant(np.eye(64, dtype=np.float32))

    diff = ops.subtract(ops.matmul(a, eye(), False, False), ops.matmul(b, eye(), False, False), name="diff")
    square = ops.power(diff, ops.constant(np.float32(2)), name="sq")
    total = ops.reduce_sum(square, ops.constant(AXIS), False, name="red")
    ov.save_model(ov.Model([total], [a, b]), tmp_path / "m.xml", compress_to_fp16=False)
    text = (tmp_path / "m.xml").read_text()
    for name in ("diff", "sq", "red"):
        text = re.sub(rf'(<layer id="\d+" name="{name}" type="\w+" version="opset1">\s*(<data [^>]*/>)?)',
                      lambda m: m.group(1) + '<rt_info><attribute name="DisablePrecisionConversion" version="0" '
                      'value="dynamic:f16" /></rt_info>', text)  # fmt: skip
    (tmp_path / "m.xml").write_text(text)
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    return tmp_path / "m.xml", av, (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)


def test_a_kept_chain_above_which_a_kept_op_subtracts_rounded_values_is_not_protected(tmp_path: Path) -> None:
    """The Subtract is kept in f32, but what it subtracts the unmarked MatMuls computed in f16: it receives their
    outputs near 1000 rounded (f16's step there is 0.5), and its difference cancels as OpenVINO's own f16 evaluation
    of the MatMuls' outputs, subtracted in f32, shows. The row is not ``protected``: it is as far off as that."""
    path, av, bv = _kept_difference_of_matmuls(tmp_path)
    exact = ((av.astype(np.float64) - bv) ** 2).sum(-1)
    rounded = [_evaluated(ops.matmul(ops.parameter([2, 64], ov.Type.f16), ops.constant(np.eye(64, dtype=np.float16)),
                                     False, False), [v.astype(np.float16), np.eye(64, dtype=np.float16)], [2, 64])
               for v in (av, bv)]  # fmt: skip
    kept = ((rounded[0].astype(np.float32) - rounded[1].astype(np.float32)).astype(np.float64) ** 2).sum(-1)
    assert np.max(np.abs(kept - exact) / exact) > 1
    doc = audit_model(load_ir(path), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "red")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["max_rel_error"] > 1, row


def _masked_scores_max(etype: Any) -> ov.Model:
    """``ReduceMax(x * 1000 + mask)`` of ``etype``: the max of masked attention scores."""
    x, mask = ops.parameter([2, 8], etype, name="x"), ops.parameter([2, 8], etype, name="mask")
    scores = ops.add(ops.multiply(x, ops.constant(np.asarray(1000, dtype=etype))), mask)
    return ov.Model([ops.reduce_max(scores, ops.constant(AXIS), False, name="top")], [x, mask])


def test_an_inf_the_f32_run_has_in_one_row_does_not_hide_the_targets_overflow_in_another(tmp_path: Path) -> None:
    """Row 0's mask holds -inf (as ``masked_fill(-inf)`` writes it), so the f32 run's input is not finite there; row
    1's scores reach 7.09e4, past f16's 65504, from finite values. OpenVINO's own f16 evaluation makes row 1 inf: that
    output is the target's overflow, whatever the f32 run holds in row 0."""
    x = np.full((2, 8), 60.0, np.float32)
    x[1, 3] = 70.9
    mask = np.zeros((2, 8), np.float32)
    mask[0, 4:] = -np.inf
    out = [ov.Tensor(ov.Type.f16, ov.Shape([2]))]
    assert _masked_scores_max(np.float16).evaluate(out, [ov.Tensor(x.astype(np.float16)), ov.Tensor(mask.astype(
        np.float16))])  # fmt: skip
    f16 = out[0].data.astype(np.float64)
    assert np.isfinite(f16[0]) and not np.isfinite(f16[1]), f16
    ov.save_model(_masked_scores_max(np.float32), tmp_path / "m.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": x, "mask": mask},
                      target="f16").to_json()  # fmt: skip
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "top")
    assert row["status"] == "overflow" and row["failed"], row
    assert "back into range" not in row["message"], row


@pytest.mark.parametrize(("value", "status"), [("f32:i8", "overflow"), ("dynamic:f16", "protected")])
def test_a_precision_mark_in_an_if_body_is_read_as_a_top_level_one(tmp_path: Path, value: str, status: str) -> None:
    """The then body's ``Power(x, 2) -> ReduceSum`` of x near 300 carries ``DisablePrecisionConversion`` ``value``: the
    body's marks are read as the top level's are, so ``f32:i8`` protects nothing from f16 (its squares overflow) and
    ``dynamic:f16`` keeps the chain in f32."""
    _save_if_of_a_reduced_square(tmp_path / "m.xml", ops.reduce_sum, "then_sq", "then_sum", "else_max")
    text = (tmp_path / "m.xml").read_text()
    for name in ("then_sq", "then_sum"):
        text = re.sub(rf'(<layer id="\d+" name="{name}" type="\w+" version="opset1">\s*(<data [^>]*/>)?)',
                      lambda m: m.group(1) + f'<rt_info><attribute name="DisablePrecisionConversion" version="0" '
                      f'value="{value}" /></rt_info>', text)  # fmt: skip
    assert text.count("DisablePrecisionConversion") == 2
    (tmp_path / "m.xml").write_text(text)
    data = (np.random.default_rng(0).standard_normal((2, 16)) * 10 + 300).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data, "c": np.array(True)},
                      target="f16").to_json()  # fmt: skip
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "then_sum")
    assert row["status"] == status, row


def _rms_norm(etype: Any, eps: float) -> ov.Model:
    """``x * 1/Sqrt(ReduceMean(x²) + eps)`` of ``etype``: an RMSNorm, its mean named ``ms`` and its Add ``eps``."""
    x = ops.parameter([2, 64], etype, name="x")
    mean = ops.reduce_mean(ops.power(x, ops.constant(np.asarray(2, etype))), ops.constant(AXIS), True, name="ms")
    shifted = ops.add(mean, ops.constant(np.asarray(eps, etype)), name="eps")
    return ov.Model([ops.multiply(x, ops.divide(ops.constant(np.asarray(1, etype)), ops.sqrt(shifted)))], [x])


@pytest.mark.parametrize(("eps", "status"), [(1e-8, "inaccurate"), (1e-6, "headroom")])
def test_an_eps_the_target_flushes_absorbs_nothing(tmp_path: Path, eps: float, status: str) -> None:
    """An RMSNorm of activations near 1e-6, whose means (~1e-12) flush to 0 in f16. An eps of 1e-8 is below half f16's
    smallest subnormal: OpenVINO converts it to 0, the f16 Add gives 0, and its own f16 evaluation of the norm is inf
    or NaN everywhere. The means are judged against the sum as f16 holds it: lost. An eps of 1e-6, which f16 holds,
    absorbs them, and the norm is finite."""
    data = (np.random.default_rng(0).standard_normal((2, 64)) * 1e-6).astype(np.float32)
    out = [ov.Tensor(ov.Type.f16, ov.Shape([2, 64]))]
    assert _rms_norm(np.float16, eps).evaluate(out, [ov.Tensor(data.astype(np.float16))])
    finite = np.isfinite(out[0].data.astype(np.float64))
    assert finite.all() == (status == "headroom"), finite
    ov.save_model(_rms_norm(np.float32, eps), tmp_path / "m.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "ms")
    assert row["status"] == status, row
    assert ("holds as 0" in row["message"]) == (status == "inaccurate"), row


def test_a_moving_op_openvino_does_not_evaluate_is_named_where_the_walk_stops(tmp_path: Path) -> None:
    """``Subtract -> Roll -> Power(., 2) -> ReduceSum``: a Roll only moves values, but OpenVINO's own evaluation does
    not compute it, so the walk above the chain cannot follow it to the Subtract: the row names it as not followed,
    and says what that hides, rather than ending the walk without a word."""
    a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
    rolled = ops.roll(ops.subtract(a, b), ops.constant(np.int64([3])), ops.constant(np.int64([1])), name="rolled")
    square = ops.power(rolled, ops.constant(np.float32(2)))
    ov.save_model(ov.Model([ops.reduce_sum(square, ops.constant(AXIS), False, name="red")], [a, b]), tmp_path / "m.xml",
                  compress_to_fp16=False)  # fmt: skip
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "red")
    assert "Roll 'rolled'" in row["message"] and "not followed" in row["message"], row


@pytest.mark.parametrize(("marked", "status"), [(("exp", "red"), "overflow"), (("exp", "red", "lse"), "protected")])
def test_a_kept_reductions_result_past_the_range_is_lost_where_an_unkept_op_receives_it(
    tmp_path: Path, marked: tuple[str, ...], status: str
) -> None:
    """Log-sum-exp of x in [10, 12]: the sums reach 4.5e6, past f16's 65504. The Exp and the ReduceSum carry the
    keep-precision mark, so the sum is computed in f32; where the Log does not, OpenVINO's ConvertPrecision puts a
    Convert to f16 between them, and OpenVINO's own Convert of the sums to f16 is inf: an overflow, not ``protected``.
    With the Log marked too, the sum stays in f32 all the way."""
    x = ops.parameter([2, 64], np.float32, name="x")
    total = ops.reduce_sum(ops.exp(x, name="exp"), ops.constant(AXIS), False, name="red")
    ov.save_model(ov.Model([ops.log(total, name="lse")], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    text = (tmp_path / "m.xml").read_text()
    for name in marked:
        text = re.sub(rf'(<layer id="\d+" name="{name}" type="\w+" version="opset\d+">\s*(<data [^>]*/>)?)',
                      lambda m: m.group(1) + '<rt_info><attribute name="DisablePrecisionConversion" version="0" '
                      'value="dynamic:f16" /></rt_info>', text)  # fmt: skip
    assert text.count("DisablePrecisionConversion") == len(marked)
    (tmp_path / "m.xml").write_text(text)
    data = (10 + np.random.default_rng(0).random((2, 64)) * 2).astype(np.float32)
    sums = np.exp(data.astype(np.float64)).sum(-1).astype(np.float32)
    converted = ov.Tensor(ov.Type.f16, ov.Shape([2]))
    assert ops.convert(ops.parameter([2], np.float32), "f16").evaluate([converted], [ov.Tensor(sums)])
    assert not np.isfinite(converted.data.astype(np.float64)).any()  # OpenVINO's Convert of the sums to f16: inf
    row = _target_row(tmp_path / "m.xml", data, "f32", "f16")
    assert row["status"] == status, row


def test_a_reduction_of_constants_only_is_judged_as_openvino_folds_it(tmp_path: Path) -> None:
    """A weight normalisation computed in the graph, ``W / Sqrt(ReduceMean(W², 0))``, of W near 300 (W² past f16's
    65504), feeding ``MatMul(x, .)``: it depends on no input of the model, and OpenVINO folds it into a Constant when it
    compiles (the CPU's execution graph holds no Reduce kernel), computing it in f32 before any conversion to f16. It is
    no f16 overflow."""
    w = (300 + np.random.default_rng(0).standard_normal((16, 16)) * 5).astype(np.float32)
    x = ops.parameter([2, 16], np.float32, name="x")
    weight = ops.constant(w)
    norm = ops.reduce_mean(ops.power(weight, ops.constant(np.float32(2))), ops.constant(np.int64([0])), True,
                           name="wnorm")  # fmt: skip
    model = ov.Model([ops.matmul(x, ops.divide(weight, ops.sqrt(norm)), False, False)], [x])
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU")
    kernels = {op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()}
    assert not any("Reduce" in kind for kind in kernels), kernels  # folded when it compiles
    data = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="f16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "wnorm")
    assert row["status"] == "protected" and "folds it" in row["message"], row


def test_a_target_verdict_on_inputs_ovreduce_made_up_says_so(tmp_path: Path) -> None:
    """``encoder_hidden_states -> MatMul -> RMSNorm`` audited for f16 without ``--input``: ovreduce makes the float
    input itself (seeded normal values of scale 1), which establish nothing of the range the model's real activations
    reach, and the target's notes say so, naming the input; an input given is not named."""
    x = ops.parameter([1, 8, 64], np.float32, name="encoder_hidden_states")
    mixed = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32)), False, False)
    mean = ops.reduce_mean(ops.power(mixed, ops.constant(np.float32(2))), ops.constant(np.int64([-1])), True)
    ov.save_model(ov.Model([ops.add(mean, ops.constant(np.float32(1e-6)))], [x]), tmp_path / "m.xml",
                  compress_to_fp16=False)  # fmt: skip
    made = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", target="f16")
    assert made.target is not None
    assert any("'encoder_hidden_states': made up by ovreduce" in n and "not representative" in n
               for n in made.target.notes), made.target.notes  # fmt: skip
    data = np.random.default_rng(0).standard_normal((1, 8, 64)).astype(np.float32)
    given = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"encoder_hidden_states": data},
                        target="f16")  # fmt: skip
    assert given.target is not None and not any("made up" in n for n in given.target.notes), given.target.notes


def test_a_body_row_names_the_op_above_the_if_it_does_not_follow(tmp_path: Path) -> None:
    """``Subtract(a, b) -> If(then: Power(., 2) -> ReduceSum)`` of a and b near 1000 that differ by about 0.05: the
    taken body is judged from its own run, and the Subtract outside it, which cancels in f16 (OpenVINO's own f16
    evaluation of it is 0 or ±0.5 where the difference is ±0.05), is not followed. The row names it, and says what that
    hides, as a top-level row does where its walk stops; where the body receives a model's input, it names nothing."""
    rng = np.random.default_rng(0)
    av = (1000 + rng.standard_normal((2, 64)) * 3).astype(np.float32)
    bv = (av + rng.standard_normal((2, 64)) * 0.05).astype(np.float32)
    f16 = ops.parameter([2, 64], ov.Type.f16)
    diff16 = _evaluated(ops.subtract(f16, ops.parameter([2, 64], ov.Type.f16)),
                        [av.astype(np.float16), bv.astype(np.float16)], [2, 64]).astype(np.float64)  # fmt: skip
    exact = av.astype(np.float64) - bv
    assert np.max(np.abs(diff16 - exact)) > 0.1  # f16's difference is not the one the body receives, rounded
    for outside in (True, False):
        a, b = (ops.parameter([2, 64], np.float32, name=name) for name in "ab")
        cond = ops.parameter([], ov.Type.boolean, name="c")
        inner, other = ops.parameter([2, 64], np.float32), ops.parameter([2, 64], np.float32)
        square = ops.power(inner, ops.constant(np.float32(2)))
        then_body = ov.Model([ops.result(ops.reduce_sum(square, ops.constant(AXIS), False, name="then_sum"))], [inner])
        else_body = ov.Model([ops.result(ops.reduce_max(other, ops.constant(AXIS), False))], [other])
        branch = ops.if_op(cond)
        branch.set_then_body(then_body)
        branch.set_else_body(else_body)
        branch.set_input((ops.subtract(a, b, name="diff") if outside else a).output(0), inner, other)
        out = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
        ov.save_model(ov.Model([out], [a, b, cond]), tmp_path / "m.xml", compress_to_fp16=False)
        doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"a": av, "b": bv, "c": np.array(True)},
                          target="f16").to_json()  # fmt: skip
        row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "then_sum")
        said = "Subtract 'diff' outside the body is not followed" in row["message"]
        assert said == outside, row


def test_an_op_openvino_moves_above_a_reshape_and_renames_is_not_judged_by_the_next_kernel(tmp_path: Path) -> None:
    """``x -> Reshape -> Exp -> ReduceSum -> MatMul`` of x near 40, at a bf16 CPU's default precision: OpenVINO's
    MoveEltwiseUpThroughDataMov puts the Exp above the Reshape as a node of a new name, which its execution graph runs
    in f32, and OpenVINO's own bf16 run of the model is within bf16's tolerance. The graph names no 'exp', so what it
    runs the chain in is not known: not the nearest kernel's bf16 (which called the row inaccurate)."""
    support = precision_support("CPU")
    if support is None or support[1].get("bf16") != "bf16":
        pytest.skip("this CPU runs no bf16 natively: no execution graph in bf16 to read")
    x = ops.parameter([2, 64], np.float32, name="x")
    heads = ops.reshape(x, ops.constant(np.int64([2, 8, 8])), False, name="heads")
    total = ops.reduce_sum(ops.exp(heads, name="exp"), ops.constant(np.int64([-1])), False, name="red")
    out = ops.matmul(total, ops.constant(np.ones((8, 4), np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).uniform(39.5, 40.5, (2, 64)).astype(np.float32)
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    names = {op.get_friendly_name() for op in compiled.get_runtime_model().get_ordered_ops()}
    assert "exp" not in names, names  # moved and renamed
    exact = np.exp(data.astype(np.float64)).reshape(2, 8, 8).sum(-1) @ np.ones((8, 4))
    assert np.max(np.abs(compiled([data])[0] - exact) / exact) < 0.01  # OpenVINO's bf16 run: within tolerance
    row = _target_row(tmp_path / "m.xml", data, "default", "bf16")
    assert row["status"] != "inaccurate", row
    assert row["status"] == "not-established" and "MoveEltwiseUpThroughDataMov" in row["message"], row


def _if_of(body: Any, shape: list[int], other: Any = None) -> ov.Model:
    """An If on an input condition ``c`` whose then body is ``body`` of one Parameter of ``shape`` (taken for
    ``c = True``) and whose else body is ``other`` (a Multiply by 1 where not given), both fed the model's input
    ``x``."""
    x, c = ops.parameter(shape, np.float32, name="x"), ops.parameter([], ov.Type.boolean, name="c")
    then_p, else_p = ops.parameter(shape, np.float32), ops.parameter(shape, np.float32)
    then_out = ops.result(body(then_p))
    else_out = ops.result(ops.multiply(else_p, ops.constant(np.float32(1))) if other is None else other(else_p))
    branch = ops.if_op(c)
    branch.set_friendly_name("if")
    branch.set_then_body(ov.Model([then_out], [then_p]))
    branch.set_else_body(ov.Model([else_out], [else_p]))
    branch.set_input(x.output(0), then_p, else_p)
    return ov.Model([branch.set_output(then_out, else_out)], [x, c])


def test_an_overflow_above_the_chain_inside_an_if_body_is_found(tmp_path: Path) -> None:
    """``Sqrt(x * x) -> ReduceSum`` inside the body an If took, x near 300: the squares (90,000) are inf in f16, as
    OpenVINO's own f16 evaluation of the Multiply gives, and the Sqrt brings the captured values back into range. At the
    top level the ops above the chain are followed and the row is an overflow; in the body only the chain was, and the
    row said headroom x26.3."""
    model = _if_of(lambda p: ops.reduce_sum(ops.sqrt(ops.multiply(p, p, name="t_sq")), ops.constant(AXIS), False,
                                            name="t_sum"), [2, 8],
                   lambda p: ops.reduce_max(p, ops.constant(AXIS), False, name="e_max"))  # fmt: skip
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    data = (300 + np.arange(16, dtype=np.float32)).reshape(2, 8)
    square = ops.multiply(*(ops.parameter([2, 8], ov.Type.f16) for _ in range(2)))
    assert np.isinf(_evaluated(square, [data.astype(np.float16)] * 2, [2, 8])).all()  # OpenVINO's own f16 Multiply
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data, "c": np.array(True)},
                      target="f16").to_json()  # fmt: skip
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "t_sum")
    assert row["status"] == "overflow" and row["failed"], row
    assert row["message"].startswith("Multiply 't_sq'") and "> 65504" in row["message"], row
    assert "judged from the then body of If 'if'" in row["message"], row


def test_a_difference_that_cancels_inside_an_if_body_feeds_both_factors_of_a_square(tmp_path: Path) -> None:
    """A variance written as ``d = h - mean(h)``, ``mean(d * d)`` inside the body an If took, on rows of 100 and 100.5:
    the mean rounds to a bf16 step of 0.5, so ``d`` cancels, as OpenVINO's own bf16 run of the model shows (88-137%
    off). The ops above the chain were not followed inside a body (headroom, with a bound "at most 0.000976"), and where
    they were, only the first factor of ``d * d`` received what they deliver, the second the captured ``d``."""

    def body(p: Any) -> Any:
        h = ops.matmul(p, ops.constant(np.eye(64, dtype=np.float32)), False, False, name="t_mm")
        d = ops.subtract(h, ops.reduce_mean(h, ops.constant(np.array([-1], np.int64)), True, name="t_mean"))
        var = ops.reduce_mean(ops.multiply(d, d), ops.constant(np.array([-1], np.int64)), True, name="t_var")
        use = ops.multiply(ops.constant(np.ones((1, 64), np.float32)), var)
        return ops.matmul(use, ops.constant(np.eye(64, dtype=np.float32)), False, False)

    ov.save_model(_if_of(body, [4, 64]), tmp_path / "m.xml", compress_to_fp16=False)
    data = (100 + 0.5 * np.random.default_rng(0).integers(0, 2, (4, 64))).astype(np.float32)
    inputs = {"x": data, "c": np.array(True)}
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs=inputs, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "t_var")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["max_rel_error"] > 0.5 and "cancel to 0 in bf16" in row["message"], row
    support = precision_support("CPU")
    if support is not None and support[1].get("bf16") == "bf16":  # OpenVINO's own bf16 run of the model
        compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        exact = np.var(data.astype(np.float64), axis=-1)
        assert np.max(np.abs(compiled([data, np.array(True)])[0][:, 0] / exact - 1)) > 0.5
    # at the default precision too; and what the body run alone (its tensors made outputs) executed the reduction in,
    # f32 as the tail of that run, is not said to be what the device executes it in: the If runs it in the whole model
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs=inputs, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "t_var")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert "the device executes this reduction in" not in row["message"] and row["device_precision"] is None, row


def test_a_fully_masked_rows_max_above_a_softmax_is_what_the_mask_saturates_to(tmp_path: Path) -> None:
    """``MatMul(x) + mask`` (float32's lowest over a whole row, as an eager attention masks a padding row), its
    ReduceMax, ``Exp(s - max)`` and their sum. OpenVINO converts the mask to bf16's lowest, so the row's scores and
    their max are that finite value, ``s - max`` is 0, and the sum is 16, as its bf16 run of the model gives (where this
    CPU runs bf16). The max, an op above the Subtract that was not followed, was taken as the f32 run captured it, past
    bf16's range, and rounded to -inf: ``s - max`` inf, and the sum an overflow (exit 1). A ReduceMax only picks one of
    its input's values: it is followed, and delivers the saturated one."""
    x = ops.parameter([2, 16], np.float32, name="x")
    h = ops.matmul(x, ops.constant(np.eye(16, dtype=np.float32)), False, False)
    mask = np.zeros((2, 16), np.float32)
    mask[0, :] = np.finfo(np.float32).min  # a fully masked row
    mask[1, 8:] = np.finfo(np.float32).min
    scores = ops.add(h, ops.constant(mask), name="masked")
    top = ops.reduce_max(scores, ops.constant(np.int64([-1])), True, name="top")
    total = ops.reduce_sum(ops.exp(ops.subtract(scores, top)), ops.constant(np.int64([-1])), True, name="total")
    used = ops.multiply(ops.constant(np.ones((1, 16), np.float32)), total)
    ov.save_model(ov.Model([ops.matmul(used, ops.constant(np.eye(16, dtype=np.float32)), False, False)], [x]),
                  tmp_path / "m.xml", compress_to_fp16=False)  # fmt: skip
    data = np.random.default_rng(0).normal(0, 1, (2, 16)).astype(np.float32)
    support = precision_support("CPU")
    if support is not None and support[1].get("bf16") == "bf16":  # OpenVINO's own bf16 run of the model
        core = ov.Core()
        f32 = core.compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([data])[0]
        bf16 = core.compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})([data])[0]
        assert np.isfinite(bf16).all() and np.allclose(bf16, f32, rtol=0.01), (bf16, f32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "total")
    assert row["status"] == "headroom" and not row["failed"], row
    assert "past bf16's range only where Constants saturate to its largest" in row["message"], row
    assert "top" in [stage["name"] for stage in row["above"]], row["above"]  # the max, followed


def test_an_output_a_cancellation_makes_0_is_not_called_a_flush(tmp_path: Path) -> None:
    """``ReduceSum((MatMul(p) - MatMul(q)) * 1e-3)``: in one row p and q lie near 1000 and differ by 0.05 to 0.3, which
    bf16 (step 4 there) holds equal, so that output is 0 in bf16 though its exact value, 6.5e-4, lies far above what
    bf16 flushes. It was reported as flushing to 0 ("their values are lost"), the cancellation not named."""
    p, q = ops.parameter([2, 4], np.float32, name="p"), ops.parameter([2, 4], np.float32, name="q")
    eye = ops.constant(np.eye(4, dtype=np.float32))
    scaled = ops.multiply(ops.subtract(ops.matmul(p, eye, False, False), ops.matmul(q, eye, False, False)),
                          ops.constant(np.float32(1e-3)))  # fmt: skip
    total = ops.reduce_sum(scaled, ops.constant(np.int64([-1])), True, name="total")
    used = ops.multiply(ops.constant(np.ones((1, 4), np.float32)), total)
    ov.save_model(ov.Model([ops.matmul(used, eye, False, False)], [p, q]), tmp_path / "m.xml", compress_to_fp16=False)
    pv = np.array([[1000.3, 1000.1, 1000.2, 1000.4], [1.0, 2.0, 3.0, 4.0]], np.float32)
    qv = np.array([[1000, 1000.05, 1000.1, 1000.2], [0.5, 1.0, 1.5, 2.0]], np.float32)
    assert np.all(pv[0].astype(TYPES["bf16"]) == qv[0].astype(TYPES["bf16"]))  # bf16 holds them equal
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"p": pv, "q": qv}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "total")
    assert row["status"] == "inaccurate" and row["failed"], row
    assert "1 of its 2 output element(s) cancel to 0 in bf16" in row["message"], row
    assert "flush to 0" not in row["message"] and "reach 0.00065" in row["message"], row
