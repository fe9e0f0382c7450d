"""A model that never finishes: audit stops at its time limit and reports what it established.

The TorchScript export under tests/exports/loop_trip_count has a Loop whose trip count is an input; a negative
trip count makes OpenVINO's Loop run until its condition fails, which it never does here. OpenVINO cannot stop
that inference (``InferRequest.cancel`` does not end it), so the command ends its process at once after
writing its document, and the service replaces the worker that ran it. Each test runs the real thing, in a
process of its own where it would otherwise keep a CPU busy in the test run.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from ovreduce.audit import audit_model
from ovreduce.errors import InputError
from ovreduce.ir.parser import load_ir
from tests.api.conftest import files

LOOP = Path(__file__).resolve().parents[1] / "exports" / "loop_trip_count" / "model.xml"


def _forever(tmp_path: Path) -> Path:
    path = tmp_path / "n.npy"
    np.save(path, np.array(-1, np.int64))
    return path


def test_the_command_stops_at_its_time_limit_and_says_what_it_established(tmp_path: Path) -> None:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ovreduce.cli", "audit", str(LOOP), "--input", f"n.1={_forever(tmp_path)}",
         "--timeout", "2", "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    took = time.monotonic() - start
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["error"] == "OpenVINO did not finish the audited run of the model: the time limit of 2 s ran out"
    assert {i["name"]: i["origin"] for i in doc["inputs"]}["n.1"] == "given"
    assert doc["complete"] is False and doc["coverage"] == {"reductions": 4, "not-audited": 4}
    top = next(layer for layer in doc["layers"] if layer["body_path"] is None)
    assert top["not_established"] == "the time limit of 2 s ran out during the audited run"
    branches = [layer for layer in doc["layers"] if (layer["body_path"] or "").endswith(("/then", "/else"))]
    assert branches and all("ran out during the audited run" in layer["not_established"] for layer in branches)
    assert took < 60  # it did not wait for the Loop


def test_a_trip_count_it_makes_itself_finishes() -> None:
    """Without a given trip count, the audit makes one (3): the same model finishes, well within the limit."""
    model = load_ir(LOOP)
    try:
        doc = audit_model(model, precision="f32", timeout=60)
    finally:
        model.close()
    assert doc.error is None and doc.ok


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_time_limit_must_be_a_positive_number(timeout: float) -> None:
    model = load_ir(LOOP)
    try:
        with pytest.raises(InputError, match="timeout must be a positive number of seconds"):
            audit_model(model, timeout=timeout)
    finally:
        model.close()


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_the_timeout_option_takes_positive_seconds(value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(LOOP), "--timeout", value],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert f"argument --timeout: {value!r} is not a positive number of seconds" in done.stderr


def test_the_service_answers_with_what_it_established_and_replaces_the_worker(tmp_path: Path) -> None:
    settings = Settings(store=tmp_path / "store", run_timeout_s=10.0)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        _stops_and_recovers(client)


def _stops_and_recovers(client: TestClient) -> None:
    bin_data = LOOP.with_suffix(".bin").read_bytes()
    mid = client.post("/v1/models", files=files(LOOP.read_bytes(), bin_data, "loop.xml")).json()["id"]
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    first = client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"})  # a trip count of 3: it finishes
    assert first.status_code == 200 and first.json()["error"] is None, first.text
    (worker,) = isolated.pids()
    forever = {"inputs": [{"name": "n.1", "shape": [], "datatype": "INT64", "data": [-1]}], "precision": "f32"}
    response = client.post(f"/v1/models/{mid}/audit", json=forever)
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["error"] == "OpenVINO did not finish the audited run of the model: the time limit of 8 s ran out"
    assert isolated.pids() == []  # the worker that still runs the Loop is gone
    again = client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"})
    assert again.status_code == 200 and again.json()["error"] is None  # a fresh worker
    assert isolated.pids() != [worker]
    assert client.get("/healthz").status_code == 200


def test_a_time_limit_that_cuts_the_audit_short_is_never_a_pass(tmp_path: Path) -> None:
    """Wherever the limit falls (during a run, or while the reductions are checked), the audit did not finish:
    not ok, with an error that says so. Rows left unchecked once made an ok document."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([2, 3, 8], np.float32, name="x")
    outputs = [ops.reduce_sum(ops.multiply(x, ops.constant(np.float32(i + 1))), ops.constant(np.array([i % 3])), True)
               for i in range(12)]  # fmt: skip
    ov.save_model(ov.Model(outputs, [x]), tmp_path / "m.xml", compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    for _ in range(3):
        document = audit_model(model, precision="f32", timeout=0.001)
        doc = document.to_json()
        assert not doc["ok"] and "did not finish" in doc["error"], doc["error"]
        if doc["layers"] and all(layer["status"] == "not-audited" for layer in doc["layers"]):  # listed in text too
            from ovreduce.cli.render.text import audit_text

            text = audit_text(document)
            assert all(f"{layer['layer_name']}' ReduceSum: not audited" in text for layer in doc["layers"]), text


@pytest.mark.parametrize("timeout", [3e6, math.inf, 0.0])
def test_a_time_limit_openvino_cannot_wait_for_is_refused(timeout: float) -> None:
    with pytest.raises(InputError, match="timeout must be a positive number of seconds up to 2147483 \\(24 days\\)"):
        audit_model(load_ir(LOOP), timeout=timeout)


def _audit_forever(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    """The ``ovreduce`` program auditing the never-ending Loop, once it runs the inference (it says so on stderr)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ovreduce.cli", "audit", str(LOOP), "--input", f"n.1={_forever(tmp_path)}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    time.sleep(8)  # read, compiled, and in OpenVINO's inference (which never ends)
    assert process.poll() is None, process.communicate()
    return process


def _ended(process: subprocess.Popen[str], within: float) -> tuple[str, str, float]:
    start = time.monotonic()
    try:
        out, err = process.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"still running {within:.0f} s after the signal")
    return out, err, time.monotonic() - start


@pytest.mark.parametrize("extra", [(), ("--timeout", "300")])
def test_an_interrupt_during_the_inference_ends_the_command_at_once(tmp_path: Path, extra: tuple[str, ...]) -> None:
    """SIGINT (Ctrl-C; ``kill -INT``, which the program passes on to its command) while OpenVINO runs an inference
    that never ends: the command is interrupted, exit 130, without waiting for the inference it cannot stop."""
    process = _audit_forever(tmp_path, *extra)
    process.send_signal(signal.SIGINT)
    _out, err, took = _ended(process, 30)
    assert process.returncode == 130, err
    assert err.endswith("ovreduce: interrupted\n") and "Traceback" not in err, err
    assert took < 15


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_termination_during_the_inference_ends_the_command_at_once(tmp_path: Path, number: int) -> None:
    """SIGTERM and SIGHUP end the program by that signal, as promptly."""
    process = _audit_forever(tmp_path, "--timeout", "300")
    process.send_signal(number)
    _out, err, took = _ended(process, 30)
    assert process.returncode == -number, err
    assert "Traceback" not in err, err
    assert took < 15


@pytest.mark.skipif(sys.platform != "linux", reason="a child's end with its parent is the system's (Linux)")
@pytest.mark.parametrize("number", [signal.SIGKILL, signal.SIGUSR1])
def test_the_command_ends_with_the_program_whatever_ends_it(tmp_path: Path, number: int) -> None:
    """A signal the program does not pass on (SIGKILL: ``timeout -k``, the OOM killer; SIGUSR1) ended the program at
    once, and its child ran OpenVINO's inference on until its time limit, holding the caller's pipes open: the caller
    waited for the limit. The child ends with the program."""
    process = _audit_forever(tmp_path, "--timeout", "300")
    process.send_signal(number)
    _ended(process, 30)  # the pipes closed: no process holds them
    assert process.returncode == -number
