"""Text that fits the terminal: how wide it is, tables that wrap or stack, lines that wrap.

Only a terminal has a width. When standard output is not a terminal (a pipe, a file, a test capturing it),
:func:`terminal_width` is ``None`` and every renderer prints exactly what it always has: the golden files
record that form. On a terminal the width is ``COLUMNS`` or what the terminal reports
(:func:`shutil.get_terminal_size`); ``OVREDUCE_WIDTH=N`` forces a width even when not on a terminal (tests,
or a pager that is wider than it says) and ``OVREDUCE_WIDTH=0`` turns fitting off.

Tables first give up room in their free-text columns (names, details, findings), widest first, and wrap
those cells on spaces (inside a word only when a word alone is over 20 columns); columns that hold numbers, counts and
statuses keep their full width (their headers may wrap). When even that does not fit, each row is printed
as ``header: value`` pairs packed into as few lines as the width allows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ovreduce.cli.render.safe import columns
from ovreduce.cli.render.terminal import MIN_WIDTH, terminal_width

__all__ = ["MIN_WIDTH", "fit_lines", "fit_table", "terminal_width", "visible_len"]

_ANSI = re.compile(r"\033\[[0-9;]*m")
_LEADING_CODES = re.compile(r"^((?:\033\[[0-9;]*m)+)( +)")
_NUMERIC = re.compile(r"^(-|[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|inf|nan|\d+/\d+|-/-|[-\d]+/[-\d]+)$")


def visible_len(text: str) -> int:
    """The number of columns ``text`` takes on a terminal (:func:`~ovreduce.cli.render.safe.columns`: a wide
    character two), ANSI colour codes not counted."""
    return columns(_ANSI.sub("", text) if "\033" in text else text)


def _tokens(text: str) -> list[str]:
    """``text`` split into words and single spaces; colour codes stay glued to their word."""
    return [t for t in re.split(r"( )", text) if t]


def _break_word(word: str, width: int) -> list[str]:
    """A word wider than ``width`` in pieces of at most ``width`` visible columns, each of one character at least
    (colour codes are dropped from it)."""
    plain = _ANSI.sub("", word)
    if plain.isascii():
        return [plain[i : i + width] for i in range(0, len(plain), width)] or [""]
    pieces, piece = [], ""
    for ch in plain:
        if piece and columns(piece + ch) > width:
            pieces.append(piece)
            piece = ""
        piece += ch
    return [*pieces, piece] if piece else pieces or [""]


def wrap(text: str, width: int, rest: int | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` visible columns (``rest`` for every line after the first),
    broken on spaces where it can be; colour codes are closed at the end of a line and reopened on the next."""
    first = max(width, 1)
    if visible_len(text) <= first:
        return [text]
    lines: list[str] = []

    def room() -> int:  # the first line has ``first`` columns, the others ``rest``
        return first if not lines else max(rest or width, 1)

    line = ""
    for token in _tokens(text):
        if token == " ":
            if line and visible_len(line) < room():
                line += " "
            continue
        if visible_len(line) + visible_len(token) <= room():
            line += token
            continue
        if line.strip():
            lines.append(line.rstrip())
            line = ""
        while visible_len(token) > room():
            piece = _break_word(token, room())[0]
            if line.strip():
                lines.append(line.rstrip())
                line = ""
            lines.append(piece)
            token = _ANSI.sub("", token)[len(piece) :]
        line = token
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return _balanced(lines)


def _balanced(lines: list[str]) -> list[str]:
    """Each line closes the colour it leaves open and the next line reopens it (a pager or a terminal that
    clears a line then shows the right colours)."""
    if not any("\033[" in line for line in lines):
        return lines
    out, active = [], ""
    for line in lines:
        text = active + line if active else line
        codes = _ANSI.findall(text)
        active = "" if not codes or codes[-1] == "\033[0m" else "".join(codes[len(codes) - 1 :])
        out.append(text + ("\033[0m" if active else ""))
    return out


def fit_lines(text: str, width: int | None) -> str:
    """Every line of ``text`` wrapped to ``width`` (continuation lines indented two more than the line);
    ``text`` itself when ``width`` is None."""
    if width is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if visible_len(line) <= width:
            out.append(line)
            continue
        line = _LEADING_CODES.sub(r"\2\1", line)  # "<dim>  note" -> "  <dim>note": the indent is the spaces
        lead = len(line) - len(line.lstrip(" "))
        first, rest = " " * lead, " " * min(lead + 2, width // 2)
        body = wrap(line.strip(" "), width - len(first), width - len(rest))
        out.append(first + body[0])
        out += [rest + part for part in body[1:]]
    return "\n".join(out)


def _is_numeric(column: Sequence[str]) -> bool:
    cells = [_ANSI.sub("", c).strip() for c in column]
    return all(not c or _NUMERIC.match(c) for c in cells)


def _floor(header: str, column: Sequence[str]) -> int:
    """The narrowest a column may become: numbers and short one-word values keep their width (the header
    may wrap onto a second line); free text may wrap between words, so down to its longest word (words over 20
    columns may be broken)."""
    word = max(columns(w) for w in header.split()) if header.strip() else 1
    cells = max((visible_len(c) for c in column), default=0)
    if _is_numeric(column) or all(" " not in _ANSI.sub("", c) and visible_len(c) <= 10 for c in column):
        return max(cells, word)
    longest = max((columns(w) for c in column for w in _ANSI.sub("", c).split()), default=0)
    return min(max(cells, visible_len(header)), max(8, word, min(longest, 20)))


def fit_table(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str, width: int) -> str:
    """The table of :func:`ovreduce.cli.render.text.table` in at most ``width`` columns."""
    columns = [[row[i] for row in rows] for i in range(len(header))]
    widths = [max([visible_len(h), *(visible_len(c) for c in col)]) for h, col in zip(header, columns, strict=True)]
    floors = [_floor(h, col) for h, col in zip(header, columns, strict=True)]
    budget = width - len(indent) - 2 * (len(header) - 1)
    while sum(widths) > budget:
        shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
        if not shrinkable:
            return _stacked(rows, header, indent, width)
        widest = max(shrinkable, key=lambda i: (widths[i] - floors[i], widths[i]))
        widths[widest] -= 1
    lines: list[str] = []
    for row in [header, *rows]:
        cells = [wrap(cell, widths[i]) for i, cell in enumerate(row)]
        for k in range(max(len(c) for c in cells)):
            parts = []
            for i, cell in enumerate(cells):
                text = cell[k] if k < len(cell) else ""
                parts.append(text + " " * (widths[i] - visible_len(text)))
            lines.append((indent + "  ".join(parts)).rstrip())
    return "\n".join(lines)


def _stacked(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str, width: int) -> str:
    """Each row as ``header: value`` pairs (empty cells left out) packed into lines of ``width``
    (continuation lines indented)."""
    room = max(width - len(indent), 8)
    lines: list[str] = []
    for row in rows:
        line = ""
        for h, cell in zip(header, row, strict=True):
            if not _ANSI.sub("", cell).strip():  # an empty cell says nothing in this form
                continue
            pair = f"{h}: {cell}" if h else cell
            if not line:
                line = pair
            elif visible_len(line) + 2 + visible_len(pair) <= room:
                line += "  " + pair
            else:
                lines.append(line)
                line = "  " + pair
        lines.append(line)
    out: list[str] = []
    for line in lines:
        lead = "  " if line.startswith("  ") else ""
        out += [indent + lead + part for part in wrap(line[len(lead) :], room - len(lead))]
    return "\n".join(out)
