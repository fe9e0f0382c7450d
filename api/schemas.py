"""Request and response models of the REST API (kept apart from the library's dataclasses).

The documents the library writes (``ovreduce.check/v1``, ``ovreduce.run/v1``, ``ovreduce.inspect/v1``)
are described here field by field so the OpenAPI schema says what clients get; every model allows extra
fields, so the library can add some without breaking the contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ovreduce import reports

__all__ = [
    "AuditAnswer",
    "AuditRequest",
    "CheckDocument",
    "ConformDocument",
    "DeviceList",
    "Health",
    "LayerDetail",
    "LayerEntry",
    "LayerList",
    "ModelList",
    "ModelSummary",
    "Problem",
    "Readiness",
    "RunDocument",
    "RunRequest",
    "Tensor",
]

JsonDim = int | str  # a static size, -1 (dynamic) or an interval "lo..hi" / "lo.."
JsonShape = list[JsonDim] | None  # None: dynamic rank
ModelId = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="the SHA-256 id of a stored model")]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- errors ------------------------------------------------------------------------------------------------
class FieldError(_Open):
    loc: list[str]
    msg: str
    type: str


class Problem(_Open):
    """RFC 9457 problem details, with the library's stable error ``code``."""

    type: str = Field(description="urn:ovreduce:problem:<code>")
    title: str
    status: int
    detail: str
    code: str = Field(description="stable error code, e.g. ir.syntax, not_found, limit.body")
    instance: str | None = None
    errors: list[FieldError] | None = Field(default=None, description="request validation errors (request.invalid)")
    layer_id: str | None = None
    layer_name: str | None = None


# -- health and devices -------------------------------------------------------------------------------
class Health(_Open):
    status: Literal["ok"]


class ReadinessCheck(_Open):
    ok: bool
    detail: str | None = None


class Readiness(_Open):
    status: Literal["ready"]
    openvino: ReadinessCheck
    store: ReadinessCheck


class Device(_Open):
    device: str
    full_name: str | None = None
    capabilities: list[str] | None = None
    default_inference_precision: str | None = None
    architecture: str | None = None


class DeviceList(_Open):
    schema_id: Literal["ovreduce.devices/v1"] = Field(alias="schema")
    devices: list[Device]


# -- the check document -------------------------------------------------------------------------------
class Finding(_Open):
    code: str
    severity: Literal["error", "warning", "info"]
    layer_id: str | None
    layer_name: str | None
    port: str | None
    line: int | None
    message: str


class Reduction(_Open):
    layer_id: str
    layer_name: str
    type: str
    version: str
    keep_dims: bool
    axes: list[int] | None
    axes_kind: str
    element_type: str | None
    input_shape: JsonShape
    input_shape_resolved: bool
    declared_output_shape: JsonShape
    declared_has_dims: bool
    inferred_output_shape: JsonShape
    inferred_output_resolved: bool
    status: Literal["ok", "mismatch", "error", "unresolved"]
    openvino_output_shape: JsonShape = Field(default=None, description="only with engine=openvino")


class ModelError(_Open):
    code: str
    message: str


class ModelReport(_Open):
    path: str
    ok: bool
    ir_version: int | None
    layer_count: int | None
    error: ModelError | None
    findings: list[Finding]
    reductions: list[Reduction]


class CheckDocument(_Open):
    """The ``ovreduce.check/v1`` document, with exactly one model."""

    schema_id: Literal["ovreduce.check/v1"] = Field(alias="schema")
    ok: bool
    models: list[ModelReport]


# -- stored models ------------------------------------------------------------------------------------
class FindingCounts(_Open):
    error: int
    warning: int
    info: int


class ModelSummary(_Open):
    id: ModelId
    name: str
    ir_version: int
    layer_count: int
    reductions: list[Reduction]
    ok: bool = Field(description="the check found no error")
    finding_counts: FindingCounts
    filename: str
    xml_bytes: int
    bin_bytes: int = Field(description="0 when the model has no .bin")
    created_at: str


class ModelList(_Open):
    models: list[ModelSummary]
    total_bytes: int
    max_bytes: int


class LayerEntry(_Open):
    """A reduction as in the check document; with ``all=true`` other layers too (identity fields only)."""

    layer_id: str
    layer_name: str
    type: str
    version: str
    line: int | None = None
    is_reduction: bool
    keep_dims: bool | None = None
    axes: list[int] | None = None
    axes_kind: str | None = None
    element_type: str | None = None
    input_shape: JsonShape = None
    input_shape_resolved: bool | None = None
    declared_output_shape: JsonShape = None
    declared_has_dims: bool | None = None
    inferred_output_shape: JsonShape = None
    inferred_output_resolved: bool | None = None
    status: Literal["ok", "mismatch", "error", "unresolved"] | None = None


class LayerList(_Open):
    id: ModelId
    all: bool
    layers: list[LayerEntry]


class Producer(_Open):
    layer_id: str
    layer_name: str
    type: str
    port: str


class PortInfo(_Open):
    port: str
    precision: str | None
    names: list[str]
    declared_shape: JsonShape
    declared_has_dims: bool
    shape: JsonShape
    shape_resolved: bool
    shape_origin: str
    element_type: str | None
    producer: Producer | None = Field(default=None, description="inputs only")


class LayerDetail(_Open):
    """One layer as ``ovreduce inspect --layer`` shows it."""

    id: ModelId
    layer_id: str
    layer_name: str
    type: str
    version: str
    line: int | None
    attributes: dict[str, str]
    inputs: list[PortInfo]
    outputs: list[PortInfo]
    findings: list[Finding]
    reduction: Reduction | None = Field(default=None, description="present for a reduction")


# -- runs -------------------------------------------------------------------------------------------------
Scalar = float | int | bool | str  # KServe passes NaN and infinities as strings


class Tensor(BaseModel):
    """A KServe v2 (Open Inference Protocol) tensor: flat row-major ``data`` (nested lists are accepted)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(max_length=1024, description='the port index ("0" data, "1" runtime axes) or the Parameter')
    shape: list[Annotated[int, Field(ge=0)]] = Field(max_length=64)
    datatype: str = Field(max_length=16, description="FP32, FP16, BF16, FP64, INT8...INT64, UINT8...UINT64, BOOL")
    data: list[Any]


Backend = Literal["numpy", "openvino"]


def _both_backends() -> list[Backend]:
    return ["numpy", "openvino"]


class RunRequest(BaseModel):
    """What to run; every field is optional."""

    model_config = ConfigDict(extra="forbid", strict=True)

    inputs: list[Tensor] = Field(default_factory=list, max_length=2, description="given inputs; others are seeded")
    shapes: dict[str, str] = Field(
        default_factory=dict,
        max_length=2,
        description='shape of generated data for a dynamic input, e.g. {"0": "[1,8,64]"} (dynamic dims default to 1)',
    )
    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="seed for generated inputs")
    backends: list[Backend] = Field(
        default_factory=_both_backends, min_length=1, max_length=2,
        description="the first one that succeeds is the reference",
    )  # fmt: skip
    device: str = Field(default="CPU", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:,()\-]+$")
    precision: Literal["f32", "f16", "bf16", "default"] = "f32"
    atol: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    rtol: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class TensorOut(_Open):
    name: str
    shape: list[int]
    datatype: str
    data: list[Scalar]


class RunLayer(_Open):
    layer_id: str
    layer_name: str
    type: str
    keep_dims: bool
    axes: list[int] | None
    element_type: str


class RunInput(_Open):
    name: str
    shape: list[int]
    datatype: str | None


class BackendResult(_Open):
    backend: str
    ok: bool
    shape: list[int] | None
    datatype: str | None
    error: str | None
    seconds: float
    precision: str | None = None
    effective_precision: str | None = None
    notes: list[str] | None = None


class Comparison(_Open):
    reference: str
    candidate: str
    ok: bool
    total: int
    mismatched: int
    atol: float
    rtol: float
    error: str | None


class RunDocument(_Open):
    """The ``ovreduce.run/v1`` document plus every backend's output as a KServe v2 tensor."""

    schema_id: Literal["ovreduce.run/v1"] = Field(alias="schema")
    id: ModelId
    ok: bool
    layer: RunLayer
    inputs: list[RunInput]
    results: list[BackendResult]
    comparisons: list[Comparison]
    notes: list[str]
    outputs: list[TensorOut]


# -- audit and conform ----------------------------------------------------------------------------------------
class AuditRequest(BaseModel):
    """What to audit with; every field is optional."""

    model_config = ConfigDict(extra="forbid", strict=True)

    inputs: list[Tensor] = Field(
        default_factory=list, max_length=256, description="model inputs by tensor or Parameter name; others are seeded"
    )
    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="seed for generated inputs")
    device: str = Field(default="CPU", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:,()\-]+$")
    precision: Literal["f32", "f16", "bf16", "default"] = Field(
        default="default", description="default: what the device does when left alone"
    )
    atol: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    rtol: float | None = Field(default=None, ge=0, allow_inf_nan=False)


@dataclass(frozen=True, slots=True)
class AuditAnswer(reports.AuditDocument):
    """The ``ovreduce.audit/v1`` document of a stored model, with the model's id."""

    __pydantic_config__ = reports.AuditDocument.__pydantic_config__

    id: str = ""


class ConformNodeEntry(_Open):
    node: str
    op_type: str
    status: str
    ok: bool
    observable: bool


class ConformDocument(_Open):
    """The ``ovreduce.conform/v1`` document (see ``ovreduce conform --format json``)."""

    schema_id: Literal["ovreduce.conform/v1"] = Field(alias="schema")
    ok: bool
    model: str
    error: str | None
    nodes: list[ConformNodeEntry]
