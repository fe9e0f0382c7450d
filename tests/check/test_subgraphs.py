"""Reductions inside sub-graph bodies are found, checked, listed, run, and their shapes agree with OpenVINO's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openvino as ov
import pytest

from ovreduce._openvino import partial_shape
from ovreduce.check import check_model
from ovreduce.check.inspect import inspect_model
from ovreduce.ir.parser import load_ir
from ovreduce.run import run_layer
from tests.cli.inprocess import run_cli
from tests.ir import subgraphs


def _broken_loop(tmp_path: Path) -> Path:
    """The Loop model with keep_dims="true" on its body's ReduceMean turned into "yes" (OpenVINO reads false)."""
    path = subgraphs.save(subgraphs.loop_model(keep_dims=True), tmp_path, "loop")
    text = path.read_text()
    assert text.count('keep_dims="true"') == 1
    path.write_text(text.replace('keep_dims="true"', 'keep_dims="yes"'))
    return path


def test_broken_reduction_in_a_loop_body_is_flagged_on_that_layer(tmp_path: Path) -> None:
    model = load_ir(_broken_loop(tmp_path))
    loop = next(layer for layer in model.layers if layer.type == "Loop")
    report = check_model(model)
    assert not report.ok
    serious = {(f.code, f.body_path, f.layer_name) for f in report.findings if f.severity != "info"}
    assert serious == {
        ("bool-attr-invalid", f"{loop.id}/body", "ReduceMean_loop"),
        ("reduce-output-mismatch", f"{loop.id}/body", "ReduceMean_loop"),
    }
    [reduction] = report.reductions
    assert (reduction.body_path, reduction.status, reduction.inferred_output_shape) == (
        f"{loop.id}/body",
        "mismatch",
        [3],
    )


def test_wrong_dims_in_an_if_body_are_flagged(tmp_path: Path) -> None:
    path = subgraphs.save(subgraphs.if_model(), tmp_path, "if")
    text = path.read_text()
    start = text.index('name="ReduceSum_else"')
    out = text.index("<output>", start)
    fixed = text[:out] + text[out:].replace("<dim>4</dim>", "<dim>7</dim>", 1)
    path.write_text(fixed)
    report = check_model(load_ir(path))
    mismatch = [f for f in report.findings if f.code == "reduce-output-mismatch"]
    assert [(f.layer_name, f.body_path is not None and f.body_path.endswith("/else")) for f in mismatch] == [
        ("ReduceSum_else", True)
    ]


def test_inspect_lists_and_shows_body_reductions(tmp_path: Path) -> None:
    model = load_ir(subgraphs.save(subgraphs.if_model(), tmp_path, "if"))
    doc = inspect_model(model)
    assert doc.reduction_count == 2
    assert [(v.layer_name, v.body_path) for v in doc.layers] == [
        ("ReduceMean_then", model.locate("If_1/then/ReduceMean_then").body_path),
        ("ReduceSum_else", model.locate("If_1/else/ReduceSum_else").body_path),
    ]
    [one] = inspect_model(model, layer="If_1/else/ReduceSum_else").layers
    assert one.reduction is not None and one.reduction.inferred_output_shape == [2, 4]
    assert one.inputs[0].producer is not None and one.inputs[0].producer.type == "Parameter"
    every = inspect_model(model, all_layers=True).layers
    assert {v.body_path for v in every} == {None, *(b.path for b in model.bodies())}


@pytest.mark.parametrize("key", ["Loop_1/body/ReduceMean_loop", "ids"])
def test_run_a_body_reduction_on_numpy_and_openvino(tmp_path: Path, key: str) -> None:
    model = load_ir(subgraphs.save(subgraphs.loop_model(), tmp_path, "loop"))
    ref = model.locate("Loop_1/body/ReduceMean_loop")
    report = run_layer(model, ref.path if key == "ids" else key, backends=("numpy", "openvino"))
    assert report.ok, report.to_json()
    doc = report.document
    assert doc.body_path == ref.body_path
    assert [r.shape for r in doc.results] == [(3,), (3,)]  # one slice [1,3,4] of the loop's input
    assert [c.ok for c in doc.comparisons] == [True]


def test_a_body_no_rule_feeds_is_checked_on_its_declarations_and_said_so(tmp_path: Path) -> None:
    path = subgraphs.save(subgraphs.if_model(), tmp_path, "if")
    path.write_text(path.read_text().replace('type="If" version="opset8"', 'type="CustomIf" version="extension"'))
    report = check_model(load_ir(path))
    assert [(r.layer_name, r.status) for r in report.reductions] == [
        ("ReduceMean_then", "ok"),
        ("ReduceSum_else", "ok"),
    ]
    assert len(report.notes) == 2
    assert all("CustomIf" in n and "checked on its own declarations" in n for n in report.notes)


def test_the_openvino_engine_sees_into_bodies(tmp_path: Path) -> None:
    """With the OpenVINO engine, every body reduction is matched to OpenVINO's node in the same body and both
    engines agree; a wrong declaration inside a body is OpenVINO's finding on that body's layer too."""
    nested = load_ir(subgraphs.save(subgraphs.nested_model(), tmp_path, "nested"))
    report = check_model(nested, engine="openvino")
    assert report.ok, [f.message for f in report.findings]
    agree = [(r.layer_name, r.openvino_output_resolved, r.openvino_output_shape == r.inferred_output_shape)
             for r in report.reductions]  # fmt: skip
    assert agree == [("ReduceMean_nested", True, True), ("ReduceMax_nested", True, True)]
    path = subgraphs.save(subgraphs.if_model(), tmp_path, "if")
    text = path.read_text()
    out = text.index("<output>", text.index('name="ReduceSum_else"'))
    path.write_text(text[:out] + text[out:].replace("<dim>4</dim>", "<dim>7</dim>", 1))
    broken = check_model(load_ir(path), engine="openvino")
    seen_by_openvino = [(f.layer_name, (f.body_path or "").endswith("/else")) for f in broken.findings
                        if f.code == "openvino-shape-mismatch"]  # fmt: skip
    assert seen_by_openvino == [("ReduceSum_else", True)]


def test_nested_reductions_are_checked(tmp_path: Path) -> None:
    model = load_ir(subgraphs.save(subgraphs.nested_model(), tmp_path, "nested"))
    report = check_model(model)
    assert report.ok
    assert [(r.layer_name, r.inferred_output_shape) for r in report.reductions] == [
        ("ReduceMean_nested", [1, 1]),
        ("ReduceMax_nested", [1, 1]),
    ]


# -- differential: random models with bodies, ovreduce's shapes against OpenVINO's ----------------------------
def _openvino_shapes(model: ov.Model, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in model.get_ordered_ops():
        name, kind = node.get_friendly_name(), node.get_type_name()
        if kind.startswith("Reduce") and prefix:
            out[f"{prefix}{name}"] = partial_shape(node.get_output_partial_shape(0)).to_json()
        if kind == "If":
            out |= _openvino_shapes(node.get_then_body(), f"{prefix}{name}/then/")
            out |= _openvino_shapes(node.get_else_body(), f"{prefix}{name}/else/")
        elif kind in ("Loop", "TensorIterator"):
            out |= _openvino_shapes(node.get_function(), f"{prefix}{name}/body/")
    return out


@pytest.mark.parametrize("seed", range(30))
def test_body_reduction_shapes_agree_with_openvino(tmp_path: Path, seed: int) -> None:
    built = subgraphs.RandomModel(seed).model()
    path = subgraphs.save(built, tmp_path, f"random_{seed}")
    expected = _openvino_shapes(ov.Core().read_model(path))
    model = load_ir(path)
    names = {b.path: b.name_path for b in model.bodies()}
    got = {
        f"{names[r.body_path]}/{r.layer_name}": r.inferred_output_shape
        for r in check_model(model).reductions
        if r.body_path is not None
    }
    assert got == expected


def test_the_command_line_names_body_layers_by_their_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Text, JUnit and SARIF name a body layer by the ids path that run and inspect take."""
    path = _broken_loop(tmp_path)
    model = load_ir(path)
    loop = next(layer for layer in model.layers if layer.type == "Loop")
    reduction = next(layer for layer in loop.bodies[0].graph.layers if layer.type == "ReduceMean")
    key = f"{loop.id}/body/{reduction.id}"
    status, out, _ = run_cli(capsys, "check", str(path))
    assert status == 1 and f"layer {key} 'ReduceMean_loop'" in out
    _, junit, _ = run_cli(capsys, "check", str(path), "--format", "junit")
    assert f'name="ReduceMean {key} ReduceMean_loop"' in junit
    _, sarif, _ = run_cli(capsys, "check", str(path), "--format", "sarif")
    assert f'"fullyQualifiedName": "layer {key}"' in sarif
    status, out, _ = run_cli(capsys, "run", str(path), "--layer", key, "--format", "json")
    assert status == 0 and f'"body_path": "{loop.id}/body"' in out
