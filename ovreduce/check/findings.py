"""The findings of ``check``: one table of codes (each with one severity and its meaning), and how a
finding is made and ordered.

Codes are stable: tools match on them (SARIF rule ids, JUnit failure types, the API's documents).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.reports.check import Finding, Severity
from ovreduce.shapes import PartialShape

__all__ = ["FINDINGS", "LEGACY_PRECISION", "FindingKind", "compare_declared", "dims_text", "finding", "ordered"]


class FindingKind(NamedTuple):
    """What a finding code means, and how serious it is."""

    severity: Severity
    meaning: str


FINDINGS: Mapping[str, FindingKind] = {
    "reduce-output-mismatch": FindingKind("error", "a reduction's declared output dims contradict the inferred shape"),
    "reduce-invalid": FindingKind("error", "a reduction's inputs violate its shape rule (OpenVINO's message)"),
    "edge-dims-mismatch": FindingKind("error", "an edge's producer and consumer ports declare incompatible dims"),
    "edge-precision-mismatch": FindingKind(
        "error", "an edge's producer and consumer ports declare different precisions"
    ),
    "parameter-shape-mismatch": FindingKind("error", "a Parameter's shape attribute contradicts its port dims"),
    "const-shape-mismatch": FindingKind("error", "a Const's shape attribute contradicts its port dims"),
    "precision-mismatch": FindingKind("error", "a port's precision contradicts the element type it carries"),
    "openvino-shape-mismatch": FindingKind("error", "(OpenVINO engine) declared dims contradict OpenVINO's shape"),
    "openvino-type-mismatch": FindingKind("error", "(OpenVINO engine) declared precision contradicts OpenVINO's"),
    "openvino-read-failed": FindingKind("error", "OpenVINO refused the model, at no layer ovreduce can name"),
    "bool-attr-invalid": FindingKind(
        "warning", "a boolean attribute is not true/false/1/0: OpenVINO reads the default"
    ),
    "dims-ambiguous": FindingKind("warning", "a port has no <dim> (scalar or dynamic rank) where rank >= 1 is known"),
    "keep-dims-missing": FindingKind("info", "a reduction has no keep_dims: OpenVINO uses false"),
    "reduce-output-less-precise": FindingKind("info", "declared -1 where the inferred dim is static (compatible)"),
    "reduce-unresolved": FindingKind("info", "the reduction's input shape or axes cannot be resolved natively"),
    "native-inference-differs": FindingKind(
        "info", "(OpenVINO engine) ovreduce's native shape differs from OpenVINO's"
    ),
    "legacy-precision": FindingKind(
        "info", "an IR v10 port precision, which OpenVINO does not read, differs from the type or from its edge's"
    ),
    "openvino-legacy-precision": FindingKind(
        "info", "(OpenVINO engine) an IR v10 port precision, which OpenVINO does not read, differs from its type"
    ),
    "layer-invalid": FindingKind(
        "error", "a layer's inputs do not fit its shape rule, and OpenVINO refuses the model at that layer"
    ),
    "reshape-changes-output": FindingKind("info", "(reshape) the output under the new shapes differs from the file"),
    "reshape-inconsistent": FindingKind(
        "error", "(reshape) under the new shapes a layer's inputs do not fit its shape rule: OpenVINO refuses them"
    ),
}
_RANK = {"error": 0, "warning": 1, "info": 2}

LEGACY_PRECISION = (
    "an IR v10 port precision is a legacy hint that OpenVINO does not read (it infers each op's type from its "
    "inputs), so nothing it computes changes"
)
"""Why a port precision of an IR v10 file that differs is an info (``legacy-precision``,
``openvino-legacy-precision``), not an error: see :mod:`ovreduce.check.openvino`."""


def finding(code: str, layer: Layer | None, message: str, port: str | None = None) -> Finding:
    """A finding of ``code`` (its severity from :data:`FINDINGS`) about ``layer`` and ``port``."""
    severity = FINDINGS[code].severity
    if layer is None:
        return Finding(code, severity, None, None, port, None, message)
    return Finding(code, severity, layer.id, layer.name, port, layer.line, message)


def ordered(model: IRModel, findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Findings in the model's layer order, each body's layers right after their container (model-wide
    findings first), errors before warnings before infos."""
    found = list(findings)
    if len(found) < 2:  # nothing to order: the layer positions are not even needed
        return tuple(found)
    # A layer's position: its index in its graph after the positions of the bodies holding it (the container's
    # index, the body's among the container's bodies), tuples that sort as a walk of the whole model meets the
    # layers (each body right after its container). Indices are made for the graphs findings name only.
    # Anything not found (model-wide findings) sorts first.
    bodies: dict[str, tuple[tuple[int, ...], IRModel]] | None = None
    indices: dict[str | None, dict[str, int]] = {}

    def position(body_path: str | None, layer_id: str | None) -> tuple[int, ...]:
        nonlocal bodies
        prefix: tuple[int, ...] = ()
        graph = model
        if body_path is not None:
            if bodies is None:
                bodies = {}
                _walk_bodies(model, None, (), bodies)
            if body_path not in bodies:
                return (-1,)
            prefix, graph = bodies[body_path]
        index = indices.get(body_path)
        if index is None:
            index = indices[body_path] = {layer.id: i for i, layer in enumerate(graph.layers)}
        at = None if layer_id is None else index.get(layer_id)
        return (-1,) if at is None else (*prefix, at)

    return tuple(sorted(found, key=lambda f: (position(f.body_path, f.layer_id), _RANK[f.severity])))


def _walk_bodies(
    graph: IRModel, path: str | None, prefix: tuple[int, ...], out: dict[str, tuple[tuple[int, ...], IRModel]]
) -> None:
    """Every body under ``graph``: its ids path -> (its position prefix, its graph)."""
    for i, layer in enumerate(graph.layers):
        for k, body in enumerate(layer.bodies):
            inner = f"{layer.id}/{body.role}" if path is None else f"{path}/{layer.id}/{body.role}"
            out[inner] = ((*prefix, i, k), body.graph)
            _walk_bodies(body.graph, inner, (*prefix, i, k), out)


def dims_text(port: Port) -> str:
    return str(port.declared_shape) if port.has_dims else "no <dim> (scalar or dynamic rank)"


def compare_declared(port: Port, resolved: PartialShape) -> Literal["ok", "mismatch", "ambiguous", "less"]:
    """How a port's declared dims relate to a shape known by other means."""
    if not port.has_dims:
        if resolved.rank is None or resolved.rank == 0:
            return "ok"
        return "ambiguous"
    declared = port.declared_shape
    if declared == resolved:  # the usual case, and the quickest answer (equal dims are compatible, none less precise)
        return "ok"
    if not declared.compatible(resolved):
        return "mismatch"
    assert declared.dims is not None
    if resolved.dims is not None and any(
        d.is_fully_dynamic and r.is_static for d, r in zip(declared.dims, resolved.dims, strict=True)
    ):
        return "less"
    return "ok"
