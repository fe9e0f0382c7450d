"""Integrity of the whole graph: boolean attributes, Parameter/Const declarations, and every edge."""

from __future__ import annotations

from ovreduce.check.findings import LEGACY_PRECISION, compare_declared, dims_text, finding
from ovreduce.infer import ShapeEngine
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.ops.base import BOOLEAN_DEFAULTS
from ovreduce.ops.registry import boolean_attributes
from ovreduce.reports.check import Finding
from ovreduce.shapes import PartialShape

__all__ = ["graph_findings"]

_BOOLEAN = frozenset(("true", "false", "1", "0", "True", "False", "TRUE", "FALSE"))  # as written, no lower() needed


def graph_findings(model: IRModel, shapes: ShapeEngine) -> list[Finding]:
    """Findings about every layer's boolean attributes, source layers and incoming edges."""
    out: list[Finding] = []
    # Per (type, version), asked once: the layer's boolean attributes, and whether it is a source layer.
    plans: dict[tuple[str, str], tuple[tuple[str, ...], bool]] = {}
    # (declared dims, id of the shape attribute) -> compare_declared's verdict: the Consts of a model repeat a
    # few distinct shapes (the parser shares one object per shape text). The layers hold their shapes for the
    # whole call, so an id names one shape throughout it.
    verdicts: dict[tuple[tuple[int, ...], int], str] = {}
    producer, by_id, state = model.producer, model.layer, shapes.state
    legacy = model.ir_version == 10  # its port precisions are legacy hints (see LEGACY_PRECISION)
    for layer in model.layers:
        kind = (layer.type, layer.version)
        plan = plans.get(kind)
        if plan is None:
            plan = plans[kind] = (boolean_attributes(*kind), kind[0] in ("Parameter", "Const"))
        names, source = plan
        for attr in names:
            text = layer.data.get(attr)
            if text is not None and text not in _BOOLEAN and text.lower() not in ("true", "false", "1", "0"):
                default = BOOLEAN_DEFAULTS.get(attr)
                out.append(finding(
                    "bool-attr-invalid", layer,
                    f"{attr}={text!r} is not true/false/1/0 (any case): OpenVINO silently reads it as the "
                    f"attribute's default" + ("" if default is None else f" ({str(default).lower()} for {attr})"),
                ))  # fmt: skip
        if source and layer.outputs:
            port = layer.outputs[0]
            shape = layer.shape
            if shape is not None:
                key = (port.dims, id(shape))
                verdict = verdicts.get(key)
                if verdict is None:
                    verdict = verdicts[key] = compare_declared(port, shape)
                if verdict != "ok":
                    out += _shape_attribute(layer, port, shape, verdict)
            precision = port.precision
            if precision is not None:  # the common case first: the very element type the state carries
                element_type = state((layer.id, port.id)).element_type
                if element_type is not None and precision is not element_type and precision != element_type:
                    out.append(_element_type(layer, port, element_type, legacy))
        layer_id = layer.id
        for port in layer.inputs:
            ref = producer(layer_id, port.id)
            assert ref is not None
            src_layer = by_id(ref[0])
            outputs = src_layer.outputs
            # The producer's port: nearly always its first (most layers have one output).
            src = outputs[0] if outputs and outputs[0].id == ref[1] else model.output_port(src_layer, ref[1])
            if src.dims == port.dims:
                a, b = src.precision, port.precision
                if a is b or a is None or b is None or a == b:
                    continue  # the common case: both ends declare the same thing
            out += _edge(src_layer, src, layer, port, legacy)
    return out


def _shape_attribute(layer: Layer, port: Port, shape: PartialShape, verdict: str) -> list[Finding]:
    """The finding of a Parameter's or Const's ``shape`` attribute that its port's dims do not match."""
    if verdict == "mismatch":
        code = "parameter-shape-mismatch" if layer.type == "Parameter" else "const-shape-mismatch"
        return [finding(
            code, layer,
            f"shape attribute {shape} but output port {port.id} declares {dims_text(port)}; "
            f"OpenVINO uses the attribute and ignores the dims",
            port.id,
        )]  # fmt: skip
    if verdict == "ambiguous":
        return [finding(
            "dims-ambiguous", layer,
            f"shape attribute {shape} but output port {port.id} has no <dim> (which reads as a scalar "
            f"or a dynamic rank); expected {shape.rank} <dim> elements",
            port.id,
        )]  # fmt: skip
    return []


def _element_type(layer: Layer, port: Port, element_type: ElementType, legacy: bool) -> Finding:
    """The finding of a Parameter's or Const's output port whose precision is not the element type it carries: its
    ``element_type``, or for a body Parameter the type its container feeds it, which OpenVINO gives it whatever the
    file says (``legacy``: of an IR v10 file, where the precision is a legacy hint)."""
    assert port.precision is not None
    declared = f"output port {port.id} declares precision {port.precision.precision} ({port.precision})"
    written = layer.element_type
    if written is not None and written != element_type:
        said = (
            f"element_type {written}, but its container feeds it {element_type}, the type OpenVINO gives it; {declared}"
        )
    else:
        said = f"element_type {element_type} but {declared}; OpenVINO uses the element_type"
    if legacy:
        return finding("legacy-precision", layer, f"{said}; {LEGACY_PRECISION}", port.id)
    return finding("precision-mismatch", layer, said, port.id)


def _edge(src_layer: Layer, src: Port, dst_layer: Layer, dst: Port, legacy: bool) -> list[Finding]:
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
        said = (
            f"input port {dst.id} declares precision {dst.precision.precision} but the {desc} declares "
            f"{src.precision.precision}"
        )
        if legacy:
            out.append(finding("legacy-precision", dst_layer, f"{said}; {LEGACY_PRECISION}", dst.id))
        else:
            out.append(finding("edge-precision-mismatch", dst_layer, said, dst.id))
    return out
