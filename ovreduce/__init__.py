"""ovreduce: the truth about the Reduce* layers of OpenVINO IR models.

Read an IR, re-infer every reduction's output shape as OpenVINO would, check the whole graph's
declared dims, and execute reductions on a NumPy reference and on the OpenVINO runtime.
"""

from __future__ import annotations

from ovreduce.check import CheckReport, Finding, ModelReport, ReductionReport, check_model, check_paths
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
    UsageError,
    WeightsError,
)
from ovreduce.ir.model import IRModel, Layer, Port
from ovreduce.ir.parser import ParseLimits, load_ir, parse_ir
from ovreduce.shapes import Dimension, PartialShape

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "CheckReport",
    "DeviceNotAvailableError",
    "Dimension",
    "ElementTypeError",
    "Finding",
    "IRError",
    "IRModel",
    "IRStructureError",
    "IRSyntaxError",
    "IRVersionError",
    "InputError",
    "Layer",
    "LimitExceededError",
    "ModelReport",
    "NotFoundError",
    "OvReduceError",
    "ParseLimits",
    "PartialShape",
    "Port",
    "ReductionReport",
    "ShapeInferenceError",
    "UsageError",
    "WeightsError",
    "__version__",
    "check_model",
    "check_paths",
    "load_ir",
    "parse_ir",
]
