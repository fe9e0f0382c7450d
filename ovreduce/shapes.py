"""Shape value types with OpenVINO's semantics: static dims, dynamic dims, intervals, dynamic rank.

:class:`Dimension` is an interval ``[lo, hi]`` of non-negative sizes (``hi=None``: unbounded); a
static dim has ``lo == hi``, a fully dynamic one (``?`` / ``-1``) is ``[0, None]``.
:class:`PartialShape` is a tuple of dims, or ``None`` dims for a dynamic rank (``...``).

The string syntax is the one OpenVINO writes into IR ``shape`` attributes and reads back with
``ov::PartialShape(std::string)``: ``?``, ``-1``, ``a..b``, ``a..``, ``..b``, ``...``, ``""`` (a
scalar), ``1, 2`` and ``[1,2]``. Where OpenVINO quietly accepts nonsense (``-2`` read as 0, an empty
interval ``5..3``, overflowing integers), :func:`PartialShape.parse` refuses with a precise message.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "INT64_MAX",
    "Dimension",
    "DimensionError",
    "JsonDim",
    "JsonShape",
    "PartialShape",
    "broadcast_merge",
    "ceil_div",
    "const_dim",
    "dilated",
    "dim_add",
    "dim_div",
    "dim_mul",
    "dim_sub",
    "dim_sum",
    "f32",
    "floor_div",
    "merge",
    "padded",
    "parse_named_shapes",
    "quoted",
    "scaled",
]

INT64_MAX = 2**63 - 1
_DIGITS = re.compile(r"[0-9]+")
_SPACE = " \t\n\r\v\f"  # C isspace(), what OpenVINO trims; str.strip() would also drop Unicode spaces

JsonDim = int | str
JsonShape = list[JsonDim] | None


class DimensionError(ValueError):
    """An interval no dimension can be (a negative size, an upper bound below the lower): what a shape rule computes
    from values no exporter writes, where it does not refuse them in words first."""


@dataclass(frozen=True, slots=True)
class Dimension:
    """One dimension: the interval ``[lo, hi]``; ``hi is None`` means unbounded."""

    lo: int = 0
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.lo >= INT64_MAX or (self.hi is not None and self.hi >= INT64_MAX):
            # OpenVINO's bounds are int64, its arithmetic saturating at int64's largest value, s_max, its "no bound"
            # (interval.cpp's clip_add, clip_times): an upper bound that reaches it is none, and a lower bound that
            # does makes its empty interval [s_max, s_max], which it prints (and writes) "?", as ovreduce reads it
            empty = self.lo >= INT64_MAX
            object.__setattr__(self, "lo", 0 if empty else self.lo)
            object.__setattr__(self, "hi", None)
        if self.lo < 0 or (self.hi is not None and self.hi < self.lo):
            raise DimensionError(f"invalid dimension interval [{self.lo}, {self.hi}]")

    @classmethod
    def static(cls, value: int) -> Dimension:
        return cls(value, value)

    @classmethod
    def dynamic(cls) -> Dimension:
        return cls(0, None)

    @classmethod
    def from_int(cls, value: int) -> Dimension:
        """A port ``<dim>`` value: ``-1`` is dynamic, anything else static."""
        return cls.dynamic() if value == -1 else cls.static(value)

    @classmethod
    def parse(cls, text: str, *, empty_as_dynamic: bool = False) -> Dimension:
        """Parse one dimension in OpenVINO syntax; raises ``ValueError`` with the reason. ``empty_as_dynamic``: an
        empty interval (``1..0``, which OpenVINO's IR writer writes for a dim no size fits) is a dynamic dim."""
        token = text.strip(_SPACE)
        if token in ("?", "-1", ".."):
            return cls.dynamic()
        if ".." not in token:
            return cls.static(_parse_bound(token, text))
        lo_text, _, hi_text = token.partition("..")
        lo = _parse_bound(lo_text, text) if lo_text else 0
        hi: int | None = _parse_bound(hi_text, text, upper=True) if hi_text else None
        if hi == INT64_MAX:  # OpenVINO's encoding of "no upper bound"
            hi = None
        if hi is not None and hi < lo:
            if empty_as_dynamic:
                return cls.dynamic()
            raise ValueError(
                f"empty interval {quoted(text.strip(_SPACE))}: the upper bound {hi} is below the lower bound {lo}"
            )
        return cls(lo, hi)

    @property
    def is_static(self) -> bool:
        return self.hi == self.lo

    @property
    def is_fully_dynamic(self) -> bool:
        return self.lo == 0 and self.hi is None

    @property
    def value(self) -> int:
        """The size of a static dim; ``ValueError`` for any other."""
        if not self.is_static:
            raise ValueError(f"dimension {self} is not static")
        return self.lo

    def compatible(self, other: Dimension) -> bool:
        """True when some size satisfies both (the intervals intersect)."""
        lo = max(self.lo, other.lo)
        hi = _min_hi(self.hi, other.hi)
        return hi is None or lo <= hi

    def contains(self, other: Dimension) -> bool:
        """True when every size allowed by ``other`` is allowed by ``self`` (``self`` is less precise)."""
        if other.lo < self.lo:
            return False
        if self.hi is None:
            return True
        return other.hi is not None and other.hi <= self.hi

    def to_json(self) -> JsonDim:
        """An int for a static dim, -1 for a fully dynamic one, ``"lo..hi"`` / ``"lo.."`` otherwise."""
        if self.is_static:
            return self.lo
        if self.is_fully_dynamic:
            return -1
        return f"{self.lo}..{'' if self.hi is None else self.hi}"

    @classmethod
    def from_json(cls, item: object) -> Dimension:
        if isinstance(item, bool):
            raise ValueError(f"a dimension must be an int or an interval string, not {item!r}")
        if isinstance(item, int):
            if item < -1:
                raise ValueError(f"a dimension must be >= -1, got {item}")
            return cls.from_int(item)
        if isinstance(item, str):
            return cls.parse(item)
        raise ValueError(f"a dimension must be an int or an interval string, not {item!r}")

    def __str__(self) -> str:
        if self.is_static:
            return str(self.lo)
        if self.is_fully_dynamic:
            return "?"
        return f"{self.lo if self.lo else ''}..{'' if self.hi is None else self.hi}"


def _min_hi(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _parse_bound(token: str, whole: str, *, upper: bool = False) -> int:
    # No strip here: OpenVINO allows spaces around a dimension but not inside an interval ("1 ..5").
    if not _DIGITS.fullmatch(token):
        raise ValueError(
            f"cannot parse dimension {quoted(whole.strip(_SPACE))}: expected a non-negative integer, '?', '-1' "
            f"or an interval 'a..b' (no spaces inside it)"
        )
    digits = token.lstrip("0")  # as OpenVINO reads them; and int() refuses more than 4,300 digits
    if len(digits) > 19 or int(digits or "0") > INT64_MAX:
        shown = token if len(token) <= 24 else f"{token[:20]}... ({len(token)} digits)"
        raise ValueError(f"dimension {shown} does not fit in int64")
    value = int(digits or "0")
    if value == INT64_MAX and not upper:
        # OpenVINO stores "unbounded" as 2^63-1: as an upper bound it means none; as a size it is not one.
        raise ValueError(
            f"dimension {value} in {quoted(whole.strip(_SPACE))} is 2^63-1, which OpenVINO reserves to mean "
            f"'unbounded'; expected a size below 2^63-1, or '?' for a dynamic dimension"
        )
    return value


def quoted(text: str, limit: int = 64) -> str:
    """``text`` quoted as ``repr`` quotes it, its first characters alone where it is longer than ``limit`` (a shape
    of thousands of digits): ``'6,000000...' (5013 characters)``."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[: limit - 4]!r}... ({len(text)} characters)"


@dataclass(frozen=True, slots=True)
class PartialShape:
    """A shape whose rank is static (``dims`` a tuple) or dynamic (``dims is None``)."""

    dims: tuple[Dimension, ...] | None

    @classmethod
    def dynamic(cls, rank: int | None = None) -> PartialShape:
        """Dynamic rank, or the given rank with every dim dynamic."""
        if rank is None:
            return cls(None)
        return cls(tuple(Dimension.dynamic() for _ in range(rank)))

    @classmethod
    def static(cls, dims: Iterable[int]) -> PartialShape:
        return cls(tuple(Dimension.static(d) for d in dims))

    @classmethod
    def from_port_dims(cls, dims: Iterable[int]) -> PartialShape:
        return cls(tuple(Dimension.from_int(d) for d in dims))

    @classmethod
    def parse(cls, text: str, *, empty_as_dynamic: bool = False) -> PartialShape:
        """Parse OpenVINO's shape syntax; raises ``ValueError`` saying what is wrong (``empty_as_dynamic``: see
        :meth:`Dimension.parse`)."""
        body = text.strip(_SPACE)
        if body.startswith("[") and body.endswith("]"):
            body = body[1:-1].strip(_SPACE)
        if "[" in body or "]" in body:
            raise ValueError(f"cannot parse shape {quoted(text)}: {_brackets(body)}")
        if body == "...":
            return cls(None)
        if body == "":
            return cls(())
        fields = body.split(",")
        if any(not f.strip(_SPACE) for f in fields):
            raise ValueError(f"cannot parse shape {quoted(text)}: empty dimension between commas")
        return cls(tuple(Dimension.parse(f, empty_as_dynamic=empty_as_dynamic) for f in fields))

    @classmethod
    def from_json(cls, item: object) -> PartialShape:
        if item is None:
            return cls(None)
        if not isinstance(item, Sequence) or isinstance(item, str | bytes):
            raise ValueError(f"a shape must be a list of dimensions or null, not {item!r}")
        return cls(tuple(Dimension.from_json(d) for d in item))

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    @property
    def is_static(self) -> bool:
        return self.dims is not None and all(d.is_static for d in self.dims)

    def to_list(self) -> list[int]:
        """The sizes of a fully static shape; ``ValueError`` otherwise."""
        if self.dims is None or not self.is_static:
            raise ValueError(f"shape {self} is not static")
        return [d.lo for d in self.dims]

    def compatible(self, other: PartialShape) -> bool:
        """True when some static shape satisfies both."""
        if self.dims is None or other.dims is None:
            return True
        return len(self.dims) == len(other.dims) and all(
            a.compatible(b) for a, b in zip(self.dims, other.dims, strict=True)
        )

    def contains(self, other: PartialShape) -> bool:
        """True when every static shape allowed by ``other`` is allowed by ``self``."""
        if self.dims is None:
            return True
        if other.dims is None:
            return False
        return len(self.dims) == len(other.dims) and all(
            a.contains(b) for a, b in zip(self.dims, other.dims, strict=True)
        )

    def to_json(self) -> JsonShape:
        return None if self.dims is None else [d.to_json() for d in self.dims]

    def __iter__(self) -> Iterator[Dimension]:
        if self.dims is None:
            raise ValueError("a shape of dynamic rank has no dimensions to iterate")
        return iter(self.dims)

    def __str__(self) -> str:
        if self.dims is None:
            return "[...]"
        return "[" + ",".join(str(d) for d in self.dims) + "]"


def _brackets(body: str) -> str:
    """What is wrong with the brackets of a shape's text (its outer pair removed where it has one)."""
    if re.search(r"\]\s*,\s*\[", body):
        return "it holds several bracketed shapes; give one shape, [d0,d1,...]"
    close = body.find("]")
    if body.startswith("[") and close < 0:
        return "its '[' is never closed"
    if body.startswith("[") and "[" not in body[1:close] and (after := body[close + 1 :].strip(_SPACE)):
        return f"text after the shape's closing ']': {after[:20]!r}"
    if body.endswith("]") and "[" not in body:
        return "its ']' closes no '['"
    return _NESTED


_NESTED = "a shape is one bracketed list of dimensions, [d0,d1,...], with no bracket inside"


def parse_named_shapes(items: Iterable[str]) -> dict[str, PartialShape]:
    """Named shapes as a dict, in ovreduce's ``NAME=SHAPE`` form or benchmark_app's and ovc's ``NAME[SHAPE]``.

    Each item is ``x=[1,3,224,224]``, ``x=1,3,224,224`` or ``x[1,3,224,224]``; an item holding brackets may
    name several inputs separated by commas (``x[1,3],mask[1,128]`` or ``x=[1,3],y=[2]``). Names may hold
    any character (``input:0``, ``a/b`` are fine); one holding ``=`` or ``[`` is written ``NAME=SHAPE``, the name
    ending at the last ``=`` before the shape (``a=b=[4,5]``, ``x[1]=[4,5]``). Shapes use OpenVINO's syntax
    (``?``, ``-1``, ``a..b``, ``...``).

    Raises:
        ValueError: naming the assignment and what is wrong with it.
    """
    out: dict[str, PartialShape] = {}
    for item in items:
        for name, text in _assignments(item):
            if name in out:
                raise ValueError(f"{quoted(item)}: {name!r} is given a shape twice")
            try:
                out[name] = PartialShape.parse(text)
            except ValueError as exc:
                raise ValueError(f"{quoted(item)}: {exc}") from None
    return out


_EXPECTED = "expected NAME=SHAPE or NAME[SHAPE], e.g. x=[1,3,224,224] or x[1,3,224,224],y[1,128]"


def _assignments(item: str) -> Iterator[tuple[str, str]]:
    """The (name, shape text) pairs of one ``--shape`` item. A name is everything up to the last ``=`` before its
    shape (shapes hold no ``=``), so it may hold ``=`` and ``[`` itself: ``a=b=[4,5]`` and ``a=b=4,5`` name ``a=b``,
    ``x[1]=[4,5]`` names ``x[1]`` (a bracketed group followed by ``=`` and a shape is part of the name)."""
    if "[" not in item:  # NAME=SHAPE with a bare dims list: the whole rest is one shape
        name, sep, text = item.rpartition("=")
        if not sep or not name.strip(_SPACE):
            raise ValueError(f"{quoted(item)}: {_EXPECTED}")
        yield name.strip(_SPACE), text
        return
    rest = item
    while True:
        scan = 0
        while True:
            bracket = rest.find("[", scan)
            if bracket < 0:
                raise ValueError(f"{quoted(item)}: {rest!r} has no [SHAPE]; {_EXPECTED}")
            close = rest.find("]", bracket)
            after = "" if close < 0 else rest[close + 1 :].lstrip(_SPACE)
            if not (after.startswith("=") and "[" in after):
                break
            scan = close + 1  # ``x[1]=[4,5]``: the group is part of the name, its shape follows the '='
        name = rest[:bracket].strip(_SPACE)
        if name.endswith("="):  # NAME=[SHAPE]: the name may hold '=', '[' and ']'
            name = name[:-1].strip(_SPACE)
            if not name:
                raise ValueError(f"{quoted(item)}: {_EXPECTED}")
        elif not name or "=" in name or "]" in name:
            raise ValueError(f"{quoted(item)}: {_EXPECTED}")
        if close < 0:
            raise ValueError(f"{quoted(item)}: the '[' after {name!r} is never closed")
        if "[" in rest[bracket + 1 : close]:
            raise ValueError(f"{quoted(item)}: the shape of {name!r}: {_NESTED}")
        yield name, rest[bracket : close + 1]
        rest = rest[close + 1 :].lstrip(_SPACE)
        if not rest:
            return
        if not rest.startswith(","):
            raise ValueError(
                f"{quoted(item)}: expected ',' or the end after the shape of {name!r}, found {rest[:20]!r}"
            )
        rest = rest[1:].lstrip(_SPACE)
        if not rest:
            raise ValueError(f"{quoted(item)}: a ',' at the end names no input")


# -- OpenVINO's Dimension arithmetic (src/core/src/interval.cpp, dimension.cpp, dimension_util.hpp) -----------
# Bounds are clipped to [0, unbounded]; an upper bound of None is OpenVINO's Interval::s_max.


def _interval(lo: int, hi: int | None) -> Dimension:
    """``Interval(min, max)`` canonicalised: an empty interval becomes OpenVINO's ``[s_max, s_max]``, which
    ovreduce has no way to write: it is refused with ``ValueError`` (the rules turn it into an error)."""
    if hi is not None and hi < lo:
        raise ValueError(f"empty dimension interval [{lo}, {hi}]")
    return Dimension(max(lo, 0), None if hi is None else max(hi, 0))


def const_dim(value: int) -> Dimension:
    """``Dimension(value)``: -1 is dynamic, and so is int64's largest value (OpenVINO's "no bound"); a negative value
    clips to 0."""
    return Dimension.dynamic() if value == -1 or value >= INT64_MAX else Dimension.static(max(value, 0))


def dim_add(a: Dimension, b: Dimension) -> Dimension:
    """``a + b`` bound by bound, saturating at int64's largest value (:class:`Dimension` clips what passes it)."""
    return dim_sum((a, b))


def dim_sum(dims: Iterable[Dimension]) -> Dimension:
    """The sum of ``dims`` (a Concat's along its axis), bound by bound, as OpenVINO adds them one after the other: a
    lower bound past int64 makes its empty interval, which every later sum keeps: the sum is "?" (as ovreduce reads
    that interval), whatever dims follow."""
    lo: int = 0
    hi: int | None = 0
    for d in dims:
        lo += d.lo
        hi = None if hi is None or d.hi is None else hi + d.hi
    return _interval(lo, hi)


def _clip_minus(a: int | None, b: int | None) -> int | None:
    if a is None:
        return None if b is not None else 0
    if b is None or a <= b:
        return 0
    return a - b


def dim_sub(a: Dimension, b: Dimension) -> Dimension:
    lo = _clip_minus(a.lo, b.hi)
    hi = _clip_minus(a.hi, b.lo)
    return _interval(lo or 0, hi)


def _clip_times(a: int | None, b: int | None) -> int | None:
    if a == 0 or b == 0:
        return 0
    if a is None or b is None:
        return None
    return a * b if a * b < INT64_MAX else None


def dim_mul(a: Dimension, b: Dimension) -> Dimension:
    """``a * b`` bound by bound, saturating at int64's largest value (:class:`Dimension` clips what passes it)."""
    return _interval(a.lo * b.lo, _clip_times(a.hi, b.hi))


def dim_div(a: Dimension, divisor: int) -> Dimension | None:
    """``Dimension / divisor`` (exact division of the interval); None when no multiple of ``divisor`` is in it."""
    if a.is_fully_dynamic:
        return Dimension.dynamic()
    lo = (a.lo + divisor - 1) // divisor
    hi = None if a.hi is None else a.hi // divisor
    if hi is not None and hi < lo:
        return None
    return Dimension(lo, hi)


def floor_div(a: Dimension, divisor: int) -> Dimension:
    """``dim::floor_div`` of dimension_util.hpp."""
    if a.is_static:
        return Dimension.static(a.lo // divisor)
    return Dimension(a.lo // divisor, None if a.hi is None else a.hi // divisor)


def ceil_div(a: Dimension, divisor: int) -> Dimension:
    """``dim::ceil_div`` of dimension_util.hpp."""
    if a.is_static:
        return Dimension.static(-(-a.lo // divisor))
    return Dimension(-(-a.lo // divisor), None if a.hi is None else -(-a.hi // divisor))


def dilated(a: Dimension, dilation: int) -> Dimension:
    """``(dim - 1) * dilation + 1`` in Dimension arithmetic."""
    return dim_add(dim_mul(dim_sub(a, Dimension.static(1)), Dimension.static(dilation)), Dimension.static(1))


def merge(a: Dimension, b: Dimension) -> Dimension | None:
    """``Dimension::merge``: the intersection; None when empty."""
    lo = max(a.lo, b.lo)
    hi = _min_hi(a.hi, b.hi)
    if hi is not None and hi < lo:
        return None
    return Dimension(lo, hi)


def broadcast_merge(a: Dimension, b: Dimension) -> Dimension | None:
    """``Dimension::broadcast_merge`` (numpy rules on intervals); None when incompatible."""
    a1 = a.lo <= 1 and (a.hi is None or a.hi >= 1)
    b1 = b.lo <= 1 and (b.hi is None or b.hi >= 1)
    if a1 and b1:
        hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
        return Dimension(min(a.lo, b.lo), hi)
    if a1:
        return b
    if b1:
        return a
    return merge(a, b)


def _padded_bound(bound: int | None, pad: int) -> int | None:
    """``dim::padded`` of one bound: None (OpenVINO's -1, infinite) when unbounded or when it would go negative,
    in int64 arithmetic (``pad``, a sum of pads, wraps as OpenVINO's does; a bound past int64 wraps negative)."""
    pad = (pad + 2**63) % 2**64 - 2**63
    if bound is None or not 0 <= bound + pad < INT64_MAX:  # int64's largest value is OpenVINO's "no bound"
        return None
    return bound + pad


def padded(a: Dimension, pad: int) -> Dimension:
    """``dim::padded`` of dimension_util.hpp: ``a + pad`` bound by bound, where a bound that would go negative
    becomes OpenVINO's infinite bound (-1): an upper bound unbounded, a lower bound 0."""
    if pad == 0:
        return a
    hi = _padded_bound(a.hi, pad)
    if a.is_static:
        return Dimension.static(hi) if hi is not None else Dimension.dynamic()
    lo = _padded_bound(a.lo, pad)
    return Dimension(0 if lo is None else lo, hi) if hi is None or (lo or 0) <= hi else Dimension(hi, hi)


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32, as C++'s ``float`` arithmetic rounds each result."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def scaled(a: Dimension, scale: float) -> Dimension:
    """``dim::scale`` of dimension_util.hpp: each bound times ``scale + 1e-6`` in float32, truncated (an
    unbounded upper bound stays unbounded; a scale of exactly 1 leaves the dim as it is)."""
    scale = f32(scale)
    if scale == 1.0:
        return a
    s = f32(scale + f32(1.0e-6))

    def bound(v: int) -> int:
        """``static_cast<int64_t>(float(v) * s)``: a product past int64 is int64's smallest value (x86-64's
        conversion of an out-of-range float), which the dimension then clips to 0."""
        product = f32(f32(float(v)) * s)
        return int(product) if -(2.0**63) <= product < 2.0**63 else -(2**63)

    hi = None if a.hi is None else bound(a.hi)
    if a.is_static:
        assert hi is not None
        return Dimension.static(max(hi, 0))
    return _ov_dimension(bound(a.lo), hi)


def _ov_dimension(lo: int, hi: int | None) -> Dimension:
    """``ov::Dimension(lo, hi)`` of two int64 bounds (``hi`` None: -1, no bound): an upper bound below the lower
    makes the empty interval [s_max, s_max], "?" (as ovreduce reads it); each other bound is clipped to 0."""
    if hi is not None and hi < lo:
        return Dimension.dynamic()
    return Dimension(max(lo, 0), None if hi is None else max(hi, 0))
