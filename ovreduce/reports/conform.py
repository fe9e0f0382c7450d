"""The ``ovreduce.conform/v1`` document: an ONNX model's mean/reduce nodes against ONNX semantics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ovreduce.reports.audit import AuditInput
from ovreduce.reports.common import WIRE, JsonDocument
from ovreduce.reports.devices import Device
from ovreduce.reports.run import Measured

__all__ = ["ConformDocument", "ConformNode"]


@dataclass(frozen=True, slots=True)
class ConformNode(Measured):
    """One ONNX node of interest and what OpenVINO's conversion made of it (measurements inline)."""

    __pydantic_config__ = WIRE

    node: str
    op_type: str
    domain: str
    version: int | None
    observable: bool
    missing_tensors: tuple[str, ...]
    status: Literal["ok", "disagree", "error", "not-observable"]
    ok: bool
    error: str | None
    notes: tuple[str, ...]
    dequantized_max_abs_diff: float | None = None  # QLinearReduceMean: the difference in real values


@dataclass(frozen=True, slots=True)
class ConformDocument(JsonDocument):
    """``ovreduce.conform/v1``: an ONNX model's mean/reduce nodes against ONNX semantics."""

    __pydantic_config__ = WIRE

    ok: bool
    model: str
    opset: int | None
    device: str
    precision: str
    error: str | None
    inputs: tuple[AuditInput, ...]
    nodes: tuple[ConformNode, ...]
    saved_ir: str | None
    notes: tuple[str, ...]
    seconds: float
    schema: Literal["ovreduce.conform/v1"] = "ovreduce.conform/v1"
    # The OpenVINO version and what the device executes (see Device): the results depend on it
    openvino: str | None = None
    devices: tuple[Device, ...] = ()
