"""The layer routes take paths into sub-graph bodies (by names with "/" or by ids) and say which body a layer is in."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ovreduce.ir.parser import load_ir
from tests.ir import subgraphs

from .conftest import assert_problem, files


def test_list_show_and_run_a_loop_body_reduction(client: TestClient, tmp_path: Path) -> None:
    path = subgraphs.save(subgraphs.loop_model(), tmp_path, "loop")
    response = client.post(
        "/v1/models", files=files(path.read_bytes(), path.with_suffix(".bin").read_bytes(), "loop.xml")
    )
    assert response.status_code == 201, response.text
    mid = response.json()["id"]
    ref = load_ir(path).locate("Loop_1/body/ReduceMean_loop")
    listed = client.get(f"/v1/models/{mid}/layers").json()["layers"]
    assert [(e["layer_name"], e["body_path"]) for e in listed] == [("ReduceMean_loop", ref.body_path)]
    for key in ("Loop_1/body/ReduceMean_loop", ref.path):
        shown = client.get(f"/v1/models/{mid}/layers/{key}")
        assert shown.status_code == 200, shown.text
        assert (shown.json()["layer_name"], shown.json()["body_path"]) == ("ReduceMean_loop", ref.body_path)
    ran = client.post(f"/v1/models/{mid}/layers/{ref.path}/run", json={"backends": ["numpy", "openvino"]})
    assert ran.status_code == 200, ran.text
    doc = ran.json()
    assert doc["ok"] and doc["body_path"] == ref.body_path
    assert client.get(f"/v1/models/{mid}/layers/Loop_1/body/nope").status_code == 404


@pytest.mark.parametrize("engine", ["native", "openvino"])
def test_check_names_the_upload_not_a_body(client: TestClient, tmp_path: Path, engine: str) -> None:
    path = subgraphs.save(subgraphs.nested_model(), tmp_path, "nested")
    ref = load_ir(path).locate("Loop_1/body/If_inner/then/ReduceMean_nested")
    response = client.post(
        f"/v1/check?engine={engine}",
        files=files(path.read_bytes(), path.with_suffix(".bin").read_bytes(), "uploaded.xml"),
    )
    assert response.status_code == 200, response.text
    [model] = response.json()["models"]
    assert model["path"] == "uploaded.xml"
    assert ref.body_path in [r["body_path"] for r in model["reductions"]]


def test_a_body_layers_bare_id_is_answered_with_its_path(client: TestClient, tmp_path: Path) -> None:
    path = subgraphs.save(subgraphs.deep_if_model(), tmp_path, "deep")
    response = client.post("/v1/models", files=files(path.read_bytes(), path.with_suffix(".bin").read_bytes()))
    assert response.status_code == 201, response.text
    mid = response.json()["id"]
    ref = load_ir(path).locate("If_1/then/ReduceMean_deep")
    problem = assert_problem(client.get(f"/v1/models/{mid}/layers/{ref.layer.id}"), 404, "not_found")
    assert f"did you mean {ref.path!r}?" in problem["detail"], problem
    ran = client.post(f"/v1/models/{mid}/layers/{ref.layer.id}/run", json={"backends": ["numpy"]})
    problem = assert_problem(ran, 404, "not_found")
    assert f"did you mean {ref.path!r}?" in problem["detail"], problem
