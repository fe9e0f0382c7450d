"""What every reader of IR XML shares: the IR versions read, how libxml2 is asked to read untrusted bytes, and the
pieces of a model that both readers (:mod:`ovreduce.ir.parser`'s lxml builder and :mod:`ovreduce.ir.canonical`)
build the same way."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from types import MappingProxyType

from lxml import etree

from ovreduce.ir.model import RtInfo

__all__ = [
    "NO_DATA",
    "PARSER_OPTIONS",
    "SUPPORTED_IR_VERSIONS",
    "NoExternalResources",
    "attributes",
    "kahn_order",
    "rt_children",
    "shared_dims",
]

SUPPORTED_IR_VERSIONS = (10, 11)
NO_DATA: MappingProxyType[str, str] = MappingProxyType({})  # shared by every layer without <data> attributes

PARSER_OPTIONS: dict[str, bool] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
    "collect_ids": False,
}


class NoExternalResources(etree.Resolver):  # type: ignore[misc]
    """Answers every request for an external DTD or entity with an empty document.

    Even with ``load_dtd=False`` and ``resolve_entities=False``, libxml2 (2.14, under lxml 6.1) opens the
    external subset a DOCTYPE names (``<!DOCTYPE net SYSTEM "/some/path">``) and external parameter
    entities: a FIFO there blocks the parse forever. The parser's sniff catches most DOCTYPEs first, but not
    one after 64 KiB or in UTF-16; this resolver keeps those off the file system too.
    """

    def resolve(self, system_url: str, public_id: str, context: object) -> object:
        return self.resolve_string("", context)


# Dims tuples seen before (a model repeats a few hundred): one tuple shared by every port declaring the same
# dims. Bounded: they come from untrusted files.
_DIM_CACHE_SIZE = 4096
_DIMS: dict[tuple[int, ...], tuple[int, ...]] = {}


def shared_dims(dims: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple shared by every port declaring ``dims`` (while the bounded cache has room)."""
    shared = _DIMS.get(dims)
    if shared is not None:
        return shared
    if len(_DIMS) < _DIM_CACHE_SIZE:
        _DIMS[dims] = dims
    return dims


_FEW_ATTRIBUTES = 64


def attributes(el: etree._Element) -> Iterable[tuple[str, str]]:
    """``el``'s attributes as (name, value) pairs in linear time.

    lxml reads ``el.attrib`` item by item, each lookup walking libxml2's list of attributes from the start:
    quadratic, 12 s for one <data> with 40,000 attributes. XPath's ``@*`` walks the list once; it costs a few
    microseconds more per call, so it is kept for elements with many attributes.
    """
    attrib = el.attrib
    if len(attrib) <= _FEW_ATTRIBUTES:  # len() is one walk of the list
        return attrib.items()  # type: ignore[no-any-return]
    return [(str(a.attrname), str(a)) for a in el.xpath("@*")]


def rt_children(el: etree._Element) -> tuple[RtInfo, ...]:
    """The ``<rt_info>`` tree under ``el`` (comments and processing instructions left out)."""
    return tuple(
        RtInfo(str(c.tag), tuple((str(k), str(v)) for k, v in attributes(c)), rt_children(c))
        for c in el
        if isinstance(c.tag, str)
    )


def kahn_order(indegree: list[int], succ: list[list[int] | None]) -> list[int]:
    """Kahn's order of nodes ``0 .. n-1`` (first in, first out, so file order among equals) given each node's
    in-degree and successors (one entry per edge). Fewer than n nodes come back when there is a cycle, and
    ``indegree`` is then left above 0 exactly for the nodes the walk could not reach."""
    ready = deque([i for i, n in enumerate(indegree) if n == 0])
    order: list[int] = []
    popleft, push, add = ready.popleft, ready.append, order.append
    while ready:
        i = popleft()
        add(i)
        after = succ[i]
        if after is not None:
            for j in after:
                left = indegree[j] - 1
                indegree[j] = left
                if left == 0:
                    push(j)
    return order
