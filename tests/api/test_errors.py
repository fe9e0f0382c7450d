"""Errors: the status table, a malformed-input corpus (no 500, no leak, bounded memory), body limits, 500s."""

from __future__ import annotations

import asyncio
import logging
import random
import re
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api import errors as api_errors
from api import workers
from api.problems import STATUS_BY_ERROR, status_for
from ovreduce import errors as lib

from .conftest import ROOT, assert_problem, files, sample
from .irs import reduce_ir

KiB = 1024


# -- the one mapping --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "status"),
    [
        (lib.IRError, 422), (lib.IRSyntaxError, 422), (lib.IRVersionError, 422), (lib.IRStructureError, 422),
        (lib.ElementTypeError, 422), (lib.WeightsError, 422), (lib.ShapeInferenceError, 422),
        (lib.LimitExceededError, 413), (api_errors.RequestTooLargeError, 413), (api_errors.RunTimeoutError, 504),
        (lib.NotFoundError, 404), (lib.InputError, 400), (lib.OvReduceError, 400),
        (lib.BackendError, 503), (lib.DeviceNotAvailableError, 503), (api_errors.BusyError, 503),
        (api_errors.StoreError, 503),
    ],
)  # fmt: skip
def test_status_table(cls: type[lib.OvReduceError], status: int) -> None:
    assert status_for(cls("x")) == status


def test_every_library_error_is_mapped() -> None:
    classes = [getattr(lib, name) for name in lib.__all__ if isinstance(getattr(lib, name), type)]
    assert len(classes) > 10
    for cls in classes:
        assert any(c in STATUS_BY_ERROR for c in cls.__mro__), cls


# -- the malformed-input corpus -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Bad:
    id: str
    xml: bytes
    status: int
    code: str
    bin: bytes | None = None


def _laughs() -> bytes:
    ents = "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    doc = f'<?xml version="1.0"?><!DOCTYPE net [<!ENTITY lol0 "lol">{ents}]>'
    return (doc + '<net name="&lol9;" version="11"><layers/></net>').encode()


def _quadratic() -> bytes:
    return (f'<!DOCTYPE net [<!ENTITY a "{"a" * 100_000}">]><net version="11" name="' + "&a;" * 2000
            + '"><layers/></net>').encode()  # fmt: skip


def _const(shape: str, size: int, offset: int = 0, etype: str = "i64", dims: str = "") -> bytes:
    xml, _ = reduce_ir("sum")
    return xml.replace(
        b'<data element_type="i64" shape="1" offset="0" size="8"/>',
        f'<data element_type="{etype}" shape="{shape}" offset="{offset}" size="{size}"/>'.encode(),
    ).replace(b'<output><port id="0" precision="I64"><dim>1</dim></port></output>',
              f'<output><port id="0" precision="I64">{dims}</port></output>'.encode())  # fmt: skip


def _layers(n: int) -> bytes:
    body = "".join(
        f'<layer id="{i}" name="p{i}" type="Parameter" version="opset1"><data shape="1" element_type="f32"/>'
        f'<output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>'
        for i in range(n)
    )
    return f'<net name="m" version="11"><layers>{body}</layers><edges/></net>'.encode()


_XXE = (
    b'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
    b'<net name="&xxe;" version="11"><layers/></net>'
)
_PAD = b"<!--" + b"x" * 70_000 + b"-->\n"
_GOOD, _GOOD_BIN = reduce_ir("sum")

CORPUS = [
    Bad("xxe-passwd", _XXE, 422, "ir.syntax"),
    Bad("xxe-beyond-sniff", _PAD + _XXE.split(b"\n", 1)[1], 422, "ir.syntax"),
    Bad("xxe-in-text", b'<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]><net version="11"><layers/>'
        b'<rt_info><info name="a">&x;</info></rt_info></net>', 422, "ir.syntax"),
    Bad("xxe-parameter-entity", b'<!DOCTYPE net [<!ENTITY % x SYSTEM "file:///etc/passwd"> %x;]><net/>',
        422, "ir.syntax"),
    Bad("xxe-network", b'<!DOCTYPE net SYSTEM "http://127.0.0.1:9/evil.dtd"><net version="11"><layers/></net>',
        422, "ir.syntax"),
    Bad("billion-laughs", _laughs(), 422, "ir.syntax"),
    Bad("quadratic-blowup", _quadratic(), 422, "ir.syntax"),
    Bad("doctype", b'<!DOCTYPE net><net version="11"><layers/></net>', 422, "ir.syntax"),
    Bad("truncated", _GOOD[: len(_GOOD) // 2], 422, "ir.syntax", _GOOD_BIN),
    Bad("binary-garbage", b"\x89" + random.Random(7).randbytes(4095), 422, "ir.syntax"),
    Bad("empty", b"", 422, "ir.syntax"),
    Bad("utf16-garbage", b"\xff\xfe<\x00n\x00", 422, "ir.syntax"),
    Bad("utf-32", '<?xml version="1.0"?><net version="11"><layers/></net>'.encode("utf-32"), 422, "ir.syntax"),
    Bad("deep-nesting", b'<net version="11"><layers/><rt_info>' + b"<a>" * 10_000 + b"</a>" * 10_000
        + b"</rt_info></net>", 422, "ir.syntax"),
    Bad("not-a-net", b'<model version="11"/>', 422, "ir.structure"),
    Bad("ir-version-7", _GOOD.replace(b'version="11"', b'version="7"', 1), 422, "ir.version", _GOOD_BIN),
    Bad("dim-overflow", _GOOD.replace(b"<dim>3</dim>", b"<dim>99999999999999999999999</dim>", 1),
        422, "ir.structure", _GOOD_BIN),
    Bad("const-out-of-bin", _const("1", 8, offset=8, dims="<dim>1</dim>"), 422, "ir.weights", _GOOD_BIN),
    Bad("const-no-bin", _GOOD, 422, "ir.weights"),
    Bad("shape-overflow-const", _const("4294967296,4294967296", 8, dims="<dim>4294967296</dim><dim>4294967296</dim>"),
        422, "ir.weights", _GOOD_BIN),
    Bad("oversize-xml", b"<net>" + b" " * (300 * KiB) + b"</net>", 413, "limit"),
    Bad("too-many-layers", _layers(1001), 413, "limit"),
    Bad("oversize-bin", _GOOD, 413, "limit.body", bytes(2 * 1024 * KiB)),
]  # fmt: skip

SECRETS = (b"root:x:0:0", b"root:", b"/etc/passwd", b"Traceback", b"lolllol", b"aaaaaaaaaa")


@pytest.fixture
def strict(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(max_xml_bytes=256 * KiB, max_upload_bytes=1024 * KiB, max_layers=1000)


@pytest.fixture
def traced() -> Iterator[Callable[[], int]]:
    tracemalloc.start()
    yield lambda: tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
@pytest.mark.parametrize("endpoint", ["/v1/check", "/v1/models"])
def test_malformed_corpus(strict: TestClient, traced: Callable[[], int], case: Bad, endpoint: str) -> None:
    tracemalloc.reset_peak()
    response = strict.post(endpoint, files=files(case.xml, case.bin))
    peak = traced()
    doc = assert_problem(response, case.status, case.code)
    assert doc["detail"]
    for secret in SECRETS:
        assert secret not in response.content, secret
    assert str(strict.app.state.services.settings.store).encode() not in response.content  # type: ignore[attr-defined]
    assert peak < 8 * 1024 * KiB + 3 * len(case.xml) + 2 * len(case.bin or b""), peak  # far below any expansion
    if case.code == "limit":  # every limit a client can meet is named by the setting that raises it
        assert "(OVREDUCE_MAX_" in doc["detail"], doc
    if endpoint == "/v1/models":
        assert strict.get("/v1/models").json()["models"] == []


def test_xinclude_is_not_processed(client: TestClient) -> None:
    xml = (b'<net name="m" version="11" xmlns:xi="http://www.w3.org/2001/XInclude">'
           b'<xi:include href="/etc/passwd" parse="text"/><layers/></net>')  # fmt: skip
    response = client.post("/v1/check", files=files(xml))
    assert response.status_code == 200  # an empty, readable model: the include is an unknown element
    assert b"root:" not in response.content


def test_shape_overflow_parameter_cannot_run(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum", shape="4294967296,4294967296", dims=(4294967296, 4294967296), out_dims=None)
    response = client.post("/v1/models", files=files(xml, bin_data))
    assert response.status_code == 201, response.text
    mid = response.json()["id"]
    doc = assert_problem(client.post(f"/v1/models/{mid}/layers/sum/run"), 413, "limit")
    assert "OVREDUCE" not in doc["detail"] or "limit" in doc["detail"]


# -- body limits, before routing ---------------------------------------------------------------------------
def test_declared_body_too_large(strict: TestClient) -> None:
    big = bytes(2 * 1024 * KiB)
    doc = assert_problem(strict.post("/v1/check", files=files(big)), 413, "limit.body")
    assert "OVREDUCE_MAX_UPLOAD_BYTES" in doc["detail"]
    doc = assert_problem(strict.post("/healthz", content=b"x" * (40 << 20)), 413, "limit.body")
    assert "OVREDUCE_MAX_JSON_BYTES" in doc["detail"]


def test_chunked_body_too_large(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_json_bytes=64 * KiB, max_upload_bytes=128 * KiB)

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b"[" + b"0," * 2047 + b"0]"  # 4 KiB each, no Content-Length

    mid = client.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]  # (one not stored is 404 at once)
    url = f"/v1/models/{mid}/layers/x/run"
    response = client.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert "content-length" not in response.request.headers
    assert_problem(response, 413, "limit.body")

    def multipart() -> Iterator[bytes]:
        yield b'--b\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n'
        for _ in range(100):
            yield b"<" * 4096
        yield b"\r\n--b--\r\n"

    response = client.post(
        "/v1/check", content=multipart(), headers={"content-type": "multipart/form-data; boundary=b"}
    )
    assert_problem(response, 413, "limit.body")


def test_only_upload_routes_take_upload_sized_bodies(make_client: Callable[..., TestClient]) -> None:
    """A multipart Content-Type does not lift the JSON limit of a route that takes no upload (the KServe and run
    routes read the body as JSON whatever it is labelled), and two Content-Types are refused, not guessed."""
    client = make_client(max_json_bytes=64 * KiB, max_upload_bytes=1024 * KiB)
    body = b"[" + b"0," * (100 * KiB) + b"0]"  # 200 KiB: over the JSON limit, under the upload limit
    for url in ("/v2/models/" + "0" * 64 + ".1/infer", "/v1/models/" + "0" * 64 + "/layers/x/run"):
        for content_type in ("multipart/form-data; boundary=X", "multipart/whatever"):
            response = client.post(url, content=body, headers={"content-type": content_type})
            if url.startswith("/v2"):  # KServe's {"error"}
                assert response.status_code == 413 and "OVREDUCE_MAX_JSON_BYTES" in response.json()["error"]
            else:
                assert "OVREDUCE_MAX_JSON_BYTES" in assert_problem(response, 413, "limit.body")["detail"]
    xml, _ = reduce_ir("sum")
    assert client.post("/v1/check", files=files(xml, bytes(100 * KiB))).status_code != 413  # an upload route
    two = [("content-type", "application/json"), ("content-type", "multipart/form-data; boundary=X")]
    response = client.post("/v1/models/" + "0" * 64 + "/layers/x/run", content=b"{}", headers=two)
    doc = assert_problem(response, 400, "request.invalid")
    assert "2 Content-Type headers" in doc["detail"]


def test_a_field_given_twice_is_refused_not_guessed(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    other, _ = reduce_ir("mean")
    twice = [("xml", ("a.xml", xml)), ("xml", ("b.xml", other)), ("bin", ("m.bin", bin_data))]
    for url in ("/v1/check", "/v1/models"):
        doc = assert_problem(client.post(url, files=twice), 400, "input")
        assert "'xml' more than once" in doc["detail"], doc
    doc = assert_problem(client.post("/v1/conform", files=[("onnx", ("a", b"x")), ("onnx", ("b", b"y"))]), 400)
    assert "'onnx' more than once" in doc["detail"], doc
    assert client.get("/v1/models").json()["models"] == []


def test_a_compressed_body_is_refused_wherever_it_is_sent(client: TestClient) -> None:
    """ovreduce reads no compressed body: one labelled so is refused, not read as plain, on /v1 and /v2 alike."""
    run = client.post(f"/v1/models/{'0' * 64}/layers/x/run", content=b'{"seed": 1}',
                      headers={"content-type": "application/json", "content-encoding": "br"})  # fmt: skip
    assert_problem(run, 415, "request.media_type")
    assert "Content-Encoding 'br' is not read by ovreduce" in run.json()["detail"]
    two = [("content-type", "application/json"), ("content-encoding", "identity"), ("content-encoding", "gzip")]
    assert_problem(client.post(f"/v1/models/{'0' * 64}/layers/x/run", content=b"{}", headers=two), 415,
                   "request.media_type")  # fmt: skip
    index = client.post("/v2/repository/index", content=b"{}", headers={"content-encoding": "gzip"})
    assert index.status_code == 415 and "Content-Encoding 'gzip'" in index.json()["error"], index.text
    for coding in ("identityidentity", "identity\tidentity", "identity;q=0"):  # one token each, none of them identity
        glued = {"content-type": "application/json", "content-encoding": coding}
        answer = client.post(f"/v1/models/{'0' * 64}/layers/x/run", content=b"{}", headers=glued)
        assert_problem(answer, 415, "request.media_type")
    for plain in ("identity", " Identity , identity", ""):
        headers = {"content-type": "application/json", "content-encoding": plain}
        response = client.post(f"/v1/models/{'0' * 64}/layers/x/run", content=b"{}", headers=headers)
        assert_problem(response, 404, "not_found")  # read as plain: on to the model it names


def test_a_file_part_sent_encoded_is_refused(client: TestClient) -> None:
    """A part of an upload compressed or base64-encoded is refused as such, not read as a broken IR."""
    import gzip

    xml, bin_data = reduce_ir("sum")
    multipart = {"content-type": "multipart/form-data; boundary=B"}

    def body(header: str, data: bytes) -> bytes:
        head = b'--B\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n' + header.encode()
        tail = b'\r\n--B\r\nContent-Disposition: form-data; name="bin"; filename="m.bin"\r\n\r\n' + (bin_data or b"")
        return head + b"\r\n\r\n" + data + tail + b"\r\n--B--\r\n"

    for header, value, data in (("Content-Encoding", "gzip", gzip.compress(xml)),
                                ("Content-Transfer-Encoding", "base64", xml)):  # fmt: skip
        response = client.post("/v1/check", content=body(f"{header}: {value}", data), headers=multipart)
        doc = assert_problem(response, 400, "input")
        said = f"the form field 'xml' is sent encoded ('{value}'), which ovreduce does not read; send the file as it is"
        assert doc["detail"] == said, doc
    plain = client.post("/v1/check", content=body("Content-Transfer-Encoding: binary", xml), headers=multipart)
    assert plain.status_code == 200, plain.text


def test_a_json_body_of_null_is_refused_not_taken_for_no_body(client: TestClient, rmsnorm_id: str) -> None:
    """``null`` is no run request: it is refused, where no body at all runs on the defaults."""
    for route in (f"/v1/models/{rmsnorm_id}/layers/5/run", f"/v1/models/{rmsnorm_id}/audit"):
        response = client.post(route, content=b"null", headers={"content-type": "application/json"})
        doc = assert_problem(response, 400)
        assert "the body is JSON null; send an object, or no body for the defaults" in doc["detail"], doc


def test_a_json_key_given_twice_is_refused_not_guessed(client: TestClient, rmsnorm_id: str) -> None:
    """As a query parameter or a form field given twice: the last value would be taken silently."""
    run = client.post(f"/v1/models/{rmsnorm_id}/layers/5/run", content=b'{"seed": 1, "seed": 2}',
                      headers={"content-type": "application/json"})  # fmt: skip
    doc = assert_problem(run, 400)
    assert "a JSON object of the body gives the key 'seed' more than once; give each key once" in doc["detail"], doc
    inputs = '{"name": "0", "shape": [1], "datatype": "FP32", "data": [1], "data": [2]}'
    infer = client.post(f"/v2/models/{rmsnorm_id}.5/infer", content=f'{{"inputs": [{inputs}]}}'.encode())
    assert infer.status_code == 400 and "gives the key 'data' more than once" in infer.json()["error"], infer.text
    index = client.post("/v2/repository/index", content=b'{"ready": true, "ready": false}')
    assert index.status_code == 400 and "gives the key 'ready' more than once" in index.json()["error"], index.text
    ok = client.post(f"/v1/models/{rmsnorm_id}/layers/5/run", json={"seed": 1, "backends": ["numpy"]})
    assert ok.status_code == 200, ok.text


def test_a_query_parameter_given_twice_is_refused_unless_it_is_a_list(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    doc = assert_problem(client.post("/v1/check?engine=openvino&engine=native", files=files(xml, bin_data)), 400)
    assert "'engine' more than once" in doc["detail"], doc
    doc = assert_problem(client.get("/v1/models/" + "0" * 64 + "/layers?all=true&all=false"), 400)
    assert "'all' more than once" in doc["detail"], doc
    both = client.post("/v1/check?reshape=x=[1,4]&reshape=y=[2]", files=files(xml, bin_data))
    assert "more than once" not in both.text  # reshape is a list: given once per input
    for path in ("/readyz?a&a", "/metrics?x=1&x=2", "/v1/models?all=1&all=2"):  # parameters no route reads
        assert client.get(path).status_code == 200, path


def test_a_query_parameter_or_form_field_the_route_does_not_read_is_refused(client: TestClient) -> None:
    """A misspelt option would be ignored and the work done on the defaults: the route says what it reads instead."""
    xml, bin_data = reduce_ir("sum")
    doc = assert_problem(client.post("/v1/check?engin=openvino", files=files(xml, bin_data)), 400, "input")
    assert doc["detail"] == "POST /v1/check reads no query parameter 'engin'; it reads engine, reshape", doc
    doc = assert_problem(client.get("/v1/models/" + "0" * 64 + "/layers?al=true"), 400, "input")
    assert "reads no query parameter 'al'; it reads all" in doc["detail"], doc
    weights = [("xml", ("m.xml", xml)), ("weights", ("m.bin", bin_data))]  # the .bin under another name
    for url in ("/v1/check", "/v1/models"):
        doc = assert_problem(client.post(url, files=weights), 400, "input")
        assert doc["detail"] == f"POST {url} reads no form field 'weights'; it reads bin, xml", doc
    for v2 in (client.get("/v2/models/m?trace=1"), client.post("/v2/models/m/infer?trace=1", json={"inputs": []})):
        assert v2.status_code == 404 and "query" not in v2.json()["error"], v2.text  # KServe's routes take any
    # but not ovreduce's own options (tritonclient's query_params=), nor a near miss of one: they would be dropped
    for url in ("/v2/models/m/infer?backend=numpy", "/v2/models/m/infer?precison=f16", "/v2/repository/index?ready=1"):
        v2 = client.post(url, json={"inputs": []} if "infer" in url else {})
        option = url.partition("?")[2].partition("=")[0]
        assert v2.status_code == 400 and f"reads no query parameter {option!r}; ovreduce's options go in the " \
            "request's JSON" in v2.json()["error"], v2.text  # fmt: skip
    assert client.get("/v1/models").json()["models"] == []  # nothing was stored
    assert client.get("/readyz?probe=1").status_code == 200  # a route that reads no query takes any


def test_the_upload_limit_is_for_posted_uploads_only(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_json_bytes=64 * KiB, max_upload_bytes=1024 * KiB)
    body = b"--zz\r\n" + b"a" * (100 * KiB) + b"\r\n--zz--\r\n"
    for method in ("GET", "PUT", "DELETE"):
        response = client.request(method, "/v1/models", content=body,
                                  headers={"content-type": "multipart/form-data; boundary=zz"})  # fmt: skip
        assert_problem(response, 413, "limit.body")


def test_a_closing_boundary_inside_a_file_does_not_end_the_upload(make_client: Callable[..., TestClient]) -> None:
    """Cut short, an upload whose file holds the bytes of its closing delimiter (not at a line's start: data) is
    still refused as cut short, and nothing is stored."""
    client = make_client()
    xml, bin_data = reduce_ir("sum")
    head = (b'--zz\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n' + xml +
            b'\r\n--zz\r\nContent-Disposition: form-data; name="bin"; filename="m.bin"\r\n\r\n')  # fmt: skip
    cut = head + bin_data + b"X--zz--" + b"P" * 5000  # the rest, and the real closing delimiter, never sent
    response = client.post("/v1/models", content=cut, headers={"content-type": "multipart/form-data; boundary=zz"})
    doc = assert_problem(response, 400, "request.invalid")
    assert "cut short" in doc["detail"]
    assert client.get("/v1/models").json()["models"] == []


def test_xml_field_limit(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_xml_bytes=1 * KiB)
    xml, bin_data = sample("rmsnorm")
    doc = assert_problem(client.post("/v1/check", files=files(xml, bin_data)), 413, "limit")
    assert "OVREDUCE_MAX_XML_BYTES" in doc["detail"]


def test_store_smaller_than_the_model(make_client: Callable[..., TestClient]) -> None:
    client = make_client(store_max_bytes=100)
    xml, bin_data = sample("rmsnorm")
    assert_problem(client.post("/v1/models", files=files(xml, bin_data)), 413, "limit")


def test_a_model_that_fills_the_store_but_for_its_checksums_is_refused(make_client: Callable[..., TestClient]) -> None:
    """Every byte a stored model takes counts against the store's size, the files that record its checksums and
    its last use included: a store one byte too small for all of them is left within its size."""
    xml, bin_data = sample("rmsnorm")
    sizing = make_client()
    assert sizing.post("/v1/models", files=files(xml, bin_data)).status_code == 201
    whole = sizing.app.state.services.catalog.store.usage()  # type: ignore[attr-defined]
    client = make_client(store_max_bytes=whole - 1)
    doc = assert_problem(client.post("/v1/models", files=files(xml, bin_data)), 413, "limit")
    assert (
        f"the model is {whole} bytes with its summary and checksums" in doc["detail"]
        and "OVREDUCE_STORE_MAX_BYTES" in doc["detail"]
    ), doc
    assert client.app.state.services.catalog.store.usage() == 0  # type: ignore[attr-defined]
    assert client.get("/v1/models").json()["models"] == []


# -- the unexpected ----------------------------------------------------------------------------------------
def test_unexpected_error_is_a_bare_500(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("secret internals at /srv/app.py line 12")

    monkeypatch.setattr("api.routes.check.model_id", boom)  # runs in the server process, before the job
    xml, bin_data = reduce_ir("sum")
    answering = TestClient(client.app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR, logger="ovreduce.api"):
        response = answering.post("/v1/check", files=files(xml, bin_data))
    doc = assert_problem(response, 500, "internal")
    assert b"secret" not in response.content and b"RuntimeError" not in response.content
    error_id = doc["detail"].rsplit(" ", 1)[-1]
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)


def test_the_log_line_of_an_unexpected_error_escapes_the_path(caplog: pytest.LogCaptureFixture) -> None:
    """The path of a request answered 500 is logged: a carriage return and terminal escapes in it forged a log line
    and cleared the operator's screen; they are written escaped, as uvicorn's access log writes them."""
    from starlette.requests import Request

    from api.middleware import _internal_error

    path = '/v1/models/x/layers/a\rINFO: 127.0.0.1:1 - "GET /forged HTTP/1.1" 200 OK\x1b[2J/run'
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "headers": [],
             "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 8000), "root_path": ""}  # fmt: skip
    request = Request(scope)
    with caplog.at_level(logging.ERROR, logger="ovreduce.api"):
        response = asyncio.run(_internal_error(request, RuntimeError("boom")))
    assert response.status_code == 500
    (line,) = [r.getMessage() for r in caplog.records]
    assert "\r" not in line and "\x1b" not in line and "\\x1b[2J" in line, line


@pytest.mark.parametrize(
    "path", ["/healthz", "/readyz", "/v1/models", "/v1/devices", "/metrics", "/", "/v2/health/live"]
)
def test_head_is_answered_wherever_get_is(client: TestClient, path: str) -> None:
    got, head = client.get(path), client.head(path)
    assert head.status_code == got.status_code == 200, (head.status_code, got.text[:200])
    assert head.content == b"" and head.headers["content-type"] == got.headers["content-type"]
    if path not in ("/metrics", "/v1/devices"):  # their bodies change between two requests
        assert head.headers.get("content-length") == got.headers.get("content-length")  # (none: a streamed answer)


def test_http_errors_are_problems(client: TestClient) -> None:
    assert_problem(client.get("/nope"), 404, "http.404")
    response = client.delete("/v1/check")
    assert_problem(response, 405, "http.405")
    assert response.headers["allow"] == "POST"
    response = client.put("/v1/models")
    assert_problem(response, 405, "http.405")
    assert response.headers["allow"] == "GET, HEAD, POST"


@pytest.mark.parametrize(
    ("body", "why"), [(b'{"device": "\xff"}', "not UTF-8 text"), (b"[" * 100_000 + b"]" * 100_000, "nested too deeply")]
)
def test_an_unreadable_json_body_says_why(client: TestClient, rmsnorm_id: str, body: bytes, why: str) -> None:
    response = client.post(f"/v1/models/{rmsnorm_id}/layers/x/run", content=body,
                           headers={"content-type": "application/json"})  # fmt: skip
    doc = assert_problem(response, 400, "http.400")
    assert doc["detail"] == f"the request body cannot be read as JSON: it is {why}", doc


def test_a_compressed_json_body_is_named_as_such(client: TestClient) -> None:
    import gzip

    response = client.post(f"/v1/models/{'0' * 64}/layers/x/run", content=gzip.compress(b'{"seed": 1}'),
                           headers={"content-type": "application/json", "content-encoding": "gzip"})  # fmt: skip
    doc = assert_problem(response, 415, "request.media_type")
    assert doc["detail"] == "Content-Encoding 'gzip' is not read by ovreduce; send the body uncompressed", doc


@pytest.mark.parametrize("ending", [b"", b"\r\n", b"\r\n--BOUND", b"\r\n--BOUND\r\n"])
def test_a_multipart_body_without_its_closing_boundary_is_400(client: TestClient, ending: bytes) -> None:
    """A body cut short, even one whose file part is whole: 400 saying so, not a check of what arrived."""
    xml, _ = reduce_ir("sum")
    head = b'--BOUND\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n'
    for path in ("/v1/check", "/v1/models"):
        response = client.post(path, content=head + xml + ending,
                               headers={"content-type": "multipart/form-data; boundary=BOUND"})  # fmt: skip
        doc = assert_problem(response, 400, "request.invalid")
        assert "without its closing boundary '--BOUND--'" in doc["detail"], doc
    whole = client.post("/v1/check", content=head + xml + b"\r\n--BOUND--\r\nan epilogue",
                        headers={"content-type": "multipart/form-data; boundary=BOUND"})  # fmt: skip
    assert whole.status_code == 422, whole.text  # complete: read, and the missing bin is the IR's problem


@pytest.mark.parametrize(("body", "why"), [
    (b"--BOUND--\r\n", "the multipart body holds no part: it is its closing boundary '--BOUND--' alone"),
    (b'--BOUND\nContent-Disposition: form-data; name="xml"; filename="m.xml"\n\n<net/>\n--BOUND--\n',
     "the multipart body's lines end in LF alone (before its closing boundary '--BOUND--' too); end them in CRLF"),
    (b'--OTHER\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n<net/>\r\n--OTHER--\r\n',
     "the multipart body does not begin with the boundary line its Content-Type names, '--BOUND'"),
])  # fmt: skip
def test_a_whole_multipart_body_without_its_closing_boundary_says_what_it_lacks(
    client: TestClient, body: bytes, why: str
) -> None:
    """A browser's empty form, lines ended in LF alone, another boundary than the Content-Type's: every byte arrived,
    and each was refused as a body "cut short", which sends a client looking for a fault of its network."""
    response = client.post("/v1/check", content=body, headers={"content-type": "multipart/form-data; boundary=BOUND"})
    assert assert_problem(response, 400, "request.invalid")["detail"].startswith(why)


@pytest.mark.parametrize(("headers", "why"), [
    (b'Content-Disposition: form-data; name="xml"; filename="' + b"m" * 4300 + b'.xml"\r\n',
     "a part has a header line longer than 4224 bytes (a long file name, say), or one without a colon"),
    (b'Content-Disposition: form-data; name="xml"; filename="m.xml"\r\n' + b"X-A: 1\r\n" * 8,
     "a part has more than 8 header lines"),
    (b'Content-Disposition form-data; name="xml"\r\n', "a part's header holds a character a header name cannot "
     "hold (byte 32) at byte 28 of the body: a line without its colon"),
    (b'Content-Disposition: form-data; name="xml"; filename="m.xml"\r\nNoColonHere\r\n',
     "a part's header holds a character a header name cannot hold (byte 13)"),
    (b'Content-Disposition: form-data; name="xml"; filename="m.xml"\r\nNoColonHere\r\n' + b"x" * 5000 + b"\r\n",
     "a part has a header line longer than 4224 bytes (a long file name, say), or one without a colon"),
])  # fmt: skip
def test_a_multipart_body_that_cannot_be_parsed_says_why(client: TestClient, headers: bytes, why: str) -> None:
    """Starlette's answer was "Invalid multipart data." for all of these; the code is a body cut short's."""
    body = b"--BOUND\r\n" + headers + b"\r\n<net/>\r\n--BOUND--\r\n"
    response = client.post("/v1/check", content=body, headers={"content-type": "multipart/form-data; boundary=BOUND"})
    doc = assert_problem(response, 400, "request.invalid")
    assert doc["detail"].startswith(f"the multipart body cannot be read: {why}"), doc


@pytest.mark.parametrize("start", [b"a preamble\r\n--BOUND\r\n", b"--BOUNDARY\r\n", b"--BOUND;\r\n"])
def test_a_multipart_body_that_does_not_begin_with_its_boundary_says_so(
    client: TestClient, start: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """In the answer, and only there: not a warning in the server's log for each such request."""
    body = start + b'Content-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n<net/>\r\n--BOUND--\r\n'
    response = client.post("/v1/check", content=body, headers={"content-type": "multipart/form-data; boundary=BOUND"})
    doc = assert_problem(response, 400, "request.invalid")
    assert "does not begin with its first boundary line" in doc["detail"], doc
    assert "preamble" in doc["detail"]
    assert [r.getMessage() for r in caplog.records if r.name.startswith("python_multipart")] == []


def test_a_multipart_content_type_without_its_boundary_says_so(client: TestClient) -> None:
    body = b'--BOUND\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n<net/>\r\n--BOUND--\r\n'
    response = client.post("/v1/check", content=body, headers={"content-type": "multipart/form-data"})
    doc = assert_problem(response, 400, "request.invalid")
    assert doc["detail"] == "the multipart body cannot be read: its Content-Type names no boundary", doc


_FILE = (b'Content-Disposition: form-data; name="xml"; filename="m.xml"', b"<net/>")


@pytest.mark.parametrize(("parts", "why"), [
    # a part under 1 MiB stays in memory: a form holds no more parts than its route takes fields, and one more
    ([_FILE] + [(b'Content-Disposition: form-data; name="f%d"' % i, b"x") for i in range(4)],
     "it has more than 3 text fields (parts without a filename)"),
    ([_FILE] + [(b'Content-Disposition: form-data; name="f%d"; filename="a"' % i, b"x") for i in range(3)],
     "it has more than 3 files"),
    ([(b'Content-Disposition: form-data; name="xml"', b"x" * (1 << 20) + b"x")],
     "a text field (a part without a filename) holds more than 1024 KiB; send a model's files as file parts"),
    ([(b"Content-Type: text/xml", b"<net/>")], "a part has no name; expected a header such as 'Content-Disposition: "),
])  # fmt: skip
def test_a_form_past_its_bounds_says_which(client: TestClient, parts: list[tuple[bytes, bytes]], why: str) -> None:
    """Too many parts, a text field too large, a part without a name: the form's error, in words, not Starlette's."""
    body = b"".join(b"--B\r\n" + head + b"\r\n\r\n" + data + b"\r\n" for head, data in parts) + b"--B--\r\n"
    response = client.post("/v1/check", content=body, headers={"content-type": "multipart/form-data; boundary=B"})
    doc = assert_problem(response, 400, "request.invalid")
    assert doc["detail"].startswith(f"the multipart body cannot be read: {why}"), doc


def test_every_error_code_is_documented_for_clients() -> None:
    """Each error class's code (the library's, the service's, the worker pool's) has its row in docs/api.md."""
    table = (ROOT / "docs" / "api.md").read_text("utf-8")
    classes = [c for m in (lib, api_errors, workers) for c in vars(m).values()
               if isinstance(c, type) and issubclass(c, lib.OvReduceError)]  # fmt: skip
    assert len(classes) > 15
    missing = sorted({c.code for c in classes} - set(re.findall(r"`([a-z_.]+)`", table)))
    assert missing == [], f"error codes without a row in docs/api.md: {missing}"


def test_requests_a_client_gets_wrong_are_answered_in_words(client: TestClient, rmsnorm_id: str) -> None:
    """JSON that does not parse says why and where (FastAPI showed its offset as a field: "body -> 1"); a text part
    where a file is taken says so (not pydantic's "Expected UploadFile, received: <class 'str'>")."""
    run = f"/v1/models/{rmsnorm_id}/layers/5/run"
    for body, why in ((b"{", "Expecting property name"), (b'{"seed":}', "Expecting value (at character 8)"),
                      (b'{"seed": 1}x', "Extra data (at character 11)")):  # fmt: skip
        problem = assert_problem(client.post(run, content=body, headers={"content-type": "application/json"}), 400,
                                 "http.400")  # fmt: skip
        assert problem["detail"].startswith("the request body cannot be read as JSON: ") and why in problem["detail"]
    xml, _ = sample("rmsnorm")
    problem = assert_problem(client.post("/v1/models", files={"xml": ("m.xml", xml)}, data={"bin": "text"}), 400,
                             "request.invalid")  # fmt: skip
    assert 'body -> bin: a file is expected: a part with filename="..."' in problem["detail"], problem
    # a file named by filename*= only (RFC 5987's form, which RFC 7578 forbids here): not called text, and named
    named = b"Content-Disposition: form-data; name=\"xml\"; filename*=UTF-8''mod%C3%A8le.xml\r\n\r\n"
    form = b"--B\r\n" + named + xml + b"\r\n--B--\r\n"
    response = client.post("/v1/check", content=form, headers={"content-type": "multipart/form-data; boundary=B"})
    detail = assert_problem(response, 400, "request.invalid")["detail"]
    assert 'xml: a file is expected: a part with filename="..." (not filename*=' in detail, detail
    assert "not text" not in detail, detail


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/docs", "/openapi.json", "/metrics", "/v1/check"])
def test_405_names_what_the_path_takes(client: TestClient, path: str) -> None:
    """The page, its files and the documents are GET (and HEAD): 405 said "it takes " with an empty Allow."""
    method = "GET" if path == "/v1/check" else "DELETE"
    response = client.request(method, path)
    expected = "POST" if path == "/v1/check" else "GET, HEAD"
    assert response.status_code == 405 and response.headers["allow"] == expected, (response.headers, response.text)
    assert response.json()["detail"].endswith(f"it takes {expected}")


@pytest.mark.parametrize("value", ["items=0-1", "bytes=10-0", "bytes=a-b", "bytes=0-1"])
def test_a_range_is_ignored_files_are_served_whole(client: TestClient, value: str) -> None:
    """RFC 9110 lets a server ignore Range; a malformed one was Starlette's plain-text 400. Nothing says ranges are
    served (Accept-Ranges), then."""
    for path in ("/", "/static/app.js", "/static/style.css"):
        response = client.get(path, headers={"Range": value})
        assert response.status_code == 200 and response.content == client.get(path).content, response.text
        assert "accept-ranges" not in response.headers and "accept-ranges" not in client.head(path).headers


def test_an_integer_too_long_to_read_is_said_so(client: TestClient, rmsnorm_id: str) -> None:
    body = b'{"seed": ' + b"1" * 5000 + b"}"
    for url in (f"/v1/models/{rmsnorm_id}/layers/5/run", f"/v2/models/{rmsnorm_id}.5/infer"):
        response = client.post(url, content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400, response.text
        assert (
            "an integer of more than 4300 digits" in response.text and "sys.set_int_max_str_digits" not in response.text
        )


def test_a_trailing_slash_is_a_404_naming_the_path_without_it(client: TestClient, rmsnorm_id: str) -> None:
    """As for every route: the layer list and a run with a slash after them were a layer named '' and a 405."""
    layers = f"/v1/models/{rmsnorm_id}/layers"
    for method, path in (("GET", f"{layers}/"), ("POST", f"{layers}/5/run/"), ("GET", "/v1/models/")):
        doc = assert_problem(client.request(method, path), 404, "http.404")
        assert doc["detail"].endswith(f"(without the trailing slash: {path.rstrip('/')})"), doc


def test_a_path_ending_in_a_line_break_is_no_routes(client: TestClient, rmsnorm_id: str) -> None:
    """A route's regex ends in "$", which matches before a final line break: every route served its path with %0A
    after it (an inference ran), counted under the route's template."""
    from starlette.routing import Mount

    from api.routes import ROUTERS
    from tests.api.test_metrics import scrape

    filled = {"model_id": rmsnorm_id, "layer": "5", "name": f"{rmsnorm_id}.5", "version": "1"}
    routes = [*client.app.routes, *(route for router in ROUTERS for route in router.routes)]  # type: ignore[attr-defined]
    asked = {
        (method, re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: filled[m[1]], route.path) + ("/app.js" * is_mount))
        for route in routes if hasattr(route, "path") for is_mount in [isinstance(route, Mount)]
        for method in sorted(getattr(route, "methods", None) or {"GET"}) if method != "HEAD"
    }  # fmt: skip
    assert len(asked) == 29, sorted(asked)
    for method, path in sorted(asked, key=lambda asked: asked[0] == "DELETE"):  # (the model deleted last, if at all)
        answer = client.request(method, f"{path}%0A", json={} if method == "POST" else None)
        assert answer.status_code == 404, (method, path, answer.text)
        said = answer.json().get("detail") or answer.json()["error"]
        assert said.startswith(f"no route for {method} {path}\\n;"), (method, path, said)
    counted = [dict(labels) for (name, labels) in scrape(client) if name == "ovreduce_http_requests_total"]
    assert {labels["route"] for labels in counted if labels["status"] == "404"} == {"<unmatched>"}, counted
    assert client.get(f"/v1/models/{rmsnorm_id}").status_code == 200


@pytest.mark.parametrize("path", ["/v1/check", "/v1/models", "/v1/conform"])
def test_an_upload_the_client_abandons_is_counted_499_not_an_internal_error(
    client: TestClient, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that closes its connection halfway through an upload has gone, as one that leaves while its job
    waits: 499 (nothing is sent), neither a malformed request (400) nor an internal error, and nothing is logged."""
    head = b'--B\r\nContent-Disposition: form-data; name="xml"; filename="m.xml"\r\n\r\n<net'
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": head, "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"multipart/form-data; boundary=B"),
        (b"content-length", b"9000"),
    ]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": headers,
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 80), "state": {}}  # fmt: skip
    with caplog.at_level(logging.ERROR, logger="ovreduce.api"):
        client.portal.call(client.app, scope, receive, send)  # type: ignore[union-attr]
    from tests.api.test_metrics import scrape

    assert sent[0]["status"] == 499, sent
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b"", sent
    assert not caplog.records, caplog.records
    counted = [dict(labels) for (name, labels) in scrape(client) if name == "ovreduce_http_requests_total"]
    assert {"route": path, "method": "POST", "status": "499"} in [
        {k: labels[k] for k in ("route", "method", "status")} for labels in counted
    ], counted


@pytest.mark.parametrize(
    "media", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=b", None]
)
def test_a_body_of_another_media_type_says_so(client: TestClient, rmsnorm_id: str, media: str | None) -> None:
    """A JSON body labelled as something else, or not labelled, is not read as JSON: the answer names the
    Content-Type, not the body's fields ("Input should be a valid dictionary"); JSON labelled so is read."""
    run = f"/v1/models/{rmsnorm_id}/layers/5/run"
    headers = {"content-type": media} if media else {}
    doc = assert_problem(client.post(run, content=b'{"seed": 1}', headers=headers), 415, "request.media_type")
    shown = repr(media.split(";")[0]) if media else "no Content-Type"
    wanted = f"the body is sent as {shown}; POST /v1/models/{{model_id}}/layers/{{layer}}/run reads application/json"
    assert doc["detail"].startswith(wanted), doc["detail"]  # the route as documented, not "{layer:path}"
    for labelled in ("application/json", "application/vnd.x+json", "application/json; charset=utf-8"):
        assert client.post(run, content=b'{"seed": 1}', headers={"content-type": labelled}).status_code == 200


@pytest.mark.parametrize(("media", "body"), [
    ("application/json", b"{}"),
    ("application/x-www-form-urlencoded", b"{}"),
    ("application/x-www-form-urlencoded", b"&".join(b"f%d=1" % i for i in range(1001))),  # past the form's bounds
    ("application/x-www-form-urlencoded", b"f=" + b"x" * (1 << 20) + b"x"),
])  # fmt: skip
def test_an_upload_of_another_media_type_says_so(client: TestClient, media: str, body: bytes) -> None:
    doc = assert_problem(client.post("/v1/check", content=body, headers={"content-type": media}), 415,
                         "request.media_type")  # fmt: skip
    wanted = f"the body is sent as {media!r}; POST /v1/check reads multipart/form-data (an upload): send it with that"
    assert doc["detail"] == wanted + " Content-Type", doc["detail"]
