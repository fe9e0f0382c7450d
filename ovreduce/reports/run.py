"""The ``ovreduce.run/v1`` document: one layer run on several backends, and :class:`Comparison`, how two
outputs compare (which the audit and conform documents carry too, inline as :class:`Measured`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ovreduce.reports.common import WIRE, JsonDocument
from ovreduce.reports.devices import Device

__all__ = [
    "BLIND",
    "BackendRun",
    "Comparison",
    "Measured",
    "RunDocument",
    "RunLayer",
    "TensorInfo",
    "comparison_fields",
]

BLIND = "on an input that cannot show an error"
"""What a run's note says of an agreement that rests on such an input ("the backends agree on an input...: why"), and
its text result too."""


@dataclass(frozen=True)
class Comparison(JsonDocument):
    """The comparison of one candidate output with one reference; truthy when they agree.

    Made by :func:`ovreduce.compare.compare`; ``first_mismatch`` locates the first failing element.
    """

    __pydantic_config__ = WIRE

    reference: str
    candidate: str
    ok: bool
    total: int
    mismatched: int
    atol: float
    rtol: float
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    required_atol: float | None = None  # the smallest atol that passes at this rtol (None: none would)
    required_rtol: float | None = None  # the smallest rtol that passes at this atol (None: none would)
    first_mismatch: dict[str, Any] | None = None
    nan: dict[str, int] = field(default_factory=dict)
    inf: dict[str, int] = field(default_factory=dict)
    # The mismatches on a non-finite value (NaN against a number, an infinity against anything but itself): each
    # an infinite error, so max_abs_error and max_rel_error are infinite when this is not 0
    nonfinite_mismatched: int = 0
    error: str | None = None  # why no element-wise comparison was possible (shape or type differ)
    exact: bool = False
    allowance_max: float | None = None  # the largest per-element allowance added to atol, if any
    # Elements left out of the comparison because the specification leaves their value undefined (a ReduceMax
    # over an empty set); they count in ``total``, never in ``mismatched`` or the error figures.
    undefined: int = 0

    def __bool__(self) -> bool:
        return self.ok


def comparison_fields(c: Comparison | None) -> dict[str, Any]:
    """A comparison's measurements as the keyword arguments of a row that carries them inline
    (:class:`AuditLayer`, :class:`ConformNode`); nothing when there was no comparison."""
    if c is None:
        return {}
    return {
        "max_abs_error": c.max_abs_error,
        "max_rel_error": c.max_rel_error,
        "mismatched": c.mismatched,
        "total": c.total,
        "atol": c.atol,
        "rtol": c.rtol,
        "exact": c.exact,
        "required_atol": c.required_atol,
        "required_rtol": c.required_rtol,
        "first_mismatch": c.first_mismatch,
        "nan": c.nan,
        "inf": c.inf,
        "nonfinite_mismatched": c.nonfinite_mismatched,
        "allowance_max": c.allowance_max,
        "undefined": c.undefined,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Measured(JsonDocument):
    """A comparison's measurements carried inline by a row (null where nothing was compared); see
    :func:`comparison_fields`. In JSON they come first, before the row's own fields (dataclass field order)."""

    max_abs_error: float | None = None
    max_rel_error: float | None = None
    mismatched: int | None = None
    total: int | None = None
    atol: float | None = None
    rtol: float | None = None
    exact: bool | None = None
    required_atol: float | None = None
    required_rtol: float | None = None
    first_mismatch: dict[str, Any] | None = None
    nan: dict[str, int] | None = None
    inf: dict[str, int] | None = None
    nonfinite_mismatched: int | None = None
    allowance_max: float | None = None
    undefined: int | None = None


@dataclass(frozen=True, slots=True)
class RunLayer(JsonDocument):
    """What defines the layer that ran."""

    layer_id: str
    layer_name: str
    type: str
    keep_dims: bool
    axes: tuple[int, ...] | None
    element_type: str


@dataclass(frozen=True, slots=True)
class TensorInfo(JsonDocument):
    """A tensor's name (input index), shape and KServe datatype."""

    name: str
    shape: tuple[int, ...]
    datatype: str | None
    defaulted_dims: tuple[int, ...] = ()  # dims that were dynamic and that ovreduce chose a size for


@dataclass(frozen=True, slots=True)
class BackendRun(JsonDocument):
    """What one backend produced; ``precision``/``effective_precision`` only for OpenVINO backends."""

    __pydantic_config__ = WIRE

    backend: str
    ok: bool
    shape: tuple[int, ...] | None
    datatype: str | None
    error: str | None
    seconds: float
    precision: str | None = None  # the precision asked for
    effective_precision: str | None = None  # the precision the device reports it computed in
    notes: tuple[str, ...] = ()
    runtime_precision: str | None = None  # what the reduction executed in, from OpenVINO's execution graph


@dataclass(frozen=True, slots=True)
class RunDocument(JsonDocument):
    """``ovreduce.run/v1``: one layer run on several backends, each compared with the first that succeeded."""

    __pydantic_config__ = WIRE

    ok: bool
    layer: RunLayer
    inputs: tuple[TensorInfo, ...]
    results: tuple[BackendRun, ...]
    comparisons: tuple[Comparison, ...]
    notes: tuple[str, ...]
    schema: Literal["ovreduce.run/v1"] = "ovreduce.run/v1"
    body_path: str | None = None  # the ids path of the sub-graph body holding the layer ("12/then"); null: top level
    # agree: every backend ran and agrees with the first; disagree; failed: a backend failed; nothing-compared:
    # one backend ran, so nothing was compared
    outcome: Literal["agree", "disagree", "failed", "nothing-compared"] = "agree"
    # Where the outcome is agree: why the agreement establishes nothing, its input being one that cannot show an error
    # (constant, all zeros, not finite, empty, slices of one element), as an audit's row is not-established; null: the
    # agreement stands (and for every other outcome)
    not_established: str | None = None
    # The OpenVINO version and what each OpenVINO device that ran executes (see Device): the results depend on it
    openvino: str | None = None
    devices: tuple[Device, ...] = ()
