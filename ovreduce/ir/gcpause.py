"""The cyclic garbage collector paused while a model is built or checked.

A model and its tree are hundreds of thousands of acyclic objects; the collections their allocation triggers cost
a fifth of a parse (a quarter of a check). Reference counting still frees everything while the collector rests.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_LOCK = threading.Lock()
_holders = 0
_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; it is back on as soon as no block holds it (nested and concurrent
    pauses are counted)."""
    global _holders, _was_enabled
    with _LOCK:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _LOCK:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                # Promote what was built to the oldest generation (freeze + unfreeze splices lists, O(1)):
                # otherwise the first young-generation collection would walk all of it at once.
                gc.freeze()
                gc.unfreeze()
                gc.enable()
