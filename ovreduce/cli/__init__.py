"""The ``ovreduce`` command: parse arguments, call the library, render, return an exit status.

Exit statuses: 0 clean / all agree; 1 a finding of severity error, a disagreement or a failed backend;
2 an input that could not be read, or a wrong command line; 3 an internal error (a bug: please report).

::

    entry.py     main(): parse, dispatch, errors -> exit statuses (errors.py: UsageError, EXIT_*); console(): the
                 program, which exits at once where an inference outlived its time limit
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

from ovreduce.cli.entry import main

__all__ = ["main"]
