"""What the routes depend on: one :class:`Services` (settings, model catalog, worker pool, check cache).

It lives on ``app.state`` (made by :func:`api.main.create_app`), so several apps with different settings
can coexist in one process (the tests do). It is one dependency, provided by an ``async`` function, because
FastAPI solves each dependency on every request and runs a plain ``def`` one through the thread pool.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from cachetools import LRUCache
from fastapi import Depends, Request

from api.config import Settings
from api.errors import BusyError, RunTimeoutError
from api.store.catalog import Catalog
from api.workers import IsolatedPool
from ovreduce.backends.openvino import LayerCache
from ovreduce.reports.check import CheckDocument

__all__ = ["Services", "ServicesDep", "WorkPool"]

T = TypeVar("T")


class WorkPool:
    """Runs blocking work (parsing, checks, runs) off the event loop, ``size`` jobs at a time.

    Each job gets ``timeout_s`` in all, waiting for a free worker included. A job that never started is
    withdrawn (:class:`BusyError`, 503); one that started and is still running is abandoned
    (:class:`RunTimeoutError`, 504): its thread finishes in the background, still counted in ``size``,
    so the machine is never asked for more than ``size`` jobs at once.
    """

    def __init__(self, size: int, timeout_s: float) -> None:
        self.size = size
        self.timeout_s = timeout_s
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:  # made on first use, and again after a shutdown (an app can be started twice)
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="ovreduce-work")
            return self._executor

    async def run(self, what: str, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        started = threading.Event()

        def job() -> T:
            started.set()
            return func(*args, **kwargs)

        future = self._pool().submit(job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout_s)
        except TimeoutError:
            if not started.is_set() and future.cancel():
                raise BusyError(
                    f"the server is busy: {what} waited {self.timeout_s:g} s for one of its {self.size} workers "
                    f"and was not started; retry later"
                ) from None
            raise RunTimeoutError(
                f"{what} took longer than the limit of {self.timeout_s:g} s (OVREDUCE_RUN_TIMEOUT_S) and was abandoned"
            ) from None

    def shutdown(self) -> None:
        """Withdraw queued jobs; running ones finish in the background."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class Services:
    """Everything a route may need, made once per app by :func:`api.main.create_app`."""

    settings: Settings
    catalog: Catalog
    pool: WorkPool
    """Threads, for short work bounded by the parse limits (uploads, listings)."""
    isolated: IsolatedPool
    """Worker processes, for checks, runs, audits and conformance checks: a timeout kills the job."""
    check_cache: LRUCache[tuple[Any, ...], CheckDocument]
    """``/v1/check`` documents by content hash and options; hold :attr:`check_cache_lock` to use it."""
    check_cache_lock: threading.Lock = field(default_factory=threading.Lock)
    layer_cache: LayerCache = field(default_factory=LayerCache)
    """Compiled single-layer models, shared by every run of this app."""


async def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(_services)]
