"""Rendering of the library's documents for people (:mod:`.text`, with :mod:`.style`; ``check``'s own in
:mod:`.check_text`) and tools (:mod:`.junit`, :mod:`.sarif`).

JSON is the document itself (``ovreduce.reports.to_json``), written by :mod:`.json_text` as
``json.dumps(indent=2)`` would write it.
"""
