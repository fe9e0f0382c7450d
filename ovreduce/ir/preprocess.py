"""An IR's ``<pre-process>`` block (Model Optimizer's mean values), read and judged as OpenVINO's IR reader does.

OpenVINO reads the ``<net>``'s first ``<pre-process>`` in every IR version once it has built the model: it finds
the input that ``reference-layer-name`` names (blank: the first Parameter of rank 4, else the first), checks the
per-channel means (``<channel id><mean value/></channel>``, or ``<mean offset size/>`` blobs in the ``.bin``) against
that input's static shape, and inserts a Subtract of the means after it. It refuses the model where a check fails;
each refusal here is said in its words. A valid block changes no shape (the means broadcast over the input): the
model's reader keeps it as a note, since the model OpenVINO runs subtracts the means before every layer that reads
that input.
"""

from __future__ import annotations

import re
import struct

from lxml import etree

from ovreduce.errors import IRStructureError, WeightsError
from ovreduce.ir.model import IRModel, Layer
from ovreduce.ir.reading import PARSER_OPTIONS, NoExternalResources, Unmap, attributes, name, pugixml_chars

__all__ = ["pre_process_note"]

_BLANKS = " \t\n\r\f\v"
_UINT = re.compile(r"[ \t\n\r\f\v]*\+?[0-9]+")  # std::stoll over the whole text, not negative
_FLOAT = re.compile(r"[ \t\n\r\f\v]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # istream >> float, to eof


def pre_process_note(model: IRModel, xml: bytes) -> str | None:
    """What OpenVINO does with the model's ``<pre-process>`` (None where there is none).

    Raises:
        IRStructureError: OpenVINO refuses the block (its message), or crashes on it.
        WeightsError: mean blobs past the ``.bin``, or with no ``.bin``.
    """
    parser = etree.XMLParser(**PARSER_OPTIONS)
    parser.resolvers.add(NoExternalResources())
    unmap: Unmap = str
    try:
        root = etree.fromstring(xml, parser)  # (both readers found the document well-formed)
    except etree.XMLSyntaxError:  # characters XML 1.0 has no place for, which OpenVINO's reader (and ovreduce's) reads
        mapped = pugixml_chars(xml)
        if mapped is None:
            raise
        root, unmap = etree.fromstring(mapped[0], parser), mapped[1]
    block = next((el for el in root if name(el) == "pre-process"), None)
    if block is None:
        return None
    line = block.sourceline
    where = f"{model.source}{f':{line}' if line else ''}: <pre-process>"

    def refused(why: str, error: type[IRStructureError] | type[WeightsError] = IRStructureError) -> Exception:
        return error(f"{where}: {why}; OpenVINO refuses the model", line=line)

    params = [layer for layer in model.layers if layer.type == "Parameter"]
    ref = unmap(attributes(block).get("reference-layer-name", "")).strip(_BLANKS)
    target: Layer | None
    if not ref:  # OpenVINO's fallback: the first input of rank 4, else the first input
        if not params:
            raise refused("no reference-layer-name and no Parameter to apply it to")
        target = next((p for p in params if p.shape is not None and p.shape.rank == 4), params[0])
    else:
        target = next((p for p in params if p.name == ref), None)
        if target is None:
            raise refused(f"pre-process name ref '{ref}' refers to un-existing input")
    shape = target.shape
    if shape is None or not shape.is_static:
        raise refused(f"can not apply pre-process for '{target.name}' input")
    dims = shape.to_list()
    if len(dims) < 2:
        raise refused("network did not define input dimensions properly")
    if len(dims) > 5:
        raise refused(f"Unsupported input dimensions rank {len(dims)} for pre-process input '{target.name}'")
    channels = dims[0] if len(dims) == 3 else dims[1]  # CHW is the legacy 3-D layout; NC, NCHW, NCDHW
    mean_shape = [1] if len(dims) == 2 else [1, *dims[1:]] if len(dims) == 3 else [1, *dims[2:]]
    etype = target.element_type
    kind_of = "dynamic" if etype is None else etype.kind
    itemsize = 32 if kind_of == "string" else 0 if etype is None else (etype.bitwidth + 7) // 8  # (a std::string's)

    scalars: set[tuple[int, float]] = set()
    blobs: set[tuple[int, int, int]] = set()
    next_id = 0
    for channel in block:
        if name(channel) != "channel":
            continue
        attrs = attributes(channel)
        number = _uint(attrs["id"], "channel", "id", refused) if "id" in attrs else next_id
        next_id += 1
        mean = next((el for el in channel if name(el) == "mean"), None)
        if mean is None:
            continue
        given = attributes(mean)
        if "value" not in given and "size" not in given:
            raise refused("mean should have at least one of the following attribute: value, size")
        if "value" in given:
            text = given["value"]
            if _FLOAT.fullmatch(text) is None:
                raise refused(f'node <mean> has attribute "value" = "{text}" which is not a floating point')
            scalars.add((number, struct.unpack("<f", struct.pack("<f", float(text)))[0]))
        if "size" in given and "offset" in given:
            size = _uint(given["size"], "mean", "size", refused)
            offset = _uint(given["offset"], "mean", "offset", refused)
            count = 1
            for d in mean_shape:
                count *= d
            if count * itemsize != size:
                raise refused(f"mean blob size mismatch expected input, got: {size} expecting "
                              f"[{','.join(map(str, mean_shape))}] x {itemsize}")  # fmt: skip
            if model.weights is None:
                raise refused("the mean values lie in the .bin, and there is none", WeightsError)
            if offset + size > model.weights.size:
                raise refused("mean value offset and size are out of weights size range", WeightsError)
            blobs.add((number, size, offset))
    if scalars and blobs:
        raise refused("mean values have different types")
    ids = sorted(item[0] for item in (scalars or blobs))
    if not ids:
        return None  # no means: OpenVINO inserts nothing
    if len(ids) != channels:
        raise refused(f"Number of mean values ({len(ids)}) is not equal to number of channels ({channels})")
    beyond = next((i for i in ids if i >= channels), None)
    if beyond is not None:
        raise refused(f"Mean values channel index {beyond} is out of range ({channels})")
    if blobs and len(set(ids)) != len(ids):  # a channel without its blob: a null input to the Concat OpenVINO builds
        missing = min(set(range(channels)) - set(ids))
        twice = min(i for i in ids if ids.count(i) > 1)
        raise IRStructureError(
            f"{where}: two mean blobs for channel {twice} and none for channel {missing}: OpenVINO's reader crashes "
            f"on the model (SIGSEGV); expected one <channel> for each of the {channels} channels",
            line=line,
        )
    # the Constant of the means in the input's type, then the Subtract, as OpenVINO makes them
    if kind_of == "string" and scalars:
        raise refused("Constant does not support writing elements of type 'f32' into Constant of type 'string'")
    if kind_of == "dynamic":
        raise refused("Element not supported" if scalars else "Tensor was not initialized.")
    if etype is not None and etype.name in ("boolean", "string"):
        raise refused(f"This operation does not support inputs with element type: {etype.name}")
    kind = "one value per channel" if scalars else f"a {mean_shape[1:] or [1]} blob per channel from the .bin"
    return (
        f"<pre-process>{f' (line {line})' if line else ''}: OpenVINO subtracts mean values ({kind}, {channels} "
        f"channels) from input {target.name!r} as it reads the model: a Subtract after the input, before every "
        f"layer that reads it. The shapes are unchanged; the values those layers get are the input less the means"
    )


def _uint(text: str, element: str, attr: str, refused: object) -> int:
    """OpenVINO's reading of an unsigned 64-bit attribute (std::stoll over the whole text, not negative)."""
    if _UINT.fullmatch(text) is None or int(text) >= 2**63:
        assert callable(refused)
        raise refused(f'node <{element}> has attribute "{attr}" = "{text}" which is not an unsigned 64 bit integer')
    return int(text)
