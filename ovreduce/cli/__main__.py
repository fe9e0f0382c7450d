"""``python -m ovreduce.cli``: the same as the ``ovreduce`` command."""

from __future__ import annotations

import sys

from ovreduce.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
