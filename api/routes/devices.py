"""``/v1/devices``: the OpenVINO devices of this machine (``ovreduce devices --format json``)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ovreduce.reports.devices import DevicesDocument

from ..problems import responses
from .common import ServiceRoute

__all__ = ["router"]

router = APIRouter(prefix="/v1/devices", tags=["devices"], route_class=ServiceRoute)
_TTL_S = 60.0


@router.get("", response_model=DevicesDocument, summary="The OpenVINO devices and their capabilities",
            responses=responses("get /v1/devices", 503))  # fmt: skip
async def devices(request: Request) -> DevicesDocument:
    """The devices, asked of OpenVINO at most once a minute per app."""
    from ovreduce.backends.openvino import device_info

    cached: tuple[float, DevicesDocument] | None = getattr(request.app.state, "devices_cache", None)
    if cached is None or time.monotonic() - cached[0] > _TTL_S:
        cached = (time.monotonic(), await run_in_threadpool(device_info))
        request.app.state.devices_cache = cached
    return cached[1]
