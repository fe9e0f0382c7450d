"""A model whose weights are external data: conform leaves them on disk (OpenVINO reads them itself) and
converts only the initializers the checked nodes read; a missing data file is refused precisely."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.conform import Work, conform_model
from ovreduce.errors import InputError
from tests.cli.inprocess import run_cli

from . import onnx_models


def _model(folder: Path) -> Path:
    """``y = ReduceMean(x @ w, axes=[-1])`` with ``w`` (64x64) and ``axes`` both saved as external data."""
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w"),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
        helper.make_node("ReduceMean", ["xw", "axes"], ["y"], name="rm"),
    ]
    graph = helper.make_graph(
        nodes, "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])], initializers,
    )  # fmt: skip
    model = onnx_models._finish(graph, 18)
    path = folder / "external.onnx"
    onnx.save(model, str(path), save_as_external_data=True, location="external.data", size_threshold=0)
    return path


def test_only_the_initializers_the_nodes_read_are_converted(tmp_path: Path) -> None:
    path = _model(tmp_path)
    stored = onnx.load(str(path), load_external_data=False)
    assert all(t.data_location == TensorProto.EXTERNAL for t in stored.graph.initializer)
    work = Work()
    doc = conform_model(str(path), work=work).to_json()
    assert doc["ok"], doc
    [node] = doc["nodes"]
    assert (node["node"], node["status"]) == ("rm", "ok")
    assert work.initializers_read == 1  # axes; the 64x64 weight stays on disk


def test_a_missing_data_file_is_refused(tmp_path: Path) -> None:
    path = _model(tmp_path)
    (tmp_path / "external.data").unlink()
    with pytest.raises(InputError, match=r"initializer 'w' keeps its data in .*external\.data', which does not exist"):
        conform_model(str(path))


def test_model_bytes_cannot_reach_external_data(tmp_path: Path) -> None:
    """The advice is one an upload can follow too: the data saved inside the model, which then conforms."""
    path = _model(tmp_path)
    with pytest.raises(
        InputError,
        match=r"which a model given as bytes \(an upload\) cannot reach: save the model with "
        r"its data inside \(onnx.save_model\(model, 'model.onnx', save_as_external_data=False\)\)",
    ):
        conform_model(path.read_bytes())
    onnx = pytest.importorskip("onnx")
    inside = tmp_path / "inside.onnx"
    onnx.save_model(onnx.load(str(path)), str(inside), save_as_external_data=False)
    assert conform_model(inside.read_bytes()).ok


@pytest.mark.parametrize("where", ["../outside.data", "absolute", "link"])
def test_external_data_outside_the_models_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """The data file exists, but outside the model's folder: refused (exit 2) before OpenVINO reads it."""
    folder = tmp_path / "model"
    folder.mkdir()
    path = _model(folder)
    outside = tmp_path / "outside.data"
    (folder / "external.data").rename(outside)
    location = {"../outside.data": "../outside.data", "absolute": str(outside), "link": "external.data"}[where]
    if where == "link":
        (folder / "external.data").symlink_to(outside)
    proto = onnx.load(str(path), load_external_data=False)
    for tensor in proto.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    onnx.save(proto, str(path))
    with pytest.raises(InputError, match="outside the model's folder"):
        conform_model(str(path))
    status, _, err = run_cli(capsys, "conform", str(path))
    assert status == 2 and "outside the model's folder" in err, err


@pytest.mark.parametrize(("entry", "message"), [
    (("offset", "abc"), "at offset 'abc', which is not a count of bytes"),
    (("offset", "16385"), "which holds 16392 bytes; offset 16385 and length 16384 lie outside it"),
])  # fmt: skip
def test_external_data_offsets_are_counts_inside_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: tuple[str, str], message: str
) -> None:
    """onnx would raise its own ValueError on a non-numeric offset (an internal error); a range outside the file
    is said before OpenVINO reads it."""
    path = _model(tmp_path)
    proto = onnx.load(str(path), load_external_data=False)
    weight = next(t for t in proto.graph.initializer if t.name == "w")
    for item in weight.external_data:
        if item.key == entry[0]:
            item.value = entry[1]
    onnx.save(proto, str(path))
    status, _, err = run_cli(capsys, "conform", str(path))
    assert status == 2 and "initializer 'w' keeps its data in 'external.data'" in err and message in err, err


def test_data_other_than_the_dims_need_is_the_models_defect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A weight whose external length, or inline raw data, is not what its dims need: OpenVINO's conversion refuses
    it ("does not match the byte size"), which conform reported as a conversion that does not conform (exit 1)."""
    path = _model(tmp_path)
    proto = onnx.load(str(path), load_external_data=False)
    weight = next(t for t in proto.graph.initializer if t.name == "w")
    for item in weight.external_data:
        if item.key == "length":
            item.value = "16000"
    onnx.save(proto, str(path))
    status, _, err = run_cli(capsys, "conform", str(path))
    assert status == 2 and "16000 bytes from offset 0 (by its length), where its dims [64, 64] of FLOAT need 16384" \
        in err, err  # fmt: skip
    (tmp_path / "inline").mkdir()
    inline = onnx.load(str(_model(tmp_path / "inline")))  # the data read into the model
    weight = next(t for t in inline.graph.initializer if t.name == "w")
    weight.raw_data = bytes(16)
    with pytest.raises(InputError, match=r"'w' holds 16 bytes of data, where its dims \[64, 64\] need 16384"):
        conform_model(inline.SerializeToString())


def _tensor(data_type: int, dims: list[int], **fields: list[int] | list[float]) -> TensorProto:
    tensor = TensorProto(name="w", data_type=data_type, dims=dims)
    for name, values in fields.items():
        getattr(tensor, name).extend(values)
    return tensor


_SEGMENT = _tensor(TensorProto.FLOAT, [2, 3], float_data=[1.0] * 6)
_SEGMENT.segment.begin, _SEGMENT.segment.end = 0, 6


@pytest.mark.parametrize(
    ("weight", "said"),
    [
        (_tensor(TensorProto.FLOAT, [1 << 40, 1 << 30]), "Tensor dimension product overflow"),
        (_tensor(TensorProto.FLOAT, [2, 3]), "should contain one and only one value field"),
        (_tensor(TensorProto.FLOAT, [2, 3], float_data=[1.0] * 5), "float_data size (5) is too small"),
        (_tensor(TensorProto.FLOAT, [2, 3], float_data=[1.0] * 7), "cannot reshape array of size 7 into shape (2,3)"),
        (_tensor(TensorProto.FLOAT16, [2, 3], int32_data=[0] * 7), "cannot reshape array of size 7 into shape (2,3)"),
        (_tensor(TensorProto.INT4, [2, 3], int32_data=[0x11]), "Packed 4-bit data (1 bytes, 2 elements unpacked)"),
        (_SEGMENT, "keeps its data in a segment, which neither onnx nor OpenVINO reads"),
    ],
    ids=[
        "no-data-2^70",
        "no-data",
        "too-few-values",
        "too-many-values",
        "too-many-f16",
        "int4-one-per-int32",
        "segment",
    ],
)
def test_values_other_than_the_dims_need_are_the_models_defect(tmp_path: Path, weight: TensorProto, said: str) -> None:
    """An initializer whose values are in a typed field, or nowhere, in another count than its dims need (a 4-bit type
    takes two in each int32, as onnx writes them), or kept in a segment. Read from bytes (an upload), OpenVINO took
    2^70 elements of no data for a scalar, and every node "conformed"; read from its file, the same model was a
    conversion that does not conform, and with dims [2, 3] and no data the reverse."""
    nodes = [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("ReduceSum", ["s"], ["y"], keepdims=0)]
    element = weight.data_type if weight.data_type != TensorProto.INT4 else TensorProto.FLOAT
    if element != weight.data_type:  # (an Add of int4 is no model: a Cast first)
        nodes.insert(0, helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT))
        nodes[1].input[1] = "wf"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", element, [2, 3])],
                              [helper.make_tensor_value_info("y", element, None)], [weight])  # fmt: skip
    model = onnx_models._finish(graph, 21, check=False)  # (onnx's checker refuses it)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    for source in (str(path), model.SerializeToString()):
        with pytest.raises(InputError, match=r"not a readable ONNX model: initializer 'w'.*" + re.escape(said)):
            conform_model(source)
    # the same model with the values its dims take conforms, from its file and from bytes
    fixed = model.graph.initializer[0]
    for name in ("int32_data", "float_data", "dims", "segment"):
        fixed.ClearField(name)
    fixed.dims.extend([2, 3])
    if fixed.data_type == TensorProto.FLOAT:
        fixed.float_data.extend([1.0] * 6)
    else:  # an int4 1 in each half of 3 int32, an f16 1.0 in each of 6
        fixed.int32_data.extend([0x11] * 3 if fixed.data_type == TensorProto.INT4 else [0x3C00] * 6)
    onnx.save(model, str(path))
    for source in (str(path), model.SerializeToString()):
        assert conform_model(source).to_json()["ok"], source


def constant_with_external_data(location: str) -> onnx.ModelProto:
    """``ReduceSum(Reshape(x, c))`` where the Constant ``c`` keeps its 4 int64 in ``location``: OpenVINO resolves an
    upload's external data against its working directory, so any file there would shape the model (and show in
    its error message)."""
    value = TensorProto(name="cv", data_type=TensorProto.INT64, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, entry in (("location", location), ("offset", "0"), ("length", "32")):
        value.external_data.add(key=key, value=entry)
    nodes = [helper.make_node("Constant", [], ["c"], value=value), helper.make_node("Reshape", ["x", "c"], ["r"]),
             helper.make_node("ReduceSum", ["r"], ["y"], keepdims=1)]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_constants_external_data_is_checked_as_an_initializers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"INFO: a file in the working dir.")
    monkeypatch.chdir(tmp_path)
    model = constant_with_external_data("secret.bin").SerializeToString()
    with pytest.raises(InputError, match="attribute 'value' of node 'Constant' keeps its data in the external file"):
        conform_model(model)  # bytes, as an upload: never resolved against the working directory
    folder = tmp_path / "model"
    folder.mkdir()
    for location in ("../secret.bin", str(secret)):
        path = folder / "m.onnx"
        path.write_bytes(constant_with_external_data(location).SerializeToString())
        status, _, err = run_cli(capsys, "conform", str(path))
        assert status == 2 and "attribute 'value' of node 'Constant'" in err and "outside the model's folder" in err


def test_what_a_conformance_check_keeps_at_once_is_budgeted() -> None:
    """A 1 KB model whose 20 reductions each read a 1,000-element tensor: each tensor within the limit, together
    beyond 16 times it (a hostile upload of 100 such nodes over 4 million elements reached 5 GB in a worker)."""
    from ovreduce.errors import LimitExceededError

    nodes = []
    for i in range(20):
        nodes += [helper.make_node("Mul", ["x", f"c{i}"], [f"m{i}"]),
                  helper.make_node("ReduceSum", [f"m{i}"], [f"y{i}"], keepdims=1)]  # fmt: skip
    scales = [numpy_helper.from_array(np.array([i + 1], np.float32), f"c{i}") for i in range(20)]
    graph = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000])],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(20)],
                              scales)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    with pytest.raises(
        LimitExceededError,
        match=r"the conformance check would keep .* more than 16 times the limit .* \(OVREDUCE_MAX_ELEMENTS\)",
    ):
        conform_model(model, max_elements=1000)
    assert conform_model(model, max_elements=4000).ok


def test_a_tensor_sized_by_input_values_is_held_to_the_budget_once_computed() -> None:
    """An Expand to a shape computed from the input's values cannot be sized before the run: once computed, over the
    limit, it is refused naming it (the comparison would read it again in float64)."""
    from ovreduce.errors import LimitExceededError

    model = onnx_models.expand_by_values("Add", 100.0).SerializeToString()
    with pytest.raises(
        LimitExceededError, match=r"in the conformance check, the output 0 of .* elements once computed"
    ):
        conform_model(model, max_elements=1000)
    assert conform_model(model, max_elements=1 << 20).ok


def test_the_tensors_of_a_loops_body_are_held_to_the_budget_before_running() -> None:
    """An ONNX Loop (one iteration) whose body Expands the [1] input to [300,300]: refused before compiling, naming
    the body, as the same Expand outside a body is (it ran, past the limit)."""
    from ovreduce.errors import LimitExceededError

    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Expand", ["x", "to"], ["big"], name="blow_up"),
         helper.make_node("ReduceSum", ["big", "all"], ["s"], keepdims=0),
         helper.make_node("Reshape", ["s", "one"], ["s1"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s1", TensorProto.FLOAT, [1])],
    )  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "go"], ["sums"], body=body, name="loop"),
         helper.make_node("ReduceMean", ["sums"], ["y"], keepdims=1)],
        "looped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array(1, np.int64), "trips"), numpy_helper.from_array(np.array(True), "go"),
         numpy_helper.from_array(np.array([300, 300], np.int64), "to"),
         numpy_helper.from_array(np.array([0, 1], np.int64), "all"),
         numpy_helper.from_array(np.array([1], np.int64), "one")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    with pytest.raises(
        LimitExceededError, match=r"in the body of Loop '.*', the output 0 of .* would have 90000 elements"
    ):
        conform_model(model, max_elements=4096)
    assert conform_model(model, max_elements=1 << 17).error is None
