"""Golden cases for the Reduce* shape rule (ReductionOp.output_shape, ovreduce/ops/reduce.py), one row per rule.

Every expected shape and message here is what OpenVINO 2026.4.1 gives for the same inputs (the
differential test checks the same rules on random models; ``test_parse_bool_attr_matches_openvino``
checks the boolean attribute spellings against ``Core.read_model``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import element_type
from ovreduce.ops.axes import normalize_axes
from ovreduce.ops.base import parse_bool_attr
from ovreduce.ops.reduce import OPENVINO_AXES
from ovreduce.ops.registry import reductions
from ovreduce.shapes import PartialShape


@dataclass(frozen=True)
class Rule:
    id: str
    data: str  # OpenVINO shape syntax, "..." for a dynamic rank
    axes_shape: str | None  # None: unknown
    axes: tuple[int, ...] | None  # None: runtime axes
    keep_dims: bool
    expected: str | None = None  # the output shape
    error: str | None = None  # or OpenVINO's message
    op: str = "ReduceSum"
    data_type: str | None = None
    axes_type: str | None = None


RULES = [
    # constant axes, static rank
    Rule("negative-axis-normalised", "[2,3,4]", "[1]", (-1,), False, "[2,3]"),
    Rule("negative-axis-normalised-keep", "[2,3,4]", "[1]", (-3,), True, "[1,3,4]"),
    Rule("negative-and-positive-mixed", "[2,3,4,5]", "[2]", (-1, 0), False, "[3,4]"),
    Rule("duplicate-axes-harmless", "[2,3,4]", "[3]", (1, 1, 1), False, "[2,4]"),
    Rule("duplicate-via-negative-harmless", "[2,3,4]", "[2]", (1, -2), True, "[2,1,4]"),
    Rule("scalar-axes-one-axis", "[2,3,4]", "[]", (1,), False, "[2,4]"),
    Rule("scalar-axes-one-axis-keep", "[2,3,4]", "[]", (-1,), True, "[2,3,1]"),
    Rule("empty-axes-identity", "[2,3,4]", "[0]", (), False, "[2,3,4]"),
    Rule("empty-axes-identity-keep", "[2,?,3..]", "[0]", (), True, "[2,?,3..]"),
    Rule("reduced-dims-become-1", "[2,3,4]", "[2]", (0, 2), True, "[1,3,1]"),
    Rule("reduced-dims-disappear", "[2,3,4]", "[2]", (0, 2), False, "[3]"),
    Rule("all-axes-give-a-scalar", "[2,3,4]", "[3]", (2, 0, 1), False, "[]"),
    Rule("reduced-dynamic-dim-becomes-1", "[?,3]", "[1]", (0,), True, "[1,3]"),
    Rule("zero-dim-reduced", "[0,3]", "[1]", (0,), True, "[1,3]"),
    Rule("intervals-pass-through", "[2..5,?,3..,..4]", "[1]", (1,), False, "[2..5,3..,..4]"),
    Rule("intervals-pass-through-keep", "[2..5,?,3..,..4]", "[1]", (1,), True, "[2..5,1,3..,..4]"),
    Rule("reduced-interval-becomes-1", "[2..5,..4]", "[1]", (0,), True, "[1,..4]"),
    # a scalar is validated as if it had rank 1
    Rule("scalar-data-empty-axes", "[]", "[0]", (), True, "[]"),
    Rule("scalar-data-axis-0", "[]", "[1]", (0,), False, "[]"),
    Rule("scalar-data-axis-minus-1", "[]", "[]", (-1,), False, "[]"),
    Rule("scalar-data-axis-0-keep", "[]", "[1]", (0,), True, error="Accessing out-of-range dimension"),
    Rule("scalar-data-axis-1", "[]", "[1]", (1,), False, error="Axis 1 out of the tensor rank range [-1, 0]."),
    # runtime axes
    Rule("runtime-keep-same-rank-all-dynamic", "[2,3..5,4]", "[2]", None, True, "[?,?,?]"),
    Rule("runtime-keep-unknown-axes-shape", "[2,3]", None, None, True, "[?,?]"),
    Rule("runtime-one-element-rank-minus-1", "[2,3,4]", "[1]", None, False, "[?,?]"),
    Rule("runtime-scalar-rank-minus-1", "[2,3,4]", "[]", None, False, "[?,?]"),
    Rule("runtime-1..1-is-one-element", "[2,3,4]", "[1..1]", None, False, "[?,?]"),
    Rule("runtime-two-elements-dynamic-rank", "[2,3,4]", "[2]", None, False, "..."),
    Rule("runtime-zero-elements-dynamic-rank", "[2,3,4]", "[0]", None, False, "..."),
    Rule("runtime-unknown-count-dynamic-rank", "[2,3,4]", "[?]", None, False, "..."),
    Rule("runtime-interval-count-dynamic-rank", "[2,3,4]", "[1..3]", None, False, "..."),
    Rule("runtime-axes-dynamic-rank", "[2,3,4]", "...", None, False, "..."),
    Rule("runtime-one-element-scalar-data", "[]", "[1]", None, False, "[]"),
    # dynamic data rank
    Rule("dynamic-rank-const-axes", "...", "[1]", (1,), False, "..."),
    Rule("dynamic-rank-const-axes-keep", "...", "[1]", (1,), True, "..."),
    Rule("dynamic-rank-any-axis-value", "...", "[2]", (7, -9), True, "..."),
    Rule("dynamic-rank-runtime-one-element", "...", "[1]", None, False, "..."),
    # errors, with OpenVINO's messages
    Rule("axis-too-large", "[2,3]", "[1]", (2,), False, error="Axis 2 out of the tensor rank range [-2, 1]."),
    Rule("axis-too-small", "[2,3]", "[2]", (0, -3), True, error="Axis -3 out of the tensor rank range [-2, 1]."),
    Rule("axes-rank-2", "[2,3]", "[1,1]", (0,), False, error="Axes input must be a scalar or 1D input. Got: [1,1]"),
    Rule("axes-rank-2-runtime", "[2,3]", "[..4,3..]", None, False,
         error="Axes input must be a scalar or 1D input. Got: [..4,3..]"),
    Rule("axes-rank-2-dynamic-data", "...", "[2,?]", None, True,
         error="Axes input must be a scalar or 1D input. Got: [2,?]"),
    Rule("f32-axes", "[2,3]", "[1]", None, False, axes_type="f32",
         error="Element type of axes input must be integer. Got: f32"),
    Rule("f16-axes", "[2,3]", "[1]", None, False, axes_type="f16",
         error="Element type of axes input must be integer. Got: f16"),
    Rule("boolean-axes", "[2,3]", "[1]", None, False, axes_type="boolean",
         error="Element type of axes input must be integer. Got: boolean"),
    Rule("nf4-axes-accepted", "[2,3]", "[1]", None, False, "[?]", axes_type="nf4"),
    Rule("string-axes-accepted", "[2,3]", "[1]", None, False, "[?]", axes_type="string"),
    Rule("u8-axes-accepted", "[2,3]", "[1]", (1,), False, "[2]", axes_type="u8"),
    *(
        Rule(f"boolean-data-{op}", "[2,3]", "[1]", (1,), False, op=op, data_type="boolean",
             error="Element type of data input must be numeric. Got: boolean")
        for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2")
    ),
    Rule("string-data-accepted", "[2,3]", "[1]", (1,), False, "[2]", op="ReduceMax", data_type="string"),
    Rule("dynamic-type-data-accepted", "[2,3]", "[1]", (1,), False, "[2]", op="ReduceMean", data_type="dynamic"),
    *(
        Rule(f"{t}-data-{op}", "[2,3]", "[1]", (1,), False, op=op, data_type=t,
             error="Element type of data input must be boolean.")
        for op in ("ReduceLogicalAnd", "ReduceLogicalOr") for t in ("f32", "i32")
    ),
    Rule("boolean-data-logical", "[2,3]", "[1]", (1,), True, "[2,1]", op="ReduceLogicalOr", data_type="boolean"),
    Rule("dynamic-type-data-logical", "[2,3]", "[1]", (1,), True, "[2,1]", op="ReduceLogicalAnd", data_type="dynamic"),
    Rule("data-type-checked-before-axes", "[2,3]", "[1,1]", (1,), False, op="ReduceMean", data_type="boolean",
         axes_type="f32", error="Element type of data input must be numeric. Got: boolean"),
    Rule("axes-type-checked-before-axes-rank", "[2,3]", "[1,1]", (1,), False, axes_type="f32",
         error="Element type of axes input must be integer. Got: f32"),
    Rule("axes-rank-checked-before-values", "[2,3]", "[1,1]", (9,), False,
         error="Axes input must be a scalar or 1D input. Got: [1,1]"),
    # the four examples of the ReduceMean-1 specification
    Rule("spec-ReduceMean-1-example-1", "[6,12,10,24]", "[2]", (2, 3), True, "[6,12,1,1]", op="ReduceMean"),
    Rule("spec-ReduceMean-1-example-2", "[6,12,10,24]", "[2]", (2, 3), False, "[6,12]", op="ReduceMean"),
    Rule("spec-ReduceMean-1-example-3", "[6,12,10,24]", "[1]", (1,), False, "[6,10,24]", op="ReduceMean"),
    Rule("spec-ReduceMean-1-example-4", "[6,12,10,24]", "[1]", (-2,), False, "[6,12,24]", op="ReduceMean"),
]  # fmt: skip


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_reduce_rule(rule: Rule) -> None:
    def call() -> PartialShape:
        return reductions()[rule.op].output_shape(
            PartialShape.parse(rule.data),
            None if rule.axes_shape is None else PartialShape.parse(rule.axes_shape),
            rule.axes,
            rule.keep_dims,
            data_type=None if rule.data_type is None else element_type(rule.data_type),
            axes_type=None if rule.axes_type is None else element_type(rule.axes_type),
        )

    if rule.error is not None:
        with pytest.raises(ShapeInferenceError) as raised:
            call()
        assert raised.value.message == rule.error
    else:
        assert rule.expected is not None
        assert call() == PartialShape.parse(rule.expected)


def test_rules_cover_every_reduction() -> None:
    assert {r.op for r in RULES} == set(reductions())


@pytest.mark.parametrize(
    ("axes", "rank", "expected"),
    [((0, -1), 2, (0, 1)), ((-4, 3), 4, (0, 3)), ((), 3, ()), ((0, -1), 0, ())],
    ids=["rank2", "rank4-bounds", "empty", "scalar-drops-its-axes"],
)
def test_normalize_axes(axes: tuple[int, ...], rank: int, expected: tuple[int, ...]) -> None:
    assert normalize_axes(axes, rank, OPENVINO_AXES) == expected


# -- boolean attributes ---------------------------------------------------------------------------------------
BOOL_TEXTS = [
    ("true", True, True),
    ("True", True, True),
    ("TRUE", True, True),
    ("tRuE", True, True),
    ("1", True, True),
    ("false", False, True),
    ("False", False, True),
    ("FALSE", False, True),
    ("0", False, True),
    (" true", False, False),
    ("true ", False, False),
    ("yes", False, False),
    ("", False, False),
    ("2", False, False),
    ("01", False, False),
    ("-1", False, False),
    ("on", False, False),
]


@pytest.mark.parametrize(("text", "value", "recognised"), BOOL_TEXTS, ids=[repr(t[0]) for t in BOOL_TEXTS])
def test_parse_bool_attr(text: str, value: bool, recognised: bool) -> None:
    assert parse_bool_attr(text) == (value, recognised)
    if not recognised:
        assert parse_bool_attr(text, default=True) == (True, False)


def test_parse_bool_attr_absent_is_default() -> None:
    assert parse_bool_attr(None) == (False, True)
    assert parse_bool_attr(None, default=True) == (True, True)


@pytest.fixture(scope="module")
def keep_dims_ir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved ReduceSum([2,3,4], axes [1], keep_dims=true)."""
    data = ops.parameter(ov.PartialShape([2, 3, 4]), ov.Type.f32, name="data")
    node = ops.reduce_sum(data, ops.constant(np.array([1], dtype=np.int64)), True)
    node.set_friendly_name("reduce")
    xml = tmp_path_factory.mktemp("keep_dims") / "model.xml"
    ov.save_model(ov.Model([ops.result(node)], [data], "keep_dims"), str(xml), compress_to_fp16=False)
    return xml


@pytest.mark.parametrize(("text", "value", "recognised"), BOOL_TEXTS, ids=[repr(t[0]) for t in BOOL_TEXTS])
def test_parse_bool_attr_matches_openvino(
    text: str, value: bool, recognised: bool, keep_dims_ir: Path, tmp_path: Path
) -> None:
    """OpenVINO's IR reader gives keep_dims=``value`` for ``text``: rank 3 when true, 2 when false."""
    root = etree.fromstring(keep_dims_ir.read_bytes())
    layer: Any = next(el for el in root.iter("layer") if el.get("name") == "reduce")
    layer.find("data").set("keep_dims", text)
    xml = tmp_path / "model.xml"
    xml.write_bytes(etree.tostring(root))
    read = ov.Core().read_model(str(xml), str(keep_dims_ir.with_suffix(".bin")))
    shape = read.get_results()[0].get_output_partial_shape(0)
    assert shape.rank.get_length() == (3 if value else 2)
    assert parse_bool_attr(text)[0] == value
