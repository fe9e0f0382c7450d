"""Prometheus metrics of one app, exposed at ``GET /metrics`` in the text exposition format; each metric and label
is described in docs/service.md#metrics.

Each app has its own :class:`~prometheus_client.CollectorRegistry` (made by :func:`api.main.create_app`), so several
apps in one process (the tests) keep separate counts. No request can add a label value: routes are templates,
methods outside HTTP's are ``other``, devices are as OpenVINO lists them or ``unavailable``. With several uvicorn
workers, ``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's multiprocess mode) makes ``/metrics`` answer their sum.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import time
from collections.abc import Awaitable, Iterable, Sequence
from http import HTTPMethod
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from starlette.concurrency import run_in_threadpool
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import StoreError
from .store.disk import ModelStore

__all__ = ["CONTENT_TYPE", "STATE_KEY", "Metrics", "MetricsMiddleware"]

R = TypeVar("R", bound=tuple[Any, ...])

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The media type of the text exposition format (what Prometheus asks for by default)."""
UNMATCHED = "<unmatched>"
STATE_KEY = "ovreduce.metrics"
"""The app's lifespan state entry that gives :class:`api.protocol.HeaderTimeoutProtocol` the app's :class:`Metrics`."""
_MULTIPROC_ENV = ("PROMETHEUS_MULTIPROC_DIR", "prometheus_multiproc_dir")  # (prometheus_client reads both)


def multiprocess_problem() -> str | None:
    """What is wrong with ``PROMETHEUS_MULTIPROC_DIR``, where it is set: every process writes its counts in that
    folder as it makes its first metric, and one that cannot fails to start (uvicorn's workers, over and over)."""
    for name in _MULTIPROC_ENV:
        folder = os.environ.get(name)
        if folder is not None and not (folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)):
            return (f"{name}={folder[:200]!r}: expected an existing folder the server can write, where every process "
                    f"writes its counts (prometheus_client's multiprocess mode)")  # fmt: skip
    return None


class Metrics:
    """The metrics of one app (see the module docstring), in their own registry; it collects the store's gauges."""

    def __init__(self, store: ModelStore) -> None:
        self.store = store
        self.registry = r = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "ovreduce_http_requests", "Answered HTTP requests", ["method", "route", "status"], registry=r
        )
        self.latency = Histogram(
            "ovreduce_http_request_duration_seconds",
            "Time to answer an HTTP request",
            ["method", "route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
            registry=r,
        )
        self.runs = Counter(
            "ovreduce_runs", "Completed layer runs, one per requested backend", ["backend", "device", "outcome"],
            registry=r,
        )  # fmt: skip
        self.queued = Gauge(
            "ovreduce_jobs_queued", "Jobs waiting for a worker process", registry=r, multiprocess_mode="livesum"
        )
        self.rejected = Counter(
            "ovreduce_jobs_rejected", "Worker-process jobs that ended without an answer", ["reason"], registry=r
        )
        self.killed = Counter("ovreduce_workers_killed", "Worker processes killed for outliving the limit", registry=r)
        self.evictions = Counter("ovreduce_store_evictions", "Models evicted from the model store", registry=r)
        r.register(self)
        self._scrape: asyncio.Future[bytes] | None = None
        self._begun = 0.0  # when it began (the loop's time)

    def collect(self) -> Iterable[Metric]:
        """The store's size and model count, read from the disk at each scrape."""
        yield GaugeMetricFamily(
            "ovreduce_store_max_bytes", "The model store's limit (OVREDUCE_STORE_MAX_BYTES)", self.store.max_bytes
        )
        try:
            usage, count = self.store.usage(), len(self.store.ids())
        except (StoreError, OSError):  # not created yet, or not readable: /readyz says why
            return
        yield GaugeMetricFamily(
            "ovreduce_store_bytes", "Bytes in the model store, uploads being staged included", usage
        )
        yield GaugeMetricFamily("ovreduce_store_models", "Models in the model store", count)

    # -- hooks -----------------------------------------------------------------------------------------
    async def counted_run(self, job: Awaitable[R], backends: Sequence[str], device: str) -> R:
        """Await a layer run (a job whose answer ends with its outcome) and count it by its outcome, or by its
        error's code (timeout, busy, worker, backend.device...)."""
        try:
            answer = await job
        except Exception as exc:  # a run cancelled with its request (a client gone) is not counted
            self._count_run(backends, device, str(getattr(exc, "code", "internal")))
            raise
        self._count_run(backends, device, str(answer[-1]))
        return answer

    def _count_run(self, backends: Sequence[str], device: str, outcome: str) -> None:
        for backend in backends:
            self.runs.labels(backend=backend, device=_device_label(device), outcome=outcome).inc()

    def refused(self, method: str, status: int) -> None:
        """Count an answer written below the app (:mod:`api.protocol`: bytes that are no request, a head too slow or
        too large), under the method of its request line where there is one."""
        self.requests.labels(method=_method(method), route=UNMATCHED, status=str(status)).inc()

    def job_event(self, event: str) -> None:
        """What :class:`api.workers.IsolatedPool` reports (:attr:`~api.workers.IsolatedPool.on_event`)."""
        if event in ("queued", "dequeued"):
            self.queued.inc(1 if event == "queued" else -1)
        else:
            self.rejected.labels(reason=event).inc()
            if event == "timeout":
                self.killed.inc()

    # -- exposition ------------------------------------------------------------------------------------
    async def scrape(self) -> bytes:
        """:meth:`exposition` off the event loop, one at a time: a scrape that comes while one is made waits for it to
        end, then gets the answer of one begun after it came (the next, which it begins or shares). Each reads the
        whole store, and nothing else bounds how many run at once (``/metrics`` is never busy): many at once took
        every thread of the pool that the readiness checks wait for."""
        loop = asyncio.get_running_loop()
        came = loop.time()
        while self._scrape is not None and not self._scrape.done():
            if self._begun >= came:  # begun after this scrape came: current for it
                return await asyncio.shield(self._scrape)
            await asyncio.wait([self._scrape])  # (its failure is its own scrapes')
        self._begun = loop.time()
        self._scrape = asyncio.ensure_future(run_in_threadpool(self.exposition))
        return await asyncio.shield(self._scrape)

    def exposition(self) -> bytes:
        """The text exposition of every metric, summed over processes where ``PROMETHEUS_MULTIPROC_DIR`` names a
        folder (``ovreduce serve`` refuses one set empty)."""
        folder = next((value for name in _MULTIPROC_ENV if (value := os.environ.get(name))), None)
        if folder is None:
            return generate_latest(self.registry)
        _forget_the_dead(folder)
        combined = CollectorRegistry()
        MultiProcessCollector(combined)  # type: ignore[no-untyped-call]
        combined.register(self)
        return generate_latest(combined)


_LIVE_GAUGE = re.compile(r"gauge_live(?:sum|all|max|min|mostrecent)_(\d+)\.db")


def _forget_the_dead(folder: str) -> None:
    """Remove the live gauges of processes that are gone (prometheus_client's ``mark_process_dead``), which would be
    counted for ever: a uvicorn worker killed (the OOM killer) with jobs queued left them in the jobs queued."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for pid in {int(found[1]) for name in names if (found := _LIVE_GAUGE.fullmatch(name))}:
        try:
            os.kill(pid, 0)
            continue
        except ProcessLookupError:
            pass
        except OSError:  # (another user's: alive)
            continue
        with contextlib.suppress(OSError):  # (another worker's scrape removed them first)
            mark_process_dead(pid, folder)  # type: ignore[no-untyped-call]


class MetricsMiddleware:
    """Count every HTTP request by its route template and status, and time it.

    Outermost, so refusals of the other wrappers count too. The route template is read from the scope after
    the request was handled, where FastAPI's router leaves the matched route; a request that reached no such route
    (refused before routing, or served by a plain route or mount: ``/openapi.json``, ``/static``) is matched here.
    """

    def __init__(self, app: ASGIApp, *, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        asked = {**scope}  # as it came: a mount rewrites the scope's paths
        status = 500  # an exception that escaped every handler ends the connection without an answer

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            routed = not asked["path"].endswith("\n")  # (a route's "$" matches before one: none is the route's)
            matched = scope.get("route") or next(
                (r for r in self.routes if routed and r.matches(asked)[0] is not Match.NONE), None
            )
            route = getattr(matched, "path_format", None)  # the template without converters: {layer}, not {layer:path}
            route = route if isinstance(route, str) else UNMATCHED
            method = _method(str(scope.get("method", "GET")))
            self.metrics.requests.labels(method=method, route=route, status=str(status)).inc()
            self.metrics.latency.labels(method=method, route=route).observe(time.perf_counter() - start)


def _method(method: str) -> str:
    return method if method in HTTPMethod.__members__ else "other"


@functools.cache
def _listed_devices() -> frozenset[str]:
    from ovreduce.backends.openvino import available_devices

    with contextlib.suppress(Exception):  # (OpenVINO cannot be loaded, /readyz says why: no device is listed)
        return frozenset(available_devices())
    return frozenset()


def _device_label(device: str) -> str:
    """A device as OpenVINO lists it, a virtual one by its kind, anything else ``unavailable``."""
    from ovreduce.backends.openvino import VIRTUAL_DEVICES

    if device in _listed_devices():
        return device
    kind = device.split(":", 1)[0].upper()
    return kind if kind in VIRTUAL_DEVICES else "unavailable"
