"""The documents of every command stay what they were: each golden file is re-run and compared.

The golden files were recorded before the redesign by ``generate.py`` (which says how to regenerate them);
a document may gain fields but never lose or change one. They pin what ovreduce decides (structure, verdicts,
shapes, texts), not the last bits of a kernel's rounding, which differ between CPUs: measured figures need only
be of the same kind, and must agree with the verdicts and tolerances the new document states. An error (exit
status 2 with a message on standard error) must keep its status and its error code; its wording belongs to the
CLI.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.golden.generate import DOCS, cases, consistent, contains, normalise, run_cli
from tests.strict_json import NODE, node_loads

GOLDEN = {name: argv for name, argv in cases()}


def test_every_case_has_a_golden_file() -> None:
    recorded = {p.name.removesuffix(".golden") for p in DOCS.glob("*.golden")}
    assert recorded == set(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_document_is_unchanged(name: str) -> None:
    golden = json.loads((DOCS / f"{name}.golden").read_text())
    assert golden["argv"] == GOLDEN[name]
    rc, text = run_cli(GOLDEN[name])
    assert rc == golden["exit"], text
    old = golden["output"]
    if isinstance(old, str) and "[stderr]" in old:
        assert "[stderr]" in text
        assert re.findall(r"\[[a-z_.]+\]$", old.strip()) == re.findall(r"\[[a-z_.]+\]$", text.strip())
        return
    new = normalise(name, text)  # a JSON document: parsed refusing NaN and Infinity tokens
    if name.endswith(".json") and NODE is not None:  # and by JavaScript's parser, as a browser reads it
        node_loads(text)
    if isinstance(old, str):
        assert new == old
    else:
        assert contains(new, old) == []
        assert consistent(new) == []
