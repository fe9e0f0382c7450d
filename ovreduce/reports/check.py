"""The ``ovreduce.check/v1`` document: every model checked, its findings and its reductions' shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ovreduce.reports.common import ErrorInfo, JsonDocument
from ovreduce.shapes import JsonShape

__all__ = ["CheckDocument", "Finding", "ModelCheck", "ReductionCheck", "Severity", "Status"]


Severity = Literal["error", "warning", "info"]
Status = Literal["ok", "mismatch", "error", "unresolved"]


@dataclass(frozen=True, slots=True)
class Finding(JsonDocument):
    """One problem (or remark) about a model, tied to a layer and port where it has one."""

    code: str
    severity: Severity
    layer_id: str | None
    layer_name: str | None
    port: str | None
    line: int | None  # the layer's line in the XML
    message: str
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class ReductionCheck(JsonDocument):
    """One reduction layer as check sees it: declared against inferred output shape."""

    layer_id: str
    layer_name: str
    type: str
    version: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    axes_kind: str
    element_type: str | None
    input_shape: JsonShape
    input_shape_resolved: bool
    # Who knows the input's shape: ovreduce's own rules, OpenVINO's inference (no native rule on the way), or
    # only the dims the producer declares (no rule, no reshape); None: unresolved.
    input_shape_engine: Literal["native", "openvino", "declared"] | None
    declared_output_shape: JsonShape
    declared_has_dims: bool
    inferred_output_shape: JsonShape
    inferred_output_resolved: bool
    status: Status
    openvino_checked: bool = False  # the model was also read by OpenVINO (engine "openvino")
    openvino_output_shape: JsonShape = None  # OpenVINO's shape (null: not matched, or a dynamic rank)
    openvino_output_resolved: bool = False  # OpenVINO's model has this layer, so openvino_output_shape is its shape
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class ModelCheck(JsonDocument):
    """The check of one model, or why it could not be read (``error``)."""

    path: str
    ok: bool
    ir_version: int | None
    layer_count: int | None
    error: ErrorInfo | None
    findings: tuple[Finding, ...]
    reductions: tuple[ReductionCheck, ...]
    notes: tuple[str, ...] = ()  # what could not be analysed (a sub-graph body its layer's inputs do not feed)

    @property
    def not_checked(self) -> bool:
        """Whether the model was not checked for a reason other than its file (an ``error`` whose code is not an
        ``ir`` one: a reshape it cannot take, a worker that crashed), rather than unreadable."""
        return self.error is not None and not self.error.code.startswith("ir")


@dataclass(frozen=True, slots=True)
class CheckDocument(JsonDocument):
    """``ovreduce.check/v1``: every model checked."""

    ok: bool
    models: tuple[ModelCheck, ...]
    schema: Literal["ovreduce.check/v1"] = "ovreduce.check/v1"

    @property
    def unreadable(self) -> bool:
        return any(m.error is not None for m in self.models)
