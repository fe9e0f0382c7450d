"""End to end: :func:`api.server.serve` in a real process on 127.0.0.1, two of them sharing one store, several
workers, and what importing the application does (nothing)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from .conftest import PROBLEM, ROOT, assert_problem, files, sample
from .irs import reduce_ir

pytestmark = pytest.mark.timeout(120)

# api.server.serve(Settings(**argv[1]["settings"]), **the rest of argv[1]): settings not given come from
# OVREDUCE_* variables, as Settings() reads them.
_SERVE = """
import json, sys
from api.config import Settings
from api.server import serve
options = json.loads(sys.argv[1])
serve(Settings(**options.pop("settings")), **options)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _environment(**env: str) -> dict[str, str]:
    """This environment without any OVREDUCE_* variable, plus ``env``; this checkout's packages first."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OVREDUCE_")}
    return {**clean, "PYTHONPATH": str(ROOT), **env}


def _start(
    store: Path, workers: int, settings: dict[str, Any] | None, memory: int | None, graceful: int, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = _free_port()
    options = {
        "settings": {"host": "127.0.0.1", "port": port, "store": str(store), **(settings or {})},
        "workers": workers,
        "access_log": False,
        "log_level": "warning",
        "graceful_timeout": graceful,
    }
    log = store.parent / f"server-{port}.log"
    store.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE, json.dumps(options)],
            cwd=ROOT, env=_environment(**env), stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=None if memory is None else lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory)),
        )  # fmt: skip
    proc.log = log  # type: ignore[attr-defined]
    return proc, f"http://127.0.0.1:{port}", log


@contextmanager
def serve(
    store: Path,
    *,
    workers: int = 1,
    settings: dict[str, Any] | None = None,
    memory: int | None = None,
    graceful_timeout: int = 10,
    **env: str,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``api.server.serve`` on a free port of 127.0.0.1 with ``store``, ready; stopped with SIGTERM. ``memory``
    limits the address space of the server and of every process it starts (RLIMIT_AS, inherited)."""
    for attempt in range(3):
        proc, url, log = _start(store, workers, settings, memory, graceful_timeout, env)
        deadline = time.monotonic() + 60
        while proc.poll() is None:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.1)
        # a port found free may be taken before the server binds it (test files run at once): start on another
        if proc.poll() is None or b"address already in use" not in log.read_bytes().lower() or attempt == 2:
            break
    assert proc.poll() is None, log.read_text()
    try:
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _stop(proc: subprocess.Popen[bytes]) -> float:
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0, proc.log.read_text()  # type: ignore[attr-defined]
    return time.monotonic() - start


def test_serve_upload_run_and_stop(tmp_path: Path) -> None:
    store = tmp_path / "store"
    # a minute per request: the first run starts the fork server (OpenVINO imported), over 5 s under load
    with (
        serve(store, OVREDUCE_MAX_UPLOAD_BYTES=str(1 << 20)) as (url, proc),
        httpx.Client(base_url=url, timeout=60) as http,
    ):
        assert http.get("/healthz").json() == {"status": "ok"}
        page = http.get("/")
        assert page.status_code == 200 and "<title>ovreduce" in page.text
        assert http.get("/docs").status_code == 200
        xml, bin_data = sample("rmsnorm")
        up = http.post("/v1/models", files=files(xml, bin_data, name="rmsnorm.xml"))
        assert up.status_code == 201, up.text
        mid = up.json()["id"]
        layers = http.get(f"/v1/models/{mid}/layers").json()["layers"]
        assert [entry["layer_name"] for entry in layers] == ["rmsnorm/variance"]
        run = http.post(
            f"/v1/models/{mid}/layers/rmsnorm%2Fvariance/run", json={"seed": 3, "shapes": {"0": "[1,2,64]"}}
        )
        assert run.status_code == 200, run.text
        doc = run.json()
        assert doc["ok"] and [o["name"] for o in doc["outputs"]] == ["numpy", "openvino:CPU"]
        assert doc["outputs"][0]["shape"] == [1, 2, 1]
        check = http.post("/v1/check", files=files(xml, bin_data, name="rmsnorm.xml"))
        assert check.status_code == 200 and check.json()["ok"] is True
        # a literal %2F in a name: decoded exactly once by the real server
        xml2, bin2 = reduce_ir("a%2Fb:c/d")
        mid2 = http.post("/v1/models", files=files(xml2, bin2)).json()["id"]
        encoded = quote("a%2Fb:c/d", safe="")
        assert http.get(f"/v1/models/{mid2}/layers/{encoded}").json()["layer_name"] == "a%2Fb:c/d"
        assert http.post(f"/v1/models/{mid2}/layers/{encoded}/run", json={"backends": ["numpy"]}).status_code == 200
        _early_413(url)
        assert http.get("/healthz").status_code == 200
        seconds = _stop(proc)  # serve() would too; here the exit status and the time it takes are checked
    assert seconds < 5
    assert (store / "models" / mid / "model.bin").read_bytes() == bin_data  # survives the process


def _early_413(url: str) -> None:
    """Bodies over the limit are answered 413 problem+json before they are read to the end."""
    host, port = url.removeprefix("http://").split(":")
    # 1. a declared Content-Length over the limit: answered at once, nothing of the body sent
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                     b"Content-Length: 104857600\r\n\r\n")  # fmt: skip
        status, headers, body = _read_response(sock)
    assert status == 413 and headers["content-type"] == PROBLEM and json.loads(body)["code"] == "limit.body"
    # 2. chunked, no Content-Length: answered once 1 MiB has streamed in, with 2 of the 100 MiB sent
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
        part = b'--b\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n'
        sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        chunk = b"x" * 65536
        for _ in range(32):
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, headers, body = _read_response(sock)
    assert status == 413 and headers["content-type"] == PROBLEM and json.loads(body)["code"] == "limit.body"


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        assert part, data
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))  # (none: a 100 Continue)
    while len(body) < length:
        part = sock.recv(65536)
        assert part
        body += part
    return int(lines[0].split()[1]), headers, body[:length]


def test_the_refusals_of_the_http_layer_are_counted(tmp_path: Path) -> None:
    """The answers the HTTP protocol writes itself, below the app (bytes that are not a request, a head too slow or
    too large as it arrives), are counted as requests no route serves, under their request line's method ("other"
    where there is none); only a 431 whose head arrived whole was counted."""
    big = b"POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * (20 << 10) + b"\r\n\r\n"
    refused = {  # what is sent, its pieces' size: status
        (b"GET /v1/devices HTTP/1.1\r\n\r\n", 0): 400,  # no Host
        (b"GET /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 0): 400,
        (b"PUT /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad header\r\n\r\n", 0): 400,
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 0): 400,  # TLS, to the plain HTTP port
        (big, 4096): 431,
        (b"DELETE /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n", 0): 408,  # and nothing more
    }
    with serve(tmp_path / "store", settings={"header_timeout_s": 1.0}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        for (request, piece), expected in refused.items():
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                for start in range(0, len(request), piece or len(request)):
                    sock.sendall(request[start : start + (piece or len(request))])
                    time.sleep(0.05 if piece else 0)
                assert _read_response(sock)[0] == expected, request[:40]
        scraped = httpx.get(f"{url}/metrics").text.splitlines()
        counted = [line for line in scraped if line.startswith("ovreduce_http_requests_total{") and "/" not in line]
    unmatched = 'ovreduce_http_requests_total{method="%s",route="<unmatched>",status="%s"} %s'
    assert sorted(counted) == sorted([unmatched % ("GET", 400, 2.0), unmatched % ("PUT", 400, 1.0),
                                      unmatched % ("other", 400, 1.0), unmatched % ("POST", 431, 1.0),
                                      unmatched % ("DELETE", 408, 1.0)]), counted  # fmt: skip


def test_two_processes_share_one_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    models = [reduce_ir(f"m{i}", axes=(i % 2,)) for i in range(10)]
    models.append(sample("rmsnorm"))  # type: ignore[arg-type]
    with serve(store) as (url_a, proc_a), serve(store) as (url_b, proc_b):
        jobs = [(url, m) for m in models for url in (url_a, url_b)] + [(url_b, m) for m in models[:4]]

        def upload(job: tuple[str, tuple[bytes, bytes | None]]) -> tuple[int, str]:
            url, (xml, bin_data) = job
            response = httpx.post(f"{url}/v1/models", files=files(xml, bin_data), timeout=60)
            assert "id" in response.json(), response.text
            return response.status_code, response.json()["id"]

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(upload, jobs))
        assert {status for status, _ in results} <= {200, 201}
        ids = {mid for _, mid in results}
        assert len(ids) == len(models)
        for mid in ids:  # created exactly once, whichever process won
            assert sum(status == 201 for status, m in results if m == mid) == 1
        for (xml, bin_data), mid in zip(models, [results[2 * i][1] for i in range(len(models))], strict=True):
            assert mid == hashlib.sha256(len(xml).to_bytes(8, "big") + xml + (bin_data or b"")).hexdigest()
            for url in (url_a, url_b):
                assert httpx.get(f"{url}/v1/models/{mid}").status_code == 200
                layer = httpx.get(f"{url}/v1/models/{mid}/layers").json()["layers"][0]["layer_id"]
                run = httpx.post(f"{url}/v1/models/{mid}/layers/{layer}/run", json={"backends": ["numpy"]}, timeout=60)
                assert run.status_code == 200, run.text
        listed_a = {m["id"] for m in httpx.get(f"{url_a}/v1/models").json()["models"]}
        assert listed_a == ids == {m["id"] for m in httpx.get(f"{url_b}/v1/models").json()["models"]}
        # deleted through one process, gone for the other
        victim = sorted(ids)[0]
        assert httpx.delete(f"{url_a}/v1/models/{victim}").status_code == 204
        assert httpx.get(f"{url_b}/v1/models/{victim}").status_code == 404
        _stop(proc_a)
        _stop(proc_b)
    _assert_complete(store, ids - {victim})


def _assert_complete(store: Path, ids: set[str]) -> None:
    """Every model folder whole (files the sizes meta.json says), no partial files left anywhere."""
    assert {p.name for p in (store / "models").iterdir()} == ids
    for mid in ids:
        folder = store / "models" / mid
        meta: dict[str, Any] = json.loads((folder / "meta.json").read_bytes())
        assert meta["id"] == mid
        assert (folder / "model.xml").stat().st_size == meta["xml_bytes"]
        if meta["bin_bytes"]:
            assert (folder / "model.bin").stat().st_size == meta["bin_bytes"]
        assert (folder / "used").exists()
    assert list((store / "tmp").iterdir()) == []


def test_several_workers_refuse_new_connections_once_told_to_stop(tmp_path: Path) -> None:
    """After SIGTERM, while a request under way holds the workers in their graceful shutdown, a new connection is
    refused at once: the supervisor kept the listening socket, and new clients waited on it, then were reset."""
    with serve(tmp_path / "store", workers=2) as (url, proc):
        host, port = url.removeprefix("http://").split(":")
        busy = socket.create_connection((host, int(port)))  # a body that is still coming: the request is under way
        busy.sendall(b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                     b"boundary=B\r\nContent-Length: 1000\r\n\r\n--B\r\n")  # fmt: skip
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        time.sleep(2)
        try:
            assert proc.poll() is None  # still stopping: the request under way has its graceful time
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((host, int(port)), timeout=5).close()
        finally:
            busy.close()


def test_workers_end_with_a_supervisor_that_was_killed(tmp_path: Path) -> None:
    """SIGKILL of the supervisor (``--workers 2``) stops none of its uvicorn workers: they went on answering on the
    shared port for ever, and a new server could not listen on it. Each now stops once the supervisor is gone."""
    with serve(tmp_path / "store", workers=2) as (url, proc):
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True)
        pids = [int(pid) for pid in children.stdout.split()]
        assert pids
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in pids if _running(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"{left} outlived their supervisor"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/healthz", timeout=5)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie, not yet reaped by init, has)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_settings_reach_every_worker_without_the_environment(tmp_path: Path) -> None:
    """Two worker processes get the Settings object itself: no OVREDUCE_* variable is set anywhere."""
    store = tmp_path / "only-in-settings"
    with serve(store, workers=2, settings={"store_max_bytes": 54321}) as (url, proc):
        for _ in range(8):  # a new connection each: the two workers take turns accepting them
            listing = httpx.get(f"{url}/v1/models", timeout=10)
            assert listing.json() == {"models": [], "total_bytes": 0, "max_bytes": 54321}
        xml, bin_data = reduce_ir("sum")
        assert httpx.post(f"{url}/v1/models", files=files(xml, bin_data), timeout=30).status_code == 201
        assert (store / "models").is_dir()
        seconds = _stop(proc)
    assert seconds < 10


def test_listen_failure_is_a_serve_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = {"settings": {"host": "127.0.0.1", "port": port, "store": str(tmp_path / "store")}, "workers": 2}
        done = subprocess.run(
            [sys.executable, "-c", _SERVE, json.dumps(options)],
            cwd=ROOT, env=_environment(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"api.server.ServeError: cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("folder", ["missing", "", "file"])
def test_a_metrics_folder_the_server_cannot_write_is_a_serve_error(tmp_path: Path, folder: str) -> None:
    """prometheus_client's multiprocess mode writes each process's counts there: with several workers, each died as it
    started and uvicorn started it again, for ever."""
    (tmp_path / "file").write_text("")
    path = str(tmp_path / folder) if folder else ""
    options = {"settings": {"host": "127.0.0.1", "port": _free_port(), "store": str(tmp_path / "store")}, "workers": 2}
    done = subprocess.run(
        [sys.executable, "-c", _SERVE, json.dumps(options)],
        cwd=ROOT, env=_environment() | {"PROMETHEUS_MULTIPROC_DIR": path}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"api.server.ServeError: PROMETHEUS_MULTIPROC_DIR={path!r}: expected an existing folder" in done.stderr


def test_an_application_that_cannot_start_is_a_serve_error(tmp_path: Path) -> None:
    """The application's startup fails (an extension OpenVINO refuses): ServeError, which ``ovreduce serve`` says as
    a usage error; uvicorn's own exit (status 3, as an internal error) was let through."""
    (tmp_path / "libnot.so").write_text("not a library")
    settings = {"host": "127.0.0.1", "port": _free_port(), "store": str(tmp_path / "store"),
                "extensions": str(tmp_path / "libnot.so")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _SERVE, json.dumps({"settings": settings, "workers": 1})],
        cwd=ROOT, env=_environment(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "api.server.ServeError: the application did not start (see the log above)" in done.stderr


def test_ctrl_c_as_the_application_starts_stops_the_server_as_asked(tmp_path: Path) -> None:
    """A terminal's Ctrl-C (SIGINT to the whole process group) pressed as the application starts, while the fork
    server imports: the server stops as asked, exit 0, without a traceback. The fork server died of it with one, and
    the server's start with it: "the application did not start [usage]", exit 2."""
    argv = [sys.executable, "-m", "ovreduce.cli", "serve", "--port", str(_free_port()), "--store", str(tmp_path / "s")]
    paths = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    proc = subprocess.Popen(argv, cwd=ROOT, env=_environment(PYTHONPATH=paths), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    assert proc.stderr is not None
    said = []
    try:
        for line in iter(proc.stderr.readline, b""):
            said.append(line.decode(errors="replace"))
            if "Waiting for application startup" in said[-1]:
                time.sleep(0.5)  # the fork server is importing
                os.killpg(proc.pid, signal.SIGINT)
                break
        said.append(proc.communicate(timeout=60)[1].decode(errors="replace"))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    text = "".join(said)
    assert "Waiting for application startup" in text and proc.returncode == 0 and "Traceback" not in text, text


def test_importing_the_application_makes_nothing(tmp_path: Path) -> None:
    """No app, no store directory, no uvicorn: the factory and serve() do the work when called."""
    store = tmp_path / "store"
    code = """
import gc, sys
import api.main, api.server
from fastapi import FastAPI
assert not hasattr(api.main, "app"), "api.main has a module-level app"
assert not [o for o in gc.get_objects() if isinstance(o, FastAPI)], "an app was made at import"
assert not [m for m in sys.modules if m.split(".")[0] == "uvicorn"], "uvicorn was imported"
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=_environment(OVREDUCE_STORE=str(store)),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not store.exists()


# -- hostile clients against the real server -------------------------------------------------------------
def test_an_oversize_request_head_is_431_however_it_arrives(tmp_path: Path) -> None:
    """A request line and header fields over 16 KiB are the same 431 whether they arrive in one write (the server
    reads the head whole) or in pieces (its HTTP parser gives up on the head as it grows); under ``/v2`` in
    KServe's ``{"error"}`` either way (it was problem+json in pieces, which KServe's clients cannot read)."""
    big_header = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (20 << 10) + b"\r\n\r\n"
    long_target = b"GET /healthz?" + b"a" * (40 << 10) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with serve(tmp_path / "store") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        for request in (big_header.replace(b"/healthz", b"/v2/health/ready"), b"GET http://127.0.0.1/v2%2Fx" +
                        long_target[len(b"GET /healthz"):]):  # fmt: skip
            for piece in (len(request), 4096):
                with socket.create_connection((host, int(port)), timeout=30) as sock:
                    for start in range(0, len(request), piece):
                        if select.select([sock], [], [], 0)[0]:
                            break
                        sock.sendall(request[start : start + piece])
                        time.sleep(0.05 if piece < len(request) else 0)
                    status, headers, answer = _read_response(sock)
                assert status == 431 and headers["content-type"] == "application/json", (piece, request[:40], answer)
                assert "more than the limit of 16384" in json.loads(answer)["error"]
        for request in (big_header, long_target):
            for piece in (len(request), 4096):
                with socket.create_connection((host, int(port)), timeout=30) as sock:
                    for start in range(0, len(request), piece):
                        if select.select([sock], [], [], 0)[0]:  # answered: the rest would not be read
                            break
                        sock.sendall(request[start : start + piece])
                        time.sleep(0.05 if piece < len(request) else 0)
                    status, headers, answer = _read_response(sock)
                doc = json.loads(answer)
                assert (status, doc["code"]) == (431, "request.headers"), (piece, request[:40], doc)
                assert headers["content-type"] == PROBLEM and "more than the limit of 16384" in doc["detail"], doc


def test_the_protocols_own_answer_takes_the_form_of_the_request_it_answers(tmp_path: Path) -> None:
    """Bytes that break HTTP in a pipelined request are answered in the form of that request's target: a second
    /v2 request behind a good one got problem+json, and a /v1 request whose later header line held "/v2/x" got
    KServe's {"error"}; so did a broken head with its body or the next request in the same read (the target was
    looked for in what followed the head)."""
    host = b"Host: 127.0.0.1\r\n"
    cases = [
        ([b"GET /v2/health/live HTTP/1.1\r\n" + host + b"\r\nGET /v2/health/live HTTP/1.1\r\n" + host
          + b"Bad\x00: x\r\n\r\n"], "application/json"),
        ([b"GET /healthz HTTP/1.1\r\n" + host + b"\r\nGET /v1/models HTTP/1.1\r\n",
          b"Foo: /v2/x\r\nBad\x00: y\r\n\r\n"], PROBLEM),
        # the broken head's body, or the next request, in the same read: the answer is still the broken one's
        ([b"POST /v2/repository/index HTTP/1.1\r\n" + host + host + b"Content-Length: 2\r\n\r\n{}"],
         "application/json"),
        ([b"POST /v1/check HTTP/1.1\r\n" + host + host + b"Content-Length: 0\r\n\r\nGET /v2 HTTP/1.1\r\n" + host
          + b"\r\n"], PROBLEM),
    ]  # fmt: skip
    with serve(tmp_path / "store") as (url, _):
        host_name, port = url.removeprefix("http://").split(":")
        for parts, media in cases:
            with socket.create_connection((host_name, int(port)), timeout=30) as sock:
                for part in parts:
                    sock.sendall(part)
                    time.sleep(0.3)
                received = b""
                while chunk := sock.recv(65536):  # the server closes the connection after the 400
                    received += chunk
            last = received[[m.start() for m in re.finditer(rb"HTTP/1\.1 \d{3} ", received)][-1] :]
            head, _, body = last.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400") and f"content-type: {media}".encode() in head.lower(), last
            assert ("error" in json.loads(body)) == (media == "application/json"), body


def test_oversize_bodies_get_413_not_a_reset(tmp_path: Path) -> None:
    """A client that sends its whole body before it reads (no Expect: 100-continue) gets the 413 answer."""
    with serve(tmp_path / "store", settings={"max_json_bytes": 1 << 20}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        body = b"[" + b"0," * (3 << 20) + b"0]"  # 6 MiB of JSON, 6 times the limit
        mid = httpx.post(f"{url}/v1/models", files=files(*sample("rmsnorm")), timeout=60).json()["id"]  # (stored)
        head = (b"POST /v1/models/%s/layers/x/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                % mid.encode())  # fmt: skip
        # 1. Content-Length over the limit, the whole body sent at once
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
            status, headers, answer = _read_response(sock)
            assert sock.recv(1) == b""  # then closed, cleanly
        assert status == 413 and headers["content-type"] == PROBLEM and json.loads(answer)["code"] == "limit.body"
        # 2. chunked, sent whole before reading
        chunks = b"".join(
            b"%x\r\n%s\r\n" % (len(c), c) for c in (body[i : i + 65536] for i in range(0, len(body), 65536))
        )
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
            status, headers, answer = _read_response(sock)
        assert status == 413 and json.loads(answer)["code"] == "limit.body"
        # 3. Expect: 100-continue: answered at once, never asked for the body
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
            status, headers, answer = _read_response(sock)
        assert status == 413
        # 4. an Expect of another value (empty, unknown) asks for no go-ahead: the body, sent whole, is drained too
        for expect in (b"", b"something-else"):
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(head + b"Expect: %s\r\nContent-Length: %d\r\n\r\n" % (expect, len(body)) + body)
                status, headers, answer = _read_response(sock)
                assert sock.recv(1) == b""
            assert status == 413, expect
        # 5. a foreign Host with a large body: 400, also without a reset
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(
                head.replace(b"127.0.0.1", b"evil.example") + b"Content-Length: 900000\r\n\r\n" + body[:900000]
            )
            status, headers, answer = _read_response(sock)
        assert status == 400 and json.loads(answer)["code"] == "request.host"
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_a_chunk_that_declares_more_than_the_limit_is_413_at_once(tmp_path: Path) -> None:
    """A chunked body whose chunk declares more than the limit (1 TiB, or the 2**80 of h11's 20 hex digits), its
    first byte sent: 413 as soon as that byte arrives, as for the same size in Content-Length; not a wait for the
    chunk until the body timeout, answered 408 as if the client were slow."""
    with serve(tmp_path / "store", settings={"body_timeout_s": 20}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        mid = httpx.post(f"{url}/v1/models", files=files(*sample("rmsnorm")), timeout=60).json()["id"]  # (stored)
        head = (b"POST /v1/models/%s/layers/x/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n" % mid.encode())  # fmt: skip
        for size in (b"10000000000", b"f" * 20):
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                started = time.monotonic()
                sock.sendall(head + size + b"\r\n{")
                status, _, answer = _read_response(sock)
            assert status == 413 and time.monotonic() - started < 10, (size, status, answer)


def test_refusals_the_head_decides_never_ask_for_the_body(tmp_path: Path) -> None:
    """A client that sends ``Expect: 100-continue`` is answered a refusal its request's head decides (an unknown
    KServe model or version, a /v1 model the store does not hold, a body in a media type the route does not read, a
    query parameter's value refused, an Inference-Header-Content-Length that is no length within the Content-Length)
    at once, never asked for its body. A KServe model is unknown by its name's form, and by the store: a model id not
    stored, or a stored model's layer that is no reduction of it (its stored summary says)."""
    with serve(tmp_path / "store") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        mid = httpx.post(f"{url}/v1/models", files=files(*sample("rmsnorm")), timeout=60).json()["id"]
        cases = [("/v2/models/not-a-model-name/infer", "application/json", 404),
                 (f"/v2/models/{'0' * 64}.5/versions/2/infer", "application/json", 404),
                 (f"/v2/models/{'ab' * 32}.5/infer", "application/json", 404),
                 (f"/v2/models/{mid}.999/infer", "application/json", 404),
                 (f"/v2/models/{mid}.5-then-2/versions/1/infer", "application/json", 404),
                 (f"/v1/models/{'0' * 64}/audit", "text/plain", 415),
                 (f"/v1/models/{'0' * 64}/layers/5/run", "application/x-www-form-urlencoded", 415),
                 (f"/v1/models/{'0' * 64}/layers/5/run", "application/json", 404),
                 (f"/v1/models/{'AB' * 32}/audit", "application/json", 404),
                 ("/v1/check?engine=bogus", "multipart/form-data; boundary=x", 400),
                 ("/v1/check?reshape=x=[1", "multipart/form-data; boundary=x", 400),
                 ("/v1/conform?seed=-1", "multipart/form-data; boundary=x", 400),
                 ("/v1/conform?shape=x", "multipart/form-data; boundary=x", 400),
                 (f"/v2/models/{mid}.5/infer", "application/json\r\nInference-Header-Content-Length: abc", 400),
                 (f"/v2/models/{mid}.5/infer", "application/json\r\nInference-Header-Content-Length: 4000001", 400),
                 (f"/v2/models/{mid}.5/infer", "application/json\r\nInference-Header-Content-Length: 9\r\n"
                                               "Inference-Header-Content-Length: 9", 400)]  # fmt: skip
        for path, media, code in cases:
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {media}\r\nExpect: "
                             f"100-continue\r\nContent-Length: 4000000\r\n\r\n".encode())  # fmt: skip
                status, _, _ = _read_response(sock)
            assert status == code, (path, media, status)


class _SlowClient:
    """A connection that sends a request head one header line at a time and never finishes it."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=60)
        self.sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        self.lines = 0

    def trickle(self) -> bool:
        """One more header line; False once the server has closed the connection."""
        try:
            self.sock.sendall(b"X-Slow-%d: x\r\n" % self.lines)
        except OSError:
            return False
        self.lines += 1
        return True


def test_the_unread_rest_of_an_answered_request_cannot_hold_its_connection(tmp_path: Path) -> None:
    """A request answered without its body being read (GET /healthz with a body), whose client then drips bytes of
    that body: the connection is closed OVREDUCE_HEADER_TIMEOUT_S after the answer, however it drips."""
    with serve(tmp_path / "store", settings={"header_timeout_s": 2.0}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{")
            status, _, _ = _read_response(sock)
            assert status == 200
            started = time.monotonic()
            closed = False
            while time.monotonic() - started < 15 and not closed:
                time.sleep(0.5)
                try:
                    sock.sendall(b"a")  # a byte of the body every half second
                    sock.settimeout(0.01)
                    closed = sock.recv(1) == b""
                except TimeoutError:
                    pass
                except OSError:
                    closed = True
                finally:
                    sock.settimeout(30)
            assert closed and time.monotonic() - started < 6, time.monotonic() - started


def test_content_length_beside_chunked_is_refused_and_closed(tmp_path: Path) -> None:
    """A request with both framings (a smuggling attempt through any proxy that reads the other one) is 400 and
    its connection closed: the request hidden in its body is never answered."""
    with serve(tmp_path / "store") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        body = b'a\r\n{"seed":1}\r\n0\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        head = (b"POST /v1/models/%s/layers/x/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" % (b"0" * 64))  # fmt: skip
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head + body)
            status, _, answer = _read_response(sock)
            assert status == 400 and json.loads(answer)["code"] == "request.invalid", answer
            assert b"Transfer-Encoding and Content-Length" in answer
            assert sock.recv(65536) == b""  # closed: no second answer


def test_a_stalled_body_is_answered_408_and_frees_its_slot(tmp_path: Path) -> None:
    """Clients that send headers and part of a body, then nothing, are answered 408 and closed once
    OVREDUCE_BODY_TIMEOUT_S passes: they do not hold the OVREDUCE_MAX_REQUESTS slots for ever."""
    with serve(tmp_path / "store", settings={"body_timeout_s": 2.0, "max_requests": 4}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        heads = [b"POST /v2/repository/index HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{",
                 b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
                 b"Content-Type: multipart/form-data; boundary=b\r\n\r\n100\r\n--b"] * 2  # fmt: skip
        stalled = []
        for head in heads:
            sock = socket.create_connection((host, int(port)), timeout=30)
            sock.sendall(head)
            stalled.append(sock)
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                assert http.get("/v1/models").status_code == 503  # every slot is held...
                for head, sock in zip(heads, stalled, strict=True):
                    status, _, answer = _read_response(sock)  # ...until the deadline
                    doc = json.loads(answer)
                    if head.startswith(b"POST /v2"):  # KServe's clients read {"error"}
                        assert status == 408 and list(doc) == ["error"], answer
                        assert "OVREDUCE_BODY_TIMEOUT_S" in doc["error"]
                    else:
                        assert status == 408 and doc["code"] == "request.timeout", answer
                        assert "OVREDUCE_BODY_TIMEOUT_S" in doc["detail"]
                    assert sock.recv(1) == b""  # closed
                assert http.get("/v1/models").status_code == 200
        finally:
            for sock in stalled:
                sock.close()


def _unread(sock: socket.socket) -> int:
    """The bytes waiting in ``sock``'s receive buffer."""
    count: int = struct.unpack("i", fcntl.ioctl(sock, termios.FIONREAD, b"\0" * 4))[0]
    return count


def test_clients_that_read_none_of_their_answers_lose_their_slots(tmp_path: Path) -> None:
    """Clients that pipeline requests for large answers and read nothing hold every request slot while their answers
    wait on them; OVREDUCE_HEADER_TIMEOUT_S after the answers stop moving, their connections are dropped."""
    with serve(tmp_path / "store", settings={"header_timeout_s": 2.0, "max_requests": 2}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        stalled = []
        for _ in range(2):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            sock.connect((host, int(port)))
            sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 50)
            stalled.append(sock)
        try:
            # Until both answers stand still in the full buffers (a request before that takes a free slot, and a
            # pipelined one finding none is answered 503 and its connection closed)
            deadline, before = time.monotonic() + 30, None
            while (unread := [_unread(sock) for sock in stalled]) != before or not all(unread):
                assert time.monotonic() < deadline, f"the answers did not fill the buffers ({unread} bytes)"
                before = unread
                time.sleep(0.2)
            with httpx.Client(base_url=url, timeout=30) as http:
                assert http.get("/v1/devices").status_code == 503  # both slots wait on unread answers
                assert http.get("/healthz").status_code == 200
                for _ in range(40):  # ...until the deadline (20 s would be a defect)
                    time.sleep(0.5)
                    if http.get("/v1/devices").status_code == 200:
                        break
                else:
                    raise AssertionError("the unread answers still hold the request slots")
        finally:
            for sock in stalled:
                sock.close()


@functools.cache
@functools.cache
def _many_reductions() -> tuple[bytes, bytes]:
    """An IR of 6,000 reductions (``many_reductions``): its stored summary lists each (3 MB), its every-layer listing is
    6 MB, more than the kernel's buffers take. Built once for every upload of it."""
    from tests.audit.ov_models import many_reductions

    with tempfile.TemporaryDirectory() as folder:
        xml = many_reductions(Path(folder) / "many.xml", 6_000)
        return xml.read_bytes(), xml.with_suffix(".bin").read_bytes()


def _many(name: str) -> dict[str, tuple[str, bytes]]:
    """The upload of :func:`_many_reductions` under the model name ``name`` (another content, another id)."""
    xml, weights = _many_reductions()
    return {"xml": ("m.xml", xml.replace(b'<net name="many"', f'<net name="{name}"'.encode(), 1)),
            "bin": ("m.bin", weights)}  # fmt: skip


@pytest.fixture(scope="module")
def many_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 16 uploads of :func:`_many_reductions` (96,000 reductions), stored once for the tests of large
    stores' listings: each serves a copy of it."""
    store = tmp_path_factory.mktemp("many") / "store"
    with serve(store) as (url, _), httpx.Client(base_url=url, timeout=120) as http:
        for i in range(16):  # 96,000 reductions: about 2 s to list on a quiet machine, each model's about 0.15 s
            stored = http.post("/v1/models", files=_many(f"m{i}"))
            assert stored.status_code == 201, stored.text
    return store


def test_the_model_listing_is_not_built_whole_in_the_server(many_models: Path, tmp_path: Path) -> None:
    """Each stored summary lists its every reduction: the listing of a store of large models is gigabytes, and the
    server built it whole, three copies at once, once for each request listing it at the same time."""
    store = shutil.copytree(many_models, tmp_path / "store", symlinks=True)
    with serve(store) as (url, proc):
        with httpx.Client(base_url=url, timeout=60) as http:
            assert http.get("/v1/models").status_code == 200  # each summary checked against the schema, once
            Path(f"/proc/{proc.pid}/clear_refs").write_text("5")  # the peak memory counted from here
            before = _peak_rss(proc.pid)
            listing = http.get("/v1/models")
            grown = _peak_rss(proc.pid) - before
        assert listing.status_code == 200 and len(listing.json()["models"]) == 16
        assert len(listing.content) > 16 << 20
        assert grown < len(listing.content) // 4, (grown, len(listing.content))


def test_the_kserve_repository_index_outlasts_one_jobs_time_limit(many_models: Path, tmp_path: Path) -> None:
    """The index of a store of many large models was built in one job, under one job's time limit: past a few
    hundred thousand stored reductions it was 503 for every client, where ``GET /v1/models`` streamed the same store.
    Each model is listed by a job of its own now, and the answer streamed."""
    store = shutil.copytree(many_models, tmp_path / "store", symlinks=True)
    settings = {"run_timeout_s": 1}
    with serve(store, settings=settings) as (url, _), httpx.Client(base_url=url, timeout=120) as http:
        index = http.post("/v2/repository/index", json={})
    assert index.status_code == 200, index.text
    entries = index.json()
    assert len(entries) == 16 * 6_000 and {e["state"] for e in entries} == {"READY"}, entries[:3]


def test_an_upload_is_held_once_in_the_server(tmp_path: Path) -> None:
    """The server reads an upload whole to hand it to a worker: it was copied again into the pickle of the job, so a
    server took twice the bytes of every upload under way."""
    xml, weights = sample("rmsnorm")
    padded = (weights or b"") + bytes(96 << 20)  # a .bin longer than its Consts need: read all the same
    with serve(tmp_path / "store") as (url, proc), httpx.Client(base_url=url, timeout=120) as http:
        assert http.post("/v1/check", files=files(xml, weights)).status_code == 200  # a worker, warm
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
        before = _peak_rss(proc.pid)
        checked = http.post("/v1/check", files=files(xml, padded))
        grown = _peak_rss(proc.pid) - before
    assert checked.status_code == 200, checked.text
    assert grown < len(padded) * 3 // 2, (grown, len(padded))


def test_uploads_held_at_once_are_bounded_by_the_upload_memory(tmp_path: Path) -> None:
    """Three 96 MB uploads at once against a budget of one: they take their turns, the server holding one at a time;
    every request under way held its whole upload before."""
    xml, weights = sample("rmsnorm")
    padded = (weights or b"") + bytes(96 << 20)
    settings = {"upload_memory_bytes": len(xml) + len(padded) + 1024}
    with serve(tmp_path / "store", settings=settings) as (url, proc), httpx.Client(base_url=url, timeout=120) as http:
        assert http.post("/v1/check", files=files(xml, weights)).status_code == 200  # a worker, warm
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
        before = _peak_rss(proc.pid)
        with ThreadPoolExecutor(3) as pool:
            statuses = list(pool.map(lambda _: http.post("/v1/check", files=files(xml, padded)).status_code, range(3)))
        grown = _peak_rss(proc.pid) - before
    assert statuses == [200] * 3
    assert grown < len(padded) * 2, (grown, len(padded))


@pytest.mark.parametrize("kind", ["form of small parts", "large JSON"])
def test_bodies_the_upload_memory_did_not_count_are_bounded_by_it(kind: str, tmp_path: Path) -> None:
    """A form of many file parts under 1 MiB each (kept in memory, every part parsed before a field is looked at) and
    a large JSON body (up to 48 times its size once parsed, kept until answered) took the server's memory past the
    upload budget: three at once took three times one. A form is now refused once it has a part more than its route
    takes, and a body, once in, holds its share before it is parsed."""
    if kind == "form of small parts":  # refused (xml given 40 times): it was, once the whole form was parsed
        form = [("xml", (f"m{i}.xml", bytes(900_000))) for i in range(40)]
        budget = 40 << 20

        def send(http: httpx.Client) -> int:
            return http.post("/v1/check", files=form).status_code
    else:  # the request's own parameters, which nothing bounds but the body limit
        body = b'{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}], "parameters": {"p": ['
        body += b"[]," * 2_700_000 + b"[]]}}"
        budget = 50 * len(body) + (1 << 20)  # one such body at a time

        def send(http: httpx.Client) -> int:  # (a stored model's reduction: its head is let through)
            mid = http.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]
            return http.post(f"/v2/models/{mid}.5/infer", content=body,
                             headers={"content-type": "application/json"}).status_code  # fmt: skip

    settings = {"upload_memory_bytes": budget}
    with serve(tmp_path / "store", settings=settings) as (url, proc), httpx.Client(base_url=url, timeout=120) as http:
        assert http.get("/healthz").status_code == 200
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
        before = _peak_rss(proc.pid)
        with ThreadPoolExecutor(3) as pool:
            statuses = list(pool.map(lambda _: send(http), range(3)))
        grown = _peak_rss(proc.pid) - before
    assert all(400 <= status < 500 for status in statuses), statuses
    assert grown < 2 * budget, (grown, budget)


_PARSED = """
import sys
from api.routes.common import _JSON_EXPANSION, read_json
body = b"[" + b",".join([b"[" * 900 + b"]" * 900] * 4600) + b"]"  # 8 MB of lists of one list
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096
before = rss()
parsed = read_json(body)
print(rss() - before, _JSON_EXPANSION * len(body))
"""


def test_what_parsing_a_json_body_takes_is_within_what_is_held_for_it() -> None:
    """Nested arrays (``[[[…]]]``: a list of one element for every two bytes) are the JSON that takes the most memory
    once parsed, some 48 times its size: more than the 32 times a body held against OVREDUCE_UPLOAD_MEMORY_BYTES
    (now 50)."""
    out = subprocess.run([sys.executable, "-c", _PARSED], cwd=ROOT, env=_environment(), capture_output=True, text=True)
    grown, held = map(int, out.stdout.split())
    assert grown <= held, (grown, held, out.stderr[-2000:])


def test_bytes_sent_as_binary_data_take_the_server_no_more_than_other_binary_data(tmp_path: Path) -> None:
    """KServe BYTES elements sent as binary data (Triton's form: each a 4-byte length, then its bytes) were read in
    the server process, a string each: 12 times the body, where twice its binary part is held for it. They go to the
    worker as the bytes they are, as FP32's do: the server grows alike for either."""
    data = b"".join(struct.pack("<I", 2) + b"ab" for _ in range(1_300_000))  # 7.8 MB
    with serve(tmp_path / "store") as (url, proc), httpx.Client(base_url=url, timeout=120) as http:
        mid = http.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]
        grown = {}
        for datatype, shape in (("FP32", len(data) // 4), ("BYTES", len(data) // 6)):
            head = json.dumps({"inputs": [{"name": "data", "shape": [shape], "datatype": datatype,
                                           "parameters": {"binary_data_size": len(data)}}]}).encode()  # fmt: skip
            Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
            before = _peak_rss(proc.pid)
            for _ in range(3):  # (refused by the layer's port: its shape)
                answer = http.post(f"/v2/models/{mid}.5/infer", content=head + data,
                                   headers={"inference-header-content-length": str(len(head))})  # fmt: skip
                assert answer.status_code == 400, answer.text
            grown[datatype] = _peak_rss(proc.pid) - before
    assert grown["BYTES"] < grown["FP32"] + len(data), grown


def test_a_client_slow_to_send_its_body_holds_no_body_memory(tmp_path: Path) -> None:
    """A body holds its share of the budget once it is in: a client that declares a large upload and sends nothing
    must not keep the others' uploads waiting (503 busy at their time limit), as long as it is let trickle."""
    xml, weights = sample("rmsnorm")
    settings = {"upload_memory_bytes": 2 << 20, "run_timeout_s": 5}
    with serve(tmp_path / "store", settings=settings) as (url, _), httpx.Client(base_url=url, timeout=60) as http:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as stalled:
            stalled.sendall(b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                            b"boundary=B\r\nContent-Length: %d\r\n\r\n--B\r\n" % (4 << 20))  # fmt: skip
            time.sleep(0.5)  # its request under way, its body not
            checked = http.post("/v1/check", files=files(xml, weights))
    assert checked.status_code == 200, checked.text


def test_the_upload_memory_is_waited_for_then_refused() -> None:
    """Uploads that do not fit beside those held wait for them, and are 503 busy past the time limit; one larger than
    the whole budget waits for all of it, and is not refused for its size."""
    from api.errors import BusyError
    from api.workers import UploadMemory

    async def scenario() -> list[str]:
        memory, said = UploadMemory(1000, timeout_s=0.3), []

        async def upload(name: str, size: int, keep_s: float) -> None:
            try:
                async with memory.hold(size, name):
                    said.append(f"{name} in")
                    await asyncio.sleep(keep_s)
            except BusyError as exc:
                said.append(f"{name} busy: {exc.message}")

        async def later(delay: float, name: str, size: int) -> None:
            await asyncio.sleep(delay)
            await upload(name, size, 0.0)

        await asyncio.gather(upload("a", 600, 0.1), upload("b", 600, 0.0), upload("big", 5000, 0.0))
        await asyncio.gather(upload("c", 900, 1.0), upload("d", 200, 0.0))
        # first come, first served: small uploads that would fit do not pass one waiting before them
        await asyncio.gather(upload("e", 500, 0.2), later(0.05, "f", 800), later(0.1, "g", 100))
        return said

    said = asyncio.run(scenario())
    assert said[:3] == ["a in", "b in", "big in"], said  # b once a let go, the whole budget once b did
    assert said[3] == "c in" and said[4].startswith("d busy: the server is busy: d waited 0.3 s for the memory its "
                                                    "body needs (OVREDUCE_UPLOAD_MEMORY_BYTES)"), said  # fmt: skip
    assert said[5:] == ["e in", "f in", "g in"], said


def test_the_wait_for_upload_memory_counts_in_the_time_limit(tmp_path: Path) -> None:
    """A job whose request waited its whole time limit for upload memory is not started: the limit counts queueing,
    that wait included (it started a fresh limit of its own)."""
    from api.config import Settings
    from api.errors import BusyError
    from api.workers import IsolatedPool

    pool = IsolatedPool(1, 2.0, Settings(store=tmp_path / "store"))

    async def late() -> None:
        await pool.run("the check", print, since=asyncio.get_running_loop().time() - 2.0)

    with pytest.raises(BusyError, match="was not started"):
        asyncio.run(late())
    pool.shutdown()


def _sleep_a_minute(context: object, started: Path) -> None:
    started.touch()
    time.sleep(60)


def test_a_job_in_flight_when_the_pool_shuts_down_ends_as_its_worker_did(tmp_path: Path) -> None:
    """The pool shut down (the app stopping) while a job runs: the job ends with its killed worker, a 503 ``worker``;
    it ended in an AttributeError (a 500), releasing a worker slot that the shutdown had already dropped."""
    from api.config import Settings
    from api.errors import WorkerDiedError
    from api.workers import IsolatedPool

    pool = IsolatedPool(1, 120, Settings(store=tmp_path / "store"))

    async def shut_down_meanwhile() -> None:
        started = tmp_path / "started"
        job = asyncio.create_task(pool.run("the job", _sleep_a_minute, started))
        while not started.exists():  # the worker runs the job (a shutdown before it took it would start another)
            await asyncio.sleep(0.05)
        await asyncio.to_thread(pool.shutdown)
        await asyncio.wait_for(job, 30)

    with pytest.raises(WorkerDiedError, match=r"killed by signal 9 \(SIGKILL\)"):
        asyncio.run(shut_down_meanwhile())


def _pid(context: object) -> int:
    return os.getpid()


def _nap(context: object, started: Path, seconds: float) -> int:
    started.write_text(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def _model_time(context: Any) -> float:
    return float(context.model_timeout_s)


def test_a_queued_jobs_inference_gets_what_is_left_of_its_limit(tmp_path: Path) -> None:
    """An audit's or conform's inference stops with a fifth of the job's limit left, to answer what it established
    by then. The limit counts the wait for a worker: a job queued for 5 s of its 20 has 15 left, so its inference
    gets 11 s. It got 16 whatever the wait, and a queued audit was killed at its deadline (504, no document)."""
    from api.config import Settings
    from api.workers import IsolatedPool

    pool = IsolatedPool(1, 20.0, Settings(store=tmp_path / "store", run_timeout_s=20.0))

    async def queued() -> tuple[float, float]:
        await pool.run("a job that starts the worker", _pid)
        alone = await pool.run("a job", _model_time)
        started = tmp_path / "started"
        ahead = asyncio.create_task(pool.run("the job ahead", _nap, started, 5.0))
        while not started.exists():
            await asyncio.sleep(0.05)
        behind = await pool.run("the job behind", _model_time)
        await ahead
        return alone, behind

    try:
        alone, behind = asyncio.run(queued())
    finally:
        pool.shutdown()
    assert 14 <= alone <= 16 and 0 < behind <= 11, (alone, behind)


def test_a_job_whose_request_left_is_stopped_holding_its_slot(tmp_path: Path) -> None:
    """A request cancelled while its job runs (its client gone, mid-answer as a streamed index's): the job is stopped
    as the time limit stops one, its worker replaced, and its slot held until then. The slot was once freed at once,
    so a second worker started beside the first (more than OVREDUCE_CONCURRENCY)."""
    from api.config import Settings
    from api.workers import IsolatedPool

    pool = IsolatedPool(1, 60, Settings(store=tmp_path / "store"))

    async def leave_then_run() -> tuple[int, int, int]:
        started = tmp_path / "started"
        job = asyncio.create_task(pool.run("the job", _nap, started, 2.0))
        while not started.exists() or not started.read_text():
            await asyncio.sleep(0.05)
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
        after = asyncio.create_task(pool.run("the next job", _pid))
        most = 0
        while not after.done():
            most = max(most, len(pool.pids()))
            await asyncio.sleep(0.02)
        return int(started.read_text()), await after, most

    try:
        first, second, most = asyncio.run(leave_then_run())
    finally:
        pool.shutdown()
    assert most == 1, "the next job ran in another worker, beside the first"
    assert second != first and not Path(f"/proc/{first}").exists(), "the job of a request that left ran on"


def _slow_loop(iterations: int) -> dict[str, tuple[str, bytes]]:
    """The upload of x [1,8] -> Loop (``iterations`` times y + 1) -> ReduceMean: an audit of it takes seconds."""
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    x, inner = ops.parameter([1, 8], np.float32, name="x"), ops.parameter([1, 8], np.float32, name="inner")
    added = ops.add(inner, ops.constant(np.ones((1, 8), np.float32)))
    loop = ops.loop(ops.constant(np.int64(iterations)), ops.constant(np.array(True)))
    loop.set_function(ov.Model([ops.constant(np.array(True)), added], [inner], "body"))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(inner, x.output(0), added.output(0))
    mean = ops.reduce_mean(loop.get_iter_value(added.output(0), -1), ops.constant(np.array([1], np.int64)), True)
    with tempfile.TemporaryDirectory() as folder:
        ov.save_model(ov.Model([mean], [x], "slow"), f"{folder}/slow.xml")
        return files(Path(f"{folder}/slow.xml").read_bytes(), Path(f"{folder}/slow.bin").read_bytes())


def test_the_jobs_of_clients_that_left_are_not_run(tmp_path: Path) -> None:
    """A client that closes its connection while its job waits for the one worker: the job is never started, and a
    live request behind it waits only for the job ahead; one that leaves while its job runs: the job is stopped.
    Neither is counted as answered (499, as nginx counts a client that closed its request). Both jobs ran in full,
    for nobody, ahead of the live request, and were counted 200."""
    settings = {"concurrency": 1, "run_timeout_s": 120}
    with serve(tmp_path / "store", settings=settings) as (url, _), httpx.Client(base_url=url, timeout=120) as http:
        mid = http.post("/v1/models", files=_slow_loop(400_000)).json()["id"]
        audit, host, port = f"/v1/models/{mid}/audit", *url.removeprefix("http://").split(":")
        begun = time.monotonic()
        assert http.post(audit, json={}).status_code == 200
        alone = time.monotonic() - begun  # an audit's time, the worker ready

        def leave(after: float) -> None:
            with socket.create_connection((host, int(port))) as sock:
                sock.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 2\r\n\r\n{}" % audit.encode())  # fmt: skip
                time.sleep(after)

        with ThreadPoolExecutor(1) as pool:
            begun = time.monotonic()
            live = pool.submit(http.post, audit, json={})
            time.sleep(0.5)
            leave(0.5)  # its job queued behind the live one
            assert http.get(f"/v1/models/{mid}/layers").status_code == 200
            waited = time.monotonic() - begun
            assert live.result().status_code == 200
        assert waited < 1.5 * alone, f"the live request waited {waited:.1f} s; an audit takes {alone:.1f} s"
        leave(alone / 3)  # its job under way
        begun = time.monotonic()
        assert http.get(f"/v1/models/{mid}/layers").status_code == 200
        waited = time.monotonic() - begun
        assert waited < alone / 2, f"the live request waited {waited:.1f} s; an audit takes {alone:.1f} s"
        audits = 'ovreduce_http_requests_total{method="POST",route="/v1/models/{model_id}/audit"'
        scraped = http.get("/metrics").text.splitlines()
        counted = {line.split("status=")[1] for line in scraped if line.startswith(audits)}
    assert counted == {'"200"} 2.0', '"499"} 2.0'}, counted


def test_a_worker_that_cannot_be_started_costs_its_job_a_503_within_its_limit(tmp_path: Path) -> None:
    """A job that needs a new worker (its last one died) while the fork server that starts workers is held up is
    answered at its time limit, 503 ``busy``, and one whose worker cannot be started (the fork server's socket gone)
    is 503 ``worker``; the next job's worker is started by a new fork server. The first waited past its limit, holding
    its slot, the second was a 500, and every job after it a 503 until the server restarted. A worker whose start
    outlived its job (its limit, its client gone) serves the next one."""
    import multiprocessing.forkserver

    from api.config import Settings
    from api.errors import BusyError, RunTimeoutError, WorkerDiedError
    from api.workers import IsolatedPool

    pool = IsolatedPool(1, 3, Settings(store=tmp_path / "store"))
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]

    async def ended(pid: int, state: str) -> None:  # as the pool sees it: a worker reaped, the fork server a zombie
        os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            while f") {state} " not in Path(f"/proc/{pid}/stat").read_text():
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # (the fork server tells how its worker ended once it has reaped it)

    async def by_a_new_fork_server(what: str) -> int:
        """A job's answer from a worker that a new fork server starts, which imports ovreduce first: on a loaded
        machine, past the limit of 3 s (the next try finds it started)."""
        for _ in range(5):
            with contextlib.suppress(RunTimeoutError, BusyError):
                return await asyncio.wait_for(pool.run(what, _pid), 30)
        raise AssertionError(f"{what}: no answer from a worker of a new fork server")

    async def hold_up_then_break_the_fork_server() -> None:
        worker = await pool.run("the first job", _pid)
        os.kill(worker, signal.SIGKILL)  # the next job needs a new worker
        os.kill(server._forkserver_pid, signal.SIGSTOP)
        try:
            with pytest.raises(BusyError, match="waited 3 s for a worker process to start"):
                await asyncio.wait_for(pool.run("a job", _pid), 30)
            cancelled = asyncio.create_task(pool.run("a job whose client left", _pid))
            await asyncio.sleep(0.5)
            cancelled.cancel()
        finally:
            os.kill(server._forkserver_pid, signal.SIGCONT)
        while len(late := pool.pids()) < 2:  # the two starts end: their workers serve the next jobs
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        one = await pool.run("a job after", _pid)
        await ended(one, "reaped")
        two = await pool.run("another job after", _pid)
        assert one in late and two in set(late) - {one}
        await ended(two, "reaped")
        await ended(server._forkserver_pid, "Z")
        await ended(await by_a_new_fork_server("a job after that"), "reaped")
        old = server._forkserver_pid
        os.unlink(server._forkserver_address)  # (a clean-up of the temporary folder)
        with pytest.raises(WorkerDiedError, match="another job could not start a worker process"):
            await asyncio.wait_for(pool.run("another job", _pid), 30)
        assert await by_a_new_fork_server("a job after the clean-up")
        assert server._forkserver_pid != old
        async with asyncio.timeout(30):  # the old one, with no worker left, ends and is reaped
            while Path(f"/proc/{old}").exists():
                await asyncio.sleep(0.05)

    try:
        asyncio.run(hold_up_then_break_the_fork_server())
    finally:
        pool.shutdown()


def _peak_rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) * 1024


def test_an_answer_nobody_reads_is_dropped_even_when_the_connection_closes(tmp_path: Path) -> None:
    """A whole answer written and its connection closing (Connection: close, or keep-alive's end) waits for the client
    to read it: the server held it in memory for ever (N such clients, N copies of the largest answer)."""
    with serve(tmp_path / "store", settings={"header_timeout_s": 1.0}) as (url, _):
        with httpx.Client(base_url=url, timeout=60) as http:
            stored = http.post("/v1/models", files=_many("many"))
            assert stored.status_code == 201, stored.text
            target = f"/v1/models/{stored.json()['id']}/layers?all=true"
            size = len(http.get(target).content)
        assert size > 4 << 20  # more than the kernel's buffers take
        host, port = url.removeprefix("http://").split(":")
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        time.sleep(4)  # read nothing for more than the deadline
        received = 0
        sock.settimeout(10)
        try:
            while chunk := sock.recv(1 << 20):
                received += len(chunk)
        except (ConnectionResetError, TimeoutError):
            pass
        finally:
            sock.close()
        assert received < size, "the unread answer was kept until the client read it"


def test_a_target_given_as_a_whole_uri_is_served(tmp_path: Path) -> None:
    """Every HTTP/1.1 server must accept a target in absolute form (RFC 9112 3.2.2); the URI's authority is then the
    request's Host, whatever the header says, and is held to the allow-list as any Host is."""
    with serve(tmp_path / "store") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(f"GET http://127.0.0.1:{port}/v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            status, _, body = _read_response(sock)
            assert status == 200, body
            sock.sendall(b"GET HTTP://localhost/v1/models/%30 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status, _, body = _read_response(sock)  # the path is decoded as any path is
            assert status == 404 and "no model with id '0'" in json.loads(body)["detail"], body
            sock.sendall(b"GET http://evil.example/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status, _, body = _read_response(sock)
            assert status == 400 and "'evil.example'" in json.loads(body)["detail"], body
        for target in (b"*", b"127.0.0.1:1", b"?a=b"):  # asterisk and authority forms, no path: 400, not a 404
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(b"OPTIONS " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                status, _, body = _read_response(sock)
                detail = json.loads(body)["detail"]
                assert status == 400 and detail.startswith(f"the request target '{target.decode()}' is neither"), body
        with socket.create_connection((host, int(port)), timeout=30) as sock:  # a port no TCP port has
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: localhost:99999\r\n\r\n")
            status, _, body = _read_response(sock)
            assert status == 400 and json.loads(body)["code"] == "request.host", body


def test_a_body_that_trickles_is_answered_408_and_frees_its_slot(tmp_path: Path) -> None:
    """A client that sends a byte of its body every half second, well within OVREDUCE_BODY_TIMEOUT_S each: once that
    time has passed, the body's average rate is far below the least waited for, and it is answered 408."""
    with serve(tmp_path / "store", settings={"body_timeout_s": 2.0, "max_requests": 1}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock, httpx.Client(base_url=url) as http:
            sock.sendall(b"POST /v2/repository/index HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n ")
            time.sleep(0.3)
            assert http.get("/v1/models").status_code == 503  # the slot is held...
            sock.settimeout(0.5)
            answer = b""
            for _ in range(40):  # ...for at most about the timeout (20 s of drip would be a defect)
                try:
                    sock.sendall(b" ")
                    answer += sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if b"\r\n\r\n" in answer:
                    break
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            sock.settimeout(5)
            with contextlib.suppress(OSError):  # the rest of the answer, up to the close (it may come apart)
                while chunk := sock.recv(65536):
                    answer += chunk
            doc = json.loads(answer.partition(b"\r\n\r\n")[2])
            assert list(doc) == ["error"] and "bytes/s on average" in doc["error"], doc  # under /v2, KServe's
            assert http.get("/v1/models").status_code == 200  # the slot is free


def test_slow_header_clients_neither_starve_healthz_nor_stay(tmp_path: Path) -> None:
    """40 clients trickling headers: /healthz keeps answering 200; each of them is closed at its deadline."""
    with serve(tmp_path / "store", settings={"header_timeout_s": 3.0, "max_requests": 8}) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        slow = [_SlowClient(host, int(port)) for _ in range(40)]
        try:
            statuses = []
            with httpx.Client(base_url=url, timeout=30) as http:
                for _ in range(20):
                    for client in slow:
                        client.trickle()
                    statuses.append(http.get("/healthz").status_code)
                    statuses.append(http.get("/v1/models").status_code)  # not a health check: counted
                    time.sleep(0.05)
            assert statuses == [200] * 40, statuses
            # each is closed (408) once its deadline passes, however it trickles (hang guard: 60 s)
            deadline = time.monotonic() + 60
            while any(c.trickle() for c in slow) and time.monotonic() < deadline:
                time.sleep(0.2)
            answers = set()
            for client in slow:
                with contextlib.suppress(OSError):
                    answers.add(client.sock.recv(64).split(b"\r\n")[0])
            assert answers <= {b"HTTP/1.1 408 Request Timeout", b""}, answers
            assert b"HTTP/1.1 408 Request Timeout" in answers
        finally:
            for client in slow:
                client.sock.close()


def test_uvicorn_cli_with_the_header_timeout_protocol(tmp_path: Path) -> None:
    """``uvicorn --factory api.main:create_app --http api.protocol:HeaderTimeoutProtocol`` gets the app's
    OVREDUCE_HEADER_TIMEOUT_S through its lifespan state."""
    port = _free_port()
    env = _environment(OVREDUCE_STORE=str(tmp_path / "store"), OVREDUCE_HEADER_TIMEOUT_S="1")
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "api.main:create_app",
           "--http", "api.protocol:HeaderTimeoutProtocol",
           "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.1)
        client = _SlowClient("127.0.0.1", port)
        with client.sock:
            client.sock.settimeout(30)
            answer = b""
            while chunk := client.sock.recv(4096):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer
        # as the application's answers are: problem+json, the security headers
        assert b"content-type: application/problem+json" in head and b"content-security-policy: " in head, head
        assert json.loads(body)["code"] == "request.timeout", body
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def _healthcheck_argv() -> list[str]:
    """The Dockerfile's HEALTHCHECK command (exec form), with this interpreter for its ``python``."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK\b.*?\bCMD\s+(\[.*\])\s*$", text, re.MULTILINE)
    assert match, "no exec-form HEALTHCHECK in the Dockerfile"
    argv: list[str] = json.loads(match.group(1))
    assert argv[0] == "python"
    return [sys.executable, *argv[1:]]


def test_the_image_healthcheck_asks_the_configured_port(tmp_path: Path) -> None:
    argv = _healthcheck_argv()
    with serve(tmp_path / "store") as (url, _):
        port = url.rsplit(":", 1)[1]
        ok = subprocess.run(argv, env=_environment(OVREDUCE_PORT=port), capture_output=True, timeout=60, check=False)
        assert ok.returncode == 0, ok.stderr
        wrong = subprocess.run(argv, env=_environment(OVREDUCE_PORT=str(_free_port())), capture_output=True,
                               timeout=60, check=False)  # fmt: skip
        assert wrong.returncode != 0


def test_a_request_the_stopping_server_cancels_is_503_not_500(tmp_path: Path) -> None:
    """SIGTERM while an audit runs past the graceful timeout: uvicorn cancels the request, and answered a plain-text
    500 for it. It is 503 problem+json with Retry-After and the security headers, and the server exits cleanly."""
    from tests.audit.ov_models import many_reductions

    xml_path = many_reductions(tmp_path / "many.xml", 400)
    store = tmp_path / "store"
    with serve(store, settings={"run_timeout_s": 60}, graceful_timeout=1) as (url, proc):
        with httpx.Client(base_url=url, timeout=60) as http:
            files_ = files(xml_path.read_bytes(), xml_path.with_suffix(".bin").read_bytes())
            mid = http.post("/v1/models", files=files_).json()["id"]
        answers: list[httpx.Response] = []
        audit = threading.Thread(
            target=lambda: answers.append(httpx.post(f"{url}/v1/models/{mid}/audit", json={}, timeout=60))
        )
        audit.start()
        time.sleep(1.0)  # the audit runs for seconds
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, proc.log.read_text()  # type: ignore[attr-defined]
        audit.join(20)
    doc = assert_problem(answers[0], 503, "shutdown")
    assert "shutting down" in doc["detail"]
    assert answers[0].headers["retry-after"] == "5" and "content-security-policy" in answers[0].headers
    assert "Traceback" not in proc.log.read_text()  # type: ignore[attr-defined]


def test_head_is_answered_with_the_get_headers_and_no_body(tmp_path: Path) -> None:
    """HEAD wherever GET is (RFC 9110 9.3.2): the GET's status and headers, its Content-Length included, and no body
    byte on the wire (a request that follows on the connection is read as a request, its answer as an answer)."""
    with serve(tmp_path / "store") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        for path in ("/v1/models", "/", "/static/app.js", "/openapi.json"):
            got = httpx.get(url + path)
            assert got.status_code == 200, got.text
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = b""
                while part := sock.recv(65536):
                    data += part
            head, _, rest = data.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            assert lines[0] == "HTTP/1.1 200 OK", data
            # a streamed answer (the model list) has no Content-Length, in either
            assert headers.get("content-length") == got.headers.get("content-length"), (path, headers)
            assert headers["content-type"] == got.headers["content-type"], (path, headers)
            assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and rest.endswith(b'{"status":"ok"}'), (path, rest[:200])
