"""``POST /v1/conform``: the ``ovreduce conform`` document of an uploaded ONNX model, stored nowhere.

Needs the ``onnx`` extra (``pip install 'ovreduce[onnx]'``); without it the service answers 503.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Query, UploadFile
from starlette.responses import Response

from ovreduce.conform import conform_model
from ovreduce.reports.conform import ConformDocument
from ovreduce.shapes import PartialShape

from ..deps import ServicesDep, SinceDep
from ..problems import responses
from ..schemas import Precision
from ..workers import WorkerContext
from .common import UPLOAD_PROBLEMS, ServiceRoute, display_name, document_bytes, named_shapes, parse_named, read_upload

__all__ = ["router"]

router = APIRouter(prefix="/v1/conform", tags=["conform"], route_class=ServiceRoute)


def _conform(context: WorkerContext, data: bytes, filename: str, seed: int, device: str, precision: str,
             shapes: dict[str, PartialShape]) -> bytes:  # fmt: skip
    settings = context.settings
    doc = conform_model(data, name=filename, seed=seed, device=device, precision=precision, shapes=shapes,
                        max_elements=settings.max_elements, timeout=context.model_timeout_s)  # fmt: skip
    return document_bytes(doc, (data,))


@router.post(
    "",
    response_model=ConformDocument,
    summary="Check OpenVINO's conversion of an ONNX model's mean and reduce nodes (ovreduce.conform/v1)",
    responses=responses("post /v1/conform", *UPLOAD_PROBLEMS),
)
async def conform(
    services: ServicesDep,
    since: SinceDep,
    onnx: Annotated[UploadFile, File(description="the ONNX model (.onnx, external data not supported)")],
    seed: Annotated[int, Query(ge=0, lt=2**63, description="seed for generated inputs")] = 0,
    device: Annotated[str, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:,()\-]+$")] = "CPU",
    precision: Annotated[Precision, Query(description="OpenVINO inference precision")] = "f32",
    shape: Annotated[
        str,
        Query(
            description="NAME=SHAPE or NAME[SHAPE] (x=1,3,224,224; several: x[1,3],y[2]), as "
            "conform --shape takes it: that input is generated so, the model reshaped"
        ),
        named_shapes("shape"),
    ] = "",
) -> Response:
    shapes = parse_named(shape, "shape")
    data = await read_upload(onnx, services.settings.max_upload_bytes, "the onnx file", "OVREDUCE_MAX_UPLOAD_BYTES")
    filename = display_name(onnx.filename, "model.onnx")
    body = await services.isolated.run("the conformance check", _conform, data, filename, seed, device, precision,
                                       shapes, since=since)  # fmt: skip
    return Response(body, media_type="application/json")
