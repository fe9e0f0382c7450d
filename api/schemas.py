"""Request models of the REST API, and the answers that are the service's own.

The documents (``ovreduce.check/v1``, ``run/v1``, ``inspect/v1``, ``audit/v1``, ``conform/v1``, ``devices/v1``) are
the library's dataclasses (:mod:`ovreduce.reports`), used as response models as they are; an answer that adds to one
(a stored model's ``id``, a run's output tensors) extends the library's class, so the wire format is written once.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from ovreduce.reports.audit import AuditDocument
from ovreduce.reports.check import ReductionCheck
from ovreduce.reports.common import JsonDocument
from ovreduce.reports.inspect import LayerView
from ovreduce.reports.run import RunDocument

__all__ = [
    "AuditAnswer",
    "AuditRequest",
    "Health",
    "LayerDetail",
    "LayerEntry",
    "LayerList",
    "ModelList",
    "ModelSummary",
    "OutputTensor",
    "Problem",
    "Readiness",
    "RunAnswer",
    "RunRequest",
    "Tensor",
    "V2InferRequest",
    "fields_of",
]

ModelId = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="the SHA-256 id of a stored model")]
Seed = Annotated[int, Field(ge=0, lt=2**63, description="seed for generated inputs")]
Device = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:,()\-]+$")]
Precision = Literal["f32", "f16", "bf16", "default"]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# the options ovreduce reads from a KServe request's JSON: an inference's parameters, the repository index's key
V2_OPTIONS = ("backend", "device", "precision", "atol", "rtol", "binary_data_output", "ready")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


def near_miss(name: str, known: Collection[str]) -> str | None:
    """The one of ``known`` that ``name`` misspells (``precison``, ``Device``, ``paramters``), if any: a key of ours so
    misspelt would be dropped, and the request done without what it holds."""
    near = None if name in known else difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.86)
    return near[0] if near else None


class _V2(_Strict):
    """A KServe v2 object: a client's own keys are let through (the protocol allows extensions), one of its own
    misspelt is refused, naming the one meant."""

    @model_validator(mode="before")
    @classmethod
    def _misspelt(cls, data: Any) -> Any:
        for key in data if isinstance(data, dict) else ():
            near = near_miss(key, tuple(cls.model_fields)) if isinstance(key, str) else None
            if near is not None:
                raise ValueError(f"{key!r} is not a key ovreduce reads; did you mean {near!r}?")
        return data


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
    reductions: list[ReductionCheck]
    ok: bool = Field(description="the check found no error")
    finding_counts: FindingCounts
    unready: dict[str, str] | None = None
    filename: str
    bin_filename: str | None
    xml_bytes: int
    bin_bytes: int = Field(description="0 when the model has no .bin")
    created_at: str


class ModelList(_Open):
    models: list[ModelSummary]
    total_bytes: int
    max_bytes: int


# Its fields are ReductionCheck's (optional, but for a layer's identity), so the check document's are written once.
_REDUCTION = get_type_hints(ReductionCheck)
_ENTRY: dict[str, Any] = {name: (_REDUCTION[name], ...) for name in ("layer_id", "layer_name", "type", "version")}
_ENTRY |= {"line": (int | None, None), "body_path": (str | None, None), "is_reduction": (bool, ...)}
_ENTRY |= {name: (hint | None, None) for name, hint in _REDUCTION.items() if name not in _ENTRY}
LayerEntry = create_model(
    "LayerEntry",
    __base__=_Open,
    __doc__="A reduction as in the check document (every field of its ``ReductionCheck``); with ``all=true`` other "
    "layers\ntoo, with their identity fields only (``layer_id`` to ``version``, ``line``, ``body_path``).",
    **_ENTRY,
)


class LayerList(_Open):
    id: ModelId
    all: bool
    layers: list[LayerEntry]  # type: ignore[valid-type]


# -- runs -------------------------------------------------------------------------------------------------
class Tensor(_Strict):
    """A KServe v2 (Open Inference Protocol) tensor: flat row-major ``data`` (or lists nested as its shape)."""

    name: str = Field(max_length=1024, description='the port index ("0" data, "1" runtime axes) or the Parameter')
    shape: list[Annotated[int, Field(ge=0)]] = Field(max_length=64)
    datatype: str = Field(max_length=16, description="FP32, FP16, BF16, FP64, INT8...INT64, UINT8...UINT64, BOOL")
    data: list[Any]


Backend = Literal["numpy", "openvino"]


class RunRequest(BaseModel):
    """What to run; every field is optional."""

    model_config = ConfigDict(extra="forbid", strict=True)

    inputs: list[Tensor] = Field(default_factory=list, max_length=2, description="given inputs; others are seeded")
    shapes: dict[str, str] = Field(
        default_factory=dict,
        max_length=2,
        description='shape of generated data for a dynamic input, e.g. {"0": "[1,8,64]"}; the layer compiles for the '
        "inputs' shapes (dynamic dims left: the interval's lower bound, at least 1)",
    )
    seed: Seed = 0
    backends: list[Backend] = Field(
        default_factory=lambda: list(get_args(Backend)), min_length=1, max_length=2,
        description="the first one that succeeds is the reference",
    )  # fmt: skip
    device: Device = "CPU"
    precision: Precision = "f32"
    atol: Tolerance | None = None
    rtol: Tolerance | None = None


# -- audit and conform ----------------------------------------------------------------------------------------
class AuditRequest(BaseModel):
    """What to audit with; every field is optional."""

    model_config = ConfigDict(extra="forbid", strict=True)

    inputs: list[Tensor] = Field(
        default_factory=list, max_length=256, description="model inputs by tensor or Parameter name; others are seeded"
    )
    shapes: dict[str, str] = Field(
        default_factory=dict,
        max_length=256,
        description='shapes of generated inputs by name, e.g. {"x": "[1,3,224,224]"}: the model is reshaped to them '
        "(and to the given inputs) before it compiles; dynamic dims left get a default the model accepts",
    )
    seed: Seed = 0
    device: Device = "CPU"
    precision: Precision = Field(default="default", description="default: what the device does when left alone")
    atol: Tolerance | None = None
    rtol: Tolerance | None = None
    fail_on_drift: Tolerance | None = Field(
        default=None,
        description="also fail a reduction whose output differs from an f32 run of the whole model by more than "
        "this relative difference (default: drift is reported, never failed)",
    )
    steps: int = Field(
        default=0, ge=0, le=64,
        description="decode steps after the first run of a stateful model (an LLM), its state carried between them; "
        "each row gives the step of its worst error",
    )  # fmt: skip
    target: Literal["f16", "bf16"] | None = Field(
        default=None,
        description="also judge whether each reduction survives this precision (a GPU's or NPU's f16, an AMX "
        "CPU's bf16) from its captured input chain: an overflow or an error outside its tolerance fails the "
        "audit; with a device that is not present, the model runs on the CPU and the figures are emulated",
    )


def fields_of(doc: Any) -> dict[str, Any]:
    """A library document's fields as keyword arguments, to build the API's answer that extends it."""
    return {f.name: getattr(doc, f.name) for f in dataclasses.fields(doc)}


@dataclass(frozen=True, slots=True)
class LayerDetail(LayerView):
    """One layer of a stored model as ``ovreduce inspect --layer`` shows it, with the model's id."""

    id: str = ""


@dataclass(frozen=True, slots=True)
class OutputTensor(JsonDocument):
    """A backend's output as a KServe v2 tensor (flat, row-major ``data``)."""

    __pydantic_config__ = RunDocument.__pydantic_config__

    name: str
    shape: tuple[int, ...]
    datatype: str
    data: list[Any]


@dataclass(frozen=True, slots=True)
class RunAnswer(RunDocument):
    """The ``ovreduce.run/v1`` document of a stored model's layer, plus every backend's output tensor."""

    id: str = ""
    outputs: tuple[OutputTensor, ...] = ()


@dataclass(frozen=True, slots=True)
class AuditAnswer(AuditDocument):
    """The ``ovreduce.audit/v1`` document of a stored model, with the model's id."""

    id: str = ""


# -- KServe v2 / Open Inference Protocol (api.routes.v2) ------------------------------------------------------
# A request's ``parameters``, where ``null`` means none: KServe's own v2 data model writes ``"parameters": null`` for a
# request, input or output that has none (its ``model_dump()``), and KServe's server takes it.
V2GivenParameters = Annotated[dict[str, Any], BeforeValidator(lambda value: {} if value is None else value)]


class V2InputTensor(_V2):
    """An inference request's input: JSON ``data``, or ``parameters.binary_data_size`` bytes after the header."""

    name: str = Field(max_length=1024)
    shape: list[Annotated[int, Field(ge=0)]] = Field(max_length=64)
    datatype: str = Field(max_length=16)
    parameters: V2GivenParameters = Field(default_factory=dict, max_length=64)
    data: list[Any] | None = None


class V2RequestedOutput(_V2):
    """An output the client asks for (``parameters.binary_data``: answer it as binary data)."""

    name: str = Field(max_length=1024)
    parameters: V2GivenParameters = Field(default_factory=dict, max_length=64)


class V2InferRequest(_V2):
    """The JSON header of ``POST /v2/models/{name}/infer``."""

    id: str | None = Field(default=None, max_length=1024)
    parameters: V2GivenParameters = Field(default_factory=dict, max_length=64)
    inputs: list[V2InputTensor] = Field(max_length=8)
    outputs: list[V2RequestedOutput] | None = Field(default=None, max_length=8)
