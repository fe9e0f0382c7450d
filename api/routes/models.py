"""``/v1/models``: upload an IR once (stored under the SHA-256 of its content), list, show, delete."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Annotated, Any

from fastapi import APIRouter, File, Path, UploadFile
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from ovreduce.reports.common import dumps

from ..deps import ServicesDep, SinceDep
from ..problems import EXAMPLES, responses
from ..schemas import ModelList, ModelSummary
from ..store.disk import canonical_id
from ..workers import WorkerContext
from .common import UPLOAD_PROBLEMS, ServiceRoute, read_ir_upload

__all__ = ["ModelIdPath", "router"]

router = APIRouter(prefix="/v1/models", tags=["models"], route_class=ServiceRoute)
ModelIdPath = Annotated[
    str,
    Path(
        description="the model's id (64 hex digits in either case, as POST /v1/models answered)",
        openapi_examples={"stored": {"value": EXAMPLES["parameters"]["model_id"]}},
    ),
    AfterValidator(canonical_id),  # (the answers name it in lower case)
]


def _add(context: WorkerContext, *args: Any, **kwargs: Any) -> tuple[bytes, str, bool, int]:
    """The stored summary as JSON (a large model's is megabytes, not to be serialised in the server), its id,
    whether it was stored now and how many models that evicted."""
    meta, created, evicted = context.catalog.add(*args, **kwargs)
    return dumps(meta, indent=False), meta["id"], created, evicted


@router.post(
    "",
    status_code=201,
    response_model=ModelSummary,
    summary="Store an IR (xml, and bin when it has one); 201 the first time, 200 when already stored",
    responses={200: {"model": ModelSummary, "description": "The same content was already stored"},
               **responses("post /v1/models", *UPLOAD_PROBLEMS)},
)  # fmt: skip
async def upload(
    services: ServicesDep,
    since: SinceDep,
    xml: Annotated[UploadFile, File(description="the IR .xml")],
    bin_file: Annotated[UploadFile | None, File(alias="bin", description="its .bin, when it has one")] = None,
) -> Response:
    xml_bytes, bin_bytes, filename, bin_filename = await read_ir_upload(services.settings, xml, bin_file)
    summary, mid, created, evicted = await services.isolated.run(
        "the upload", _add, xml_bytes, bin_bytes, filename=filename, bin_filename=bin_filename, since=since
    )
    if evicted:
        services.metrics.evictions.inc(evicted)
    return Response(summary, 201 if created else 200, {"Location": f"/v1/models/{mid}"}, "application/json")


@router.get("", response_model=ModelList, summary="Every stored model", responses=responses("get /v1/models", 503))
async def list_models(services: ServicesDep) -> Response:
    """The stored summaries spliced in as they are read (never parsed here), one at a time: the answer can be
    gigabytes, and a server that built it whole held it as often as it was asked at once."""
    catalog, store = services.catalog, services.catalog.store
    ids = await run_in_threadpool(store.ids)  # a store that cannot be listed: 503 before anything is sent

    def body() -> Iterator[bytes]:  # (Starlette iterates it off the event loop)
        yield b'{"models": ['
        for i, raw in enumerate(catalog.summaries_json(ids)):
            yield b", " + raw if i else raw
        yield b'], "total_bytes": %d, "max_bytes": %d}' % (store.usage(), store.max_bytes)

    return StreamingResponse(body(), media_type="application/json")


@router.get(
    "/{model_id}",
    response_model=ModelSummary,
    summary="One stored model",
    responses=responses("get /v1/models/{model_id}", 404, 410, 503),
)
async def get_model(services: ServicesDep, model_id: ModelIdPath) -> Response:
    store = services.catalog.store
    summary = await run_in_threadpool(store.open_meta, model_id)
    await run_in_threadpool(store.touch, model_id)
    size = os.fstat(summary.fileno()).st_size
    return StreamingResponse(_chunks(summary), media_type="application/json", headers={"content-length": str(size)})


def _chunks(file: IO[bytes]) -> Iterator[bytes]:
    """``file``'s bytes in chunks of 64 KiB, the file closed at the end (a large summary is never held whole)."""
    with file:
        while chunk := file.read(1 << 16):
            yield chunk


@router.delete(
    "/{model_id}",
    status_code=204,
    summary="Remove a stored model",
    responses=responses("delete /v1/models/{model_id}", 404, 503),
)
async def delete_model(services: ServicesDep, model_id: ModelIdPath) -> Response:
    await run_in_threadpool(services.catalog.delete, model_id)
    return Response(status_code=204)
