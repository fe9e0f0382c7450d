"""``--layer KEY`` where KEY is one layer's id and another layer's name (numeric names are common in IRs converted from
ONNX): ids are taken before names, and ``run`` and ``inspect`` now say which other layer the key names, and how to
reach it, where they took the id without a word. A name two layers share is refused, and that refusal no longer ends
in a "did you mean" that suggests the very key it refused."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from ovreduce import load_ir
from tests.ir.irxml import edge, layer, net, parameter, port, result

from .inprocess import run_cli


def _reduce(lid: int, name: str, ltype: str) -> str:
    return layer(lid, name, ltype, data={"keep_dims": "true"}, inputs=[port(0, (2, 4)), port(1, (1,), "I64")],
                 outputs=[port(2, (2, 1))])  # fmt: skip


def _model(folder: Path, second: str) -> Path:
    """Layer id 3 a ReduceSum named 'sum_rows', layer id 5 a ReduceMax named ``second``."""
    axes = {"element_type": "i64", "shape": "1", "offset": "0", "size": "8"}
    layers = [parameter(0, "x", "2,4", dims=(2, 4)), layer(2, "ax", "Const", data=axes, outputs=[port(0, (1,), "I64")]),
              _reduce(3, "sum_rows", "ReduceSum"), _reduce(5, second, "ReduceMax"), result(4, "out", (2, 1)),
              result(6, "out2", (2, 1))]  # fmt: skip
    edges = [edge(0, 0, 3, 0), edge(2, 0, 3, 1), edge(3, 2, 4, 0), edge(0, 0, 5, 0), edge(2, 0, 5, 1), edge(5, 2, 6, 0)]
    path = folder / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(struct.pack("<q", 1))
    return path


def test_a_key_that_is_an_id_and_another_layers_name_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _model(tmp_path, "3")
    said = "'3' is taken as the id of layer id=3 'sum_rows' (ids are taken before names); the layer id 5 is named '3'"
    status, out, err = run_cli(capsys, "inspect", str(path), "--layer", "3")
    assert status == 0 and "'sum_rows'" in out and said in err, err
    status, out, err = run_cli(capsys, "run", str(path), "--layer", "3", "--backend", "numpy")
    assert status == 0 and said in out and "give '5' for it" in out, out
    status, out, err = run_cli(capsys, "run", str(path), "--layer", "5", "--backend", "numpy")
    assert status == 0 and "ReduceMax" in out and "taken as the id" not in out + err, out
    model = load_ir(path)
    try:
        assert model.locate("3").layer.name == "sum_rows"  # ids are taken before names
        assert [ref.layer.id for ref in model.shadowed("3")] == ["5"]
        assert model.shadowed("5") == [] and model.shadowed("sum_rows") == []
    finally:
        model.close()


def test_a_shared_name_is_refused_without_suggesting_itself(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _model(tmp_path, "sum_rows")
    status, out, err = run_cli(capsys, "inspect", str(path), "--layer", "sum_rows")
    assert (status, out) == (2, "")
    assert "layer name 'sum_rows' is used by several layers (ids 3, 5); give the id instead" in err
    assert "did you mean" not in err, err
