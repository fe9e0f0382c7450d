"""What OpenVINO refuses in the runtime attributes of a layer's or port's ``<rt_info>`` in an IR v11.

OpenVINO's IR reader (``set_runtime_info`` in ``src/frontends/ir/src/ir_deserializer.cpp``) looks at the
``<attribute>`` children of the first ``<rt_info>`` only, and at those whose ``name`` and ``version`` are the type of
a runtime attribute it knows (``ov::pass::Attributes``, ``src/common/transformations/.../rt_info/attributes.cpp``);
it skips any other. It reads each known one's values (``RTInfoDeserializer``), refuses a value it cannot parse,
refuses the attributes it knows and cannot read, and refuses one given twice. The values' syntax is its own:
``old_api_map_order`` a list of unsigned integers (``str_to_container``), ``old_api_map_element_type`` an element
type, ``layout`` an ``ov::Layout`` (``src/core/src/layout.cpp``), ``fused_names`` a set of names
(``str_to_set_of_strings``). Messages quote OpenVINO's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ovreduce.errors import ElementTypeError, IRStructureError
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.model import RtInfo

__all__ = ["check_runtime_attributes"]

_READABLE = frozenset({"fused_names", "old_api_map_order", "old_api_map_element_type", "layout", "decompression",
                       "primitives_priority", "precise", "preprocessing", "memory_type"})  # fmt: skip
# Known to OpenVINO, with no way to read them from a file (their visit_attributes says no).
_UNREADABLE = frozenset({"nms_selected_indices", "strides_propagation", "DisableConstantFolding"})
_BLANKS = " \t\n\v\f\r"  # std::isspace in the C locale
_UINT = re.compile(r"[ \t\n\v\f\r]*0*([0-9]+)")  # a std::uint64_t as OpenVINO reads one: no sign; what follows ignored


def _fields(text: str) -> list[str]:
    """``text`` cut at commas as ``std::getline`` cuts it: a comma at the end begins no field, "" holds none."""
    fields = text.split(",")
    if fields[-1] == "":
        fields.pop()
    return fields


def _order(text: str) -> str | None:
    """OpenVINO's refusal of an ``old_api_map_order`` value: a list of unsigned 64-bit integers."""
    for field in _fields(text):
        if not field:
            return f'Cannot get vector of parameters! "{text}" is incorrect'
        match = _UINT.match(field)
        if match is None or len(match[1]) > 20 or int(match[1]) >= 1 << 64:
            return f"Cannot parse '{field}' in \"{text}\""
    return None


def _element_type(text: str) -> str | None:
    """OpenVINO's refusal of an ``old_api_map_element_type`` value: an element type's name, in any case."""
    try:
        element_type(text)
    except ElementTypeError:
        return f'"{text}" is not a member of enum element::Type_t'
    return None


def _names(text: str) -> str | None:
    """OpenVINO's refusal of a ``fused_names`` value: names between commas, each with a character other than a
    space."""
    for field in _fields(text):
        if not field.strip(" "):
            return f'Cannot get a set of strings from "{text}". Value "{field}" is incorrect'
    return None


class _LayoutError(Exception):
    pass


def _layout(text: str) -> str | None:
    """OpenVINO's refusal of a ``layout`` value, as ``ov::Layout``'s constructor parses it: ``NCHW`` (a name per
    letter, ``?`` for any, one ``...`` for any number of dims), ``[N,C,...]`` (names between commas), or
    ``**SCALAR**``; each name of letters, digits and ``_``, none twice."""
    try:
        _parse_layout(text)
    except _LayoutError as exc:
        return str(exc)
    return None


_ALIASES = {"BATCH": "N", "B": "N", "CHANNELS": "C", "CHANNEL": "C", "HEIGHT": "H", "WIDTH": "W", "DEPTH": "D"}


def _is_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _parse_layout(text: str) -> None:
    if not text:
        return  # the layout of any dims
    layout = text.strip(_BLANKS)
    if not layout:
        raise _LayoutError("Cannot parse ov::Layout from an empty string")
    if layout == "**SCALAR**":
        return
    seen: set[str] = set()

    def name(dim: str) -> None:
        if not dim:
            raise _LayoutError("Layout dimension name can't be empty")
        if not all(_is_alnum(c) or c == "_" for c in dim):
            raise _LayoutError(f"Layout name is invalid ({dim}). Only english letters, digits and _ is allowed")
        if not any(_is_alnum(c) for c in dim):
            raise _LayoutError(f"Layout name is invalid ({dim}). Name shall have alphanumeric characters")
        upper = dim.upper()
        upper = _ALIASES.get(upper, upper)
        if upper in seen:
            raise _LayoutError(f"Dimension ({upper}) is defined multiple times in layout")
        seen.add(upper)

    def names(part: str) -> None:
        if not part:
            raise _LayoutError("Empty sub-string detected while parsing layout")
        for dim in _fields(part):
            dim = dim.strip(_BLANKS)
            if dim != "?":
                name(dim)

    if len(layout) >= 2 and layout[0] == "[" and layout[-1] == "]":
        if len(layout) == 2:
            raise _LayoutError("Cannot parse ov::Layout from an empty string")
        inner = layout[1:-1]
        ellipsis = inner.find("...")
        if ellipsis < 0:
            names(inner)
            return
        left = inner[:ellipsis].strip(_BLANKS)
        if left:
            if left[-1] != ",":
                raise _LayoutError(f"Layout: Invalid left side ({inner})")
            names(left[:-1])
        right = inner[ellipsis + 3 :].strip(_BLANKS)
        if right:
            if right[0] != ",":
                raise _LayoutError(f"Layout: Invalid right side ({inner})")
            names(right[1:])
        return
    ellipsis = layout.find("...")
    after_ellipsis = False
    i = 0
    while i < len(layout):
        char = layout[i].upper() if layout[i].isascii() else layout[i]
        if char == ".":
            if after_ellipsis:
                raise _LayoutError("Multiple ... are not allowed")
            if i != ellipsis:
                raise _LayoutError("Undefined number of dimensions shall have ...")
            after_ellipsis = True
            i += 3
            continue
        if char != "?":
            name(char)
        i += 1


# The value each known attribute's visit_attributes reads, and its parser.
_VALUES: dict[str, tuple[str, Callable[[str], str | None], str]] = {
    "old_api_map_order": ("value", _order, "a list of non-negative integers"),
    "old_api_map_element_type": ("value", _element_type, "an element type"),
    "layout": ("layout", _layout, "a layout"),
    "fused_names": ("value", _names, "a list of names"),
}


def check_runtime_attributes(rt_info: tuple[RtInfo, ...], where: str) -> None:
    """Refuse what OpenVINO refuses in the runtime attributes of a layer's or port's ``<rt_info>`` (``where``), in the
    order it reads them: each attribute's values, then whether it came before."""
    seen: set[str] = set()
    for item in rt_info:
        if item.tag != "attribute":
            continue
        said = dict(item.attrs)
        name = said.get("name")
        if name is None or said.get("version") != "0":
            continue
        if name in _UNREADABLE:
            raise IRStructureError(f"{where}: <rt_info> holds the runtime attribute {name!r}, which OpenVINO knows "
                                   f"and cannot read (VisitAttributes is not supported for: {item.tag} attribute); "
                                   f"OpenVINO refuses the model")  # fmt: skip
        if name not in _READABLE:
            continue
        if name in _VALUES:
            key, parse, expected = _VALUES[name]
            text = said.get(key)
            refusal = None if text is None else parse(text)
            if refusal is not None:
                raise IRStructureError(f"{where}: <rt_info>: the runtime attribute {name!r} has {key}={text!r}; "
                                       f"expected {expected} (OpenVINO refuses the model: {refusal})")  # fmt: skip
        if name in seen:
            raise IRStructureError(f"{where}: <rt_info> holds the runtime attribute {name!r} twice; OpenVINO "
                                   f"refuses the model (multiple rt_info attributes are detected: {name})")  # fmt: skip
        seen.add(name)
