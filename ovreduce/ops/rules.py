"""The family base of the native shape rules (:class:`ShapeRule`) and the helpers they share: attributes
read the way OpenVINO's IR reader reads them, small constant values as tensors (flat values and a shape).

A rule is a pure function of the inputs' shapes (and, on demand, their small constant values) to the
outputs' shapes, written after OpenVINO's ``src/core/shape_inference/include/<op>_shape_inference.hpp``.
A rule raises :class:`~ovreduce.errors.ShapeInferenceError` where OpenVINO refuses the inputs; the
outputs are then unresolved, with that message as the reason. Nothing here imports NumPy or OpenVINO.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar, cast

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import Bounds, LayerContext, Op, PortState, ValueInfo, parse_bool_attr
from ovreduce.shapes import Dimension, PartialShape

__all__ = [
    "AUTO_BROADCAST",
    "BOOLEAN",
    "BROADCAST",
    "COORDINATES",
    "ELEMENT_TYPE",
    "EPS_MODE",
    "GELU_MODE",
    "INTERPOLATE_MODE",
    "MAX_VALUE_ELEMENTS",
    "MVN_EPS_MODE",
    "NEAREST_MODE",
    "NOT_CONVERTED",
    "PAD_MODE",
    "PAD_TYPE",
    "ROUNDING",
    "ROUND_MODE",
    "SHAPE_CALC",
    "TYPED",
    "Enum",
    "NotReadNativelyError",
    "ShapeRule",
    "Tensor",
    "bool_attr",
    "bounds_dim",
    "broadcast_shape",
    "broadcast_values",
    "check_enums",
    "const_tensor",
    "converts",
    "elements",
    "evaluates",
    "exact",
    "exact_value",
    "expanded",
    "int_attr",
    "int_value",
    "ints_attr",
    "normalize_axis",
    "partial_value",
    "pinned",
    "real",
    "shape_value",
    "str_attr",
    "too_large",
    "type_limits",
    "typed",
    "unevaluated",
    "value_ports",
    "wrapped",
]

BOOLEAN = ELEMENT_TYPES["boolean"]
Tensor = tuple[tuple[int, ...], tuple[int, ...]]  # (flat values, shape)
_A = TypeVar("_A")
_B = TypeVar("_B")
_R = TypeVar("_R")


Enum = tuple[str, frozenset[str]]
"""An enum attribute as OpenVINO reads it: the enum's name in its messages, and its members (lower case; a text is
one of them in any case, blanks not trimmed: ``ov::as_enum``)."""


def _enum(name: str, members: str) -> Enum:
    return name, frozenset(members.split())


AUTO_BROADCAST = _enum("ov::op::AutoBroadcastType", "none explicit numpy pdpd")
BROADCAST = _enum("ov::op::BroadcastType", "none explicit numpy pdpd bidirectional")
PAD_MODE = _enum("ov::op::PadMode", "constant edge reflect symmetric")
PAD_TYPE = _enum("ov::op::PadType", "explicit same_lower same_upper valid")
ROUNDING = _enum("ov::op::RoundingType", "floor ceil ceil_torch")
ELEMENT_TYPE = _enum("element::Type_t", " ".join([*ELEMENT_TYPES, "undefined"]))
SHAPE_CALC = _enum("op::util::InterpolateBase::ShapeCalcMode", "sizes scales")
INTERPOLATE_MODE = _enum("op::util::InterpolateBase::InterpolateMode",
                         "nearest linear linear_onnx cubic bilinear_pillow bicubic_pillow")  # fmt: skip
COORDINATES = _enum("op::util::InterpolateBase::CoordinateTransformMode",
                    "half_pixel pytorch_half_pixel asymmetric tf_half_pixel_for_nn align_corners")  # fmt: skip
NEAREST_MODE = _enum("op::util::InterpolateBase::NearestMode", "round_prefer_floor round_prefer_ceil floor ceil simple")
GELU_MODE = _enum("op::GeluApproximationMode", "erf tanh")
MVN_EPS_MODE = _enum("op::MVNEpsMode", "inside_sqrt outside_sqrt")
EPS_MODE = _enum("ov::op::EpsMode", "add max")
ROUND_MODE = _enum("op::v5::Round::RoundMode", "half_to_even half_away_from_zero")


def check_enums(layer: Layer, enums: Mapping[str, Enum]) -> None:
    """OpenVINO's refusal of an enum attribute whose text is none of its enum's members."""
    for name, (enum, members) in enums.items():
        text = layer.data.get(name)
        if text is not None and text.lower() not in members:
            raise ShapeInferenceError(f'"{text}" is not a member of enum {enum}')


TYPED = frozenset({"parameter", "reshape", "const", "inferred"})
"""The origins of element types read from the model (a reshaped Parameter keeps its type) or inferred: not a port
precision a rule-less producer declares, which only these are judged against."""


def int_value(ctx: LayerContext, index: int) -> tuple[int, ...] | None:
    """Input ``index``'s constant value, as int64 (u64 wraps); None when it is not constant."""
    if index >= len(ctx.layer.inputs):
        return None
    info = ctx.value(index)
    if info.kind != "const" or info.values is None:
        return None
    return tuple(v - (1 << 64) if v >= 1 << 63 else v for v in info.values)


def partial_value(ctx: LayerContext, index: int) -> tuple[Bounds | None, ...] | None:
    """Input ``index``'s 1-D value as far as it is known before run time: each element's bounds as OpenVINO's bound
    evaluation gives them (a constant's ``(v, v)``; a dim ShapeOf gives of ``2..5``, ``(2, 5)``), None for an element
    whose bounds ovreduce does not know; None when nothing is. An upper bound at its type's largest value is none."""
    if index >= len(ctx.layer.inputs):
        return None
    const = int_value(ctx, index)
    if const is not None:
        return tuple((v, v) for v in const)
    shape = ctx.input(index).shape
    if shape is None or shape.rank is None or shape.rank > 1:  # (a runtime value of any rank keeps its elements
        return None  # through a Reshape, row-major: only a 1-D one is read as a shape)
    return _bounded(ctx, index)


def elements(ctx: LayerContext, index: int) -> tuple[tuple[Bounds | None, ...], tuple[int, ...]] | None:
    """Input ``index``'s value of any rank as far as it is known before run time: its elements' bounds, row-major (as
    :func:`partial_value` gives them), and its shape; None when nothing is known or the shape is not static."""
    const = int_value(ctx, index)
    info = ctx.value(index)
    if const is not None and info.element_shape is not None:
        return tuple((v, v) for v in const), info.element_shape
    shape = ctx.input(index).shape
    known = _bounded(ctx, index) if shape is not None and shape.is_static else None
    if known is None or shape is None or math.prod(shape.to_list()) != len(known):
        return None
    return known, tuple(shape.to_list())


def _bounded(ctx: LayerContext, index: int) -> tuple[Bounds | None, ...] | None:
    """A runtime value's known elements, an upper bound at its type's largest value read as none."""
    known = ctx.value(index).known
    if known is None:
        return None
    etype = ctx.input(index).element_type  # its type's largest value is what a bound OpenVINO does not know reads
    top = type_limits(etype)[1] if etype is not None and etype.kind == "int" else None
    if top is None:
        return known
    return tuple(
        None if b is None or b[0] >= top else (b[0], None if b[1] is None or b[1] >= top else b[1]) for b in known
    )


def shape_value(ctx: LayerContext, index: int) -> tuple[Bounds | None, ...] | None:
    """Input ``index``'s value as OpenVINO reads a shape-like input as a partial shape
    (``get_input_const_data_as_shape``: Interpolate's sizes, Broadcast's target, Tile's repeats, TopK's ``k``,
    OneHot's ``depth``, RandomUniform's shape): :func:`partial_value`. A Const layer's values are read as they are;
    any other value goes through its bounds (``evaluate_as_partial_shape``), which OpenVINO refuses where one is
    negative, folded to a constant or not."""
    known = partial_value(ctx, index)
    if known is None or ctx.input(index).origin == "const" or None in known:
        return known
    if any(b[0] < 0 or (b[1] is not None and b[1] < 0) for b in known if b is not None):
        raise ShapeInferenceError("Value for partial shape evaluation can't be lower than zero.")
    return known


def exact_value(ctx: LayerContext, index: int) -> tuple[int | None, ...] | None:
    """:func:`partial_value` with only the elements known exactly (lower bound equal to upper), None for the others."""
    part = partial_value(ctx, index)
    return None if part is None else tuple(exact(b) for b in part)


def exact(bounds: Bounds | None) -> int | None:
    """The value an element's bounds pin down, None where they leave it open."""
    return bounds[0] if bounds is not None and bounds[0] == bounds[1] else None


def pinned(folded: ValueInfo, picked: tuple[Bounds | None, ...], shape: tuple[int, ...] | None) -> ValueInfo:
    """A value made of elements whose bounds are ``picked``: the constant of ``shape`` they pin down where every one is
    known exactly, else ``folded`` (the layer's value as the base rule has it) knowing them where it is runtime."""
    values = tuple(exact(b) for b in picked)
    if None in values:
        return replace(folded, known=picked) if folded.kind == "runtime" else folded
    return ValueInfo("const", cast(tuple[int, ...], values), shape=shape)


def bounds_dim(bounds: Bounds | None) -> Dimension | None:
    """An element's bounds as the dimension OpenVINO's ``evaluate_as_partial_shape`` makes of them; None where ovreduce
    does not know them or OpenVINO refuses them (a negative bound)."""
    if bounds is None or bounds[0] < 0:
        return None
    return Dimension(bounds[0], bounds[1])


def type_limits(etype: ElementType) -> tuple[int, int]:
    """The least and the greatest value of an integral type."""
    bits = etype.bitwidth
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if etype.kind == "int" else (0, (1 << bits) - 1)


def real(etype: ElementType) -> bool:
    """``element::Type::is_real``: a floating-point type, nf4 not among them."""
    return etype.is_real and etype.name != "nf4"


def typed(state: PortState) -> ElementType | None:
    """An input's element type where the model gives it or a rule infers it (None: dynamic, unknown, or a port's
    precision after a layer without a rule, which is not judged)."""
    etype = state.element_type
    return etype if etype is not None and state.origin in TYPED and etype.name != "dynamic" else None


def _check_value_input(state: PortState, what: str, ranks: frozenset[int], integral: bool) -> None:
    etype = state.element_type
    if etype is not None and state.origin in TYPED:
        if etype.kind in ("bool", "string"):  # no value of them is read: OpenVINO's words
            raise ShapeInferenceError(f"Element not supported ({what} of {etype})")
        if integral and etype.kind not in _INTEGRAL:
            raise ShapeInferenceError(f"{what} must be of an integral number type, not {etype}")
    rank = state.shape.rank if state.shape is not None else None
    if ranks and rank is not None and rank not in ranks:
        wanted = " or ".join(str(r) for r in sorted(ranks))
        raise ShapeInferenceError(f"{what} must have rank {wanted}, not {rank} ({state.shape})")


_INTEGRAL = frozenset({"int", "uint", "dynamic"})


class _Inputs(list[PartialShape]):
    """A rule's input shapes: one past the layer's inputs is OpenVINO's refusal of the layer (``Node::input``: a
    Reshape or Pad of one input), not ovreduce's error."""

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int) and not -len(self) <= index < len(self):
            raise ShapeInferenceError(f"index '{index}' out of range (the layer has {len(self)} inputs)")
        return super().__getitem__(index)


def value_ports(*specs: tuple[int, str, str]) -> dict[int, tuple[str, frozenset[int], bool]]:
    """:attr:`ShapeRule.value_inputs` from ``(port, name, ranks)``: ranks as digits (``"01"``: 0 or 1; ``""``: any),
    a trailing ``~`` for an input of any numeric type (else integers only)."""
    return {port: (what, frozenset(int(r) for r in ranks.rstrip("~")), not ranks.endswith("~"))
            for port, what, ranks in specs}  # fmt: skip


class ShapeRule(Op):
    """An op whose output shapes are a function of its inputs' shapes (and small constant values).

    Subclasses give :meth:`shapes` and, when the outputs' element type is not input 0's, :meth:`types`.
    An input whose shape is unresolved leaves every output unresolved, with that input's reason. Both read of
    the layer only what :attr:`layer_reads` says (its attributes; its name in messages only), so that the
    shape engine may give one layer's result to another that reads the same.
    """

    layer_reads = "attributes"
    enums: Mapping[str, Enum] = {}
    """The layer's enum attributes: a text that is none of an enum's members is OpenVINO's refusal of the layer."""
    value_inputs: Mapping[int, tuple[str, frozenset[int], bool]] = {}
    """The inputs OpenVINO reads as values (a shape, axes, indices), by port: their name, the ranks they may have
    (empty: any) and whether they must be integers. Another rank, or another element type, is OpenVINO's refusal."""

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        layer = ctx.layer
        states = [ctx.input(i) for i in range(len(layer.inputs))]
        etypes = self.types(layer, states)
        unresolved = next((s for s in states if s.shape is None), None)
        if unresolved is not None:
            reason = unresolved.reason or f"an input of {layer.type} ({layer.name}) has no resolved shape"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        try:
            check_enums(layer, self.enums)
            for port, (what, ranks, integral) in self.value_inputs.items():
                if port < len(states):
                    _check_value_input(states[port], what, ranks, integral)
            shapes = self.shapes(ctx, _Inputs(s.shape for s in states if s.shape is not None))
            if len(shapes) < len(layer.outputs):  # OpenVINO gives each declared port its output: there is none
                raise ShapeInferenceError(f"node index is out of range (the layer declares {len(layer.outputs)} "
                                          f"output ports, and {layer.type} makes {len(shapes)} here)")  # fmt: skip
        except ShapeInferenceError as exc:
            reason = f"{layer.type} ({layer.name}): {exc.message}"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        except NotReadNativelyError as exc:  # not a refusal: ovreduce's own limit
            reason = f"{layer.type} layer {layer.name!r}: {exc}"
            return [PortState(None, t, "unresolved", reason) for t in etypes]
        loose = self.loose(ctx)
        return [
            PortState(shape, t, "inferred", loose if loose and not shape.is_static else "")
            for shape, t in zip(shapes, etypes, strict=False)
        ]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        raise NotImplementedError

    def loose(self, ctx: LayerContext) -> str | None:
        """Why dims :meth:`shapes` leaves unknown may be known to OpenVINO (a value it reads only in part); None:
        they are not."""
        return None

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


def bool_attr(layer: Layer, name: str, default: bool) -> bool:
    """A boolean attribute as OpenVINO reads it (:func:`~ovreduce.ops.base.parse_bool_attr`: ``"true "`` is the
    default, not true)."""
    return parse_bool_attr(layer.data.get(name), default)[0]


def str_attr(layer: Layer, name: str, default: str) -> str:
    """An enum attribute, lower-cased (OpenVINO reads them in any case; a rule's :attr:`ShapeRule.enums` refuses the
    texts that are none of their members, blanks included)."""
    return layer.data.get(name, default).lower()


_OV_INT = re.compile(r"[ \t\n\r\v\f]*(-?)0*([0-9]+)")
_OV_REAL = re.compile(r"[ \t\n\r\v\f]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:([eE][+-]?)([0-9]*))?")


def _int(text: str) -> int | None:
    """An int64 as OpenVINO's attribute reader takes it: after spaces, an optional minus and the digits that follow,
    whatever comes next ignored (``"1.5"`` is 1, ``"2x"`` 2); None where it takes none (a plus sign, no digit, a
    value beyond int64). Python's ``int()`` takes ``+``, underscores and other scripts' digits, and refuses ``1.5``."""
    match = _OV_INT.match(text)
    if match is None or len(match[2]) > 19:
        return None
    value = int(match[1] + match[2])
    return value if -(2**63) <= value < 2**63 else None


def int_attr(layer: Layer, name: str, default: int) -> int:
    """An int64 attribute as OpenVINO reads it (:func:`_int`); ``default`` when absent. A present value it cannot
    read is OpenVINO's refusal, in its words."""
    text = layer.data.get(name)
    if text is None:
        return default
    value = _int(text)
    if value is None:
        raise ShapeInferenceError(f"Cannot parse '{text}' to number")
    return value


def ints_attr(layer: Layer, name: str) -> tuple[int, ...] | None:
    """A comma-separated list attribute (``strides="2,2"``) as OpenVINO reads it: each field as :func:`_int` reads it,
    a trailing comma ignored, an empty field refused; None when absent, () when empty."""
    text = layer.data.get(name)
    if text is None:
        return None
    fields = text.split(",")
    if fields[-1] == "":  # one line read up to each comma: a comma at the end begins no field
        fields.pop()
    values = []
    for field in fields:
        if not field:
            raise ShapeInferenceError(f'Cannot get vector of parameters! "{text}" is incorrect')
        value = _int(field)
        if value is None:
            raise ShapeInferenceError(f"Cannot parse '{field}' in \"{text}\"")
        values.append(value)
    return tuple(values)


def real_attr(layer: Layer, name: str, default: float) -> float:
    """A floating-point attribute as OpenVINO reads it: ``inf``, ``-inf`` and ``nan`` as written (lower case, spaces
    around them allowed), else, after spaces, the longest decimal number the text begins with (``"-1e-5f"`` is
    -1e-05); ``default`` when absent. A value it cannot read (no number, an exponent without digits, beyond a double's
    range) is OpenVINO's refusal, in its words."""
    text = layer.data.get(name)
    if text is None:
        return default
    special = text.strip(" \t\n\r\v\f")
    if special in ("inf", "-inf", "nan"):
        return float(special)
    match = _OV_REAL.match(text)
    if match is not None and (match[2] is None or match[3]):
        value = float(match[1] + (match[2] or "") + (match[3] or ""))
        if not math.isinf(value):
            return value
    raise ShapeInferenceError(f"Cannot parse '{text}' to number")


def normalize_axis(axis: int, rank: int, what: str = "Axis") -> int:
    """``ov::util::normalize_axis``: ``[-rank, rank-1]`` to ``[0, rank-1]``, OpenVINO's message otherwise."""
    if not -rank <= axis <= rank - 1:
        raise ShapeInferenceError(f"{what} {axis} out of the tensor rank range [{-rank}, {rank - 1}].")
    return axis + rank if axis < 0 else axis


# -- values as tensors ----------------------------------------------------------------------------------------
MAX_VALUE_ELEMENTS = 4096
"""The most elements of a value ovreduce reads or computes (a Const's, a fold's): the values shapes are made of (axes,
targets, lengths) have a few; values come from untrusted files."""
_WIDE = frozenset({"i32", "i64", "u32", "u64"})
_COMPARED = _WIDE | {"boolean"}
_REAL = frozenset({"f16", "bf16", "f32"})  # (f16 and bf16 computed in f32, rounded back)
_NARROW = frozenset({"i8", "i16", "u8", "u16"})
# The element types whose values OpenVINO's ``evaluate`` computes for each op that folds here: its shape inference
# folds no other (a Multiply of i8 constants leaves a target unknown; an op not here folds in no type). As OpenVINO
# 2026.4 computes them (tests/ops/test_fold_types.py asks it in the integer types, test_real_folding.py in the real).
_EVALUATED: Mapping[str, frozenset[str]] = {
    "Add": _WIDE | _NARROW | _REAL,
    "Subtract": _WIDE | {"i8", "u8"} | _REAL,
    "Multiply": _WIDE | _REAL | {"f64"},
    "Divide": _WIDE | _REAL,
    "Maximum": _WIDE | _REAL,
    "Minimum": _WIDE | {"u8", "u16"} | _REAL,
    "FloorMod": _WIDE | {"i8", "u8"} | _REAL,
    "Mod": _WIDE | _NARROW,
    "Power": _WIDE | _REAL,
    "SquaredDifference": frozenset({"f32"}),
    "Equal": _COMPARED | _NARROW | _REAL | {"f64"},
    "NotEqual": _COMPARED | _REAL, "Less": _COMPARED | _REAL, "LessEqual": _COMPARED | _REAL,
    "Greater": _COMPARED | _REAL, "GreaterEqual": _COMPARED | _REAL,
    "LogicalAnd": frozenset({"boolean"}), "LogicalOr": frozenset({"boolean"}), "LogicalXor": frozenset({"boolean"}),
    "LogicalNot": _COMPARED | {"u8"},
    "Floor": _WIDE | _NARROW | _REAL, "Ceiling": _WIDE | _NARROW | {"f16", "f32"},
    "Round": _WIDE | _NARROW | _REAL, "Sqrt": _WIDE | _REAL | {"f64"},
    "Clamp": _WIDE | _NARROW | _REAL, "Negative": frozenset({"i32", "i64"}) | _REAL,
    "Relu": _WIDE | _REAL, "ReLU": _WIDE | _REAL, "Sign": _WIDE | _REAL, "Abs": _WIDE | _REAL,
    "Select": _COMPARED | _NARROW | _REAL | {"f64"},
    "ReduceSum": _WIDE, "ReduceProd": _WIDE, "ReduceMax": _WIDE | {"i8", "u8"}, "ReduceMin": _WIDE | {"i8", "u8"},
    "ReduceLogicalAnd": frozenset({"boolean"}), "ReduceLogicalOr": frozenset({"boolean"}),
    "Gather": _COMPARED | {"i8", "u8", "f16", "bf16", "f32"},  # the data's type (not i16, u16, f64)
}  # fmt: skip
NOT_CONVERTED = frozenset({"f8e4m3", "f8e5m2", "f8e8m0", "nf4", "f4e2m1", "string"})
"""The element types OpenVINO's Convert ``evaluate`` converts neither from nor to."""


def evaluates(op_type: str, etype: ElementType | None) -> bool:
    """Whether OpenVINO computes ``op_type``'s values in ``etype`` (and so folds them in shape inference)."""
    return etype is not None and etype.name in _EVALUATED.get(op_type, frozenset())


_EVERY_TYPE_ASKED = frozenset({"Gather", "Convert"})
_REALS_ASKED = frozenset({
    "Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum", "FloorMod", "Mod", "Power",
    "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "Floor", "Ceiling",
    "Round", "Sqrt", "Clamp", "Negative", "Relu", "ReLU", "Sign", "Abs", "Select",
})  # fmt: skip
"""The ops whose table was asked of OpenVINO in every element type; of those, the ones asked in the integer types,
boolean and f16, bf16, f32, f64 (which ovreduce folds as :mod:`ovreduce.ops.reals` computes them); the others' in
the integer types and boolean only (ovreduce folds no float through them: where it does not, it cannot tell whether
OpenVINO would)."""


def unevaluated(layer: Layer, etype: ElementType, folded: ValueInfo) -> ValueInfo:
    """The value of a layer over constants whose op OpenVINO's ``evaluate`` does not compute in ``etype``
    (:func:`evaluates`, :func:`converts`): to its shape inference it is no constant, as a value known only at run
    time is not (its consumers' dims are dynamic). ``folded`` (unresolved) where that is not known: a float type
    the op's table was not asked in."""
    asked = etype.is_integral or etype.name == "boolean" or layer.type in _EVERY_TYPE_ASKED
    if not asked and not (layer.type in _REALS_ASKED and etype.name in ("f16", "bf16", "f32", "f64")):
        return folded
    return ValueInfo("runtime", None, f"OpenVINO does not compute {layer.type} values of {etype} as it reads the "
                                      f"model (layer {layer.name!r}): they are known at run time only")  # fmt: skip


def converts(src: ElementType | None, dst: ElementType | None) -> bool:
    """Whether OpenVINO's Convert computes values of ``src`` as ``dst`` (and so folds them in shape inference)."""
    return src is not None and dst is not None and not {src.name, dst.name} & NOT_CONVERTED


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


def too_large(layer: Layer, shape: Sequence[int]) -> ValueInfo | None:
    """Why a value of ``shape`` is not computed, when it has more than :data:`MAX_VALUE_ELEMENTS` elements; None
    when it may be (it is checked before anything is allocated: a Range of 10**10 steps is a few bytes of IR)."""
    count = _count(shape)
    if count <= MAX_VALUE_ELEMENTS:
        return None
    return ValueInfo("unresolved", None, f"{layer.type} layer {layer.name!r} makes a value of {count} elements, more "
                                         f"than the {MAX_VALUE_ELEMENTS} ovreduce computes")  # fmt: skip


def broadcast_shape(ash: tuple[int, ...], bsh: tuple[int, ...]) -> tuple[int, ...] | None:
    """The NumPy broadcast of two static shapes; None when they do not broadcast."""
    rank = max(len(ash), len(bsh))
    pa = (1,) * (rank - len(ash)) + ash
    pb = (1,) * (rank - len(bsh)) + bsh
    out_shape: list[int] = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and 1 not in (x, y):
            return None
        out_shape.append(y if x == 1 else x)
    return tuple(out_shape)


def broadcast_values(
    a: tuple[tuple[_A, ...], tuple[int, ...]], b: tuple[tuple[_B, ...], tuple[int, ...]], fn: Callable[[_A, _B], _R]
) -> tuple[tuple[_R, ...], tuple[int, ...]] | None:
    """``fn`` elementwise over two tensors (of integers, or reals) with NumPy broadcasting; None when the shapes do not
    broadcast."""
    (av, ash), (bv, bsh) = a, b
    out_shape = broadcast_shape(ash, bsh)
    if out_shape is None:
        return None
    rank = len(out_shape)
    pa = (1,) * (rank - len(ash)) + ash
    pb = (1,) * (rank - len(bsh)) + bsh
    sa, sb, so = _strides(pa), _strides(pb), _strides(out_shape)
    out: list[_R] = []
    for flat in range(_count(out_shape)):
        ia = ib = 0
        for axis, stride in enumerate(so):
            index = (flat // stride) % out_shape[axis] if out_shape[axis] else 0
            if pa[axis] != 1:
                ia += index * sa[axis]
            if pb[axis] != 1:
                ib += index * sb[axis]
        out.append(fn(av[ia], bv[ib]))
    return tuple(out), out_shape


def expanded(tensor: Tensor, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """A tensor's values NumPy-broadcast to ``shape``, flat; None where it does not broadcast to it."""
    spread = broadcast_values(tensor, ((0,) * _count(shape), shape), lambda value, _: value)
    return spread[0] if spread is not None and spread[1] == shape else None


def shape_dims(shape: PartialShape) -> tuple[Dimension, ...]:
    """The dims of a shape of static rank (rules call it after checking the rank)."""
    assert shape.dims is not None
    return shape.dims
