"""``to_json`` takes its shortcuts (plain values inline, each class's field names asked once) and gives what
the plain recursion gives, for every kind of document part."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ovreduce import reports
from ovreduce._report_core import _field_names
from ovreduce.check import check_paths
from ovreduce.reports import to_json

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples"


def _plain(doc: Any) -> Any:
    """The rule as first written."""
    if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
        return {name: _plain(getattr(doc, name)) for name in _field_names(type(doc))}
    if isinstance(doc, list | tuple):
        return [_plain(v) for v in doc]
    if isinstance(doc, Mapping):
        return {k: _plain(v) for k, v in doc.items()}
    return doc


def test_to_json_of_check_documents_is_the_plain_recursion() -> None:
    doc = check_paths(sorted(SAMPLES.glob("*.xml")))
    assert to_json(doc) == _plain(doc)
    assert doc.to_json() == _plain(doc)


def test_to_json_of_every_kind_of_part() -> None:
    comparison = reports.Comparison("numpy", "openvino", False, 4, 1, 1e-5, 1e-5, math.nan, math.inf,
                                    first_mismatch={"index": [0, 1], "values": (1.5, -0.0)}, nan={"a": 1})  # fmt: skip
    layer = reports.AuditLayer(
        layer_id="3", layer_name="r", type="ReduceMean", keep_dims=True, axes=(1,), input_shape=None,
        element_type="f32", ok=False, status="error", error=None, runtime_precision=None,
        plain_runtime_precision=None, notes=("a", "b"), drift=comparison, max_abs_error=2.0, nan={"x": 0},
    )  # fmt: skip

    class Named(tuple[int, int]):  # a tuple subclass is a list in JSON
        pass

    parts: list[Any] = [
        layer, comparison, [layer, None], (True, 1, 1.5, "s"), MappingProxyType({"k": [comparison]}),
        Named((1, 2)), {"nested": {"deeper": [(), [], {}]}}, reports.Device, 7, None,
    ]  # fmt: skip
    for part in parts:
        assert _same(to_json(part), _plain(part)), part


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN included, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)
