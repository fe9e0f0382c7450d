"""ovreduce.shapes against OpenVINO's own ``ov.PartialShape(str)`` parser and interval algebra.

OpenVINO is the oracle for every string it reads sensibly; where it silently turns nonsense into a
shape (``-2`` -> 0, ``5..3`` -> an empty interval, an overflowing integer -> 0) ovreduce refuses.
"""

from __future__ import annotations

import json
import re

import openvino as ov
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovreduce.shapes import INT64_MAX, Dimension, PartialShape, parse_named_shapes

# (lo, hi) per dim with hi = -1 for "unbounded", None for a dynamic rank: OpenVINO's min/max lengths.
Bounds = list[tuple[int, int]] | None


def ov_bounds(text: str) -> Bounds:
    shape = ov.PartialShape(text)
    if shape.rank.is_dynamic:
        return None
    return [(d.get_min_length(), d.get_max_length()) for d in shape]


def our_bounds(shape: PartialShape) -> Bounds:
    if shape.dims is None:
        return None
    return [(d.lo, -1 if d.hi is None else d.hi) for d in shape.dims]


def to_ov(shape: PartialShape) -> ov.PartialShape:
    if shape.dims is None:
        return ov.PartialShape.dynamic()
    return ov.PartialShape([ov.Dimension(d.lo, -1 if d.hi is None else d.hi) for d in shape.dims])


# -- every syntax form OpenVINO reads ------------------------------------------------------------------
ACCEPTED = {
    "question-mark": ("?", [(0, -1)]),
    "minus-one": ("-1", [(0, -1)]),
    "interval": ("2..5", [(2, 5)]),
    "lower-bound-only": ("3..", [(3, -1)]),
    "upper-bound-only": ("..7", [(0, 7)]),
    "dots-only": ("..", [(0, -1)]),
    "zero-interval": ("0..0", [(0, 0)]),
    "degenerate-interval": ("4..4", [(4, 4)]),
    "dynamic-rank": ("...", None),
    "dynamic-rank-bracketed": ("[...]", None),
    "dynamic-rank-spaced": (" [ ... ] ", None),
    "empty-string-is-scalar": ("", []),
    "blank-is-scalar": (" ", []),
    "brackets-scalar": ("[]", []),
    "brackets-blank-scalar": ("[ ]", []),
    "comma-space": ("1, 2", [(1, 1), (2, 2)]),
    "bracketed": ("[1,2]", [(1, 1), (2, 2)]),
    "bracketed-spaces": ("[ 1, ?]", [(1, 1), (0, -1)]),
    "spaces-everywhere": ("  [ 2 , 3 ]  ", [(2, 2), (3, 3)]),
    "tabs-newlines": ("\t[\n1,\r\n2 ]\n", [(1, 1), (2, 2)]),
    "leading-zeros": ("007", [(7, 7)]),
    "zero": ("0", [(0, 0)]),
    "spaced-interval-edges": (" ..5 ", [(0, 5)]),
    "mixed": ("[1,?,-1,2..,..8,3..9,0]", [(1, 1), (0, -1), (0, -1), (2, -1), (0, 8), (3, 9), (0, 0)]),
    "largest-size": ("9223372036854775806", [(INT64_MAX - 1, INT64_MAX - 1)]),
    # OpenVINO stores "no upper bound" as 2^63-1, so an explicit 2^63-1 upper bound is unbounded.
    "int64-max-upper-bound": ("2..9223372036854775807", [(2, -1)]),
    "int64-max-upper-bound-only": ("..9223372036854775807", [(0, -1)]),
    # more digits than CPython's int() converts (4,300), all but the last leading zeros
    "leading-zeros-past-4300-digits": ("0" * 5000 + "12", [(12, 12)]),
    "leading-zeros-in-an-interval": ("0" * 5000 + "3.." + "0" * 5000 + "9", [(3, 9)]),
    "leading-zeros-on-int64-max-upper-bound": ("2.." + "0" * 5000 + "9223372036854775807", [(2, -1)]),
}


@pytest.mark.parametrize(("text", "expected"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_parse_matches_openvino(text: str, expected: Bounds) -> None:
    assert ov_bounds(text) == expected, "the table is wrong about OpenVINO"
    shape = PartialShape.parse(text)
    assert our_bounds(shape) == expected
    assert (shape.rank is None) == (expected is None)


# -- what OpenVINO itself rejects ------------------------------------------------------------------------
REJECTED_BY_BOTH = {
    "empty-field": "[1,,2]",
    "trailing-comma": "1,",
    "only-comma": ",",
    "unclosed-bracket": "[1,2",
    "unopened-bracket": "1,2]",
    "nested-brackets": "[[1]]",
    "space-separated": "1 2",
    "plus-sign": "+1",
    "hex": "0x10",
    "float": "1.5",
    "exponent": "1e3",
    "word": "abc",
    "question-interval": "?..3",
    "three-dots-after-digit": "1...",
    "two-intervals": "1..2..3",
    "ellipsis-with-dims": "[...,1]",
    "space-inside-interval-lo": "1 ..5",
    "space-inside-interval-hi": "1.. 5",
    "non-ascii-digit": "\u0661",
    "nbsp-is-not-a-space": "\u00a01",
    "unicode-line-separator": "\u2028",
    "nul": "1\x00",
}


@pytest.mark.parametrize("text", REJECTED_BY_BOTH.values(), ids=REJECTED_BY_BOTH.keys())
def test_rejects_what_openvino_rejects(text: str) -> None:
    with pytest.raises(RuntimeError):
        ov.PartialShape(text)
    with pytest.raises(ValueError, match="cannot parse"):
        PartialShape.parse(text)


# -- nonsense OpenVINO accepts and ovreduce refuses -----------------------------------------------------
# (text, what OpenVINO silently makes of it, a regex the refusal must match)
REFUSED = {
    "minus-two": ("-2", [(0, 0)], r"'-2'.*non-negative integer"),
    "lone-minus": ("-", [(0, 0)], r"'-'.*non-negative integer"),
    "minus-zero": ("-0", [(0, 0)], r"'-0'.*non-negative integer"),
    "minus-inside-number": ("6-1", [(6, 6)], r"'6-1'.*non-negative integer"),
    "empty-interval": ("5..3", [(-1, -1)], r"empty interval '5\.\.3'.*upper bound 3 is below the lower bound 5"),
    "overflow": ("99999999999999999999", [(0, 0)], r"99999999999999999999 does not fit in int64"),
    "overflow-by-one": ("9223372036854775808", [(0, 0)], r"9223372036854775808 does not fit in int64"),
    "overflow-upper-bound": ("1..99999999999999999999", [(1, -1)], r"does not fit in int64"),
    "overflow-past-4300-digits": ("9" * 5000, [(0, 0)], r"^dimension 9{20}\.\.\. \(5000 digits\) does not fit"),
    "overflow-past-4300-digits-upper": ("1.." + "9" * 5000, [(1, -1)], r"\(5000 digits\) does not fit in int64$"),
    "int64-max-as-size": ("9223372036854775807", [(-1, -1)], r"2\^63-1.*reserves.*unbounded"),
    "int64-max-as-lower-bound": ("9223372036854775807..", [(-1, -1)], r"2\^63-1.*reserves.*unbounded"),
    "minus-one-lower-bound": ("-1..3", [(0, 3)], r"'-1\.\.3'.*non-negative integer"),
    "minus-one-upper-bound": ("1..-1", [(-1, -1)], r"'1\.\.-1'.*non-negative integer"),
    "minus-in-second-dim": ("[1,-5]", [(1, 1), (0, 0)], r"'-5'.*non-negative integer"),
}


@pytest.mark.parametrize(("text", "openvino_reads", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_refuses_nonsense_openvino_accepts(text: str, openvino_reads: Bounds, message: str) -> None:
    assert ov_bounds(text) == openvino_reads, "OpenVINO changed: revisit whether ovreduce should still refuse"
    with pytest.raises(ValueError, match=message):
        PartialShape.parse(text)


def test_a_long_dim_is_named_in_the_products_words_and_briefly() -> None:
    """A dim of more digits than CPython's ``int()`` converts is no int64: the message says so, in a few words, not
    CPython's own ("Exceeds the limit (4300 digits) for integer string conversion") after the whole text."""
    for text in ("9" * 5000, "1.." + "8" * 5000, "00" + "7" * 5000 + "..", "[1," + "9" * 4400 + ",3]"):
        with pytest.raises(ValueError, match="does not fit in int64") as info:
            PartialShape.parse(text)
        assert "4300" not in str(info.value) and len(str(info.value)) < 200, str(info.value)
    with pytest.raises(ValueError, match=r"2\^63-1.*reserves.*unbounded") as info:
        PartialShape.parse("0" * 5000 + "9223372036854775807")
    assert len(str(info.value)) < 400


# -- differential fuzzing -------------------------------------------------------------------------------
_SPACE = " \t\n\r\v\f"
_TOKENS = st.sampled_from(
    [*"0123456789?.-,[] \t", "..", "...", "-1", "9223372036854775807", "9223372036854775806", "\u00a0"]
)


def _openvino_reads_nonsense(text: str, openvino: Bounds) -> bool:
    """Independent of ovreduce: does OpenVINO's result come from an input no sane writer produces?"""
    if openvino and any(lo < 0 for lo, _ in openvino):  # an empty interval or 2^63-1 as a size
        return True
    body = text.strip(_SPACE).removeprefix("[").removesuffix("]")
    if any("-" in f and f.strip(_SPACE) != "-1" for f in body.split(",")):  # "-2", "6-1", "-1..3"
        return True
    if "," in body and any(not f.strip(_SPACE) for f in body.split(",")):  # "0, ,0": a blank dim read as 0
        return True
    return any(int(run) >= INT64_MAX for run in re.findall(r"[0-9]+", text))  # overflow, or 2^63-1


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=10).map("".join))
def test_parse_differential_fuzz(text: str) -> None:
    try:
        openvino: Bounds | str = ov_bounds(text)
    except RuntimeError:
        openvino = "rejected"
    try:
        ours: Bounds | str = our_bounds(PartialShape.parse(text))
    except ValueError:
        ours = "rejected"
    if ours == "rejected" and openvino != "rejected":
        assert isinstance(openvino, list | type(None))
        assert _openvino_reads_nonsense(text, openvino), f"ovreduce refuses {text!r}, OpenVINO reads {openvino}"
    else:
        assert ours == openvino


# -- generated shapes: round trips and the interval algebra ----------------------------------------------
_SIZES = st.one_of(st.integers(0, 16), st.integers(0, INT64_MAX - 1))


@st.composite
def dimensions(draw: st.DrawFn) -> Dimension:
    lo = draw(_SIZES)
    kind = draw(st.sampled_from(["static", "dynamic", "lower", "interval"]))
    if kind == "static":
        return Dimension.static(lo)
    if kind == "dynamic":
        return Dimension.dynamic()
    if kind == "lower":
        return Dimension(lo, None)
    return Dimension(lo, draw(st.integers(lo, INT64_MAX - 1)))


small_dimensions = st.builds(
    lambda lo, width: Dimension(lo, None if width is None else lo + width),
    st.integers(0, 6),
    st.one_of(st.none(), st.integers(0, 6)),
)
shapes = st.one_of(st.just(PartialShape(None)), st.lists(dimensions(), max_size=6).map(tuple).map(PartialShape))
small_shapes = st.one_of(
    st.just(PartialShape(None)), st.lists(small_dimensions, max_size=3).map(tuple).map(PartialShape)
)


@given(shapes)
def test_str_round_trip(shape: PartialShape) -> None:
    text = str(shape)
    assert PartialShape.parse(text) == shape
    assert PartialShape.parse(text.strip("[]")) == shape  # the unbracketed form too
    assert our_bounds(shape) == ov_bounds(text), "OpenVINO reads our str() differently"


@given(shapes)
def test_json_round_trip(shape: PartialShape) -> None:
    doc = json.loads(json.dumps(shape.to_json()))
    assert PartialShape.from_json(doc) == shape


@given(dimensions())
def test_dimension_str_round_trip(dim: Dimension) -> None:
    assert Dimension.parse(str(dim)) == dim
    assert Dimension.from_json(json.loads(json.dumps(dim.to_json()))) == dim


@given(small_shapes, small_shapes)
def test_compatible_matches_openvino(a: PartialShape, b: PartialShape) -> None:
    assert a.compatible(b) == to_ov(a).compatible(to_ov(b))
    assert a.compatible(b) == b.compatible(a)


@given(small_shapes, small_shapes)
def test_contains_matches_openvino_relaxes(a: PartialShape, b: PartialShape) -> None:
    # contains: every shape b allows, a allows -> OpenVINO's "a relaxes b" / "b refines a".
    assert a.contains(b) == to_ov(a).relaxes(to_ov(b))
    assert a.contains(b) == to_ov(b).refines(to_ov(a))


@given(small_dimensions, small_dimensions)
def test_dimension_algebra_matches_openvino(a: Dimension, b: Dimension) -> None:
    ova, ovb = ov.Dimension(a.lo, -1 if a.hi is None else a.hi), ov.Dimension(b.lo, -1 if b.hi is None else b.hi)
    assert a.compatible(b) == ova.compatible(ovb)
    assert a.contains(b) == ova.relaxes(ovb)


@given(small_dimensions)
def test_contains_is_reflexive_and_implies_compatible(d: Dimension) -> None:
    assert d.contains(d)
    assert d.compatible(d)
    assert Dimension.dynamic().contains(d)


def test_to_json_forms() -> None:
    assert PartialShape.parse("[1,?,2..5,3..,..4]").to_json() == [1, -1, "2..5", "3..", "0..4"]
    assert PartialShape.parse("...").to_json() is None
    assert PartialShape.parse("").to_json() == []


@pytest.mark.parametrize(
    ("item", "message"),
    [
        pytest.param(-2, r">= -1, got -2", id="int-below-minus-one"),
        pytest.param(True, r"not True", id="bool"),
        pytest.param(1.5, r"not 1\.5", id="float"),
        pytest.param("5..3", r"empty interval", id="empty-interval-string"),
    ],
)
def test_dimension_from_json_refuses(item: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Dimension.from_json(item)


@pytest.mark.parametrize("item", [pytest.param("1,2", id="string"), pytest.param(3, id="int")])
def test_shape_from_json_refuses_non_lists(item: object) -> None:
    with pytest.raises(ValueError, match="must be a list of dimensions or null"):
        PartialShape.from_json(item)


def test_dynamic_rank_has_no_dims() -> None:
    shape = PartialShape.parse("...")
    assert shape.rank is None and not shape.is_static
    with pytest.raises(ValueError, match="dynamic rank"):
        list(shape)
    with pytest.raises(ValueError, match="not static"):
        shape.to_list()


# -- named shapes: ovreduce's NAME=SHAPE and benchmark_app's / ovc's NAME[SHAPE] -------------------------------
@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (["x=[1,2]"], {"x": "[1,2]"}),
        (["x=1,2"], {"x": "[1,2]"}),
        (["data[2,3,224,224]"], {"data": "[2,3,224,224]"}),
        (["a[1,3],b[?,4..8]"], {"a": "[1,3]", "b": "[?,4..8]"}),
        (["a=[1],b=[2]"], {"a": "[1]", "b": "[2]"}),
        (["a[1, 3] , b[...]"], {"a": "[1,3]", "b": "[...]"}),
        (["serving_default_x:0[1,16,96]"], {"serving_default_x:0": "[1,16,96]"}),
        (["a/b=[-1,5]", "c[]"], {"a/b": "[?,5]", "c": "[]"}),
        (["x=[6," + "0" * 5000 + "12,10]"], {"x": "[6,12,10]"}),
        (["x[" + "0" * 5000 + "3..4]"], {"x": "[3..4]"}),
        # names holding '=' or '[': the name ends at the last '=' before its shape
        (["a=b=[4,5]"], {"a=b": "[4,5]"}),
        (["a=b=4,5"], {"a=b": "[4,5]"}),
        (["x[1]=[4,5]"], {"x[1]": "[4,5]"}),
        (["x[1]=[4,5],y[2]"], {"x[1]": "[4,5]", "y": "[2]"}),
        (["a[1], x[1]=[3], b=c=[4]"], {"a": "[1]", "x[1]": "[3]", "b=c": "[4]"}),
        (["=x=[1]"], {"=x": "[1]"}),
    ],
)
def test_named_shapes_in_both_syntaxes(items: list[str], expected: dict[str, str]) -> None:
    assert {k: str(v) for k, v in parse_named_shapes(items).items()} == expected


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("x", "expected NAME=SHAPE or NAME[SHAPE]"),
        ("[1,2]", "expected NAME=SHAPE or NAME[SHAPE]"),
        ("a[1", "the '[' after 'a' is never closed"),
        ("a[1]x", "expected ',' or the end after the shape of 'a'"),
        ("a=b[4,5]", "expected NAME=SHAPE or NAME[SHAPE]"),
        ("=[4,5]", "expected NAME=SHAPE or NAME[SHAPE]"),
        ("x[1]=[4,5", "the '[' after 'x[1]' is never closed"),
        ("a=[[1,8,64]]", "the shape of 'a': a shape is one bracketed list of dimensions"),
        ("a[1],", "a ',' at the end names no input"),
        ("a[1],a[2]", "'a' is given a shape twice"),
        ("a[1,x]", "cannot parse dimension 'x'"),
        ("a[1,\u00a03]", "cannot parse dimension '\\xa03'"),  # a Unicode space is no blank to OpenVINO: it is quoted
    ],
)
def test_named_shapes_refused_precisely(item: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        parse_named_shapes([item])
    assert repr(item) in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1,8,64", "its '[' is never closed"),
        ("[1,8,64]]", "its ']' closes no '['"),
        ("1,8,64]", "its ']' closes no '['"),
        ("[1,8,64],[1]", "it holds several bracketed shapes"),
        ("[1,[2],3]", "with no bracket inside"),
        ("[1,8,64]x", "text after the shape's closing ']': 'x'"),
        ("[1,8,64]\u00a0", "text after the shape's closing ']': '\\xa0'"),
        ("[[1,8,64]]", "with no bracket inside"),
    ],
)
def test_a_shape_with_a_bracket_astray_says_so_not_that_a_dimension_is_wrong(text: str, message: str) -> None:
    """The shape of a run's or an audit's ``shapes``, which holds one shape: a dimension next to a stray bracket is
    fine, the bracket is what is wrong."""
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        PartialShape.parse(text)
    assert "dimension" not in str(info.value).replace("list of dimensions", ""), str(info.value)


def test_a_named_shape_of_a_dim_past_int64_is_refused_briefly() -> None:
    said = r"'data=\[6,9{20}.*\(5012 characters\).*\(5000 digits\) does not fit in int64"
    with pytest.raises(ValueError, match=said) as info:
        parse_named_shapes(["data=[6," + "9" * 5000 + ",10]"])
    assert len(str(info.value)) < 300 and "4300" not in str(info.value), str(info.value)
