"""Integrity of the whole graph: boolean attributes, Parameter/Const declarations, and every edge."""

from __future__ import annotations

from functools import lru_cache

from ovreduce.check.findings import compare_declared, dims_text, finding
from ovreduce.infer import PortState, ShapeEngine
from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.ops.registry import boolean_attributes
from ovreduce.reports import Finding
from ovreduce.shapes import PartialShape

__all__ = ["graph_findings"]


def graph_findings(model: IRModel, shapes: ShapeEngine) -> list[Finding]:
    """Findings about every layer's boolean attributes, source layers and incoming edges."""
    out: list[Finding] = []
    attributes: dict[tuple[str, str], tuple[str, ...]] = {}  # per (type, version), asked once
    producer, by_id = model.producer, model.layer
    for layer in model.layers:
        kind = (layer.type, layer.version)
        names = attributes.get(kind)
        if names is None:
            names = attributes[kind] = boolean_attributes(*kind)
        for attr in names:
            text = layer.data.get(attr)
            if text is not None and text.lower() not in ("true", "false", "1", "0"):
                out.append(finding(
                    "bool-attr-invalid", layer,
                    f"{attr}={text!r} is not true/false/1/0 (any case): OpenVINO silently reads it as the "
                    f"attribute's default (false for {attr})",
                ))  # fmt: skip
        if layer.type in ("Parameter", "Const") and layer.outputs:
            out += _source_layer(layer, shapes.state((layer.id, layer.outputs[0].id)))
        for port in layer.inputs:
            ref = producer(layer.id, port.id)
            assert ref is not None
            src_layer = by_id(ref[0])
            src = src_layer.output(ref[1])
            if src.dims == port.dims and (
                src.precision is None or port.precision is None or src.precision == port.precision
            ):
                continue  # the common case: both ends declare the same thing
            out += _edge(src_layer, src, layer, port)
    return out


@lru_cache(maxsize=4096)
def _verdict(dims: tuple[int, ...], shape: PartialShape) -> str:
    """:func:`compare_declared` of a port declaring ``dims``, once per distinct pair (Consts repeat a few)."""
    return compare_declared(Port("", None, (), dims), shape)


def _source_layer(layer: Layer, state: PortState) -> list[Finding]:
    out: list[Finding] = []
    port = layer.outputs[0]
    code = "parameter-shape-mismatch" if layer.type == "Parameter" else "const-shape-mismatch"
    if layer.shape is not None:
        verdict = _verdict(port.dims, layer.shape)
        if verdict == "mismatch":
            out.append(finding(
                code, layer,
                f"shape attribute {layer.shape} but output port {port.id} declares {dims_text(port)}; "
                f"OpenVINO uses the attribute and ignores the dims",
                port.id,
            ))  # fmt: skip
        elif verdict == "ambiguous":
            out.append(finding(
                "dims-ambiguous", layer,
                f"shape attribute {layer.shape} but output port {port.id} has no <dim> (which reads as a scalar "
                f"or a dynamic rank); expected {layer.shape.rank} <dim> elements",
                port.id,
            ))  # fmt: skip
    if state.element_type is not None and port.precision is not None and port.precision != state.element_type:
        out.append(finding(
            "precision-mismatch", layer,
            f"element_type {state.element_type} but output port {port.id} declares precision "
            f"{port.precision.precision} ({port.precision}); OpenVINO uses the element_type",
            port.id,
        ))  # fmt: skip
    return out


def _edge(src_layer: Layer, src: Port, dst_layer: Layer, dst: Port) -> list[Finding]:
    if src.dims == dst.dims and (src.precision is None or dst.precision is None or src.precision == dst.precision):
        return []  # the common case: both ends declare the same thing
    out: list[Finding] = []
    desc = f"edge from {src_layer.where} port {src.id}"
    if src.has_dims and dst.has_dims:
        if not src.declared_shape.compatible(dst.declared_shape):
            out.append(finding(
                "edge-dims-mismatch", dst_layer,
                f"input port {dst.id} declares {dst.declared_shape} but the {desc} declares {src.declared_shape}",
                dst.id,
            ))  # fmt: skip
    elif src.has_dims != dst.has_dims:
        with_dims = src if src.has_dims else dst
        out.append(finding(
            "dims-ambiguous", dst_layer,
            f"input port {dst.id} declares {dims_text(dst)} but the {desc} declares {dims_text(src)}; "
            f"consistent only if {'the input' if src.has_dims else 'the producer'} is of dynamic rank "
            f"(OpenVINO writes no <dim> only for scalars and dynamic ranks; {with_dims.declared_shape} "
            f"has rank {len(with_dims.dims)})",
            dst.id,
        ))  # fmt: skip
    if src.precision is not None and dst.precision is not None and src.precision != dst.precision:
        out.append(finding(
            "edge-precision-mismatch", dst_layer,
            f"input port {dst.id} declares precision {dst.precision.precision} but the {desc} declares "
            f"{src.precision.precision}",
            dst.id,
        ))  # fmt: skip
    return out
