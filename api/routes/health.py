"""``/healthz`` (the process answers) and ``/readyz`` (OpenVINO loaded, store writable)."""

from __future__ import annotations

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


def _openvino() -> tuple[bool, str | None]:
    try:
        from ovreduce.backends.openvino import available_devices

        devices = available_devices()
    except Exception as exc:  # any failure to load the runtime means "not ready"
        return False, f"the OpenVINO runtime cannot be used: {type(exc).__name__}"
    return True, f"devices: {', '.join(devices) or 'none'}"


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Readiness: OpenVINO is loaded and the model store is writable",
    responses=responses("get /readyz", 503),
)
async def readyz(request: Request, services: ServicesDep) -> Response:
    ov_ok, ov_detail = await run_in_threadpool(_openvino)
    store_detail = await run_in_threadpool(services.catalog.store.unwritable)
    store_ok = store_detail is None
    if not (ov_ok and store_ok):
        detail = "; ".join(d for d, ok in ((ov_detail, ov_ok), (store_detail, store_ok)) if not ok and d)
        return error_response(request, 503, f"not ready: {detail}", "not_ready",
                              openvino={"ok": ov_ok, "detail": ov_detail},
                              store={"ok": store_ok, "detail": store_detail})  # fmt: skip
    return json_response(
        {"status": "ready", "openvino": {"ok": True, "detail": ov_detail}, "store": {"ok": True, "detail": None}}
    )
