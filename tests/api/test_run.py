"""POST /v1/models/{id}/layers/{layer}/run: KServe v2 tensors in and out, limits, time-outs, concurrency."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from api.schemas import RunAnswer

from .conftest import ROOT, assert_problem, files, sample
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


def test_an_error_that_quotes_a_huge_request_is_cut(client: TestClient, rmsnorm_id: str) -> None:
    """A shape of 200,000 dims is quoted by the message that refuses it: the answer quotes its ends, not 400 KB."""
    shape = "[" + ",".join(["1"] * 200_000) + "]"
    response = client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json={"shapes": {"0": shape}})
    doc = assert_problem(response, 400, "input")
    assert len(doc["detail"]) < 4200 and "characters cut" in doc["detail"], len(doc["detail"])
    assert doc["detail"].startswith("the shape given for input 0 (data): [1,1,1,")


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
    ("backend-twice", {"backends": ["openvino", "openvino"]}, 400, "input"),  # compared with itself, it agreed
    ("bad-precision", {"precision": "f8"}, 400, "request.invalid"),
    ("nan-atol", {"atol": "NaN"}, 400, "request.invalid"),
    ("negative-rtol", {"rtol": -1}, 400, "request.invalid"),
    ("device-chars", {"device": "CPU\n"}, 400, "request.invalid"),
    ("bad-shape-text", {"shapes": {"0": "[a]"}}, 400, "input"),
    ("incompatible-shape", {"shapes": {"0": "[2,1,64]"}}, 400, "input"),
    ("array-and-shape", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [0.5] * 64}],
                         "shapes": {"0": "[1,2,64]"}}, 400, "input"),
    ("not-an-object", [1, 2], 400, "request.invalid"),
    ("huge-given", {"inputs": [{"name": "0", "shape": [1, 4096, 4096], "datatype": "FP32", "data": []}]},
     413, "limit"),
    ("huge-generated", {"shapes": {"0": "[1,4294967296,64]"}}, 413, "limit"),
    ("number-as-text", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": ["7"] * 64}]},
     400, "input"),
    ("bool-as-float", {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [True] * 64}]},
     400, "input"),
    ("unknown-device", {"device": "cpu"}, 400, "input"),
    ("gpu", {"device": "GPU"}, 503, "backend.device"),
    ("npu", {"device": "NPU.3"}, 503, "backend.device"),
    ("numpy-device", {"backends": ["numpy"], "device": "GPU"}, 400, "input"),  # only OpenVINO would use it
    ("numpy-precision", {"backends": ["numpy"], "precision": "f32"}, 400, "input"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "status", "code"), [b[1:] for b in BAD_BODIES], ids=[b[0] for b in BAD_BODIES])
def test_bad_run_requests(client: TestClient, rmsnorm_id: str, body: Any, status: int, code: str) -> None:
    assert_problem(client.post(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", json=body), status, code)


def test_invalid_json_is_400(client: TestClient, rmsnorm_id: str) -> None:
    url = f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run"
    headers = {"content-type": "application/json"}
    assert_problem(client.post(url, content=b"{not json", headers=headers), 400, "http.400")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert_problem(client.post(url, content=deep, headers=headers), 400)
    # a number Python's JSON reader would read as infinity: refused, in a small body and in one read off the loop
    for padding in (0, 100_000):
        body = b'{"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [1e400' + b", 0" * 63
        body += b"]}], " + b'"seed": 0' + b" " * padding + b"}"
        problem = assert_problem(client.post(url, content=body, headers=headers), 400)
        assert "the number 1e400 is beyond the range of a 64-bit float" in problem["detail"], problem
    nan = b'{"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [NaN' + b", 0" * 63 + b"]}]}"
    assert client.post(url, content=nan, headers=headers).status_code == 200  # what Python's json.dumps writes


def test_an_output_larger_than_the_limit_is_refused_before_the_run(client: TestClient) -> None:
    """A reduction over an empty axis has an output larger than its input: [0, n, n] over axis 0 keeping dims is
    [1, n, n]. It is held to the element limit before anything is allocated (it was a 128 TiB allocation: 500)."""
    xml, bin_data = sample("dynamic")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    empty = {"name": "0", "shape": [0, 4194304, 4194304], "datatype": "FP16", "data": []}
    problem = assert_problem(client.post(f"/v1/models/{mid}/layers/3/run", json={"inputs": [empty]}), 413, "limit")
    assert "multiply to 17592186044416" in problem["detail"], problem
    small = {**empty, "shape": [0, 2, 2]}
    doc = client.post(f"/v1/models/{mid}/layers/3/run", json={"inputs": [small]}).json()
    assert doc["outputs"][0]["shape"] == [1, 2, 2] and doc["outputs"][0]["data"] == [0.0] * 4, doc


@pytest.mark.parametrize("rank", [65, 300])
def test_a_shape_of_more_than_64_dims_for_a_dynamic_rank_input_is_400(client: TestClient, rank: int) -> None:
    """A layer whose data input has a dynamic rank takes its shape from ``shapes``; NumPy makes no array of more than
    64 dimensions, and its ValueError was a 500."""
    xml, bin_data = sample("dynamic")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    shape = "[" + ",".join(["1"] * rank) + "]"
    problem = assert_problem(client.post(f"/v1/models/{mid}/layers/3/run", json={"shapes": {"0": shape}}), 400, "input")
    assert f"rank {rank}" in problem["detail"] and "64 dimensions" in problem["detail"], problem
    ok = client.post(f"/v1/models/{mid}/layers/3/run", json={"shapes": {"0": "[2,3]"}, "backends": ["numpy"]})
    assert ok.status_code == 200, ok.text


def test_too_many_given_values(make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]) -> None:
    client = make_client(max_elements=100)
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    body = {"inputs": [{"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": [0] * 192}]}
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


# -- slow work: time limits that stop it, busy workers, health checks meanwhile ----------------------------------
# Real slow work, no hooks: the audit of a model with 400 chained reductions takes seconds (compiles and runs
# three times). It runs in a worker process, which a time limit kills.
@pytest.fixture(scope="module")
def slow_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes | None]:
    from tests.audit.ov_models import many_reductions

    xml = many_reductions(tmp_path_factory.mktemp("slow") / "many.xml", 400)
    return xml.read_bytes(), xml.with_suffix(".bin").read_bytes()


def _in_thread(func: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(func()), daemon=True)
    thread.start()
    return thread, out


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is not alive either
            return stat.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped meanwhile
        return False


def test_healthz_answers_during_a_long_audit(
    make_client: Callable[..., TestClient], slow_model: tuple[bytes, bytes | None]
) -> None:
    client = make_client(concurrency=2)
    mid = client.post("/v1/models", files=files(*slow_model)).json()["id"]
    audit, result = _in_thread(lambda: client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"}))
    time.sleep(0.3)
    answered = 0
    while audit.is_alive() and answered < 20:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        answered += 1
    audit.join(60)
    assert answered >= 1 and result[0].status_code == 200, result


def test_a_time_limit_stops_the_work_and_frees_the_worker(
    make_client: Callable[..., TestClient], slow_model: tuple[bytes, bytes | None], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """After the 504 the audit is not running on: its process was killed (its memory freed with it), and the
    next request gets a fresh worker at once instead of a 503."""
    uploader = make_client()  # the same store, a time limit its uploads meet on a loaded machine
    mid = uploader.post("/v1/models", files=files(*slow_model)).json()["id"]
    small = uploader.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    client = make_client(run_timeout_s=0.5, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    doc = assert_problem(client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"}), 504, "limit.time")
    assert "0.5 s" in doc["detail"] and "OVREDUCE_RUN_TIMEOUT_S" in doc["detail"] and "stopped" in doc["detail"]
    assert isolated.killed == 1 and isolated.pids() == []
    response = client.post(f"/v1/models/{small}/layers/{LAYER}/run", json={"backends": ["numpy"]})
    assert response.status_code in (200, 504), response.text  # a cold worker may need more than 0.5 s
    assert isolated.killed <= 2


def test_killed_worker_processes_are_gone(
    make_client: Callable[..., TestClient], slow_model: tuple[bytes, bytes | None]
) -> None:
    mid = make_client().post("/v1/models", files=files(*slow_model)).json()["id"]  # the same store, no hurry
    client = make_client(run_timeout_s=0.5, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    audit, result = _in_thread(lambda: client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"}))
    deadline = time.monotonic() + 10
    while not isolated.pids() and time.monotonic() < deadline:
        time.sleep(0.01)
    (pid,) = isolated.pids()
    audit.join(30)
    assert_problem(result[0], 504, "limit.time")
    assert not _alive(pid)


def test_jobs_that_never_answer_are_killed_on_time_however_many_run_at_once(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """As many hung jobs at once as asyncio's default executor has threads (min(32, CPUs + 4): what
    OVREDUCE_CONCURRENCY defaults to on a host of 32 CPUs or more) held every thread of it waiting for their answers,
    and the kill that ends a job at its time limit queued behind them for ever: no 504, and every later job 503 busy.
    A hung job (a plugin that never returns) is played by a stopped worker process."""
    size = min(32, (os.cpu_count() or 1) + 4)
    client = make_client(run_timeout_s=2, concurrency=size)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    while len(isolated.pids()) < size:
        isolated.warm()
    hung = isolated.pids()
    for pid in hung:
        os.kill(pid, signal.SIGSTOP)
    try:
        runs = [_in_thread(lambda: client.post(f"/v1/models/{mid}/layers/5/run", json={})) for _ in range(size)]
        for thread, _ in runs:
            thread.join(20)
        answers = [out[0] if out else None for _, out in runs]
        assert all(a is not None and a.status_code == 504 for a in answers), [a and a.status_code for a in answers]
        assert not any(_alive(pid) for pid in hung)
        assert client.post(f"/v1/models/{mid}/layers/5/run", json={}).status_code == 200
    finally:
        for pid in hung:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_that_crashes_is_503_and_replaced(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """A worker process that dies of SIGSEGV mid-job (as the XML parser can on hostile bytes): its job is
    answered 503 saying how it ended, the service goes on, and the next job gets a fresh worker."""
    client = make_client(run_timeout_s=60, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    small = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    pid, answer = _killed_mid_audit(client, signal.SIGSEGV)
    doc = assert_problem(answer, 503, "worker")
    assert "killed by signal 11 (SIGSEGV)" in doc["detail"], doc["detail"]
    assert answer.headers["retry-after"] == "5"  # a fresh worker takes the next job
    assert not _alive(pid)
    assert client.get("/healthz").status_code == 200
    response = client.post(f"/v1/models/{small}/layers/{LAYER}/run", json={"backends": ["numpy"]})
    assert response.status_code == 200, response.text
    assert isolated.pids() != [pid] and len(isolated.pids()) == 1


_LOOP = ROOT / "tests" / "exports" / "loop_trip_count" / "model.xml"


def _killed_mid_audit(client: TestClient, sig: signal.Signals) -> tuple[int, Any]:
    """Audit a Loop that never ends (a trip count of -1: little memory, and it runs until its worker is killed) in the
    one worker, and kill that worker by ``sig`` a second into the audit: its pid and the audit's answer."""
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    mid = client.post("/v1/models", files=files(_LOOP.read_bytes(), _LOOP.with_suffix(".bin").read_bytes())).json()
    forever = {"inputs": [{"name": "n.1", "shape": [], "datatype": "INT64", "data": [-1]}], "precision": "f32"}
    audit, result = _in_thread(lambda: client.post(f"/v1/models/{mid['id']}/audit", json=forever))
    time.sleep(1.0)  # in the one worker (the upload's, or a fresh one where that retired)
    pids = isolated.pids()
    assert len(pids) == 1, (pids, audit.is_alive() or result[0].json()["error"])
    os.kill(pids[0], sig)
    audit.join(30)
    return pids[0], result[0]


def test_a_worker_that_aborts_near_its_memory_bound_says_the_bound_is_the_likely_cause(
    make_client: Callable[..., TestClient],
) -> None:
    """OpenVINO ends its process (SIGABRT) when an allocation fails in a thread of its own, where no error can be
    answered. A worker killed by a signal with more than half its bound held when it took the job: its 503 says the
    memory bound is the likely cause, and how much it held, instead of blaming a crash of the parser or of OpenVINO."""
    client = make_client(run_timeout_s=60, concurrency=1, max_worker_bytes=_SMALL_WORKER)
    _, answer = _killed_mid_audit(client, signal.SIGABRT)
    doc = assert_problem(answer, 503, "worker")
    assert "killed by signal 6 (SIGABRT)" in doc["detail"], doc["detail"]
    assert f"of the {_SMALL_WORKER} a worker process may use (OVREDUCE_MAX_WORKER_BYTES)" in doc["detail"], doc
    assert "likely cause" in doc["detail"] and "parser" not in doc["detail"], doc["detail"]


@pytest.mark.parametrize("at_once", [False, True])
def test_a_worker_killed_while_idle_is_replaced_before_the_next_job(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None], at_once: bool
) -> None:
    """Killed between jobs (the OOM killer, an operator), the next job asked once the death is known or at once
    (before the pool can see it): that job, which did nothing to it, gets a fresh worker and its answer, not a 503
    that blames its inputs."""
    client = make_client(concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    small = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    for _ in range(3 if at_once else 1):
        (pid,) = isolated.pids()
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not at_once and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        response = client.post(f"/v1/models/{small}/layers/{LAYER}/run", json={"backends": ["numpy"]})
        assert response.status_code == 200, response.text
        assert isolated.pids() != [pid] and len(isolated.pids()) == 1


def test_workers_end_with_a_server_that_was_killed(tmp_path: Any) -> None:
    """A server killed with SIGKILL stops no worker: one went on with its job for nobody, committed an upload to
    the store and evicted another model. Each worker now ends when the server process is gone."""
    import subprocess
    import sys

    code = (  # a job of 60 s, and its server killed once it runs
        "import asyncio, os, time\n"
        "from pathlib import Path\n"
        "from api.config import Settings\n"
        "from api.workers import IsolatedPool\n"
        "def job(context):\n"
        "    time.sleep(60)\n"
        "async def main(pool):\n"
        "    task = asyncio.create_task(pool.run('a job', job))\n"
        "    while not pool.pids():\n"
        "        await asyncio.sleep(0.05)\n"
        "    await asyncio.sleep(0.5)\n"
        "    print(pool.pids()[0], flush=True)\n"
        "    os._exit(9)\n"
        "if __name__ == '__main__':\n"
        f"    asyncio.run(main(IsolatedPool(1, 120, Settings(store=Path({str(tmp_path / 'store')!r})))))\n"
    )
    script = tmp_path / "server.py"
    script.write_text(code)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env={**os.environ, "PYTHONPATH": root})  # fmt: skip
    assert server.stdout is not None
    with server.stdout:
        line = server.stdout.readline()  # the worker holds the pipe too: read the line, wait for the server only
    server.wait(timeout=60)
    assert line.strip().isdigit(), line
    pid = int(line)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"worker {pid} outlived its server"


def test_busy_workers_are_503(
    make_client: Callable[..., TestClient], slow_model: tuple[bytes, bytes | None], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """One worker, three audits that each need more than the limit: the first holds the worker until it is stopped
    (504), or says its own limit ran out; of the two queued behind it, one at least is left with too little of its
    time to start and is withdrawn, never started (503 with Retry-After); none runs past its limit."""
    uploader = make_client()  # the same store, no hurry
    mid, small = (uploader.post("/v1/models", files=files(*model)).json()["id"] for model in (slow_model, rmsnorm))
    client = make_client(run_timeout_s=1.0, concurrency=1)
    for _ in range(5):  # a first job readies the one worker (it loads OpenVINO first), within the limit or again
        run = client.post(f"/v1/models/{small}/layers/{LAYER}/run", json={"backends": ["numpy"]})
        if run.status_code == 200:
            break
    assert run.status_code == 200, run.text
    url = f"/v1/models/{mid}/audit"
    first, first_out = _in_thread(lambda: client.post(url, json={"precision": "f32"}))
    time.sleep(0.2)
    second, second_out = _in_thread(lambda: client.post(url, json={"precision": "f32"}))
    time.sleep(0.1)
    third = client.post(url, json={"precision": "f32"})
    first.join(30)
    second.join(30)
    if first_out[0].status_code == 200:  # the audit's own limit ran out first (a ready worker gets there)
        assert "the time limit of" in first_out[0].json()["error"], first_out[0].text
    else:
        assert_problem(first_out[0], 504, "limit.time")
    queued = [second_out[0], third]
    assert all(r.status_code in (503, 504) for r in queued), [r.text for r in queued]
    busy = [r for r in queued if r.status_code == 503]
    assert busy, [r.text for r in queued]
    doc = assert_problem(busy[0], 503, "busy")
    assert busy[0].headers["retry-after"] == "5" and "not started" in doc["detail"]


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


_SMALL_WORKER = 256 << 20  # the least OVREDUCE_MAX_WORKER_BYTES takes


def _infer_ones(client: TestClient, mid: str, n: int) -> Any:
    """A KServe v2 binary inference of ``n`` FP16 ones into layer 3 (a ReduceSum of dynamic rank) of dynamic.xml."""
    raw = np.ones(n, np.float16).tobytes()
    tensor = {"name": "data", "datatype": "FP16", "shape": [n], "parameters": {"binary_data_size": len(raw)}}
    head = json.dumps({"inputs": [tensor]}).encode()
    headers = {"Inference-Header-Content-Length": str(len(head)), "Content-Type": "application/octet-stream"}
    return client.post(f"/v2/models/{mid}.3/infer", content=head + raw, headers=headers)


def test_a_job_whose_data_does_not_fit_its_worker_is_the_memory_limit(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """A job's data is unpickled in its worker, within the worker's bound: an upload or an input that does not fit
    there is 413 ``limit.memory`` (under /v2, 400) naming the setting, and its worker replaced; it was a worker death
    with a traceback in the log, retried on a fresh worker that died the same way, and answered 503 "retry once"."""
    client = make_client(max_worker_bytes=_SMALL_WORKER, concurrency=1, max_upload_bytes=1 << 30,
                         max_json_bytes=512 << 20, max_elements=1 << 30, max_output_elements=1 << 30)  # fmt: skip
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    events: list[str] = []
    isolated.on_event = events.append
    xml, weights = rmsnorm
    assert weights is not None
    (pid,) = isolated.pids()
    upload = client.post("/v1/check", files=files(xml, weights + bytes(200 << 20)))
    doc = assert_problem(upload, 413, "limit.memory")
    assert "does not fit" in doc["detail"] and f"{_SMALL_WORKER} bytes (OVREDUCE_MAX_WORKER_BYTES)" in doc["detail"]
    assert pid not in isolated.pids() and "worker_died" not in events, events  # one worker, replaced, not retried
    mid = client.post("/v1/models", files=files(*sample("dynamic"))).json()["id"]
    infer = _infer_ones(client, mid, 60_000_000)  # 120 MB of FP16
    assert infer.status_code == 400 and "OVREDUCE_MAX_WORKER_BYTES" in infer.json()["error"], infer.text
    assert "worker_died" not in events, events
    body = {"inputs": [{"name": "data", "datatype": "FP16", "shape": [3], "data": [1.0, 2.0, 3.0]}]}
    small = client.post(f"/v2/models/{mid}.3/infer", json=body)
    assert small.status_code == 200 and small.json()["outputs"][0]["data"] == [6.0], small.text


_PLUGIN_OUT_OF_MEMORY = """
import json, sys
from ovreduce._openvino import core
from ovreduce.backends.openvino import check_device
from ovreduce.errors import OvReduceError
from ovreduce.memory import bound_memory, data_size
core()  # OpenVINO loaded, its CPU plugin not yet: as a worker whose job's data filled it
bound_memory((data_size() or 0) + (256 << 10))
try:
    check_device("CPU")
    said = {"code": None}
except OvReduceError as exc:
    said = {"code": exc.code, "message": exc.message}
said["listed"] = list(core().available_devices)
print(json.dumps(said))
"""


def test_a_cpu_plugin_that_cannot_load_for_memory_is_the_memory_limit() -> None:
    """A worker whose job's data filled it before OpenVINO loaded its CPU plugin: the plugin fails to load, and
    OpenVINO's device list, which leaves out a plugin that fails, is empty. That was answered 503 "device 'CPU' is not
    available on this machine; available: none." (``backend.device``, "asking again does not bring it"); it is the
    memory limit, OpenVINO's reason said."""
    done = subprocess.run([sys.executable, "-c", _PLUGIN_OUT_OF_MEMORY], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["listed"] == [], said  # OpenVINO's own list, under the bound
    assert said["code"] == "limit.memory", said
    assert "could not load its CPU plugin for lack of memory" in said["message"], said
    assert "not available" not in said["message"], said


def test_an_input_that_fills_a_fresh_worker_is_the_memory_limit_not_a_missing_cpu(
    make_client: Callable[..., TestClient],
) -> None:
    """The same through the service: 40 MB of FP16 into a fresh worker at the least bound was 503 "device 'CPU' is not
    available on this machine" (or a worker killed by SIGABRT, OpenVINO's std::bad_alloc in a thread of its own),
    since the input filled the worker before OpenVINO loaded its CPU plugin. A worker loads it before its first job,
    and the answer is the memory limit."""
    client = make_client(max_worker_bytes=_SMALL_WORKER, concurrency=1, max_json_bytes=512 << 20,
                         max_elements=1 << 30, max_output_elements=1 << 30)  # fmt: skip
    mid = client.post("/v1/models", files=files(*sample("dynamic"))).json()["id"]
    for n in (20_000_000, 4_000_000):
        response = _infer_ones(client, mid, n)
        assert response.status_code == 400, (n, response.text)
        said = response.json()["error"]
        assert said.count("OVREDUCE_MAX_WORKER_BYTES") == 1 and "device" not in said, said  # (the bound named once)


def test_a_worker_at_the_least_bound_serves_job_after_job(make_client: Callable[..., TestClient]) -> None:
    """A worker with OpenVINO loaded holds over half of the least bound the setting takes: measured from nothing, it
    counted as worn after every job, and each request paid a fresh worker and OpenVINO's loading (0.5 s, not 0.01 s).
    A worker's growth is measured from what it holds when ready, so the same worker serves tiny runs one after
    another."""
    client = make_client(max_worker_bytes=_SMALL_WORKER, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    mid = client.post("/v1/models", files=files(*sample("dynamic"))).json()["id"]
    body = {"inputs": [{"name": "data", "datatype": "FP16", "shape": [4], "data": [1.0, 2.0, 3.0, 4.0]}]}
    pids = []
    for _ in range(4):
        response = client.post(f"/v2/models/{mid}.3/infer", json=body)
        assert response.status_code == 200 and response.json()["outputs"][0]["data"] == [10.0], response.text
        pids.append(isolated.pids())
    assert len(pids[0]) == 1 and pids == [pids[0]] * 4, pids


def test_a_worker_full_of_compiled_shapes_is_replaced_not_broken(make_client: Callable[..., TestClient]) -> None:
    """Each input shape a layer runs at is a compile, and the CPU plugin keeps its threads and buffers (about 18 MB of
    the worker's data each, never given back): at the worker's bound a thread could not start, and every later run
    of any model in that worker failed, blamed on its inputs. A worker holding half its bound between jobs is
    replaced, so tiny runs at ever new shapes all succeed."""
    client = make_client(max_worker_bytes=512 << 20, concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    mid = client.post("/v1/models", files=files(*sample("dynamic"))).json()["id"]
    seen: set[int] = set()
    for n in range(1, 41):
        body = {"inputs": [{"name": "data", "datatype": "FP16", "shape": [n], "data": [1.0] * n}]}
        response = client.post(f"/v2/models/{mid}.3/infer", json=body)
        assert response.status_code == 200, (n, response.text)
        assert response.json()["outputs"][0]["data"] == [float(n)]
        seen.update(isolated.pids())
    assert len(seen) > 1  # (replaced on the way)


def test_text_given_for_a_number_input_is_said_as_any_other_type_is(client: TestClient, rmsnorm_id: str) -> None:
    """BYTES data for an f32 input: on every route the words another type gets, naming the input and the type it
    takes, not NumPy's code for a text array (``<U1``) nor a refusal of "reductions of string data"."""
    text = {"shape": [1, 2, 64], "datatype": "BYTES", "data": ["a"] * 128}
    layer, model = "the layer expects", "the model declares it"  # (an audit's inputs are the whole model's)
    asks = [(f"/v1/models/{rmsnorm_id}/layers/{LAYER}/run", "0", "input 0 (data)", layer),
            (f"/v1/models/{rmsnorm_id}/audit", "hidden_states", "input 'hidden_states'", model),
            (f"/v2/models/{rmsnorm_id}.5/infer", "data", "input 0 (data)", layer)]  # fmt: skip
    for url, name, said, takes in asks:
        response = client.post(url, json={"inputs": [{**text, "name": name}]})
        detail = response.json().get("detail") or response.json()["error"]
        assert response.status_code == 400, response.text
        assert f"{said} holds BYTES (text) values but {takes} f32; give it f32 values" in detail, detail
