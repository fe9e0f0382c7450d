"""The ``ovreduce.devices/v1`` document, and :class:`Device`, which the run, audit and conform documents
name the device they ran on with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ovreduce.reports.common import JsonDocument

__all__ = ["Device", "DevicesDocument"]


@dataclass(frozen=True, slots=True)
class Device(JsonDocument):
    """An OpenVINO device available here."""

    device: str
    full_name: str | None = None
    capabilities: tuple[str, ...] | None = None  # OpenVINO's OPTIMIZATION_CAPABILITIES (BF16: bf16 instructions)
    default_inference_precision: str | None = None
    architecture: str | None = None
    # What OpenVINO executes on this device, asked of it by compiling a one-reduction model (null: a virtual
    # device). Results that depend on the CPU's instructions differ between machines exactly where these do.
    # Requested precision (f32, f16, bf16, default) -> the inference precision the compiled model reports:
    inference_precisions: dict[str, str] | None = None
    # A reduction's element type (f32, bf16, f16) -> the precision it executes in (the same type: natively;
    # f32: emulated through f32):
    reduction_precisions: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class DevicesDocument(JsonDocument):
    """``ovreduce.devices/v1``."""

    devices: tuple[Device, ...]
    schema: Literal["ovreduce.devices/v1"] = "ovreduce.devices/v1"
    openvino: str | None = None  # the OpenVINO version
