"""conform with ``--shape``: the converted model is reshaped to the given shapes before it compiles, in
either syntax; dims left dynamic get a default the model accepts, named in the document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.inprocess import run_cli


@pytest.fixture(scope="module")
def dynamic_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "len"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[1], keepdims=0)
    graph = helper.make_graph([node], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path_factory.mktemp("conform_shapes") / "dyn.onnx"
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("spec", ["x=[3,5]", "x[3,5]"])
def test_shape_reaches_the_converted_model(capsys: pytest.CaptureFixture[str], dynamic_onnx: Path, spec: str) -> None:
    status, out, err = run_cli(capsys, "conform", str(dynamic_onnx), "--shape", spec, "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["inputs"][0]["shape"] == [3, 5] and doc["inputs"][0]["defaulted_dims"] == []
    (node,) = doc["nodes"]
    assert node["ok"] and node["total"] == 3


def test_dims_left_dynamic_are_defaulted_and_named(capsys: pytest.CaptureFixture[str], dynamic_onnx: Path) -> None:
    """Defaulted to 1, the reduced dim gives each output element one input element: the node conforms on an input
    that cannot show an error, which its note and the result say."""
    status, out, err = run_cli(capsys, "conform", str(dynamic_onnx), "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["inputs"][0]["shape"] == [1, 1] and doc["inputs"][0]["defaulted_dims"] == [0, 1]
    (note,) = doc["nodes"][0]["notes"]
    assert note.startswith("it conforms on an input that cannot show an error: its input is one element"), note
    status, out, _ = run_cli(capsys, "conform", str(dynamic_onnx), "--shape", "x=[3,1]")
    assert status == 0
    assert (
        "mean: it conforms on an input that cannot show an error: each output element reduces one input element "
        "(axes [1] of input shape [3, 1])" in out
    ), out
    assert out.rstrip().endswith("result: every node conforms, but one on an input that cannot show an error (see "
                                 "its note)"), out  # fmt: skip
    status, out, _ = run_cli(capsys, "conform", str(dynamic_onnx), "--shape", "x=[3,5]")
    assert status == 0 and "cannot show an error" not in out and out.rstrip().endswith("every node conforms"), out


def test_a_shape_for_no_input_names_the_inputs_not_the_option_given(
    capsys: pytest.CaptureFixture[str], dynamic_onnx: Path
) -> None:
    """A name that matches no input was told to be given "with --shape NAME=SHAPE", as it just was."""
    status, out, err = run_cli(capsys, "conform", str(dynamic_onnx), "--shape", "nope[1]")
    assert status == 2 and out == ""
    assert "'nope' names no model input (inputs: x)" in err and "give it with" not in err


def test_a_node_whose_every_output_is_nan_conforms_on_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """ReduceLogSum of negative rows: ONNX and OpenVINO both give log(<0), NaN, for every output element, and NaN
    matched NaN: the node conformed, with no note, though a kernel that adds half the row gives the same."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    node = helper.make_node("ReduceLogSum", ["x", "axes"], ["y"], name="logsum", keepdims=0)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [axes]),
                              opset_imports=[helper.make_opsetid("", 18)])  # fmt: skip
    onnx.save(model, tmp_path / "logsum.onnx")
    np.save(tmp_path / "x.npy", -np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    status, out, err = run_cli(capsys, "conform", str(tmp_path / "logsum.onnx"), "--input", f"x={tmp_path / 'x.npy'}",
                               "--format", "json")  # fmt: skip
    assert status == 0, err
    (found,) = json.loads(out)["nodes"]
    assert found["nan"] == {"reference": 3, "candidate": 3}, found
    assert any("cannot show an error: none of the 3 output elements" in note for note in found["notes"]), found


def test_a_reduction_of_a_scalar_conforms_on_one_element(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ONNX's ReduceSum of a scalar (OpenVINO reduces it over empty axes): one element shows no error, as an audit's
    row of it says (not established); conform passed it with no note, and so did run the converted layer."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("s", TensorProto.FLOAT, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("ReduceSum", ["s"], ["y"], keepdims=1)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, tmp_path / "scalar.onnx")
    status, out, err = run_cli(capsys, "conform", str(tmp_path / "scalar.onnx"), "--save-ir", str(tmp_path / "ir"),
                               "--format", "json")  # fmt: skip
    assert status == 0, err
    (found,) = json.loads(out)["nodes"]
    assert any("cannot show an error: its input is one element" in note for note in found["notes"]), found
    status, out, err = run_cli(capsys, "run", str(tmp_path / "ir" / "scalar.xml"), "--layer", "y", "--format", "json")
    assert status == 0, err
    assert any("cannot show an error: its input is one element" in note for note in json.loads(out)["notes"]), out
