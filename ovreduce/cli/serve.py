"""``ovreduce serve``: the service's settings from the environment and the flags, then the API's server."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ovreduce.cli.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from api.config import Settings

__all__ = ["API_PACKAGE", "serve"]

API_PACKAGE = "ovreduce_api"
"""The name the repository's ``api/`` folder is installed under."""


def _server() -> tuple[type[Settings], Callable[..., None], type[Exception]]:
    """The service's ``Settings`` class, its ``serve`` function and the exception ``serve`` raises when it
    cannot start: the one place the command line reaches into the installed API package."""
    config = importlib.import_module(f"{API_PACKAGE}.config")
    server = importlib.import_module(f"{API_PACKAGE}.server")
    return (cast("type[Settings]", config.Settings), cast("Callable[..., None]", server.serve),
            cast("type[Exception]", server.ServeError))  # fmt: skip


def _said(error: Any) -> str:
    """A setting's validation error in its own words (pydantic puts "Value error, " before a validator's)."""
    return str(error["msg"]).removeprefix("Value error, ")


def serve(args: argparse.Namespace) -> int:
    """Run the REST API until SIGTERM or Ctrl-C, then exit 0; a wrong setting or an address that cannot be
    listened on is a usage error (exit 2)."""
    try:
        from pydantic import ValidationError

        settings_class, run_server, serve_error = _server()
    except ImportError as exc:
        raise UsageError(f"serve needs the API's dependencies (fastapi, uvicorn, pydantic-settings): {exc}") from None
    try:
        settings = settings_class()
    except ValidationError as exc:
        problems = "; ".join(f"OVREDUCE_{'_'.join(map(str, e['loc'])).upper()}: {_said(e)}" for e in exc.errors())
        raise UsageError(f"the environment has invalid settings: {problems}") from None
    workers = args.workers if args.workers is not None else settings.workers
    update: dict[str, Any] = {}
    if args.host is not None:
        update["host"] = args.host
    if args.port is not None:
        update["port"] = args.port
    if args.store is not None:
        try:
            update["store"] = Path(args.store).expanduser().resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of symbolic links
            raise UsageError(f"--store {args.store!r} cannot be resolved: {exc}") from None
    try:  # the flags validated as the environment is (they take precedence over it)
        settings = settings_class(**update)
    except ValidationError as exc:
        problems = "; ".join(f"--{e['loc'][0]}: {_said(e)}" for e in exc.errors())
        raise UsageError(f"invalid option: {problems}") from None
    settings = settings.model_copy(update={"workers": workers})  # its bound is the server's (ServeError)
    if settings.extension_names():  # loaded here first: one OpenVINO refuses is a wrong setting, said precisely
        from ovreduce._openvino import load_extensions
        from ovreduce.errors import InputError

        try:
            load_extensions(settings.extension_names())
        except InputError as exc:
            raise UsageError(f"the environment has invalid settings: OVREDUCE_EXTENSIONS: {exc.message}") from None
    try:  # until SIGTERM or Ctrl-C: a requested stop returns, and is a clean exit
        run_server(
            settings, workers=workers, log_level=args.log_level or settings.log_level,
            access_log=not args.no_access_log, graceful_timeout=args.graceful_timeout,
        )  # fmt: skip
    except serve_error as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK
