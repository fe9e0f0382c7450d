"""``check``: a parsed IR in, the ``ovreduce.check/v1`` document out.

* :mod:`~ovreduce.check.findings`: the table of finding codes and severities;
* :mod:`~ovreduce.check.graph`: integrity of every layer and edge;
* :mod:`~ovreduce.check.reductions`: each reduction's declared against inferred output shape;
* :mod:`~ovreduce.check.openvino`: the same model as OpenVINO reads it (engine ``"openvino"``);
* :mod:`~ovreduce.check.inspect`: the ``ovreduce.inspect/v1`` view of layers.

The layers of sub-graph bodies (``If``, ``Loop``, ``TensorIterator``, nested to any depth) are checked as
top-level layers are, with the shapes their container feeds them; their findings and reductions carry the
ids path of their body in ``body_path``. A body its layer's inputs do not feed (no rule for the layer's type, a
port map ovreduce cannot follow) is still checked, on its own declared Parameter shapes, and a note in the
model's ``notes`` says so. The OpenVINO engine compares top-level layers only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ovreduce.check.findings import ordered
from ovreduce.check.graph import graph_findings
from ovreduce.check.reductions import reduction_check
from ovreduce.errors import OvReduceError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import ParseLimits, load_ir
from ovreduce.reports import CheckDocument, ErrorInfo, Finding, ModelCheck, ReductionCheck
from ovreduce.shapes import PartialShape

__all__ = ["body_findings", "check_document", "check_model", "check_paths", "unreadable"]

Engine = Literal["native", "openvino"]


def check_model(
    model: IRModel,
    *,
    reshape: Mapping[str, PartialShape] | None = None,
    engine: Engine = "native",
    path: str | None = None,
    shapes: ShapeEngine | None = None,
) -> ModelCheck:
    """Check one parsed model: integrity findings over the whole graph and the reductions' shapes.

    Args:
        model: the parsed IR.
        reshape: what-if shapes for Parameters (by layer or tensor name).
        engine: ``"openvino"`` also reads the model with the OpenVINO runtime and compares its inferred
            shape of every layer with the declared dims.
        path: the name to show for the model (defaults to the model's source).
        shapes: an engine already run over ``model`` with the same ``reshape`` (saves a second walk).

    Raises:
        InputError: a ``reshape`` key names no Parameter.
    """
    if shapes is None:
        shapes = ShapeEngine(model, reshape)
    findings: list[Finding] = graph_findings(model, shapes)
    reports: list[ReductionCheck] = []
    for info in shapes.reductions:
        report, found = reduction_check(info, reshaped=bool(reshape))
        reports.append(report)
        findings += found
    inner, found, notes = body_findings(shapes, reshaped=bool(reshape))
    reports += inner
    findings += found
    if engine == "openvino":
        from ovreduce.check.openvino import crosscheck

        ov_findings, reports = crosscheck(model, reports, reshape)
        findings += ov_findings
    reports.sort(key=lambda r: model.graph_at(r.body_path).layer(r.layer_id).line or 0)
    return ModelCheck(
        path=path or model.source,
        ok=not any(f.severity == "error" for f in findings),
        ir_version=model.ir_version,
        layer_count=len(model.layers),
        error=None,
        findings=ordered(model, findings),
        reductions=tuple(reports),
        notes=tuple(notes),
    )


def body_findings(shapes: ShapeEngine, *, reshaped: bool) -> tuple[list[ReductionCheck], list[Finding], list[str]]:
    """The reductions and findings of every sub-graph body (nested ones too), each with its ``body_path``,
    and a note for each body its container's inputs could not feed."""
    reports: list[ReductionCheck] = []
    findings: list[Finding] = []
    notes: list[str] = []
    engines: list[tuple[str | None, ShapeEngine]] = [(None, shapes), *shapes.body_engines()]
    for path, engine in engines:
        for (layer_id, role), note in engine.body_notes.items():
            container = engine.model.layer(layer_id)
            inside = "" if path is None else f" in body {path}"
            notes.append(f"{container.where}{inside}: its {role!r} body is checked on its own declarations: {note}")
        if path is None:
            continue
        found = graph_findings(engine.model, engine)
        for info in engine.reductions:
            report, more = reduction_check(info, reshaped=reshaped)
            reports.append(replace(report, body_path=path))
            found += more
        findings += [replace(f, body_path=path) for f in found]
    return reports, findings, notes


def unreadable(path: str, error: OvReduceError) -> ModelCheck:
    """The entry of a model that could not be read or checked."""
    return ModelCheck(path, False, None, None, ErrorInfo(error.code, error.message), (), ())


def check_document(models: Sequence[ModelCheck]) -> CheckDocument:
    """The ``ovreduce.check/v1`` document of some checked models."""
    return CheckDocument(ok=all(m.ok for m in models), models=tuple(models))


def check_paths(
    paths: Sequence[Path],
    *,
    bin_path: Path | None = None,
    reshape: Mapping[str, PartialShape] | None = None,
    engine: Engine = "native",
    limits: ParseLimits = ParseLimits(),
    progress: Callable[[], object] | None = None,
) -> CheckDocument:
    """Check every model; a model that cannot be read is reported with its error, never raised.

    ``progress`` is called once after each model.
    """
    models = []
    for p in paths:
        try:
            model = load_ir(p, bin_path, limits=limits)
            try:
                models.append(check_model(model, reshape=reshape, engine=engine, path=str(p)))
            finally:
                model.close()
        except OvReduceError as exc:
            models.append(unreadable(str(p), exc))
        if progress is not None:
            progress()
    return check_document(models)
