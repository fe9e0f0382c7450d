"""KServe v2 / Open Inference Protocol beside /v1: ``tritonclient[http]`` against a real server process, and the
protocol's error answers, limits and options through the TestClient."""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest
import tritonclient.http as triton
from fastapi.testclient import TestClient
from tritonclient.utils import InferenceServerException, triton_to_np_dtype

from api.config import Settings
from api.kserve import MODEL_NAME, model_name
from ovreduce.errors import InputError, LimitExceededError
from ovreduce.reference.evaluate import reduce
from tests.ir import subgraphs
from tests.test_run import CPU_CANNOT_COMPILE

from .conftest import SAMPLES, files, sample
from .test_server import serve

pytestmark = pytest.mark.timeout(120)

_SAMPLES = ("all_reductions", "rmsnorm", "runtime_axes")
_RUNTIME_AXES = {1: [1], 2: [0, 2]}  # axes given to a layer that takes them at run time, by their count


def _upload(post: Callable[..., Any], xml: bytes, bin_data: bytes | None, name: str) -> str:
    response = post("/v1/models", files=files(xml, bin_data, name))
    assert response.status_code in (200, 201), response.text  # 200: already stored
    mid: str = response.json()["id"]
    return mid


def _data(meta: dict[str, Any], rng: np.random.Generator) -> npt.NDArray[Any]:
    spec = meta["inputs"][0]
    shape = [3 if d < 0 else d for d in spec["shape"]]
    dtype = triton_to_np_dtype(spec["datatype"])
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    return rng.standard_normal(shape).astype(dtype)


def _reference(meta: dict[str, Any], data: npt.NDArray[Any], axes: npt.NDArray[Any] | None) -> npt.NDArray[Any]:
    params = meta["parameters"]
    if axes is None:
        axes = np.array([int(a) for a in params["axes"].split(",") if a], dtype=np.int64)
    return np.asarray(reduce(params["type"], data, axes, params["keep_dims"]))


# -- tritonclient against a real server -------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A server with the samples and a Loop model stored; its URL and each stored model's id by sample."""
    root = tmp_path_factory.mktemp("kserve")
    loop = subgraphs.save(subgraphs.loop_model(), root, "loop")
    uploads = {name: sample(name) for name in _SAMPLES}
    uploads["loop"] = (loop.read_bytes(), loop.with_suffix(".bin").read_bytes())
    with serve(root / "store", settings={"run_timeout_s": 60}) as (url, _), httpx.Client(base_url=url) as http:
        ids = {name: _upload(http.post, xml, bin_data, f"{name}.xml") for name, (xml, bin_data) in uploads.items()}
        yield url, ids


def test_tritonclient_sees_a_live_server(server: tuple[str, dict[str, str]]) -> None:
    client = triton.InferenceServerClient(server[0].removeprefix("http://"))
    assert client.is_server_live()
    assert client.is_server_ready()
    meta = client.get_server_metadata()
    assert meta["name"] == "ovreduce" and "binary_tensor_data" in meta["extensions"]


def test_tritonclient_infers_every_reduction_like_the_reference(server: tuple[str, dict[str, str]]) -> None:
    url, ids = server
    client = triton.InferenceServerClient(url.removeprefix("http://"))
    index = client.get_model_repository_index()
    names = sorted(entry["name"] for entry in index)
    assert all(entry["state"] == "READY" and entry["version"] == "1" for entry in index), index
    assert {MODEL_NAME.fullmatch(n)["id"] for n in names} == set(ids.values())  # type: ignore[index]
    assert len(names) == 9 + 1 + 3 + 1  # all_reductions, rmsnorm, runtime_axes, the Loop body's ReduceMean
    body_layers = [n for n in names if "-body-" in n]
    assert len(body_layers) == 1 and body_layers[0].startswith(ids["loop"])
    rng = np.random.default_rng(7)
    for name in names:
        meta = client.get_model_metadata(name)
        assert meta["platform"] == "ovreduce" and meta["versions"] == ["1"], meta
        assert client.is_model_ready(name) and client.is_model_ready(name, "1")
        data = _data(meta, rng)
        axes = None
        if len(meta["inputs"]) == 2:  # runtime axes: the second input
            axes_meta = meta["inputs"][1]
            axes = np.array(_RUNTIME_AXES[axes_meta["shape"][0]], dtype=triton_to_np_dtype(axes_meta["datatype"]))
        expected = _reference(meta, data, axes)
        for binary in (True, False):
            inputs = []
            for spec, array in zip(meta["inputs"], [data] if axes is None else [data, axes], strict=True):
                tensor = triton.InferInput(spec["name"], list(array.shape), spec["datatype"])
                tensor.set_data_from_numpy(array, binary_data=binary)
                inputs.append(tensor)
            outputs = [triton.InferRequestedOutput("output", binary_data=binary)]
            for backend in ("numpy", "openvino"):
                if backend == "openvino" and meta["parameters"]["layer_name"] in CPU_CANNOT_COMPILE:
                    with pytest.raises(
                        InferenceServerException, match=CPU_CANNOT_COMPILE[meta["parameters"]["layer_name"]]
                    ):
                        client.infer(name, inputs, outputs=outputs, parameters={"backend": backend})
                    continue
                result = client.infer(name, inputs, outputs=outputs, request_id=f"{name}-{binary}",
                                      parameters={"backend": backend})  # fmt: skip
                got = result.as_numpy("output")
                response = result.get_response()
                assert response["id"] == f"{name}-{binary}" and response["model_name"] == name
                assert got is not None and got.shape == expected.shape, (name, got, expected)
                params = response["parameters"]
                assert params["backend"] == backend
                if backend == "numpy":
                    np.testing.assert_array_equal(got, expected, err_msg=name)
                else:
                    assert params["agree"] is True and params["reference"] == "numpy", params
                    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=name)


def test_tritonclient_reports_an_unknown_model(server: tuple[str, dict[str, str]]) -> None:
    url, ids = server
    client = triton.InferenceServerClient(url.removeprefix("http://"))
    with pytest.raises(InferenceServerException) as caught:
        client.get_model_metadata("resnet50")
    assert caught.value.status() == "404" and "unknown model" in str(caught.value.message())
    assert not client.is_model_ready(f"{ids['rmsnorm']}.999")
    with pytest.raises(InferenceServerException, match="no route for GET /v2/models/x/config"):
        client.get_model_config("x")
    for model in ("", "x"):  # statistics, of the server (GET /v2/models/stats: no model named 'stats') or of a model
        with pytest.raises(InferenceServerException, match=r"no route for GET /v2/models/(x/)?stats") as caught:
            client.get_inference_statistics(model)
        assert caught.value.status() == "404" and "unknown model" not in str(caught.value.message())
    tensor = triton.InferInput("data", [1], "FP32")
    tensor.set_data_from_numpy(np.zeros([1], np.float32))
    with pytest.raises(InferenceServerException, match="unknown model") as caught:
        client.infer(f"{ids['rmsnorm']}.999", [tensor])
    assert caught.value.status() == "404"


# -- the protocol through the TestClient -------------------------------------------------------------------
@pytest.fixture
def rmsnorm(client: TestClient) -> str:
    """The v2 name of rmsnorm's one reduction (data [1,-1,64] FP32, ReduceMean over -1 with keep_dims)."""
    mid = _upload(client.post, *sample("rmsnorm"), "rmsnorm.xml")
    [entry] = client.post("/v2/repository/index").json()
    assert entry == {"name": model_name(mid, "5"), "version": "1", "state": "READY", "reason": ""}
    return str(entry["name"])


def _error(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json"), response.headers
    doc = response.json()
    assert list(doc) == ["error"] and isinstance(doc["error"], str), doc
    for word in words:
        assert word in doc["error"], doc
    return str(doc["error"])


def _binary_request(doc: dict[str, Any], *blobs: bytes) -> tuple[bytes, dict[str, str]]:
    head = json.dumps(doc).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head))}


def _data_input(shape: list[int], **parameters: Any) -> dict[str, Any]:
    return {"name": "data", "shape": shape, "datatype": "FP32", "parameters": parameters}


def test_readiness_says_why_openvino_cannot_serve(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """/v2/health/ready answered 200 when OpenVINO could not be loaded (it read the check's keys, not its values)."""
    monkeypatch.setattr("api.routes.v2._openvino", lambda: {"ok": False, "detail": "the runtime is gone"})
    _error(client.get("/v2/health/ready"), 503, "not ready: the runtime is gone")


def test_server_and_model_metadata(client: TestClient, rmsnorm: str) -> None:
    assert client.get("/v2/health/live").json() == {"live": True}
    assert client.get("/v2/health/ready").status_code == 200
    assert "binary_tensor_data" in client.get("/v2").json()["extensions"]
    meta = client.get(f"/v2/models/{rmsnorm}").json()
    assert meta["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [1, -1, 64]}]
    assert meta["outputs"] == [{"name": "output", "datatype": "FP32", "shape": [1, -1, 1]}]
    assert client.get(f"/v2/models/{rmsnorm}/versions/1").json() == meta
    assert client.get(f"/v2/models/{rmsnorm}/ready").json() == {"name": rmsnorm, "ready": True}
    assert client.get(f"/v2/models/{rmsnorm}/versions/1/ready").status_code == 200


def test_model_metadata_gives_the_bounds_a_minus_one_hides(client: TestClient) -> None:
    """KServe's -1 reads as any size; for a dim of a range (3..8) the metadata said -1 and gave the range nowhere, so a
    client that filled each -1 got 400. Its ``parameters.data_shape`` is the shape as ovreduce writes it, bounds
    included; a static or plainly dynamic shape needs none."""
    mid = _upload(client.post, *sample("dynamic"), "dynamic.xml")
    meta = client.get(f"/v2/models/{mid}.5").json()
    assert meta["inputs"][0]["shape"] == [-1, -1, 16, -1]
    assert meta["parameters"]["data_shape"] == "[?,3..8,16,1..]"
    shape = [int(d.split("..")[0] or 1) if d != "?" else 1 for d in meta["parameters"]["data_shape"][1:-1].split(",")]
    tensor = {"name": "data", "shape": shape, "datatype": "FP32", "data": [1.0] * int(np.prod(shape))}
    answer = client.post(f"/v2/models/{mid}.5/infer", json={"inputs": [tensor], "parameters": {"backend": "numpy"}})
    assert answer.status_code == 200, answer.text
    rmsnorm = _upload(client.post, *sample("rmsnorm"), "rmsnorm.xml")
    plain = client.get(f"/v2/models/{model_name(rmsnorm, '5')}").json()  # [1,?,64]: its -1 says it all
    assert plain["inputs"][0]["shape"] == [1, -1, 64] and "data_shape" not in plain["parameters"]


def test_errors_are_the_protocols_error_documents(client: TestClient, rmsnorm: str) -> None:
    mid = rmsnorm.split(".")[0]
    _error(client.get("/v2/models/resnet50"), 404, "unknown model", "<model id>.<layer ids path")
    _error(client.get(f"/v2/models/{mid}.12-then-110"), 404, "unknown model")
    _error(client.get(f"/v2/models/{'0' * 64}.5/ready"), 404)
    _error(client.get(f"/v2/models/{rmsnorm}/versions/2"), 404, "version")
    _error(client.post(f"/v2/models/{rmsnorm}/versions/2/infer", json={"inputs": []}), 404, "version")
    infer = f"/v2/models/{rmsnorm}/infer"
    _error(client.post(infer, content=b"{not json"), 400, "not valid JSON")
    _error(client.post(infer, json=[1]), 400, "JSON object")
    _error(client.post(infer, json={"inputs": "x"}), 400, "inputs")
    data = {"name": "data", "shape": [1, 2, 64], "datatype": "FP32", "data": [0.5] * 128}
    _error(client.post(infer, json={"inputs": [{**data, "datatype": "STRING"}]}), 400, "STRING")
    _error(client.post(infer, json={"inputs": [{**data, "datatype": "BYTES"}]}), 400, "BYTES")
    _error(client.post(infer, json={"inputs": [{**data, "datatype": "fp32"}]}), 400, "'fp32'", "upper case")
    _error(client.post(infer, json={"inputs": [{**data, "name": "x"}]}), 400, "'x' names no input")
    _error(client.post(infer, json={"inputs": [data, {**data, "name": "0"}]}), 400, "takes 1 input")
    _error(client.post(infer, json={"inputs": [{**data, "shape": [1, 2, 63]}]}), 400, "needs 126 values")
    _error(client.post(infer, json={"inputs": [{**data, "data": None}]}), 400, "neither data")
    _error(client.post(infer, json={"inputs": [data], "parameters": {"backend": "tf"}}), 400, "backend")
    _error(client.post(infer, json={"inputs": [data], "parameters": {"precision": "f64"}}), 400, "precision")
    _error(client.post(infer, json={"inputs": [data], "outputs": [{"name": "y"}]}), 400, "unexpected inference output")
    for where in ("inputs", "outputs"):  # the data would be neither read from nor written to the client's region
        region = {"shared_memory_region": "r", "shared_memory_byte_size": 4}
        tensors = {"inputs": [{**data, "parameters": region} if where == "inputs" else data]}
        if where == "outputs":
            tensors["outputs"] = [{"name": "output", "parameters": region}]
        _error(client.post(infer, json=tensors), 400, "shared memory is not supported")
    _error(client.post(infer, content=b"[" * 100_000 + b"]" * 100_000), 400, "nested too deeply")
    _error(client.post("/v2/repository/index", content=b"[" * 100_000 + b"]" * 100_000), 400)
    gzip = client.post(infer, json={"inputs": [data]}, headers={"Content-Encoding": "gzip"})
    _error(gzip, 415, "Content-Encoding")
    two = [("inference-header-content-length", "10"), ("inference-header-content-length", "0")]
    _error(client.post(infer, json={"inputs": [data]}, headers=two), 400, "more than one Inference-Header")
    # what no route serves, by path or by method, in the same form
    _error(client.get("/v2/models/x/stats"), 404, "no route for GET /v2/models/x/stats")
    for method in ("PUT", "DELETE", "PATCH", "XYZ"):
        response = client.request(method, infer)
        _error(response, 405, f"{method} is not allowed", "POST")
        assert response.headers["allow"] == "POST"


def test_bytes_sent_as_binary_data_are_judged_by_the_layer_as_json_bytes_are(client: TestClient, rmsnorm: str) -> None:
    """BYTES as binary data, in Triton's form (each element a 4-byte little-endian length, then its bytes: what
    tritonclient sends by default), for an FP32 input: the layer refuses them as it refuses the same strings in JSON,
    naming its port and the f32 it expects; a length that runs past the data is the data's error."""
    infer = f"/v2/models/{rmsnorm}/infer"
    strings = [str(i).encode() for i in range(128)]
    blob = b"".join(struct.pack("<I", len(text)) + text for text in strings)
    expected = "input 0 (data) holds BYTES (text) values but the layer expects f32; give it f32 values"
    texts = {"name": "data", "shape": [1, 2, 64], "datatype": "BYTES", "data": [t.decode() for t in strings]}
    _error(client.post(infer, json={"inputs": [texts]}), 400, expected)
    tensor = {**_data_input([1, 2, 64], binary_data_size=len(blob)), "datatype": "BYTES"}
    body, headers = _binary_request({"inputs": [tensor]}, blob)
    _error(client.post(infer, content=body, headers=headers), 400, expected)
    cut = blob[:-1]
    body, headers = _binary_request({"inputs": [{**tensor, "parameters": {"binary_data_size": len(cut)}}]}, cut)
    _error(client.post(infer, content=body, headers=headers), 400, "element 127", "past the end of its", "BYTES")


def test_binary_sizes_are_checked_against_shapes_before_allocation(
    client: TestClient, make_client: Callable[..., TestClient], rmsnorm: str
) -> None:
    infer = f"/v2/models/{rmsnorm}/infer"
    blob = np.ones([1, 2, 64], np.float32).tobytes()
    body, headers = _binary_request({"inputs": [_data_input([1, 2, 64], binary_data_size=len(blob))]}, blob)
    assert client.post(infer, content=body, headers=headers).status_code == 200
    _error(client.post(infer, content=body, headers={"Inference-Header-Content-Length": str(len(body) + 1)}), 400,
           "Inference-Header-Content-Length")  # fmt: skip
    _error(client.post(infer, content=body, headers={"Inference-Header-Content-Length": "-3"}), 400)
    for tensor in (blob, b"1" * len(blob)):  # bytes that end the JSON text, or go on as other JSON
        no_length = client.post(infer, content=body[: -len(blob)] + tensor)
        _error(no_length, 400, "not valid JSON", "must give the header's length in bytes in Inference-Header-Content")
    short, headers = _binary_request({"inputs": [_data_input([1, 3, 64], binary_data_size=len(blob))]}, blob)
    _error(client.post(infer, content=short, headers=headers), 400, "binary_data_size is 512 bytes", "needs 768")
    odd, headers = _binary_request({"inputs": [_data_input([1, 2, 64], binary_data_size=len(blob))]}, blob[:-4])
    _error(client.post(infer, content=odd, headers=headers), 400, "past the end")
    extra, headers = _binary_request({"inputs": [_data_input([1, 2, 64], binary_data_size=len(blob))]}, blob, b"xx")
    _error(client.post(infer, content=extra, headers=headers), 400, "2 bytes after")
    bad, headers = _binary_request({"inputs": [_data_input([1, 2, 64], binary_data_size=True)]}, blob)
    _error(client.post(infer, content=bad, headers=headers), 400, "binary_data_size")
    # 10^12 elements declared with a matching size and 8 bytes sent: refused by the element limit, nothing allocated
    huge = 10**12
    big, headers = _binary_request({"inputs": [_data_input([1, huge, 1], binary_data_size=huge * 4)]}, b"\0" * 8)
    _error(client.post(infer, content=big, headers=headers), 400, "OVREDUCE_MAX_ELEMENTS")
    small = make_client(max_elements=64)
    _upload(small.post, *sample("rmsnorm"), "rmsnorm.xml")
    _error(small.post(infer, json={"inputs": [{**_data_input([1, 2, 64]), "data": [0.0] * 128}]}), 400,
           "more than the limit of 64")  # fmt: skip
    tight = make_client(max_json_bytes=len(body) - 1)
    _upload(tight.post, *sample("rmsnorm"), "rmsnorm.xml")
    too_big = tight.post(infer, content=body, headers={"Inference-Header-Content-Length": str(len(body) - len(blob))})
    # the body limit of every route, from the middleware, in KServe's {"error"} (tritonclient read no message from
    # a problem+json: "an exception occurred in the client while decoding the response")
    _error(too_big, 413, "OVREDUCE_MAX_JSON_BYTES")
    for guarded in (tight.post(infer, json={}, headers={"Host": "evil.example"}),
                    tight.post(infer, json={}, headers={"Origin": "http://evil.example"})):  # fmt: skip
        _error(guarded, guarded.status_code, "evil.example")
        assert guarded.status_code in (400, 403), guarded


def test_a_raw_binary_request_is_the_data_of_the_one_input(client: TestClient, rmsnorm: str) -> None:
    """Triton's raw binary request (extension_binary_data.md; qa/L0_http/http_test.py test_raw_binary): with
    Inference-Header-Content-Length 0 the body is the data of the model's one input, its one variable dim worked out
    from the byte count, and every output comes back as binary data. It was 400 "not valid JSON"."""
    x = np.random.default_rng(0).standard_normal((1, 8, 64)).astype(np.float32)
    raw = {"Inference-Header-Content-Length": "0", "Content-Type": "application/octet-stream"}
    response = client.post(f"/v2/models/{rmsnorm}/infer", content=x.tobytes(), headers=raw)
    assert response.status_code == 200, response.text
    length = int(response.headers["inference-header-content-length"])
    [output] = json.loads(response.content[:length])["outputs"]
    assert output["shape"] == [1, 8, 1] and output["parameters"] == {"binary_data_size": 32}, output
    got = np.frombuffer(response.content[length:], np.float32).reshape(output["shape"])
    np.testing.assert_allclose(got, x.mean(axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)
    _error(client.post(f"/v2/models/{rmsnorm}/infer", content=x.tobytes()[:-2], headers=raw), 400,
           "raw binary request", "2046 bytes are not a whole FP32 tensor")  # fmt: skip
    axes = _upload(client.post, *sample("runtime_axes"), "runtime_axes.xml")
    _error(client.post(f"/v2/models/{axes}.3/infer", content=x.tobytes(), headers=raw), 400, "takes 2 inputs")
    dynamic = _upload(client.post, *sample("dynamic"), "dynamic.xml")
    _error(client.post(f"/v2/models/{dynamic}.3/infer", content=b"\0" * 8, headers=raw), 400, "its rank is dynamic")
    _error(client.post(f"/v2/models/{dynamic}.5/infer", content=b"\0" * 64, headers=raw), 400,
           "more than one of its dimensions is variable")  # fmt: skip


def test_null_parameters_are_none_as_kserves_data_model_writes_them(client: TestClient, rmsnorm: str) -> None:
    """KServe's v2 data model (``InferenceRequest(...).model_dump()``) writes ``"parameters": null`` on the request, its
    inputs and outputs; KServe's server takes them, as ovreduce took ``"id": null`` and ``"outputs": null``. They were
    400 "parameters: Input should be a valid dictionary"."""
    tensor = {**_data_input([1, 2, 64]), "data": [1.0] * 128, "parameters": None}
    body = {"id": None, "parameters": None, "inputs": [tensor], "outputs": [{"name": "output", "parameters": None}]}
    response = client.post(f"/v2/models/{rmsnorm}/infer", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["outputs"][0]["data"] == [1.0, 1.0]
    _error(client.post(f"/v2/models/{rmsnorm}/infer", json={**body, "parameters": []}), 400, "valid dictionary")


def test_malformed_framing_shapes_and_nesting_are_400_before_any_conversion(client: TestClient, rmsnorm: str) -> None:
    """What no conversion may see: a header length of thousands of digits, a zero-element binary tensor with
    a dimension past every limit, data nested hundreds deep (once a RecursionError pickling it for the
    worker). Each is the protocol's 400 naming what is wrong, and the next request is served."""
    infer = f"/v2/models/{rmsnorm}/infer"
    blob = np.ones([1, 2, 64], np.float32).tobytes()
    body, _ = _binary_request({"inputs": [_data_input([1, 2, 64], binary_data_size=len(blob))]}, blob)
    _error(client.post(infer, content=body, headers={"Inference-Header-Content-Length": "9" * 5000}), 400,
           "Inference-Header-Content-Length", "is not a length")  # fmt: skip
    said = client.post(infer, content=body, headers={"Inference-Header-Content-Length": "١٢".encode()})  # Arabic digits
    _error(said, 400, "Inference-Header-Content-Length: '١٢' is not a length")  # quoted as sent, not as latin-1
    empty, headers = _binary_request({"inputs": [_data_input([10**30, 0], binary_data_size=0)]})
    _error(client.post(infer, content=empty, headers=headers), 400, "its dims other than 0", "OVREDUCE_MAX_ELEMENTS")
    for depth in (70, 500, 800):
        deep = {"name": "data", "shape": [1], "datatype": "FP32", "data": json.loads("[" * depth + "1" + "]" * depth)}
        ragged = "data[0] is a list of 1 where shape [1] has a value"
        _error(client.post(infer, content=json.dumps({"inputs": [deep]})), 400, ragged)
    run = f"/v1/models/{rmsnorm.split('.')[0]}/layers/rmsnorm%2Fvariance/run"
    v1 = client.post(run, json={"inputs": [{**deep, "name": "0"}]})
    assert v1.status_code == 400 and "data[0] is a list of 1 where shape [1] has a value" in v1.json()["detail"]
    assert client.post(infer, content=body, headers={"Inference-Header-Content-Length": str(len(body) - len(blob))}
                       ).status_code == 200  # fmt: skip


def test_id_outputs_backend_and_comparison(client: TestClient, rmsnorm: str) -> None:
    infer = f"/v2/models/{rmsnorm}/infer"
    data = np.arange(128, dtype=np.float32).reshape(1, 2, 64) / 7
    expected = reduce("ReduceMean", data, [-1], True)
    tensor = {"name": "data", "shape": [1, 2, 64], "datatype": "FP32", "data": data.ravel().tolist()}
    doc = client.post(infer, json={"id": "req-1", "inputs": [tensor], "outputs": [{"name": "output"}]}).json()
    assert doc["id"] == "req-1" and doc["model_name"] == rmsnorm and doc["model_version"] == "1"
    [out] = doc["outputs"]
    assert out["name"] == "output" and out["shape"] == [1, 2, 1] and out["datatype"] == "FP32"
    np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(1, 2, 1), expected, rtol=1e-5)
    params = doc["parameters"]
    assert params["backend"] == "openvino" and params["reference"] == "numpy" and params["agree"] is True
    assert params["max_abs_error"] >= 0 and params["max_rel_error"] >= 0 and params["outcome"] == "agree"
    assert params["device"] == "CPU" and params["precision"] == "f32"  # what the CPU reports it computed in
    assert "notes" not in params  # nothing to say of this run
    # an agreement on an input that cannot show an error says so, as /v1 says it
    whys = []
    for values in ([0.0] * 128, ["NaN"] * 128):  # (zeros: a mean of any of them is 0, whatever a kernel misses)
        constant = client.post(infer, json={"inputs": [{**tensor, "data": values}]}).json()["parameters"]
        assert constant["agree"] is True and "on an input that cannot show an error" in constant["notes"], constant
        assert constant["not_established"] in constant["notes"] and constant["outcome"] == "agree", constant
        whys.append(constant["not_established"])
    assert "not_established" not in params  # (the agreement above stands)
    run = f"/v1/models/{rmsnorm.split('.')[0]}/layers/rmsnorm%2Fvariance/run"
    v1 = client.post(run, json={"inputs": [{**tensor, "name": "0", "data": [0.0] * 128}]}).json()
    assert v1["outcome"] == "agree" and v1["ok"] is True and v1["not_established"] == whys[0], v1
    # AUTO reports no precision: none is answered (it was the one asked for, "default" among them)
    auto = client.post(infer, json={"inputs": [tensor], "parameters": {"device": "AUTO", "precision": "default"}})
    assert auto.status_code == 200 and "precision" not in auto.json()["parameters"], auto.text
    assert "id" not in client.post(infer, json={"inputs": [tensor]}).json()
    by_numpy = client.post(infer, json={"inputs": [tensor], "parameters": {"backend": "numpy"}}).json()
    assert by_numpy["parameters"]["backend"] == "numpy" and "agree" not in by_numpy["parameters"]
    np.testing.assert_array_equal(np.array(by_numpy["outputs"][0]["data"], np.float32), expected.ravel())
    # binary output, asked for the whole request or for the output
    per_output = {"outputs": [{"name": "output", "parameters": {"binary_data": True}}]}
    for request in ({"parameters": {"binary_data_output": True}}, per_output):
        response = client.post(infer, json={"inputs": [tensor], "id": "b", **request})
        assert response.status_code == 200, response.text
        length = int(response.headers["Inference-Header-Content-Length"])
        head = json.loads(response.content[:length])
        [out] = head["outputs"]
        assert "data" not in out and out["parameters"] == {"binary_data_size": 8} and head["id"] == "b"
        values = struct.unpack("<2f", response.content[length:])
        np.testing.assert_allclose(np.array(values, np.float32).reshape(1, 2, 1), expected, rtol=1e-5)
    # a parameter of ours misspelt would be dropped, and the run done without it; a client's own is let through
    misspelt = {"precison": "precision", "Device": "device", "PRECISION": "precision", "rtol_": "rtol", "ATOL": "atol"}
    for name, meant in misspelt.items():  # other capitals too: JSON's keys are case-sensitive, and ours lower case
        _error(client.post(infer, json={"inputs": [tensor], "parameters": {name: "f16"}}), 400,
               f"parameters.{name!r} is not a parameter ovreduce reads; did you mean {meant!r}?")  # fmt: skip
    for own in ({"sequence_id": 7}, {"device_id": "gpu-7"}, {"revision": "3"}, {"tol": 0.1}):  # like ours, not ours
        assert client.post(infer, json={"inputs": [tensor], "parameters": own}).status_code == 200, own
    # so too a key of the request, of an input or of an output: every option it holds was dropped
    keys = [
        ({"paramters": {"backend": "numpy"}}, "'paramters'", "parameters"),
        ({"Parameters": {"backend": "numpy"}}, "'Parameters'", "parameters"),
        ({"output": [{"name": "output"}]}, "'output'", "outputs"),
        ({"outputs": [{"name": "output", "Parameters": {"binary_data": True}}]}, "'Parameters'", "parameters"),
    ]
    for extra, key, meant in keys:
        _error(client.post(infer, json={"inputs": [tensor], **extra}), 400,
               f": {key} is not a key ovreduce reads; did you mean {meant!r}?")  # fmt: skip
    _error(client.post(infer, json={"inputs": [{**tensor, "Shape": [1, 2, 64]}]}), 400, "did you mean 'shape'?")
    assert client.post(infer, json={"inputs": [tensor], "trace": {"span": 1}}).status_code == 200  # a client's own
    _error(client.post("/v2/repository/index", json={"Ready": True}), 400, "'Ready' is not a key", "'ready'")
    twice = {"outputs": [{"name": "output"}, {"name": "output", "parameters": {"binary_data": True}}]}
    _error(client.post(infer, json={"inputs": [tensor], **twice}), 400, "'output', 2 times")
    unknown = {"outputs": [{"name": "output"}, {"name": "bogus"}]}
    _error(client.post(infer, json={"inputs": [tensor], **unknown}), 400, "unexpected inference output 'bogus'")


def test_repository_index(client: TestClient, rmsnorm: str) -> None:
    mid = _upload(client.post, *sample("all_reductions"), "all_reductions.xml")
    index = client.post("/v2/repository/index").json()
    names = {entry["name"] for entry in index}
    assert rmsnorm in names and len(names) == 10 and sum(n.startswith(mid) for n in names) == 9
    assert client.post("/v2/repository/index", json={"ready": True}).json() == index
    _error(client.post("/v2/repository/index", content=b"[1]"), 400, "JSON object")


def test_runtime_axes_are_the_second_input(client: TestClient) -> None:
    mid = _upload(client.post, *sample("runtime_axes"), "runtime_axes.xml")
    meta = client.get(f"/v2/models/{mid}.3").json()  # mean_runtime_axes_keep
    assert [i["name"] for i in meta["inputs"]] == ["data", "axes"]
    data = np.linspace(-1, 1, 4 * 6 * 8, dtype=np.float32).reshape(4, 6, 8)
    tensors = [{"name": "data", "shape": [4, 6, 8], "datatype": "FP32", "data": data.ravel().tolist()},
               {"name": "axes", "shape": [2], "datatype": "INT64", "data": [0, 2]}]  # fmt: skip
    doc = client.post(f"/v2/models/{mid}.3/infer", json={"inputs": tensors}).json()
    expected = reduce("ReduceMean", data, [0, 2], True)
    assert doc["outputs"][0]["shape"] == [1, 6, 1] and doc["parameters"]["agree"] is True
    np.testing.assert_allclose(doc["outputs"][0]["data"], expected.ravel(), rtol=1e-5, atol=1e-6)
    _error(client.post(f"/v2/models/{mid}.3/infer", json={"inputs": tensors[:1]}), 400, "takes 2 input")
    twice = [tensors[0], {**tensors[0], "name": "x"}]  # data by its alias and by its Parameter's name
    _error(client.post(f"/v2/models/{mid}.3/infer", json={"inputs": twice}), 400,
           "input 0 (data) is given twice, as 'data' and 'x'; give it once")  # fmt: skip
    # mean_two_runtime_axes: an output of dynamic rank, which the CPU plugin does not compile; NumPy runs it
    _error(client.post(f"/v2/models/{mid}.4/infer", json={"inputs": tensors}), 400, "dynamic rank",
           "parameters.backend 'numpy'")  # fmt: skip
    doc = client.post(f"/v2/models/{mid}.4/infer", json={"inputs": tensors, "parameters": {"backend": "numpy"}}).json()
    np.testing.assert_array_equal(doc["outputs"][0]["data"], reduce("ReduceMean", data, [0, 2]))
    numpy_on_gpu = {"inputs": tensors, "parameters": {"backend": "numpy", "device": "GPU"}}  # OpenVINO's alone
    _error(
        client.post(f"/v2/models/{mid}.4/infer", json=numpy_on_gpu), 400, "device 'GPU' with the numpy backend alone"
    )
    # an axis out of range: no backend runs it, and none is offered
    out_of_range = [tensors[0], {**tensors[1], "data": [0, 3]}]
    said = _error(client.post(f"/v2/models/{mid}.3/infer", json={"inputs": out_of_range}), 400, "out of the tensor")
    assert "parameters.backend" not in said, said
    # beyond int32 too: OpenVINO's CPU plugin would read 2**32 as axis 0 and answer a tensor
    for axes in ([2**32, 1], [2**63 - 1, 0]):
        beyond = [tensors[0], {**tensors[1], "data": axes}]
        _error(client.post(f"/v2/models/{mid}.3/infer", json={"inputs": beyond}), 400,
               f"Axis {axes[0]} out of the tensor rank range [-3, 2]")  # fmt: skip


def test_model_names_read_back_one_way() -> None:
    mid = "ab" * 32
    assert model_name(mid, "12/then/110") == f"{mid}.12-then-110"
    found = MODEL_NAME.fullmatch(model_name(mid, "4/body/3/else/7"))
    assert found is not None and found["path"] == "4-body-3-else-7"
    for bad in (f"{mid}.12/then/110", f"{mid}.12-loop-1", f"{mid}.x", f"{mid[:-1]}.1", f"{mid}.12-then"):
        assert MODEL_NAME.fullmatch(bad) is None, bad


def test_the_loop_body_layer_runs(tmp_path: Path, client: TestClient) -> None:
    path = subgraphs.save(subgraphs.loop_model(), tmp_path, "loop")
    mid = _upload(client.post, path.read_bytes(), path.with_suffix(".bin").read_bytes(), "loop.xml")
    [entry] = client.post("/v2/repository/index").json()
    assert "-body-" in entry["name"] and entry["name"].startswith(mid)
    meta = client.get(f"/v2/models/{entry['name']}").json()
    assert meta["inputs"][0]["shape"] == [1, 3, 4] and meta["parameters"]["layer_path"].count("/") == 2


def test_a_model_that_cannot_run_is_not_ready(client: TestClient) -> None:
    xml = (SAMPLES / "broken" / "axis_out_of_range.xml").read_bytes()
    mid = _upload(client.post, xml, (SAMPLES / "broken" / "axis_out_of_range.bin").read_bytes(), "axis.xml")
    entries = {e["name"]: e for e in client.post("/v2/repository/index").json()}
    entry = entries[model_name(mid, "4")]
    assert entry["state"] == "UNAVAILABLE" and "out of the tensor rank range" in entry["reason"], entry
    assert model_name(mid, "4") not in {
        e["name"] for e in client.post("/v2/repository/index", json={"ready": True}).json()
    }
    for response in (client.get(f"/v2/models/{mid}.4/ready"), client.get(f"/v2/models/{mid}.4"),
                     client.post(f"/v2/models/{mid}.4/infer", json={"inputs": []})):  # fmt: skip
        _error(response, 503, "is not ready", "out of the tensor rank range")


def test_values_are_held_to_the_type_and_range_they_feed(client: TestClient) -> None:
    """Values a reader would take by guessing are refused: an axis 2^64-2 given as UINT64 is -2 once wrapped into
    the layer's i64 axes; a number beyond the float range is infinity to Python's JSON reader; "7" is text."""
    mid = _upload(client.post, *sample("runtime_axes"), "runtime_axes.xml")
    data = {"name": "data", "shape": [4, 6, 8], "datatype": "FP32", "data": [0.5] * 192}
    axes = {"name": "axes", "shape": [2], "datatype": "UINT64", "data": [0, 2**64 - 2]}
    url = f"/v2/models/{mid}.3/infer"
    _error(client.post(url, json={"inputs": [data, axes]}), 400, "uint64 values from 0 to 18446744073709551614",
           "do not fit in i64")  # fmt: skip
    fine = client.post(url, json={"inputs": [data, {**axes, "data": [0, 2]}]})
    assert fine.status_code == 200 and fine.json()["outputs"][0]["shape"] == [1, 6, 1], fine.text
    text = json.dumps({"inputs": [data, {**axes, "data": [0, 2]}]}).replace("0.5", "1e400", 1)
    _error(client.post(url, content=text), 400, "the number 1e400 is beyond the range of a 64-bit float")
    _error(client.post(url, json={"inputs": [{**data, "data": ["7"] * 192}, axes]}), 400, 'value "7" at index 0')
    # the parameters' refused values too, as the client wrote them
    sized = {**axes, "parameters": {"binary_data_size": True}}
    sized.pop("data")
    _error(client.post(url, json={"inputs": [data, sized]}), 400, "binary_data_size must be", "got true")
    for backend, said in ((1, "got 1"), (None, "got null"), ("gpu", 'got "gpu"')):
        _error(client.post(url, json={"inputs": [data, axes], "parameters": {"backend": backend}}), 400, said)


def test_an_output_larger_than_the_limit_is_refused_before_the_run(client: TestClient) -> None:
    mid = _upload(client.post, *sample("dynamic"), "dynamic.xml")
    empty = {"name": "data", "shape": [0, 4194304, 4194304], "datatype": "FP16", "data": []}
    _error(client.post(f"/v2/models/{mid}.3/infer", json={"inputs": [empty]}), 400,
           "multiply to 17592186044416")  # fmt: skip


def test_output_limit_and_time_limit(client: TestClient, make_client: Callable[..., TestClient], rmsnorm: str) -> None:
    tensor = {**_data_input([1, 2, 64]), "data": [0.0] * 128}
    _error(make_client(max_output_elements=1).post(f"/v2/models/{rmsnorm}/infer", json={"inputs": [tensor]}), 400,
           "OVREDUCE_MAX_OUTPUT_ELEMENTS")  # fmt: skip
    hurried = make_client(run_timeout_s=0.001)  # no worker starts in time: busy or timed out, the protocol's 503
    _error(hurried.post(f"/v2/models/{rmsnorm}/infer", json={"inputs": [tensor]}), 503)


def test_an_unavailable_answer_says_when_to_ask_again(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    """A 503 of the protocol carries Retry-After as /v1's does (it had none): here a store that cannot be listed."""
    client = make_client(store=tmp_path / "store")
    client.post("/v2/repository/index")
    shutil.rmtree(tmp_path / "store" / "models")
    (tmp_path / "store" / "models").write_bytes(b"not a folder")
    response = client.post("/v2/repository/index")
    _error(response, 503, "cannot be listed")
    assert response.headers["retry-after"] == "30"


def test_an_unexpected_error_is_the_protocols_500(
    client: TestClient, rmsnorm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The protocol's {"error"}, with the id it was logged under and nothing of the exception, as /v1's 500 is."""

    def boom(*args: Any) -> tuple[str, Any]:
        raise RuntimeError("secret internals at /srv/app.py line 12")

    monkeypatch.setattr("api.routes.v2.run_options", boom)  # runs in the server process, after the body is read
    answering = TestClient(client.app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    response = answering.post(f"/v2/models/{rmsnorm}/infer", json={"inputs": []})  # (a stored model: past the head)
    assert "secret" not in _error(response, 500, "an unexpected error occurred; it was logged with id")


def test_json_data_is_held_to_its_shape_as_the_request_is_read() -> None:
    """1.5 million values for a shape of 64 were pickled to a worker, and waited for one, before being refused."""
    from api.kserve import decode_request

    body = json.dumps({"inputs": [{"name": "data", "shape": [1, 1, 64], "datatype": "FP32", "data": [0] * 100_000}]})
    with pytest.raises(InputError, match=r"shape \[1, 1, 64\] needs 64 values, data holds 100000"):
        decode_request(body.encode(), None, 1 << 22)


def test_the_repository_index_reads_the_summaries_and_parses_no_model(make_settings: Callable[..., Settings]) -> None:
    """The index parsed every stored model in one job: a store of a few large models made it time out for good. Each
    summary now records why a reduction cannot run; what it records is what the parsed model says, and a summary of an
    older ovreduce, which records nothing, is worked out from its model as before."""
    import hashlib

    from api.routes.v2 import _index
    from api.store.catalog import path_of
    from api.workers import WorkerContext, catalog_for

    settings = make_settings()
    catalog = catalog_for(settings)
    for name in ("all_reductions", "dynamic", "runtime_axes", "broken/axis_out_of_range"):
        xml, bin_data = sample(name)
        catalog.add(xml, bin_data or None, filename="m.xml",
                    bin_filename="m.bin")  # fmt: skip

    def listed(context: WorkerContext) -> Any:  # each model's entries, as the route streams them
        parts = (_index(context, False, mid) for mid in context.catalog.store.ids())
        return json.loads(b"[" + b",".join(part for part in parts if part) + b"]")

    index = listed(WorkerContext(settings, catalog))
    assert not catalog._loaded, "the index parsed a model"
    expected = []
    for summary in map(json.loads, catalog.summaries_json()):
        loaded = catalog.load(summary["id"])
        for reduction in summary["reductions"]:
            path = path_of(reduction)
            reason = loaded.unready(path)
            expected.append({"name": model_name(summary["id"], path), "version": "1",
                             "state": "UNAVAILABLE" if reason else "READY", "reason": reason or ""})  # fmt: skip
    assert index == expected and any(e["state"] == "UNAVAILABLE" for e in index), index
    folder = settings.store / "models" / index[0]["name"].partition(".")[0]  # as an older ovreduce stored it
    meta = json.loads((folder / "meta.json").read_bytes())
    del meta["unready"]
    raw = json.dumps(meta).encode()
    sums = json.loads((folder / "sums.json").read_bytes())
    (folder / "meta.json").write_bytes(raw)
    (folder / "sums.json").write_bytes(json.dumps({**sums, "meta.json": hashlib.sha256(raw).hexdigest()}).encode())
    fresh = catalog_for(settings)
    assert listed(WorkerContext(settings, fresh)) == index and len(fresh._loaded) == 1
    tight = make_settings(max_layers=1)  # stored under larger limits: each says why it cannot be read now
    for mid in catalog.store.ids():
        with pytest.raises(LimitExceededError, match=r"^m\.xml: more than 1 layers? \(OVREDUCE_MAX_LAYERS\)$"):
            _index(WorkerContext(tight, catalog_for(tight)), False, mid)


def test_a_stored_model_past_the_limits_of_now_is_unavailable_and_not_ready(
    make_client: Callable[..., TestClient],
) -> None:
    """A model stored under larger limits than the service's now is still listed by /v1, so the repository index lists
    it by its id, UNAVAILABLE with the reason (not in a ready-only index), and its v2 models are not ready (503), as
    docs/api.md says. The index left it out without a word, and its readiness, metadata and inference were 400."""
    mid = make_client().post("/v1/models", files=files(*sample("rmsnorm"), name="rmsnorm.xml")).json()["id"]
    client, name = make_client(max_layers=5), f"{mid}.5"
    why = "rmsnorm.xml: more than 5 layers (OVREDUCE_MAX_LAYERS)"
    assert [m["id"] for m in client.get("/v1/models").json()["models"]] == [mid]
    reason = f"its reductions could not be listed: {why}"
    assert client.post("/v2/repository/index").json() == [
        {"name": mid, "version": "1", "state": "UNAVAILABLE", "reason": reason}
    ]
    assert client.post("/v2/repository/index", json={"ready": True}).json() == []
    tensor = {"name": "data", "shape": [1], "datatype": "FP32", "data": [1.0]}
    for method, path in (("GET", f"/v2/models/{name}/ready"), ("GET", f"/v2/models/{name}/versions/1"),
                         ("POST", f"/v2/models/{name}/infer")):  # fmt: skip
        answer = client.request(method, path, json={"inputs": [tensor]} if method == "POST" else None)
        assert answer.status_code == 503, (path, answer.text)
        assert answer.json() == {"error": f"model {name!r} is not ready: {why}"}, path
