"""Real numbers as OpenVINO's ``evaluate`` computes them in f16, bf16, f32 and f64, for the values shapes are made of.

A model exported from PyTorch computes sizes in floats: ``x.size(2) // 2`` is ``Convert(f32) -> Divide -> Floor``,
``math.ceil(h / p) * p`` a ``Divide -> Ceiling -> Multiply``, ``int(math.sqrt(n))`` a ``Sqrt -> Convert``. OpenVINO
folds these as it infers shapes (its bound evaluation calls each op's ``evaluate``): f16 and bf16 converted to f32,
computed there and rounded back to nearest-even; f32 operations IEEE-rounded; a Convert to an integer truncates.

Values are Python floats (doubles), each exactly a value of its element type: one IEEE operation on two f32 values
computed in double and rounded to f32 is the f32 operation (a double holds more than twice f32's precision), which
holds for sqrt too. Where ovreduce cannot tell what OpenVINO's ``evaluate`` gives (a value beyond a Convert's
destination range, a Power whose result is not exact, a non-finite operand), :func:`computed` is given ``None``
and the value stays unresolved, with the reason. Nothing here imports NumPy.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence

from ovreduce.ir.dtypes import ElementType
from ovreduce.ops.base import ValueInfo

__all__ = [
    "REAL_BINARY",
    "REAL_UNARY",
    "RealTensor",
    "computed",
    "from_int",
    "real_tensor",
    "round_half_away",
    "rounded",
    "to_int",
]

RealTensor = tuple[tuple[float, ...], tuple[int, ...]]  # (flat values, shape)
_WIDTHS = {"f64": 53, "f32": 24, "f16": 11, "bf16": 8}  # significand bits, the implicit one included


def _f32(x: float) -> float:
    """``x`` rounded to the nearest f32 (ties to even), infinite beyond its range."""
    if not math.isfinite(x):
        return x
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _f16(x: float) -> float:
    if not math.isfinite(x):
        return x
    try:
        return float(struct.unpack("<e", struct.pack("<e", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _bf16(x: float) -> float:
    """An f32 value rounded to bf16 as OpenVINO's ``bfloat16(float)`` does (its ``round_to_nearest_even``): half of the
    last kept bit added where that bit is odd, nothing where it is even, then the 16 high bits kept; so a value whose
    kept bits are even is truncated (682.67 is 680, not 684), one whose are odd rounded to nearest, ties up."""
    if not math.isfinite(x):
        return x
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = ((bits + ((bits & 0x10000) >> 1)) >> 16) << 16
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


def rounded(x: float, etype: ElementType) -> float:
    """A double rounded into ``etype`` as OpenVINO rounds an f32 result into it (f16, bf16: through f32)."""
    name = etype.name
    if name == "f64":
        return x
    y = _f32(x)
    if name == "f16":
        return _f16(y)
    if name == "bf16":
        return _bf16(y)
    return y


def from_int(v: int, etype: ElementType) -> float | None:
    """An integer converted into a real type as C++'s ``static_cast`` does (nearest, ties to even, from the integer
    itself); None where OpenVINO converts through another type first (an integer not exact in f16 or bf16)."""
    bits = _WIDTHS[etype.name]
    if etype.name in ("f16", "bf16"):
        exact = float(v)
        return exact if rounded(exact, etype) == exact and int(exact) == v else None
    magnitude = abs(v)
    length = magnitude.bit_length()
    if length > bits:  # round the integer itself to ``bits`` significant bits (a double would round it twice)
        shift = length - bits
        kept, rest = magnitude >> shift, magnitude & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        magnitude = kept << shift
    try:
        out = float(magnitude)
    except OverflowError:
        out = math.inf
    out = math.copysign(out, v) if v else 0.0
    return out if etype.name == "f64" else _f32(out)


def to_int(x: float, etype: ElementType) -> int | None:
    """A real value converted to an integral type as OpenVINO's Convert does (toward zero); None where it does not fit
    (the machine's conversion then decides, which ovreduce does not model) or is not finite."""
    if not math.isfinite(x):
        return None
    value = math.trunc(x)
    bits = etype.bitwidth
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if etype.kind == "int" else (0, (1 << bits) - 1)
    return value if lo <= value <= hi else None


def real_tensor(info: ValueInfo) -> RealTensor | None:
    """A constant value of a real type as floats with its shape: its integers (a Const of ``2.0``, a Convert of a
    size), or the non-integral values an op or a Const gave; None when it has none."""
    if info.kind == "const" and info.values is not None:
        numbers: Sequence[float] = [float(v) for v in info.values]
    elif info.reals is not None:
        numbers = info.reals
    else:
        return None
    shape = info.shape if info.shape is not None else (len(numbers),)
    if math.prod(shape) != len(numbers):
        return None
    return tuple(numbers), shape


def computed(values: Sequence[float | None], shape: tuple[int, ...], etype: ElementType, what: str) -> ValueInfo:
    """The value an op computed in a real type: constant where every element is an integer (the shapes' rules read
    integers), else unresolved to them, carrying the floats (``reals``) for the real ops after it; unresolved with
    the reason where an element is one ovreduce does not compute (None). ``what`` names the layer."""
    if any(v is None for v in values):
        return ValueInfo("unresolved", None, f"{what} computes {etype} values ovreduce does not fold (beyond the "
                                             f"types' ranges, or not exact)", shape=shape)  # fmt: skip
    numbers = tuple(float(v) for v in values if v is not None)
    if all(math.isfinite(v) and v == int(v) for v in numbers):
        return ValueInfo("const", tuple(int(v) for v in numbers), shape=shape)
    odd = next(v for v in numbers if not (math.isfinite(v) and v == int(v)))
    return ValueInfo("unresolved", None, f"{what} computes non-integral {etype} values ({odd:g}), which no shape is "
                                         f"made of", shape=shape, reals=numbers)  # fmt: skip


def _exact(x: float, y: float) -> float | None:
    """``x ** y`` for an integer ``y`` where the power is exactly a double: what every ``pow`` gives; None otherwise
    (libraries round other results differently)."""
    if y != int(y) or abs(y) > 1024 or (x == 0 and y < 0):
        return None
    try:
        near = math.pow(x, y)
    except (OverflowError, ValueError):
        return None
    if not math.isfinite(near) or (near == 0 and x != 0):  # (past a double's range: not exact)
        return None
    from fractions import Fraction  # (only here: a Power of reals is rare)

    power = Fraction(x) ** int(y)
    try:
        r = float(power)
    except OverflowError:
        return None
    return r if Fraction(r) == power else None


def _divide(x: float, y: float) -> float | None:
    return None if y == 0 else x / y


def _floor_mod(x: float, y: float) -> float | None:
    # OpenVINO: x - y * floor(x / y), in double, rounded into the type
    return None if y == 0 else x - y * math.floor(x / y)


def _squared_difference(x: float, y: float) -> float:
    d = _f32(x - y)
    return d * d


REAL_BINARY: dict[str, Callable[[float, float], float | None]] = {
    "Add": lambda x, y: x + y,
    "Subtract": lambda x, y: x - y,
    "Multiply": lambda x, y: x * y,
    "Divide": _divide,  # (m_pythondiv floors integers only: a real quotient is the IEEE one)
    "Maximum": max,
    "Minimum": min,
    "FloorMod": _floor_mod,
    "Power": _exact,  # (exact in double; in f32 too: see Binary)
    "SquaredDifference": _squared_difference,
}
"""Each real arithmetic op over two finite values in double (then :func:`rounded`); None: not folded."""


def round_half_away(x: float) -> float:
    """``std::round``: to the nearest integer, halves away from zero."""
    whole = math.floor(abs(x))
    return math.copysign(whole + 1 if abs(x) - whole >= 0.5 else whole, x)


REAL_UNARY: dict[str, Callable[[float], float | None]] = {
    "Floor": lambda x: float(math.floor(x)),
    "Ceiling": lambda x: float(math.ceil(x)),
    "Negative": lambda x: -x,
    "Abs": abs,
    "Relu": lambda x: max(x, 0.0),
    "ReLU": lambda x: max(x, 0.0),
    "Sign": lambda x: float((x > 0) - (x < 0)),
    "Sqrt": lambda x: math.sqrt(x) if x >= 0 else None,
    "half_to_even": lambda x: float(round(x)),
    "half_away_from_zero": round_half_away,
}
"""Each real unary op over a finite value in double (Round by its mode); None: not folded."""
