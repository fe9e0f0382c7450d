"""``ovreduce inspect``: the reductions of a model (or every layer) with their attributes and shapes."""

from __future__ import annotations

from typing import Any

from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel, Layer, Port

__all__ = ["inspect_model"]


def inspect_model(model: IRModel, *, layer: str | None = None, all_layers: bool = False) -> dict[str, Any]:
    """The ``ovreduce.inspect/v1`` document.

    Args:
        model: the parsed IR.
        layer: only this layer (id or name); any type.
        all_layers: every layer rather than only the reductions.

    Raises:
        NotFoundError: ``layer`` names no layer.
    """
    shapes = ShapeEngine(model)
    report = check_model(model, shapes=shapes)
    reductions = {r.layer_id: r for r in report.reductions}
    if layer is not None:
        selected: tuple[Layer, ...] = (model.find_layer(layer),)
    elif all_layers:
        selected = model.layers
    else:
        selected = tuple(model.layer(lid) for lid in reductions)
    entries = []
    for item in selected:
        entry: dict[str, Any] = {
            "layer_id": item.id,
            "layer_name": item.name,
            "type": item.type,
            "version": item.version,
            "line": item.line,
            "attributes": dict(item.data),
            "inputs": [_input(model, shapes, item, p) for p in item.inputs],
            "outputs": [_output(shapes, item, p) for p in item.outputs],
            "findings": [f.to_json() for f in report.findings if f.layer_id == item.id],
        }
        if item.id in reductions:
            entry["reduction"] = reductions[item.id].to_json()
        entries.append(entry)
    return {
        "schema": "ovreduce.inspect/v1",
        "path": model.source,
        "name": model.name,
        "ir_version": model.ir_version,
        "layer_count": len(model.layers),
        "reduction_count": len(reductions),
        "layers": entries,
    }


def _port(p: Port) -> dict[str, Any]:
    return {
        "port": p.id,
        "precision": None if p.precision is None else p.precision.name,
        "names": list(p.names),
        "declared_shape": p.declared_shape.to_json(),
        "declared_has_dims": p.has_dims,
    }


def _input(model: IRModel, shapes: ShapeEngine, layer: Layer, p: Port) -> dict[str, Any]:
    ref = model.producer(layer.id, p.id)
    assert ref is not None
    src = model.layer(ref[0])
    state = shapes.state(ref)
    return {
        **_port(p),
        "producer": {"layer_id": src.id, "layer_name": src.name, "type": src.type, "port": ref[1]},
        "shape": None if state.shape is None else state.shape.to_json(),
        "shape_resolved": state.shape is not None,
        "shape_origin": state.origin,
        "element_type": None if state.element_type is None else state.element_type.name,
    }


def _output(shapes: ShapeEngine, layer: Layer, p: Port) -> dict[str, Any]:
    state = shapes.state((layer.id, p.id))
    return {
        **_port(p),
        "shape": None if state.shape is None else state.shape.to_json(),
        "shape_resolved": state.shape is not None,
        "shape_origin": state.origin,
        "element_type": None if state.element_type is None else state.element_type.name,
    }
