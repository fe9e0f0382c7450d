"""The ASGI wrappers around the application, added by :func:`install` in the order that matters (docs/architecture.md).

An early answer is sent whole, then the rest of the body is read and dropped (within :data:`DRAIN_MAX_BYTES` and
:data:`DRAIN_MAX_S`), then the connection closed: a client that sends its whole body before it reads gets the answer,
not a connection reset. A client that sent ``Expect: 100-continue`` is answered at once, never asked for its body.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import re
import time
import uuid
from collections.abc import Iterable, Sequence
from re import Pattern
from urllib.parse import unquote, urlsplit

import anyio
from fastapi import FastAPI, Request
from python_multipart.multipart import parse_options_header
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ovreduce.errors import InputError

from .config import Settings, split_host
from .errors import RequestTooLargeError
from .problems import answer_bytes, error_response, escaped, no_route

__all__ = [
    "CSP",
    "DRAIN_MAX_BYTES",
    "DRAIN_MAX_S",
    "AbsoluteFormMiddleware",
    "BodyLimitMiddleware",
    "HeadMiddleware",
    "InFlightLimitMiddleware",
    "SecurityMiddleware",
    "csp_for",
    "install",
    "problem_head",
    "secured",
]

logger = logging.getLogger("ovreduce.api")

DRAIN_MAX_BYTES = 128 << 20
"""After an early answer, at most this many more body bytes (or as many as the limit, when larger) are read."""
DRAIN_MAX_S = 15.0
"""After an early answer, the rest of the body is read for at most this long."""
DECLARED_BODY = "ovreduce.declared_body"  # in a request's state: its body's bytes read and declared (api.protocol)
MIN_BODY_RATE = 8 << 10
"""Bytes per second a request body must average once ``OVREDUCE_BODY_TIMEOUT_S`` has passed since its first read: a
client that sends a byte now and then (each within the timeout) holds a request slot no longer than that."""

CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The Content-Security-Policy of every answer: the page's own files only, no framing."""
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
_INLINE_SCRIPT_RE = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def secured(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """An answer's ``headers`` with :data:`CSP` (unless they have their own) and :data:`SECURITY_HEADERS`, without
    ``Accept-Ranges`` (files are served whole: ``Range`` is dropped)."""
    kept = [h for h in headers if bytes(h[0]).lower() != b"accept-ranges"]
    present = {bytes(key).lower() for key, _ in kept}
    csp = [] if b"content-security-policy" in present else [(b"content-security-policy", CSP.encode())]
    return kept + csp + [h for h in SECURITY_HEADERS if h[0] not in present]


def csp_for(html: str) -> str:
    """:data:`CSP` for a page of the service's own that has inline scripts: each allowed by its SHA-256."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT_RE.findall(html)
    )
    return CSP + (f"; script-src 'self' {hashes}" if hashes else "")


MAX_HEADER_BYTES = 16 << 10
"""The request's target and header fields (names and values), at most: what h11 allows a head that arrives in pieces
(one that arrives whole it reads at any size; :mod:`api.protocol` answers the other)."""
HEALTH_PATHS = frozenset({"/healthz", "/readyz", "/v2/health/live", "/v2/health/ready"})
"""Answered whatever the Host (probes of orchestrators name the pod's address) and however busy."""
NEVER_BUSY = HEALTH_PATHS | {"/metrics"}
"""Answered however many requests are under way: a probe or a scrape is wanted most when the service is loaded."""
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def install(app: FastAPI, settings: Settings, upload_paths: Sequence[Pattern[str]]) -> None:
    """Add the wrappers, HEAD innermost, security outermost, and the 500 answer of anything not handled
    (multipart bodies POSTed to ``upload_paths`` are uploads)."""
    app.add_middleware(HeadMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_upload_bytes=settings.max_upload_bytes,
                       max_json_bytes=settings.max_json_bytes, body_timeout_s=settings.body_timeout_s,
                       upload_paths=upload_paths)  # fmt: skip
    app.add_middleware(InFlightLimitMiddleware, max_requests=settings.max_requests)
    app.add_exception_handler(Exception, _internal_error)  # outermost (ServerErrorMiddleware): with the headers
    app.add_middleware(SecurityMiddleware, allowed_hosts=settings.host_patterns(), page_names=settings.page_names())


# -- answering early -------------------------------------------------------------------------------------
def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((bytes(value) for key, value in scope["headers"] if key == name), None)  # the first


def _body_to_drain(scope: Scope, receive: Receive) -> Receive | None:
    """``receive`` if there is a body to drain; None also for ``Expect: 100-continue`` (reading sends the go-ahead)."""
    length = _header(scope, b"content-length")
    has_body = _header(scope, b"transfer-encoding") is not None if length is None else length.strip() not in (b"", b"0")
    return None if _continue_expected(scope) or not has_body else receive


def _continue_expected(scope: Scope) -> bool:
    """Whether the client waits for a go-ahead before it sends its body (``Expect: 100-continue``, the one
    expectation there is; another value asks for nothing)."""
    return (_header(scope, b"expect") or b"").strip().lower() == b"100-continue"


def problem_head(
    status: int, detail: str, code: str, path: str | None, headers: Iterable[tuple[bytes, bytes]] = ()
) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The head (closing the connection) and body of an error answer of the service's edge."""
    body, media = answer_bytes(status, detail, code, path)
    length = str(len(body)).encode()
    return [(b"content-type", media.encode()), (b"content-length", length), *headers, (b"connection", b"close")], body


async def send_problem(
    send: Send,
    status: int,
    detail: str,
    code: str,
    path: str,
    *,
    headers: Iterable[tuple[bytes, bytes]] = (),
    drain: Receive | None = None,
    drain_limit: int = DRAIN_MAX_BYTES,
) -> None:
    """Send a whole problem answer that closes the connection; with ``drain``, then read and drop the rest of the
    body. The answer is on the wire before the body is read (a client may wait for it before it sends); the final
    empty body message, which lets the server close, follows the body's end, ``drain_limit`` bytes or
    :data:`DRAIN_MAX_S`, or the client's leaving."""
    head, body = problem_head(status, detail, code, path, headers)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": drain is not None})
    if drain is None:
        return
    read = 0
    with anyio.move_on_after(DRAIN_MAX_S):
        while read <= drain_limit:
            message = await drain()
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
            read += len(message.get("body", b""))
    await send({"type": "http.response.body", "body": b""})


# -- Host, Origin and the security headers ---------------------------------------------------------------
def _excerpt(value: bytes, size: int = 64) -> str:
    """A header's value quoted, markup, quotes and non-printable bytes written ``\\xNN``, cut at ``size`` bytes."""
    shown = "".join(chr(b) if 32 <= b < 127 and chr(b) not in "<>&'\"\\`" else f"\\x{b:02x}" for b in value[:size])
    return f"'{shown}'" + ("..." if len(value) > size else "")


def host_allowed(value: bytes | None, patterns: Sequence[str]) -> bool:
    """Whether a ``Host`` header matches one of ``patterns`` (``name``, ``name:port``, ``*.suffix``, ``*``)."""
    if "*" in patterns:
        return True
    parts = None if value is None else split_host(value.decode("latin-1"))
    if parts is None:
        return False
    host, port = parts
    for pattern in patterns:
        wanted = split_host(pattern.removeprefix("*."))
        if wanted is None or wanted[1] not in (None, port):
            continue
        if host.endswith("." + wanted[0]) if pattern.startswith("*.") else host == wanted[0]:
            return True
    return False


def _origin(origin: bytes) -> tuple[str, str, int | None] | None:
    """A browser's ``Origin``, ``scheme://host[:port]`` and nothing more, as its scheme, host and port."""
    try:
        parts = urlsplit(origin.decode("latin-1").strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or parts.path or parts.query:
        return None
    return parts.scheme, f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname, port


def _same_origin(origin: bytes, host: bytes | None, scheme: str, names: Sequence[str]) -> bool:
    """Whether ``origin`` is the service's own: the request's ``Host`` and port, or one of ``names`` (where a proxy
    rewrote ``Host``: ``Settings.page_names``) on the port the name gives, else on its scheme's default port."""
    parts = _origin(origin)
    if parts is None:
        return False
    origin_scheme, origin_host, origin_port = parts
    default = 443 if origin_scheme == "https" else 80
    port = origin_port or default
    request = None if host is None else split_host(host.decode("latin-1"))
    if request is not None:
        # Behind a TLS proxy the request is http, the page https: a port left out is 443 where either side is https
        request_default = 443 if (scheme == "https" or origin_scheme == "https") else 80
        if origin_host == request[0] and port == int(request[1] or request_default):
            return True
    named = [n for n in names if port == default or (split_host(n) or ("", None))[1]]
    return host_allowed(f"{origin_host}:{port}".encode(), named)


class SecurityMiddleware:
    """Answer only allowed ``Host`` values, refuse cross-origin state changes, add the security headers.

    * ``Host`` not in ``allowed_hosts`` (:func:`host_allowed`): 400 ``request.host``, but for the health checks.
    * POST, PUT, PATCH or DELETE with an ``Origin`` not the service's own (``null`` included; its own: the ``Host``
      and port, or one of ``page_names`` where a proxy rewrote ``Host``), or without one marked
      ``Sec-Fetch-Site: cross-site``/``same-site``: 403 ``request.origin`` (non-browsers send neither: served).
    * A target and header fields over :data:`MAX_HEADER_BYTES`: 431 ``request.headers``; not a path: 400.
    * A path that ends in a line break, which Starlette's routes (``^...$``) would take for the path without it: 404.
    * A request the stopping server cancels before it was answered: 503 ``shutdown``.
    * ``Range`` is ignored (RFC 9110 allows it): files are served whole, no answer says ``Accept-Ranges``.
    """

    def __init__(self, app: ASGIApp, *, allowed_hosts: Sequence[str], page_names: Sequence[str]) -> None:
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)
        self.page_names = tuple(page_names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = False

        async def secured_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": secured(message.get("headers", []))}
            await send(message)

        path = scope.get("path", "")
        host = _header(scope, b"host")
        target = len(scope.get("raw_path", b"")) + len(scope.get("query_string", b""))
        size = target + sum(len(key) + len(value) for key, value in scope["headers"])
        refusal: tuple[int, str, str, str] | None = None  # status, code, detail and path of an early answer
        raw = bytes(scope.get("raw_path", b""))[len(scope.get("root_path", "").encode()) :]
        if size > MAX_HEADER_BYTES:
            detail = (f"the request's target and header fields are {size} bytes, more than the limit of "
                      f"{MAX_HEADER_BYTES}")  # fmt: skip
            refusal = (431, "request.headers", detail, path)
        elif not raw.startswith(b"/"):  # an absolute URI is a path here (AbsoluteFormMiddleware)
            query = scope.get("query_string", b"")
            shown = _excerpt(raw + (b"?" + query if query else b""))
            detail = (f"the request target {shown} is neither a path (/...) nor an absolute URI (http://...), the "
                      f"forms ovreduce serves (no asterisk form, no CONNECT)")  # fmt: skip
            refusal = (400, "request.invalid", detail, "")
        elif path not in HEALTH_PATHS and not host_allowed(host, self.allowed_hosts):
            shown = f"the Host {_excerpt(host)}" if host is not None else "a request without a Host header"
            detail = (
                f"{shown} is not a name this service answers to; to allow it, add it to OVREDUCE_ALLOWED_HOSTS "
                f"(a comma-separated list)"
            )
            refusal = (400, "request.host", detail, path)
        elif scope.get("method", "GET") in _UNSAFE_METHODS:
            origins = [value for key, value in scope["headers"] if key == b"origin"]
            origin = b"\n".join(origins) if origins else None  # two are not the service's own either
            fetch_site = b",".join(v.strip().lower() for k, v in scope["headers"] if k == b"sec-fetch-site")
            refused = None
            if origin is not None and not _same_origin(origin, host, str(scope.get("scheme", "http")), self.page_names):
                refused = f"a {scope['method']} from the origin {_excerpt(origin)}"
            elif origin is None and (b"cross-site" in fetch_site or b"same-site" in fetch_site):
                refused = f"a {scope['method']} that the browser marks {_excerpt(fetch_site)}"  # (any bytes)
            if refused is not None:
                detail = f"{refused} is refused: only the service's own pages may change its state"
                refusal = (403, "request.origin", detail, path)
        if refusal is None and path.endswith("\n"):  # a route's "$" matches before a final line break: none ends so
            refusal = (404, "http.404", no_route(scope.get("method", "GET"), path), path)
        if refusal is not None:
            status, code, detail, shown_path = refusal
            await send_problem(secured_send, status, detail, code, shown_path, drain=_body_to_drain(scope, receive))
            return
        if _header(scope, b"range") is not None:  # whole files only: a malformed range was a plain-text 400
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"range"]}
        try:
            await self.app(scope, receive, secured_send)
        except asyncio.CancelledError:
            # The server stops (SIGTERM) and its graceful timeout ran out: uvicorn cancels the request, and would
            # answer a plain-text 500 for one not yet answered. The request is not at fault: 503, ask again.
            if started:
                raise
            detail = "the server is shutting down and stopped this request before it was answered; retry"
            await send_problem(secured_send, 503, detail, "shutdown", path, headers=[(b"retry-after", b"5")])
            logger.info(
                "answered 503 to %s %s: the server shut down before it finished", scope["method"], escaped(path)
            )


# -- in-flight requests ----------------------------------------------------------------------------------
class InFlightLimitMiddleware:
    """Answer 503 ``busy`` while ``max_requests`` requests are being handled, but for :data:`NEVER_BUSY`. Only requests
    whose headers arrived count (uvicorn's ``--limit-concurrency`` counts connections, slow or idle ones too)."""

    def __init__(self, app: ASGIApp, *, max_requests: int) -> None:
        self.app = app
        self.max_requests = max_requests
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "") in NEVER_BUSY:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.max_requests:
            busy = f"{self.max_requests} requests are being handled (OVREDUCE_MAX_REQUESTS)"
            await send_problem(send, 503, f"the server is busy: {busy}; retry later", "busy", scope.get("path", ""),
                               headers=[(b"retry-after", b"5")], drain=_body_to_drain(scope, receive))  # fmt: skip
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


# -- request bodies --------------------------------------------------------------------------------------
def _unclosed(close: bytes, opening: bytes, tail: bytes) -> str:
    """Why a multipart body whose first and last bytes are ``opening`` and ``tail`` lacks ``close`` (CRLF, then its
    closing boundary line): no part, another boundary, lines that end in LF alone, or cut short."""
    delimiter = close[2:]  # --BOUNDARY--

    def shown(line: bytes) -> str:
        text = line.decode("latin-1")
        return repr(text if len(text) <= 84 else text[:40] + "..." + text[-40:])

    if opening.startswith(delimiter):
        return (f"the multipart body holds no part: it is its closing boundary {shown(delimiter)} alone; send the "
                f"files as parts")  # fmt: skip
    if not opening.startswith(delimiter[:-2]):
        return (f"the multipart body does not begin with the boundary line its Content-Type names, "
                f"{shown(delimiter[:-2])}; send the body with the boundary it holds")  # fmt: skip
    if b"\n" + delimiter in tail:
        return (f"the multipart body's lines end in LF alone (before its closing boundary {shown(delimiter)} too); "
                f"end them in CRLF")  # fmt: skip
    return f"the multipart body ends without its closing boundary {shown(delimiter)}: it was cut short"


class BodyLimitMiddleware:
    """Answer 413 for a body over the limit, 408 for one that stalls or trickles, 400 for an ambiguous one.

    Multipart bodies POSTed to ``upload_paths`` get ``max_upload_bytes``, any other ``max_json_bytes``. A declared
    ``Content-Length`` over it is refused before any byte is read; a body is cut off as soon as its count passes it,
    the application's answer replaced. A body with no byte for ``body_timeout_s``, or slower than
    :data:`MIN_BODY_RATE` on average after that, is 408 (a stalled client holds no request slot for ever). Two
    ``Content-Type`` headers (two parsers could read them differently) or ``Transfer-Encoding`` with
    ``Content-Length``: 400. A multipart upload that ends without its closing boundary (cut short): 400.
    """

    def __init__(self, app: ASGIApp, *, max_upload_bytes: int, max_json_bytes: int, body_timeout_s: float,
                 upload_paths: Sequence[Pattern[str]]) -> None:  # fmt: skip
        self.app = app
        self.max_upload_bytes = max_upload_bytes
        self.max_json_bytes = max_json_bytes
        self.body_timeout_s = body_timeout_s
        self.upload_paths = tuple(upload_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        types, lengths = headers.getlist("content-type"), headers.getlist("content-length")
        content_type, content_types = (types[-1].encode("latin-1") if types else b""), len(types)
        try:
            declared = int(lengths[-1]) if lengths else None
        except ValueError:
            declared = None
        path = scope.get("path", "")
        upload = (scope.get("method") == "POST" and content_type.lower().startswith(b"multipart/")
                  and any(p.match(path) for p in self.upload_paths))  # fmt: skip
        limit = self.max_upload_bytes if upload else self.max_json_bytes
        what = "an upload (multipart body)" if upload else "a request body"
        setting = "OVREDUCE_MAX_UPLOAD_BYTES" if upload else "OVREDUCE_MAX_JSON_BYTES"
        drain_limit = max(limit, DRAIN_MAX_BYTES)
        if content_types > 1 or ("transfer-encoding" in headers and declared is not None):
            detail = (f"the request has {content_types} Content-Type headers; send one" if content_types > 1 else
                      "the request has both Transfer-Encoding and Content-Length, which two readers of it could split "
                      "differently; send one")  # fmt: skip
            await send_problem(send, 400, detail, "request.invalid", path, drain=_body_to_drain(scope, receive))
            return
        if declared is not None and declared > limit:
            detail = f"{what} of {declared} bytes is larger than the limit of {limit} bytes ({setting})"
            # Expect: 100-continue: the client waits for a go-ahead that reading would send; a body far
            # beyond what is drained would end in a reset anyway: answer and close at once.
            drain = None if _continue_expected(scope) or declared - limit > drain_limit else receive
            await send_problem(send, 413, detail, RequestTooLargeError.code, path, drain=drain, drain_limit=drain_limit)
            return
        received = 0
        began: float | None = None  # the first read of the body
        refusal: tuple[int, str, str] | None = None  # (status, code, detail) that replaces the app's answer
        replaced = False
        finished = False  # the client has sent its whole body (or gone)
        # CRLF--BOUNDARY--, which ends a complete multipart body (RFC 2046: the line break is part of it, so that
        # --BOUNDARY-- inside a file's bytes is data); no boundary: the parser refuses the body
        boundary = parse_options_header(content_type)[1].get(b"boundary") if upload else None
        close = b"\r\n--" + boundary + b"--" if boundary else None
        tail = b""  # the last bytes read, where a close delimiter split over two reads begins
        opening = b""  # the first bytes read, where the first boundary line is

        async def limited_receive() -> Message:
            nonlocal received, began, refusal, finished, close, tail, opening
            if refusal is not None:
                raise InputError(refusal[2])
            if finished:  # the body is in: the application waits for a disconnect, as long as it likes
                return await receive()
            now = time.monotonic()
            began = now if began is None else began
            # the wait for the next bytes: the stall timeout, or less where the average rate would fall too low
            rate_left = max(self.body_timeout_s, received / MIN_BODY_RATE) - (now - began)
            try:
                async with asyncio.timeout(min(self.body_timeout_s, rate_left)):  # half what anyio's scope costs
                    message = await receive()
            except TimeoutError:
                finished = True  # nothing to drain: the client sends (next to) nothing
                if rate_left < self.body_timeout_s:
                    rate = received / max(time.monotonic() - began, 1e-9)
                    detail = (f"the request body arrives at {rate:.0f} bytes/s on average, less than the "
                              f"{MIN_BODY_RATE} bytes/s waited for after the first {self.body_timeout_s:g} s "
                              f"(OVREDUCE_BODY_TIMEOUT_S); the connection is closed")  # fmt: skip
                else:
                    detail = (f"no byte of the request body arrived for {self.body_timeout_s:g} s "
                              f"(OVREDUCE_BODY_TIMEOUT_S); the connection is closed")  # fmt: skip
                refusal = (408, "request.timeout", detail)
                raise InputError(detail) from None
            if message["type"] == "http.request":
                body = message.get("body", b"")
                received += len(body)
                finished = not message.get("more_body", False)
                if max(received, scope.get("state", {}).get(DECLARED_BODY, 0)) > limit:
                    detail = f"{what} is larger than the limit of {limit} bytes ({setting}); it was not read to the end"
                    refusal = (413, RequestTooLargeError.code, detail)
                    raise RequestTooLargeError(detail)
                if close is not None:
                    if close in tail + body:
                        close = None  # seen: the body is complete
                    else:
                        tail, opening = (tail + body)[-len(close) :], (opening + body)[: len(close)]
                        if finished:
                            detail = _unclosed(close, opening, tail)
                            refusal = (400, "request.invalid", detail)
                            raise InputError(detail)
            else:
                finished = True
            return message

        async def replace() -> None:
            nonlocal replaced
            replaced = True
            assert refusal is not None
            status, code, detail = refusal
            await send_problem(send, status, detail, code, path, drain=None if finished else receive,
                               drain_limit=drain_limit)  # fmt: skip

        async def guarded_send(message: Message) -> None:
            if refusal is not None:
                if not replaced and message["type"] == "http.response.start":
                    await replace()
                return  # the application's own answer is dropped
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if refusal is None:
                raise
            if not replaced:
                await replace()


# -- absolute-form targets -------------------------------------------------------------------------------
class AbsoluteFormMiddleware:
    """Serve a request whose target is a whole URI (``GET http://host/healthz``), as HTTP/1.1 servers must (RFC 9112
    3.2.2): its path is the URI's, its ``Host`` the URI's authority. Outermost: every other wrapper sees it so."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            root = scope.get("root_path", "")
            target = bytes(scope.get("raw_path", b""))[len(root.encode()) :]
            if target[:8].lower().startswith((b"http://", b"https://")):
                authority, slash, rest = target.partition(b"://")[2].partition(b"/")
                raw = slash + rest or b"/"
                headers = [(k, v) for k, v in scope["headers"] if k != b"host"] + [(b"host", authority)]
                scope = {**scope, "headers": headers, "raw_path": root.encode() + raw,
                         "path": root + unquote(raw.decode("latin-1"))}  # fmt: skip
        await self.app(scope, receive, send)


# -- HEAD ------------------------------------------------------------------------------------------------
class HeadMiddleware:
    """Answer HEAD wherever GET is (RFC 9110 9.1; FastAPI's routes take GET alone): routed as a GET; the server sends
    the answer's headers without its body, as it does for any answer to a HEAD (uvicorn, Starlette's TestClient)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return
        inner = {**scope, "method": "GET"}
        try:
            await self.app(inner, receive, send)
        finally:
            if "route" in inner:  # the route the router matched, for the metrics' label
                scope["route"] = inner["route"]


# -- anything else ---------------------------------------------------------------------------------------
async def _internal_error(request: Request, exc: Exception) -> Response:
    """Starlette's handler of last resort: 500 with the id the exception is logged with (then re-raised)."""
    error_id = uuid.uuid4().hex[:16]
    logger.error("internal error %s on %s %s", error_id, request.method, escaped(request.url.path), exc_info=exc)
    detail = f"an unexpected error occurred; it was logged with id {error_id}"
    headers = {k.decode(): v.decode() for k, v in secured([(b"connection", b"close")])}
    return error_response(request, 500, detail, "internal", headers=headers)
