"""Liveness, readiness, devices, the docs and the root redirect."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from .conftest import assert_problem


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["status"] == "ready"
    assert doc["openvino"]["ok"] and doc["store"]["ok"]
    assert "CPU" in doc["openvino"]["detail"]


def test_readyz_store_is_a_file(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    client = make_client(store=blocker / "store")  # cannot be created under a regular file
    doc = assert_problem(client.get("/readyz"), 503, "not_ready")
    assert doc["store"]["ok"] is False and doc["openvino"]["ok"] is True
    # uploads say the store is the problem (503), checks still work
    assert_problem(client.post("/v1/models", files={"xml": ("m.xml", b"<net/>")}), 503, "store")


def test_devices(client: TestClient) -> None:
    response = client.get("/v1/devices")
    assert response.status_code == 200
    doc = response.json()
    assert doc["schema"] == "ovreduce.devices/v1"
    assert any(d["device"] == "CPU" for d in doc["devices"])
    assert client.get("/v1/devices").json() == doc  # cached


def test_root_serves_the_page_and_its_assets(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "<title>ovreduce" in page.text
    # Everything the page loads comes from the app itself: no CDN, no external host.
    assets = [a for a in re.findall(r'(?:src|href)="([^"]+)"', page.text) if not a.startswith("#")]
    assert assets, "the page loads no assets"
    for asset in assets:
        assert asset.startswith("/"), f"{asset} is not served by the app"
        assert client.get(asset).status_code == 200, asset
    for path in ("/", *[a for a in assets if a.startswith("/static/")]):  # a current copy is not sent again
        etag = client.get(path).headers["etag"]
        again = client.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"", path


def test_docs_work_offline(client: TestClient) -> None:
    """Swagger UI's script and stylesheet are served by the app, not fetched from a CDN."""
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    urls = re.findall(r'(?:src|href)=["\']?([^"\' >]+)', docs.text) + re.findall(r"url: '([^']+)'", docs.text)
    scripts = [u for u in urls if u.endswith((".js", ".css"))]
    assert scripts, docs.text
    for url in scripts:
        assert url.startswith("/"), f"/docs loads {url} from outside the app"
        assert client.get(url).status_code == 200, url


def test_openapi_errors_are_problem_json(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if status == "default" or int(status) >= 400:
                    assert list(response["content"]) == ["application/problem+json"], (method, path, status)
    assert "HTTPValidationError" not in schema["components"]["schemas"]
