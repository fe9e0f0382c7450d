"""``POST /v1/check``: the ``ovreduce check`` document of one uploaded IR, stored nowhere.

An upload that is not a readable IR is answered 422 problem+json (the CLI would write a document whose
model has ``error`` set and exit 2); anything readable is answered 200 with the document, findings or not.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Query, UploadFile
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ovreduce.check import check_document, check_model
from ovreduce.ir.parser import parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.reports.check import CheckDocument
from ovreduce.shapes import PartialShape

from ..deps import ServicesDep, SinceDep
from ..problems import responses
from ..store.disk import model_id
from ..workers import WorkerContext
from .common import UPLOAD_PROBLEMS, ServiceRoute, document_bytes, named_shapes, parse_named, read_ir_upload

__all__ = ["router"]

router = APIRouter(prefix="/v1/check", tags=["check"], route_class=ServiceRoute)
Engine = Literal["native", "openvino"]
_CACHE_MAX_BYTES = 256 << 10  # documents kept (OVREDUCE_CHECK_CACHE_SIZE of them) at most this big: 64 MiB in all
_HASH_INLINE = 1 << 20  # larger uploads are hashed off the event loop


def _check_job(
    context: WorkerContext,
    xml: bytes,
    bin_data: bytes | None,
    *,
    filename: str,
    bin_filename: str,
    engine: Engine,
    reshape: dict[str, PartialShape],
) -> bytes:
    """The check document as JSON: all the answer needs, so nothing but bytes crosses back."""
    weights = Weights(bin_data, name=bin_filename) if bin_data is not None else None  # an empty one was sent too
    model = parse_ir(xml, weights, source=filename, expected_bin=f"a 'bin' file field, e.g. {bin_filename}",
                     limits=context.settings.parse_limits())  # fmt: skip
    doc = check_document([check_model(model, reshape=reshape, engine=engine, path=filename)])
    return document_bytes(doc, (xml,))


@router.post(
    "",
    response_model=CheckDocument,
    summary="Check one IR (xml, and bin when it has one): the ovreduce.check/v1 document",
    responses=responses("post /v1/check", *UPLOAD_PROBLEMS),
)
async def check(
    services: ServicesDep,
    since: SinceDep,
    xml: Annotated[UploadFile, File(description="the IR .xml")],
    bin_file: Annotated[UploadFile | None, File(alias="bin", description="its .bin, when it has one")] = None,
    engine: Annotated[Engine, Query(description="openvino: also cross-check every layer with OpenVINO")] = "native",
    reshape: Annotated[
        list[str] | None,
        Query(max_length=64, description="what-if Parameter shapes, NAME=SHAPE (OpenVINO syntax)"),
        named_shapes("reshape"),
    ] = None,
) -> Response:
    settings, cache = services.settings, services.check_cache
    xml_bytes, bin_bytes, filename, bin_filename = await read_ir_upload(settings, xml, bin_file)
    shapes = parse_named(reshape, "reshape")
    small = len(xml_bytes) + len(bin_bytes or b"") < _HASH_INLINE
    digest = model_id(xml_bytes, bin_bytes) if small else await run_in_threadpool(model_id, xml_bytes, bin_bytes)
    key: tuple[Any, ...] = (digest, filename, bin_filename, engine, tuple(reshape or ()))
    body = cache.get(key)
    if body is None:
        body = await services.isolated.run(
            "the check", _check_job, xml_bytes, bin_bytes, filename=filename, bin_filename=bin_filename,
            engine=engine, reshape=shapes, since=since,
        )  # fmt: skip
        if cache.maxsize > 0 and len(body) <= _CACHE_MAX_BYTES:  # OVREDUCE_CHECK_CACHE_SIZE=0: no cache
            cache[key] = body
    return Response(body, media_type="application/json")
