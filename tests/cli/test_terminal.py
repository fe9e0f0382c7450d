"""The CLI on a terminal: every command's text fits 60, 80 and 120 columns; piped, it is what it was.

``OVREDUCE_WIDTH`` forces a width as a terminal would give it (ovreduce.cli.render.width); one test runs the
command on a real pseudo-terminal to check that the terminal's own width is used without it. The piped form
is pinned by the golden files (tests/golden: check and inspect text) and by the comparison below.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from ovreduce.cli.render.width import fit_table, wrap
from tests.cli.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
ALL = str(SAMPLES / "all_reductions.xml")
ONNX = str(ROOT / "tests" / "golden" / "models" / "several_reductions.onnx")
ANSI = re.compile(r"\033\[[0-9;]*m")

COMMANDS = {
    "check": ["check", str(SAMPLES), "-v"],
    "inspect": ["inspect", str(SAMPLES / "broken" / "stale_output.xml")],
    "inspect-all": ["inspect", ALL, "--all"],
    "inspect-layer": ["inspect", str(SAMPLES / "rmsnorm.xml"), "--layer", "5"],
    "run": ["run", ALL, "--layer", "mean_last"],
    "audit": ["audit", ALL, "--precision", "f32"],
    "conform": ["conform", ONNX],
    "devices": ["devices"],
}
WIDTHS = (60, 80, 120)


def _text(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    status, out, err = run_cli(capsys, *argv)
    assert status in (0, 1), err
    return status, re.sub(r"\d+\.\d\d ms", "0.00 ms", out)  # run: the measured times


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_line_fits_the_width_and_nothing_is_lost(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """At 60, 80 and 120 columns no line is wider than the terminal, the exit status is the piped one,
    and every word of the piped output is still there (wrapping moves words, never drops them; numbers
    stay whole)."""
    argv = COMMANDS[name]
    monkeypatch.delenv("OVREDUCE_WIDTH", raising=False)
    status, plain = _text(capsys, argv)
    numbers = set(re.findall(r"\d+\.\d+e[-+]\d+|\d+/\d+|\[[-?\d,]+\]", plain))
    for width in WIDTHS:
        monkeypatch.setenv("OVREDUCE_WIDTH", str(width))
        fitted_status, fitted = _text(capsys, argv)
        assert fitted_status == status
        too_wide = [line for line in fitted.splitlines() if len(ANSI.sub("", line)) > width]
        assert too_wide == [], f"{name} at {width} columns"
        words = "".join(fitted.split())
        for number in numbers:  # every number, count and shape appears unbroken
            assert number in fitted or len(number) > width - 4, (name, width, number)
        assert len(words) >= len("".join(plain.split())) * 0.9, (name, width)
        if max(len(line) for line in plain.splitlines()) <= width:  # (a run's times pad its table by their width)
            lines = [[" ".join(line.split()) for line in text.splitlines()] for text in (fitted, plain)]
            assert lines[0] == lines[1], f"{name} fits {width} columns as it is: it is printed as it is"


def test_piped_output_is_unchanged_by_the_width_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """OVREDUCE_WIDTH=0 (fitting off) and no OVREDUCE_WIDTH give the same bytes (stdout is not a terminal)."""
    monkeypatch.delenv("OVREDUCE_WIDTH", raising=False)
    _, plain = _text(capsys, COMMANDS["audit"])
    monkeypatch.setenv("OVREDUCE_WIDTH", "0")
    _, off = _text(capsys, COMMANDS["audit"])
    assert off == plain
    assert max(len(line) for line in plain.splitlines()) > 120  # the audit table is wide when piped


@pytest.mark.parametrize("forced", ["9" * 5000, "0" * 5000 + "80", "0" * 5000])
def test_a_width_of_thousands_of_digits_is_read_as_a_number(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, forced: str
) -> None:
    """A width of more digits than Python's int() converts (4,300) ended the command in an internal error; it is
    the number it writes (leading zeros left out), one past any line the widest of its own."""
    monkeypatch.delenv("OVREDUCE_WIDTH", raising=False)
    _, plain = _text(capsys, COMMANDS["check"])
    monkeypatch.setenv("OVREDUCE_WIDTH", forced.lstrip("0")[:4] or "0")
    _, expected = _text(capsys, COMMANDS["check"])
    monkeypatch.setenv("OVREDUCE_WIDTH", forced)
    _, fitted = _text(capsys, COMMANDS["check"])
    assert fitted == expected
    if forced.lstrip("0")[:1] != "8":
        assert [" ".join(line.split()) for line in fitted.splitlines()] == [
            " ".join(line.split()) for line in plain.splitlines()
        ]


def _on_a_terminal(argv: list[str], columns: int, *, colour: bool, env: dict[str, str] | None = None) -> list[str]:
    """``ovreduce ARGV`` on a pseudo-terminal ``columns`` wide (no COLUMNS, no OVREDUCE_WIDTH): its lines."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "OVREDUCE_WIDTH", "NO_COLOR")} | {
        "TERM": "xterm-256color",
        **(env or {}),
    }
    if not colour:
        env["NO_COLOR"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "ovreduce.cli", *argv], cwd=ROOT, env=env,
                            stdout=slave, stderr=subprocess.DEVNULL)  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) in (0, 1)
    return b"".join(chunks).decode().replace("\r\n", "\n").splitlines()


def test_a_real_terminal_gives_its_width() -> None:
    """On a pseudo-terminal 60 columns wide, inspect --all fits it."""
    lines = _on_a_terminal(["inspect", ALL, "--all"], 60, colour=False)
    assert len(lines) > 20
    assert max(len(line) for line in lines) <= 60
    assert not any("\033[" in line for line in lines)


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, True), ({"TERM": "dumb"}, False), ({"NO_COLOR": "1"}, False), ({"NO_COLOR": ""}, True)],
    ids=["colour-terminal", "term-dumb", "no-color", "no-color-empty"],
)
def test_colours_follow_term_and_no_color(env: dict[str, str], coloured: bool) -> None:
    """A terminal that shows no colour (``TERM=dumb``: Emacs' shell, a CI log) got ANSI escapes; ``NO_COLOR`` turns
    them off when it is set and not empty, as https://no-color.org says."""
    lines = _on_a_terminal(["check", ALL], 100, colour=True, env=env)
    assert any("\033[" in line for line in lines) is coloured, lines


def test_colours_on_a_terminal_are_not_counted_and_close_on_each_line() -> None:
    """The audit on a 60-column colour terminal: colour codes take no room, and a line that wraps inside a
    coloured note closes its colour and the next line reopens it."""
    lines = _on_a_terminal(COMMANDS["audit"], 60, colour=True)
    assert any("\033[" in line for line in lines)
    assert max(len(ANSI.sub("", line)) for line in lines) <= 60
    for line in lines:
        codes = ANSI.findall(line)
        assert not codes or codes[-1] == "\033[0m", repr(line)


def test_fit_table_keeps_numbers_whole_and_wraps_text() -> None:
    rows = [["17", "a rather long layer name with words", "1.23e-05", "0/40"]]
    text = fit_table(rows, ["id", "name", "max abs", "mismatched"], "  ", 40)
    assert max(len(line) for line in text.splitlines()) <= 40
    assert "1.23e-05" in text and "0/40" in text
    assert wrap("abc def ghi", 7) == ["abc def", "ghi"]
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_machine_formats_ignore_the_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    argv = ["check", str(SAMPLES / "broken"), "--format", fmt]
    monkeypatch.delenv("OVREDUCE_WIDTH", raising=False)
    _, plain, _ = run_cli(capsys, *argv)
    monkeypatch.setenv("OVREDUCE_WIDTH", "40")
    _, narrow, _ = run_cli(capsys, *argv)
    untimed = re.compile(r' time="[0-9.]+"')  # JUnit's times are measured, run by run
    assert untimed.sub("", narrow) == untimed.sub("", plain)
    assert max(len(line) for line in plain.splitlines()) > 40


def _terminal_columns(line: str) -> int:  # as a terminal shows it: East Asian wide two, combining marks none
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.mark.parametrize("width", [100, 60, 40])
def test_wide_characters_take_two_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, width: int
) -> None:
    """A layer named in CJK characters (two columns each on a terminal) was measured one column per character: its
    row overflowed the width, and every cell after it stood right of its header. The output fits, and aligns."""
    name = "平均値_高さと幅の平均値を計算する層"
    xml = (SAMPLES / "spec_examples.xml").read_text(encoding="utf-8").replace('name="mean_hw"', f'name="{name}"')
    (tmp_path / "cjk.xml").write_text(xml, encoding="utf-8")
    (tmp_path / "cjk.bin").write_bytes((SAMPLES / "spec_examples.bin").read_bytes())
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("OVREDUCE_WIDTH", str(width))
    _, out, _ = run_cli(capsys, "check", str(tmp_path / "cjk.xml"))
    assert name[:4] in out
    assert [line for line in out.splitlines() if _terminal_columns(line) > width] == []
    monkeypatch.setenv("OVREDUCE_WIDTH", "0")  # not fitted: the columns still line up under their headers
    _, out, _ = run_cli(capsys, "check", str(tmp_path / "cjk.xml"))
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("id"))
    row = next(line for line in lines if name in line)
    column = _terminal_columns(header[: header.index("type")])
    assert _terminal_columns(row[: row.index("ReduceMean")]) == column, (header, row)
