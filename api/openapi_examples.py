"""Examples for the OpenAPI document: every operation's answers, request bodies and path parameters, and every
error answer (problem+json), added to the schema by :func:`api.problems.openapi`.

The answers are real: recorded from the service on ``ir_samples/rmsnorm.xml`` (and, for ``/v1/conform``,
``tests/golden/models/reduce_mean_13_all_axes.onnx``), measured times rounded. ``tests/api/test_openapi.py``
validates each against the schema of the answer it illustrates, so they cannot drift from the documents.
"""

from __future__ import annotations

from typing import Any

__all__ = ["METRICS", "PARAMETERS", "PROBLEMS", "REQUESTS", "RESPONSES", "problem_examples"]

MODEL_ID = "57d2d5145af6c7cb7c37c3705e8572764e8216a82e9681381aa6911b0f2d9981"
PARAMETERS: dict[str, Any] = {"model_id": MODEL_ID, "layer": "rmsnorm/variance"}
"""An example of each path parameter (the stored rmsnorm sample and its reduction)."""

REDUCTION_CHECK: dict[str, Any] = {
    "layer_id": "5",
    "layer_name": "rmsnorm/variance",
    "type": "ReduceMean",
    "version": "opset1",
    "keep_dims": True,
    "axes": [-1],
    "axes_kind": "const",
    "element_type": "f32",
    "input_shape": [1, -1, 64],
    "input_shape_resolved": True,
    "input_shape_engine": "native",
    "declared_output_shape": [1, -1, 1],
    "declared_has_dims": True,
    "inferred_output_shape": [1, -1, 1],
    "inferred_output_resolved": True,
    "status": "ok",
    "openvino_checked": False,
    "openvino_output_shape": None,
    "openvino_output_resolved": False,
    "body_path": None,
}
"""The rmsnorm sample's one reduction, as the check document and the model summary give it."""

MODEL_SUMMARY: dict[str, Any] = {
    "id": MODEL_ID,
    "name": "rmsnorm_block",
    "ir_version": 11,
    "layer_count": 14,
    "reductions": [REDUCTION_CHECK],
    "ok": True,
    "finding_counts": {"error": 0, "warning": 0, "info": 0},
    "filename": "rmsnorm.xml",
    "bin_filename": "rmsnorm.bin",
    "xml_bytes": 5901,
    "bin_bytes": 142,
    "created_at": "2026-11-23T04:34:14Z",
}
"""The stored rmsnorm sample's summary, as the model routes answer it."""

REQUESTS: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/v1/models/{model_id}/layers/{layer}/run"): {
        "seeded": {"summary": "Seeded inputs, both backends", "value": {"seed": 1}},
        "given": {
            "summary": "A given input (KServe v2 tensor), the reference only",
            "value": {
                "inputs": [{"name": "0", "shape": [1, 2, 4], "datatype": "FP32", "data": [1, 2, 3, 4, 5, 6, 7, 8]}],
                "backends": ["numpy"],
            },
        },
        "options": {
            "summary": "Shape of a dynamic input, device, precision and tolerances",
            "value": {"shapes": {"0": "[1,8,64]"}, "device": "CPU", "precision": "f16", "atol": 0.001, "rtol": 0.01},
        },
    },
    ("post", "/v1/models/{model_id}/audit"): {
        "f32": {"summary": "The whole model in f32", "value": {"precision": "f32"}},
        "shapes": {
            "summary": "Seeded inputs of a given shape; fail a drift of more than 1 %",
            "value": {"shapes": {"hidden_states": "[1,4,64]"}, "seed": 3, "fail_on_drift": 0.01},
        },
    },
}
"""Examples of the JSON request bodies, by operation (multipart uploads have none: they are files)."""

_PROBLEMS: dict[str, list[tuple[str, str, str]]] = {
    # status: (code, title, detail) ...
    "400": [
        ("request.invalid", "Bad Request", "body.seed: Input should be greater than or equal to 0"),
        ("input", "Bad Request", "layer 'rmsnorm/variance' takes 1 input; 2 were given"),
        ("request.host", "Bad Request", "the Host 'evil.example' is not a name this service answers to; to allow it, "
         "add it to OVREDUCE_ALLOWED_HOSTS (a comma-separated list)"),
    ],
    "403": [("request.origin", "Forbidden", "a POST from the origin 'https://evil.example' is refused: only the "
             "service's own pages may change its state")],
    "404": [("not_found", "Not Found", f"no stored model with id {MODEL_ID}")],
    "405": [("http.405", "Method Not Allowed", "Method Not Allowed")],
    "410": [("store.corrupt", "Gone", f"the stored model {MODEL_ID} failed its integrity check and was removed; "
             "upload it again")],
    "413": [
        ("limit.body", "Content Too Large", "an upload (multipart body) of 300000000 bytes is larger than the limit of "
         "268435456 bytes (OVREDUCE_MAX_UPLOAD_BYTES)"),
        ("limit", "Content Too Large", "the numpy output has 2000000 elements, more than the limit of 1048576 "
         "(OVREDUCE_MAX_OUTPUT_ELEMENTS)"),
    ],
    "422": [("ir.element_type", "Unprocessable Content", "model.xml:4: layer id=0 name='a' (Parameter): element_type: "
             "unknown element type 'f99'")],
    "503": [
        ("busy", "Service Unavailable", "the server is busy: the run of layer 'rmsnorm/variance' waited 30 s for one "
         "of its 4 workers and was not started; retry later"),
        ("backend.device", "Service Unavailable", "OpenVINO device 'GPU' is not available; available: CPU"),
        ("store", "Service Unavailable", "the model store cannot be written"),
    ],
    "504": [("limit.time", "Gateway Timeout", "the run of layer 'rmsnorm/variance' took longer than the limit of 30 s "
             "(OVREDUCE_RUN_TIMEOUT_S); it was stopped")],
    "default": [("internal", "Internal Server Error", "an unexpected error occurred; it was logged with id "
                 "3f2a9c1e5b7d4a60")],
}  # fmt: skip
PROBLEMS = _PROBLEMS
"""Examples of the problem answers, by status."""


def problem_examples(status: str, path: str) -> dict[str, Any]:
    """The named OpenAPI ``examples`` of a problem answer with ``status`` (or ``default``) on ``path``."""
    out: dict[str, Any] = {}
    for code, title, detail in _PROBLEMS.get(status, _PROBLEMS["default"]):
        number = 500 if status == "default" else int(status)
        value = {"type": f"urn:ovreduce:problem:{code}", "title": title, "status": number, "detail": detail,
                 "code": code, "instance": path}  # fmt: skip
        out[code] = {"summary": f"{number} {code}", "value": value}
    return out


METRICS = """\
# HELP ovreduce_http_requests_total Answered HTTP requests
# TYPE ovreduce_http_requests_total counter
ovreduce_http_requests_total{method="POST",route="/v1/check",status="200"} 3.0
# HELP ovreduce_runs_total Completed layer runs, one per requested backend
# TYPE ovreduce_runs_total counter
ovreduce_runs_total{backend="openvino",device="CPU",outcome="agree"} 1.0
# HELP ovreduce_store_bytes Bytes in the model store, uploads being staged included
# TYPE ovreduce_store_bytes gauge
ovreduce_store_bytes 41236.0
"""
"""An excerpt of ``GET /metrics`` (:mod:`api.metrics` lists every metric)."""

RESPONSES: dict[tuple[str, str], dict[str, Any]] = {
    ("get", "/healthz"): {"200": {"status": "ok"}},
    ("get", "/readyz"): {
        "200": {
            "status": "ready",
            "openvino": {"ok": True, "detail": "devices: CPU"},
            "store": {"ok": True, "detail": None},
        }
    },
    ("get", "/v1/devices"): {
        "200": {
            "devices": [
                {
                    "device": "CPU",
                    "full_name": "Intel(R) Xeon(R) Processor",
                    "capabilities": ["BF16", "WINOGRAD", "FP32", "FP16", "INT8", "BIN", "EXPORT_IMPORT"],
                    "default_inference_precision": "bf16",
                    "architecture": "intel64",
                }
            ],
            "schema": "ovreduce.devices/v1",
        }
    },
    ("post", "/v1/check"): {
        "200": {
            "ok": True,
            "models": [
                {
                    "path": "rmsnorm.xml",
                    "ok": True,
                    "ir_version": 11,
                    "layer_count": 14,
                    "error": None,
                    "findings": [],
                    "reductions": [REDUCTION_CHECK],
                    "notes": [],
                }
            ],
            "schema": "ovreduce.check/v1",
        }
    },
    ("get", "/v1/models"): {
        "200": {
            "models": [MODEL_SUMMARY],
            "total_bytes": 7167,
            "max_bytes": 2147483648,
        }
    },
    ("post", "/v1/models"): {
        "201": MODEL_SUMMARY,
        "200": MODEL_SUMMARY,
    },
    ("get", "/v1/models/{model_id}"): {"200": MODEL_SUMMARY},
    ("get", "/v1/models/{model_id}/layers"): {
        "200": {
            "id": "57d2d5145af6c7cb7c37c3705e8572764e8216a82e9681381aa6911b0f2d9981",
            "all": False,
            "layers": [
                {
                    "layer_id": "5",
                    "layer_name": "rmsnorm/variance",
                    "type": "ReduceMean",
                    "version": "opset1",
                    "keep_dims": True,
                    "axes": [-1],
                    "axes_kind": "const",
                    "element_type": "f32",
                    "input_shape": [1, -1, 64],
                    "input_shape_resolved": True,
                    "input_shape_engine": "native",
                    "declared_output_shape": [1, -1, 1],
                    "declared_has_dims": True,
                    "inferred_output_shape": [1, -1, 1],
                    "inferred_output_resolved": True,
                    "status": "ok",
                    "openvino_checked": False,
                    "openvino_output_shape": None,
                    "openvino_output_resolved": False,
                    "body_path": None,
                    "line": 58,
                    "is_reduction": True,
                }
            ],
        }
    },
    ("get", "/v1/models/{model_id}/layers/{layer}"): {
        "200": {
            "layer_id": "5",
            "layer_name": "rmsnorm/variance",
            "type": "ReduceMean",
            "version": "opset1",
            "line": 58,
            "attributes": {"keep_dims": "true"},
            "inputs": [
                {
                    "port": "0",
                    "precision": "f32",
                    "names": [],
                    "declared_shape": [1, -1, 64],
                    "declared_has_dims": True,
                    "shape": [1, -1, 64],
                    "shape_resolved": True,
                    "shape_origin": "inferred",
                    "element_type": "f32",
                    "producer": {"layer_id": "3", "layer_name": "Power_144", "type": "Power", "port": "2"},
                },
                {
                    "port": "1",
                    "precision": "i64",
                    "names": [],
                    "declared_shape": [1],
                    "declared_has_dims": True,
                    "shape": [1],
                    "shape_resolved": True,
                    "shape_origin": "const",
                    "element_type": "i64",
                    "producer": {"layer_id": "4", "layer_name": "Constant_146", "type": "Const", "port": "0"},
                },
            ],
            "outputs": [
                {
                    "port": "2",
                    "precision": "f32",
                    "names": ["rmsnorm/variance"],
                    "declared_shape": [1, -1, 1],
                    "declared_has_dims": True,
                    "shape": [1, -1, 1],
                    "shape_resolved": True,
                    "shape_origin": "inferred",
                    "element_type": "f32",
                    "producer": None,
                }
            ],
            "findings": [],
            "reduction": {
                "layer_id": "5",
                "layer_name": "rmsnorm/variance",
                "type": "ReduceMean",
                "version": "opset1",
                "keep_dims": True,
                "axes": [-1],
                "axes_kind": "const",
                "element_type": "f32",
                "input_shape": [1, -1, 64],
                "input_shape_resolved": True,
                "input_shape_engine": "native",
                "declared_output_shape": [1, -1, 1],
                "declared_has_dims": True,
                "inferred_output_shape": [1, -1, 1],
                "inferred_output_resolved": True,
                "status": "ok",
                "openvino_checked": False,
                "openvino_output_shape": None,
                "openvino_output_resolved": False,
                "body_path": None,
            },
            "body_path": None,
            "id": "57d2d5145af6c7cb7c37c3705e8572764e8216a82e9681381aa6911b0f2d9981",
        }
    },
    ("post", "/v1/models/{model_id}/layers/{layer}/run"): {
        "200": {
            "id": "57d2d5145af6c7cb7c37c3705e8572764e8216a82e9681381aa6911b0f2d9981",
            "outputs": [
                {"name": "numpy", "shape": [1, 2, 1], "datatype": "FP32", "data": [0.5, 0.5]},
                {"name": "openvino:CPU", "shape": [1, 2, 1], "datatype": "FP32", "data": [0.5, 0.5]},
            ],
            "ok": True,
            "layer": {
                "layer_id": "5",
                "layer_name": "rmsnorm/variance",
                "type": "ReduceMean",
                "keep_dims": True,
                "axes": [-1],
                "element_type": "f32",
            },
            "inputs": [{"name": "0", "shape": [1, 2, 64], "datatype": "FP32", "defaulted_dims": []}],
            "results": [
                {
                    "backend": "numpy",
                    "ok": True,
                    "shape": [1, 2, 1],
                    "datatype": "FP32",
                    "error": None,
                    "seconds": 0.0,
                    "precision": None,
                    "effective_precision": None,
                    "notes": [],
                },
                {
                    "backend": "openvino:CPU",
                    "ok": True,
                    "shape": [1, 2, 1],
                    "datatype": "FP32",
                    "error": None,
                    "seconds": 0.068,
                    "precision": "f32",
                    "effective_precision": "f32",
                    "notes": [],
                },
            ],
            "comparisons": [
                {
                    "reference": "numpy",
                    "candidate": "openvino:CPU",
                    "ok": True,
                    "total": 2,
                    "mismatched": 0,
                    "atol": 1e-05,
                    "rtol": 1e-05,
                    "max_abs_error": 0.0,
                    "max_rel_error": 0.0,
                    "required_atol": 0.0,
                    "required_rtol": 0.0,
                    "first_mismatch": None,
                    "nan": {"reference": 0, "candidate": 0},
                    "inf": {"reference": 0, "candidate": 0},
                    "error": None,
                    "exact": False,
                    "allowance_max": None,
                    "undefined": 0,
                }
            ],
            "notes": [],
            "schema": "ovreduce.run/v1",
            "body_path": None,
            "outcome": "agree",
        }
    },
    ("post", "/v1/models/{model_id}/audit"): {
        "200": {
            "ok": True,
            "model": "rmsnorm.xml",
            "device": "CPU",
            "precision": "f32",
            "effective_precision": "f32",
            "error": None,
            "inputs": [
                {
                    "name": "hidden_states",
                    "shape": [1, 1, 64],
                    "element_type": "f32",
                    "origin": "seed 0",
                    "defaulted_dims": [1],
                }
            ],
            "layers": [
                {
                    "max_abs_error": 0.0,
                    "max_rel_error": 0.0,
                    "mismatched": 0,
                    "total": 1,
                    "atol": 1e-05,
                    "rtol": 1e-05,
                    "exact": False,
                    "required_atol": 0.0,
                    "required_rtol": 0.0,
                    "first_mismatch": None,
                    "nan": {"reference": 0, "candidate": 0},
                    "inf": {"reference": 0, "candidate": 0},
                    "allowance_max": 9.96780599497647e-08,
                    "undefined": 0,
                    "layer_id": "5",
                    "layer_name": "rmsnorm/variance",
                    "type": "ReduceMean",
                    "keep_dims": True,
                    "axes": [-1],
                    "input_shape": [1, 1, 64],
                    "element_type": "f32",
                    "ok": True,
                    "status": "ok",
                    "error": None,
                    "runtime_precision": "f32",
                    "plain_runtime_precision": None,
                    "notes": [],
                    "drift": None,
                    "drift_split": None,
                }
            ],
            "final_outputs": [{"name": "rmsnorm/output", "identical": True, "max_abs_diff": 0.0, "max_rel_diff": 0.0}],
            "notes": ["input 'hidden_states': dynamic dimension 1 (?) set to 1"],
            "seconds": 0.178,
            "schema": "ovreduce.audit/v1",
            "reduction_precisions": {"f32": 1},
            "plain_reduction_precisions": {"unknown": 1},
            "fail_on_drift": None,
            "id": "57d2d5145af6c7cb7c37c3705e8572764e8216a82e9681381aa6911b0f2d9981",
        }
    },
    ("post", "/v1/conform"): {
        "200": {
            "ok": True,
            "model": "m.onnx",
            "opset": 13,
            "device": "CPU",
            "precision": "f32",
            "error": None,
            "inputs": [
                {"name": "x", "shape": [2, 3, 4], "element_type": "f32", "origin": "seed 0", "defaulted_dims": []}
            ],
            "nodes": [
                {
                    "max_abs_error": 2.9802322387695312e-08,
                    "max_rel_error": 2.6110683186025564e-07,
                    "mismatched": 0,
                    "total": 1,
                    "atol": 1e-05,
                    "rtol": 1e-05,
                    "exact": False,
                    "required_atol": 0.0,
                    "required_rtol": 0.0,
                    "first_mismatch": None,
                    "nan": {"reference": 0, "candidate": 0},
                    "inf": {"reference": 0, "candidate": 0},
                    "allowance_max": None,
                    "undefined": 0,
                    "node": "rm",
                    "op_type": "ReduceMean",
                    "domain": "ai.onnx",
                    "version": 13,
                    "observable": True,
                    "missing_tensors": [],
                    "status": "ok",
                    "ok": True,
                    "error": None,
                    "notes": [],
                    "dequantized_max_abs_diff": None,
                }
            ],
            "saved_ir": None,
            "notes": [],
            "seconds": 0.034,
            "schema": "ovreduce.conform/v1",
        }
    },
}
"""The answers of each operation (method, path template) by status."""
