"""The careful reader: one streaming pass of libxml2 over any well-formed IR, and the precise error of any other.

This is the specification of reading; :mod:`ovreduce.ir.fast` reads the serializer's own layout faster and must
build the very same model. Elements are known by the names OpenVINO's reader (pugixml) sees
(:func:`ovreduce.ir.reading.name`); of several ``<data>``, ``<input>``, ``<output>``, ``<rt_info>``, bodies or
sections, the first is read, as OpenVINO reads it; everything a value means is :mod:`ovreduce.ir.build`'s.

**Memory.** Each top-level ``<layer>`` is built as soon as libxml2 has read it. The layers before it are then freed,
never the layer itself: libxml2 is still appending the text that follows it (its tail) to the last node of
``<layers>``, in place, and a node freed under it is memory written after it is freed (a run of 40,000 CRLFs
between two layers crashed the process that way). So the whole tree never exists at once: one layer and the text
around it, the edges, and the model.

**Errors.** The first problem in document order is raised. A problem of the IR (an attribute, a dangling edge) is
held while libxml2 reads on: a file that is not well-formed XML is refused as such, as OpenVINO refuses it, whatever
else is wrong in it. Element names with a prefix no ``xmlns`` declares, a second attribute of the same name, and
references to undeclared entities are not well-formed XML: libxml2 refuses them though pugixml reads past them.
"""

from __future__ import annotations

import re

from lxml import etree

from ovreduce.errors import IRError, IRStructureError, IRSyntaxError, LimitExceededError
from ovreduce.ir.build import Builder, RawEdge
from ovreduce.ir.lines import Lines
from ovreduce.ir.model import BODY_ROLES, Body, IRModel, Layer, Port, RtInfo
from ovreduce.ir.reading import (
    PARSER_OPTIONS,
    NoExternalResources,
    Unmap,
    attributes,
    declared_encoding,
    doctype_at,
    ends_with_net,
    legacy_refusal,
    name,
    not_well_formed,
    pugixml_chars,
    pugixml_declarations,
    pugixml_encoding,
    rt_children,
    text,
)

__all__ = ["read_careful"]

_CHUNK = 1 << 16
# What libxml2 says of a character XML 1.0 has no place for (a reference, raw in an attribute value, raw in text)
_CHAR_REFUSALS = ("invalid xmlChar value", "invalid character in attribute value", "invalid Char value")
_BOMS = (b"\xef\xbb\xbf\xef\xbb\xbf", b"\xff\xfe\xff\xfe", b"\xfe\xff\xfe\xff")  # a second byte order mark
_UTF16 = (b"\xff\xfe", b"\xfe\xff")  # UTF-16's byte order marks
_BLANK = re.compile(rb"\s*\Z")
_AT_END = re.compile(r",? line [0-9]+, column [0-9]+\Z")
_SUBGRAPH_TAGS = frozenset({*BODY_ROLES, *(m for _, m in BODY_ROLES.values()), "back_edges"})
_MAPS = ("input", "output")
_OWNER = {m: (b,) for b, (_, m) in BODY_ROLES.items()} | {"back_edges": ("body",)}


def read_careful(xml: bytes, builder: Builder) -> IRModel:
    """The model of ``xml``, or the precise :class:`~ovreduce.errors.IRError` of its first problem; its 8-bit text read
    in the encoding OpenVINO reads it in (:func:`~ovreduce.ir.reading.pugixml_encoding`).

    Raises:
        IRError: the bytes are not a readable IR (subclasses say why).
        LimitExceededError: the layer count, rank or body depth exceeds the builder's limits.
    """
    try:
        return _read_mapped(xml, builder, None)
    except IRSyntaxError:
        # XML declarations libxml2 refuses and pugixml skips (another version, no version, another place, twice, in
        # any case): read again with each written as a comment. Only a file libxml2 refuses costs it.
        quiet = pugixml_declarations(xml)
        if quiet is None:
            raise
        fresh = Builder(builder.source, builder.weights, builder.expected_bin, builder.limits)
        return _read_mapped(quiet, fresh, pugixml_encoding(xml), xml)


def _read_mapped(xml: bytes, builder: Builder, encoding: str | None, original: bytes | None = None) -> IRModel:
    """:func:`_read`, and again with the characters XML 1.0 has no place for standing in for themselves where libxml2
    refuses one; ``encoding``: the one OpenVINO reads the text in, where it is not what the bytes themselves say
    (None: theirs); ``original``: the file's own bytes, where ``xml`` is a rewriting of them."""
    original = xml if original is None else original
    try:
        return _read(xml, builder, original, None, encoding)
    except IRSyntaxError as exc:
        # Characters XML 1.0 has no place for, which OpenVINO reads (:func:`~ovreduce.ir.reading.pugixml_chars`), and
        # a UTF-16 code unit of a surrogate pair without its other half, which it drops: read again with them
        # standing in for themselves (dropped). Only a file libxml2 refuses for such a character costs it.
        utf16 = xml.startswith(_UTF16) and "Invalid bytes in character encoding" in exc.message  # a lone surrogate
        if not any(said in exc.message for said in _CHAR_REFUSALS) and not xml.startswith(_BOMS) and not utf16:
            raise
        mapped = pugixml_chars(xml)
        if mapped is None:
            raise
        fresh = Builder(builder.source, builder.weights, builder.expected_bin, builder.limits)
        return _read(mapped[0], fresh, original, mapped[1], encoding)


def _read(xml: bytes, builder: Builder, original: bytes, unmap: Unmap | None, encoding: str | None = None) -> IRModel:
    source = builder.source
    if _BLANK.match(xml):
        raise IRSyntaxError(f"{source}: the file is empty; expected an OpenVINO IR XML document (<net>)")
    declared = doctype_at(xml)  # before libxml2 reads a byte of it: a DOCTYPE can expand entities or reach files
    if declared is not None:
        raise _no_doctype(source, *declared)
    if not ends_with_net(xml):
        # Most likely cut short: libxml2 says where before a layer is built (its message at the end would win over
        # anything the layers showed). A comment after </net> costs this one pass more.
        early = not_well_formed(xml)
        if isinstance(early, etree.XMLSyntaxError):
            raise _syntax_error(source, xml, early)
    encoding = encoding or pugixml_encoding(xml)
    # CDATA sections kept apart from the text around them, as pugixml keeps them (a ``<dim>`` is its first run)
    parser = etree.XMLPullParser(
        events=("end",), tag="{*}layer", encoding=encoding, **PARSER_OPTIONS, strip_cdata=False
    )
    parser.resolvers.add(NoExternalResources())
    reader = _Reader(builder, Lines(xml, encoding), unmap, cdata=b"CDATA" in xml or b"C\x00D\x00A\x00T\x00A" in xml)
    try:
        for start in range(0, len(xml), _CHUNK):
            parser.feed(xml[start : start + _CHUNK])
            for _, el in parser.read_events():
                reader.ended(el)
        root = parser.close()
        reader.lines.complete()
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(source, xml, exc) from None
    except ValueError as exc:  # e.g. an encoding declaration lxml cannot honour
        raise IRSyntaxError(f"{source}: not a readable XML document: {exc}") from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:  # (in an encoding doctype_at does not read)
        raise _no_doctype(source)
    if reader.held is not None:
        raise reader.held
    return reader.model(root, original)


def _syntax_error(source: str, xml: bytes, exc: etree.XMLSyntaxError) -> IRSyntaxError:
    if not exc.lineno:
        # With entities unresolved, libxml2's push parser stops at an undefined one without saying so ("no element
        # found"); the document parser says what and where. This costs a pass, for such files only.
        precise = not_well_formed(xml)
        if isinstance(precise, etree.XMLSyntaxError):
            exc = precise
    # lxml's offset is libxml2's 1-based column less one (SyntaxError's convention); say libxml2's column
    row = exc.lineno if isinstance(exc.lineno, int) and exc.lineno >= 1 else None
    column = exc.offset + 1 if row is not None and isinstance(exc.offset, int) and exc.offset >= 0 else None
    at = "" if row is None else f" at line {row}" if column is None else f" at line {row}, column {column}"
    msg = _AT_END.sub("", str(exc.msg or exc).strip())  # the position, said once, in front
    msg = msg.removesuffix(f" line {row}") if row is not None else msg  # libxml2's own words repeat it at times
    for said, what, placed in _BOUNDS:
        if said in msg:  # well-formed, but past one of libxml2's bounds, which ovreduce keeps (ir-reading.md)
            at, row, column = (at, row, column) if placed else ("", None, None)
            return IRSyntaxError(f"{source}: {what}{at}, past libxml2's bound, which ovreduce keeps though OpenVINO "
                                 f"reads it", line=row, column=column)  # fmt: skip
    wrong = _encoding_problem(xml) or (_not_utf8(xml) if "Invalid bytes in character encoding" in msg else None)
    if wrong is not None:
        return IRSyntaxError(f"{source}: {wrong}", line=row, column=column)
    encoding = _ENCODING_RE.fullmatch(msg)
    if encoding:
        return IRSyntaxError(f"{source}: the XML declaration names the encoding {encoding[1]!r}, which libxml2 cannot "
                             f"read (OpenVINO ignores it and reads the bytes as UTF-8); save the file as UTF-8, "
                             f"declared as such or not at all", line=row, column=column)  # fmt: skip
    return IRSyntaxError(f"{source}: not well-formed XML{at}: {msg}", line=row, column=column)


_BOUNDS = (  # (what libxml2 says, what it means, whether libxml2's position is that of the cause)
    ("Excessive depth in document", "elements nested more than 256 deep", True),
    ("Text node too long", "a run of text longer than 10,000,000 characters", True),
    # libxml2 says where it gave up on a long token, lines after it
    ("Buffer size limit exceeded", "an attribute value, name or other token longer than 10,000,000 characters", False),
    ("Comment too big found", "a comment longer than 10,000,000 characters", True),
    ("CData section too big found", "a CDATA section longer than 10,000,000 characters", True),
    ("too big found", "a processing instruction longer than 10,000,000 characters", True),  # "PI <target> too big"
    ("Name too long", "an element or attribute name longer than 50,000 characters", True),
)
_ENCODING_RE = re.compile(r"Unsupported encoding:? (.{1,80})")


def _encoding_problem(xml: bytes) -> str | None:
    """What libxml2 refuses in the way the bytes are encoded, in words (its own: "Blank needed here", "Char 0x0 out of
    allowed range"); None when that is not why."""
    if xml.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "the file is UTF-32 (its byte order mark says so), which libxml2 does not read; save it as UTF-8"
    head = xml[:4]  # '<' and the next character, each of two bytes, the other byte 0 (UTF-32 would have three)
    utf16 = len(head) == 4 and ((head[:2] == b"<\x00" and head[2] != 0 and head[3] == 0) or
                                (head[:2] == b"\x00<" and head[2] == 0 and head[3] != 0))  # fmt: skip
    if utf16 and not xml.startswith((b"<\x00?\x00", b"\x00<\x00?")):
        return ("the file is UTF-16 without a byte order mark, which XML requires of it (libxml2 reads one without "
                "only by an XML declaration); save it with its byte order mark, or as UTF-8")  # fmt: skip
    first = xml.removeprefix(b"\xef\xbb\xbf")[:1]
    if not utf16 and first and first[0] < 0x20 and first not in b"\t\n\r":
        if onnx_model_bytes(xml):
            return ("the file is an ONNX model (protobuf), not an OpenVINO IR's XML: 'ovreduce conform' reads ONNX "
                    "models; check, inspect, run and audit read an IR .xml (OpenVINO's ovc converts the one into the "
                    "other)")  # fmt: skip
        return (f"the file is not text: it begins with the byte 0x{first[0]:02x}, a control character no XML text "
                f"holds (the weights, the .bin, given as the .xml?)")  # fmt: skip
    return None


# The fields of ONNX's ModelProto (onnx.proto) and their protobuf wire types (0 varint, 2 length-delimited).
_MODEL_PROTO_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2, 26: 2}


def onnx_model_bytes(data: bytes) -> bool:
    """Whether ``data`` begins as a serialized ONNX ModelProto does: its first fields (up to four, or all of a short
    file) are ModelProto's, each of its wire type and within the bytes, one of them the IR version (field 1)."""
    position, fields, seen = 0, 0, set()
    while position < len(data) and fields < 4:
        tag, position = _varint(data, position)
        if tag is None or _MODEL_PROTO_FIELDS.get(tag >> 3) != tag & 7:
            return False
        value, position = _varint(data, position)
        if value is None:
            return False
        if tag & 7 == 2:
            position += value
            if position > len(data):
                return False
        seen.add(tag >> 3)
        fields += 1
    return 1 in seen


def _varint(data: bytes, position: int) -> tuple[int | None, int]:
    """A protobuf varint at ``position`` and the position after it; None where it is not one (cut short, too long)."""
    value = 0
    for shift in range(0, 64, 7):
        if position >= len(data):
            return None, position
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
    return None, position


def _not_utf8(xml: bytes) -> str | None:
    """Why bytes of an 8-bit encoding their declaration names, other than UTF-8, are not read (None: that is not
    why): OpenVINO reads them as UTF-8 (:func:`~ovreduce.ir.reading.pugixml_encoding`), and so does ovreduce."""
    named = declared_encoding(xml)
    if named is None or named.replace("-", "") == "utf8":
        return None
    try:
        xml.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (f"byte {exc.start} is not UTF-8, and the XML declaration names the encoding {named!r}: OpenVINO "
                f"applies no declared encoding but latin-1 (ISO-8859-1, in a declaration at the very start) and reads "
                f"8-bit text as UTF-8, as ovreduce does; save the file as UTF-8")  # fmt: skip
    return None


def _no_doctype(
    source: str, kind: str = "DOCTYPE", line: int | None = None, column: int | None = None
) -> IRSyntaxError:
    at = "" if line is None else f" at line {line}, column {column}"
    return IRSyntaxError(
        f"{source}: a {kind} declaration{at}: DOCTYPE/ENTITY declarations are not allowed (they can expand entities "
        f"or reach files); an OpenVINO IR never contains one",
        line=line,
        column=column,
    )


def _first(parent: etree._Element, wanted: str) -> etree._Element | None:
    for child in parent:
        if name(child) == wanted:
            return child
    return None


class _Reader:
    def __init__(self, builder: Builder, lines: Lines, unmap: Unmap | None, *, cdata: bool = False) -> None:
        self.builder = builder
        self.cdata = cdata  # the document may hold a CDATA section (texts are then read run by run)
        self.unmap = unmap  # the characters pugixml reads for those standing in for them (None: there are none)
        self.line = lines.of  # an element's line: libxml2's sourceline stops at 65535
        self.lines = lines
        self.layers: list[Layer] = []  # the top-level layers, in file order
        self.section: etree._Element | None = None  # the <layers> of <net> whose layers are the model's
        self.held: IRError | LimitExceededError | None = None  # the first problem, raised once the XML is read

    # -- the stream -----------------------------------------------------------------------------------------------
    def ended(self, el: etree._Element) -> None:
        """Called as each ``<layer>`` (by local name) ends: a top-level one is built, and those before it freed."""
        parent = el.getparent()
        root = None if parent is None else parent.getparent()
        if root is None or root.getparent() is not None or name(parent) != "layers":
            return  # the root, a layer in a body (built with its container), or a layer out of place
        while (before := el.getprevious()) is not None:  # complete, their tails too: nothing of libxml2's
            self.lines.freed(parent, before)
            parent.remove(before)
        if self.section is None:
            self.section = _first(root, "layers")
        if parent is not self.section or self.held is not None or name(el) != "layer":
            return
        try:
            if not self.builder.ir_version:
                self.check_root(root)
                version = root.get("version")
                unmapped = version if version is None or self.unmap is None else self.unmap(version)
                self.builder.version(unmapped, self.line(root))
            self.layers.append(self.layer(el))
        except (IRError, LimitExceededError) as exc:
            self.held = exc

    def check_root(self, root: etree._Element) -> None:
        if name(root).lower() != "net":  # as OpenVINO compares it
            raise IRStructureError(
                f"{self.builder.at(self.line(root))}: the root element is <{name(root)}>, expected <net>",
                line=self.line(root),
            )

    # -- the document ---------------------------------------------------------------------------------------------
    def model(self, root: etree._Element, xml: bytes) -> IRModel:
        builder = self.builder
        self.check_root(root)
        attrs = attributes(root, self.unmap)
        builder.version(attrs.get("version"), self.line(root))
        section = _first(root, "layers")
        if section is None:
            raise IRStructureError(
                f"{builder.at(self.line(root))}: <net> has no <layers> element", line=self.line(root)
            )
        edges_el = _first(root, "edges")
        rt_el = _first(root, "rt_info")
        model = builder.model(
            attrs.get("name", ""),
            self.layers,
            self.edges(edges_el),
            rt_children(rt_el, self.unmap) if rt_el is not None else (),
            xml,
        )
        self.legacy(root, "")  # OpenVINO reads it once the model is built
        return model

    def legacy(self, el: etree._Element, where: str) -> None:
        """OpenVINO's refusal of the legacy ``<meta_data>`` of ``el``, the ``<net>`` or a body (``where``: the
        container and the body's tag)."""
        refused = legacy_refusal(el)
        if refused is not None:
            self.builder.legacy_refusal(refused[0], self.line(refused[1]), where)

    def edges(self, edges_el: etree._Element | None) -> list[RawEdge]:
        if edges_el is None:
            return []
        edge_attrs = self.builder.edge_attrs
        found = []
        for el in edges_el:
            if name(el) == "edge":
                found.append(edge_attrs(attributes(el, self.unmap), self.line(el)))
        return found

    # -- layers ---------------------------------------------------------------------------------------------------
    def layer(self, el: etree._Element) -> Layer:
        builder = self.builder
        attrs = attributes(el, self.unmap)
        line = self.line(el)
        layer_id, layer_name, ltype = builder.layer_attrs(attrs.get("id"), attrs.get("name"), attrs.get("type"), line)
        builder.count_layer()
        where = builder.where(line, layer_id, layer_name, ltype)
        data: dict[str, str] | None = None
        inputs: tuple[Port, ...] | None = None
        outputs: tuple[Port, ...] | None = None
        rt: tuple[RtInfo, ...] | None = None
        sub: dict[str, etree._Element] = {}  # body elements, their port maps and back edges
        for child in el:
            tag = name(child)
            if tag == "data":
                if data is None:
                    data = attributes(child, self.unmap)
            elif tag == "input" or tag == "output":
                if tag == "input" and inputs is None:
                    inputs = self.ports(child, where, output=False)
                elif tag == "output" and outputs is None:
                    outputs = self.ports(child, where, output=True)
            elif tag == "rt_info":
                if rt is None:
                    rt = rt_children(child, self.unmap)
            elif tag in _SUBGRAPH_TAGS:
                sub.setdefault(tag, child)
        inputs, outputs = inputs or (), outputs or ()
        bodies = self.bodies(sub, where, inputs, outputs, ltype, line) if sub else ()
        return builder.layer(
            layer_id,
            layer_name,
            ltype,
            attrs.get("version", ""),
            data,
            inputs,
            outputs,
            line,
            rt or (),
            bodies,
        )

    def ports(self, parent: etree._Element, where: str, *, output: bool) -> tuple[Port, ...]:
        port = self.builder.port
        found = []
        for el in parent:
            if name(el) != "port":
                continue
            dims = []
            rt: tuple[RtInfo, ...] | None = None
            for d in el:
                tag = name(d)
                if tag == "dim":
                    dims.append((text(d, self.unmap, runs=self.cdata), self.line(d)))
                elif tag == "rt_info" and rt is None:
                    rt = rt_children(d, self.unmap)
            get = el.get if self.unmap is None else attributes(el, self.unmap).get
            found.append(
                port(get("id"), get("precision"), get("names"), dims, self.line(el), rt or (), where, output=output)
            )
        return tuple(found)

    # -- sub-graph bodies -----------------------------------------------------------------------------------------
    def bodies(
        self,
        sub: dict[str, etree._Element],
        where: str,
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        ltype: str | None,
        line: int | None = None,
    ) -> tuple[Body, ...]:
        """The bodies of a layer (``<body>``, ``<then_body>``, ``<else_body>``) with their port maps."""
        builder = self.builder
        for tag, el in sub.items():
            owner = _OWNER.get(tag)
            if owner is not None and not any(t in sub for t in owner):
                expected = " or ".join(f"<{t}>" for t in owner)
                line_of = self.line(el)
                at = "" if line_of is None else f", line {line_of}"
                raise IRStructureError(
                    f"{where}{at}: <{tag}> without {expected}; expected the body it maps", line=line_of
                )
        body_tags = [t for t in sub if t in BODY_ROLES]  # in document order, as ``sub`` was filled
        if not body_tags:
            return ()
        builder.enter_body(where, line)
        try:
            return tuple(self.body(sub, tag, where, inputs, outputs, ltype) for tag in body_tags)
        finally:
            builder.leave_body()

    def body(
        self,
        sub: dict[str, etree._Element],
        tag: str,
        where: str,
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        ltype: str | None,
    ) -> Body:
        builder = self.builder
        map_tag = BODY_ROLES[tag][1]
        body_el = sub[tag]
        layers_el = _first(body_el, "layers")
        if layers_el is None:
            raise IRStructureError(
                f"{builder.at(self.line(body_el))}: {where}: <{tag}> has no <layers> element; expected the body's "
                f"layers",
                line=self.line(body_el),
            )
        layers = [self.layer(el) for el in layers_el if name(el) == "layer"]
        map_el, back_el = sub.get(map_tag), sub.get("back_edges")
        body = builder.body(
            tag,
            self.line(body_el),
            layers,
            self.edges(_first(body_el, "edges")),
            []
            if map_el is None
            else [(name(e), attributes(e, self.unmap), self.line(e)) for e in map_el if name(e) in _MAPS],
            []
            if back_el is None
            else [(name(e), attributes(e, self.unmap), self.line(e)) for e in back_el if name(e) == "edge"],
            where,
            inputs,
            outputs,
            ltype=ltype,
        )
        self.legacy(body_el, f"{where}: <{tag}>")
        return body
