"""``POST /v1/models/{id}/audit`` with ``fail_on_drift``: the same verdict and drift split as the library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from ovreduce import load_ir
from ovreduce.audit import audit_model
from tests.api.conftest import assert_problem, files

from . import ov_models


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("audit_api")
    settings = Settings(store=folder / "store", run_timeout_s=60.0)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as test_client:
        yield test_client


@pytest.fixture(scope="module")
def rms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ov_models.rms_norm(tmp_path_factory.mktemp("audit_api_model") / "rms.xml", hidden=256, tokens=4)


@pytest.fixture(scope="module")
def rms_id(client: TestClient, rms: Path) -> str:
    response = client.post("/v1/models", files=files(rms.read_bytes(), rms.with_suffix(".bin").read_bytes(), "rms.xml"))
    assert response.status_code in (200, 201), response.text
    mid: str = response.json()["id"]
    return mid


@pytest.mark.parametrize("limit", [None, 1e-6, 0.5])
def test_fail_on_drift_over_http(client: TestClient, rms: Path, rms_id: str, limit: float | None) -> None:
    body: dict[str, object] = {"precision": "bf16"} | ({} if limit is None else {"fail_on_drift": limit})
    response = client.post(f"/v1/models/{rms_id}/audit", json=body)
    assert response.status_code == 200, response.text
    doc = response.json()
    library = audit_model(load_ir(rms), precision="bf16", fail_on_drift=limit).to_json()
    assert doc["fail_on_drift"] == library["fail_on_drift"] == limit
    assert doc["ok"] == library["ok"]
    [layer] = doc["layers"]
    assert layer["status"] == library["layers"][0]["status"]
    assert set(layer["drift_split"]) == {"total", "from_input", "added", "limit", "exceeded"}
    assert layer["drift_split"]["limit"] == limit
    assert doc["ok"] is not (limit == 1e-6 and doc["effective_precision"] == "bf16")


@pytest.mark.parametrize("limit", [-1, "0.1", True])
def test_a_bad_drift_limit_is_a_bad_request(client: TestClient, rms_id: str, limit: object) -> None:
    response = client.post(f"/v1/models/{rms_id}/audit", json={"fail_on_drift": limit})
    assert_problem(response, 400, "request.invalid")


def test_a_tokenizer_s_text_is_given_as_bytes_strings(client: TestClient) -> None:
    """The service's audit of a tokenizer refused its text: "reductions of string data cannot be executed", though
    the audited reduction is of integers; the command line audits the same model on the same text."""
    tokenizer = Path(__file__).resolve().parents[1] / "exports" / "llama_int4" / "openvino_tokenizer.xml"
    uploaded = client.post("/v1/models", files=files(tokenizer.read_bytes(), tokenizer.with_suffix(".bin").read_bytes(),
                                                     "openvino_tokenizer.xml"))  # fmt: skip
    assert uploaded.status_code in (200, 201), uploaded.text
    audit = f"/v1/models/{uploaded.json()['id']}/audit"
    [name] = [i["name"] for i in client.post(audit, json={}).json()["inputs"]]
    text = {"name": name, "datatype": "BYTES", "shape": [2], "data": ["hello world", "x"]}
    doc = client.post(audit, json={"inputs": [text]})
    assert doc.status_code == 200, doc.text
    [given] = doc.json()["inputs"]
    assert (given["origin"], given["shape"]) == ("given", [2]), given
    refused = client.post(audit, json={"inputs": [{**text, "data": ["hello", 7]}]})
    assert "value 7 at index 1 is not a string" in assert_problem(refused, 400)["detail"]
