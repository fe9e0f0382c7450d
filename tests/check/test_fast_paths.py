"""The shortcuts of ``check``: each gives what the plain computation gives, and each is taken.

``ordered`` sorts by layer positions computed only for the graphs findings name (not by a walk of every
layer); ``graph_findings`` compares a source layer's ``shape`` attribute with its dims once per distinct pair;
``compare_declared`` answers equal shapes at once. A reduction's report carries its body path from the start.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from ovreduce.check import check_model
from ovreduce.check import graph as graph_module
from ovreduce.check.findings import compare_declared, ordered
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel, Port
from ovreduce.ir.parser import load_ir
from ovreduce.reports.check import Finding
from ovreduce.shapes import PartialShape
from tests.ir import subgraphs

ROOT = Path(__file__).resolve().parents[2]


def _walk_order(model: IRModel, found: list[Finding]) -> tuple[Finding, ...]:
    """The order ``ordered`` promises, computed the plain way: a walk of every layer of every graph."""
    order: dict[tuple[str | None, str], int] = {}

    def walk(graph: IRModel, path: str | None) -> None:
        for layer in graph.layers:
            order[(path, layer.id)] = len(order)
            for body in layer.bodies:
                walk(body.graph, f"{layer.id}/{body.role}" if path is None else f"{path}/{layer.id}/{body.role}")

    walk(model, None)
    rank = {"error": 0, "warning": 1, "info": 2}
    return tuple(sorted(found, key=lambda f: (order.get((f.body_path, f.layer_id or ""), -1), rank[f.severity])))


def _every_layer(model: IRModel) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = [(None, layer.id) for layer in model.layers]
    out += [(ref.path, layer.id) for ref in model.bodies() for layer in ref.body.graph.layers]
    return out


def test_ordered_matches_a_walk_of_every_layer_nested_bodies_included(tmp_path: Path) -> None:
    model = load_ir(subgraphs.save(subgraphs.nested_model(), tmp_path, "nested"))
    places = _every_layer(model)
    assert any(path is not None and path.count("/") >= 3 for path, _ in places)  # a body inside a body
    places += [(None, None), ("no/such", "1"), (None, "999999"), (places[-1][0], "999999")]  # type: ignore[list-item]
    rng = random.Random(7)
    found = [
        Finding("code", severity, layer_id, "name", None, None, f"message {i}", body_path)
        for i, ((body_path, layer_id), severity) in enumerate(
            (place, rng.choice(("error", "warning", "info"))) for place in places * 3
        )
    ]
    for _ in range(5):
        rng.shuffle(found)
        assert ordered(model, found) == _walk_order(model, found)
        assert ordered(model, iter(found)) == _walk_order(model, found)  # any iterable
    assert ordered(model, []) == ()
    assert ordered(model, found[:1]) == tuple(found[:1])


def test_ordered_does_not_read_the_layers_for_fewer_than_two_findings() -> None:
    class NoLayers:  # a model whose layers cannot be read
        @property
        def layers(self) -> Any:
            raise AssertionError("read the layers")

    model: Any = NoLayers()
    one = Finding("code", "error", "1", "name", None, None, "message")
    assert ordered(model, []) == ()
    assert ordered(model, [one]) == (one,)
    with pytest.raises(AssertionError, match="read the layers"):
        ordered(model, [one, one])


def test_source_shapes_are_compared_once_per_distinct_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_ir(ROOT / "ir_samples" / "all_reductions.xml")
    sources = [layer for layer in model.layers if layer.type in ("Parameter", "Const") and layer.shape is not None]
    distinct = {(layer.outputs[0].dims, id(layer.shape)) for layer in sources}
    assert len(distinct) < len(sources)  # the sample repeats shapes: the shortcut has something to save
    calls: list[tuple[Port, PartialShape]] = []

    def counting(port: Port, shape: PartialShape) -> str:
        calls.append((port, shape))
        return compare_declared(port, shape)

    monkeypatch.setattr(graph_module, "compare_declared", counting)
    plain = check_model(model)
    assert len(calls) == len(distinct)
    monkeypatch.undo()
    assert check_model(model) == plain


@pytest.mark.parametrize("text", ["[1,?,16]", "[]", "[?]", "[2..5,3]", "[0..,1]", "[1,2,3,4,5]"])
def test_equal_shapes_compare_ok_as_the_full_rule_says(text: str) -> None:
    shape = PartialShape.parse(text)
    dims = tuple(-1 if d.is_fully_dynamic else d.lo for d in shape)
    port = Port("0", None, (), dims)
    if port.declared_shape != shape:  # intervals cannot be written as <dim>
        return
    assert compare_declared(port, PartialShape.parse(text)) == "ok"


def test_reports_of_body_reductions_carry_their_body_path(tmp_path: Path) -> None:
    model = load_ir(subgraphs.save(subgraphs.nested_model(), tmp_path, "nested"))
    engine = ShapeEngine(model)
    expected = {(path, info.layer.id) for path, graph in engine.body_engines() for info in graph.reductions}
    assert expected  # the nested model has reductions in its bodies
    report = check_model(model, shapes=engine)
    assert {(r.body_path, r.layer_id) for r in report.reductions if r.body_path is not None} == expected
