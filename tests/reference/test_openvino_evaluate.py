"""Reductions over an empty set: ovreduce's reference against OpenVINO's reference implementation itself.

OpenVINO's reference kernels (src/core/reference/include/openvino/reference/reduce_*.hpp) run in
``Node.evaluate`` and in constant folding; both are called here on the installed runtime, for every element
type ovreduce executes, so the expected values are OpenVINO's, not numbers written into the test. Where
OpenVINO 2026.4 cannot evaluate ReduceMax/ReduceMin on a type (``evaluate`` returns False: f64, i16, u16, the
f8 types), the reference follows the same headers instantiated for that type (``numeric_limits<T>``), checked
here against the limits ml_dtypes and NumPy give; the other reductions give their documented identities
(0, and 1 for ReduceProd) where OpenVINO cannot evaluate them (it evaluates fewer types for them).

The specification leaves ReduceMax/ReduceMin over an empty set undefined: the reference notes it, and
:func:`~ovreduce.reference.evaluate.undefined_elements` marks those output elements.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset4 as ov4
import pytest
from openvino import passes

from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.reference.evaluate import reduce_with_notes, undefined_elements

# Every element type ovreduce executes for the arithmetic reductions (a NumPy dtype of its own).
FLOATS = ("f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "f8e8m0")
TYPES = (*FLOATS, "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8")
# Those OpenVINO 2026.4's ReduceMax/ReduceMin cannot evaluate (Node.evaluate returns False, nothing folds).
NOT_EVALUATED = {"f64", "i16", "u16", "f8e4m3", "f8e5m2", "f8e8m0"}
EXTREMES = ("ReduceMax", "ReduceMin")
OTHERS = ("ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2")
BUILDERS = {
    "ReduceMax": ov1.reduce_max,
    "ReduceMin": ov1.reduce_min,
    "ReduceSum": ov1.reduce_sum,
    "ReduceMean": ov1.reduce_mean,
    "ReduceProd": ov1.reduce_prod,
    "ReduceL1": ov4.reduce_l1,
    "ReduceL2": ov4.reduce_l2,
}
# (data shape, axes): empty reduced dims first, in the middle, last, among several axes, and the whole tensor.
EMPTY = [
    ((2, 0, 3), [1]),
    ((0, 4), [0]),
    ((3, 0), [-1]),
    ((2, 3, 0), [0, 2]),
    ((0,), [0]),
    ((2, 0, 3), [0, 1, 2]),
    ((0, 0, 2), [1]),  # the output is empty too: nothing is undefined
]


def _ids(shape: tuple[int, ...], axes: list[int]) -> str:
    return f"{'x'.join(map(str, shape))}-axes{'_'.join(map(str, axes))}"


def numpy_type(type_name: str) -> np.dtype[Any]:
    return np.dtype(ELEMENT_TYPES[type_name].numpy)


def openvino_evaluate(op: str, type_name: str, shape: tuple[int, ...], axes: list[int], keep_dims: bool) -> Any:
    """OpenVINO's reference implementation on zero-size data: ``Node.evaluate``; None where it cannot."""
    et = getattr(ov.Type, type_name)
    node = BUILDERS[op](ov1.parameter(list(shape), et), ov1.constant(np.array(axes, np.int64)), keep_dims)
    out = ov.Tensor(et, node.get_output_shape(0))
    axes_tensor = ov.Tensor(np.array(axes, np.int64))
    if not node.evaluate([out], [ov.Tensor(et, ov.Shape(list(shape))), axes_tensor]):
        return None
    return _decode(out, type_name, tuple(node.get_output_shape(0)))


def openvino_fold(op: str, type_name: str, shape: tuple[int, ...], axes: list[int], keep_dims: bool) -> Any:
    """OpenVINO's reference implementation by constant folding: the folded Constant; None if it did not fold."""
    et = getattr(ov.Type, type_name)
    data = ov.op.Constant(et, ov.Shape(list(shape)), [])
    node = BUILDERS[op](data, ov1.constant(np.array(axes, np.int64)), keep_dims)
    model = ov.Model([ov1.result(node)], [], "fold")
    manager = passes.Manager()
    manager.register_pass(passes.ConstantFolding())
    manager.run_passes(model)
    folded = model.get_results()[0].input_value(0).get_node()
    if folded.get_type_name() != "Constant":
        return None
    raw = np.asarray(folded.get_data())
    return np.frombuffer(raw.tobytes(), numpy_type(type_name)).reshape(tuple(folded.get_output_shape(0)))


def _decode(tensor: Any, type_name: str, shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """The tensor's bytes as ovreduce's dtype for ``type_name`` (bf16 as ml_dtypes.bfloat16)."""
    return np.frombuffer(np.asarray(tensor.data).tobytes(), numpy_type(type_name)).reshape(shape)


def same_bits(actual: npt.NDArray[Any], expected: npt.NDArray[Any]) -> None:
    """Same dtype, shape and bytes: -inf is not -FLT_MAX, and NaN must be the same NaN."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def header_value(op: str, type_name: str) -> Any:
    """reduce_max.hpp / reduce_min.hpp for T: lowest(), and infinity() if T has one else max()."""
    dt = numpy_type(type_name)
    if dt.kind in "iu":
        return np.iinfo(dt).min if op == "ReduceMax" else np.iinfo(dt).max
    info = ml_dtypes.finfo(dt)
    if op == "ReduceMax":
        return info.min
    has_infinity = np.isinf(np.asarray(np.inf).astype(dt))
    return np.inf if has_infinity else info.max


CASES = [
    pytest.param(op, t, shape, axes, keep, id=f"{op}-{t}-{_ids(shape, axes)}-{'keep' if keep else 'drop'}")
    for op in EXTREMES + OTHERS
    for t in TYPES
    for shape, axes in EMPTY
    for keep in (False, True)
]


@pytest.mark.parametrize(("op", "type_name", "shape", "axes", "keep"), CASES)
def test_empty_reduction_is_openvinos_reference(
    op: str, type_name: str, shape: tuple[int, ...], axes: list[int], keep: bool
) -> None:
    data = np.zeros(shape, numpy_type(type_name))
    ours, notes = reduce_with_notes(op, data, axes, keep)
    theirs = openvino_evaluate(op, type_name, shape, axes, keep)
    if theirs is None and op in EXTREMES:
        assert type_name in NOT_EVALUATED, f"OpenVINO cannot evaluate {op} on {type_name}"
        with np.errstate(over="ignore"):
            expected = np.full(ours.shape, header_value(op, type_name)).astype(data.dtype)
        same_bits(ours, expected)
    elif theirs is None:
        same_bits(ours, np.full(ours.shape, 1 if op == "ReduceProd" else 0).astype(data.dtype))
    else:
        assert op not in EXTREMES or type_name not in NOT_EVALUATED, f"OpenVINO now evaluates {op} on {type_name}"
        same_bits(ours, theirs)
    if op in EXTREMES and ours.size:
        (note,) = notes
        assert note.startswith(f"{op} over an empty set") and "the specification leaves the value undefined" in note
        assert str(ours.reshape(-1)[0]) in note
    else:
        assert notes == []


@pytest.mark.parametrize("op", EXTREMES + OTHERS)
@pytest.mark.parametrize("type_name", TYPES)
def test_constant_folding_agrees_with_evaluate(op: str, type_name: str) -> None:
    """Constant folding runs the same reference code: the two ways of asking OpenVINO agree (and neither
    answers for a type the other cannot evaluate)."""
    evaluated = openvino_evaluate(op, type_name, (2, 0, 3), [1], False)
    folded = openvino_fold(op, type_name, (2, 0, 3), [1], False)
    if evaluated is None:
        assert folded is None
    else:
        assert folded is not None
        same_bits(folded, evaluated)


@pytest.mark.parametrize(("shape", "axes"), [pytest.param(s, a, id=_ids(s, a)) for s, a in EMPTY])
@pytest.mark.parametrize("keep", [False, True])
def test_undefined_elements_of_an_empty_max_are_all_its_outputs(
    shape: tuple[int, ...], axes: list[int], keep: bool
) -> None:
    expected_shape = reduce_with_notes("ReduceMax", np.zeros(shape, np.float32), axes, keep)[0].shape
    for op in EXTREMES:
        mask = undefined_elements(op, shape, axes, keep)
        if not all(expected_shape):
            assert mask is None  # no output elements, none undefined
            continue
        assert mask is not None and mask.dtype == np.bool_
        assert mask.shape == expected_shape and bool(mask.all())
    for op in OTHERS:
        assert undefined_elements(op, shape, axes, keep) is None


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        pytest.param((2, 3), [1], id="nothing-empty"),
        pytest.param((0, 3), [1], id="empty-dim-kept"),
        pytest.param((2, 0), [], id="empty-axes-identity"),
    ],
)
def test_defined_reductions_have_no_undefined_elements(shape: tuple[int, ...], axes: list[int]) -> None:
    for op in EXTREMES + OTHERS:
        for keep in (False, True):
            assert undefined_elements(op, shape, axes, keep) is None
            _, notes = reduce_with_notes(op, np.zeros(shape, np.float32), axes, keep)
            assert notes == []


def test_undefined_elements_checks_axes_as_reduce_does() -> None:
    from ovreduce.errors import InputError, ShapeInferenceError

    with pytest.raises(ShapeInferenceError):
        undefined_elements("ReduceMax", (2, 0), [2])
    with pytest.raises(InputError):
        undefined_elements("ReduceMedian", (2, 0), [1])
    # a scalar axis, a negative one and a NumPy array of axes, as reduce takes them
    for axes in (1, -1, np.array([1], np.int32)):
        mask = undefined_elements("ReduceMin", (2, 0), axes, True)
        assert mask is not None and mask.shape == (2, 1)
