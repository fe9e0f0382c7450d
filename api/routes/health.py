"""``/healthz`` (the process answers) and ``/readyz`` (OpenVINO loaded, store writable)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ..deps import ServicesDep
from ..problems import error_response, responses
from ..schemas import Health, Readiness
from .common import ServiceRoute, json_response

__all__ = ["router"]

router = APIRouter(tags=["health"], route_class=ServiceRoute)
_LIVE = b'{"status":"ok"}'


@router.get(
    "/healthz", response_model=Health, summary="Liveness: the process answers", responses=responses("get /healthz")
)
async def healthz() -> Response:
    return Response(_LIVE, media_type="application/json")


def _openvino() -> dict[str, Any]:
    try:
        from ovreduce.backends.openvino import available_devices

        devices = available_devices()
    except Exception as exc:  # any failure to load the runtime means "not ready"
        return {"ok": False, "detail": f"the OpenVINO runtime cannot be used: {type(exc).__name__}"}
    return {"ok": True, "detail": f"devices: {', '.join(devices) or 'none'}"}


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Readiness: OpenVINO is loaded and the model store is writable",
    responses=responses("get /readyz", 503),
)
async def readyz(request: Request, services: ServicesDep) -> Response:
    openvino = await run_in_threadpool(_openvino)
    store = await run_in_threadpool(services.catalog.store.unwritable)
    checks = {"openvino": openvino, "store": {"ok": store is None, "detail": store}}
    if not all(check["ok"] for check in checks.values()):
        detail = "; ".join(check["detail"] for check in checks.values() if not check["ok"] and check["detail"])
        return error_response(request, 503, f"not ready: {detail}", "not_ready", **checks)
    return json_response({"status": "ready", **checks})
