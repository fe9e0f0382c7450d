"""conform when things go wrong: conversion failures, compile failures, not-ONNX files, unobservable nodes.

Measured on OpenVINO 2026.4:

* an unknown operator or an axis out of range fails the *conversion*, with the frontend's message;
* ReduceMean-13 with ``keepdims=7`` converts (OpenVINO reads it as true); the ONNX reference refuses it;
* QLinearReduceMean with ``axes=[]`` (ONNX: reduce over all axes) becomes an OpenVINO ReduceMean with empty
  axes, which OpenVINO defines as the identity: with keepdims=0 the CPU plugin refuses to compile it, with
  keepdims=1 it runs and returns the input's shape, not [1, 1];
* the frontend keeps the ONNX tensor names around ReduceMean through RMSNorm and LayerNorm chains (nothing
  is fused at conversion time), but removes a dead node and the empty output of a ``Constant`` node: those
  are the natural "not observable" cases (together with a removed empty ``axes`` graph input, see
  test_onnx_backend_cases.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest

from ovreduce.conform import conform_model
from ovreduce.errors import InputError, LimitExceededError
from ovreduce.reference.onnx import MAX_OPSET

from . import onnx_models


def test_unknown_operator_is_a_finding_with_openvinos_message(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.unknown_op(), tmp_path / "unknown.onnx")
    report = conform_model(str(path))
    doc = report.to_json()
    assert doc["ok"] is False
    assert doc["error"].startswith("OpenVINO could not convert the model: ")
    assert "NoSuchOp" in doc["error"]
    assert "Exception from" not in doc["error"]  # OpenVINO's source locations are cleaned away
    [node] = doc["nodes"]
    assert (node["node"], node["status"], node["ok"]) == ("rm", "not-observable", False)
    assert node["notes"] == ["not converted"]


def test_axis_out_of_range_fails_the_conversion(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.axis_out_of_range(), tmp_path / "bad_axis.onnx")
    doc = conform_model(str(path)).to_json()
    assert doc["ok"] is False
    assert "Axis 5 out of the tensor rank range [-2, 1]" in doc["error"]


def test_keepdims_outside_0_1_is_refused_by_the_reference(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.keepdims_not_boolean(7), tmp_path / "keepdims7.onnx")
    doc = conform_model(str(path)).to_json()
    assert doc["error"] is None  # OpenVINO converted and ran it
    [node] = doc["nodes"]
    assert (node["status"], node["ok"]) == ("error", False)
    assert "keepdims must be 0 or 1; got 7" in node["error"]


def test_a_model_openvino_cannot_compile_is_a_finding_not_a_disagreement(tmp_path: Path) -> None:
    model = onnx_models.qlinear_reduce_mean(np.uint8, [2, 3], [], axes=[], keepdims=0, data_scale=0.5,
                                            data_zero_point=3, reduced_scale=0.5, reduced_zero_point=3)  # fmt: skip
    path = onnx_models.save(model, tmp_path / "q_empty_axes.onnx")
    doc = conform_model(str(path), inputs={"x": np.array([[10, 20, 30], [1, 2, 4]], np.uint8)}).to_json()
    assert doc["ok"] is False
    assert doc["error"].startswith("OpenVINO could not run the converted model: ")
    assert "incorrect number of input/output dimensions" in doc["error"]
    [node] = doc["nodes"]
    assert node["status"] == "error"
    assert "not checked" in node["error"]


def test_nodes_a_time_limit_left_unchecked_say_so_and_blame_no_one(tmp_path: Path) -> None:
    """A Loop of 10^9 steps before a ReduceMean: the time limit stops OpenVINO's run, and the node said "OpenVINO
    could not run the converted model", as for a model OpenVINO refuses. In a process of its own: OpenVINO cannot stop
    that run, which would keep a core of the test run busy, and its process's exit waiting, for ever."""
    path = tmp_path / "loop.onnx"
    path.write_bytes(onnx_models.endless_loop_before_a_mean().SerializeToString())
    argv = [sys.executable, "-m", "ovreduce.cli", "conform", str(path), "--timeout", "2", "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["error"] == "OpenVINO did not finish running the converted model: the time limit of 2 s ran out"
    [node] = [n for n in doc["nodes"] if n["op_type"] == "ReduceMean"]
    assert (node["status"], node["error"]) == ("error", "not checked: the time limit of 2 s ran out"), node


def test_qlinear_empty_axes_with_keepdims_disagrees_on_the_shape(tmp_path: Path) -> None:
    # ONNX: axes [] reduces every axis: mean of (x - 3) * 0.5 over [[10, 20, 30], [1, 2, 4]] is
    # (7 + 17 + 27 - 2 - 1 + 1) * 0.5 / 6 = 49 / 12 = 4.083; / 0.5 = 8.17 -> 8; + 3 = 11, shape [1, 1].
    model = onnx_models.qlinear_reduce_mean(np.uint8, [2, 3], [1, 1], axes=[], keepdims=1, data_scale=0.5,
                                            data_zero_point=3, reduced_scale=0.5, reduced_zero_point=3)  # fmt: skip
    path = onnx_models.save(model, tmp_path / "q_empty_axes_keep.onnx")
    x = np.array([[10, 20, 30], [1, 2, 4]], np.uint8)
    doc = conform_model(str(path), inputs={"x": x}).to_json()
    [node] = doc["nodes"]
    openvino = onnx_models.openvino_output(path, {"x": x})
    assert node["ok"] is (openvino.shape == (1, 1) and int(openvino[0, 0]) == 11)
    if openvino.shape != (1, 1):
        assert node["status"] == "disagree"
        assert node["error"] == f"shape {list(openvino.shape)} differs from the reference's [1, 1]"


@pytest.mark.parametrize("content", [b"", b"this is not a model", b"<?xml version='1.0'?><net/>"],
                         ids=["empty", "text", "xml"])  # fmt: skip
def test_a_file_that_is_not_onnx_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"not (a readable|an) ONNX model"):
        conform_model(str(path))


def test_an_input_that_names_nothing_is_an_input_error(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.rms_norm_chain(), tmp_path / "rms.onnx")
    with pytest.raises(InputError, match="'nope' names no model input"):
        conform_model(str(path), inputs={"nope": np.zeros((2, 16), np.float32)})


def test_a_dead_node_is_reported_not_observable(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.dead_reduce_mean(), tmp_path / "dead.onnx")
    doc = conform_model(str(path)).to_json()
    by_name = {n["node"]: n for n in doc["nodes"]}
    assert by_name["rm"]["status"] == "ok"
    dead = by_name["rm_dead"]
    assert (dead["status"], dead["observable"], dead["missing_tensors"]) == ("not-observable", False, ["unused"])
    assert "'unused'" in dead["notes"][0]
    assert doc["ok"] is False  # an unchecked node is not a pass


def test_axes_from_an_empty_constant_node_are_not_observable(tmp_path: Path) -> None:
    path = onnx_models.save(onnx_models.constant_node_empty_axes(), tmp_path / "const_axes.onnx")
    doc = conform_model(str(path)).to_json()
    [node] = doc["nodes"]
    assert (node["status"], node["missing_tensors"]) == ("not-observable", ["empty_axes"])


@pytest.mark.parametrize("build", [onnx_models.rms_norm_chain, onnx_models.layer_norm_chain], ids=["rms", "ln"])
def test_normalization_chains_stay_observable(build: Callable[[], onnx.ModelProto], tmp_path: Path) -> None:
    path = onnx_models.save(build(), tmp_path / "chain.onnx")
    doc = conform_model(str(path)).to_json()
    assert doc["nodes"], doc
    assert all(n["observable"] and n["status"] == "ok" for n in doc["nodes"]), doc["nodes"]
    assert doc["ok"] is True


def _nested_ifs(depth: int) -> onnx.ModelProto:
    """``depth`` Ifs, each branch the next If (the innermost: a ReduceMean), on a bool input ``c``."""
    from onnx import TensorProto, helper

    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    body = helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"], keepdims=1)], "leaf", [], [out])
    for level in range(depth):
        node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)
        body = helper.make_graph([node], f"level{level}", [], [out])
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]  # fmt: skip
    graph = helper.make_graph(list(body.node), "nested", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_sub_graphs_nested_too_deep_are_refused_before_openvino_compiles_them(tmp_path: Path) -> None:
    """Nested Ifs cost OpenVINO's compile exponential time (30 levels of a 10 KB file: minutes): past the depth
    an IR may have, the model is refused at once, as an IR would be; within it, it is converted and run."""
    from ovreduce.conform import MAX_SUBGRAPH_DEPTH

    deep = tmp_path / "deep.onnx"
    onnx.save(_nested_ifs(MAX_SUBGRAPH_DEPTH + 1), deep)
    with pytest.raises(LimitExceededError, match=f"nested more than {MAX_SUBGRAPH_DEPTH} deep"):
        conform_model(deep)
    shallow = tmp_path / "shallow.onnx"
    onnx.save(_nested_ifs(2), shallow)
    doc = conform_model(shallow)
    assert doc.error is None, doc.error


def test_reductions_inside_subgraphs_are_listed_as_not_checked_and_the_model_does_not_pass(tmp_path: Path) -> None:
    """conform compares no node of an If branch or a Loop body: a model whose reductions are all there passed as
    "every node conforms" with no node listed; each is now listed, not checked, and the verdict does not pass."""
    path = tmp_path / "nested.onnx"
    onnx.save(_nested_ifs(2), path)
    doc = conform_model(path)
    assert doc.error is None and not doc.ok
    assert len(doc.nodes) == 4 and {n.op_type for n in doc.nodes} == {"ReduceMean"}  # 2 branches of 2 branches
    for node in doc.nodes:
        assert node.status == "not-observable" and not node.ok
        assert any(
            note.startswith("not checked: it is inside the then_branch of If")
            or note.startswith("not checked: it is inside the else_branch of If")
            for note in node.notes
        )
        assert " > the " in " ".join(node.notes)  # the inner If's branch, inside the outer's


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_a_mean_over_no_elements_is_undefined_and_compared_nowhere(tmp_path: Path, dtype: type) -> None:
    """ONNX leaves it undefined: the reference's NaN (no value at all for integers) against OpenVINO's 0 was a
    DISAGREE (an ERROR for integers); the elements are counted as undefined, as ``run`` counts an empty max."""
    from onnx import TensorProto, helper

    element = TensorProto.FLOAT if dtype is np.float32 else TensorProto.INT32
    node = helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1], keepdims=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", element, [2, 0, 4])],
                              [helper.make_tensor_value_info("y", element, [2, 4])])  # fmt: skip
    path = onnx_models.save(onnx_models._finish(graph, 11), tmp_path / "empty_mean.onnx")
    doc = conform_model(str(path)).to_json()
    [row] = doc["nodes"]
    assert (row["status"], row["total"], row["undefined"], row["mismatched"]) == ("ok", 8, 8, 0), row
    assert "a mean over no elements, which ONNX leaves undefined: nothing was compared" in " ".join(row["notes"])
    blind = "it conforms on an input that cannot show an error: its input is empty"
    assert blind in row["notes"], row  # counted among the nodes whose agreement establishes nothing
    kept = onnx_models.reduce_mean(18, [2, 3, 4], axes_input=[1], keepdims=0)  # a defined mean stays compared
    [defined] = conform_model(str(onnx_models.save(kept, tmp_path / "mean.onnx"))).to_json()["nodes"]
    assert (defined["status"], defined["undefined"]) == ("ok", 0)


def _reduce_graph(nodes: list[onnx.NodeProto], dims: list[int | str]) -> bytes:
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([1], np.int64), "axes")])  # fmt: skip
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


def test_a_tensor_two_nodes_write_is_refused_not_blamed_on_openvino() -> None:
    """Not SSA (onnx.checker refuses it): one of the two values is observed and was compared with the other node's
    reference, a disagreement of OpenVINO's making."""
    from onnx import helper

    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["y"]), helper.make_node("ReduceSum", ["x", "axes"], ["y"])]
    with pytest.raises(InputError, match="tensor 'y' is written by ReduceSum '' and by ReduceMean ''"):
        conform_model(_reduce_graph(nodes, [2, 4]))
    with pytest.raises(InputError, match="tensor 'x' is written by Relu '' and by the graph's own input"):
        conform_model(_reduce_graph([helper.make_node("Relu", ["axes"], ["x"]), *nodes[:1]], [2, 4]))


def test_an_input_dim_below_minus_1_is_refused_not_run_empty() -> None:
    """OpenVINO's frontend reads a dim of -5 as 0: every node then 'conforms' on empty tensors, having checked
    nothing. -1 is read as a dynamic dim, as a dim_param is."""
    from onnx import helper

    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["y"])]
    with pytest.raises(InputError, match="input 'x' dim 1 is -5; expected a size of 0 or more"):
        conform_model(_reduce_graph(nodes, [2, -5]))
    assert conform_model(_reduce_graph(nodes, [2, "n"]), shapes=None).to_json()["ok"] is True


@pytest.mark.parametrize("axis", [2**32, 5, -4])
def test_given_axes_out_of_range_are_an_input_error(axis: int) -> None:
    """As ``run`` refuses them: OpenVINO's run (5) or the ONNX reference (2^32, which OpenVINO's CPU plugin reads as
    axis 0) failed, and the node was reported as a conversion that does not conform, exit 1."""
    model = onnx_models.reduce_mean(18, [2, 3, 4], axes_input=[1], axes_as_graph_input=True, out_shape=[2, 1, 4])
    with pytest.raises(InputError, match=f"input 'axes': axis {axis} of ReduceMean 'rm' is out of range for its data "
                                         r"'x' of rank 3; expected axes in \[-3, 2\]"):  # fmt: skip
        conform_model(model.SerializeToString(), inputs={"axes": np.array([axis], np.int64)})
    assert conform_model(model.SerializeToString(), inputs={"axes": np.array([-3], np.int64)}).ok


ML = onnx.defs.C.schema_version_map()["ai.onnx.ml"][1]


@pytest.mark.parametrize(
    ("domain", "version", "said"),
    [("", 0, f"the default-domain opset 0; ONNX defines opsets 1 to {MAX_OPSET}"),
     ("", MAX_OPSET + 1, f"the default-domain opset {MAX_OPSET + 1}; ONNX defines opsets 1 to {MAX_OPSET}"),
     ("", 2**62, f"the default-domain opset {2**62}; ONNX defines opsets 1 to {MAX_OPSET}"),
     ("ai.onnx", 2**62, f"the default-domain opset {2**62}; ONNX defines opsets 1 to {MAX_OPSET}"),
     ("ai.onnx.ml", ML + 1, f"version {ML + 1} of the domain 'ai.onnx.ml'; ONNX defines its versions 1 to {ML}"),
     ("com.microsoft", 2**62, f"version {2**62} of the domain 'com.microsoft'; an operator set outside ONNX's own is "
      f"versioned 1 to 1000 here")],
    ids=["zero", "next", "huge", "named", "ml", "custom"],
)  # fmt: skip
def test_an_opset_version_none_defines_is_refused_at_once(domain: str, version: int, said: str) -> None:
    """OpenVINO's frontend looks each op up by counting the version down one at a time (for ever at 2^62, for an
    unused import too, read from bytes): a version no operator set defines is refused before the model reaches it."""
    model = onnx_models.reduce_mean(13, (2, 3), axes_attr=[1])
    if domain in ("", "ai.onnx"):
        model.opset_import[0].domain, model.opset_import[0].version = domain, version
    else:
        model.opset_import.append(onnx.helper.make_opsetid(domain, version))
    with pytest.raises(InputError, match=re.escape(f"the model imports {said}")):
        conform_model(model.SerializeToString())


def test_a_mean_over_no_elements_is_not_summed_up_as_plainly_conforming(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing was compared: the result line counts the node among those on an input that cannot show an error, as
    it counts a ReduceLogSum on the same empty input, rather than saying plainly that every node conforms."""
    from tests.cli.inprocess import run_cli

    results = {}
    for op in ("ReduceMean", "ReduceLogSum"):
        path = tmp_path / f"{op}.onnx"
        path.write_bytes(_reduce_graph([onnx.helper.make_node(op, ["x", "axes"], ["y"], name="r")], [2, 0, 4]))
        status, out, err = run_cli(capsys, "conform", str(path))
        assert status == 0, err
        results[op] = out.rstrip().splitlines()[-1]
    expected = "result: every node conforms, but one on an input that cannot show an error (see its note)"
    assert results["ReduceLogSum"].endswith(expected), results
    assert results["ReduceMean"].endswith(expected), results


def _named(marked: str) -> bytes:
    """A model of ReduceMeans (opset 18, their axes an initializer) at the top of its graph and in an If's then branch,
    whose name ``marked`` ends, as the file spells it, in a byte that is not UTF-8 (0xff) instead of its last letter."""
    from onnx import TensorProto, helper, numpy_helper

    def value(name: str, dims: list[int] | None = None) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)

    axes = numpy_helper.from_array(np.array([1], np.int64), "axesI")
    branch = helper.make_graph([helper.make_node("ReduceMean", ["xI", "axesI"], ["tY"], name="tN")], "b", [],
                               [value("tY")])  # fmt: skip
    other = helper.make_graph([helper.make_node("ReduceSum", ["xI", "axesI"], ["eY"], name="eN")], "e", [],
                              [value("eY")])  # fmt: skip
    nodes = [helper.make_node("ReduceMean", ["xI", "axesI"], ["mY"], name="mN"),
             helper.make_node("Relu", ["mY"], ["rY"], name="rN"),
             helper.make_node("If", ["cI"], ["iY"], name="iN", then_branch=branch, else_branch=other)]  # fmt: skip
    condition = helper.make_tensor_value_info("cI", TensorProto.BOOL, [])
    graph = helper.make_graph(nodes, "g", [value("xI", [2, 3]), condition], [value("rY"), value("iY")], [axes],
                              value_info=[value("mY", [2, 1])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return bytes(model.SerializeToString()).replace(marked.encode(), marked[:-1].encode() + b"\xff")


@pytest.mark.parametrize(
    ("marked", "place"),
    [("xI", "graph.node[0].input[0]"), ("mY", "graph.node[0].output[0]"), ("mN", "graph.node[0].name"),
     ("rY", "graph.node[1].output[0]"), ("tN", "graph.node[2].attribute[1].g.node[0].name"),
     ("cI", "graph.node[2].input[0]"), ("axesI", "graph.node[0].input[1]")],
    ids=["input", "output", "node", "graph-output", "in-a-branch", "condition", "initializer"],
)  # fmt: skip
def test_a_name_that_is_not_utf8_is_refused_by_its_place(marked: str, place: str) -> None:
    """ONNX's strings are protobuf's, which it does not check: protobuf hands a name that is not UTF-8 over as bytes,
    OpenVINO's frontend converts the model, and its Python API cannot hand the name back (UnicodeDecodeError), nor could
    a report say it. The first such field, in the file's order, is named by its place in the model."""
    import openvino as ov

    model = _named(marked)
    shown = marked[:-1].encode() + b"\xff"
    said = f"model.onnx: not a readable ONNX model: {place} is not UTF-8 text: {shown!r}; ONNX's names and other " \
           f"strings are UTF-8"  # fmt: skip
    with pytest.raises(InputError, match=re.escape(said)):
        conform_model(model)
    if marked == "xI":  # what OpenVINO makes of it
        converted = ov.Core().read_model(model, b"")
        with pytest.raises(UnicodeDecodeError):
            converted.inputs[0].get_names()
    assert conform_model(_named("nothing")).to_json()["error"] is None  # the same model, every name text


@pytest.mark.parametrize(
    ("field", "place"),
    [("initializer", "graph.initializer[0].name"), ("value_info", "graph.value_info[0].name"),
     ("attribute", "graph.node[2].attribute[0].name"), ("domain", "opset_import[1].domain")],
)  # fmt: skip
def test_any_string_field_that_is_not_utf8_is_refused(field: str, place: str) -> None:
    """Names conform never looks up are not text either: the whole model is read as protobuf reads it."""
    from onnx import helper

    model = onnx.load_from_string(_named("nothing"))
    if field == "initializer":
        model.graph.initializer[0].name = "axesQ"
    elif field == "value_info":
        model.graph.value_info[0].name = "mQ"
    elif field == "attribute":
        model.graph.node[2].attribute[0].name = "then_branchQ"
    else:
        model.opset_import.append(helper.make_opsetid("domQ", 1))
    data = bytes(model.SerializeToString()).replace(b"Q", b"\xfe")
    with pytest.raises(InputError, match=re.escape(f"{place} is not UTF-8 text")):
        conform_model(data)


def _with(node: onnx.NodeProto, opset: int = 13, outputs: tuple[str, ...] = ("t",)) -> bytes:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"], name="m", axes=[1]), node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in ("y", *outputs)])  # fmt: skip
    if opset >= 18:
        graph.node[0].attribute.pop()  # (axes became an input)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


@pytest.mark.parametrize(
    ("node", "opset", "outputs", "said"),
    [(("Mean", [], ["t"], "avg"), 13, ("t",), "node 'avg' (Mean) has no inputs; ONNX's Mean (opset 13) takes 1 or "
      "more"),
     (("Sum", [], ["t"], "s"), 13, ("t",), "node 's' (Sum) has no inputs; ONNX's Sum (opset 13) takes 1 or more"),
     (("Max", [], ["t"], "mx"), 13, ("t",), "node 'mx' (Max) has no inputs; ONNX's Max (opset 13) takes 1 or more"),
     (("Min", [], ["t"], ""), 13, ("t",), "the Min node writing 't' has no inputs; ONNX's Min (opset 13) takes 1 or "
      "more"),
     (("Split", ["x"], [], "sp"), 17, (), "node 'sp' (Split) has no outputs; ONNX's Split (opset 17) gives 1 or more"),
     (("Pad", ["x"], ["t"], "p"), 17, ("t",), "node 'p' (Pad) has 1 input; ONNX's Pad (opset 17) takes 2 to 3"),
     (("ReduceMax", ["x"], [], ""), 18, (), "the ReduceMax node at index 1 has no outputs; ONNX's ReduceMax (opset "
      "18) gives 1"),
     (("Clip", [""], ["t"], "clip"), 13, ("t",), "node 'clip' (Clip) has its required input at position 0 "
      "absent (an empty name); ONNX's Clip (opset 13) takes 1 to 3, the first required"),
     (("ReduceMax", ["x"], [""], "mx"), 13, (), "node 'mx' (ReduceMax) has its required output at position 0 "
      "absent (an empty name); ONNX's ReduceMax (opset 13) gives 1, the first required")],
    ids=["Mean", "Sum", "Max", "Min", "Split", "Pad", "ReduceMax", "Clip-of-empty-name", "ReduceMax-to-empty-name"],
)  # fmt: skip
def test_a_node_short_of_its_operators_inputs_or_outputs_is_refused_before_openvino_reads_it(
    node: tuple[str, list[str], list[str], str], opset: int, outputs: tuple[str, ...], said: str
) -> None:
    """OpenVINO's ONNX frontend dies reading most of these (SIGSEGV for the Mean, Sum, Max, Min and Pad, SIGFPE for the
    Split: the process, a CLI's or a service's worker, is gone); a reduction without an output has nothing to compare.
    Each is refused by its operator's schema at the model's opset, before OpenVINO reads the model."""
    from onnx import helper

    op_type, inputs, node_outputs, name = node
    with pytest.raises(InputError, match=re.escape(f"model.onnx: not a valid ONNX model: {said}")):
        conform_model(_with(helper.make_node(op_type, inputs, node_outputs, name=name), opset, outputs))


def test_a_node_with_the_least_its_operator_takes_is_converted_and_checked() -> None:
    """The bound is the schema's: a Mean of one input, a Pad with its pads, a Split into one are OpenVINO's to convert;
    the Mean is compared with ONNX's reference."""
    from onnx import helper, numpy_helper

    mean = conform_model(_with(helper.make_node("Mean", ["x"], ["t"], name="avg"))).to_json()
    assert mean["ok"] is True and [n["node"] for n in mean["nodes"]] == ["m", "avg"]
    padded = onnx.load_from_string(_with(helper.make_node("Pad", ["x", "pads"], ["t"], name="p"), 17))
    padded.graph.initializer.append(numpy_helper.from_array(np.zeros(4, np.int64), "pads"))
    assert conform_model(padded.SerializeToString()).to_json()["ok"] is True
    split = _with(helper.make_node("Split", ["x"], ["t"], name="sp", axis=0), 17)
    assert conform_model(split).to_json()["ok"] is True


def test_a_checked_node_without_an_output_in_a_domain_onnx_has_no_schema_for_is_refused() -> None:
    model = onnx_models.qlinear_reduce_mean(np.uint8, [2, 3], [], axes=[1], keepdims=0, data_scale=0.5,
                                            data_zero_point=3, reduced_scale=0.5, reduced_zero_point=3)  # fmt: skip
    model.graph.node[0].ClearField("output")
    model.graph.node[0].name = ""
    with pytest.raises(InputError, match="the QLinearReduceMean node at index 0 has no outputs; expected one, the "
                                         "reduction conform checks"):  # fmt: skip
        conform_model(model.SerializeToString())
    model.graph.node[0].output.append("")  # ONNX's name of a tensor that is not there
    with pytest.raises(InputError, match="the QLinearReduceMean node at index 0 has no outputs"):
        conform_model(model.SerializeToString())


def test_an_attribute_that_refers_to_a_function_outside_one_is_refused() -> None:
    """A reference (ref_attr_name) stands for an attribute of the function a node is in: at the top of the graph, or in
    a branch of it, there is none; the onnx package cannot give its value. In a function's body it is what it is for
    (OpenVINO's frontend converts no model-local function: a finding, not a refusal)."""
    from onnx import AttributeProto, helper

    model = onnx.load_from_string(_with(helper.make_node("Relu", ["x"], ["t"], name="r")))
    model.graph.node[0].attribute[0].ref_attr_name = "foo"
    said = "not a valid ONNX model: attribute 'axes' of node 'm' (ReduceMean) refers to the attribute 'foo' of a " \
           "function (ref_attr_name), which only a node of a function's body may; expected its value"  # fmt: skip
    with pytest.raises(InputError, match=re.escape(said)):
        conform_model(model.SerializeToString())
    body = helper.make_node("ReduceMean", ["a"], ["b"])
    body.attribute.append(helper.make_attribute_ref("axes", AttributeProto.INTS))
    body.attribute[0].ref_attr_name = "ax"
    model = onnx.load_from_string(_with(helper.make_node("MyMean", ["x"], ["t"], domain="local", name="call", ax=[1])))
    model.opset_import.append(helper.make_opsetid("local", 1))
    model.functions.append(helper.make_function("local", "MyMean", ["a"], ["b"], [body], [helper.make_opsetid("", 13)],
                                                attributes=["ax"]))  # fmt: skip
    doc = conform_model(model.SerializeToString()).to_json()
    assert doc["error"].startswith("OpenVINO could not convert the model: ") and "local.MyMean" in doc["error"]


def test_the_cli_refuses_a_malformed_model_in_a_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not "internal error ... (please report)", exit 3 (a name that is not text), nor OpenVINO's crash (a Mean with no
    inputs)."""
    from onnx import helper

    from tests.cli.inprocess import run_cli

    mean = _with(helper.make_node("Mean", [], ["t"], name="avg"))
    for model, said in [(_named("mN"), "graph.node[0].name is not UTF-8 text: b'm\\xff'"),
                        (mean, "node 'avg' (Mean) has no inputs")]:  # fmt: skip
        path = tmp_path / "m.onnx"
        path.write_bytes(model)
        for form in ("text", "json"):
            status, out, err = run_cli(capsys, "conform", str(path), "--format", form)
            assert (status, out) == (2, ""), err
            assert said in err and err.endswith("[input]\n"), err


def test_a_reduction_inside_a_model_local_function_is_listed_not_checked(tmp_path: Path) -> None:
    """A ReduceMean in the body of a model-local function (ModelProto.functions, which ONNX's full check accepts) is
    listed as not checked, saying where it is, and the model's own definition of the function is named."""
    function = onnx.helper.make_function(
        "local", "MeanLast", ["x"], ["y"],
        [onnx.helper.make_node("Constant", [], ["ax"], value=onnx.numpy_helper.from_array(np.array([-1], np.int64))),
         onnx.helper.make_node("ReduceMean", ["x", "ax"], ["y"], name="inner_mean", keepdims=1)],
        [onnx.helper.make_opsetid("", 18)],
    )  # fmt: skip
    call = onnx.helper.make_node("MeanLast", ["x"], ["y"], domain="local", name="call")
    graph = onnx.helper.make_graph(
        [call], "g", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 8])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 1])],
    )  # fmt: skip
    imports = [onnx.helper.make_opsetid("", 18), onnx.helper.make_opsetid("local", 1)]
    model = onnx.helper.make_model(graph, opset_imports=imports, functions=[function])
    model.ir_version = onnx_models.IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    doc = conform_model(onnx_models.save(model, tmp_path / "fn.onnx"))
    [node] = doc.nodes
    assert node.node == "inner_mean" and node.status == "not-observable" and not doc.ok, doc
    assert "inside the model-local function local.MeanLast" in node.notes[-1], node.notes
    if doc.error is not None:  # (OpenVINO 2026.4's frontend does not convert the call)
        assert any("the model itself defines local.MeanLast" in note for note in doc.notes), doc.notes
