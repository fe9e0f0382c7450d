"""uvicorn's h11 protocol with a deadline (uvicorn has none) for a request's head, for the rest of a body nobody reads
and for the client's reading of an answer: clients that trickle hold no connection or request slot for ever
(docs/service.md, "Connections")::

    uvicorn --factory ovreduce_api.main:create_app --http ovreduce_api.protocol:HeaderTimeoutProtocol
    ovreduce serve        # uses it

The timeout comes from the app's lifespan state (``create_app`` puts it there), however the server was started.
Importing this module imports uvicorn; :mod:`api.server` imports it only when it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote, urlsplit

import h11
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from .config import HEADER_TIMEOUT_STATE_KEY as STATE_KEY
from .metrics import STATE_KEY as METRICS_KEY
from .middleware import DECLARED_BODY, MAX_HEADER_BYTES, problem_head, secured

__all__ = ["DEFAULT_HEADER_TIMEOUT_S", "HeaderTimeoutProtocol"]

DEFAULT_HEADER_TIMEOUT_S = 10.0

logger = logging.getLogger("uvicorn.error")
_LINE_BYTES = 2048  # of a request head, read for its target
MIN_PIECE_BYTES, FREE_PIECES = 512, 4096
"""Bytes a request body must average per piece h11 reads of it (a chunk of a chunked body, or what arrived at once)
once it came in more than ``FREE_PIECES``: each piece costs the server's one event loop the same, whatever it holds,
and a body sent in chunks of one byte held the health checks for seconds."""
# a method (a token: no ':', so no header line) and a target (absolute or not), then the version or the bytes' end
_REQUEST_LINE = re.compile(rb"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+) +([!-~]+)(?: +HTTP/|\Z)")


class _Counted(h11.Connection):
    """h11's connection, counting the pieces of the request body under way and their bytes."""

    pieces = body_bytes = 0

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Data):
            self.pieces, self.body_bytes = self.pieces + 1, self.body_bytes + len(event.data)
        elif isinstance(event, h11.Request):
            self.pieces = self.body_bytes = 0
        return event


def _target(found: re.Match[bytes] | None) -> str | None:
    """The path of a request line (:data:`_REQUEST_LINE`'s match)."""
    try:
        return unquote(urlsplit(found[2].decode("latin-1")).path) if found else None
    except ValueError:  # no URL ("http://[x")
        return None


class HeaderTimeoutProtocol(H11Protocol):
    """:class:`H11Protocol` that closes a connection whose request head does not arrive in time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # uvicorn's config, server state, app state and loop
        super().__init__(*args, **kwargs)
        self.conn = self._counted = _Counted(
            h11.SERVER, self.config.h11_max_incomplete_event_size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        )
        self.header_timeout_s = float(self.app_state.get(STATE_KEY, DEFAULT_HEADER_TIMEOUT_S))
        self._header_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0  # of the awaited request head, arrived
        self._write_timer: asyncio.TimerHandle | None = None
        self._head_start = b""  # the first bytes h11 held as it last read requests (see handle_events)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def handle_events(self) -> None:
        # h11 takes a whole head out of its buffer before it finds it broken: what it holds now is the head it reads
        if self.conn.their_state is h11.IDLE:  # (not for every piece of a body)
            self._head_start = self.conn.trailing_data[0][:_LINE_BYTES]
        super().handle_events()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._head_bytes += len(data)
        super().data_received(data)
        pieces, size = self._counted.pieces, self._counted.body_bytes
        if self.cycle is not None and "state" in self.scope:  # (and what the chunk under way declares: see there)
            self.scope["state"][DECLARED_BODY] = size + getattr(self.conn._reader, "_bytes_in_chunk", 0)
        if pieces > FREE_PIECES and size < MIN_PIECE_BYTES * pieces:  # (as the last read, at once, or not)
            if self.cycle is not None and not self.cycle.response_complete:
                self.cycle.disconnected = True  # (what the application would answer is dropped)
            self._answer(400, "request.invalid", f"the request body comes in pieces of {size / pieces:.0f} bytes on "
                         f"average ({pieces} pieces, {size} bytes): send it in chunks of {MIN_PIECE_BYTES} bytes or "
                         f"more; the connection is closed")  # fmt: skip
            self.transport.close()
            return
        self._watch()

    def send_400_response(self, msg: str) -> None:
        """A problem answer (uvicorn's is plain text), 431 for a head past the limit; an app's answer under way is
        dropped as for a client that left (else h11 fails, logged as the server's error)."""
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
        status, code = 400, "request.invalid"
        said = sys.exc_info()[1]  # uvicorn calls this while it handles h11's error, whose words say what is wrong
        why = str(said)[:200] if isinstance(said, h11.RemoteProtocolError) and str(said) else msg.rstrip(".").lower()
        why = re.sub(r"bytearray\((b(['\"]).*?\2)\)", r"\1", why)  # h11 quotes the bytes it read as Python writes them
        detail = f"the bytes received are not an HTTP/1.1 request ({why}); the connection is closed"
        if self._head_bytes > MAX_HEADER_BYTES:  # h11 gives up on a head that grows past it
            status, code = 431, "request.headers"
            detail = (f"the request's head did not end within {self._head_bytes} bytes, more than the limit of "
                      f"{MAX_HEADER_BYTES} for its target and header fields; the connection is closed")  # fmt: skip
        self._answer(status, code, detail)
        self.transport.close()

    def _answer(self, status: int, code: str, detail: str) -> None:
        """Write a closing problem answer as the app's edge does, and count it as the app would (where no request of
        the app's is under way: that one is counted as it ends); nothing when an answer was begun already. Its path is
        in the head h11 last began to read (out of its buffer once it has read the head: the buffer then holds its
        body, or the next request), else in its buffer."""
        found = _REQUEST_LINE.match(self._head_start or self.conn.trailing_data[0][:_LINE_BYTES])
        head, body = problem_head(status, detail, code, _target(found))
        response = h11.Response(status_code=status, headers=secured(head), reason=HTTPStatus(status).phrase.encode())
        with contextlib.suppress(h11.LocalProtocolError):
            for event in (response, h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
            if (metrics := self.app_state.get(METRICS_KEY)) and (self.cycle is None or self.cycle.response_complete):
                metrics.refused(found[1].decode("latin-1") if found else "", status)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._write_timer is not None:
            self._write_timer.cancel()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """A client that reads none of the answer within the head's deadline is dropped (it holds a request slot)."""
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(self.header_timeout_s, self._unread)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _unread(self) -> None:
        """Abort: closing would wait, the answer held in memory, for the client to read it all."""
        self._write_timer = None
        logger.debug("dropping %s: nothing of the answer read for %g s", self.client, self.header_timeout_s)
        self.transport.abort()

    def _idle(self) -> bool:
        """Waiting for a request head, or for an answered request's unread body (it puts off keep-alive's timeout)."""
        if self.conn.their_state is h11.IDLE:
            return True
        answered = self.conn.our_state in (h11.DONE, h11.MUST_CLOSE) or (self.cycle and self.cycle.response_complete)
        return bool(answered) and self.conn.their_state is h11.SEND_BODY

    def _watch(self) -> None:
        if self.transport is None or self.transport.is_closing():
            self._disarm()
        elif self._idle():
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(self.header_timeout_s, self._expired)
        else:
            self._disarm()
            self._head_bytes = 0

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or not self._idle():
            return
        if self._head_bytes and self.conn.their_state is h11.IDLE:
            logger.debug("closing %s: no request head within %g s", self.client, self.header_timeout_s)
            detail = (f"the request's line and header fields did not arrive within {self.header_timeout_s:g} s "
                      f"(OVREDUCE_HEADER_TIMEOUT_S); the connection is closed")  # fmt: skip
            self._answer(408, "request.timeout", detail)
        self.transport.close()
