"""The documents ovreduce produces: one typed definition each, and the one way to turn them into JSON.

Every class here is a frozen dataclass whose field names are the JSON keys, in the order they are
written. The CLI renders them (text, JUnit, SARIF, JSON), and the REST API uses the same classes as its
response models, so a renamed field is a type error everywhere at once rather than a silent change of the
wire format. Documents hold plain values only (strings, numbers, lists of dims), never server-side state:
nothing in them is a file the reader did not name.

=========================  ====================================================================
document                   class
=========================  ====================================================================
``ovreduce.check/v1``      :class:`CheckDocument` (one :class:`ModelCheck` per model)
``ovreduce.inspect/v1``    :class:`InspectDocument`
``ovreduce.run/v1``        :class:`RunDocument`
``ovreduce.audit/v1``      :class:`AuditDocument`
``ovreduce.conform/v1``    :class:`ConformDocument`
``ovreduce.devices/v1``    :class:`DevicesDocument`
=========================  ====================================================================

Measured values (errors, times) are floats; a value that is not finite stays a float (NaN, inf) here,
and each renderer writes it as its format allows (the API as the strings "NaN", "Infinity").

The documents of ``check`` (and what all documents share) are defined when this module is imported; the
others on first use of any of them (PEP 562), so that ``ovreduce check`` does not pay for defining twenty
dataclasses it never uses. Either way they are this module's: ``ovreduce.reports.AuditDocument`` is the class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ovreduce._report_core import (
    CheckDocument,
    ErrorInfo,
    Finding,
    JsonDocument,
    ModelCheck,
    ReductionCheck,
    Severity,
    Status,
    layer_path,
    to_json,
)
from ovreduce.shapes import JsonShape

if TYPE_CHECKING:
    from ovreduce._report_more import (
        AuditDocument,
        AuditInput,
        AuditLayer,
        BackendRun,
        Comparison,
        ConformDocument,
        ConformNode,
        Device,
        DevicesDocument,
        DriftPart,
        DriftSplit,
        FinalOutput,
        InspectDocument,
        LayerView,
        Measured,
        PortView,
        Producer,
        RunDocument,
        RunLayer,
        TargetHeadroom,
        TargetStage,
        TargetSummary,
        TensorInfo,
        comparison_fields,
    )

__all__ = [
    "AuditDocument",
    "AuditInput",
    "AuditLayer",
    "BackendRun",
    "CheckDocument",
    "Comparison",
    "ConformDocument",
    "ConformNode",
    "Device",
    "DevicesDocument",
    "DriftPart",
    "DriftSplit",
    "ErrorInfo",
    "FinalOutput",
    "Finding",
    "InspectDocument",
    "JsonDocument",
    "LayerView",
    "Measured",
    "ModelCheck",
    "PortView",
    "Producer",
    "ReductionCheck",
    "RunDocument",
    "RunLayer",
    "Severity",
    "Status",
    "TargetHeadroom",
    "TargetStage",
    "TargetSummary",
    "TensorInfo",
    "comparison_fields",
    "layer_path",
    "to_json",
]

# The names the documents' annotations use, for whoever resolves them here (pydantic, typing.get_type_hints).
_ANNOTATION_NAMES = (Any, Literal, JsonShape)
_MORE = frozenset(
    [
        "AuditDocument",
        "AuditInput",
        "AuditLayer",
        "BackendRun",
        "Comparison",
        "ConformDocument",
        "ConformNode",
        "Device",
        "DevicesDocument",
        "DriftPart",
        "DriftSplit",
        "FinalOutput",
        "InspectDocument",
        "LayerView",
        "Measured",
        "PortView",
        "Producer",
        "RunDocument",
        "RunLayer",
        "TargetHeadroom",
        "TargetStage",
        "TargetSummary",
        "TensorInfo",
        "comparison_fields",
    ]
)


def __getattr__(name: str) -> Any:
    """The documents defined on first use: all of them at once, kept in this module's namespace (where their
    annotations are resolved)."""
    if name not in _MORE:
        raise AttributeError(f"module 'ovreduce.reports' has no attribute {name!r}")
    from ovreduce import _report_more

    globals().update({n: getattr(_report_more, n) for n in _MORE})
    return globals()[name]
