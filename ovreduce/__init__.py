"""ovreduce: the truth about the Reduce* layers of OpenVINO IR models.

Read an IR, re-infer every reduction's output shape as OpenVINO would, check the whole graph's
declared dims, and execute reductions on a NumPy reference and on the OpenVINO runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ovreduce._openvino import load_extensions
    from ovreduce.audit import AuditReport, audit_model
    from ovreduce.backends.base import LayerSpec
    from ovreduce.backends.numpy import NumPyBackend
    from ovreduce.backends.openvino import OpenVINOBackend
    from ovreduce.check import check_model, check_paths
    from ovreduce.check.inspect import inspect_model
    from ovreduce.compare import compare
    from ovreduce.conform import ConformReport, conform_model
    from ovreduce.errors import (
        BackendError,
        DeviceNotAvailableError,
        ElementTypeError,
        InputError,
        IRError,
        IRStructureError,
        IRSyntaxError,
        IRVersionError,
        LimitExceededError,
        NotFoundError,
        OvReduceError,
        ShapeInferenceError,
        WeightsError,
    )
    from ovreduce.exports import Export, find_export, tokenize
    from ovreduce.ir.model import IRModel, Layer, Port
    from ovreduce.ir.parser import ParseLimits, load_ir, parse_ir
    from ovreduce.reports.audit import AuditDocument
    from ovreduce.reports.check import CheckDocument, Finding, ModelCheck, ReductionCheck
    from ovreduce.reports.conform import ConformDocument
    from ovreduce.reports.inspect import InspectDocument
    from ovreduce.reports.run import Comparison, RunDocument
    from ovreduce.run import RunReport, layer_spec, run_layer
    from ovreduce.shapes import Dimension, PartialShape

__version__ = "0.1.0"


def _decline_openvino_telemetry() -> None:
    """Keep OpenVINO from sending usage data from this process unless the user has agreed to it.

    Importing ``openvino`` starts the telemetry of its model converter (``openvino.tools.ovc``, through the
    ``openvino-telemetry`` package), which, where the user has never answered (no consent file), sends events to
    Google Analytics and writes a client id and a usage count under ``~/intel``. OpenVINO uses a no-op in its place
    when ``openvino_telemetry`` cannot be imported (its own fallback for an install without it), which this makes so,
    before OpenVINO is imported, unless the consent file holds ``1`` (``opt_in_out --opt_in``): then the user's choice
    stands. A process that imported either before ovreduce keeps what it has."""
    import os
    import sys

    if "openvino_telemetry" in sys.modules or "openvino" in sys.modules:
        return
    try:
        if os.name == "nt":
            folder = os.path.join(os.path.expandvars("$LOCALAPPDATA"), "Intel Corporation")
        else:
            folder = os.path.join(os.path.expanduser("~"), "intel")
        with open(os.path.join(folder, "openvino_telemetry"), encoding="utf-8", errors="replace") as file:
            agreed = file.readline().strip() == "1"
    except (OSError, RuntimeError):  # no consent file (or no home): the user never agreed
        agreed = False
    if not agreed:
        sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]


_decline_openvino_telemetry()

# Every name is resolved on first use (PEP 562): importing ovreduce (and running ``ovreduce check``) pays only
# for the modules a command uses, never for NumPy or OpenVINO unless it runs on them.
_LAZY = {
    "check_model": "ovreduce.check",
    "check_paths": "ovreduce.check",
    **dict.fromkeys(
        (
            "BackendError",
            "DeviceNotAvailableError",
            "ElementTypeError",
            "InputError",
            "IRError",
            "IRStructureError",
            "IRSyntaxError",
            "IRVersionError",
            "LimitExceededError",
            "NotFoundError",
            "OvReduceError",
            "ShapeInferenceError",
            "WeightsError",
        ),
        "ovreduce.errors",
    ),
    "IRModel": "ovreduce.ir.model",
    "Layer": "ovreduce.ir.model",
    "Port": "ovreduce.ir.model",
    "ParseLimits": "ovreduce.ir.parser",
    "load_ir": "ovreduce.ir.parser",
    "parse_ir": "ovreduce.ir.parser",
    "AuditDocument": "ovreduce.reports.audit",
    **dict.fromkeys(("CheckDocument", "Finding", "ModelCheck", "ReductionCheck"), "ovreduce.reports.check"),
    "ConformDocument": "ovreduce.reports.conform",
    "InspectDocument": "ovreduce.reports.inspect",
    "Comparison": "ovreduce.reports.run",
    "RunDocument": "ovreduce.reports.run",
    "Dimension": "ovreduce.shapes",
    "PartialShape": "ovreduce.shapes",
    "AuditReport": "ovreduce.audit",
    "inspect_model": "ovreduce.check.inspect",
    "audit_model": "ovreduce.audit",
    "compare": "ovreduce.compare",
    "ConformReport": "ovreduce.conform",
    "conform_model": "ovreduce.conform",
    "LayerSpec": "ovreduce.backends.base",
    "NumPyBackend": "ovreduce.backends.numpy",
    "OpenVINOBackend": "ovreduce.backends.openvino",
    "RunReport": "ovreduce.run",
    "layer_spec": "ovreduce.run",
    "run_layer": "ovreduce.run",
    "load_extensions": "ovreduce._openvino",
    "Export": "ovreduce.exports",
    "find_export": "ovreduce.exports",
    "tokenize": "ovreduce.exports",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ovreduce' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AuditDocument",
    "AuditReport",
    "BackendError",
    "CheckDocument",
    "Comparison",
    "ConformDocument",
    "ConformReport",
    "DeviceNotAvailableError",
    "Dimension",
    "ElementTypeError",
    "Export",
    "Finding",
    "IRError",
    "IRModel",
    "IRStructureError",
    "IRSyntaxError",
    "IRVersionError",
    "InputError",
    "InspectDocument",
    "Layer",
    "LayerSpec",
    "LimitExceededError",
    "ModelCheck",
    "NotFoundError",
    "NumPyBackend",
    "OpenVINOBackend",
    "OvReduceError",
    "ParseLimits",
    "PartialShape",
    "Port",
    "ReductionCheck",
    "RunDocument",
    "RunReport",
    "ShapeInferenceError",
    "WeightsError",
    "__version__",
    "audit_model",
    "check_model",
    "check_paths",
    "compare",
    "conform_model",
    "find_export",
    "inspect_model",
    "layer_spec",
    "load_extensions",
    "load_ir",
    "parse_ir",
    "run_layer",
    "tokenize",
]
