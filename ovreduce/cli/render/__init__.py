"""Rendering of the library's documents for people (:mod:`.text`, with :mod:`.style`) and tools
(:mod:`.junit`, :mod:`.sarif`).

JSON needs no renderer: the CLI writes the document itself (``ovreduce.reports.to_json``).
"""
