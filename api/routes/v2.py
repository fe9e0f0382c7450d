"""KServe v2 / Open Inference Protocol (REST) beside ``/v1``, so that standard clients (``tritonclient[http]``,
the KServe v2 client of OpenVINO Model Server and Triton users) can run a stored model's reductions.

Every reduction layer of every stored model is a v2 model, version ``1``, named ``<model id>.<layer path>``:
the 64-hex model id, a dot, and the layer's ids path (:data:`ovreduce.ir.model.PATH_GRAMMAR`) with each ``/``
written ``-``: ``<id>.12`` at the top level, ``<id>.12-then-110`` for layer 110 of the then-body of layer 12.
Layer ids are digits and roles are ``then``, ``else`` or ``body``, so the name is URL-safe and reads back one
way only (:data:`MODEL_NAME`).

A model has the input ``data`` (and ``axes`` when the layer takes its axes at run time) and the output
``output``; inputs may also be named as in ``/v1`` (``"0"``, ``"1"``, the Parameter feeding the port). Request
``parameters`` choose ``backend`` (``openvino``, the default, or ``numpy``: the reference), ``device``,
``precision``, ``atol`` and ``rtol``. OpenVINO runs beside the NumPy reference; the answer is the chosen
backend's output, and its ``parameters`` carry the comparison (``agree``, ``max_abs_error``,
``max_rel_error``...). The binary tensor data extension is supported both ways.

Errors are ``{"error": "..."}`` (what the clients decode), with Triton's statuses: 400 a bad request (limits
included), 404 an unknown model or version, 503 a model that is not ready, busy workers, a run past the time
limit (Triton reports "Request timeout expired" as unavailable), an OpenVINO device or the store not
available, 500 unexpected. The middleware's own guards (Host, Origin, body size, requests at once) still
answer first, as problem+json. These routes are left out of ``/openapi.json``, whose error answers are
problem+json; the protocol is their specification.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from api.deps import ServicesDep
from api.errors import BusyError, RequestTooLargeError, RunTimeoutError, StoreCorruptError, StoreError
from api.problems import scrub
from api.routes.common import given_tensors, json_bytes, json_response
from api.routes.health import _openvino
from api.schemas import (
    RunRequest,
    Tensor,
    V2IndexEntry,
    V2InferRequest,
    V2ModelMetadata,
    V2ServerMetadata,
)
from api.store.catalog import Catalog, LoadedModel
from api.workers import WorkerContext
from ovreduce import __version__
from ovreduce.errors import BackendError, InputError, LimitExceededError, NotFoundError, OvReduceError
from ovreduce.ir.dtypes import ElementType, element_type_from_kserve
from ovreduce.reports.inspect import LayerView
from ovreduce.run import make_backends, prepare_inputs, run_spec
from ovreduce.shapes import PartialShape
from ovreduce.tensors import EXECUTABLE_TYPES, to_kserve

__all__ = ["MODEL_NAME", "NotReadyError", "model_name", "router"]

logger = logging.getLogger("ovreduce.api")
router = APIRouter(prefix="/v2", tags=["kserve-v2"])

MODEL_NAME = re.compile(r"(?P<id>[0-9a-f]{64})\.(?P<path>[0-9]+(?:-(?:then|else|body)-[0-9]+)*)")
"""A v2 model name: ``<model id>.<layer ids path with "-" for "/">``."""
VERSION = "1"
PLATFORM = "ovreduce"
EXTENSIONS = ("binary_tensor_data", "parameters")  # and POST /v2/repository/index (no load/unload)
OUTPUT = "output"
_INPUT_ALIASES = {"data": "0", "axes": "1"}
_HEADER_LENGTH = "inference-header-content-length"


class NotReadyError(BackendError):
    """The model exists but cannot run (its shapes or types cannot be resolved, or are not executable): 503."""

    code = "v2.not_ready"


class _RefusedError(OvReduceError):
    """An answer with a status of its own (404 unknown version, 501 an unsupported feature)."""

    code = "v2"

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.status))


def model_name(mid: str, path: str) -> str:
    """The v2 name of layer ``path`` (an ids path) of stored model ``mid``."""
    return f"{mid}.{path.replace('/', '-')}"


def _shown(name: str) -> str:
    return repr(name if len(name) <= 200 else name[:200] + "...")


def _key(name: str) -> tuple[str, str]:
    """The stored model id and the layer's ids path a v2 model name stands for (404 when it is none)."""
    found = MODEL_NAME.fullmatch(name)
    if found is None:
        raise NotFoundError(
            f"Request for unknown model: {_shown(name)} is not found; ovreduce names a model "
            f"<model id>.<layer ids path with '-' for '/'>, e.g. <id>.12 or <id>.12-then-110 "
            f"(POST /v2/repository/index lists them)"
        )
    return found["id"], found["path"].replace("-", "/")


def _status(exc: OvReduceError) -> int:
    if isinstance(exc, _RefusedError):
        return exc.status
    if isinstance(exc, RequestTooLargeError):
        return 413
    if isinstance(exc, NotFoundError | StoreCorruptError):
        return 404
    if isinstance(exc, BusyError | RunTimeoutError | BackendError | StoreError):
        return 503
    return 400  # InputError, LimitExceededError (Triton: invalid argument), IRError, anything else of ours


def _error(status: int, message: str) -> Response:
    return json_response({"error": scrub(message)}, status)


async def _guard(work: Callable[[], Awaitable[Response]]) -> Response:
    """``work``'s answer, or its failure as the protocol's ``{"error": "..."}``."""
    try:
        return await work()
    except OvReduceError as exc:
        return _error(_status(exc), exc.message)
    except Exception:
        logger.exception("unexpected error in a KServe v2 request")
        return _error(500, "internal error (logged on the server)")


# -- models -----------------------------------------------------------------------------------------------
def _path_of(view: LayerView) -> str:
    return view.layer_id if view.body_path is None else f"{view.body_path}/{view.layer_id}"


def _find(catalog: Catalog, name: str) -> tuple[LoadedModel, LayerView, str]:
    """The stored model, the reduction's view and its ids path for v2 model ``name``."""
    mid, path = _key(name)
    loaded = catalog.load(mid)
    body_path, _, layer_id = path.rpartition("/")
    for view in loaded.inspected().layers:
        if view.layer_id == layer_id and view.body_path == (body_path or None) and view.reduction is not None:
            return loaded, view, path
    raise NotFoundError(f"Request for unknown model: {_shown(name)} is not found: the stored model has no "
                        f"reduction layer at {path!r}")  # fmt: skip


def _unready(loaded: LoadedModel, path: str) -> str | None:
    """Why the reduction at ``path`` cannot run (None: it can)."""
    try:
        spec = loaded.spec(path)
    except OvReduceError as exc:
        return exc.message
    for role, etype in (("data", spec.data_type), ("axes", spec.axes_type)):
        if etype.name not in EXECUTABLE_TYPES or etype.kserve is None:
            return f"its {role} input is {etype}, which ovreduce cannot execute or send as a KServe datatype"
    return None


def _check_version(version: str | None) -> None:
    if version is not None and version != VERSION:
        raise _RefusedError(f"Request for unknown model version {_shown(version)}: ovreduce models have version "
                       f"{VERSION} only", 404)  # fmt: skip


def _dims(shape: PartialShape) -> list[int]:
    if shape.dims is None:
        return [-1]
    return [d.lo if d.is_static else -1 for d in shape.dims]


def _json_dims(shape: Any) -> list[int]:
    if not isinstance(shape, list | tuple):
        return [-1]
    return [d if isinstance(d, int) and d >= 0 else -1 for d in shape]


def _ready_model(catalog: Catalog, name: str, version: str | None) -> tuple[LoadedModel, LayerView, str]:
    """The stored model, layer view and path of v2 model ``name``; NotReadyError when it cannot run."""
    _check_version(version)
    loaded, view, path = _find(catalog, name)
    reason = _unready(loaded, path)
    if reason is not None:
        raise NotReadyError(f"model {_shown(name)} is not ready: {reason}")
    return loaded, view, path


def _metadata(catalog: Catalog, name: str, version: str | None) -> dict[str, Any]:
    loaded, view, path = _ready_model(catalog, name, version)
    spec = loaded.spec(path)
    inputs = [{"name": "data", "datatype": spec.data_type.kserve, "shape": _dims(spec.data_shape)}]
    if spec.runtime_axes:
        inputs.append({"name": "axes", "datatype": spec.axes_type.kserve, "shape": _dims(spec.axes_shape)})
    reduction = view.reduction
    assert reduction is not None
    out_shape = _json_dims(reduction.inferred_output_shape)
    parameters: dict[str, Any] = {"layer_id": view.layer_id, "layer_name": view.layer_name, "layer_path": path,
                                  "type": view.type, "keep_dims": spec.keep_dims, "model_id": loaded.id}  # fmt: skip
    if spec.axes is not None:
        parameters["axes"] = ",".join(str(a) for a in spec.axes)
    return V2ModelMetadata(
        name=name,
        versions=[VERSION],
        platform=PLATFORM,
        inputs=inputs,  # type: ignore[arg-type]
        outputs=[{"name": OUTPUT, "datatype": spec.data_type.kserve, "shape": out_shape}],  # type: ignore[list-item]
        parameters=parameters,
    ).model_dump()


def _ready(catalog: Catalog, name: str, version: str | None) -> dict[str, Any]:
    _ready_model(catalog, name, version)
    return {"name": name, "ready": True}


def _index(catalog: Catalog, ready_only: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for summary in catalog.summaries():
        mid = str(summary.get("id", ""))
        try:
            loaded = catalog.load(mid)
            views = [v for v in loaded.inspected().layers if v.reduction is not None]
        except OvReduceError:  # removed meanwhile, or no longer readable: not in the repository
            continue
        for view in views:
            path = _path_of(view)
            reason = _unready(loaded, path)
            if ready_only and reason is not None:
                continue
            entry = V2IndexEntry(name=model_name(mid, path), version=VERSION,
                                 state="READY" if reason is None else "UNAVAILABLE", reason=reason or "")  # fmt: skip
            out.append(entry.model_dump())
    return out


# -- inference --------------------------------------------------------------------------------------------
_Input = tuple[str, list[int], str, "bytes | list[Any]"]  # name, shape, datatype, binary or JSON data


def _element_type(datatype: str, what: str) -> ElementType:
    try:
        etype = element_type_from_kserve(datatype)
    except OvReduceError as exc:
        raise InputError(f"{what}: {exc.message}") from None
    if etype.name not in EXECUTABLE_TYPES:
        raise InputError(f"{what}: reductions of {datatype} data cannot be executed")
    return etype


def _decode_request(body: bytes, header_length: str | None, max_elements: int) -> tuple[V2InferRequest, list[_Input]]:
    """The JSON header and the inputs of an inference request; every binary tensor's size is checked against
    its shape and datatype (and the element limit) before anything is allocated for it."""
    if header_length is None:
        head, rest = body, b""
    else:
        text = header_length.strip()
        if not (text.isascii() and text.isdigit()) or int(text) > len(body):
            raise InputError(f"Inference-Header-Content-Length: {header_length[:40]!r} is not a length within the "
                             f"request body of {len(body)} bytes")  # fmt: skip
        head, rest = body[: int(text)], body[int(text) :]
    try:
        doc = json.loads(head)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"the inference request header is not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError("the inference request header is nested too deeply to be read") from None
    if not isinstance(doc, dict):
        raise InputError("the inference request header must be a JSON object")
    try:
        req = V2InferRequest.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the request"
        raise InputError(f"the inference request is not valid: {where}: {first.get('msg', '')}") from None
    inputs: list[_Input] = []
    offset = 0
    for tensor in req.inputs:
        what = f"input {tensor.name!r}"
        etype = _element_type(tensor.datatype, what)
        count = math.prod(tensor.shape)
        if count > max_elements:
            raise LimitExceededError(f"{what} has shape {tensor.shape}: {count} elements, more than the limit of "
                                     f"{max_elements} (OVREDUCE_MAX_ELEMENTS)")  # fmt: skip
        if "shared_memory_region" in tensor.parameters:
            raise _RefusedError(f"{what}: shared memory is not supported by ovreduce; send the data in the request")
        size = tensor.parameters.get("binary_data_size")
        if size is None:
            if tensor.data is None:
                raise InputError(f"{what} has neither data nor parameters.binary_data_size")
            inputs.append((tensor.name, tensor.shape, tensor.datatype, tensor.data))
            continue
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise InputError(f"{what}: parameters.binary_data_size must be a non-negative integer, got {size!r}")
        if tensor.data is not None:
            raise InputError(f"{what} has both data and parameters.binary_data_size")
        expected = count * np.dtype(etype.numpy).itemsize
        if size != expected:
            raise InputError(f"{what}: binary_data_size is {size} bytes but shape {tensor.shape} of "
                             f"{tensor.datatype} needs {expected}")  # fmt: skip
        if offset + size > len(rest):
            raise InputError(f"{what}: its {size} bytes of binary data go past the end of the request body "
                             f"({len(rest) - offset} left)")  # fmt: skip
        inputs.append((tensor.name, tensor.shape, tensor.datatype, rest[offset : offset + size]))
        offset += size
    if offset != len(rest):
        raise InputError(f"the request body holds {len(rest) - offset} bytes after the binary data of its inputs")
    return req, inputs


def _options(parameters: dict[str, Any]) -> tuple[str, RunRequest]:
    backend = parameters.get("backend", "openvino")
    if backend not in ("openvino", "numpy"):
        raise InputError(f"parameters.backend must be 'openvino' or 'numpy', got {str(backend)[:40]!r}")
    fields = {k: parameters[k] for k in ("device", "precision", "atol", "rtol") if k in parameters}
    try:
        run = RunRequest.model_validate(
            {**fields, "backends": ["numpy"] if backend == "numpy" else ["numpy", "openvino"]}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise InputError(f"parameters.{where}: {first.get('msg', '')}") from None
    return str(backend), run


def _binary_outputs(req: V2InferRequest) -> bool:
    """Whether the output is answered as binary data (and 400 for an output the model does not have)."""
    default = req.parameters.get("binary_data_output", False)
    if not isinstance(default, bool):
        raise InputError("parameters.binary_data_output must be true or false")
    binary = default
    for out in req.outputs or ():
        if out.name != OUTPUT:
            raise InputError(f"unexpected inference output {_shown(out.name)}: the model has one output, {OUTPUT!r}")
        if "classification" in out.parameters:
            raise _RefusedError("the classification extension is not supported by ovreduce")
        flag = out.parameters.get("binary_data", default)
        if not isinstance(flag, bool):
            raise InputError(f"outputs[{out.name!r}].parameters.binary_data must be true or false")
        binary = flag
    return binary


def _array(name: str, shape: list[int], datatype: str, raw: bytes) -> npt.NDArray[Any]:
    etype = _element_type(datatype, f"input {name!r}")
    array = np.frombuffer(raw, dtype=np.dtype(etype.numpy)).reshape(shape)
    if etype.kind == "bool" and raw and max(raw) > 1:  # NumPy would take any byte as a bool
        raise InputError(f"input {name!r}: BOOL binary data must hold bytes 0 or 1")
    return array.copy()


def _infer(context: WorkerContext, name: str, inputs: list[_Input], backend: str, run: RunRequest,
           binary: bool, request_id: str | None) -> tuple[bytes, int | None]:  # fmt: skip
    """Run the model (in a worker process): the response body, and its JSON header's length when binary."""
    catalog, settings = context.catalog, context.settings
    mid, _ = _key(name)
    with catalog.store.pinned(mid):
        loaded, _, path = _find(catalog, name)
        reason = _unready(loaded, path)
        if reason is not None:
            raise NotReadyError(f"model {_shown(name)} is not ready: {reason}")
        spec = loaded.spec(path)
        body_path = loaded.model.locate(path).body_path
        wanted = 2 if spec.runtime_axes else 1
        if len(inputs) != wanted:
            names = "'data' and 'axes'" if spec.runtime_axes else "'data'"
            raise InputError(f"model {_shown(name)} takes {wanted} input(s), {names}; the request has {len(inputs)}")
        given: dict[str, npt.NDArray[Any]] = {}
        for tname, shape, datatype, payload in inputs:
            key = _INPUT_ALIASES.get(tname, tname)
            if key in given:
                raise InputError(f"input {tname!r} is given twice")
            if isinstance(payload, bytes):
                given[key] = _array(tname, shape, datatype, payload)
            else:
                tensor = Tensor(name=tname, shape=shape, datatype=datatype, data=payload)
                given[key] = given_tensors([tensor], settings.max_elements)[tname]
        arrays, notes, defaulted = prepare_inputs(loaded.model, spec, given=given, max_elements=settings.max_elements,
                                                  body_path=body_path)  # fmt: skip
        runners = make_backends(run.backends, device=run.device, precision=run.precision, cache=context.layer_cache)
        report = run_spec(spec, arrays, runners, atol=run.atol, rtol=run.rtol, notes=notes,
                          requested_precision=run.precision, body_path=body_path, defaulted=defaulted)  # fmt: skip
    chosen = report.results[-1]
    if not chosen.ok or chosen.output is None:
        hint = "; parameters.backend 'numpy' runs the NumPy reference" if backend == "openvino" else ""
        raise InputError(f"the {chosen.backend} backend cannot run these inputs: {chosen.error}{hint}")
    output = np.asarray(chosen.output)
    if output.size > settings.max_output_elements:
        raise LimitExceededError(f"the output has {output.size} elements, more than the limit of "
                                 f"{settings.max_output_elements} (OVREDUCE_MAX_OUTPUT_ELEMENTS)")  # fmt: skip
    parameters: dict[str, Any] = {"backend": backend, "outcome": report.outcome}
    if backend == "openvino":
        parameters.update(device=run.device, precision=chosen.precision or run.precision)
    reference = report.results[0]
    if reference is not chosen and not reference.ok:
        parameters["reference_error"] = reference.error or "failed"
    comparison = next((c for c in report.comparisons if c.candidate == chosen.backend), None)
    if comparison is not None:
        parameters.update(reference=comparison.reference, agree=comparison.ok, mismatched=comparison.mismatched,
                          total=comparison.total, atol=comparison.atol, rtol=comparison.rtol)  # fmt: skip
        for field in ("max_abs_error", "max_rel_error"):
            value = getattr(comparison, field)
            if value is not None:
                parameters[field] = value
        if comparison.error:
            parameters["comparison_error"] = comparison.error
    answer = to_kserve(OUTPUT, output)
    raw = b""
    if binary:
        raw = np.ascontiguousarray(output).tobytes()
        del answer["data"]
        answer["parameters"] = {"binary_data_size": len(raw)}
    doc: dict[str, Any] = {"model_name": name, "model_version": VERSION}
    if request_id is not None:
        doc["id"] = request_id
    doc.update(parameters=parameters, outputs=[answer])
    header = json_bytes(doc)
    return (header + raw, len(header)) if binary else (header, None)


# -- routes -----------------------------------------------------------------------------------------------
@router.get("", response_model=V2ServerMetadata, include_in_schema=False)
async def server_metadata() -> Response:
    return json_response(V2ServerMetadata(name=PLATFORM, version=__version__, extensions=list(EXTENSIONS)).model_dump())


@router.get("/health/live", include_in_schema=False)
async def live() -> Response:
    return json_response({"live": True})


@router.get("/health/ready", include_in_schema=False)
async def ready(services: ServicesDep) -> Response:
    ov_ok, ov_detail = await run_in_threadpool(_openvino)
    store_ok = await run_in_threadpool(services.catalog.store.writable)
    if ov_ok and store_ok:
        return json_response({"ready": True})
    detail = ov_detail if not ov_ok else "the model store directory is not writable"
    return _error(503, f"not ready: {detail}")


async def _model_metadata(services: ServicesDep, name: str, version: str | None) -> Response:
    async def work() -> Response:
        doc = await services.pool.run("reading the model metadata", _metadata, services.catalog, name, version)
        return json_response(doc)

    return await _guard(work)


@router.get("/models/{name}", response_model=V2ModelMetadata, include_in_schema=False)
async def model_metadata(services: ServicesDep, name: str) -> Response:
    return await _model_metadata(services, name, None)


@router.get("/models/{name}/versions/{version}", response_model=V2ModelMetadata, include_in_schema=False)
async def model_version_metadata(services: ServicesDep, name: str, version: str) -> Response:
    return await _model_metadata(services, name, version)


async def _model_ready(services: ServicesDep, name: str, version: str | None) -> Response:
    async def work() -> Response:
        doc = await services.pool.run("reading the model's readiness", _ready, services.catalog, name, version)
        return json_response(doc)

    return await _guard(work)


@router.get("/models/{name}/ready", include_in_schema=False)
async def model_ready(services: ServicesDep, name: str) -> Response:
    return await _model_ready(services, name, None)


@router.get("/models/{name}/versions/{version}/ready", include_in_schema=False)
async def model_version_ready(services: ServicesDep, name: str, version: str) -> Response:
    return await _model_ready(services, name, version)


async def _infer_route(services: ServicesDep, request: Request, name: str, version: str | None) -> Response:
    async def work() -> Response:
        _check_version(version)
        _key(name)  # 404 before the body is read
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise _RefusedError(f"Content-Encoding {encoding[:40]!r} is not supported by ovreduce; send the request "
                           f"uncompressed")  # fmt: skip
        body = await request.body()
        limit = services.settings.max_elements
        req, inputs = _decode_request(body, request.headers.get(_HEADER_LENGTH), limit)
        backend, run = _options(req.parameters)
        binary = _binary_outputs(req)
        what = f"the inference of model {_shown(name)}"
        data, header = await services.isolated.run(what, _infer, name, inputs, backend, run, binary, req.id)
        if header is None:
            return Response(data, media_type="application/json")
        return Response(data, media_type="application/octet-stream", headers={"Inference-Header-Content-Length":
                                                                                 str(header)})  # fmt: skip

    return await _guard(work)


@router.post("/models/{name}/infer", include_in_schema=False)
async def infer(services: ServicesDep, request: Request, name: str) -> Response:
    return await _infer_route(services, request, name, None)


@router.post("/models/{name}/versions/{version}/infer", include_in_schema=False)
async def infer_version(services: ServicesDep, request: Request, name: str, version: str) -> Response:
    return await _infer_route(services, request, name, version)


@router.post("/repository/index", response_model=list[V2IndexEntry], include_in_schema=False)
async def repository_index(services: ServicesDep, request: Request) -> Response:
    async def work() -> Response:
        body = await request.body()
        ready_only = False
        if body.strip():
            try:
                doc = json.loads(body)
            except (ValueError, UnicodeDecodeError, RecursionError):
                raise InputError("the repository index request must be empty or a JSON object") from None
            if not isinstance(doc, dict) or not isinstance(doc.get("ready", False), bool):
                raise InputError('the repository index request must be a JSON object like {"ready": true}')
            ready_only = bool(doc.get("ready", False))
        entries = await services.pool.run("listing the model repository", _index, services.catalog, ready_only)
        return json_response(entries)

    return await _guard(work)


@router.api_route("/{rest:path}", methods=["GET", "POST"], include_in_schema=False)
async def unsupported(request: Request, rest: str) -> Response:
    """Any other ``/v2`` path (model configuration, statistics, load/unload, shared memory...): a 404 the
    protocol's clients can read, rather than problem+json."""
    return _error(404, f"ovreduce does not serve {request.method} /v2/{rest[:200]}; it serves server and model "
                       f"metadata, health, readiness, inference and the repository index")  # fmt: skip
