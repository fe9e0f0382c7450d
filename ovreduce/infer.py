"""Native shape propagation over a parsed IR, the way OpenVINO would re-infer it on reading.

OpenVINO ignores the dims an IR declares: it starts from each Parameter's ``shape`` attribute and each
Const's ``shape`` and runs every op's shape inference. This module does the same for the ops it knows
(Parameter, Const, the Reduce* family, Convert and shape-preserving unary ops); for any other op it
falls back to the dims the producer's output port declares, and says so in :attr:`PortState.origin`.
A port without ``<dim>`` is a scalar *or* a dynamic rank: when nothing else settles it, its shape is
left unresolved (``None``) rather than guessed.

Axes are constant when they come from a Const, possibly through Convert, Reshape, Squeeze, Unsqueeze or
Concat; they are runtime axes when a Parameter feeds them; a constant subgraph this module cannot fold
leaves them unresolved.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ovreduce.errors import InputError, ShapeInferenceError
from ovreduce.ir.dtypes import ElementType, decode
from ovreduce.ir.model import IRModel, Layer, Port, PortRef
from ovreduce.ops.reduce import REDUCTIONS, ReduceOp, infer_reduce_shape, parse_bool_attr
from ovreduce.shapes import PartialShape

__all__ = ["UNARY_SHAPE_PRESERVING", "AxesInfo", "PortState", "ReductionInfo", "ShapeEngine"]

Origin = Literal["parameter", "const", "inferred", "declared", "unresolved", "reshape"]
AxesKind = Literal["const", "runtime", "unresolved"]

# Ops whose single output has the shape and element type of input 0. OpenVINO's serializer writes Relu as
# "ReLU" and Softmax as "SoftMax" (its reader accepts both spellings).
UNARY_SHAPE_PRESERVING = frozenset(
    {
        "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceiling", "Clamp", "Cos", "Cosh",
        "Elu", "Erf", "Exp", "Floor", "Gelu", "HSigmoid", "HSwish", "Log", "LogSoftmax", "LogicalNot",
        "Mish", "MVN", "Negative", "NormalizeL2", "ReLU", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
        "Sinh", "SoftMax", "Softmax", "SoftPlus", "SoftSign", "Sqrt", "Swish", "Tan", "Tanh",
    }
)  # fmt: skip
_VALUE_PRESERVING = frozenset({"Reshape", "Squeeze", "Unsqueeze"})
_MAX_AXES_ELEMENTS = 4096


@dataclass(frozen=True, slots=True)
class PortState:
    """What is known about one output port: its shape (None: unresolved), element type and origin."""

    shape: PartialShape | None
    element_type: ElementType | None
    origin: Origin


@dataclass(frozen=True, slots=True)
class AxesInfo:
    """The axes input of a reduction."""

    kind: AxesKind
    values: tuple[int, ...] | None  # as stored, when constant and folded
    reason: str = ""  # why it is runtime/unresolved


@dataclass(frozen=True, slots=True)
class ReductionInfo:
    """Everything the engine derived about one reduction layer."""

    layer: Layer
    op: ReduceOp
    keep_dims: bool
    keep_dims_text: str | None
    keep_dims_valid: bool
    data: PortState
    axes_state: PortState
    axes: AxesInfo
    output: PortState
    error: str | None  # OpenVINO-style shape inference error


class ShapeEngine:
    """Propagates shapes through a model once; query it per port or per reduction.

    Args:
        model: the parsed IR.
        reshape: Parameter name (layer name or a tensor name of its output) -> new shape.

    Raises:
        InputError: a reshape names no Parameter.
    """

    def __init__(self, model: IRModel, reshape: Mapping[str, PartialShape] | None = None) -> None:
        self.model = model
        self.reshape = self._match_reshape(reshape or {})
        self._states: dict[PortRef, PortState] = {}
        self._reductions: dict[str, ReductionInfo] = {}
        self._const_cache: dict[PortRef, AxesInfo] = {}
        self._run()

    # -- public queries --------------------------------------------------------------------------------
    def state(self, ref: PortRef) -> PortState:
        return self._states[ref]

    def input_state(self, layer: Layer, index: int) -> PortState:
        ref = self.model.producer(layer.id, layer.inputs[index].id)
        assert ref is not None  # the parser guarantees every input port is connected
        return self._states[ref]

    @property
    def reductions(self) -> tuple[ReductionInfo, ...]:
        return tuple(self._reductions.values())

    def reduction(self, layer_id: str) -> ReductionInfo:
        return self._reductions[layer_id]

    def axes_of(self, layer: Layer) -> AxesInfo:
        ref = self.model.producer(layer.id, layer.inputs[1].id)
        assert ref is not None
        return self._axes(ref, set())

    # -- propagation -------------------------------------------------------------------------------------
    def _match_reshape(self, reshape: Mapping[str, PartialShape]) -> dict[str, PartialShape]:
        params = [layer for layer in self.model.layers if layer.type == "Parameter"]
        matched: dict[str, PartialShape] = {}
        for name, shape in reshape.items():
            hits = [p for p in params if p.name == name or name in p.outputs[0].names]
            if not hits:
                known = ", ".join(repr(p.name) for p in params) or "none"
                raise InputError(f"--reshape {name}: no Parameter has that name (Parameters: {known})")
            matched[hits[0].id] = shape
        return matched

    def _run(self) -> None:
        for layer in self.model.layers:
            if layer.type in REDUCTIONS:
                info = self._reduce(layer, REDUCTIONS[layer.type])
                self._reductions[layer.id] = info
                outs = [info.output]
            else:
                outs = self._layer_outputs(layer)
            for port, state in zip(layer.outputs, outs, strict=False):
                self._states[(layer.id, port.id)] = state
            for port in layer.outputs[len(outs) :]:
                self._states[(layer.id, port.id)] = _declared(port)

    def _layer_outputs(self, layer: Layer) -> list[PortState]:
        if layer.type == "Parameter":
            port = layer.outputs[0]
            if layer.id in self.reshape:
                return [PortState(self.reshape[layer.id], layer.element_type, "reshape")]
            if layer.shape is not None:
                return [PortState(layer.shape, layer.element_type, "parameter")]
            return [_declared(port, layer.element_type)]
        if layer.type == "Const":
            return [PortState(layer.shape, layer.element_type, "const")]
        if layer.inputs and (layer.type in UNARY_SHAPE_PRESERVING or layer.type == "Convert"):
            src = self.input_state(layer, 0)
            etype = layer.element_type if layer.type == "Convert" else src.element_type
            if src.shape is None:
                return [PortState(None, etype, "unresolved")]
            return [PortState(src.shape, etype, "inferred")]
        return [_declared(p) for p in layer.outputs]

    def _reduce(self, layer: Layer, op: ReduceOp) -> ReductionInfo:
        text = layer.data.get("keep_dims")
        keep_dims, valid = parse_bool_attr(text)
        out_port = layer.outputs[0] if layer.outputs else None
        if len(layer.inputs) != 2 or len(layer.outputs) != 1:
            unresolved = PortState(None, None, "unresolved")
            return ReductionInfo(
                layer, op, keep_dims, text, valid, unresolved, unresolved,
                AxesInfo("unresolved", None, "wrong number of ports"), unresolved,
                f"{layer.type} takes 2 inputs (data, axes) and gives 1 output; "
                f"this layer has {len(layer.inputs)} inputs and {len(layer.outputs)} outputs",
            )  # fmt: skip
        data = self.input_state(layer, 0)
        axes_state = self.input_state(layer, 1)
        axes = self.axes_of(layer)
        error = None
        shape: PartialShape | None = None
        try:
            if data.shape is None:
                # Types can still be checked; the shape cannot be inferred.
                infer_reduce_shape(
                    op, PartialShape.dynamic(), axes_state.shape, None, keep_dims,
                    data_type=data.element_type, axes_type=axes_state.element_type,
                )  # fmt: skip
            elif axes.kind == "unresolved":
                infer_reduce_shape(
                    op, data.shape, axes_state.shape, None, keep_dims,
                    data_type=data.element_type, axes_type=axes_state.element_type,
                )  # fmt: skip
            else:
                shape = infer_reduce_shape(
                    op, data.shape, axes_state.shape, _as_int64(axes.values), keep_dims,
                    data_type=data.element_type, axes_type=axes_state.element_type,
                )  # fmt: skip
        except ShapeInferenceError as exc:
            error = exc.message
            shape = None
        assert out_port is not None
        if error is not None or shape is None:
            out = PortState(None, data.element_type, "unresolved")
        else:
            out = PortState(shape, data.element_type, "inferred")
        return ReductionInfo(layer, op, keep_dims, text, valid, data, axes_state, axes, out, error)

    # -- constant axes -----------------------------------------------------------------------------------
    def _axes(self, ref: PortRef, visiting: set[str]) -> AxesInfo:
        cached = self._const_cache.get(ref)
        if cached is not None:
            return cached
        info = self._fold(ref, visiting)
        self._const_cache[ref] = info
        return info

    def _fold(self, ref: PortRef, visiting: set[str]) -> AxesInfo:
        layer = self.model.layer(ref[0])
        if layer.type == "Parameter":
            return AxesInfo("runtime", None, f"computed at run time from Parameter {layer.name!r}")
        if layer.type == "Const":
            return self._const_values(layer)
        if layer.id in visiting:  # pragma: no cover - the parser rejects cycles
            return AxesInfo("unresolved", None, "cycle")
        visiting.add(layer.id)
        inputs = [self._axes(p, visiting) for p in self.model.input_producers(layer) if p is not None]
        visiting.discard(layer.id)
        if any(i.kind == "runtime" for i in inputs):
            return AxesInfo("runtime", None, next(i.reason for i in inputs if i.kind == "runtime"))
        if any(i.kind == "unresolved" or i.values is None for i in inputs):
            return AxesInfo("unresolved", None, next(i.reason for i in inputs if i.kind == "unresolved"))
        values = [i.values for i in inputs]
        if layer.type == "Convert" and values and values[0] is not None:
            return _convert_values(layer, values[0])
        if layer.type in _VALUE_PRESERVING and values:
            return AxesInfo("const", values[0])
        if layer.type == "Concat" and values:
            return AxesInfo("const", tuple(v for vs in values if vs is not None for v in vs))
        return AxesInfo(
            "unresolved", None,
            f"constant subgraph through {layer.type} layer {layer.name!r}, which ovreduce does not fold "
            f"(use --engine openvino)",
        )  # fmt: skip

    def _const_values(self, layer: Layer) -> AxesInfo:
        const, etype = layer.const, layer.element_type
        assert const is not None and etype is not None
        if const.count > _MAX_AXES_ELEMENTS:
            return AxesInfo("unresolved", None, f"Const {layer.name!r} has {const.count} elements")
        items: list[Any] = []
        if self.model.weights is not None:
            nbytes = etype.nbytes(const.count)
            size = const.size if nbytes is None else nbytes
            raw = self.model.weights.read(const.offset, size, where=layer.where)
            items = _plain_values(etype, raw, const.count)
        if etype.is_integral or etype.kind == "bool":
            return AxesInfo("const", tuple(int(v) for v in items))
        if etype.is_real:
            floats = [float(v) for v in items]
            if all(math.isfinite(v) and v == int(v) for v in floats):
                return AxesInfo("const", tuple(int(v) for v in floats))
            return AxesInfo("unresolved", None, f"Const {layer.name!r} holds non-integral {etype} values")
        return AxesInfo("unresolved", None, f"Const {layer.name!r} holds {etype} values")


_STRUCT_CODES = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}


def _plain_values(etype: ElementType, raw: bytes, count: int) -> list[Any]:
    """Const values as Python numbers; whole-byte integers and booleans without importing NumPy (``check``
    reads axes from nearly every model and should not pay for NumPy's import)."""
    code = _STRUCT_CODES.get(etype.name)
    if code is not None:
        return list(struct.unpack(f"<{count}{code}", raw))
    if etype.name == "boolean":
        return [int(b != 0) for b in raw]
    values: list[Any] = decode(etype, raw, count).tolist()
    return values


def _convert_values(layer: Layer, values: tuple[int, ...]) -> AxesInfo:
    """A Convert of constant integers: exact when every value fits the destination type.

    OpenVINO wraps (i64 -1 -> u8 255) or saturates (u64 -> i64) values that do not fit; rather than
    model each pair, such a Convert leaves the axes unresolved.
    """
    dst = layer.element_type
    if dst is not None and dst.is_integral:
        bits = dst.bitwidth
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst.kind == "int" else (0, (1 << bits) - 1)
        bad = [v for v in values if not lo <= v <= hi]
        if bad:
            return AxesInfo(
                "unresolved", None,
                f"Convert layer {layer.name!r} to {dst} changes the value {bad[0]} (outside [{lo}, {hi}]), "
                f"which ovreduce does not fold",
            )  # fmt: skip
    return AxesInfo("const", values)


def _as_int64(values: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """Axes as OpenVINO reads them (``get_input_const_data_as<int64_t>``): u64 values wrap to int64."""
    if values is None:
        return None
    return tuple(v - (1 << 64) if v >= 1 << 63 else v for v in values)


def _declared(port: Port, etype: ElementType | None = None) -> PortState:
    return _declared_state(port.dims, etype if etype is not None else port.precision)


@lru_cache(maxsize=4096)
def _declared_state(dims: tuple[int, ...], etype: ElementType | None) -> PortState:
    """Shared, immutable states: a large model repeats a few port shapes thousands of times."""
    if dims:
        return PortState(PartialShape.from_port_dims(dims), etype, "declared")
    return PortState(None, etype, "unresolved")
