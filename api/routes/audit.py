"""``POST /v1/models/{id}/audit``: the ``ovreduce audit`` document of a stored model (see :mod:`ovreduce.audit`:
one OpenVINO run of the whole model, each reduction judged against the NumPy reference of its captured input)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ovreduce.audit import audit_model

from ..deps import ServicesDep, SinceDep
from ..problems import EXAMPLES, responses
from ..schemas import AuditAnswer, AuditRequest, fields_of
from ..workers import WorkerContext
from .common import STORED_MODEL_PROBLEMS, ServiceRoute, document_bytes, given_tensors, parse_shapes, with_flat_inputs
from .models import ModelIdPath

__all__ = ["router"]

router = APIRouter(prefix="/v1/models/{model_id}/audit", tags=["audit"], route_class=ServiceRoute)


def _audit(context: WorkerContext, mid: str, req: AuditRequest) -> bytes:
    catalog, settings = context.catalog, context.settings
    with catalog.store.pinned(mid):
        loaded = catalog.load(mid)
        doc = audit_model(
            loaded.model, inputs=given_tensors(req.inputs), seed=req.seed, device=req.device,
            precision=req.precision, atol=req.atol, rtol=req.rtol, max_elements=settings.max_elements,
            fail_on_drift=req.fail_on_drift, shapes=parse_shapes(req.shapes), timeout=context.model_timeout_s,
            steps=req.steps, target=req.target,
        )  # fmt: skip
        return document_bytes(AuditAnswer(**fields_of(doc), id=mid), (loaded.model.xml,))


@router.post(
    "",
    response_model=AuditAnswer,
    summary="Run the whole model and judge every reduction against the reference (ovreduce.audit/v1)",
    responses=responses("post /v1/models/{model_id}/audit", *STORED_MODEL_PROBLEMS),
)
async def audit(
    services: ServicesDep,
    since: SinceDep,
    model_id: ModelIdPath,
    body: Annotated[
        AuditRequest | None, Body(openapi_examples=EXAMPLES["requests"]["post /v1/models/{model_id}/audit"])
    ] = None,
) -> Response:
    # off the event loop (see run_layer)
    req = await run_in_threadpool(with_flat_inputs, body or AuditRequest(), services.settings.max_elements)
    answer = await services.isolated.run("the audit", _audit, model_id, req, since=since)
    return Response(answer, media_type="application/json")
