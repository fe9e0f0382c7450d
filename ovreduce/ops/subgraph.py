"""The sub-graph ops: ``If`` (opset8), ``Loop`` (opset5), ``TensorIterator`` (opset1).

Their rules feed each body's Parameters from the layer's inputs through the port map, walk the body
(:meth:`SubGraphContext.run_body`: a shape engine of its own) and read the layer's outputs from the body
Results, as OpenVINO's ``validate_and_infer_types`` of these ops does:

* ``If``: each body's Parameters take the shapes of the inputs mapped to them; an output is the merge of
  the then- and else-Result shapes (equal dims stay, differing static dims become the interval between them,
  anything dynamic becomes dynamic, a scalar and a 1-D shape a 1-D shape, other different ranks a dynamic
  rank), its element type the branches' (the dynamic type takes the other's; two others that differ are refused, as
  OpenVINO refuses them). With a constant condition OpenVINO infers only the branch taken: its outputs are that
  branch's, and the other body keeps its declarations. It builds the If with as many outputs as the then-branch
  maps, or as the branch taken gives if that is more (one the branch taken does not give has no known type or
  shape), and refuses an IR v11 with an output port past them.
* ``Loop``: a sliced input gives its Parameter the outer shape with ``axis`` of size ``part_size``; a merged input
  (one with a back edge) the initial value's shape (a dim of 0 dynamic), each dim made dynamic where it does not
  contain the back-edge Result's (re-walked until it settles, at most the trip count times); an invariant input its
  own shape. The trip count is known when it is constant and the body condition is constant true (or a Parameter fed
  by a constant true); a constant false body condition is one iteration, a constant false execution condition none
  (a static last value's first dim is then 0, and a static scalar one is refused, as OpenVINO refuses it). A
  concatenated output multiplies the Result's ``axis`` by the trip count when both are known, else that dim is
  dynamic. A Loop whose port map names no execution condition has one output, of dynamic rank and element type,
  and its body is not fed (OpenVINO's validation stops there).
* ``TensorIterator``: as a Loop, the trip count coming from a sliced input's static dim,
  ``(|end - start| + 1) / part_size``; a concatenated output's ``axis`` is ``trip count * part_size``. Its body
  Parameters keep the element types the file gives them (an If's and a Loop's take their inputs'). A TensorIterator
  among the body layers its Results are computed from is refused, as OpenVINO refuses it (one in a Loop's body
  there is not).

A body's Parameter whose outer input has no resolved shape keeps its own declaration, unless a reshape changed
the layer's inputs (then it is unresolved, with the reason; so is every Parameter of a body the layer cannot
feed, a slicing axis out of range say). An output the bodies do
not give (a body Result with no resolved shape, a port map ovreduce cannot follow) keeps the layer's declared
dims, unless those are stale (a reshape changed the layer's inputs): it is then unresolved, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple, Protocol, cast

from ovreduce.errors import IRStructureError, ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import Body, Layer, PortMapping
from ovreduce.ops.base import LAST_OPSET, LayerContext, Op, PortState, ValueInfo
from ovreduce.shapes import Dimension, PartialShape, const_dim

__all__ = ["BodyShapes", "If8", "Loop5", "SubGraphContext", "SubGraphOp", "TensorIterator0", "Trips", "merge_branches"]

_UNBOUNDED = 1 << 62  # the re-walks of a Loop of unknown trip count: until no back edge widens a Parameter
_REWALK_LAYERS = 1 << 21  # body layers a Loop's re-walks may visit in all (a chain of 10,000 carried values in a
# body of as many layers would take 10**8); past them every carried value is dynamic, OpenVINO's at the least


class BodyShapes(Protocol):
    """What a rule reads from a walked body."""

    def result_state(self, layer_id: str) -> PortState: ...

    def result_value(self, layer_id: str) -> ValueInfo: ...


class SubGraphContext(LayerContext, Protocol):
    """The context of a sub-graph layer: it can walk the layer's bodies."""

    def run_body(self, role: str, parameters: Mapping[str, PortState]) -> BodyShapes: ...

    def skip_body(self, role: str, reason: str) -> None: ...

    def declared_output(self, index: int, element_type: ElementType | None, reason: str) -> PortState: ...

    def inputs_stale(self) -> bool: ...

    def output_ports_read(self) -> bool:
        """Whether OpenVINO's reader asks the layer for each of its output ports, whatever feeds on them: in an IR
        v11, whose runtime attributes it reads (so that it refuses a port past the outputs it built)."""
        ...


class SubGraphOp(Op):
    """Shared parts of the sub-graph ops."""

    roles: tuple[str, ...] = ("body",)

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        sctx = cast(SubGraphContext, ctx)
        for body in ctx.layer.bodies:
            if body.role not in self.roles:
                sctx.skip_body(body.role, f"a {self.type} has no {body.role!r} body (expected {', '.join(self.roles)})")
        try:
            return self.infer_bodies(sctx)
        except ShapeInferenceError as exc:  # refused as OpenVINO's validation refuses it
            reason = f"{ctx.layer.type} ({ctx.layer.name}): {exc.message}"
            for body in ctx.layer.bodies:
                sctx.skip_body(body.role, f"its inputs do not fit its shape rule: {exc.message}")
            return [PortState(None, None, "unresolved", reason) for _ in ctx.layer.outputs]

    def infer_bodies(self, ctx: SubGraphContext) -> Sequence[PortState]:
        reason = f"its bodies do not give the outputs of {ctx.layer.type} ({ctx.layer.name})"
        return [ctx.declared_output(i, None, reason) for i in range(len(ctx.layer.outputs))]

    @staticmethod
    def unresolved_reason(layer: Layer, role: str, result: PortState) -> str:
        """Why an output stays unresolved when the body Result giving it has no shape."""
        why = f": {result.reason}" if result.reason else ""
        return f"the {role!r} body of {layer.type} ({layer.name}) gives no shape for its output{why}"

    @staticmethod
    def outer(ctx: SubGraphContext, body: Body, mapping: PortMapping) -> PortState | None:
        """The state of the input mapped to a body Parameter; None when it has no resolved shape (the Parameter
        keeps its declaration), unless a reshape changed the layer's inputs: then unresolved, with the reason."""
        if mapping.external_port_id < 0:
            return None
        state = ctx.input(mapping.external_port_id)
        param = body.graph.layer(mapping.internal_layer_id)
        if state.shape is None:
            if not ctx.inputs_stale():
                return None
            why = state.reason or "no resolved shape"
            reason = f"input {mapping.external_port_id} of {ctx.layer.type} ({ctx.layer.name}): {why}"
            return PortState(None, state.element_type or param.element_type, "unresolved", reason)
        return PortState(state.shape, state.element_type or param.element_type, "inferred")

    @staticmethod
    def connected(body: Body) -> list[PortMapping]:
        """The body outputs that are layer outputs, in output order (OpenVINO sorts them by external id)."""
        return sorted((m for m in body.outputs if m.external_port_id >= 0), key=lambda m: m.external_port_id)


def merge_branches(a: PartialShape, b: PartialShape) -> PartialShape:
    """The output shape of an If whose then- and else-bodies give ``a`` and ``b`` (OpenVINO's resolve_shape).

    A scalar and a 1-D shape merge to a 1-D shape: ``[1]`` when the 1-D one is ``[1]``, else ``[?]``
    (OpenVINO 2026.4); other different ranks to a dynamic rank."""
    if a.dims is None or b.dims is None:
        return PartialShape.dynamic()
    if len(a.dims) != len(b.dims):
        if len(a.dims) <= 1 and len(b.dims) <= 1:
            one = a.dims or b.dims
            return PartialShape.static([1]) if one == (Dimension.static(1),) else PartialShape.dynamic(1)
        return PartialShape.dynamic()
    dims = []
    for x, y in zip(a.dims, b.dims, strict=True):
        if not x.is_static or not y.is_static:
            dims.append(Dimension.dynamic())
        elif x == y:
            dims.append(x)
        else:
            dims.append(Dimension(min(x.lo, y.lo), max(x.lo, y.lo)))
    return PartialShape(tuple(dims))


def _scalar(value: ValueInfo) -> int | float | None:
    """A constant of one element, whatever its type: a Const's non-integral float too (0.5), which OpenVINO reads
    through ``cast_vector``: as a condition, true when not 0; as a trip count, truncated toward 0."""
    numbers = value.values if value.kind == "const" else value.reals
    return numbers[0] if numbers is not None and len(numbers) == 1 else None


def _one(value: ValueInfo, what: str) -> ValueInfo:
    """A Loop's trip count or condition, refused as OpenVINO refuses a constant of it that holds several values."""
    numbers = value.values if value.kind == "const" else value.reals
    if numbers is not None and len(numbers) != 1:
        raise ShapeInferenceError(f"The number of values in the {what} constant is greater than 1 (it has "
                                  f"{len(numbers)})")  # fmt: skip
    return value


def _const_bool(value: ValueInfo) -> bool | None:
    number = _scalar(value)
    return None if number is None else bool(number)


def _bounded_bool(value: ValueInfo) -> bool | None:
    """A runtime condition of one element whose bounds are equal (an Equal of intervals that do not meet: false),
    which OpenVINO's ``get_constant_from_source`` takes as a constant, as an If does; None otherwise."""
    known = value.known if value.kind == "runtime" else None
    if known is None or len(known) != 1 or known[0] is None or known[0][0] != known[0][1]:
        return None
    return bool(known[0][0])


def _decided(value: ValueInfo) -> bool | None:
    """A condition as OpenVINO's ``get_constant_from_source`` takes it: a constant, or a runtime value of one
    element whose bounds are equal; None otherwise."""
    decided = _const_bool(value)
    return decided if decided is not None else _bounded_bool(value)


def _with_dim(shape: PartialShape, axis: int, dim: Dimension) -> PartialShape | None:
    """``shape`` with ``axis`` (negative counts from the end) replaced; None when the axis is out of range."""
    assert shape.dims is not None
    rank = len(shape.dims)
    if not -rank <= axis < rank:
        return None
    dims = list(shape.dims)
    dims[axis % rank] = dim
    return PartialShape(tuple(dims))


class If8(SubGraphOp):
    type = "If"
    version = "opset8"
    opsets = range(8, LAST_OPSET + 1)
    roles = ("then", "else")

    def infer_bodies(self, ctx: SubGraphContext) -> Sequence[PortState]:
        layer = ctx.layer
        condition = ctx.input(0).shape if layer.inputs else None
        if condition is not None and condition.rank is not None and condition.rank > 1:
            raise ShapeInferenceError(f"Rank of If condition input must be equal to 0 or 1 (it is {condition})")
        value = ctx.value(0) if layer.inputs else None
        numbers = None if value is None else value.values if value.kind == "const" else value.reals
        if numbers is not None and len(numbers) != 1:
            raise ShapeInferenceError(f"The number of values in the If condition constant is greater than 1 (it has "
                                      f"{len(numbers)})")  # fmt: skip
        taken = None if value is None else _const_bool(value) if numbers is not None else _bounded_bool(value)
        if taken is not None:
            self._constant_outputs(ctx, taken)
        if taken is None:
            self._varying_outputs(ctx)
        results: dict[str, list[PortState]] = {}
        for body in layer.bodies:
            if body.role not in self.roles:
                continue
            params: dict[str, PortState] = {}
            if taken is None or (body.role == "then") == taken:  # OpenVINO infers only the branch taken
                for m in body.inputs:
                    state = self.outer(ctx, body, m)
                    if state is not None:
                        params[m.internal_layer_id] = state
            child = ctx.run_body(body.role, params)
            results[body.role] = [child.result_state(m.internal_layer_id) for m in self.connected(body)]
        if taken is not None:
            chosen = results.get("then" if taken else "else")
            if chosen is None:
                return super().infer_bodies(ctx)
            # the outputs the branch taken does not give, of those the then-branch maps: of no known type or shape
            unset = PortState(PartialShape.dynamic(), ELEMENT_TYPES["dynamic"], "inferred")
            return [*chosen, *[unset] * (self._built_outputs(layer, taken) - len(chosen))]
        then, other = results.get("then"), results.get("else")
        if then is None or other is None:
            return super().infer_bodies(ctx)
        outs: list[PortState] = []
        for index, (a, b) in enumerate(zip(then, other, strict=False)):
            if index >= len(layer.outputs):
                break
            etype = self._merged_type(layer, index, a.element_type, b.element_type)
            if a.shape is None or b.shape is None:
                role, missing = ("then", a) if a.shape is None else ("else", b)
                outs.append(ctx.declared_output(index, etype, self.unresolved_reason(layer, role, missing)))
            else:
                outs.append(PortState(merge_branches(a.shape, b.shape), etype, "inferred"))
        # the ports past the outputs OpenVINO builds (those the then-branch maps): of no known type or shape to it
        unset = PortState(PartialShape.dynamic(), ELEMENT_TYPES["dynamic"], "inferred")
        return [*outs, *[unset] * (len(layer.outputs) - len(outs))]

    @staticmethod
    def _merged_type(layer: Layer, index: int, a: ElementType | None, b: ElementType | None) -> ElementType | None:
        """The element type of output ``index`` of an If whose condition is not constant, from the then-branch's
        ``a`` and the else-branch's ``b``, as OpenVINO's ``element::Type::merge`` gives it: the dynamic type takes the
        other's; two others must be equal (OpenVINO refuses the model otherwise). None: a branch's is not known."""
        if a is None or b is None:
            return a if b is None else b
        if a.name == "dynamic":
            return b
        if b.name == "dynamic" or a == b:
            return a
        raise ShapeInferenceError(
            f"type of then_body output {a.name} is not equal type of else_body output {b.name} (output {index}, port "
            f"{layer.outputs[index].id}: its condition is not constant, so both branches give it; expected one "
            f"element type from both)"
        )

    def _varying_outputs(self, ctx: SubGraphContext) -> None:
        """OpenVINO's refusals of an If of a condition that is not constant, by its outputs. It builds the If with
        as many outputs as the then-branch maps (``clone_with_new_inputs``), each of which the else-branch must map
        too ("Incorrect associating in else_body"); an output port past them is refused in an IR v11 only, whose
        ports' runtime attributes it reads. In an IR v10 it reads the model, that port of no known type or shape
        (and cannot compile it)."""
        layer = ctx.layer
        counts = {b.role: len(self.connected(b)) for b in layer.bodies if b.role in self.roles}
        built = counts.get("then", 0)
        if counts.get("else", 0) < built:
            mapped = counts.get("else", 0)
            raise IRStructureError(
                f"{ctx.place()}: {layer.where}: its condition is not constant, and <else_port_map> maps {mapped} "
                f"outputs, where <then_port_map> maps {built}; expected an <output> in <else_port_map> for each the "
                f"then-branch gives (OpenVINO refuses the model: output {mapped} is not associated with results in "
                f"else_body)",
                line=layer.line,
            )
        if built < len(layer.outputs) and ctx.output_ports_read():
            raise IRStructureError(
                f"{ctx.place()}: {layer.where}: its condition is not constant, and <then_port_map> maps {built} of its "
                f"{len(layer.outputs)} outputs, so that OpenVINO builds it with {built}; expected an <output> for each "
                f"in <then_port_map> (OpenVINO refuses the model: output port {layer.outputs[built].id} is not one of "
                f"its outputs)",
                line=layer.line,
            )

    def _built_outputs(self, layer: Layer, taken: bool) -> int:
        """How many outputs OpenVINO builds an If of constant condition ``taken`` with: as many as its then-branch
        maps (``clone_with_new_inputs``), and as many as the branch taken gives, if that is more."""
        counts = {b.role: len(self.connected(b)) for b in layer.bodies if b.role in self.roles}
        return max(counts.get("then", 0), counts.get("then" if taken else "else", 0))

    def _constant_outputs(self, ctx: SubGraphContext, taken: bool) -> None:
        """OpenVINO's refusal of an If of constant condition with an output port it builds no output for, in an IR
        v11 (it reads the port's runtime attributes)."""
        layer = ctx.layer
        count = self._built_outputs(layer, taken)
        if count >= len(layer.outputs) or not ctx.output_ports_read():
            return
        maps = "<then_port_map> maps" if taken else "<then_port_map> and <else_port_map> map at most"
        raise IRStructureError(
            f"{ctx.place()}: {layer.where}: its condition is constant {str(taken).lower()}, and {maps} {count} of its "
            f"{len(layer.outputs)} outputs, so that OpenVINO builds it with {count}; expected an <output> for each in "
            f"{'<then_port_map>' if taken else 'one of them'} (OpenVINO refuses the model: output port "
            f"{layer.outputs[count].id} is not one of its outputs)",
            line=layer.line,
        )


class Trips(NamedTuple):
    """How often a Loop or TensorIterator runs its body, as far as shape inference can tell."""

    iterations: int | None  # None: unknown
    zero: bool = False  # a Loop whose execution condition is constant false


class _Iterating(SubGraphOp):
    """Loop and TensorIterator: sliced, merged and invariant inputs; concatenated and last-value outputs."""

    # Whether a body Parameter takes its input's element type (a Loop's), or keeps the one the file gives it (a
    # TensorIterator's: OpenVINO sets only its shape)
    retypes = True

    def slice_param(self, shape: PartialShape, m: PortMapping) -> tuple[PartialShape | None, int | None]:
        """The body Parameter's shape for a sliced input (None: bad axis), and the trip count it implies."""
        raise NotImplementedError

    def trips(self, ctx: SubGraphContext, body: Body, child: BodyShapes, sliced: int | None) -> Trips:
        raise NotImplementedError

    def concat(self, shape: PartialShape | None, m: PortMapping, trips: Trips) -> PartialShape | None:
        raise NotImplementedError

    def last(self, shape: PartialShape | None, m: PortMapping, trips: Trips) -> PartialShape | None:
        return shape

    def rewalks(self, trips: Trips) -> int:
        return 0

    def merged(self, shape: PartialShape) -> PartialShape:
        """The body Parameter's shape for a merged input (one a back edge feeds) of the outer ``shape``."""
        return shape

    def validate(self, ctx: SubGraphContext, body: Body) -> None:
        """Refuse (:class:`ShapeInferenceError`) what OpenVINO's validation refuses before it walks the body."""

    def validate_body(self, body: Body) -> None:
        """Refuse (:class:`ShapeInferenceError`) what OpenVINO refuses of the body's layers as it walks them."""

    def infer_bodies(self, ctx: SubGraphContext) -> Sequence[PortState]:
        layer = ctx.layer
        body = layer.body("body")
        if body is None:
            return super().infer_bodies(ctx)
        self.validate(ctx, body)
        params: dict[str, PortState] = {}
        sliced: int | None = None
        for m in body.inputs:
            state = self.outer(ctx, body, m)
            if state is None:
                continue
            if not self.retypes:
                state = replace(state, element_type=body.graph.layer(m.internal_layer_id).element_type)
            shape: PartialShape | None = state.shape
            if m.axis is not None and shape is not None:
                shape, count = self.slice_param(shape, m)
                if shape is None:  # OpenVINO's validation refuses it, in these words: the layer breaks the model
                    rank = len(state.shape.dims or ()) if state.shape is not None else 0
                    said = ("Accessing out-of-range dimension" if rank == 0 or self.type == "TensorIterator"
                            else f"Axis {m.axis} out of the tensor rank range [{-rank}, {rank - 1}]")  # fmt: skip
                    raise ShapeInferenceError(f"{said} (port map input {m.external_port_id}: axis {m.axis} is out of "
                                              f"range for the input's shape {state.shape})")  # fmt: skip
                sliced = count if count is not None else sliced
            elif shape is not None and any(b.to_layer == m.internal_layer_id for b in body.back_edges):
                shape = self.merged(shape)
            params[m.internal_layer_id] = (
                PortState(shape, state.element_type, "inferred") if shape is not None else state
            )
        self.validate_body(body)
        child = ctx.run_body("body", params)
        trips = self.trips(ctx, body, child, sliced)
        child = self.settle(ctx, body, child, params, self.rewalks(trips))
        outs: list[PortState] = []
        for index, m in enumerate(self.connected(body)[: len(layer.outputs)]):
            result = child.result_state(m.internal_layer_id)
            out = self.concat(result.shape, m, trips) if m.axis is not None else self.last(result.shape, m, trips)
            outs.append(ctx.declared_output(index, result.element_type, self.unresolved_reason(layer, "body", result))
                        if out is None else PortState(out, result.element_type, "inferred"))  # fmt: skip
        return outs

    def settle(
        self, ctx: SubGraphContext, body: Body, child: BodyShapes, params: dict[str, PortState], limit: int
    ) -> BodyShapes:
        """Re-walk the body while a back-edge Result disagrees with the Parameter it feeds (OpenVINO's Loop)."""
        back = {b.from_layer: b.to_layer for b in body.back_edges}
        outputs = [m for m in self.connected(body) if m.axis is None and m.internal_layer_id in back]
        # each re-walk that changes anything makes a carried dim or rank dynamic for good (OpenVINO re-walks as long
        # as one changes, up to the trip count): one per carried dim and rank, and one more, settle any body
        settled = 1
        for m in outputs:
            current = params.get(back[m.internal_layer_id])
            shape = current.shape if current is not None else body.graph.layer(back[m.internal_layer_id]).shape
            settled += 1 + (len(shape.dims) if shape is not None and shape.dims is not None else 0)
        budget = max(1, _REWALK_LAYERS // max(1, len(body.graph.layers)))
        for walk in range(min(limit, settled)):
            if walk == budget:  # what a file may cost is spent: each carried value is left as wide as any can be
                for m in outputs:
                    param = body.graph.layer(back[m.internal_layer_id])
                    etype = params[param.id].element_type if param.id in params else param.element_type
                    params[param.id] = PortState(PartialShape.dynamic(), etype, "inferred")
                return ctx.run_body("body", params)
            changed = False
            for m in outputs:
                result = child.result_state(m.internal_layer_id).shape
                param_id = back[m.internal_layer_id]
                current = params.get(param_id)
                declared = body.graph.layer(param_id)
                shape = current.shape if current is not None else declared.shape
                if result is None or shape is None or shape.dims is None:
                    continue
                new = _widened(result, shape)
                if new is not None:
                    etype = current.element_type if current is not None else declared.element_type
                    params[param_id] = PortState(new, etype, "inferred")
                    changed = True
            if not changed:
                break
            child = ctx.run_body("body", params)
        return child


def _widened(result: PartialShape, param: PartialShape) -> PartialShape | None:
    """The Parameter's new shape when the back-edge Result is not within it (None: it is): each dim that does not
    contain the Result's is dynamic, as OpenVINO 2026's Loop relaxes it (a dim merely compatible with the Result's,
    a ``1`` beside a ``..1``, is not kept)."""
    assert param.dims is not None
    if result.dims is None:
        return result
    if len(result.dims) != len(param.dims):
        return PartialShape.dynamic()
    pairs = list(zip(result.dims, param.dims, strict=True))
    if all(p.contains(r) for r, p in pairs):
        return None
    return PartialShape(tuple(p if p.contains(r) else Dimension.dynamic() for r, p in pairs))


class Loop5(_Iterating):
    type = "Loop"
    version = "opset5"
    opsets = range(5, LAST_OPSET + 1)

    def infer_bodies(self, ctx: SubGraphContext) -> Sequence[PortState]:
        body = ctx.layer.body("body")
        if body is None or body.condition is not None:
            return super().infer_bodies(ctx)
        self.validate(ctx, body)
        ctx.skip_body("body", "its <port_map> names no execution_condition: OpenVINO builds the Loop without feeding "
                              "its body, which keeps its own declared shapes")  # fmt: skip
        return [PortState(PartialShape.dynamic(), ELEMENT_TYPES["dynamic"], "inferred")]

    def validate(self, ctx: SubGraphContext, body: Body) -> None:
        """``loop.cpp``: the current iteration's body Parameter, the trip count and the execution condition each of
        rank 0 or 1 (the trip count only where the port map names the body's condition: OpenVINO checks no more
        without it)."""
        current = next((m for m in body.inputs if m.purpose == "current_iteration"), None)
        if current is not None:
            declared = body.graph.layer(current.internal_layer_id).shape
            if declared is not None and declared.rank is not None and declared.rank > 1:
                raise ShapeInferenceError("Rank of CurrentIteration input must be equal to 0 or 1")
        for index, what in ((1, "ExecutionCondition"), (0, "TripCount"))[: 2 if body.condition is not None else 1]:
            shape = ctx.input(index).shape if index < len(ctx.layer.inputs) else None
            if shape is not None and shape.rank is not None and shape.rank > 1:
                raise ShapeInferenceError(f"Rank of {what} input must be equal to 0 or 1")

    def slice_param(self, shape: PartialShape, m: PortMapping) -> tuple[PartialShape | None, int | None]:
        assert m.axis is not None
        if shape.dims is None:
            return PartialShape.dynamic(), None
        return _with_dim(shape, m.axis, const_dim(m.part_size)), None

    def trips(self, ctx: SubGraphContext, body: Body, child: BodyShapes, sliced: int | None) -> Trips:
        zero = len(ctx.layer.inputs) > 1 and _decided(ctx.value(1)) is False
        condition = body.condition
        if condition is None:  # pragma: no cover - infer_bodies walks no such body
            return Trips(None, zero)
        said = child.result_state(condition.internal_layer_id).shape
        if said is not None and said.rank is not None and said.rank > 1:
            raise ShapeInferenceError("Rank of BodyExecutionCondition output must be equal to 0 or 1")
        always = _decided(_one(child.result_value(condition.internal_layer_id), "Condition"))
        if always is None:  # a body Parameter fed by a constant passes its value through
            result = body.graph.layer(condition.internal_layer_id)
            ref = body.graph.producer(result.id, result.inputs[0].id) if result.inputs else None
            for m in body.inputs:
                if ref is not None and m.internal_layer_id == ref[0] and m.external_port_id >= 0:
                    always = _decided(_one(ctx.value(m.external_port_id), "Condition"))
        if len(ctx.layer.inputs) > 1:
            _one(ctx.value(1), "Condition")
        if always is False:
            return Trips(1, zero)
        trip = _scalar(_one(ctx.value(0), "TripCount"))
        if always and trip is not None:
            count = int(trip)
            return Trips(None if count == -1 else max(count, 0), zero)  # (-1: until the condition fails; below: none)
        return Trips(None, zero)

    def rewalks(self, trips: Trips) -> int:
        return _UNBOUNDED if trips.iterations is None else trips.iterations

    def merged(self, shape: PartialShape) -> PartialShape:
        """A dim of 0 is dynamic: it describes the initial value only, not what the iterations carry (OpenVINO
        2026's Loop relaxes it so)."""
        if shape.dims is None or all(d.lo or not d.is_static for d in shape.dims):
            return shape
        return PartialShape(tuple(Dimension.dynamic() if d.is_static and d.lo == 0 else d for d in shape.dims))

    def last(self, shape: PartialShape | None, m: PortMapping, trips: Trips) -> PartialShape | None:
        """A last-value output: the body's value, its first dim 0 when the Loop runs no iteration and the value is
        static; OpenVINO refuses a static scalar there (it has no first dim to set)."""
        if not trips.zero or shape is None or not shape.is_static:
            return shape
        if not shape.dims:
            raise ShapeInferenceError(
                f"Accessing out-of-range dimension (the port map's output {m.external_port_id} is the last value of "
                f"body layer id={m.internal_layer_id}, a scalar: as its execution condition is constant false, "
                f"OpenVINO sets that value's dim 0 to 0; expected a value of rank 1 or more there)"
            )
        return _with_dim(shape, 0, Dimension.static(0))

    def concat(self, shape: PartialShape | None, m: PortMapping, trips: Trips) -> PartialShape | None:
        assert m.axis is not None
        if trips.zero:
            return PartialShape.static([0])
        if shape is None or shape.dims is None:
            return shape
        if not shape.dims:
            shape = PartialShape.static([1])
        dims = shape.dims
        assert dims is not None
        if not -len(dims) <= m.axis < len(dims):
            raise ShapeInferenceError(f"Axis {m.axis} out of the tensor rank range [{-len(dims)}, {len(dims) - 1}].")
        dim = dims[m.axis % len(dims)]
        count = trips.iterations
        return _with_dim(shape, m.axis, Dimension.static(dim.value * count) if dim.is_static and count is not None
                         else Dimension.dynamic())  # fmt: skip


class TensorIterator0(_Iterating):
    type = "TensorIterator"
    version = "opset1"
    opsets = range(1, LAST_OPSET + 1)
    retypes = False

    def validate_body(self, body: Body) -> None:
        """``tensor_iterator.cpp``: the walk of the body from its Results refuses a TensorIterator among the layers
        it reaches (one inside a Loop's or an If's body there is that layer's own business)."""
        graph = body.graph
        seen = {layer.id for layer in graph.layers if layer.type == "Result"}
        stack = list(seen)
        while stack:
            layer = graph.layer(stack.pop())
            if layer.type == "TensorIterator":
                raise ShapeInferenceError(
                    f"No nested TensorIterator (its body's {layer.where} is one; expected no TensorIterator among "
                    f"the layers its body's Results are computed from: a Loop may hold one)"
                )
            for ref in graph.input_producers(layer):
                if ref is not None and ref[0] not in seen:
                    seen.add(ref[0])
                    stack.append(ref[0])

    def slice_param(self, shape: PartialShape, m: PortMapping) -> tuple[PartialShape | None, int | None]:
        assert m.axis is not None
        if shape.dims is None:
            return PartialShape.dynamic(), None
        if not 0 <= m.axis < len(shape.dims):  # OpenVINO reads the axis as unsigned
            return None, None
        dim = shape.dims[m.axis]
        count = None
        if dim.is_static:
            start = m.start + dim.value if m.start < 0 else m.start
            end = m.end + dim.value if m.end < 0 else m.end
            count = (abs(end - start) + 1) // m.part_size
        return _with_dim(shape, m.axis, const_dim(m.part_size)), count

    def trips(self, ctx: SubGraphContext, body: Body, child: BodyShapes, sliced: int | None) -> Trips:
        if sliced is not None or any(m.axis is not None for m in body.inputs):
            return Trips(sliced)
        concat = next((m for m in self.connected(body) if m.axis is not None), None)
        return Trips(None if concat is None else abs(concat.end - concat.start) // concat.part_size)

    def concat(self, shape: PartialShape | None, m: PortMapping, trips: Trips) -> PartialShape | None:
        assert m.axis is not None
        if shape is None or shape.dims is None:
            return None if shape is None else PartialShape.dynamic()
        if not shape.dims:
            shape = PartialShape.dynamic(1)
        assert shape.dims is not None
        if not -len(shape.dims) <= m.axis < len(shape.dims):
            raise ShapeInferenceError("Accessing out-of-range dimension")
        count = trips.iterations
        if count is None:
            return _with_dim(shape, m.axis, Dimension.dynamic())
        return _with_dim(shape, m.axis, const_dim((count * m.part_size + 2**63) % 2**64 - 2**63))  # int64, as OpenVINO
