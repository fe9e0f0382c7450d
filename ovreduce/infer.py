"""Native shape propagation over a parsed IR, the way OpenVINO would re-infer it on reading.

OpenVINO ignores the dims an IR declares: it starts from each Parameter's ``shape`` attribute and each
Const's ``shape`` and runs every op's shape inference. This module does the same, dispatching each layer
to its op's rules in the registry (:mod:`ovreduce.ops.registry`: sources, the Reduce* family, elementwise
ops, convolutions and pooling, MatMul, data movement, ShapeOf, ...); for any other op it falls back to the
dims the producer's output port declares, and says so in :attr:`PortState.origin`. Under a reshape those
dims are stale as soon as the layer's inputs differ from the ones it declares: its outputs are then
unresolved, their reason naming the op (``no native shape rule for Interpolate (up1)``). A port without
``<dim>`` is a scalar *or* a dynamic rank: when nothing else settles it, its shape is left unresolved
(``None``) rather than guessed.

Small values (axes, shapes) are constant when they come from a Const, or from a ShapeOf of a static shape,
possibly through ops that fold values (Convert, Reshape, Squeeze, Unsqueeze, Concat, Gather, Range,
integer arithmetic); they are runtime values when a Parameter feeds them; a constant subgraph this module
cannot fold leaves them unresolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ovreduce.errors import InputError
from ovreduce.ir.model import IRModel, Layer, Port, PortRef
from ovreduce.ir.weights import Weights
from ovreduce.ops.base import Op, PortState, ValueInfo, declared_state
from ovreduce.ops.common import UNARY_SHAPE_PRESERVING
from ovreduce.ops.reduce import ReductionInfo, ReductionOp
from ovreduce.ops.registry import resolve
from ovreduce.shapes import PartialShape

__all__ = ["UNARY_SHAPE_PRESERVING", "AxesInfo", "PortState", "ReductionInfo", "ShapeEngine"]

AxesKind = Literal["const", "runtime", "unresolved"]
AxesInfo = ValueInfo  # the value feeding a reduction's axes input
_UNKNOWN = Op()  # the rule of an unregistered op: declared dims, no folding
_DECLARED_DIMS = Op.infer


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
                raise InputError(
                    f"reshape {name}: no Parameter has that name (Parameters: {known})", parameter="reshape"
                )
            matched[hits[0].id] = shape
        return matched

    def _op(self, layer: Layer) -> Op:
        return resolve(layer.type, layer.version) or _UNKNOWN

    def _run(self) -> None:
        states = self._states
        declares_dims: dict[tuple[str, str], bool] = {}  # per (type, version): no rule of its own
        for layer in self.model.layers:
            kind = (layer.type, layer.version)
            if declares_dims.get(kind):
                self._declare(layer, layer.outputs)
                continue
            op = self._op(layer)
            declares_dims[kind] = type(op).infer is _DECLARED_DIMS and not isinstance(op, ReductionOp)
            if declares_dims[kind]:
                # No rule of its own (most layers of a real model): every output keeps its declared dims.
                self._declare(layer, layer.outputs)
                continue
            ctx = _Context(self, layer)
            if isinstance(op, ReductionOp):
                info = op.analyse(ctx)
                self._reductions[layer.id] = info
                outs: list[PortState] = [info.output]
            else:
                outs = list(op.infer(ctx))
            for port, state in zip(layer.outputs, outs, strict=False):
                states[(layer.id, port.id)] = state
            self._declare(layer, layer.outputs[len(outs) :])

    def _declare(self, layer: Layer, ports: tuple[Port, ...]) -> None:
        """Output ports without a rule keep their declared dims, unless a reshape changed the layer's inputs:
        then those dims are stale, and the ports are unresolved (saying which op has no rule)."""
        if not ports:
            return
        if self.reshape and self._inputs_changed(layer):
            reason = f"no native shape rule for {layer.type} ({layer.name})"
            for port in ports:
                self._states[(layer.id, port.id)] = PortState(None, port.precision, "unresolved", reason)
            return
        for port in ports:
            self._states[(layer.id, port.id)] = declared_state(port)

    def _inputs_changed(self, layer: Layer) -> bool:
        """Whether an input's shape differs from the dims the layer's own input port declares."""
        for index, port in enumerate(layer.inputs):
            state = self.input_state(layer, index)
            if not port.dims:
                if state.shape is None:
                    if state.reason:  # unresolved upstream because of the reshape
                        return True
                    continue
                if state.shape.rank != 0:
                    return True
            elif state.shape != PartialShape.from_port_dims(port.dims):
                return True
        return False

    # -- constant values ---------------------------------------------------------------------------------
    def _axes(self, ref: PortRef, visiting: set[str]) -> AxesInfo:
        cached = self._const_cache.get(ref)
        if cached is not None:
            return cached
        info = self._fold(ref, visiting)
        self._const_cache[ref] = info
        return info

    def _fold(self, ref: PortRef, visiting: set[str]) -> AxesInfo:
        layer = self.model.layer(ref[0])
        if layer.id in visiting:  # pragma: no cover - the parser rejects cycles
            return AxesInfo("unresolved", None, "cycle")
        visiting.add(layer.id)
        try:
            return self._op(layer).fold(_Context(self, layer, visiting))
        finally:
            visiting.discard(layer.id)


class _Context:
    """What a rule may ask about its layer (:class:`ovreduce.ops.base.LayerContext`), answered by the engine."""

    __slots__ = ("_engine", "_visiting", "layer")

    def __init__(self, engine: ShapeEngine, layer: Layer, visiting: set[str] | None = None) -> None:
        self._engine = engine
        self._visiting = visiting if visiting is not None else set()
        self.layer = layer

    @property
    def reshape(self) -> PartialShape | None:
        return self._engine.reshape.get(self.layer.id)

    @property
    def weights(self) -> Weights | None:
        return self._engine.model.weights

    def input(self, index: int) -> PortState:
        return self._engine.input_state(self.layer, index)

    def value(self, index: int) -> ValueInfo:
        ref = self._engine.model.producer(self.layer.id, self.layer.inputs[index].id)
        assert ref is not None  # the parser guarantees every input port is connected
        return self._engine._axes(ref, self._visiting)

    def input_values(self) -> list[ValueInfo]:
        model = self._engine.model
        return [self._engine._axes(p, self._visiting) for p in model.input_producers(self.layer) if p is not None]
