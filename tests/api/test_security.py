"""Hostile input against the app in-process: foreign Host values (DNS rebinding), cross-origin requests
(CSRF), the security headers and the page's CSP, no redirect built from headers, no server path in answers.

The raw-socket cases (413 without ``Expect``, slow headers) need a real server: see test_server.py.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api import problems
from api.errors import StoreError
from api.main import STATIC
from api.middleware import host_allowed
from api.store.disk import ModelStore

from .conftest import assert_problem, files
from .irs import reduce_ir
from .test_metrics import scrape, value

STATE_CHANGES = ["POST", "PUT", "PATCH", "DELETE"]


# -- Host ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io", "", "a b", "[::2]"]
)
def test_foreign_host_is_400(client: TestClient, host: str) -> None:
    xml, bin_data = reduce_ir("sum")
    for response in (
        client.get("/v1/models", headers={"host": host}),
        client.get("/", headers={"host": host}),
        client.post("/v1/models", files=files(xml, bin_data), headers={"host": host}),
    ):
        doc = assert_problem(response, 400, "request.host")
        assert "OVREDUCE_ALLOWED_HOSTS" in doc["detail"]
        assert response.headers["x-content-type-options"] == "nosniff"
    assert client.get("/v1/models").json()["models"] == []  # the upload was not stored


def test_hostile_host_is_not_echoed(client: TestClient) -> None:
    hostile = "<script>alert(1)</script>" + "x" * 500
    response = client.get("/v1/models", headers={"host": hostile})
    doc = assert_problem(response, 400, "request.host")
    assert "<" not in response.text and "script>" not in response.text
    assert len(doc["detail"]) < 300


@pytest.mark.parametrize(
    ("host", "quoted"),
    [("a@localhost", "'a@localhost'"), ("a!b", "'a!b'"), ('<a href="x">', "'\\x3ca href=\\x22x\\x22\\x3e'")],
)
def test_a_refused_host_is_quoted_as_sent(client: TestClient, host: str, quoted: str) -> None:
    """Printable characters as sent (they were '?': a Host the client never sent), markup escaped."""
    doc = assert_problem(client.get("/v1/models", headers={"host": host}), 400, "request.host")
    assert doc["detail"].startswith(f"the Host {quoted} is not a name"), doc["detail"]


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:8000", "LOCALHOST:80"])
def test_local_hosts_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/v1/models", headers={"host": host}).status_code == 200


def test_allowed_hosts_setting(make_client: Callable[..., TestClient]) -> None:
    client = make_client(allowed_hosts="ovreduce.internal, *.example.com, box:9000", host="10.0.0.5")
    for host in ("ovreduce.internal", "ovreduce.internal:1234", "a.example.com", "b.a.example.com:1", "box:9000",
                 "10.0.0.5:8000"):  # fmt: skip
        assert client.get("/v1/models", headers={"host": host}).status_code == 200, host
    for host in ("localhost", "example.com", "box", "box:9001", "xexample.com", "10.0.0.6"):
        assert_problem(client.get("/v1/models", headers={"host": host}), 400, "request.host")
    anything = make_client(allowed_hosts="*")
    assert anything.get("/v1/models", headers={"host": "whatever.example"}).status_code == 200


def test_host_patterns() -> None:
    assert host_allowed(b"[::1]:8000", ("[::1]",))
    assert not host_allowed(None, ("localhost",))
    assert not host_allowed(b"localhost:99999999", ("localhost",))
    assert not host_allowed(b"localhost@evil", ("localhost",))


def test_health_checks_answer_any_host(client: TestClient) -> None:
    """Orchestrators' probes name the container's address; the health answers hold nothing to steal."""
    assert client.get("/healthz", headers={"host": "10.1.2.3:8000"}).status_code == 200
    assert client.get("/readyz", headers={"host": "10.1.2.3:8000"}).status_code in (200, 503)


# -- Origin ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "http://127.0.0.1:8000"},  # another port: another origin
        {"origin": "http://localhost"},  # the same machine by another name: another origin
        {"origin": "null"},  # sandboxed frames, file: pages
        {"origin": "http://127.0.0.1.evil.example"},
        {"origin": "http://evil.example@127.0.0.1"},  # not what a browser sends: never the service's own
        {"origin": "http://127.0.0.1/path"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
def test_cross_origin_state_changes_are_403(client: TestClient, headers: dict[str, str]) -> None:
    xml, bin_data = reduce_ir("sum")
    response = client.post("/v1/models", files=files(xml, bin_data), headers=headers)
    assert_problem(response, 403, "request.origin")
    assert client.get("/v1/models").json()["models"] == []
    for method in STATE_CHANGES:
        response = client.request(method, f"/v1/models/{'0' * 64}", headers=headers)
        assert_problem(response, 403, "request.origin")
    assert_problem(client.post("/v1/check", files=files(xml, bin_data), headers=headers), 403, "request.origin")


def test_header_fields_over_16_kib_are_431(client: TestClient) -> None:
    response = client.get("/v1/models", headers={"x-big": "a" * (20 << 10)})
    doc = assert_problem(response, 431, "request.headers")
    assert "more than the limit of 16384" in doc["detail"]
    assert client.get("/v1/models", headers={"x-fits": "a" * (12 << 10)}).status_code == 200


def test_two_origins_are_refused(client: TestClient) -> None:
    two = [("origin", "http://127.0.0.1"), ("origin", "http://evil.example")]
    assert_problem(client.post("/v1/check", files=files(*reduce_ir("sum")), headers=two), 403, "request.origin")
    sites = [("sec-fetch-site", "same-origin"), ("sec-fetch-site", "cross-site")]
    assert_problem(client.post("/v1/check", files=files(*reduce_ir("sum")), headers=sites), 403, "request.origin")


def test_own_origin_and_plain_clients_are_served(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    own = {"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"}
    response = client.post("/v1/models", files=files(xml, bin_data), headers=own)
    assert response.status_code == 201, response.text
    mid = response.json()["id"]
    assert client.post("/v1/models", files=files(xml, bin_data), headers={"origin": "http://127.0.0.1:80"}).is_success
    assert client.post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]}).status_code == 200
    # reads from other origins are not refused here (the browser withholds their answers: no CORS headers)
    listing = client.get("/v1/models", headers={"origin": "http://evil.example"})
    assert listing.status_code == 200 and "access-control-allow-origin" not in listing.headers
    assert client.delete(f"/v1/models/{mid}", headers={"origin": "http://127.0.0.1"}).status_code == 204


def test_origin_of_the_port_named_in_host(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    xml, bin_data = reduce_ir("sum")
    headers = {"host": "localhost:8123", "origin": "http://localhost:8123"}
    assert client.post("/v1/models", files=files(xml, bin_data), headers=headers).status_code == 201
    headers = {"host": "localhost:8123", "origin": "http://localhost:8124"}
    assert_problem(client.post("/v1/models", files=files(xml, bin_data), headers=headers), 403, "request.origin")


def test_origin_of_a_name_the_allow_list_gives_behind_a_host_rewriting_proxy(
    make_client: Callable[..., TestClient],
) -> None:
    """A proxy that rewrites ``Host`` (nginx's plain ``proxy_pass``) passes the page's ``Origin`` under the name it
    serves: a name the allow-list gives is the service's own, on its scheme's default port or the port it names.
    Every POST of the page was 403, with the docs' advice (add the name) changing nothing. Not: another port, a name
    the list does not give, a loopback name (another server of the machine), anything through ``*`` or ``*.suffix``
    (a page on any subdomain, another team's)."""
    names = "localhost,127.0.0.1,[::1],ovreduce.example.com,*.apps.example,lab.example:8443"
    xml, bin_data = reduce_ir("sum")
    proxied = make_client(allowed_hosts=names)
    for origin in ("https://ovreduce.example.com", "http://ovreduce.example.com:80", "https://lab.example:8443"):
        headers = {"host": "127.0.0.1:8000", "origin": origin, "sec-fetch-site": "same-origin"}
        assert proxied.post("/v1/check", files=files(xml, bin_data), headers=headers).status_code == 200, origin
    for origin in ("https://ovreduce.example.com:8443", "https://evil.example", "https://lab.example",
                   "http://localhost", "https://127.0.0.1", "https://x.apps.example"):  # fmt: skip
        headers = {"host": "127.0.0.1:8000", "origin": origin}
        assert_problem(proxied.post("/v1/check", files=files(xml, bin_data), headers=headers), 403, "request.origin")
    anyone = make_client(allowed_hosts="*")
    headers = {"host": "127.0.0.1:8000", "origin": "https://evil.example"}
    assert_problem(anyone.post("/v1/check", files=files(xml, bin_data), headers=headers), 403, "request.origin")


# -- headers, CSP, the page ------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/", "/static/app.js", "/static/style.css", "/v1/models", "/healthz", "/nothing"])
def test_security_headers_on_every_answer(client: TestClient, path: str) -> None:
    headers = client.get(path).headers
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"
    csp = headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp


def test_the_page_needs_nothing_inline() -> None:
    """The CSP forbids inline scripts, styles and handlers: the page has none (its code is in files)."""
    html = (STATIC / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline <script>"
    assert "<style" not in html and not re.search(r"\sstyle=", html), "an inline style"
    assert not re.search(r"\son[a-z]+=", html), "an inline event handler"
    js = (STATIC / "app.js").read_text()
    assert not re.search(r"\beval\(|new Function\(|setAttribute\(\s*['\"](style|on)", js)


def test_docs_allow_only_their_own_inline_script(client: TestClient) -> None:
    import base64
    import hashlib

    response = client.get("/docs")
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    [script] = re.findall(r"<script>(.*?)</script>", response.text, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'self' 'sha256-{digest}'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp


@pytest.mark.parametrize("path", ["/v1/models/", "/docs/", "/v1/check/", "/healthz/"])
def test_no_redirect_from_the_host_header(make_client: Callable[..., TestClient], path: str) -> None:
    client = make_client(allowed_hosts="*")  # even where every Host is answered
    response = client.get(path, headers={"host": "evil.example"}, follow_redirects=False)
    assert response.status_code == 404 and "location" not in response.headers
    assert "evil.example" not in response.text


# -- no server path in any answer ------------------------------------------------------------------------
def test_scrub_replaces_private_paths() -> None:
    base = Path(tempfile.gettempdir())
    problems.add_private_path(base / "ovreduce-secret-store")
    doc = problems.problem_document(
        400, f"{base}/ovreduce-secret-store/models/abc/model.xml: bad; see {Path.home()}", "x",
        instance="/v1/x", errors=[{"msg": f"at {os.getcwd()}/a.py"}],
    )  # fmt: skip
    text = str(doc)
    assert "ovreduce-secret-store" not in text and str(base) not in text and str(Path.home()) not in text
    assert "model.xml: bad" in doc["detail"] and "a.py" in doc["errors"][0]["msg"]
    assert problems.scrub("a/tmp/b and /tmpfoo and tmp") == "a/tmp/b and /tmpfoo and tmp"


def test_names_from_the_users_file_are_answered_as_they_are(client: TestClient) -> None:
    """A layer whose name begins with a server path (the temporary directory) is not a path of the server: its name,
    and a message that quotes it, are answered as they are, and the name addresses the layer."""
    from urllib.parse import quote

    name = f"{tempfile.gettempdir()}/cache/mean"
    xml, bin_data = reduce_ir(name, out_dims=(2, 5))  # a declared output that is wrong: a finding
    checked = client.post("/v1/check", files=files(xml, bin_data)).json()["models"][0]
    assert [r["layer_name"] for r in checked["reductions"]] == [f["layer_name"] for f in checked["findings"]] == [name]
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    assert client.get(f"/v1/models/{mid}/layers").json()["layers"][0]["layer_name"] == name
    assert client.get(f"/v1/models/{mid}/layers/{quote(name, safe='')}").json()["layer_name"] == name
    doc = {"layer_name": name, "error": f"layer '{name}' failed: {tempfile.gettempdir()}/secret/model.xml"}
    scrubbed = problems.scrub_json(problems.dumps(doc, indent=False))
    assert scrubbed is not None and problems.json.loads(scrubbed) == {
        "layer_name": name, "error": f"layer '{name}' failed: model.xml"}  # fmt: skip


def test_an_onnx_uploads_names_are_answered_as_they_are(client: TestClient) -> None:
    """An ONNX node named like a server path (the temporary directory, as PyTorch names nodes by their module path):
    a conform refusal that quotes it quotes it whole, as it does an IR's names, not cut to its base name (which told
    a client which of its guessed paths are the server's)."""
    from onnx import TensorProto, helper

    name = f"{tempfile.gettempdir()}/model/layers.0/ReduceMax"
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["y"], keepdims=1, name="mean"),
        helper.make_node("ReduceMax", ["x"], [""], keepdims=1, name=name),
    ]  # (an output named '': refused)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    refused = client.post("/v1/conform", files={"onnx": ("m.onnx", model.SerializeToString())})
    assert f"node {name!r} (ReduceMax)" in assert_problem(refused, 400)["detail"]


def test_an_error_quotes_the_users_names_as_they_are(client: TestClient) -> None:
    """A Parameter named like a server path (the temporary directory): an error that lists the model's inputs named
    it by its base name, which then names no input ("input 'hidden' names no model input (inputs: hidden)"). The
    names of the model and of the request are quoted whole; the server's own paths in the same message are not."""
    name = f"{tempfile.gettempdir()}/cache/hidden"
    xml, bin_data = reduce_ir("sum", param_name=name)
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    wrong = client.post(f"/v1/models/{mid}/audit", json={"shapes": {"nope": "[2,3]"}})
    assert f"(inputs: {name})" in assert_problem(wrong, 400)["detail"]
    assert client.post(f"/v1/models/{mid}/audit", json={"shapes": {name: "[2,3]"}}).status_code == 200
    checked = client.post("/v1/check?reshape=nope=[2,3]", files=files(xml, bin_data))
    assert f"(Parameters: '{name}')" in assert_problem(checked, 400)["detail"]
    # however the file writes it (single quotes, blanks around '='), and as the message writes it (escaped)
    for written, quoted in ((f"name = '{name}&#9;1'", f"'{name}\\t1'"), (f'name="{name}&#x202E;"', f"'{name}\\u202e'")):
        broken = xml.replace(b'name="sum" type="ReduceSum"', f'{written} type="ReduceSum"'.encode())
        broken = broken.replace(b'from-port="2" to-layer="3"', b'from-port="9" to-layer="3"')  # from no port
        assert quoted in assert_problem(client.post("/v1/check", files=files(broken, bin_data)), 422)["detail"]
    # only a name quoted whole is kept: one that is a part of a longer path keeps none of it
    assert problems.answered(f"{name}/more and {name}", [name]) == f"more and {name}"


def test_what_the_request_itself_holds_is_answered_as_sent(client: TestClient) -> None:
    """Names like a server path (the temporary directory) that the client sent, in its request or in its model, are
    quoted as sent wherever the refusal is made: in the server process as it reads the request (a KServe output,
    input or datatype, a /v1 input, a path no route serves) and in a document quoting OpenVINO, which writes a name
    followed by '[0]'. The same name was cut to its base name there: 'unexpected inference output out'."""
    name = f"{tempfile.gettempdir()}/cache/out"
    xml, bin_data = reduce_ir("sum", param_name=name)
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    tensor = {"name": name, "shape": [2, 3], "datatype": "FP32", "data": [1.0] * 6}
    v2 = f"/v2/models/{mid}.2/infer"
    for body, quoted in (
        ({"inputs": [tensor], "outputs": [{"name": name}]}, f"output '{name}'"),
        ({"inputs": [{**tensor, "data": [1.0]}]}, f"input '{name}'"),
        ({"inputs": [{**tensor, "datatype": name}]}, f"datatype '{name}'"),
    ):
        response = client.post(v2, json=body)
        assert response.status_code == 400 and quoted in response.json()["error"], response.text
    run = client.post(f"/v1/models/{mid}/layers/2/run", json={"inputs": [{**tensor, "data": [1.0]}]})
    assert f"input '{name}'" in assert_problem(run, 400)["detail"]
    assert f"GET {name};" in assert_problem(client.get(name), 404)["detail"]
    assert f"/layers/{name};" in assert_problem(client.put(f"/v1/models/{mid}/layers/{name}"), 405)["detail"]
    refused, bin_refused = reduce_ir("sum", param_name=name, axes=(5,))
    checked = client.post("/v1/check?engine=openvino", files=files(refused, bin_refused)).json()["models"][0]
    said = [f["message"] for f in checked["findings"] if f["code"] == "openvino-read-failed"]
    assert said and f"{name}[0]" in said[0], said
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    axes = f"{tempfile.gettempdir()}/cache/axes"
    node = helper.make_node("ReduceMean", [name, axes], ["y"], name=f"{tempfile.gettempdir()}/cache/mean")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor(axes, TensorProto.INT64, [1], [5])],
    )  # fmt: skip
    model = onnx.ModelProto.SerializeToString(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    error = client.post("/v1/conform", files={"onnx": ("m.onnx", model, "application/octet-stream")}).json()["error"]
    assert f"Constant {axes}[0]" in error and f"{node.name}>" in error and f"{name}[0]" in error, error


def test_store_path_never_answered_even_when_an_error_names_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever raises with a server path in its message, the answer does not carry it."""
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]

    def open_meta(self: ModelStore, mid: str) -> None:
        raise StoreError(f"cannot read {self.root / 'models' / mid / 'meta.json'} in {os.getcwd()}")

    monkeypatch.setattr(ModelStore, "open_meta", open_meta)
    response = client.get(f"/v1/models/{'0' * 64}")
    doc = assert_problem(response, 503, "store")
    assert str(store) not in response.text and os.getcwd() not in response.text
    assert "meta.json" in doc["detail"]


def _onnx_with_external_data(location: str) -> bytes:
    """A ReduceMean ONNX model whose initializer's data is in a file ``location`` of the server's disk."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    weights = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    weights.data_location = TensorProto.EXTERNAL
    weights.ClearField("float_data")
    entry = weights.external_data.add()
    entry.key, entry.value = "location", location
    node = helper.make_node("ReduceMean", ["x"], ["y"], keepdims=0)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], initializer=[weights],
    )  # fmt: skip
    data: bytes = onnx.ModelProto.SerializeToString(helper.make_model(graph))
    return data


def test_conform_answers_name_no_server_path(client: TestClient) -> None:
    """OpenVINO's own message names the directory it resolved external data against: not in the answer."""
    for location in ("../../../../etc/passwd", "/etc/passwd", "no-such-file.bin"):
        onnx_file = ("m.onnx", _onnx_with_external_data(location), "application/octet-stream")
        response = client.post("/v1/conform", files={"onnx": onnx_file})
        assert response.status_code in (200, 400, 422, 503), response.text
        for secret in (os.getcwd(), str(Path.home()), tempfile.gettempdir()):
            assert f"{secret}'" not in response.text and f"{secret}/" not in response.text, response.text


def test_hostile_requests_get_no_server_path(client: TestClient) -> None:
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    secrets = [str(store), str(store.resolve()), os.getcwd(), str(Path.home())]
    xml, bin_data = reduce_ir("sum")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    answers = [
        client.post("/v1/check", files=files(b"<net", None)),
        client.post("/v1/check", files=files(xml, b"\x00")),
        client.post("/v1/check", files=files(b'<?xml version="1.0"?><!DOCTYPE n SYSTEM "file:///etc/passwd"><n/>')),
        client.post("/v1/models", files=files(xml.replace(b"ReduceSum", b"ReduceX"), bin_data)),
        client.post("/v1/models", files={"xml": ("../../../../etc/passwd", xml, "application/xml")}),
        client.post(f"/v1/models/{mid}/layers/sum/run", json={"inputs": [{"name": "x", "shape": [1], "data": []}]}),
        client.post(f"/v1/models/{mid}/layers/..%2F..%2Fetc/run"),
        client.post(f"/v1/models/{mid}/layers/sum/run", content=b"{", headers={"content-type": "application/json"}),
        client.get(f"/v1/models/{mid}/layers/%00"),
        client.post("/v1/conform", files={"onnx": ("m.onnx", b"\x08\x07\x12\x01x", "application/octet-stream")}),
        client.post("/v1/conform", files={"onnx": ("/etc/x.onnx", b"garbage", "application/octet-stream")}),
        client.get("/v1/models/zz"),
        client.get("/static/../../../etc/passwd"),
    ]
    for answer in answers:
        assert answer.status_code < 500 or answer.status_code == 503, answer.text
        for secret in secrets:
            assert secret not in answer.text, (answer.request.url, answer.text)


# -- requests in flight ----------------------------------------------------------------------------------
def test_requests_beyond_max_requests_are_503_but_health_is_answered(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """One request at a time: while a real, seconds-long audit holds the slot, another request is 503 with
    Retry-After, and /healthz is still answered."""
    import threading
    import time

    from tests.audit.ov_models import many_reductions

    client = make_client(max_requests=1)
    slow = many_reductions(tmp_path / "many.xml", 400)
    mid = client.post("/v1/models", files=files(slow.read_bytes(), slow.with_suffix(".bin").read_bytes())).json()["id"]
    xml, bin_data = reduce_ir("sum")
    audit: list[int] = []
    thread = threading.Thread(
        target=lambda: audit.append(client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"}).status_code)
    )
    thread.start()
    try:
        time.sleep(0.5)  # the audit runs for seconds
        assert thread.is_alive()
        response = client.post("/v1/check", files=files(xml, bin_data))
        assert_problem(response, 503, "busy")
        assert response.headers["retry-after"] == "5"
        for probe in ("/healthz", "/readyz", "/v2/health/live", "/v2/health/ready", "/metrics"):
            assert client.get(probe).status_code == 200, probe  # probes and scrapes matter most under load
        # counted under the route it was for: a busy route shows in its own series
        assert (
            value(scrape(client), "ovreduce_http_requests_total", method="POST", route="/v1/check", status="503") == 1
        )
    finally:
        thread.join(60)
    assert audit == [200]
    assert client.get("/v1/models").status_code == 200  # the slot is free again
