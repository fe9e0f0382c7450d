"""Schemathesis against the app's own OpenAPI schema, in-process: no server errors, responses as documented.

Every operation gets 25 derandomized examples (positive and negative). Path parameters are pointed at a
stored model and its reduction for part of the cases, so the runs, layers and listings are exercised on
real data and not only answered 404. The ``positive_data_acceptance`` check is left out: a schema cannot
say what a readable IR or a tensor that fits the layer is, so schema-valid bodies are often, rightly, 4xx.

(The schema is loaded at import, on a temporary store: ``schemathesis.pytest.from_fixture`` does not work
with pytest 9, whose items have no ``_nodeid`` any more.)
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, positive_data_acceptance

from api.config import Settings
from api.main import create_app

from .conftest import files, sample

STORE = Path(tempfile.mkdtemp(prefix="ovreduce-schemathesis."))
CONFIG = Settings(
    store=STORE, max_elements=1 << 16, max_output_elements=1 << 12, run_timeout_s=20, allowed_hosts="testserver"
)  # the Host of in-process clients
APP = create_app(CONFIG)
with TestClient(APP) as _client:
    MODEL_ID = _client.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]

schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def _remove_store() -> Iterator[None]:
    yield
    shutil.rmtree(STORE, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    params = case.path_parameters or {}
    if "model_id" in params and case.method != "DELETE" and len(str(params["model_id"])) % 3:
        params["model_id"] = MODEL_ID
        if "layer" in params and len(str(params["layer"])) % 2:
            params["layer"] = "rmsnorm/variance"
    response = case.call()
    case.validate_response(response, excluded_checks=[positive_data_acceptance, not_a_server_error])
    # 503 is a documented answer (no such OpenVINO device here: generated device names are mostly not
    # devices); anything else at 500 or above would be a server error.
    assert response.status_code < 500 or response.status_code == 503, response.text
    if response.status_code == 503:
        assert response.headers["content-type"][0].startswith("application/problem+json")
        assert response.json()["code"] in ("backend.device", "busy", "store"), response.text


# -- examples --------------------------------------------------------------------------------------------------
def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for ``schema``, its ``#/components/...`` references resolved in the OpenAPI document."""
    return jsonschema.Draft202012Validator({**schema, "components": doc["components"]})


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, item in doc["paths"].items() for method, op in item.items()]


def test_every_operation_and_every_error_has_examples() -> None:
    """Path parameters, JSON request bodies, answers and problem answers: each has examples, and each example
    is valid against the schema it illustrates."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
    checked = 0
    for method, path, op in _operations(doc):
        where = f"{method.upper()} {path}"
        for parameter in op.get("parameters", []):
            if parameter["in"] == "path":
                assert parameter.get("examples"), (where, parameter["name"])
                for example in parameter["examples"].values():
                    assert _validator(doc, parameter["schema"]).is_valid(example["value"]), (where, parameter)
        body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            assert body.get("examples"), f"{where}: no request body examples"
            assert not _validator(doc, body["schema"]).is_valid(None), f"{where}: the service refuses a null body"
            for name, example in body["examples"].items():
                errors = [e.message for e in _validator(doc, body["schema"]).iter_errors(example["value"])]
                assert errors == [], (where, name, errors)
                checked += 1
        successes = [status for status in op["responses"] if status.startswith("2")]
        assert successes, where
        for status, answer in op["responses"].items():
            for media_type, content in answer.get("content", {}).items():
                examples = [e["value"] for e in content.get("examples", {}).values()]
                examples += [content["example"]] if "example" in content else []
                assert examples, f"{where} {status} {media_type}: no example"
                for example in examples:
                    errors = [e.message for e in _validator(doc, content["schema"]).iter_errors(example)]
                    assert errors == [], (where, status, errors)
                    checked += 1
                if media_type == "application/problem+json":
                    codes = {e["value"]["code"] for e in content["examples"].values()}
                    wanted = 500 if status == "default" else int(status)
                    assert {e["value"]["status"] for e in content["examples"].values()} == {wanted}, (where, codes)
    assert checked > 90


def test_the_statuses_a_route_answers_are_in_its_openapi_entry() -> None:
    """A stored model that fails its integrity check is 410 on the routes that read its files or its summary, and a
    cross-origin state change is 403 on every POST and DELETE: neither was in the OpenAPI document."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
    for method, path, op in _operations(doc):
        if "{model_id}" in path and method != "delete":  # every read of a stored model's files or summary
            assert "410" in op["responses"], (method, path)
        if method in ("post", "delete"):
            assert "403" in op["responses"], (method, path)
            assert "application/problem+json" in op["responses"]["403"]["content"], (method, path)


def test_the_recorded_answers_hold_every_member_the_service_answers() -> None:
    """The success examples were recorded once: answers gained members (a layer's consumers, a run's and an audit's
    devices, an audit's coverage) that a client reading the examples never learnt of."""
    from api.problems import EXAMPLES

    layer = "rmsnorm%2Fvariance"
    calls = {
        "get /v1/devices": ("get", "/v1/devices", None),
        "get /v1/models": ("get", "/v1/models", None),
        "get /v1/models/{model_id}": ("get", f"/v1/models/{MODEL_ID}", None),
        "get /v1/models/{model_id}/layers": ("get", f"/v1/models/{MODEL_ID}/layers", None),
        "get /v1/models/{model_id}/layers/{layer}": ("get", f"/v1/models/{MODEL_ID}/layers/{layer}", None),
        "post /v1/models/{model_id}/layers/{layer}/run": ("post", f"/v1/models/{MODEL_ID}/layers/{layer}/run", {}),
        "post /v1/models/{model_id}/audit": ("post", f"/v1/models/{MODEL_ID}/audit", {}),
    }
    assert EXAMPLES["parameters"]["model_id"] == MODEL_ID
    with TestClient(APP, base_url="http://testserver") as client:
        client.post("/v1/models", files=files(*sample("rmsnorm")))  # (again, after the fuzzing's deletes)
        for route, (method, url, body) in calls.items():
            answer = client.request(method, url, json=body)
            assert answer.status_code == 200, (route, answer.text)
            recorded = EXAMPLES["responses"][route]["200"]
            assert set(recorded) == set(answer.json()), (route, set(answer.json()) ^ set(recorded))


def test_the_documents_fields_are_documented_in_one_place() -> None:
    """docs/api-fields.md lists every document and field of the schema, each with its meaning."""
    from .fields_doc import DOC, current

    assert DOC.read_text() == current(), "docs/api-fields.md is out of date: python -m tests.api.fields_doc"


def test_the_documented_run_requests_run() -> None:
    """Each request body example of a run, posted for the documented model and layer, is answered 200: an example
    that is valid against the schema yet refused by the layer (a shape it does not take) misleads its reader."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
        run = doc["paths"]["/v1/models/{model_id}/layers/{layer}/run"]["post"]
        layer = next(p for p in run["parameters"] if p["name"] == "layer")
        name = next(iter(layer["examples"].values()))["value"]
        examples = run["requestBody"]["content"]["application/json"]["examples"]
        assert examples
        model_id = client.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]  # the generated cases delete
        for key, example in examples.items():
            response = client.post(f"/v1/models/{model_id}/layers/{name}/run", json=example["value"])
            assert response.status_code == 200, (key, response.text)


def test_an_answer_with_non_finite_values_is_valid_against_the_schema() -> None:
    """Every document writes a float that is not finite as "NaN", "Infinity" or "-Infinity": the schema of an answer
    takes them where it takes a number; a request's numbers stay numbers (a NaN tolerance is refused)."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
        model_id = client.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]
        data = ["Infinity", "NaN"] + [1.0] * 62
        tensor = {"name": "0", "shape": [1, 1, 64], "datatype": "FP32", "data": data}
        response = client.post(f"/v1/models/{model_id}/layers/5/run", json={"inputs": [tensor]})
    assert response.status_code == 200 and "NaN" in response.text, response.text
    run = doc["paths"]["/v1/models/{model_id}/layers/{layer}/run"]["post"]
    answer = run["responses"]["200"]["content"]["application/json"]["schema"]
    errors = sorted(_validator(doc, answer).iter_errors(response.json()), key=str)
    assert not errors, errors[0]
    atol = doc["components"]["schemas"]["RunRequest"]["properties"]["atol"]
    assert "string" not in str(atol), atol


def test_the_schemas_seed_bound_is_the_servers() -> None:
    """FastAPI writes a bound as a float: 2^63-1 became 2^63, which the schema took and the server refused."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
        model_id = client.post("/v1/models", files=files(*sample("rmsnorm"))).json()["id"]
        for seed in (2**63 - 1, 2**63):
            body = {"seed": seed, "backends": ["numpy"]}
            schema = doc["components"]["schemas"]["RunRequest"]
            valid = _validator(doc, schema).is_valid(body)
            answer = client.post(f"/v1/models/{model_id}/layers/5/run", json=body)
            assert valid is (answer.status_code == 200) is (seed < 2**63), (seed, answer.text)


def _closed(node: Any) -> Any:
    """A schema in which every object lists all the fields it may have (``additionalProperties: false``)."""
    if isinstance(node, dict):
        out = {k: _closed(v) for k, v in node.items()}
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed(v) for v in node]
    return node


def test_every_field_an_answer_carries_is_in_its_schema() -> None:
    """The answers of a stored model (upload, listing, layers, one layer, a run, an audit, a check) carry no field that
    the OpenAPI document, and so docs/api-fields.md, does not list: a field a client reads must be documented."""
    with TestClient(APP, base_url="http://testserver") as client:
        doc = client.get("/openapi.json").json()
        xml, weights = sample("spec_examples")
        axes_only, _ = sample("runtime_axes")
        stored = client.post("/v1/models", files=files(xml, weights))
        mid = stored.json()["id"]
        calls = [
            ("post", "/v1/models", stored),
            ("post", "/v1/models", client.post("/v1/models", files=files(axes_only))),
            ("get", "/v1/models", client.get("/v1/models")),
            ("get", "/v1/models/{model_id}", client.get(f"/v1/models/{mid}")),
            ("get", "/v1/models/{model_id}/layers", client.get(f"/v1/models/{mid}/layers")),
            ("get", "/v1/models/{model_id}/layers", client.get(f"/v1/models/{mid}/layers", params={"all": "true"})),
            ("get", "/v1/models/{model_id}/layers/{layer}", client.get(f"/v1/models/{mid}/layers/mean_hw_keep")),
            ("post", "/v1/models/{model_id}/layers/{layer}/run",
             client.post(f"/v1/models/{mid}/layers/mean_hw_keep/run", json={"seed": 1})),
            ("post", "/v1/models/{model_id}/audit", client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"})),
            ("post", "/v1/check", client.post("/v1/check", files=files(xml, weights), params={"engine": "openvino"})),
        ]  # fmt: skip
    assert calls[1][2].json()["bin_filename"] is None  # no .bin uploaded: none named
    components = _closed(doc["components"])
    for method, path, response in calls:
        assert response.status_code in (200, 201), (path, response.text)
        schema = doc["paths"][path][method]["responses"][str(response.status_code)]["content"]["application/json"]
        validator = jsonschema.Draft202012Validator({**_closed(schema["schema"]), "components": components})
        errors = sorted({e.message for e in validator.iter_errors(response.json())})
        assert errors == [], (method, path, errors[:5])


def test_the_problem_examples_are_answers_the_service_gives(
    make_client: Callable[..., TestClient], rmsnorm: tuple[bytes, bytes | None]
) -> None:
    """Each problem example that a request can bring about here is that request's answer, word for word, on the routes
    its example is shown for: a client matching on the documented text finds it."""
    from api.problems import EXAMPLES

    client = make_client(allowed_hosts="127.0.0.1")
    xml, weights = rmsnorm
    mid = client.post("/v1/models", files=files(xml, weights)).json()["id"]
    run = f"/v1/models/{mid}/layers/rmsnorm%2Fvariance/run"
    two = {"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}
    form = {"content-type": "multipart/form-data; boundary=B"}
    answers = {
        "request.host": client.get("/v1/models", headers={"host": "evil.example"}),
        "request.origin": client.post("/v1/check", headers={"origin": "https://evil.example"}),
        "request.invalid": client.post("/v1/check", content=b"x", headers=[("content-type", "a/b")] * 2),
        "request.invalid/seed": client.post(run, json={"seed": -1}),
        "request.media_type": client.post(run, content=b"{}", headers={"content-type": "text/plain"}),
        "request.media_type/coding": client.post(
            run, content=b"{}", headers={"content-type": "application/json", "content-encoding": "gzip"}
        ),
        "input": client.post(run, json={"inputs": [two, {**two, "name": "b"}]}),
        "input/onnx": client.post("/v1/conform", files={"onnx": ("a.onnx", b"garbage")}),
        "not_found": client.get("/v1/models/" + "0" * 64),
        "http.405": client.put("/v1/models"),
        "limit.body": client.post("/v1/check", content=b"x", headers={"content-length": "300000000", **form}),
        "limit.body/json": client.post(run, content=b"{}", headers={"content-length": "300000000"}),
        "limit": client.post(run, json={"shapes": {"0": "1,70000,64"}}),
        "ir.element_type": client.post("/v1/check", files=files(xml.replace(b'"f32"', b'"f99"', 1), weights)),
    }
    for weight in (client.app.state.services.catalog.store.models / mid).glob("model.bin"):
        weight.write_bytes(weight.read_bytes()[:-4] + b"xxxx")
    answers["store.corrupt"] = client.get(f"/v1/models/{mid}/layers")
    recorded: dict[str, list[dict[str, Any]]] = {}
    for examples in EXAMPLES["problems"].values():
        for example in examples:
            recorded.setdefault(example["code"], []).append(example)
    for key, response in answers.items():
        code = key.split("/")[0]
        body = response.json()
        assert body.get("code") == code, (key, response.status_code, body)
        details = [e["detail"].replace(EXAMPLES["parameters"]["model_id"], mid) for e in recorded[code]]
        assert body["detail"] in details, (key, body["detail"], details)
        example = recorded[code][details.index(body["detail"])]
        assert {k: body.get(k) for k in example.get("extra", {})} == example.get("extra", {}), key
    doc = client.get("/openapi.json").json()
    shown = doc["paths"]["/v1/conform"]["post"]["responses"]["400"]["content"]["application/problem+json"]["examples"]
    assert "input" in {e["value"]["code"] for e in shown.values()}
    assert not any("rmsnorm" in e["value"]["detail"] for e in shown.values()), shown  # a run's words are not conform's
