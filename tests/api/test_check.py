"""POST /v1/check: the same document as ``ovreduce check --format json``, 422 for what is not an IR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.routes.common import display_name
from ovreduce.cli import main as cli_main

from .conftest import SAMPLES, assert_problem, files, sample
from .irs import reduce_ir

GOOD = ["rmsnorm", "all_reductions", "dynamic", "runtime_axes", "spec_examples", "convert_axes"]
BROKEN = sorted(p.stem for p in (SAMPLES / "broken").glob("*.xml"))


def _cli_check(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    cli_main(["check", "--format", "json", *extra, str(path)])
    doc: dict = json.loads(capsys.readouterr().out)
    return doc


@pytest.mark.parametrize("name", GOOD + [f"broken/{b}" for b in BROKEN])
def test_same_document_as_the_cli(client: TestClient, capsys: pytest.CaptureFixture[str], name: str) -> None:
    xml, bin_data = sample(name)
    response = client.post("/v1/check", files=files(xml, bin_data, name=Path(name).name + ".xml"))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    got = response.json()
    want = _cli_check(SAMPLES / f"{name}.xml", capsys)
    assert got["models"][0]["path"] == Path(name).name + ".xml"
    want["models"][0]["path"] = got["models"][0]["path"]
    assert got == want
    assert len(got["models"]) == 1
    if name.startswith("broken/"):
        assert got["ok"] is False or got["models"][0]["findings"], "a broken sample has findings"


def test_findings_are_200_not_an_error(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum", out_dims=(2, 3))  # declares a wrong output shape
    response = client.post("/v1/check", files=files(xml, bin_data))
    assert response.status_code == 200
    doc = response.json()
    assert doc["ok"] is False
    assert [f["code"] for f in doc["models"][0]["findings"]] == ["reduce-output-mismatch"]


def test_engine_openvino(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    xml, bin_data = sample("rmsnorm")
    response = client.post("/v1/check?engine=openvino", files=files(xml, bin_data, name="rmsnorm.xml"))
    assert response.status_code == 200, response.text
    got = response.json()
    reduction = got["models"][0]["reductions"][0]
    assert "openvino_output_shape" in reduction
    want = _cli_check(SAMPLES / "rmsnorm.xml", capsys, "--engine", "openvino")
    want["models"][0]["path"] = "rmsnorm.xml"
    assert got == want
    assert "ovreduce-check." not in response.text  # the temporary file's path never shows


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "iso-8859-1"])
def test_engine_openvino_reads_irs_in_other_encodings(client: TestClient, encoding: str) -> None:
    """An IR in UTF-16 (with or without a byte order mark) or latin-1, as its declaration says: OpenVINO is
    given the text, not bytes it would misread, and agrees with the native reading."""
    xml, bin_data = reduce_ir("sum")
    text = xml.decode().replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    text = text.replace('name="sum"', 'name="somme-é"')
    assert f'encoding="{encoding}"' in text
    response = client.post("/v1/check?engine=openvino", files=files(text.encode(encoding), bin_data))
    assert response.status_code == 200, response.text
    [model] = response.json()["models"]
    assert model["ok"] and model["findings"] == [], model
    [reduction] = model["reductions"]
    assert reduction["layer_name"] == "somme-é" and reduction["openvino_checked"], reduction


def test_engine_openvino_read_failure_hides_paths(client: TestClient) -> None:
    xml, _ = reduce_ir("sum")
    response = client.post("/v1/check?engine=openvino", files=files(xml, None))  # no bin: OpenVINO refuses?
    # without its .bin the native reader refuses the Const first: 422 before OpenVINO is asked
    assert_problem(response, 422, "ir.weights")
    assert "a 'bin' file field" in response.json()["detail"]


def test_reshape(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum", shape="?,3", dims=(-1, 3), out_dims=(-1,))
    response = client.post("/v1/check", params={"reshape": "x=[4,3]"}, files=files(xml, bin_data))
    assert response.status_code == 200, response.text
    assert response.json()["models"][0]["reductions"][0]["inferred_output_shape"] == [4]
    assert_problem(client.post("/v1/check", params={"reshape": "nope"}, files=files(xml, bin_data)), 400, "input")
    assert_problem(client.post("/v1/check", params={"reshape": "y=[1]"}, files=files(xml, bin_data)), 400, "input")
    assert_problem(client.post("/v1/check", params={"reshape": "x=[a]"}, files=files(xml, bin_data)), 400, "input")


def test_unknown_engine_is_400(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    doc = assert_problem(client.post("/v1/check?engine=fast", files=files(xml, bin_data)), 400, "request.invalid")
    assert doc["errors"][0]["loc"] == ["query", "engine"]


def test_missing_xml_is_400(client: TestClient) -> None:
    doc = assert_problem(client.post("/v1/check", files={"bin": ("m.bin", b"1234")}), 400, "request.invalid")
    assert doc["errors"][0]["loc"] == ["body", "xml"]
    # a form or JSON where an upload is taken: the media type is what is wrong
    assert_problem(client.post("/v1/check", data={"xml": "not a file"}), 415, "request.media_type")
    assert_problem(client.post("/v1/check", json={"xml": "<net/>"}), 415, "request.media_type")


def test_filename_is_sanitised(client: TestClient) -> None:
    xml, bin_data = reduce_ir("sum")
    response = client.post("/v1/check", files=files(xml, bin_data, name="../../etc/evil.xml"))
    assert response.status_code == 200
    assert response.json()["models"][0]["path"] == "evil.xml"


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("../../etc/evil.xml", "evil.xml"),
        ("C:\\Users\\me\\m.xml", "m.xml"),
        ("a\x07b\x00.xml", "ab.xml"),
        ("", "model.xml"),
        (None, "model.xml"),
        ("/", "model.xml"),
        ("x" * 300, "x" * 200),
    ],
)
def test_display_name(given: str | None, shown: str) -> None:
    assert display_name(given, "model.xml") == shown


def test_repeated_check_is_cached(client: TestClient) -> None:
    xml, bin_data = sample("rmsnorm")
    first = client.post("/v1/check", files=files(xml, bin_data, name="a.xml"))
    second = client.post("/v1/check", files=files(xml, bin_data, name="a.xml"))
    third = client.post("/v1/check", files=files(xml, bin_data, name="b.xml"))
    assert first.content == second.content
    assert third.json()["models"][0]["path"] == "b.xml"
    assert len(client.app.state.services.check_cache) == 2  # type: ignore[attr-defined]


def test_large_documents_are_not_cached(client: TestClient) -> None:
    """The cache holds small documents only: a few answers with long names cannot pin gigabytes."""
    xml, bin_data = sample("rmsnorm")
    long_name = b'name="rmsnorm/variance' + b"x" * (300 << 10)  # a 300 KiB layer name, in the document
    big = xml.replace(b'name="rmsnorm/variance', long_name, 1)
    for name in ("a.xml", "b.xml"):
        response = client.post("/v1/check", files=files(big, bin_data, name=name))
        assert response.status_code == 200 and len(response.content) > 300 << 10, response.text[:300]
    assert len(client.app.state.services.check_cache) == 0  # type: ignore[attr-defined]


def test_an_empty_bin_is_read_as_sent(client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty bin field is a bin of 0 bytes, as the CLI reads an empty .bin: its Consts lie outside it (the answer
    said there was no bin field)."""
    xml, _ = reduce_ir("sum")
    (tmp_path / "sum.xml").write_bytes(xml)
    (tmp_path / "sum.bin").write_bytes(b"")
    cli_main(["check", str(tmp_path / "sum.xml")])
    cli = capsys.readouterr().out
    assert "sum.bin (0 bytes): expected offset + size <= 0" in cli, cli
    for route in ("/v1/check", "/v1/models"):
        problem = assert_problem(client.post(route, files=files(xml, b"", "sum.xml")), 422, "ir.weights")
        assert "lies outside sum.bin (0 bytes)" in problem["detail"], problem
