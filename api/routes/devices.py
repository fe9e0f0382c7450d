"""``/v1/devices``: the OpenVINO devices of this machine (``ovreduce devices --format json``)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from api.problems import responses
from api.routes.common import json_response
from api.schemas import DeviceList

__all__ = ["router"]

router = APIRouter(prefix="/v1/devices", tags=["devices"])
_TTL_S = 60.0


def _device_info() -> list[dict[str, Any]]:
    from ovreduce.backends.openvino import device_info

    return device_info()


@router.get("", response_model=DeviceList, summary="The OpenVINO devices and their capabilities",
            responses=responses(503))  # fmt: skip
async def devices(request: Request) -> Response:
    cached: tuple[float, bytes] | None = getattr(request.app.state, "devices_cache", None)
    if cached is None or time.monotonic() - cached[0] > _TTL_S:
        doc = {"schema": "ovreduce.devices/v1", "devices": await run_in_threadpool(_device_info)}
        response = json_response(doc)
        request.app.state.devices_cache = (time.monotonic(), response.body)
        return response
    return Response(cached[1], media_type="application/json")
