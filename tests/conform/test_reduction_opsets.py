"""Every ONNX reduction at every operator version, through ``conform``, against ``onnx.reference``.

ONNX's backend cases (test_onnx_backend_reductions.py) use one opset per operator; these models cover the
rest. For each reduction and each opset in ``OPSETS`` one model holds five nodes on one input ``x``: axes
[1] with keepdims=0; axes [0, -1] with keepdims absent (1); no axes (all of them) with keepdims=0; and, from
the version where axes is an input, empty axes and missing axes with noop_with_empty_axes=1. The expected
outputs come from ``onnx.reference.ReferenceEvaluator``, which our reference must match exactly; OpenVINO's
outputs come from the converted model run directly, not through ovreduce.

What OpenVINO 2026.4 does (measured on every reduction at opsets 1 to 28): it agrees everywhere except

* ``AXES_IGNORED``: ReduceL1-13, ReduceLogSum-13 and ReduceLogSumExp-13 (models of opsets 13 to 17):
  the frontend ignores the ``axes`` attribute and reduces over all axes;
* ``NOOP_SKIPS_THE_OPERATOR``: ReduceL1, ReduceL2 and ReduceLogSum from version 18 with
  noop_with_empty_axes=1 and empty or missing axes: the frontend returns ``x``, where ONNX still applies
  the elementwise step (|x|, |x|, log x).

Those nodes must differ from ONNX in exactly that way and conform must report them as disagreeing, with
the note naming it; every other node must agree and be "ok". The test fails the day either changes.
A third, in ``test_max_and_min_of_8_bit_integers``: ReduceMax-12/ReduceMin-12 refuse the int8/uint8
inputs that ONNX allows from version 12 (the model does not convert).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ovreduce.conform import conform_model
from ovreduce.reference import onnx as onnx_ref

from . import onnx_models

OPS = ("ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")  # fmt: skip
# Each operator version's first opset (1, 11, 12, 13, 18, 20, 28), the last opset of version 13 (17) and
# the last before version 11 (10).
OPSETS = (1, 10, 11, 12, 13, 17, 18, 20, 28)
AXES_IGNORED = {("ReduceL1", 13), ("ReduceLogSum", 13), ("ReduceLogSumExp", 13)}  # (op, version)
NOOP_SKIPS_THE_OPERATOR = {"ReduceL1", "ReduceL2", "ReduceLogSum"}  # from version 18

# No zero, negative values (|x| differs from x), and positive ones for the logarithm of ReduceLogSum.
SIGNED = ((np.arange(24, dtype=np.float32) - 9.5) / 4).reshape(2, 3, 4)
POSITIVE = ((np.arange(24, dtype=np.float32) + 1) / 8).reshape(2, 3, 4)

# node name -> (axes, keepdims, noop_with_empty_axes); None: absent from the node
CONFIGS: dict[str, tuple[list[int] | None, int | None, int | None]] = {
    "axis1": ([1], 0, None),
    "axes0_-1": ([0, -1], None, None),
    "all": (None, 0, None),
    "empty_noop": ([], 1, 1),
    "missing_noop": (None, 0, 1),
}


def _axes_input_since(op: str) -> int:
    return 13 if op == "ReduceSum" else 18


def _model(op: str, opset: int) -> tuple[onnx.ModelProto, dict[str, tuple[list[int] | None, int, int]]]:
    """The five-node model (fewer before the axes input) and each node's effective axes/keepdims/noop."""
    as_input = onnx_ref.op_version(op, opset) >= _axes_input_since(op)
    nodes, initializers, used = [], [], {}
    for name, (axes, keepdims, noop) in CONFIGS.items():
        if noop is not None and not as_input:
            continue
        attrs: dict[str, Any] = {
            k: v for k, v in (("keepdims", keepdims), ("noop_with_empty_axes", noop)) if v is not None
        }
        inputs = ["x"]
        if axes is not None and as_input:
            initializers.append(numpy_helper.from_array(np.array(axes, np.int64), f"{name}_axes"))
            inputs.append(f"{name}_axes")
        elif axes is not None:
            attrs["axes"] = axes
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        used[name] = (axes, 1 if keepdims is None else keepdims, noop or 0)
    graph = helper.make_graph(
        nodes, f"{op}_{opset}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SIGNED.shape))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in used], initializers,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    return model, used


def _openvino_outputs(path: Path, feeds: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
    """Every output of the converted model by tensor name, computed by OpenVINO directly (f32, CPU)."""
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(feeds)
    return {port.get_any_name(): np.asarray(result[port]) for port in compiled.outputs}


def _close(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-5, atol=1e-5))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op", OPS)
def test_reduction_at_opset(op: str, opset: int, tmp_path: Path) -> None:
    x = POSITIVE if op == "ReduceLogSum" else SIGNED
    model, used = _model(op, opset)
    path = onnx_models.save(model, tmp_path / f"{op}-{opset}.onnx")
    version = onnx_ref.op_version(op, opset)
    onnx_says = dict(zip(used, ReferenceEvaluator(model).run(None, {"x": x}), strict=True))
    openvino_says = _openvino_outputs(path, {"x": x})
    doc = conform_model(str(path), inputs={"x": x}).to_json()
    assert [n["node"] for n in doc["nodes"]] == list(used)

    for entry in doc["nodes"]:
        name = entry["node"]
        axes, keepdims, noop = used[name]
        want, got = onnx_says[name], openvino_says[name]
        assert (entry["op_type"], entry["version"], entry["observable"]) == (op, version, True)

        # Our reference is onnx.reference, to the bit.
        ours = onnx_ref.reduce(op, x, axes, keepdims, noop, opset=opset)
        assert ours.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(ours, want)

        if (op, version) in AXES_IGNORED and axes:
            everything = onnx_ref.reduce(op, x, None, keepdims, 0, opset=opset)
            assert everything.shape != want.shape
            assert _close(got, everything), (name, got, everything)
            assert entry["status"] == "disagree"
            [note] = entry["notes"]
            assert note.startswith(f"OpenVINO reduced over all axes: its output has shape {list(everything.shape)}")
            assert note.endswith(
                "ignored the axes attribute (a known OpenVINO 2026.4 defect of ReduceL1-13, "
                "ReduceLogSum-13 and ReduceLogSumExp-13)"
            )
        elif op in NOOP_SKIPS_THE_OPERATOR and version >= 18 and noop and not axes:
            assert not _close(want, x)
            np.testing.assert_array_equal(got, x)
            assert entry["status"] == "disagree"
            [note] = entry["notes"]
            assert note.startswith("OpenVINO returned the input unchanged")
            assert note.endswith(
                "(a known OpenVINO 2026.4 defect of ReduceL1, ReduceL2 and ReduceLogSum from opset 18)"
            )
        else:
            assert _close(got, want), (name, got, want)
            assert entry["status"] == "ok", entry
            assert entry["notes"] == []
    assert doc["ok"] is all(n["status"] == "ok" for n in doc["nodes"])


@pytest.mark.parametrize("opset", [1, 6, 8, 13])
def test_mean_at_opset(opset: int, tmp_path: Path) -> None:
    """Mean of three equal-shape inputs at each of its versions (broadcasting is in test_opsets.py)."""
    shape = list(SIGNED.shape)
    names = ["a0", "a1", "a2"]
    graph = helper.make_graph(
        [helper.make_node("Mean", names, ["y"], name="mean")], "mean",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],  # Mean-1 has no shape inference
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model)
    path = onnx_models.save(model, tmp_path / f"mean-{opset}.onnx")
    feeds = {"a0": SIGNED, "a1": POSITIVE, "a2": SIGNED * POSITIVE}
    [want] = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(onnx_ref.mean(*feeds.values(), opset=opset), want)
    assert _close(onnx_models.openvino_output(path, feeds), want)
    doc = conform_model(str(path), inputs=feeds).to_json()
    [entry] = doc["nodes"]
    assert (entry["op_type"], entry["version"], entry["status"]) == ("Mean", onnx_ref.op_version("Mean", opset), "ok")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("opset", [12, 13, 18, 20])
@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_max_and_min_of_8_bit_integers(op: str, opset: int, dtype: type[np.integer[Any]], tmp_path: Path) -> None:
    """ReduceMax/Min take int8/uint8 from version 12. OpenVINO 2026.4's frontend refuses them in version 12
    ("Unsupported input type i8"), a valid model it cannot convert, which conform reports as its error;
    from version 13 it converts them and agrees with ONNX."""
    element = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}[dtype]
    inputs, initializers, attrs = ["x"], [], {"keepdims": 0}
    if opset >= 18:
        inputs.append("axes")
        initializers.append(numpy_helper.from_array(np.array([1], np.int64), "axes"))
    else:
        attrs["axes"] = [1]
    graph = helper.make_graph(
        [helper.make_node(op, inputs, ["y"], name="r", **attrs)], "minmax8",
        [helper.make_tensor_value_info("x", element, [2, 3])], [helper.make_tensor_value_info("y", element, [2])],
        initializers,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    path = onnx_models.save(model, tmp_path / "minmax8.onnx")
    x = np.array([[7, 120, 3], [0, 5, 100]], dtype)
    [want] = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(onnx_ref.reduce(op, x, [1], 0, opset=opset), want)
    doc = conform_model(str(path), inputs={"x": x}).to_json()
    [entry] = doc["nodes"]
    if opset == 12:
        with pytest.raises(Exception, match="Unsupported input type"):
            onnx_models.openvino_output(path, {"x": x})
        assert doc["error"].startswith("OpenVINO could not convert the model")
        assert "Unsupported input type" in doc["error"]
        assert entry["status"] == "not-observable"
    else:
        np.testing.assert_array_equal(onnx_models.openvino_output(path, {"x": x}), want)
        assert (entry["status"], doc["ok"]) == ("ok", True)


def _logical(op: str, rows: int, etype: int = TensorProto.BOOL, width: int = 12) -> onnx.ModelProto:
    """``op`` (ReduceMax or ReduceMin, version 20) of ``etype`` ``[rows, width]`` over axis 1, named ``r``."""
    graph = helper.make_graph(
        [helper.make_node(op, ["x", "axes"], ["y"], keepdims=0, name="r")], "logical",
        [helper.make_tensor_value_info("x", etype, [rows, width])],
        [helper.make_tensor_value_info("y", etype, [rows])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize(("op", "decides"), [("ReduceMax", True), ("ReduceMin", False)])
def test_max_and_min_of_booleans_on_slices_each_decided_twice_say_they_show_no_error(op: str, decides: bool) -> None:
    """ReduceMax and ReduceMin take booleans from version 20: an OR and an AND. On slices that each hold the
    deciding value twice or more, no output depends on any one element: conform agreed, and said nothing of it, as
    run and audit say for ReduceLogicalOr and ReduceLogicalAnd."""
    model = _logical(op, 8)
    decided = np.full((8, 12), not decides)
    decided[:, 3] = decided[:, 7] = decides
    for key in ("x", "0"):  # given by its name or by its index, it is the input
        [entry] = conform_model(model.SerializeToString(), inputs={key: decided}).to_json()["nodes"]
        assert entry["status"] == "ok" and entry["notes"] == [
            "it conforms on an input that cannot show an error: each slice it reduces (axes [1] of input shape "
            f"[8, 12]) holds {decides} twice or more: every output element is {decides}, and stays so whichever one "
            "element a kernel misses or misreads"
        ], entry
    once = np.full((8, 12), not decides)
    once[::2, 5] = decides  # half the slices decided by one element
    [entry] = conform_model(model.SerializeToString(), inputs={"x": once}).to_json()["nodes"]
    assert entry["status"] == "ok" and entry["notes"] == [], entry


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_booleans_made_for_max_and_min_let_each_output_depend_on_one_element(op: str, seed: int) -> None:
    """Booleans made at fair odds held the deciding value twice or more in nearly every slice of 12 (all seeds): the
    node always conformed on an input that could show no error. Made, each slice now holds it once or not at all, so
    every output is decided by one element, or by none; and the input says how it was made."""
    model = _logical(op, 4)
    doc = conform_model(model.SerializeToString(), seed=seed).to_json()
    [entry] = doc["nodes"]
    assert (entry["status"], entry["notes"], doc["ok"]) == ("ok", [], True), entry
    [made] = doc["inputs"]
    decides = op == "ReduceMax"
    assert made["origin"] == f"seed {seed}, {decides} once or not at all in each slice that {op} 'r' reduces"


@pytest.mark.parametrize(("op", "etype", "dtype"), [
    ("ReduceMax", TensorProto.UINT8, np.uint8), ("ReduceMin", TensorProto.INT8, np.int8),
    ("ReduceMin", TensorProto.UINT8, np.uint8),
])  # fmt: skip
def test_8_bit_max_and_min_made_let_each_output_depend_on_one_element(op: str, etype: int, dtype: type) -> None:
    """8-bit integers made over the type's whole range held its limit about 16 times in each slice of 4,096: every
    output was that limit, whatever a kernel missed, and the node conformed on it with no word. Made, each slice's
    extreme is there once; given with the limit twice in each slice, the node conforms on an input that cannot show
    an error, and says so."""
    model = _logical(op, 4, etype, 4096)
    doc = conform_model(model.SerializeToString(), seed=1).to_json()
    [entry] = doc["nodes"]
    assert (entry["status"], entry["notes"], doc["ok"]) == ("ok", [], True), entry
    [made] = doc["inputs"]
    assert made["origin"] == f"seed 1, its extreme once or not at all in each slice that {op} 'r' reduces", made
    limit = np.iinfo(dtype).max if op == "ReduceMax" else np.iinfo(dtype).min
    data = np.random.default_rng(0).integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (4, 4096), endpoint=True)
    data = data.astype(dtype)
    data[:, :2] = limit
    [entry] = conform_model(model.SerializeToString(), inputs={"x": data}).to_json()["nodes"]
    assert entry["status"] == "ok" and entry["notes"] == [
        "it conforms on an input that cannot show an error: each slice it reduces (axes [1] of input shape "
        f"[4, 4096]) holds {limit} twice or more: every output element is {limit}, and stays so whichever one element "
        "a kernel misses or misreads"
    ], entry


@pytest.mark.parametrize(("op", "fill"), [("ReduceMax", -np.inf), ("ReduceMin", np.inf)])
def test_a_max_over_masked_scores_conforms_and_says_the_masked_elements_decided_nothing(op: str, fill: float) -> None:
    """-inf at masked scores (masked_fill before a max) decides no slice holding a finite score: the node conforms on
    an input that shows an error, with a note that they were there."""
    model = _logical(op, 8, TensorProto.FLOAT, 4).SerializeToString()
    data = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    data[np.arange(8), np.arange(8) % 4] = fill
    [entry] = conform_model(model, inputs={"x": data}).to_json()["nodes"]
    assert entry["status"] == "ok" and entry["notes"] == [
        f"8 of its 32 input elements are {fill:g} (masked): each slice it reduces holds a finite element besides, so "
        "they decided no output, and it is judged on the finite elements"
    ], entry


def test_a_log_sum_exp_over_infinite_slices_conforms(tmp_path: Path) -> None:
    """ReduceLogSumExp of a slice of -inf only (a fully masked row of logits) is -inf by ONNX's definition
    log(sum(exp(x))), of one holding +inf +inf: what OpenVINO's converted model computes, which conform agrees with."""
    node = helper.make_node("ReduceLogSumExp", ["x", "axes"], ["y"], name="lse", keepdims=0)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])],
        initializer=[numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model)
    path = onnx_models.save(model, tmp_path / "lse.onnx")
    x = np.array([[-np.inf, -np.inf], [np.inf, np.inf], [np.inf, -np.inf], [np.inf, 1], [1, 2]], np.float32)
    got = _openvino_outputs(path, {"x": x})["y"]
    with np.errstate(all="ignore"):
        defined = np.log(np.sum(np.exp(x.astype(np.float64)), axis=1))
    np.testing.assert_allclose(got, defined, rtol=1e-6)  # OpenVINO computes the definition
    [entry] = conform_model(str(path), inputs={"x": x}).to_json()["nodes"]
    assert (entry["status"], entry["first_mismatch"]) == ("ok", None), entry


@pytest.mark.parametrize(
    ("op", "opset", "axes"),
    [("ReduceSum", 18, [1, -2]), ("ReduceSum", 13, [1, 1]), ("ReduceMean", 13, [1, 1]), ("ReduceL2", 18, [-2, 1, 1])],
)
def test_a_repeated_axis_is_checked_once(op: str, opset: int, axes: list[int], tmp_path: Path) -> None:
    """A node naming an axis more than once, which ONNX's checker and strict shape inference accept (counting the axis
    once), is checked over each axis once, as OpenVINO's converted model reduces it, with a note; not refused."""
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    node = helper.make_node(op, ["x", "axes"] if as_input else ["x"], ["y"], name="r", keepdims=0,
                            **({} if as_input else {"axes": axes}))  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(np.array(axes, np.int64), "axes")] if as_input else [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [2, 4]  # axis 1 once
    path = onnx_models.save(model, tmp_path / "repeated.onnx")
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    got = _openvino_outputs(path, {"x": x})["y"]
    want = onnx_ref.reduce(op, x, [1], 0, opset=opset)
    assert _close(got, want)  # OpenVINO reduces axis 1 once
    [entry] = conform_model(str(path), inputs={"x": x}).to_json()["nodes"]
    assert entry["status"] == "ok", entry
    assert any("name an axis more than once: each is reduced once" in n for n in entry["notes"]), entry


@pytest.mark.parametrize(("etype", "made"), [
    (TensorProto.FLOAT, "factors of a product about 1"), (TensorProto.FLOAT16, "factors of a product about 1"),
    (TensorProto.BFLOAT16, "factors of a product about 1"), (TensorProto.INT32, "odd factors from 3 to 7"),
])  # fmt: skip
def test_a_product_made_for_conform_shows_an_error(etype: int, made: str) -> None:
    """conform's generated input (normal floats, integers over their range) made the product of 128 elements ~1e-20
    (integers: wrapped to 0), within the tolerance of 0, so every ReduceProd conformed on an input that cannot show an
    error, as a kernel giving zeros would. Its input is made as run makes a product's, factors whose product each
    element shows in: the node is compared on it, and OpenVINO's product of it conforms."""
    graph = helper.make_graph(
        [helper.make_node("ReduceProd", ["x", "axes"], ["y"], keepdims=0, name="r")], "prod",
        [helper.make_tensor_value_info("x", etype, [2, 128])], [helper.make_tensor_value_info("y", etype, [2])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    for seed in (0, 1):
        doc = conform_model(model.SerializeToString(), seed=seed).to_json()
        [entry] = doc["nodes"]
        assert (entry["status"], entry["notes"], doc["ok"]) == ("ok", [], True), entry
        [given] = doc["inputs"]
        assert given["origin"] == f"seed {seed}, {made} of a random sign in each slice that ReduceProd 'r' reduces"


@pytest.mark.parametrize("shape", [[2, 128], [8, 16]])
def test_a_log_sum_made_for_conform_has_a_positive_sum_in_every_slice(shape: list[int]) -> None:
    """Normal values made for a ReduceLogSum summed below 0 in some slices (1 of 2 rows of [2, 128], 3 of 8 of
    [8, 16]): their log is NaN on both sides, which passed as "NaN matches NaN", compared on nothing, with no word.
    Made as absolute values, every slice's sum is positive, and every output is compared."""
    graph = helper.make_graph(
        [helper.make_node("ReduceLogSum", ["x", "axes"], ["y"], keepdims=0, name="r")], "logsum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape[:1])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="ovreduce-tests")
    model.ir_version = onnx_models.IR_VERSION
    doc = conform_model(model.SerializeToString()).to_json()
    [entry] = doc["nodes"]
    assert (entry["status"], doc["ok"]) == ("ok", True), entry
    assert entry["nan"] == {"reference": 0, "candidate": 0}, entry
    [made] = doc["inputs"]
    assert made["origin"] == "seed 0, absolute values (a positive sum in each slice that ReduceLogSum 'r' reduces)"
