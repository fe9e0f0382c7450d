"""The ``ovreduce`` command: thin over the library (arguments in, documents rendered, an exit status out).

* :mod:`~ovreduce.cli.main`: the argument parser and one function per command;
* :mod:`~ovreduce.cli.errors`: :class:`~ovreduce.cli.errors.UsageError`, a wrong command line;
* :mod:`~ovreduce.cli.render`: text, JUnit and SARIF renderings of the library's documents.
"""

from __future__ import annotations

from ovreduce.cli.main import main

__all__ = ["main"]
