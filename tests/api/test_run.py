"""POST /v1/models/{id}/layers/{layer}/run: KServe v2 tensors in and out, limits, time-outs, concurrency."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from api.schemas import RunAnswer
from ovreduce.backends.numpy import NumPyBackend

from .conftest import assert_problem, files
from .irs import reduce_ir, runtime_axes_ir

LAYER = "rmsnorm%2Fvariance"


def _tensor(name: str, array: np.ndarray, datatype: str = "FP32", nested: bool = False) -> dict[str, Any]:
    data = array.tolist() if nested else array.reshape(-1).tolist()
    return {"name": name, "shape": list(array.shape), "datatype": datatype, "data": data}


def test_run_with_seed(client: TestClient, rmsnorm_id: str) -> None:
    response = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json={"seed": 7})
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["schema"] == "ovreduce.run/v1" and doc["ok"] is True and doc["id"] == rmsnorm_id
    assert doc["layer"]["layer_name"] == "rmsnorm/variance"
    assert [r["backend"] for r in doc["results"]] == ["numpy", "openvino:CPU"]
    assert doc["inputs"] == [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "defaulted_dims": [1]}]
    assert [o["name"] for o in doc["outputs"]] == ["numpy", "openvino:CPU"]
    for out in doc["outputs"]:
        assert out["shape"] == [1, 1, 1] and out["datatype"] == "FP32" and len(out["data"]) == 1
    again = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json={"seed": 7}).json()
    assert again["outputs"] == doc["outputs"]  # seeded: the same data again
    empty_body = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run")
    assert empty_body.status_code == 200 and empty_body.json()["inputs"] == doc["inputs"]
    # The answer is the typed document (written without re-validating large outputs): it validates as one.
    typed = TypeAdapter(RunAnswer).validate_json(response.content)
    assert typed.id == rmsnorm_id and typed.to_json() == doc


@pytest.mark.parametrize("nested", [False, True])
def test_run_with_given_input(client: TestClient, rmsnorm_id: str, nested: bool) -> None:
    x = np.arange(3 * 64, dtype=np.float32).reshape(1, 3, 64) / 7
    body = {"inputs": [_tensor("0", x, nested=nested)], "backends": ["numpy", "openvino"]}
    response = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json=body)
    assert response.status_code == 200, response.text
    doc = response.json()
    want = x.mean(axis=-1, keepdims=True)
    for out in doc["outputs"]:
        assert out["shape"] == [1, 3, 1]
        np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(1, 3, 1), want, rtol=1e-5)
    assert doc["comparisons"][0]["ok"] is True


def test_run_options(client: TestClient, rmsnorm_id: str) -> None:
    body = {"backends": ["openvino"], "precision": "f16", "device": "CPU", "atol": 0.5, "rtol": 0,
            "shapes": {"0": "[1,4,64]"}}  # fmt: skip
    doc = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json=body).json()
    assert doc["results"][0]["precision"] == "f16"
    assert doc["inputs"][0]["shape"] == [1, 4, 64]
    assert [o["name"] for o in doc["outputs"]] == ["openvino:CPU"]


def test_input_named_by_its_parameter_and_nan_as_a_string(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    body = {"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32",
                        "data": ["NaN", 1, 2, "Infinity", 1, 2]}], "backends": ["numpy"]}  # fmt: skip
    response = client.post(f"/v1/models/{mid}/layers/sum/run", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["outputs"][0]["data"] == ["NaN", "Infinity"]


def test_runtime_axes(client: TestClient) -> None:
    mid = client.post("/v1/models", files=files(runtime_axes_ir())).json()["id"]
    axes = {"name": "1", "shape": [1], "datatype": "INT64", "data": [1]}
    response = client.post(f"/v1/models/{mid}/layers/mean/run", json={"inputs": [axes]})
    assert response.status_code == 200, response.text
    assert response.json()["outputs"][0]["shape"] == [2, 1]
    doc = assert_problem(client.post(f"/v1/models/{mid}/layers/mean/run", json={}), 400, "input")
    assert "axes at run time" in doc["detail"]


def _nested(depth: int) -> list[Any]:
    data: list[Any] = [1]
    for _ in range(depth):
        data = [data]
    return data


BAD_BODIES: list[tuple[str, Any, int, str]] = [
    ("unknown-datatype", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP128", "data": [0] * 64}]},
     400, "input"),
    ("bytes-datatype", {"inputs": [{"name": "0", "shape": [1], "datatype": "BYTES", "data": ["a"]}]}, 400, "input"),
    ("wrong-shape", {"inputs": [{"name": "0", "shape": [1, 1, 63], "datatype": "FP32", "data": [0] * 63}]},
     400, "input"),
    ("short-data", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [0] * 3}]},
     400, "input"),
    ("not-numbers", {"inputs": [{"name": "0", "shape": [1, 1, 2], "datatype": "FP32", "data": [{}, None]}]},
     400, "input"),
    ("int-kind", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "INT8", "data": [1] * 64}]},
     400, "input"),
    ("unknown-name", {"inputs": [{"name": "nope", "shape": [1], "datatype": "FP32", "data": [1]}]}, 400, "input"),
    ("twice", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [0] * 64}] * 2},
     400, "input"),
    ("too-deep", {"inputs": [{"name": "0", "shape": [1], "datatype": "FP32", "data": _nested(70)}]}, 400, "input"),
    ("negative-dim", {"inputs": [{"name": "0", "shape": [-1], "datatype": "FP32", "data": []}]},
     400, "request.invalid"),
    ("extra-field", {"seeds": 1}, 400, "request.invalid"),
    ("negative-seed", {"seed": -1}, 400, "request.invalid"),
    ("huge-seed", {"seed": 2**70}, 400, "request.invalid"),
    ("bad-backend", {"backends": ["onnx"]}, 400, "request.invalid"),
    ("no-backend", {"backends": []}, 400, "request.invalid"),
    ("bad-precision", {"precision": "f8"}, 400, "request.invalid"),
    ("nan-atol", {"atol": "NaN"}, 400, "request.invalid"),
    ("negative-rtol", {"rtol": -1}, 400, "request.invalid"),
    ("device-chars", {"device": "CPU\n"}, 400, "request.invalid"),
    ("bad-shape-text", {"shapes": {"0": "[a]"}}, 400, "input"),
    ("incompatible-shape", {"shapes": {"0": "[2,1,64]"}}, 400, "input"),
    ("not-an-object", [1, 2], 400, "request.invalid"),
    ("huge-given", {"inputs": [{"name": "0", "shape": [1, 4096, 4096], "datatype": "FP32", "data": []}]},
     413, "limit"),
    ("huge-generated", {"shapes": {"0": "[1,4294967296,64]"}}, 413, "limit"),
    ("gpu", {"device": "GPU"}, 503, "backend.device"),
    ("npu", {"device": "NPU.3"}, 503, "backend.device"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "status", "code"), [b[1:] for b in BAD_BODIES], ids=[b[0] for b in BAD_BODIES])
def test_bad_run_requests(client: TestClient, rmsnorm_id: str, body: Any, status: int, code: str) -> None:
    assert_problem(client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json=body), status, code)


def test_invalid_json_is_400(client: TestClient, rmsnorm_id: str) -> None:
    url = f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run"
    headers = {"content-type": "application/json"}
    assert_problem(client.post(url, content=b"{not json", headers=headers), 400, "request.invalid")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert_problem(client.post(url, content=deep, headers=headers), 400)


def test_too_many_given_values(make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]) -> None:
    client = make_client(max_elements=100)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    body = {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [[0] * 64] * 3}]}
    assert_problem(client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json=body), 413, "limit")


def test_output_element_limit(make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]) -> None:
    client = make_client(max_output_elements=8)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    ok = client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"shapes": {"0": "[1,8,64]"}})
    assert ok.status_code == 200
    doc = assert_problem(client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"shapes": {"0": "[1,9,64]"}}),
                         413, "limit")  # fmt: skip
    assert "OVREDUCE_MAX_OUTPUT_ELEMENTS" in doc["detail"]


def test_not_a_reduction_is_400(client: TestClient, rmsnorm_id: str) -> None:
    """The layer exists (so not 404); running it is a bad request: ovreduce runs reductions only."""
    doc = assert_problem(client.post(f"/v1/models/{rmsnorm_id}/layers/hidden_states/run"), 400, "input")
    assert "is not a reduction" in doc["detail"]


# -- slow runs: time limits, busy workers, health checks meanwhile -------------------------------------------
@pytest.fixture
def slow_numpy(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """NumPy runs block until the returned event is set (at most 10 s)."""
    release = threading.Event()
    original = NumPyBackend.infer

    def infer(self: NumPyBackend, spec: Any, inputs: Any) -> Any:
        release.wait(10)
        return original(self, spec, inputs)

    monkeypatch.setattr(NumPyBackend, "infer", infer)
    yield release
    release.set()


def _in_thread(func: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(func()), daemon=True)
    thread.start()
    return thread, out


def test_healthz_answers_during_a_long_run(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None], slow_numpy: threading.Event
) -> None:
    client = make_client(concurrency=2)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    url = f"/v1/models/{mid}/layers/{LAYER}/run"
    run, result = _in_thread(lambda: client.post(url, json={"backends": ["numpy"]}))
    time.sleep(0.2)
    for _ in range(10):
        start = time.perf_counter()
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert time.perf_counter() - start < 0.5
        assert run.is_alive() and not result  # the run is still going
    slow_numpy.set()
    run.join(10)
    assert result[0].status_code == 200


def test_run_time_limit_is_504(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None], slow_numpy: threading.Event
) -> None:
    client = make_client(run_timeout_s=0.5)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    start = time.perf_counter()
    doc = assert_problem(client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"backends": ["numpy"]}),
                         504, "limit.time")  # fmt: skip
    assert time.perf_counter() - start < 3
    assert "0.5 s" in doc["detail"] and "OVREDUCE_RUN_TIMEOUT_S" in doc["detail"]


def test_busy_workers_are_503(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None], slow_numpy: threading.Event
) -> None:
    client = make_client(run_timeout_s=0.6, concurrency=1)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    url = f"/v1/models/{mid}/layers/{LAYER}/run"
    first, result = _in_thread(lambda: client.post(url, json={"backends": ["numpy"]}))
    time.sleep(0.2)
    response = client.post(url, json={"backends": ["numpy"]})  # waits for the one worker, never starts
    doc = assert_problem(response, 503, "busy")
    assert response.headers["retry-after"] == "5"
    assert "not started" in doc["detail"]
    first.join(5)
    assert_problem(result[0], 504, "limit.time")
    slow_numpy.set()


def test_concurrent_runs_agree(client: TestClient, rmsnorm_id: str) -> None:
    url = f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run"
    threads = [_in_thread(lambda s=s: client.post(url, json={"seed": s % 3})) for s in range(12)]  # type: ignore[misc]
    docs = []
    for thread, out in threads:
        thread.join(30)
        assert out[0].status_code == 200
        docs.append(out[0].json())
    for i, doc in enumerate(docs):
        assert doc["ok"]
        assert doc["outputs"] == docs[i % 3]["outputs"]
        assert math.isfinite(doc["outputs"][0]["data"][0])
