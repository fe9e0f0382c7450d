"""What every test shares: Hypothesis's property tests draw the same examples on every run, and the files that
take minutes start first.

A clean-clone CI run must pass or fail on the code, not on the draw: the property tests are derandomized (their
explicit ``@example`` cases included, each a bug a random draw once found). ``OVREDUCE_FUZZ_RANDOM=1`` draws
new examples, to look for more.

The suite runs on every core, each worker taking whole files (pyproject's ``--dist loadfile``), in the order
of :func:`pytest_collection_modifyitems` (pyproject's ``--no-loadscope-reorder`` keeps it): the files with a
``slow`` or ``browser`` test (the AVX2-only CPU under emulation, the container build, headless chromium) first,
so that their minutes of emulation and waiting overlap the rest of the suite instead of ending it alone on one
core; then the others, most tests first (pytest-xdist's own order).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import settings

settings.register_profile("ovreduce", derandomize=not os.environ.get("OVREDUCE_FUZZ_RANDOM"), database=None)
settings.load_profile("ovreduce")

_FIRST = ("slow", "browser")  # in this order


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with a slow test first (the fewest tests first: the emulated CPU's one test runs longest), then
    those with a browser test, then the others by their number of tests, most first. A file's tests stay together
    and in their own order (a stable sort on a per-file key)."""
    count = Counter(item.nodeid.partition("::")[0] for item in items)
    rank: dict[str, int] = {}
    for item in items:
        path = item.nodeid.partition("::")[0]
        for i, marker in enumerate(_FIRST):
            if item.get_closest_marker(marker) is not None:
                rank[path] = min(rank.get(path, i), i)

    def key(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.partition("::")[0]
        return (rank[path], count[path]) if path in rank else (len(_FIRST), -count[path])

    items.sort(key=key)
