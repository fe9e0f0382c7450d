"""``POST /v1/models/{id}/audit`` and ``POST /v1/conform``: the CLI's documents over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from fastapi.testclient import TestClient
from onnx import TensorProto, helper, numpy_helper

from tests.cli.inprocess import run_cli
from tests.conform import onnx_models
from tests.conform.test_external_data import constant_with_external_data

from .conftest import SAMPLES, assert_problem, files, sample


def _stored(client: TestClient, name: str) -> str:
    response = client.post("/v1/models", files=files(*sample(name), name=f"{name}.xml"))
    assert response.status_code in (200, 201), response.text
    mid: str = response.json()["id"]
    return mid


def _cli_json(*args: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-m", "ovreduce.cli", *args, "--format", "json"], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def _comparable(doc: dict[str, object]) -> dict[str, object]:
    """A document without what differs between runs (timings) and hosts (paths, ids)."""
    drop = {"seconds", "model", "id", "saved_ir"}
    clean = {k: v for k, v in doc.items() if k not in drop}
    for key in ("layers", "nodes"):
        entries = clean.get(key)
        if isinstance(entries, list):
            clean[key] = [{k: v for k, v in e.items() if k != "seconds"} for e in entries]
    return clean


def test_audit_is_the_cli_document(client: TestClient) -> None:
    mid = _stored(client, "rmsnorm")
    response = client.post(f"/v1/models/{mid}/audit", json={"precision": "f32", "seed": 3})
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["schema"] == "ovreduce.audit/v1"
    assert doc["ok"] is True
    assert doc["model"] == "rmsnorm.xml"  # the upload's name, never the store's path
    assert [entry["layer_name"] for entry in doc["layers"]] == ["rmsnorm/variance"]
    assert "store" not in response.text
    cli = _cli_json("audit", str(SAMPLES / "rmsnorm.xml"), "--precision", "f32", "--seed", "3")
    assert _comparable(doc) == _comparable(cli)


def test_audit_with_given_inputs(client: TestClient) -> None:
    mid = _stored(client, "rmsnorm")
    data = np.linspace(-3, 3, 2 * 64, dtype=np.float32).reshape(1, 2, 64)
    tensor = {"name": "hidden_states", "shape": [1, 2, 64], "datatype": "FP32", "data": data.ravel().tolist()}
    doc = client.post(f"/v1/models/{mid}/audit", json={"inputs": [tensor], "precision": "f32"}).json()
    assert doc["inputs"] == [
        {"name": "hidden_states", "shape": [1, 2, 64], "element_type": "f32", "origin": "given", "defaulted_dims": []}
    ]
    assert doc["layers"][0]["input_shape"] == [1, 2, 64]


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/v1/models/" + "0" * 64 + "/audit", {}, 404, "not_found"),
        ("/v1/models/{mid}/audit", {"device": "NPU"}, 503, "backend.device"),
        ("/v1/models/{mid}/audit", {"precision": "f64"}, 400, "request.invalid"),
        ("/v1/models/{mid}/audit", {"precision": "f32", "fail_on_drift": 1e-7}, 400, "input"),
        ("/v1/models/{mid}/audit", {"inputs": [{"name": "nope", "shape": [1], "datatype": "FP32", "data": [1.0]}]},
         400, "input"),
        # OpenVINO's GPU plugin never runs bf16, however the device names the GPU
        ("/v1/models/{mid}/audit", {"target": "bf16", "device": "AUTO:GPU"}, 400, "input"),
        ("/v1/models/{mid}/audit", {"target": "bf16", "device": "HETERO:GPU,CPU"}, 400, "input"),
    ],
    ids=["unknown-model", "unknown-device", "bad-precision", "drift-of-f32-on-the-cpu", "unknown-input",
         "bf16-auto-gpu", "bf16-hetero-gpu"],
)  # fmt: skip
def test_audit_errors(client: TestClient, path: str, body: dict[str, object], status: int, code: str) -> None:
    mid = _stored(client, "rmsnorm")
    assert_problem(client.post(path.format(mid=mid), json=body), status, code)


def _onnx_reduce_mean(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0, name="rm")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [axes]),
                              opset_imports=[helper.make_opsetid("", 18)])  # fmt: skip
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _onnx_qlinear_u8(path: Path) -> Path:
    """QLinearReduceMean that OpenVINO's frontend converts with truncation and wrap-around (see tests/conform)."""
    q = helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 2])
    o = helper.make_tensor_value_info("o", TensorProto.UINT8, None)
    node = helper.make_node("QLinearReduceMean", ["q", "s", "zp", "rs", "rzp"], ["o"], axes=[1], keepdims=1,
                            domain="com.microsoft", name="qrm")  # fmt: skip
    inits = [
        numpy_helper.from_array(np.array(0.1, np.float32), "s"),
        numpy_helper.from_array(np.array(250, np.uint8), "zp"),
        numpy_helper.from_array(np.array(0.05, np.float32), "rs"),
        numpy_helper.from_array(np.array(3, np.uint8), "rzp"),
    ]
    model = helper.make_model(
        helper.make_graph([node], "g", [q], [o], inits),
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
    )
    onnx.save(model, str(path))
    return path


def test_conform_is_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    path = _onnx_reduce_mean(tmp_path / "rm.onnx")
    response = client.post("/v1/conform", files={"onnx": ("rm.onnx", path.read_bytes())}, params={"seed": 5})
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["schema"] == "ovreduce.conform/v1"
    assert doc["ok"] is True
    assert doc["model"] == "rm.onnx"
    assert [(n["node"], n["op_type"], n["status"]) for n in doc["nodes"]] == [("rm", "ReduceMean", "ok")]
    assert "ovreduce-conform." not in response.text  # the temporary folder is not leaked
    assert _comparable(doc) == _comparable(_cli_json("conform", str(path), "--seed", "5"))


def test_conform_takes_the_shape_of_an_input_of_dynamic_rank(client: TestClient) -> None:
    """Without a shape, no input can be generated for it, and the answer says to give one: the route takes it."""
    graph = helper.make_graph([helper.make_node("ReduceSum", ["xd", "axes"], ["y"], name="rs")], "g",
                              [helper.make_tensor_value_info("xd", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([1], np.int64), "axes")])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    files = {"onnx": ("m.onnx", model.SerializeToString())}
    problem = assert_problem(client.post("/v1/conform", files=files), 400, "input")
    assert "'xd' has a dynamic rank; give its shape" in problem["detail"]
    for given in ("xd=2,3", "xd[2,3]"):  # as conform --shape takes it
        doc = client.post("/v1/conform", files=files, params={"shape": given}).json()
        assert doc["ok"] is True and doc["inputs"][0]["shape"] == [2, 3], doc
    for bad, said in (("2,3", "shape '2,3': expected NAME=SHAPE"), ("xd=[a]", "cannot parse dimension 'a'"),
                      ("xd=[2,3],xd=[4]", "'xd' is given a shape twice")):  # fmt: skip
        problem = assert_problem(client.post("/v1/conform", files=files, params={"shape": bad}), 400, "input")
        assert said in problem["detail"], problem


def test_conform_reports_a_disagreement(client: TestClient, tmp_path: Path) -> None:
    path = _onnx_qlinear_u8(tmp_path / "q.onnx")
    doc = client.post("/v1/conform", files={"onnx": ("q.onnx", path.read_bytes())}).json()
    assert doc["ok"] is False
    node = doc["nodes"][0]
    assert node["op_type"] == "QLinearReduceMean"
    assert node["status"] == "disagree"
    assert node["exact"] is True
    assert node["dequantized_max_abs_diff"] > 0


def test_conform_refuses_what_is_not_onnx(client: TestClient) -> None:
    problem = assert_problem(client.post("/v1/conform", files={"onnx": ("x.onnx", b"\x00\x01garbage")}), 400, "input")
    assert "not a readable ONNX model" in problem["detail"]
    assert_problem(client.post("/v1/conform", files={"onnx": ("x.onnx", b"")}), 400, "input")


def test_conform_refuses_a_malformed_model_as_a_bad_request_not_an_internal_error(client: TestClient) -> None:
    """A name that is not UTF-8 text was a 500 (a document of bytes, or OpenVINO's names not decoded); a Mean with no
    inputs killed the worker OpenVINO's frontend read it in (503 "retry once"); a ReduceMax with no output, or an
    attribute that refers to a function outside one, was a 500 too."""
    mean = helper.make_node("ReduceMean", ["x"], ["y"], name="meanQ", axes=[1])
    x, y = (
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
    )

    def model(*nodes: onnx.NodeProto) -> bytes:
        graph = helper.make_graph([mean, *nodes], "g", [x], [y])
        return bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())

    referring = onnx.load_from_string(model())
    referring.graph.node[0].attribute[0].ref_attr_name = "foo"
    for data, said in [
        (model().replace(b"meanQ", b"mean\xff"), "graph.node[0].name is not UTF-8 text: b'mean\\xff'"),
        (model(helper.make_node("Mean", [], ["t"], name="avg")), "node 'avg' (Mean) has no inputs; ONNX's Mean (opset "
         "13) takes 1 or more"),
        (model(helper.make_node("ReduceMax", ["x"], [], axes=[1])), "the ReduceMax node at index 1 has no outputs"),
        (referring.SerializeToString(), "attribute 'axes' of node 'meanQ' (ReduceMean) refers to the attribute 'foo'"),
    ]:  # fmt: skip
        problem = assert_problem(client.post("/v1/conform", files={"onnx": ("m.onnx", data)}), 400, "input")
        assert said in problem["detail"], problem


def test_conform_reads_no_file_of_the_server(client: TestClient) -> None:
    """A Constant whose value is external data naming a file of the server's working directory (its log): the bytes
    of that file shaped the model, and its error message showed them."""
    model = constant_with_external_data("README.md").SerializeToString()  # the tests run in the repository
    problem = assert_problem(client.post("/v1/conform", files={"onnx": ("leak.onnx", model)}), 400, "input")
    assert "attribute 'value' of node 'Constant' keeps its data in the external file 'README.md'" in problem["detail"]


def test_an_input_of_rank_65_is_a_bad_request_in_the_cli_and_the_api(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An input of more dimensions than NumPy makes: the CLI exits 2 (bad input, not "internal error") and
    the service answers 400 saying which input and why."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1] * 65)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"])], "rank65", [x], [y])
    path = tmp_path / "rank65.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    status, _, err = run_cli(capsys, "conform", str(path))
    assert status == 2 and "rank 65" in err, err
    doc = assert_problem(client.post("/v1/conform", files={"onnx": ("rank65.onnx", path.read_bytes())}), 400, "input")
    assert "input 'x' has rank 65" in doc["detail"] and "64 dimensions" in doc["detail"]


def _broadcast_ir(tmp_path: Path) -> tuple[bytes, bytes]:
    """``ReduceSum(Broadcast(x, target))``: the tensor's shape is the values of the input ``target``."""
    import openvino as ov
    import openvino.opset13 as ops

    target = ops.parameter([2], ov.Type.i64, name="target")
    x = ops.parameter([1], ov.Type.f32, name="x")
    reduced = ops.reduce_sum(ops.broadcast(x, target), ops.constant(np.array([0, 1], np.int64)), keep_dims=False)
    ov.save_model(ov.Model([reduced], [x, target], "broadcast"), str(tmp_path / "b.xml"), compress_to_fp16=False)
    return (tmp_path / "b.xml").read_bytes(), (tmp_path / "b.bin").read_bytes()


def _audit_broadcast(client: TestClient, mid: str, dims: list[int]) -> object:
    inputs = [{"name": "target", "shape": [2], "datatype": "INT64", "data": dims},
              {"name": "x", "shape": [1], "datatype": "FP32", "data": [1.0]}]  # fmt: skip
    return client.post(f"/v1/models/{mid}/audit", json={"inputs": inputs, "precision": "f32"})


def test_an_audit_whose_tensors_outgrow_a_worker_is_413_and_the_worker_replaced(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """A tensor whose shape is an input's values cannot be sized before it is computed: 1.3 GB of it stops at the
    worker's memory limit (413 naming the tensor and the setting), not at the machine's, and the next audit runs
    on a fresh worker."""
    client = make_client(max_worker_bytes=512 << 20, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    mid = client.post("/v1/models", files=files(*_broadcast_ir(tmp_path))).json()["id"]
    (pid,) = isolated.pids()
    doc = assert_problem(_audit_broadcast(client, mid, [8192, 40000]), 413, "limit.memory")  # type: ignore[arg-type]
    assert "Broadcast" in doc["detail"] and "OVREDUCE_MAX_WORKER_BYTES" in doc["detail"], doc["detail"]
    assert isolated.pids() != [pid]
    small = _audit_broadcast(client, mid, [3, 5])
    assert small.status_code == 200, small.text  # type: ignore[attr-defined]
    assert small.json()["layers"][0]["input_shape"] == [3, 5]  # type: ignore[attr-defined]


def test_a_conform_whose_tensors_outgrow_a_worker_is_413(make_client: Callable[..., TestClient]) -> None:
    """The same through ONNX: an Expand whose shape comes from the input's values (tens of thousands squared)."""
    model = onnx_models.expand_by_values("Mul", 20000.0)
    client = make_client(max_worker_bytes=512 << 20, concurrency=1)
    response = client.post("/v1/conform", files={"onnx": ("expand.onnx", model.SerializeToString())})
    doc = assert_problem(response, 413, "limit.memory")
    assert "could not allocate" in doc["detail"] and "Broadcast" in doc["detail"], doc["detail"]
