"""What both IR readers share about XML: how libxml2 is asked to read untrusted bytes, and how an element's name,
attributes and text are seen the way OpenVINO's reader (pugixml) sees them.

pugixml knows no namespaces: ``xmlns`` is an ordinary attribute and ``p:data`` is another name than ``data``. So an
element is known by the name written in the file: its local name with the prefix it was written with, if any
(``<data xmlns="urn:x">`` is ``data``, ``<p:data>`` is ``p:data``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml import etree

from ovreduce.ir.model import RtInfo

__all__ = [
    "PARSER_OPTIONS",
    "NoExternalResources",
    "Unmap",
    "attributes",
    "declaration_first",
    "declared_encoding",
    "doctype_at",
    "ends_with_net",
    "legacy_refusal",
    "name",
    "not_well_formed",
    "pugixml_chars",
    "pugixml_declarations",
    "pugixml_encoding",
    "rt_children",
    "text",
]

PARSER_OPTIONS: dict[str, bool] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    # Comments and processing instructions are kept (and skipped by the readers): dropped by libxml2, the texts on
    # either side of one would merge, where pugixml keeps them apart (<dim>1<!---->2</dim> is 1 to OpenVINO).
    "remove_comments": False,
    "remove_pis": False,
    "collect_ids": False,
}


class NoExternalResources(etree.Resolver):  # type: ignore[misc]
    """Answers every request for an external DTD or entity with an empty document.

    Even with ``load_dtd=False`` and ``resolve_entities=False``, libxml2 (2.14, under lxml 6.1) opens the
    external subset a DOCTYPE names (``<!DOCTYPE net SYSTEM "/some/path">``) and external parameter
    entities: a FIFO there blocks the parse forever. The readers refuse a DOCTYPE before libxml2 reads the file
    (:func:`doctype_at`, of an 8-bit or UTF-16 file); this resolver keeps one in any other encoding off the file
    system too.
    """

    def resolve(self, system_url: str, public_id: str, context: object) -> object:
        return self.resolve_string("", context)


# What may stand before a DOCTYPE after a byte order mark: blanks, comments and processing instructions (the XML
# declaration among them), each to its first end, as XML reads them
_PROLOG_MISC = re.compile(rb"(?:[ \t\r\n]++|<!--.*?-->|<\?.*?\?>)*+", re.DOTALL)
_DECLARATIONS = (b"<!DOCTYPE", b"<!ENTITY")


def doctype_at(xml: bytes) -> tuple[str, int, int] | None:
    """The DOCTYPE (or ENTITY) declaration of the document, as ``("DOCTYPE" or "ENTITY", line, column)``; None where
    it has none. XML has one place for one, its prolog: after the XML declaration, blanks, comments and processing
    instructions, before the root element (an ENTITY declaration is one only inside a DOCTYPE, and out of one is
    taken as one here too). The same text anywhere else (a comment, a processing instruction, a CDATA section, an
    attribute, after the root element) is text, and OpenVINO reads the file. A UTF-16 file is read as such."""
    head, start = xml[:2], 0
    if head in (b"\xff\xfe", b"<\x00", b"\xfe\xff", b"\x00<"):
        codec = "utf-16-le" if head in (b"\xff\xfe", b"<\x00") else "utf-16-be"
        start = 2 if head[0] != ord("<") and head[1] != ord("<") else 0  # (a byte order mark)
        xml = xml[start : start + (len(xml) - start) // 2 * 2].decode(codec, "replace").encode("utf-8", "replace")
        start = 0
    elif xml.startswith(b"\xef\xbb\xbf"):
        start = 3
    pos = _PROLOG_MISC.match(xml, start).end()  # type: ignore[union-attr]  # (it matches the empty string)
    for said in _DECLARATIONS:
        if xml.startswith(said, pos):
            before = xml[start:pos]
            line = 1 + before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n")
            return said[2:].decode(), line, len(before) - max(before.rfind(b"\n"), before.rfind(b"\r"))
    return None


_LATE_DECLARATION = re.compile(rb"(\xef\xbb\xbf)?([ \t\r\n]+)(<\?xml[ \t\r\n][^?<>]*\?>)")


_ENCODING_ATTRIBUTE = re.compile(rb"""\bencoding\s*=\s*(["'])[^"']*\1""")
_DECLARED_RE = re.compile(rb"""<\?xml\s[^>]{0,200}?\bencoding\s*=\s*(["'])([^"']{0,40})\1""")


def pugixml_encoding(xml: bytes) -> str | None:
    """The encoding OpenVINO's XML parser (pugixml's ``get_buffer_encoding``) reads 8-bit text in, which libxml2 is
    told: latin-1 where a declaration at the very start names ``ISO-8859-1`` or ``latin1``, else UTF-8, whatever else
    it names (``windows-1252``) or wherever else it stands; None for UTF-16 and UTF-32 (a byte order mark, or ``<``
    written in 16 or 32 bits), which libxml2 tells itself."""
    if xml.startswith((b"\xfe\xff", b"\xff\xfe", b"\x00\x00\xfe\xff", b"\x00\x00\x00<", b"\x00<", b"<\x00")):
        return None
    return "iso-8859-1" if declared_encoding(xml) in ("iso-8859-1", "latin1") else "utf-8"


def declared_encoding(xml: bytes) -> str | None:
    """The encoding an XML declaration at the very start of the bytes names, in lower case (None: none)."""
    declared = _DECLARED_RE.match(xml) if xml.startswith(b"<?xm") else None
    return None if declared is None else declared[2].decode("ascii", "replace").lower()


def declaration_first(xml: bytes) -> bytes:
    """The document with an XML declaration that blanks precede (``\\n<?xml version="1.0"?>``, as a C++ raw string
    writes one) moved before them. XML allows the declaration only at the very start, and libxml2 refuses it anywhere
    else; pugixml reads past the blanks, and OpenVINO reads the file, in UTF-8 whatever encoding it names (which is
    blanked). The bytes keep their length and every line after the declaration its number; ``xml`` itself where there
    is nothing to move (the usual case, at no cost)."""
    if xml[:1] not in (b" ", b"\t", b"\r", b"\n", b"\xef"):
        return xml
    late = _LATE_DECLARATION.match(xml)
    if late is None:
        return xml
    # pugixml takes no encoding from it (it reads the text as UTF-8): blanked, the declaration names none to libxml2
    declaration = _ENCODING_ATTRIBUTE.sub(lambda named: b" " * len(named[0]), late[3])
    return (late[1] or b"") + declaration + late[2] + xml[late.end() :]


_MARKUP = re.compile(rb"<!--|<!\[CDATA\[|<\?")
_PI_TARGET = re.compile(rb"[A-Za-z_:\x80-\xff][A-Za-z0-9_:.\-\x80-\xff]*")  # pugixml's symbol characters
_LIBXML2_DECLARATION = re.compile(
    rb"""(?:\xef\xbb\xbf)?<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])1\.[0-9]+\1"""
    rb"""(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?"""
    rb"""(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(?:yes|no)\3)?[ \t\r\n]*\?>"""
)


def pugixml_declarations(xml: bytes) -> bytes | None:
    """``xml`` with each XML declaration libxml2 may refuse written as a comment of the same bytes' length (its line
    ends kept), for the careful reader to read again: OpenVINO's pugixml skips every processing instruction whose
    target is ``xml`` in any case, wherever it stands (after a comment, twice, inside an element) and whatever it
    holds (another version, none, any other attribute), as it skips any other; libxml2 reads one only at the very
    start, of version 1.x, with its encoding and standalone attributes in order. None where the file holds no
    declaration but one libxml2 reads at its start (nothing to read again). Comments and CDATA sections are skipped
    as both parsers skip them."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        found = _MARKUP.search(xml, pos)
        if found is None:
            break
        token = found[0]
        close = b"-->" if token == b"<!--" else b"]]>" if token == b"<![CDATA[" else b"?>"
        end = xml.find(close, found.end())
        if end < 0:
            break
        pos = end + len(close)
        if token == b"<?":
            target = _PI_TARGET.match(xml, found.end())
            if target is not None and target[0].lower() == b"xml":
                spans.append((found.start(), pos))
    if not spans or (len(spans) == 1 and _LIBXML2_DECLARATION.fullmatch(xml, 0, spans[0][1]) is not None):
        return None
    out = bytearray(xml)
    for start, stop in spans:
        inner = bytes(b if b in b"\r\n" else 0x20 for b in xml[start + 4 : stop - 3])
        out[start:stop] = b"<!--" + inner + b"-->"
    return bytes(out)


def ends_with_net(xml: bytes) -> bool:
    """Whether the document ends with ``</net>`` (blanks after it aside): a file that does not is most likely cut
    short (or has a comment after its root), which both readers tell before any work."""
    return xml[-4096:].rstrip(b" \t\n\r").endswith(b"</net>")


def not_well_formed(xml: bytes) -> etree.XMLSyntaxError | ValueError | None:
    """Why libxml2 refuses the whole document (None: it is well-formed); it builds nothing, and releases the GIL
    while it parses."""
    parser = etree.XMLParser(target=_Nothing(), **PARSER_OPTIONS)
    parser.resolvers.add(NoExternalResources())
    try:
        etree.fromstring(xml, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        return exc
    except etree.LxmlError as exc:
        return ValueError(str(exc))
    return None


class _Nothing:
    """A parser target that builds nothing: libxml2 parses, and only its errors reach Python."""

    def close(self) -> None:
        return None


def name(el: etree._Element) -> str:
    """``el``'s name as written in the file (prefix included); "" for a comment or processing instruction."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    if tag[0] != "{":
        return tag
    local = tag[tag.index("}") + 1 :]
    return f"{el.prefix}:{local}" if el.prefix else local


_FEW_ATTRIBUTES = 64
_XML = "http://www.w3.org/XML/1998/namespace"  # the xml: prefix, bound in every document and in no nsmap


def attributes(el: etree._Element, unmap: Unmap | None = None) -> dict[str, str]:
    """``el``'s attributes by the names written in the file (``xmlns`` declarations are not among them).

    lxml reads ``el.attrib`` item by item, each lookup walking libxml2's list of attributes from the start:
    quadratic, 12 s for one element with 40,000 attributes. XPath's ``@*`` walks the list once; it costs a few
    microseconds more per call, so it is kept for elements with many attributes.
    """
    attrib = el.attrib
    few = len(attrib) <= _FEW_ATTRIBUTES  # len() is one walk of the list
    found: dict[str, str] = dict(attrib) if few else {str(a.attrname): str(a) for a in el.xpath("@*")}
    if any(k[0] == "{" for k in found):
        prefixes = {_XML: "xml"} | {uri: prefix for prefix, uri in el.nsmap.items() if prefix}
        found = {_prefixed(k, prefixes): v for k, v in found.items()}
    if unmap is not None:
        found = {k: unmap(v) for k, v in found.items()}
    return found


def _prefixed(key: str, prefixes: dict[str, str]) -> str:
    if key[0] != "{":
        return key
    uri, _, local = key[1:].partition("}")
    prefix = prefixes.get(uri)
    return f"{prefix}:{local}" if prefix else local


def text(el: etree._Element, unmap: Unmap | None = None, *, runs: bool = False) -> str | None:
    """``el``'s text as OpenVINO reads it (pugixml's ``text()``): its first run of characters between markup that
    is not all blanks (None when there is none). With ``runs`` (a document parsed with its CDATA sections kept,
    which may hold one), a CDATA section is a run of its own: ``12<![CDATA[3]]>`` is ``12``, as to pugixml."""
    if runs:
        for run in el.xpath("text()"):
            if not run.isspace():
                return str(run) if unmap is None else unmap(str(run))
        return None
    first: str | None = el.text
    if first is not None and not first.isspace():
        return first if unmap is None else unmap(first)
    for child in el:
        tail: str | None = child.tail
        if tail is not None and not tail.isspace():
            return tail if unmap is None else unmap(tail)
    return None


def rt_children(el: etree._Element, unmap: Unmap | None = None) -> tuple[RtInfo, ...]:
    """The ``<rt_info>`` tree under ``el`` (comments and processing instructions left out)."""
    return tuple(
        RtInfo(name(c), tuple(attributes(c, unmap).items()), rt_children(c, unmap))
        for c in el
        if isinstance(c.tag, str)
    )


def legacy_refusal(el: etree._Element) -> tuple[str, etree._Element] | None:
    """What OpenVINO refuses in the legacy ``<meta_data>`` of ``el`` (a ``<net>`` or a body), which it reads where
    ``el`` has no ``<rt_info>``: the first of its children (text too, whose name is "") that is not
    ``<cli_parameters>`` and has no ``value`` attribute, with the element it is in or is; None: nothing."""
    meta = None
    for child in el:
        tag = name(child)
        if tag == "rt_info":
            return None
        if tag == "meta_data" and meta is None:
            meta = child
    if meta is None:
        return None
    if meta.text is not None and not _blank(meta.text):
        return "", meta
    for child in meta:
        tag = name(child)
        if tag and tag != "cli_parameters" and "value" not in attributes(child):
            return tag, child
        if child.tail is not None and not _blank(child.tail):
            return "", meta
    return None


def _blank(run: str) -> bool:
    """Whether pugixml drops a run of text as blank (its blanks: space, tab, LF, CR)."""
    return not run.strip(" \t\n\r")


# -- characters XML 1.0 has no place for, which pugixml reads ---------------------------------------------------
Unmap = Callable[[str], str]
"""Gives a text libxml2 read from :func:`pugixml_chars`' bytes the characters pugixml reads there."""

_ASIDE = 0xF0000  # the first of the private-use characters that stand for them while libxml2 reads
# (code point -> the character standing for it): C0 controls (NUL, by reference only: pugixml ends the text there),
# U+FFFE and U+FFFF
_STAND_INS = {c: _ASIDE + c for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20))} | {
    0xFFFE: _ASIDE + 0x20,
    0xFFFF: _ASIDE + 0x21,
}
_BACK = {stand_in: chr(c) for c, stand_in in _STAND_INS.items()}
_PUGIXML_CHARS = re.compile(
    rb"<!\[CDATA\[.*?\]\]>|&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));|[\x01-\x08\x0b\x0c\x0e-\x1f]|(\xef\xbf[\xbe\xbf])",
    re.S,
)
_BOM = b"\xef\xbb\xbf"


def pugixml_chars(xml: bytes) -> tuple[bytes, Unmap] | None:
    """The document with what XML 1.0 refuses and OpenVINO's reader (pugixml, no validating parser) reads put in a
    form libxml2 reads, and the function that gives each text read from it pugixml's characters; None where there is
    nothing of the kind (or the document holds the private-use characters that stand for them, U+F0000 to U+F0021).

    These are: a character reference to a C0 control (``&#27;``, which OpenVINO's own serializer writes for one in a
    layer's name or an rt_info value), to U+FFFE or U+FFFF, or to NUL (``&#0;``: pugixml's text ends there, and so
    does the text read); the same characters written raw (but NUL, which OpenVINO refuses); a second byte order mark
    at the start of the file. Each becomes a reference to a private-use character (the line numbers stay), which
    the returned function maps back. CDATA sections are left as they are; a UTF-16 document is given as UTF-8, less
    the code units of a surrogate pair without their other half, which pugixml drops.
    """
    encoding = pugixml_encoding(xml)
    dropped = False
    if encoding is None:  # UTF-16 (with its byte order mark: libxml2 reads none without) as UTF-8, lines kept
        if not xml.startswith((b"\xff\xfe", b"\xfe\xff")) or xml.startswith(b"\xff\xfe\x00\x00"):
            return None
        try:
            text = xml.decode("utf-16", "surrogatepass")
        except UnicodeDecodeError:  # an odd number of bytes
            return None
        # pugixml drops a code unit of a surrogate pair that has no other half (utf16_decoder), as libxml2 refuses it
        text, dropped = _LONE_SURROGATE.sub("", text), _LONE_SURROGATE.search(text) is not None
        xml, encoding = _BOM + text.encode("utf-8"), "utf-8"
    start = 0
    while xml.startswith(_BOM) and xml.startswith(
        _BOM, start + len(_BOM)
    ):  # pugixml skips the first as a byte order mark, the rest as text
        start += len(_BOM)
    clash = b"\xf3\xb0\x80" in xml if encoding == "utf-8" else False
    changed = start > 0 or dropped

    def stand_in(found: re.Match[bytes]) -> bytes:
        nonlocal clash, changed
        whole = found[0]
        if whole[:1] == b"<":  # a CDATA section: pugixml and libxml2 read it as it is
            return whole
        if whole[:2] == b"&#":
            code = int(found[1], 16) if found[1] is not None else int(found[2])
            if _ASIDE <= code <= _ASIDE + 0x21:
                clash = True
            if code not in _STAND_INS:
                return whole
        elif found[3] is not None:  # U+FFFE or U+FFFF, raw
            if encoding != "utf-8":
                return whole  # latin-1: three characters XML takes
            code = 0xFFFE if whole[2] == 0xBE else 0xFFFF
        else:
            code = whole[0]
        changed = True
        return b"&#x%X;" % _STAND_INS[code]

    mapped = _PUGIXML_CHARS.sub(stand_in, xml[start:] if start else xml)
    if clash or not changed:
        return None
    return mapped, _unmap


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in text decoded with surrogatepass: a pair is decoded whole
_STANDING_IN = re.compile("[\U000f0000-\U000f0021]")


def _unmap(read: str) -> str:
    if _STANDING_IN.search(read) is None:
        return read
    back = read.translate(_BACK)
    return back.partition("\x00")[0]  # pugixml's texts end at a NUL
