"""``inspect``: the reductions of a model (or every layer) with their attributes and shapes.

Layers of sub-graph bodies are listed too (after their container, with their body's ids path in
``body_path``); ``layer`` may be a path into a body (:data:`ovreduce.ir.model.PATH_GRAMMAR`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ovreduce.check import check_model
from ovreduce.infer import PortState, ShapeEngine
from ovreduce.ir.model import IRModel, Layer, LayerRef, Port
from ovreduce.ops.registry import type_name
from ovreduce.reports.check import Finding
from ovreduce.reports.inspect import InspectDocument, LayerView, PortView, Producer
from ovreduce.shapes import PartialShape

__all__ = ["inspect_model"]


def inspect_model(
    model: IRModel,
    *,
    layer: str | None = None,
    all_layers: bool = False,
    reshape: Mapping[str, PartialShape] | None = None,
) -> InspectDocument:
    """The ``ovreduce.inspect/v1`` document.

    Args:
        model: the parsed IR.
        layer: only this layer (id, name or path into a body); any type.
        all_layers: every layer rather than only the reductions.
        reshape: what-if shapes for Parameters (by layer or tensor name), as :func:`~ovreduce.check.check_model`
            takes them: the shapes shown are those inferred under them.

    Raises:
        NotFoundError: ``layer`` names no layer.
        InputError: a ``reshape`` key names no Parameter.
    """
    shapes = ShapeEngine(model, reshape)
    report = check_model(model, reshape=reshape, shapes=shapes)
    reductions = {(r.body_path, r.layer_id): r for r in report.reductions}
    if layer is not None:
        selected: list[LayerRef] = [model.locate(layer)]
    elif all_layers:
        selected = list(_every_layer(model, None))
    else:
        selected = [LayerRef(model.graph_at(path).layer(lid), model.graph_at(path), path) for path, lid in reductions]
    findings: dict[tuple[str | None, str | None], list[Finding]] = {}
    for f in report.findings:
        findings.setdefault((f.body_path, f.layer_id), []).append(f)
    views = []
    for item, graph, path in selected:
        engine = shapes.body_engine(path)
        views.append(LayerView(
            layer_id=item.id,
            layer_name=item.name,
            type=type_name(item.type, item.version),
            version=item.version,
            line=item.line,
            attributes=dict(item.data),
            inputs=tuple(_input(graph, engine, item, p) for p in item.inputs),
            outputs=tuple(_port(p, engine.state((item.id, p.id))) for p in item.outputs),
            findings=tuple(findings.get((path, item.id), ())),
            reduction=reductions.get((path, item.id)),
            body_path=path,
        ))  # fmt: skip
    return InspectDocument(
        path=model.source,
        name=model.name,
        ir_version=model.ir_version,
        layer_count=model.layer_count(),
        reduction_count=len(reductions),
        layers=tuple(views),
    )


def _every_layer(graph: IRModel, path: str | None) -> Iterator[LayerRef]:
    for layer in graph.layers:
        yield LayerRef(layer, graph, path)
        for body in layer.bodies:
            yield from _every_layer(body.graph, f"{layer.id}/{body.role}" if path is None else
                                    f"{path}/{layer.id}/{body.role}")  # fmt: skip


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
        shape_reason=state.reason or None if state.shape is None or not state.shape.is_static else None,
    )


def _input(model: IRModel, shapes: ShapeEngine, layer: Layer, p: Port) -> PortView:
    ref = model.producer(layer.id, p.id)
    assert ref is not None
    src = model.layer(ref[0])
    return _port(p, shapes.state(ref), Producer(src.id, src.name, type_name(src.type, src.version), ref[1]))
