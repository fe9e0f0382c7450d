"""The IR as OpenVINO's serializer writes it, read straight from the bytes by regular expressions running in C.

A Python object for each of the hundreds of thousands of elements lxml's tree holds costs more than OpenVINO's
whole C++ reader needs for the file. This module reads the layout the serializer writes (a layer's attributes in
its order and in double quotes, one ``<data>``, an ``<rt_info>`` of attributes, ``<input>``, ``<output>``, ports of
plain ``<dim>`` values) with a handful of compiled patterns and builds the layers, ports and edges from their
matches; meanwhile libxml2 checks on another thread that the whole document is well-formed (it releases the GIL
while it parses), with the careful path's options.

A layer in any other form (a sub-graph body, nested rt_info, an escaped character, another attribute order, a
comment) is handed to the lxml builder on its own slice of the file, its line numbers kept. Anything unexpected at
the level of the document, and every error, returns None: the caller then takes the lxml paths, which raise the
precise message. So this module never decides that a file is wrong, and what it builds is the model the careful
path builds, line numbers included (``tests/ir/test_canonical.py`` compares the two on every sample, corpus model
and generated variant), except past line 65,535, where libxml2's line numbers are one too high and these are not.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import Protocol

from lxml import etree

from ovreduce.errors import IRError, LimitExceededError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import ConstData, Edge, IRModel, Layer, Port, PortRef, RtInfo
from ovreduce.ir.reading import (
    NO_DATA,
    PARSER_OPTIONS,
    SUPPORTED_IR_VERSIONS,
    NoExternalResources,
    kahn_order,
    rt_children,
    shared_dims,
)
from ovreduce.ir.weights import Weights
from ovreduce.shapes import PartialShape

__all__ = ["Builder", "read_canonical"]

_VALUE = rb'"[^"<&\t\n]*"'  # a value as the serializer writes it: nothing to unescape or normalise
_ATTRS = rb"((?:[ \t]+[A-Za-z_][A-Za-z0-9_.-]*=" + _VALUE + rb")*)"  # attributes on the start tag's own line
_NO_GROUP_ATTRS = rb"(?:[ \t]+[A-Za-z_][A-Za-z0-9_.-]*=" + _VALUE + rb")*"
_PORT = (
    rb'<port id="[0-9]+"(?: precision="[A-Za-z0-9_]+")?(?: names="[^"<&\t\n\\]*")?[ \t]*'
    rb"(?:/>|>(?:[ \t\n]*+<dim>(?:-1|[0-9]{1,18})</dim>)*+[ \t\n]*+</port>)"
)
_PROLOG = re.compile(
    rb'(?:\xef\xbb\xbf)?(?:<\?xml[ \t]+version="1\.[0-9]"(?:[ \t]+encoding="(?i:utf-8)")?'
    rb'(?:[ \t]+standalone="(?:yes|no)")?[ \t]*\?>)?[ \t\n]*+<net' + _ATTRS + rb"[ \t]*>[ \t\n]*+<layers>"
)
_LAYER = re.compile(
    rb'([ \t\n]*+)<layer id="([0-9]+)" name="([^"<&\t\n]*)" type="([^"<&\t\n]*)" version="([^"<&\t\n]*)"'
    rb"(?:[ \t]+[A-Za-z_][A-Za-z0-9_.-]*=" + _VALUE + rb")*[ \t]*>[ \t\n]*+"
    rb"(?:<data" + _ATTRS + rb"[ \t]*(?:/>|>[ \t\n]*+</data>)[ \t\n]*+)?"
    rb"(?:<rt_info>((?:[ \t\n]*+<attribute" + _NO_GROUP_ATTRS + rb"[ \t]*/>)*+)[ \t\n]*+</rt_info>[ \t\n]*+)?"
    rb"(?:<input>((?:[ \t\n]*+" + _PORT + rb")*+)[ \t\n]*+</input>[ \t\n]*+)?"
    rb"(?:<output>((?:[ \t\n]*+" + _PORT + rb")*+)[ \t\n]*+</output>[ \t\n]*+)?"
    rb"</layer>"
)
_PORTS = re.compile(
    rb'([ \t\n]*)<port id="([0-9]+)"(?: precision="([A-Za-z0-9_]+)")?(?: names="([^"]*)")?[ \t]*'
    rb"(?:/>|>((?:[ \t\n]*<dim>[^<]*</dim>)*)([ \t\n]*)</port>)"
)
_CONST_DATA = re.compile(
    rb' element_type="([a-z0-9]+)" shape="([^"<&\t\n]*)" offset="([0-9]{1,20})" size="([0-9]{1,20})"[ \t]*'
)
_RT_ATTRIBUTE = re.compile(rb"<attribute" + _ATTRS + rb"[ \t]*/>")
_DIM = re.compile(rb"<dim>([^<]*)</dim>")
_ATTR = re.compile(rb'([A-Za-z_][A-Za-z0-9_.-]*)="([^"]*)"')
_EDGES = re.compile(
    rb"<edges>((?:[ \t\n]*+<edge "
    rb'from-layer="[0-9]+" from-port="[0-9]+" to-layer="[0-9]+" to-port="[0-9]+"[ \t]*/>)*+)[ \t\n]*+</edges>'
)
_EDGE = re.compile(
    rb'([ \t\n]*)<edge from-layer="([0-9]+)" from-port="([0-9]+)" to-layer="([0-9]+)" to-port="([0-9]+)"'
)
# every start and end tag of a <layer> (in a well-formed document with no comments, '<' starts nothing else)
_LAYER_TAGS = re.compile(
    rb"<layer(?:[ \t\n]+[^ \t\n=/>]+[ \t\n]*=[ \t\n]*(?:\"[^\"]*\"|'[^']*'))*[ \t\n]*(/?)>|</layer[ \t\n]*>"
)
_BLANK = re.compile(rb"[ \t\n]*+")
_END = re.compile(rb"[ \t\n]*+</net>[ \t\n]*+\Z")
_PRECISIONS: dict[bytes, ElementType] = {t.precision.encode(): t for t in ELEMENT_TYPES.values()}
_THREAD_FROM = 1 << 18  # a document this large is checked on another thread (starting one costs ~0.1 ms)
_CACHE_SIZE = 4096  # entries of each cache of repeated texts (they come from untrusted files: bounded)
_WORDS = 1 << 22  # distinct ids and type names kept


def _layer_factory() -> Callable[..., Layer]:
    """Builds a :class:`Layer` through its slots: the frozen dataclass's ``__init__`` costs twice as much, and a
    model has hundreds of thousands of layers. A layer with bodies is never built here."""
    new = object.__new__
    (set_id, set_name, set_type, set_version, set_data, set_inputs, set_outputs, set_line, set_rt, set_etype,
     set_shape, set_const, set_bodies) = (getattr(Layer, f.name).__set__ for f in fields(Layer))  # fmt: skip

    def build(
        layer_id: str,
        name: str,
        ltype: str,
        version: str,
        data: Mapping[str, str],
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        line: int,
        rt_info: tuple[RtInfo, ...],
        etype: ElementType | None,
        shape: PartialShape | None,
        const: ConstData | None,
    ) -> Layer:
        layer: Layer = new(Layer)
        set_id(layer, layer_id)
        set_name(layer, name)
        set_type(layer, ltype)
        set_version(layer, version)
        set_data(layer, data)
        set_inputs(layer, inputs)
        set_outputs(layer, outputs)
        set_line(layer, line)
        set_rt(layer, rt_info)
        set_etype(layer, etype)
        set_shape(layer, shape)
        set_const(layer, const)
        set_bodies(layer, ())
        return layer

    return build


_layer = _layer_factory()
_PortFields = tuple[str, ElementType | None, tuple[str, ...], tuple[int, ...], int]  # a Port, its line relative
_Template = tuple[tuple[_PortFields, ...], frozenset[str]]  # the ports of an <input>/<output>, and their ids


def _ports(template: tuple[_PortFields, ...], line: int) -> tuple[Port, ...]:
    """The ports of a template whose content starts at ``line``."""
    new = tuple.__new__
    if len(template) == 1:
        ((pid, precision, names, dims, at),) = template
        return (new(Port, (pid, precision, names, dims, line + at, ())),)
    return tuple(
        [new(Port, (pid, precision, names, dims, line + at, ())) for pid, precision, names, dims, at in template]
    )


class Builder(Protocol):
    """What this module asks of :class:`ovreduce.ir.parser._Builder`: a layer in any other form built from its
    element, the checks of a Parameter's, a Const's and a Convert's attributes, and the parse's bounds."""

    source: str
    weights: Weights | None
    layer_count: int
    ir_version: int

    @property
    def limits(self) -> Limits: ...

    def layer(self, el: etree._Element) -> Layer: ...
    def etype_attr(self, data: Mapping[str, str], attr: str, where: str, *, required: bool) -> ElementType | None: ...
    def shape_attr(self, data: Mapping[str, str], where: str, *, required: bool) -> PartialShape | None: ...
    def const_data(self, data: Mapping[str, str], etype: ElementType, shape: PartialShape, where: str) -> ConstData: ...


class Limits(Protocol):
    @property
    def max_layers(self) -> int: ...
    @property
    def max_rank(self) -> int: ...


def read_canonical(xml: bytes, builder: Builder) -> IRModel | None:
    """The model of ``xml`` when its document is in the serializer's layout and everything in it is right;
    None otherwise (the caller takes the careful path). ``builder`` builds the layers in any other form and
    checks Consts and Parameters."""
    head = _PROLOG.match(xml)
    if head is None or b"\r" in xml:
        return None  # no <net> right after an XML declaration (a DOCTYPE, a comment), or line ends to normalise
    verdict = _well_formed(xml)
    try:
        model = _Reader(xml, builder).read(head)
    except (IRError, LimitExceededError, etree.LxmlError, ValueError, UnicodeDecodeError):
        model = None
    finally:
        well_formed = verdict()
    return model if well_formed else None


def _well_formed(xml: bytes) -> Callable[[], bool]:
    """Start libxml2's check of the whole document (with the careful path's options); the returned function
    waits for its verdict. A large document is checked on another thread, beside the reading."""
    verdict = [False]

    def check() -> None:
        parser = etree.XMLParser(target=_Nothing(), **PARSER_OPTIONS)
        # no DOCTYPE can come before <net> here; anything external is kept off the file system all the same
        parser.resolvers.add(NoExternalResources())
        try:
            etree.fromstring(xml, parser)
        except (etree.LxmlError, ValueError):
            return
        verdict[0] = True

    if len(xml) < _THREAD_FROM:
        check()
        return lambda: verdict[0]
    thread = threading.Thread(target=check, name="ovreduce-xml-check", daemon=True)
    thread.start()

    def wait() -> bool:
        thread.join()
        return verdict[0]

    return wait


class _Nothing:
    """A parser target that builds nothing: libxml2 parses, and only its errors reach Python."""

    def close(self) -> None:
        return None


class _Reader:
    def __init__(self, xml: bytes, builder: Builder) -> None:
        self.xml = xml
        self.builder = builder
        self.source = builder.source
        self.layers: dict[str, Layer] = {}
        self.by_raw_id: dict[bytes, int] = {}  # a layer's id text -> its index in file order
        self.in_file_order: list[Layer] = []
        self.words: dict[bytes, str] = {}  # see word()
        self.dims: dict[bytes, tuple[int, ...]] = {}
        self.data: dict[bytes, MappingProxyType[str, str]] = {}
        self.rt_infos: dict[bytes, tuple[RtInfo, ...]] = {}
        self.etypes: dict[str, ElementType | None] = {}  # a Convert's destination_type text -> its type
        self.templates: dict[bytes, _Template] = {}
        self.layouts: dict[tuple[str | None, str | None], tuple[ElementType, PartialShape, int, int]] = {}
        self.input_ports = 0
        self.producer: dict[PortRef, PortRef] = {}
        self.succ: list[list[int] | None] = []  # by index: the layers each one feeds, an entry per edge
        self.indegree: list[int] = []  # by index: the edges into each layer
        self.edge_list: list[Edge] = []
        self.padding = 0  # newlines written ahead of slices handed to lxml, bounded by the file's size

    def read(self, head: re.Match[bytes]) -> IRModel | None:
        xml = self.xml
        net = dict(self.attributes(head[1]))
        version = net.get("version", "")
        if any(k.startswith("xmlns") for k in net) or not version.isdigit() or len(version) > 20:
            return None
        if int(version) not in SUPPORTED_IR_VERSIONS:
            return None
        self.builder.ir_version = int(version)
        pos, line = head.end(), 1 + xml.count(b"\n", 0, head.end())
        match_layer, count, layers, by_raw_id, in_file_order = (
            _LAYER.match,
            xml.count,
            self.layers,
            self.by_raw_id,
            self.in_file_order,
        )
        limit = self.builder.limits.max_layers
        known = input_ports = 0  # layers and input ports read so far
        while True:
            match = match_layer(xml, pos)  # the usual case first: blanks, then a layer in the serializer's layout
            layer = None
            if match is not None:
                line += match[1].count(b"\n")
                layer = self.layer(match, line)
            if layer is not None:
                end = match.end()  # type: ignore[union-attr]
                raw_id = match[2]  # type: ignore[index]
                start = match.start(2)  # type: ignore[union-attr]
            else:
                if match is None:
                    blank = _BLANK.match(xml, pos)
                    assert blank is not None
                    line += count(b"\n", pos, blank.end())
                    start = blank.end()
                else:
                    start = match.start(2)
                if xml.startswith(b"</layers>", start):
                    pos = start + len(b"</layers>")
                    break
                if xml.startswith(b"</", start) or not _LAYER_TAGS.match(xml, start):
                    return None
                end = self.layer_end(start)
                if end < 0:
                    return None
                layer = self.by_lxml(start, end, line)
                raw_id = layer.id.encode()
            layer_id = layer.id
            layers[layer_id] = layer
            if len(layers) == known or len(layers) + self.builder.layer_count > limit:  # body layers in the count
                return None  # an id taken, or one layer too many: the careful path says which
            known += 1
            by_raw_id[raw_id] = len(in_file_order)
            in_file_order.append(layer)
            input_ports += len(layer.inputs)
            line += count(b"\n", start, end)
            pos = end
        self.input_ports = input_ports
        blank = _BLANK.match(xml, pos)
        assert blank is not None
        line += xml.count(b"\n", pos, blank.end())
        pos = blank.end()
        if xml.startswith(b"<edges>", pos):
            found = _EDGES.match(xml, pos)
            if found is None or not self.edges(found[1], line):
                return None
            line += xml.count(b"\n", pos, found.end())
            pos = found.end()
        rt_info: tuple[RtInfo, ...] = ()
        if _END.match(xml, pos) is None:  # what the serializer writes after <edges>: the model's rt_info
            close = xml.rfind(b"</net>")
            if close < pos or _END.match(xml, close) is None:
                return None
            tail = etree.fromstring(b"<tail>" + xml[pos:close] + b"</tail>", etree.XMLParser(**PARSER_OPTIONS))
            if any(child.tag in ("layers", "edges") for child in tail):
                return None  # a second section: the careful path says so
            rt_el = None
            for child in tail:
                if child.tag == "rt_info":
                    rt_el = child
            rt_info = rt_children(rt_el) if rt_el is not None else ()
        if len(self.producer) != self.input_ports:
            return None  # an input port no edge feeds: the careful path says which
        ordered = self.topological()
        if ordered is None:
            return None
        builder = self.builder
        fields = {
            "name": net.get("name", ""),
            "ir_version": builder.ir_version,
            "layers": ordered,
            "edges": tuple(self.edge_list),
            "source": builder.source,
            "weights": builder.weights,
            "rt_info": rt_info,
            "xml": xml,
        }
        return IRModel.indexed(fields, self.layers, self.producer)

    # -- layers ------------------------------------------------------------------------------------------
    def layer(self, m: re.Match[bytes], line: int) -> Layer | None:
        """The layer of a match of :data:`_LAYER` whose tag starts at ``line``; None when anything is not ordinary."""
        _, raw_id, raw_name, raw_type, raw_version, raw_data, raw_rt, raw_in, raw_out = m.groups()
        words = self.words
        layer_id = raw_id.decode()
        ltype = words.get(raw_type)
        if ltype is None:
            ltype = self.word(raw_type)
        version = words.get(raw_version)
        if version is None:
            version = self.word(raw_version)
        inputs: tuple[Port, ...] = ()
        outputs: tuple[Port, ...] = ()
        in_ids: frozenset[str] = frozenset()
        if raw_in is not None:
            found = self.templates.get(raw_in) or self.template(raw_in)
            if found is None:
                return None
            ports, in_ids = found
            inputs = _ports(ports, line + self.xml.count(b"\n", m.start(2), m.start(8)))
        if raw_out is not None:
            found = self.templates.get(raw_out) or self.template(raw_out)
            if found is None:
                return None
            ports, out_ids = found
            if in_ids and not in_ids.isdisjoint(out_ids):
                return None  # a port id used twice: the careful path says which
            outputs = _ports(ports, line + self.xml.count(b"\n", m.start(2), m.start(9)))
        if not raw_data:
            data = NO_DATA
        elif ltype == "Const" and (parts := _CONST_DATA.fullmatch(raw_data)) is not None:
            # a Const's <data> as the serializer writes it: its offset is its own, so no cache would hit
            element_type, shape_text, offset, size = parts.groups()
            data = MappingProxyType(
                {"element_type": element_type.decode(), "shape": shape_text.decode(), "offset": offset.decode(),
                 "size": size.decode()}
            )  # fmt: skip
        else:
            data = self.data_of(raw_data)
        name = raw_name.decode()
        etype = shape = const = None
        if ltype == "Const" or ltype == "Parameter" or ltype == "Convert":
            if ltype == "Const":
                if len(outputs) != 1:
                    return None
                etype, shape, const = self.const(data, line, layer_id, name)
            else:
                builder = self.builder
                where = f"{self.source}:{line}: layer id={layer_id} name={name!r} ({ltype})"
                if ltype == "Parameter":
                    etype = builder.etype_attr(data, "element_type", where, required=True)
                    shape = builder.shape_attr(data, where, required=False)
                    if len(outputs) != 1:
                        return None
                elif "destination_type" in data:
                    etype = self.etypes.get(data["destination_type"])
                    if etype is None:
                        etype = builder.etype_attr(data, "destination_type", where, required=True)
                        if len(self.etypes) < _CACHE_SIZE:
                            self.etypes[data["destination_type"]] = etype
        rt_info = () if not raw_rt else self.rt_info_of(raw_rt)
        return _layer(layer_id, name, ltype, version, data, inputs, outputs, line, rt_info, etype, shape, const)

    def const(
        self, data: Mapping[str, str], line: int, layer_id: str, name: str
    ) -> tuple[ElementType, PartialShape, ConstData]:
        """A Const's element type, shape and bytes; the checks of :meth:`_Builder.const_data` where its element type
        and shape are seen for the first time, then only its offset and size (raises what the builder raises)."""
        key = (data.get("element_type"), data.get("shape"))
        layout = self.layouts.get(key)
        if layout is not None:
            offset, size = data.get("offset"), data.get("size")
            etype, shape, count, nbytes = layout
            weights = self.builder.weights
            if (
                offset is not None
                and size is not None
                and offset.isdigit()
                and size.isdigit()
                and offset.isascii()
                and size.isascii()
                and len(offset) <= 20
                and len(size) <= 20
                and int(size) == nbytes
                and weights is not None
                and int(offset) + nbytes <= weights.size
            ):
                return etype, shape, ConstData(int(offset), nbytes, count)
        builder = self.builder
        where = f"{self.source}:{line}: layer id={layer_id} name={name!r} (Const)"
        found_type = builder.etype_attr(data, "element_type", where, required=True)
        found_shape = builder.shape_attr(data, where, required=True)
        assert found_type is not None and found_shape is not None
        const = builder.const_data(data, found_type, found_shape, where)
        etype, shape = found_type, found_shape
        expected = etype.nbytes(const.count)
        if expected is not None and const.count > 0 and etype.kind != "dynamic" and len(self.layouts) < _CACHE_SIZE:
            self.layouts[key] = (etype, shape, const.count, expected)
        return etype, shape, const

    def word(self, raw: bytes) -> str:
        """``raw`` decoded, one str per distinct text (ids then match by identity in every later lookup)."""
        text = raw.decode()
        if len(self.words) < _WORDS:
            self.words[raw] = text
        return text

    def template(self, raw: bytes) -> _Template | None:
        """The ports of an ``<input>``/``<output>`` content, each with its line relative to the content's first, and
        their ids; None when a port is not ordinary or an id is used twice."""
        ports = []
        line = 0
        for ws, raw_id, raw_precision, raw_names, raw_dims, trailing in _PORTS.findall(raw):
            line += ws.count(b"\n")
            precision = None
            if raw_precision:
                precision = _PRECISIONS.get(raw_precision)
                if precision is None:
                    return None
            dims = self.dims.get(raw_dims)
            if dims is None:
                dims = self.parse_dims(raw_dims)
                if dims is None:
                    return None
            port_id = self.words.get(raw_id)
            if port_id is None:
                port_id = self.word(raw_id)
            names = tuple(raw_names.decode().split(",")) if raw_names else ()
            ports.append((port_id, precision, names, dims, line))
            line += raw_dims.count(b"\n") + trailing.count(b"\n")
        ids = frozenset(p[0] for p in ports)
        if len(ids) != len(ports):
            return None
        template = (tuple(ports), ids)
        if len(self.templates) < _CACHE_SIZE:
            self.templates[raw] = template
        return template

    def parse_dims(self, raw: bytes) -> tuple[int, ...] | None:
        dims = tuple(int(d) for d in _DIM.findall(raw))
        if len(dims) > self.builder.limits.max_rank:
            return None
        shared = shared_dims(dims)
        if len(self.dims) < _CACHE_SIZE:
            self.dims[raw] = shared
        return shared

    def data_of(self, raw: bytes) -> MappingProxyType[str, str]:
        """One mapping per distinct ``<data>`` text (mappings are read-only: layers may share one)."""
        data = self.data.get(raw)
        if data is None:
            data = MappingProxyType(dict(self.attributes(raw)))
            if len(self.data) < _CACHE_SIZE:
                self.data[raw] = data
        return data

    def rt_info_of(self, raw: bytes) -> tuple[RtInfo, ...]:
        """The ``<attribute>`` elements of a layer's ``<rt_info>`` (one tuple per distinct text: they are immutable)."""
        rt_info = self.rt_infos.get(raw)
        if rt_info is None:
            rt_info = tuple(RtInfo("attribute", tuple(self.attributes(attrs))) for attrs in _RT_ATTRIBUTE.findall(raw))
            if len(self.rt_infos) < _CACHE_SIZE:
                self.rt_infos[raw] = rt_info
        return rt_info

    @staticmethod
    def attributes(raw: bytes) -> list[tuple[str, str]]:
        return [(k.decode(), v.decode()) for k, v in _ATTR.findall(raw)]

    def layer_end(self, start: int) -> int:
        """Where the ``<layer>`` element starting at ``start`` ends (past its end tag); -1 if it cannot be told."""
        depth = 0
        for tag in _LAYER_TAGS.finditer(self.xml, start):
            if depth == 0 and tag.start() != start:
                return -1
            empty = tag[1]
            if empty is None:  # an end tag
                depth -= 1
            elif not empty:
                depth += 1
            if depth == 0:
                return tag.end()
        return -1

    def by_lxml(self, start: int, end: int, line: int) -> Layer:
        """The layer between ``start`` and ``end`` built by the lxml builder, its lines those of the file."""
        self.padding += line - 1
        if self.padding > len(self.xml) + (1 << 20):
            raise ValueError("too many layers off the serializer's layout")  # the streamed path is cheaper now
        parser = etree.XMLParser(**PARSER_OPTIONS)
        el = etree.fromstring(b"\n" * (line - 1) + self.xml[start:end], parser)
        layer = self.builder.layer(el)
        for port in layer.inputs + layer.outputs:  # edges find port ids by their text
            self.words.setdefault(port.id.encode(), port.id)
        return layer

    # -- edges ----------------------------------------------------------------------------------------------
    def edges(self, raw: bytes, line: int) -> bool:
        """The edges of an ``<edges>`` starting at ``line``, each joining an existing output port to an input port
        no other edge feeds; False when any does not (the careful path says which). Gathers what the model's
        indices and the topological order need on the way."""
        by_raw_id, words, layers = self.by_raw_id, self.words, self.in_file_order
        producer = self.producer
        indegree: list[int] = [0] * len(layers)
        succ: list[list[int] | None] = [None] * len(layers)
        self.indegree, self.succ = indegree, succ
        edges = self.edge_list
        add, new = edges.append, tuple.__new__
        try:
            for ws, raw_from, raw_out, raw_to, raw_in in _EDGE.findall(raw):
                line += ws.count(b"\n")
                from_index, to_index = by_raw_id[raw_from], by_raw_id[raw_to]
                src, dst = layers[from_index], layers[to_index]
                out_text, in_text = words[raw_out], words[raw_in]
                for p in src.outputs:
                    if p.id == out_text:
                        out_id = p.id
                        break
                else:
                    return False
                for p in dst.inputs:
                    if p.id == in_text:
                        in_id = p.id
                        break
                else:
                    return False
                from_id, to_id = src.id, dst.id
                producer[to_id, in_id] = (from_id, out_id)
                indegree[to_index] += 1
                after = succ[from_index]
                if after is None:
                    succ[from_index] = [to_index]
                else:
                    after.append(to_index)
                add(new(Edge, (from_id, out_id, to_id, in_id, line)))
        except KeyError:  # no such layer, or a port id no layer has
            return False
        return len(producer) == len(edges)  # else an input port is fed twice

    def topological(self) -> tuple[Layer, ...] | None:
        """The layers in :meth:`_Builder.topological`'s order (Kahn's, file order among equals); None on a cycle."""
        layers = self.in_file_order
        if len(self.indegree) != len(layers):  # no <edges>: every layer is a source
            self.indegree, self.succ = [0] * len(layers), [None] * len(layers)
        order = kahn_order(self.indegree, self.succ)
        return tuple([layers[i] for i in order]) if len(order) == len(layers) else None
