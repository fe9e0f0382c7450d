"""Native shape propagation over a parsed IR, the way OpenVINO would re-infer it on reading.

OpenVINO ignores the dims an IR declares: it starts from each Parameter's ``shape`` attribute and each
Const's ``shape`` and runs every op's shape inference. This module does the same, dispatching each layer
to its op's rules in the registry (:mod:`ovreduce.ops.registry`: sources, the Reduce* family, elementwise
ops, convolutions and pooling, MatMul, data movement, ShapeOf, ...); for any other op it falls back to the
dims the producer's output port declares, and says so in :attr:`PortState.origin`. Under a reshape those
dims are stale as soon as the layer's inputs differ from the ones it declares: its outputs are then
unresolved, their reason naming the op (``no native shape rule for SpaceToDepth (s2d)``). A port without
``<dim>`` is a scalar *or* a dynamic rank: when nothing else settles it, its shape is left unresolved
(``None``) rather than guessed.

Small values (axes, shapes) are constant when they come from a Const, or from a ShapeOf of a static shape,
possibly through ops that fold values (Convert, Reshape, Squeeze, Unsqueeze, Concat, Gather, Range,
integer arithmetic, and sizes computed in floats: :mod:`ovreduce.ops.reals`); they are runtime values when a
Parameter feeds them; a constant subgraph this module cannot fold leaves them unresolved. A rule that reads such a
value and leaves dims unknown says why on its outputs (:meth:`ShapeEngine._apply`), as does, in a graph read as
declared, a port whose static declared dim ovreduce leaves unknown; the ports after them inherit the reason.

Sub-graph bodies (``If``, ``Loop``, ``TensorIterator``) are graphs of their own: the container's rule
(:mod:`ovreduce.ops.subgraph`) runs a child engine per body with the body Parameters' states taken from the
outer inputs (:meth:`_Context.run_body`); a body no rule ran is still walked, its Parameters keeping their
own declarations, and :attr:`ShapeEngine.body_notes` says why.

A model repeats itself (a transformer stack is one block hundreds of times): a rule that says what it reads
of its layer (:attr:`ovreduce.ops.base.Op.layer_reads`) runs once per distinct reading, its result remembered
for the layers that read the same (:class:`_Memo`), and equal Consts are folded once (:meth:`Op.fold_key
<ovreduce.ops.base.Op.fold_key>`). ``ShapeEngine(..., memoize=False)`` runs every rule: the results are the
same (tests/ops/test_engine_memo.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Literal

from ovreduce.errors import InputError, ShapeInferenceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.model import PORTS_WALKED, IRModel, Layer, Port, PortRef
from ovreduce.ir.weights import Weights
from ovreduce.ops.base import (
    INPUT_COUNT_REFUSED,
    LayerReads,
    Op,
    PortState,
    ValueInfo,
    declared_state,
    input_count_refusal,
)
from ovreduce.ops.common import UNARY_SHAPE_PRESERVING
from ovreduce.ops.reduce import ReductionInfo, ReductionOp
from ovreduce.ops.registry import resolve
from ovreduce.shapes import DimensionError, PartialShape
from ovreduce.smart_reshape import REWRITTEN_FIRST, reshape_to_1d, unported_rewrite

__all__ = ["UNARY_SHAPE_PRESERVING", "AxesInfo", "PortState", "ReductionInfo", "ShapeEngine"]

AxesKind = Literal["const", "runtime", "unresolved"]
AxesInfo = ValueInfo  # the value feeding a reduction's axes input
# the types of the layers OpenVINO's SmartReshape rewrites (:mod:`ovreduce.smart_reshape`)
_REWRITTEN = frozenset({"Reshape", "Squeeze", "StridedSlice", "MatMul", "Broadcast"})
_UNKNOWN = Op()  # the rule of an unregistered op: declared dims, no folding
_DECLARED_DIMS = Op.infer
_PINNED_ELEMENTS = 10  # OpenVINO takes a value whose bounds meet as a constant up to this many elements (are_equal)
_FOLD_DEPTH = 32  # nested value folds (about five frames each) before the chain above is folded iteratively


class ShapeEngine:
    """Propagates shapes through a model once; query it per port or per reduction.

    Args:
        model: the parsed IR.
        reshape: Parameter name (layer name or a tensor name of its output) -> new shape.
        parameters: Parameter layer id -> its state, for a body whose Parameters its container feeds.
        reshaped: the model holding this body is reshaped.
        memoize: run a rule once per distinct (op, attributes, input states, values read) and fold equal
            constants once (off: every layer's rule runs; the results are the same either way).

    Raises:
        InputError: a reshape names no Parameter.
    """

    def __init__(
        self,
        model: IRModel,
        reshape: Mapping[str, PartialShape] | None = None,
        *,
        parameters: Mapping[str, PortState] | None = None,
        reshaped: bool = False,
        memoize: bool = True,
    ) -> None:
        self.model = model
        self._memoize = memoize
        self.reshape = self._match_reshape(reshape or {})
        self._given = dict(parameters or {})
        self._reshaped = bool(self.reshape) or reshaped  # this graph, or the model holding this body, is reshaped
        # whether OpenVINO validates the model again under the reshape: it does unless every Parameter it names keeps
        # its static shape
        self._revalidated = reshaped or any(self._changes(layer_id, shape) for layer_id, shape in self.reshape.items())
        self._bodies: dict[tuple[str, str], ShapeEngine] = {}  # (container layer id, role) -> its body's engine
        self.body_notes: dict[tuple[str, str], str] = {}  # why a body's Parameters keep their own declarations
        self._states: dict[PortRef, PortState] = {}
        self._reductions: dict[str, ReductionInfo] = {}
        self._const_cache: dict[PortRef, AxesInfo] = {}
        self._parts: dict[str, tuple[AxesInfo, ...]] = {}  # every output's value of a layer of many (fold_outputs)
        self._const_values: dict[Hashable, AxesInfo] = {}  # fold_key -> the constant value it folds to
        self._positions: dict[str, int] | None = None  # layer id -> topological index, for _fold_upstream
        self._variables: dict[str, Layer] | None = None  # variable_id -> the first ReadValue of it, once asked
        self._as_read: ShapeEngine | None = None  # the model as read, without the reshape (once a rule asks)
        # (type, version) -> its op, while the walk runs (a query after it resolves the op again: the registry,
        # which a `registered` block extends, may have changed by then)
        self._walk_ops: dict[tuple[str, str], Op] | None = None
        # (layer, its inputs) whose values its rule read unresolved or in part, where it leaves dims unknown
        self._unfolded_reads: list[tuple[Layer, tuple[int, ...]]] = []
        self._run()

    # -- public queries --------------------------------------------------------------------------------
    def state(self, ref: PortRef) -> PortState:
        return self._states[ref]

    def unresolved(self) -> list[PortRef]:
        """The output ports whose shape is not resolved, in no particular order."""
        return [ref for ref, state in self._states.items() if state.shape is None]

    def input_state(self, layer: Layer, index: int) -> PortState:
        ref = self.model.producer(layer.id, _port(layer, index).id)
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

    def unfolded_reads(self) -> Sequence[tuple[Layer, tuple[int, ...]]]:
        """Each layer whose rule read a value ovreduce leaves unresolved (a constant sub-graph it does not fold, a Const
        of a type it does not read), or a runtime value with an element it does not bound (which such a sub-graph may
        compute), and left dims of its outputs unknown or unresolved, with the inputs it read so: a shape input
        OpenVINO may know (and refuse), in the order the walk met them."""
        return self._unfolded_reads

    def result_state(self, layer_id: str) -> PortState:
        """The state reaching (body) Result ``layer_id``."""
        return self.input_state(self.model.layer(layer_id), 0)

    def variables(self) -> Mapping[str, Layer]:
        """The graph's variables: each ``variable_id`` and the first ReadValue of it (found once, when asked)."""
        if self._variables is None:
            found: dict[str, Layer] = {}
            for layer in self.model.layers:
                if layer.type.lower() == "readvalue":
                    found.setdefault(layer.data.get("variable_id", ""), layer)
            self._variables = found
        return self._variables

    def value(self, ref: PortRef) -> ValueInfo:
        """The small constant value of output ``ref`` (folded on demand)."""
        return self._axes(ref, set())

    def result_value(self, layer_id: str) -> ValueInfo:
        """The small constant value reaching (body) Result ``layer_id``."""
        ref = self.model.producer(layer_id, self.model.layer(layer_id).inputs[0].id)
        assert ref is not None
        return self._axes(ref, set())

    def body_engines(self) -> Iterator[tuple[str, ShapeEngine]]:
        """The engine of every body, by ids path (``"12/then"``), nested ones after their container's."""
        for (layer_id, role), child in self._bodies.items():
            path = f"{layer_id}/{role}"
            yield path, child
            for sub, grandchild in child.body_engines():
                yield f"{path}/{sub}", grandchild

    def body_engine(self, body_path: str | None) -> ShapeEngine:
        """The engine of the body at an ids path (None: this one); KeyError when there is none."""
        engine = self
        if body_path is not None:
            parts = body_path.split("/")
            for layer_id, role in zip(parts[::2], parts[1::2], strict=True):
                engine = engine._bodies[(layer_id, role)]
        return engine

    # -- propagation -------------------------------------------------------------------------------------
    def _changes(self, layer_id: str, shape: PartialShape) -> bool:
        """Whether OpenVINO's ``Model::reshape`` of Parameter ``layer_id`` to ``shape`` validates the model again:
        unless its shape is static and stays the same."""
        layer = self.model.layer(layer_id)
        current = layer.shape if layer.shape is not None else declared_state(layer.outputs[0]).shape
        return current is None or not current.is_static or current != shape

    def _match_reshape(self, reshape: Mapping[str, PartialShape]) -> dict[str, PartialShape]:
        if not reshape:  # the usual case: no walk over the layers for their Parameters
            return {}
        params = [layer for layer in self.model.layers if layer.type == "Parameter"]
        matched: dict[str, PartialShape] = {}
        for name, shape in reshape.items():
            # OpenVINO's reshape takes a tensor name (unique in a model); a Parameter's own name where none has it
            hits = [p for p in params if name in p.outputs[0].names] or [p for p in params if p.name == name]
            if not hits:
                known = ", ".join(repr(p.name) for p in params) or "none"
                raise InputError(
                    f"reshape {name}: no Parameter has that name (Parameters: {known})", parameter="reshape"
                )
            if len(hits) > 1:
                ids = ", ".join(p.id for p in hits)
                raise InputError(
                    f"reshape {name}: {len(hits)} Parameters have that name (layers {ids}) and no tensor does; give "
                    f"one of them a tensor name of its own",
                    parameter="reshape",
                )
            matched[hits[0].id] = shape
        return matched

    def _op(self, layer: Layer) -> Op:
        ops = self._walk_ops
        if ops is None:
            return resolve(layer.type, layer.version) or _UNKNOWN
        kind = (layer.type, layer.version)
        op = ops.get(kind)
        if op is None:
            op = ops[kind] = resolve(layer.type, layer.version) or _UNKNOWN
        return op

    def _run(self) -> None:
        states = self._states
        # Per (type, version), asked once: the rule and whether its results may be remembered; None when the
        # op has no rule of its own (most layers of a real model): every output then keeps its declared dims.
        plans: dict[tuple[str, str], tuple[Op, LayerReads | None] | None] = {}
        given = self._given
        memo = _Memo(self) if self._memoize else None
        self._walk_ops = {}
        for layer in self.model.layers:
            if given and layer.id in given:
                states[(layer.id, layer.outputs[0].id)] = given[layer.id]
                continue
            kind = (layer.type, layer.version)
            try:
                plan = plans[kind]
            except KeyError:
                op = self._op(layer)
                plan = plans[kind] = (
                    None
                    if type(op).infer is _DECLARED_DIMS and not isinstance(op, ReductionOp)
                    else (op, op.layer_reads)
                )
            if plan is None:
                self._declare(layer, layer.outputs)
                continue
            op, reads = plan
            result: _Result | None = None
            rewrite = self._rewrite(layer) if self._revalidated and layer.type in _REWRITTEN else None
            if rewrite is not None:  # rewritten by OpenVINO's reshape first, as ovreduce does not follow
                # (not worded as the layer's own refusal: OpenVINO's inference is asked for what it feeds)
                reason = (f"{REWRITTEN_FIRST}{layer.type} ({layer.name}) first (SmartReshape's {rewrite}), "
                          f"which ovreduce's shape inference does not follow")  # fmt: skip
                result = tuple(PortState(None, port.precision, "unresolved", reason) for port in layer.outputs)
            elif self._revalidated and reshape_to_1d(self.model, layer):  # its pattern read as [-1]: unshared
                result = self._apply(op, _Context(self, layer))
            else:
                result = memo.recall(op, layer, reads) if memo is not None and reads is not None else None
            if result is None:
                result = self._apply(op, _Context(self, layer))
                if memo is not None:
                    result = memo.shared(result)
            layer_id = layer.id
            if isinstance(result, ReductionInfo):
                self._reductions[layer_id] = result
                result = (result.output,)
            outputs = layer.outputs
            for port, state in zip(outputs, result, strict=False):
                if state.shape is None or (not state.reason and not state.shape.is_static):
                    state = self._with_reason(layer, state, port)
                states[(layer_id, port.id)] = state
            if len(result) < len(outputs):
                self._declare(layer, outputs[len(result) :])
        self._walk_ops = None
        for layer in self.model.layers:
            for body in layer.bodies:  # a body no rule ran: walked all the same, on its own declarations
                if (layer.id, body.role) not in self._bodies:
                    self._walk_unfed(layer, body.role)

    def _rewrite(self, layer: Layer) -> str | None:
        """The SmartReshape rewrite OpenVINO's reshape applies to ``layer`` and ovreduce does not follow
        (:mod:`ovreduce.smart_reshape`); None: none, or one that leaves its shapes as the file's graph has them (a
        Transpose fused into a MatMul whose input keeps the rank the Transpose was written for)."""
        rewrite = unported_rewrite(self.model, layer)
        if rewrite != "TransposeMatMul":
            return rewrite
        for ref in self.model.input_producers(layer)[:2]:
            transpose = None if ref is None else self.model.layer(ref[0])
            if transpose is None or transpose.type != "Transpose" or not transpose.outputs:
                continue
            given = self.input_state(transpose, 0).shape
            if given is None or given.rank != len(transpose.outputs[0].dims):
                return rewrite
        return None

    @staticmethod
    def _apply(op: Op, ctx: _Context) -> _Result:
        """Run ``op``'s rule: a reduction's analysis, else the output states. A rule that reads a value ovreduce leaves
        unresolved and leaves dims unknown is remembered with the inputs it read so (:meth:`unfolded_reads`)."""
        result = ShapeEngine._run_rule(op, ctx)
        if ctx.unfolded_inputs:
            states = (result.output,) if isinstance(result, ReductionInfo) else result
            if any(s.shape is None or not s.shape.is_static for s in states):
                ctx._engine._unfolded_reads.append((ctx.layer, tuple(sorted(set(ctx.unfolded_inputs)))))
        return result

    @staticmethod
    def _run_rule(op: Op, ctx: _Context) -> _Result:
        if isinstance(op, ReductionOp):
            return op.analyse(ctx)
        layer = ctx.layer
        counts = op.input_counts(layer)
        if counts is not None and len(layer.inputs) not in counts:  # OpenVINO's refusal, whatever the rule reads
            reason = f"{layer.type} ({layer.name}): {input_count_refusal(layer.type, counts, len(layer.inputs))}"
            return tuple(PortState(None, port.precision, "unresolved", reason) for port in layer.outputs)
        try:
            outs = tuple(op.infer(ctx))  # a registered rule may return any iterable
        except (ArithmeticError, DimensionError) as exc:  # values no rule refuses in words (a hostile attribute)
            reason = (
                f"{layer.type} ({layer.name}): ovreduce's shape rule cannot evaluate its attributes and inputs ({exc})"
            )
            return tuple(PortState(None, port.precision, "unresolved", reason) for port in layer.outputs)
        if ctx.unfolded is not None:  # dims left unknown may be a value ovreduce does not compute, not OpenVINO's
            why = (f"dims ovreduce leaves unknown here may be known to OpenVINO: {layer.type} ({layer.name}) reads a "
                   f"value ovreduce does not compute ({ctx.unfolded})")  # fmt: skip
            outs = tuple(
                replace(s, reason=why) if s.shape is not None and not s.shape.is_static and not s.reason else s
                for s in outs
            )
        return outs

    def _walk_unfed(self, layer: Layer, role: str) -> None:
        """Walk a body its container's inputs do not feed: on its Parameters' own declarations, unless a reshape
        changed the container's inputs (:meth:`_inputs_stale`): those declarations are then stale,
        and the body's Parameters are unresolved, with the reason (the note is not made: it would say the body
        is checked on its own declarations)."""
        key = (layer.id, role)
        note = self.body_notes.setdefault(
            key,
            f"ovreduce has no rule for the bodies of {layer.type} layers: the body's Parameters keep their own "
            f"declared shapes",
        )
        body = layer.body(role)
        assert body is not None
        params: dict[str, PortState] = {}
        if self._inputs_stale(layer):
            del self.body_notes[key]
            reason = f"{layer.type} ({layer.name}) cannot feed its {role!r} body, and its inputs changed: {note}"
            params = {p.id: PortState(None, p.element_type, "unresolved", reason)
                      for p in body.graph.layers if p.type == "Parameter"}  # fmt: skip
        self._bodies[key] = ShapeEngine(body.graph, parameters=params, reshaped=self._reshaped, memoize=self._memoize)

    def _declare(self, layer: Layer, ports: tuple[Port, ...]) -> None:
        """Output ports without a rule keep their declared dims, unless a reshape changed the layer's inputs
        or they declare a dynamic dim under a reshape (:meth:`_stale`): then those dims are stale, and the ports
        are unresolved (saying which op has no rule)."""
        if not ports:
            return
        if self._stale(layer):
            reason = f"no native shape rule for {layer.type} ({layer.name})"
            for port in ports:
                self._states[(layer.id, port.id)] = PortState(None, port.precision, "unresolved", reason)
            return
        for port in ports:
            self._states[(layer.id, port.id)] = declared_state(port)

    def _with_reason(self, layer: Layer, state: PortState, port: Port | None = None) -> PortState:
        """An unresolved output without a reason of its own: the reason of an unresolved input, if any (so a
        container whose body Result is unresolved can say why). An output with dims not known: the reason of an input
        whose dims ovreduce left unknown where OpenVINO may know them (:meth:`_apply`), if any; in a graph read as the
        file declares it, only where ``port`` declares static a dim ovreduce leaves unknown (a port whose dims are as
        dynamic as the file's has nothing to explain), and, where no input says why, that."""
        if state.reason:
            return state
        shape = state.shape
        declared = shape is not None and not (self.reshape or self._given)
        if declared and not _declared_gap(port, shape):
            return state
        for index in range(len(layer.inputs)):
            given = self.input_state(layer, index)
            if given.reason and (
                given.shape is None if shape is None else not (given.shape is None or given.shape.is_static)
            ):
                return replace(state, reason=given.reason)
        if declared and port is not None:
            return replace(state, reason=(
                f"the file declares {PartialShape.from_port_dims(port.dims)} for {layer.type} ({layer.name}), "
                f"OpenVINO's shape as it wrote it: ovreduce leaves dims of it unknown, its bounds of the values "
                f"computed at run time that feed it coarser than OpenVINO's"))  # fmt: skip
        return state

    def _inputs_stale(self, layer: Layer) -> bool:
        """Whether a reshape of the model changed ``layer``'s inputs from the dims its input ports declare (so
        what its bodies declare is stale too). Without a reshape a body keeps trusting its declarations: a
        container feeds it states that differ from them only in precision (an interval for -1, say)."""
        return self._reshaped and self._inputs_changed(layer)

    def _stale(self, layer: Layer) -> bool:
        """Whether the dims ``layer``'s outputs declare may be stale: a reshape (or a container feeding this
        body) changed its inputs from the dims they declare; or, under a reshape, they declare a dynamic dim,
        where OpenVINO may know an interval (the IR writes ``2..5`` as -1)."""
        if not (self.reshape or self._given):
            return False
        if self._reshaped and any(-1 in port.dims for port in layer.outputs):
            return True
        return self._inputs_changed(layer)

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
        if len(visiting) >= _FOLD_DEPTH:
            self._fold_upstream(ref)
            cached = self._const_cache.get(ref)
            if cached is not None:
                return cached
        info = self._fold(ref, visiting)
        self._const_cache[ref] = info
        return info

    def _fold_upstream(self, ref: PortRef) -> None:
        """Fold ``ref`` and every output above it whose value is not known yet, iteratively and producers first,
        so that each fold finds its inputs' values cached: a long chain of folds (a file may hold a
        million-layer one) then never recurses deeper than :data:`_FOLD_DEPTH` steps. Folds are pure, so folding
        an output no rule would have asked about changes no result; one that fails is left to the ordinary path."""
        model, cache = self.model, self._const_cache
        refs = {ref}
        stack = [ref]
        while stack:
            for producer in model.input_producers(model.layer(stack.pop()[0])):
                if producer is not None and producer not in refs and producer not in cache:
                    refs.add(producer)
                    stack.append(producer)
        if self._positions is None:
            self._positions = {layer.id: i for i, layer in enumerate(model.layers)}
        position = self._positions
        for item in sorted(refs, key=lambda r: position[r[0]]):  # topological: producers first
            if item not in cache:
                try:
                    cache[item] = self._fold(item, set())
                except Exception:  # the ordinary path folds it again, and says why it fails
                    continue

    def _fold(self, ref: PortRef, visiting: set[str]) -> AxesInfo:
        layer = self.model.layer(ref[0])
        if layer.id in visiting:  # pragma: no cover - the parser rejects cycles
            return AxesInfo("unresolved", None, "cycle")
        op = self._op(layer)
        key = op.fold_key(layer) if self._memoize else None
        if key is not None:
            known = self._const_values.get(key)
            if known is not None:
                return known
        if self.model.ir_version > 10 and layer.type != "Const" and _decompression(layer):
            return AxesInfo("runtime", None, f"layer {layer.name!r} is marked 'decompression' (fp16 compression of a "
                                             f"constant): OpenVINO does not compute its value as it reads the model, "
                                             f"so it is known at run time only")  # fmt: skip
        visiting.add(layer.id)
        try:
            outputs = layer.outputs
            if not outputs or outputs[0].id == ref[1]:  # nearly every layer: one output
                info = op.fold(_Context(self, layer, visiting))
            elif len(outputs) <= PORTS_WALKED:
                info = op.fold_output(_Context(self, layer, visiting), self.model.output_index(layer, ref[1]))
            else:  # every part from one read of the inputs (a Split of N outputs: not N reads of N elements)
                parts = self._parts.get(layer.id)
                if parts is None:
                    parts = self._parts[layer.id] = tuple(
                        op.fold_outputs(_Context(self, layer, visiting), len(outputs))
                    )
                info = parts[self.model.output_index(layer, ref[1])]
        except ShapeInferenceError as exc:
            if INPUT_COUNT_REFUSED.match(exc.message) is None:
                raise
            return AxesInfo("unresolved", None, f"layer {layer.id} {layer.name!r} ({layer.type}): {exc.message}")
        finally:
            visiting.discard(layer.id)
        if key is not None and info.kind == "const":  # a constant value names no layer
            self._const_values[key] = info
        if info.kind == "runtime" and info.known is not None and len(info.known) <= _PINNED_ELEMENTS:
            return self._pinned(ref, info)
        return info

    def _pinned(self, ref: PortRef, info: AxesInfo) -> AxesInfo:
        """A runtime value whose every element's bounds meet (``d * 0`` is ``0..0``) as the constant they pin down, as
        OpenVINO's bound evaluation takes it (lower and upper then one tensor, ``has_and_set_bound``): every op then
        evaluates it (a Negative of it), and every shape inference reads it as a constant; ``info`` otherwise."""
        assert info.known is not None
        values = []
        for bounds in info.known:
            if bounds is None or bounds[0] != bounds[1]:
                return info
            values.append(bounds[0])
        state = self._states.get(ref)
        shape = None if state is None else state.shape
        if shape is None or not shape.is_static or math.prod(shape.to_list()) != len(values):
            return info
        return AxesInfo("const", tuple(values), shape=tuple(shape.to_list()))


def _declared_gap(port: Port | None, shape: PartialShape | None) -> bool:
    """Whether ``port`` declares static a dim ``shape`` (of the same rank) leaves unknown."""
    if port is None or shape is None or shape.dims is None or len(port.dims) != len(shape.dims):
        return False
    return any(d >= 0 and not s.is_static for d, s in zip(port.dims, shape.dims, strict=True))


def _port(layer: Layer, index: int) -> Port:
    """Input ``index`` of ``layer``; one past its inputs is OpenVINO's refusal of the layer, which a rule or a fold
    that reads it meets (as :class:`ovreduce.ops.rules._Inputs` says it), not ovreduce's error."""
    if not 0 <= index < len(layer.inputs):
        raise ShapeInferenceError(f"index '{index}' out of range (the layer has {len(layer.inputs)} inputs)")
    return layer.inputs[index]


def _decompression(layer: Layer) -> bool:
    """Whether ``layer`` carries the runtime attribute ``decompression``, which keeps OpenVINO's shape inference from
    computing its value, bounds included (OpenVINO reads it from an ``<attribute>`` element only)."""
    return any(
        item.tag == "attribute" and ("name", "decompression") in item.attrs and ("version", "0") in item.attrs
        for item in layer.rt_info
    )


class _Context:
    """What a rule may ask about its layer (:class:`ovreduce.ops.base.LayerContext`), answered by the engine.

    ``refs`` and ``inputs`` are the producers of the layer's inputs and their states, when the engine has
    them at hand; ``reads`` (when not None) records every value the rule reads, for :class:`_Memo`.
    """

    __slots__ = ("_engine", "_inputs", "_refs", "_visiting", "layer", "reads", "unfolded", "unfolded_inputs")

    def __init__(
        self,
        engine: ShapeEngine,
        layer: Layer,
        visiting: set[str] | None = None,
        *,
        refs: Sequence[PortRef | None] | None = None,
        inputs: Sequence[PortState] | None = None,
    ) -> None:
        self._engine = engine
        self._visiting = visiting if visiting is not None else set()
        self.layer = layer
        self._refs = refs
        self._inputs = inputs
        self.reads: list[_Read] | None = None
        self.unfolded: str | None = None  # why the first unresolved value the rule read is unresolved
        self.unfolded_inputs: list[int] = []  # the inputs whose values it read unresolved, or with an element unbounded

    @property
    def reshape(self) -> PartialShape | None:
        return self._engine.reshape.get(self.layer.id)

    @property
    def weights(self) -> Weights | None:
        return self._engine.model.weights

    def input(self, index: int) -> PortState:
        if self._inputs is not None:
            return self._inputs[index]
        return self._engine.input_state(self.layer, index)

    def value(self, index: int) -> ValueInfo:
        if self._refs is not None:
            ref = self._refs[index]
        else:
            ref = self._engine.model.producer(self.layer.id, _port(self.layer, index).id)
        assert ref is not None  # the parser guarantees every input port is connected
        engine = self._engine
        if index == 1 and engine._revalidated and reshape_to_1d(engine.model, self.layer):
            # OpenVINO's reshape first rewrites the constant pattern of a Reshape to 1-D as [-1] (ReshapeTo1D)
            info = ValueInfo("const", (-1,), shape=(1,))
        else:
            info = engine._axes(ref, self._visiting)
        if self.reads is not None:
            self.reads.append((index, info))
        if info.kind == "unresolved" and info.reals is None:  # (reals are computed)
            self.unfolded_inputs.append(index)
            if self.unfolded is None:
                self.unfolded = info.reason
        elif info.kind == "runtime" and info.known is not None and None in info.known:
            self.unfolded_inputs.append(index)  # an element ovreduce does not bound: a part it does not fold, maybe
        return info

    def input_values(self) -> list[ValueInfo]:
        engine = self._engine
        refs = self._refs if self._refs is not None else engine.model.input_producers(self.layer)
        values = [engine._axes(p, self._visiting) for p in refs if p is not None]
        if self.reads is not None:
            self.reads.append((_EVERY_INPUT, tuple(values)))
        unread = [i for i, v in enumerate(values) if v.kind == "unresolved" and v.reals is None]
        self.unfolded_inputs += unread
        if self.unfolded is None and unread:
            self.unfolded = values[unread[0]].reason
        return values

    def run_body(self, role: str, parameters: Mapping[str, PortState]) -> ShapeEngine:
        """Walk this layer's body ``role`` with the given Parameter states (the last walk is the one kept)."""
        body = self.layer.body(role)
        assert body is not None
        engine = self._engine
        child = ShapeEngine(body.graph, parameters=parameters, reshaped=engine._reshaped, memoize=engine._memoize)
        engine._bodies[(self.layer.id, role)] = child
        return child

    def declared_output(self, index: int, element_type: ElementType | None, reason: str) -> PortState:
        """Output ``index`` as the layer declares it, where its rule cannot infer it; unresolved with ``reason``
        when those dims are stale (the layer's inputs changed)."""
        port = self.layer.outputs[index]
        if self._engine._stale(self.layer):
            return PortState(None, element_type if element_type is not None else port.precision, "unresolved", reason)
        return declared_state(port, element_type)

    def place(self) -> str:
        """Where the layer is, as a message begins: the model's source and the layer's line."""
        source, line = self._engine.model.source, self.layer.line
        return f"{source}:{line}" if line else source

    def inputs_stale(self) -> bool:
        """Whether a reshape changed this layer's inputs (so what the layer and its bodies declare is stale)."""
        return self._engine._inputs_stale(self.layer)

    def output_ports_read(self) -> bool:
        """Whether OpenVINO's reader asks the layer for each of its output ports (an IR v11's, whose runtime
        attributes it reads)."""
        return self._engine.model.ir_version > 10

    def variable(self, variable_id: str) -> Layer | None:
        """The first ReadValue of the graph whose ``variable_id`` this is; None when there is none."""
        return self._engine.variables().get(variable_id)

    def reshaped(self) -> bool:
        """Whether the model is reshaped so that OpenVINO validates every node again."""
        return self._engine._revalidated

    def as_read(self, index: int) -> PortState | None:
        """Input ``index``'s state in the model as OpenVINO's reader makes it, before the reshape; None in a body (its
        container's inputs as read are not at hand)."""
        engine = self._engine
        if engine._given or (engine._reshaped and not engine.reshape):
            return None
        if not engine.reshape:
            return self.input(index)
        if engine._as_read is None:
            engine._as_read = ShapeEngine(engine.model, memoize=engine._memoize)
        return engine._as_read.input_state(self.layer, index)

    def skip_body(self, role: str, reason: str) -> None:
        """Say why body ``role`` is not fed by this layer's inputs (it is then walked on its own declarations)."""
        self._engine.body_notes[(self.layer.id, role)] = reason


_EVERY_INPUT = -1  # a read of every input's value (LayerContext.input_values)
_Read = tuple[int, ValueInfo | tuple[ValueInfo, ...]]  # (input index or _EVERY_INPUT, the value the rule read)
_Result = tuple[PortState, ...] | ReductionInfo
_MAX_VARIANTS = 8  # results kept per key (layers that read different values); a key past that is not memoized


def _reads_alike(engine: ShapeEngine, refs: Sequence[PortRef | None], reads: tuple[_Read, ...]) -> bool:
    """Whether the values the producers ``refs`` give are those ``reads`` holds, read as a rule reads them
    (:meth:`_Context.value`, :meth:`_Context.input_values`; the first that differs is the last read). A read
    that fails is not alike: the rule then reads it itself, and fails (or handles the failure) as it would."""
    try:
        for index, value in reads:
            if index == _EVERY_INPUT:
                got: ValueInfo | tuple[ValueInfo, ...] = tuple([engine._axes(r, set()) for r in refs if r is not None])
            else:
                ref = refs[index]
                assert ref is not None  # the parser guarantees every input port is connected
                got = engine._axes(ref, set())
            if got is not value and got != value:  # a fold remembered by its key is the very same value
                return False
    except Exception:  # whatever a fold raises, the rule's own read raises again
        return False
    return True


class _Memo:
    """The results of the rules of one walk that say what they read (:attr:`ovreduce.ops.base.Op.layer_reads`),
    so that a layer repeating another (a transformer stack repeats one block hundreds of times) does not run
    its rule.

    A result is remembered under the layer's op, what the rule reads of the layer (attributes: ``data``,
    compared by content, element type, the outputs' precisions and declared dims; own shape: the shape and
    element type objects)
    and input states, together with the values the rule read (in order); a later layer with the same key gets
    it when reading the same values gives the values remembered (a rule reads the same values in the same
    order when everything before it was equal). A result whose states carry a
    reason (which may name the layer) is not remembered; a reduction's analysis is, and is given to the
    layer (:meth:`ReductionInfo.for_layer`).

    Equal states are shared (:meth:`shared`), so that keys hold states by ``id``: the engine keeps every
    state (and the model every layer's ``data`` and element types) alive while the memo lives.
    """

    __slots__ = ("_contents", "_data", "_engine", "_engine_states", "_producer", "_results", "_sources", "_states")

    def __init__(self, engine: ShapeEngine) -> None:
        self._engine = engine
        self._engine_states = engine._states
        self._producer = engine.model.producer
        self._data: dict[int, int] = {}  # id(layer.data) -> index of its content (layers may share one mapping)
        self._contents: dict[tuple[tuple[str, str], ...], int] = {}
        self._states: dict[PortState, PortState] = {}
        # (id(shape), id(element type), origin, reason) -> the shared state holding that very shape and type:
        # the parser shares the shapes of Consts, whose states would otherwise be hashed one by one
        self._sources: dict[tuple[int, int, str, str], PortState] = {}
        self._results: dict[tuple[object, ...], list[tuple[tuple[_Read, ...], _Result]]] = {}

    def shared(self, result: _Result) -> _Result:
        """``result`` with states equal to earlier ones replaced by those (one object per distinct state)."""
        share = self._share
        if isinstance(result, ReductionInfo):
            output = share(result.output)
            return result if output is result.output else replace(result, output=output)
        return tuple([share(state) for state in result])

    def _share(self, state: PortState) -> PortState:
        key = (id(state.shape), id(state.element_type), state.origin, state.reason)
        found = self._sources.get(key)
        if found is None:
            found = self._states.setdefault(state, state)
            if found is state:  # it keeps that shape and type alive, so their ids stay theirs
                self._sources[key] = found
        return found

    def recall(self, op: Op, layer: Layer, layer_reads: LayerReads) -> _Result | None:
        """``op``'s result for ``layer``: remembered from a layer that read the same, else computed (and
        remembered unless it may name the layer); None when an input has no state (the rule, run without the
        memo, then says why)."""
        refs: list[PortRef | None] | None = None  # None: the context looks them up if the rule asks
        inputs: list[PortState] | None = None
        if layer_reads == "own shape":
            key: tuple[object, ...] = (op, id(layer.shape), id(layer.element_type))
        else:
            states, producer, layer_id = self._engine_states, self._producer, layer.id
            refs = []
            inputs = []
            for port in layer.inputs:  # one walk: the producers and their states
                ref = producer(layer_id, port.id)
                state = None if ref is None else states.get(ref)
                if state is None:
                    return None
                refs.append(ref)
                inputs.append(state)
            data = layer.data
            content = self._data.get(id(data))
            if content is None:
                content = self._contents.setdefault(tuple(data.items()), len(self._contents))
                self._data[id(data)] = content
            key = (op, content, id(layer.element_type), *[(id(port.precision), port.dims) for port in layer.outputs],
                   None, *map(id, inputs))  # fmt: skip
        variants = self._results.get(key)
        engine = self._engine
        if variants is not None:
            for reads, result in variants:
                if reads:
                    if refs is None:
                        refs = list(engine.model.input_producers(layer))
                    if not _reads_alike(engine, refs, reads):
                        continue
                if isinstance(result, ReductionInfo) and result.layer is not layer:
                    return result.for_layer(layer)
                return result
        ctx = _Context(engine, layer, refs=refs, inputs=inputs)
        ctx.reads = []
        result = self.shared(engine._apply(op, ctx))
        if variants is None:
            variants = self._results[key] = []
        names_no_layer = not (
            result.output.reason if isinstance(result, ReductionInfo) else any(s.reason for s in result)
        )
        # (a rule that read a value ovreduce leaves unresolved is run for each layer, which the engine then remembers)
        if names_no_layer and not ctx.unfolded_inputs and len(variants) < _MAX_VARIANTS:
            variants.append((tuple(ctx.reads), result))
        return result
