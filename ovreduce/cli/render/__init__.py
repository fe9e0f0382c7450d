"""Rendering of the library's documents for people (text tables) and tools (JUnit XML, SARIF).

JSON needs no renderer: the CLI writes the document itself (``ovreduce.reports.to_json``).
"""

from __future__ import annotations

from ovreduce.cli.render.junit import check_junit
from ovreduce.cli.render.sarif import check_sarif
from ovreduce.cli.render.style import Style
from ovreduce.cli.render.text import (
    audit_text,
    check_text,
    conform_text,
    devices_text,
    inspect_text,
    run_text,
    shape_text,
    table,
)

__all__ = [
    "Style",
    "audit_text",
    "check_junit",
    "check_sarif",
    "check_text",
    "conform_text",
    "devices_text",
    "inspect_text",
    "run_text",
    "shape_text",
    "table",
]
