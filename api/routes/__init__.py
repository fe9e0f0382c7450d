"""One router per resource; :data:`ROUTERS` is the one list of them (the app includes them and indexes their
methods from it)."""

from __future__ import annotations

from fastapi import APIRouter

from . import audit, check, conform, devices, health, layers, models, v2

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    devices.router,
    check.router,
    models.router,
    layers.router,
    audit.router,
    conform.router,
    v2.router,
)
