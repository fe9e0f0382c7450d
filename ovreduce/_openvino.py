"""Lazy access to the OpenVINO runtime, shared by every module that needs it.

Importing OpenVINO costs about half a second, so nothing imports it until it is used: ``ovreduce check``
without the OpenVINO engine never does.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

from ovreduce.errors import BackendError

__all__ = ["bodies", "clean_message", "core", "openvino", "partial_shape", "read_ir"]

_NOISE = re.compile(r"^(Exception from \S+:\d+:|Check '.*' failed at \S+:\d+:)\s*$")


def openvino() -> Any:
    """The ``openvino`` module; :class:`BackendError` with the reason when it cannot be imported."""
    try:
        import openvino as ov
    except ImportError as exc:  # pragma: no cover - openvino is a core dependency
        raise BackendError(f"the OpenVINO runtime cannot be imported: {exc}") from None
    return ov


@cache
def core() -> Any:
    """One shared ``openvino.Core`` per process (it is thread-safe and expensive to create)."""
    return openvino().Core()


def clean_message(exc: BaseException) -> str:
    """OpenVINO's message without the C++ source locations it prefixes, on one line."""
    lines = [ln.strip() for ln in str(exc).splitlines()]
    kept = [ln for ln in lines if ln and not _NOISE.match(ln)]
    text = " ".join(kept) or str(exc).strip() or type(exc).__name__
    return re.sub(r"\s+", " ", text)


def partial_shape(ov_shape: Any) -> Any:
    """An ``openvino.PartialShape`` as an :class:`ovreduce.shapes.PartialShape`."""
    from ovreduce.shapes import Dimension, PartialShape

    if ov_shape.rank.is_dynamic:
        return PartialShape(None)
    dims = []
    for d in ov_shape:
        lo = max(int(d.get_min_length()), 0)
        hi = int(d.get_max_length())
        dims.append(Dimension(lo, None if hi < 0 else hi))
    return PartialShape(tuple(dims))


def read_ir(xml: bytes | str, weights: bytes | bytearray | memoryview | npt.NDArray[Any] | None = None) -> Any:
    """An ``openvino.Model`` from an IR held in memory: the XML text and the weights (no files needed).

    Raises whatever OpenVINO raises when it refuses the model.
    """
    import numpy as np

    ov = openvino()
    text = xml.decode("utf-8") if isinstance(xml, bytes) else xml
    if weights is None:
        raw = np.zeros(0, dtype=np.uint8)
    elif isinstance(weights, np.ndarray):
        raw = weights.reshape(-1).view(np.uint8)
    else:
        raw = np.frombuffer(weights, dtype=np.uint8)
    return core().read_model(text, ov.Tensor(raw))


def bodies(node: Any) -> list[tuple[str, Any]]:
    """OpenVINO's bodies of an If (then, else), a Loop or a TensorIterator (body), by ovreduce's role names.
    (Asking OpenVINO 2026.4 for a body past the last one crashes the process: the count is the op's own.)"""
    kind = node.get_type_name()
    if kind == "If":
        return [("then", node.get_function(0)), ("else", node.get_function(1))]
    if kind in ("Loop", "TensorIterator"):
        return [("body", node.get_function())]
    return []
