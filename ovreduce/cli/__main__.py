"""``python -m ovreduce.cli``: the ``ovreduce`` command."""

from __future__ import annotations

import sys

from ovreduce.cli import main

sys.exit(main())
