"""Serve the application with uvicorn: one process, or several sharing one listening socket.

STUB written on the ``cli-package`` branch so that ``ovreduce serve`` (and tests/api/test_server.py) run
there; the api engineer's ``api/server.py`` replaces it. What the CLI relies on: ``Settings`` (re-exported
from :mod:`api.config`), :func:`serve` with this signature, and :class:`ListenError`.
"""

from __future__ import annotations

import copy
import logging
import os
import socket
from typing import Any

from api.config import Settings

__all__ = ["ListenError", "Settings", "serve"]


class ListenError(Exception):
    """The address cannot be listened on (in use, not an address of this machine, not permitted)."""


def serve(settings: Settings, *, workers: int, log_level: str, access_log: bool, graceful_timeout: int) -> None:
    """Run the application for ``settings`` until uvicorn is told to stop (SIGTERM, Ctrl-C).

    Raises:
        ListenError: the listening socket of several workers cannot be bound.
    """
    import uvicorn

    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["loggers"]["ovreduce"] = {"handlers": ["default"], "level": log_level.upper(), "propagate": False}
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "workers": workers,
        "log_level": log_level,
        "log_config": log_config,
        "access_log": access_log,
        "timeout_graceful_shutdown": graceful_timeout,
    }
    if workers == 1:
        from api.main import create_app

        uvicorn.run(create_app(settings), **options)
        return
    # The worker processes build their application from the environment: hand them these settings there.
    os.environ.update({f"OVREDUCE_{name.upper()}": str(value) for name, value in settings.model_dump().items()})
    # Several workers share one listening socket, bound here rather than by uvicorn: uvicorn's has protocol 0,
    # so asyncio never sets TCP_NODELAY on its connections and every response waits ~40 ms for a delayed ACK.
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config("api.main:create_app", factory=True, **options)
    Multiprocess(config, sockets=[_listen(config.host, config.port)]).run()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    logging.getLogger("uvicorn.error").info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", shown, port)
    return sock
