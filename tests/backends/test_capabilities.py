"""What OpenVINO executes on this machine, as ovreduce reports it: ``ovreduce devices`` and the documents of
``run`` and ``audit`` carry the facts that CPU-dependent results rest on, and each equals what OpenVINO itself
says (read here through OpenVINO's own API, tests/cpu.py), on whatever CPU the suite runs."""

from __future__ import annotations

import json

import openvino as ov
import pytest

from ovreduce.audit import audit_model
from ovreduce.ir.parser import load_ir
from ovreduce.run import run_layer
from tests.cli.inprocess import run_cli
from tests.cpu import capabilities, inference_precision, reduction_executes_in

from .layers import array, layer, run


def _cpu(doc: dict[str, object]) -> dict[str, object]:
    devices = doc["devices"]
    assert isinstance(devices, list)
    return next(d for d in devices if d["device"] == "CPU")


def test_devices_lists_what_the_cpu_executes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "devices", "--format", "json")
    assert status == 0
    doc = json.loads(out)
    assert doc["openvino"] == ov.get_version()
    cpu = _cpu(doc)
    assert tuple(cpu["capabilities"]) == capabilities()
    assert cpu["inference_precisions"] == {
        "f32": inference_precision("f32"),
        "f16": inference_precision("f16"),
        "bf16": inference_precision("bf16"),
        "default": inference_precision(None),
    }
    assert cpu["reduction_precisions"] == {t: reduction_executes_in(t) for t in ("f32", "bf16", "f16")}


def test_bf16_runs_natively_exactly_where_openvino_lists_bf16() -> None:
    """The condition the defect table of docs/semantics.md states: a bf16 reduction executes in bf16 where
    OpenVINO lists ``BF16`` among the CPU's capabilities (and a bf16 hint then gives bf16), through f32 where it
    does not."""
    native = "BF16" in capabilities()
    assert reduction_executes_in("bf16") == ("bf16" if native else "f32")
    assert inference_precision("bf16") == ("bf16" if native else "f32")
    assert reduction_executes_in("f32") == "f32"


def test_devices_text_says_how_reductions_run(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "devices")
    assert status == 0
    cpu = next(line for line in out.splitlines() if line.startswith("CPU "))
    bf16 = reduction_executes_in("bf16")
    assert ("bf16 natively" if bf16 == "bf16" else f"bf16 through {bf16}") in cpu
    assert f"default={inference_precision(None)}" in cpu
    assert f"OpenVINO {ov.get_version()}" in out


@pytest.mark.parametrize("type_name", ["f32", "bf16", "f16"])
def test_a_run_reports_what_its_reduction_executed_in(type_name: str) -> None:
    report = run(layer("ReduceMax", type_name, [2, 3], [1], True), [array(type_name, [[1, 2, 3], [4, 5, 6]])])
    doc = report.document.to_json()
    assert doc["results"][1]["runtime_precision"] == reduction_executes_in(type_name)
    assert doc["results"][0]["runtime_precision"] is None  # NumPy computes in the reference's own way
    assert doc["openvino"] == ov.get_version()
    (cpu,) = doc["devices"]
    assert cpu["device"] == "CPU" and tuple(cpu["capabilities"]) == capabilities()
    assert cpu["reduction_precisions"]["bf16"] == reduction_executes_in("bf16")


def test_a_numpy_only_run_names_no_device() -> None:
    model = load_ir("ir_samples/all_reductions.xml")
    try:
        doc = run_layer(model, "19", backends=["numpy"]).document.to_json()
    finally:
        model.close()
    assert doc["devices"] == [] and doc["openvino"] is None


def test_an_audit_names_what_the_device_executes(capsys: pytest.CaptureFixture[str]) -> None:
    model = load_ir("ir_samples/rmsnorm.xml")
    try:
        doc = audit_model(model, precision="default").to_json()
    finally:
        model.close()
    assert doc["openvino"] == ov.get_version()
    (cpu,) = doc["devices"]
    assert cpu["inference_precisions"]["default"] == inference_precision(None) == doc["effective_precision"]
    status, out, _ = run_cli(capsys, "audit", "ir_samples/rmsnorm.xml")
    assert status in (0, 1)
    bf16 = reduction_executes_in("bf16")
    assert f"CPU (OpenVINO {ov.get_version()}) runs reductions: " in out
    assert ("bf16 natively" if bf16 == "bf16" else f"bf16 through {bf16}") in out


def test_a_conform_document_names_what_the_device_executes() -> None:
    from ovreduce.conform import conform_model

    doc = conform_model("tests/golden/models/rms_norm_chain.onnx").to_json()
    assert doc["openvino"] == ov.get_version()
    (cpu,) = doc["devices"]
    assert cpu["reduction_precisions"] == {t: reduction_executes_in(t) for t in ("f32", "bf16", "f16")}
