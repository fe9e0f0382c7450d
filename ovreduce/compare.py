"""Comparing a candidate output with a reference, in the spirit of Polygraphy's comparator.

An element passes when ``|candidate - reference| <= atol + rtol * |reference|`` (NumPy's ``isclose``);
NaN matches NaN at the same index, infinities must match exactly. An element that fails on a non-finite value
(a NaN against a number, an infinity against a finite value or the other infinity) has an infinite error: no
tolerance passes it, so ``max_abs_error`` and ``max_rel_error`` are infinite (never 0 for a comparison that
failed on one), ``required_atol``/``required_rtol`` are None, and ``nonfinite_mismatched`` counts those
elements, beside the NaNs and infinities counted on each side (``nan``, ``inf``). Integer and boolean outputs are
compared exactly. Default tolerances depend on the output type and on the precision the candidate
computed in (an f32 output computed in bf16 gets bf16's tolerances):

======  ========  ========
type    atol      rtol
======  ========  ========
f64     1e-12     1e-9
f32     1e-5      1e-5
f16     1e-3      1e-3
bf16    1e-2      1e-2
ints    0         0
bool    0         0
======  ========  ========

A long reduction in a floating type accumulates rounding error that grows like ``sqrt(n)`` for ``n``
elements reduced into each output (a CPU summing a million f32 values in f32 is off by about 2e-5 relative,
and that is not a defect), so the default ``rtol`` is ``max(rtol from the table, eps * sqrt(n))`` with
``eps`` the machine epsilon of the precision the candidate computed in. Explicit tolerances are used as given.

Elements whose value the specification leaves undefined (a ReduceMax over an empty set: see
:func:`ovreduce.reference.evaluate.undefined_elements`) can be excluded: they pass whatever either side holds,
count in no error figure, and the comparison records how many there were (``undefined``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.reports.common import json_float
from ovreduce.reports.run import Comparison

__all__ = [
    "DECIDING",
    "DEFAULT_TOLERANCES",
    "NARROW_FLOAT_TOLERANCES",
    "Comparison",
    "cannot_show_error",
    "compare",
    "default_tolerances",
    "f64_computed_note",
    "machine_epsilon",
    "masked_note",
    "rounding_allowance",
    "tolerances",
    "too_wide",
]

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-9),
    "f32": (1e-5, 1e-5),
    "f16": (1e-3, 1e-3),
    "bf16": (1e-2, 1e-2),
}
_PRECISION_RANK = {"f64": 3, "f32": 2, "f16": 1, "bf16": 0}


_EPS = {"f64": 2.0**-52, "f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7}


def machine_epsilon(element_type: str) -> float:
    """The machine epsilon of a floating element type (0 for others)."""
    return _EPS.get(element_type, 0.0)


NARROW_FLOAT_TOLERANCES: dict[str, tuple[float, float]] = {
    "f8e4m3": (2.0**-9, 2.0**-3),
    "f8e5m2": (2.0**-16, 2.0**-2),
    "f4e2m1": (0.5, 2.0**-1),
}
"""(atol, rtol) for the 8- and 4-bit float types: one unit in the last place of the type (its least subnormal, its
epsilon), however many elements an output reduces: OpenVINO's CPU computes their reductions in f32 and converts the
result to the type, not always to the nearest value (f8e4m3's 200.0157 becomes 192, not 208: it rounds through f16)."""


def default_tolerances(output_type: str, computed_in: str | None = None, count: int = 1) -> tuple[float, float]:
    """(atol, rtol) for an output of ``output_type`` computed in ``computed_in`` (an inference precision),
    each output reducing ``count`` elements."""
    if output_type in NARROW_FLOAT_TOLERANCES:
        return NARROW_FLOAT_TOLERANCES[output_type]
    if output_type not in DEFAULT_TOLERANCES:
        return 0.0, 0.0
    effective = output_type
    if computed_in in _PRECISION_RANK and _PRECISION_RANK[computed_in] < _PRECISION_RANK[output_type]:
        effective = computed_in
    atol, rtol = DEFAULT_TOLERANCES[effective]
    return atol, max(rtol, _EPS[effective] * math.sqrt(max(count, 1)))


PICKING = frozenset({"ReduceMax", "ReduceMin", "ReduceLogicalAnd", "ReduceLogicalOr"})
"""The reductions whose result is one of their inputs: no rounding adds up over the elements they reduce."""


def tolerances(
    output_type: str,
    computed_in: str | None,
    input_size: int,
    output_size: int,
    atol: float | None = None,
    rtol: float | None = None,
    *,
    op: str | None = None,
) -> tuple[float, float]:
    """(atol, rtol) to compare a reduction's output: those given, else :func:`default_tolerances` for an
    output of ``output_type`` computed in ``computed_in`` whose elements each reduce
    ``input_size / output_size`` input elements (one, for an ``op`` of :data:`PICKING`: its rtol does not grow)."""
    count = input_size // output_size if output_size and op not in PICKING else 1
    d_atol, d_rtol = default_tolerances(output_type, computed_in, count)
    return (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)


def rounding_allowance(
    mass: npt.NDArray[Any] | None,
    output_type: str,
    computed_in: str | None,
    atol: float | None = None,
    rtol: float | None = None,
) -> npt.NDArray[Any] | None:
    """Each output element's rounding allowance (``compare``'s ``allowance``): the ``mass`` of a sum or mean (the sum or
    mean of ``|x|`` each output element reduces) times the rtol of the table for the precision it is judged in (an
    ``output_type`` computed in ``computed_in``), not grown with the elements: a sum errs in proportion to what it adds,
    and the ``sqrt(n)`` growth of the rtol already models the rounding a long reduction accumulates, so the grown rtol
    times the mass would allow it twice (an f16 sum of 4,096 values, an allowance of 200 against sums of 20 to 80: 0
    or the negated sum agreed). The one rule of ``run``, ``audit`` and ``conform``: None where ``atol`` or ``rtol`` is
    given (taken as they are), where there is no mass, and for an 8- or 4-bit float output (judged to one unit in its
    last place)."""
    if mass is None or atol is not None or rtol is not None or output_type in NARROW_FLOAT_TOLERANCES:
        return None
    if output_type not in DEFAULT_TOLERANCES:
        return None
    return np.asarray(default_tolerances(output_type, computed_in, 1)[1] * np.asarray(mass, np.float64))


def refuse_invalid_options(*, atol: float | None = None, rtol: float | None = None, seed: int = 0) -> None:
    """What the library's functions refuse of the options the CLI and the service refuse too, before any work: a
    tolerance that is not a finite number >= 0 (a negative one fails every element, NaN every comparison: a false
    alarm), a seed out of NumPy's range (0 to 2**63-1).

    Raises:
        InputError: naming the parameter.
    """
    import numbers
    import operator

    from ovreduce.errors import InputError

    for name, value in (("atol", atol), ("rtol", rtol)):
        if value is None:
            continue
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        if not (math.isfinite(number) and number >= 0):
            raise InputError(f"{name} must be a finite number >= 0, not {value!r}", parameter=name)
    try:
        whole = -1 if isinstance(seed, bool) else operator.index(seed)
    except TypeError:
        whole = -1
    if not 0 <= whole < 2**63:
        raise InputError(f"seed must be an integer from 0 to 2**63-1, not {seed!r}", parameter="seed")


WIDE_RTOL = 0.1
"""An rtol at or past which an agreement shows little: it lets an output a tenth of the result off agree."""


def too_wide(
    judged: Comparison,
    count: int,
    reference: npt.NDArray[Any] | None = None,
    allowance: npt.NDArray[Any] | None = None,
) -> str | None:
    """Why an agreement at ``judged``'s tolerance shows little, where its rtol, grown with the ``count`` elements each
    output reduces, is :data:`WIDE_RTOL` or more (a bf16 mean of 4,096 values takes rtol 0.5: an output of 0 agrees
    with any positive mean), or where the rounding ``allowance`` of the magnitudes it adds is as large as the
    ``reference``'s result in half of its elements or more (sums that cancel: an output of 0 agrees there); the share
    of the result it lets an output be off counts both. None where it is narrower, or nothing agreed."""
    if judged.exact or not judged.ok:
        return None
    allowed = 0.0
    if allowance is not None and reference is not None and reference.size:
        ref = np.abs(np.asarray(reference, dtype=np.float64))
        extra = np.broadcast_to(np.asarray(allowance, dtype=np.float64), ref.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts = np.where(ref > 0, extra / ref, np.where(extra > 0, np.inf, 0.0))
        parts = parts[np.isfinite(ref) & ~np.isnan(parts)]
        allowed = float(np.median(parts)) if parts.size else 0.0
    if judged.rtol < WIDE_RTOL and allowed < 1:
        return None
    share = judged.rtol + allowed
    said = ", with the rounding allowance of the magnitudes it adds," if allowed else ""
    return (
        f"the tolerance it is judged at, rtol {judged.rtol:.3g} (grown with the {count} elements each output "
        f"reduces){said} lets an output {_share(share)} of the result off agree: the agreement shows no smaller error"
    )


def _share(share: float) -> str:
    return "more than 100 times" if not math.isfinite(share) or share > 100 else f"{share:.0%}"


def f64_computed_note(
    reference: npt.NDArray[Any],
    candidate: npt.NDArray[Any],
    judged: Comparison,
    who: str,
    computed_in: str,
    count: int,
    atol: float | None,
    rtol: float | None,
    *,
    mass: npt.NDArray[Any] | None = None,
    undefined: npt.NDArray[np.bool_] | None = None,
) -> list[str]:
    """Where an f64 output agrees at the tolerance of the precision it was computed in (OpenVINO's CPU computes f64 in
    f32) but not at f64's (with the ``atol`` or ``rtol`` given, if one is): the note that says so, with the error;
    nothing where it agrees at f64's too. ``count``: the input elements; ``mass``: the rounding mass the allowance
    of the comparison came from, if one did."""
    f_atol, f_rtol = tolerances("f64", None, count, reference.size, atol, rtol)
    if (f_atol, f_rtol) == (judged.atol, judged.rtol):  # judged at f64's already
        return []
    strict = compare(reference, candidate, atol=f_atol, rtol=f_rtol,
                     allowance=rounding_allowance(mass, "f64", None, atol, rtol), undefined=undefined)  # fmt: skip
    if strict.ok:
        return []
    return [
        f"{who} computed this f64 reduction in {computed_in} (OpenVINO's CPU computes f64 in f32, a known defect): it "
        f"agrees at {computed_in}'s tolerance, but not at f64's ({f_atol:g}/{f_rtol:g}), off by "
        f"{strict.max_abs_error:.3g} at most"
    ]


def compare(
    reference: npt.NDArray[Any],
    candidate: npt.NDArray[Any],
    *,
    reference_name: str = "reference",
    candidate_name: str = "candidate",
    atol: float = 0.0,
    rtol: float = 0.0,
    exact: bool | None = None,
    allowance: npt.NDArray[Any] | None = None,
    undefined: npt.NDArray[np.bool_] | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``reference`` element-wise.

    ``exact`` defaults to True for integer and boolean references given no tolerance; with one (``atol`` or
    ``rtol`` above 0) they are compared as integers within it. ``allowance`` is an extra absolute
    tolerance per element (broadcast to the reference's shape), added to ``atol`` for floating outputs:
    the audit uses it for the rounding of tensors it could only capture in their storage type.
    ``undefined`` marks the elements whose value the specification leaves undefined (broadcast to the
    reference's shape): they are left out of the mismatches, the error figures and the NaN/inf counts, and
    ``Comparison.undefined`` counts them.
    """
    integer = exact is None and reference.dtype.kind in "biu"  # as integers: exactly, or at the tolerance given
    if exact is None:
        exact = integer and atol == 0 and rtol == 0
    if exact:
        atol = rtol = 0.0
    if reference.shape != candidate.shape:
        return Comparison(
            reference_name, candidate_name, False, int(reference.size), int(reference.size), atol, rtol,
            error=f"shape {list(candidate.shape)} differs from the reference's {list(reference.shape)}",
            exact=exact,
        )  # fmt: skip
    total = int(reference.size)
    if total == 0:
        return Comparison(reference_name, candidate_name, True, 0, 0, atol, rtol, 0.0, 0.0, 0.0, 0.0, exact=exact)
    ignore = (
        np.zeros(reference.shape, dtype=np.bool_)
        if undefined is None
        else np.broadcast_to(np.asarray(undefined, dtype=np.bool_), reference.shape)
    )
    excluded = int(np.count_nonzero(ignore))
    if (exact or integer) and reference.dtype.kind in "biu" and candidate.dtype.kind in "biu":
        if reference.dtype == candidate.dtype:
            diff_mask = reference != candidate
        else:  # mixed signedness/width: compare as Python ints, exactly
            diff_mask = reference.astype(object) != candidate.astype(object)
        ref_f = reference.astype(np.float64)
        cand_f = candidate.astype(np.float64)
        if max(reference.dtype.itemsize, candidate.dtype.itemsize) == 8:  # float64 cannot hold 64-bit differences
            # (np.abs of a 0-d object array is a Python int: keep it an array)
            exact_diff = np.abs(np.asarray(candidate.astype(object) - reference.astype(object), dtype=object))
            abs_err = np.asarray(exact_diff, dtype=object).astype(np.float64)
        else:
            abs_err = np.abs(cand_f - ref_f)
        abs_err = np.where(ignore, 0.0, abs_err)
        if not exact:  # a tolerance given: taken as it is
            diff_mask = np.asarray(diff_mask, dtype=np.bool_) & (abs_err > atol + rtol * np.abs(ref_f))
        diff_mask = np.asarray(diff_mask, dtype=np.bool_) & ~ignore
        mismatched = int(np.count_nonzero(diff_mask))
        max_abs = float(abs_err.max())
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tiny denominators: inf
            rel = np.where(ref_f != 0, abs_err / np.abs(ref_f), np.where(abs_err == 0, 0.0, np.inf))
        return Comparison(
            reference_name, candidate_name, mismatched == 0, total, mismatched, atol, rtol,
            max_abs, float(rel.max()),
            required_atol=max_abs, required_rtol=_finite_or_none(float(rel.max())),
            first_mismatch=_first(diff_mask, reference, candidate), exact=exact, undefined=excluded,
        )  # fmt: skip
    ref = reference.astype(np.float64)
    cand = candidate.astype(np.float64)
    nan_ref, nan_cand = np.isnan(ref) & ~ignore, np.isnan(cand) & ~ignore
    inf_ref, inf_cand = np.isinf(ref) & ~ignore, np.isinf(cand) & ~ignore
    both_finite = ~(nan_ref | nan_cand | inf_ref | inf_cand | ignore)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where both are inf: masked out below
        abs_err = np.where(both_finite, np.abs(cand - ref), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tiny denominators: inf
        rel_err = np.where(both_finite & (ref != 0), abs_err / np.abs(ref), 0.0)
    rel_err = np.where(both_finite & (ref == 0) & (abs_err > 0), np.inf, rel_err)
    special_ok = (nan_ref & nan_cand) | (inf_ref & inf_cand & (ref == cand))
    special_bad = ~both_finite & ~ignore & ~special_ok  # failed on a non-finite value: an infinite error
    extra = np.zeros(ref.shape)
    if allowance is not None:  # a NaN allowance (the rounding mass of NaN inputs) allows nothing
        extra = np.nan_to_num(np.broadcast_to(np.asarray(allowance, np.float64), ref.shape), nan=0.0, posinf=np.inf)
    close = both_finite & (abs_err <= atol + extra + rtol * np.abs(np.where(both_finite, ref, 0.0)))
    passed = close | special_ok | ignore
    fail_mask = ~passed
    mismatched = int(np.count_nonzero(fail_mask))
    nonfinite_mismatched = int(np.count_nonzero(special_bad))
    max_abs = math.inf if nonfinite_mismatched else float(abs_err.max())
    max_rel = math.inf if nonfinite_mismatched else float(rel_err.max())
    # Minimum tolerances: atol at the given rtol, rtol at the given atol (finite elements only).
    need_atol = float(np.max(np.maximum(abs_err - extra - rtol * np.abs(np.where(both_finite, ref, 0.0)), 0.0)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tiny denominators: inf
        rtol_need = np.where(
            abs_err > atol + extra, (abs_err - atol - extra) / np.abs(np.where(both_finite, ref, 0.0)), 0.0
        )
    need_rtol = float(np.max(rtol_need))
    # The subtractions above can land an ulp short of passing; step up to the value the check accepts.
    ref_abs = np.abs(np.where(both_finite, ref, 0.0))
    need_atol = _smallest_passing(need_atol, lambda a: bool(np.all(abs_err <= a + extra + rtol * ref_abs)))
    if math.isfinite(need_rtol):
        need_rtol = _smallest_passing(need_rtol, lambda r: bool(np.all(abs_err <= atol + extra + r * ref_abs)))
    return Comparison(
        reference_name, candidate_name, mismatched == 0, total, mismatched, atol, rtol, max_abs, max_rel,
        required_atol=None if nonfinite_mismatched else need_atol,
        required_rtol=None if nonfinite_mismatched else _finite_or_none(need_rtol),
        first_mismatch=_first(fail_mask, reference, candidate),
        allowance_max=None if allowance is None else float(np.max(extra)),
        nan={"reference": int(nan_ref.sum()), "candidate": int(nan_cand.sum())},
        inf={"reference": int(inf_ref.sum()), "candidate": int(inf_cand.sum())},
        nonfinite_mismatched=nonfinite_mismatched, exact=False, undefined=excluded,
    )  # fmt: skip


def _finite_or_none(value: float) -> float | None:
    """A required tolerance: None where none would pass (an infinite one)."""
    return value if math.isfinite(value) else None


def _smallest_passing(value: float, passes: Callable[[float], bool]) -> float:
    """``value``, or the next floats above it until ``passes`` holds (a few ulps at most)."""
    for _ in range(64):
        if passes(value):
            break
        value = float(np.nextafter(value, np.inf))
    return value


def _scalar(value: Any) -> Any:
    item = value.item() if hasattr(value, "item") else value
    return json_float(item) if isinstance(item, float) else item


def _first(
    mask: npt.NDArray[np.bool_], reference: npt.NDArray[Any], candidate: npt.NDArray[Any]
) -> dict[str, Any] | None:
    hits = np.flatnonzero(mask)
    if hits.size == 0:
        return None
    index = tuple(int(i) for i in np.unravel_index(int(hits[0]), mask.shape))
    return {
        "index": list(index),
        "reference": _scalar(reference[index] if reference.ndim else reference[()]),
        "candidate": _scalar(candidate[index] if candidate.ndim else candidate[()]),
    }


DECIDING = {"ReduceLogicalAnd": False, "ReduceLogicalOr": True, "ReduceMin": False, "ReduceMax": True}
"""The boolean value that decides a logical reduction's slice wherever it is (a ReduceMin of booleans is an AND)."""


_MASK = {"ReduceMax": -math.inf, "ReduceMin": math.inf, "ReduceLogSumExp": -math.inf}
"""The infinity that decides no slice of a ReduceMax (ReduceMin, ONNX's ReduceLogSumExp, to which exp(-inf) adds 0)
holding anything else: what masked_fill(-inf) puts at a masked score before a max (eager attention's max subtraction,
a router's sparse mixer) or a log-sum-exp (a masked log-softmax's normaliser, CTC)."""


def _masked(values: npt.NDArray[Any], reduced: tuple[int, ...], op: str) -> npt.NDArray[np.bool_] | None:
    """The elements of a float ReduceMax's or ReduceLogSumExp's (ReduceMin's) input that are -inf (+inf): masked, they
    decide no output of a slice that holds anything else; None where there are none, or for another op or element type.
    """
    if op not in _MASK or values.dtype.kind != "f" or not reduced:
        return None
    masked = values == _MASK[op]
    return masked if bool(masked.any()) else None


def masked_note(data: npt.NDArray[Any], axes: Any, op: str = "") -> str | None:
    """For a ReduceMax or ReduceLogSumExp (ReduceMin) whose input holds -inf (+inf), masked scores, in no slice that
    holds nothing else: that they were there and decided no output, the row being judged on the other elements (None
    otherwise, and where another non-finite element or a slice of only masked elements leaves the row unestablished,
    which :func:`cannot_show_error` says).
    """
    if data.size == 0 or not data.ndim:
        return None
    values = data if data.dtype.kind in "biu" else np.asarray(data, dtype=np.float64)  # (bf16 is void-kind)
    reduced = tuple(sorted({int(a) % data.ndim for a in np.asarray(axes).reshape(-1).tolist()}))
    masked = _masked(values, reduced, op)
    if masked is None or int(np.count_nonzero(~np.isfinite(values))) > int(np.count_nonzero(masked)):
        return None
    if bool(np.any(np.all(masked, axis=reduced))):
        return None
    count = int(np.count_nonzero(masked))
    return (
        f"{count} of its {data.size} input elements are {_MASK[op]:g} (masked): each slice it reduces holds a "
        f"finite element besides, so they decided no output, and it is judged on the finite elements"
    )


_ADDING = frozenset({"ReduceSum", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"})
"""The reductions that add their elements (or their absolute values, squares): one repeated value other than 0 shows
a kernel that misses or repeats an element (a sum of 128 ones is 127 or 129 then; a u8 mean of ``[100, 100, 100]``
is 85 on OpenVINO's CPU, its accumulator saturated)."""


def _shows_repeated(op: str, values: npt.NDArray[Any]) -> bool:
    """Whether slices of one repeated value (``values``, finite) show the error of a kernel that misses or repeats an
    element of them, for ``op``: for an adding reduction a value other than 0, for a product one other than 0 and 1,
    for ONNX's ReduceLogSumExp any (``log(n) + x``); never for one whose result is one of its inputs (a max, a min, a
    logical reduction) or an op not named."""
    if op == "ReduceLogSumExp":
        return True
    if op in _ADDING:
        return bool(np.any(values != 0))
    if op == "ReduceProd":
        return bool(np.any((values != 0) & (values != 1)))
    return False


def cannot_show_error(
    data: npt.NDArray[Any],
    axes: Any,
    op: str = "",
    expected: npt.NDArray[Any] | None = None,
    atol: float | None = None,
) -> str | None:
    """Why an input cannot show a reduction's error (None: it can), which no verdict on the reduction then rests on:
    empty, not finite (but for a float ReduceMax's or ReduceLogSumExp's -inf or ReduceMin's +inf, masked elements that
    decide no slice holding anything else: see :func:`masked_note`), constant, or reduced (over ``axes``) in slices of
    one element or of one repeated value each (a dynamic dim given size 1, a broadcast), where that value shows no
    missed or repeated element (any, for a max, a min or a logical reduction; 0 for a sum, a mean or a norm; 0 or 1
    for a product; none for a log-sum-exp: ``128`` ones sum to 128, and a kernel that misses one gives 127); for a
    logical reduction (``op``
    of booleans), slices that each hold the value that decides it twice or more, so that no output depends on any one
    element (so too an integer ReduceMax's or ReduceMin's slices that each hold the type's limit twice or more); or an
    output the reference computes (``expected``) that is not finite in any element (the log of a negative sum, an
    overflow), which a kernel that misses elements gives all the same; or a product whose every output element lies
    within ``atol`` of zero (many small factors, or integers that wrap to 0), which a kernel that misses elements or
    gives zeros matches. The audit's rows, run's agreements and conform's nodes say it.
    """
    if data.size == 0:
        return "its input is empty"
    values = data if data.dtype.kind in "biu" else np.asarray(data, dtype=np.float64)
    reduced = tuple(sorted({int(a) % data.ndim for a in np.asarray(axes).reshape(-1).tolist()})) if data.ndim else ()
    masked = _masked(values, reduced, op)
    if values.dtype.kind == "f":
        bad = int(np.count_nonzero(~np.isfinite(values)))
        if bad and (masked is None or int(np.count_nonzero(masked)) < bad):
            return f"{bad} of its {data.size} input elements are not finite"
        if bad and masked is not None:
            full = int(np.count_nonzero(np.all(masked, axis=reduced)))
            if full:
                return (f"{bad} of its {data.size} input elements are not finite, and {full} of the slices it reduces "
                        f"(axes {list(reduced)} of input shape {list(data.shape)}) hold nothing else: "
                        f"{_MASK[op]:g} is their output, whatever a kernel misses")  # fmt: skip
    kept = values if masked is None else values[~masked]  # (a masked element decides no slice: see _masked)
    first = kept.reshape(-1)[0]
    if data.size == 1:
        return f"its input is one element ({first.item()!r})"
    if bool(np.all(kept == first)) and not _shows_repeated(op, kept):
        if masked is not None:
            return (f"every one of its {kept.size} input elements that are not {_MASK[op]:g} (masked, "
                    f"{data.size - kept.size} more) is {first.item()!r}")  # fmt: skip
        return f"every one of its {data.size} input elements is {first.item()!r}"
    if not reduced:  # the identity (ONNX's noop_with_empty_axes): an element a kernel changes shows, as run judges it
        return None
    if math.prod(data.shape[a] for a in reduced) <= 1:
        return (f"each output element reduces one input element (axes {list(reduced)} of input shape "
                f"{list(data.shape)}): give the inputs' shapes where these dims are dynamic")  # fmt: skip
    high = values if masked is None else np.where(masked, -np.inf, values)
    low = values if masked is None else np.where(masked, np.inf, values)
    if bool(np.all(high.max(axis=reduced) == low.min(axis=reduced))) and not _shows_repeated(op, values):
        return (
            f"each slice it reduces holds one repeated value (axes {list(reduced)} of input shape {list(data.shape)})"
        )
    decides: Any = DECIDING.get(op) if values.dtype.kind == "b" else None
    if op in ("ReduceMax", "ReduceMin") and values.dtype.kind in "iu":  # the type's limit decides it as True an OR
        decides = np.iinfo(data.dtype).max if op == "ReduceMax" else np.iinfo(data.dtype).min
    if decides is not None and bool(np.all(np.sum(values == decides, reduced) >= 2)):
        where = f"axes {list(reduced)} of input shape {list(data.shape)}"
        return (f"each slice it reduces ({where}) holds {decides} twice or more: every output element is {decides}, "
                f"and stays so whichever one element a kernel misses or misreads")  # fmt: skip
    floating = expected is not None and expected.dtype.kind not in "biu"  # (bf16 is void-kind)
    if expected is not None and expected.size and floating and not np.isfinite(np.asarray(expected, np.float64)).any():
        return f"none of the {expected.size} output elements the reference computes is finite, whatever a kernel adds"
    if op == "ReduceProd" and expected is not None and atol is not None and bool(np.all(np.abs(expected) <= atol)):
        within = f"within the absolute tolerance ({atol:g}) of " if atol else ""
        return (f"every output element the reference computes is {within}0 (a product of many small factors, or one "
                f"that wraps to 0), as a kernel that misses elements or gives zeros computes it")  # fmt: skip
    return None
