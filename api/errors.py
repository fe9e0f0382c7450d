"""Every error the service answers, as RFC 9457 ``application/problem+json``, mapped in one place.

The library's exceptions carry a stable ``code``; :data:`STATUS_BY_ERROR` maps their classes to HTTP
statuses (the most specific class wins), and :func:`install` registers one handler on
:class:`~ovreduce.errors.OvReduceError` for the whole tree. The service adds a few leaves of its own
(a run that timed out, a busy server, an unusable store), so they go through the same table:

=================================  =====================  ======
class                              code                   status
=================================  =====================  ======
IRError (and every subclass)       ir, ir.*               422
ShapeInferenceError                shape                  422
LimitExceededError                 limit                  413
RequestTooLargeError               limit.body             413
RunTimeoutError                    limit.time             504
NotFoundError                      not_found              404
InputError, UsageError             input, usage           400
BackendError                       backend                503
DeviceNotAvailableError            backend.device         503
BusyError                          busy                   503
StoreError                         store                  503
OvReduceError (anything else)      ovreduce               400
=================================  =====================  ======

Outside the tree: FastAPI's request validation errors are 400 ``request.invalid`` (422 is kept for "not a
readable IR"), Starlette's HTTP errors keep their status with code ``http.<status>`` (404 unknown path,
405 wrong method), and anything unexpected is logged with an id and answered 500 ``internal`` without
any detail of it.

Two ASGI wrappers live here too: :class:`BodyLimitMiddleware` counts request bytes as they stream and
answers 413 as soon as a body is too large (at once when ``Content-Length`` says so), and
:class:`CatchAllMiddleware` turns any unexpected exception into the 500 problem.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ovreduce.errors import (
    BackendError,
    DeviceNotAvailableError,
    InputError,
    IRError,
    LimitExceededError,
    NotFoundError,
    OvReduceError,
    ShapeInferenceError,
    UsageError,
)

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "STATUS_BY_ERROR",
    "BodyLimitMiddleware",
    "BusyError",
    "CatchAllMiddleware",
    "RequestTooLargeError",
    "RunTimeoutError",
    "StoreError",
    "install",
    "problem_response",
    "status_for",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"
logger = logging.getLogger("ovreduce.api")


# -- the service's own leaves of the library's tree -------------------------------------------------------
class RequestTooLargeError(LimitExceededError):
    """The request body is larger than the configured limit."""

    code = "limit.body"


class RunTimeoutError(LimitExceededError):
    """A run (or check) took longer than the configured time limit."""

    code = "limit.time"


class BusyError(OvReduceError):
    """Every worker stayed busy for the whole time limit; the request never started."""

    code = "busy"


class StoreError(OvReduceError):
    """The model store cannot be read or written (permissions, disk full)."""

    code = "store"


STATUS_BY_ERROR: Mapping[type[OvReduceError], int] = {
    IRError: 422,
    ShapeInferenceError: 422,
    LimitExceededError: 413,
    RequestTooLargeError: 413,
    RunTimeoutError: 504,
    NotFoundError: 404,
    InputError: 400,
    UsageError: 400,
    BackendError: 503,
    DeviceNotAvailableError: 503,
    BusyError: 503,
    StoreError: 503,
    OvReduceError: 400,
}
_RETRY_AFTER = {BusyError: "5", StoreError: "30"}


def status_for(exc: OvReduceError) -> int:
    """The HTTP status of a library (or service) error: the entry of its most specific class."""
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 400  # pragma: no cover - OvReduceError is in the table


# -- rendering --------------------------------------------------------------------------------------------
def problem_document(
    status: int, detail: str, code: str, *, instance: str | None = None, **extra: Any
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": f"urn:ovreduce:problem:{code}",
        "title": _title(status),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if instance is not None:
        doc["instance"] = instance
    doc.update(extra)
    return doc


def problem_bytes(status: int, detail: str, code: str, *, instance: str | None = None, **extra: Any) -> bytes:
    return json.dumps(problem_document(status, detail, code, instance=instance, **extra)).encode()


def problem_response(
    status: int,
    detail: str,
    code: str,
    *,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> Response:
    body = problem_bytes(status, detail, code, instance=instance, **extra)
    return Response(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=dict(headers or {}))


def _title(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# -- handlers -------------------------------------------------------------------------------------------
async def _library_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OvReduceError)
    status = status_for(exc)
    retry = next((v for cls, v in _RETRY_AFTER.items() if isinstance(exc, cls)), None)
    headers = {"Retry-After": retry} if retry else None
    extra: dict[str, Any] = {}
    if exc.layer_id is not None:
        extra["layer_id"] = exc.layer_id
    if exc.layer_name is not None:
        extra["layer_name"] = exc.layer_name
    return problem_response(status, exc.message, exc.code, instance=request.url.path, headers=headers, **extra)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else _title(exc.status_code)
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no route for {request.method} {request.url.path}; see /docs for the API"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:  # Starlette names the methods of one route; the resource may have several
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return problem_response(
        exc.status_code, detail, f"http.{exc.status_code}", instance=request.url.path, headers=headers
    )


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (``app.state.allow_index``: (path regex, methods) pairs)."""
    path = request.scope.get("path", "")
    index: list[tuple[re.Pattern[str], frozenset[str]]] = getattr(request.app.state, "allow_index", [])
    return sorted({m for regex, methods in index if regex.match(path) for m in methods})


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": str(err.get("type", ""))}
        for err in exc.errors()[:20]
    ]
    first = errors[0] if errors else None
    where = " -> ".join(first["loc"]) if first else "the request"
    detail = f"the request is not valid: {where}: {first['msg']}" if first else "the request is not valid"
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more)"
    return problem_response(400, detail, "request.invalid", instance=request.url.path, errors=errors)


def install(app: FastAPI) -> None:
    """Register the handlers; the caller adds the two middlewares (their order matters)."""
    app.add_exception_handler(OvReduceError, _library_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)


# -- ASGI wrappers --------------------------------------------------------------------------------------
async def _send_problem(send: Send, status: int, detail: str, code: str, path: str, *, close: bool = False) -> None:
    body = problem_bytes(status, detail, code, instance=path)
    headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Answer 413 problem+json for a request body over the limit, counting bytes as they arrive.

    Multipart bodies (uploads) get ``max_upload_bytes``, every other body ``max_json_bytes``. A declared
    ``Content-Length`` over the limit is refused before any byte is read; a chunked body is cut off as soon
    as the count passes the limit, and whatever the application would have answered is replaced by the 413.
    """

    def __init__(self, app: ASGIApp, *, max_upload_bytes: int, max_json_bytes: int) -> None:
        self.app = app
        self.max_upload_bytes = max_upload_bytes
        self.max_json_bytes = max_json_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        content_type = b""
        declared: int | None = None
        for key, value in scope["headers"]:
            if key == b"content-type":
                content_type = value
            elif key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = None
        upload = content_type.lower().startswith(b"multipart/")
        limit = self.max_upload_bytes if upload else self.max_json_bytes
        what = "an upload (multipart body)" if upload else "a request body"
        setting = "OVREDUCE_MAX_UPLOAD_BYTES" if upload else "OVREDUCE_MAX_JSON_BYTES"
        path = scope.get("path", "")
        if declared is not None and declared > limit:
            detail = f"{what} of {declared} bytes is larger than the limit of {limit} bytes ({setting})"
            await _send_problem(send, 413, detail, RequestTooLargeError.code, path, close=True)
            return
        received = 0
        exceeded = False
        replaced = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise RequestTooLargeError(f"{what} is larger than the limit of {limit} bytes")
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise RequestTooLargeError(f"{what} is larger than the limit of {limit} bytes")
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal replaced
            if exceeded:
                if not replaced and message["type"] == "http.response.start":
                    replaced = True
                    detail = f"{what} is larger than the limit of {limit} bytes ({setting}); it was not read to the end"
                    await _send_problem(send, 413, detail, RequestTooLargeError.code, path, close=True)
                return  # the application's own answer is dropped
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not exceeded:
                raise
            if not replaced:
                replaced = True
                detail = f"{what} is larger than the limit of {limit} bytes ({setting}); it was not read to the end"
                await _send_problem(send, 413, detail, RequestTooLargeError.code, path, close=True)


class CatchAllMiddleware:
    """Log any exception nothing else handled and answer 500 problem+json with an id to find it in the log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            error_id = uuid.uuid4().hex[:16]
            logger.exception("internal error %s on %s %s", error_id, scope.get("method"), scope.get("path"))
            if not started:
                detail = f"an unexpected error occurred; it was logged with id {error_id}"
                await _send_problem(send, 500, detail, "internal", scope.get("path", ""), close=True)
