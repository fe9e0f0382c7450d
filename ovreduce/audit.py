"""``ovreduce audit``: which reduction of a whole model loses accuracy on this device and precision?

The model runs once on OpenVINO with every reduction's inputs and output marked as extra model outputs
(as Polygraphy's "mark all" does for other runtimes). Each reduction is then recomputed with the NumPy
reference (:mod:`ovreduce.reference.openvino`) from its *captured* input, so a reduction is judged only on
its own error, and compared with what OpenVINO produced. The tolerance is that of the model's element type
(an f32 model is judged against f32 accuracy whatever precision it ran in), so a run in bf16 shows the
reductions that drift.

Marking outputs can change how OpenVINO fuses the graph, so the model also runs once plain, and the report
shows how far its final outputs moved between the two runs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ovreduce._openvino import clean_message, read_ir
from ovreduce.backends.openvino import (
    MarkedRun,
    check_device,
    check_precision,
    fit_model,
    model_inputs,
    run_marked,
)  # fmt: skip
from ovreduce.compare import Comparison, compare, machine_epsilon, tolerances
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.model import IRModel
from ovreduce.ops.reduce import ReductionOp
from ovreduce.ops.registry import reductions
from ovreduce.reference.evaluate import reduce_with_notes
from ovreduce.reports import AuditDocument, AuditInput, AuditLayer, FinalOutput, comparison_fields
from ovreduce.shapes import PartialShape

__all__ = ["AuditReport", "LayerAudit", "audit_model"]


@dataclass
class LayerAudit:
    """One reduction of the audited model, as the audit works it out."""

    name: str
    type: str
    layer_id: str | None
    keep_dims: bool
    axes: list[int] | None
    input_shape: list[int] | None
    element_type: str | None
    comparison: Comparison | None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    drift: Comparison | None = None  # this layer's output vs the same layer in an f32 run
    runtime_precision: str | None = None  # what the reduction executes in, in the audited graph
    plain_runtime_precision: str | None = None  # ... and in the plain graph (None: fused away)

    @property
    def ok(self) -> bool:
        own = self.error is None and self.comparison is not None and self.comparison.ok
        return own and (self.drift is None or self.drift.ok)

    @property
    def status(self) -> Literal["ok", "drift", "error"]:
        if self.error is not None or self.comparison is None or not self.comparison.ok:
            return "error"
        return "drift" if self.drift is not None and not self.drift.ok else "ok"

    def sort_key(self) -> tuple[int, float]:
        worst = 0.0
        for c in (self.comparison, self.drift):
            if c is not None:
                worst = max(worst, c.max_rel_error if c.max_rel_error is not None else float("inf"))
        return (0 if not self.ok else 1, -worst)

    @property
    def document(self) -> AuditLayer:
        c = self.comparison
        return AuditLayer(
            layer_id=self.layer_id,
            layer_name=self.name,
            type=self.type,
            keep_dims=self.keep_dims,
            axes=None if self.axes is None else tuple(self.axes),
            input_shape=None if self.input_shape is None else tuple(self.input_shape),
            element_type=self.element_type,
            ok=self.ok,
            status=self.status,
            error=self.error if c is None else c.error,
            runtime_precision=self.runtime_precision,
            plain_runtime_precision=self.plain_runtime_precision,
            notes=tuple(self.notes),
            drift=self.drift,
            **comparison_fields(c),
        )


@dataclass
class AuditReport:
    """The ``ovreduce.audit/v1`` document."""

    model: str
    device: str
    precision: str
    effective_precision: str | None
    inputs: list[AuditInput]
    layers: list[LayerAudit]
    final_outputs: list[FinalOutput]
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and all(layer.ok for layer in self.layers)

    @property
    def document(self) -> AuditDocument:
        """The ``ovreduce.audit/v1`` document: failing reductions first, then by decreasing error."""
        return AuditDocument(
            ok=self.ok,
            model=self.model,
            device=self.device,
            precision=self.precision,
            effective_precision=self.effective_precision,
            error=self.error,
            inputs=tuple(self.inputs),
            layers=tuple(layer.document for layer in sorted(self.layers, key=LayerAudit.sort_key)),
            final_outputs=tuple(self.final_outputs),
            notes=tuple(self.notes),
            seconds=round(self.seconds, 3),
        )


def audit_model(
    model: IRModel,
    *,
    inputs: Mapping[str, npt.NDArray[Any]] | None = None,
    seed: int = 0,
    device: str = "CPU",
    precision: str = "default",
    atol: float | None = None,
    rtol: float | None = None,
    progress: Callable[[], object] | None = None,
    max_elements: int | None = None,
    shapes: Mapping[str, PartialShape] | None = None,
) -> AuditDocument:
    """Audit every reduction of ``model`` on ``device`` at ``precision``.

    OpenVINO reads the very bytes ``model`` was parsed from, and the model is reshaped to its inputs (given
    arrays, ``shapes`` by input name, or defaults for dynamic dims: see
    :func:`ovreduce.backends.openvino.model_inputs`) before it compiles. A failure of OpenVINO (reading, compiling,
    inferring) is reported in the document, not raised. ``progress`` is called once per reduction checked.

    Raises:
        InputError: unusable inputs or an unknown precision.
        DeviceNotAvailableError: the device is not available.
    """
    check_precision(precision)
    check_device(device)
    start = time.perf_counter()
    ids = _layer_ids(model)

    def read() -> Any:
        return read_ir(model.xml, None if model.weights is None else model.weights.view())

    def fitted() -> Any:  # another copy, reshaped as the first was
        fresh = read()
        fit_model(fresh, arrays)
        return fresh

    try:
        ov_model = read()
    except Exception as exc:  # OpenVINO refusing the model is a finding
        return AuditReport(model.source, device, precision, None, [], [], [], f"OpenVINO could not read the model: "
                           f"{clean_message(exc)}", seconds=time.perf_counter() - start).document  # fmt: skip
    arrays, described, notes = model_inputs(ov_model, inputs, seed, max_elements, shapes)
    kinds = reductions()
    nodes = [n for n in ov_model.get_ordered_ops() if n.get_type_name() in kinds]
    marks = [m for n in nodes for m in (n.input_value(0), n.input_value(1), n.output(0))]
    truth: MarkedRun | None = None
    try:
        plain = run_marked(fitted(), [], arrays, device, precision)
        audited = run_marked(ov_model, marks, arrays, device, precision)
        if audited.effective_precision not in ("f32", None) or precision != "f32":
            fresh = fitted()
            fresh_nodes = {n.get_friendly_name(): n for n in fresh.get_ordered_ops() if n.get_type_name() in kinds}
            truth_marks = [fresh_nodes[n.get_friendly_name()].output(0) for n in nodes]
            truth = run_marked(fresh, truth_marks, arrays, device, "f32")
    except Exception as exc:  # compile or inference failure of the whole model
        failed = f"OpenVINO failed: {clean_message(exc)}"
        return AuditReport(model.source, device, precision, None, described, [], [], failed, notes,
                           time.perf_counter() - start).document  # fmt: skip
    layers = []
    for k, node in enumerate(nodes):
        data, axes, out = audited.marked[3 * k : 3 * k + 3]
        layer = _audit_layer(kinds[node.get_type_name()], node, ids.get(node.get_friendly_name()), data, axes, out,
                             atol, rtol)  # fmt: skip
        name = node.get_friendly_name()
        layer.runtime_precision = audited.runtime_precision.get(name)
        layer.plain_runtime_precision = plain.runtime_precision.get(name)
        if truth is not None:
            layer.drift = _drift(truth.marked[k], out, layer.element_type or "f32", data.size, atol, rtol)
        if (
            layer.plain_runtime_precision
            and layer.runtime_precision
            and (layer.plain_runtime_precision != layer.runtime_precision)
        ):
            layer.notes.append(
                f"in the plain run this reduction executes in {layer.plain_runtime_precision}, in the audited run "
                f"in {layer.runtime_precision}: observing it changed its precision"
            )
        layers.append(layer)
        if progress is not None:
            progress()
    effective = audited.effective_precision
    finals = []
    for i, (a, b) in enumerate(zip(plain.outputs, audited.outputs, strict=True)):
        port = ov_model.outputs[i]
        c = compare(a, b, reference_name="plain run", candidate_name="audited run", atol=0.0, rtol=0.0, exact=False)
        name = port.get_any_name() if port.get_names() else f"output {i}"
        finals.append(FinalOutput(name, c.mismatched == 0, c.max_abs_error, c.max_rel_error))
    if any(not f.identical for f in finals):
        notes.append(
            "marking the reductions' tensors as outputs changed OpenVINO's graph (fusions), so the final outputs "
            "of the audited run differ from a plain run (see final_outputs)"
        )
    return AuditReport(model.source, device, precision, effective, described, layers, finals, None, notes,
                       time.perf_counter() - start).document  # fmt: skip


def _layer_ids(model: IRModel) -> dict[str, str]:
    """IR layer ids by name (names used once only), to tie OpenVINO's nodes back to the file."""
    counts = Counter(layer.name for layer in model.layers)
    return {layer.name: layer.id for layer in model.layers if counts[layer.name] == 1}


def _drift(
    truth: npt.NDArray[Any], out: npt.NDArray[Any], etype: str, count: int, atol: float | None, rtol: float | None
) -> Comparison:
    """This layer's output against the same layer in an f32 run of the whole model."""
    atol, rtol = tolerances(etype, None, count, out.size, atol, rtol)
    return compare(truth, out, reference_name="f32 run", candidate_name="audited run", atol=atol, rtol=rtol)


def _allowance(op: ReductionOp, data: npt.NDArray[Any], axes: npt.NDArray[Any], keep_dims: bool, etype: str) -> Any:
    """How far rounding the captured input to its storage type can move a result: eps of the type times the
    op's rounding mass (None for ops without one)."""
    mass = op.rounding_mass(data, axes, keep_dims)
    return None if mass is None else machine_epsilon(etype) * mass


def _audit_layer(
    op: ReductionOp,
    node: Any,
    layer_id: str | None,
    data: npt.NDArray[Any],
    axes: npt.NDArray[Any],
    out: npt.NDArray[Any],
    atol: float | None,
    rtol: float | None,
) -> LayerAudit:
    op_type = node.get_type_name()
    keep_dims = bool(node.get_attributes().get("keep_dims", False))
    etype = element_type(node.get_output_element_type(0).get_type_name()).name
    layer = LayerAudit(
        node.get_friendly_name(), op_type, layer_id, keep_dims,
        [int(a) for a in np.asarray(axes).reshape(-1).tolist()], list(data.shape), etype, None,
    )  # fmt: skip
    try:
        expected, notes = reduce_with_notes(op_type, data, axes, keep_dims)
    except Exception as exc:  # the reference refusing the captured tensors (e.g. runtime axes out of range)
        layer.error = f"reference failed: {exc}"
        return layer
    layer.notes = notes
    atol, rtol = tolerances(etype, None, data.size, expected.size, atol, rtol)
    layer.comparison = compare(
        expected, out, reference_name="numpy", candidate_name="openvino", atol=atol, rtol=rtol,
        allowance=_allowance(op, data, axes, keep_dims, etype),
    )  # fmt: skip
    return layer
