"""The fast reader: the IR as OpenVINO's serializer writes it, read straight from the bytes by compiled patterns.

A Python object for each of the hundreds of thousands of elements an lxml tree holds costs more than OpenVINO's
whole C++ reader needs for the file. This reader matches the layout the serializer writes with a handful of
compiled patterns and hands what they capture to :class:`ovreduce.ir.build.Builder`, the one builder; meanwhile
libxml2 checks on another thread that the whole document is well-formed (it releases the GIL while it parses).

It returns the model, or None: "not mine". None for any file outside the grammar below and for any file with a
problem; the careful reader (:mod:`ovreduce.ir.careful`, the specification) then reads it and says what is wrong.
It never decides that a file is wrong, and what it builds is the careful reader's model, lines included
(``tests/ir/test_readers.py`` compares the two on every sample, corpus model and generated variant).

**The grammar it reads** (anything else is not its):

- bytes without CR (line ends to normalise), an optional UTF-8 BOM and ``<?xml version="1.x"?>`` declaration
  (encoding UTF-8 if any), then ``<net`` with attributes, ``<layers>``; blanks are spaces, tabs and LFs;
- each layer ``<layer id="ID" name="..." type="..." version="..." ...>`` (these four first, in this order), then at
  most one each, in this order: ``<data .../>``, ``<rt_info>`` of ``<attribute .../>`` only, ``<input>``,
  ``<output>``, then ``</layer>``; no sub-graph body;
- each port ``<port id="ID"`` with optional ``precision`` then ``names`` (no backslash), then ``<dim>`` elements
  holding ``-1`` or up to 18 digits, nothing else;
- ``</layers>``, an optional ``<edges>`` of ``<edge from-layer="ID" from-port="ID" to-layer="ID" to-port="ID"/>``,
  then anything well-formed up to ``</net>`` without a second ``<layers>`` or ``<edges>`` (the model's rt_info);
- every attribute value in double quotes, holding no ``<``, ``&``, tab or LF (nothing to unescape or normalise);
  attribute names without a prefix and none an ``xmlns`` declaration; ``ID`` is ``0`` or digits not starting with 0.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType

from lxml import etree

from ovreduce.errors import IRError, LimitExceededError
from ovreduce.ir.build import NO_DATA, Builder, RawEdge
from ovreduce.ir.model import IRModel, Layer, Port, RtInfo
from ovreduce.ir.reading import PARSER_OPTIONS, ends_with_net, legacy_refusal, name, not_well_formed, rt_children

__all__ = ["read_fast"]

_ID = rb"(?:0|[1-9][0-9]{0,17})"
_NAME = rb"(?!xmlns)[A-Za-z_][A-Za-z0-9_.-]*"
_VALUE = rb'"[^"<&\t\n]*"'  # a value as the serializer writes it: nothing to unescape or normalise
_ATTRS = rb"((?:[ \t]+" + _NAME + rb"=" + _VALUE + rb")*)"  # attributes on the start tag's own line
_NO_GROUP_ATTRS = rb"(?:[ \t]+" + _NAME + rb"=" + _VALUE + rb")*"
_PORT = (
    rb'<port id="' + _ID + rb'"(?: precision="[A-Za-z0-9_]+")?(?: names="[^"<&\t\n\\]*")?[ \t]*'
    rb"(?:/>|>(?:[ \t\n]*+<dim>(?:-1|[0-9]{1,18})</dim>)*+[ \t\n]*+</port>)"
)
_PROLOG = re.compile(
    rb'(?:\xef\xbb\xbf)?(?:<\?xml[ \t]+version="1\.[0-9]"(?:[ \t]+encoding="(?i:utf-8)")?'
    rb'(?:[ \t]+standalone="(?:yes|no)")?[ \t]*\?>)?[ \t\n]*+<net' + _ATTRS + rb"[ \t]*>[ \t\n]*+<layers>"
)
_LAYER = re.compile(
    rb'[ \t\n]*+<layer id="('
    + _ID
    + rb')" name="([^"<&\t\n]*)" type="([^"<&\t\n]*)" version="([^"<&\t\n]*)"'
    + _NO_GROUP_ATTRS
    + rb"[ \t]*>[ \t\n]*+"
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
_RT_ATTRIBUTE = re.compile(rb"<attribute" + _ATTRS + rb"[ \t]*/>")
_DIM = re.compile(rb"<dim>([^<]*)</dim>")
_ATTR = re.compile(rb'([A-Za-z_][A-Za-z0-9_.-]*)="([^"]*)"')
_EDGES = re.compile(
    rb"<edges>((?:[ \t\n]*+<edge "
    rb'from-layer="' + _ID + rb'" from-port="' + _ID + rb'" to-layer="' + _ID + rb'" to-port="' + _ID + rb'"'
    rb"[ \t]*/>)*+)[ \t\n]*+</edges>"
)
_EDGE = re.compile(  # over the text of an <edges> content _EDGES matched: ASCII, decoded at once
    r'([ \t\n]*)<edge from-layer="([0-9]+)" from-port="([0-9]+)" to-layer="([0-9]+)" to-port="([0-9]+)"'
)
_BLANK = re.compile(rb"[ \t\n]*+")
_END = re.compile(rb"[ \t\n]*+</net>[ \t\n]*+\Z")
_THREAD_FROM = 1 << 18  # a document this large is checked on another thread (starting one costs ~0.1 ms)
_CACHE_SIZE = 4096  # entries of each cache of repeated texts (they come from untrusted files: bounded)
_WORDS = 1 << 22  # distinct type and version names kept


def read_fast(xml: bytes, builder: Builder) -> IRModel | None:
    """The model of ``xml`` when it is in the grammar above and everything in it is right; None otherwise."""
    head = _PROLOG.match(xml)
    if head is None or not ends_with_net(xml) or b"\r" in xml:
        return None  # not its prolog, not its end (a truncated file: declined before any work), line ends
    verdict = _well_formed(xml)
    try:
        model = _Reader(xml, builder).read(head)
    except (IRError, LimitExceededError, etree.LxmlError, ValueError, UnicodeDecodeError):
        model = None
    finally:
        well_formed = verdict()
    return model if well_formed else None


def _well_formed(xml: bytes) -> Callable[[], bool]:
    """Start libxml2's check of the whole document (with the careful reader's options); the returned function
    waits for its verdict. A large document is checked on another thread, beside the reading."""
    if len(xml) < _THREAD_FROM:
        verdict = not_well_formed(xml) is None
        return lambda: verdict
    found: list[bool] = []
    thread = threading.Thread(
        target=lambda: found.append(not_well_formed(xml) is None), name="ovreduce-xml-check", daemon=True
    )
    thread.start()

    def wait() -> bool:
        thread.join()
        return found == [True]

    return wait


class _Reader:
    def __init__(self, xml: bytes, builder: Builder) -> None:
        self.xml = xml
        self.builder = builder
        self.words: dict[bytes, str] = {}  # see word()
        self.data: dict[bytes, Mapping[str, str]] = {}
        self.rt_infos: dict[bytes, tuple[RtInfo, ...]] = {}
        # an <input>'s and an <output>'s content -> its ports, lines counted from 0
        self.templates: tuple[dict[bytes, tuple[Port, ...]], dict[bytes, tuple[Port, ...]]] = ({}, {})

    def read(self, head: re.Match[bytes]) -> IRModel | None:
        xml = self.xml
        builder = self.builder
        net = dict(self.attributes(head[1]))
        builder.version(net.get("version"), None)
        pos, line = head.end(), 1 + xml.count(b"\n", 0, head.end())
        counted = pos  # ``line`` is the line at this position: the line ends before it are counted
        match_layer, count = _LAYER.match, xml.count
        layers: list[Layer] = []
        add = layers.append
        while True:
            match = match_layer(xml, pos)  # blanks, then a layer in the serializer's layout
            if match is None:
                blank = _BLANK.match(xml, pos)
                assert blank is not None
                if not xml.startswith(b"</layers>", blank.end()):
                    return None
                line += count(b"\n", counted, blank.end())
                pos = blank.end() + len(b"</layers>")
                break
            layer, line, counted = self.layer(match, line, counted)
            add(layer)
            pos = match.end()
        blank = _BLANK.match(xml, pos)
        assert blank is not None
        line += xml.count(b"\n", pos, blank.end())
        pos = blank.end()
        edges: list[RawEdge] = []
        if xml.startswith(b"<edges>", pos):
            found = _EDGES.match(xml, pos)
            if found is None:
                return None
            edges = self.edges(found[1], line)
            pos = found.end()
        rt_info: tuple[RtInfo, ...] = ()
        if _END.match(xml, pos) is None:  # what the serializer writes after <edges>: the model's rt_info
            close = xml.rfind(b"</net>")
            if close < pos or _END.match(xml, close) is None:
                return None
            tail = etree.fromstring(b"<tail>" + xml[pos:close] + b"</tail>", etree.XMLParser(**PARSER_OPTIONS))
            if any(name(child) in ("layers", "edges") for child in tail):
                return None  # a second section: the careful reader says what OpenVINO makes of it
            if legacy_refusal(tail) is not None:
                return None  # the careful reader says where
            rt_el = next((child for child in tail if name(child) == "rt_info"), None)
            rt_info = rt_children(rt_el) if rt_el is not None else ()
        return builder.model(net.get("name", ""), layers, edges, rt_info, xml)

    # -- layers ---------------------------------------------------------------------------------------------------
    def layer(self, m: re.Match[bytes], line: int, at: int) -> tuple[Layer, int, int]:
        """The layer of a match of :data:`_LAYER`, given the line at position ``at`` (before the tag); and the
        last line and position it counted (each line end is counted once, on the way to the next place that
        needs a line: the next layer's tag counts on from there)."""
        raw_id, raw_name, raw_type, raw_version, raw_data, raw_rt, raw_in, raw_out = m.groups()
        count = self.xml.count
        line += count(b"\n", at, m.start(1))
        at = m.start(1)
        layer_line = line
        builder = self.builder
        words = self.words
        layer_id = raw_id.decode()
        ltype = words.get(raw_type) or self.word(raw_type)
        version = words.get(raw_version) or self.word(raw_version)
        name = raw_name.decode()
        builder.count_layer()
        inputs: tuple[Port, ...] = ()
        outputs: tuple[Port, ...] = ()
        ins, outs = self.templates
        if raw_in is not None:
            template = ins.get(raw_in) or self.template(raw_in, output=False)
            line += count(b"\n", at, m.start(7))
            at = m.start(7)
            inputs = builder.ports_at(template, line)
        if raw_out is not None:
            template = outs.get(raw_out) or self.template(raw_out, output=True)
            line += count(b"\n", at, m.start(8))
            at = m.start(8)
            outputs = builder.ports_at(template, line)
        data: Mapping[str, str] | None = None  # no <data>
        if raw_data is not None:
            data = NO_DATA if not raw_data else self.data.get(raw_data) or self.data_of(raw_data)
        rt_info = () if not raw_rt else self.rt_infos.get(raw_rt) or self.rt_info_of(raw_rt)
        return builder.layer(layer_id, name, ltype, version, data, inputs, outputs, layer_line, rt_info), line, at

    def word(self, raw: bytes) -> str:
        """``raw`` decoded, one str per distinct text (a layer type or version: thousands of layers share one)."""
        text = raw.decode()
        if len(self.words) < _WORDS:
            self.words[raw] = text
        return text

    def template(self, raw: bytes, *, output: bool) -> tuple[Port, ...]:
        """The ports of an ``<input>``/``<output>`` content, each with its line relative to the content's first."""
        port = self.builder.port
        ports = []
        line = 0
        for ws, raw_id, raw_precision, raw_names, raw_dims, trailing in _PORTS.findall(raw):
            line += ws.count(b"\n")
            dims = [(d.decode(), None) for d in _DIM.findall(raw_dims)]
            precision = raw_precision.decode() if raw_precision else None
            names = raw_names.decode() if raw_names else None
            ports.append(port(raw_id.decode(), precision, names, dims, line, (), "", output=output))
            line += raw_dims.count(b"\n") + trailing.count(b"\n")
        template = tuple(ports)
        cache = self.templates[output]
        if len(cache) < _CACHE_SIZE:
            cache[raw] = template
        return template

    def data_of(self, raw: bytes) -> Mapping[str, str]:
        """One mapping per distinct ``<data>`` text (mappings are read-only: layers may share one)."""
        data = MappingProxyType(dict(self.attributes(raw)))
        if len(self.data) < _CACHE_SIZE:
            self.data[raw] = data
        return data

    def rt_info_of(self, raw: bytes) -> tuple[RtInfo, ...]:
        """The ``<attribute>`` elements of a layer's ``<rt_info>`` (one tuple per distinct text: they are immutable)."""
        rt_info = tuple(RtInfo("attribute", tuple(self.attributes(attrs))) for attrs in _RT_ATTRIBUTE.findall(raw))
        if len(self.rt_infos) < _CACHE_SIZE:
            self.rt_infos[raw] = rt_info
        return rt_info

    @staticmethod
    def attributes(raw: bytes) -> list[tuple[str, str]]:
        return [(k.decode(), v.decode()) for k, v in _ATTR.findall(raw)]

    # -- edges ----------------------------------------------------------------------------------------------------
    @staticmethod
    def edges(raw: bytes, line: int) -> list[RawEdge]:
        """The edges of an ``<edges>`` content starting at ``line`` (its ids, digits only, decoded in one go)."""
        edges: list[RawEdge] = []
        add = edges.append
        for ws, from_layer, from_port, to_layer, to_port in _EDGE.findall(raw.decode("ascii")):
            line += ws.count("\n")
            add((from_layer, from_port, to_layer, to_port, line))
        return edges
