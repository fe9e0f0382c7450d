"""The library's documents as a person reads them: headings, aligned tables, one verdict line."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ovreduce.backends.openvino import VIRTUAL_DEVICES
from ovreduce.cli.render.check_text import check_text, shape_text, table
from ovreduce.cli.render.safe import escape, printable, quoted
from ovreduce.cli.render.style import Style
from ovreduce.cli.render.width import fit_lines
from ovreduce.cli.render.words import counted
from ovreduce.reports.common import layer_path
from ovreduce.reports.run import BLIND

if TYPE_CHECKING:  # the documents other than check's are defined on first use: not for an annotation
    from ovreduce.reports.audit import AuditDocument, AuditInput
    from ovreduce.reports.conform import ConformDocument
    from ovreduce.reports.devices import Device, DevicesDocument
    from ovreduce.reports.inspect import InspectDocument, LayerView, PortView
    from ovreduce.reports.run import RunDocument

__all__ = [
    "audit_text",
    "check_text",
    "conform_text",
    "devices_text",
    "inspect_text",
    "run_text",
    "shape_text",
    "table",
]


def _axes(axes: Sequence[int] | None, unknown: str) -> str:
    return unknown if axes is None else "[" + ",".join(map(str, axes)) + "]"


def _bool(value: bool) -> str:
    return str(value).lower()


def inspect_text(
    doc: InspectDocument, style: Style | None = None, *, detail: bool = False, width: int | None = None
) -> str:
    """The inspect document as a table (or, for one layer, as a detailed listing)."""
    doc = printable(doc)
    st = style or Style()
    out = [
        f"{st.bold(doc.path)}  IR v{doc.ir_version}, {counted(doc.layer_count, 'layer')}, "
        f"{counted(doc.reduction_count, 'reduction')}"
    ]
    if detail:
        for entry in doc.layers:
            out.append(_layer_detail(entry, st))
        return fit_lines("\n".join(out), width) + "\n"
    rows = []
    for e in doc.layers:
        red = e.reduction
        ins = " ".join(
            (shape_text(i.shape) if i.shape_resolved else "?") + f":{i.element_type or '?'}" for i in e.inputs
        )
        outs = " ".join(shape_text(o.declared_shape) if o.declared_has_dims else "(no dims)" for o in e.outputs)
        if red is not None:
            extra = f"axes={_axes(red.axes, '?')} keep_dims={_bool(red.keep_dims)} -> " + (
                shape_text(red.inferred_output_shape) if red.inferred_output_resolved else "unresolved"
            )
            status: str = red.status
        else:
            extra = ", ".join(f"{k}={v}" for k, v in e.attributes.items() if k not in ("offset", "size"))
            status = ""
        rows.append([layer_path(e.body_path, e.layer_id), e.layer_name, e.type, ins, outs, extra, status])
    out.append(table(rows, ["id", "name", "type", "inputs", "declared outputs", "details", "status"], width=width))
    return fit_lines("\n".join(out), width) + "\n"


def _port_text(p: PortView) -> str:
    why = f": {p.shape_reason}" if p.shape_reason else ""
    return (
        f"{p.element_type or '?'} {shape_text(p.shape) if p.shape_resolved else 'unresolved'} ({p.shape_origin}{why}); "
        f"declared {shape_text(p.declared_shape) if p.declared_has_dims else '(no dims)'} {p.precision or ''}"
    )


def _layer_detail(e: LayerView, st: Style) -> str:
    where = layer_path(e.body_path, e.layer_id)
    lines = [f"\n{st.bold(e.type)} {quoted(e.layer_name)} (id {where}, {e.version}, line {e.line})"]
    if e.attributes:
        lines.append("  attributes: " + ", ".join(f"{k}={quoted(v)}" for k, v in e.attributes.items()))
    for i in e.inputs:
        p = i.producer
        source = "nothing" if p is None else f"{p.type} {quoted(p.layer_name)} (id {p.layer_id}) port {p.port}"
        lines.append(f"  input {i.port}: {_port_text(i)}; from {source}")
    for o in e.outputs:
        lines.append(f"  output {o.port}: {_port_text(o)}" + (f"; names {', '.join(o.names)}" if o.names else ""))
    red = e.reduction
    if red is not None:
        axes = "not constant" if red.axes is None else str(list(red.axes))
        lines.append(f"  axes: {axes} ({red.axes_kind}); keep_dims: {_bool(red.keep_dims)}")
        inferred = shape_text(red.inferred_output_shape) if red.inferred_output_resolved else "unresolved"
        lines.append(f"  inferred output: {inferred}; status: {red.status}")
    for f in e.findings:
        lines.append(f"  {st.severity(f.severity)} {f.code}: {f.message}")
    return "\n".join(lines)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _count(mismatched: int | None, total: int | None) -> str:
    return f"{'-' if mismatched is None else mismatched}/{'-' if total is None else total}"


def _run_precision(requested: str, effective: str | None, executed: str | None) -> str:
    """The requested precision; the compiled model's inference precision where it differs; and what the reduction
    executed in (OpenVINO's execution graph) where that differs from the inference precision: a bf16 graph may run
    its reduction in f32."""
    graph = effective or requested
    if executed is None or executed == graph:
        return requested if graph == requested else f"{requested} (runs in {graph})"
    if graph == requested:
        return f"{requested} (reduction ran in {executed})"
    return f"{requested} ({graph} graph, reduction ran in {executed})"


def run_text(doc: RunDocument, source: str = "", style: Style | None = None, *, width: int | None = None) -> str:
    """A run document for a person: the layer, the inputs, each backend, each comparison, the verdict."""
    doc, source = printable(doc), escape(source)
    st = style or Style()
    layer = doc.layer
    out = [
        f"{st.bold(source)}  layer {layer_path(doc.body_path, layer.layer_id)} {quoted(layer.layer_name)}: "
        f"{layer.type} axes={_axes(layer.axes, 'runtime')} keep_dims={_bool(layer.keep_dims)} ({layer.element_type})"
    ]
    for i in doc.inputs:
        out.append(f"  input {i.name}: {shape_text(i.shape)} {i.datatype}")
    out += _platform_lines(doc.openvino, doc.devices)
    for note in doc.notes:
        out.append(st.dim(f"  note: {note}"))
    rows = []
    for r in doc.results:
        status = st.green("ok") if r.ok else st.red("FAILED")
        prec = "" if r.precision is None else _run_precision(r.precision, r.effective_precision, r.runtime_precision)
        rows.append([r.backend, status, shape_text(r.shape) if r.shape is not None else "-",
                     r.datatype or "-", f"{r.seconds * 1000:.2f} ms", prec])  # fmt: skip
    out.append(table(rows, ["backend", "status", "shape", "datatype", "time", "precision"], width=width))
    for r in doc.results:
        if r.error:
            out.append(f"  {r.backend}: {st.red(r.error)}")
        for note in r.notes:
            out.append(st.dim(f"  {r.backend}: note: {note}"))
    for c in doc.comparisons:
        verdict = st.green("AGREE") if c.ok else st.red("DISAGREE")
        line = f"  {c.reference} vs {c.candidate}: {verdict}"
        if c.error:
            out.append(f"{line}: {c.error}")
            continue
        tol = "exact" if c.exact else f"atol {_num(c.atol)}, rtol {_num(c.rtol)}"
        out.append(
            f"{line}  max abs {_num(c.max_abs_error)}, max rel {_num(c.max_rel_error)}, "
            f"{c.mismatched}/{c.total} mismatched ({tol})"
        )
        if c.total == c.undefined:  # no value to compare: the shapes agree, nothing more is known
            why = f"all {c.total} of its elements are undefined" if c.total else "it is empty"
            out.append(f"    no value was compared: {why}; the backends agree on the output's shape only")
        elif c.undefined:
            verb = "is" if c.undefined == 1 else "are"
            out.append(f"    {c.undefined} of the {counted(c.total, 'element')} {verb} undefined, not compared")
        if c.first_mismatch:
            fm = c.first_mismatch
            out.append(
                f"    first mismatch at {fm['index']}: {c.reference}={fm['reference']} {c.candidate}={fm['candidate']}"
            )
            if c.nonfinite_mismatched:
                out.append("    no tolerance would pass: elements mismatched on a non-finite value")
            elif not c.exact:
                out.append(
                    f"    would pass with atol >= {_num(c.required_atol)} (at this rtol) or "
                    f"rtol >= {_num(c.required_rtol)} (at this atol)"
                )
        if any(c.nan.values()) or any(c.inf.values()):
            failed = f"; {c.nonfinite_mismatched} mismatched on them" if c.nonfinite_mismatched else ""
            counts = "  ".join(
                f"{kind}: {c.reference} {found['reference']}, {c.candidate} {found['candidate']}"
                for kind, found in (("NaN", c.nan), ("Inf", c.inf))
            )
            out.append(f"    {counts}{failed}")
    verdict = {
        "agree": st.green(f"all {len(doc.results)} backends ran and agree")
        + (f", but {BLIND} (see the note)" if any(f"agree {BLIND}: " in n for n in doc.notes) else ""),
        "nothing-compared": st.green(f"{doc.results[0].backend} ran; nothing to compare (one backend)")
        if doc.results
        else "nothing ran",
        "failed": st.red(f"{', '.join(r.backend for r in doc.results if not r.ok)} failed"),
        "disagree": st.red("backends disagree"),
    }[doc.outcome]
    out.append(f"  result: {verdict}")
    return fit_lines("\n".join(out), width) + "\n"


def _precisions(counts: dict[str, int]) -> str:
    names = {"unknown": "not in the execution graph (fused)"}
    return ", ".join(f"{names.get(p, p)} ({n})" for p, n in counts.items()) or "-"


def audit_text(doc: AuditDocument, style: Style | None = None, *, width: int | None = None) -> str:
    """The audit as a table of reductions, worst first."""
    doc = printable(doc)
    st = style or Style()
    out = [f"{st.bold(doc.model)}  {doc.device}, precision {doc.precision}"]
    if doc.error:  # what was established by then: nothing; each reduction is listed with why
        out.append(f"  {st.red(doc.error)}")
        out += [_input_line(i) for i in doc.inputs]
        out += [f"  {layer_path(layer.body_path, layer.layer_id or '-')} {quoted(layer.layer_name)} {layer.type}: "
                f"{st.yellow('not audited')}: {layer.not_established or layer.error or 'the model did not run'}"
                for layer in doc.layers]  # fmt: skip
        out += [st.dim(f"  note: {note}") for note in doc.notes]
        return fit_lines("\n".join(out), width) + "\n"
    runs = f"  precision: requested {doc.precision}, compiled model infers in {doc.effective_precision or 'unknown'}"
    if doc.layers:
        runs += f"; reductions execute in {_precisions(doc.reduction_precisions)}"
        if doc.plain_reduction_precisions != doc.reduction_precisions:
            runs += f" (in the plain run: {_precisions(doc.plain_reduction_precisions)})"
    out.append(runs)
    out += _platform_lines(doc.openvino, doc.devices)
    for i in doc.inputs:
        out.append(_input_line(i))
    rows = []
    with_drift = any(layer.drift_split is not None for layer in doc.layers)
    for layer in doc.layers:
        status = {
            "ok": st.green("ok"), "drift": st.red("DRIFT"), "not-established": st.yellow("NOT ESTABLISHED"),
            "not-audited": st.yellow("NOT AUDITED"),
        }.get(layer.status, st.red("ERROR"))  # fmt: skip
        row = [
            layer_path(layer.body_path, layer.layer_id or "-"), layer.layer_name, layer.type,
            shape_text(layer.input_shape),
            layer.runtime_precision or "-",
            _num(layer.max_abs_error), _num(layer.max_rel_error), _count(layer.mismatched, layer.total),
            _num(layer.required_atol), _num(layer.required_rtol),
        ]  # fmt: skip
        if with_drift:
            split = layer.drift_split
            drifts = () if split is None else (split.total, split.from_input, split.added)
            row += [_rel(part.max_rel) for part in drifts] or ["-", "-", "-"]
        if doc.steps:
            row.append("-" if layer.step is None else str(layer.step))
        rows.append([*row, status])
    header = ["id", "name", "type", "input", "runs in", "max abs", "max rel", "mismatched", "min atol", "min rtol"]
    if with_drift:
        header += ["drift rel", "from input", "added"]
    if doc.steps:
        header.append("step")
    if rows:
        out.append(table(rows, [*header, "status"], width=width))
        out.append(st.dim("  runs in: the precision the reduction executes in (execution graph); max abs/rel, "
                          "mismatched, min atol/rtol: its own error against the reference computed from the input "
                          "it received, which alone makes a row ERROR"))  # fmt: skip
        if with_drift:
            limit = (f"; DRIFT: drift rel above the --fail-on-drift limit {_num(doc.fail_on_drift)}"
                     if doc.fail_on_drift is not None else "; reported, not judged (see --fail-on-drift)")  # fmt: skip
            out.append(st.dim("  drift rel: the output against an f32 run of the whole model, relative to the f32 "
                              "value; it splits into from input (the reference on the received input against the "
                              "f32 run: drift the layers before it caused) + added (the reduction's own error, "
                              "relative to the same f32 value), so drift rel <= from input + added"
                              + limit))  # fmt: skip
    else:
        out.append("  the model has no reductions")
    for layer in doc.layers:
        if layer.error:
            out.append(f"  {layer.layer_name}: {st.red(layer.error)}")
        if layer.not_established:
            what = "not audited" if layer.status == "not-audited" else "not established"
            out.append(f"  {layer.layer_name}: {what}: {layer.not_established}")
        for note in layer.notes:
            out.append(st.dim(f"  {layer.layer_name}: note: {note}"))
    if doc.target is not None:
        out += _target_lines(doc, st, width)
    moved = [f for f in doc.final_outputs if not f.identical]
    for f in doc.final_outputs:
        state = "identical" if f.identical else f"max abs {_num(f.max_abs_diff)}, max rel {_num(f.max_rel_diff)}"
        out.append(f"  final output {f.name}: audited vs plain run: {state}")
    for note in doc.notes:
        out.append(st.dim(f"  note: {note}"))
    bad = sum(1 for layer in doc.layers if layer.status == "error")
    drifted = sum(1 for layer in doc.layers if layer.status == "drift")
    parts = [f"{bad} reduction(s) outside tolerance"] if bad else []
    if drifted:
        parts.append(f"{drifted} reduction(s) drift above {_num(doc.fail_on_drift)}")
    target = doc.target
    lost = sum(1 for layer in doc.layers if layer.target is not None and layer.target.failed)
    if target is not None and lost:
        parts.append(f"{lost} reduction(s) overflow or leave the tolerance in {target.precision}")
    if not doc.ok:
        verdict = st.red(", ".join(parts) or "failed")
    elif not doc.layers:
        verdict = st.yellow("no reduction to audit")
    elif doc.complete:
        verdict = st.green("every reduction within tolerance")
    else:
        verdict = st.yellow(_partial(doc.coverage))
    splits = [layer.drift_split for layer in doc.layers if layer.drift_split is not None]
    if splits and not drifted:
        worst = max(math.inf if s.total.max_rel is None else s.total.max_rel for s in splits)
        verdict += f"; largest drift from the f32 run {_rel(None if math.isinf(worst) else worst)} relative"
    if target is not None and not target.counts and not doc.error:
        verdict += f"; {target.precision}: no reduction to examine"
    elif target is not None and not lost and not doc.error:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(target.counts.items()))
        examined = sum(n for status, n in target.counts.items() if status != "not-established")
        said = ("no overflow" if examined == sum(target.counts.values()) else
                f"no overflow in the {examined} examined" if examined else "nothing established")  # fmt: skip
        verdict += f"; {target.precision}" + (" (emulated)" if target.emulated else "") + f": {said} ({counts})"
    out.append(f"  result: {verdict}" + (f"; {len(moved)} final output(s) moved" if moved else ""))
    return fit_lines("\n".join(out), width) + "\n"


def _virtual(device: str) -> bool:
    """Whether ``device`` stands for others (``AUTO``, ``HETERO:CPU``...)."""
    return device.split(":", 1)[0].split(".", 1)[0].upper() in VIRTUAL_DEVICES


def _target_lines(doc: AuditDocument, st: Style, width: int | None) -> list[str]:
    """The reductions against the target precision: a table, each row's message, the notes."""
    target = doc.target
    assert target is not None
    unseen = "a virtual device, which reports no precision" if _virtual(target.device) else "no device here ran it"
    where = (f"emulated in NumPy for {target.device}: {unseen}" if target.emulated
             else f"emulated, and compared with {target.executed_on} running it")  # fmt: skip
    out = [f"  target {target.precision} ({where}; largest finite value {_num(target.finite_max)})"]
    rows = []
    for layer in doc.layers:
        t = layer.target
        if t is None:
            continue
        status = {"protected": st.green("protected"), "headroom": st.green("headroom"),
                  "not-established": st.yellow("NOT ESTABLISHED")}.get(t.status, st.red(t.status.upper()))  # fmt: skip
        flushed = "-" if t.underflowed is None else str(t.underflowed)
        lost = "-" if t.overflowed is None else str(t.overflowed)
        device = "-" if t.device_agrees is None else ("agrees" if t.device_agrees else st.red("differs"))
        rows.append([layer_path(layer.body_path, layer.layer_id or "-"), layer.layer_name, _num(t.largest),
                     "-" if t.headroom is None else f"x{_num(t.headroom)}", lost, flushed,
                     _num(t.max_rel_error), device, status])  # fmt: skip
    if rows:
        header = ["id", "name", "largest", "headroom", "inf/NaN", "to 0", "max rel", "device", target.precision]
        out.append(table(rows, header, width=width))
    for layer in doc.layers:
        t = layer.target
        if t is not None and t.status not in ("headroom", "protected"):
            out.append(f"  {layer.layer_name}: {target.precision}: " + (st.red(t.message) if t.failed else t.message))
    for note in target.notes:
        out.append(st.dim(f"  note: {note}"))
    return out


def _input_line(i: AuditInput) -> str:
    """A model input of an audit or conform: name, shape, element type and how it was made."""
    return f"  input {i.name}: {shape_text(i.shape)} {i.element_type} ({i.origin})"


def _partial(coverage: dict[str, int]) -> str:
    """The verdict of an audit that failed nothing but did not establish every reduction."""
    gaps = []
    if coverage.get("not-established"):
        gaps.append(f"{coverage['not-established']} not established (each row says why: an input that cannot show an "
                    f"error, or a kernel the model runs that was not observed)")  # fmt: skip
    if coverage.get("not-audited"):
        gaps.append(f"{coverage['not-audited']} not audited (see their notes)")
    return (
        f"no reduction outside tolerance, but coverage is partial: {coverage.get('ok', 0)} of "
        f"{counted(coverage.get('reductions', 0), 'reduction')} established within tolerance; {', '.join(gaps)}"
    )


def _rel(value: float | None) -> str:
    """A relative difference; None is infinite (the f32 value is 0 and this is not)."""
    return "inf" if value is None else _num(value)


def conform_text(doc: ConformDocument, style: Style | None = None, *, width: int | None = None) -> str:
    """The conformance document: one row per ONNX node."""
    doc = printable(doc)
    st = style or Style()
    mapping = (doc.devices[0].inference_precisions or {}) if doc.devices else {}
    ran = mapping.get(doc.precision)
    runs = f" (runs in {ran})" if ran and ran != doc.precision else ""
    out = [f"{st.bold(doc.model)}  opset {doc.opset}, {doc.device}, precision {doc.precision}{runs}"]
    if doc.error:
        out.append(f"  {st.red(doc.error)}")
    for i in doc.inputs:
        out.append(_input_line(i))
    rows = []
    for n in doc.nodes:
        labels = {"ok": st.green("ok"), "not-observable": st.yellow("not observable")}
        status = labels.get(n.status, st.red(n.status.upper()))
        rows.append([n.node, f"{n.op_type}-{n.version}" if n.version else n.op_type,
                     _num(n.max_abs_error), _num(n.max_rel_error), _count(n.mismatched, n.total), status])  # fmt: skip
    if rows:
        out.append(table(rows, ["node", "op", "max abs", "max rel", "mismatched", "status"], width=width))
    else:
        out.append("  the model has no mean or reduce nodes")
    for n in doc.nodes:
        detail = [n.error] if n.error else []
        detail += n.notes
        if n.first_mismatch:
            fm = n.first_mismatch
            detail.append(f"first mismatch at {fm['index']}: onnx={fm['reference']} openvino={fm['candidate']}")
        if n.dequantized_max_abs_diff:
            detail.append(f"dequantized max abs difference {_num(n.dequantized_max_abs_diff)}")
        for d in detail:
            out.append(f"  {n.node}: {d}")
    if doc.saved_ir:
        out.append(f"  converted IR saved to {doc.saved_ir}")
    for note in doc.notes:
        out.append(st.dim(f"  note: {note}"))
    verdict = (
        st.green("every node conforms") if doc.ok else st.red("conversion does not conform (or could not be checked)")
    )
    blind = sum(any(note.startswith(f"it conforms {BLIND}") for note in n.notes) for n in doc.nodes)
    if doc.ok and blind:
        verdict += f", but {blind} of them {BLIND} (see its note)" if blind > 1 else f", but one {BLIND} (see its note)"
    out.append(f"  result: {verdict}")
    return fit_lines("\n".join(out), width) + "\n"


def _reductions_run(device: Device) -> str:
    """``bf16 natively, f16 through f32``: how the device executes reductions of the narrow float types."""
    return ", ".join(
        f"{t} natively" if p == t else f"{t} through {p}"
        for t, p in (device.reduction_precisions or {}).items()
        if t != "f32"
    )


def _requested(device: Device) -> str:
    """``f16=bf16 bf16=bf16 default=bf16``: the inference precision each requested precision gets."""
    return " ".join(f"{asked}={got}" for asked, got in (device.inference_precisions or {}).items() if asked != "f32")


def _platform_lines(openvino: str | None, devices: tuple[Device, ...]) -> list[str]:
    """What the results depend on: per OpenVINO device, how it executes bf16/f16 reductions."""
    return [
        f"  {d.device} (OpenVINO {openvino}) runs reductions: {_reductions_run(d) or 'not reported'}" for d in devices
    ]


def _device_row(d: Device) -> list[str]:
    return [d.device, d.full_name or "", " ".join(d.capabilities or ()), d.default_inference_precision or "",
            _reductions_run(d) or "-", _requested(d) or "-"]  # fmt: skip


def devices_text(doc: DevicesDocument, *, width: int | None = None) -> str:
    """The OpenVINO devices as a table: name, full name, capabilities, default precision, how bf16 and f16
    reductions execute, and the inference precision each requested precision gets."""
    doc = printable(doc)
    rows = [_device_row(d) for d in doc.devices]
    header = ["device", "full name", "capabilities", "default precision", "reductions run", "asked=infers in"]
    lines = [table(rows, header, indent="", width=width)]
    if doc.openvino:
        lines.append(f"OpenVINO {doc.openvino}")
    return fit_lines("\n".join(lines), width) + "\n"
