"""The OpenVINO engine of ``check``: compare every layer's declared dims with what OpenVINO itself infers.

The model is read with ``openvino.Core().read_model`` from the bytes ovreduce parsed (after ``reshape``
when asked), and each OpenVINO
node is matched to the IR layer of the same name (names are the IR's layer names); output ``i`` of the
node is the ``i``-th ``<port>`` of the layer's ``<output>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ovreduce._openvino import clean_message, openvino, partial_shape, read_ir
from ovreduce.check.findings import compare_declared, dims_text, finding
from ovreduce.ir.dtypes import ElementType, element_type
from ovreduce.ir.model import IRModel, Layer
from ovreduce.reports import Finding, ReductionCheck
from ovreduce.shapes import JsonShape, PartialShape

__all__ = ["crosscheck"]


def crosscheck(
    model: IRModel,
    reports: Sequence[ReductionCheck],
    reshape: Mapping[str, PartialShape] | None,
) -> tuple[list[Finding], list[ReductionCheck]]:
    """Findings from OpenVINO's view of the model, and the reports with ``openvino_output_shape`` set."""
    ov = openvino()
    try:
        ov_model = read_ir(model.xml, None if model.weights is None else model.weights.view())
        if reshape:
            ov_model.reshape({name: ov.PartialShape(str(shape)) for name, shape in reshape.items()})
    except Exception as exc:  # OpenVINO raises RuntimeError and friends; any of them is a finding
        failed = finding("openvino-read-failed", None, f"OpenVINO could not read the model: {clean_message(exc)}")
        return [failed], [replace(r, openvino_checked=True) for r in reports]
    by_name: dict[str, list[Layer]] = {}
    for layer in model.layers:
        by_name.setdefault(layer.name, []).append(layer)
    findings: list[Finding] = []
    ov_shapes: dict[str, JsonShape] = {}
    for node in ov_model.get_ordered_ops():
        candidates = [c for c in by_name.get(node.get_friendly_name(), []) if _same_type(c, node)]
        if len(candidates) != 1:
            continue
        layer = candidates[0]
        for index, port in enumerate(layer.outputs[: node.get_output_size()]):
            shape = partial_shape(node.get_output_partial_shape(index))
            etype = _ov_type(node.get_output_element_type(index))
            if index == 0:
                ov_shapes[layer.id] = shape.to_json()
            if reshape:
                continue  # the declared dims describe the file's shapes, not the reshaped ones
            verdict = compare_declared(port, shape)
            if verdict in ("mismatch", "ambiguous"):
                findings.append(finding(
                    "openvino-shape-mismatch", layer,
                    f"output port {port.id} declares {dims_text(port)} but OpenVINO infers {shape}",
                    port.id,
                ))  # fmt: skip
            if etype is not None and port.precision is not None and etype != port.precision:
                findings.append(finding(
                    "openvino-type-mismatch", layer,
                    f"output port {port.id} declares precision {port.precision.precision} but OpenVINO infers "
                    f"{etype}",
                    port.id,
                ))  # fmt: skip
    updated = []
    for r in reports:
        matched = r.layer_id in ov_shapes
        ov_shape = ov_shapes.get(r.layer_id)
        r = replace(r, openvino_output_shape=ov_shape, openvino_output_resolved=matched, openvino_checked=True)
        native = r.inferred_output_shape
        if matched and r.inferred_output_resolved and native != ov_shape:
            layer = model.layer(r.layer_id)
            findings.append(finding(
                "native-inference-differs", layer,
                f"ovreduce infers {_text(native)} natively but OpenVINO infers {_text(ov_shape)} (the native "
                f"inference went through declared dims that OpenVINO does not use)",
            ))  # fmt: skip
        updated.append(r)
    return findings, updated


def _same_type(layer: Layer, node: Any) -> bool:
    name = node.get_type_name()
    return bool(name == layer.type or (layer.type == "Const" and name == "Constant"))


def _ov_type(t: Any) -> ElementType | None:
    try:
        return element_type(t.get_type_name())
    except Exception:
        return None


def _text(shape: JsonShape) -> str:
    return str(PartialShape.from_json(shape))
