"""The one exception tree of ovreduce.

Every error the library raises on purpose is an :class:`OvReduceError` with a stable ``code`` (a
dotted string that tools and the REST API can match on) and a message that says *what* went wrong,
*where* (file, layer id and name, port) and *what was expected*.

::

    OvReduceError                       ovreduce
    ├── IRError                         ir            the input is not a readable OpenVINO IR
    │   ├── IRSyntaxError               ir.syntax     not XML, truncated, DOCTYPE/entities, too deep
    │   ├── IRVersionError              ir.version    <net version> other than 10 or 11
    │   ├── IRStructureError            ir.structure  wrong root, missing/invalid attributes, bad dims,
    │   │                                             duplicate ids, dangling edges, cycles
    │   ├── ElementTypeError            ir.element_type  unknown element type or precision
    │   └── WeightsError                ir.weights    missing .bin, Const outside the .bin, bad size
    ├── LimitExceededError              limit         a configured size/count limit was exceeded
    ├── ShapeInferenceError             shape         a layer's inputs violate its shape rule
    ├── NotFoundError                   not_found     unknown layer (or model, in the service)
    ├── InputError                      input         a user-supplied tensor, shape or option is wrong
    └── BackendError                    backend       a runtime could not be used
        └── DeviceNotAvailableError     backend.device  the requested device is not present
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "MAX_TIMEOUT_S",
    "BackendError",
    "DeviceNotAvailableError",
    "ElementTypeError",
    "IRError",
    "IRStructureError",
    "IRSyntaxError",
    "IRVersionError",
    "InputError",
    "LimitExceededError",
    "MemoryLimitError",
    "NotFoundError",
    "OvReduceError",
    "ShapeInferenceError",
    "WeightsError",
    "check_timeout",
]


class OvReduceError(Exception):
    """Base class of every error ovreduce raises on purpose."""

    code = "ovreduce"

    def __init__(self, message: str, *, layer_id: str | None = None, layer_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.layer_id = layer_id
        self.layer_name = layer_name

    def __str__(self) -> str:
        return self.message


class IRError(OvReduceError):
    """The input cannot be read as an OpenVINO IR.

    ``line`` and ``column`` are where in the XML the reader found the problem, when it knows: 1-based, as
    editors and SARIF count (the first character of the file is line 1, column 1); ``None`` where not known.
    They come from the reader's own position, never from the message (which may quote the file's text).
    """

    code = "ir"

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        layer_id: str | None = None,
        layer_name: str | None = None,
    ) -> None:
        super().__init__(message, layer_id=layer_id, layer_name=layer_name)
        self.line = line if line is not None and line >= 1 else None
        self.column = column if self.line is not None and column is not None and column >= 1 else None


class IRSyntaxError(IRError):
    """The XML itself is malformed, forbidden (DOCTYPE, entities) or exceeds the parser's depth limit."""

    code = "ir.syntax"


class IRVersionError(IRError):
    """The ``<net version>`` is not one ovreduce reads."""

    code = "ir.version"


class IRStructureError(IRError):
    """The XML is well formed but is not a valid IR document."""

    code = "ir.structure"


class ElementTypeError(IRError):
    """An element type or port precision name is not one OpenVINO serializes."""

    code = "ir.element_type"


class WeightsError(IRError):
    """The ``.bin`` is missing, or a Const does not fit it."""

    code = "ir.weights"


class LimitExceededError(OvReduceError):
    """A configured limit (file size, layer count, element count, time) was exceeded; ``line``: where in a file, when
    the limit is one of reading it (bodies nested too deep)."""

    code = "limit"

    def __init__(
        self, message: str, *, line: int | None = None, layer_id: str | None = None, layer_name: str | None = None
    ) -> None:
        super().__init__(message, layer_id=layer_id, layer_name=layer_name)
        self.line = line if line is not None and line >= 1 else None


class MemoryLimitError(LimitExceededError):
    """A run needed more memory than the process may use: a tensor whose shape depends on input values, which
    cannot be sized before running, or an allocation the system refused."""

    code = "limit.memory"


class ShapeInferenceError(OvReduceError):
    """A layer's inputs violate its shape-inference rule (message in OpenVINO's terms)."""

    code = "shape"


class NotFoundError(OvReduceError):
    """A layer (or, in the service, a model) that was asked for does not exist.

    ``candidates``: what was probably meant (the ids paths of the layers with the very id or name asked for: body
    layers, or the layers an ambiguous key names), already named in the message; empty when the message names none.
    """

    code = "not_found"

    def __init__(
        self,
        message: str,
        *,
        candidates: Sequence[str] = (),
        layer_id: str | None = None,
        layer_name: str | None = None,
    ) -> None:
        super().__init__(message, layer_id=layer_id, layer_name=layer_name)
        self.candidates = tuple(candidates)


class InputError(OvReduceError):
    """A user-supplied tensor, shape or option is unusable.

    ``parameter`` names the library function's parameter the problem is about (``inputs``, ``shapes``,
    ``reshape``, ``save_ir``), so that a front end can say which of its own options gives it. ``twice``: one thing
    given twice in the call (an input by two of its names, as an array and a shape; a backend), which is in how the
    call is written, not in what it gives: a command line calls it a usage error.
    """

    code = "input"

    def __init__(
        self,
        message: str,
        *,
        parameter: str | None = None,
        layer_id: str | None = None,
        layer_name: str | None = None,
        twice: bool = False,
    ) -> None:
        super().__init__(message, layer_id=layer_id, layer_name=layer_name)
        self.parameter = parameter
        self.twice = twice


class BackendError(OvReduceError):
    """A runtime backend could not be used at all."""

    code = "backend"


class DeviceNotAvailableError(BackendError):
    """The requested OpenVINO device is not available on this machine."""

    code = "backend.device"


MAX_TIMEOUT_S = 2_147_483
"""The longest time limit, in seconds: OpenVINO waits for an inference a number of milliseconds that fits an int32."""


def check_timeout(timeout: float | None) -> None:
    """A time limit in seconds is None (none), or a number above 0 and at most :data:`MAX_TIMEOUT_S`.

    Raises:
        InputError: it is not.
    """
    if timeout is not None and not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        raise InputError(f"timeout must be a positive number of seconds up to {MAX_TIMEOUT_S} (24 days), not "
                         f"{timeout!r}", parameter="timeout")  # fmt: skip
