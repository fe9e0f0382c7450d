"""The family base of the native shape rules (:class:`ShapeRule`) and the helpers they share: attributes
read the way OpenVINO's IR reader reads them, small constant values as tensors (flat values and a shape).

A rule is a pure function of the inputs' shapes (and, on demand, their small constant values) to the
outputs' shapes, written after OpenVINO's ``src/core/shape_inference/include/<op>_shape_inference.hpp``.
A rule raises :class:`~ovreduce.errors.ShapeInferenceError` where OpenVINO refuses the inputs; the
outputs are then unresolved, with that message as the reason. Nothing here imports NumPy or OpenVINO.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import LayerContext, Op, PortState, ValueInfo
from ovreduce.shapes import Dimension, PartialShape

__all__ = [
    "BOOLEAN",
    "NotReadNativelyError",
    "ShapeRule",
    "Tensor",
    "broadcast_values",
    "const_tensor",
    "int_attr",
    "ints_attr",
    "normalize_axis",
    "str_attr",
    "wrapped",
]

BOOLEAN = ELEMENT_TYPES["boolean"]
Tensor = tuple[tuple[int, ...], tuple[int, ...]]  # (flat values, shape)


class ShapeRule(Op):
    """An op whose output shapes are a function of its inputs' shapes (and small constant values).

    Subclasses give :meth:`shapes` and, when the outputs' element type is not input 0's, :meth:`types`.
    An input whose shape is unresolved leaves every output unresolved, with that input's reason. Both read of
    the layer only what :attr:`layer_reads` says (its attributes; its name in messages only), so that the
    shape engine may give one layer's result to another that reads the same.
    """

    layer_reads = "attributes"

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        layer = ctx.layer
        states = [ctx.input(i) for i in range(len(layer.inputs))]
        etypes = self.types(layer, states)
        unresolved = next((s for s in states if s.shape is None), None)
        if unresolved is not None:
            reason = unresolved.reason or f"an input of {layer.type} ({layer.name}) has no resolved shape"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        try:
            shapes = self.shapes(ctx, [s.shape for s in states if s.shape is not None])
        except ShapeInferenceError as exc:
            reason = f"{layer.type} ({layer.name}): {exc.message}"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        except NotReadNativelyError as exc:  # not a refusal: ovreduce's own limit
            reason = f"{layer.type} layer {layer.name!r}: {exc}"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        return [PortState(shape, t, "inferred") for shape, t in zip(shapes, etypes, strict=False)]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        raise NotImplementedError

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        """Every output in input 0's element type (the output port's precision when that is unknown)."""
        first = inputs[0].element_type if inputs else None
        return [first if first is not None else port.precision for port in layer.outputs]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.type!r})" if type(self).type != self.type else super().__repr__()


# -- attributes -----------------------------------------------------------------------------------------------
class NotReadNativelyError(Exception):
    """A value a rule needs is constant in the model but not folded natively (non-integral scales): the output is
    unresolved, which, unlike a :class:`ShapeInferenceError`, says nothing of whether OpenVINO accepts it."""


def str_attr(layer: Layer, name: str, default: str) -> str:
    """A string attribute, lower-cased (OpenVINO's enum attributes are read case-insensitively)."""
    return layer.data.get(name, default).strip().lower()


_ASCII_INT = re.compile(r"[+-]?[0-9]{1,20}")


def _int(text: str) -> int | None:
    """An int64 in ASCII digits, as OpenVINO's attribute reader takes it; None for anything else (Python's
    int() would also take "²"-free Unicode digits such as "٣", underscores and thousands of digits)."""
    text = text.strip(" \t\n\r\v\f")
    if not _ASCII_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def int_attr(layer: Layer, name: str, default: int) -> int:
    text = layer.data.get(name)
    if text is None or not text.strip():
        return default
    value = _int(text)
    if value is None:
        raise ShapeInferenceError(f"attribute {name}={text[:40]!r} is not an integer (ASCII digits, int64)")
    return value


def ints_attr(layer: Layer, name: str) -> tuple[int, ...] | None:
    """A comma-separated list attribute (``strides="2,2"``); None when absent, () when empty."""
    text = layer.data.get(name)
    if text is None:
        return None
    values = [_int(t) for t in text.split(",") if t.strip()]
    if any(v is None for v in values):
        raise ShapeInferenceError(f"attribute {name}={text[:40]!r} is not a list of integers (ASCII digits, int64)")
    return tuple(v for v in values if v is not None)


def normalize_axis(axis: int, rank: int, what: str = "Axis") -> int:
    """``ov::util::normalize_axis``: ``[-rank, rank-1]`` to ``[0, rank-1]``, OpenVINO's message otherwise."""
    if not -rank <= axis <= rank - 1:
        raise ShapeInferenceError(f"{what} {axis} out of the tensor rank range [{-rank}, {rank - 1}].")
    return axis + rank if axis < 0 else axis


# -- values as tensors ----------------------------------------------------------------------------------------
def const_tensor(info: ValueInfo) -> Tensor | None:
    """A constant value as (flat values, shape); None when it is not constant."""
    if info.kind != "const" or info.values is None:
        return None
    shape = info.element_shape
    assert shape is not None
    return info.values, shape


def wrapped(values: Sequence[int], etype: ElementType) -> tuple[int, ...]:
    """Integers as an integral ``etype`` holds them: modulo ``2**bitwidth``, two's complement where signed, as
    OpenVINO's constant folding computes (``Add`` of u8 255 and 4 is 3; i64 ``2**62 * 4`` is 0)."""
    bits = etype.bitwidth
    mask, sign = (1 << bits) - 1, 1 << (bits - 1)
    if etype.kind == "int":
        return tuple(((v + sign) & mask) - sign for v in values)
    return tuple(v & mask for v in values)


def _count(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def broadcast_values(a: Tensor, b: Tensor, fn: Callable[[int, int], int]) -> Tensor | None:
    """``fn`` elementwise over two tensors with NumPy broadcasting; None when the shapes do not broadcast."""
    (av, ash), (bv, bsh) = a, b
    rank = max(len(ash), len(bsh))
    pa = (1,) * (rank - len(ash)) + ash
    pb = (1,) * (rank - len(bsh)) + bsh
    out_shape: list[int] = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and 1 not in (x, y):
            return None
        out_shape.append(y if x == 1 else x)
    sa, sb, so = _strides(pa), _strides(pb), _strides(out_shape)
    out: list[int] = []
    for flat in range(_count(out_shape)):
        ia = ib = 0
        for axis, stride in enumerate(so):
            index = (flat // stride) % out_shape[axis] if out_shape[axis] else 0
            if pa[axis] != 1:
                ia += index * sa[axis]
            if pb[axis] != 1:
                ib += index * sb[axis]
        out.append(fn(av[ia], bv[ib]))
    return tuple(out), tuple(out_shape)


def shape_dims(shape: PartialShape) -> tuple[Dimension, ...]:
    """The dims of a shape of static rank (rules call it after checking the rank)."""
    assert shape.dims is not None
    return shape.dims
