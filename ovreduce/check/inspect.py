"""``inspect``: the reductions of a model (or every layer) with their attributes and shapes."""

from __future__ import annotations

from ovreduce.check import check_model
from ovreduce.infer import PortState, ShapeEngine
from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.reports import InspectDocument, LayerView, PortView, Producer

__all__ = ["inspect_model"]


def inspect_model(model: IRModel, *, layer: str | None = None, all_layers: bool = False) -> InspectDocument:
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
    views = tuple(
        LayerView(
            layer_id=item.id,
            layer_name=item.name,
            type=item.type,
            version=item.version,
            line=item.line,
            attributes=dict(item.data),
            inputs=tuple(_input(model, shapes, item, p) for p in item.inputs),
            outputs=tuple(_port(p, shapes.state((item.id, p.id))) for p in item.outputs),
            findings=tuple(f for f in report.findings if f.layer_id == item.id),
            reduction=reductions.get(item.id),
        )
        for item in selected
    )
    return InspectDocument(
        path=model.source,
        name=model.name,
        ir_version=model.ir_version,
        layer_count=len(model.layers),
        reduction_count=len(reductions),
        layers=views,
    )


def _port(p: Port, state: PortState, producer: Producer | None = None) -> PortView:
    return PortView(
        port=p.id,
        precision=None if p.precision is None else p.precision.name,
        names=p.names,
        declared_shape=p.declared_shape.to_json(),
        declared_has_dims=p.has_dims,
        shape=None if state.shape is None else state.shape.to_json(),
        shape_resolved=state.shape is not None,
        shape_origin=state.origin,
        element_type=None if state.element_type is None else state.element_type.name,
        producer=producer,
    )


def _input(model: IRModel, shapes: ShapeEngine, layer: Layer, p: Port) -> PortView:
    ref = model.producer(layer.id, p.id)
    assert ref is not None
    src = model.layer(ref[0])
    return _port(p, shapes.state(ref), Producer(src.id, src.name, src.type, ref[1]))
