"""Running the ``ovreduce`` command in this process, as the CLI tests of every command do."""

from __future__ import annotations

import pytest

from ovreduce.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``ovreduce ARGV...``: the exit status, standard output and standard error (never a traceback)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err
    return status, out, err
