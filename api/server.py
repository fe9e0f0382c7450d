"""Running the service: :func:`serve` runs :func:`api.main.create_app` with uvicorn until SIGTERM or Ctrl-C.

Settings travel as a :class:`~api.config.Settings` object, never through ``os.environ``: one worker runs
``create_app(settings)`` in this process; several run ``functools.partial(create_app, settings)`` as a
uvicorn factory in processes of their own (uvicorn pickles its config into each, settings included).

Importing this module starts nothing and imports neither uvicorn nor the application.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import signal
import socket
from collections.abc import Iterator
from types import FrameType
from typing import Any

from .config import MAX_WORKERS, Settings

__all__ = ["ServeError", "serve"]


class ServeError(Exception):
    """The server could not start: the address cannot be listened on, or the application failed to start."""


class _StopSignalError(Exception):
    """A requested stop (SIGTERM, SIGINT) after uvicorn's graceful shutdown."""


def serve(
    settings: Settings,
    *,
    workers: int | None = None,
    log_level: str | None = None,
    access_log: bool = True,
    graceful_timeout: int = 10,
) -> None:
    """Serve the API on ``settings.host``:``settings.port`` until SIGTERM or SIGINT; then return.

    Args:
        settings: everything the application is told; ``host`` and ``port`` say where it listens.
        workers: worker processes (default ``settings.workers``). With several, and no ``concurrency``
            given in ``settings``, each worker gets ``settings.concurrency // workers`` threads (at least 1):
            the CPUs are shared.
        log_level: uvicorn's and the ``ovreduce`` loggers' level (default ``settings.log_level``).
        access_log: log every request.
        graceful_timeout: seconds to let requests finish on shutdown.

    Raises:
        ServeError: ``host``:``port`` cannot be listened on, ``workers`` is not 1 to :data:`MAX_WORKERS`,
            ``PROMETHEUS_MULTIPROC_DIR`` is no folder the server can write, or the application did not start.
    """
    import uvicorn

    from .main import create_app
    from .metrics import multiprocess_problem

    if problem := multiprocess_problem():
        raise ServeError(problem)

    workers = settings.workers if workers is None else workers
    if not 1 <= workers <= MAX_WORKERS:
        raise ServeError(f"{str(workers)!r} is not a number of worker processes: an integer from 1 to {MAX_WORKERS}")
    if workers > 1 and "concurrency" not in settings.model_fields_set:
        settings = settings.model_copy(update={"concurrency": max(1, settings.concurrency // workers)})
    level = log_level or settings.log_level
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["loggers"]["ovreduce"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": level,
        "log_config": log_config,
        "access_log": access_log,
        "timeout_graceful_shutdown": graceful_timeout,
        # h11 with a deadline for request heads (settings.header_timeout_s, from the app's lifespan state):
        # clients that trickle their headers are closed instead of holding connections for ever.
        "http": f"{__package__}.protocol:HeaderTimeoutProtocol",
        "timeout_keep_alive": 5,
        "server_header": False,
    }
    app = create_app(settings) if workers == 1 else functools.partial(create_app, settings)
    config = uvicorn.Config(app, factory=workers > 1, workers=workers, **options)
    # The listening socket is bound here rather than by uvicorn: uvicorn's has protocol 0, so asyncio never
    # sets TCP_NODELAY on its connections and every response waits ~40 ms for a delayed ACK. Several workers
    # share it. (Bound after the config is made: making it configures the logging that reports the address.)
    sock = _listen(settings.host, settings.port)
    with sock, _stop_on_signals():
        if workers > 1:
            _supervisor(config, sock).run()
            return
        server = uvicorn.Server(config)
        with contextlib.suppress(SystemExit):  # uvicorn's own exit when the application's startup fails
            server.run(sockets=[sock])
        if not server.started:
            raise ServeError("the application did not start (see the log above)")


def _supervisor(config: Any, sock: socket.socket) -> Any:
    """uvicorn's supervisor of several workers, which lets go of the listening socket as it stops them: it kept its
    copy open, and the kernel went on queueing connections that no worker would take until the last one stopped."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def terminate_all(self) -> None:
            for listening in self.sockets:
                listening.close()  # each worker closes its own as it stops: new connections are refused
            super().terminate_all()

    return Supervisor(config, sockets=[sock])


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT stop the server cleanly (uvicorn handles the signal itself, a graceful shutdown, then raises
    it again with this handler in place); the previous handlers are back afterwards."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _StopSignalError

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    except _StopSignalError:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    port = sock.getsockname()[1]
    logging.getLogger("uvicorn.error").info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", shown, port)
    return sock
