"""What the routes depend on: one :class:`Services` (settings, model catalog, worker pool, check cache).

It lives on ``app.state`` (made by :func:`api.main.create_app`), so several apps with different settings
can coexist in one process (the tests do). It is one dependency, provided by an ``async`` function, because
FastAPI solves each dependency on every request and runs a plain ``def`` one through the thread pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, cast

from cachetools import LRUCache
from fastapi import Depends, Request

from .config import Settings
from .metrics import Metrics
from .store.catalog import Catalog
from .workers import IsolatedPool, UploadMemory

__all__ = ["Services", "ServicesDep", "SinceDep"]


@dataclass(frozen=True)
class Services:
    """Everything a route may need, made once per app by :func:`api.main.create_app`."""

    settings: Settings
    catalog: Catalog
    """The store's listings, summaries and deletions; this process never parses a model (the workers do)."""
    isolated: IsolatedPool
    """Worker processes, for everything that reads a model's bytes: a crash or a timeout costs one worker."""
    uploads: UploadMemory
    """The memory request bodies (uploads, large JSON) may take in this process until they are answered."""
    metrics: Metrics
    check_cache: LRUCache[tuple[Any, ...], bytes]
    """``/v1/check`` documents (JSON) by content hash and options; used on the event loop only (no lock)."""


async def _services(request: Request) -> Services:
    return cast(Services, request.app.state.services)


ServicesDep = Annotated[Services, Depends(_services)]


async def _since(request: Request) -> float | None:
    return getattr(request.state, "since", None)


SinceDep = Annotated[float | None, Depends(_since)]
"""The loop time the request began waiting for its body's memory (a job's time limit counts from it), or None."""
