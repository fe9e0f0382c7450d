"""XML -> :class:`~ovreduce.ir.model.IRModel`, treating every file as untrusted.

The lxml parser never resolves entities, never loads a DTD, never touches the network or the file
system, and any document with a DOCTYPE is refused. libxml2 bounds the nesting depth (256) and this
module bounds the document size and layer count (:class:`ParseLimits`). Every problem is raised as an
:class:`~ovreduce.errors.IRError` subclass whose message names the file, line, layer and what was
expected.
"""

from __future__ import annotations

import gc
import math
import os
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from lxml import etree

from ovreduce.errors import (
    ElementTypeError,
    IRError,
    IRStructureError,
    IRSyntaxError,
    IRVersionError,
    LimitExceededError,
    WeightsError,
)
from ovreduce.files import FileError, read_bounded
from ovreduce.ir.canonical import read_canonical
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType, element_type, element_type_from_precision
from ovreduce.ir.model import (
    BODY_ROLES,
    BackEdge,
    Body,
    ConstData,
    Edge,
    IRModel,
    Layer,
    Port,
    PortMapping,
    RtInfo,
)
from ovreduce.ir.reading import (
    NO_DATA,
    PARSER_OPTIONS,
    SUPPORTED_IR_VERSIONS,
    NoExternalResources,
    attributes,
    kahn_order,
    rt_children,
    shared_dims,
)
from ovreduce.ir.weights import Weights
from ovreduce.shapes import INT64_MAX, PartialShape

__all__ = ["SUPPORTED_IR_VERSIONS", "ParseLimits", "gc_paused", "load_ir", "parse_ir"]

_PRECISION_CACHE: dict[str, ElementType] = {t.precision: t for t in ELEMENT_TYPES.values()}
_INT = re.compile(r"-?[0-9]+")
_UINT = re.compile(r"[0-9]+")
_NAME_SPLIT = re.compile(r"(?<!\\),")
_SNIFF = 65536
_BLANK = re.compile(rb"\s*\Z")


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Bounds on what a single IR may cost to read."""

    max_xml_bytes: int = 1 << 30
    max_layers: int = 1_000_000  # sub-graph body layers included
    max_rank: int = 64
    max_body_depth: int = 16  # sub-graph bodies nested in bodies (libxml2's depth limit allows about 60)


def load_ir(
    xml_path: str | os.PathLike[str],
    bin_path: str | os.PathLike[str] | None = None,
    *,
    limits: ParseLimits = ParseLimits(),
) -> IRModel:
    """Read ``model.xml`` and (lazily) its ``.bin``: the one beside it unless ``bin_path`` is given.

    Raises:
        IRError: the file is not a readable IR (subclasses say why).
        LimitExceededError: the XML is larger than ``limits`` allow.
    """
    path = Path(xml_path)
    try:
        data = read_bounded(path, limits.max_xml_bytes, "an IR .xml file", "the XML")
    except FileError as exc:  # a directory, a device, a FIFO: said as what it is, never read
        raise IRStructureError(exc.message) from None
    weights_path = Path(bin_path) if bin_path is not None else path.with_suffix(".bin")
    weights = Weights(weights_path) if bin_path is not None or weights_path.exists() else None
    return parse_ir(data, weights, source=str(path), expected_bin=str(weights_path), limits=limits)


def parse_ir(
    xml: bytes,
    weights: Weights | None = None,
    *,
    source: str = "<xml>",
    expected_bin: str | None = None,
    limits: ParseLimits = ParseLimits(),
) -> IRModel:
    """Parse IR XML bytes; ``weights`` is the ``.bin`` (None when there is none).

    Raises:
        IRError: the bytes are not a readable IR (subclasses say why).
        LimitExceededError: the XML or the layer count exceeds ``limits``.
    """
    if len(xml) > limits.max_xml_bytes:
        raise LimitExceededError(
            f"{source}: the XML is {len(xml)} bytes, more than the limit of {limits.max_xml_bytes} bytes"
        )
    with gc_paused():
        model = read_canonical(xml, _Builder(source, weights, expected_bin, limits))
        if model is None:  # not in the serializer's layout, or something is wrong: built while lxml reads it
            model = _stream(xml, source, weights, expected_bin, limits)
        if model is not None:
            return model
        # Something is wrong with the file: the whole tree first, then the graph, so that the error raised is
        # the one that path finds first (a syntax error anywhere before any layer's problem).
        root = _parse_xml(xml, source)
        return _Builder(source, weights, expected_bin, limits).build(root, xml)


_CHUNK = 1 << 16


def _stream(
    xml: bytes, source: str, weights: Weights | None, expected_bin: str | None, limits: ParseLimits
) -> IRModel | None:
    """The model built while the XML is parsed, each top-level ``<layer>`` built and its elements freed as soon
    as libxml2 has read it: the whole tree (18 times the XML's size) never exists at once. None when anything is
    wrong (the caller then takes the careful path, which says what exactly)."""
    if _BLANK.match(xml) or b"<!DOCTYPE" in xml[:_SNIFF] or b"<!ENTITY" in xml[:_SNIFF]:
        return None
    parser = etree.XMLPullParser(events=("end",), tag="layer", **PARSER_OPTIONS)
    parser.resolvers.add(NoExternalResources())
    builder = _Builder(source, weights, expected_bin, limits)
    layers: dict[str, Layer] = {}
    first_line: dict[str, int | None] = {}
    try:
        for start in range(0, len(xml), _CHUNK):
            parser.feed(xml[start : start + _CHUNK])
            for _, el in parser.read_events():
                parent = el.getparent()
                if parent is None or parent.tag != "layers":
                    continue
                net = parent.getparent()
                if net is None or net.getparent() is not None:
                    continue  # a body's layer: built with its container
                if not builder.ir_version:  # what build() reads first, and bodies carry
                    version = net.get("version", "")
                    if not (version.isascii() and version.isdigit() and int(version) in SUPPORTED_IR_VERSIONS):
                        return None
                    builder.ir_version = int(version)
                builder.add_layer(el, layers, first_line)
                parent.remove(el)
        root = parser.close()
        docinfo = root.getroottree().docinfo
        if docinfo.doctype or docinfo.internalDTD is not None:
            return None
        return builder.build(root, xml, layers, first_line)
    except (etree.LxmlError, ValueError, IRError, LimitExceededError):
        return None


_GC_LOCK = threading.Lock()
_GC_HOLDERS = 0


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a model is built or checked: the tree and the model are
    hundreds of thousands of acyclic objects, and collections triggered by their allocation cost a fifth of the
    parse (a quarter of a check). Reference counting still frees everything; the collector is back on as soon
    as no parse or check is running (nested and concurrent pauses are counted)."""
    global _GC_HOLDERS
    with _GC_LOCK:
        if _GC_HOLDERS == 0:
            _GC_WAS_ENABLED[0] = gc.isenabled()
            gc.disable()
        _GC_HOLDERS += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_HOLDERS -= 1
            if _GC_HOLDERS == 0 and _GC_WAS_ENABLED[0]:
                # Promote what was built to the oldest generation (freeze + unfreeze splices lists, O(1)):
                # otherwise the first young-generation collection would walk all of it at once.
                gc.freeze()
                gc.unfreeze()
                gc.enable()


_GC_WAS_ENABLED = [True]
_gc_paused = gc_paused  # the name it had


def _parse_xml(xml: bytes, source: str) -> etree._Element:
    if _BLANK.match(xml):
        raise IRSyntaxError(f"{source}: the file is empty; expected an OpenVINO IR XML document (<net>)")
    head = xml[:_SNIFF]
    if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
        raise IRSyntaxError(
            f"{source}: DOCTYPE/ENTITY declarations are not allowed (they can expand entities or reach "
            f"files); an OpenVINO IR never contains one"
        )
    parser = etree.XMLParser(**PARSER_OPTIONS)
    parser.resolvers.add(NoExternalResources())
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        # lxml's offset is libxml2's 1-based column less one (SyntaxError's convention); say libxml2's column
        row = exc.lineno if isinstance(exc.lineno, int) and exc.lineno >= 1 else None
        column = exc.offset + 1 if row is not None and isinstance(exc.offset, int) and exc.offset >= 0 else None
        at = "" if row is None else f" at line {row}" if column is None else f" at line {row}, column {column}"
        msg = str(exc.msg or exc).strip()
        raise IRSyntaxError(f"{source}: not well-formed XML{at}: {msg}", line=row, column=column) from None
    except ValueError as exc:  # e.g. an encoding declaration lxml cannot honour
        raise IRSyntaxError(f"{source}: not a readable XML document: {exc}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise IRSyntaxError(f"{source}: DOCTYPE declarations are not allowed in an IR")
    return root


class _Builder:
    def __init__(self, source: str, weights: Weights | None, expected_bin: str | None, limits: ParseLimits):
        self.source = source
        self.weights = weights
        self.expected_bin = expected_bin
        self.limits = limits
        self.layer_count = 0  # every <layer> read so far, bodies included
        self.body_depth = 0
        self.ir_version = 0

    # -- messages ---------------------------------------------------------------------------------
    def at(self, el: etree._Element) -> str:
        return f"{self.source}:{el.sourceline}" if el.sourceline else self.source

    def where(self, el: etree._Element, layer_id: str | None, name: str | None, ltype: str | None) -> str:
        parts = [f"layer id={layer_id}"]
        if name is not None:
            parts.append(f"name={name!r}")
        if ltype is not None:
            parts.append(f"({ltype})")
        return f"{self.at(el)}: " + " ".join(parts)

    def sections(self, parent: etree._Element, second: str) -> tuple[etree._Element | None, etree._Element | None]:
        """The ``<layers>`` and ``<edges>`` children of a ``<net>`` or a body; a second one of either is an error
        (``second`` words it, ``{tag}`` standing for the element)."""
        found: dict[str, etree._Element] = {}
        for child in parent:
            if child.tag in ("layers", "edges"):
                if child.tag in found:
                    what = second.replace("{tag}", f"<{child.tag}>")
                    raise IRStructureError(f"{self.at(child)}: {what}; expected one")
                found[child.tag] = child
        return found.get("layers"), found.get("edges")

    # -- document -----------------------------------------------------------------------------------
    def build(
        self,
        root: etree._Element,
        xml: bytes,
        built: dict[str, Layer] | None = None,
        first_line: dict[str, int | None] | None = None,
    ) -> IRModel:
        """The model of the document ``root``; ``built`` holds top-level layers already built (and removed from
        the tree) while it was parsed, ``first_line`` their lines."""
        if not isinstance(root.tag, str) or root.tag != "net":
            raise IRStructureError(f"{self.at(root)}: the root element is <{root.tag}>, expected <net>")
        version_text = root.get("version")
        if version_text is None:
            raise IRVersionError(f"{self.at(root)}: <net> has no 'version' attribute; expected IR version 10 or 11")
        if (
            not _UINT.fullmatch(version_text.strip())
            or len(version_text) > 20
            or int(version_text) not in SUPPORTED_IR_VERSIONS
        ):
            raise IRVersionError(
                f"{self.at(root)}: IR version {version_text!r} is not supported; ovreduce reads IR versions "
                + " and ".join(str(v) for v in SUPPORTED_IR_VERSIONS)
            )
        version = self.ir_version = int(version_text)
        layers_el, edges_el = self.sections(root, "a second {tag} element")
        rt_el = None
        for child in root:  # the last <rt_info>, as before
            if child.tag == "rt_info":
                rt_el = child
        if layers_el is None:
            raise IRStructureError(f"{self.at(root)}: <net> has no <layers> element")
        layers, edges = self.graph(layers_el, edges_el, built, first_line)
        return IRModel(
            name=root.get("name", ""),
            ir_version=version,
            layers=layers,
            edges=edges,
            source=self.source,
            weights=self.weights,
            rt_info=rt_children(rt_el) if rt_el is not None else (),
            xml=xml,
        )

    def graph(
        self,
        layers_el: etree._Element,
        edges_el: etree._Element | None,
        built: dict[str, Layer] | None = None,
        first_line: dict[str, int | None] | None = None,
    ) -> tuple[tuple[Layer, ...], tuple[Edge, ...]]:
        """The layers (in topological order) and edges of the model or of one body (``built``: see :meth:`build`)."""
        layers = self.layers(layers_el, built, first_line)
        fed: dict[tuple[str, str], int | None] = {}
        edges = self.edges(edges_el, layers, fed) if edges_el is not None else ()
        ordered = self.topological(layers, edges)
        self.check_connected(ordered, fed)
        return ordered, edges

    def layers(
        self,
        layers_el: etree._Element,
        built: dict[str, Layer] | None = None,
        first_line: dict[str, int | None] | None = None,
    ) -> dict[str, Layer]:
        layers: dict[str, Layer] = {} if built is None else built
        lines: dict[str, int | None] = {} if first_line is None else first_line
        for el in layers_el:
            self.add_layer(el, layers, lines)
        return layers

    def add_layer(self, el: etree._Element, layers: dict[str, Layer], first_line: dict[str, int | None]) -> None:
        if el.tag != "layer":
            raise IRStructureError(f"{self.at(el)}: unexpected <{el.tag}> in <layers>; expected <layer>")
        if self.layer_count >= self.limits.max_layers:
            raise LimitExceededError(f"{self.source}: more than {self.limits.max_layers} layers (the configured limit)")
        self.layer_count += 1
        layer = self.layer(el)
        if layer.id in layers:
            prev = layers[layer.id]
            raise IRStructureError(
                f"{self.at(el)}: duplicate layer id {layer.id} (name {layer.name!r}); it was already used at "
                f"line {first_line[layer.id]} by layer {prev.name!r}: layer ids must be unique"
            )
        layers[layer.id] = layer
        first_line[layer.id] = el.sourceline

    def layer(self, el: etree._Element) -> Layer:
        get = el.get
        layer_id, name, ltype = get("id"), get("name"), get("type")
        if layer_id is None or name is None or ltype is None or not (layer_id.isascii() and layer_id.isdigit()):
            self.bad_layer(el, layer_id, name, ltype)
        assert layer_id is not None and name is not None and ltype is not None
        data: dict[str, str] = {}
        inputs: tuple[Port, ...] = ()
        outputs: tuple[Port, ...] = ()
        rt: tuple[RtInfo, ...] = ()
        sub: dict[str, etree._Element] = {}  # body elements, their port maps and back edges
        for child in el:
            tag = child.tag
            if tag == "input" or tag == "output":
                found = self.fast_ports(child)
                if found is None:  # something unusual: the careful walk says what
                    found = self.ports(child, el, layer_id, name, ltype)
                if tag == "input":
                    inputs = found
                else:
                    outputs = found
            elif tag == "data":
                data.update(attributes(child))
            elif tag == "rt_info":
                rt = rt_children(child)
            elif tag in _SUBGRAPH_TAGS:
                if tag in sub:
                    where = self.where(el, layer_id, name, ltype)
                    raise IRStructureError(
                        f"{where}, line {child.sourceline}: a second <{tag}> (the first is at line "
                        f"{sub[tag].sourceline}); expected one"
                    )
                sub[tag] = child
        ids = [p.id for p in inputs] + [p.id for p in outputs]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[0]
            raise IRStructureError(
                f"{self.where(el, layer_id, name, ltype)}: port id {dup} is used twice; port ids must be unique"
            )
        etype: ElementType | None = None
        shape: PartialShape | None = None
        const: ConstData | None = None
        if ltype in ("Parameter", "Const"):
            where = self.where(el, layer_id, name, ltype)
            etype = self.etype_attr(data, "element_type", where, required=True)
            shape = self.shape_attr(data, where, required=ltype == "Const")
            if len(outputs) != 1:
                raise IRStructureError(f"{where}: a {ltype} must have exactly one output port, found {len(outputs)}")
            if ltype == "Const":
                assert etype is not None and shape is not None
                const = self.const_data(data, etype, shape, where)
        elif ltype == "Convert" and "destination_type" in data:
            etype = self.etype_attr(data, "destination_type", self.where(el, layer_id, name, ltype), required=True)
        bodies = self.bodies(sub, self.where(el, layer_id, name, ltype), inputs, outputs) if sub else ()
        return Layer(
            id=layer_id,
            name=name,
            type=ltype,
            version=get("version", ""),
            data=MappingProxyType(data) if data else NO_DATA,
            inputs=inputs,
            outputs=outputs,
            line=el.sourceline,
            rt_info=rt,
            element_type=etype,
            shape=shape,
            const=const,
            bodies=bodies,
        )

    # -- sub-graph bodies ---------------------------------------------------------------------------------
    def bodies(
        self, sub: dict[str, etree._Element], where: str, inputs: tuple[Port, ...], outputs: tuple[Port, ...]
    ) -> tuple[Body, ...]:
        """The bodies of a layer (``<body>``, ``<then_body>``, ``<else_body>``) with their port maps."""
        for tag in sub:
            owner = _OWNER.get(tag)
            if owner is not None and not any(t in sub for t in owner):
                expected = " or ".join(f"<{t}>" for t in owner)
                raise IRStructureError(
                    f"{where}, line {sub[tag].sourceline}: <{tag}> without {expected}; expected the body it maps"
                )
        body_tags = sorted((t for t in sub if t in BODY_ROLES), key=lambda t: sub[t].sourceline or 0)
        if not body_tags:
            return ()
        if self.body_depth >= self.limits.max_body_depth:
            raise LimitExceededError(
                f"{where}: sub-graph bodies are nested more than {self.limits.max_body_depth} deep (the configured "
                f"limit)"
            )
        self.body_depth += 1
        try:
            return tuple(self.body(sub, tag, where, inputs, outputs) for tag in body_tags)
        finally:
            self.body_depth -= 1

    def body(
        self,
        sub: dict[str, etree._Element],
        tag: str,
        where: str,
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
    ) -> Body:
        role, map_tag = BODY_ROLES[tag]
        body_el = sub[tag]
        layers_el, edges_el = self.sections(body_el, f"{where}: a second {{tag}} in <{tag}>")
        if layers_el is None:
            raise IRStructureError(f"{self.at(body_el)}: {where}: <{tag}> has no <layers> element; expected the "
                                   f"body's layers")  # fmt: skip
        layers, edges = self.graph(layers_el, edges_el)
        graph = IRModel(
            name=role, ir_version=self.ir_version, layers=layers, edges=edges, source=self.source, weights=self.weights
        )
        by_id = {layer.id: layer for layer in layers}
        ins: list[PortMapping] = []
        outs: list[PortMapping] = []
        map_el = sub.get(map_tag)
        for item in () if map_el is None else map_el:
            if item.tag not in ("input", "output"):
                raise IRStructureError(
                    f"{self.at(item)}: {where}: unexpected <{item.tag}> in <{map_tag}>; expected <input> or <output>"
                )
            mapped = self.mapping(item, map_tag, where, by_id, inputs)
            (ins if item.tag == "input" else outs).append(mapped)
        by_port: dict[int, PortMapping] = {}
        for m in outs:
            first = by_port.setdefault(m.external_port_id, m)
            if m.external_port_id >= 0 and first is not m:
                raise IRStructureError(
                    f"{self.source}:{m.line}: {where}: <{map_tag}> <output>: external_port_id={m.external_port_id} is "
                    f"already mapped (line {first.line}); expected one <output> per layer output port"
                )
        connected = sum(1 for m in outs if m.external_port_id >= 0)
        if connected > len(outputs):
            raise IRStructureError(
                f"{self.at(map_el) if map_el is not None else self.source}: {where}: <{map_tag}> maps {connected} "
                f"outputs but the layer has {len(outputs)} output ports; expected at most one <output> per port"
            )
        back: list[BackEdge] = []
        back_el = sub.get("back_edges")
        if role == "body" and back_el is not None:
            fed: dict[str, BackEdge] = {}
            for edge in back_el:
                item = self.back_edge(edge, where, by_id)
                earlier = fed.setdefault(item.to_layer, item)
                if earlier is not item:
                    raise IRStructureError(
                        f"{self.source}:{item.line}: {where}: <back_edges> <edge> to-layer={item.to_layer}: the "
                        f"Parameter is already fed by the back edge at line {earlier.line}; expected one back edge per "
                        f"body Parameter"
                    )
                back.append(item)
        return Body(role, graph, tuple(ins), tuple(outs), tuple(back), body_el.sourceline)

    def mapping(
        self,
        item: etree._Element,
        map_tag: str,
        where: str,
        by_id: dict[str, Layer],
        inputs: tuple[Port, ...],
    ) -> PortMapping:
        """One port-map entry, its internal layer checked to be a body Parameter (input) or Result (output)."""
        what = f"{self.at(item)}: {where}: <{map_tag}> <{item.tag}>"
        ext = self.int_attr(item, "external_port_id", what, required=True)
        assert ext is not None
        internal = item.get("internal_layer_id")
        if internal is None or not (internal.isascii() and internal.isdigit()):
            got = "is missing" if internal is None else f"is {internal!r}"
            raise IRStructureError(f"{what}: internal_layer_id {got}; expected the id of a body layer")
        expected = "Parameter" if item.tag == "input" else "Result"
        target = by_id.get(internal)
        if target is None:
            raise IRStructureError(
                f"{what}: internal_layer_id={internal}: the body has no layer with that id; expected a body {expected}"
            )
        if target.type != expected:
            raise IRStructureError(
                f"{what}: internal_layer_id={internal} is {target.where}; expected a body {expected}"
            )
        if item.tag == "input" and not (ext == -1 or 0 <= ext < len(inputs)):
            raise IRStructureError(
                f"{what}: external_port_id={ext} but the layer has {len(inputs)} inputs; expected 0 to "
                f"{len(inputs) - 1} (or -1 for a body-only Parameter)"
            )
        if item.tag == "output" and ext < -1:
            raise IRStructureError(
                f"{what}: external_port_id={ext}; expected a layer output port (0 or more) or -1 for a body-only "
                f"Result (OpenVINO refuses the model)"
            )
        axis = self.int_attr(item, "axis", what, required=False)
        if item.tag == "input" and axis is not None and ext >= 0 and inputs[ext].dims:
            rank = len(inputs[ext].dims)
            if not 0 <= axis < rank:  # OpenVINO reads the slicing axis as unsigned and refuses the model
                raise IRStructureError(
                    f"{what}: axis={axis} but input port {inputs[ext].id} has rank {rank}; expected an axis from 0 to "
                    f"{rank - 1} to slice it along (OpenVINO refuses the model)"
                )
        part_size = self.int_attr(item, "part_size", what, required=False)
        if part_size is not None and part_size < 1:
            raise IRStructureError(f"{what}: part_size={part_size}; expected a positive integer")
        return PortMapping(
            external_port_id=ext,
            internal_layer_id=internal,
            axis=axis,
            start=_or(self.int_attr(item, "start", what, required=False), 0),
            end=_or(self.int_attr(item, "end", what, required=False), -1),
            stride=_or(self.int_attr(item, "stride", what, required=False), 1),
            part_size=_or(part_size, 1),
            purpose=item.get("purpose"),
            line=item.sourceline,
        )

    def back_edge(self, el: etree._Element, where: str, by_id: dict[str, Layer]) -> BackEdge:
        what = f"{self.at(el)}: {where}: <back_edges>"
        if el.tag != "edge":
            raise IRStructureError(f"{what}: unexpected <{el.tag}>; expected <edge>")
        ends = []
        for attr, expected in (("from-layer", "Result"), ("to-layer", "Parameter")):
            text = el.get(attr)
            if text is None or not (text.isascii() and text.isdigit()):
                got = "is missing" if text is None else f"is {text!r}"
                raise IRStructureError(f"{what} <edge> attribute {attr!r} {got}; expected the id of a body {expected}")
            target = by_id.get(text)
            if target is None or target.type != expected:
                got = "no layer of the body" if target is None else target.where
                raise IRStructureError(f"{what} <edge> {attr}={text} is {got}; expected a body {expected}")
            ends.append(text)
        return BackEdge(ends[0], ends[1], el.sourceline)

    def int_attr(self, el: etree._Element, attr: str, what: str, *, required: bool) -> int | None:
        text = el.get(attr)
        if text is None:
            if required:
                raise IRStructureError(f"{what} has no {attr!r} attribute; expected an integer")
            return None
        stripped = text.strip()
        # the length first: int() refuses more than 4300 digits with a ValueError of its own
        if not _INT.fullmatch(stripped) or len(stripped) > 20 or abs(int(stripped)) > INT64_MAX:
            raise IRStructureError(f"{what}: {attr}={text!r} is not an integer; expected a 64-bit integer")
        return int(text)

    def bad_layer(self, el: etree._Element, layer_id: str | None, name: str | None, ltype: str | None) -> None:
        """Raise the precise error for a <layer> whose id, name or type is missing or malformed."""
        if layer_id is None:
            raise IRStructureError(f"{self.at(el)}: <layer> has no 'id' attribute")
        if not _UINT.fullmatch(layer_id):
            raise IRStructureError(f"{self.at(el)}: layer id {layer_id!r} is not a non-negative integer")
        for attr, value in (("name", name), ("type", ltype)):
            if value is None:
                raise IRStructureError(f"{self.where(el, layer_id, name, ltype)}: <layer> has no {attr!r} attribute")

    def fast_ports(self, parent: etree._Element) -> tuple[Port, ...] | None:
        """The ports of an <input>/<output> when everything in it is ordinary (known precisions, plain
        non-negative or -1 dims, no rt_info, no escaped names); None sends it to :meth:`ports`."""
        ports = []
        cache = _PRECISION_CACHE
        max_rank = self.limits.max_rank
        for el in parent:
            get = el.get
            pid = get("id")
            ptext = get("precision")
            precision = cache.get(ptext) if ptext is not None else None
            if el.tag != "port" or pid is None or not pid.isdigit() or (precision is None and ptext is not None):
                return None
            dims = []
            for d in el:
                text = d.text
                if d.tag != "dim" or text is None:
                    return None
                if text.isdigit() and len(text) < 19 and text.isascii():  # str.isdigit() also takes "²", "٣"
                    dims.append(int(text))
                elif text == "-1":
                    dims.append(-1)
                else:
                    return None
            if len(dims) > max_rank or not pid.isascii():
                return None
            names_attr = get("names")
            if not names_attr:
                names: tuple[str, ...] = ()
            elif "\\" in names_attr:
                return None
            else:
                names = tuple(names_attr.split(","))
            ports.append(Port(pid, precision, names, shared_dims(tuple(dims)), el.sourceline))
        return tuple(ports)

    def ports(
        self, parent: etree._Element, layer: etree._Element, layer_id: str, name: str, ltype: str
    ) -> tuple[Port, ...]:
        ports = []
        max_rank = self.limits.max_rank
        for el in parent:
            if el.tag != "port":
                where = self.where(layer, layer_id, name, ltype)
                raise IRStructureError(
                    f"{where}, line {el.sourceline}: unexpected <{el.tag}> in <{parent.tag}>; expected <port>"
                )
            get = el.get
            pid = get("id")
            if pid is None or not (pid.isascii() and pid.isdigit()):
                got = "no 'id' attribute" if pid is None else f"id {pid!r}"
                raise IRStructureError(
                    f"{self.where(layer, layer_id, name, ltype)}, line {el.sourceline}: <port> has {got}; "
                    f"expected a non-negative integer id"
                )
            precision_text = get("precision")
            precision = None
            if precision_text is not None:
                precision = _PRECISION_CACHE.get(precision_text)
                if precision is None:
                    try:
                        precision = element_type_from_precision(precision_text)
                    except ElementTypeError as exc:
                        where = self.where(layer, layer_id, name, ltype)
                        raise ElementTypeError(f"{where}, port {pid}: {exc}") from None
            dims: list[int] = []
            rt: tuple[RtInfo, ...] = ()
            for d in el:
                if d.tag == "dim":
                    text = d.text
                    if text is not None and text.isascii() and text.isdigit() and len(text) < 19:
                        dims.append(int(text))
                    elif text == "-1":
                        dims.append(-1)
                    else:
                        dims.append(self.dim(d, self.where(layer, layer_id, name, ltype), pid))
                elif d.tag == "rt_info":
                    rt = rt_children(d)
            if len(dims) > max_rank:
                raise LimitExceededError(
                    f"{self.where(layer, layer_id, name, ltype)}, port {pid}: rank {len(dims)} exceeds the limit "
                    f"of {max_rank}"
                )
            names_attr = get("names")
            if not names_attr:
                names: tuple[str, ...] = ()
            elif "\\" not in names_attr:
                names = tuple(names_attr.split(","))
            else:
                names = tuple(n.replace("\\,", ",") for n in _NAME_SPLIT.split(names_attr))
            ports.append(Port(pid, precision, names, tuple(dims), el.sourceline, rt))
        return tuple(ports)

    def dim(self, el: etree._Element, where: str, port: str) -> int:
        text = (el.text or "").strip()
        if not _INT.fullmatch(text):
            raise IRStructureError(
                f"{where}, port {port}, line {el.sourceline}: <dim>{el.text or ''}</dim> is not an integer; "
                f"expected a size >= 0 or -1 for a dynamic dimension"
            )
        value = int(text) if len(text) <= 20 else INT64_MAX + 1  # int() refuses more than 4300 digits
        if value < -1 or value > INT64_MAX:
            raise IRStructureError(
                f"{where}, port {port}, line {el.sourceline}: <dim>{text}</dim> is out of range; "
                f"expected a size >= 0 (and < 2^63) or -1 for a dynamic dimension"
            )
        return value

    def etype_attr(self, data: Mapping[str, str], attr: str, where: str, *, required: bool) -> ElementType | None:
        text = data.get(attr)
        if text is None:
            if required:
                raise IRStructureError(f"{where}: <data> has no {attr!r} attribute")
            return None
        try:
            return element_type(text)
        except ElementTypeError as exc:
            raise ElementTypeError(f"{where}: {attr}: {exc}") from None

    def shape_attr(self, data: Mapping[str, str], where: str, *, required: bool) -> PartialShape | None:
        text = data.get("shape")
        if text is None:
            if required:
                raise IRStructureError(f"{where}: <data> has no 'shape' attribute")
            return None
        try:
            shape = _parse_shape(text)
        except ValueError as exc:
            raise IRStructureError(f"{where}: shape={text!r}: {exc}") from None
        if shape.rank is not None and shape.rank > self.limits.max_rank:
            raise LimitExceededError(f"{where}: rank {shape.rank} exceeds the limit of {self.limits.max_rank}")
        return shape

    def const_data(self, data: Mapping[str, str], etype: ElementType, shape: PartialShape, where: str) -> ConstData:
        if not shape.is_static:
            raise IRStructureError(f"{where}: shape={data['shape']!r}: a Const must have a static shape")
        fields = {}
        for attr in ("offset", "size"):
            text = data.get(attr)
            if text is not None and len(text) <= 20 and text.isdigit() and text.isascii():  # the usual case
                fields[attr] = int(text)
                continue
            if text is None:
                raise IRStructureError(f"{where}: <data> has no {attr!r} attribute")
            if not _UINT.fullmatch(text.strip()):
                raise IRStructureError(f"{where}: {attr}={text!r} is not a non-negative integer")
            if len(text.strip()) > 20:  # int() refuses more than 4300 digits; the .bin is far smaller anyway
                raise WeightsError(f"{where}: {attr}={text[:24]}... is out of range; expected a byte count in the .bin")
            fields[attr] = int(text)
        offset, size = fields["offset"], fields["size"]
        count = math.prod(shape.to_list())
        expected = etype.nbytes(count)
        # OpenVINO's serializer writes a 1-byte placeholder for a Const with no elements.
        if expected is not None and size != expected and not (count == 0 and size == 1):
            raise WeightsError(
                f"{where}: size={size} does not match shape {shape} of {etype}: expected {expected} bytes "
                f"({count} elements)"
            )
        if etype.kind == "string" and size < 4 * (count + 2):
            raise WeightsError(
                f"{where}: size={size} is too small for {count} strings: expected at least {4 * (count + 2)} "
                f"bytes (count, {count + 1} offsets, characters)"
            )
        if etype.kind == "dynamic":
            raise ElementTypeError(f"{where}: a Const cannot have the dynamic element type")
        if self.weights is None:
            if size == 0:
                return ConstData(offset, size, count)
            raise WeightsError(
                f"{where}: needs {size} bytes at offset {offset} of the weights file, but there is none"
                + (f" (expected {self.expected_bin})" if self.expected_bin else "")
            )
        self.weights.check_range(offset, size, where=where)
        return ConstData(offset, size, count)

    # -- graph --------------------------------------------------------------------------------------
    def edges(
        self, edges_el: etree._Element, layers: dict[str, Layer], seen_inputs: dict[tuple[str, str], int | None]
    ) -> tuple[Edge, ...]:
        """The edges, each checked to join an existing output port to an input port no other edge feeds;
        ``seen_inputs`` receives every fed input port with its edge's line."""
        edges = []
        for el in edges_el:
            if el.tag != "edge":
                raise IRStructureError(f"{self.at(el)}: unexpected <{el.tag}> in <edges>; expected <edge>")
            get = el.get
            fl, fp, tl, tp = get("from-layer"), get("from-port"), get("to-layer"), get("to-port")
            if not (fl and fp and tl and tp):
                self.bad_edge(el)
            assert fl is not None and fp is not None and tl is not None and tp is not None
            joined = fl + fp + tl + tp
            if not (joined.isdigit() and joined.isascii()):
                self.bad_edge(el)
            line = el.sourceline
            src = layers.get(fl)
            dst = layers.get(tl)
            out_id = None if src is None else _port_id(src.outputs, fp)
            in_id = None if dst is None else _port_id(dst.inputs, tp)
            if src is None or dst is None or out_id is None or in_id is None:
                self.dangling_edge(el, Edge(fl, fp, tl, tp, line), layers)
            assert src is not None and dst is not None and out_id is not None and in_id is not None
            # The layers' and ports' own id strings: every later lookup by them then matches by identity,
            # not by comparing characters (a million-layer graph's dicts no longer fit any cache).
            fl, fp, tl, tp = src.id, out_id, dst.id, in_id
            key = (tl, tp)
            if key in seen_inputs:
                desc = f"edge {fl}:{fp} -> {tl}:{tp}"
                raise IRStructureError(
                    f"{self.at(el)}: {desc}: input port {tp} of {layers[tl].where} already has an incoming edge "
                    f"(line {seen_inputs[key]}); an input port takes exactly one"
                )
            seen_inputs[key] = line
            edges.append(Edge(fl, fp, tl, tp, line))
        return tuple(edges)

    def bad_edge(self, el: etree._Element) -> None:
        """Raise the precise error for an <edge> with a missing or non-integer attribute."""
        for attr in ("from-layer", "from-port", "to-layer", "to-port"):
            text = el.get(attr)
            if text is None or not _UINT.fullmatch(text):
                got = "is missing" if text is None else f"is {text!r}"
                raise IRStructureError(
                    f"{self.at(el)}: <edge> attribute {attr!r} {got}; expected a non-negative integer"
                )

    def dangling_edge(self, el: etree._Element, edge: Edge, layers: dict[str, Layer]) -> None:
        """Raise the precise error for an edge whose layer or port does not exist."""
        desc = f"edge {edge.from_layer}:{edge.from_port} -> {edge.to_layer}:{edge.to_port}"
        src = layers.get(edge.from_layer)
        dst = layers.get(edge.to_layer)
        if src is None:
            raise IRStructureError(f"{self.at(el)}: {desc} starts at layer id {edge.from_layer}, which does not exist")
        if dst is None:
            raise IRStructureError(f"{self.at(el)}: {desc} ends at layer id {edge.to_layer}, which does not exist")
        if all(p.id != edge.from_port for p in src.outputs):
            raise IRStructureError(
                f"{self.at(el)}: {desc}: {src.where} has no output port {edge.from_port} "
                f"(its output ports: {_ids(src.outputs)})"
            )
        raise IRStructureError(
            f"{self.at(el)}: {desc}: {dst.where} has no input port {edge.to_port} (its input ports: {_ids(dst.inputs)})"
        )

    def topological(self, layers: dict[str, Layer], edges: tuple[Edge, ...]) -> tuple[Layer, ...]:
        ids = list(layers)
        index = {lid: i for i, lid in enumerate(ids)}
        indegree = [0] * len(ids)
        succ: list[list[int] | None] = [None] * len(ids)
        for e in edges:
            to = index[e.to_layer]
            indegree[to] += 1
            after = succ[index[e.from_layer]]
            if after is None:
                succ[index[e.from_layer]] = [to]
            else:
                after.append(to)
        order = [layers[ids[i]] for i in kahn_order(indegree, succ)]
        if len(order) != len(layers):
            stuck = [layers[lid] for lid in _on_cycles([ids[i] for i, n in enumerate(indegree) if n > 0], edges)]
            names = ", ".join(f"id={layer.id} {layer.name!r}" for layer in stuck[:5])
            more = f" and {len(stuck) - 5} more" if len(stuck) > 5 else ""
            raise IRStructureError(
                f"{self.source}: the graph has a cycle through layers {names}{more}; an IR must be acyclic"
            )
        return tuple(order)

    def check_connected(self, layers: Iterable[Layer], connected: dict[tuple[str, str], int | None]) -> None:
        for layer in layers:
            for port in layer.inputs:
                if (layer.id, port.id) not in connected:
                    raise IRStructureError(
                        f"{self.source}:{port.line}: input port {port.id} of {layer.where} has no incoming edge; "
                        f"every input port must be connected"
                    )


_SUBGRAPH_TAGS = frozenset({*BODY_ROLES, *(m for _, m in BODY_ROLES.values()), "back_edges"})
_OWNER = {m: (b,) for b, (_, m) in BODY_ROLES.items()} | {"back_edges": ("body",)}


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _on_cycles(stuck: list[str], edges: tuple[Edge, ...]) -> list[str]:
    """The layers Kahn's walk left behind, less those that merely hang below a cycle (feed no stuck layer)."""
    outdegree = dict.fromkeys(stuck, 0)  # in file order, which the message keeps
    members = set(stuck)
    pred: dict[str, list[str]] = {}
    for e in edges:
        if e.from_layer in members and e.to_layer in members:
            outdegree[e.from_layer] += 1
            pred.setdefault(e.to_layer, []).append(e.from_layer)
    sinks = deque(lid for lid, n in outdegree.items() if n == 0)
    while sinks:
        lid = sinks.popleft()
        del outdegree[lid]
        for p in pred.get(lid, ()):
            if p in outdegree:
                outdegree[p] -= 1
                if outdegree[p] == 0:
                    sinks.append(p)
    return list(outdegree)


@lru_cache(maxsize=4096)
def _parse_shape(text: str) -> PartialShape:
    # A model's Consts and Parameters repeat a few hundred distinct shape attributes thousands of times.
    return PartialShape.parse(text)


def _port_id(ports: tuple[Port, ...], port_id: str) -> str | None:
    """The id string of the port with id ``port_id`` (None if there is none)."""
    for p in ports:
        if p.id == port_id:
            return p.id
    return None


def _ids(ports: tuple[Port, ...]) -> str:
    return ", ".join(p.id for p in ports) or "none"
