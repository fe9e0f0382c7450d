"""The model store: :mod:`api.store.disk` (files: content-addressed, atomic, capped) and
:mod:`api.store.catalog` (parsing and checking around it, summaries, the parsed-model cache)."""
