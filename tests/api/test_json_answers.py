"""Every answer of the service is strict JSON: a non-finite result (a ReduceMean whose f32 sum overflows on
OpenVINO's CPU) comes back as the strings "Infinity"/"NaN", as the CLI writes it, in the run/v1 document and in
the KServe v2 answer alike; JavaScript's ``JSON.parse`` reads every answer."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from api.routes.v2 import model_name
from tests.strict_json import NODE, loads, node_loads

from .conftest import files, sample

BIG = np.full((2, 3, 4, 5), 3e38, np.float32)  # ReduceMean over the last axis: 3e38 exactly, inf on OpenVINO's CPU
MEAN_LAST = "19"  # all_reductions' ReduceMean 'mean_last'


def _strict(response: Any) -> Any:
    assert response.status_code < 300, response.text
    return loads(response.content)


def test_non_finite_results_are_strings_in_every_answer(client: TestClient) -> None:
    stored = _strict(client.post("/v1/models", files=files(*sample("all_reductions"), name="all_reductions.xml")))
    mid = stored["id"]
    tensor = {"name": "0", "shape": list(BIG.shape), "datatype": "FP32", "data": BIG.reshape(-1).tolist()}
    answers = [
        client.post(f"/v1/models/{mid}/layers/{MEAN_LAST}/run", json={"inputs": [tensor]}),
        client.post(f"/v2/models/{model_name(mid, MEAN_LAST)}/infer", json={"inputs": [{**tensor, "name": "data"}]}),
        client.post("/v1/check", files=files(*sample("all_reductions"))),
        client.get(f"/v1/models/{mid}/layers"),
        client.get("/v1/models"),
        client.get("/v1/devices"),
        client.get(f"/v2/models/{model_name(mid, MEAN_LAST)}"),
    ]
    run, infer, *others = (_strict(a) for a in answers)
    (comparison,) = run["comparisons"]
    assert (comparison["mismatched"], comparison["inf"]) == (24, {"reference": 0, "candidate": 24})
    assert comparison["first_mismatch"]["candidate"] == "Infinity"
    assert (comparison["nonfinite_mismatched"], comparison["max_abs_error"]) == (24, "Infinity")
    assert run["outputs"][1]["name"] == "openvino:CPU" and set(run["outputs"][1]["data"]) == {"Infinity"}
    assert infer["parameters"]["agree"] is False and set(infer["outputs"][0]["data"]) == {"Infinity"}
    assert infer["parameters"]["max_abs_error"] == infer["parameters"]["max_rel_error"] == "Infinity"
    if NODE is not None:
        assert node_loads(*(a.text for a in answers)) == [run, infer, *others]
