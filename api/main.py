"""The application factory: :func:`create_app` builds the ASGI app from :class:`~api.config.Settings` (importing
this module builds nothing)::

    uvicorn --factory ovreduce_api.main:create_app     # settings from OVREDUCE_* environment variables
    ovreduce serve [--host H] [--port P] [--workers N] [--store DIR]     # ovreduce_api.server.serve

(``api/`` of the repository is installed as ``ovreduce_api``.)
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount, Route

from ovreduce import __version__

from . import middleware, problems
from .config import HEADER_TIMEOUT_STATE_KEY, Settings
from .deps import Services
from .errors import StoreError
from .metrics import CONTENT_TYPE, STATE_KEY, Metrics, MetricsMiddleware
from .routes import ROUTERS
from .routes.common import ServiceRoute
from .store.catalog import Catalog
from .workers import IsolatedPool, UploadMemory, apply_extensions, catalog_for, on_parent_exit, start_fork_server

__all__ = ["create_app"]

logger = logging.getLogger("ovreduce.api")
# python-multipart logs each malformed body it meets (a warning per request, any client's): the answer says why
# the body was refused, and the access log has the request.
logging.getLogger("python_multipart").setLevel(logging.ERROR)
STATIC = Path(__file__).resolve().parent / "static"

DESCRIPTION = """\
Check OpenVINO IR models and run their Reduce* layers on the NumPy reference and on OpenVINO.

* `POST /v1/check` answers the `ovreduce.check/v1` document of an uploaded IR (nothing is stored): 200 with
  the document whether or not it has findings, 422 when the upload is not a readable IR.
* `POST /v1/models` stores an IR under the SHA-256 of `len(xml)` (8 bytes, big-endian) + xml + bin;
  `/v1/models/{model_id}/layers` lists its reductions and `POST /v1/models/{model_id}/layers/{layer}/run`
  runs one, with KServe v2 (Open Inference Protocol) tensors in and out.
* `{layer}` is a layer id or name, URL-encoded or not (names hold `/` and `:`). A path that ends in `/run` is
  always a run: the layer is everything between `layers/` and that last `/run`, so a layer named `x/run`
  runs at `.../layers/x/run/run` and is shown by its id.

Errors are RFC 9457 `application/problem+json` with a stable `code`: 400 bad request (request validation
errors included, code `request.invalid`; a `Host` not in `OVREDUCE_ALLOWED_HOSTS`, code `request.host`),
403 a state-changing request from another origin (code `request.origin`), 404 unknown model or layer, 408 a
request body that stalled (code `request.timeout`), 431 header fields over 16 KiB (code `request.headers`), 410
a stored model that failed its integrity check and was removed (code `store.corrupt`), 413 too large, 422
not a readable IR, 503 device, workers or store not available (`Retry-After` where asking again may help), 504
run timed out, 500 unexpected (logged, no details). No answer names a path of the server.
"""
DOCS_STATIC = "/static-offline-docs"  # where FastAPIOffline serves Swagger UI's files
METRICS_EXAMPLE = "\n".join(problems.EXAMPLES["metrics"]) + "\n"


def _startup(catalog: Catalog, settings: Settings, isolated: IsolatedPool) -> None:
    isolated.warm()
    store = catalog.store
    try:
        store.ensure()
        if leftovers := store.clean_tmp():  # staging folders of uploads whose process died, trash
            logger.info("model store: removed %d leftovers of interrupted uploads and deletes", len(leftovers))
        store.evict()
    except StoreError as exc:  # the service still answers checks; /readyz says what is wrong
        logger.warning("model store %s: %s", store.root, exc.message)
    try:
        from ovreduce.backends.openvino import available_devices

        logger.info("OpenVINO devices: %s", ", ".join(available_devices()) or "none")
    except Exception as exc:  # /readyz reports it
        logger.warning("OpenVINO cannot be loaded: %s", exc)
    # This process reads models too (a stored model's check): the extensions first. One that cannot be loaded
    # stops the start: a service without them would refuse every model that needs them.
    apply_extensions(settings)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI application for ``settings`` (default: read from the ``OVREDUCE_*`` environment).

    Each call makes its own store handle, caches and worker pool, so several apps can live in one process.
    Nothing touches the disk before the app starts (its lifespan creates and tidies the store).
    """
    settings = settings or Settings()
    catalog = catalog_for(settings)
    store = catalog.store
    isolated = IsolatedPool(settings.concurrency, settings.run_timeout_s, settings)
    metrics = Metrics(store)
    isolated.on_event = metrics.job_event
    store.on_evict = metrics.evictions.inc

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        start_fork_server()  # in the server's main thread, before the workers
        await run_in_threadpool(_startup, catalog, settings, isolated)
        # Started by a supervisor (``--workers N``): a killed one left its workers answering on the shared port for
        # ever, and a new ``ovreduce serve`` could not listen on it. SIGTERM is uvicorn's graceful shutdown.
        on_parent_exit(lambda: os.kill(os.getpid(), signal.SIGTERM), "ovreduce-supervisor-watch")
        yield {HEADER_TIMEOUT_STATE_KEY: settings.header_timeout_s, STATE_KEY: metrics}  # read by api.protocol
        await run_in_threadpool(isolated.shutdown)

    # FastAPIOffline serves Swagger UI's own files from the package: /docs works on an offline machine.
    app = FastAPIOffline(
        title="ovreduce",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served below, with a Content-Security-Policy that admits its one inline script
        redoc_url=None,
        redirect_slashes=False,  # Starlette builds the redirect's Location from the request's Host header
    )
    app.router.route_class = ServiceRoute  # the app's own routes (the page, /docs, /metrics) too
    memory = UploadMemory(settings.upload_memory_bytes, settings.run_timeout_s)
    app.state.services = Services(settings, catalog, isolated, memory, metrics, LRUCache(settings.check_cache_size))

    for router in ROUTERS:
        app.include_router(router)

    problems.install(app)
    problems.add_server_paths(settings)

    static = StaticFiles(directory=STATIC)

    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        """The web page, answered as its other files are (304 to a request whose copy is current)."""
        return await static.get_response("index.html", request.scope)

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        """Swagger UI from the package's own files; its inline start-up script is allowed by its hash."""
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_STATIC}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
        html = bytes(page.body).decode()
        return HTMLResponse(html, headers={"Content-Security-Policy": middleware.csp_for(html)})

    @app.get(
        "/metrics",
        tags=["health"],
        summary="Prometheus metrics (text exposition format)",
        response_class=Response,
        responses={200: {"description": "The metrics (see docs/service.md)", "content": {CONTENT_TYPE: {
            "schema": {"type": "string"}, "example": METRICS_EXAMPLE}}}, **problems.responses("get /metrics")},
    )  # fmt: skip
    async def metrics_endpoint() -> Response:
        """Requests, latencies, runs, worker-process jobs and the model store, for Prometheus to scrape
        (:mod:`api.metrics`). Behind the same ``Host`` allow-list as every route."""
        return Response(await metrics.scrape(), media_type=CONTENT_TYPE)

    app.mount("/static", static, name="static")
    routes = [  # every route and mount, those of the included routers by their router
        route
        for route in [*app.routes, *(route for router in ROUTERS for route in router.routes)]
        if isinstance(route, Route | Mount)
    ]
    app.state.routes = routes  # whose methods 405's Allow lists (api.problems)
    uploads = [route.path_regex for route in routes if isinstance(route, ServiceRoute) and route.takes_form]
    middleware.install(app, settings, uploads)  # (only the routes whose body is a form take uploads)
    app.add_middleware(MetricsMiddleware, metrics=metrics, routes=routes)  # refusals by the others count too
    app.add_middleware(middleware.AbsoluteFormMiddleware)  # outermost: the others see the request as served

    app.openapi = lambda: problems.openapi(app)  # type: ignore[method-assign]
    return app
