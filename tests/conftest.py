"""What every test shares: Hypothesis's property tests draw the same examples on every run.

A clean-clone CI run must pass or fail on the code, not on the draw: the property tests are derandomized (their
explicit ``@example`` cases included, each a bug a random draw once found). ``OVREDUCE_FUZZ_RANDOM=1`` draws
new examples, to look for more.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ovreduce", derandomize=not os.environ.get("OVREDUCE_FUZZ_RANDOM"), database=None)
settings.load_profile("ovreduce")
