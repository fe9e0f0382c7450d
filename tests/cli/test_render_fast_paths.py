"""The shortcuts of the renderers give what the plain computation gives, and are taken.

``printable`` hands back the very parts that hold nothing to escape (a report of printable ASCII is returned
as it is, not copied) and copies only what it escapes; ``escape`` and ``xml_safe`` skip their patterns for
printable ASCII, and ``xml_safe``'s pattern lists what XML leaves out rather than negating what it allows.
"""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import pytest

from ovreduce.check import check_paths
from ovreduce.cli.render import safe
from ovreduce.cli.render.safe import escape, printable, xml_safe
from ovreduce.cli.render.text import check_text, table
from ovreduce.reports.check import CheckDocument, Finding, ModelCheck

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff\ud800-\udfff]")
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
HOSTILE = "a\r\n9 models checked\u009b31m\u202egnp\u2028\x1b[2J\ufeff\t\x00é漢"


def _plain_escape(text: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

    def one(m: re.Match[str]) -> str:
        ch = m.group()
        return named.get(ch) or _code(ord(ch))

    return UNSAFE.sub(one, text)


def _code(code: int) -> str:  # (a byte that is not UTF-8, kept as a lone surrogate, written as that byte)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _plain_printable(value: Any) -> Any:
    """The rule as first written: a copy of everything, every string escaped."""
    if isinstance(value, str):
        return _plain_escape(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _plain_printable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_plain_printable(v) for v in value)
    if isinstance(value, list):
        return [_plain_printable(v) for v in value]
    if isinstance(value, dict):
        return {_plain_printable(k): _plain_printable(v) for k, v in value.items()}
    return value


def _every_character() -> str:
    rng = random.Random(3)
    astral = [chr(rng.randrange(0x10000, 0x110000)) for _ in range(2000)]
    return "".join(map(chr, range(0x10000))) + "".join(astral) + "\U0010ffff"


def test_escape_and_xml_safe_agree_with_their_patterns_on_every_character() -> None:
    chars = _every_character()
    for ch in chars:
        assert escape(ch) == _plain_escape(ch), repr(ch)
    assert escape(chars) == _plain_escape(chars)
    assert xml_safe(chars) == NOT_XML.sub(lambda m: _code(ord(m.group())), chars)


def test_printable_ascii_never_reaches_a_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> re.Pattern[str]:
        raise AssertionError(f"compiled {text!r}")

    monkeypatch.setattr(safe, "_pattern", refuse)
    text = "".join(map(chr, range(0x20, 0x7F)))
    assert escape(text) is text
    assert xml_safe(text) is text


def _report(message: str) -> CheckDocument:
    finding = Finding("dims-ambiguous", "warning", "3", f"name {message}", "1", 12, message, "4/body")
    model = ModelCheck("m.xml", True, 11, 5, None, (finding,), (), (f"note {message}",))
    return CheckDocument(True, (model, ModelCheck("clean.xml", True, 11, 1, None, (), ())))


def test_printable_returns_what_holds_nothing_to_escape_as_it_is() -> None:
    clean = check_paths([SAMPLES / "all_reductions.xml", SAMPLES / "dynamic.xml"])
    assert printable(clean) is clean  # not copied: every string is printable ASCII
    assert printable(clean) == _plain_printable(clean)
    report = _report("plain")
    assert printable(report) is report


def test_printable_copies_only_what_it_escapes() -> None:
    report = _report(HOSTILE)
    safe_report = printable(report)
    assert safe_report == _plain_printable(report)
    assert safe_report.models[1] is report.models[1]  # the clean model is shared
    assert safe_report.models[0].findings[0].message == _plain_escape(HOSTILE)
    nested: Any = {"k\n": [HOSTILE, 1, None, (2.5, "x")], "clean": ["a", 1]}
    assert printable(nested) == _plain_printable(nested)
    assert printable(nested)["clean"] is nested["clean"]


def test_table_pads_cells_with_colour_codes_by_their_visible_width() -> None:
    rows = [["\033[32mok\033[0m", "x"], ["mismatch", "\033[31my\033[0m"]]
    assert table(rows, ["status", "v"]).splitlines() == [
        "  status    v",
        "  \033[32mok\033[0m        x",
        "  mismatch  \033[31my\033[0m",
    ]


def test_check_text_of_a_hostile_report_is_the_plain_rules() -> None:
    report = _report(HOSTILE)
    text = check_text(report, verbose=True)
    assert _plain_escape(HOSTILE) in text
    assert not UNSAFE.search(text.replace("\n", ""))
