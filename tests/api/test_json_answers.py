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


def test_the_event_loop_runs_while_a_large_json_body_is_parsed() -> None:
    """A body is parsed in a thread, but Python's JSON scanner held the interpreter's lock for as long as it read
    without calling back into Python: an array of 2 million integers, one object of 400,000 keys (made a dict in one
    call). /healthz, on the event loop, waited for all of it (seconds, for a few such bodies at once); the parse now
    calls into Python for each integer, and for each key as it makes the dict, where the lock passes to the others."""
    import threading
    import time

    from api.routes.common import read_json

    for body in (b'{"data": [' + b",".join([b"1000"] * 2_000_000) + b"]}",
                 b"{" + b",".join(b'"q%07d":0' % i for i in range(400_000)) + b"}"):  # fmt: skip
        done = threading.Event()
        parsing = threading.Thread(target=lambda body=body, done=done: (read_json(body), done.set()))
        turns = 0
        parsing.start()
        while not done.is_set():  # this thread, as the event loop's: the turns it gets while the body is parsed
            time.sleep(0.001)
            turns += 1
        parsing.join()
        assert turns >= 20, (body[:12], turns)  # (held for the whole parse: one or two, before and after it)
