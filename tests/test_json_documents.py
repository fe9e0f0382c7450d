"""Every JSON document is valid JSON for every strict parser: non-finite floats are the strings "NaN",
"Infinity" and "-Infinity" wherever they are (a comparison's figures, its first mismatch, a tensor's data), in
the CLI's documents as in :func:`ovreduce.reports.common.to_json`; and orjson writing a document itself gives what
writing its :func:`~ovreduce.reports.common.to_json` gives, keys in the same order."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from ovreduce.check import check_paths
from ovreduce.cli import main
from ovreduce.reports.audit import AuditLayer
from ovreduce.reports.common import NON_FINITE, dumps, json_float, to_json
from ovreduce.reports.run import BackendRun, Comparison, RunDocument, RunLayer
from tests.strict_json import NODE, loads, node_loads

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "ir_samples"


def _comparison(**figures: Any) -> Comparison:
    return Comparison("numpy", "openvino:CPU", False, 4, 1, 1e-5, 1e-5, **figures)


def test_json_float_spells_the_non_finite_floats() -> None:
    assert [json_float(v) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "Infinity", "-Infinity"]
    assert list(NON_FINITE) == ["NaN", "Infinity", "-Infinity"]
    for finite in (0.0, -0.0, 1.5, -1e308, 5e-324, 1.7976931348623157e308):
        assert json_float(finite) is finite
    assert [float(s) for s in NON_FINITE][1:] == [math.inf, -math.inf]  # Python reads them back


def test_a_check_document_written_by_orjson_is_its_to_json() -> None:
    doc = check_paths(sorted(SAMPLES.rglob("*.xml")))
    text = dumps(doc)
    assert text.endswith(b"}\n") and text.startswith(b'{\n  "ok": ')
    assert text == json.dumps(to_json(doc), indent=2, ensure_ascii=False).encode() + b"\n"
    assert dumps(doc, indent=False) == json.dumps(to_json(doc), separators=(",", ":"), ensure_ascii=False).encode()
    assert doc.to_json() == to_json(doc)


def test_to_json_of_every_kind_of_part() -> None:
    comparison = _comparison(max_abs_error=math.nan, max_rel_error=math.inf, required_atol=-math.inf,
                             first_mismatch={"index": [0, 1], "values": (1.5, -0.0)}, nan={"a": 1})  # fmt: skip
    layer = AuditLayer(
        layer_id="3", layer_name="r", type="ReduceMean", keep_dims=True, axes=(1,), input_shape=None,
        element_type="f32", ok=False, status="error", error=None, runtime_precision=None,
        plain_runtime_precision=None, notes=("a", "b"), drift=comparison, max_abs_error=2.0, nan={"x": 0},
    )  # fmt: skip

    class Named(tuple[int, int]):  # a tuple subclass is a list in JSON
        pass

    got = to_json(comparison)
    assert list(got) == [f.name for f in dataclasses.fields(Comparison)]  # the fields in their order
    assert (got["max_abs_error"], got["max_rel_error"], got["required_atol"]) == ("NaN", "Infinity", "-Infinity")
    assert got["first_mismatch"] == {"index": [0, 1], "values": [1.5, -0.0]}
    assert list(to_json(layer)) == [f.name for f in dataclasses.fields(AuditLayer)]
    assert to_json(layer)["drift"] == got
    assert to_json([layer, None, (True, 1, np.float64(-np.inf), "s")])[1:] == [None, [True, 1, "-Infinity", "s"]]
    assert to_json(MappingProxyType({"k": [Named((1, 2))]})) == {"k": [[1, 2]]}
    assert to_json({"nested": {"deeper": [(), [], {}]}}) == {"nested": {"deeper": [[], [], {}]}}


def test_a_document_holding_non_finite_floats_is_strict_json() -> None:
    doc = RunDocument(
        ok=False,
        layer=RunLayer("1", "r", "ReduceSum", True, (0,), "f32"),
        inputs=(),
        results=(BackendRun("numpy", True, (1,), "FP32", None, math.inf),),
        comparisons=(_comparison(max_abs_error=math.inf, max_rel_error=math.nan),),
        notes=(),
    )
    for text in (dumps(doc), dumps(doc, indent=False), json.dumps(to_json(doc), allow_nan=False).encode()):
        value = loads(text)
        assert value["results"][0]["seconds"] == "Infinity"
        assert value["comparisons"][0]["max_abs_error"] == "Infinity"
        assert value["comparisons"][0]["max_rel_error"] == "NaN"
        assert value == to_json(doc)


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main([*argv, "--format", "json"])
    out: str = capsys.readouterr().out
    return out


def test_a_run_with_infinite_results_is_strict_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A ReduceMean of values near f32's largest: the reference (in f64) is 3e38, OpenVINO's f32 sum overflows.
    np.save(tmp_path / "big.npy", np.full((2, 3, 4, 5), 3e38, np.float32))
    text = _cli_json(capsys, "run", str(SAMPLES / "all_reductions.xml"), "--layer", "mean_last",
                     "--input", f"0={tmp_path / 'big.npy'}")  # fmt: skip
    doc = loads(text)
    comparison = doc["comparisons"][0]
    assert comparison["candidate"] == "openvino:CPU" and comparison["mismatched"] == 24
    assert comparison["first_mismatch"]["candidate"] == "Infinity"
    assert comparison["first_mismatch"]["reference"] == pytest.approx(3e38, rel=1e-7)
    assert comparison["inf"] == {"reference": 0, "candidate": 24}
    # failed on non-finite values: the statistics say so, never 0.0
    assert comparison["nonfinite_mismatched"] == 24
    assert (comparison["max_abs_error"], comparison["max_rel_error"]) == ("Infinity", "Infinity")
    if NODE is not None:
        assert node_loads(text) == [doc]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_every_command_on_a_sample_parses_with_javascript(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(SAMPLES / "rmsnorm.xml")
    texts = [
        _cli_json(capsys, "check", *map(str, sorted(SAMPLES.rglob("*.xml")))),
        _cli_json(capsys, "inspect", sample, "--all"),
        _cli_json(capsys, "run", sample, "--layer", "5"),
        _cli_json(capsys, "audit", sample, "--precision", "f32"),
        _cli_json(capsys, "devices"),
    ]
    assert node_loads(*texts) == [loads(t) for t in texts]
