"""The entry point: parse the command line, run the command, map what went wrong to an exit status."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ovreduce.cli import commands
from ovreduce.cli.errors import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK
from ovreduce.cli.parser import build_parser
from ovreduce.cli.render.safe import escape
from ovreduce.cli.serve import serve
from ovreduce.cli.wording import in_flag_terms
from ovreduce.errors import OvReduceError

__all__ = ["COMMANDS", "console", "main"]

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "check": commands.check,
    "inspect": commands.inspect,
    "run": commands.run,
    "audit": commands.audit,
    "conform": commands.conform,
    "devices": commands.devices,
    "serve": serve,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except OvReduceError as exc:
        sys.stderr.write(f"ovreduce {args.command}: {escape(in_flag_terms(args.command, exc))} [{exc.code}]\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("ovreduce: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: report it without a traceback, with enough to file it
        sys.stderr.write(
            f"ovreduce {args.command}: internal error: {type(exc).__name__}: {escape(str(exc))} (please report)\n"
        )
        return EXIT_INTERNAL


def console() -> NoReturn:
    """The ``ovreduce`` program: :func:`main`, then exit. Where an inference was left running past its time
    limit (OpenVINO cannot stop it), the process ends at once, after flushing its output, instead of waiting
    for it at exit."""
    status = main()
    if "ovreduce.backends.openvino" in sys.modules:
        from ovreduce.backends.openvino import abandoned

        if abandoned():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    sys.exit(status)
