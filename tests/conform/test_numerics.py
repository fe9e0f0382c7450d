"""conform's reference numerics and tolerances, against OpenVINO's CPU and against exact arithmetic.

The ONNX reference conform judges OpenVINO by computes each node with wide intermediates and rounds once (f64 for
f16/bf16/f32, the long double for f64, Python integers for an integer mean or norm), so that a result the output type
holds is never lost to an intermediate that overflowed or wrapped; and a sum or mean is allowed rtol times the sum
(mean) of |x| it reduces, the rounding rule ``run`` applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.conform import conform_model
from ovreduce.reference import onnx as onnx_ref

from . import onnx_models

_TYPES = {np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.float32): TensorProto.FLOAT,
          np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int32): TensorProto.INT32,
          np.dtype(np.int64): TensorProto.INT64, np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16}  # fmt: skip


def _one_node(path: Path, op: str, x: npt.NDArray[Any], axes: list[int] | None, *, keepdims: int = 0) -> Path:
    """A one-node opset-18 model of ``op`` over graph input ``x`` (of ``x``'s type and shape)."""
    inputs, initializers = ["x"], []
    if axes is not None:
        inputs.append("axes")
        initializers.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    node = helper.make_node(op, inputs, ["y"], name="r", keepdims=keepdims)
    etype = _TYPES[x.dtype]
    over = range(x.ndim) if not axes else [a % x.ndim for a in axes]
    shape = [1 if i in over else d for i, d in enumerate(x.shape) if keepdims or i not in over]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", etype, list(x.shape))],
                              [helper.make_tensor_value_info("y", etype, shape)], initializer=initializers)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    return onnx_models.save(model, path)


def test_a_long_f32_sum_is_allowed_the_rounding_of_what_it_adds(tmp_path: Path) -> None:
    """An f32 ReduceSum of 4,096 activation-sized values per row, conform's own generated input and a given one:
    OpenVINO's sums lie within rtol times the sum of |x| of the exact (f64) sums, so conform agrees, as run does."""
    x = np.random.default_rng(1).normal(0, 1000, (64, 4096)).astype(np.float32)
    path = _one_node(tmp_path / "sum.onnx", "ReduceSum", x, [1])
    exact = x.astype(np.float64).sum(axis=1)
    got = onnx_models.openvino_output(path, {"x": x})
    mass = np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(got - exact) <= 1e-5 + 1e-5 * (np.abs(exact) + mass))  # OpenVINO's sum is right
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.allowance_max == pytest.approx(1e-5 * mass.max()), node
    node = conform_model(path).nodes[0]  # its own input (seed 0)
    assert node.status == "ok" and node.allowance_max is not None, node


def test_a_reduction_of_a_scalar_is_checked(tmp_path: Path) -> None:
    """ReduceLogSumExp of a rank-0 input (ONNX reduces its zero axes: the identity) is compared with OpenVINO's."""
    x = np.array(-2.5, np.float32)
    path = _one_node(tmp_path / "lse0.onnx", "ReduceLogSumExp", x, None, keepdims=1)
    got = onnx_models.openvino_output(path, {"x": x})
    assert got == x, got
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.error is None, node


def test_an_exact_sum_within_the_allowance_is_judged_against_the_exact_value(tmp_path: Path) -> None:
    """A sum that cancels (0.5 from terms whose |x| adds to 3,000) agrees where OpenVINO is within the allowance, and
    the reference it is judged against is the exact sum rounded once, not an f32 accumulation's."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, 4000).astype(np.float32)
    x[0] += np.float32(0.5 - float(np.sum(x.astype(np.float64))))
    x = x.reshape(1, 4000)
    path = _one_node(tmp_path / "cancel.onnx", "ReduceSum", x, [1])
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.allowance_max is not None, node
    wide = onnx_ref.reduce("ReduceSum", x, [1], 0, wide=True)
    assert wide[0] == np.float32(x.astype(np.float64).sum()), wide


WIDE_CASES = [  # (op, input): results the type holds, whose fixed-width intermediates overflow or wrap
    ("ReduceMean", np.array([2147483647, 1], np.int32)),  # exact 2^30; a wrapping sum gives -2^30
    ("ReduceL2", np.array([50000], np.int32)),  # exact 50000; a wrapping square gives INT_MIN
    ("ReduceL2", np.array([65536, 65536], np.int32)),  # exact 92681 (the floor)
    ("ReduceMean", np.array([2**63 - 1, 1], np.int64)),  # exact 2^62
    ("ReduceMean", np.array([3e38, 3e38], np.float32)),  # an f32 sum overflows
    ("ReduceL2", np.array([1e20, 1e20], np.float32)),  # f32 squares overflow
    ("ReduceLogSum", np.array([3e38, 3e38], np.float32)),  # log(6e38) = 89.29
    ("ReduceProd", np.array([1e-30, 1e-30, 1e30, 1e30], np.float32)),  # exact 1; f32 underflows to 0
    ("ReduceProd", np.array([1e30, 1e30, 1e-30, 1e-30], np.float32)),  # exact 1; f32 overflows to inf
    ("ReduceL2", np.array([1e200, 1e200], np.float64)),  # f64 squares overflow
    ("ReduceProd", np.array([1e30] * 11 + [1e-30] * 11, np.float32)),  # about 1; even f64 overflows first
    ("ReduceProd", np.array([1e-30] * 11 + [1e30] * 11, np.float32)),  # about 1; even f64 underflows first
    ("ReduceProd", np.array([1e-300] * 17 + [1e300] * 17, np.float64)),  # 1; even the long double underflows
    ("ReduceProd", np.array([1e-30] * 11 + [1e30] * 11, ml_dtypes.bfloat16)),  # about 1; f64 underflows first
]


def _exact(op: str, x: npt.NDArray[Any]) -> float | int:
    """The exact result, from Python integers or fractions of the inputs (the logarithm and root of an exact sum)."""
    from fractions import Fraction
    from math import isqrt, log, sqrt

    if x.dtype.kind in "iu":
        values = [int(v) for v in x]
        if op == "ReduceMean":
            return int(Fraction(sum(values), len(values)))  # (truncated toward zero)
        return isqrt(sum(v * v for v in values))
    fractions = [Fraction(float(v)) for v in x]
    if op == "ReduceMean":
        return float(sum(fractions) / len(fractions))
    if op == "ReduceLogSum":
        return log(float(sum(fractions)))
    if op == "ReduceProd":
        product = Fraction(1)
        for f in fractions:
            product *= f
        return float(product)
    scale = max(abs(f) for f in fractions)  # (f64 squares past the type: the scaled values' norm, scaled back)
    return sqrt(float(sum((f / scale) ** 2 for f in fractions))) * float(scale)


@pytest.mark.parametrize(("op", "x"), WIDE_CASES, ids=lambda v: v if isinstance(v, str) else f"{v.dtype}{v.tolist()}")
def test_the_reference_holds_what_the_type_holds(op: str, x: npt.NDArray[Any]) -> None:
    """The wide reference is the exact result rounded once, where onnx.reference's fixed-width one is not."""
    got = onnx_ref.reduce(op, x, [0], 0, wide=True)
    assert got.dtype == x.dtype
    want = _exact(op, x)
    if x.dtype.kind in "iu":
        assert int(got) == want, (got, want)
    else:  # (rounded once to the type: bf16 holds 8 bits)
        assert np.isclose(float(got), want, rtol=2**-8 if x.dtype.kind == "V" else 1e-6, atol=0), (got, want)


@pytest.mark.parametrize(("op", "x"), [c for c in WIDE_CASES if c[0] == "ReduceProd"],
                         ids=lambda v: v if isinstance(v, str) else f"{v.dtype}-{float(v[0]):g}")  # fmt: skip
def test_a_product_that_leaves_the_range_of_openvino_s_intermediates_does_not_conform(
    tmp_path: Path, op: str, x: npt.NDArray[Any]
) -> None:
    """A product the type holds (about 1) whose partial products pass f32's range (and f64's, where conform's wide
    reference computed f32's in f64; the long double's for f64): OpenVINO's CPU gives inf, 0 or NaN. conform's
    reference overflowed too, and the node conformed ("none of the output elements ... is finite", or "within the
    absolute tolerance of 0"); it keeps mantissas and exponents apart, as run's does, and the node disagrees."""
    path = _one_node(tmp_path / "prod.onnx", op, x, [0])
    got = np.asarray(onnx_models.openvino_output(path, {"x": x}), dtype=np.float64)
    node = conform_model(path, inputs={"x": x}).nodes[0]
    if np.isclose(float(got), _exact(op, x), rtol=2**-8):  # (OpenVINO right: then it conforms)
        assert node.status == "ok", node
    else:
        assert node.status == "disagree" and node.first_mismatch is not None, node
        assert np.isclose(float(node.first_mismatch["reference"]), _exact(op, x), rtol=2**-8), node


def test_openvino_s_wrong_integer_and_overflowed_results_do_not_conform(tmp_path: Path) -> None:
    """OpenVINO's CPU wraps an int32 mean's and norm's intermediates and overflows f32 ones (known CPU defects):
    where it gives anything but the exact result, conform says so, as run does; where it gives that, it conforms."""
    for i, (op, x) in enumerate(WIDE_CASES[:2] + WIDE_CASES[4:6]):
        path = _one_node(tmp_path / f"m{i}.onnx", op, x, [0])
        got = onnx_models.openvino_output(path, {"x": x})
        want = _exact(op, x)
        right = bool(np.isclose(float(got), want, rtol=1e-6, atol=0))
        node = conform_model(path, inputs={"x": x}).nodes[0]
        assert node.status == ("ok" if right else "disagree"), (op, x, got, node)


def test_an_agreement_at_an_rtol_grown_past_a_tenth_says_so(tmp_path: Path) -> None:
    """An f16 mean of 65,536 values is judged at rtol 0.25 (f16's eps times the root of the count): it agrees, and a
    note says that an output a quarter off would have agreed too; at an rtol given, no note."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, (1, 65536)).astype(np.float16)
    path = _one_node(tmp_path / "mean.onnx", "ReduceMean", x, [1])
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.rtol >= 0.1, node
    assert any("lets an output 25% of the result off agree" in note for note in node.notes), node.notes
    node = conform_model(path, inputs={"x": x}, rtol=0.25).nodes[0]
    assert node.status == "ok" and not any("of the result off agree" in note for note in node.notes), node.notes


def test_a_bf16_infinity_openvino_gives_as_bf16_s_largest_value_is_named(tmp_path: Path) -> None:
    """A bf16 ReduceMax of ``[-inf, -inf]``: where OpenVINO's CPU reduces bf16 natively it gives -3.39e38 (bf16's
    lowest finite value), and conform names that known defect, as it does f32's -FLT_MAX; elsewhere -inf conforms."""
    x = np.array([-np.inf, -np.inf], ml_dtypes.bfloat16)
    path = _one_node(tmp_path / "max.onnx", "ReduceMax", x, [0])
    got = onnx_models.openvino_output(path, {"x": x}).view(ml_dtypes.bfloat16)  # (OpenVINO hands bf16 out as f16 bits)
    node = conform_model(path, inputs={"x": x}).nodes[0]
    if np.isneginf(got.astype(np.float64)):
        assert node.status == "ok", node
    else:
        assert got.astype(np.float64) == -float.fromhex("0x1.fep127"), got
        assert node.status == "disagree" and "bf16's largest finite value" in " ".join(node.notes), node


def test_a_log_sum_exp_over_masked_scores_is_judged_on_the_others(tmp_path: Path) -> None:
    """A ReduceLogSumExp whose input holds -inf (masked scores: exp(-inf) adds 0) in a row that holds finite values
    too is compared on those, as a ReduceMax's masked -inf is, not called unable to show an error."""
    x = np.random.default_rng(0).normal(0, 1, (2, 3, 8)).astype(np.float32)
    x[1, 2, 4:] = -np.inf
    path = _one_node(tmp_path / "lse.onnx", "ReduceLogSumExp", x, [-1])
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok", node
    assert not any("cannot show an error" in note for note in node.notes), node.notes
    assert any("4 of its 48 input elements are -inf (masked)" in note for note in node.notes), node.notes


def test_a_model_compiled_for_another_precision_than_asked_says_so(tmp_path: Path) -> None:
    """``--precision f16`` where OpenVINO's CPU compiles an f16 hint for bf16 (a CPU with bf16 instructions): the
    header and a note say what the model ran in; where it keeps f16, neither."""
    import openvino as ov

    from ovreduce.cli.render.text import conform_text

    x = np.random.default_rng(0).normal(0, 1, (8, 64)).astype(np.float32)
    path = _one_node(tmp_path / "mean.onnx", "ReduceMean", x, [1])
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f16"})
    ran = compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
    doc = conform_model(path, inputs={"x": x}, precision="f16")
    said = [note for note in doc.notes if "OpenVINO compiled the model for" in note]
    header = conform_text(doc).splitlines()[0]
    if ran == "f16":
        assert not said and "runs in" not in header, (doc.notes, header)
    else:
        assert said == [said[0]] and f"compiled the model for {ran}, where f16 was asked" in said[0], doc.notes
        assert header.endswith(f"precision f16 (runs in {ran})"), header


def test_an_f64_node_is_judged_in_what_it_executed_in(tmp_path: Path) -> None:
    """An f64 ReduceSum at --precision bf16: OpenVINO's CPU executes it in f32 (its execution graph says so), so it is
    judged at f32's tolerance, and no note calls it computed in bf16."""
    x = np.random.default_rng(0).normal(0, 1, (3, 4))
    path = _one_node(tmp_path / "sum.onnx", "ReduceSum", x, [1])
    node = conform_model(path, inputs={"x": x}, precision="bf16").nodes[0]
    assert node.status == "ok" and (node.atol, node.rtol) in ((1e-5, 1e-5), (1e-12, 1e-9)), node
    assert not any("in bf16" in note for note in node.notes), node.notes


def test_a_log_of_a_cancelling_sum_is_allowed_the_sums_rounding(tmp_path: Path) -> None:
    """ReduceLogSum of 4,000 values that cancel to 0.5: OpenVINO's f32 sum is off by about 1e-5, so its log by 2e-5,
    within rtol times the sum of |x| over the sum, the allowance of a sum carried through the log."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, 4000).astype(np.float32)
    x[0] += np.float32(0.5 - float(np.sum(x.astype(np.float64))))
    x = x.reshape(1, 4000)
    path = _one_node(tmp_path / "logsum.onnx", "ReduceLogSum", x, [1])
    exact = np.log(x.astype(np.float64).sum(axis=1))
    got = onnx_models.openvino_output(path, {"x": x})
    allowed = 1e-5 * np.abs(x.astype(np.float64)).sum(axis=1) / x.astype(np.float64).sum(axis=1)
    assert np.all(np.abs(got - exact) <= 1e-5 + allowed), (got, exact)
    node = conform_model(path, inputs={"x": x}).nodes[0]
    assert node.status == "ok" and node.allowance_max == pytest.approx(float(allowed[0])), node


def test_an_elementwise_mean_is_allowed_the_rounding_of_what_it_adds(tmp_path: Path) -> None:
    """An ONNX Mean of three f32 tensors of activation-sized values: OpenVINO computes it in plain f32, off by about
    1e-7 of the mean of the |x| it adds. Where the three cancel (a mean near 0 from terms of 1,000) that error is past
    atol plus rtol times the small result, and the Mean, the one node judged without the allowance of a sum or mean,
    disagreed; it is allowed rtol times the mean of |x_i|, as a ReduceMean is."""
    n = 1 << 20
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [n]) for i in range(3)]
    graph = helper.make_graph([helper.make_node("Mean", ["x0", "x1", "x2"], ["y"], name="m")], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    path = onnx_models.save(model, tmp_path / "mean3.onnx")
    rng = np.random.default_rng(1)
    xs = {f"x{i}": (rng.standard_normal(n) * 1000).astype(np.float32) for i in range(3)}
    got = onnx_models.openvino_output(path, xs)
    exact = sum(x.astype(np.float64) for x in xs.values()) / 3
    mass = sum(np.abs(x.astype(np.float64)) for x in xs.values()) / 3
    assert not np.all(np.abs(got - exact) <= 1e-5 + 1e-5 * np.abs(exact))  # past the plain tolerance
    assert np.all(np.abs(got - exact) <= 1e-5 + 1e-5 * (np.abs(exact) + mass))  # within the allowance
    node = conform_model(path, inputs=xs).nodes[0]
    assert node.status == "ok" and node.allowance_max == pytest.approx(1e-5 * mass.max()), node
