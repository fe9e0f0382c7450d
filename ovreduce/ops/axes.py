"""The one axes normaliser: ``[-r, r-1]`` to ``[0, r-1]``, with the semantics that differ as a policy.

The semantics differ on three points, each a field of :class:`AxesPolicy`:

* repeated axes: OpenVINO accepts them (they count once); ONNX (``onnx.reference``), oneDNN Graph and
  com.microsoft QLinearReduceMean refuse them;
* a scalar: OpenVINO validates its axes as if it had rank 1 (``is_axis_valid``: 0 and -1 pass, and name no
  dimension); the others accept no axis of a rank-0 input;
* the messages and the exception class, which each caller keeps word for word.

Messages are ``str.format`` templates. Every template may use ``{axis}``, ``{rank}``, ``{low}``, ``{high}``
(the accepted range) and ``{expected}`` (``[low, high]``, or :attr:`AxesPolicy.rank0_expected` for a
scalar), plus whatever the caller passes as ``context``; ``repeated`` also gets ``{values}`` (the axes as
ints) and ``not_integer`` gets ``{value}`` (the offending item) and ``{items}`` (the items as given).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ovreduce.errors import InputError, OvReduceError

__all__ = ["AxesPolicy", "normalize_axes"]


@dataclass(frozen=True, slots=True)
class AxesPolicy:
    """How one semantics validates axes, and what it says when they are wrong."""

    out_of_range: str
    repeated: str | None = None  # None: repeated axes are accepted (and kept, in order)
    not_integer: str | None = None  # None: the caller has checked the items are integers
    scalar_as_rank1: bool = False
    rank0_expected: str = "no axes"
    error: type[OvReduceError] = InputError


def normalize_axes(items: Sequence[Any], rank: int, policy: AxesPolicy, **context: object) -> tuple[int, ...]:
    """``items`` mapped to ``[0, rank-1]`` in the given order, checked one at a time as ``policy`` says.

    With :attr:`AxesPolicy.scalar_as_rank1` a scalar's valid axes (0 and -1) name no dimension and are left
    out of the result.

    Raises:
        policy.error: an item is not an integer, out of range, or (where refused) repeated.
    """
    bound = max(rank, 1) if policy.scalar_as_rank1 else rank
    low, high = -bound, bound - 1
    expected = f"[{low}, {high}]" if bound else policy.rank0_expected
    normalized: list[int] = []
    for item in items:
        if policy.not_integer is not None and not _is_int(item):
            raise policy.error(policy.not_integer.format(value=item, items=list(items), **context))
        axis = int(item)
        if not low <= axis <= high:
            raise policy.error(
                policy.out_of_range.format(axis=axis, rank=rank, low=low, high=high, expected=expected, **context)
            )
        if rank == 0:
            continue
        n = axis + rank if axis < 0 else axis
        if policy.repeated is not None and n in normalized:
            values = [int(v) for v in items]
            raise policy.error(policy.repeated.format(values=values, axis=n, rank=rank, **context))
        normalized.append(n)
    return tuple(normalized)


def _is_int(item: object) -> bool:
    """A Python or NumPy integer, not a bool (NumPy's integers register as ``numbers.Integral``)."""
    return isinstance(item, numbers.Integral) and not isinstance(item, bool)
