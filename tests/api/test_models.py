"""/v1/models and /v1/models/{id}/layers: store once, list, show, delete; layers by id or by any name."""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from .conftest import assert_problem, files
from .irs import reduce_ir, runtime_axes_ir

UNKNOWN = "0" * 64


def test_upload_is_idempotent(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> None:
    xml, bin_data = rmsnorm
    first = client.post("/v1/models", files=files(xml, bin_data, name="rmsnorm.xml"))
    assert first.status_code == 201, first.text
    doc = first.json()
    assert set(doc) >= {"id", "name", "ir_version", "layer_count", "reductions"}
    assert doc["name"] == "rmsnorm_block" and doc["ir_version"] == 11 and doc["layer_count"] == 14
    assert [r["layer_name"] for r in doc["reductions"]] == ["rmsnorm/variance"]
    assert doc["reductions"][0]["status"] == "ok"
    assert first.headers["location"] == f"/v1/models/{doc['id']}"
    # the id is the SHA-256 of len(xml) (8 bytes big-endian) + xml + bin
    assert bin_data is not None
    assert doc["id"] == hashlib.sha256(len(xml).to_bytes(8, "big") + xml + bin_data).hexdigest()
    again = client.post("/v1/models", files=files(xml, bin_data, name="other.xml"))
    assert again.status_code == 200
    assert again.json() == doc  # the first upload's summary, name included
    other = client.post("/v1/models", files=files(xml, bin_data[:-1] + b"\x00", name="rmsnorm.xml"))
    assert other.status_code == 201 and other.json()["id"] != doc["id"]


def test_list_get_delete(client: TestClient, rmsnorm_id: str) -> None:
    listing = client.get("/v1/models")
    assert listing.status_code == 200
    doc = listing.json()
    assert [m["id"] for m in doc["models"]] == [rmsnorm_id]
    assert 0 < doc["total_bytes"] <= doc["max_bytes"]
    one = client.get(f"/v1/models/{rmsnorm_id}")
    assert one.status_code == 200 and one.json() == doc["models"][0]
    deleted = client.delete(f"/v1/models/{rmsnorm_id}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert_problem(client.get(f"/v1/models/{rmsnorm_id}"), 404, "not_found")
    assert_problem(client.delete(f"/v1/models/{rmsnorm_id}"), 404, "not_found")
    assert_problem(client.get(f"/v1/models/{rmsnorm_id}/layers"), 404, "not_found")
    assert client.get("/v1/models").json()["models"] == []


@pytest.mark.parametrize("model_id", [UNKNOWN, "abc", "../../etc/passwd", "Z" * 64, "%00"])
def test_unknown_model_is_404(client: TestClient, model_id: str) -> None:
    mid = quote(model_id, safe="")
    for response in (
        client.get(f"/v1/models/{mid}"),
        client.delete(f"/v1/models/{mid}"),
        client.get(f"/v1/models/{mid}/layers"),
        client.get(f"/v1/models/{mid}/layers/0"),
        client.post(f"/v1/models/{mid}/layers/0/run"),
    ):
        assert_problem(response, 404)


def test_an_id_in_upper_case_is_the_same_model_named_in_lower_case(client: TestClient, rmsnorm_id: str) -> None:
    """Hex digits are case-insensitive, and Windows' tools (certutil, Get-FileHash) write a SHA-256 in upper case: the
    id was refused as "not the 64 hex digits of a SHA-256" though it is. Every route takes it in either case and
    answers with the id in lower case, as stored; KServe's model names too."""
    upper, mixed = rmsnorm_id.upper(), rmsnorm_id[:32].upper() + rmsnorm_id[32:]
    summary = client.get(f"/v1/models/{rmsnorm_id}").json()
    for mid in (upper, mixed):
        assert client.get(f"/v1/models/{mid}").json() == summary
        assert client.get(f"/v1/models/{mid}/layers").json() == client.get(f"/v1/models/{rmsnorm_id}/layers").json()
        layer = client.get(f"/v1/models/{mid}/layers/5").json()
        assert layer["layer_name"] == "rmsnorm/variance", layer
        ran = client.post(f"/v1/models/{mid}/layers/5/run", json={"backends": ["numpy"]})
        assert ran.status_code == 200, ran.text
        meta = client.get(f"/v2/models/{mid}.5").json()
        assert (meta["name"], meta["parameters"]["model_id"]) == (f"{rmsnorm_id}.5", rmsnorm_id), meta
        assert client.get(f"/v2/models/{mid}.5/ready").json() == {"name": f"{rmsnorm_id}.5", "ready": True}
        data = {"name": "data", "shape": [1, 2, 64], "datatype": "FP32", "data": [1.0] * 128}
        inferred = client.post(f"/v2/models/{mid}.5/infer", json={"inputs": [data], "parameters": {"backend": "numpy"}})
        assert inferred.json()["model_name"] == f"{rmsnorm_id}.5", inferred.text
    assert client.delete(f"/v1/models/{upper}").status_code == 204
    assert_problem(client.get(f"/v1/models/{rmsnorm_id}"), 404, "not_found")
    problem = assert_problem(client.get(f"/v1/models/{upper}"), 404, "not_found")
    assert f"no model with id {rmsnorm_id} in the store" in problem["detail"], problem


def test_unreadable_upload_is_422_and_not_stored(client: TestClient) -> None:
    assert_problem(client.post("/v1/models", files=files(b"<net version='11'>")), 422, "ir.syntax")
    xml, _ = reduce_ir("sum")
    doc = assert_problem(client.post("/v1/models", files=files(xml)), 422, "ir.weights")
    assert "a 'bin' file field" in doc["detail"]
    assert client.get("/v1/models").json()["models"] == []
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    assert list((store / "tmp").iterdir()) == []  # no staging left behind


def test_layers(client: TestClient, rmsnorm_id: str) -> None:
    response = client.get(f"/v1/models/{rmsnorm_id}/layers")
    assert response.status_code == 200
    doc = response.json()
    assert doc["id"] == rmsnorm_id and doc["all"] is False
    [entry] = doc["layers"]
    summary = client.get(f"/v1/models/{rmsnorm_id}").json()
    assert {k: v for k, v in entry.items() if k not in ("line", "is_reduction")} == summary["reductions"][0]
    assert entry["is_reduction"] is True and entry["line"] == 58
    everything = client.get(f"/v1/models/{rmsnorm_id}/layers", params={"all": "true"}).json()
    assert everything["all"] is True
    assert len(everything["layers"]) == 14
    assert sum(e["is_reduction"] for e in everything["layers"]) == 1
    assert_problem(client.get(f"/v1/models/{rmsnorm_id}/layers", params={"all": "maybe"}), 400, "request.invalid")


@pytest.mark.parametrize("key", ["5", "rmsnorm/variance", quote("rmsnorm/variance", safe="")])
def test_layer_by_id_or_name(client: TestClient, rmsnorm_id: str, key: str) -> None:
    response = client.get(f"/v1/models/{rmsnorm_id}/layers/{key}")
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["id"] == rmsnorm_id
    assert doc["layer_id"] == "5" and doc["layer_name"] == "rmsnorm/variance"
    assert doc["reduction"]["status"] == "ok"
    assert doc["inputs"][0]["producer"]["layer_name"] == "Power_144"


def test_any_layer_can_be_shown(client: TestClient, rmsnorm_id: str) -> None:
    doc = client.get(f"/v1/models/{rmsnorm_id}/layers/hidden_states").json()
    assert doc["type"] == "Parameter" and doc.get("reduction") is None
    assert_problem(client.get(f"/v1/models/{rmsnorm_id}/layers/nope"), 404, "not_found")


@pytest.mark.parametrize("name", ["rmsnorm/variance", "a:b/c", "x/run", "run", "a b?#c", "layers/1/run/run"])
def test_names_with_slashes_colons_and_run(client: TestClient, name: str) -> None:
    # (a literal "%2F" in a name is tested against the real server: the TestClient decodes paths twice)
    xml, bin_data = reduce_ir(name)
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    encoded = quote(name, safe="")
    shown = client.get(f"/v1/models/{mid}/layers/{encoded}")
    if name.endswith("/run"):  # the path of a run: shown by id
        assert_problem(shown, 405, "http.405")
        shown = client.get(f"/v1/models/{mid}/layers/2")
    assert shown.status_code == 200, shown.text
    assert shown.json()["layer_name"] == name
    run = client.post(f"/v1/models/{mid}/layers/{encoded}/run", json={"backends": ["numpy"]})
    assert run.status_code == 200, run.text
    assert run.json()["layer"]["layer_name"] == name
    if not set(name) & set("?# "):  # also unencoded
        if not name.endswith("/run"):
            assert client.get(f"/v1/models/{mid}/layers/{name}").json()["layer_name"] == name
        assert client.post(f"/v1/models/{mid}/layers/{name}/run", json={"backends": ["numpy"]}).status_code == 200


def test_run_suffix_rule(client: TestClient) -> None:
    """A path ending in /run is a run (POST only); everything between layers/ and the last /run is the layer."""
    xml, bin_data = reduce_ir("x/run")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    assert client.post(f"/v1/models/{mid}/layers/x/run/run", json={"backends": ["numpy"]}).status_code == 200
    # ... so .../layers/x/run runs layer "x": here the Parameter of that name, which is no reduction.
    problem = assert_problem(client.post(f"/v1/models/{mid}/layers/x/run", json={"backends": ["numpy"]}), 400, "input")
    assert "name='x' (Parameter) is not a reduction" in problem["detail"]
    for method in ("GET", "PUT", "DELETE"):
        response = client.request(method, f"/v1/models/{mid}/layers/x/run")
        assert_problem(response, 405, "http.405")
        assert response.headers["allow"] == "POST"
    assert client.get(f"/v1/models/{mid}/layers/2").json()["layer_name"] == "x/run"
    assert client.get(f"/v1/models/{mid}/layers/run").status_code == 404  # 'run' alone is a name like any
    response = client.put(f"/v1/models/{mid}/layers/2")
    assert_problem(response, 405, "http.405")
    assert response.headers["allow"] == "GET, HEAD"


def test_model_without_bin(client: TestClient) -> None:
    response = client.post("/v1/models", files=files(runtime_axes_ir()))
    assert response.status_code == 201, response.text
    doc = response.json()
    assert doc["bin_bytes"] == 0 and doc["reductions"][0]["axes_kind"] == "runtime"
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    stored = sorted(p.name for p in (store / "models" / doc["id"]).iterdir())
    assert stored == ["meta.json", "model.xml", "sums.json", "used"]
