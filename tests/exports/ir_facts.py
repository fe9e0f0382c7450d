"""Facts about an OpenVINO model read with openvino's own API: what the export tests assert and generate.py prints.

Only openvino is needed (no torch, no openvino-tokenizers), so the tests and the generator count the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

BODY_OPS = ("Loop", "TensorIterator", "If")


def bodies(op: Any) -> list[Any]:
    """The bodies of a Loop/TensorIterator (one) or an If (then, else); none for other ops."""
    kind = op.get_type_name()
    if kind in ("Loop", "TensorIterator"):
        return [op.get_function()]
    if kind == "If":
        return [op.get_then_body(), op.get_else_body()]
    return []


def walk(model: Any, depth: int = 0) -> Iterator[tuple[Any, int]]:
    """Every op of ``model`` and, recursively, of its bodies, with its depth (0 at the top level)."""
    for op in model.get_ordered_ops():
        yield op, depth
        for body in bodies(op):
            yield from walk(body, depth + 1)


@dataclass(frozen=True)
class ReduceCounts:
    top: Counter[str]  # Reduce* op type -> count, at the top level
    bodies: Counter[str]  # the same inside Loop/TensorIterator/If bodies, at any depth


def reduce_counts(model: Any) -> ReduceCounts:
    top: Counter[str] = Counter()
    inner: Counter[str] = Counter()
    for op, depth in walk(model):
        kind = op.get_type_name()
        if kind.startswith("Reduce"):
            (inner if depth else top)[kind] += 1
    return ReduceCounts(top, inner)


def op_types(model: Any) -> Counter[str]:
    """Op type -> count over the whole model, bodies included."""
    return Counter(op.get_type_name() for op, _ in walk(model))


def const_types(model: Any) -> Counter[str]:
    """Element type name (f32, f16, u4, u8, ...) -> number of Constant ops, bodies included."""
    return Counter(
        op.get_output_element_type(0).get_type_name() for op, _ in walk(model) if op.get_type_name() == "Constant"
    )


def inputs(model: Any) -> list[tuple[str, str, str]]:
    """(name, element type, partial shape) of each model input, in order."""
    return [(i.get_any_name(), i.get_element_type().get_type_name(), str(i.get_partial_shape())) for i in model.inputs]


def loop_trip_count_sources(model: Any) -> list[str]:
    """For each top-level Loop, the type of the op that produces its trip count (input 0)."""
    return [
        op.input_value(0).get_node().get_type_name() for op in model.get_ordered_ops() if op.get_type_name() == "Loop"
    ]
