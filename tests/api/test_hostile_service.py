"""The service against an attacker: each class of hostile request, sent to a real ``ovreduce serve`` whose
processes are limited to 2 GiB of address space, gets its exact status, problem code and message, and the
server still answers ``/healthz`` afterwards (no hang, no crash, no memory blow-up)."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from .conftest import PROBLEM, files, sample
from .irs import reduce_ir
from .test_server import serve

pytestmark = pytest.mark.timeout(300)
MEMORY = 2 << 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    store = tmp_path_factory.mktemp("hostile") / "store"
    with serve(store, memory=MEMORY, OVREDUCE_RUN_TIMEOUT_S="60") as (url, proc):
        yield url, proc


def _stored_infer(url: str) -> str:
    """The infer path of a stored model's reduction: a request to it gets past its head (an unstored model's is 404
    before its body is read)."""
    with httpx.Client(base_url=url, timeout=120) as client:
        mid = client.post("/v1/models", files=files(*reduce_ir("sum"))).json()["id"]
        name = next(e["name"] for e in client.post("/v2/repository/index").json() if e["name"].startswith(mid))
    return f"/v2/models/{name}/infer"


@pytest.fixture
def http(server: tuple[str, Any]) -> Iterator[httpx.Client]:
    url, proc = server
    with httpx.Client(base_url=url, timeout=120) as client:
        yield client
        health = client.get("/healthz", timeout=10)
        assert health.status_code == 200, "the server stopped answering after the hostile request"
        assert proc.poll() is None


def _problem(response: httpx.Response, status: int, code: str, *message: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    doc = response.json()
    assert doc["code"] == code, doc
    for part in message:
        assert part in doc["detail"], doc["detail"]


def _stored(http: httpx.Client, xml: bytes, bin_data: bytes | None) -> str:
    response = http.post("/v1/models", files=files(xml, bin_data))
    assert response.status_code in (200, 201), response.text
    mid: str = response.json()["id"]
    return mid


def test_tens_of_thousands_of_attributes_parse_in_linear_time(http: httpx.Client) -> None:
    xml, bin_data = reduce_ir("sum")
    attrs = " ".join(f'a{i}="{i}"' for i in range(110_000))
    hostile = xml.replace(b'<data shape="2,3"', f'<data {attrs} shape="2,3"'.encode(), 1)
    assert len(hostile) > 1_500_000
    response = http.post("/v1/check", files=files(hostile, bin_data), timeout=60)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("dims", [(40_000_000, 3), (1_000_000_000, 3)])
def test_a_huge_declared_input_is_refused_before_allocating(http: httpx.Client, dims: tuple[int, int]) -> None:
    xml, bin_data = reduce_ir("sum", shape=f"{dims[0]},{dims[1]}", dims=dims)
    mid = _stored(http, xml, bin_data)
    response = http.post(f"/v1/models/{mid}/audit", json={"precision": "f32"})
    _problem(
        response, 413, "limit", f"input 'x' would have {dims[0] * dims[1]} elements", "more than the limit of 4194304"
    )


def test_a_small_onnx_model_that_expands_to_gigabytes_is_refused(http: httpx.Client) -> None:
    from onnx import TensorProto, helper, numpy_helper

    shape = numpy_helper.from_array(np.array([96_000_000], np.int64), "shape")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [])
    nodes = [helper.make_node("Expand", ["x", "shape"], ["big"]), helper.make_node("ReduceMean", ["big"], ["y"])]
    model = helper.make_model(
        helper.make_graph(nodes, "bomb", [x], [y], [shape]), opset_imports=[helper.make_opsetid("", 13)]
    )
    data = model.SerializeToString()
    assert len(data) < 300
    response = http.post("/v1/conform", files={"onnx": ("bomb.onnx", data, "application/octet-stream")})
    _problem(response, 413, "limit", "would have 96000000 elements", "more than the limit of 4194304 per tensor")


@pytest.mark.parametrize("digit", ["²", "٣"])
def test_unicode_digits_in_dims_are_refused_precisely(http: httpx.Client, digit: str) -> None:
    xml, bin_data = reduce_ir("sum")
    hostile = xml.replace(b"<dim>2</dim>", f"<dim>{digit}</dim>".encode(), 1)
    _problem(
        http.post("/v1/check", files=files(hostile, bin_data)),
        422,
        "ir.structure",
        f"<dim>{digit}</dim> is not an integer",
    )


def test_rank_beyond_numpys_limit_is_refused(http: httpx.Client) -> None:
    xml, bin_data = reduce_ir("sum", shape=",".join(["1"] * 65), dims=(1,) * 65, axes=(0,))
    _problem(http.post("/v1/check", files=files(xml, bin_data)), 413, "limit", "rank 65 exceeds the limit of 64")


@pytest.mark.parametrize(
    ("datatype", "value", "said"),
    [
        ("FP16", 70000, "value 70000.0 at index 5 is outside the FP16 range"),
        # an integer literal past float64's range, which no float conversion takes
        ("FP32", 10**400, f"value 1{'0' * 36}... at index 5 is outside the FP32 range"),
    ],
)
def test_float_values_out_of_range_are_a_bad_request(http: httpx.Client, datatype: str, value: int, said: str) -> None:
    xml, bin_data = reduce_ir("sum", shape="2,3", dims=(2, 3))
    mid = _stored(http, xml, bin_data)
    tensor = {"name": "0", "shape": [2, 3], "datatype": datatype, "data": [1, 2, 3, 4, 5, value]}
    response = http.post(f"/v1/models/{mid}/layers/sum/run", json={"inputs": [tensor]})
    _problem(response, 400, "input", said)


def test_a_foreign_host_and_a_cross_origin_post_are_refused(http: httpx.Client) -> None:
    xml, bin_data = reduce_ir("sum")
    _problem(http.post("/v1/check", files=files(xml, bin_data), headers={"Host": "evil.example"}), 400, "request.host")
    response = http.post("/v1/check", files=files(xml, bin_data), headers={"Origin": "http://evil.example"})
    _problem(response, 403, "request.origin")


def test_a_sec_fetch_site_of_bytes_that_are_no_utf_8_is_refused_as_cross_site(server: tuple[str, Any]) -> None:
    """h11 takes any byte from 0x80 in a header's value: a Sec-Fetch-Site of ``cross-site`` and such a byte was
    refused by a message that decoded it as UTF-8, and answered 500."""
    url, _ = server
    request = (b"DELETE /v1/models/" + b"0" * 64 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nSec-Fetch-Site: cross-site\xff\r\n"
               b"Connection: close\r\n\r\n")  # fmt: skip
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403"), answer[:300]
    problem = json.loads(body)
    assert problem["code"] == "request.origin" and "the browser marks 'cross-site\\xff'" in problem["detail"], problem


@pytest.mark.parametrize("digits", [b"\xb2", b"1\xb9", b"\xb3"])
def test_superscript_digits_in_the_inference_header_length_are_a_400(server: tuple[str, Any], digits: bytes) -> None:
    """Latin-1's superscripts are digits to ``str.isdigit()``, not to ``int()``: the memory a body past 64 KiB holds
    was reckoned from the header with both, and answered 500 before the route could refuse the header."""
    url, _ = server
    body = b'{"inputs": [], "id": "' + b"x" * 70_000 + b'"}'
    request = (b"POST " + _stored_infer(url).encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
               b"Content-Type: application/json\r\nInference-Header-Content-Length: " + digits +
               b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert "Inference-Header-Content-Length" in json.loads(text)["error"], text


def _many_sums(count: int) -> bytes:
    """An IR of ``count`` ReduceSum layers, each to a Result of its own: a summary of about 500 bytes per reduction."""
    layers = ['<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/><output>'
              '<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>',
              '<layer id="1" name="ax" type="Const" version="opset1"><data element_type="i64" shape="1" offset="0" '
              'size="8"/><output><port id="0" precision="I64"><dim>1</dim></port></output></layer>']  # fmt: skip
    edges = []
    for i in range(count):
        at = 2 + 2 * i
        layers.append(f'<layer id="{at}" name="r{i}" type="ReduceSum" version="opset1"><data keep_dims="false"/><input>'
                      f'<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port><port id="1" precision="I64">'
                      f'<dim>1</dim></port></input><output><port id="2" precision="FP32"><dim>2</dim></port></output>'
                      f"</layer>"
                      f'<layer id="{at + 1}" name="o{i}" type="Result" version="opset1"><input><port id="0" '
                      f'precision="FP32"><dim>2</dim></port></input></layer>')  # fmt: skip
        edges.append(f'<edge from-layer="0" from-port="0" to-layer="{at}" to-port="0"/><edge from-layer="1" '
                     f'from-port="0" to-layer="{at}" to-port="1"/><edge from-layer="{at}" from-port="2" '
                     f'to-layer="{at + 1}" to-port="0"/>')  # fmt: skip
    return (
        f'<?xml version="1.0"?><net name="m" version="11"><layers>{"".join(layers)}</layers><edges>{"".join(edges)}'
        f"</edges></net>"
    ).encode()


def _rss_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) // 1024


def test_slow_readers_of_a_large_summary_hold_no_copy_of_it(server: tuple[str, Any], http: httpx.Client) -> None:
    """A summary was read whole into the server for each GET and held until the client read it: 32 slow readers of
    a 10 MB summary grew the server by 400 MB, never given back. It is streamed from its file in chunks."""
    url, proc = server
    mid = _stored(http, _many_sums(12_000), (1).to_bytes(8, "little"))
    size_mb = len(http.get(f"/v1/models/{mid}").content) / 2**20  # (also its first read: its schema checked)
    before = _rss_mb(proc.pid)
    readers = []
    for _ in range(24):  # each reads a few KB a second
        reader = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])))
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.sendall(f"GET /v1/models/{mid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        readers.append(reader)
    peak = before
    try:
        for _ in range(4):
            time.sleep(1)
            for reader in readers:
                reader.recv(2048)
            peak = max(peak, _rss_mb(proc.pid))
    finally:
        for reader in readers:
            reader.close()
    assert peak - before < 4 * size_mb, (before, peak, size_mb)  # it held 24 of them


def test_an_oversize_json_body_without_expect_gets_413(server: tuple[str, Any], http: httpx.Client) -> None:
    url, _ = server
    port = int(url.rsplit(":", 1)[1])
    body = b"[" + b"1," * (5 << 20) + b"1]"  # 10 MiB, over the 8 MiB JSON limit, sent whole
    head = (f"POST /v1/models/x/layers/y/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the server may stop reading early
            sock.sendall(body)
        answer = io.BytesIO()
        while b"\r\n\r\n" not in answer.getvalue():
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer.write(chunk)
    assert answer.getvalue().startswith(b"HTTP/1.1 413"), answer.getvalue()[:200]


def test_empty_weights_are_refused_with_where(http: httpx.Client) -> None:
    xml, _ = reduce_ir("sum")
    where = "layer id=1 name='axes' (Const): Const data [offset 0, size 8] lies outside model.bin (0 bytes)"
    _problem(http.post("/v1/check", files=files(xml, b"")), 422, "ir.weights", where)


def test_a_client_gone_mid_body_is_no_server_error(server: tuple[str, Any], http: httpx.Client) -> None:
    """A client that closes its connection in the middle of a body: nothing logged as an error, no 500 counted."""
    url, proc = server
    port = int(url.rsplit(":", 1)[1])
    for path in ("/v2/repository/index", f"/v2/models/{'0' * 64}.1/infer", f"/v1/models/{'0' * 64}/layers/x/run"):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{{".encode())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the three are answered (and counted), whatever their status
        metrics = http.get("/metrics").text
        if all(f'route="{r}"' in metrics for r in ("/v2/repository/index", "/v2/models/{name}/infer")):
            break
        time.sleep(0.1)
    log = proc.log.read_text(errors="replace")
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    assert 'route="/v2/repository/index"' in metrics and 'status="500"' not in metrics, metrics


@pytest.mark.parametrize(
    ("request_bytes", "after"),
    [
        (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n", b""),
        (b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", b"xxxxxxxx"),
    ],
    ids=["bad-chunk-header", "bad-chunk-after-the-answer"],
)
def test_a_broken_chunked_body_is_no_error_of_the_server(
    server: tuple[str, Any], http: httpx.Client, request_bytes: bytes, after: bytes
) -> None:
    """A chunked body that breaks HTTP, before or after its request was answered: the connection is answered
    (uvicorn's 400) or closed, and nothing is logged as an error of the server."""
    url, proc = server
    port = int(url.rsplit(":", 1)[1])
    before = proc.log.read_text(errors="replace")
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request_bytes)
            time.sleep(0.3)
            with contextlib.suppress(OSError):
                if after:
                    sock.sendall(after)
                sock.settimeout(5)
                while sock.recv(65536):
                    pass
    time.sleep(0.5)
    log = proc.log.read_text(errors="replace")[len(before) :]
    assert "ERROR" not in log and "Traceback" not in log, log[-3000:]


@pytest.mark.parametrize(("chunk", "refused"), [(1, True), (600, False)])
def test_a_body_in_tiny_chunks_is_refused_before_it_takes_the_event_loop(
    server: tuple[str, Any], http: httpx.Client, chunk: int, refused: bool
) -> None:
    """Every chunk of a chunked body costs the one event loop the same: 2 MB in chunks of one byte held the health
    checks for seconds. A body whose chunks average less than 512 bytes, past the first 4,096, is refused at once;
    one in chunks of 600 bytes is read."""
    url, _ = server
    piece = b"%x\r\n%s\r\n" % (chunk, b" " * chunk)
    count = 20_000 if refused else 1_000
    request = (b"POST /v2/repository/index HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\n{\r\n" + piece * count +
               b"1\r\n}\r\n0\r\n\r\n")  # fmt: skip
    answer = b""
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=30) as sock:
        with contextlib.suppress(OSError):  # (the server stops reading once it refuses)
            sock.sendall(request)
        with contextlib.suppress(OSError):
            while chunk_read := sock.recv(65536):
                answer += chunk_read
    head, _, text = answer.partition(b"\r\n\r\n")
    if refused:
        assert head.startswith(b"HTTP/1.1 400"), answer[:300]
        assert "the request body comes in pieces of 1 bytes on average" in json.loads(text)["error"], text
    else:
        assert head.startswith(b"HTTP/1.1 200"), answer[:300]


@pytest.mark.parametrize(
    ("request_bytes", "why"),
    [
        (b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
         "conflicting Content-Length headers"),
        (b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
         "Only Transfer-Encoding: chunked is supported"),
        (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n", "illegal header line"),
        (b"GET /healthz HTTP/1.1\r\n\r\n", "Missing mandatory Host: header"),
        (b"GET /healthz\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "illegal request line"),
        (b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
        (b"POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
         "illegal chunk header: b'zz\\r\\n'"),  # the bytes as sent, not Python's bytearray(...) around them
    ],
    ids=["two-content-lengths", "te-gzip-chunked", "header-without-colon", "no-host", "nul-in-target",
         "negative-content-length", "bad-chunk-size"],
)  # fmt: skip
def test_bytes_that_break_http_are_answered_as_a_problem(
    server: tuple[str, Any], request_bytes: bytes, why: str
) -> None:
    """What h11 cannot read as a request is answered like every other refusal: 400 problem+json with the security
    headers, saying what is wrong, then the connection closed (uvicorn's own answer is plain text, and its words the
    same for every such request)."""
    url, proc = server
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=10) as sock:
        sock.sendall(request_bytes)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert lines[0] == "HTTP/1.1 400 Bad Request", answer
    assert headers["content-type"] == "application/problem+json" and headers["connection"] == "close"
    assert headers["x-content-type-options"] == "nosniff" and "frame-ancestors" in headers["content-security-policy"]
    problem = json.loads(body)
    assert problem["code"] == "request.invalid" and "not an HTTP/1.1 request" in problem["detail"], problem
    assert why in problem["detail"], problem
    assert "Traceback" not in proc.log.read_text(errors="replace")


_SPREAD = [0, 4_194_304, 4_194_304, 4_194_304]  # no elements, dims that multiply past what NumPy can describe


def test_a_shape_of_no_elements_and_huge_dims_is_refused_by_run_and_audit(http: httpx.Client) -> None:
    """A generated input of such a shape was a 500 (NumPy: "array is too big"); a reduction over its empty axis would
    fill all the rest."""
    mid = _stored(http, *sample("dynamic"))
    shape = json.dumps(_SPREAD).replace(" ", "")
    run = http.post(f"/v1/models/{mid}/layers/3/run", json={"shapes": {"0": shape}})
    _problem(run, 413, "limit", "has no elements, but its dims other than 0", "OVREDUCE_MAX_ELEMENTS")
    audit = http.post(f"/v1/models/{mid}/audit", json={"shapes": {"y": shape}})
    _problem(audit, 413, "limit", "input 'y' has no elements, but its dims other than 0")


def test_a_kserve_binary_tensor_of_no_elements_and_huge_dims_is_a_400(http: httpx.Client) -> None:
    mid = _stored(http, *sample("dynamic"))
    header = json.dumps({"inputs": [{"name": "data", "shape": _SPREAD, "datatype": "FP16",
                                     "parameters": {"binary_data_size": 0}}]}).encode()  # fmt: skip
    response = http.post(f"/v2/models/{mid}.3/infer", content=header,
                         headers={"Inference-Header-Content-Length": str(len(header))})  # fmt: skip
    assert response.status_code == 400 and "has no elements, but its dims other than 0" in response.json()["error"]


def _healthz_stall(url: str, path: str, body: bytes, status: int = 200) -> float:
    """The longest ``/healthz`` took while ``body`` was POSTed to ``path`` (and answered ``status``)."""
    waits: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while not done.is_set():
                began = time.perf_counter()
                client.get("/healthz")
                waits.append(time.perf_counter() - began)
                time.sleep(0.01)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        time.sleep(0.3)
        with httpx.Client(base_url=url, timeout=120) as client:
            response = client.post(path, content=body, headers={"content-type": "application/json"})
        time.sleep(0.2)
    finally:
        done.set()
        poller.join()
    assert response.status_code == status, response.text
    return max(waits)


def _stalls_no_more_than(
    url: str, control: tuple[str, bytes], request: tuple[str, bytes], status: int = 200, tries: int = 3
) -> None:
    """``request`` holds ``/healthz`` no longer than 3 times ``control`` does (0.5 s at least), the control measured
    just before it, in one try of ``tries``: the test files run in several processes at once, whose load stalls
    either at random moments, where work on the event loop stalls every try."""
    measured = []
    for _ in range(tries):
        bound = max(0.5, 3 * _healthz_stall(url, *control, status))
        measured.append((_healthz_stall(url, *request, status), bound))
        if measured[-1][0] < bound:
            return
    pytest.fail(f"/healthz waited longer than its bound in every try (wait, bound): {measured}")


def test_a_run_of_nested_tensor_data_does_not_stall_the_server(server: tuple[str, Any], http: httpx.Client) -> None:
    """A /v1 run or audit whose input is given as lists nested as its shape, 3.8 million values (7.8 MB, under
    OVREDUCE_MAX_JSON_BYTES), is made flat off the event loop, as /v2 does it: flattened on the loop, it held every
    other request, /healthz included, for more than a second."""
    url, _ = server
    mid = _stored(http, *sample("rmsnorm"))
    rows = 60_000
    data = "[[" + ",".join(["[" + ",".join(["0"] * 64) + "]"] * rows) + "]]"

    def tensor(name: str) -> bytes:
        return f'{{"inputs":[{{"name":"{name}","shape":[1,{rows},64],"datatype":"FP32","data":{data}}}]}}'.encode()

    control = (f"/v2/models/{mid}.5/infer", tensor("data"))  # the same walk, off the loop
    _stalls_no_more_than(url, control, (f"/v1/models/{mid}/layers/5/run", tensor("0")))
    _stalls_no_more_than(url, control, (f"/v1/models/{mid}/audit", tensor("hidden_states")))


def test_a_refused_inference_request_is_read_off_the_event_loop_names_and_all(server: tuple[str, Any]) -> None:
    """A KServe request refused as it is read keeps the client's names, looked for in its body: an 8 MiB body and an
    input name of 64 server-path-like words no search finds made 256 searches of the whole body on the event loop,
    and every other request, /healthz included, waited seconds."""
    url, _ = server
    size = 8 * 1024 * 1024 - 8192  # under OVREDUCE_MAX_JSON_BYTES

    def body(name: str) -> bytes:
        head = json.dumps({"inputs": [{"name": name, "shape": [1], "datatype": "FP32"}], "pad": ""})
        return (head[:-2] + "[" * (size - len(head)) + '"}').encode()

    path = _stored_infer(url)
    words = " ".join(f"{tempfile.gettempdir()}/{i:02x}\u0001[[[" for i in range(64))[:1024]
    _stalls_no_more_than(url, (path, body("x")), (path, body(words)), 400)


def test_a_layer_named_with_a_line_break_is_addressed_by_its_name_and_a_stray_one_is_not_dropped(
    http: httpx.Client,
) -> None:
    """XML and OpenVINO allow a line break in a layer's name: the layer routes answered 404 "no route" for it, and
    took ``.../layers/2%0A`` for layer 2 (a route's ``$`` matches before a final line break)."""
    mid = http.post("/v1/models", files=files(*reduce_ir("a\nb"))).json()["id"]
    assert http.get(f"/v1/models/{mid}/layers/a%0Ab").json()["layer_name"] == "a\nb"
    run = http.post(f"/v1/models/{mid}/layers/a%0Ab/run", json={"backends": ["numpy"]})
    assert run.status_code == 200 and run.json()["layer"]["layer_name"] == "a\nb", run.text
    layer_id = run.json()["layer"]["layer_id"]
    assert http.get(f"/v1/models/{mid}/layers/{layer_id}%0A").status_code == 404
    stray = http.post(f"/v1/models/{mid}/layers/{layer_id}/run%0A", json={"backends": ["numpy"]})
    assert stray.status_code == 404
    # ... and the answer names the path asked for, not one that exists (a URL drops tabs and line breaks)
    path = f"/v1/models/{mid}/layers/{layer_id}/run"
    assert stray.json()["instance"] == path + "\n"
    assert stray.json()["detail"].startswith(f"no route for POST {path}\\n;")
    hidden = http.post(f"{path}%E2%80%AE", json={"backends": ["numpy"]}).json()  # a right-to-left override, escaped
    assert f"{path}\\u202e;" in hidden["detail"] and "\u202e" not in hidden["detail"], hidden
