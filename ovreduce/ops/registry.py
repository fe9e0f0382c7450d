"""The registry: every op ovreduce knows, in one explicit ``{(type, version): op}`` table.

Adding an op is one class (in :mod:`ovreduce.ops.reduce` or :mod:`ovreduce.ops.common`) and one line in
:data:`_BUILTIN`. :func:`lookup` finds the op an IR layer's ``version="opsetN"`` names, as OpenVINO's IR
reader does: ``ReduceMean`` (ReduceMean-1) is found under opset1 ... opset16, ``ReduceL1`` (ReduceL1-4)
under opset4 ... opset16 only. :func:`resolve` is the lenient lookup the shape engine and the backends use:
it falls back to the newest registered version of the type, so a layer whose version OpenVINO would refuse
is still analysed as its type (that refusal is the OpenVINO cross-check's to report).

:func:`registered` adds ops for the duration of a ``with`` block, in the current context only (a
:class:`~contextvars.ContextVar`: other threads and tasks do not see them), so a test can add a toy op.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from types import MappingProxyType

from ovreduce.errors import InputError
from ovreduce.ops.attention import ScaledDotProductAttention13
from ovreduce.ops.base import LAST_OPSET, Op, opset_number
from ovreduce.ops.common import (
    UNARY_SHAPE_PRESERVING,
    Const0,
    Convert0,
    Declared,
    Parameter0,
    ShapePreserving,
)
from ovreduce.ops.elementwise import (
    ARITHMETIC,
    BITWISE,
    COMPARISON,
    LOGICAL,
    Binary,
    Bitwise,
    BitwiseNot13,
    FakeConvert13,
    FakeQuantize0,
    PReLU0,
    Select1,
)
from ovreduce.ops.indexing import (
    CumSum3,
    GatherElements6,
    GatherND,
    NonZero3,
    OneHot,
    Roll7,
    ScatterElementsUpdate,
    ScatterNDUpdate,
    ScatterUpdate3,
    TopK,
)
from ovreduce.ops.interpolate import Interpolate
from ovreduce.ops.movement import (
    Broadcast,
    Concat0,
    Gather,
    Pad,
    RandomUniform8,
    Range4,
    Reshape1,
    ShapeOf,
    Slice8,
    Split1,
    Squeeze,
    StridedSlice1,
    Tile0,
    Transpose1,
    Unsqueeze0,
    VariadicSplit1,
)
from ovreduce.ops.nn import (
    AvgPool,
    BatchNormInference,
    Convolution1,
    ConvolutionBackpropData1,
    GroupConvolution1,
    GroupNormalization12,
    MatMul0,
    MaxPool,
)
from ovreduce.ops.reduce import (
    ReduceL1_4,
    ReduceL2_4,
    ReduceLogicalAnd_1,
    ReduceLogicalOr_1,
    ReduceMax_1,
    ReduceMean_1,
    ReduceMin_1,
    ReduceProd_1,
    ReduceSum_1,
    ReductionOp,
)
from ovreduce.ops.state import Assign, ReadValue3, ReadValue6
from ovreduce.ops.subgraph import If8, Loop5, TensorIterator0

__all__ = [
    "OpKey",
    "boolean_attributes",
    "is_registered",
    "lookup",
    "opset_number",
    "reduction",
    "reductions",
    "registered",
    "resolve",
    "table",
    "type_name",
]

OpKey = tuple[str, str]  # (type, version): ("ReduceMean", "opset1"); version "" for a rule of any version

_MVN = ("normalize_variance", "across_channels")
_V1 = range(1, LAST_OPSET + 1)  # opset1 ... opset16


def _table(*ops: Op) -> Mapping[OpKey, Op]:
    table: dict[OpKey, Op] = {}
    for op in ops:
        if op.key in table:
            raise ValueError(f"{op!r} and {table[op.key]!r} share the registry key {op.key}")
        table[op.key] = op
    return MappingProxyType(table)


_BUILTIN = _table(
    # the reductions
    ReduceMean_1(),
    ReduceSum_1(),
    ReduceMax_1(),
    ReduceMin_1(),
    ReduceProd_1(),
    ReduceL1_4(),
    ReduceL2_4(),
    ReduceLogicalAnd_1(),
    ReduceLogicalOr_1(),
    # sources, Convert, values passing through
    Parameter0(),
    Const0(),
    Convert0(),
    # elementwise binary ops and Select
    *(Binary(t, "opset1", _V1) for t in ARITHMETIC),
    *(Binary(t, "opset1", _V1, boolean_output=True) for t in (*COMPARISON, *LOGICAL)),
    Select1(_V1),
    *(Bitwise(t, "opset13", range(13, LAST_OPSET + 1)) for t in BITWISE),
    BitwiseNot13(range(13, LAST_OPSET + 1)),
    # quantization emulated in floats: nncf's int8 (FakeQuantize), FP8 (FakeConvert)
    FakeQuantize0(_V1),
    FakeConvert13(range(13, LAST_OPSET + 1)),
    # an activation of a learned slope (HiFi-GAN vocoders, ONNX's PRelu)
    PReLU0(_V1),
    # neural-network ops
    MatMul0(_V1),
    Convolution1(_V1),
    GroupConvolution1(_V1),
    ConvolutionBackpropData1(_V1),
    MaxPool("opset1", range(1, 8)),
    MaxPool("opset8", range(8, 14)),
    MaxPool("opset14", range(14, LAST_OPSET + 1)),
    AvgPool("opset1", range(1, 14)),
    AvgPool("opset14", range(14, LAST_OPSET + 1)),
    BatchNormInference("opset1", range(1, 5)),
    BatchNormInference("opset5", range(5, LAST_OPSET + 1)),
    GroupNormalization12(range(12, LAST_OPSET + 1)),
    ScaledDotProductAttention13(),
    # data movement, and shapes as values
    Reshape1(_V1),
    Squeeze("opset1", range(1, 15)),
    Squeeze("opset15", range(15, LAST_OPSET + 1)),
    Unsqueeze0(_V1),
    Concat0(_V1),
    Transpose1(_V1),
    Gather("opset1", range(1, 7)),
    Gather("opset7", range(7, 8)),
    Gather("opset8", range(8, LAST_OPSET + 1)),
    Split1(_V1),
    VariadicSplit1(_V1),
    Tile0(_V1),
    Broadcast("opset1", range(1, 3)),
    Broadcast("opset3", range(3, LAST_OPSET + 1)),
    ShapeOf("opset1", range(1, 3)),
    ShapeOf("opset3", range(3, LAST_OPSET + 2)),  # opset17 holds ShapeOf too
    Range4(range(4, LAST_OPSET + 1)),
    RandomUniform8(range(8, LAST_OPSET + 1)),  # (a dropout kept at inference: a shape's value drawn into)
    Pad("opset1", range(1, 12)),
    Pad("opset12", range(12, LAST_OPSET + 1)),
    StridedSlice1(_V1),
    Slice8(range(8, LAST_OPSET + 1)),
    Interpolate("opset4", range(4, 11)),
    Interpolate("opset11", range(11, LAST_OPSET + 1)),
    # picking, shifting and scattering elements (a mixture-of-experts router's TopK)
    TopK("opset1", range(1, 3)),
    TopK("opset3", range(3, 11)),
    TopK("opset11", range(11, LAST_OPSET + 1)),
    Roll7(range(7, LAST_OPSET + 1)),
    CumSum3(range(3, LAST_OPSET + 1)),
    GatherElements6(range(6, LAST_OPSET + 1)),
    ScatterUpdate3(range(3, LAST_OPSET + 1)),
    ScatterElementsUpdate("opset3", range(3, 12)),
    ScatterElementsUpdate("opset12", range(12, LAST_OPSET + 1)),
    ScatterNDUpdate("opset4", range(4, 15)),  # (ScatterNDUpdate-3, first in opset4)
    ScatterNDUpdate("opset15", range(15, LAST_OPSET + 1)),
    OneHot("opset1", range(1, 16)),
    OneHot("opset16", range(16, LAST_OPSET + 1)),
    NonZero3(range(3, LAST_OPSET + 1)),
    GatherND("opset5", range(5, 8)),
    GatherND("opset8", range(8, LAST_OPSET + 1)),
    # a stateful model's variables
    ReadValue3(range(3, 6)),
    ReadValue6(range(6, LAST_OPSET + 1)),
    Assign("opset3", range(3, 6)),
    Assign("opset6", range(6, LAST_OPSET + 1)),
    # sub-graph ops: their bodies walked with the shapes their inputs give
    If8(),
    Loop5(),
    TensorIterator0(),
    # shape-preserving unary ops (MVN with its boolean attributes)
    *(ShapePreserving(t, _MVN if t == "MVN" else ()) for t in sorted(UNARY_SHAPE_PRESERVING)),
    # ops known for their boolean attributes (OpenVINO reads anything but true/false/1/0 as the default)
    Declared("GRUCell", ("linear_before_reset",)),
    Declared("GRUSequence", ("linear_before_reset",)),
    Declared("NonMaxSuppression", ("sort_result_descending",)),
    Declared("Interpolate", ("antialias",)),  # Interpolate-0 (opset1 ... opset3), no rule yet
    Declared("Proposal", ("clip_before_nms", "clip_after_nms", "normalize")),
)

_EXTRA: ContextVar[Mapping[OpKey, Op]] = ContextVar("ovreduce_registered_ops", default=MappingProxyType({}))


def table() -> Mapping[OpKey, Op]:
    """Every registered op: the built-in ones and those :func:`registered` adds here (which win)."""
    extra = _EXTRA.get()
    return {**_BUILTIN, **extra} if extra else _BUILTIN


def _index(ops: Mapping[OpKey, Op]) -> Mapping[str, tuple[Op, ...]]:
    """The ops by type, in lower case: OpenVINO's IR reader finds an op's type in any case (``reducemean``)."""
    by_type: dict[str, list[Op]] = {}
    for (t, _), op in ops.items():
        by_type.setdefault(t.lower(), []).append(op)
    return {t: tuple(found) for t, found in by_type.items()}


_BUILTIN_BY_TYPE = _index(_BUILTIN)


def _of_type(op_type: str) -> tuple[Op, ...]:
    extra = _EXTRA.get()
    by_type = _index({**_BUILTIN, **extra}) if extra else _BUILTIN_BY_TYPE
    found = by_type.get(op_type.lower(), ())
    if any(op.type in _AS_WRITTEN and op.type != op_type for op in found):
        found = tuple(op for op in found if op.type not in _AS_WRITTEN or op.type == op_type)
    if len(found) > 1:  # the type as written first (Relu and ReLU are two names of one op)
        found = tuple(sorted(found, key=lambda op: op.type != op_type))
    return found


# The IR's own name of an op that no opset spells so: OpenVINO's reader translates it only as written ("const" is
# no op to it, as "Const" is the opsets' Constant), where it finds every other type in any case.
_AS_WRITTEN = frozenset({"Const"})


def lookup(op_type: str, version: str) -> Op | None:
    """The op an IR layer ``type=op_type version=version`` names, as OpenVINO's IR reader finds it.

    A versioned op is found under every ``opsetN`` that holds it (ReduceMean-1 under opset1 ... opset16);
    a rule for any version (``opsets=None``) under any version. None when the type is unknown or no
    registered version of it is in that opset.
    """
    n = opset_number(version)
    candidates = _of_type(op_type)
    for op in candidates:
        if op.opsets is not None and n is not None and n in op.opsets:
            return op
    return next((op for op in candidates if op.opsets is None), None)


def type_name(op_type: str, version: str = "") -> str:
    """The name of the op an IR layer's ``type`` names, as OpenVINO's model gives it (``reducemean``: ReduceMean, the
    type found in any case): what every document calls the layer's type. The type as written where no registered op
    has it (an extension's), or where two ops' names differ from it only in case (``relu``: Relu or ReLU)."""
    if resolve(op_type, version) is None:
        return op_type
    names = {op.type for op in _of_type(op_type) if op.type}
    return op_type if op_type in names or len(names) != 1 else names.pop()


def resolve(op_type: str, version: str = "") -> Op | None:
    """:func:`lookup`, else the newest registered version of ``op_type`` (None when the type is unknown)."""
    if not _EXTRA.get():  # the built-in table never changes: every layer of a model asks this
        return _resolve_builtin(op_type, version)
    return _resolve(op_type, version)


@lru_cache(maxsize=4096)  # bounded: types and versions come from untrusted files
def _resolve_builtin(op_type: str, version: str) -> Op | None:
    return _resolve(op_type, version)


def _resolve(op_type: str, version: str) -> Op | None:
    found = lookup(op_type, version)
    if found is not None:
        return found
    candidates = _of_type(op_type)
    if not candidates:
        return None
    return max(candidates, key=lambda op: op.opsets.start if op.opsets is not None else 0)


def reductions() -> Mapping[str, ReductionOp]:
    """The registered reductions by type (the newest version of each), in registry order."""
    out: dict[str, ReductionOp] = {}
    for (t, _), op in table().items():
        if isinstance(op, ReductionOp) and t not in out:
            best = resolve(t)
            assert isinstance(best, ReductionOp)
            out[t] = best
    return out


def reduction(op_type: str, version: str = "") -> ReductionOp:
    """The reduction ``op_type`` (at ``version`` where it exists there, else its newest version).

    Raises:
        InputError: ``op_type`` is not a registered reduction.
    """
    op = resolve(op_type, version)
    if not isinstance(op, ReductionOp):
        raise InputError(f"unknown reduction {op_type!r}; expected one of: {', '.join(reductions())}")
    return op


def boolean_attributes(op_type: str, version: str = "") -> tuple[str, ...]:
    """The boolean attributes of ``op_type`` at ``version`` (leniently resolved); () for an unknown op."""
    op = resolve(op_type, version)
    return op.boolean_attributes if op is not None else ()


def is_registered(op_type: str) -> bool:
    """Whether a caller added an op of ``op_type`` (any case) with :func:`registered`: no opset of OpenVINO need hold
    it."""
    extra = _EXTRA.get()
    return bool(extra) and any(t.lower() == op_type.lower() for t, _ in extra)


@contextmanager
def registered(*ops: Op) -> Iterator[None]:
    """Add ``ops`` to the registry for the ``with`` block, in the current context only.

    Raises:
        ValueError: two of ``ops`` share a ``(type, version)`` key.
    """
    added = _table(*ops)
    token = _EXTRA.set(MappingProxyType({**_EXTRA.get(), **added}))
    try:
        yield
    finally:
        _EXTRA.reset(token)
