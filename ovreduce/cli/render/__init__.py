"""Rendering of the library's documents for people (:mod:`.text`, with :mod:`.style`; ``check``'s own in
:mod:`.check_text`) and tools (:mod:`.junit`, :mod:`.sarif`).

JSON is the document itself, written by orjson (``ovreduce.reports.common.dumps``), its non-finite floats as the
strings "NaN", "Infinity" and "-Infinity".
"""
