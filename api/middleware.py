"""The ASGI wrappers around the application; :func:`install` adds them in the order that matters.

:class:`BodyLimitMiddleware` counts request bytes as they stream and answers 413 as soon as a body is too
large (at once when ``Content-Length`` says so); :class:`CatchAllMiddleware`, the outermost, logs any
exception nothing else handled and answers the 500 problem without any detail of it.
"""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import RequestTooLargeError
from api.problems import PROBLEM_MEDIA_TYPE, problem_bytes

__all__ = ["BodyLimitMiddleware", "CatchAllMiddleware", "install"]

logger = logging.getLogger("ovreduce.api")


def install(app: FastAPI, *, max_upload_bytes: int, max_json_bytes: int) -> None:
    """Add both wrappers: the body limit inside, the catch-all outermost (added last)."""
    app.add_middleware(BodyLimitMiddleware, max_upload_bytes=max_upload_bytes, max_json_bytes=max_json_bytes)
    app.add_middleware(CatchAllMiddleware)


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
