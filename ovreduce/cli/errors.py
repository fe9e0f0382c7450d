"""How the command line fails: :class:`UsageError` and the exit statuses.

Exit statuses: 0 clean / all agree; 1 a finding of severity error, a disagreement or a failed backend;
2 an input that could not be read, a wrong command line, or output that could not be written; 3 an internal error
(a bug: please report).
"""

from __future__ import annotations

from ovreduce.errors import OvReduceError

__all__ = [
    "EXIT_FINDINGS", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK", "OUTPUT_FAILED", "OutputError",
    "UsageError",
]  # fmt: skip

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


class UsageError(OvReduceError):
    """The command line is wrong (a flag's value, a file that is not there); reported with code ``usage``."""

    code = "usage"


class OutputError(OvReduceError):
    """Standard output cannot take the command's output (a full disk, a closed stream): not the command line's
    fault; reported with code ``output``, exit 2 whatever the verdict was (the report it rests on is not there)."""

    code = "output"


OUTPUT_FAILED = "cannot write its output to standard output"
"""How a command says that :class:`OutputError` happened, before the system's reason."""
