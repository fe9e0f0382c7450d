"""The parsed IR: frozen dataclasses with tuple fields, plus the graph indices built once at parse time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple

from ovreduce.errors import NotFoundError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.weights import Weights
from ovreduce.shapes import PartialShape

__all__ = ["ConstData", "Edge", "IRModel", "Layer", "Port", "PortRef", "RtInfo"]

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


@dataclass(frozen=True, slots=True)
class ConstData:
    """Where a Const's values lie in the ``.bin`` (already checked against its size)."""

    offset: int
    size: int
    count: int  # number of elements (Python int: no overflow)


@dataclass(frozen=True, slots=True)
class Layer:
    """A ``<layer>``: its attributes, ``<data>``, ports and rt_info.

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

    def input(self, port_id: str) -> Port:
        for p in self.inputs:
            if p.id == port_id:
                return p
        raise KeyError(port_id)

    def output(self, port_id: str) -> Port:
        for p in self.outputs:
            if p.id == port_id:
                return p
        raise KeyError(port_id)

    def input_index(self, port_id: str) -> int:
        return next(i for i, p in enumerate(self.inputs) if p.id == port_id)

    @property
    def where(self) -> str:
        return f"layer id={self.id} name={self.name!r} ({self.type})"


class Edge(NamedTuple):
    """An ``<edge>``: from an output port to an input port (a named tuple, as :class:`Port`)."""

    from_layer: str
    from_port: str
    to_layer: str
    to_port: str
    line: int | None = None


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
    _by_id: Mapping[str, Layer] = field(init=False, repr=False, compare=False)
    _producer: Mapping[PortRef, PortRef] = field(init=False, repr=False, compare=False)
    _consumers: Mapping[PortRef, tuple[PortRef, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        consumers: dict[PortRef, list[PortRef]] = {}
        for e in self.edges:
            consumers.setdefault((e.from_layer, e.from_port), []).append((e.to_layer, e.to_port))
        object.__setattr__(self, "_by_id", MappingProxyType({layer.id: layer for layer in self.layers}))
        object.__setattr__(
            self,
            "_producer",
            MappingProxyType({(e.to_layer, e.to_port): (e.from_layer, e.from_port) for e in self.edges}),
        )
        object.__setattr__(self, "_consumers", MappingProxyType({k: tuple(v) for k, v in consumers.items()}))

    def layer(self, layer_id: str) -> Layer:
        return self._by_id[layer_id]

    def producer(self, layer_id: str, port_id: str) -> PortRef | None:
        """The (layer id, output port id) feeding input port ``port_id`` of ``layer_id``."""
        return self._producer.get((layer_id, port_id))

    def input_producers(self, layer: Layer) -> tuple[PortRef | None, ...]:
        return tuple(self._producer.get((layer.id, p.id)) for p in layer.inputs)

    def consumers(self, layer_id: str, port_id: str) -> tuple[PortRef, ...]:
        return self._consumers.get((layer_id, port_id), ())

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
            raise NotFoundError(f"layer name {key!r} is used by several layers (ids {ids}); give the id instead")
        raise NotFoundError(f"no layer with id or name {key!r} in {self.source}")

    def close(self) -> None:
        if self.weights is not None:
            self.weights.close()
