"""ovreduce.reference.onnx against the ONNX specification, onnx.defs and onnx.reference."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper
from onnx.backend.test.case.node import collect_testcases
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from ovreduce.errors import InputError
from ovreduce.reference import onnx as ref

BF16 = np.dtype(ml_dtypes.bfloat16)

# The literal data of the ReduceMean examples in onnx-ReduceMean.rst.
SPEC_DATA = np.array([[[5, 1], [20, 2]], [[30, 1], [40, 2]], [[55, 1], [60, 2]]], dtype=np.float32)

NUMPY_OF_ONNX = {
    "double": np.dtype(np.float64),
    "float": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": BF16,
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}
TENSOR_TYPE = {
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    BF16: TensorProto.BFLOAT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}
RTOL = {
    np.dtype(np.float64): 1e-12,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float16): 1e-3,
    BF16: 1e-2,
}


def assert_same(got: npt.NDArray[Any], want: npt.NDArray[Any], dtype: np.dtype[Any]) -> None:
    """Equal shape and dtype; exact for integers and bool, tight rtol (NaN-aware) for floats."""
    assert got.dtype == dtype
    assert got.shape == want.shape
    if dtype in RTOL:
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=RTOL[dtype], atol=0, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got, want.astype(dtype))


def run_reference(model: Any, feeds: dict[str, npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """Run onnx.reference; its NumPy warnings (empty mean, overflow) are its business, not ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        outputs = ReferenceEvaluator(model).run(None, feeds)
    assert isinstance(outputs, list)
    return np.asarray(outputs[0])


def reduce_model(
    op_type: str,
    opset: int,
    dtype: np.dtype[Any],
    rank: int,
    axes: Sequence[int] | None,
    keepdims: int,
    noop: int,
) -> tuple[Any, dict[str, npt.NDArray[Any]]]:
    """A one-node model; axes as attribute or as an input according to the operator version."""
    version = ref.op_version(op_type, opset)
    axes_is_input = version >= (13 if op_type == "ReduceSum" else 18)
    inputs = ["x"]
    graph_inputs = [helper.make_tensor_value_info("x", TENSOR_TYPE[dtype], [None] * rank)]
    extra: dict[str, npt.NDArray[Any]] = {}
    attrs: dict[str, Any] = {"keepdims": keepdims}
    node = helper.make_node(op_type, inputs, ["y"], **attrs)
    if axes_is_input:
        if noop:
            node.attribute.append(helper.make_attribute("noop_with_empty_axes", noop))
        if axes is not None:
            node.input.append("axes")
            graph_inputs.append(helper.make_tensor_value_info("axes", TensorProto.INT64, [len(axes)]))
            extra["axes"] = np.array(axes, dtype=np.int64)
    elif axes is not None:
        node.attribute.append(helper.make_attribute("axes", list(axes), attr_type=AttributeProto.INTS))
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_tensor_value_info("y", TENSOR_TYPE[dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model, extra


def random_data(dtype: np.dtype[Any], shape: tuple[int, ...], seed: int) -> npt.NDArray[Any]:
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind == "u":
        return rng.integers(0, 100, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.uniform(-10, 10, shape).astype(dtype)


# --- the specification's examples -------------------------------------------------------------------

SPEC_REDUCE_MEAN = [
    pytest.param([1], 0, [[12.5, 1.5], [35.0, 1.5], [57.5, 1.5]], id="do_not_keepdims"),
    pytest.param([1], 1, [[[12.5, 1.5]], [[35.0, 1.5]], [[57.5, 1.5]]], id="keepdims"),
    pytest.param(None, 1, [[[18.25]]], id="default_axes_keepdims"),
    pytest.param([-2], 1, [[[12.5, 1.5]], [[35.0, 1.5]], [[57.5, 1.5]]], id="negative_axes_keepdims"),
]


@pytest.mark.parametrize("opset", [1, 11, 13, 18, 28])
@pytest.mark.parametrize(("axes", "keepdims", "printed"), SPEC_REDUCE_MEAN)
def test_spec_reduce_mean_example(axes: list[int] | None, keepdims: int, printed: list[Any], opset: int) -> None:
    got = ref.reduce_mean(SPEC_DATA, axes, keepdims, opset=opset)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(printed, dtype=np.float32))


@pytest.mark.parametrize(("axes", "keepdims", "printed"), SPEC_REDUCE_MEAN)
def test_spec_reduce_mean_random(axes: list[int] | None, keepdims: int, printed: list[Any]) -> None:
    np.random.seed(0)
    data = np.random.uniform(-10, 10, [3, 2, 2]).astype(np.float32)
    axis = None if axes is None else tuple(axes)
    expected = np.mean(data, axis=axis, keepdims=keepdims == 1)
    got = ref.reduce_mean(data, axes, keepdims)
    assert got.shape == np.asarray(expected).shape
    np.testing.assert_allclose(got, expected, rtol=1e-6)


_D0 = np.array([3, 0, 2], dtype=np.float32)
_D1 = np.array([1, 3, 4], dtype=np.float32)
_D2 = np.array([2, 6, 6], dtype=np.float32)


@pytest.mark.parametrize("opset", [1, 6, 8, 13])
@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        pytest.param([_D0, _D1, _D2], [2, 3, 4], id="mean_example"),
        pytest.param([_D0], [3, 0, 2], id="mean_one_input"),
        pytest.param([_D0, _D1], [2, 1.5, 3], id="mean_two_inputs"),
    ],
)
def test_spec_mean_example(inputs: list[npt.NDArray[Any]], expected: list[float], opset: int) -> None:
    got = ref.mean(*inputs, opset=opset)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float32))


# --- the encoded opset rules match onnx.defs --------------------------------------------------------

ALL_OPS = [*ref.REDUCE_OP_TYPES, "Mean"]


@pytest.mark.parametrize("op_type", ALL_OPS)
def test_versions_and_type_constraints_match_onnx_defs(op_type: str) -> None:
    assert onnx.defs.onnx_opset_version() == ref.MAX_OPSET
    for opset in range(1, ref.MAX_OPSET + 1):
        schema = onnx.defs.get_schema(op_type, opset, "")
        assert ref.op_version(op_type, opset) == schema.since_version, opset
        (constraint,) = [c for c in schema.type_constraints if c.type_param_str == "T"]
        onnx_types = {t.removeprefix("tensor(").removesuffix(")") for t in constraint.allowed_type_strs}
        assert ref.allowed_types(op_type, opset) == onnx_types, opset


@pytest.mark.parametrize("op_type", ref.REDUCE_OP_TYPES)
def test_noop_with_empty_axes_exists_exactly_where_onnx_defs_has_it(op_type: str) -> None:
    data = np.ones((2, 3), dtype=np.float32)
    for opset in range(1, ref.MAX_OPSET + 1):
        schema = onnx.defs.get_schema(op_type, opset, "")
        if "noop_with_empty_axes" in schema.attributes:
            assert [i.name for i in schema.inputs] == ["data", "axes"]
            np.testing.assert_array_equal(ref.reduce(op_type, data, [], 1, 1, opset=opset).shape, data.shape)
        else:
            assert "axes" in schema.attributes
            with pytest.raises(InputError, match="has no noop_with_empty_axes attribute"):
                ref.reduce(op_type, data, [], 1, 1, opset=opset)


# --- differential: onnx.reference.ReferenceEvaluator ------------------------------------------------

DIFF_DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.uint32, np.uint64, BF16]
EXTRA_DTYPES = {"int8", "uint8", "bool"}
# (axes, keepdims, noop_with_empty_axes); noop=1 is only used where the attribute exists.
AXES_CASES: list[tuple[list[int] | None, int, int]] = [
    (None, 1, 0),
    (None, 0, 0),
    ([], 1, 0),
    ([1], 0, 0),
    ([-1], 1, 0),
    ([0, 2], 0, 0),
    ([2, 0, 1], 1, 0),
    ([], 0, 1),
    (None, 1, 1),
]


def differential_params() -> list[Any]:
    params = []
    for op_type in ref.REDUCE_OP_TYPES:
        schema_versions = sorted(
            {onnx.defs.get_schema(op_type, o, "").since_version for o in range(1, ref.MAX_OPSET + 1)}
        )
        for version in schema_versions:
            allowed = ref.allowed_types(op_type, version)
            names = sorted(n for n in allowed if NUMPY_OF_ONNX[n] in map(np.dtype, DIFF_DTYPES))
            names += sorted(allowed & EXTRA_DTYPES)
            for name in names:
                if op_type.startswith("ReduceLog") and NUMPY_OF_ONNX[name].kind in "iu":
                    continue  # refused on both sides: test_integer_log_reductions_are_refused
                params.append(pytest.param(op_type, version, name, id=f"{op_type}-{version}-{name}"))
    return params


@pytest.mark.parametrize(("op_type", "opset", "type_name"), differential_params())
def test_matches_reference_evaluator(op_type: str, opset: int, type_name: str) -> None:
    dtype = NUMPY_OF_ONNX[type_name]
    has_noop = opset >= (13 if op_type == "ReduceSum" else 18)
    for seed, shape in enumerate([(3, 4, 5), (2, 1, 7)]):
        data = random_data(dtype, shape, seed)
        for axes, keepdims, noop in AXES_CASES:
            if noop and not has_noop:
                continue
            model, extra = reduce_model(op_type, opset, dtype, data.ndim, axes, keepdims, noop)
            want = run_reference(model, {"x": data, **extra})
            got = ref.reduce(op_type, data, axes, keepdims, noop, opset=opset)
            try:
                assert_same(got, want, dtype)
            except AssertionError as e:
                raise AssertionError(f"shape={shape} axes={axes} keepdims={keepdims} noop={noop}") from e


LAYOUT_CASES = [
    pytest.param(np.float16, (4096, 2), [0], id="f16-outer-axis"),
    pytest.param(np.float16, (2, 4096), [1], id="f16-inner-axis"),
    pytest.param(np.float16, (70000,), None, id="f16-overflowing-sum"),
    pytest.param(np.float16, (64, 64, 3), [0, 1], id="f16-two-axes"),
    pytest.param(BF16, (1000,), None, id="bf16-long"),
    pytest.param(np.float32, (300, 301), [0], id="f32-outer"),
    pytest.param(np.int32, (2, 1000), [1], id="i32-truncating-division"),
]


@pytest.mark.parametrize("op_type", ["ReduceMean", "ReduceSum", "ReduceL1", "ReduceL2", "ReduceSumSquare"])
@pytest.mark.parametrize(("dtype", "shape", "axes"), LAYOUT_CASES)
def test_long_reductions_match_reference_evaluator(
    op_type: str, dtype: Any, shape: tuple[int, ...], axes: list[int] | None
) -> None:
    dtype = np.dtype(dtype)
    data = (np.random.default_rng(7).uniform(0, 2, shape)).astype(dtype)
    model, extra = reduce_model(op_type, 18, dtype, data.ndim, axes, 0, 0)
    want = run_reference(model, {"x": data, **extra})
    assert_same(ref.reduce(op_type, data, axes, 0, opset=18), want, dtype)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_integer_overflow_wraps_like_reference_evaluator(op_type: str, dtype: Any) -> None:
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    data = np.array([[info.max - 3, info.max // 2, 7], [info.max, 2, info.max // 3]], dtype=dtype)
    model, extra = reduce_model(op_type, 18, dtype, 2, [1], 1, 0)
    want = run_reference(model, {"x": data, **extra})  # ReduceSumSquare: evaluator widens to 64 bit
    got = ref.reduce(op_type, data, [1], 1, opset=18)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want.astype(dtype))


@pytest.mark.parametrize("op_type", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("opset", [13, 18])
def test_zero_size_reductions_match_reference_evaluator(op_type: str, opset: int) -> None:
    for dtype in (np.dtype(np.float32), np.dtype(np.float16)):
        for shape, axes in [((2, 0, 4), [1]), ((2, 0, 4), [0]), ((0,), None), ((3, 0), None)]:
            data = np.zeros(shape, dtype=dtype)
            model, extra = reduce_model(op_type, opset, dtype, data.ndim, axes, 1, 0)
            want = run_reference(model, {"x": data, **extra})
            assert_same(ref.reduce(op_type, data, axes, 1, opset=opset), want, dtype)


MEAN_PARAMS = [
    pytest.param(opset, np.dtype(dtype), count, id=f"Mean-{opset}-{np.dtype(dtype).name}-{count}")
    for opset in (1, 6, 8, 13)
    for dtype in (np.float32, np.float16, np.float64, BF16)
    for count in (1, 2, 3, 5)
    if opset >= 13 or dtype != BF16  # bfloat16: test_mean_rejects_types_before_their_version
]


@pytest.mark.parametrize(("opset", "dtype", "count"), MEAN_PARAMS)
def test_mean_matches_reference_evaluator(opset: int, dtype: np.dtype[Any], count: int) -> None:
    shapes: list[tuple[int, ...]] = [(3, 4)] * count
    if opset >= 8 and count > 1:
        shapes = [(2, 3, 4), (3, 1), (4,), (1, 1, 4), ()][:count]  # the first one is the largest
    inputs = [random_data(dtype, s, seed) for seed, s in enumerate(shapes)]
    names = [f"x{i}" for i in range(count)]
    graph = helper.make_graph(
        [helper.make_node("Mean", names, ["y"])],
        "g",
        [helper.make_tensor_value_info(n, TENSOR_TYPE[dtype], None) for n in names],
        [helper.make_tensor_value_info("y", TENSOR_TYPE[dtype], None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    want = run_reference(model, dict(zip(names, inputs, strict=True)))
    assert_same(ref.mean(*inputs, opset=opset), want, dtype)


def test_mean_broadcasts_when_the_first_input_is_not_the_largest() -> None:
    # onnx.reference adds in place into a copy of input 0 and fails here; the operator is defined.
    small = np.array([1, 2], dtype=np.float32)
    large = np.array([[3, 4], [5, 6]], dtype=np.float32)
    np.testing.assert_array_equal(ref.mean(small, large), np.array([[2, 3], [3, 4]], dtype=np.float32))


def test_mean_sums_in_the_input_dtype_then_divides() -> None:
    # float16: 2048 + 1 rounds back to 2048 before the division, as in onnx.reference.
    big = np.array([2048], dtype=np.float16)
    one = np.array([1], dtype=np.float16)
    got = ref.mean(big, one, one, one, opset=13)
    assert got.dtype == np.float16
    assert got[0] == np.float16(512)  # (((2048+1)+1)+1)/4 in float16, not 2051/4 = 512.75


# --- onnx's own test data -----------------------------------------------------------------------------

with warnings.catch_warnings():  # onnx's case generators trip NumPy cast warnings
    warnings.simplefilter("ignore")
    _ALL_CASES = collect_testcases()


def single_node_cases() -> list[Any]:
    params = []
    for case in _ALL_CASES:
        if case.model is None or len(case.model.graph.node) != 1:
            continue
        op_type = case.model.graph.node[0].op_type
        if op_type in ref.REDUCE_OP_TYPES or op_type == "Mean":
            params.append(pytest.param(case, id=case.name))
    return params


def default_opset(model: Any) -> int:
    return int(next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")))


@pytest.mark.parametrize("case", single_node_cases())
def test_onnx_backend_node_cases(case: Any) -> None:
    node = case.model.graph.node[0]
    opset = default_opset(case.model)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    for inputs, outputs in case.data_sets:
        if node.op_type == "Mean":
            got = ref.mean(*inputs, opset=opset)
        else:
            axes = attrs.get("axes")
            if len(inputs) > 1:
                axes = inputs[1].tolist()
            got = ref.reduce(
                node.op_type,
                inputs[0],
                axes,
                attrs.get("keepdims", 1),
                attrs.get("noop_with_empty_axes", 0),
                opset=opset,
            )
        (expected,) = outputs
        assert got.shape == expected.shape
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, equal_nan=True)


def reduce_mean_graph_cases() -> list[Any]:
    params = []
    for case in _ALL_CASES:
        if case.model is None or len(case.model.graph.node) == 1:
            continue
        if any(n.op_type == "ReduceMean" and n.domain in ("", "ai.onnx") for n in case.model.graph.node):
            params.append(pytest.param(case, id=case.name))
    return params


@pytest.mark.parametrize("case", reduce_mean_graph_cases())
def test_onnx_backend_graphs_with_our_reduce_mean(case: Any) -> None:
    """Expanded functions (LayerNormalization, MVN, RMSNormalization...) with ReduceMean replaced by ours."""
    calls = []

    class ReduceMean(OpRun):  # the evaluator keys new_ops on (op_domain, class name)
        op_domain = ""

        def _run(
            self,
            data: npt.NDArray[Any],
            axes: Any = None,
            keepdims: int = 1,
            noop_with_empty_axes: int = 0,
        ) -> tuple[npt.NDArray[Any]]:
            calls.append(1)
            axes_list = None if axes is None else np.asarray(axes).reshape(-1).tolist()
            opset = self.run_params["opsets"][""]
            return (ref.reduce_mean(data, axes_list, keepdims, noop_with_empty_axes, opset=opset),)

    for inputs, outputs in case.data_sets:
        feeds = {i.name: x for i, x in zip(case.model.graph.input, inputs, strict=False)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = ReferenceEvaluator(case.model, new_ops=[ReduceMean]).run(None, feeds)
        for g, expected in zip(got, outputs, strict=True):
            np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)
    assert calls


# --- documented numerics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "axes", "expected"),
    [
        pytest.param(np.ones((4096, 2), np.float16), [0], [0.5, 0.5], id="f16-outer-axis-stalls-at-2048"),
        pytest.param(np.ones((2, 4096), np.float16), [1], [1.0, 1.0], id="f16-inner-axis-pairwise-f32"),
        pytest.param(np.ones(70000, np.float16), None, np.inf, id="f16-sum-overflows"),
        pytest.param(np.ones(1000, BF16), None, 0.255859375, id="bf16-sum-stalls-at-256"),
        pytest.param(np.array([[1, 2], [3, 5]], np.int32), [1], [1, 4], id="int-truncates"),
        pytest.param(np.array([-3, 0], np.int32), None, -1, id="int-truncates-toward-zero"),
        pytest.param(np.array([2**62 + 1], np.int64), None, 2**62, id="int64-via-float64"),
    ],
)
def test_reduce_mean_accumulates_in_the_input_dtype(
    data: npt.NDArray[Any], axes: list[int] | None, expected: Any
) -> None:
    got = ref.reduce_mean(data, axes, keepdims=0)
    assert got.dtype == data.dtype
    np.testing.assert_array_equal(got.astype(np.float64), np.asarray(expected, dtype=np.float64))


def test_int64_identity_goes_through_float64_like_the_reference() -> None:
    data = np.array([2**62 + 1, 3], np.int64)
    np.testing.assert_array_equal(ref.reduce_mean(data, None, 1, 1), np.array([2**62, 3], np.int64))


def test_float16_mean_does_not_depend_on_memory_layout() -> None:
    data = np.asfortranarray(np.ones((4096, 2), np.float16))  # axis 0 is contiguous here
    np.testing.assert_array_equal(ref.reduce_mean(data, [0], 0), np.array([0.5, 0.5], np.float16))


@pytest.mark.parametrize(
    ("op_type", "expected"),
    [
        ("ReduceMean", [[np.nan], [np.nan]]),
        ("ReduceSum", [[0], [0]]),
        ("ReduceL1", [[0], [0]]),
        ("ReduceL2", [[0], [0]]),
        ("ReduceSumSquare", [[0], [0]]),
        ("ReduceProd", [[1], [1]]),
        ("ReduceMax", [[-np.inf], [-np.inf]]),
        ("ReduceMin", [[np.inf], [np.inf]]),
        ("ReduceLogSum", [[-np.inf], [-np.inf]]),
        ("ReduceLogSumExp", [[-np.inf], [-np.inf]]),
    ],
)
def test_zero_element_reductions(op_type: str, expected: list[list[float]]) -> None:
    got = ref.reduce(op_type, np.zeros((2, 0), np.float32), [1])
    np.testing.assert_array_equal(got, np.array(expected, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_log_sum_exp_of_infinite_slices_is_its_definition(dtype: Any) -> None:
    """log(sum(exp(x))), ONNX's definition: a slice of -inf only (a fully masked row of logits) is -inf, one holding
    +inf is +inf; the max-shift that keeps finite slices from overflowing (onnx.reference's) must not make them NaN
    (-inf - -inf)."""
    data = np.array([[-np.inf, -np.inf], [np.inf, np.inf], [np.inf, -np.inf], [np.inf, 1], [np.nan, -np.inf],
                     [1, 2]], dtype)  # fmt: skip
    with np.errstate(all="ignore"):
        exact = np.log(np.sum(np.exp(data.astype(np.float64)), axis=1))
    got = ref.reduce("ReduceLogSumExp", data, [1], 0, opset=18)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), exact, rtol=1e-3)
    np.testing.assert_array_equal(got[:5], exact[:5].astype(dtype))


@pytest.mark.parametrize(
    ("op_type", "dtype", "expected"),
    [
        ("ReduceMax", np.int32, np.iinfo(np.int32).min),
        ("ReduceMin", np.uint32, np.iinfo(np.uint32).max),
        ("ReduceMax", np.bool_, False),
        ("ReduceMin", np.bool_, True),
    ],
)
def test_zero_element_min_max_of_types_without_infinity(op_type: str, dtype: Any, expected: Any) -> None:
    got = ref.reduce(op_type, np.zeros((0, 3), dtype), [0], 0, opset=20)
    np.testing.assert_array_equal(got, np.full(3, expected, dtype))


def test_zero_element_output_is_empty_without_error() -> None:
    got = ref.reduce_mean(np.zeros((0, 3), np.int32), [1], 1)
    assert got.shape == (0, 1)
    assert got.dtype == np.int32


@pytest.mark.parametrize(
    ("op_type", "expected"),
    [
        ("ReduceMean", [-4.0, 9.0]),
        ("ReduceL1", [4.0, 9.0]),
        ("ReduceL2", [4.0, 9.0]),
        ("ReduceSumSquare", [16.0, 81.0]),
        ("ReduceLogSum", [np.nan, np.log(9.0)]),
        ("ReduceMax", [-4.0, 9.0]),
    ],
)
def test_noop_with_empty_axes_keeps_the_elementwise_steps(op_type: str, expected: list[float]) -> None:
    data = np.array([-4.0, 9.0], np.float64)
    got = ref.reduce(op_type, data, [], 0, 1, opset=18)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-15, equal_nan=True)


@pytest.mark.parametrize("opset", [1, 11, 13])
def test_empty_axes_attribute_reduces_all_axes(opset: int) -> None:
    got = ref.reduce_mean(SPEC_DATA, [], 1, opset=opset)
    np.testing.assert_array_equal(got, np.array([[[18.25]]], np.float32))


def test_rank_zero_input() -> None:
    data = np.array(4.0, np.float32)
    assert ref.reduce_mean(data).shape == ()
    assert ref.reduce_mean(data, None, 0) == np.float32(4.0)


@pytest.mark.parametrize("op_type", ref.REDUCE_OP_TYPES)
def test_every_reduction_of_a_rank_zero_input_is_its_elementwise_step(op_type: str) -> None:
    """A scalar reduces over its zero axes: the reduction of one element (|x| for the norms, x*x for SumSquare)."""
    x = np.array(2.5, np.float32)
    step = {"ReduceL1": abs(x), "ReduceL2": abs(x), "ReduceSumSquare": x * x, "ReduceLogSum": np.log(x)}
    for keepdims in (0, 1):
        got = ref.reduce(op_type, x, None, keepdims)
        assert got.shape == () and got.dtype == np.float32, (op_type, got)
        assert got == np.float32(step.get(op_type, x)), (op_type, got)


def test_integer_axes_tensor_is_accepted() -> None:
    got = ref.reduce_mean(SPEC_DATA, np.array([1], np.int64), 0)
    np.testing.assert_array_equal(got, np.array([[12.5, 1.5], [35.0, 1.5], [57.5, 1.5]], np.float32))


# --- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"op_type": "ReduceAverage"}, r"unknown ONNX reduction 'ReduceAverage'", id="op"),
        pytest.param({"opset": 0}, r"opset 0 is outside .* \[1, 28\]", id="opset-0"),
        pytest.param({"opset": 29}, r"opset 29 is outside .* \[1, 28\]", id="opset-29"),
        pytest.param({"opset": 18.0}, r"opset must be an integer .*18\.0", id="opset-float"),
        pytest.param({"data": [1.0, 2.0]}, r"ReduceMean-18 data must be a NumPy array; got list", id="list"),
        pytest.param({"keepdims": 2}, r"ReduceMean-18: keepdims must be 0 or 1; got 2", id="keepdims"),
        pytest.param({"noop_with_empty_axes": -1}, r"noop_with_empty_axes must be 0 or 1; got -1", id="noop-value"),
        pytest.param(
            {"noop_with_empty_axes": 1, "opset": 13},
            r"ReduceMean-13 has no noop_with_empty_axes attribute \(it appeared in ReduceMean-18",
            id="noop-before-18",
        ),
        pytest.param({"axes": [3]}, r"axis 3 is out of range for a rank-3 input; expected \[-3, 2\]", id="axis-3"),
        pytest.param({"axes": [-4]}, r"axis -4 is out of range .* expected \[-3, 2\]", id="axis-minus-4"),
        pytest.param({"axes": [1, 1]}, r"axes \[1, 1\] name axis 1 more than once", id="duplicate"),
        pytest.param({"axes": [1, -2]}, r"axes \[1, -2\] name axis 1 more than once", id="duplicate-neg"),
        pytest.param({"axes": [0.5]}, r"axes must be integers; got 0\.5", id="axis-float"),
        pytest.param({"axes": [True]}, r"axes must be integers; got True", id="axis-bool"),
        pytest.param({"axes": "01"}, r"axes must be a sequence of ints, an integer array or None", id="str"),
        pytest.param({"axes": np.array([[0]], np.int64)}, r"0-D or 1-D integer tensor; got 2-D int64", id="axes-2d"),
        pytest.param({"axes": np.array([0.0])}, r"0-D or 1-D integer tensor; got 1-D float64", id="axes-float-array"),
    ],
)
def test_reduce_errors(kwargs: dict[str, Any], match: str) -> None:
    call: dict[str, Any] = {"op_type": "ReduceMean", "data": SPEC_DATA, "opset": 18} | kwargs
    op_type, data = call.pop("op_type"), call.pop("data")
    with pytest.raises(InputError, match=match):
        ref.reduce(op_type, data, **call)


def test_rank_zero_input_has_no_axes() -> None:
    with pytest.raises(InputError, match=r"axis 0 is out of range for a rank-0 input; expected no axes"):
        ref.reduce_mean(np.array(1.0, np.float32), [0])


@pytest.mark.parametrize(
    ("op_type", "opset", "dtype", "match"),
    [
        pytest.param(
            "ReduceMean",
            11,
            BF16,
            r"ReduceMean-11 does not accept data of type bfloat16; allowed: "
            r"tensor\(double\), tensor\(float\), tensor\(float16\), tensor\(int32\)",
            id="mean-11-bf16",
        ),
        pytest.param("ReduceMean", 1, BF16, r"ReduceMean-1 does not accept data of type bfloat16", id="m1-bf16"),
        pytest.param("ReduceMean", 18, np.int8, r"ReduceMean-18 does not accept data of type int8", id="i8"),
        pytest.param("ReduceMean", 18, np.bool_, r"does not accept data of type bool", id="mean-bool"),
        pytest.param("ReduceMean", 18, np.int16, r"does not accept data of type NumPy int16", id="i16"),
        pytest.param("ReduceMax", 11, np.uint8, r"ReduceMax-11 does not accept data of type uint8", id="max-11"),
        pytest.param("ReduceMax", 18, np.bool_, r"ReduceMax-18 does not accept data of type bool", id="max-18"),
        pytest.param("ReduceSum", 11, BF16, r"ReduceSum-11 does not accept data of type bfloat16", id="sum-11"),
        pytest.param("ReduceLogSum", 28, np.int32, r"ReduceLogSum-28 does not accept data of type int32", id="ls"),
        pytest.param("ReduceMean", 18, np.complex64, r"NumPy complex64", id="complex"),
    ],
)
def test_reduce_rejects_types_outside_the_constraint(op_type: str, opset: int, dtype: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        ref.reduce(op_type, np.zeros((2, 2), dtype), [0], opset=opset)


@pytest.mark.parametrize("op_type", ["ReduceLogSum", "ReduceLogSumExp"])
@pytest.mark.parametrize("opset", [11, 13, 18])
def test_integer_log_reductions_are_refused(op_type: str, opset: int) -> None:
    data = np.array([[1, 2], [3, 4]], np.int32)
    model, extra = reduce_model(op_type, opset, data.dtype, 2, [1], 1, 0)
    with pytest.raises(TypeError) as refused:
        run_reference(model, {"x": data, **extra})
    assert "does not support integer input" in str(refused.value.__cause__)
    with pytest.raises(InputError, match=rf"{op_type}-{opset} does not compute integer inputs \(got int32\)"):
        ref.reduce(op_type, data, [1], opset=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_repeated_axes_fail_in_the_reference_evaluator_too(opset: int) -> None:
    model, extra = reduce_model("ReduceMean", opset, np.dtype(np.float32), 3, [1, -2], 1, 0)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        run_reference(model, {"x": SPEC_DATA, **extra})
    with pytest.raises(InputError, match="more than once"):
        ref.reduce_mean(SPEC_DATA, [1, -2], opset=opset)


def test_integer_mean_of_zero_elements_is_an_error() -> None:
    with pytest.raises(
        InputError, match=r"ReduceMean-18: the mean over zero elements is undefined .* int32 has no NaN"
    ):
        ref.reduce_mean(np.zeros((2, 0), np.int32), [1])


@pytest.mark.parametrize(
    ("inputs", "opset", "match"),
    [
        pytest.param([], 13, r"Mean-13 needs at least one input .* got none", id="no-inputs"),
        pytest.param(
            [np.ones(2, np.float32), np.ones(2, np.float64)],
            13,
            r"Mean-13: all inputs must have one data type; input 0 is float but input 1 is double",
            id="mixed-dtypes",
        ),
        pytest.param(
            [np.ones(2, np.float32), np.ones((2, 2), np.float32)],
            6,
            r"Mean-6 requires all inputs to have the same shape .* got shapes \[2\], \[2, 2\]",
            id="shapes-before-8",
        ),
        pytest.param(
            [np.ones(2, np.float32), np.ones(3, np.float32)],
            8,
            r"Mean-8: input shapes \[2\], \[3\] do not broadcast",
            id="no-broadcast",
        ),
        pytest.param([np.ones(2, BF16)], 8, r"Mean-8 does not accept input 0 of type bfloat16", id="bf16-8"),
        pytest.param([np.ones(2, np.int32)], 13, r"Mean-13 does not accept input 0 of type int32", id="int"),
        pytest.param([[1.0, 2.0]], 13, r"Mean-13 input 0 must be a NumPy array; got list", id="list"),
        pytest.param([np.ones(2, np.float32)], 29, r"opset 29 is outside", id="opset"),
    ],
)
def test_mean_errors(inputs: list[Any], opset: int, match: str) -> None:
    with pytest.raises(InputError, match=match):
        ref.mean(*inputs, opset=opset)


def test_mean_rejects_types_before_their_version() -> None:
    assert ref.mean(np.ones(2, BF16), opset=13).dtype == BF16
    with pytest.raises(InputError, match=r"Mean-8 does not accept input 0 of type bfloat16; allowed: "):
        ref.mean(np.ones(2, BF16), opset=12)


def test_unknown_operator_in_the_version_helpers() -> None:
    with pytest.raises(InputError, match=r"unknown ONNX operator 'Average'; expected one of ReduceMean"):
        ref.op_version("Average", 13)
