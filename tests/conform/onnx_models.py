"""ONNX models for the conform tests, built with ``onnx.helper`` (nothing is downloaded).

Every builder returns a ``ModelProto``; :func:`save` writes it. Valid models go through ONNX's checker
(and, for the default domain, ONNX's strict shape inference, which also fills in the graph outputs'
shapes), so a test failure is never a malformed test model. The deliberately broken models say so.

:func:`backend_node_cases` gives ONNX's own backend node test cases (``onnx.backend.test.case.node``):
each has the model and the input/expected-output arrays of ONNX's data sets.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8  # what every frontend reads; the opset imports below decide the operator versions
MS_DOMAIN = "com.microsoft"
_ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int64): TensorProto.INT64}  # fmt: skip


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def _finish(graph: onnx.GraphProto, opset: int, *, microsoft: bool = False, check: bool = True) -> onnx.ModelProto:
    imports = [helper.make_opsetid("", opset)]
    if microsoft:
        imports.append(helper.make_opsetid(MS_DOMAIN, 1))
    model = helper.make_model(graph, opset_imports=imports, producer_name="ovreduce-tests")
    model.ir_version = IR_VERSION
    if check:
        if not microsoft:
            model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model)
    return model


def _value(name: str, dtype: Any, shape: Sequence[int | str] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, _ELEM[np.dtype(dtype)], None if shape is None else list(shape))


def reduce_mean(
    opset: int,
    shape: Sequence[int],
    *,
    axes_attr: Sequence[int] | None = None,
    axes_input: Sequence[int] | None = None,
    axes_as_graph_input: bool = False,
    keepdims: int | None = None,
    noop_with_empty_axes: int | None = None,
    out_shape: Sequence[int] | None = None,
) -> onnx.ModelProto:
    """``y = ReduceMean(x[, axes])``, node name ``rm``.

    ``axes_attr`` is the attribute (opsets before 18); ``axes_input`` the optional input (opset 18), an
    initializer unless ``axes_as_graph_input`` (then a graph input named ``axes`` of shape
    ``[len(axes_input)]``). An attribute left at ``None`` is absent from the node (its default applies).
    ``out_shape`` declares the output's shape (needed when ONNX's shape inference cannot know it: axes
    given at run time); otherwise shape inference fills it in.
    """
    attrs: dict[str, Any] = {}
    if axes_attr is not None:
        attrs["axes"] = list(axes_attr)
    if keepdims is not None:
        attrs["keepdims"] = keepdims
    if noop_with_empty_axes is not None:
        attrs["noop_with_empty_axes"] = noop_with_empty_axes
    inputs = [_value("x", np.float32, shape)]
    initializers = []
    node_inputs = ["x"]
    if axes_input is not None:
        node_inputs.append("axes")
        if axes_as_graph_input:
            inputs.append(_value("axes", np.int64, [len(axes_input)]))
        else:
            initializers.append(numpy_helper.from_array(np.array(axes_input, np.int64).reshape(-1), "axes"))
    node = helper.make_node("ReduceMean", node_inputs, ["y"], name="rm", **attrs)
    graph = helper.make_graph([node], "reduce_mean", inputs, [_value("y", np.float32, out_shape)], initializers)
    return _finish(graph, opset)


def mean(opset: int, shapes: Sequence[Sequence[int]]) -> onnx.ModelProto:
    """``y = Mean(a0, a1, ...)`` of f32 graph inputs ``a0``... with the given shapes, node name ``mean``."""
    names = [f"a{i}" for i in range(len(shapes))]
    node = helper.make_node("Mean", names, ["y"], name="mean")
    inputs = [_value(n, np.float32, s) for n, s in zip(names, shapes, strict=True)]
    return _finish(helper.make_graph([node], "mean", inputs, [_value("y", np.float32, None)]), opset)


def qlinear_reduce_mean(
    dtype: type[np.uint8] | type[np.int8],
    shape: Sequence[int],
    out_shape: Sequence[int],
    *,
    axes: Sequence[int],
    keepdims: int,
    data_scale: float,
    data_zero_point: int,
    reduced_scale: float,
    reduced_zero_point: int,
) -> onnx.ModelProto:
    """com.microsoft ``y = QLinearReduceMean(x, x_scale, x_zp, y_scale, y_zp)``, node name ``qrm``; the
    scales and zero points are scalar initializers (f32 / ``dtype``). ONNX's shape inference does not know
    the contrib op, so ``out_shape`` is declared by the caller."""
    initializers = [
        numpy_helper.from_array(np.array(data_scale, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(data_zero_point, dtype), "x_zero_point"),
        numpy_helper.from_array(np.array(reduced_scale, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(reduced_zero_point, dtype), "y_zero_point"),
    ]
    node = helper.make_node(
        "QLinearReduceMean", ["x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"], ["y"], name="qrm",
        domain=MS_DOMAIN, keepdims=keepdims,
    )  # fmt: skip
    node.attribute.append(helper.make_attribute("axes", list(axes), attr_type=onnx.AttributeProto.INTS))
    graph = helper.make_graph(
        [node], "qlinear_reduce_mean", [_value("x", dtype, shape)], [_value("y", dtype, out_shape)], initializers
    )
    return _finish(graph, 13, microsoft=True)


def unknown_op() -> onnx.ModelProto:
    """``x -> NoSuchOp -> ReduceMean(rm) -> y``: an operator no frontend knows (not checked: it is invalid)."""
    nodes = [
        helper.make_node("NoSuchOp", ["x"], ["t"], name="mystery"),
        helper.make_node("ReduceMean", ["t"], ["y"], name="rm", axes=[1]),
    ]
    graph = helper.make_graph(nodes, "unknown_op", [_value("x", np.float32, [2, 3])], [_value("y", np.float32, [2, 1])])
    return _finish(graph, 13, check=False)


def axis_out_of_range() -> onnx.ModelProto:
    """ReduceMean-13 with ``axes=[5]`` on a rank-2 input (invalid; not checked)."""
    node = helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[5])
    graph = helper.make_graph([node], "bad_axis", [_value("x", np.float32, [2, 3])], [_value("y", np.float32, [2, 3])])
    return _finish(graph, 13, check=False)


def keepdims_not_boolean(keepdims: int = 7) -> onnx.ModelProto:
    """ReduceMean-13 with ``keepdims=7``: ONNX allows only 0 or 1 (invalid; the checker does not look)."""
    node = helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1], keepdims=keepdims)
    graph = helper.make_graph(
        [node], "bad_keepdims", [_value("x", np.float32, [2, 3])], [_value("y", np.float32, [2, 1])]
    )
    return _finish(graph, 13, check=False)


def expand_by_values(grow: str, k: float) -> onnx.ModelProto:
    """``ReduceSum(Expand(1, [side, side]))`` with ``side = int(|max(x)| <grow> k)`` (``grow``: ``Add`` or ``Mul``):
    a tensor whose shape comes from the values of ``x [16]``, which nothing can size before the run."""
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["top"], keepdims=0),
        helper.make_node("Abs", ["top"], ["size"]),
        helper.make_node(grow, ["size", "k"], ["grown"]),
        helper.make_node("Cast", ["grown"], ["side"], to=TensorProto.INT64),
        helper.make_node("Unsqueeze", ["side", "zero"], ["side1"]),
        helper.make_node("Concat", ["side1", "side1"], ["shape"], axis=0),
        helper.make_node("Expand", ["one", "shape"], ["big"], name="grow"),
        helper.make_node("ReduceSum", ["big"], ["y"], keepdims=0),
    ]
    inits = [numpy_helper.from_array(np.array(k, np.float32), "k"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([1.0], np.float32), "one")]  # fmt: skip
    graph = helper.make_graph(nodes, "expand", [_value("x", np.float32, [16])], [_value("y", np.float32, [])], inits)
    return _finish(graph, 17, check=False)


def dead_reduce_mean() -> onnx.ModelProto:
    """Two ReduceMean nodes on ``x``: ``rm`` feeds the graph output, ``rm_dead``'s output ``unused`` feeds
    nothing (a dead node, as exporters sometimes leave behind)."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes"], ["unused"], name="rm_dead"),
        helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="rm"),
    ]
    graph = helper.make_graph(nodes, "dead", [_value("x", np.float32, [2, 8])], [_value("y", np.float32, None)], [axes])
    return _finish(graph, 18)


def constant_node_empty_axes() -> onnx.ModelProto:
    """ReduceMean-18 whose axes come from an ONNX ``Constant`` node holding an empty tensor (``empty_axes``)."""
    nodes = [
        helper.make_node("Constant", [], ["empty_axes"], value=numpy_helper.from_array(np.zeros([0], np.int64))),
        helper.make_node("ReduceMean", ["x", "empty_axes"], ["y"], name="rm"),
    ]
    graph = helper.make_graph(nodes, "const_axes", [_value("x", np.float32, [2, 8])], [_value("y", np.float32, None)])
    return _finish(graph, 18)


def rms_norm_chain() -> onnx.ModelProto:
    """``x*x -> ReduceMean(-1) -> +eps -> Sqrt -> x/rms`` (the RMSNorm pattern), nodes ``rm``."""
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps")]  # fmt: skip
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["squared"]),
        helper.make_node("ReduceMean", ["squared", "axes"], ["mean_square"], name="rm"),
        helper.make_node("Add", ["mean_square", "eps"], ["with_eps"]),
        helper.make_node("Sqrt", ["with_eps"], ["rms"]),
        helper.make_node("Div", ["x", "rms"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "rms", [_value("x", np.float32, [2, 16])], [_value("y", np.float32, None)], inits)
    return _finish(graph, 18)


def layer_norm_chain() -> onnx.ModelProto:
    """LayerNormalization written out (two ReduceMean: ``mean`` and ``variance``), as older exporters do."""
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]  # fmt: skip
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes"], ["mu"], name="mean"),
        helper.make_node("Sub", ["x", "mu"], ["centered"]),
        helper.make_node("Pow", ["centered", "two"], ["sq"]),
        helper.make_node("ReduceMean", ["sq", "axes"], ["var"], name="variance"),
        helper.make_node("Add", ["var", "eps"], ["var_eps"]),
        helper.make_node("Sqrt", ["var_eps"], ["std"]),
        helper.make_node("Div", ["centered", "std"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "ln", [_value("x", np.float32, [2, 16])], [_value("y", np.float32, None)], inits)
    return _finish(graph, 18)


def several_reductions() -> onnx.ModelProto:
    """ReduceSum-13, ReduceMax-18, ReduceL2-18 and ReduceMean-18 side by side (the other Reduce* nodes)."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum", keepdims=0),
        helper.make_node("ReduceMax", ["x", "axes"], ["m"], name="max", keepdims=0),
        helper.make_node("ReduceL2", ["x", "axes"], ["l2"], name="l2", keepdims=0),
        helper.make_node("ReduceMean", ["x", "axes"], ["mu"], name="mean", keepdims=0),
    ]
    outputs = [_value(n, np.float32, None) for n in ("s", "m", "l2", "mu")]
    graph = helper.make_graph(nodes, "several", [_value("x", np.float32, [3, 5])], outputs, [axes])
    return _finish(graph, 18)


@functools.cache
def endless_loop_before_a_mean() -> onnx.ModelProto:
    """A Loop of 10^9 steps adding 1 to x [2, 3], then a ReduceMean ``mean`` over axis 1: a run OpenVINO does not end
    soon. (The body's inputs have names of their own: OpenVINO's frontend reading the file by its path refuses a body
    whose inputs shadow the outer names.)"""
    tensor = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Identity", ["go_in"], ["go_on"]), helper.make_node("Add", ["v_in", "one"], ["v_next"])],
        "body",
        [tensor("i", TensorProto.INT64, []), tensor("go_in", TensorProto.BOOL, []),
         tensor("v_in", TensorProto.FLOAT, [2, 3])],
        [tensor("go_on", TensorProto.BOOL, []), tensor("v_next", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.ones((2, 3), np.float32), "one")],
    )  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip", "go", "x"], ["v"], body=body),
         helper.make_node("ReduceMean", ["v"], ["y"], keepdims=0, axes=[1], name="mean")], "g",
        [tensor("x", TensorProto.FLOAT, [2, 3])], [tensor("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(10**9, np.int64), "trip"), numpy_helper.from_array(np.array(True), "go")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _all_node_cases() -> tuple[Any, ...]:
    from onnx.backend.test.case.node import collect_testcases

    # Collecting runs every exporter of ONNX's node tests, some of which warn (NumPy overflow...).
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return tuple(collect_testcases())


def backend_node_cases(op_type: str) -> list[Any]:
    """ONNX's backend node test cases whose model is a single ``op_type`` node (the ``_expanded`` variants
    and other ops' function bodies that merely contain one are left out)."""
    return [
        case for case in _all_node_cases()
        if len(case.model.graph.node) == 1 and case.model.graph.node[0].op_type == op_type
    ]  # fmt: skip


def case_inputs(case: Any, data_set: int = 0) -> dict[str, npt.NDArray[Any]]:
    """A backend test case's inputs by graph input name."""
    arrays = case.data_sets[data_set][0]
    return {vi.name: np.asarray(a) for vi, a in zip(case.model.graph.input, arrays, strict=True)}


def case_expected(case: Any, data_set: int = 0) -> npt.NDArray[Any]:
    """A backend test case's (only) expected output."""
    outputs = case.data_sets[data_set][1]
    assert len(outputs) == 1
    return np.asarray(outputs[0])


def openvino_output(path: Path, feeds: dict[str, npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """The converted model's first output, computed by OpenVINO directly (f32, CPU), for independent checks.

    Feeds whose name the converted model does not have (inputs the frontend removed) are left out.
    """
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(path))
    names = {n for port in model.inputs for n in port.get_names()}
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled({k: v for k, v in feeds.items() if k in names})
    return np.asarray(result[compiled.outputs[0]])
