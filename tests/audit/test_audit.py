"""ovreduce.audit.audit_model: the whole model runs once with every reduction's tensors marked, each
reduction is recomputed from its captured input, and the report says which ones are off.

Facts of the installed OpenVINO these tests rely on are not assumed: the CPU's default inference
precision and its bf16 capability are read from the plugin, and where a number comes from OpenVINO it
is obtained directly (compile + infer, outside ovreduce) and compared with the report.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest

import ovreduce.audit as audit
from ovreduce import load_ir
from ovreduce.audit import _split, audit_model
from ovreduce.backends.openvino import MarkedRun, precision_name
from ovreduce.compare import compare
from ovreduce.errors import DeviceNotAvailableError, InputError, IRStructureError, IRSyntaxError, LimitExceededError
from ovreduce.reports.audit import AuditDocument
from ovreduce.reports.common import to_json

from . import ov_models

CORE = ov.Core()
DEFAULT_PRECISION = precision_name(CORE.get_property("CPU", "INFERENCE_PRECISION_HINT"))
BF16_CAPABLE = "BF16" in CORE.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
COMPARISON_FIELDS = set(compare(np.zeros(1), np.zeros(1)).to_json()) - {"reference", "candidate"}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("audit_models")
    return {
        "rms": ov_models.rms_norm(folder / "rms.xml", hidden=512, tokens=8),
        "many": ov_models.many_reductions(folder / "many.xml", 100),
        "few": ov_models.many_reductions(folder / "few.xml", 10),
        "u8": ov_models.u8_mean(folder / "u8.xml"),
        "uncompilable": ov_models.uncompilable(folder / "uncompilable.xml"),
        "softmax": ov_models.softmax_like(folder / "softmax.xml"),
        "pooled": ov_models.pooled(folder / "pooled.xml"),
        "mixed": ov_models.mixed(folder / "mixed.xml"),
    }


@pytest.fixture
def marked_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, MarkedRun]]:
    """Every call of ovreduce.audit.run_steps (one compile + one inference each, without decode steps), with its
    precision and result, in call order. Wraps our own function, not OpenVINO."""
    calls: list[tuple[str, MarkedRun]] = []
    real = audit.run_steps

    def spy(
        ov_model: Any, marks: list[Any], inputs: Any, device: str, precision: str, *rest: Any, **options: Any
    ) -> list[MarkedRun]:
        result = real(ov_model, marks, inputs, device, precision, *rest, **options)
        (run,) = result
        calls.append((precision, run))
        return result

    monkeypatch.setattr(audit, "run_steps", spy)
    return calls


def _openvino(path: Path, feeds: dict[str, Any], precision: str = "f32") -> Any:
    compiled = CORE.compile_model(CORE.read_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": precision})
    return compiled(feeds)


def _layer(report: AuditDocument, name: str) -> dict[str, Any]:
    return next(layer for layer in report.to_json()["layers"] if layer["layer_name"] == name)


def _expect_drift(precision: str) -> bool:
    effective = DEFAULT_PRECISION if precision == "default" else precision
    return effective == "bf16" and BF16_CAPABLE


def test_rms_norm_at_f32_is_within_tolerance(models: dict[str, Path]) -> None:
    report = audit_model(load_ir(models["rms"]), precision="f32")
    doc = report.to_json()
    assert report.ok is True
    assert doc["error"] is None
    assert doc["effective_precision"] == "f32"
    [layer] = doc["layers"]
    assert (layer["layer_name"], layer["type"], layer["status"]) == ("mean_square", "ReduceMean", "ok")
    assert (layer["axes"], layer["keep_dims"], layer["input_shape"]) == ([-1], True, [1, 8, 512])
    assert layer["runtime_precision"] == "f32"
    assert layer["drift"] is None  # an f32 run is its own truth
    assert layer["mismatched"] == 0
    assert layer["total"] == 8
    assert layer["max_rel_error"] < 1e-5


@pytest.mark.parametrize("precision", ["bf16", "default"])
def test_rms_norm_in_an_inaccurate_precision_drifts_but_passes(models: dict[str, Path], precision: str) -> None:
    """bf16 MatMuls upstream move the reduction's input; its output no longer matches an f32 run of the
    whole model, although the reduction itself computes its captured input exactly. The drift is reported,
    split, and does not fail the audit."""
    report = audit_model(load_ir(models["rms"]), precision=precision)
    layer = _layer(report, "mean_square")
    assert layer["drift"] is not None  # compared with an f32 run whenever the run was not plainly f32
    assert layer["mismatched"] == 0  # the reduction's own error is fine
    # measured on OpenVINO 2026.4: in bf16 the plain run fuses it into an RMS kernel that runs in bf16, unobserved
    assert layer["status"] == ("not-established" if _expect_drift(precision) else "ok")
    assert report.ok is True
    split = layer["drift_split"]
    assert set(split) == {"total", "from_input", "added", "limit", "exceeded"}
    assert (split["limit"], split["exceeded"]) == (None, False)
    # the parts add up: total <= from input + added, for both maxima
    for measure in ("max_abs", "max_rel"):
        parts = split["total"][measure], split["from_input"][measure], split["added"][measure]
        assert parts[0] <= parts[1] + parts[2] + 1e-12, parts
    assert split["added"]["max_abs"] == layer["max_abs_error"]  # added is the reduction's own error
    if _expect_drift(precision):
        assert report.to_json()["effective_precision"] == "bf16"
        assert layer["drift"]["reference"] == "f32 run"
        assert layer["drift"]["mismatched"] > 0
        assert split["total"]["max_rel"] > 1e-4
        # nearly all of it arrived with the input: the reduction added at most f32 rounding
        assert split["from_input"]["max_rel"] > 1e-4
        assert split["added"]["max_rel"] < 1e-5


def _verdict(doc: AuditDocument) -> tuple[bool, dict[str, str]]:
    return doc.ok, {layer.layer_name: layer.status for layer in doc.layers}


@pytest.mark.parametrize("key", ["rms", "softmax", "pooled", "few"])
def test_the_verdict_does_not_depend_on_bf16(models: dict[str, Path], key: str) -> None:
    """A healthy model gets the same verdict forced into bf16 (where the CPU has it) as in f32: drift from
    bf16 layers upstream is reported, never failed. On a CPU without bf16 both runs are f32."""
    f32 = audit_model(load_ir(models[key]), precision="f32")
    bf16 = audit_model(load_ir(models[key]), precision="bf16")
    assert _verdict(f32) == (True, {layer.layer_name: "ok" for layer in f32.layers})
    # (a reduction that observing moved out of bf16 establishes nothing of its bf16 execution)
    changed = {layer.layer_name for layer in bf16.layers if (layer.not_established or "").startswith("the model runs")}
    for layer in bf16.layers:  # each says so of a precision it was not observed in
        if layer.layer_name in changed:
            assert f"ran alone in {layer.runtime_precision}" in (layer.not_established or "") or (
                f"ran in {layer.runtime_precision}" in (layer.not_established or "")
            ), layer
            assert f"in {layer.runtime_precision}, and observed" not in (layer.not_established or ""), layer
    assert _verdict(bf16) == (True, {n: "not-established" if n in changed else "ok" for n in _verdict(f32)[1]})
    assert all(layer.drift_split is None for layer in f32.layers)  # an f32 run is its own truth
    assert all(layer.drift_split is not None for layer in bf16.layers)  # the split is reported
    if bf16.effective_precision == "bf16":
        assert BF16_CAPABLE
        worst = max(layer.drift_split.total.max_rel or np.inf for layer in bf16.layers if layer.drift_split)
        assert worst > 0  # it drifts, and passes all the same


@pytest.mark.parametrize("precision", ["bf16", "f32"])
def test_fail_on_drift_fails_the_reductions_that_drift_above_it(models: dict[str, Path], precision: str) -> None:
    if precision == "f32":  # on the CPU an f32 audit makes no f32 run to drift from: the limit is refused
        with pytest.raises(InputError, match="no drift from an f32 run is measured and the limit has no effect"):
            audit_model(load_ir(models["rms"]), precision=precision, fail_on_drift=1e-6)
        return
    strict = audit_model(load_ir(models["rms"]), precision=precision, fail_on_drift=1e-6)
    lax = audit_model(load_ir(models["rms"]), precision=precision, fail_on_drift=1.0)
    assert (strict.fail_on_drift, lax.fail_on_drift) == (1e-6, 1.0)
    assert lax.ok is True
    [layer] = strict.layers
    if strict.effective_precision == "bf16":
        assert layer.drift_split is not None
        assert layer.drift_split.total.max_rel is not None and layer.drift_split.total.max_rel > 1e-6
        assert (layer.drift_split.limit, layer.drift_split.exceeded) == (1e-6, True)
        assert (layer.status, layer.ok, strict.ok) == ("drift", False, False)
        assert layer.max_rel_error is not None and layer.max_rel_error < 1e-5  # its own error is fine
    else:  # nothing to drift from: an f32 run is its own truth
        assert (layer.status, strict.ok) == ("ok", True)


@pytest.mark.parametrize("limit", [-1.0, float("nan"), float("inf")])
def test_a_bad_drift_limit_is_refused(models: dict[str, Path], limit: float) -> None:
    with pytest.raises(InputError, match="fail_on_drift"):
        audit_model(load_ir(models["u8"]), fail_on_drift=limit)


def test_a_hundred_reductions_cost_a_constant_number_of_runs(
    models: dict[str, Path], marked_runs: list[tuple[str, MarkedRun]]
) -> None:
    counts = {}
    for key in ("few", "many"):
        for precision in ("f32", "bf16"):
            marked_runs.clear()
            report = audit_model(load_ir(models[key]), precision=precision)
            counts[key, precision] = [p for p, _ in marked_runs]
            assert report.error is None
    # plain run + audited run, and an f32 run to measure drift against when the run is not f32
    assert counts["few", "f32"] == counts["many", "f32"] == ["f32", "f32"]
    assert counts["few", "bf16"] == counts["many", "bf16"] == ["bf16", "bf16", "f32"]


def test_a_hundred_reductions_are_all_reported(models: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        calls.append((stage, done, total))

    references: list[str] = []
    real = audit.reduce_with_notes

    def counting(op_type: str, data: Any, *args: Any) -> Any:
        if np.asarray(data).dtype == np.float32:  # the tolerance allowance reduces |data| in f64: not counted
            references.append(op_type)
        return real(op_type, data, *args)

    monkeypatch.setattr(audit, "reduce_with_notes", counting)
    report = audit_model(load_ir(models["many"]), precision="f32", progress=progress)
    doc = report.to_json()
    assert len(doc["layers"]) == 100
    assert len(references) == 100  # each reference once, on the captured tensors
    assert sorted(layer["layer_name"] for layer in doc["layers"]) == [f"red{i:03d}" for i in range(100)]
    assert {layer["type"] for layer in doc["layers"]} == {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                                           "ReduceL2"}  # fmt: skip
    assert all(layer["layer_id"] is not None for layer in doc["layers"])
    assert doc["ok"] is True, [layer for layer in doc["layers"] if not layer["ok"]]
    # the progress moves through every stage, one step at a time, and ends at its total
    stages = [stage for stage, _, _ in calls]
    assert stages[:5] == ["reading the model", "compiling the audited run", "inference of the audited run",
                          "compiling the plain run", "inference of the plain run"]  # fmt: skip
    assert stages[5:-1] == [f"checking reduction {k} of 100" for k in range(1, 101)]
    assert calls[-1] == ("done", 105, 105)
    assert [done for _, done, _ in calls] == list(range(len(calls)))
    assert {total for _, _, total in calls[1:]} == {105}  # 1 read + 2 runs x (compile, inference) + 100 checks


def test_progress_counts_the_f32_run(models: dict[str, Path]) -> None:
    calls: list[tuple[str, int, int]] = []
    audit_model(load_ir(models["few"]), precision="bf16", progress=lambda *call: calls.append(call))
    stages = [stage for stage, _, _ in calls]
    assert stages[5:7] == ["compiling the f32 run", "inference of the f32 run"]
    assert calls[-1] == ("done", 17, 17)  # 1 read + 3 runs x 2 + 10 checks


def _own(layer: dict[str, Any]) -> float:
    value = layer.get("max_rel_error")
    return float("inf") if value is None else float(value)


@pytest.mark.parametrize(("key", "precision"), [("many", "f32"), ("mixed", "f32"), ("softmax", "bf16")])
def test_layers_are_sorted_worst_first(models: dict[str, Path], key: str, precision: str) -> None:
    feeds = {"q": np.full((2, 16), 100, np.uint8)} if key == "mixed" else None
    layers = audit_model(load_ir(models[key]), precision=precision, inputs=feeds).to_json()["layers"]
    rank = {"error": 0, "drift": 0, "ok": 1, "not-established": 2, "not-audited": 3}
    ranks = [rank[layer["status"]] for layer in layers]
    assert ranks == sorted(ranks)  # failing rows, then passing ones, then those that establish nothing
    for group in (0, 1):
        own = [_own(layer) for layer in layers if rank[layer["status"]] == group]
        assert own == sorted(own, reverse=True)  # by decreasing own error


def test_integer_saturation_is_the_layers_own_error_even_at_f32(models: dict[str, Path]) -> None:
    """A mean of sixteen u8 hundreds is 100; the CPU plugin accumulates in the u8 output buffer."""
    data = np.full((2, 16), 100, np.uint8)
    openvino = np.asarray(_openvino(models["u8"], {"x": data})[0])
    report = audit_model(load_ir(models["u8"]), precision="f32", inputs={"x": data})
    layer = _layer(report, "mean_u8")
    assert layer["exact"] is True
    assert report.ok is bool(np.all(openvino == 100))
    if not report.ok:
        assert layer["status"] == "error"
        assert layer["drift"] is None
        assert layer["first_mismatch"] == {"index": [0], "reference": 100, "candidate": int(openvino[0])}
        assert layer["mismatched"] == int(np.count_nonzero(openvino != 100))
        assert layer["max_abs_error"] == float(np.max(np.abs(openvino.astype(int) - 100)))


def test_mixed_model_reports_only_the_wrong_layer(models: dict[str, Path]) -> None:
    rng = np.random.default_rng(7)
    feeds = {"x": rng.standard_normal((4, 32)).astype(np.float32), "q": np.full((2, 16), 100, np.uint8)}
    report = audit_model(load_ir(models["mixed"]), precision="f32", inputs=feeds)
    doc = report.to_json()
    assert [i["origin"] for i in doc["inputs"]] == ["given", "given"]
    statuses = {layer["layer_name"]: layer["status"] for layer in doc["layers"]}
    assert statuses["sum_f32"] == statuses["mean_f32"] == statuses["max_f32"] == "ok"
    wrong = not np.all(np.asarray(_openvino(models["mixed"], feeds)[3]) == 100)
    assert statuses["mean_u8"] == ("error" if wrong else "ok")
    assert doc["ok"] is not wrong
    if wrong:
        assert doc["layers"][0]["layer_name"] == "mean_u8"  # worst first


def test_final_outputs_compare_the_audited_and_the_plain_run(
    models: dict[str, Path], marked_runs: list[tuple[str, MarkedRun]]
) -> None:
    feeds = {"x": np.random.default_rng(1).standard_normal((1, 8, 256)).astype(np.float32)}
    report = audit_model(load_ir(models["softmax"]), precision="f32", inputs=feeds)
    doc = report.to_json()
    (_, audited), (_, plain) = marked_runs  # the audited run first: the verdict rests on it
    # the plain run is OpenVINO's own result for the unmodified model
    np.testing.assert_array_equal(plain.outputs[0], np.asarray(_openvino(models["softmax"], feeds)[0]))
    [final] = doc["final_outputs"]
    diff = float(np.max(np.abs(plain.outputs[0].astype(np.float64) - audited.outputs[0].astype(np.float64))))
    assert final["max_abs_diff"] == diff
    assert final["identical"] is (diff == 0.0)
    moved = any("final outputs" in note for note in doc["notes"])
    assert moved is (not final["identical"])


def test_final_outputs_of_an_unaffected_model_are_identical(models: dict[str, Path]) -> None:
    doc = audit_model(load_ir(models["rms"]), precision="f32").to_json()
    assert [(f["identical"], f["max_abs_diff"]) for f in doc["final_outputs"]] == [(True, 0.0)]
    assert doc["notes"] == []


def test_a_reduction_whose_precision_marking_changed_is_not_established(models: dict[str, Path]) -> None:
    """Observed, a reduction the model runs in bf16 ran in f32: the row judged a kernel the model does not run, and
    said ok (the audit complete), with a note."""
    doc = audit_model(load_ir(models["pooled"]), precision="bf16")
    layer = _layer(doc, "pool")
    plain, audited = layer["plain_runtime_precision"], layer["runtime_precision"]
    changed = plain is not None and audited is not None and plain != audited
    assert (layer["status"] == "not-established") is changed and doc.complete is not changed, layer
    if changed:
        assert layer["not_established"] == (
            f"the model runs it in {plain}, and observed (its tensors made outputs) it ran in {audited}: its {plain} "
            f"execution was not examined"
        )
    # measured on OpenVINO 2026.4: where the CPU runs bf16 natively, bf16 when plain and f32 when observed;
    # where it runs bf16 through f32, f32 both times, and nothing to note
    assert changed is BF16_CAPABLE, (plain, audited)


def test_a_reduction_fused_away_in_another_precision_is_not_established(models: dict[str, Path]) -> None:
    """The plain run executes an RMS norm's ReduceMean fused into one kernel, in bf16 where the CPU runs bf16
    natively; observed (its tensors made outputs), the ReduceMean runs alone, in f32. The row said ok and the audit
    was complete, though no bf16 kernel the model runs was examined. OpenVINO's own execution graph decides."""
    doc = audit_model(load_ir(models["rms"]), precision="bf16")
    layer = _layer(doc, "mean_square")
    compiled = CORE.compile_model(CORE.read_model(str(models["rms"])), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    graph = [op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops()]
    named = [info for info in graph if "mean_square" in str(info["originalLayersNames"].astype(str))]
    rms = [(str(i["originalLayersNames"].astype(str)), str(i["runtimePrecision"].astype(str)).lower()) for i in graph
           if str(i["layerType"].astype(str)) == "RMS"]  # fmt: skip
    fused = not named and len(rms) == 1 and rms[0][1] != layer["runtime_precision"]
    assert (layer["status"] == "not-established") is fused and doc.complete is not fused, layer
    if fused:
        [(kernel, runs_in)] = rms
        assert layer["plain_runtime_precision"] is None
        assert layer["not_established"] == (
            f"the model runs it fused into the kernel {kernel!r} (its execution graph does not name the reduction), "
            f"in {runs_in}, and observed (its tensors made outputs) it ran alone in {layer['runtime_precision']}: its "
            f"fused execution was not examined"
        )
    # measured on OpenVINO 2026.4: where the CPU runs bf16 natively, an RMS kernel in bf16 when plain and the
    # ReduceMean alone in f32 when observed; where it runs bf16 through f32, the ReduceMean in f32 both times
    assert fused is BF16_CAPABLE, (named, rms, layer)
    assert doc.ok is True  # nothing failed: it is not established


@pytest.mark.parametrize("other", ["norm", "peak"])
def test_a_reduction_s_kernel_is_not_read_by_a_name_another_node_has(tmp_path: Path, other: str) -> None:
    """An RMS norm's ReduceMean named ``norm`` beside a ReduceMax also named ``norm``: the precision the plain run
    executes each in was read by name, so the RMS norm, which a bf16 CPU runs fused in bf16, borrowed the ReduceMax's
    f32 kernel and was ok. The verdict no longer depends on what another node is called."""
    doc = audit_model(load_ir(ov_models.norm_beside_peak(tmp_path / "m.xml", peak=other)), precision="bf16")
    row = next(layer for layer in doc.to_json()["layers"] if layer["type"] == "ReduceMean")
    in_bf16 = doc.effective_precision == "bf16"  # the plain run's kernels may differ from those observed
    assert (row["status"] == "not-established") is in_bf16, row
    if in_bf16 and other == "norm":
        assert row["not_established"] == (
            "2 nodes of the model are named 'norm', and its execution graph names kernels by node name: what the "
            "model runs this one in, at bf16, is not known; give the nodes names of their own"
        )


@pytest.mark.parametrize("where", ["AUTO", "body"])
def test_a_reduction_fused_away_is_judged_so_on_auto_and_in_a_body(tmp_path: Path, where: str) -> None:
    """AUTO gives the execution graph but not the precision it compiled in; a body taken by an If is audited run
    alone. Both left the RMS norm's row ok and the audit complete where the plain run executes it fused in bf16."""
    if where == "AUTO":
        path = ov_models.rms_norm(tmp_path / "m.xml")
        doc = audit_model(load_ir(path), device="AUTO", precision="bf16")
    else:
        path = ov_models.rms_norm_in_if(tmp_path / "m.xml")
        doc = audit_model(load_ir(path), precision="bf16", inputs={"cond": np.array(True)})
    row = next(row for row in doc.layers if row.layer_name == "mean_square")
    on_cpu = audit_model(load_ir(ov_models.rms_norm(tmp_path / "cpu.xml")), precision="bf16").layers[0]
    assert (row.status, row.not_established) == (on_cpu.status, on_cpu.not_established), (row, on_cpu)
    assert doc.complete is (on_cpu.status == "ok")
    assert (row.status == "not-established") is BF16_CAPABLE  # measured on OpenVINO 2026.4, as on the CPU alone


def test_a_fused_reduction_whose_kernel_runs_as_observed_is_established(tmp_path: Path) -> None:
    """The last RMS norm of a model (an embedding export's last_hidden_state) runs fused in f32 where the CPU keeps
    the graph's tail in f32, as it was observed; a reduction of constants is folded, executed by no kernel. Both were
    said to run fused into a kernel in bf16 (the compiled model's precision), not established."""
    path = ov_models.rms_norm(tmp_path / "last.xml", last=True)
    compiled = CORE.compile_model(CORE.read_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    kernels = {str(op.get_rt_info()["layerType"].astype(str)): str(op.get_rt_info()["runtimePrecision"].astype(str))
               for op in compiled.get_runtime_model().get_ordered_ops()}  # fmt: skip
    doc = audit_model(load_ir(path), precision="bf16")
    [row] = doc.layers
    assert kernels.get("RMS", "f32").lower() == row.runtime_precision, kernels  # measured: the tail stays f32
    assert (row.status, doc.complete) == ("ok", True), row

    x = ov_models.ops.parameter([2, 8], np.float32, name="x")
    values = ov_models.ops.constant(np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32))
    folded = ov_models.ops.reduce_sum(values, ov_models.ops.constant(np.array([0], np.int64)), False, name="folded")
    weights = ov_models.ops.constant(np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32))
    out = ov_models.ops.matmul(ov_models.ops.add(x, folded), weights, False, False)
    ov.save_model(ov.Model([out], [x]), tmp_path / "folded.xml", compress_to_fp16=False)
    doc = audit_model(load_ir(tmp_path / "folded.xml"), precision="bf16")
    assert [(row.layer_name, row.not_established) for row in doc.layers] == [("folded", None)], doc.layers


def test_an_i64_reduction_the_plugin_renames_is_found_in_the_execution_graph(tmp_path: Path) -> None:
    """A marked i64 ReduceSum (an MoE router's token counts) is computed in i32 by the CPU plugin, which renames its
    node ``name.0``: the audited run's row says what it executes in, as the plain run's does, never "fused"."""
    x = ov_models.ops.parameter([8, 4], ov.Type.i64, name="x")
    counts = ov_models.ops.reduce_sum(x, ov_models.ops.constant(np.array([0], np.int64)), False, name="counts/sum")
    out = ov_models.ops.multiply(ov_models.ops.convert(counts, ov.Type.f32), ov_models.ops.constant(np.float32(2)))
    ov.save_model(ov.Model([out], [x]), tmp_path / "m.xml")
    marked = ov.Model([out.output(0), counts.output(0)], [x])  # as the audit marks it
    graph = CORE.compile_model(marked, "CPU").get_runtime_model().get_ordered_ops()
    assert "counts/sum.0" in {op.get_friendly_name() for op in graph}  # (the plugin's renaming)
    doc = audit_model(load_ir(tmp_path / "m.xml"))
    [row] = doc.layers
    assert row.runtime_precision == row.plain_runtime_precision == "i32", row
    assert doc.to_json()["reduction_precisions"] == {"i32": 1}


def test_openvinos_refusal_that_is_not_utf8_is_said_in_its_words(tmp_path: Path) -> None:
    """OpenVINO prints an i8 TopK ``k`` of -1 as its raw byte, so its message is no UTF-8 and Python's binding raises
    a UnicodeDecodeError: the audit said the codec's words ("can't decode byte 0xff"), not OpenVINO's refusal."""
    x = ov_models.ops.parameter([2, 5], np.float32, name="x")
    top = ov_models.ops.topk(x, ov_models.ops.constant(np.array(3, np.int8)), 1, "max", "value")
    total = ov_models.ops.reduce_sum(top.output(0), ov_models.ops.constant(np.array([1], np.int64)), False)
    ov.save_model(ov.Model([total], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    weights = bytearray((tmp_path / "m.bin").read_bytes())
    weights[0] = 0xFF  # k, the first constant written: -1
    (tmp_path / "m.bin").write_bytes(bytes(weights))
    with pytest.raises(UnicodeDecodeError):
        CORE.read_model(str(tmp_path / "m.xml"))
    error = audit_model(load_ir(tmp_path / "m.xml")).to_json()["error"]
    assert error.startswith("OpenVINO could not read the model: While validating node"), error
    assert "The value of 'K' must be greater or equal to zero. (got \\xff)" in error, error


def test_json_document(models: dict[str, Path]) -> None:
    doc = audit_model(load_ir(models["mixed"]), precision="f32", seed=3).to_json()
    assert doc["schema"] == "ovreduce.audit/v1"
    assert set(doc) >= {"ok", "model", "device", "precision", "effective_precision", "error", "inputs", "layers",
                        "final_outputs", "notes", "seconds", "reduction_precisions", "plain_reduction_precisions",
                        "fail_on_drift"}  # fmt: skip
    assert doc["fail_on_drift"] is None
    assert sum(doc["reduction_precisions"].values()) == len(doc["layers"])
    assert doc["inputs"] == [
        {"name": "x", "shape": [4, 32], "element_type": "f32", "origin": "seed 3", "defaulted_dims": []},
        {"name": "q", "shape": [2, 16], "element_type": "u8", "origin": "seed 3", "defaulted_dims": []},
    ]
    for layer in doc["layers"]:
        assert set(layer) >= COMPARISON_FIELDS, COMPARISON_FIELDS - set(layer)
        assert {"layer_id", "layer_name", "type", "status", "axes", "keep_dims", "element_type", "drift",
                "drift_split"} <= set(layer)  # fmt: skip
        assert layer["drift_split"] is None  # an f32 run
    for final in doc["final_outputs"]:
        assert set(final) == {"name", "identical", "max_abs_diff", "max_rel_diff"}


def test_a_model_openvino_cannot_compile_is_a_finding(models: dict[str, Path]) -> None:
    report = audit_model(load_ir(models["uncompilable"]), precision="f32")
    assert report.ok is False
    assert report.error is not None
    assert report.error.startswith("OpenVINO failed: ")
    assert "incorrect number of input/output dimensions" in report.error
    assert "Exception from" not in report.error


UNKNOWN_OP_IR = """<?xml version="1.0"?>
<net name="unknown_op" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2" element_type="f32"/>
      <output><port id="0" precision="FP32"><dim>2</dim></port></output>
    </layer>
    <layer id="1" name="mystery" type="Frobnicate" version="extension">
      <input><port id="0"><dim>2</dim></port></input>
      <output><port id="1" precision="FP32"><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
  </edges>
</net>
"""


def test_an_ir_openvino_cannot_read_is_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "unknown_op.xml"
    path.write_text(UNKNOWN_OP_IR)
    doc = audit_model(load_ir(path), precision="f32").to_json()
    assert doc["ok"] is False
    assert doc["error"].startswith(
        "OpenVINO could not read the model: the model has an op of no OpenVINO opset that no loaded extension "
        "provides: Frobnicate (version 'extension')"
    ), doc["error"]
    assert doc["layers"] == []


def test_an_op_its_opset_lacks_is_refused_as_openvino_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "unknown_op.xml"
    path.write_text(UNKNOWN_OP_IR.replace('version="extension"', 'version="opset1"'))
    with pytest.raises(IRStructureError, match="Opset opset1 doesn't contain the operation with type: Frobnicate"):
        audit_model(load_ir(path))


@pytest.mark.parametrize("content", [b"", b"\x89PNG\r\n not xml", b"just text"], ids=["empty", "binary", "text"])
def test_a_file_that_is_not_xml_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "model.xml"
    path.write_bytes(content)
    with pytest.raises(IRSyntaxError):
        audit_model(load_ir(path))


def test_given_inputs_are_checked(models: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="'nope' names no model input"):
        audit_model(load_ir(models["u8"]), inputs={"nope": np.zeros((2, 16), np.uint8)})
    with pytest.raises(InputError, match="shape"):
        audit_model(load_ir(models["u8"]), inputs={"x": np.zeros((3, 16), np.uint8)})
    with pytest.raises(InputError, match="precision 'f64'"):
        audit_model(load_ir(models["u8"]), precision="f64")
    with pytest.raises(InputError, match="'NOSUCHDEVICE' is not a device OpenVINO knows"):
        audit_model(load_ir(models["u8"]), device="NOSUCHDEVICE")
    if "NPU" not in ov.Core().available_devices:
        with pytest.raises(DeviceNotAvailableError):
            audit_model(load_ir(models["u8"]), device="NPU")


def test_a_reductions_axes_given_as_an_input_are_made_valid(tmp_path: Path) -> None:
    """Seeded integers as axes were out of range, and the audit reported that OpenVINO failed: the axes are made
    from the data's last axes, and the document says so."""
    doc = audit_model(load_ir(ov_models.runtime_axes(tmp_path / "axes.xml")))
    assert doc.ok and doc.error is None, doc.error
    [axes] = [i for i in doc.inputs if i.name == "axes"]
    assert axes.origin == "its last axes, 2 down (the axes of ReduceMean 'mean')"
    [layer] = doc.layers
    assert list(layer.axes) == [2, 1] and layer.status == "ok"


def test_axes_an_input_gives_several_reductions_are_valid_for_all(tmp_path: Path) -> None:
    """Data of ranks 3, 2 and 0 reduced by one axes input: axis 0, the one all three take (the rank-3 one's last
    axis was out of range for the others, and the audit blamed OpenVINO)."""
    doc = audit_model(load_ir(ov_models.shared_axes(tmp_path / "shared.xml")))
    assert doc.error is None, doc.error
    [axes] = [i for i in doc.inputs if i.name == "a"]
    assert axes.origin == "0, a scalar (the axes of ReduceMean 'mean0')"
    assert {layer.layer_name: list(layer.axes or ()) for layer in doc.layers} == {
        "sum3": [0],
        "max2": [0],
        "mean0": [0],
    }


def test_what_an_audit_holds_at_once_is_budgeted_before_it_runs(tmp_path: Path) -> None:
    """Each tensor within the per-tensor limit, but together far beyond it: many inputs made at once, or one input
    reduced many ways (each reduction's input kept). Refused before anything is made (a hostile pass reached 4.7 GB
    in one worker with 48 inputs of 4 million elements)."""
    limit = 1000
    many_inputs = load_ir(ov_models.wide(tmp_path / "inputs.xml", inputs=8, elements=limit))
    with pytest.raises(LimitExceededError, match="the model's 8 inputs would have 8000 elements together"):
        audit_model(many_inputs, max_elements=limit)
    fanned = load_ir(ov_models.wide(tmp_path / "fanned.xml", inputs=1, elements=limit, fan_out=20))
    with pytest.raises(LimitExceededError, match=r"keep 40040 elements .*\(40 tensors it checks, in 2 run"):
        audit_model(fanned, max_elements=limit)
    assert audit_model(fanned, max_elements=3 * limit).ok  # within 16 times the limit (two runs kept): audited
    assert audit_model(many_inputs, max_elements=8 * limit).ok


@pytest.mark.parametrize("precision", ["bf16", "f32", "default"])
def test_precisions_are_reported_consistently(models: dict[str, Path], precision: str) -> None:
    """The document's precisions agree with each other and with OpenVINO: the compiled model's inference
    precision, and per reduction what it executes in, summed up in reduction_precisions."""
    doc = audit_model(load_ir(models["pooled"]), precision=precision)
    hint = {} if precision == "default" else {"INFERENCE_PRECISION_HINT": precision}
    compiled = CORE.compile_model(CORE.read_model(str(models["pooled"])), "CPU", hint)
    assert doc.precision == precision
    assert doc.effective_precision == precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
    assert doc.reduction_precisions == {
        p: n for p, n in Counter(layer.runtime_precision or "unknown" for layer in doc.layers).items()
    }
    assert doc.plain_reduction_precisions == {
        p: n for p, n in Counter(layer.plain_runtime_precision or "unknown" for layer in doc.layers).items()
    }
    assert all(layer.runtime_precision in ("f32", "bf16") for layer in doc.layers)


def test_a_drift_on_a_non_finite_value_is_infinite() -> None:
    truth = np.array([1.0, 0.0, 2.0], np.float32)
    split = _split(truth, truth, np.array([1.0, 0.0, np.inf], np.float32), limit=1.0)
    assert split is not None and split.exceeded
    assert (split.total.max_abs, split.total.max_rel) == (math.inf, math.inf)  # not the finite elements' 0
    assert (split.from_input.max_abs, split.from_input.max_rel) == (0.0, 0.0)
    zero = _split(truth, truth, np.array([1.0, 0.5, 2.0], np.float32), limit=None)  # over an f32 value of 0
    assert zero is not None and (zero.total.max_abs, zero.total.max_rel) == (0.5, math.inf)
    assert to_json(zero.total) == {"max_abs": 0.5, "max_rel": "Infinity"}


@pytest.mark.parametrize("precision", ["f32", "default"])
def test_an_f64_reduction_is_judged_as_run_judges_it(tmp_path: Path, precision: str) -> None:
    """OpenVINO's CPU computes f64 in f32 (a known defect): 1e8 + 1 - 1e8 comes out 0. run calls that agreement at
    f32's tolerance, with a note; the audit called it an ERROR at f64's, with no word of why. Both judge it alike now;
    an f64 sum f32 computes exactly says nothing."""
    from openvino import opset13 as ops

    from ovreduce.run import run_layer

    x = ops.parameter([3], ov.Type.f64, name="x")
    total = ops.reduce_sum(x, ops.constant(np.array([0], np.int64)), False, name="total")
    ov.save_model(ov.Model([total], [x]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    for values, said in ((np.array([1e8, 1.0, -1e8]), True), (np.array([1.0, 2.0, 3.0]), False)):
        model = load_ir(tmp_path / "m.xml")
        try:
            ran = run_layer(model, "total", inputs={"x": values})
            [row] = audit_model(model, inputs={"x": values}, precision=precision).layers
        finally:
            model.close()
        assert row.ok and ran.comparisons[0].ok, row
        notes = [n for n in row.notes if "computes f64 in f32, a known defect" in n]
        assert bool(notes) == said == bool([n for n in ran.notes if "f64" in n]), (row.notes, ran.notes)


# -- IR v10: OpenVINO's read-time conversion of the model's outputs ------------------------------------------------
_V10_PRECISIONS = {"f16": "FP16", "f32": "FP32", "f64": "FP64", "i64": "I64", "u8": "U8"}


def _v10_output_reduction(folder: Path, etype: str, op: str) -> Path:
    """An IR v10: x [2,3] of ``etype`` -> ``op`` 'red' (layer 2) over axis 1 -> a Result, and -> Abs 'neg' ->
    another Result."""
    p = _V10_PRECISIONS[etype]

    def port(pid: int, dims: str) -> str:
        return f'<port id="{pid}" precision="{p}">' + "".join(f"<dim>{d}</dim>" for d in dims.split(",")) + "</port>"

    edges = "".join(
        f'<edge from-layer="{a}" from-port="{ap}" to-layer="{b}" to-port="{bp}"/>'
        for a, ap, b, bp in ((0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 4, 0), (2, 2, 3, 0), (3, 1, 5, 0))
    )
    xml = f"""<?xml version="1.0"?>
<net name="m" version="10">
<layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="{etype}"/>
<output>{port(0, "2,3")}</output></layer>
<layer id="1" name="axes" type="Const" version="opset1"><data element_type="i64" shape="1" offset="0" size="8"/>
<output><port id="0" precision="I64"><dim>1</dim></port></output></layer>
<layer id="2" name="red" type="{op}" version="opset1"><data keep_dims="false"/>
<input>{port(0, "2,3")}<port id="1" precision="I64"><dim>1</dim></port></input>
<output><port id="2" precision="{p}" names="y"><dim>2</dim></port></output></layer>
<layer id="3" name="neg" type="Abs" version="opset1"><input>{port(0, "2")}</input><output>{port(1, "2")}</output>
</layer>
<layer id="4" name="out" type="Result" version="opset1"><input>{port(0, "2")}</input></layer>
<layer id="5" name="out_neg" type="Result" version="opset1"><input>{port(0, "2")}</input></layer>
</layers>
<edges>{edges}</edges>
</net>"""
    path = folder / f"v10_{etype}.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(np.array([1], np.int64).tobytes())
    return path


@pytest.mark.parametrize(
    ("etype", "op"), [("f16", "ReduceMean"), ("f64", "ReduceSum"), ("i64", "ReduceSum"), ("u8", "ReduceMax"),
                      ("f32", "ReduceMean")],
)  # fmt: skip
@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_a_v10_output_reduction_is_named_by_its_layer(tmp_path: Path, etype: str, op: str, precision: str) -> None:
    """OpenVINO reads an IR v10 output that is not f32 or i32 through a Convert to the legacy type, which takes the
    producer's name (the producer gets a generated one, another at each read): the audit's row (and its target row)
    still names the file's layer 2 'red', and its kernel is found in the execution graph; in bf16 the f32 run, of
    another read of the model, finds the same reduction."""
    path = _v10_output_reduction(tmp_path, etype, op)
    ov_names = {n.get_type_name(): n.get_friendly_name() for n in CORE.read_model(str(path)).get_ordered_ops()}
    renamed = etype != "f32"
    assert (ov_names[op] != "red") is renamed, ov_names  # what OpenVINO's reader does, asked of it
    report = audit_model(load_ir(path), precision=precision, target="f16").to_json()
    rows = [(row["layer_id"], row["layer_name"], row["type"]) for row in report["layers"]]
    assert rows == [("2", "red", op)], report["layers"]
    (row,) = report["layers"]
    assert row["runtime_precision"] is not None, row
    stages = [(stage["op"], stage["name"], stage["layer_id"]) for stage in (row["target"] or {}).get("stages", [])]
    assert stages[-1:] == ([(op, "red", "2")] if stages else []), row["target"]
    assert report["error"] is None, report
    assert (row["drift"] is not None) is (precision != "f32"), row  # measured against the f32 run
    # what the reduction's kernel executes in, asked of OpenVINO's execution graph of the model as it is read
    compiled = CORE.compile_model(CORE.read_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": precision})
    kernels = [op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops()]
    (executes,) = [
        str(i["runtimePrecision"].astype(str)) for i in kernels if str(i["layerType"].astype(str)) == "Reduce"
    ]
    assert row["plain_runtime_precision"] == precision_name(executes), (row, executes)


def test_a_v10_if_feeding_an_output_has_its_branch_audited(tmp_path: Path) -> None:
    """An IR v10 If of f16 'branch' feeding a model output, renamed by OpenVINO's conversion as a reduction is: the
    branch its condition takes is still audited, as that of an If OpenVINO leaves its name."""
    from openvino import opset8
    from openvino import opset13 as ops

    x, cond = ops.parameter([2, 3], np.float16, name="x"), ops.parameter([], np.bool_, name="c")
    bodies = []
    for build in (ops.reduce_sum, ops.reduce_max):
        inner = ops.parameter([2, 3], np.float16)
        bodies.append((inner, ops.result(build(inner, ops.constant(np.array([1], np.int64)), False))))
    branch = opset8.if_op(cond.output(0))
    branch.set_then_body(ov.Model([bodies[0][1]], [bodies[0][0]]))
    branch.set_else_body(ov.Model([bodies[1][1]], [bodies[1][0]]))
    branch.set_input(x.output(0), bodies[0][0], bodies[1][0])
    out = branch.set_output(bodies[0][1], bodies[1][1])
    branch.set_friendly_name("branch")
    ov.save_model(ov.Model([ops.result(out)], [x, cond]), str(tmp_path / "v11.xml"), compress_to_fp16=False)
    path = tmp_path / "v10.xml"
    path.write_text((tmp_path / "v11.xml").read_text().replace('version="11"', 'version="10"', 1))
    path.with_suffix(".bin").write_bytes((tmp_path / "v11.bin").read_bytes())
    names = [n.get_friendly_name() for n in CORE.read_model(str(path)).get_ordered_ops() if n.get_type_name() == "If"]
    assert names != ["branch"], names  # what OpenVINO's reader does, asked of it
    if_id = next(layer.id for layer in load_ir(path).layers if layer.type == "If")
    report = audit_model(load_ir(path), precision="f32", inputs={"c": np.array(True)}).to_json()
    rows = {row["body_path"]: row["status"] for row in report["layers"]}
    assert rows == {f"{if_id}/then": "ok", f"{if_id}/else": "not-audited"}, report["layers"]


def test_a_model_without_reductions_is_no_complete_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model whose norms are MVN (many exports hold no Reduce* at all): nothing failed, but nothing was audited
    either; it was "every reduction within tolerance" and ``complete: true``, which a gate on ``complete`` passed."""
    from ovreduce.cli import main

    x = ov.opset13.parameter([1, 4, 8], np.float32, name="x")
    normed = ov.opset13.mvn(x, ov.opset13.constant(np.array([-1], np.int64)), True, 1e-5, "inside_sqrt")
    path = tmp_path / "mvn.xml"
    ov.save_model(ov.Model([normed], [x], "mvn"), str(path), compress_to_fp16=False)
    doc = audit_model(load_ir(path), precision="f32").to_json()
    assert (doc["ok"], doc["complete"], doc["coverage"]) == (True, False, {"reductions": 0})
    assert main(["audit", str(path), "--precision", "f32"]) == 0
    out = capsys.readouterr().out
    assert "the model has no reductions" in out and "result: no reduction to audit" in out, out
    assert "every reduction within tolerance" not in out, out
