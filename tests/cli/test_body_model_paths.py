"""A model with sub-graph bodies (If, Loop, TensorIterator, nested) is reported under its own path in every
output format, never under the path of one of its bodies (``2/else``). (``POST /v1/check``: in
``tests/api/test_subgraph_layers.py``.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openvino as ov
import pytest
from lxml import etree

from ovreduce import load_ir
from ovreduce.check import check_model
from tests.ir import subgraphs

from .inprocess import run_cli

MODELS: dict[str, Callable[[], ov.Model]] = {
    "if": subgraphs.if_model,
    "loop": subgraphs.loop_model,
    "ti": subgraphs.ti_model,
    "nested": subgraphs.nested_model,
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each model with bodies saved by OpenVINO, under a name no body path can be mistaken for, with a finding
    in a body: its first reduction's keep_dims (all are in bodies) made "yes"."""
    folder = tmp_path_factory.mktemp("bodies")
    out = {}
    for name, make in MODELS.items():
        path = out[name] = subgraphs.save(make(), folder, f"model_{name}")
        text = path.read_text()
        start = text.index('keep_dims="')
        end = text.index('"', start + len('keep_dims="'))
        path.write_text(text[:start] + 'keep_dims="yes' + text[end:])
    return out


def _body_paths(path: Path) -> set[str]:
    paths = {b.path for b in load_ir(path).bodies()}
    assert paths, f"{path} has no body"
    return paths


@pytest.mark.parametrize("name", MODELS)
def test_the_document_names_the_model_not_a_body(saved: dict[str, Path], name: str) -> None:
    path = saved[name]
    model = load_ir(path)
    report = check_model(model, path=str(path))
    assert report.path == str(path)
    assert {r.body_path for r in report.reductions} & _body_paths(path), "the reductions are in the bodies"
    assert {f.body_path for f in report.findings} & _body_paths(path), "so is a finding"
    assert check_model(model).path == model.source


@pytest.mark.parametrize("name", MODELS)
def test_every_format_names_the_model(capsys: pytest.CaptureFixture[str], saved: dict[str, Path], name: str) -> None:
    path = str(saved[name])
    bodies = _body_paths(saved[name])

    _, out, _ = run_cli(capsys, "check", path, "--format", "json")
    doc: dict[str, Any] = json.loads(out)
    assert [m["path"] for m in doc["models"]] == [path]
    assert {r["body_path"] for r in doc["models"][0]["reductions"]} <= bodies

    _, out, _ = run_cli(capsys, "check", path, "--format", "text", "-v")
    head = out.splitlines()[0]
    assert head.startswith(f"{path}  "), head

    _, out, _ = run_cli(capsys, "check", path, "--format", "junit")
    suites = etree.fromstring(out.encode()).findall("testsuite")
    assert [s.get("name") for s in suites] == [path]
    assert {c.get("classname") for c in suites[0].iter("testcase")} == {path}

    _, out, _ = run_cli(capsys, "check", path, "--format", "sarif")
    sarif: dict[str, Any] = json.loads(out)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in sarif["runs"][0]["results"]
        for loc in result["locations"]
    }
    assert uris == {path}, "every result (the body's finding) is located in the model's file"
