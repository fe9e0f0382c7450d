"""The check report as a person reads it (``ovreduce check``'s default output), with the table and shape
notation every text renderer shares: the part of :mod:`~ovreduce.cli.render.text` that ``check`` compiles
and imports, without the renderers of the other commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ovreduce.cli.render.safe import columns, printable, quoted
from ovreduce.cli.render.style import Style
from ovreduce.cli.render.words import counted
from ovreduce.reports.common import layer_path

if TYPE_CHECKING:
    from ovreduce.reports.check import CheckDocument, ModelCheck

__all__ = ["check_text", "shape_text", "table"]


def shape_text(shape: Any) -> str:
    """A JSON shape (list/None) in OpenVINO's notation."""
    if shape is None:
        return "[...]"
    return "[" + ",".join(["?" if d == -1 else str(d) for d in shape]) + "]"


def table(rows: Sequence[Sequence[str]], header: Sequence[str], indent: str = "  ", width: int | None = None) -> str:
    """Left-aligned columns; cells may hold ANSI codes (their width is measured without them). With a
    ``width`` (a terminal's), the table is fitted to it (:func:`~ovreduce.cli.render.width.fit_table`)."""
    import re

    if width is not None:
        from ovreduce.cli.render.width import fit_table

        return fit_table(rows, header, indent, width)

    ansi = re.compile(r"\033\[[0-9;]*m")

    def visible(cell: str) -> int:  # a cell without ESC has no code to leave out; a wide character takes two columns
        return columns(ansi.sub("", cell)) if "\033" in cell else columns(cell)

    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            n = visible(cell)
            if n > widths[i]:
                widths[i] = n
    lines = []
    for row in [header, *rows]:
        cells = [cell + " " * (widths[i] - visible(cell)) for i, cell in enumerate(row)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def _counts(model: ModelCheck) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for f in model.findings:
        counts[f.severity] += 1
    return counts


def check_text(
    report: CheckDocument, style: Style | None = None, *, verbose: bool = False, width: int | None = None
) -> str:
    """The check report as a person reads it: one block per model, then a summary line."""
    report = printable(report)
    st = style or Style()
    out: list[str] = []
    for m in report.models:
        if m.error is not None:
            label = "NOT CHECKED" if m.not_checked else "UNREADABLE"
            out.append(f"{st.bold(m.path)}  {st.red(label)}  [{m.error.code}]")
            out.append(f"  {m.error.message}")
            out.append("")
            continue
        c = _counts(m)
        verdict = st.green("OK") if m.ok else st.red("FAIL")
        tally = ", ".join(f"{n} {k}{'s' if n != 1 and k != 'info' else ''}" for k, n in c.items() if n)
        out.append(
            f"{st.bold(m.path)}  {verdict}  IR v{m.ir_version}, {counted(m.layer_count or 0, 'layer')}, "
            f"{counted(len(m.reductions), 'reduction')}" + (f"; {tally}" if tally else "")
        )
        if m.reductions:
            rows = []
            colour = {"ok": st.green, "mismatch": st.red, "error": st.red}
            for r in m.reductions:
                status = colour.get(r.status, st.yellow)(r.status)
                row = [
                    layer_path(r.body_path, r.layer_id),
                    r.layer_name,
                    r.type,
                    "runtime"
                    if r.axes is None and r.axes_kind == "runtime"
                    else ("?" if r.axes is None else "[" + ",".join(map(str, r.axes)) + "]"),
                    "true" if r.keep_dims else "false",
                    shape_text(r.input_shape) if r.input_shape_resolved else "unresolved",
                    shape_text(r.declared_output_shape) if r.declared_has_dims else "(no dims)",
                    shape_text(r.inferred_output_shape) if r.inferred_output_resolved else "-",
                ]
                if r.openvino_checked:
                    row.append(shape_text(r.openvino_output_shape) if r.openvino_output_resolved else "-")
                row.append(status)
                rows.append(row)
            header = ["id", "name", "type", "axes", "keep_dims", "input", "declared", "inferred"]
            if any(r.openvino_checked for r in m.reductions):
                header.append("openvino")
            header.append("status")
            out.append(table(rows, header, width=width))
        shown = [f for f in m.findings if verbose or f.severity != "info"]
        for f in shown:
            where = "model"
            if f.layer_id is not None:
                where = f"layer {layer_path(f.body_path, f.layer_id)} {quoted(f.layer_name or '')}"
            if f.port is not None:
                where += f" port {f.port}"
            out.append(f"  {st.severity(f.severity, f'{f.severity:<7}')} {f.code}: {where}: {f.message}")
        out += [f"  {st.dim('note')}    {note}" for note in m.notes]
        hidden = len(m.findings) - len(shown)
        if hidden:
            out.append(st.dim(f"  ({counted(hidden, 'info finding')} not shown; use --verbose)"))
        out.append("")
    clean = sum(1 for m in report.models if m.ok)
    unreadable = sum(1 for m in report.models if m.error is not None and m.error.code.startswith("ir"))
    not_checked = sum(1 for m in report.models if m.error is not None) - unreadable  # a bad option, a crash
    failing = len(report.models) - clean - unreadable - not_checked
    out.append(
        f"{counted(len(report.models), 'model')} checked: {clean} clean, {failing} with errors, {unreadable} unreadable"
        + (f", {not_checked} not checked" if not_checked else "")
    )
    if width is None:  # not a terminal: the text as it is (what fit_lines gives)
        return "\n".join(out) + "\n"
    from ovreduce.cli.render.width import fit_lines

    return fit_lines("\n".join(out), width) + "\n"
