"""KServe v2 / Open Inference Protocol (REST) beside ``/v1``, so that standard clients (``tritonclient[http]``,
OpenVINO Model Server's and Triton's) run a stored model's reductions; docs/api.md ("KServe v2") says what they answer.

Every reduction layer of every stored model is a v2 model named ``<model id>.<layer ids path>``. Errors are
``{"error": "..."}`` with Triton's statuses (:data:`api.problems.V2_STATUS_BY_ERROR`). The protocol, not
``/openapi.json`` (whose errors are problem+json), specifies these routes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Request
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response, StreamingResponse

from ovreduce import __version__
from ovreduce.errors import InputError, IRError, LimitExceededError, MemoryLimitError, NotFoundError, OvReduceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.reports.inspect import LayerView
from ovreduce.run import make_backends, prepare_inputs, run_spec

from .. import kserve
from ..deps import ServicesDep, SinceDep
from ..errors import BusyError, StoreCorruptError
from ..kserve import VERSION, Inputs, NotReadyError, model_name, parse_name, run_options, shown
from ..problems import holding
from ..schemas import RunRequest, V2InferRequest, near_miss
from ..store.catalog import Catalog, LoadedModel, path_of
from ..workers import WorkerContext
from .common import ServiceRoute, document_bytes, json_response, parse_json
from .health import _openvino

__all__ = ["router"]

PLATFORM = "ovreduce"
EXTENSIONS = ["binary_tensor_data", "parameters"]  # and POST /v2/repository/index (no load/unload)


class _V2Route(ServiceRoute):
    async def _check(self, request: Request) -> None:  # a model or version none has: 404 before the body is read
        await super()._check(request)
        if request.method == "POST" and "name" in request.path_params:
            name = kserve.canonical_name(request.path_params["name"])
            mid, path = parse_name(name, request.path_params.get("version"))
            catalog: Catalog = request.app.state.services.catalog  # (the stored summary: no model is parsed here)
            if path not in await run_in_threadpool(catalog.reduction_paths, mid):
                raise _no_reduction(name, path)
            said = request.headers.getlist(kserve.HEADER_LENGTH)  # (no other POST names a model)
            if len(said) > 1:
                raise InputError("the request has more than one Inference-Header-Content-Length header; send one")
            if said:  # within the Content-Length when there is one
                size = request.headers.get("content-length", "")
                kserve.header_length_of(said[0], int(size) if size.isdigit() else None)


def _no_reduction(name: str, path: str) -> NotFoundError:
    return NotFoundError(f"Request for unknown model: {shown(name)} is not found: the stored model has no reduction "
                         f"layer at {path!r}")  # fmt: skip


router = APIRouter(prefix="/v2", tags=["kserve-v2"], route_class=_V2Route, include_in_schema=False)
ModelName = Annotated[str, AfterValidator(kserve.canonical_name)]  # (its model id asked for in either case)


# -- models -----------------------------------------------------------------------------------------------
def _tensor(name: str, etype: ElementType, shape: Any) -> dict[str, Any]:
    """-1 for each dynamic dim of a JSON shape (``to_json``), [-1] for a dynamic rank."""
    dims = [d if isinstance(d, int) and d >= 0 else -1 for d in shape] if isinstance(shape, list | tuple) else [-1]
    return {"name": name, "datatype": etype.kserve, "shape": dims}


def _ready_model(catalog: Catalog, name: str, version: str | None) -> tuple[LoadedModel, LayerView, str]:
    """The stored model, the reduction's view and its ids path of v2 model ``name`` (NotReadyError: it cannot run)."""
    mid, path = parse_name(name, version)
    try:
        loaded = catalog.load(mid)
    except (IRError, LimitExceededError) as exc:  # stored, but not read under the limits (or the reader) of now
        if isinstance(exc, MemoryLimitError):  # (its worker's, which then retires)
            raise
        raise NotReadyError(f"model {shown(name)} is not ready: {exc.message}") from None
    body_path, _, layer_id = path.rpartition("/")
    for view in loaded.inspected.layers:
        if view.layer_id == layer_id and view.body_path == (body_path or None) and view.reduction is not None:
            break
    else:
        raise _no_reduction(name, path)
    reason = loaded.unready(path)
    if reason is not None:
        raise NotReadyError(f"model {shown(name)} is not ready: {reason}")
    return loaded, view, path


def _metadata(context: WorkerContext, name: str, version: str | None) -> bytes:
    loaded, view, path = _ready_model(context.catalog, name, version)
    spec = loaded.spec(path)
    inputs = [_tensor("data", spec.data_type, spec.data_shape.to_json())]
    if spec.runtime_axes:
        inputs.append(_tensor("axes", spec.axes_type, spec.axes_shape.to_json()))
    assert view.reduction is not None
    outputs = [_tensor(kserve.OUTPUT, spec.data_type, view.reduction.inferred_output_shape)]
    parameters: dict[str, Any] = {"layer_id": view.layer_id, "layer_name": view.layer_name, "layer_path": path,
                                  "type": view.type, "keep_dims": spec.keep_dims, "model_id": loaded.id}  # fmt: skip
    if spec.axes is not None:
        parameters["axes"] = ",".join(str(a) for a in spec.axes)
    for role, shape in (("data", spec.data_shape), ("axes", spec.axes_shape if spec.runtime_axes else None)):
        if shape is not None and ".." in (written := str(shape)):  # a -1 of KServe's (any size) hides its bounds
            parameters[f"{role}_shape"] = written
    return document_bytes(
        dict(name=name, versions=[VERSION], platform=PLATFORM, inputs=inputs, outputs=outputs, parameters=parameters)
    )


def _ready(context: WorkerContext, name: str, version: str | None) -> bytes:
    _ready_model(context.catalog, name, version)
    return document_bytes({"name": name, "ready": True})


def _index(context: WorkerContext, ready_only: bool, mid: str) -> bytes:
    """One stored model's entries, as the items of a JSON array (none: nothing), from its summary's reasons; it is
    parsed only if stored before they were recorded, or if larger than the limits of now (one that cannot be read
    then raises why: the route lists it by its id)."""
    catalog, limits = context.catalog, context.catalog.limits
    out: list[dict[str, Any]] = []
    for summary in map(json.loads, catalog.summaries_json([mid])):  # (none when removed meanwhile)
        paths = [path_of(reduction) for reduction in summary.get("reductions", ())]
        unready = summary.get("unready")
        grown = summary.get("xml_bytes", 0) > limits.max_xml_bytes or summary.get("layer_count", 0) > limits.max_layers
        if not isinstance(unready, dict) or grown:
            try:
                loaded = catalog.load(mid)
            except (NotFoundError, StoreCorruptError):  # removed meanwhile: not in the repository
                continue
            unready = {path: reason for path in paths if (reason := loaded.unready(path)) is not None}
        for path in paths:
            reason = unready.get(path)
            if ready_only and reason is not None:
                continue
            out.append({"name": model_name(mid, path), "version": VERSION,
                        "state": "READY" if reason is None else "UNAVAILABLE", "reason": reason or ""})  # fmt: skip
    return document_bytes(out)[1:-1]


# -- inference ---------------------------------------------------------------------------------------------
def _infer(context: WorkerContext, name: str, inputs: Inputs, backend: str, run: RunRequest,
           binary: bool, request_id: str | None) -> tuple[bytes, int | None, str]:  # fmt: skip
    """The answer's body, its JSON header's length when binary, and the run's outcome (for the metrics)."""
    catalog, settings = context.catalog, context.settings
    mid, _ = parse_name(name)
    with catalog.store.pinned(mid):
        loaded, _, path = _ready_model(catalog, name, None)  # the route checked the version
        spec = loaded.spec(path)
        body_path = loaded.model.locate(path).body_path
        given = kserve.given_arrays(name, spec, inputs, settings.max_elements)
        arrays, notes, defaulted = prepare_inputs(loaded.model, spec, given=given, max_elements=settings.max_elements,
                                                  body_path=body_path, aliases=("data", "axes"))  # fmt: skip
        options = run.model_dump(include={"device", "precision"}, exclude_unset=True)  # (refused with NumPy alone)
        runners = make_backends(run.backends, **options, cache=context.layer_cache)
        report = run_spec(spec, arrays, runners, atol=run.atol, rtol=run.rtol, notes=notes,
                          requested_precision=run.precision, body_path=body_path, defaulted=defaulted)  # fmt: skip
    chosen, reference = report.results[-1], report.results[0]
    if not chosen.ok or chosen.output is None:
        runs = reference is not chosen and reference.ok and reference.output is not None  # advice only where it runs
        hint = "; parameters.backend 'numpy' runs the NumPy reference" if runs else ""
        raise InputError(f"the {chosen.backend} backend cannot run these inputs: {chosen.error}{hint}")
    output = np.asarray(chosen.output)
    if output.size > settings.max_output_elements:
        raise LimitExceededError(f"the output has {output.size} elements, more than the limit of "
                                 f"{settings.max_output_elements} (OVREDUCE_MAX_OUTPUT_ELEMENTS)")  # fmt: skip
    parameters: dict[str, Any] = {"backend": backend, "outcome": report.outcome}
    if backend == "openvino":
        parameters["device"] = run.device
        if chosen.precision is not None:  # what the device reports it computed in (AUTO and friends do not say)
            parameters["precision"] = chosen.precision
    if reference is not chosen and not reference.ok:
        parameters["reference_error"] = reference.error or "failed"
    comparison = next((c for c in report.comparisons if c.candidate == chosen.backend), None)
    if comparison is not None:
        parameters.update(reference=comparison.reference, agree=comparison.ok, mismatched=comparison.mismatched,
                          total=comparison.total, atol=comparison.atol, rtol=comparison.rtol)  # fmt: skip
        errors = {"max_abs_error": comparison.max_abs_error, "max_rel_error": comparison.max_rel_error}
        parameters.update({field: value for field, value in errors.items() if value is not None})
        if comparison.error:
            parameters["comparison_error"] = comparison.error
    if report.document.not_established is not None:  # an agreement on an input that cannot show an error
        parameters["not_established"] = report.document.not_established
    if report.notes:  # what the verdict rests on (an input that cannot show an error...), one per line
        parameters["notes"] = "\n".join(report.notes)
    return (*kserve.encode_answer(name, request_id, parameters, output, binary), report.outcome)


# -- routes -----------------------------------------------------------------------------------------------
def _json(body: bytes) -> Response:
    return Response(body, media_type="application/json")


@router.get("")
async def server_metadata() -> Response:
    return json_response({"name": PLATFORM, "version": __version__, "extensions": EXTENSIONS})


@router.get("/health/live")
async def live() -> Response:
    return json_response({"live": True})


@router.get("/health/ready")
async def ready(services: ServicesDep) -> Response:
    openvino = await run_in_threadpool(_openvino)
    store_detail = await run_in_threadpool(services.catalog.store.unwritable)
    if openvino["ok"] and store_detail is None:
        return json_response({"ready": True})
    raise NotReadyError(f"not ready: {store_detail if openvino['ok'] else openvino['detail']}")


@router.get("/models/{name}")
@router.get("/models/{name}/versions/{version}")
async def model_metadata(services: ServicesDep, name: ModelName, version: str | None = None) -> Response:
    if name == "stats" and version is None:  # the statistics extension's path (no model is named so): not served
        raise StarletteHTTPException(404)
    return _json(await services.isolated.run("reading the model metadata", _metadata, name, version))


@router.get("/models/{name}/ready")
@router.get("/models/{name}/versions/{version}/ready")
async def model_ready(services: ServicesDep, name: ModelName, version: str | None = None) -> Response:
    return _json(await services.isolated.run("reading the model's readiness", _ready, name, version))


def _read_request(
    body: bytes, header_length: str | None, max_elements: int
) -> tuple[V2InferRequest, Inputs, str, RunRequest, bool]:
    """An inference request's tensors, backend, run options and output form (its refusals quote names as sent)."""
    with holding(body):
        req, inputs = kserve.decode_request(body, header_length, max_elements)
        return req, inputs, *run_options(req.parameters), kserve.binary_outputs(req)


@router.post("/models/{name}/infer")
@router.post("/models/{name}/versions/{version}/infer")
async def infer(
    services: ServicesDep, since: SinceDep, request: Request, name: ModelName, version: str | None = None
) -> Response:
    # read off the event loop: an 8 MiB body costs half a second of JSON
    req, inputs, backend, run, binary = await run_in_threadpool(
        _read_request, await request.body(), request.headers.get(kserve.HEADER_LENGTH), services.settings.max_elements
    )
    what = f"the inference of model {shown(name)}"
    job = services.isolated.run(what, _infer, name, inputs, backend, run, binary, req.id, since=since)
    data, header, _ = await services.metrics.counted_run(job, run.backends, run.device)
    if header is None:
        return _json(data)
    return Response(data, media_type="application/octet-stream", headers={kserve.HEADER_LENGTH: str(header)})


@router.post("/repository/index")
async def repository_index(services: ServicesDep, request: Request) -> Response:
    body = await request.body()
    ready_only = False
    if body.strip():
        try:
            doc = await parse_json(body)  # its own InputError (a key given twice, a number past float range) passes
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise InputError("the repository index request must be empty or a JSON object") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("ready", False), bool):
            raise InputError('the repository index request must be a JSON object like {"ready": true}')
        near = next((key for key in doc if isinstance(key, str) and near_miss(key, ("ready",))), None)
        if near is not None:  # ("Ready" would list every model, as if no filter were asked for)
            raise InputError(f"{shown(near)} is not a key ovreduce reads; did you mean 'ready'?")
        ready_only = bool(doc.get("ready", False))
    ids = await run_in_threadpool(services.catalog.store.ids)  # a store that cannot be listed: 503 before any byte

    async def entries() -> AsyncIterator[bytes]:
        """Each model's from a job of its own: a store of many large models outlasts any one job's time limit, and an
        answer built whole is held as often as it is asked at once. A model that cannot be listed is an entry named
        by its id that says why (after the server was found busy, every one left), left out of a ready-only index."""
        sep, busy = b"[", None
        for mid in ids:
            try:
                if busy is not None:
                    raise busy
                part = await services.isolated.run("listing the model repository", _index, ready_only, mid)
            except Exception as exc:  # the status is sent: said in its place, not a cut answer
                busy = exc if isinstance(exc, BusyError) else None
                if not isinstance(exc, OvReduceError):
                    logging.getLogger("ovreduce.api").error("listing model %s for the index failed", mid, exc_info=exc)
                said = exc.message if isinstance(exc, OvReduceError) else "an unexpected error, which the log shows"
                why = f"its reductions could not be listed: {said}"
                part = b"" if ready_only else document_bytes(
                    {"name": mid, "version": VERSION, "state": "UNAVAILABLE", "reason": why}
                )  # fmt: skip
            if part:
                yield sep + part
                sep = b","
        yield b"[]" if sep == b"[" else b"]"

    return StreamingResponse(entries(), media_type="application/json")
