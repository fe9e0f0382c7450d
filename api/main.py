"""The application factory: :func:`create_app` builds the ASGI app from :class:`~api.config.Settings`.

Importing this module builds nothing and touches no file; the app (its store, caches and worker pool) exists
once :func:`create_app` is called::

    uvicorn --factory api.main:create_app     # settings from OVREDUCE_* environment variables
    ovreduce serve [--host H] [--port P] [--workers N] [--store DIR]     # api.server.serve
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from cachetools import LRUCache
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool

from api import middleware, problems
from api.config import Settings
from api.deps import Services, WorkPool
from api.errors import StoreError
from api.routes import ROUTERS
from api.store.catalog import Catalog
from api.store.disk import ModelStore
from api.workers import IsolatedPool
from ovreduce import __version__
from ovreduce.ir.parser import ParseLimits

__all__ = ["create_app"]

logger = logging.getLogger("ovreduce.api")
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
errors included, code `request.invalid`), 404 unknown model or layer, 413 too large, 422 not a readable IR,
503 device, workers or store not available, 504 run timed out, 500 unexpected (logged, no details).
"""


def _startup(catalog: Catalog) -> None:
    store = catalog.store
    try:
        store.ensure()
        store.clean_tmp()
        store.evict()
    except StoreError as exc:  # the service still answers checks; /readyz says what is wrong
        logger.warning("model store %s: %s", store.root, exc.message)
    try:
        from ovreduce.backends.openvino import available_devices

        logger.info("OpenVINO devices: %s", ", ".join(available_devices()) or "none")
    except Exception as exc:  # /readyz reports it
        logger.warning("OpenVINO cannot be loaded: %s", exc)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI application for ``settings`` (default: read from the ``OVREDUCE_*`` environment).

    Each call makes its own store handle, caches and worker pool, so several apps can live in one process.
    Nothing touches the disk before the app starts (its lifespan creates and tidies the store).
    """
    settings = settings or Settings()
    store = ModelStore(settings.store, settings.store_max_bytes)
    catalog = Catalog(
        store,
        limits=ParseLimits(max_xml_bytes=settings.max_xml_bytes, max_layers=settings.max_layers),
        max_upload_bytes=settings.max_upload_bytes,
        cache_size=settings.model_cache_size,
    )
    pool = WorkPool(settings.concurrency, settings.run_timeout_s)
    isolated = IsolatedPool(settings.concurrency, settings.run_timeout_s, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(_startup, catalog)
        yield
        pool.shutdown()
        await run_in_threadpool(isolated.shutdown)

    # FastAPIOffline serves Swagger UI's own files from the package: /docs works on an offline machine.
    app = FastAPIOffline(
        title="ovreduce",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.services = Services(settings, catalog, pool, isolated, LRUCache(maxsize=settings.check_cache_size))

    problems.install(app)
    middleware.install(app, max_upload_bytes=settings.max_upload_bytes, max_json_bytes=settings.max_json_bytes)

    for router in ROUTERS:
        app.include_router(router)
    app.state.allow_index = [  # the methods of every route, for 405's Allow header (api.problems)
        (route.path_regex, frozenset(route.methods or ()))
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
    ]

    @app.get("/", include_in_schema=False)
    async def root() -> FileResponse:
        """The web page: static HTML/CSS/JS served by the app itself (no build step, no CDN)."""
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    app.openapi = lambda: problems.openapi(app)  # type: ignore[method-assign]
    return app
