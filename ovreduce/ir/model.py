"""The parsed IR: frozen dataclasses with tuple fields, plus the graph indices built once at parse time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple

from ovreduce.errors import NotFoundError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.weights import Weights
from ovreduce.shapes import PartialShape

__all__ = [
    "BODY_ROLES",
    "NO_PORT",
    "PATH_GRAMMAR",
    "PORTS_WALKED",
    "BackEdge",
    "Body",
    "BodyRef",
    "ConstData",
    "Edge",
    "IRModel",
    "Layer",
    "LayerRef",
    "Port",
    "PortIndex",
    "PortMapping",
    "PortRef",
    "RtInfo",
    "built_ids",
    "port_indices",
    "port_position",
    "port_positions",
]

PortRef = tuple[str, str]  # (layer id, port id)


@dataclass(frozen=True, slots=True)
class RtInfo:
    """One element of an ``<rt_info>`` tree (``<info>``/``<attribute>`` or a nested element)."""

    tag: str
    attrs: tuple[tuple[str, str], ...]
    children: tuple[RtInfo, ...] = ()

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"tag": self.tag, **dict(self.attrs)}
        if self.children:
            doc["children"] = [c.to_json() for c in self.children]
        return doc


@lru_cache(maxsize=4096)
def _shape_of_dims(dims: tuple[int, ...]) -> PartialShape:
    # Models repeat a few hundred distinct dim tuples many thousand times: build each shape once.
    return PartialShape.from_port_dims(dims)


class Port(NamedTuple):
    """An ``<input>`` or ``<output>`` port as declared in the XML.

    A named tuple rather than a frozen dataclass: models have hundreds of thousands of ports, and a
    tuple is built four times faster, immutable all the same.
    """

    id: str
    precision: ElementType | None  # None when the attribute is absent
    names: tuple[str, ...]
    dims: tuple[int, ...]  # () when the port has no <dim>: a scalar *or* a dynamic rank
    line: int | None = None
    rt_info: tuple[RtInfo, ...] = ()

    @property
    def has_dims(self) -> bool:
        return bool(self.dims)

    @property
    def declared_shape(self) -> PartialShape:
        """The shape the dims declare; only meaningful when :attr:`has_dims` (else it reads as a scalar)."""
        return _shape_of_dims(self.dims)


NO_PORT = Port("?", None, (), ())  # stands for the output port of a layer that declares none


@dataclass(frozen=True, slots=True)
class ConstData:
    """Where a Const's values lie in the ``.bin`` (already checked against its size), or, where its ``<data>`` has a
    ``value`` attribute, the bytes of that text, which OpenVINO takes as its data in place of the ``.bin``'s."""

    offset: int
    size: int
    count: int  # number of elements (Python int: no overflow)
    inline: bytes | None = None  # the first ``size`` bytes of the ``value`` attribute's text (UTF-8); None: the .bin


@dataclass(frozen=True, slots=True)
class PortMapping:
    """One ``<input>``/``<output>`` of a sub-graph layer's port map.

    ``external_port_id`` is the index of the layer's input (inputs) or the key whose sorted order gives the
    output's index (outputs), as OpenVINO's IR reader reads it; -1 is a body port no outer port feeds or
    reads (a Loop's current iteration, its execution condition). ``axis`` is set for a sliced input or a
    concatenated output (with ``start``, ``end``, ``stride``, ``part_size``); ``purpose`` is a Loop's
    ``current_iteration``/``execution_condition``.
    """

    external_port_id: int
    internal_layer_id: str
    axis: int | None = None
    start: int = 0
    end: int = -1
    stride: int = 1
    part_size: int = 1
    purpose: str | None = None
    line: int | None = None


class BackEdge(NamedTuple):
    """A ``<back_edges>`` edge of a Loop or TensorIterator: a body Result feeding a body Parameter next time."""

    from_layer: str
    to_layer: str
    line: int | None = None


# The body elements OpenVINO's serializer writes, their port maps, and the role naming each in a path.
BODY_ROLES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"body": ("body", "port_map"), "then_body": ("then", "then_port_map"), "else_body": ("else", "else_port_map")}
)


@dataclass(frozen=True, slots=True)
class Body:
    """A sub-graph body of a layer (``If``: ``then``/``else``; ``Loop``, ``TensorIterator``: ``body``).

    ``graph`` is an IR graph of its own (layers in topological order, its own ids and indices; it shares the
    model's source, weights and IR version). ``inputs``/``outputs`` are its port map, ``back_edges`` a
    Loop's or TensorIterator's Result -> Parameter edges between iterations.
    """

    role: str  # "body", "then", "else"
    graph: IRModel
    inputs: tuple[PortMapping, ...] = ()
    outputs: tuple[PortMapping, ...] = ()
    back_edges: tuple[BackEdge, ...] = ()
    line: int | None = None

    @property
    def condition(self) -> PortMapping | None:
        """A Loop's ``execution_condition`` output: the body Result that decides whether it iterates again. None
        where its port map names none: OpenVINO then neither feeds nor walks the body as it builds the Loop, and
        gives the Loop one output, of dynamic rank and element type, whatever its port map maps."""
        return next((m for m in self.outputs if m.purpose == "execution_condition"), None)


class Layer(NamedTuple):
    """A ``<layer>``: its attributes, ``<data>``, ports and rt_info (a named tuple, as :class:`Port`: a model has
    hundreds of thousands of layers, and a tuple is built several times faster than a frozen dataclass).

    ``id`` is the layer's id as OpenVINO reads it (an integer, written in decimal: ``id="02"`` is layer ``2``).
    ``element_type`` and ``shape`` are the parsed ``element_type``/``shape`` attributes of a Parameter or
    Const (``destination_type`` of a Convert); ``const`` locates a Const's bytes.
    """

    id: str
    name: str
    type: str
    version: str
    data: Mapping[str, str]
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    line: int | None = None
    rt_info: tuple[RtInfo, ...] = ()
    element_type: ElementType | None = None
    shape: PartialShape | None = None
    const: ConstData | None = None
    bodies: tuple[Body, ...] = ()  # sub-graph bodies (If, Loop, TensorIterator), in file order

    def body(self, role: str) -> Body | None:
        return next((b for b in self.bodies if b.role == role), None)

    @property
    def where(self) -> str:
        return f"layer id={self.id} name={self.name!r} ({self.type})"


class BodyRef(NamedTuple):
    """A body somewhere in a model: ``path`` by ids (``"12/then"``, ``"4/body/3/else"``), ``name_path`` by names."""

    path: str
    name_path: str
    container: Layer
    body: Body


class LayerRef(NamedTuple):
    """A layer found by :meth:`IRModel.locate`: the graph holding it and its body's ids path (None: top level)."""

    layer: Layer
    graph: IRModel
    body_path: str | None

    @property
    def path(self) -> str:
        """The layer's ids path (its id at the top level): unambiguous, whatever the names hold."""
        return self.layer.id if self.body_path is None else f"{self.body_path}/{self.layer.id}"


class Edge(NamedTuple):
    """An ``<edge>``: from an output port to an input port (a named tuple, as :class:`Port`)."""

    from_layer: str
    from_port: str
    to_layer: str
    to_port: str
    line: int | None = None


# A layer's input and output port ids -> their positions (each id's first), for a layer of many ports: a port found
# by walking them once per edge would make a layer of N ports cost N * N (a Split of 40,000 outputs).
PortIndex = tuple[Mapping[str, int], Mapping[str, int]]
PORTS_WALKED = 8  # a layer of at most this many inputs and outputs has its ports walked (a dict costs more)


def _positions(ports: tuple[Port, ...]) -> Mapping[str, int]:
    found: dict[str, int] = {}
    for i, port in enumerate(ports):
        found.setdefault(port.id, i)
    return found


def port_positions(layer: Layer) -> PortIndex:
    """The positions of ``layer``'s input and output ports by id."""
    return _positions(layer.inputs), _positions(layer.outputs)


def port_indices(layers: Iterable[Layer]) -> dict[str, PortIndex]:
    """The :func:`port_positions` of each of ``layers`` of more than :data:`PORTS_WALKED` inputs or outputs, by id."""
    return {layer.id: port_positions(layer) for layer in layers
            if len(layer.inputs) > PORTS_WALKED or len(layer.outputs) > PORTS_WALKED}  # fmt: skip


def port_position(ports: tuple[Port, ...], port_id: str, index: Mapping[str, int] | None) -> int | None:
    """The position of the port of id ``port_id`` among ``ports`` (None: none), ``index`` being theirs from
    :func:`port_positions` (None for a layer of at most :data:`PORTS_WALKED` of them: they are walked)."""
    if index is not None:
        return index.get(port_id)
    for i, port in enumerate(ports):
        if port.id == port_id:
            return i
    return None


def built_ids(layers: Iterable[Layer], by_id: Mapping[str, Layer], producer: Mapping[PortRef, PortRef]) -> set[str]:
    """The ids of the ``layers`` OpenVINO's reader builds: the Results and Assigns, and every layer before them (a
    layer that reaches neither is left out of the model it reads)."""
    reached = {layer.id for layer in layers if layer.type in ("Result", "Assign")}
    stack = list(reached)
    while stack:
        current = stack.pop()
        for port in by_id[current].inputs:
            source = producer.get((current, port.id))
            if source is not None and source[0] not in reached:
                reached.add(source[0])
                stack.append(source[0])
    return reached


@dataclass(frozen=True)
class IRModel:
    """A whole IR. Build it with :func:`ovreduce.ir.parser.parse_ir`, which validates the graph first.

    ``source`` names where it came from (a path or an upload's name, for messages); ``xml`` and ``weights``
    are the bytes it was read from, so that OpenVINO can read the very same model without a file.

    ``layers`` are in topological order (producers before consumers, file order among equals).
    """

    name: str
    ir_version: int
    layers: tuple[Layer, ...]
    edges: tuple[Edge, ...]
    source: str
    weights: Weights | None = None
    rt_info: tuple[RtInfo, ...] = ()
    xml: bytes = field(default=b"", repr=False, compare=False)  # the source, for runtimes that read it again
    # What OpenVINO does to the model as it reads it beyond what its layers say (the means a <pre-process> subtracts)
    notes: tuple[str, ...] = field(default=(), compare=False)
    # The indices, when the reader gathered them while it checked the edges (else built here from the layers and
    # edges); ``ports``: :func:`port_indices` of the layers.
    by_id: InitVar[Mapping[str, Layer] | None] = None
    producers: InitVar[Mapping[PortRef, PortRef] | None] = None
    ports: InitVar[Mapping[str, PortIndex] | None] = None
    _by_id: Mapping[str, Layer] = field(init=False, repr=False, compare=False)
    _producer: Mapping[PortRef, PortRef] = field(init=False, repr=False, compare=False)
    _ports: Mapping[str, PortIndex] = field(init=False, repr=False, compare=False)
    _consumers: Mapping[PortRef, tuple[PortRef, ...]] | None = field(init=False, repr=False, compare=False)

    def __post_init__(
        self,
        by_id: Mapping[str, Layer] | None,
        producers: Mapping[PortRef, PortRef] | None,
        ports: Mapping[str, PortIndex] | None,
    ) -> None:
        if by_id is None:
            by_id = {layer.id: layer for layer in self.layers}
        if producers is None:
            producers = {(e.to_layer, e.to_port): (e.from_layer, e.from_port) for e in self.edges}
        if ports is None:
            ports = port_indices(self.layers)
        object.__setattr__(self, "_by_id", MappingProxyType(by_id))
        object.__setattr__(self, "_producer", MappingProxyType(producers))
        object.__setattr__(self, "_ports", MappingProxyType(ports))
        object.__setattr__(self, "_consumers", None)  # built on first use: checking a model never asks

    def layer(self, layer_id: str) -> Layer:
        return self._by_id[layer_id]

    def input_index(self, layer: Layer, port_id: str) -> int:
        """The position among ``layer``'s inputs (a layer of this graph) of its input port ``port_id``; KeyError if
        it has none."""
        index = self._ports.get(layer.id)
        found = port_position(layer.inputs, port_id, None if index is None else index[0])
        if found is None:
            raise KeyError(f"{layer.where} has no input port {port_id}")
        return found

    def output_index(self, layer: Layer, port_id: str) -> int:
        """The position among ``layer``'s outputs (a layer of this graph) of its output port ``port_id``; KeyError if
        it has none."""
        outputs = layer.outputs
        if outputs and outputs[0].id == port_id:  # nearly every layer: one output
            return 0
        index = self._ports.get(layer.id)
        found = port_position(outputs, port_id, None if index is None else index[1])
        if found is None:
            raise KeyError(f"{layer.where} has no output port {port_id}")
        return found

    def input_port(self, layer: Layer, port_id: str) -> Port:
        """``layer``'s input port ``port_id`` (:meth:`input_index`)."""
        return layer.inputs[self.input_index(layer, port_id)]

    def output_port(self, layer: Layer, port_id: str) -> Port:
        """``layer``'s output port ``port_id`` (:meth:`output_index`)."""
        return layer.outputs[self.output_index(layer, port_id)]

    def producer(self, layer_id: str, port_id: str) -> PortRef | None:
        """The (layer id, output port id) feeding input port ``port_id`` of ``layer_id``."""
        return self._producer.get((layer_id, port_id))

    def built(self) -> set[str]:
        """The ids of the layers OpenVINO's reader builds (:func:`built_ids`)."""
        return built_ids(self.layers, self._by_id, self._producer)

    def input_producers(self, layer: Layer) -> tuple[PortRef | None, ...]:
        return tuple(self._producer.get((layer.id, p.id)) for p in layer.inputs)

    def consumers(self, layer_id: str, port_id: str) -> tuple[PortRef, ...]:
        """The input ports output port ``port_id`` of ``layer_id`` feeds, in edge order."""
        consumers = self._consumers
        if consumers is None:
            found: dict[PortRef, list[PortRef]] = {}
            for e in self.edges:
                found.setdefault((e.from_layer, e.from_port), []).append((e.to_layer, e.to_port))
            consumers = MappingProxyType({k: tuple(v) for k, v in found.items()})
            object.__setattr__(self, "_consumers", consumers)
        return consumers.get((layer_id, port_id), ())

    def find_layer(self, key: str) -> Layer:
        """A layer by id or by name (ids win); :class:`NotFoundError` listing a few candidates."""
        found = self._by_id.get(key)
        if found is not None:
            return found
        by_name = [layer for layer in self.layers if layer.name == key]
        if len(by_name) == 1:
            return by_name[0]
        if len(by_name) > 1:
            ids = ", ".join(layer.id for layer in by_name)
            raise NotFoundError(
                f"layer name {key!r} is used by several layers (ids {ids}); give the id instead",
                candidates=[layer.id for layer in by_name],
            )
        raise NotFoundError(f"no layer with id or name {key!r} in {self.source}")

    def shadowed(self, key: str) -> list[LayerRef]:
        """The layers ``key`` also names by their name where :meth:`locate` takes it as another layer's id (ids are
        taken before names): a layer named ``3`` beside layer id 3, which ``key`` ``3`` does not reach."""
        try:
            found = self.locate(key)
        except NotFoundError:
            return []
        layer = found.layer
        if key != layer.id and not key.endswith(f"/{layer.id}"):
            return []
        return [
            LayerRef(other, found.graph, found.body_path)
            for other in found.graph.layers
            if other.name == layer.id and other.id != layer.id
        ]

    def shadowed_note(self, key: str) -> str | None:
        """What a command that takes ``key`` as a layer id says of the layers :meth:`shadowed` finds; None if none."""
        others = self.shadowed(key)
        if not others:
            return None
        layer = self.locate(key).layer
        named = ", ".join(f"id {o.path}" for o in others[:8]) + (
            f" and {len(others) - 8} more" if len(others) > 8 else ""
        )
        give = " or ".join(repr(o.path) for o in others[:8])
        return (
            f"{key!r} is taken as the id of layer id={layer.id} {layer.name!r} (ids are taken before names); the "
            f"layer{'s' if len(others) > 1 else ''} {named} {'are' if len(others) > 1 else 'is'} named {layer.id!r} "
            f"too: give {give} for {'them' if len(others) > 1 else 'it'}"
        )

    def bodies(self) -> Iterator[BodyRef]:
        """Every body of every layer, nested ones right after their container's body, in layer order."""
        for layer in self.layers:
            for body in layer.bodies:
                path, name_path = f"{layer.id}/{body.role}", f"{layer.name}/{body.role}"
                yield BodyRef(path, name_path, layer, body)
                for sub in body.graph.bodies():
                    yield BodyRef(f"{path}/{sub.path}", f"{name_path}/{sub.name_path}", sub.container, sub.body)

    def layer_count(self) -> int:
        """The number of layers, every sub-graph body's included (as the parser's bound on layers counts them)."""
        return len(self.layers) + sum(len(ref.body.graph.layers) for ref in self.bodies())

    def op_types(self) -> set[tuple[str, str]]:
        """The ``(type, version)`` of every layer, the bodies' included (what OpenVINO must know to read it)."""
        found = {(layer.type, layer.version) for layer in self.layers}
        for ref in self.bodies():
            found |= {(layer.type, layer.version) for layer in ref.body.graph.layers}
        return found

    def graph_at(self, body_path: str | None) -> IRModel:
        """The graph at an ids path of :meth:`bodies` (None: this one); :class:`NotFoundError` if none."""
        if body_path is None:
            return self
        graph: IRModel = self
        parts = body_path.split("/")
        for layer_id, role in zip(parts[::2], parts[1::2], strict=True):
            container = graph._by_id.get(layer_id)
            body = None if container is None else container.body(role)
            if body is None:
                raise NotFoundError(f"no body {body_path!r} in {self.source}")
            graph = body.graph
        return graph

    def locate(self, key: str) -> LayerRef:
        """A layer anywhere in the model, by id, name or path (see :data:`PATH_GRAMMAR`).

        Raises:
            NotFoundError: no layer, or several, answer to ``key`` (the message lists their ids paths).
        """
        found = self._by_id.get(key)
        if found is not None:
            return LayerRef(found, self, None)
        hits = _resolve(self, key, None)
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1 and all(h.body_path is None for h in hits):
            return LayerRef(self.find_layer(key), self, None)  # raises: the name is used by several layers
        if len(hits) > 1:
            paths = ", ".join(h.path for h in hits[:8])
            raise NotFoundError(
                f"layer {key!r} is ambiguous: it names several layers (ids paths {paths}); give the ids path instead",
                candidates=[h.path for h in hits],
            )
        held = [f"{b.path}/{x.id}" for b in self.bodies() for x in b.body.graph.layers if key in (x.id, x.name)]
        if held:  # a body layer's own id or name: say the ids paths that reach it
            shown = " or ".join(repr(p) for p in held[:8]) + (f" (and {len(held) - 8} more)" if len(held) > 8 else "")
            some = "a sub-graph body holds one" if len(held) == 1 else f"sub-graph bodies hold {len(held)}"
            raise NotFoundError(
                f"no layer with id or name {key!r} at the top level of {self.source}, but {some}: did you mean "
                f"{shown}? (a layer in a body is addressed by its path)",
                candidates=held,
            )
        bodies = " (nor a path into one of its sub-graph bodies)" if any(layer.bodies for layer in self.layers) else ""
        raise NotFoundError(f"no layer with id or name {key!r} in {self.source}{bodies}")

    def close(self) -> None:
        if self.weights is not None:
            self.weights.close()


PATH_GRAMMAR = """\
A layer is addressed by its id or name at the top level, or, inside a sub-graph body, by a path:

    path  := key | key "/" role "/" path
    key   := a layer id (digits) or a layer name (which may itself hold "/")
    role  := "then" | "else" (If) | "body" (Loop, TensorIterator)

"12/then/110" is layer 110 of the then-body of layer 12; "If_12/then/ReduceMean_110" says the same by names,
and the two may be mixed ("If_12/then/110"). An ids path is always unambiguous. A key with "/" is read every
way it can be split at "/then/", "/else/" or "/body/"; a name path is accepted when exactly one layer answers
(ids are tried before names at each level, as for top-level layers)."""


def _resolve(graph: IRModel, key: str, body_path: str | None) -> list[LayerRef]:
    """Every layer ``key`` may name in ``graph`` (nothing is raised: the caller judges ambiguity)."""
    hits: list[LayerRef] = []
    by_id = graph._by_id.get(key)
    if by_id is not None:
        hits.append(LayerRef(by_id, graph, body_path))
    else:
        hits += [LayerRef(layer, graph, body_path) for layer in graph.layers if layer.name == key]
    for role in ("then", "else", "body"):
        sep = f"/{role}/"
        start = key.find(sep)
        while start > 0:
            head, rest = key[:start], key[start + len(sep) :]
            containers = [graph._by_id[head]] if head in graph._by_id else [c for c in graph.layers if c.name == head]
            for container in containers:
                body = container.body(role)
                if body is not None:
                    inner = f"{container.id}/{role}" if body_path is None else f"{body_path}/{container.id}/{role}"
                    hits += _resolve(body.graph, rest, inner)
            start = key.find(sep, start + 1)
    return hits
