"""One router per resource; :data:`ROUTERS` is the one list of them (the app includes them and indexes their
methods from it)."""

from __future__ import annotations

from fastapi import APIRouter

from . import audit, check, conform, devices, health, layers, models, v2

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = tuple(
    module.router for module in (health, devices, check, models, layers, audit, conform, v2)
)
