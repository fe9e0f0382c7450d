"""The reductions' own check: declared output dims against the shape OpenVINO would infer."""

from __future__ import annotations

from typing import Literal

from ovreduce.check.findings import LEGACY_PRECISION, compare_declared, dims_text, finding
from ovreduce.infer import ReductionInfo
from ovreduce.ir.model import NO_PORT
from ovreduce.ops.registry import type_name
from ovreduce.reports.check import Finding, ReductionCheck, Status

__all__ = ["reduction_check"]


def reduction_check(
    info: ReductionInfo, *, reshaped: bool, body_path: str | None = None, ir_version: int = 11
) -> tuple[ReductionCheck, list[Finding]]:
    """The check of one reduction (declared against inferred output shape) and its findings; ``body_path`` is
    the ids path of the body holding the layer (None: top level). In an IR v10 file a port precision is a legacy
    hint (:data:`~ovreduce.check.findings.LEGACY_PRECISION`): one that differs is ``legacy-precision``."""
    layer = info.layer
    out_port = layer.outputs[0] if layer.outputs else NO_PORT
    found: list[Finding] = []
    if info.keep_dims_text is None:
        found.append(finding("keep-dims-missing", layer, "no keep_dims attribute: OpenVINO uses keep_dims=false"))
    status: Status
    inferred = info.output.shape
    if info.error is not None:
        status = "error"
        found.append(finding("reduce-invalid", layer, _invalid(info, info.error)))
    elif inferred is None:
        status = "unresolved"
        found.append(finding("reduce-unresolved", layer, _unresolved_reason(info), out_port.id))
    else:
        verdict = compare_declared(out_port, inferred)
        status = "mismatch" if verdict == "mismatch" else "ok"
        if verdict != "ok":  # the message is only written for a finding
            what = f"output port {out_port.id} declares {dims_text(out_port)} but {inferred} is inferred"
            port = out_port.id
            if verdict == "mismatch" and reshaped:
                found.append(
                    finding("reshape-changes-output", layer, f"after reshaping, {what} ({_basis(info)})", port)
                )
            elif verdict == "mismatch":
                found.append(finding("reduce-output-mismatch", layer, f"{what} ({_basis(info)})", port))
            elif verdict == "ambiguous" and not reshaped:
                found.append(finding("dims-ambiguous", layer, f"{what}: a port without <dim> reads as a scalar or "
                                      "a dynamic rank", port))  # fmt: skip
            elif verdict == "less" and not reshaped:
                found.append(finding("reduce-output-less-precise", layer,
                                      f"{what}: compatible, but the declaration is less precise", port))  # fmt: skip
    data = info.data
    element_type = data.element_type
    if (
        info.error is None  # a node OpenVINO rejects has no output type: the error is the one finding
        and element_type is not None
        and out_port.precision is not None
        and element_type.kind != "dynamic"
        and out_port.precision is not element_type
        and out_port.precision != element_type
    ):
        said = (
            f"output port {out_port.id} declares precision {out_port.precision.precision} but a {layer.type} "
            f"outputs its data type {element_type}"
        )
        if ir_version == 10:
            found.append(finding("legacy-precision", layer, f"{said}; {LEGACY_PRECISION}", out_port.id))
        else:
            found.append(finding("precision-mismatch", layer, said, out_port.id))
    report = ReductionCheck(
        layer_id=layer.id,
        layer_name=layer.name,
        type=type_name(layer.type, layer.version),
        version=layer.version,
        keep_dims=info.keep_dims,
        axes=info.axes.values,
        axes_kind=info.axes.kind,
        element_type=None if element_type is None else element_type.name,
        input_shape=None if data.shape is None else data.shape.to_json(),
        input_shape_resolved=data.shape is not None,
        input_shape_engine=_engine(info),
        declared_output_shape=out_port.declared_shape.to_json(),
        declared_has_dims=out_port.has_dims,
        inferred_output_shape=None if inferred is None else inferred.to_json(),
        inferred_output_resolved=inferred is not None,
        status=status,
        body_path=body_path,
    )
    return report, found


_ORIGIN = {
    "declared": "as the producer declares it",
    "parameter": "from the Parameter's shape",
    "inferred": "as inferred",
    "const": "from the Const's shape",
    "reshape": "as reshaped",
    "openvino": "as OpenVINO infers it (no native rule on its way)",
}


def _basis(info: ReductionInfo) -> str:
    axes = "runtime axes" if info.axes.values is None else f"axes {list(info.axes.values)}"
    src = _ORIGIN.get(info.data.origin, "")
    return f"input {info.data.shape} {src}, {axes}, keep_dims={str(info.keep_dims).lower()}"


def _engine(info: ReductionInfo) -> Literal["native", "openvino", "declared"] | None:
    """Who knows the data input's shape: ovreduce's rules, OpenVINO's inference, or only the file's dims."""
    if info.data.shape is None:
        return None
    if info.data.origin in ("openvino", "declared"):
        return info.data.origin
    return "native"


def _unresolved_reason(info: ReductionInfo) -> str:
    if info.data.shape is None:
        why = info.data.reason or "its producer declares no <dim> (a scalar or a dynamic rank)"
        return (
            f"the data input's shape cannot be resolved: {why}, ovreduce cannot infer it natively, and "
            f"OpenVINO could not either"
        )
    return f"the axes cannot be resolved: {info.axes.reason}"


def _invalid(info: ReductionInfo, error: str) -> str:
    """OpenVINO's refusal of a reduction, with what its words leave out: that the input is a scalar, whose axis 0 or
    -1 OpenVINO takes and then, under keep_dims, has no dim to set to 1."""
    shape = info.data.shape
    if error == "Accessing out-of-range dimension" and shape is not None and shape.rank == 0:
        axes = list(info.axes.values) if info.axes.values is not None else "given"
        return f"{error}: axes {axes} of a scalar input (rank 0), which keep_dims=true cannot keep as a dim of 1"
    return error
