"""The true line of an element past line 65535, which libxml2 does not keep, for the careful reader.

libxml2 stores an element's line in 16 bits: past line 65535, lxml's ``sourceline`` says 65535, or (libxml2's
XML_PARSE_BIG_LINES workaround) the line of some text after the element, which can be a later line. Below that
line it is exact: the line of the end of the start tag (its ``>``), counting LF only, as libxml2 counts.

For an element that says 65535 or more, the element's start tag is found in the bytes: the start tags, in document
order, are every ``<`` outside comments, CDATA sections and processing instructions that does not begin an end
tag (in well-formed XML without a DOCTYPE, the only places a ``<`` can stand otherwise), found by one compiled
pattern the first time such an element is asked about (a file of fewer lines never costs it). An element's place
in that order is counted in the tree: the elements of the root's children before its own, of the layers the
careful reader freed before it (:meth:`Lines.freed` counts them, in a file long enough to need it), and its place
inside its own subtree. The line is then that of the ``>`` of the start tag there, counted as libxml2 counts.
Where the tag found there is not the element's (the two counts disagree) or the bytes are not 8-bit text (UTF-16
and UTF-32), the line is not known and is said as None: no line rather than a wrong one.

The start tags of a whole subtree (a top-level layer with its bodies, or all the edges) are placed at once, on the
first question about one of its elements past the clamp; each line asked is then counted on from the last one.
"""

from __future__ import annotations

import re

import numpy as np
from lxml import etree

from ovreduce.ir.reading import name

__all__ = ["CLAMPED", "Lines"]

CLAMPED = 65535  # the largest line libxml2 stores; it says so for every element at or past it
_MARKUP = re.compile(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<[!/]|<", re.S)  # a lone '<': a start tag
_TAG_END = re.compile(rb"""(?:[^>"']++|"[^"]*+"|'[^']*+')*+>""")  # from a start tag's '<' to its '>'
_NAME_END = frozenset(b" \t\r\n/>")


def _start_tags(xml: bytes) -> list[int]:
    """The offset of every start tag's ``<``, in document order."""
    pi = xml.find(b"<?")
    if b"<!" not in xml and (pi == -1 or (pi <= 3 and xml.find(b"<?", pi + 2) == -1)):
        # no comment, CDATA section or processing instruction (but the declaration, which holds no '<'): every '<'
        # that does not begin an end tag begins a start tag, found at C speed
        buf = np.frombuffer(xml, np.uint8)
        at = np.flatnonzero(buf == ord("<"))
        after = buf[np.minimum(at + 1, len(buf) - 1)]
        found: list[int] = at[(after != ord("/")) & (after != ord("?"))].tolist()
        return found
    return [m.start() for m in _MARKUP.finditer(xml) if m.end() - m.start() == 1]


def _size(el: etree._Element) -> int:
    """The elements of ``el``'s subtree, itself included."""
    return sum(1 for _ in el.iter(etree.Element))


class Lines:
    """The lines of one document's elements, as :func:`ovreduce.ir.careful.read_careful` reads it."""

    def __init__(self, xml: bytes, encoding: str | None) -> None:
        self._xml = xml
        # None: UTF-16 or UTF-32, whose bytes do not count lines as 8-bit text does
        self._encoding = encoding
        self._long = encoding is not None and xml.count(b"\n") >= CLAMPED - 1  # it has lines past the clamp
        self._starts: list[int] | None = None  # the offset of each start tag's '<', in document order
        self._freed: dict[etree._Element, int] = {}  # the elements freed under each child of the root
        self._tops: dict[etree._Element, int] = {}  # the place in document order of each child of the root asked
        self._known: dict[etree._Element, int] = {}  # where the start tags of the last subtree asked about are
        self._unit: tuple[etree._Element | None, int] = (None, 0)  # that subtree and its size
        self._cursor = (0, 1)  # a byte offset and the line there, counted on from the last answer
        self._complete = False  # the whole document is read: a child of the root nothing was freed from is whole

    def freed(self, parent: etree._Element, child: etree._Element) -> None:
        """``child`` of ``parent`` (a child of the root) is about to be removed from the tree."""
        if self._long and isinstance(child.tag, str):
            unit, size = self._unit
            self._freed[parent] = self._freed.get(parent, 0) + (size if unit is child else _size(child))

    def complete(self) -> None:
        """libxml2 has read the whole document."""
        self._complete = True

    def of(self, el: etree._Element) -> int | None:
        """The line of ``el``'s start tag (of its ``>``); None where it cannot be known."""
        line: int | None = el.sourceline
        if line is None or line < CLAMPED:
            return line
        offset = self._known.get(el)
        if offset is None:
            try:
                self._known = self._around(el)
            except (ValueError, UnicodeError, LookupError):
                self._known = {}
            offset = self._known.get(el)
            if offset is None:
                return None
        tag = _TAG_END.match(self._xml, offset)
        if tag is None:
            return None
        line = self._line_at(tag.end() - 1)  # libxml2's line of an element is that of its start tag's '>'
        return line if line >= CLAMPED else None

    # -- past the clamp -------------------------------------------------------------------------------------------
    def _around(self, el: etree._Element) -> dict[etree._Element, int]:
        """Where the start tag of each element of the subtree ``el`` is found in begins: its child of the root's
        child (a top-level layer, an edge) or, once the document is read, its child of the root when none of that
        one's were freed."""
        if not self._long:
            return {}
        if self._starts is None:
            self._starts = _start_tags(self._xml)
        starts = self._starts
        path = [el]
        while (up := path[-1].getparent()) is not None:
            path.append(up)
        if len(path) == 1:
            unit, first = el, 0
        else:
            top = path[-2]
            first = self._top(top)
            if len(path) == 2 or (self._complete and top not in self._freed):
                unit = top
            else:
                unit = path[-3]
                first += 1 + self._freed.get(top, 0)
                first += sum(_size(s) for s in unit.itersiblings(preceding=True) if isinstance(s.tag, str))
        elements = list(unit.iter(etree.Element)) if len(path) > 1 else [el]
        self._unit = (unit, len(elements))
        end = first + len(elements)
        if (
            end > len(starts)
            or not self._agrees(unit, starts[first])
            or not self._agrees(elements[-1], starts[end - 1])
        ):
            return {}  # the two counts disagree
        return dict(zip(elements, starts[first:end], strict=True))

    def _top(self, top: etree._Element) -> int:
        """The place of a child of the root in document order (its elements before it are read and never freed)."""
        place = self._tops.get(top)
        if place is None:
            earlier = (s for s in top.itersiblings(preceding=True) if isinstance(s.tag, str))
            place = self._tops[top] = 1 + sum(_size(s) + self._freed.get(s, 0) for s in earlier)
        return place

    def _agrees(self, el: etree._Element, offset: int) -> bool:
        """Whether the start tag at ``offset`` is ``el``'s."""
        tag = b"<" + name(el).encode(self._encoding or "utf-8")
        return self._xml.startswith(tag, offset) and self._xml[offset + len(tag)] in _NAME_END

    def _line_at(self, pos: int) -> int:
        """The line at byte ``pos``, counted on from the last answer (the elements are mostly asked in order)."""
        at, line = self._cursor
        line = line + self._xml.count(b"\n", at, pos) if pos >= at else line - self._xml.count(b"\n", pos, at)
        self._cursor = (pos, line)
        return line
