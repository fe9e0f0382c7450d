"""``ovreduce conform``: did OpenVINO's ONNX frontend keep the semantics of the mean and reduce nodes?

The ONNX model is converted with OpenVINO's ONNX frontend and run once, with the tensors around every
ONNX reduction (ReduceMean, ReduceSum, ReduceSumSquare, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
ReduceL2, ReduceLogSum, ReduceLogSumExp, at every opset), Mean and com.microsoft QLinearReduceMean node
marked as outputs; they are located by their ONNX tensor names, which the frontend keeps. Each node's
output as OpenVINO computed it is compared with the ONNX-semantics reference (:mod:`ovreduce.reference.onnx`,
:mod:`ovreduce.reference.quantized`) applied to the node's inputs *as observed in the same run*
(initializers are read from the ONNX file). A tensor the conversion fused away makes the node "not
observable", which is reported, never skipped silently.

Numerics: the reference follows ONNX's rules (opset-specific axes, keepdims, noop_with_empty_axes,
type constraints) with wide intermediates, rounding once to the node's type (``reference.onnx``'s ``wide``: f64 for
f16/bf16/f32, the long double for f64, exact integers for an integer mean or norm): ONNX does not fix the
accumulation precision, and onnx.reference's fixed-width intermediates (inf for an f16 mean of 70,000 ones or an f32
mean of ``[3e38, 3e38]``, a negative int32 mean of ``[2147483647, 1]``) would blame OpenVINO for being right, or
call its overflow of a result the type holds (a known CPU defect) conforming. A sum or mean is allowed the rounding
of what it adds, by ``run``'s rule (:func:`ovreduce.run.rounding_mass`).
QLinearReduceMean is compared exactly on the quantized integers, and
the dequantized difference is reported too.

Known frontend defects are named in a note only when OpenVINO's output is exactly theirs (see
:func:`_what_openvino_did`): the axes attribute ignored (ReduceL1/LogSum/LogSumExp-13) and
noop_with_empty_axes skipping the whole operator (ReduceL1/L2/LogSum from 18).

Cost: linear in the model. The name index is built once; every tensor is marked at most once, and a tensor
that already is a model output is read from there (OpenVINO's ``Model.add_outputs`` searches every Result
for a port that already feeds one); only the initializers the checked nodes read are converted.
:class:`Work` counts all of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce._openvino import clean_message, read_failure
from ovreduce.backends.openvino import (
    InferenceTimeoutError,
    check_captured,
    check_device,
    check_kept,
    check_precision,
    describe_device,
    model_inputs,
    openvino_version,
    read_model,
    run_marked,
)
from ovreduce.compare import (
    DECIDING,
    Comparison,
    cannot_show_error,
    compare,
    f64_computed_note,
    masked_note,
    refuse_invalid_options,
    rounding_allowance,
    tolerances,
    too_wide,
)
from ovreduce.errors import (
    BackendError,
    InputError,
    LimitExceededError,
    MemoryLimitError,
    OvReduceError,
    check_timeout,
)
from ovreduce.files import FileError, check_regular
from ovreduce.reports.audit import AuditInput
from ovreduce.reports.conform import ConformDocument, ConformNode
from ovreduce.reports.run import BLIND, comparison_fields
from ovreduce.run import deciding_once, factors, has_factors, rounding_mass
from ovreduce.shapes import PartialShape
from ovreduce.tensors import check_external_data, tensor_nbytes

__all__ = ["ConformReport", "NodeCheck", "Work", "conform_model"]

ONNX_REDUCTIONS = (
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
)  # fmt: skip
_ONNX_TYPES = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
}  # fmt: skip


@dataclass
class NodeCheck:
    """One ONNX node of interest and what became of it, as conform works it out."""

    name: str
    op_type: str
    domain: str
    version: int | None
    observable: bool
    comparison: Comparison | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # tensor names not found in OpenVINO's model
    dequantized_max_abs_diff: float | None = None

    @property
    def ok(self) -> bool:
        return self.observable and self.error is None and self.comparison is not None and self.comparison.ok

    @property
    def status(self) -> Literal["ok", "disagree", "error", "not-observable"]:
        if not self.observable:
            return "not-observable"
        if self.error is not None:
            return "error"
        return "ok" if self.ok else "disagree"

    @property
    def document(self) -> ConformNode:
        c = self.comparison
        return ConformNode(
            node=self.name,
            op_type=self.op_type,
            domain=self.domain or "ai.onnx",
            version=self.version,
            observable=self.observable,
            missing_tensors=tuple(self.missing),
            status=self.status,
            ok=self.ok,
            error=self.error if c is None else c.error,
            notes=tuple(self.notes),
            dequantized_max_abs_diff=self.dequantized_max_abs_diff,
            **comparison_fields(c),
        )


@dataclass
class ConformReport:
    """The ``ovreduce.conform/v1`` document."""

    model: str
    opset: int | None
    device: str
    precision: str
    nodes: list[NodeCheck]
    inputs: list[AuditInput] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    saved_ir: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and all(n.ok for n in self.nodes)

    @property
    def document(self) -> ConformDocument:
        """The ``ovreduce.conform/v1`` document."""
        return ConformDocument(
            ok=self.ok,
            model=self.model,
            opset=self.opset,
            device=self.device,
            precision=self.precision,
            error=self.error,
            inputs=tuple(self.inputs),
            nodes=tuple(n.document for n in self.nodes),
            saved_ir=self.saved_ir,
            notes=tuple(self.notes),
            seconds=round(self.seconds, 3),
            openvino=openvino_version(),
            devices=(describe_device(self.device),),
        )


@dataclass
class Work:
    """What one :func:`conform_model` call did, counted: each count grows linearly with the model.

    Pass one as ``work=`` to have it filled in (tests and benchmarks measure conform's cost with it,
    not with a clock).
    """

    nodes: int = 0
    """ONNX nodes checked."""
    indexed: int = 0
    """(tensor name, OpenVINO output) pairs put in the name index, built once per model."""
    lookups: int = 0
    """Tensor names looked up (in that index, the initializers or the removed inputs): one per node input and output."""
    marks: int = 0
    """Distinct OpenVINO outputs added as model outputs: each tensor once, however many nodes read it."""
    reused: int = 0
    """Tensor reads served by an output the model already had, or by a tensor already marked."""
    initializers_read: int = 0
    """Initializers converted to arrays: only those the checked nodes read, each once."""
    result_scans: int = 0
    """Results OpenVINO's ``Model.add_outputs`` must search: all of them for each marked port that already
    feeds one (a graph output, or a port marked twice). Counted before marking; conform keeps it 0."""


_Source = tuple[Literal["known", "output", "mark", "missing"], Any]
"""Where a node's tensor comes from: ("known", array or None), ("output", index among the model's own
outputs), ("mark", index among the added outputs) or ("missing", name)."""


class _Initializers:
    """The ONNX graph's initializers by name, converted to arrays only when a checked node reads one.

    Converting every initializer up front would copy all of a large model's weights (once more besides the
    protobuf and OpenVINO's copy) to read a few axes tensors and quantization scales.
    """

    def __init__(self, onnx: Any, graph: Any, base_dir: Path | None) -> None:
        self._onnx = onnx
        self._protos = {t.name: t for t in graph.initializer}
        self._arrays: dict[str, npt.NDArray[Any]] = {}
        self._base_dir = "" if base_dir is None else str(base_dir)
        self.names = frozenset(self._protos)

    def __contains__(self, name: str) -> bool:
        return name in self._protos

    def get(self, name: str, work: Work) -> npt.NDArray[Any]:
        if name not in self._arrays:
            work.initializers_read += 1
            self._arrays[name] = np.asarray(self._onnx.numpy_helper.to_array(self._protos[name], self._base_dir))
        return self._arrays[name]


class _Sources:
    """Finds each tensor around a checked node in OpenVINO's converted model, in O(1) per tensor.

    The index of OpenVINO's outputs by tensor name is built once. A tensor that is already one of the
    model's outputs is read from there and anything else is marked once, however many nodes read it:
    OpenVINO's ``Model.add_outputs`` searches all of the model's Results for every port that already feeds
    one, so marking a graph output, or one tensor once per reader, costs O(outputs) each -- quadratic in
    a model whose thousands of reductions read one tensor or are graph outputs.
    """

    def __init__(
        self, ov_model: Any, initializers: _Initializers, removed: Mapping[str, npt.NDArray[Any]], work: Work
    ) -> None:
        self._work = work
        self._initializers = initializers
        self._removed = removed
        self._ports: dict[str, Any] = {}
        for op in ov_model.get_ordered_ops():  # topological: a tensor's producer comes before its Result
            for port in op.outputs():
                for name in port.get_names():
                    work.indexed += 1
                    self._ports.setdefault(name, port)
        self._outputs: dict[Any, int] = {}
        self._output_ports: list[Any] = []
        for index, result in enumerate(ov_model.outputs):
            self._output_ports.append(result.get_node().input_value(0))
            self._outputs.setdefault(self._output_ports[-1], index)
        self._marked: dict[Any, int] = {}
        self.marks: list[Any] = []

    def find(self, name: str, entry: NodeCheck) -> _Source:
        """Where tensor ``name`` comes from; a tensor OpenVINO's model lacks is added to ``entry.missing``."""
        self._work.lookups += 1
        if not name:
            return ("known", None)  # an omitted optional input
        if name in self._initializers:
            return ("known", self._initializers.get(name, self._work))
        if name in self._removed:
            return ("known", self._removed[name])
        port = self._ports.get(name)
        if port is None:
            entry.missing.append(name)
            return ("missing", name)
        if port in self._outputs:
            self._work.reused += 1
            return ("output", self._outputs[port])
        if port in self._marked:
            self._work.reused += 1
        else:
            self._marked[port] = len(self.marks)
            self.marks.append(port)
        return ("mark", self._marked[port])

    def producer(self, source: _Source) -> str | None:
        """The friendly name of the OpenVINO node that computes a tensor of the model (None for another source)."""
        kind, where = source
        port = self._output_ports[where] if kind == "output" else self.marks[where] if kind == "mark" else None
        return None if port is None else str(port.get_node().get_friendly_name())

    @staticmethod
    def value(source: _Source, run: Any) -> npt.NDArray[Any] | None:
        kind, where = source
        if kind == "output":
            return np.asarray(run.outputs[where])
        if kind == "mark":
            return np.asarray(run.marked[where])
        return None if kind == "missing" else where


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise BackendError("conform needs the onnx package: pip install 'ovreduce[onnx]'") from None
    return onnx


def conform_model(
    model: str | Path | bytes,
    *,
    name: str | None = None,
    inputs: Mapping[str, npt.NDArray[Any]] | None = None,
    seed: int = 0,
    device: str = "CPU",
    precision: str = "f32",
    save_ir: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    max_elements: int | None = None,
    work: Work | None = None,
    shapes: Mapping[str, PartialShape] | None = None,
    timeout: float | None = None,
) -> ConformDocument:
    """Check every mean/reduce node of an ONNX model against ONNX semantics.

    Args:
        model: the model's file, or its bytes (then tensors in external data cannot be resolved).
        name: what the document calls the model (default: the path, or "model.onnx" for bytes).
        work: filled in with counts of what conform did (its cost, linear in the model's size).
        shapes: shapes of generated inputs by name; the converted model is reshaped to them and to the given
            ``inputs`` before it compiles (see :func:`ovreduce.backends.openvino.model_inputs`).
        timeout: seconds the converted model's inference may take; past it the document says so and checks
            nothing (the inference is left running: see :func:`ovreduce.backends.openvino.abandoned`).

    OpenVINO failing to convert, compile or run the model is reported in the document, not raised.

    Raises:
        BackendError: the onnx package is missing.
        InputError: the file is not a readable ONNX model (an external data file missing, or external data
            behind model bytes), or unusable inputs.
        LimitExceededError: its sub-graphs are nested more than :data:`MAX_SUBGRAPH_DEPTH` deep.
        DeviceNotAvailableError: the device is not available.
    """
    refuse_invalid_options(atol=atol, rtol=rtol, seed=seed)
    onnx = _onnx()
    work = Work() if work is None else work
    check_precision(precision)
    check_device(device)
    check_timeout(timeout)
    start = time.perf_counter()
    deadline = None if timeout is None else time.monotonic() + timeout
    path = name or ("model.onnx" if isinstance(model, bytes) else str(model))
    base_dir = None if isinstance(model, bytes) else Path(model).parent
    if not isinstance(model, bytes):  # a FIFO would block the read forever, a device read as an empty model
        try:
            check_regular(model, "an ONNX model (.onnx) file")
        except FileError as exc:
            raise InputError(str(exc)) from None
    try:
        # External data (a large model's weights) stays on disk: OpenVINO reads it itself, and conform
        # reads only the initializers the checked nodes use (_Initializers).
        proto = (
            onnx.load_from_string(model)
            if isinstance(model, bytes)
            else onnx.load(str(model), load_external_data=False)
        )
    except Exception as exc:  # protobuf DecodeError...
        raise InputError(f"{path}: not a readable ONNX model: {_what_else(model) or exc}") from None
    if not proto.HasField("graph"):  # an empty file parses as an empty ModelProto
        raise InputError(f"{path}: not an ONNX model: it holds no graph (an empty file, or not a ModelProto)")
    _check_nesting(proto.graph, path)  # first: the walks below visit every copy of a nested body
    _check_text(proto, path)
    _check_external_data(proto.graph, base_dir, path)
    _check_graph(proto.graph, path)
    opsets = {imp.domain or "ai.onnx": imp.version for imp in proto.opset_import}
    opset = opsets.get("ai.onnx")
    _check_opset_versions(proto, path, onnx.defs.C.schema_version_map())
    _check_nodes(proto, path, onnx.defs)
    nodes = [n for n in proto.graph.node if _interesting(n)]
    report = ConformReport(path, opset, device, precision, [])
    if any(n.op_type in ("If", "Loop", "Scan") for n in proto.graph.node):
        report.notes.append("nodes inside If/Loop/Scan subgraphs are not checked")
    inner = []  # said, not checked: the verdict cannot rest on them
    for n, where in _subgraph_nodes(proto.graph):
        entry = _node(n, opsets, observable=False)
        entry.notes.append(f"not checked: it is inside {where}, and conform checks no node of a subgraph")
        inner.append(entry)
    for n, where in _function_nodes(proto):
        entry = _node(n, opsets, observable=False)
        entry.notes.append(f"not checked: it is inside {where}, and conform checks no node of a function's body")
        inner.append(entry)
    try:
        ov_model = read_model(model)
    except Exception as exc:  # the frontend refusing the model is the finding
        report.error = f"OpenVINO could not convert the model: {read_failure(exc)}"
        called = {(n.domain, n.op_type) for n in proto.graph.node}
        defined = [f"{f.domain}.{f.name}".lstrip(".") for f in proto.functions if (f.domain, f.name) in called]
        if defined:
            report.notes.append(
                f"the model itself defines {', '.join(defined)} as model-local function(s) (ModelProto.functions), "
                "whose calls OpenVINO's frontend did not convert: no extension provides them; inline them first "
                "(onnx.inliner.inline_local_functions)"
            )
        report.nodes = [_node(n, opsets, observable=False) for n in nodes]
        for entry in report.nodes:
            entry.notes.append("not converted")
        report.nodes += inner
        report.seconds = time.perf_counter() - start
        return report.document
    if save_ir:
        report.saved_ir = _save_ir(ov_model, Path(save_ir), Path(path).stem)
    initializers = _Initializers(onnx, proto.graph, base_dir)
    _check_given_axes(proto.graph, nodes, inputs or {})
    given, removed = _split_removed_inputs(proto, ov_model, inputs or {}, initializers.names)
    for name in removed:
        report.notes.append(
            f"input {name!r} is a graph input of the ONNX model but not of OpenVINO's converted model (the "
            "conversion removed it); its given value is used as that tensor's value"
        )
    for name, empty in _removed_empty_inputs(proto, ov_model, removed, initializers.names).items():
        removed[name] = empty
        report.notes.append(
            f"input {name!r} is a graph input of the ONNX model of static shape {list(empty.shape)}, which holds no "
            "elements, but not of OpenVINO's converted model (the conversion removed it): that empty tensor is used "
            "as its value"
        )
    arrays, report.inputs, notes = model_inputs(ov_model, given, seed, max_elements, shapes)
    report.notes += notes
    _deciding_inputs(nodes, opsets.get("ai.onnx", 1), ov_model, arrays, report.inputs, initializers, work, seed)
    sources = _Sources(ov_model, initializers, removed, work)
    plan: list[tuple[NodeCheck, Any, list[_Source], _Source]] = []
    for n in nodes:
        work.nodes += 1
        entry = _node(n, opsets, observable=True)
        slots = [sources.find(name, entry) for name in n.input]
        out = sources.find(n.output[0], entry)
        if entry.missing:
            entry.observable = False
            entry.notes.append(
                "OpenVINO's converted model has no tensor named "
                + ", ".join(repr(m) for m in entry.missing)
                + " (fused away by the conversion)"
            )
        plan.append((entry, n, slots, out))
        report.nodes.append(entry)
    report.nodes += inner
    check_kept(sources.marks, max_elements, what="the conformance check")
    work.marks = len(sources.marks)
    work.result_scans = _result_scans(sources.marks, len(ov_model.outputs))
    try:
        run = run_marked(ov_model, sources.marks, arrays, device, precision, deadline=deadline)
    except MemoryLimitError:  # too large for this process: the answer is the limit
        raise
    except Exception as exc:  # compile or inference failure, or the time limit
        report.error = f"OpenVINO could not run the converted model: {clean_message(exc)}"
        if isinstance(exc, InferenceTimeoutError):
            report.error = (
                f"OpenVINO did not finish running the converted model: the time limit of {timeout:g} s ran out"
            )
        why = f"the time limit of {timeout:g} s ran out" if isinstance(exc, InferenceTimeoutError) else None
        for entry in report.nodes:  # nothing was compared: not a disagreement
            if entry.observable:
                entry.error = f"not checked: {why or 'OpenVINO could not run the converted model'}"
        report.seconds = time.perf_counter() - start
        return report.document
    check_captured(sources.marks, [run], max_elements, what="the conformance check")
    if run.effective_precision not in (None, precision):
        report.notes.append(
            f"OpenVINO compiled the model for {run.effective_precision}, where {precision} was asked (its "
            f"INFERENCE_PRECISION_HINT on {device}): the model ran in {run.effective_precision}, and each node is "
            "judged on the inputs that run gave it"
        )
    for entry, n, slots, out in plan:
        if not entry.observable:
            continue
        values = [sources.value(slot, run) for slot in slots]
        got = sources.value(out, run)
        assert got is not None  # an observable node's output was found
        # (an f64 node is judged in what its last OpenVINO node executed in, where the execution graph says: OpenVINO's
        # CPU computes f64 in f32 whatever the model was compiled for)
        ran = run.runtime_precision.get(sources.producer(out) or "")
        _check_node(entry, n, values, got, opset or 1, atol, rtol, ran or run.effective_precision)
    report.seconds = time.perf_counter() - start
    return report.document


def _what_else(model: str | Path | bytes) -> str | None:
    """What a file that is no ONNX model is instead, where it is recognisably an OpenVINO IR's XML (the commonest
    mix-up), and which command reads it; None otherwise."""
    if isinstance(model, bytes):
        head = model[:512]
    else:
        try:
            with open(model, "rb") as handle:
                head = handle.read(512)
        except OSError:
            return None
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"<?xml") or text.startswith(b"<net"):
        return ("it is XML, an OpenVINO IR's .xml, which 'ovreduce check', inspect, run and audit read; conform reads "
                "an ONNX model (.onnx)")  # fmt: skip
    return None


def _check_external_data(graph: Any, base_dir: Path | None, path: str) -> None:
    """Refuse a model with a tensor (an initializer, a Constant's value, in sub-graphs too) that keeps its data in
    a file that is not there, or outside the model's folder (``../``, absolute paths, links out), without reading
    it: OpenVINO resolves the bytes of an upload against its working directory; and one whose bytes, in the file or
    in the model, or whose values (none at all too) are not what its dims need: the model's defect, not OpenVINO's
    conversion's, and read from bytes OpenVINO took one of no data for a scalar."""
    from onnx.checker import ValidationError, check_tensor
    from onnx.external_data_helper import uses_external_data
    from onnx.numpy_helper import to_array

    for holder, tensor in _tensors(graph):
        if not uses_external_data(tensor):
            needed = tensor_nbytes(tensor)
            if tensor.raw_data and needed is not None and len(tensor.raw_data) != needed:
                raise InputError(f"{path}: not a readable ONNX model: {holder} holds {len(tensor.raw_data)} bytes of "
                                 f"data, where its dims {list(tensor.dims)} need {needed}")  # fmt: skip
            if tensor.HasField("segment"):
                raise InputError(f"{path}: not a readable ONNX model: {holder} keeps its data in a segment, which "
                                 f"neither onnx nor OpenVINO reads")  # fmt: skip
            if not tensor.raw_data:  # its values in a typed field, or none at all: onnx's own checks of their count
                try:
                    check_tensor(tensor)  # (a field of the type, none for no element, no product past 2^63)
                    to_array(tensor)  # (too many values too; 4-bit types two in each int32, as onnx writes them)
                except (ValidationError, ValueError, TypeError) as exc:
                    why = str(exc).strip().splitlines()[0]
                    raise InputError(f"{path}: not a readable ONNX model: {holder} holds values its dims "
                                     f"{list(tensor.dims)} do not take: {why}") from None  # fmt: skip
            continue
        where = f"{path}: not a readable ONNX model: {holder} keeps its data in"
        if base_dir is None:
            location = next((e.value for e in tensor.external_data if e.key == "location"), "")
            raise InputError(
                f"{where} the external file {location!r}, which a model given as bytes (an upload) cannot reach: save "
                f"the model with its data inside (onnx.save_model(model, 'model.onnx', save_as_external_data=False)), "
                f"or check it by its path (ovreduce conform PATH)"
            )
        check_external_data(tensor, base_dir, where, "the model's folder")


MAX_SUBGRAPH_DEPTH = 16
"""If/Loop/Scan sub-graphs nested deeper than this are refused: OpenVINO's compile time grows exponentially with the
depth of nested Ifs, which an ONNX file can share (30 levels in a 10 KB file: minutes). An IR writes each body out, so
its size bounds the work, and its bodies may nest deeper (``ParseLimits.max_body_depth``)."""


def _check_nesting(graph: Any, path: str) -> None:
    graphs = [(graph, 0)]
    while graphs:
        current, depth = graphs.pop()
        if depth > MAX_SUBGRAPH_DEPTH:
            raise LimitExceededError(f"{path}: its If/Loop/Scan sub-graphs are nested more than {MAX_SUBGRAPH_DEPTH} "
                                     f"deep")  # fmt: skip
        for node in current.node:
            for attr in node.attribute:
                graphs.extend((g, depth + 1) for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs))


def _check_given_axes(graph: Any, nodes: list[Any], given: Mapping[str, npt.NDArray[Any]]) -> None:
    """:class:`InputError` for given axes of a reduction out of ``[-r, r-1]`` for its data, where the data's rank is
    known (a graph input's, or a given array's), as ``run`` refuses them: OpenVINO's run or the ONNX reference then
    failed, and the node was reported as a conversion that does not conform."""
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in graph.input
             if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")}  # fmt: skip
    ranks.update({name: np.asarray(array).ndim for name, array in given.items()})
    for n in nodes:
        if len(n.input) < 2 or n.input[1] not in given or n.input[0] not in ranks:
            continue
        rank = ranks[n.input[0]]
        axes = np.asarray(given[n.input[1]])
        if axes.dtype.kind not in "iu":
            continue  # (its type is the reference's to refuse)
        span = max(rank, 1)  # a scalar's axes are those of rank 1
        bad = [int(a) for a in axes.reshape(-1) if not -span <= int(a) < span]
        if bad:
            raise InputError(f"input {n.input[1]!r}: axis {bad[0]} of {n.op_type} {n.name!r} is out of range for its "
                             f"data {n.input[0]!r} of rank {rank}; expected axes in [{-span}, {span - 1}]")  # fmt: skip


# A version no operator set outside ONNX's own comes near (com.microsoft's is 1)
MAX_CUSTOM_DOMAIN_VERSION: Final = 1000


def _check_opset_versions(proto: Any, path: str, known: Mapping[str, tuple[int, int]]) -> None:
    """:class:`InputError` for an imported operator set version that none defines: OpenVINO's frontend looks an op up
    by counting the version down one at a time (at 2^62, for ever), an unused import's too. ONNX's own domains take
    the versions the installed ``onnx`` defines (the default one: those conform checks); another domain 1 to
    :data:`MAX_CUSTOM_DOMAIN_VERSION`."""
    from ovreduce.reference.onnx import MAX_OPSET

    for imported in proto.opset_import:
        domain = "" if imported.domain in ("", "ai.onnx") else imported.domain
        low, high = (1, MAX_OPSET) if domain == "" else known.get(domain, (1, MAX_CUSTOM_DOMAIN_VERSION))
        if not low <= imported.version <= high:
            what = "the default-domain opset" if domain == "" else f"version {imported.version} of the domain"
            named = f"{what} {imported.version}" if domain == "" else f"{what} {domain!r}"
            defined = (f"ONNX defines opsets {low} to {high}, the ones conform checks" if domain == "" else
                       f"ONNX defines its versions {low} to {high}" if domain in known else
                       f"an operator set outside ONNX's own is versioned {low} to {high} here")  # fmt: skip
            raise InputError(f"{path}: the model imports {named}; {defined}: export the model at one of them")


def _check_graph(graph: Any, path: str) -> None:
    """:class:`InputError` for what OpenVINO's frontend reads otherwise than the file says: a graph input's dim below
    -1 (read as 0, so the model runs on empty tensors), a tensor that two nodes write, or a node writes over a graph
    input or initializer (one of the values is observed, and compared with the other node's reference)."""
    for value in graph.input:
        dims = value.type.tensor_type.shape.dim if value.type.HasField("tensor_type") else ()
        for i, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value < -1:
                raise InputError(f"{path}: input {value.name!r} dim {i} is {dim.dim_value}; expected a size of 0 or "
                                 f"more, or a name (dim_param) for a dynamic dim")  # fmt: skip
    given = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    writers: dict[str, Any] = {}
    for node in graph.node:
        for name in filter(None, node.output):  # "": an optional output left out
            first = writers.setdefault(name, node)
            if first is not node or name in given:
                other = (
                    f"{first.op_type} {first.name!r}" if name not in given else "the graph's own input or initializer"
                )
                raise InputError(f"{path}: not a valid ONNX model: tensor {name!r} is written by {node.op_type} "
                                 f"{node.name!r} and by {other}; each tensor has one producer")  # fmt: skip


def _check_text(proto: Any, path: str) -> None:
    """:class:`InputError` for a string field of the model that is not UTF-8 text (a name of a node, a tensor, a graph
    input or output, an initializer, a value_info, an attribute; an op type, a domain...), in the graph, its sub-graphs
    and its functions, named by its place (``graph.node[2].output[0]``): protobuf hands such a field of ONNX's (whose
    strings it does not check) over as bytes, which no report can say, and OpenVINO's frontend converts it into names
    its Python API cannot hand back. A tensor's data is not read (nor copied)."""
    found = _not_text(proto)
    if found is not None:
        place, value = found
        shown = bytes(value[:60]) + (b"..." if len(value) > 60 else b"")
        raise InputError(f"{path}: not a readable ONNX model: {'.'.join(reversed(place))} is not UTF-8 text: "
                         f"{shown!r}; ONNX's names and other strings are UTF-8")  # fmt: skip


_OTHER, _STRING, _STRINGS, _MESSAGE, _MESSAGES = range(5)  # kinds of field
_KINDS: dict[Any, int] = {}  # by field descriptor
_BULKY: dict[str, tuple[tuple[str, int], ...] | None] = {}  # by message type: its fields of text and messages, if bulky


def _not_text(message: Any) -> tuple[list[str], Any] | None:
    """The place (its parts, innermost first) and the value of the first string field in ``message`` that is not text.
    (As deep as the message nests, which protobuf bounds: 100 levels.)"""
    for name, kind, value in _set_fields(message):
        if kind == _STRING:
            if not isinstance(value, str):
                return [name], value
        elif kind == _STRINGS:
            if set(map(type, value)) - {str}:
                return next(([f"{name}[{i}]"], text) for i, text in enumerate(value) if not isinstance(text, str))
        elif kind == _MESSAGE:
            found = _not_text(value)
            if found is not None:
                found[0].append(name)
                return found
        elif kind == _MESSAGES:
            for index, inner in enumerate(value):
                found = _not_text(inner)
                if found is not None:
                    found[0].append(f"{name}[{index}]")
                    return found
    return None


def _set_fields(message: Any) -> list[tuple[str, int, Any]]:
    """The name, kind and value of each field of ``message`` that is set, but of fields of other kinds than text and
    messages only where that costs nothing: a message type with fields of bytes (a tensor's data) is read field by
    field (protobuf's ``ListFields`` copies every value it lists)."""
    descriptor = message.DESCRIPTOR
    if descriptor.full_name not in _BULKY:
        fields = [(f, _kind(f)) for f in descriptor.fields]
        _BULKY[descriptor.full_name] = (
            tuple((f.name, k) for f, k in fields if k != _OTHER) if any(f.type == f.TYPE_BYTES for f, _ in fields)
            else None
        )  # fmt: skip
    named = _BULKY[descriptor.full_name]
    if named is None:
        return [(f.name, _KINDS[f] if f in _KINDS else _kind(f), v) for f, v in message.ListFields()]
    return [(name, kind, getattr(message, name)) for name, kind in named if kind != _MESSAGE or message.HasField(name)]


def _kind(field_: Any) -> int:
    if field_ not in _KINDS:
        repeated = field_.is_repeated if hasattr(field_, "is_repeated") else field_.label == field_.LABEL_REPEATED
        text, message = field_.type == field_.TYPE_STRING, field_.type == field_.TYPE_MESSAGE
        _KINDS[field_] = (_STRINGS if repeated else _STRING) if text else (_MESSAGES if repeated else _MESSAGE) \
            if message else _OTHER  # fmt: skip
    return _KINDS[field_]


_UNBOUNDED: Final = 2**31 - 1  # a schema's max_input or max_output for "or more"


def _check_nodes(proto: Any, path: str, defs: Any) -> None:
    """:class:`InputError` for a node that the model's graph, a sub-graph of it or one of its functions holds and that
    OpenVINO's frontend, or conform, cannot take as written:

    * fewer inputs or outputs than its operator's schema takes, at the version of its operator set the model (or
      the function) imports: OpenVINO's frontend dies converting some (SIGSEGV for a Mean, Sum, Max or Min with no
      inputs and for a Pad-13 with its data only, SIGFPE for a Split with no outputs) and refuses others in words;
    * an operator checked here (a reduction) with no output, in a domain whose schemas the onnx package lacks
      (com.microsoft's QLinearReduceMean);
    * an attribute that refers to a function's attribute (``ref_attr_name``) outside a function's body, where there
      is none to refer to.

    Operators the onnx package has no schema for are OpenVINO's to convert or refuse."""
    model_opsets = {imp.domain or "ai.onnx": imp.version for imp in proto.opset_import}
    graphs: list[tuple[Any, Mapping[str, int], str, bool]] = [(proto.graph, model_opsets, "", False)]
    for function in proto.functions:
        imports = {imp.domain or "ai.onnx": imp.version for imp in function.opset_import}
        graphs.append((function, imports, f"in function {function.name!r}: ", True))
    counts: dict[tuple[str, str, int | None], tuple[int, int, int, int] | None] = {}  # by operator and version
    while graphs:
        graph, opsets, where, in_function = graphs.pop()
        said = f"{path}: not a valid ONNX model: {where}"
        for index, node in enumerate(graph.node):
            domain = "" if node.domain == "ai.onnx" else node.domain
            key = (node.op_type, domain, opsets.get(domain or "ai.onnx"))
            if key not in counts:
                counts[key] = _schema_counts(defs, *key)
            schema = counts[key]
            if schema is None:
                if not any(node.output) and _interesting(node):  # ONNX writes "" for a tensor that is not there
                    raise InputError(f"{said}{_label(node, index)} has no outputs; expected one, the reduction "
                                     f"conform checks")  # fmt: skip
            elif (
                not all(node.input[: schema[0]])
                or not all(node.output[: schema[2]])
                or (len(node.input) < schema[0] or len(node.output) < schema[2])
            ):
                raise InputError(f"{said}{_label(node, index)} has {_short_of(node, key, schema)}")
            for attr in node.attribute:
                if attr.ref_attr_name and not in_function:
                    raise InputError(f"{said}attribute {attr.name!r} of {_label(node, index)} refers to the attribute "
                                     f"{attr.ref_attr_name!r} of a function (ref_attr_name), which only a node of a "
                                     f"function's body may; expected its value")  # fmt: skip
                for sub in [attr.g] if attr.HasField("g") else attr.graphs:
                    graphs.append((sub, opsets, f"{where}in the {attr.name} of {_label(node, index)}: ", in_function))


def _schema_counts(defs: Any, op_type: str, domain: str, version: int | None) -> tuple[int, int, int, int] | None:
    """The least and most inputs, the least and most outputs ONNX's schema of an operator at a version of its operator
    set gives it; None for an operator the onnx package does not define (at that version), or one not imported."""
    try:
        schema = None if version is None else defs.get_schema(op_type, version, domain)
    except defs.SchemaError:
        return None
    return None if schema is None else (schema.min_input, schema.max_input, schema.min_output, schema.max_output)


def _short_of(node: Any, key: tuple[str, str, int | None], schema: tuple[int, int, int, int]) -> str:
    """What a node short of its operator's inputs or outputs has, and what the operator takes."""
    op_type, domain, version = key
    at = f"opset {version}" if not domain else f"{domain} version {version}"
    for kind, names, low, high, does in (("input", node.input, *schema[:2], "takes"),
                                         ("output", node.output, *schema[2:], "gives")):  # fmt: skip
        span = f"{low}" if low == high else f"{low} or more" if high >= _UNBOUNDED else f"{low} to {high}"
        absent = [i for i, name in enumerate(names[:low]) if not name]
        if absent:  # ONNX's "" is a tensor that is not there: only an optional one may be so
            return (
                f"its required {kind} at position {absent[0]} absent (an empty name); ONNX's {op_type} ({at}) {does} "
                f"{span}, " + ("the first required" if low == 1 else f"the first {low} required")
            )
        if len(names) < low:
            count = f"no {kind}s" if not names else f"{len(names)} {kind}" + ("s" if len(names) > 1 else "")
            return f"{count}; ONNX's {op_type} ({at}) {does} {span}"
    raise AssertionError("a node short of nothing")


def _label(node: Any, index: int) -> str:
    """How a message names a node: by its name, else by its first output, else by its place in its graph."""
    if node.name:
        return f"node {node.name!r} ({node.op_type})"
    if node.output and node.output[0]:
        return f"the {node.op_type} node writing {node.output[0]!r}"
    return f"the {node.op_type} node at index {index}"


def _tensors(graph: Any) -> Iterator[tuple[str, Any]]:
    """Every tensor ``graph`` and the sub-graphs its nodes hold (If branches, Loop bodies...) keep, with what keeps
    it: initializers, sparse ones, and tensors in node attributes (a Constant's value)."""
    graphs = [graph]
    while graphs:
        current = graphs.pop()
        yield from ((f"initializer {t.name!r}", t) for t in current.initializer)
        for sparse in current.sparse_initializer:
            yield from ((f"sparse initializer {sparse.values.name!r}", t) for t in (sparse.values, sparse.indices))
        for node in current.node:
            for attr in node.attribute:
                holder = f"attribute {attr.name!r} of node {(node.name or node.op_type)[:80]!r}"
                sparse_tensors = [attr.sparse_tensor] if attr.HasField("sparse_tensor") else []
                for tensor in ([attr.t] if attr.HasField("t") else []) + list(attr.tensors):
                    yield holder, tensor
                for sparse in sparse_tensors + list(attr.sparse_tensors):
                    yield from ((holder, t) for t in (sparse.values, sparse.indices))
                if attr.HasField("g"):
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)


def _result_scans(marks: list[Any], results: int) -> int:
    """How many Results OpenVINO's ``add_outputs(marks)`` searches (it searches them all for every port that
    already feeds a Result, and a port repeated in ``marks`` feeds one from its second time on)."""
    scans = 0
    added: set[Any] = set()  # ports that got a new Result
    for port in marks:
        if port in added or any(t.get_node().get_type_name() == "Result" for t in port.get_target_inputs()):
            scans += results + len(added)
        else:
            added.add(port)
    return scans


def _split_removed_inputs(
    proto: Any, ov_model: Any, given: Mapping[str, npt.NDArray[Any]], initializers: AbstractSet[str]
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, npt.NDArray[Any]]]:
    """Given inputs split into those for OpenVINO's model and those naming ONNX graph inputs it removed.

    The frontend drops a graph input whose value cannot matter to it (ReduceMean's ``axes`` declared with
    shape [0]); the ONNX reference still needs that value, and the given one is the one ONNX sees.
    """
    ov_names = {str(i) for i in range(len(ov_model.inputs))}
    for port in ov_model.inputs:
        ov_names |= set(port.get_names()) | {port.get_node().get_friendly_name()}
    graph_inputs = {i.name for i in proto.graph.input} - initializers
    removed = {k: np.asarray(v) for k, v in given.items() if k in graph_inputs and k not in ov_names}
    return {k: v for k, v in given.items() if k not in removed}, removed


def _removed_empty_inputs(
    proto: Any, ov_model: Any, removed: Mapping[str, npt.NDArray[Any]], initializers: AbstractSet[str]
) -> dict[str, npt.NDArray[Any]]:
    """The ONNX graph inputs OpenVINO's converted model removed, not given, whose declared shape is static and holds no
    elements (ONNX's "default axes" as an ``axes`` input of shape [0]): their value is known without being given, the
    empty tensor of their type, which the ONNX reference reads (else the node read no value, and was said to be fused
    away)."""
    from onnx import helper

    ov_names = {str(i) for i in range(len(ov_model.inputs))}
    for port in ov_model.inputs:
        ov_names |= set(port.get_names()) | {port.get_node().get_friendly_name()}
    found: dict[str, npt.NDArray[Any]] = {}
    for graph_input in proto.graph.input:
        name = graph_input.name
        if name in ov_names or name in removed or name in initializers:
            continue
        tensor = graph_input.type.tensor_type if graph_input.type.HasField("tensor_type") else None
        if tensor is None or not tensor.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        if not dims or any(d is None for d in dims) or 0 not in dims:
            continue
        try:
            dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        except (KeyError, ValueError):
            continue
        found[name] = np.zeros([int(d or 0) for d in dims], dtype=dtype)
    return found


def _subgraph_nodes(graph: Any, where: str = "") -> Iterator[tuple[Any, str]]:
    """Every node of interest inside a subgraph (If branches, Loop and Scan bodies, nested), with where it is."""
    for n in graph.node:
        for attr in n.attribute:
            for sub in [attr.g] if attr.HasField("g") else attr.graphs:
                here = f"{where} > " if where else ""
                here += f"the {attr.name} of {n.op_type} {_called(n)!r}"
                yield from ((inner, here) for inner in sub.node if _interesting(inner))
                yield from _subgraph_nodes(sub, here)


def _function_nodes(proto: Any) -> Iterator[tuple[Any, str]]:
    """Every node of interest inside a model-local function's body (``ModelProto.functions``, sub-graphs of it too),
    with where it is."""
    for function in proto.functions:
        here = f"the model-local function {function.domain}.{function.name}".replace(" .", " ")
        yield from ((inner, here) for inner in function.node if _interesting(inner))
        for n in function.node:
            for attr in n.attribute:
                for sub in [attr.g] if attr.HasField("g") else attr.graphs:
                    inside = f"{here} > the {attr.name} of {n.op_type} {_called(n)!r}"
                    yield from ((inner, inside) for inner in sub.node if _interesting(inner))
                    yield from _subgraph_nodes(sub, inside)


def _interesting(node: Any) -> bool:
    if node.domain in ("", "ai.onnx"):
        return bool(node.op_type in ONNX_REDUCTIONS or node.op_type == "Mean")
    return bool(node.domain == "com.microsoft" and node.op_type == "QLinearReduceMean")


def _deciding_inputs(
    nodes: Sequence[Any], opset: int, ov_model: Any, arrays: dict[int, npt.NDArray[Any]], described: list[AuditInput],
    initializers: _Initializers, work: Work, seed: int,
) -> None:  # fmt: skip
    """Remake each boolean or integer model input that a ReduceMax or ReduceMin reads directly (over axes known before
    the run), not given (by any of its names, or its index), so that each slice holds the value that decides it once
    or not at all (:func:`deciding_once`). Made at fair odds, a slice of 12 booleans held it twice or more nearly
    always, and the node conformed on an input that could show no error: each output was that value, whatever a
    kernel missed; so too 8-bit integers over their whole range, in a wide slice. Likewise each float or integer
    input a ReduceProd reads directly, as factors whose products each element shows in (:func:`factors`, as ``run``
    makes them): normal values gave a product of 128 of them near 1e-20, and integers one wrapped to 0, within the
    tolerance of 0, which a kernel that gives zeros matches. And each float input a ReduceLogSum reads directly, as
    absolute values: normal ones made some slices' sums negative, whose log is NaN on both sides, passing as "NaN
    matches NaN", compared on nothing."""
    from ovreduce.reference.onnx import op_version

    ports = {name: i for i, port in enumerate(ov_model.inputs) for name in port.get_names()}
    rng = np.random.default_rng(seed)
    remade: set[int] = set()
    for n in nodes:
        product, logged = n.op_type == "ReduceProd", n.op_type == "ReduceLogSum"
        chosen = n.op_type in DECIDING or product or logged
        i = ports.get(n.input[0]) if chosen and n.domain in ("", "ai.onnx") and n.input else None
        if i is None or i in remade or described[i].origin == "given":
            continue
        kind = arrays[i].dtype.kind
        if not (has_factors(arrays[i].dtype) and (product or kind not in "iu") if product or logged else kind in "biu"):
            continue
        attrs = _attrs(n)
        if op_version(n.op_type, opset) < 18:
            axes = list(attrs.get("axes", []))
        elif len(n.input) < 2 or not n.input[1]:
            axes = []
        elif n.input[1] in initializers:
            axes = np.asarray(initializers.get(n.input[1], work)).reshape(-1).tolist()
        else:  # computed as the model runs
            continue
        if not axes and int(attrs.get("noop_with_empty_axes", 0)):
            continue
        remade.add(i)
        if logged:  # (normal values made the sums of some slices negative: NaN on both sides, compared on nothing)
            arrays[i] = np.abs(arrays[i])
            described[i] = replace(described[i], origin=f"seed {seed}, absolute values (a positive sum in each slice "
                                                        f"that {n.op_type} {_called(n)!r} reduces)")  # fmt: skip
            continue
        if product:
            arrays[i] = factors(arrays[i], axes or list(range(arrays[i].ndim)), rng)
            made = "odd factors from 3 to 7" if arrays[i].dtype.kind in "iu" else "factors of a product about 1"
            described[i] = replace(described[i], origin=f"seed {seed}, {made} of a random sign in each slice that "
                                                        f"{n.op_type} {_called(n)!r} reduces")  # fmt: skip
            continue
        arrays[i] = deciding_once(arrays[i], axes or list(range(arrays[i].ndim)), n.op_type, rng)
        value = DECIDING[n.op_type] if arrays[i].dtype.kind == "b" else "its extreme"
        described[i] = replace(described[i], origin=f"seed {seed}, {value} once or not at all in each slice that "
                                                    f"{n.op_type} {_called(n)!r} reduces")  # fmt: skip


def _node(node: Any, opsets: Mapping[str, int], *, observable: bool) -> NodeCheck:
    from ovreduce.reference.onnx import op_version

    version: int | None = None
    if node.domain in ("", "ai.onnx"):
        try:
            version = op_version(node.op_type, opsets.get("ai.onnx", 1))
        except InputError:
            version = None
    else:
        version = opsets.get(node.domain)
    return NodeCheck(_called(node), node.op_type, node.domain, version, observable)


def _called(node: Any) -> str:
    """What a report calls a node: its name, else its first output (a checked node without one is refused first)."""
    return str(node.name or next(iter(node.output), ""))


def _save_ir(ov_model: Any, folder: Path, stem: str) -> str:
    """``folder/<stem>.xml`` and ``.bin``, written into a fresh folder beside them and renamed over them: a link
    there is replaced, the file it points to left alone (OpenVINO's serializer opens the path it is given)."""
    import shutil
    import tempfile

    from openvino import save_model

    target = folder / f"{stem}.xml"
    scratch: str | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        scratch = tempfile.mkdtemp(dir=folder, prefix=".ovreduce-")
        written = Path(scratch) / target.name
        save_model(ov_model, str(written), compress_to_fp16=False)
        for suffix in (".bin", ".xml"):  # the weights first: an .xml in place never names missing weights
            os.replace(written.with_suffix(suffix), target.with_suffix(suffix))
    except (OSError, RuntimeError) as exc:  # OpenVINO's serializer raises RuntimeError ("Can't open bin file")
        said = exc.strerror if isinstance(exc, OSError) else None
        raise InputError(
            f"cannot save the converted IR in {folder}: {said or str(exc).strip().splitlines()[-1]}",
            parameter="save_ir",
        ) from None
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return str(target)


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _check_node(
    entry: NodeCheck,
    node: Any,
    values: list[npt.NDArray[Any] | None],
    got: npt.NDArray[Any],
    opset: int,
    atol: float | None,
    rtol: float | None,
    computed_in: str | None = None,
) -> None:
    """An f64 node is judged at the tolerance of the precision the model ran in (``computed_in``: OpenVINO's CPU
    computes f64 in f32, a known plugin defect, not the conversion's), with a note where f64's would fail."""
    from ovreduce.reference import onnx as onnx_ref
    from ovreduce.reference import quantized

    attrs = _attrs(node)
    undefined: npt.NDArray[np.bool_] | None = None
    try:
        if node.op_type == "QLinearReduceMean":
            q: list[Any] = (values + [None] * 5)[:5]
            q_axes = attrs.get("axes")
            expected = quantized.qlinear_reduce_mean(
                q[0], q[1], q[2], q[3], q[4], None if q_axes is None else list(q_axes), attrs.get("keepdims")
            )
            entry.comparison = compare(expected, got, reference_name="onnx", candidate_name="openvino", exact=True)
            if expected.shape == got.shape:
                want = np.asarray(quantized.dequantize(expected, q[3], q[4]), dtype=np.float64)
                have = np.asarray(quantized.dequantize(got.astype(expected.dtype), q[3], q[4]), dtype=np.float64)
                entry.dequantized_max_abs_diff = float(np.max(np.abs(want - have))) if want.size else 0.0
            return
        if node.op_type == "Mean":
            arrays = [v for v in values if v is not None]
            expected = onnx_ref.mean(*arrays, opset=opset, wide=True)
        else:
            data = values[0]
            if data is None:
                raise InputError("the data input has no value")
            version = onnx_ref.op_version(node.op_type, opset)
            since = 13 if node.op_type == "ReduceSum" else 18
            if version >= since:
                axes_value = values[1] if len(values) > 1 else None
                axes: Any = None if axes_value is None else np.asarray(axes_value).reshape(-1).tolist()
            else:
                axes = attrs.get("axes")
            axes = _once(axes, data.ndim, entry)
            keepdims = int(attrs.get("keepdims", 1))
            noop = int(attrs.get("noop_with_empty_axes", 0))
            # An empty input and a non-empty output: every output element is a mean over no elements, which ONNX
            # leaves undefined (the reference's NaN, or for integers no value at all, is no basis for a verdict).
            empty_mean = node.op_type == "ReduceMean" and data.size == 0 and got.size > 0
            given = data.astype(np.float32) if empty_mean and data.dtype.kind in "biu" else data  # for its shape
            expected = onnx_ref.reduce(node.op_type, given, axes, keepdims, noop, opset=opset, wide=True)
            if empty_mean:
                expected = np.zeros(expected.shape, data.dtype)
                undefined = np.ones(expected.shape, np.bool_)
                entry.notes.append("every output element is a mean over no elements, which ONNX leaves undefined: "
                                   "nothing was compared")  # fmt: skip
    except OvReduceError as exc:
        entry.error = f"the ONNX reference refuses the observed inputs: {exc.message}"
        return
    etype = _ONNX_TYPES.get(np.dtype(expected.dtype).name, "")
    reduced = values[0].size if values and values[0] is not None else expected.size
    judged_in = computed_in if etype == "f64" else None
    asked = (atol, rtol)
    atol, rtol = tolerances(etype, judged_in, reduced, expected.size, atol, rtol, op=node.op_type)
    mass = None
    if node.op_type == "Mean" and expected.shape == got.shape:  # (element-wise: the mean of the |x_i| it adds)
        mass = _mean_mass([v for v in values if v is not None], expected.shape)
    elif values[0] is not None and expected.shape == got.shape:  # (run's rounding rule)
        reduced_axes = list(range(values[0].ndim)) if not axes and not noop else list(axes or [])
        mass = rounding_mass(node.op_type, values[0], reduced_axes, bool(keepdims), etype, *asked)
    allowance = rounding_allowance(mass, etype, judged_in, *asked)
    entry.comparison = compare(expected, got, reference_name="onnx", candidate_name="openvino", atol=atol, rtol=rtol,
                               allowance=allowance, undefined=undefined)  # fmt: skip
    if judged_in is not None and entry.comparison.ok:
        entry.notes += f64_computed_note(expected, got, entry.comparison, "OpenVINO", judged_in, reduced, *asked,
                                         mass=mass, undefined=undefined)  # fmt: skip
    wide = None if asked[1] is not None else too_wide(entry.comparison, reduced // max(expected.size, 1), expected,
                                                      allowance)  # fmt: skip
    if wide is not None:  # (an rtol given is the user's to judge)
        entry.notes.append(wide)
    # (a mean over no elements, all undefined, was compared nowhere: its input is empty, which the note says too)
    if node.op_type != "Mean" and entry.comparison.ok and values[0] is not None:
        data = values[0]
        over = range(data.ndim) if not axes and not noop else axes or []  # ONNX: no axes, all of them
        shown = over or data.size <= 1  # (no axes: the identity, which shows an error, but of one element or none)
        blind = (
            cannot_show_error(data, np.asarray(list(over), dtype=np.int64), node.op_type, expected, atol)
            if shown
            else None
        )
        if blind is not None:
            entry.notes.append(f"it conforms {BLIND}: {blind}")
        masked = masked_note(data, np.asarray(list(over), dtype=np.int64), node.op_type) if shown else None
        if masked is not None:
            entry.notes.append(masked)
    if node.op_type != "Mean" and not entry.comparison.ok and values[0] is not None:
        source = "input" if version >= since else "attribute"
        entry.notes += _what_openvino_did(
            node.op_type, values[0], axes, source, keepdims, noop, expected, got, opset, atol, rtol
        )


def _mean_mass(arrays: Sequence[npt.NDArray[Any]], shape: tuple[int, ...]) -> npt.NDArray[Any] | None:
    """The rounding mass of an element-wise Mean of float ``arrays`` (broadcast to ``shape``): the mean of the ``|x_i|``
    each output element adds, in f64, as a ReduceMean's is of the elements it reduces; None for other types."""
    if not arrays or any(np.asarray(a).dtype.kind not in "fV" for a in arrays):
        return None
    total = np.zeros(shape, dtype=np.float64)
    for a in arrays:
        total = total + np.abs(np.asarray(a, dtype=np.float64))
    return np.asarray(total / len(arrays), dtype=np.float64)


def _once(axes: Any, rank: int, entry: NodeCheck) -> Any:
    """``axes`` with an axis named more than once (``[1, 1]``, or ``[1, -2]`` at rank 3) kept once, where it first
    appears, and a note saying so: ONNX's checker and shape inference accept such a node and count the axis once (as
    OpenVINO does), though onnx.reference refuses it. Axes out of range are left for the reference to refuse."""
    if axes is None:
        return None
    kept: list[int] = []
    seen: set[int] = set()
    for axis in list(axes):
        where = axis + rank if -rank <= axis < 0 else axis
        if where in seen and 0 <= where < rank:
            continue
        seen.add(where)
        kept.append(int(axis))
    if len(kept) < len(list(axes)):
        entry.notes.append(
            f"axes {list(axes)} name an axis more than once: each is reduced once, as ONNX's shape inference "
            f"counts it (onnx.reference refuses repeated axes), so the node is checked over axes {kept}"
        )
    return kept


# The OpenVINO 2026.4 frontend defects listed in docs/semantics.md ("OpenVINO's ONNX frontend"): a note calls
# a defect "known" only for these.
_AXES_IGNORED: Final = frozenset({("ReduceL1", 13), ("ReduceLogSum", 13), ("ReduceLogSumExp", 13)})
_NOOP_SKIPPED: Final = frozenset({"ReduceL1", "ReduceL2", "ReduceLogSum"})  # from version 18
_KNOWN_AXES_IGNORED: Final = " (a known OpenVINO 2026.4 defect of ReduceL1-13, ReduceLogSum-13 and ReduceLogSumExp-13)"
_KNOWN_NOOP_SKIPPED: Final = " (a known OpenVINO 2026.4 defect of ReduceL1, ReduceL2 and ReduceLogSum from opset 18)"
# What ONNX computes besides the reduction when noop_with_empty_axes=1 skips it (the opset-18 text).
_NOOP_STEPS: Final = {"ReduceL1": "|x|", "ReduceL2": "sqrt(x*x) = |x|", "ReduceLogSum": "log(x)",
                      "ReduceSumSquare": "x*x"}  # fmt: skip


def _what_openvino_did(
    op_type: str,
    data: npt.NDArray[Any],
    axes: Any,
    source: str,
    keepdims: int,
    noop: int,
    expected: npt.NDArray[Any],
    got: npt.NDArray[Any],
    opset: int,
    atol: float,
    rtol: float,
) -> list[str]:
    """Notes naming what OpenVINO computed instead, for a disagreeing Reduce* node, when it is recognisably one
    of two known frontend defects; no note when OpenVINO's output is not exactly that.

    * axes ignored: OpenVINO's output has the shape *and* the values of the reduction over all axes, where
      ONNX reduces only some (ReduceL1-13, ReduceLogSum-13, ReduceLogSumExp-13 in OpenVINO 2026.4);
    * whole operator skipped: with noop_with_empty_axes=1 and empty axes OpenVINO returns the input
      itself, where ONNX still applies the operator's elementwise step (ReduceL1/L2/LogSum-18).
    """
    from ovreduce.reference import onnx as onnx_ref

    version = onnx_ref.op_version(op_type, opset)
    name = f"{op_type}-{version}"

    def same(want: npt.NDArray[Any]) -> bool:
        return want.shape == got.shape and compare(want, got, atol=atol, rtol=rtol).ok

    empty = axes is None or len(axes) == 0
    try:
        if not empty and expected.shape != got.shape:
            everything = onnx_ref.reduce(op_type, data, None, keepdims, 0, opset=opset, wide=True)
            if same(everything):
                return [
                    f"OpenVINO reduced over all axes: its output has shape {list(got.shape)} and the values of "
                    f"{name} over every axis, where ONNX reduces axes {list(axes)} to shape "
                    f"{list(expected.shape)}; OpenVINO's ONNX frontend ignored the axes {source}"
                    + (_KNOWN_AXES_IGNORED if (op_type, version) in _AXES_IGNORED else "")
                ]
        infinite = _as_flt_max(op_type, expected)
        if infinite is not None and same(infinite):
            bf16 = expected.dtype.name == "bfloat16"
            largest = _BF16_MAX if bf16 else _FLT_MAX
            return [
                f"OpenVINO gave {'bf16' if bf16 else 'f32'}'s largest finite value, ±{largest:.8g}, where ONNX's "
                "result is ±inf"
                + (f" ({op_type} over an empty set, which ONNX defines as {_EMPTY[op_type]})" if data.size == 0 else "")
                + ": OpenVINO's CPU starts ReduceMax and ReduceMin from "
                + ("bf16's lowest and highest finite values where it reduces bf16 natively" if bf16 else
                   "f32's lowest and highest finite values")
                + ", so an infinite result comes out finite (a known OpenVINO 2026.4 CPU defect: ±inf become "
                + ("bf16's largest finite value)" if bf16 else "±FLT_MAX)")
            ]  # fmt: skip
        if empty and noop and op_type in _NOOP_STEPS and same(np.asarray(data)):
            return [
                f"OpenVINO returned the input unchanged: with noop_with_empty_axes=1 and empty axes ONNX skips "
                f"only the reduction and still computes {_NOOP_STEPS[op_type]} ({name}'s noop_with_empty_axes "
                "text); OpenVINO's ONNX frontend skipped the whole operator"
                + (_KNOWN_NOOP_SKIPPED if op_type in _NOOP_SKIPPED and version >= 18 else "")
            ]
    except OvReduceError:
        return []
    return []


_FLT_MAX: Final = float(np.finfo(np.float32).max)
_BF16_MAX: Final = float.fromhex("0x1.fep127")  # bf16's largest finite value, 3.3895314e38
_EMPTY: Final = {"ReduceMax": "-inf", "ReduceMin": "+inf"}  # from ReduceMax-18 and ReduceMin-18


def _as_flt_max(op_type: str, expected: npt.NDArray[Any]) -> npt.NDArray[Any] | None:
    """A ReduceMax's or ReduceMin's f32 or f64 ``expected`` with its infinities made ±FLT_MAX, a bf16 one's made ±bf16's
    largest finite value: what OpenVINO's CPU gives for them (bf16's where it reduces bf16 natively); None for another
    op, another type, or no infinity."""
    bf16 = expected.dtype == ml_dtypes.bfloat16
    if op_type not in ("ReduceMax", "ReduceMin") or not (bf16 or expected.dtype in (np.float32, np.float64)):
        return None
    wide = expected.astype(np.float64)
    infinite = np.isinf(wide)
    if not infinite.any():
        return None
    largest = _BF16_MAX if bf16 else _FLT_MAX
    return np.where(infinite, np.copysign(largest, wide), wide).astype(expected.dtype)
