"""TRANSITIONAL (cli-package branch): the renderers live in :mod:`ovreduce.cli.render` now.

bench/check_bench.py still imports ``ovreduce.render``; delete this module once it imports
``ovreduce.cli.render`` instead. Nothing else may import it.
"""

from __future__ import annotations

from ovreduce.cli.render import *  # noqa: F403
from ovreduce.cli.render import __all__ as __all__
