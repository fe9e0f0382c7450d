"""The native shape rules against the installed OpenVINO runtime: every layer output of random op chains
(tests/ops/gen_chains.py), as ``read_model`` infers it and again after ``Model.reshape`` with random new
input shapes (static, dynamic, intervals), must be what ovreduce's shape engine infers."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .gen_chains import build_model, new_shape
from .test_reduce_differential import to_shape

SEED = 4242
MODELS = 25
CHAINS = 8  # 200 chains


def _compare(engine: ShapeEngine, model: Any) -> list[str]:
    """Every layer output whose shape differs (and a line when too few were compared to mean anything)."""
    layers = {layer.name: layer for layer in engine.model.layers}
    wrong = []
    compared = 0
    for node in model.get_ordered_ops():
        layer = layers.get(node.get_friendly_name())
        if layer is None or node.get_type_name() in ("Result", "Constant"):
            continue
        for index, port in enumerate(layer.outputs):
            expected = to_shape(node.get_output_partial_shape(index))
            state = engine.state((layer.id, port.id))
            compared += 1
            if state.shape != expected:
                wrong.append(
                    f"{layer.type} {layer.name!r} output {index}: ovreduce {state.shape} ({state.origin} "
                    f"{state.reason}), OpenVINO {expected}"
                )
    if compared < 4 * CHAINS:
        wrong.append(f"only {compared} layer outputs compared")
    return wrong


@pytest.mark.parametrize("index", range(MODELS), ids=[f"s{SEED}-m{i:02d}" for i in range(MODELS)])
def test_every_layer_shape_matches_openvino(index: int, tmp_path: Path) -> None:
    seed = SEED + index
    built, chains = build_model(seed, CHAINS)
    xml = tmp_path / "chains.xml"
    ov.save_model(built, str(xml), compress_to_fp16=False)
    ir = load_ir(xml)
    try:
        _check(ir, xml, chains, seed)
    finally:
        ir.close()


def _check(ir: Any, xml: Path, chains: list[Any], seed: int) -> None:
    core = ov.Core()

    assert _compare(ShapeEngine(ir), core.read_model(str(xml))) == []

    rng = random.Random(seed)
    reshape = {
        c.param.get_friendly_name(): new_shape(rng, [int(d) for d in c.param.get_partial_shape().to_shape()],
                                               c)
        for c in chains
    }  # fmt: skip
    model = core.read_model(str(xml))
    engine = ShapeEngine(ir, {name: PartialShape.parse(text) for name, text in reshape.items()})
    try:
        model.reshape({name: ov.PartialShape(text) for name, text in reshape.items()})
    except RuntimeError as exc:  # then ovreduce must refuse a layer too
        refusal = str(exc).splitlines()[0]
    else:
        refusal = ""
    if refusal:
        refused = [s.reason for s in (engine.state(r) for r in _outputs(ir)) if s.origin == "unresolved"]
        assert refused, f"OpenVINO refuses reshape {reshape} ({refusal}); ovreduce accepts it"
        return
    assert _compare(engine, model) == [], f"reshape {reshape}; chains {[c.steps for c in chains]}"


def _outputs(ir: Any) -> list[tuple[str, str]]:
    return [(layer.id, port.id) for layer in ir.layers for port in layer.outputs]
