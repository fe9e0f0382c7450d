"""What every op is: :class:`Op`, the states its rules read and write, and the context they read them from.

An op is one small class: its IR ``type``, its own ``version`` (the opset OpenVINO's class of it came in,
``opset1`` for ``ReduceMean``), the ``opsets`` an IR may name it under, its boolean attributes, and two
rules the shape engine (:mod:`ovreduce.infer`) calls through the registry (:mod:`ovreduce.ops.registry`):

* :meth:`Op.infer`: the output port states from the input port states (shape, element type; an input's
  small constant value on demand) and the layer's attributes;
* :meth:`Op.fold`: the output's small constant value (axes, shapes) from the inputs' values (:meth:`Op.fold_output`:
  of an output past the first).

A rule for a new op (Convolution, MatMul, ShapeOf, ...) is a subclass overriding either, plus one registry
line. Nothing here imports NumPy or OpenVINO: ``ovreduce check`` reads every model through these rules.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, Protocol

from ovreduce.ir.dtypes import ElementType
from ovreduce.shapes import PartialShape

if TYPE_CHECKING:
    from ovreduce.ir.model import Layer, Port
    from ovreduce.ir.weights import Weights

__all__ = [
    "BOOLEAN_DEFAULTS",
    "INPUT_COUNT_REFUSED",
    "LAST_OPSET",
    "Bounds",
    "LayerContext",
    "LayerReads",
    "Op",
    "Origin",
    "PortState",
    "ValueInfo",
    "ValueKind",
    "declared_state",
    "input_count_refusal",
    "opset_number",
    "parse_bool_attr",
]

# "attributes": the ``data`` attributes, ``element_type``, the output ports (count, precisions, declared dims:
# a rule falling back to them), and the name in reasons only; "own shape": ``shape`` and ``element_type`` (a
# Const's).
LayerReads = Literal["attributes", "own shape"]
Origin = Literal["parameter", "const", "inferred", "declared", "unresolved", "reshape", "openvino"]
ValueKind = Literal["const", "runtime", "unresolved"]
Bounds = tuple[int, int | None]
"""One element of a runtime value as OpenVINO's bound evaluation knows it before run time: its lower and upper bound
(``(3, 3)``: it is 3; ``(2, 5)``: a dim of ``2..5``; an upper bound None: none is known, OpenVINO's type's largest
value)."""

# The newest opset whose ops OpenVINO 2026.4's IR reader knows in full. opset17 (still being written) holds
# only Parameter, Convert, ShapeOf and its new ops: OpenVINO refuses a ReduceMean with version="opset17".
LAST_OPSET = 16


@dataclass(frozen=True, slots=True)
class PortState:
    """What is known about one output port: its shape (None: unresolved), element type and origin; for an
    unresolved port, why (``"no native shape rule for SpaceToDepth (s2d)"``), when there is more to say; for a port
    with dims not known, why where ovreduce may know less than OpenVINO (a value it does not compute feeds them, or
    the file declares them)."""

    shape: PartialShape | None
    element_type: ElementType | None
    origin: Origin
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ValueInfo:
    """The small constant value of an output port (axes, a shape), or why it has none.

    ``values`` holds the elements flat, in row-major order; ``shape`` the tensor's shape when it is known
    (None: read the values as 1-D, which is what axes and shapes are).
    """

    kind: ValueKind
    values: tuple[int, ...] | None  # as stored, when constant and folded
    reason: str = ""  # why it is runtime/unresolved
    shape: tuple[int, ...] | None = None  # the value's own shape; None: 1-D (or unknown)
    known: tuple[Bounds | None, ...] | None = None  # a runtime value's elements' bounds, row-major (None: not known)
    reals: tuple[float, ...] | None = None  # a Const's non-integral floats (unresolved to every integer rule)
    # a runtime 1-D value a Concat puts together of as many inputs as it has elements, where its elements are not
    # known: the first element of each input that is a Const layer, None for any other input. It is what
    # OpenVINO's Broadcast reads of such a target when the target's bounds do not evaluate.
    pieces: tuple[int | None, ...] | None = None

    @property
    def element_shape(self) -> tuple[int, ...] | None:
        """The value's shape: :attr:`shape`, else 1-D of the values' length; None when not constant."""
        if self.shape is not None:
            return self.shape
        return None if self.values is None else (len(self.values),)


class LayerContext(Protocol):
    """What a rule may ask about the layer it runs for (the shape engine answers)."""

    @property
    def layer(self) -> Layer: ...

    @property
    def reshape(self) -> PartialShape | None:
        """The shape the caller gave this layer (a Parameter) instead of its own; None when none."""
        ...

    @property
    def weights(self) -> Weights | None: ...

    def input(self, index: int) -> PortState:
        """The state of the output port feeding input ``index``."""
        ...

    def value(self, index: int) -> ValueInfo:
        """The small constant value feeding input ``index`` (folded on demand)."""
        ...

    def input_values(self) -> list[ValueInfo]:
        """The values feeding every connected input, in port order."""
        ...

    def place(self) -> str:
        """Where the layer is, as a message that refuses the file begins: the model's source and the layer's line."""
        ...


class Op:
    """One op at one version. Subclasses set the class attributes and override the rules they know (a
    class serving many types, such as :class:`~ovreduce.ops.common.ShapePreserving`, sets them per instance).

    The base class is also the rule of an op nobody registered: its outputs keep the dims the IR declares,
    and it folds no value.
    """

    type: str = ""
    version: str = ""  # OpenVINO's version of the op ("opset1"); "" for a rule of any version
    opsets: range | None = None  # the N of each "opsetN" holding this version; None: any
    boolean_attributes: tuple[str, ...] = ()
    # What :meth:`infer` (and a reduction's ``analyse``) reads of its layer, when that is all it reads besides
    # the context's ``input`` and values (``value``, ``input_values``): the shape engine then runs it once per
    # distinct reading (a transformer stack repeats one block hundreds of times). None: anything.
    layer_reads: LayerReads | None = None
    inputs: range | None = None
    """How many inputs OpenVINO's op takes (None: not checked): a layer of another count is its refusal, whether or
    not the rule reads the inputs missing or left over."""

    @property
    def key(self) -> tuple[str, str]:
        """The op's registry key: ``(type, version)``."""
        return (self.type, self.version)

    def found_in(self, opset: int) -> bool:
        """Whether ``opsetN`` holds this version of the op."""
        return self.opsets is None or opset in self.opsets

    def input_counts(self, layer: Layer) -> range | None:
        """How many inputs this op takes at the layer's version: :attr:`inputs`."""
        return self.inputs

    def infer(self, ctx: LayerContext) -> Sequence[PortState]:
        """The output port states; ports left out keep the dims the IR declares for them."""
        return [declared_state(p) for p in ctx.layer.outputs]

    def fold(self, ctx: LayerContext) -> ValueInfo:
        """The value of output 0: runtime or unresolved when an input is, else :meth:`fold_values`."""
        inputs = ctx.input_values()
        if any(i.kind == "runtime" for i in inputs):
            return ValueInfo("runtime", None, next(i.reason for i in inputs if i.kind == "runtime"))
        if any(i.kind == "unresolved" or i.values is None for i in inputs):
            return ValueInfo("unresolved", None, next(i.reason for i in inputs if i.kind == "unresolved"))
        folded = self.fold_values(ctx.layer, [i.values for i in inputs if i.values is not None])
        if folded is not None:
            return folded
        layer = ctx.layer
        return ValueInfo(
            "unresolved", None,
            f"constant subgraph through {layer.type} layer {layer.name!r}, which ovreduce does not fold "
            f"(the openvino engine reads the model with OpenVINO)",
        )  # fmt: skip

    def fold_output(self, ctx: LayerContext, index: int) -> ValueInfo:
        """The value of output ``index``: :meth:`fold`'s, for an op of one output (Split's parts say otherwise)."""
        return self.fold(ctx)

    def fold_outputs(self, ctx: LayerContext, count: int) -> Sequence[ValueInfo]:
        """The values of outputs ``0 .. count - 1`` at once (:meth:`fold_output` of each), for a layer of many outputs:
        an op whose outputs differ (Split) overrides both, and reads its inputs once for all of them."""
        return (self.fold(ctx),) * count

    def fold_values(self, layer: Layer, values: Sequence[tuple[int, ...]]) -> ValueInfo | None:
        """The value computed from the inputs' constant values; None when this op does not fold."""
        return None

    def fold_key(self, layer: Layer) -> Hashable | None:
        """For an op without inputs: a key such that two layers of one model with equal keys :meth:`fold` to
        the same constant value (the shape engine folds such a value once); None when there is none."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


BOOLEAN_DEFAULTS: Mapping[str, bool] = MappingProxyType({
    "keep_dims": False, "transpose_a": False, "transpose_b": False, "special_zero": False, "exclude-pad": True,
    "m_pythondiv": True, "normalize_variance": False, "across_channels": False, "exclusive": False, "reverse": False,
    "allow_axis_skip": False,
})  # fmt: skip
"""What OpenVINO's reader leaves these boolean attributes at when it cannot read them (each op's own default, as
``read_model`` gives it): AvgPool excludes the padding and Divide floors unless told otherwise."""


def parse_bool_attr(text: str | None, default: bool = False) -> tuple[bool, bool]:
    """Read a boolean attribute the way OpenVINO's IR reader does: ``(value, recognised)``.

    ``true``/``1`` and ``false``/``0`` are recognised case-insensitively; anything else (``yes``,
    ``" true"``, ``2``...) is silently replaced by the default, which this function reports as
    ``recognised=False`` so callers can warn about it.
    """
    if text is None:
        return default, True
    lowered = text.lower()
    if lowered in ("true", "1"):
        return True, True
    if lowered in ("false", "0"):
        return False, True
    return default, False


_OPSET = re.compile(r"opset([1-9][0-9]{0,8})")  # (no opset has more digits: a longer run is no opset either)


def opset_number(version: str) -> int | None:
    """``N`` of ``"opsetN"`` (ASCII digits); None for anything else (``""``, ``"extension"``, ``"opset01"``,
    ``"opset²"``)."""
    match = _OPSET.fullmatch(version)
    return int(match.group(1)) if match else None


INPUT_COUNT_REFUSED = re.compile(r"index '\d+' out of range|\w+ takes [\w ]+ inputs?; the layer has \d+$")
"""A rule's refusal of a layer's input count, as :func:`input_count_refusal` and a rule reading an input past the
layer's (``index 'N' out of range``) word it."""


def input_count_refusal(op_type: str, counts: range, given: int) -> str:
    """OpenVINO's refusal of a layer of ``given`` inputs whose op takes ``counts`` of them, in words."""
    if counts.stop > 64:
        takes = f"{counts.start} or more inputs"
    else:
        takes = " or ".join(map(str, counts)) + (" input" if counts == range(1, 2) else " inputs")
    return f"{op_type} takes {takes}; the layer has {given}"


def declared_state(port: Port, etype: ElementType | None = None) -> PortState:
    """The state an output port's own ``<dim>``s and precision give (``etype`` overrides the precision)."""
    return _declared_state(port.dims, etype if etype is not None else port.precision)


@lru_cache(maxsize=4096)
def _declared_state(dims: tuple[int, ...], etype: ElementType | None) -> PortState:
    """Shared, immutable states: a large model repeats a few port shapes thousands of times."""
    if dims:
        return PortState(PartialShape.from_port_dims(dims), etype, "declared")
    return PortState(None, etype, "unresolved")
