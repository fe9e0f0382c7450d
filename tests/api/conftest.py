"""Fixtures of the API tests: settings on a temporary store, a TestClient, the sample IRs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
PROBLEM = "application/problem+json"


def sample(name: str) -> tuple[bytes, bytes | None]:
    """``ir_samples/<name>.xml`` and its ``.bin`` (regenerated with OpenVINO when missing)."""
    xml = SAMPLES / f"{name}.xml"
    if not xml.is_file():
        subprocess.run([sys.executable, str(SAMPLES / "generate.py")], check=True, cwd=ROOT)
    bin_path = xml.with_suffix(".bin")
    return xml.read_bytes(), bin_path.read_bytes() if bin_path.is_file() else None


def files(xml: bytes, bin_data: bytes | None = None, name: str = "model.xml") -> dict[str, Any]:
    out: dict[str, Any] = {"xml": (name, xml, "application/xml")}
    if bin_data is not None:
        out["bin"] = (name.rsplit(".", 1)[0] + ".bin", bin_data, "application/octet-stream")
    return out


def assert_problem(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is RFC 9457 problem+json with ``status`` (and ``code``); returns the document."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    doc: dict[str, Any] = response.json()
    for key in ("type", "title", "status", "detail", "code"):
        assert key in doc, doc
    assert doc["status"] == status
    assert doc["type"] == f"urn:ovreduce:problem:{doc['code']}"
    if code is not None:
        assert doc["code"] == code, doc
    return doc


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {"store": tmp_path / "store", "run_timeout_s": 20.0}
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def make_client(make_settings: Callable[..., Settings]) -> Iterator[Callable[..., TestClient]]:
    clients: list[TestClient] = []

    def make(**overrides: Any) -> TestClient:
        client = TestClient(create_app(make_settings(**overrides)), base_url="http://127.0.0.1")
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture(scope="session")
def rmsnorm() -> tuple[bytes, bytes | None]:
    return sample("rmsnorm")


@pytest.fixture
def rmsnorm_id(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> str:
    response = client.post("/v1/models", files=files(*rmsnorm, name="rmsnorm.xml"))
    assert response.status_code == 201, response.text
    model_id: str = response.json()["id"]
    return model_id
