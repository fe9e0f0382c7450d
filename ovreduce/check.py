"""``ovreduce check``: the graph walk that turns a parsed IR into findings and a per-reduction report.

Finding codes are stable; each has one severity:

===============================  ========  ==================================================================
code                             severity  meaning
===============================  ========  ==================================================================
reduce-output-mismatch           error     a reduction's declared output dims contradict the inferred shape
reduce-invalid                   error     a reduction's inputs violate its shape rule (OpenVINO's message)
edge-dims-mismatch               error     an edge's producer and consumer ports declare incompatible dims
edge-precision-mismatch          error     an edge's producer and consumer ports declare different precisions
parameter-shape-mismatch         error     a Parameter's ``shape`` attribute contradicts its port dims
const-shape-mismatch             error     a Const's ``shape`` attribute contradicts its port dims
precision-mismatch               error     a port's precision contradicts the element type it carries
openvino-shape-mismatch          error     (``--engine openvino``) declared dims contradict OpenVINO's shape
openvino-type-mismatch           error     (``--engine openvino``) declared precision contradicts OpenVINO's
openvino-read-failed             error     (``--engine openvino``) OpenVINO refused the model
bool-attr-invalid                warning   a boolean attribute is not true/false/1/0: OpenVINO reads the default
dims-ambiguous                   warning   a port has no <dim> (scalar or dynamic rank) where rank >= 1 is known
keep-dims-missing                info      a reduction has no keep_dims: OpenVINO uses false
reduce-output-less-precise       info      declared -1 where the inferred dim is static (compatible)
reduce-unresolved                info      the reduction's input shape or axes cannot be resolved natively
native-inference-differs         info      (``--engine openvino``) ovreduce's native shape differs from OpenVINO's
reshape-changes-output           info      (``--reshape``) the output under the new shapes differs from the file
===============================  ========  ==================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ovreduce.errors import OvReduceError
from ovreduce.infer import PortState, ReductionInfo, ShapeEngine
from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.ir.parser import ParseLimits, load_ir
from ovreduce.shapes import PartialShape

__all__ = [
    "BOOLEAN_ATTRIBUTES",
    "CheckReport",
    "Finding",
    "ModelReport",
    "ReductionReport",
    "check_model",
    "check_paths",
    "compare_declared",
    "dims_text",
    "make_finding",
]

Severity = Literal["error", "warning", "info"]
Status = Literal["ok", "mismatch", "error", "unresolved"]
SEVERITIES: Mapping[str, Severity] = {
    "reduce-output-mismatch": "error",
    "reduce-invalid": "error",
    "edge-dims-mismatch": "error",
    "edge-precision-mismatch": "error",
    "parameter-shape-mismatch": "error",
    "const-shape-mismatch": "error",
    "precision-mismatch": "error",
    "openvino-shape-mismatch": "error",
    "openvino-type-mismatch": "error",
    "openvino-read-failed": "error",
    "bool-attr-invalid": "warning",
    "dims-ambiguous": "warning",
    "keep-dims-missing": "info",
    "reduce-output-less-precise": "info",
    "reduce-unresolved": "info",
    "native-inference-differs": "info",
    "reshape-changes-output": "info",
}

# Boolean attributes of common ops; OpenVINO reads anything but true/false/1/0 (any case) as the default.
BOOLEAN_ATTRIBUTES: Mapping[str, tuple[str, ...]] = {
    **{t: ("keep_dims",) for t in (
        "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogicalAnd", "ReduceLogicalOr",
    )},
    "MatMul": ("transpose_a", "transpose_b"),
    "MVN": ("normalize_variance", "across_channels"),
    "CumSum": ("exclusive", "reverse"),
    "GRUCell": ("linear_before_reset",),
    "GRUSequence": ("linear_before_reset",),
    "NonMaxSuppression": ("sort_result_descending",),
    "Interpolate": ("antialias",),
    "Proposal": ("clip_before_nms", "clip_after_nms", "normalize"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem (or remark) about a model, tied to a layer and port where it has one."""

    code: str
    message: str
    layer_id: str | None = None
    layer_name: str | None = None
    port: str | None = None
    line: int | None = None  # the layer's line in the XML

    @property
    def severity(self) -> Severity:
        return SEVERITIES[self.code]

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "layer_id": self.layer_id,
            "layer_name": self.layer_name,
            "port": self.port,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class ReductionReport:
    """The per-reduction line of the check document."""

    layer_id: str
    layer_name: str
    type: str
    version: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    axes_kind: str
    data_type: str | None
    input_shape: PartialShape | None  # None: unresolved
    declared_output_shape: PartialShape
    declared_has_dims: bool
    inferred_output_shape: PartialShape | None  # None: unresolved or invalid
    status: Status
    openvino_output_shape: PartialShape | None = None
    openvino_checked: bool = False

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "layer_id": self.layer_id,
            "layer_name": self.layer_name,
            "type": self.type,
            "version": self.version,
            "keep_dims": self.keep_dims,
            "axes": None if self.axes is None else list(self.axes),
            "axes_kind": self.axes_kind,
            "element_type": self.data_type,
            "input_shape": None if self.input_shape is None else self.input_shape.to_json(),
            "input_shape_resolved": self.input_shape is not None,
            "declared_output_shape": self.declared_output_shape.to_json(),
            "declared_has_dims": self.declared_has_dims,
            "inferred_output_shape": (
                None if self.inferred_output_shape is None else self.inferred_output_shape.to_json()
            ),
            "inferred_output_resolved": self.inferred_output_shape is not None,
            "status": self.status,
        }
        if self.openvino_checked:
            doc["openvino_output_shape"] = (
                None if self.openvino_output_shape is None else self.openvino_output_shape.to_json()
            )
        return doc


@dataclass(frozen=True)
class ModelReport:
    """The check of one model, or why it could not be read."""

    path: str
    ir_version: int | None = None
    layer_count: int | None = None
    findings: tuple[Finding, ...] = ()
    reductions: tuple[ReductionReport, ...] = ()
    error: OvReduceError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "ir_version": self.ir_version,
            "layer_count": self.layer_count,
            "error": None if self.error is None else {"code": self.error.code, "message": self.error.message},
            "findings": [f.to_json() for f in self.findings],
            "reductions": [r.to_json() for r in self.reductions],
        }


@dataclass(frozen=True)
class CheckReport:
    """The whole ``ovreduce.check/v1`` document."""

    models: tuple[ModelReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(m.ok for m in self.models)

    @property
    def unreadable(self) -> bool:
        return any(m.error is not None for m in self.models)

    def to_json(self) -> dict[str, Any]:
        return {"schema": "ovreduce.check/v1", "ok": self.ok, "models": [m.to_json() for m in self.models]}


# -- the walk -------------------------------------------------------------------------------------------
def check_model(
    model: IRModel,
    *,
    reshape: Mapping[str, PartialShape] | None = None,
    engine: Literal["native", "openvino"] = "native",
    path: str | None = None,
    shapes: ShapeEngine | None = None,
) -> ModelReport:
    """Check one parsed model: integrity findings over the whole graph and the reductions' shapes.

    Args:
        model: the parsed IR.
        reshape: what-if shapes for Parameters (by layer or tensor name).
        engine: ``"openvino"`` also reads the model with the OpenVINO runtime and compares its inferred
            shape of every layer with the declared dims.
        path: the path to show (defaults to the model's source).
        shapes: an engine already run over ``model`` with the same ``reshape`` (saves a second walk).

    Raises:
        InputError: a ``reshape`` key names no Parameter.
    """
    if shapes is None:
        shapes = ShapeEngine(model, reshape)
    findings: list[Finding] = []
    findings += _integrity(model, shapes)
    reports: list[ReductionReport] = []
    for info in shapes.reductions:
        report, found = _reduction(info, reshaped=bool(reshape))
        reports.append(report)
        findings += found
    if engine == "openvino":
        from ovreduce.crosscheck import crosscheck

        ov_findings, reports = crosscheck(model, reports, reshape)
        findings += ov_findings
    reports.sort(key=lambda r: model.layer(r.layer_id).line or 0)
    order = {layer.id: i for i, layer in enumerate(model.layers)}
    findings.sort(key=lambda f: (order.get(f.layer_id or "", -1), _SEVERITY_RANK[f.severity]))
    return ModelReport(
        path=path or model.source,
        ir_version=model.ir_version,
        layer_count=len(model.layers),
        findings=tuple(findings),
        reductions=tuple(reports),
    )


def check_paths(
    paths: Sequence[Path],
    *,
    bin_path: Path | None = None,
    reshape: Mapping[str, PartialShape] | None = None,
    engine: Literal["native", "openvino"] = "native",
    limits: ParseLimits = ParseLimits(),
    progress: Any = None,
) -> CheckReport:
    """Check every model; a model that cannot be read is reported with its error, never raised."""
    models = []
    for p in paths:
        try:
            model = load_ir(p, bin_path, limits=limits)
            try:
                models.append(check_model(model, reshape=reshape, engine=engine, path=str(p)))
            finally:
                model.close()
        except OvReduceError as exc:
            models.append(ModelReport(path=str(p), error=exc))
        if progress is not None:
            progress.update(1)
    return CheckReport(tuple(models))


_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


def make_finding(code: str, layer: Layer | None, message: str, port: str | None = None) -> Finding:
    if layer is None:
        return Finding(code, message, port=port)
    return Finding(code, message, layer.id, layer.name, port, layer.line)


def dims_text(port: Port) -> str:
    return str(port.declared_shape) if port.has_dims else "no <dim> (scalar or dynamic rank)"


def compare_declared(port: Port, resolved: PartialShape) -> Literal["ok", "mismatch", "ambiguous", "less"]:
    """How a port's declared dims relate to a shape known by other means."""
    if not port.has_dims:
        if resolved.rank is None or resolved.rank == 0:
            return "ok"
        return "ambiguous"
    declared = port.declared_shape
    if not declared.compatible(resolved):
        return "mismatch"
    assert declared.dims is not None
    if resolved.dims is not None and any(
        d.is_fully_dynamic and r.is_static for d, r in zip(declared.dims, resolved.dims, strict=True)
    ):
        return "less"
    return "ok"


def _integrity(model: IRModel, shapes: ShapeEngine) -> list[Finding]:
    out: list[Finding] = []
    for layer in model.layers:
        for attr in BOOLEAN_ATTRIBUTES.get(layer.type, ()):
            text = layer.data.get(attr)
            if text is not None and text.lower() not in ("true", "false", "1", "0"):
                out.append(make_finding(
                    "bool-attr-invalid", layer,
                    f"{attr}={text!r} is not true/false/1/0 (any case): OpenVINO silently reads it as the "
                    f"attribute's default (false for {attr})",
                ))  # fmt: skip
        if layer.type in ("Parameter", "Const") and layer.outputs:
            out += _source_layer(layer, shapes.state((layer.id, layer.outputs[0].id)))
        for port in layer.inputs:
            ref = model.producer(layer.id, port.id)
            assert ref is not None
            src_layer = model.layer(ref[0])
            src = src_layer.output(ref[1])
            out += _edge(src_layer, src, layer, port)
    return out


def _source_layer(layer: Layer, state: PortState) -> list[Finding]:
    out: list[Finding] = []
    port = layer.outputs[0]
    code = "parameter-shape-mismatch" if layer.type == "Parameter" else "const-shape-mismatch"
    if layer.shape is not None:
        verdict = compare_declared(port, layer.shape)
        if verdict == "mismatch":
            out.append(make_finding(
                code, layer,
                f"shape attribute {layer.shape} but output port {port.id} declares {dims_text(port)}; "
                f"OpenVINO uses the attribute and ignores the dims",
                port.id,
            ))  # fmt: skip
        elif verdict == "ambiguous":
            out.append(make_finding(
                "dims-ambiguous", layer,
                f"shape attribute {layer.shape} but output port {port.id} has no <dim> (which reads as a scalar "
                f"or a dynamic rank); expected {layer.shape.rank} <dim> elements",
                port.id,
            ))  # fmt: skip
    if state.element_type is not None and port.precision is not None and port.precision != state.element_type:
        out.append(make_finding(
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
            out.append(make_finding(
                "edge-dims-mismatch", dst_layer,
                f"input port {dst.id} declares {dst.declared_shape} but the {desc} declares {src.declared_shape}",
                dst.id,
            ))  # fmt: skip
    elif src.has_dims != dst.has_dims:
        with_dims = src if src.has_dims else dst
        out.append(make_finding(
            "dims-ambiguous", dst_layer,
            f"input port {dst.id} declares {dims_text(dst)} but the {desc} declares {dims_text(src)}; "
            f"consistent only if {'the input' if src.has_dims else 'the producer'} is of dynamic rank "
            f"(OpenVINO writes no <dim> only for scalars and dynamic ranks; {with_dims.declared_shape} "
            f"has rank {len(with_dims.dims)})",
            dst.id,
        ))  # fmt: skip
    if src.precision is not None and dst.precision is not None and src.precision != dst.precision:
        out.append(make_finding(
            "edge-precision-mismatch", dst_layer,
            f"input port {dst.id} declares precision {dst.precision.precision} but the {desc} declares "
            f"{src.precision.precision}",
            dst.id,
        ))  # fmt: skip
    return out


def _reduction(info: ReductionInfo, *, reshaped: bool) -> tuple[ReductionReport, list[Finding]]:
    layer = info.layer
    out_port = layer.outputs[0] if layer.outputs else Port("?", None, (), ())
    found: list[Finding] = []
    if info.keep_dims_text is None:
        found.append(make_finding("keep-dims-missing", layer, "no keep_dims attribute: OpenVINO uses keep_dims=false"))
    status: Status
    inferred = info.output.shape
    if info.error is not None:
        status = "error"
        found.append(make_finding("reduce-invalid", layer, info.error))
    elif inferred is None:
        status = "unresolved"
        found.append(make_finding("reduce-unresolved", layer, _unresolved_reason(info), out_port.id))
    else:
        verdict = compare_declared(out_port, inferred)
        status = "mismatch" if verdict == "mismatch" else "ok"
        what = f"output port {out_port.id} declares {dims_text(out_port)} but {inferred} is inferred"
        basis = _basis(info)
        if verdict == "mismatch" and reshaped:
            found.append(
                make_finding("reshape-changes-output", layer, f"after --reshape, {what} ({basis})", out_port.id)
            )
        elif verdict == "mismatch":
            found.append(make_finding("reduce-output-mismatch", layer, f"{what} ({basis})", out_port.id))
        elif verdict == "ambiguous" and not reshaped:
            found.append(make_finding("dims-ambiguous", layer, f"{what}: a port without <dim> reads as a scalar or "
                                  "a dynamic rank", out_port.id))  # fmt: skip
        elif verdict == "less" and not reshaped:
            found.append(make_finding("reduce-output-less-precise", layer,
                                  f"{what}: compatible, but the declaration is less precise", out_port.id))  # fmt: skip
    if (
        info.data.element_type is not None
        and out_port.precision is not None
        and info.data.element_type.kind != "dynamic"
        and out_port.precision != info.data.element_type
    ):
        found.append(make_finding(
            "precision-mismatch", layer,
            f"output port {out_port.id} declares precision {out_port.precision.precision} but a {layer.type} "
            f"outputs its data type {info.data.element_type}",
            out_port.id,
        ))  # fmt: skip
    report = ReductionReport(
        layer_id=layer.id,
        layer_name=layer.name,
        type=layer.type,
        version=layer.version,
        keep_dims=info.keep_dims,
        axes=info.axes.values,
        axes_kind=info.axes.kind,
        data_type=None if info.data.element_type is None else info.data.element_type.name,
        input_shape=info.data.shape,
        declared_output_shape=out_port.declared_shape,
        declared_has_dims=out_port.has_dims,
        inferred_output_shape=inferred,
        status=status,
    )
    return report, found


def _basis(info: ReductionInfo) -> str:
    axes = "runtime axes" if info.axes.values is None else f"axes {list(info.axes.values)}"
    origin = {
        "declared": "as the producer declares it",
        "parameter": "from the Parameter's shape",
        "inferred": "as inferred",
        "const": "from the Const's shape",
        "reshape": "after --reshape",
    }
    src = origin.get(info.data.origin, "")
    return f"input {info.data.shape} {src}, {axes}, keep_dims={str(info.keep_dims).lower()}"


def _unresolved_reason(info: ReductionInfo) -> str:
    if info.data.shape is None:
        return (
            "the data input's shape cannot be resolved: its producer declares no <dim> (a scalar or a dynamic "
            "rank) and ovreduce cannot infer it natively; use --engine openvino"
        )
    return f"the axes cannot be resolved: {info.axes.reason}"
