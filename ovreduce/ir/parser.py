"""XML -> :class:`~ovreduce.ir.model.IRModel`, treating every file as untrusted.

Two readers, one contract (the pattern of CPython's ``json.scanner``): :mod:`ovreduce.ir.careful` reads any
well-formed IR in one streaming pass and is the specification; :mod:`ovreduce.ir.fast` reads the layout OpenVINO's
serializer writes from the bytes, builds the very same model, and answers "not mine" for anything else. Both hand
what they read to :mod:`ovreduce.ir.build`, the only code that makes layers, ports and models.

libxml2 never resolves entities, loads a DTD, or touches the network or the file system here, and any document
with a DOCTYPE is refused; it bounds the nesting depth (256), and :class:`ParseLimits` bound the document size,
the layer count, ranks and body depth. Every problem is raised as an :class:`~ovreduce.errors.IRError` subclass
whose message names the file, line, layer and what was expected. A file with a problem costs two passes at most:
the fast reader's, which declines it, and the careful reader's.
"""

from __future__ import annotations

import os
from pathlib import Path

from ovreduce.errors import IRStructureError, LimitExceededError
from ovreduce.files import FileError, read_bounded
from ovreduce.ir.build import SUPPORTED_IR_VERSIONS, Builder, ParseLimits
from ovreduce.ir.fast import read_fast
from ovreduce.ir.gcpause import gc_paused
from ovreduce.ir.model import IRModel
from ovreduce.ir.reading import declaration_first
from ovreduce.ir.weights import Weights

__all__ = ["SUPPORTED_IR_VERSIONS", "ParseLimits", "gc_paused", "load_ir", "parse_ir"]


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
    return parse_ir(data, weights, source=str(path), expected_bin=_described(weights_path), limits=limits)


def _described(weights_path: Path) -> str:
    """The expected ``.bin``, with why it cannot be read where a link by its name leads nowhere (OpenVINO reads
    the model without weights then, as when there is no file)."""
    try:
        weights_path.stat()
    except OSError as exc:
        if os.path.lexists(weights_path):
            return f"{weights_path}, a link that leads to no file: {exc.strerror or exc}"
    return str(weights_path)


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
    xml = declaration_first(xml)
    with gc_paused():
        model = read_fast(xml, Builder(source, weights, expected_bin, limits))
        if model is None:
            from ovreduce.ir.careful import read_careful  # imported only for a file the fast reader declines

            model = read_careful(xml, Builder(source, weights, expected_bin, limits))
        # Model Optimizer's mean values, which OpenVINO reads in every IR version (a UTF-16 file is searched too)
        if b"<pre-process" in xml or xml[:2] in (b"\xff\xfe", b"\xfe\xff"):
            from ovreduce.ir.preprocess import pre_process_note

            note = pre_process_note(model, xml)
            if note is not None:
                object.__setattr__(model, "notes", (*model.notes, note))
        return model
