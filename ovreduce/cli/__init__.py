"""The ``ovreduce`` command: parse arguments, call the library, render, return an exit status.

Exit statuses: 0 clean / all agree; 1 a finding of severity error, a disagreement or a failed backend;
2 an input that could not be read, or a wrong command line; 3 an internal error (a bug: please report).

::

    entry.py     main(): parse, dispatch, errors -> exit statuses (errors.py: UsageError, EXIT_*); console(): the
                 program, which exits at once where an inference outlived its time limit
    interrupt.py the answer to a Ctrl-C main does not take (while the modules load, while the program ends)
    parser.py    the argparse grammar
    options.py   option values -> the library's arguments (errors name the flag)
    paths.py     files, folders and globs -> model paths (a path that names nothing is a usage error)
    layers.py    --layer: "did you mean" for a mistyped layer
    commands.py  check, inspect, run, audit, conform, devices
    serve.py     serve (the service's settings, then api.server.serve)
    render/      style.py (ANSI), terminal.py (the terminal's width), width.py (tables and lines that fit
                 it), check_text.py (check's text), text.py (the other commands'), safe.py (escapes what
                 files hold), junit.py, sarif.py (JSON: ovreduce.reports.common.dumps)

Each command imports what it uses when it runs (``check`` never loads the other commands' renderers, nor
NumPy or OpenVINO): tests/cli/test_lazy_imports.py lists what it must not load.
"""

from __future__ import annotations

import contextlib as _contextlib
import os as _os
import signal as _signal
import sys as _sys

from ovreduce.cli.interrupt import interrupted as _interrupted

# The program (``ovreduce``, ``python -m ovreduce.cli``) only: a process that imports the package keeps its own.
_argv0 = (getattr(_sys, "argv", None) or [""])[0]
_program = _argv0 == "-m" or _os.path.basename(_argv0) == "ovreduce"
if _program and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    with _contextlib.suppress(ValueError):  # (not the main thread: not the program)
        _signal.signal(_signal.SIGINT, _interrupted)

from ovreduce.cli.entry import main  # noqa: E402 - after the interrupt's handler

__all__ = ["main"]
