"""The ``ovreduce.inspect/v1`` document: a model's reductions (or the layers asked for) with their ports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ovreduce.reports.check import Finding, ReductionCheck
from ovreduce.reports.common import JsonDocument
from ovreduce.shapes import JsonShape

__all__ = ["InspectDocument", "LayerView", "PortView", "Producer"]


@dataclass(frozen=True, slots=True)
class Producer(JsonDocument):
    """The output port that feeds an input port."""

    layer_id: str
    layer_name: str
    type: str
    port: str


@dataclass(frozen=True, slots=True)
class PortView(JsonDocument):
    """A port as declared, and its shape and element type as ovreduce resolves them."""

    port: str
    precision: str | None
    names: tuple[str, ...]
    declared_shape: JsonShape
    declared_has_dims: bool
    shape: JsonShape
    shape_resolved: bool
    shape_origin: str
    element_type: str | None
    producer: Producer | None = None  # input ports only
    # why the shape is unresolved, or has dims ovreduce leaves unknown where OpenVINO may know them (a value it does
    # not compute feeds them, or the file declares them), when ovreduce knows (null: resolved, or nothing more known)
    shape_reason: str | None = None


@dataclass(frozen=True, slots=True)
class LayerView(JsonDocument):
    """One layer with its attributes, ports, findings and (for a reduction) its check."""

    layer_id: str
    layer_name: str
    type: str
    version: str
    line: int | None
    attributes: dict[str, str]
    inputs: tuple[PortView, ...]
    outputs: tuple[PortView, ...]
    findings: tuple[Finding, ...]
    reduction: ReductionCheck | None = None
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level


@dataclass(frozen=True, slots=True)
class InspectDocument(JsonDocument):
    """``ovreduce.inspect/v1``: the reductions of a model (or the layers asked for)."""

    path: str
    name: str
    ir_version: int
    layer_count: int
    reduction_count: int
    layers: tuple[LayerView, ...]
    schema: Literal["ovreduce.inspect/v1"] = "ovreduce.inspect/v1"
