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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ovreduce._openvino import clean_message, core
from ovreduce.backends.openvino import PRECISIONS, check_device, from_tensor, precision_name, to_tensor
from ovreduce.compare import Comparison, compare, default_tolerances
from ovreduce.errors import InputError
from ovreduce.ir.dtypes import element_type
from ovreduce.ops.reduce import REDUCTIONS
from ovreduce.reference.openvino import reduce_with_notes
from ovreduce.reports import AuditDocument, AuditInput, AuditLayer, FinalOutput, comparison_fields
from ovreduce.tensors import concrete_shape, conform_array, generate

__all__ = ["AuditReport", "LayerAudit", "MarkedRun", "audit_model", "model_inputs", "run_marked"]


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


def model_inputs(
    ov_model: Any, given: Mapping[str, npt.NDArray[Any]] | None, seed: int, max_elements: int | None = None
) -> tuple[dict[int, npt.NDArray[Any]], list[AuditInput], list[str]]:
    """Arrays for every model input, keyed by input index: given (by tensor or Parameter name) or seeded.

    Raises:
        InputError: a name matches no input, or an array does not fit its input.
    """
    from ovreduce._openvino import partial_shape

    given = dict(given or {})
    rng = np.random.default_rng(seed)
    arrays: dict[int, npt.NDArray[Any]] = {}
    described: list[AuditInput] = []
    notes: list[str] = []
    used: set[str] = set()
    for index, port in enumerate(ov_model.inputs):
        names = set(port.get_names()) | {port.get_node().get_friendly_name(), str(index)}
        etype = element_type(port.get_element_type().get_type_name())
        shape = partial_shape(port.get_partial_shape())
        label = port.get_any_name() if port.get_names() else port.get_node().get_friendly_name()
        match = next((n for n in sorted(names) if n in given), None)
        if match is not None:
            used.add(match)
            array = conform_array(np.asarray(given[match]), etype, shape, f"input {label!r}")
            origin = "given"
        else:
            dims, chosen = concrete_shape(shape, f"input {label!r}")
            notes += chosen
            array = generate(etype, dims, rng)
            origin = f"seed {seed}"
        if max_elements is not None and array.size > max_elements:
            from ovreduce.errors import LimitExceededError

            raise LimitExceededError(
                f"input {label!r} has {array.size} elements, more than the limit of {max_elements}"
            )
        arrays[index] = array
        described.append(AuditInput(label, array.shape, etype.name, origin))
    unknown = set(given) - used
    if unknown:
        options = ", ".join(sorted({p.get_any_name() for p in ov_model.inputs if p.get_names()}))
        raise InputError(f"input {sorted(unknown)[0]!r} names no model input (inputs: {options or 'unnamed'})")
    return arrays, described, notes


def _config(precision: str) -> dict[str, str]:
    return {} if precision == "default" else {"INFERENCE_PRECISION_HINT": precision}


@dataclass
class MarkedRun:
    """What one run of a model with marked tensors gave."""

    outputs: list[npt.NDArray[Any]]  # the model's own outputs
    marked: list[npt.NDArray[Any]]  # the marked tensors, in the order they were asked for
    effective_precision: str | None
    runtime_precision: dict[str, str]  # node name -> the precision it executes in


def run_marked(
    ov_model: Any, marks: list[Any], inputs: Mapping[int, npt.NDArray[Any]], device: str, precision: str
) -> MarkedRun:
    """Run ``ov_model`` once with ``marks`` (OpenVINO outputs) added as model outputs.

    Raises whatever OpenVINO raises.
    """
    original = len(ov_model.outputs)
    added = ov_model.add_outputs(marks) if marks else []
    compiled = core().compile_model(ov_model, device, _config(precision))
    try:
        effective = precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
    except Exception:  # a plugin without the property
        effective = None
    request = compiled.create_infer_request()
    tensors = {i: to_tensor(a, element_type_name(ov_model.inputs[i])) for i, a in inputs.items()}
    request.infer(tensors)
    outputs = [from_tensor(request.get_output_tensor(i)) for i in range(len(ov_model.outputs))]
    index = {j: next(i for i, o in enumerate(ov_model.outputs) if o == a) for j, a in enumerate(added)}
    return MarkedRun(
        outputs[:original], [outputs[index[j]] for j in range(len(added))], effective, _runtime_precisions(compiled)
    )


def _runtime_precisions(compiled: Any) -> dict[str, str]:
    """Node name -> execution precision, from the compiled model's execution graph (where it has one)."""
    out: dict[str, str] = {}
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            if "runtimePrecision" in info:
                for name in str(info["originalLayersNames"].astype(str)).split(","):
                    out.setdefault(name.strip(), precision_name(info["runtimePrecision"].astype(str)))
    except Exception:  # a plugin without an execution graph
        return {}
    return out


def element_type_name(port: Any) -> str:
    return str(element_type(port.get_element_type().get_type_name()).name)


def audit_model(
    xml_path: str,
    bin_path: str | None = None,
    *,
    inputs: Mapping[str, npt.NDArray[Any]] | None = None,
    seed: int = 0,
    device: str = "CPU",
    precision: str = "default",
    atol: float | None = None,
    rtol: float | None = None,
    progress: Any = None,
    max_elements: int | None = None,
) -> AuditDocument:
    """Audit every reduction of the model at ``xml_path`` on ``device`` at ``precision``.

    A failure of OpenVINO (reading, compiling, inferring) is reported in the document, not raised.

    Raises:
        InputError: unusable inputs or an unknown precision.
        IRSyntaxError: the file is not XML at all (empty, binary, another format): not a model to audit.
        DeviceNotAvailableError: the device is not available.
    """
    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    check_device(device)
    start = time.perf_counter()
    ids = _layer_ids(xml_path, bin_path)
    try:
        ov_model = core().read_model(xml_path, bin_path) if bin_path else core().read_model(xml_path)
    except Exception as exc:  # OpenVINO refusing the model is a finding
        return AuditReport(xml_path, device, precision, None, [], [], [], f"OpenVINO could not read the model: "
                           f"{clean_message(exc)}", seconds=time.perf_counter() - start).document  # fmt: skip
    arrays, described, notes = model_inputs(ov_model, inputs, seed, max_elements)
    nodes = [n for n in ov_model.get_ordered_ops() if n.get_type_name() in REDUCTIONS]
    marks = [m for n in nodes for m in (n.input_value(0), n.input_value(1), n.output(0))]

    def read() -> Any:
        return core().read_model(xml_path, bin_path) if bin_path else core().read_model(xml_path)

    truth: MarkedRun | None = None
    try:
        plain = run_marked(read(), [], arrays, device, precision)
        audited = run_marked(ov_model, marks, arrays, device, precision)
        if audited.effective_precision not in ("f32", None) or precision != "f32":
            fresh = read()
            fresh_nodes = {n.get_friendly_name(): n for n in fresh.get_ordered_ops() if n.get_type_name() in REDUCTIONS}
            truth_marks = [fresh_nodes[n.get_friendly_name()].output(0) for n in nodes]
            truth = run_marked(fresh, truth_marks, arrays, device, "f32")
    except Exception as exc:  # compile or inference failure of the whole model
        failed = f"OpenVINO failed: {clean_message(exc)}"
        return AuditReport(xml_path, device, precision, None, described, [], [], failed, notes,
                           time.perf_counter() - start).document  # fmt: skip
    layers = []
    for k, node in enumerate(nodes):
        data, axes, out = audited.marked[3 * k : 3 * k + 3]
        layer = _audit_layer(node, ids.get(node.get_friendly_name()), data, axes, out, atol, rtol)
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
            progress.update(1)
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
    return AuditReport(xml_path, device, precision, effective, described, layers, finals, None, notes,
                       time.perf_counter() - start).document  # fmt: skip


def _layer_ids(xml_path: str, bin_path: str | None) -> dict[str, str]:
    """IR layer ids by name (names used once only), to tie OpenVINO's nodes back to the file.

    A file that is not XML raises :class:`IRSyntaxError`; any other problem our parser has is left for
    OpenVINO to judge (it may read what ovreduce's parser refuses), and gives no ids.
    """
    from ovreduce.errors import IRSyntaxError, OvReduceError
    from ovreduce.ir.parser import load_ir

    try:
        model = load_ir(xml_path, bin_path)
    except IRSyntaxError:
        raise
    except OvReduceError:
        return {}
    counts: dict[str, int] = {}
    for layer in model.layers:
        counts[layer.name] = counts.get(layer.name, 0) + 1
    ids = {layer.name: layer.id for layer in model.layers if counts[layer.name] == 1}
    model.close()
    return ids


def _drift(
    truth: npt.NDArray[Any], out: npt.NDArray[Any], etype: str, count: int, atol: float | None, rtol: float | None
) -> Comparison:
    """This layer's output against the same layer in an f32 run of the whole model."""
    per_output = count // max(out.size, 1) if out.size else 1
    d_atol, d_rtol = default_tolerances(etype, None, per_output)
    return compare(
        truth, out, reference_name="f32 run", candidate_name="audited run",
        atol=d_atol if atol is None else atol, rtol=d_rtol if rtol is None else rtol,
    )  # fmt: skip


def _allowance(op_type: str, data: npt.NDArray[Any], axes: npt.NDArray[Any], keep_dims: bool, etype: str) -> Any:
    """How far rounding the captured input to its storage type can move a result: eps of the type times
    the sum (Sum, L1) or mean (Mean) of the magnitudes reduced; None for the other reductions."""
    from ovreduce.compare import machine_epsilon

    if op_type not in ("ReduceSum", "ReduceMean", "ReduceL1") or data.dtype.kind not in "fV":
        return None
    mass, _ = reduce_with_notes("ReduceL1" if op_type != "ReduceMean" else "ReduceMean",
                                np.abs(data.astype(np.float64)), axes, keep_dims)  # fmt: skip
    return machine_epsilon(etype) * np.asarray(mass, dtype=np.float64)


def _audit_layer(
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
    count = data.size // max(expected.size, 1) if expected.size else 1
    d_atol, d_rtol = default_tolerances(etype, None, count)
    layer.comparison = compare(
        expected, out, reference_name="numpy", candidate_name="openvino",
        atol=d_atol if atol is None else atol, rtol=d_rtol if rtol is None else rtol,
        allowance=_allowance(op_type, data, axes, keep_dims, etype),
    )  # fmt: skip
    return layer
