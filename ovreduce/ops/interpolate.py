"""Interpolate-4 and Interpolate-11, written after OpenVINO's ``interpolate_shape_inference.hpp``.

The output is the input padded by the ``pads_begin``/``pads_end`` attributes (resized to the rank, missing
values 0), whose dims on the interpolated axes (the ``axes`` input, else every axis) are the ``sizes`` values
or the padded dims times the ``scales`` (float32, ``+1e-6``, truncated: ``dim::scale``). Axes that are not
constant leave every dim dynamic; sizes computed at run time give the interpolated axes their bounds (as OpenVINO's
``evaluate_as_partial_shape`` reads them, refusing a negative one, as it refuses computed sizes that fold to a negative
value, where a Const layer's negative size is read); scales that are not constant leave those axes dynamic.

Scales are read from the constant values the shape engine folds, which are integral, or from a Const's own
non-integral values (``0.5``); scales computed from such a Const are not read natively, and the output is then
unresolved, saying so (the OpenVINO engine reads it).
"""

from __future__ import annotations

import math

from ovreduce.errors import ShapeInferenceError
from ovreduce.ops.base import LayerContext, ValueInfo
from ovreduce.ops.rules import (
    COORDINATES,
    INTERPOLATE_MODE,
    NEAREST_MODE,
    SHAPE_CALC,
    NotReadNativelyError,
    ShapeRule,
    bounds_dim,
    ints_attr,
    partial_value,
    real_attr,
    shape_value,
    str_attr,
    typed,
)
from ovreduce.shapes import Dimension, PartialShape, const_dim, padded, scaled

__all__ = ["Interpolate"]


def _values(info: ValueInfo) -> tuple[int, ...] | None:
    if info.kind == "const" and info.values is not None:
        return tuple(v - (1 << 64) if v >= 1 << 63 else v for v in info.values)
    if info.kind == "unresolved":  # ovreduce's own limit (an op it does not compute), not a value known at run time
        raise NotReadNativelyError(f"its scales, sizes or axes are not read natively ({info.reason})")
    return None


def _sizes_bounds(ctx: LayerContext, port: int) -> tuple[Dimension, ...] | None:
    """Sizes computed at run time as OpenVINO's ``evaluate_as_partial_shape`` reads them: a dim of each element's
    bounds (a size ShapeOf gives of ``1..`` is ``1..``); None where it has no bounds of them. An element ovreduce does
    not know (OpenVINO does) is a dynamic dim, the others kept; a negative bound of sizes ovreduce knows whole is
    OpenVINO's refusal (:func:`shape_value`)."""
    known = shape_value(ctx, port)
    if known is None or any(b is not None and b[0] < 0 for b in known):
        return None
    return tuple(bounds_dim(b) or Dimension.dynamic() for b in known)


_TYPES = {
    "sizes": ("i32", "i64", "u32", "u64"),
    "scales": ("f32", "f16", "bf16"),
    "axes": ("i32", "i64", "u32", "u64"),
    "input": ("f32", "f16", "i8", "bf16", "u8", "i64", "i32", "f64"),
}
"""The element types of Interpolate's inputs, as OpenVINO lists them."""


class Interpolate(ShapeRule):
    """Interpolate-4 (data, sizes, scales[, axes]) and Interpolate-11 (data, scales_or_sizes[, axes])."""

    type = "Interpolate"
    boolean_attributes = ("antialias",)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.axes_port = 3 if version == "opset4" else 2
        self.inputs = range(self.axes_port, self.axes_port + 2)
        self.enums = {"mode": INTERPOLATE_MODE, "shape_calculation_mode": SHAPE_CALC,
                      "coordinate_transformation_mode": COORDINATES, "nearest_mode": NEAREST_MODE}  # fmt: skip

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        return [self._shape(ctx, inputs)]

    def loose(self, ctx: LayerContext) -> str | None:
        layer = ctx.layer
        if str_attr(layer, "shape_calculation_mode", "sizes") == "scales" or len(layer.inputs) < 2:
            return None
        if ctx.value(1).kind != "runtime":
            return None  # constant (or not computed, which says so itself)
        known = partial_value(ctx, 1)
        if known is not None and None not in known:
            return None  # each element's bounds known, as OpenVINO's: the dims are OpenVINO's
        return (f"dims ovreduce leaves unknown here may be known to OpenVINO: {layer.type} ({layer.name}) takes sizes "
                f"computed at run time whose elements' bounds ovreduce does not all know (OpenVINO's bound evaluation "
                f"may)")  # fmt: skip

    def _shape(self, ctx: LayerContext, inputs: list[PartialShape]) -> PartialShape:
        layer = ctx.layer
        real_attr(layer, "cube_coeff", -0.75)  # a number OpenVINO cannot read is its refusal
        scales_mode = str_attr(layer, "shape_calculation_mode", "sizes") == "scales"
        v4 = self.version == "opset4"
        kinds = ("sizes", "scales") if v4 else ("scales" if scales_mode else "sizes",)
        for port, kind in enumerate(("input", *kinds, "axes")[: len(inputs)]):
            etype = typed(ctx.input(port))
            if etype is not None and etype.name not in _TYPES[kind]:
                *first, last = _TYPES[kind]  # (OpenVINO lists the data's types without an "or")
                listed = ", ".join(_TYPES[kind]) if kind == "input" else f"{', '.join(first)} or {last}"
                raise ShapeInferenceError(f"{kind.capitalize()} element type must be {listed}")
        checked = (2 if scales_mode and v4 else 1, self.axes_port) if v4 else range(1, len(inputs))
        for port in checked:
            if port < len(inputs) and inputs[port].rank not in (None, 1):
                raise ShapeInferenceError(f"Input [{port}] is not rank 1")
        data = inputs[0]
        if data.dims is None:
            return PartialShape(None)
        rank = len(data.dims)
        for name in ("pads_begin", "pads_end"):  # read as sizes: OpenVINO takes no sign
            text = layer.data.get(name, "")
            signed = next((f for f in text.split(",") if f.lstrip(" \t\n\r\v\f").startswith("-")), None)
            if signed is not None:
                raise ShapeInferenceError(f"Cannot parse '{signed}' in \"{text}\"")
        pb = list(ints_attr(layer, "pads_begin") or ())
        pe = list(ints_attr(layer, "pads_end") or ())
        pb = (pb + [0] * rank)[:rank]
        pe = (pe + [0] * rank)[:rank]
        if self.axes_port < len(inputs):
            axes = _values(ctx.value(self.axes_port))
            if axes is None:
                return PartialShape.dynamic(rank)
            if any(not 0 <= a < rank for a in axes):
                raise ShapeInferenceError(f"All axes values should less than input rank: {rank}")
        else:
            axes = tuple(range(rank))
        out = [padded(d, b + e) for d, b, e in zip(data.dims, pb, pe, strict=True)]
        port = 2 if scales_mode and v4 else 1
        if not scales_mode:
            shape_value(ctx, port)  # a value computed to a negative size: OpenVINO's refusal
        info = ctx.value(port)
        values: tuple[float, ...] | None = (  # a Const's non-integral scales read as such, not through another op
            info.reals
            if scales_mode and info.reals is not None and all(map(math.isfinite, info.reals))
            else _values(info)
        )
        what = "scales" if scales_mode else "sizes"
        if values is None:
            known = None if scales_mode else _sizes_bounds(ctx, port)
            if known is not None and len(known) < len(axes):
                raise ShapeInferenceError(
                    f"The number of elements in the '{what}' input does not match the number of axes {len(axes)}"
                )
            for i, a in enumerate(axes):
                out[a] = Dimension.dynamic() if known is None else known[i]
            return PartialShape(tuple(out))
        if len(values) < len(axes):
            raise ShapeInferenceError(
                f"The number of elements in the '{what}' input does not match the number of axes {len(axes)}"
            )
        for a, v in zip(axes, values, strict=False):
            out[a] = scaled(out[a], v) if scales_mode else const_dim(int(v))
        return PartialShape(tuple(out))
