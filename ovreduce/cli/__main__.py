"""``python -m ovreduce.cli``: the ``ovreduce`` command."""

from __future__ import annotations

from ovreduce.cli.entry import console

console()
