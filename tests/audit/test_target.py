"""``audit --target f16|bf16``: would each reduction survive the precision a GPU, an NPU or an AMX CPU runs?

The emulation is checked against OpenVINO's own execution of the same chain in f16 and bf16 (``Node.evaluate``
of each op in that type: OpenVINO's reference implementation); the verdicts on a real exported LLM whose
activations were scaled up (tests/audit/f16_models.py), unmarked and marked the way OpenVINO keeps subgraphs
in f32; the exit status and the document in text, JSON and over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from ovreduce import load_ir
from ovreduce.audit import audit_model
from ovreduce.backends.openvino import precision_support, runtime_precisions
from ovreduce.compare import tolerances
from ovreduce.headroom import EMULATED, FINITE_MAX, RANGE_OPS, TYPES, _apply, bounded, emulate, run_on_device
from tests.api.conftest import files as upload
from tests.cli.inprocess import run_cli

from . import f16_models, ov_models

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "rmsnorm_f16.xml"
FIRST_NORM = f"{f16_models.FIRST_NORM}/aten::mean/ReduceMean"
FIRST_POWER = f"{f16_models.FIRST_NORM}/aten::pow/Power"
_OV_TYPE = {"f16": ov.Type.f16, "bf16": ov.Type.bf16}


# -- the emulation against OpenVINO's own f16/bf16 execution ----------------------------------------------------
def _tensor(values: np.ndarray[Any, Any], target: str) -> ov.Tensor:
    """``values`` rounded to ``target`` as OpenVINO receives them (round to nearest even, as ml_dtypes does)."""
    tensor = ov.Tensor(_OV_TYPE[target], ov.Shape(list(values.shape)))
    bits = np.ascontiguousarray(values.astype(TYPES[target])).view(np.uint16)
    np.copyto(np.asarray(tensor.data).view(np.uint16).reshape(values.shape), bits)
    return tensor


def _evaluate(node: Any, inputs: list[ov.Tensor]) -> ov.Tensor:
    out = ov.Tensor(node.get_output_element_type(0), node.get_output_shape(0))
    assert node.evaluate([out], inputs), node
    return out


def _openvino_chain(op: str, reduction: str, args: list[np.ndarray[Any, Any]], target: str) -> np.ndarray[Any, Any]:
    """OpenVINO's own result of ``op`` then ``reduction`` (last axis, kept) with every tensor in ``target``."""
    params = [ops.parameter(list(a.shape), _OV_TYPE[target]) for a in args]
    node = {"Power": ops.power, "Exp": ops.exp, **BINARY}[op](*params)
    axes = np.array([-1], np.int64)
    reduce = {"ReduceMean": ops.reduce_mean, "ReduceSum": ops.reduce_sum, "ReduceMax": ops.reduce_max}[reduction]
    reduced = reduce(node, ops.constant(axes), True)
    middle = _evaluate(node, [_tensor(a, target) for a in args])
    out = _evaluate(reduced, [middle, ov.Tensor(axes)])
    return np.array(out.data).view(np.uint16).view(TYPES[target]).astype(np.float64)


CHAINS = [  # op, reduction, scale of the activations: some reach past f16's range, some do not
    ("Power", "ReduceMean", 100.0),
    ("Power", "ReduceMean", 3.0),
    ("Power", "ReduceSum", 10.0),
    ("Exp", "ReduceSum", 4.0),
    ("Multiply", "ReduceSum", 30.0),
    ("Power", "ReduceMax", 100.0),
    ("Divide", "ReduceSum", 5000.0),
    ("Add", "ReduceMax", 15000.0),
    ("Subtract", "ReduceSum", 2000.0),
]
BINARY = {"Multiply": ops.multiply, "Divide": ops.divide, "Add": ops.add, "Subtract": ops.subtract}


def _chain_inputs(op: str, scale: float, seed: int) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((6, 256)) * scale).astype(np.float32)
    if op == "Power":
        return [x, np.array([2.0], np.float32)]
    if op == "Divide":
        return [x, rng.uniform(0.25, 2.0, (6, 256)).astype(np.float32)]
    if op in BINARY:
        return [x, (rng.standard_normal((6, 256)) * scale).astype(np.float32)]
    return [x]


@pytest.mark.parametrize(("op", "reduction", "scale"), CHAINS)
def test_the_f16_emulation_equals_openvinos_own_f16_execution(op: str, reduction: str, scale: float) -> None:
    args = _chain_inputs(op, scale, seed=1)
    emulated = emulate(reduction, args, np.array([-1]), True, "f16", op=op).result.astype(np.float64)
    openvino = _openvino_chain(op, reduction, args, "f16")
    np.testing.assert_array_equal(emulated, openvino)  # element for element, infinities included


@pytest.mark.parametrize(("op", "reduction", "scale"), CHAINS)
def test_the_bf16_emulation_agrees_with_openvinos_own_bf16_execution(op: str, reduction: str, scale: float) -> None:
    """OpenVINO's reference rounds a bf16 op's result differently from round-to-nearest-even (a bf16 device's
    rounding, and NumPy's): the results agree within the bf16 tolerance the verdict uses, with the same
    elements finite."""
    args = _chain_inputs(op, scale, seed=2)
    emulation = emulate(reduction, args, np.array([-1]), True, "bf16", op=op)
    openvino = _openvino_chain(op, reduction, args, "bf16")
    emulated = emulation.result.astype(np.float64)
    np.testing.assert_array_equal(np.isfinite(emulated), np.isfinite(openvino))
    atol, rtol = tolerances("bf16", None, args[0].size, emulated.size)
    np.testing.assert_allclose(emulated, openvino, rtol=rtol, atol=atol)


def _cpu_bf16_chain(
    op: str, reduction: str, args: list[np.ndarray[Any, Any]]
) -> tuple[np.ndarray[Any, Any], tuple[str, str]]:
    """The CPU's own result of the chain built in bf16 (a bf16 graph, compiled with the bf16 hint), and what its
    execution graph runs the op and the reduction in."""
    params = [ops.parameter(list(a.shape), ov.Type.bf16) for a in args[:1]]
    if op in BINARY:
        params.append(ops.parameter(list(args[1].shape), ov.Type.bf16))
        node = BINARY[op](*params)
    elif op == "Power":
        node = ops.power(params[0], ops.convert(ops.constant(args[1]), ov.Type.bf16))
    else:
        node = ops.exp(params[0])
    node.set_friendly_name("chain_op")
    reduce = {"ReduceMean": ops.reduce_mean, "ReduceSum": ops.reduce_sum, "ReduceMax": ops.reduce_max}[reduction]
    reduced = reduce(node, ops.constant(np.array([-1], np.int64)), True)
    reduced.set_friendly_name("chain_reduction")
    compiled = ov.Core().compile_model(ov.Model([reduced], params), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    request = compiled.create_infer_request()
    request.infer([_tensor(a, "bf16") for a in (args if op in BINARY else args[:1])])
    out = request.get_output_tensor(0)
    assert out.element_type == ov.Type.bf16
    executes = runtime_precisions(compiled)
    return np.array(out.data).view(np.uint16).view(TYPES["bf16"]).astype(np.float64), (
        executes.get("chain_op", "?"), executes.get("chain_reduction", "?"))  # fmt: skip


@pytest.mark.parametrize(("op", "reduction", "scale"), CHAINS)
def test_the_bf16_emulation_equals_this_cpus_native_bf16_execution(op: str, reduction: str, scale: float) -> None:
    """On a CPU with bf16 instructions (AVX512-BF16, AMX) OpenVINO runs a bf16 chain natively: element for
    element the same as the emulation; on any other CPU, OpenVINO runs the chain through f32 (so ovreduce says its
    figures are emulated)."""
    args = _chain_inputs(op, scale, seed=3)
    native, executes = _cpu_bf16_chain(op, reduction, args)
    if not _native("bf16"):  # the CPU reduces through f32: the target's figures can only be the emulation's
        assert executes[1] == "f32", executes
        return
    assert executes == ("bf16", "bf16"), executes  # the CPU did run the chain in bf16
    emulated = emulate(reduction, args, np.array([-1]), True, "bf16", op=op).result.astype(np.float64)
    np.testing.assert_array_equal(emulated, native)


def test_an_overflow_is_placed_at_the_op_that_loses_the_range() -> None:
    x = np.ones((2, 64), np.float32)
    x[1, 5] = 300.0  # 300^2 = 9e4 > 65504
    emulation = emulate("ReduceMean", [x, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power")
    assert [(s.what, s.overflowed) for s in emulation.stages] == [("input", 0), ("Power", 1), ("ReduceMean", 0)]
    assert emulation.stages[1].largest == 90000.0
    assert emulation.non_finite == 1
    # the sum of values that each fit can overflow too: then it is the reduction's
    y = np.full((1, 8), 200.0, np.float32)  # 8 * 200^2 = 3.2e5
    summed = emulate("ReduceSum", [y, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power")
    assert [(s.what, s.overflowed) for s in summed.stages] == [("input", 0), ("Power", 0), ("ReduceSum", 1)]
    # kept in f32 by OpenVINO's mark, neither overflows
    kept = emulate("ReduceSum", [y, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power",
                   op_kept=True, reduction_kept=True)  # fmt: skip
    assert kept.non_finite == 0 and kept.comparison.ok
    # the op kept in f32, the reduction not: the op's output overflows on its way into the reduction, which is
    # where its elements are counted (they were counted nowhere)
    entering = emulate("ReduceMean", [x, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power",
                       op_kept=True)  # fmt: skip
    assert [(s.what, s.overflowed) for s in entering.stages] == [("input", 0), ("Power", 0), ("ReduceMean", 1)]
    assert entering.non_finite == 1


@pytest.mark.parametrize(("target", "status"), [("f16", "overflow"), ("bf16", "headroom")])
def test_a_bf16_model_is_judged_as_floating_point(tmp_path: Path, target: str, status: str) -> None:
    """A bf16 reduction's captured input (ml_dtypes' bfloat16, which NumPy counts as no float kind) was called "not
    floating-point" and never judged, so a sum far past f16's range passed the f16 target."""
    x = ops.parameter([2, 64], ov.Type.bf16, name="x")
    total = ops.reduce_sum(x, ops.constant(np.array([1], np.int64)), False)
    total.set_friendly_name("sum")
    path = tmp_path / "bf16sum.xml"
    ov.save_model(ov.Model([total], [x], "bf16sum"), path, compress_to_fp16=False)
    values = (100_000 + np.arange(128, dtype=np.float32)).reshape(2, 64)  # each value past f16's 65504
    doc = audit_model(load_ir(path), inputs={"x": values.astype(ml_dtypes.bfloat16)}, precision="f32", target=target)
    [row] = doc.layers
    assert row.target is not None and row.target.status == status, row.target
    assert doc.target is not None and doc.target.ok is (status != "overflow")


def test_values_that_flush_to_zero_are_counted() -> None:
    x = np.full((1, 16), 1e-4, np.float32)  # squares to 1e-8: below f16's smallest subnormal (6e-8)
    emulation = emulate("ReduceSum", [x, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power")
    assert emulation.stages[1].underflowed == 16
    assert emulation.result.item() == 0 and emulation.expected.item() > 0
    # 1.6e-7 lies within f16's absolute tolerance of 0, which would pass any result: judged relatively, the value lost
    assert not emulation.comparison.ok and emulation.comparison.atol == 0 and emulation.relative
    assert emulation.flushed == 1
    # the bound that settles a chain counts them too (it said nothing: a row's "to 0" was empty): half the squares
    # flush, beside values whose means lie past the absolute tolerance
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32) * np.float32(1e-4)
    x[:, ::2] *= np.float32(1000)
    expected = np.mean(np.float64(x) ** 2, -1, keepdims=True)
    proven = bounded("ReduceMean", [x, np.array([2.0], np.float32)], x**2, expected, np.array([-1]), True, "f16",
                     op="Power")  # fmt: skip
    full = emulate("ReduceMean", [x, np.array([2.0], np.float32)], np.array([-1]), True, "f16", op="Power")
    assert proven is not None and [st.underflowed for st in proven.stages] == [st.underflowed for st in full.stages]
    assert proven.stages[1].underflowed > 200 and proven.stages[2].underflowed == 0  # no variance flushes


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_a_max_over_nothing_is_not_judged(tmp_path: Path, target: str) -> None:
    """A ReduceMax over an empty past (the first step of a stateless export): the specification leaves its output
    undefined, and the reference's value for it (float64's lowest) was taken for a magnitude the chain reaches: an
    overflow that failed the audit. Nothing reaches the reduction: it is not established, as its row is."""
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    past = ops.parameter([1, 0, 64], np.float32, name="past")
    total = ops.reduce_sum(ops.multiply(x, ops.constant(np.float32(2))), ops.constant(np.array([-1])), True)
    peak = ops.reduce_max(ops.multiply(past, ops.constant(np.float32(2))), ops.constant(np.array([1])), True)
    peak.set_friendly_name("past_max")
    ov.save_model(ov.Model([total, peak], [x, past]), tmp_path / "m.xml", compress_to_fp16=False)
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU")
    assert compiled.outputs[1].get_shape() == [1, 1, 64]  # OpenVINO builds it: 64 outputs of nothing
    doc = audit_model(load_ir(tmp_path / "m.xml"), target=target)
    row = _row(doc, "past_max")
    assert row.status == "not-established" and row.undefined == 64, row
    assert row.target is not None and row.target.status == "not-established" and not row.target.failed, row.target
    assert row.target.message == "not established: its input is empty"
    assert doc.ok is True and doc.target is not None and doc.target.ok is True
    # the emulation itself leaves the undefined elements out: none is lost, none is compared
    emulation = emulate("ReduceMax", [np.zeros((1, 0, 64), np.float32)], np.array([1]), True, target)
    assert emulation.non_finite == 0 and emulation.comparison.ok and emulation.comparison.undefined == 64
    assert [(stage.largest, stage.overflowed) for stage in emulation.stages] == [(0.0, 0), (0.0, 0)]


@pytest.mark.parametrize("target", ["f16", "bf16"])
@pytest.mark.parametrize(("op", "reduction", "scale"), [*CHAINS, ("Power", "ReduceMean", 14.0)])
@pytest.mark.parametrize("seed", range(4))
def test_a_bound_that_settles_a_chain_is_never_contradicted_by_the_emulation(
    op: str, reduction: str, scale: float, seed: int, target: str
) -> None:
    """Where the cheap path answers, the element-wise emulation finds every element finite and within the same
    tolerance, and the error no larger than the bound; where a value nears the type's maximum it declines."""
    args = _chain_inputs(op, scale, seed)
    axes = np.array([-1])
    observed = emulate(reduction, args, axes, True, target, op=op, op_kept=True, reduction_kept=True)
    run_output = {"Power": lambda: args[0] ** 2, "Multiply": lambda: args[0] * args[1], "Exp": lambda: np.exp(args[0]),
                  "Divide": lambda: args[0] / args[1], "Add": lambda: args[0] + args[1],
                  "Subtract": lambda: args[0] - args[1]}  # fmt: skip
    captured = run_output[op]().astype(np.float32)  # the reduction's input as an f32 run computes it
    proven = bounded(reduction, args, captured, observed.expected, axes, True, target, op=op)
    full = emulate(reduction, args, axes, True, target, op=op)
    if proven is None:
        return
    assert full.non_finite == 0 and full.ok
    assert full.comparison is not None and full.comparison.max_abs_error is not None
    assert proven.bound is not None and full.comparison.max_abs_error <= proven.bound
    assert proven.largest < FINITE_MAX[target]


def test_the_bound_declines_a_subnormal_factor_that_a_large_one_scales() -> None:
    """A factor below f16's smallest normal is rounded by up to half a subnormal step, not by a relative amount, and
    the other factor (6e4) scales that error past the tolerance: the emulation, and OpenVINO's own f16 Multiply then
    ReduceSum, are off by 0.1 where the tolerance allows 0.02. No bound may call it within the tolerance."""
    rng = np.random.default_rng(0)
    a = (rng.choice([5.4, 6.45], (2, 64)) * 2.0**-24).astype(np.float32)
    b = rng.uniform(59000, 60000, (2, 64)).astype(np.float32)
    axes = np.array([-1])
    expected = np.sum(np.float64(a) * np.float64(b), -1, keepdims=True)
    full = emulate("ReduceSum", [a, b], axes, True, "f16", op="Multiply")
    device = _openvino_chain("Multiply", "ReduceSum", [a, b], "f16")
    assert not full.ok and float(np.max(np.abs(device - expected))) > 0.05
    assert bounded("ReduceSum", [a, b], a * b, expected, axes, True, "f16", op="Multiply") is None


def test_the_bound_declines_near_the_maximum_and_settles_an_ordinary_mean() -> None:
    """A mean of values far below f16's largest is within its tolerance by the bound alone (one rounding of each, half
    f16's rtol). A mean of squares is not: each square is off by up to three roundings, past f16's rtol of what the sum
    adds, so the bound declines it and the emulation judges it; and past the maximum it always declines."""
    x = np.random.default_rng(3).standard_normal((4, 512)).astype(np.float32)
    axes, two = np.array([-1]), np.array([2.0], np.float32)
    ordinary = bounded("ReduceMean", [x], x, np.mean(np.float64(x), -1, keepdims=True), axes, True, "f16")
    assert ordinary is not None and ordinary.bound is not None and ordinary.bound > 0
    squares = np.abs(x) + 1  # (outputs past f16's absolute tolerance: judged relative to them)
    assert bounded("ReduceMean", [squares, two], squares**2, np.mean(np.float64(squares) ** 2, -1, keepdims=True),
                   axes, True, "f16", op="Power") is None  # fmt: skip
    loud = x * 200  # squares reach past 65504
    assert bounded("ReduceMean", [loud, two], loud**2, np.mean(np.float64(loud) ** 2, -1, keepdims=True), axes, True,
                   "f16", op="Power") is None  # fmt: skip


def test_the_finite_maxima_are_the_types() -> None:
    for target in ("f16", "bf16"):
        assert float(ml_dtypes.finfo(TYPES[target]).max) == FINITE_MAX[target]


def _native(target: str) -> bool:
    """Whether this CPU executes reductions of ``target`` natively, as OpenVINO's execution graph says."""
    support = precision_support("CPU")
    return support is not None and support[1].get(target) == target


# -- a real exported LLM -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def llamas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("loud_llama")
    loud = f16_models.loud_llama(folder / "loud.xml")
    marked = f16_models.mark_kept(loud, folder / "marked.xml", [f"{norm}/" for norm in f16_models.NORMS])
    return {"loud": loud, "marked": marked}


def _row(doc: Any, name: str) -> Any:
    return next(layer for layer in doc.layers if layer.layer_name == name)


def test_an_rmsnorm_whose_input_exceeds_256_overflows_in_f16(llamas: dict[str, Path]) -> None:
    doc = audit_model(load_ir(llamas["loud"]), target="f16")
    row = _row(doc, FIRST_NORM)
    # OpenVINO computed it right in the precision it ran in (measured on OpenVINO 2026.4: in bf16 the plain run fuses
    # it into an RMS kernel in bf16, which was not examined)...
    assert row.status == ("not-established" if doc.effective_precision == "bf16" else "ok"), row
    assert row.target is not None and row.target.status == "overflow" and row.target.failed  # ...f16 would not
    assert f"Power {FIRST_POWER!r}" in row.target.message and "> 65504" in row.target.message
    power = next(stage for stage in row.target.stages if stage.op == "Power")
    assert power.name == FIRST_POWER and power.overflowed > 0 and power.largest is not None and power.largest > 65504
    [stage_in] = [stage for stage in row.target.stages if stage.op == "input"]
    assert stage_in.largest is not None and stage_in.largest > 256
    assert doc.ok is False and doc.complete is False
    assert doc.target is not None and doc.target.ok is False and doc.target.precision == "f16"
    # a CPU without f16 instructions: the figures are emulated; one with them also runs the chains in f16
    assert doc.target.emulated is not _native("f16")
    assert doc.layers[0].target is not None and doc.layers[0].target.failed  # failing rows first


def test_the_same_model_with_openvinos_f32_marks_is_protected(llamas: dict[str, Path]) -> None:
    doc = audit_model(load_ir(llamas["marked"]), precision="f32", target="f16")
    norms = [layer for layer in doc.layers if layer.type == "ReduceMean"]
    assert len(norms) == len(f16_models.NORMS)
    assert all(layer.target is not None and layer.target.status == "protected" for layer in norms)
    for layer in norms:  # the norm's ops run in f32; what an unmarked op computed reaches them in f16
        assert layer.target is not None and [stage.kept for stage in layer.target.stages] == [False, True, True]
    assert doc.ok is True and doc.target is not None and doc.target.ok is True


def test_a_marked_chain_receives_what_an_unmarked_op_computed_rounded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An RMSNorm marked to stay in f32, fed by a MatMul that is not: the device runs the MatMul in f16, whose
    result (1e5) is inf there before the marked Power reads it. The chain's marks do not save it."""
    x = ops.parameter([1, 4, 64], np.float32, name="x")
    proj = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32) * 1000.0), False, False)
    proj.set_friendly_name("proj")
    square = ops.power(proj, ops.constant(np.float32(2)))
    square.set_friendly_name("norm/square")
    variance = ops.reduce_mean(square, ops.constant(np.array([-1], np.int64)), True)
    variance.set_friendly_name("norm/variance")
    ov.save_model(ov.Model([variance], [x]), tmp_path / "plain.xml", compress_to_fp16=False)
    path = f16_models.mark_kept(tmp_path / "plain.xml", tmp_path / "m.xml", ["norm/"])
    np.save(tmp_path / "x.npy", np.full((1, 4, 64), 99.5, np.float32))  # 99,500 after the MatMul: past 65504
    status, out, _ = run_cli(capsys, "audit", str(path), "--target", "f16", "--precision", "f32",
                             "--input", f"x={tmp_path / 'x.npy'}", "--format", "json")  # fmt: skip
    row = json.loads(out)["layers"][0]["target"]
    assert status == 1 and row["status"] == "overflow", row
    assert row["message"].startswith("the input of Power 'norm/square'") and "9.95e+04 > 65504" in row["message"]
    assert [stage["kept"] for stage in row["stages"]] == [False, True, True], row


def test_bf16_has_headroom_where_f16_overflows(llamas: dict[str, Path]) -> None:
    doc = audit_model(load_ir(llamas["loud"]), target="bf16", precision="f32")
    row = _row(doc, FIRST_NORM)
    assert row.target is not None and not row.target.failed
    assert row.target.headroom is not None and row.target.headroom > 1e30
    assert row.target.largest is not None and row.target.largest > 65504  # the very value that overflows f16
    assert doc.ok is True
    if _native("bf16"):  # this CPU executes bf16 natively: it fuses the norm into its RMS kernel, which computes the
        # squares and their mean in f32, rounding to bf16 only what it loads and stores
        assert doc.target is not None and doc.target.emulated is False and doc.target.executed_on == "CPU"
        assert row.target.status == "protected" and row.target.device_precision == "bf16", row.target
        assert "computes the chain in f32 inside" in row.target.message, row.target.message
        assert any("as a bf16 graph of its captured inputs" in note for note in doc.target.notes)
    else:
        assert row.target.status == "headroom", row.target
        assert row.target.device_precision is None or row.target.device_precision != "bf16"


@pytest.mark.parametrize("precision", ["default", "f32"])
def test_bf16_judges_a_chain_as_the_cpu_executes_it(tmp_path: Path, precision: str) -> None:
    """Exp then ReduceSum of values near 75, nothing after them: a CPU running the model in bf16 keeps the graph's tail
    after its last MatMul (here all of it) in f32, so the sum is off by 3e-7, where an all-bf16 device errs by 14%.
    Where this CPU executes bf16 natively its execution graph of the model says so, at any precision audited; elsewhere
    the chain is judged as an all-bf16 device runs it."""
    x = ops.parameter([1, 256], np.float32, name="x")
    total = ops.reduce_sum(ops.exp(x), ops.constant(np.array([1], np.int64)), True, name="total")
    ov.save_model(ov.Model([total], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).uniform(70, 80, (1, 256)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision=precision, inputs={"x": data}, target="bf16").to_json()
    row = doc["layers"][0]["target"]
    if _native("bf16"):
        compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        assert runtime_precisions(compiled)["total"] == "f32"  # what the verdict rests on
        assert row["status"] == "protected" and "executes its chain in f32" in row["message"], row
        assert row["max_rel_error"] < 1e-5 and doc["ok"], row
        assert any("judged in f32, as it executes them" in note for note in doc["notes"]), doc["notes"]
    else:
        assert row["status"] == "inaccurate", row


def test_bf16_judges_a_reduction_as_the_kernel_it_is_fused_into_executes_it(tmp_path: Path) -> None:
    """A decomposed softmax with a fully masked row (float32's lowest, as a causal mask of a padded position writes):
    in bf16 that row is -inf. A CPU running bf16 natively fuses the chain into its f32 Softmax kernel, whose execution
    graph does not name the ReduceMax: it was judged as if it ran alone in bf16, an overflow (exit 1), though the
    model's outputs at bf16 equal those at f32. It is judged in the kernel's f32, protected."""
    scores = ops.parameter([1, 4, 8, 8], np.float32, name="scores")
    mask = np.triu(np.full((8, 8), np.finfo(np.float32).min, np.float32), 1)
    mask[0, :] = np.finfo(np.float32).min
    masked = ops.add(scores, ops.constant(mask[None, None]), name="masked")
    last = ops.constant(np.array([-1], np.int64))
    row_max = ops.reduce_max(masked, last, True, name="row_max")
    exp = ops.exp(ops.subtract(masked, row_max))
    probs = ops.divide(exp, ops.reduce_sum(exp, last, True, name="row_sum"), name="probs")
    ov.save_model(ov.Model([probs], [scores]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"scores": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "row_max")
    if not _native("bf16"):  # an all-bf16 device: the mask saturates to bf16's lowest, as OpenVINO converts it
        assert row["status"] == "headroom" and "saturate" in row["message"], row
        return
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    executes = runtime_precisions(compiled)
    assert "row_max" not in executes and "f32" in executes.values()  # fused, into a kernel that runs in f32
    assert np.isfinite(compiled(data)[0]).all()
    assert row["status"] == "protected" and "executes its chain in f32" in row["message"], row
    assert doc["ok"], doc


@pytest.mark.parametrize("fused", [True, False])
def test_bf16_judges_a_marked_chain_as_the_cpu_executes_it(tmp_path: Path, fused: bool) -> None:
    """A chain marked to stay in f32 (rt_info ``precise``) between two MatMuls. A CPU running bf16 natively fuses a
    marked RMSNorm into its RMS kernel, which runs in bf16 and computes the norm in f32 inside: protected, the kernel
    named. A marked chain it does not fuse (Multiply then ReduceSum) it keeps in f32: protected. Elsewhere the marks
    hold."""
    rng = np.random.default_rng(0)
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    h = ops.matmul(x, ops.constant((rng.standard_normal((64, 64)) / 8).astype(np.float32)), False, False)
    last = ops.constant(np.array([-1], np.int64))
    if fused:
        square = ops.power(h, ops.constant(np.float32(2)), name="kept/square")
        reduced = ops.reduce_mean(square, last, True, name="kept/reduce")
        root = ops.sqrt(ops.add(reduced, ops.constant(np.float32(1e-6)), name="kept/add_eps"), name="kept/sqrt")
        y = ops.divide(h, root, name="kept/norm")
    else:
        reduced = ops.reduce_sum(ops.multiply(h, h, name="kept/square"), last, True, name="kept/reduce")
        y = ops.multiply(h, reduced, name="scaled")
    y = ops.matmul(y, ops.constant((rng.standard_normal((64, 64)) / 8).astype(np.float32)), False, False)
    ov.save_model(ov.Model([y], [x]), tmp_path / "plain.xml", compress_to_fp16=False)
    path = f16_models.mark_kept(tmp_path / "plain.xml", tmp_path / "m.xml", ["kept/"])
    doc = audit_model(load_ir(path), target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "kept/reduce")
    if not _native("bf16"):  # an all-bf16 device keeps what is marked
        assert row["status"] == "protected" and "marked in the model" in row["message"], row
        return
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    executes = runtime_precisions(compiled)
    if fused:  # one kernel named after the norm's last op, in bf16; the reduction is not named: the kernel computes
        # it in f32 inside (its RMS kernel), rounding to bf16 only what it loads and stores
        assert executes["kept/norm"] == "bf16" and "kept/reduce" not in executes, executes
        assert row["status"] == "protected" and row["device_precision"] == "bf16", row
        assert "its kernel 'kept/norm' computes the chain in f32 inside" in row["message"], row
        assert not any("though the model marks them" in note for note in doc["notes"]), doc["notes"]
    else:
        assert executes["kept/reduce"] == "f32", executes
        assert row["status"] == "protected" and "marked in the model" in row["message"], row
    assert doc["ok"], doc


def _between_matmuls(body: Any, n: int = 64) -> tuple[Any, Any]:
    """A Parameter ``x`` [4, n], a MatMul of it by the identity (the graph's bf16 kernel before the chain), ``body`` of
    its output, and a MatMul of the result by the identity after it (so the CPU runs the chain in bf16, not in its f32
    tail): the model and the node ``body`` returned last."""
    x = ops.parameter([4, n], np.float32, name="x")
    h = ops.matmul(x, ops.constant(np.eye(n, dtype=np.float32)), False, False, name="mm1")
    y = body(h)
    out = ops.matmul(y, ops.constant(np.eye(n, dtype=np.float32)), False, False, name="mm2")
    return ov.Model([out], [x]), y


def _bf16_kernels(path: Path) -> dict[str, tuple[str, str]]:
    """Each kernel of the CPU's execution graph of the model in bf16: (layerType, originalLayersNames) by name."""
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    return {op.get_friendly_name(): (str(op.get_rt_info()["layerType"].astype(str)),
                                     str(op.get_rt_info()["originalLayersNames"].astype(str)))
            for op in compiled.get_runtime_model().get_ordered_ops()}  # fmt: skip


def _bf16_against_f32(path: Path, data: np.ndarray[Any, Any]) -> float:
    """The largest relative difference of OpenVINO's bf16 run of the model on this CPU from its f32 run."""
    core = ov.Core()
    f32 = core.compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(data)[0]
    bf16 = core.compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})(data)[0]
    return float(np.max(np.abs(bf16.astype(np.float64) - f32) / np.abs(f32)))


@pytest.mark.parametrize("precision", ["default", "f32"])
def test_bf16_judges_a_layernorm_the_cpu_fuses_into_its_mvn_kernel_in_f32(tmp_path: Path, precision: str) -> None:
    """A LayerNorm written out (mean, x - mean, its square, their mean, + eps, Sqrt, Divide) on rows of 100 and
    100.5. A CPU running bf16 natively fuses it into its MVN kernel (named after the Divide), which takes bf16 in and
    computes the mean, the difference and the variance in f32: its bf16 run of the model is 0.2% off the f32 run. Each
    op of the chain was judged in bf16 (the difference of the mean rounded to bf16, 0.5 apart), the variance off by
    0.88: inaccurate, exit 1. It is judged as the kernel computes it, in f32."""

    def norm(h: Any) -> Any:
        last = ops.constant(np.array([-1], np.int64))
        centred = ops.subtract(h, ops.reduce_mean(h, last, True, name="mean"), name="centred")
        variance = ops.reduce_mean(ops.power(centred, ops.constant(np.float32(2)), name="square"), last, True,
                                   name="variance")  # fmt: skip
        root = ops.sqrt(ops.add(variance, ops.constant(np.float32(1e-5)), name="add_eps"), name="root")
        return ops.divide(centred, root, name="normed")

    model, _ = _between_matmuls(norm)
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    data = (100 + 0.5 * np.random.default_rng(0).integers(0, 2, (4, 64))).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision=precision, inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "variance")
    if not _native("bf16"):  # an all-bf16 device: each op rounded, as documented for a CPU without bf16
        assert row["status"] == "inaccurate", row
        return
    kernels = _bf16_kernels(tmp_path / "m.xml")
    assert kernels["normed"][0] == "MVN" and "variance" not in kernels, kernels  # what the verdict rests on
    assert _bf16_against_f32(tmp_path / "m.xml", data) < 0.01  # the device's own bf16 run of the model
    assert not row["failed"] and doc["ok"], row
    if precision == "default":  # captured from the bf16 run, whose marked tensors break the fusion: the kernel's
        # difference was captured rounded to bf16, which the device never makes; no bound settles what that costs
        assert row["status"] == "not-established" and "an audit in precision f32 tells" in row["message"], row
        return
    assert row["status"] == "protected", row
    assert "its kernel 'normed' computes the chain in f32 inside" in row["message"], row
    assert any("computes them inside a kernel that fuses them, in f32" in note for note in doc["notes"]), doc["notes"]


def test_bf16_judges_ops_a_snippets_subgraph_fuses_in_f32(tmp_path: Path) -> None:
    """``h * 1.125 - h``, squared, then ReduceMean, on bf16-exact values whose ``h * 1.125`` rounds up in bf16. A CPU
    running bf16 natively runs the Multiply, the Subtract and the square as one snippets Subgraph, which loads bf16,
    computes in f32 and stores bf16: its bf16 run gives the mean 0.14% off the exact one. Each op was rounded to bf16:
    inaccurate, off by 0.019, exit 1. The ops the kernel computes before the one it stores are judged in f32."""

    def chain(h: Any) -> Any:
        scaled = ops.multiply(h, ops.constant(np.float32(1.125)), name="scale")
        diff = ops.subtract(scaled, h, name="diff")
        mean = ops.reduce_mean(ops.multiply(diff, diff, name="square"), ops.constant(np.array([-1], np.int64)), True,
                               name="mean_square")  # fmt: skip
        return ops.multiply(ops.constant(np.ones((1, 64), np.float32)), mean, name="use")

    model, _ = _between_matmuls(chain)
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    k = np.array([5 + 8 * (i % 12) for i in range(64)])
    data = np.tile(64 * (1 + k / 128), (4, 1)).astype(np.float32)
    exact = np.mean((0.125 * data.astype(np.float64)) ** 2, axis=-1)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "mean_square")
    if not _native("bf16"):
        assert row["status"] == "inaccurate", row
        return
    kernels = _bf16_kernels(tmp_path / "m.xml")
    assert kernels["square"][0] == "Subgraph", kernels
    assert {"scale", "diff", "square"} <= set(kernels["square"][1].split(",")), kernels
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    assert np.max(np.abs(compiled(data)[0][:, 0] / exact - 1)) < 0.01  # the device's own bf16 run of the model
    assert row["status"] == "headroom" and not row["failed"] and row["max_rel_error"] < 0.01, row
    above = {stage["name"]: stage["kept"] for stage in row["above"]}
    assert above == {"mm1": False, "scale": True, "diff": True}, row["above"]  # computed in f32 inside the kernel
    assert "computed in f32 inside one of the device's kernels" in row["message"], row
    assert doc["ok"], doc


def test_bf16_judges_a_bias_the_cpu_adds_to_its_matmuls_accumulator_in_f32(tmp_path: Path) -> None:
    """``x @ W - 1000`` (a Linear's bias) from bf16-exact inputs whose product is 1000.296875, then its square's mean.
    A CPU running bf16 natively fuses the bias into its FullyConnected kernel (named after the Add; the MatMul is not
    named), which adds it to the f32 accumulator and rounds once: its bf16 run is 0.3% off. The MatMul's output was
    taken rounded to bf16 (1000) before the Add, which cancelled to 0: inaccurate, "off by 1", exit 1."""
    x = ops.parameter([4, 16], np.float32, name="x")
    weights = np.zeros((16, 64), np.float32)
    weights[:2, :] = 1
    h = ops.matmul(x, ops.constant(weights), False, False, name="fc")
    biased = ops.add(h, ops.constant(np.full((1, 64), -1000, np.float32)), name="bias")
    mean = ops.reduce_mean(ops.multiply(biased, biased, name="square"), ops.constant(np.array([-1], np.int64)), True,
                           name="mean_square")  # fmt: skip
    used = ops.multiply(ops.constant(np.ones((1, 64), np.float32)), mean)
    out = ops.matmul(used, ops.constant(np.eye(64, dtype=np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.zeros((4, 16), np.float32)
    data[:, 0], data[:, 1] = 1000, [0.296875, 0.5, 0.75, 1.25]  # bf16-exact
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "mean_square")
    if not _native("bf16"):  # an all-bf16 device: the MatMul's output rounded before the Add
        assert row["status"] == "inaccurate", row
        return
    kernels = _bf16_kernels(tmp_path / "m.xml")
    assert kernels["bias"][0] == "FullyConnected" and "fc" not in {n for _, names in kernels.values()
                                                                  for n in names.split(",")}, kernels  # fmt: skip
    compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    exact = data[:, 1].astype(np.float64) ** 2
    assert np.max(np.abs(compiled(data)[0][:, 0] / exact - 1)) < 0.01  # the device's own bf16 run of the model
    assert not row["failed"] and row["status"] in ("headroom", "not-established"), row
    assert "cancel" not in row["message"], row


def test_bf16_flushes_what_the_cpu_flushes_below_its_smallest_normal(tmp_path: Path) -> None:
    """Products near 1e-39, below bf16's smallest normal (1.18e-38), summed to 1e-37. The CPU's bf16 conversion
    (AVX512-BF16's) flushes them to 0 as the kernel computing them stores them, and its bf16 run of the model gives 0
    for every output; the emulation kept bf16's subnormals (ml_dtypes): the row said headroom, the device agreeing."""

    def chain(h: Any) -> Any:
        tiny = ops.multiply(h, ops.constant(np.float32(1e-19)), name="tiny")
        total = ops.reduce_sum(tiny, ops.constant(np.array([-1], np.int64)), True, name="total")
        return ops.multiply(ops.constant(np.ones((1, 64), np.float32)), total, name="use")

    model, _ = _between_matmuls(chain)
    ov.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    data = (1e-20 * (1 + np.random.default_rng(0).random((4, 64)))).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32", inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "total")
    if _native("bf16"):  # the device's own bf16 run of the model: every output 0, where the f32 run's are normal
        core = ov.Core()
        f32 = core.compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(data)[0]
        bf16 = core.compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})(data)[0]
        assert np.all(bf16 == 0) and np.all(np.abs(f32) > 2.0**-126), (f32, bf16)
    assert row["status"] == "inaccurate" and row["failed"], row
    assert row["underflowed"] == data.size and "flush to 0 in bf16" in row["message"], row
    assert row["device_agrees"] is not True, row
    # the emulation on its own: what the CPU's conversion does, not ml_dtypes' gradual underflow
    products = (data.astype(np.float64) * 1e-19).astype(np.float32)
    emu = emulate("ReduceSum", [products], np.array([-1]), True, "bf16")
    assert emu.result is not None and np.all(np.asarray(emu.result, np.float64) == 0)
    assert emu.stages[0].underflowed == data.size


@pytest.mark.parametrize("other", ["norm", "peak"])
def test_bf16_does_not_judge_a_chain_by_a_kernel_another_node_is_named_for(tmp_path: Path, other: str) -> None:
    """An RMS norm's ReduceMean named ``norm`` beside a ReduceMax also named ``norm``, which a CPU running bf16 natively
    keeps in f32 at the graph's tail: the RMS norm, which the CPU runs fused in its bf16 RMS kernel, borrowed the
    ReduceMax's f32 kernel and was protected ("the device executes its chain in f32"). With the name shared, what the
    device runs either in is not known; with names of their own, the norm is judged as its bf16 RMS kernel computes it,
    in f32 inside."""
    path = ov_models.norm_beside_peak(tmp_path / "m.xml", peak=other)
    doc = audit_model(load_ir(path), target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["type"] == "ReduceMean")
    if not _native("bf16"):  # an all-bf16 device: no execution graph is read, names do not matter
        assert row["status"] == "headroom", row
        return
    executes = runtime_precisions(ov.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"}))
    assert executes[other] == "f32" and "bf16" in executes.values(), executes  # the ReduceMax's kernel, and the RMS's
    if other == "norm":
        assert row["status"] == "not-established", row
        assert row["message"] == (
            "not established: 2 nodes of the model are named 'norm', and its execution graph names kernels by node "
            "name: what the model runs its chain in, at bf16, is not known; give the nodes names of their own"
        )
    else:
        assert row["status"] == "protected" and row["device_precision"] == "bf16", row
        assert "computes the chain in f32 inside" in row["message"], row


def test_a_constant_past_the_types_range_saturates_as_openvino_converts_it(tmp_path: Path) -> None:
    """OpenVINO converts a model's constants to f16 or bf16 saturating: float32's lowest, the value a causal mask
    writes, becomes the type's lowest, not -inf. The emulation rounded it to -inf, so a max over a fully masked row
    overflowed where the device's stays finite."""
    lowest = np.finfo(np.float32).min
    mask = np.triu(np.full((8, 8), lowest, np.float32), 1)
    mask[0, :] = lowest
    mask[1, 1:3] = -1e5  # past f16's range only
    x = ops.parameter([8, 8], np.float32, name="x")
    ov.save_model(ov.Model([ops.add(x, ops.constant(mask))], [x]), tmp_path / "f16.xml")  # compress_to_fp16
    read = ov.Core().read_model(tmp_path / "f16.xml")
    [compressed] = [op for op in read.get_ops() if op.get_type_name() == "Constant"]
    assert compressed.get_element_type() == ov.Type.f16
    stored = compressed.get_data().astype(np.float64)
    np.testing.assert_array_equal(stored, np.where(mask < -65504, -65504.0, mask))  # saturated, not -inf
    data = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    emulation = emulate("ReduceMax", [data, mask], np.array([-1]), True, "f16", op="Add", constants=[False, True])
    openvino = _openvino_chain("Add", "ReduceMax", [data, stored.astype(np.float32)], "f16")
    np.testing.assert_array_equal(emulation.result.astype(np.float64), openvino)
    assert emulation.non_finite == 0 and emulation.saturated == 30
    assert emulate("ReduceMax", [data, mask], np.array([-1]), True, "f16", op="Add").non_finite == 1  # a given input


def test_a_max_over_a_masked_row_is_judged_as_the_cpu_converts_the_mask(tmp_path: Path) -> None:
    """A ReduceMax over a causal mask (float32's lowest) with a fully masked row, not fused into a softmax: where a CPU
    runs the model in bf16 natively, its max stays finite (the output, NaN where it is inf, has none). It was an
    overflow (exit 1), rounded to -inf as no OpenVINO conversion of a constant rounds it, and "the device executes
    this reduction in f32" was the audited run's, not the model's."""
    scores = ops.parameter([1, 4, 8, 8], np.float32, name="scores")
    eye = ops.constant(np.eye(8, dtype=np.float32))
    h = ops.matmul(scores, eye, False, False)
    mask = np.triu(np.full((8, 8), np.finfo(np.float32).min, np.float32), 1)
    mask[0, :] = np.finfo(np.float32).min
    masked = ops.add(h, ops.constant(mask[None, None]), name="masked")
    row_max = ops.reduce_max(masked, ops.constant(np.array([-1], np.int64)), True, name="row_max")
    zeroed = ops.multiply(row_max, ops.constant(np.float32(0)))  # NaN exactly where the max is inf
    out = ops.matmul(ops.multiply(h, zeroed), eye, False, False)
    ov.save_model(ov.Model([out], [scores]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"scores": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "row_max")
    assert row["status"] == "headroom" and row["overflowed"] == 0 and doc["ok"], row
    assert "29 value(s) of a Constant past bf16's largest finite value saturate to it" in row["message"], row
    if _native("bf16"):
        compiled = ov.Core().compile_model(tmp_path / "m.xml", "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        assert runtime_precisions(compiled)["row_max"] == "bf16"
        assert not np.isnan(compiled(data)[0]).any()  # the device's max is finite
        assert row["device_agrees"] is True and row["device_precision"] == "bf16", row
        assert "executes this reduction in f32" not in row["message"], row


def test_a_model_at_ordinary_scale_has_no_overflow_in_f16() -> None:
    """The tiny model's activations are near 0.004: no norm comes near f16's largest value, and one whose squares
    (1.5e-5) f16 holds only as subnormals, with fewer digits, is off by more than f16's rtol against its mean plus eps
    (inaccurate, judged relatively), which a tolerance grown with the 64 elements it averages hid."""
    doc = audit_model(load_ir(f16_models.LLAMA), precision="f32", target="f16")
    norms = [layer for layer in doc.layers if layer.type == "ReduceMean"]
    assert norms and all(layer.target is not None and layer.target.status in ("headroom", "inaccurate")
                         for layer in norms)  # fmt: skip
    for layer in norms:
        assert layer.target is not None and (layer.target.largest or 0) < 1.0 and not layer.target.overflowed
        if layer.target.status == "inaccurate":
            assert "absolute tolerance" in layer.target.message and "plus the 1e-06 Add" in layer.target.message
    # ReduceProd over i32 shapes: integer in f16 too, said so, not passed silently
    [prod] = [layer for layer in doc.layers if layer.type == "ReduceProd"]
    assert prod.target is not None and prod.target.status == "protected" and "integer" in prod.target.message


# -- the sample, the command line and the API ----------------------------------------------------------------
def test_the_sample_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "audit", str(SAMPLE), "--precision", "f32", "--target", "f16", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["ok"] is False
    rows = {layer["layer_name"]: layer["target"] for layer in doc["layers"]}
    assert rows["exposed/variance"]["status"] == "overflow"
    assert "Power 'exposed/square'" in rows["exposed/variance"]["message"]
    assert rows["kept/variance"]["status"] == "protected"
    assert doc["target"]["counts"] == {"overflow": 1, "protected": 1}
    status, out, _ = run_cli(capsys, "audit", str(SAMPLE), "--precision", "f32", "--target", "f16")
    assert status == 1
    assert "OVERFLOW" in out and "protected" in out and "1 reduction(s) overflow" in out
    assert "exposed/variance: f16: Power 'exposed/square'" in out
    status, out, _ = run_cli(capsys, "audit", str(SAMPLE), "--target", "bf16")
    assert status == 0 and "bf16" in out and "no overflow" in out
    status, out, _ = run_cli(capsys, "audit", str(SAMPLE))  # without a target, the same model passes
    assert status == 0


def test_a_target_device_that_is_not_here_is_emulated(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "audit", str(SAMPLE), "--target", "f16", "--device", "NPU", "--format", "json")
    doc = json.loads(out)
    assert status == 1 and doc["device"] == "CPU"
    assert doc["target"]["device"] == "NPU" and doc["target"]["emulated"] is not _native("f16")
    assert any("NPU is not available here" in note for note in doc["target"]["notes"])
    status, _, err = run_cli(capsys, "audit", str(SAMPLE), "--device", "NPU")  # no target: the device must be here
    assert status != 0 and "not available" in err


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("target_api")
    with TestClient(create_app(Settings(store=folder / "store", run_timeout_s=60.0)), base_url="http://127.0.0.1") as c:
        yield c


def test_the_target_over_http(client: TestClient) -> None:
    response = client.post(
        "/v1/models", files=upload(SAMPLE.read_bytes(), SAMPLE.with_suffix(".bin").read_bytes(), "rmsnorm_f16.xml")
    )
    assert response.status_code in (200, 201), response.text
    mid = response.json()["id"]
    response = client.post(f"/v1/models/{mid}/audit", json={"target": "f16", "precision": "f32"})
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["ok"] is False and doc["target"]["precision"] == "f16" and doc["target"]["ok"] is False
    rows = {layer["layer_name"]: layer["target"]["status"] for layer in doc["layers"]}
    assert rows == {"exposed/variance": "overflow", "kept/variance": "protected"}
    assert client.post(f"/v1/models/{mid}/audit", json={"target": "f8"}).status_code == 400
    plain = client.post(f"/v1/models/{mid}/audit", json={}).json()
    assert plain["ok"] is True and plain["target"] is None


def test_reductions_whose_chain_is_not_captured_are_said_not_examined() -> None:
    """Inside If and Loop bodies (the exported Loop/If model) nothing passes silently: each row says why (one in the
    body the If took is judged from that body's run, and says so)."""
    doc = audit_model(load_ir(ROOT / "tests" / "exports" / "loop_trip_count" / "model.xml"), target="f16")
    bodies = [layer for layer in doc.layers if layer.body_path is not None]
    assert len(bodies) == 3
    for layer in bodies:
        assert layer.target is not None and layer.target.status == "not-established" and not layer.target.failed
        if "run alone" in layer.target.message:  # the body the If took: judged, not established on one element
            assert "judged from the then body of If" in layer.target.message, layer.target.message
            continue
        assert layer.target.message.startswith("not examined: ")
        assert layer.target.overflowed is None and layer.target.largest is None
    assert doc.target is not None and doc.target.counts == {"not-established": len(doc.layers)}
    assert doc.ok is True and doc.complete is False


def test_a_sum_that_cancels_is_judged_against_what_it_adds(tmp_path: Path) -> None:
    """1000.25 - 1000 rounds to 0 in f16: an error of 0.25 against terms whose |x| add to 2,000, which is what
    rounding the inputs to f16 costs any device. As run judges a sum, the row passes, its error bound shown; terms
    of N(0, 1) (a LayerNorm's mean) failed every f16 and bf16 target before."""
    x = ops.parameter([2, 8], ov.Type.f32, name="x")
    x.output(0).set_names({"x"})
    total = ops.reduce_sum(x, ops.constant(np.array([-1], np.int64)), False)
    total.set_friendly_name("cancelling_sum")
    path = tmp_path / "cancel.xml"
    ov.save_model(ov.Model([total], [x], "cancel"), str(path), compress_to_fp16=False)
    data = np.zeros((2, 8), np.float32)
    data[:, 0], data[:, 1] = 1000.25, -1000.0  # f16 spacing at 1000 is 0.5: 1000.25 rounds to 1000
    data[:, 2:] = np.arange(6, dtype=np.float32) / 64  # so the input is not constant
    doc = audit_model(load_ir(path), inputs={"x": data}, precision="f32", target="f16")
    [row] = doc.layers
    assert row.status == "ok"  # f32 computes it right
    assert row.target is not None and row.target.status == "headroom" and not row.target.failed
    assert row.target.overflowed == 0 and row.target.error_bound is not None and row.target.error_bound > 0.1
    assert doc.ok is True
    normal = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    for target in ("f16", "bf16"):
        wide = ops.parameter([8, 32], ov.Type.f32, name="x")
        mean = ops.reduce_mean(wide, ops.constant(np.array([-1], np.int64)), False)
        ov.save_model(ov.Model([mean], [wide], "mean"), str(tmp_path / "mean.xml"), compress_to_fp16=False)
        doc = audit_model(load_ir(tmp_path / "mean.xml"), inputs={"x": normal}, precision="f32", target=target)
        # a bf16 CPU runs the mean, all of the graph's tail, in f32
        judged = "protected" if target == "bf16" and _native("bf16") else "headroom"
        assert doc.layers[0].target is not None and doc.layers[0].target.status == judged, doc.layers[0].target


def test_a_sum_whose_terms_flush_to_zero_gets_no_allowance_for_them() -> None:
    """The allowance covers each term rounded by a unit roundoff; a term that flushes to 0 is lost whole. 200,000
    terms near 2e-8, below f16's smallest subnormal, sum to 0 in f16 against 0.0044: still inaccurate."""
    x = np.random.default_rng(1).uniform(1.5e-8, 2.9e-8, (1, 200_000)).astype(np.float32)
    emulation = emulate("ReduceSum", [x], np.array([-1]), True, "f16")
    assert emulation.result is not None and emulation.result.item() == 0 and emulation.expected.item() > 4e-3
    assert emulation.comparison is not None and not emulation.comparison.ok
    assert emulation.stages[0].underflowed == 200_000


def test_an_f16_verdict_does_not_rest_on_bf16_rounding(tmp_path: Path) -> None:
    """65,480 fits in f16; a default-precision run on a bf16 CPU captures it as 65,536, and the emulation from
    that capture called it an f16 OVERFLOW. Where the capture is bf16, a value past the limit by no more than bf16's
    rounding is not established; in f32 it is headroom."""
    x = ops.parameter([1, 16], np.float32, name="x")
    top = ops.reduce_max(ops.matmul(x, ops.constant(np.eye(16, dtype=np.float32)), False, False),
                         ops.constant(np.array([1], np.int64)), True, name="top")  # fmt: skip
    ov.save_model(ov.Model([top], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.linspace(1000, 65480, 16, dtype=np.float32).reshape(1, 16)
    for doc, row in _by_capture(tmp_path / "m.xml", data):
        if doc["effective_precision"] == "bf16":
            assert row["status"] == "not-established" and "by no more than bf16's rounding" in row["message"], row
        else:
            assert row["status"] == "headroom", row
        assert doc["ok"], doc


def _by_capture(path: Path, data: np.ndarray[Any, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """The f16 audit of ``path`` on ``data`` and its first row's target, at the default precision (bf16 on a bf16 CPU)
    and at f32."""
    for precision in ("default", "f32"):
        doc = audit_model(load_ir(path), precision=precision, inputs={"x": data}, target="f16").to_json()
        yield doc, doc["layers"][0]["target"]


def test_a_pass_the_bf16_capture_cannot_show_is_not_established(tmp_path: Path) -> None:
    """Exp then ReduceMax of values up to 10.996: f16 rounds it to 10.992, which moves exp by 0.38%, past f16's
    tolerance of 0.1%. A bf16 run captures values f16 holds exactly, so the emulation from them sees no such rounding
    and passed; without a bound that settles it, that pass is not established. From an f32 capture it is inaccurate,
    as OpenVINO's own f16 Exp and ReduceMax compute it."""
    x = ops.parameter([1, 64], np.float32, name="x")
    mixed = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32)), False, False)  # so that a bf16 run rounds x
    top = ops.reduce_max(ops.exp(mixed), ops.constant(np.array([1], np.int64)), True, name="top")
    ov.save_model(ov.Model([top], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.linspace(10.0, 10.996, 64, dtype=np.float32).reshape(1, 64)  # 10.996 is 10.992 in f16
    exact = float(np.exp(np.float64(data)).max())
    device = float(_openvino_chain("Exp", "ReduceMax", [data], "f16").max())
    assert abs(device - exact) / exact > 1e-3  # f16 really errs past its tolerance here
    for doc, row in _by_capture(tmp_path / "m.xml", data):
        if doc["effective_precision"] == "bf16":
            assert row["status"] == "not-established" and "precision f32" in row["message"], row
        else:
            assert row["status"] == "inaccurate", row


def test_a_chain_fed_by_the_models_inputs_is_judged_at_any_precision(tmp_path: Path) -> None:
    """A Divide (which no bound settles) of the Parameter by a Constant, then ReduceSum: both are captured as given, in
    f32, at any precision, so the emulation shows f16's rounding of them, and its pass stands from a bf16 run too."""
    x = ops.parameter([1, 64], np.float32, name="x")
    total = ops.reduce_sum(ops.divide(x, ops.constant(np.float32(3))), ops.constant(np.array([1], np.int64)), True)
    ov.save_model(ov.Model([total], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.linspace(10.0, 10.996, 64, dtype=np.float32).reshape(1, 64)
    assert [row["status"] for _, row in _by_capture(tmp_path / "m.xml", data)] == ["headroom", "headroom"]


def _if_model(path: Path, *, top_level: bool) -> Path:
    """An If on an input condition with a ReduceMean in its then body and a ReduceMax in its else body (the
    default inputs take the then body); with ``top_level``, a ReduceSum of the same input beside it."""
    axes = ops.constant(np.array([1], dtype=np.int64))
    cond, x = ops.parameter([], np.bool_, name="cond"), ops.parameter([2, 8], np.float32, name="x")
    then_x, else_x = ops.parameter([2, 8], np.float32), ops.parameter([2, 8], np.float32)
    then_out, else_out = ops.result(ops.reduce_mean(then_x, axes)), ops.result(ops.reduce_max(else_x, axes))
    branch = ops.if_op(cond)
    branch.set_then_body(ov.Model([then_out], [then_x]))
    branch.set_else_body(ov.Model([else_out], [else_x]))
    branch.set_input(x.output(0), then_x, else_x)
    outputs = [ops.result(branch.set_output(then_out, else_out))]
    if top_level:
        outputs.append(ops.result(ops.reduce_sum(x, axes)))
    ov.save_model(ov.Model(outputs, [cond, x]), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize(
    ("top_level", "said"), [(True, "no overflow in the 2 examined"), (False, "no overflow in the 1 examined")]
)
def test_the_verdict_claims_no_overflow_only_of_the_reductions_examined(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, top_level: bool, said: str
) -> None:
    """Of the reductions in an If's bodies one did not run (not examined) and one, in the body taken, is judged from
    that body's run: the result line says of how many it claims no overflow."""
    model = _if_model(tmp_path / "if.xml", top_level=top_level)
    status, out, _ = run_cli(capsys, "audit", str(model), "--target", "f16", "--format", "json")
    counts = json.loads(out)["target"]["counts"]
    assert status == 0 and counts["not-established"] == 1 and counts.get("headroom", 0) == 1 + int(top_level), counts
    status, out, _ = run_cli(capsys, "audit", str(model), "--target", "f16")
    result = out.splitlines()[-1]
    assert status == 0 and f"f16 (emulated): {said} (" in result, result


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_a_model_without_reductions_claims_nothing_of_the_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    """A model with no reduction (a ViT whose LayerNorms are MVN): the result line says there was nothing to examine,
    not "no overflow ()" of nothing."""
    data = ops.parameter([2, 8], ov.Type.f32, name="x")
    ov.save_model(ov.Model([ops.relu(ops.mvn(data, [1], True, 1e-5, "inside_sqrt"))], [data]), tmp_path / "m.xml")
    status, out, _ = run_cli(capsys, "audit", str(tmp_path / "m.xml"), "--target", target)
    result = out.splitlines()[-1]
    assert status == 0 and f"{target}: no reduction to examine" in result, result
    assert "no overflow" not in result and "()" not in result, result


def test_an_overflow_one_op_further_up_is_found_where_it_happens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Power then Divide then ReduceSum: the Divide brings the square back into f16's range, but in f16 the Power's
    square is already infinite. The Divide's input, rounded to the target type, overflows."""
    x = ops.parameter([1, 64], np.float32, name="x")
    square = ops.power(x, ops.constant(np.float32(2)))
    square.set_friendly_name("square")
    scaled = ops.divide(square, ops.constant(np.float32(4096)))
    scaled.set_friendly_name("scaled")
    total = ops.reduce_sum(scaled, ops.constant(np.array([1], np.int64)), True)
    total.set_friendly_name("total")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([total], [x]), path, compress_to_fp16=False)
    np.save(tmp_path / "x.npy", np.full((1, 64), 300.0, np.float32))  # 300^2 = 9e4 > 65504; 9e4 / 4096 fits
    status, out, _ = run_cli(capsys, "audit", str(path), "--target", "f16", "--precision", "f32",
                             "--input", f"x={tmp_path / 'x.npy'}", "--format", "json")  # fmt: skip
    row = json.loads(out)["layers"][0]["target"]
    assert status == 1 and row["status"] == "overflow", row
    assert row["message"].startswith("Power 'square'") and "reaches 9e+04 > 65504" in row["message"], row
    assert row["overflowed"] == 64, row


def _stateful_rms(path: Path) -> Path:
    """A stateful model whose cache (the state and this run's embedding rows) goes through an RMS norm and a ReduceSum
    'pool' over the sequence; every decode step's argmax is token 1, whose row is far larger than token 0's: the later
    steps reach the largest magnitudes."""
    from openvino.op.util import Variable, VariableInfo

    hidden = 64
    table = np.full((4, hidden), 0.01, np.float32)
    table[1] = 30.0
    ids = ops.parameter([1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    rows = ops.gather(ops.constant(table), ids, ops.constant(np.int64(0)))
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([1, -1, hidden]), ov.Type.f32, "kv"
    variable = Variable(info)
    cache = ops.concat([ops.read_value(variable), rows], 1)
    pooled = ops.reduce_sum(ov_models._rms_block(cache, hidden, 0), ops.constant(np.array([1], np.int64)), False,
                            name="pool")  # fmt: skip
    bias = np.zeros(4, np.float32)
    bias[1] = 1e6
    head = ops.matmul(pooled, ops.constant(np.zeros((hidden, 4), np.float32)), False, False)
    logits = ops.add(head, ops.constant(bias))
    logits.output(0).set_names({"logits"})
    ov.save_model(ov.Model([ops.result(logits)], [ops.assign(cache, variable)], [ids], "stateful_rms"), path,
                  compress_to_fp16=False)  # fmt: skip
    return path


def test_a_target_verdict_on_an_unobserved_kernel_is_not_established(tmp_path: Path) -> None:
    """For a device not here, the CPU's decode steps (whose chains do not run on the device again) read what the device
    executes a reduction in from the audited run, where its tensors were made outputs: the row said so and was not
    established, but its target verdict was `headroom`, "the device executes this reduction in f32 (its execution
    graph)", of a reduction the model runs in bf16. That verdict now says it is not established, and why. (A device not
    here is a GPU or an NPU, which never run bf16: the audit refuses a bf16 target for them, so the case is f16's, on a
    CPU running f16 natively.)"""
    if not _native("f16"):
        pytest.skip("the CPU runs f16 through f32: the audited and the plain runs execute the same kernels")
    doc = audit_model(load_ir(_stateful_rms(tmp_path / "m.xml")), target="f16", device="GPU", precision="f16",
                      steps=2, inputs={"input_ids": np.array([[0, 0]])})  # fmt: skip
    judged = [layer for layer in doc.layers if layer.target is not None and layer.target.step]
    assert judged, [(layer.layer_name, layer.target) for layer in doc.layers]  # a decode step's figures
    for layer in judged:
        assert layer.target is not None and layer.not_established is not None
        assert "and observed (its tensors made outputs)" in layer.not_established, layer
        assert layer.target.status == "not-established", layer.target
        assert layer.target.message.startswith(f"not established: {layer.not_established}; the device's figures here")
        assert "(its execution graph)" not in layer.target.message


def test_a_chain_rebuilt_on_the_device_converts_its_constants_as_openvino_does(tmp_path: Path) -> None:
    """A Multiply by a Constant holding float32's largest value, then a ReduceMax: OpenVINO converts that constant to
    bf16's largest (the model's own bf16 run stays finite), as the emulation does, but the chain rebuilt on the device
    was fed it rounded to inf, so the device's output was inf and "disagreed" with the emulation."""
    if not _native("bf16"):
        pytest.skip("the chains run on the device only where it executes bf16 natively")
    x = ops.parameter([1, 4, 8], np.float32, name="x")
    eye = ops.constant(np.eye(8, dtype=np.float32))
    h = ops.matmul(x, eye, False, False, name="h")
    scale = np.ones((1, 1, 8), np.float32)
    scale[..., :3] = np.finfo(np.float32).max
    peak = ops.reduce_max(ops.multiply(h, ops.constant(scale), name="scaled"), ops.constant(np.array([-1], np.int64)),
                          True, name="peak")  # fmt: skip
    out = ops.matmul(ops.multiply(h, ops.multiply(peak, ops.constant(np.float32(0)))), eye, False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.random.default_rng(0).uniform(0.1, 0.5, (1, 4, 8)).astype(np.float32)
    alone = ops.parameter([1, 4, 8], np.float32)
    product = ov.Model([ops.multiply(ops.matmul(alone, eye, False, False), ops.constant(scale))], [alone])
    own = ov.Core().compile_model(product, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    assert np.isfinite(own({0: data})[0]).all()  # OpenVINO's own bf16 run: the constant saturated
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"x": data}, target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "peak")
    assert row["status"] == "headroom" and row["device_precision"] == "bf16", row
    assert row["device_agrees"] is True and row["device_max_rel_diff"] == 0.0, row


@pytest.mark.parametrize("op", sorted(RANGE_OPS))
def test_every_op_a_chain_can_hold_is_rebuilt_on_the_device(op: str) -> None:
    """A chain whose op is Divide, Add or Subtract (ops a chain takes) was never rebuilt on the device, while the
    document said each chain ran there: the device's result of every op a chain holds is OpenVINO's own, and equals
    the emulation's within the bf16 tolerance, with the same elements finite."""
    args = _chain_inputs("Multiply" if op == "SquaredDifference" else op, 3.0, seed=4)
    [result], _ = run_on_device([(op, args, "ReduceSum", np.array([-1]), True, None)], "CPU", "bf16")
    assert result is not None, op
    emulated = emulate("ReduceSum", args, np.array([-1]), True, "bf16", op=op).result.astype(np.float64)
    np.testing.assert_array_equal(np.isfinite(result), np.isfinite(emulated))
    atol, rtol = tolerances("bf16", None, args[0].size, emulated.size)
    np.testing.assert_allclose(result, emulated, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["multiply", "subtract", "divide", "add"])
def test_a_chain_through_any_range_op_runs_on_a_native_bf16_cpu(tmp_path: Path, op: str) -> None:
    """MatMul, then the chain's op by 1000.5, then ReduceSum: on a CPU that executes bf16 natively the chain runs there
    too and its row compares the device with the emulation, whatever the op (a Subtract's row was left without)."""
    if not _native("bf16"):
        pytest.skip("the chains run on the device only where it executes bf16 natively")
    rng = np.random.default_rng(0)
    x = ops.parameter([4, 64], np.float32, name="x")
    h = ops.matmul(x, ops.constant((np.eye(64) + rng.normal(0, 1e-3, (64, 64))).astype(np.float32)), False, False)
    pre = getattr(ops, op)(h, ops.constant(np.float32(1000.5)), name="pre")
    red = ops.reduce_sum(pre, ops.constant(np.array([1], np.int64)), True, name="red")
    out = ops.matmul(ops.multiply(h, red), ops.constant(rng.normal(0, 1, (64, 8)).astype(np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    data = rng.uniform(1000, 1001, (4, 64)).astype(np.float32)
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"x": data}, precision="f32", target="bf16").to_json()
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "red")
    assert row["device_agrees"] is not None and row["device_precision"] is not None, row
    assert any("chain also ran on it" in note for note in doc["target"]["notes"]), doc["target"]


# -- the ops above a chain -------------------------------------------------------------------------------------------
def _deep_chain(path: Path, middle: str, *, count: int = 1) -> Path:
    """``count`` reductions of x -> Power(x, 2) -> Add(1e-6) -> ``middle`` (an op that brings the square back into
    range, or saturates it) -> ReduceMean: the Power is two ops above each reduction."""
    x = ops.parameter([1, 64], np.float32, name="x")
    results = []
    for k in range(count):
        square = ops.power(x, ops.constant(np.float32(2)), name=f"sq{k}")
        shifted = ops.add(square, ops.constant(np.float32(1e-6 * (k + 1))), name=f"addeps{k}")
        makers = {"Sqrt": ops.sqrt, "Log": ops.log, "Tanh": ops.tanh, "Erf": ops.erf,
                  "Clamp": lambda v: ops.clamp(v, -5.0, 5.0)}  # fmt: skip
        mid = makers[middle](shifted)
        mid.set_friendly_name(f"mid{k}")
        results.append(ops.result(ops.reduce_mean(mid, ops.constant(np.array([1], np.int64)), True, name=f"red{k}")))
    ov.save_model(ov.Model(results, [x], "deep"), path, compress_to_fp16=False)
    return path


def _openvino_deep_chain(middle: str, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """OpenVINO's own f16 evaluation of the chain of :func:`_deep_chain`, op by op (``Node.evaluate``)."""
    param = ops.parameter(list(x.shape), ov.Type.f16)
    square = ops.power(param, ops.constant(np.float16(2)))
    shifted = ops.add(square, ops.constant(np.float16(1e-6)))
    mid = {"Sqrt": ops.sqrt, "Log": ops.log, "Tanh": ops.tanh, "Erf": ops.erf,
           "Clamp": lambda v: ops.clamp(v, -5.0, 5.0)}[middle](shifted)  # fmt: skip
    axes = np.array([1], np.int64)
    reduced = ops.reduce_mean(mid, ops.constant(axes), True)
    value = _tensor(x, "f16")
    value = _evaluate(square, [value, _tensor(np.array(2.0, np.float32), "f16")])
    value = _evaluate(shifted, [value, _tensor(np.array(1e-6, np.float32), "f16")])
    value = _evaluate(mid, [value])
    out = _evaluate(reduced, [value, ov.Tensor(axes)])
    return np.array(out.data).astype(np.float64)


_LOUD = np.random.default_rng(0).uniform(300, 400, (1, 64)).astype(np.float32)  # squares past 65504


@pytest.mark.parametrize("middle", ["Sqrt", "Log"])
def test_an_overflow_above_an_op_that_brings_the_range_back_is_found_where_it_happens(
    tmp_path: Path, middle: str
) -> None:
    """x (300..400) -> Power -> Add -> Sqrt (or Log) -> ReduceMean: in f16 the square is inf, and so is the mean, as
    OpenVINO's own f16 evaluation says; the reduction's input alone (the Sqrt's, ~400) showed nothing, and the row
    said "headroom x164"."""
    assert not np.isfinite(_openvino_deep_chain(middle, _LOUD)).all()
    doc = audit_model(load_ir(_deep_chain(tmp_path / "m.xml", middle)), inputs={"x": _LOUD}, precision="f32",
                      target="f16").to_json()  # fmt: skip
    row = doc["layers"][0]["target"]
    assert row["status"] == "overflow" and row["failed"], row
    assert row["message"].startswith("Power 'sq0' (layer ") and "> 65504" in row["message"], row
    power = next(stage for stage in row["above"] if stage["op"] == "Power")
    assert power["name"] == "sq0" and power["overflowed"] == 64 and power["layer_id"] is not None, row["above"]
    assert row["overflowed"] == 64 and [stage["op"] for stage in row["stages"]] == ["input", "ReduceMean"], row
    assert row["headroom"] < 1 and row["largest"] > 65504, row  # the values above count in the headroom factor
    assert doc["target"]["ok"] is False


@pytest.mark.parametrize("middle", ["Tanh", "Clamp"])
def test_an_overflow_above_that_an_op_saturates_is_not_the_reductions(tmp_path: Path, middle: str) -> None:
    """The same square through a Tanh or a Clamp: in f16 the square is inf, but the Tanh brings it back to 1 (the Clamp
    to 5), as OpenVINO's own f16 evaluation says: no overflow of the reduction, said so in its row."""
    expected = _openvino_deep_chain(middle, _LOUD)
    assert np.isfinite(expected).all()
    doc = audit_model(load_ir(_deep_chain(tmp_path / "m.xml", middle)), inputs={"x": _LOUD}, precision="f32",
                      target="f16").to_json()  # fmt: skip
    row = doc["layers"][0]["target"]
    assert row["status"] != "overflow" and not row["failed"], row
    assert "Power 'sq0' (layer " in row["message"] and "back into range" in row["message"], row
    assert doc["target"]["ok"] is True


def test_an_overflow_above_an_op_not_emulated_is_not_established(tmp_path: Path) -> None:
    """Through an Erf, which the emulation does not compute: whether the square's inf reaches the reduction is not
    known, and the row says which op above reaches what and which op between was not emulated."""
    doc = audit_model(load_ir(_deep_chain(tmp_path / "m.xml", "Erf")), inputs={"x": _LOUD}, precision="f32",
                      target="f16").to_json()  # fmt: skip
    row = doc["layers"][0]["target"]
    assert row["status"] == "not-established" and not row["failed"], row
    assert "'sq0' (layer " in row["message"] and "past f16's largest finite value" in row["message"], row
    assert "Erf 'mid0' between it and the reduction is not emulated" in row["message"], row


def test_values_above_within_range_leave_the_verdict_as_it_was(tmp_path: Path) -> None:
    """At ordinary scale the ops above are only looked at: headroom, the largest value above in the factor."""
    x = np.random.default_rng(1).uniform(3, 4, (1, 64)).astype(np.float32)
    doc = audit_model(load_ir(_deep_chain(tmp_path / "m.xml", "Sqrt")), inputs={"x": x}, precision="f32",
                      target="f16").to_json()  # fmt: skip
    row = doc["layers"][0]["target"]
    assert row["status"] == "headroom", row
    assert [stage["op"] for stage in row["above"]] == ["Parameter", "Power", "Add", "Sqrt"], row  # the farthest first
    assert [stage["op"] for stage in row["stages"]] == ["input", "ReduceMean"], row
    assert row["largest"] == pytest.approx(float((x.astype(np.float64) ** 2).max()), rel=1e-6), row


def test_the_ops_above_are_not_captured_past_the_audits_budget(tmp_path: Path) -> None:
    """Capturing the ops above counts against the audit's limit on what it keeps: an audit that fits without them is
    not refused; the rows whose ops above did not fit say so."""
    path = _deep_chain(tmp_path / "m.xml", "Sqrt", count=7)
    x = np.random.default_rng(1).uniform(3, 4, (1, 64)).astype(np.float32)
    doc = audit_model(load_ir(path), inputs={"x": x}, target="f16", max_elements=64).to_json()
    assert doc["error"] is None and len(doc["layers"]) == 7, doc
    cut = [layer["target"] for layer in doc["layers"] if "were not captured" in layer["target"]["message"]]
    assert cut, [layer["target"]["message"] for layer in doc["layers"]]
    assert all("OVREDUCE_MAX_ELEMENTS" in row["message"] and not row["failed"] for row in cut), cut


@pytest.mark.parametrize("op", sorted(EMULATED - {"Add", "Subtract", "Multiply", "Divide", "Power",
                                                  "SquaredDifference", "Maximum", "Minimum"}))  # fmt: skip
def test_each_unary_op_above_is_emulated_as_openvino_evaluates_it_in_f16(op: str) -> None:
    """Element for element, infinities and NaN included, against ``Node.evaluate`` in f16."""
    values = np.concatenate([np.linspace(-70000, 70000, 301), np.linspace(-12, 12, 301), [0.0, 1e-7, -1e-7]])
    with np.errstate(over="ignore"):  # past f16's largest: inf, as OpenVINO receives it
        x = values.astype(np.float32).astype(np.float16).astype(np.float32)
    param = ops.parameter([x.size], ov.Type.f16)
    node = {"Clamp": lambda v: ops.clamp(v, -5.5, 300.25)}.get(op, getattr(ops, op.lower()))(param)
    openvino = np.array(_evaluate(node, [_tensor(x, "f16")]).data).astype(np.float64)
    with np.errstate(all="ignore"):
        emulated = _apply(op, [x], node).astype(np.float16).astype(np.float64)
    np.testing.assert_array_equal(emulated, openvino)


def test_a_chain_not_rebuilt_on_the_device_says_so(tmp_path: Path) -> None:
    """A chain whose op the model marks to stay in f32 (the reduction not) is not rebuilt as a graph of the target type:
    the note says each chain ran on the device, so its row says it did not."""
    if not _native("bf16"):
        pytest.skip("the chains run on the device only where it executes bf16 natively")
    rng = np.random.default_rng(0)
    x = ops.parameter([4, 64], np.float32, name="x")
    h = ops.matmul(x, ops.constant(np.eye(64, dtype=np.float32)), False, False, name="h")
    pre = ops.multiply(h, ops.constant(np.float32(3.0)), name="keptpre")
    red = ops.reduce_sum(pre, ops.constant(np.array([1], np.int64)), True, name="red")
    out = ops.matmul(ops.multiply(h, red), ops.constant(rng.normal(0, 1, (64, 8)).astype(np.float32)), False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "plain.xml", compress_to_fp16=False)
    marked = f16_models.mark_kept(tmp_path / "plain.xml", tmp_path / "m.xml", ["keptpre"])
    doc = audit_model(load_ir(marked), inputs={"x": rng.uniform(1, 2, (4, 64)).astype(np.float32)}, precision="f32",
                      target="bf16").to_json()  # fmt: skip
    row = next(layer["target"] for layer in doc["layers"] if layer["layer_name"] == "red")
    assert row["device_agrees"] is None and "its chain did not run on the device on its own" in row["message"], row
    assert any("a row whose chain did not says so" in note for note in doc["target"]["notes"]), doc["target"]


def _small_norm(tmp_path: Path) -> tuple[Path, np.ndarray[Any, Any]]:
    """An RMSNorm (Power(x, 2), ReduceMean, + eps, Sqrt) and an x of magnitudes up to 0.02."""
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    power = ops.power(x, ops.constant(np.float32(2)), name="norm/pow")
    mean = ops.reduce_mean(power, ops.constant(np.array([-1], np.int64)), True, name="norm/ReduceMean")
    root = ops.sqrt(ops.add(mean, ops.constant(np.float32(1e-6))))
    ov.save_model(ov.Model([root], [x], "norm"), tmp_path / "m.xml", compress_to_fp16=False)
    return tmp_path / "m.xml", np.random.default_rng(0).uniform(-0.02, 0.02, (1, 8, 64)).astype(np.float32)


@pytest.mark.parametrize("precision", ["f32", None])
def test_the_largest_magnitude_is_the_datas_not_the_power_exponents(tmp_path: Path, precision: str | None) -> None:
    """An RMSNorm's exponent, a Constant 2, was taken for the largest value of the chain (headroom 65504/2) on the
    rows the emulation judged: the largest is what flows through it, |x| here, at either precision."""
    path, x = _small_norm(tmp_path)
    doc = audit_model(load_ir(path), inputs={"x": x}, target="f16", **({"precision": precision} if precision else {}))
    target = _row(doc, "norm/ReduceMean").target
    assert target is not None and target.status == "headroom", target
    assert target.largest == float(np.max(np.abs(x))), target
    assert target.message.startswith("largest magnitude 0.02 (the input of Power 'norm/pow'"), target.message


@pytest.mark.parametrize("precision", ["f32", None])
@pytest.mark.parametrize("compressed", [False, True])
def test_the_largest_magnitude_after_an_embedding_lookup_is_the_embeddings(
    tmp_path: Path, precision: str | None, compressed: bool
) -> None:
    """Every LLM's first RMSNorm reads the rows an embedding Gather looks up in a Constant table (an f16 one behind
    a decompression Convert, where the IR is compressed): those values, moved from a Constant, were taken for an
    operand as the exponent is, every input then counted and the exponent 2 shown as the largest magnitude. The
    largest is that of the rows looked up, as the f32 model run by OpenVINO gives them."""
    rng = np.random.default_rng(0)
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    values = (rng.standard_normal((100, 16)) * 0.02).astype(np.float16 if compressed else np.float32)
    table: Any = ops.constant(values)
    if compressed:
        table = ops.convert(table, np.float32)
    rows = ops.gather(table, ops.convert(ids, np.int32), ops.constant(np.int32(0)), name="embed_tokens/Gather")
    power = ops.power(rows, ops.constant(np.full((1, 1, 1), 2, np.float32)), name="norm/pow")
    mean = ops.reduce_mean(power, ops.constant(np.array([-1], np.int64)), True, name="norm/ReduceMean")
    out = ops.divide(rows, ops.sqrt(ops.add(mean, ops.constant(np.full((1, 1, 1), 1e-6, np.float32)))))
    ov.save_model(ov.Model([out], [ids], "embed_norm"), tmp_path / "m.xml", compress_to_fp16=False)
    given = rng.integers(0, 100, (1, 8)).astype(np.int64)
    looked_up = ov.Core().compile_model(ov.Model([rows], [ids]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    largest = float(np.max(np.abs(looked_up({"input_ids": given})[0])))
    doc = audit_model(load_ir(tmp_path / "m.xml"), inputs={"input_ids": given}, target="f16",
                      **({"precision": precision} if precision else {}))  # fmt: skip
    target = _row(doc, "norm/ReduceMean").target
    assert target is not None and target.largest == largest, target
    assert target.message.startswith(f"largest magnitude {largest:.3g} (the input of Power"), target.message


@pytest.mark.parametrize("scale", [0.125, 0.25, 0.5])
def test_the_bound_and_the_emulation_give_a_row_the_same_largest(scale: float) -> None:
    """The rounding bound (which settles a row cheaply, here where f16's absolute tolerance covers what rounding the
    squares costs) and the emulation give the same stages' largest for the same chain, the exponent being no value of
    it."""
    x = (np.random.default_rng(0).standard_normal((4, 512)) * scale).astype(np.float32)
    args, axes = [x, np.array([2.0], np.float32)], np.array([-1])
    expected = np.mean(np.float64(x) ** 2, -1, keepdims=True)
    proven = bounded("ReduceMean", args, x**2, expected, axes, True, "f16", op="Power", operands=[False, True])
    full = emulate("ReduceMean", args, axes, True, "f16", op="Power", operands=[False, True])
    assert proven is not None
    assert [st.largest for st in proven.stages[:2]] == [st.largest for st in full.stages[:2]]
    assert proven.largest == full.largest == max(float(np.max(np.abs(x))), float(np.max(np.float64(x) ** 2)))


def _ids_and_norm(path: Path, norm: bool) -> Path:
    """As optimum-intel exports an encoder: an i64 ReduceProd over the token ids' shape (``aten::index/ReduceProd``)
    and, where ``norm``, an RMSNorm's f32 ReduceMean of their embeddings."""
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    count = ops.reduce_prod(
        ops.shape_of(ids), ops.constant(np.array([0], np.int64)), True, name="aten::index/ReduceProd"
    )
    outputs = [count]
    if norm:
        rows = ops.gather(ops.constant(np.random.default_rng(0).standard_normal((100, 16)).astype(np.float32)), ids,
                          ops.constant(np.int64(0)))  # fmt: skip
        outputs.append(ops.reduce_mean(ops.multiply(rows, rows), ops.constant(np.array([-1], np.int64)), True,
                                       name="norm/ReduceMean"))  # fmt: skip
    ov.save_model(ov.Model(outputs, [ids], "encoder"), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_an_integer_reduction_keeps_its_type_in_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """An integer reduction (the i64 ReduceProd over the ids' shape of every optimum-intel export) was
    ``not-established`` for the target ("its input is not floating-point"), so an encoder whose only reduction it is
    read "nothing established": OpenVINO's conversion to f16 leaves integer ops integer (as its f16 compression of
    the IR shows), so the reduction keeps its type, and is ``protected``, saying so."""
    path = _ids_and_norm(tmp_path / "encoder.xml", norm=False)
    compressed = tmp_path / "compressed.xml"
    ov.save_model(ov.Core().read_model(path), compressed, compress_to_fp16=True)
    (prod,) = [op for op in ov.Core().read_model(compressed).get_ops() if op.get_type_name() == "ReduceProd"]
    assert prod.get_output_element_type(0) == ov.Type.i64  # OpenVINO's f16 conversion keeps it integer
    status, out, err = run_cli(capsys, "audit", str(path), "--precision", "f32", "--target", target)
    assert status == 0, err
    assert "nothing established" not in out and f"; {target}" in out and ": no overflow (1 protected)" in out, out
    with_norm = _ids_and_norm(tmp_path / "normed.xml", norm=True)
    doc = audit_model(load_ir(with_norm), precision="f32", target=target)
    rows = {layer.layer_name: layer.target for layer in doc.layers}
    integer = rows["aten::index/ReduceProd"]
    assert integer is not None and integer.status == "protected" and not integer.failed, integer
    assert "integer" in integer.message, integer.message
    assert doc.target is not None and "not-established" not in doc.target.counts, doc.target.counts
