"""The OpenVINO runtime: the layer runner (one reduction built as a single-layer model, compiled once, run
many times) and the whole-model runner (read a model, feed it, run it with tensors marked as outputs).

The layer is built by its op's own builder (:meth:`ovreduce.ops.reduce.ReductionOp.build`, from the op's
opset). Constant axes become a Constant and runtime axes a Parameter, exactly as in the IR. The inference
precision is explicit: ``f32`` (the default for comparisons: on CPUs with bf16 support OpenVINO would
otherwise pick bf16 by itself), ``f16``, ``bf16``, or ``default`` to leave the device's own choice.
Compiled layers are cached by everything that defines them (the layer spec, the device and the
precision) in a :class:`LayerCache` the backend is given (by default the process's shared one), so
running the same layer again costs one inference, not a compile.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from ovreduce._openvino import clean_message, core, openvino, read_ir
from ovreduce.backends.base import BackendResult, LayerSpec
from ovreduce.backends.feeds import (
    ALONG_IDS,
    EMBEDDINGS,
    GROWING_MASKS,
    PAST,
    PROMPT_TOKENS,
    TOKEN_IDS,
    Embedder,
    Recipe,
    conv_kernel,
    make,
    permutations,
    recipes,
)
from ovreduce.errors import (
    DeviceNotAvailableError,
    InputError,
    IRStructureError,
    LimitExceededError,
    MemoryLimitError,
)
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType, element_type
from ovreduce.memory import data_limit, data_size
from ovreduce.ops.registry import reduction
from ovreduce.reports.audit import AuditInput
from ovreduce.reports.devices import Device, DevicesDocument
from ovreduce.tensors import (
    INPUT_ONLY_TYPES,
    NF4_VALUES,
    check_elements,
    conform_array,
    given_once,
    own_names,
    packed_codes,
    refuse_ambiguous,
)

__all__ = [
    "KEPT_FACTOR",
    "KV_CACHE_PROPERTIES",
    "PRECISIONS",
    "PROBED_TYPES",
    "VIRTUAL_DEVICES",
    "CompiledLayer",
    "InferenceTimeoutError",
    "LayerCache",
    "MarkedRun",
    "OpenVINOBackend",
    "abandoned",
    "available_devices",
    "check_captured",
    "check_device",
    "check_kept",
    "check_precision",
    "check_tensor_sizes",
    "compile_model",
    "compile_options",
    "constant_data",
    "describe_device",
    "device_info",
    "effective_precision",
    "elements_bound",
    "fit_model",
    "fix_random_seeds",
    "from_tensor",
    "kv_cache_precision",
    "memory_refusal",
    "model_inputs",
    "openvino_version",
    "port_type_name",
    "precision_name",
    "precision_support",
    "read_ir",
    "read_model",
    "reduction_kernels",
    "run_marked",
    "run_steps",
    "runtime_kernels",
    "runtime_precisions",
    "state_precisions",
    "to_tensor",
]

PRECISIONS = ("f32", "f16", "bf16", "default")
VIRTUAL_DEVICES = ("AUTO", "MULTI", "HETERO", "BATCH")
"""The devices that stand for others (``AUTO:GPU,CPU``): never listed by OpenVINO."""
_MAX_RANK = 64  # NumPy's most dimensions


# -- precisions and compile options: one place for the layer and the whole-model runner ----------------------
def check_precision(precision: str) -> None:
    """:class:`InputError` unless ``precision`` is one of :data:`PRECISIONS`."""
    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")


# The properties in which a device keeps a stateful model's KV cache (its ReadValue/Assign state read by attention):
# the CPU plugin keeps it in u8 by default, whatever the inference precision, or in what the model's
# <rt_info><runtime_options> sets (optimum-intel's exports: f16), unless the compile configuration says otherwise.
KV_CACHE_PROPERTIES = ("KV_CACHE_PRECISION", "KEY_CACHE_PRECISION", "VALUE_CACHE_PRECISION")


def _hardware_devices(device: str) -> tuple[str, ...]:
    """The devices a virtual ``device`` runs on: those its name lists (``HETERO:GPU,CPU``, ``MULTI:CPU(4)``, a
    virtual one among them resolved in turn), or every available device less those it excludes (``AUTO``,
    ``AUTO:-GPU``); ``device`` itself for a device that is not virtual."""
    base, _, listed = device.partition(":")
    if base.split(".", 1)[0].upper() not in VIRTUAL_DEVICES:
        return (device,)
    names = [re.sub(r"\(.*\)\Z", "", name.strip()) for name in listed.split(",") if name.strip()]
    chosen = [name for name in names if not name.startswith("-")]
    if not chosen:
        excluded = {name[1:] for name in names}
        try:
            chosen = [str(name) for name in core().available_devices if str(name) not in excluded]
        except Exception:  # no device to ask
            return ()
    return tuple(dict.fromkeys(hardware for name in chosen for hardware in _hardware_devices(name)))


@cache
def _kv_cache_properties(device: str) -> tuple[str, ...]:
    """Those of :data:`KV_CACHE_PROPERTIES` ``device`` supports (none for a device that lists no properties). A
    virtual device lists none of its own but passes them on to the devices it runs on: it is given those every one
    of them supports."""
    devices = _hardware_devices(device)
    names = set(KV_CACHE_PROPERTIES)
    for hardware in devices:
        try:
            names &= {str(name) for name in core().get_property(hardware, "SUPPORTED_PROPERTIES")}
        except Exception:  # an unknown device: it is given the hint alone
            return ()
    return tuple(name for name in KV_CACHE_PROPERTIES if name in names) if devices else ()


def compile_options(precision: str, device: str | None = None) -> dict[str, str]:
    """OpenVINO's compile configuration for ``precision`` (``default``: the device's own choice). At ``f32`` the KV
    cache of a stateful model is asked in f32 too, where ``device`` has the properties for it: the inference precision
    does not set it, and a cache kept in u8 or f16 is not an f32 run's."""
    if precision == "default":
        return {}
    options = {"INFERENCE_PRECISION_HINT": precision}
    if precision == "f32" and device is not None:
        options.update(dict.fromkeys(_kv_cache_properties(device), "f32"))
    return options


def compile_model(ov_model: Any, device: str, precision: str) -> Any:
    """``ov_model`` compiled for ``device`` at ``precision``; raises whatever OpenVINO raises, and
    :class:`IRStructureError` for a model OpenVINO would compile into a crash of the process."""
    refuse_known_crashes(ov_model)
    return core().compile_model(ov_model, device, compile_options(precision, device))


def kv_cache_precision(compiled: Any) -> str | None:
    """The precision the compiled model keeps a stateful model's KV cache in (None: the plugin does not say)."""
    try:
        return precision_name(compiled.get_property("KV_CACHE_PRECISION"))
    except Exception:  # a plugin without the property
        return None


def refuse_known_crashes(ov_model: Any) -> None:
    """:class:`IRStructureError` for what OpenVINO reads and its CPU plugin then crashes on (in any body): a Loop or
    TensorIterator that slices with stride 0 (it divides by it: SIGFPE), a ReorgYolo of stride 0 (the same), a Slice
    of static data whose axes are computed at run time (SIGSEGV, whatever the axes), and the values of
    :func:`_crashing` where they are constant or computed from Constants (it reads and writes outside its buffers:
    SIGSEGV). A body's values are followed through the port maps that feed it (:class:`_Graphs`)."""
    graphs = _Graphs(ov_model)
    constants = _Fed(graphs, None)
    for node in graphs.ops:
        kind = node.get_type_name()
        if kind in ("Loop", "TensorIterator"):
            _refuse_crashing_port_maps(kind, node)
        elif kind == "ReorgYolo" and 0 in list(node.get_attributes().get("stride", [])):
            raise IRStructureError(
                f"ReorgYolo {node.get_friendly_name()!r}: its stride is 0; OpenVINO's CPU plugin divides by it (a "
                f"crash of the process), so ovreduce does not run it"
            )
        elif (
            kind == "Slice"
            and node.get_input_size() > 4
            and node.get_input_partial_shape(0).is_static
            and bool(_inputs_above(node.input_value(4), graphs, through_shapes=False))
        ):
            raise IRStructureError(
                f"Slice {node.get_friendly_name()!r}: its axes are computed at run time, and its data's shape is "
                f"static; OpenVINO's CPU plugin crashes on such a Slice whatever the axes, so ovreduce does not "
                f"run it"
            )
        elif kind in _CRASHING:
            wrong = _crashing(node, partial(constants.port, node))
            if wrong is not None:
                raise IRStructureError(
                    f"{kind} {node.get_friendly_name()!r}: its {wrong[0]} {wrong[1]}; OpenVINO's CPU plugin then "
                    f"reads and writes outside its buffers (a crash of the process), so ovreduce does not run it"
                )


def _bodies(node: Any) -> list[tuple[str, Any]]:
    """The bodies of a Loop or TensorIterator (``body``) or an If (``then body``, ``else body``); none of another op."""
    kind = node.get_type_name()
    if kind in ("Loop", "TensorIterator"):
        return [("body", node.get_function())]
    return [("then body", node.get_then_body()), ("else body", node.get_else_body())] if kind == "If" else []


class _Graphs:
    """A model's graphs, its own and its bodies' at any depth (``ops``: all their ops, each graph's in order), and
    where a body's Parameter takes its value from: the value around the body that its If, or its Loop or
    TensorIterator as an invariant input, feeds it (:meth:`source`). A body's other Parameters (a slice of a value, a
    value carried from one iteration to the next, a Loop's iteration number) are followed no further."""

    def __init__(self, ov_model: Any) -> None:
        self.model = ov_model
        self.ops: list[Any] = []
        self._fed: dict[str, Any] = {}
        pending = [ov_model]
        while pending:
            for node in pending.pop().get_ordered_ops():
                self.ops.append(node)
                kind = node.get_type_name()
                if kind in ("Loop", "TensorIterator"):
                    bodies = [(node.get_function(), node.get_input_descriptions())]
                elif kind == "If":
                    bodies = [(node.get_then_body(), node.get_input_descriptions(0)),
                              (node.get_else_body(), node.get_input_descriptions(1))]  # fmt: skip
                else:
                    continue
                for body, maps in bodies:
                    parameters = body.get_parameters()
                    for m in maps:
                        if type(m).__name__ == "InvariantInputDescription":
                            self._fed[parameters[m.body_parameter_index].get_name()] = node.input_value(m.input_index)
                    pending.append(body)
        self._top = {parameter.get_name() for parameter in ov_model.get_parameters()}

    def source(self, output: Any) -> Any:
        """``output``, or where it is a body's Parameter, the value around the body it is fed (to the outermost)."""
        while (fed := self._fed.get(output.get_node().get_name())) is not None:
            output = fed
        return output

    def is_input(self, node: Any) -> bool:
        """Whether ``node`` is one of the model's own Parameters (not a body's)."""
        return node.get_name() in self._top


_DFTS = frozenset({"DFT", "IDFT", "RDFT", "IRDFT"})
_CRASHING: Mapping[str, tuple[int, ...]] = {
    "GatherND": (1,), "ScatterElementsUpdate": (1,), "Pad": (1, 2), "Slice": (4,), **dict.fromkeys(_DFTS, (1, 2)),
}  # fmt: skip
"""The ops whose input values (by port) OpenVINO's CPU plugin follows unchecked, and crashes on out of range
(:func:`_crashing`): the other gathers and scatters, and these ops' other inputs, are refused in words."""


def _inputs_above(output: Any, graphs: _Graphs, through_shapes: bool, limit: int = 256) -> list[Any]:
    """The model's Parameters whose values ``output``'s depends on (a body's followed through the port maps that
    feed it, :class:`_Graphs`): through the ShapeOf of a static shape (which OpenVINO folds when it compiles) only
    where ``through_shapes``; of the first ``limit`` ops above it."""
    stack, seen, found = [graphs.source(output).get_node()], set[str](), dict[str, Any]()
    while stack and len(seen) < limit:
        node = stack.pop()
        kind = node.get_type_name()
        if node.get_name() in seen or (kind == "ShapeOf" and node.get_input_partial_shape(0).is_static
                                       and not through_shapes):  # fmt: skip
            continue
        seen.add(node.get_name())
        if graphs.is_input(node):
            found[node.get_name()] = node
        stack.extend(graphs.source(value).get_node() for value in node.input_values())
    return list(found.values())


def _crashing(node: Any, value: Callable[[int], npt.NDArray[Any] | None]) -> tuple[str, str] | None:
    """Which input of ``node`` (an op of :data:`_CRASHING`), of the values ``value`` gives by port (None: unknown), has
    OpenVINO's CPU plugin read or write outside its buffers, and what is wrong with it: ``("indices", "hold index 9
    for axis 1 of the data, which has 8 there: expected [-8, 8)")``; None where nothing known is."""
    kind = node.get_type_name()
    shape = node.get_input_partial_shape(0)
    if kind == "Pad":
        begin, end = value(1), value(2)
        return None if begin is None or end is None else _crashing_pads(shape, begin, end)
    if kind in ("GatherND", "ScatterElementsUpdate"):
        indices = value(1)
        wrong = None if indices is None else outside_data(node, indices, value(3) if kind != "GatherND" else None)
        return None if wrong is None else ("indices", f"hold {wrong}")
    if shape.rank.is_dynamic or node.get_input_size() <= max(_CRASHING[kind]) - (kind in _DFTS):
        return None
    rank = shape.rank.get_length() - (kind in ("DFT", "IDFT", "IRDFT"))  # (the complex numbers' last axis of 2)
    axes = value(_CRASHING[kind][0])
    if axes is not None and axes.size and ((axes < -rank) | (axes >= rank)).any():
        axis = int(axes[(axes < -rank) | (axes >= rank)].reshape(-1)[0])
        return "axes", f"hold axis {axis}, of data of {rank} axes: expected [{-rank}, {rank})"
    sizes = value(2) if kind in _DFTS and node.get_input_size() > 2 else None
    if sizes is not None and ((sizes < 1) & (sizes != -1)).any():
        size = int(sizes[(sizes < 1) & (sizes != -1)].reshape(-1)[0])
        return "signal_size", f"holds {size}: expected a size of at least 1, or -1 (the axis's own)"
    return None


def outside_data(node: Any, indices: npt.NDArray[Any], given: npt.NDArray[Any] | None) -> str | None:
    """The first of ``indices`` (the values of a GatherND's or ScatterElementsUpdate's, of axis ``given``: None where
    it is not known) that points outside the op's data, where its dims are known, in words (``index 99999999 for axis
    1 of the data, which has 8 there: expected [-8, 8)``); None where every index is within ``[-dim, dim)`` (negative
    ones count from the end)."""
    shape = node.get_input_partial_shape(0)
    if shape.rank.is_dynamic or not np.issubdtype(indices.dtype, np.integer) or indices.size == 0:
        return None
    rank = shape.rank.get_length()
    if node.get_type_name() == "GatherND":
        batch = int(node.get_attributes().get("batch_dims", 0))
        columns = [(batch + j, indices[..., j]) for j in range(indices.shape[-1] if indices.ndim else 0)]
    else:
        if given is None or given.size != 1:
            return None
        columns = [(int(given.reshape(-1)[0]) % rank if rank else 0, indices)]
    for axis, values in columns:
        if axis >= rank or shape[axis].is_dynamic:
            continue
        dim = shape[axis].get_length()
        wrong = values[(values < -dim) | (values >= dim)]
        if wrong.size:
            return f"index {int(wrong[0])} for axis {axis} of the data, which has {dim} there: expected [{-dim}, {dim})"
    return None


class Watched(NamedTuple):
    """The model's ops of :data:`_CRASHING` (in any body) whose judged inputs are computed from its inputs, and its
    graphs (:class:`_Graphs`): what an inference must check the inputs it is given against."""

    graphs: _Graphs
    ops: list[Any]


def watched_inputs(ov_model: Any) -> Watched:
    """What :func:`refuse_crashing_inputs` checks the inputs of each inference of ``ov_model`` against."""
    graphs = _Graphs(ov_model)
    constants = _Fed(graphs, None)
    return Watched(graphs, [node for node in graphs.ops if node.get_type_name() in _CRASHING
                            and any(port < node.get_input_size() and constants.port(node, port) is None
                                    for port in _CRASHING[node.get_type_name()])])  # fmt: skip


def refuse_crashing_inputs(watched: Watched, feeds: Mapping[int, Any]) -> None:
    """:class:`InputError` for inputs from which an op of ``watched`` (:func:`watched_inputs`) gets values OpenVINO's
    CPU plugin crashes on (:func:`_crashing`): computed from them as OpenVINO computes them (:class:`_Fed`), before the
    plugin follows them."""
    graphs = watched.graphs
    fed = _Fed(graphs, feeds)
    for node in watched.ops:
        wrong = _crashing(node, partial(fed.port, node))
        if wrong is None:
            continue
        port = {"indices": 1, "pads": 1, "axes": _CRASHING[node.get_type_name()][0], "signal_size": 2}[wrong[0]]
        source = graphs.source(node.input_value(port)).get_node()
        while source.get_type_name() == "Convert":
            source = graphs.source(source.input_value(0)).get_node()
        above = _inputs_above(node.input_value(port), graphs, through_shapes=True)
        names = sorted(_input_name(graphs.model, p) for p in above)
        how = (f"given as input {names[0]!r}" if graphs.is_input(source) and len(names) == 1
               else f"computed from input(s) {', '.join(map(repr, names))}" if names
               else "computed from the inputs' shapes")  # fmt: skip
        raise InputError(
            f"the {wrong[0]} of {node.get_type_name()} {node.get_friendly_name()!r}, {how}, {wrong[1]}; OpenVINO's "
            f"CPU plugin reads and writes outside its buffers on such values (a crash of the process), so ovreduce "
            f"does not run it",
            parameter="inputs",
        )


def _input_name(ov_model: Any, parameter: Any) -> str:
    port = ov_model.inputs[ov_model.get_parameter_index(parameter)]
    return next(iter(sorted(port.get_names())), None) or str(parameter.get_friendly_name())


class _Fed:
    """Values computed from Constants, static shapes and the inputs ``feeds`` gives, by each op's own evaluation, each
    op once (``feeds`` None: from Constants alone, before any input is given; a shape counts as its input's then): None
    where an op has none, a shape is not static, the ops above are more than :data:`_FED_DEPTH` deep, or the walk has
    computed :data:`_FED_BUDGET` elements (each op counted one at least: empty tensors too)."""

    def __init__(self, graphs: _Graphs, feeds: Mapping[int, Any] | None) -> None:
        self.graphs, self.feeds = graphs, feeds
        self.budget = _FED_BUDGET
        self.done: dict[str, list[npt.NDArray[Any]] | None] = {}

    def port(self, node: Any, index: int) -> npt.NDArray[Any] | None:
        return self.value(node.input_value(index)) if index < node.get_input_size() else None

    def value(self, output: Any, depth: int = 0) -> npt.NDArray[Any] | None:
        output = self.graphs.source(output)  # (a body's Parameter: the value its port map feeds it)
        node = output.get_node()
        key = node.get_name()
        if key not in self.done:
            self.done[key] = self._outputs(node, depth)
        values = self.done[key]
        return None if values is None else values[output.get_index()]

    def _outputs(self, node: Any, depth: int) -> list[npt.NDArray[Any]] | None:
        kind = node.get_type_name()
        if kind == "Constant":
            return [constant_data(node)]
        if kind == "Parameter":  # the model's input (a body's not followed: none)
            if self.feeds is None or not self.graphs.is_input(node):
                return None
            given = self.feeds.get(self.graphs.model.get_parameter_index(node))
            return None if given is None else [np.asarray(given)]
        shapes = [node.get_output_partial_shape(k) for k in range(node.get_output_size())]
        if not all(shape.is_static for shape in shapes):
            return None
        if kind == "ShapeOf":  # its input's static shape: nothing above it is computed
            if self.feeds is None:  # (a shape an input's fixes: that input's to name)
                return None
            shape = node.get_input_partial_shape(0)
            etype = element_type(node.get_output_element_type(0).get_type_name()).numpy
            return [np.array(shape.to_shape(), dtype=etype)] if shape.is_static else None
        self.budget -= sum(max(1, math.prod(shape.to_shape())) for shape in shapes)
        if self.budget < 0 or depth >= _FED_DEPTH:
            return None
        values = [self.value(value, depth + 1) for value in node.input_values()]
        if not values or any(v is None for v in values):
            return None
        ov = openvino()
        results = [ov.Tensor(node.get_output_element_type(k), shape.to_shape()) for k, shape in enumerate(shapes)]
        try:
            done = node.evaluate(results, [ov.Tensor(np.ascontiguousarray(v)) for v in values])
        except Exception:  # an evaluation that refuses its inputs: not judged here
            return None
        return [from_tensor(result) for result in results] if done else None


_FED_BUDGET = 1 << 20
"""The elements :class:`_Fed` computes for one inference's check, at most: beyond, the values are not judged."""
_FED_DEPTH = 256
"""How many ops above a judged input :class:`_Fed` computes through, at most."""


RANDOM_OPS = ("RandomUniform", "Multinomial")
"""OpenVINO's ops that draw random values (opset8's RandomUniform, opset13's Multinomial): of ``global_seed`` and
``op_seed`` both 0, each compile draws a new sequence (two compiles of one model differ); of any other seeds, every
compile draws the same sequence, inference by inference."""
_FIXED_GLOBAL_SEED = 1


def fix_random_seeds(ov_model: Any) -> tuple[list[str], list[str]]:
    """Give each random op of ``ov_model`` (in any body) whose seeds are both 0 fixed seeds of its own, so that every
    compile of every read of the model draws the same values (each op its own sequence: ``global_seed`` 1, ``op_seed``
    its place among them, in the model's order). The layers so fixed, and those OpenVINO would not let be fixed, each
    as ``Type 'name'``."""
    fixed: list[str] = []
    unfixed: list[str] = []
    graphs = [ov_model]
    while graphs:
        for node in graphs.pop().get_ordered_ops():
            kind = node.get_type_name()
            graphs.extend(body for _, body in _bodies(node))
            if kind in RANDOM_OPS:
                seeds = node.get_attributes()
                if seeds.get("global_seed") != 0 or seeds.get("op_seed") != 0:
                    continue
                named = f"{kind} {node.get_friendly_name()!r}"
                try:
                    node.set_attribute("global_seed", _FIXED_GLOBAL_SEED)
                    node.set_attribute("op_seed", len(fixed) + len(unfixed) + 1)
                    kept = node.get_attributes()
                except Exception:  # (an OpenVINO that does not set them: the draws stay the compile's)
                    kept = seeds
                (fixed if kept.get("op_seed") != 0 else unfixed).append(named)
    return fixed, unfixed


def _refuse_crashing_port_maps(kind: str, node: Any) -> None:
    """A sliced input with stride 0; a Loop's concatenated output with stride 0 beside a sliced input (alone it
    runs; a TensorIterator's is OpenVINO's own error)."""
    sliced = [m for m in node.get_input_descriptions() if hasattr(m, "stride")]
    bad = next((f"input {m.input_index} slices axis {m.axis}" for m in sliced if m.stride == 0), None)
    if bad is None and kind == "Loop" and sliced:
        bad = next((f"output {m.output_index} concatenates along axis {m.axis}, beside a sliced input,"
                    for m in node.get_output_descriptions() if getattr(m, "stride", 1) == 0), None)  # fmt: skip
    if bad is not None:
        raise IRStructureError(
            f"{kind} {node.get_friendly_name()!r}: its port map of {bad} with stride 0; OpenVINO compiles that into a "
            f"crash of the process (SIGFPE), so ovreduce does not run it"
        )


def _crashing_pads(shape: Any, pads_begin: npt.NDArray[Any], pads_end: npt.NDArray[Any]) -> tuple[str, str] | None:
    """Pads that overflow int64, or take more from an axis than it holds and leave some of it (nothing left to copy:
    it runs)."""
    if shape.rank.is_dynamic:
        return None  # a rank known only at run time: nothing to judge before running
    # as OpenVINO reads them, through int64 (a u64 pad of 2**64 - 1 is -1)
    begin, end = ([int(v) for v in values.reshape(-1).astype(np.int64).tolist()] for values in (pads_begin, pads_end))
    for axis, (dim, b, e) in enumerate(zip(shape, begin, end, strict=False)):
        size = dim.get_min_length()
        if not -(2**63) <= b + e < 2**63 or size + b + e >= 2**63:
            return "pads", f"on axis {axis} (begin {b}, end {e}) overflow int64"
        if dim.is_static and min(b, e) < -size and size + b + e > 0:
            return "pads", f"on axis {axis} (begin {b}, end {e}) take more than the {size} elements it holds"
    return None


def effective_precision(compiled: Any, fallback: str | None) -> str | None:
    """The inference precision the compiled model runs in; ``fallback`` for a plugin without the property."""
    try:
        return precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
    except Exception:  # a plugin without the property
        return fallback


def runtime_precisions(compiled: Any) -> dict[str, str]:
    """Node name -> execution precision, from the compiled model's execution graph (where it has one). A node the
    plugin renamed ``name.0`` (the CPU plugin's conversion of an i64 output it computes in i32, and ``name.0.0`` of the
    Convert back) is found under its own name too, where no node of the graph has that name."""
    out: dict[str, str] = {}
    renamed: dict[str, str] = {}
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            if "runtimePrecision" in info:
                for name in str(info["originalLayersNames"].astype(str)).split(","):
                    precision = precision_name(info["runtimePrecision"].astype(str))
                    out.setdefault(name.strip(), precision)
                    if (base := re.sub(r"(?:\.0)+\Z", "", name.strip())) != name.strip():
                        renamed.setdefault(base, precision)  # the first: the node itself, before its Convert back
    except Exception:  # a plugin without an execution graph
        return {}
    return renamed | out


def runtime_kernels(compiled: Any) -> dict[str, tuple[str, str]]:
    """Node name -> the name and the ``layerType`` of the kernel of the compiled model's execution graph that computes
    it (the graph's node whose ``originalLayersNames`` lists it: a snippets ``Subgraph`` lists every op it fuses, a
    FullyConnected the ops fused into it), where the graph names it; empty for a plugin without an execution graph."""
    out: dict[str, tuple[str, str]] = {}
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            if "originalLayersNames" in info:
                kind = str(info["layerType"].astype(str)) if "layerType" in info else ""
                for name in str(info["originalLayersNames"].astype(str)).split(","):
                    if name.strip():
                        out.setdefault(name.strip(), (op.get_friendly_name(), kind))
    except Exception:  # a plugin without an execution graph
        return {}
    return out


def state_precisions(compiled: Any) -> tuple[int, tuple[tuple[str, int], ...]]:
    """The states the compiled model writes (its execution graph's MemoryOutput layers): how many an attention kernel
    writes (``ScaledDotProductAttention``: a KV cache, kept in the compiled model's ``KV_CACHE_PRECISION``), and the
    others (a Mamba-style conv or SSM state, a tokenizer's flag) by the precision the graph writes them in, with
    their counts; nothing for a plugin without an execution graph."""
    kv_cache = 0
    others: dict[str, int] = {}
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            if "layerType" not in info or str(info["layerType"].astype(str)) != "MemoryOutput":
                continue
            sources = [op.input_value(i).get_node().get_rt_info() for i in range(op.get_input_size())]
            if any("layerType" in src and "ScaledDotProductAttention" in str(src["layerType"].astype(str))
                   for src in sources):  # fmt: skip
                kv_cache += 1
            elif "outputPrecisions" in info:
                written = precision_name(str(info["outputPrecisions"].astype(str)).split(",")[0].strip())
                others[written] = others.get(written, 0) + 1
    except Exception:  # a plugin without an execution graph
        return 0, ()
    return kv_cache, tuple(sorted(others.items()))


def reduction_kernels(compiled: Any) -> frozenset[str]:
    """The node names (``originalLayersNames``) of the compiled model's reduction kernels (``layerType`` Reduce, as
    OpenVINO's CPU plugin calls them); empty for a plugin without an execution graph."""
    out: set[str] = set()
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            info = op.get_rt_info()
            if "layerType" in info and str(info["layerType"].astype(str)) == "Reduce":
                out.update(name.strip() for name in str(info["originalLayersNames"].astype(str)).split(","))
    except Exception:  # a plugin without an execution graph
        return frozenset()
    return frozenset(out)


# The element types whose reductions a device may execute in another precision (OpenVINO's CPU plugin runs a
# bf16 reduction natively where the CPU has bf16 instructions, through f32 elsewhere).
PROBED_TYPES = ("f32", "bf16", "f16")


@cache
def precision_support(device: str) -> tuple[dict[str, str], dict[str, str]] | None:
    """What ``device`` executes, asked of OpenVINO itself by compiling a one-reduction model: for each
    requested precision of :data:`PRECISIONS`, the inference precision the compiled model reports
    (``"refused"`` where it does not compile); for each element type of :data:`PROBED_TYPES`, the precision
    its execution graph runs a ReduceSum of that type in. None for a virtual device (``AUTO``...), which
    has no execution of its own. Computed once per device and process."""
    if device.split(":", 1)[0].split(".", 1)[0].upper() in VIRTUAL_DEVICES:
        return None
    ov = openvino()
    from openvino import opset1 as ops

    def probe(type_name: str) -> Any:
        data = ops.parameter([2, 8], getattr(ov.Type, type_name), name="data")
        node = ops.reduce_sum(data, ops.constant(np.array([1], np.int64)), False)
        return ov.Model([node], [data], "ovreduce_probe")

    inference: dict[str, str] = {}
    for precision in PRECISIONS:
        try:
            inference[precision] = effective_precision(compile_model(probe("f32"), device, precision), "unknown") or ""
        except Exception:  # the device refuses this hint
            inference[precision] = "refused"
    reductions: dict[str, str] = {}
    for type_name in PROBED_TYPES:
        try:
            reductions[type_name] = _reduction_precision(compile_model(probe(type_name), device, "f32")) or "unknown"
        except Exception:  # the device cannot compile this type
            reductions[type_name] = "refused"
    return inference, reductions


def _reduction_precision(compiled: Any) -> str | None:
    """What the one reduction of a compiled single-layer model executes in (the plugin may rename it, as
    ``name.0`` when it converts the output): the precision of its node of layer type ``Reduce``."""
    try:
        found = {
            precision_name(info["runtimePrecision"].astype(str))
            for info in (op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops())
            if "layerType" in info and str(info["layerType"].astype(str)) == "Reduce"
        }
    except Exception:  # a plugin without an execution graph
        return None
    return found.pop() if len(found) == 1 else None


def available_devices() -> list[str]:
    """The devices the installed OpenVINO can use here (``CPU``, ``GPU.0``...)."""
    return list(core().available_devices)


def check_device(device: str) -> None:
    """:class:`DeviceNotAvailableError` listing the available devices unless ``device`` can be used (an
    :class:`InputError` when it is no device OpenVINO knows: ``FOO``, ``cpu``, ``CPU(2)``); an InputError for a
    virtual device whose list OpenVINO cannot use (``MULTI:``, ``BATCH:CPU(0)``),
    each device of the list checked in turn."""
    devices = available_devices()
    kind, listed, rest = device.partition(":")
    base = kind.split(".", 1)[0].upper()
    if base in VIRTUAL_DEVICES and (kind != base or (not listed and base != "AUTO")):  # OpenVINO reads MULTI, not multi
        raise InputError(f"device {device!r}: a virtual device is written {base}" + ("" if base == "AUTO" else
                         f" with its devices, e.g. {base}:CPU"))  # fmt: skip
    if base in VIRTUAL_DEVICES and listed and (rest.strip() or base != "AUTO"):  # AUTO: alone is AUTO
        excluded = set()
        for item in (i.strip() for i in rest.split(",")):
            name, _, batch = item.removeprefix("-" if base == "AUTO" else "").partition("(")  # AUTO:-CPU excludes
            size = batch.removesuffix(")") if base in ("BATCH", "MULTI") and batch.endswith(")") else None  # CPU(4)
            sized = size is not None and size.isascii() and size.isdigit() and 1 <= int(size[:6]) <= 4096
            if (not name or name.startswith("-") or re.split(r"[.:]", name, maxsplit=1)[0].upper() in VIRTUAL_DEVICES
                    or (batch and size is None) or (size is not None and not sized)):  # fmt: skip
                raise InputError(f"device {device!r}: {item!r} is not a device of its list; write e.g. {base}:CPU"
                                 + (" or BATCH:CPU(4), a batch of 1 to 4096" if base == "BATCH" else ""))  # fmt: skip
            if item.startswith("-") and base == "AUTO":  # excluding a device that is not here excludes nothing
                excluded.add(name)
            else:
                check_device(name)
        if excluded and len(excluded) == len(rest.split(",")) and all(d.split(".")[0] in excluded for d in devices):
            raise InputError(f"device {device!r} excludes every device of this machine ({', '.join(devices)})")
        return
    name, dot, index = kind.partition(".")
    if base not in VIRTUAL_DEVICES and (listed or (dot and not (index.isascii() and index.isdigit()))):  # CPU:, GPU.0x1
        raise InputError(f"device {device!r}: a device is written as OpenVINO lists it, e.g. CPU or GPU.1 (only "
                         f"AUTO, MULTI, HETERO and BATCH take a list after ':')")  # fmt: skip
    if name == "CPU" and dot:  # OpenVINO's CPU plugin has one device, whose id is '': it refuses any index
        raise InputError(f"device {device!r}: the CPU device takes no index; write CPU")
    if device in devices or base in VIRTUAL_DEVICES or any(d.split(".", 1)[0] == device for d in devices):
        return
    if not _registered(kind.split(".", 1)[0]):
        raise InputError(
            f"device {device!r} is not a device OpenVINO knows (its names are case-sensitive, an index follows a dot: "
            f"GPU.1); available here: {', '.join(devices) or 'none'}"
        )
    if (refusal := _load_refusal(kind.split(".", 1)[0])) is not None:  # its plugin is here, but could not be loaded
        raise refusal
    hint = ""
    if base == "GPU":
        hint = (
            " OpenVINO's GPU plugin drives Intel GPUs only, through OpenCL (libOpenCL.so.1 and Intel's "
            "compute runtime must be installed)."
        )
    elif base == "NPU":
        hint = " The NPU plugin needs an Intel NPU and its driver."
    raise DeviceNotAvailableError(
        f"device {device!r} is not available on this machine; available: {', '.join(devices) or 'none'}.{hint}"
    )


# How loading a plugin fails for lack of memory: the system's loader could not map the library (the process's data
# bound reached), or the plugin's start could not allocate.
_LOAD_MEMORY_RE = re.compile(r"failed to map segment from shared object|cannot allocate memory|std::bad_alloc", re.I)


def _load_refusal(name: str) -> MemoryLimitError | None:
    """The memory limit, where OpenVINO lists no device of a plugin it has (``name``: ``CPU``...) because loading the
    plugin failed for lack of memory (OpenVINO's device list leaves out a plugin that fails to load, and says nothing
    of why): not a machine without the device. None where it loads, or fails for another reason."""
    try:
        core().get_property(name, "AVAILABLE_DEVICES")
    except MemoryError:
        said = "std::bad_alloc"
    except Exception as exc:
        found = _LOAD_MEMORY_RE.search(str(exc))
        if found is None or (found[0].startswith("failed to map") and data_limit() is None):  # (a noexec mount)
            return None
        said = found[0]
    else:
        return None
    held = f" ({size} bytes)" if (size := data_size()) is not None else ""
    return MemoryLimitError(
        f"OpenVINO could not load its {name} plugin for lack of memory ({said}), not for want of the device: the "
        f"process's data{held} had reached the most it may use"
    )


def _registered(name: str) -> bool:
    """Whether OpenVINO has a plugin for the device ``name`` (``CPU``, ``GPU``, ``NPU``...), whether or not this
    machine has such a device: it names an unknown one's versions as none, and fails to load one it cannot drive."""
    if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", name):
        return False
    try:
        return bool(core().get_versions(name))
    except Exception:  # a plugin it has but cannot load here (the GPU plugin without OpenCL)
        return True


def device_info() -> DevicesDocument:
    """The ``ovreduce.devices/v1`` document: each available device with its full name, its capabilities
    and what it executes (:func:`precision_support`)."""
    return DevicesDocument(tuple(describe_device(dev) for dev in available_devices()), openvino=openvino_version())


def openvino_version() -> str:
    """The OpenVINO runtime's full version (``2026.4.1-22982-...``)."""
    return str(openvino().get_version())


def describe_device(dev: str) -> Device:
    """The :class:`Device` record of ``dev``: what results computed on it depend on."""

    def prop(name: str) -> Any:
        try:
            return core().get_property(dev, name)
        except Exception:  # a property this plugin does not have
            return None

    def text(value: Any) -> str | None:
        return None if value is None else str(value)

    capabilities = prop("OPTIMIZATION_CAPABILITIES")
    precision = prop("INFERENCE_PRECISION_HINT")
    support = precision_support(dev)
    return Device(
        device=dev,
        full_name=text(prop("FULL_DEVICE_NAME")),
        capabilities=None if capabilities is None else tuple(str(v) for v in capabilities),
        default_inference_precision=None if precision is None else precision_name(precision),
        architecture=text(prop("DEVICE_ARCHITECTURE")),
        inference_precisions=None if support is None else support[0],
        reduction_precisions=None if support is None else support[1],
    )


@dataclass(frozen=True)
class CompiledLayer:
    """A compiled single-layer model, the inference precision it reports and the precision its execution
    graph runs the reduction in (each None where the device does not say: AUTO, HETERO, MULTI)."""

    compiled: Any
    precision: str | None
    runtime_precision: str | None = None


class LayerCache:
    """A bounded LRU of compiled layers (``cachetools.LRUCache``), safe for concurrent use, with counts of
    hits and misses."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: LRUCache[tuple[Any, ...], CompiledLayer] = LRUCache(maxsize=size)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> CompiledLayer | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self.hits += 1
            else:
                self.misses += 1
            return item

    def put(self, key: tuple[Any, ...], item: CompiledLayer) -> None:
        with self._lock:
            self._items[key] = item

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def precision_name(value: Any) -> str:
    """``f32``/``f16``/``bf16`` for what OpenVINO reports (an ``ov.Type`` or a string)."""
    name = value.get_type_name() if hasattr(value, "get_type_name") else str(value)
    return {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}.get(name.lower(), name.lower())


class OpenVINOBackend:
    """Runs reductions on an OpenVINO device.

    Args:
        device: an OpenVINO device name (``CPU``, ``GPU``, ``GPU.1``, ``AUTO``...).
        precision: ``f32``, ``f16``, ``bf16`` or ``default``.
        cache: where compiled layers are kept (share one between backends to share compiles); by default
            a cache of this backend's own.

    Raises:
        DeviceNotAvailableError: the device is not available here.
        InputError: an unknown precision.
    """

    def __init__(self, device: str = "CPU", precision: str = "f32", cache: LayerCache | None = None) -> None:
        check_precision(precision)
        check_device(device)
        self.device = device
        self.precision = precision
        self.name = f"openvino:{device}"
        self.cache = cache if cache is not None else LayerCache()

    def compiled(self, spec: LayerSpec) -> CompiledLayer:
        """The compiled layer, from the cache when it is there; raises whatever OpenVINO raises."""
        key = (*spec.key(), self.device, self.precision)
        item = self.cache.get(key)
        if item is not None:
            return item
        compiled = compile_model(_build_model(spec), self.device, self.precision)
        item = CompiledLayer(
            compiled,
            effective_precision(compiled, None),
            _reduction_precision(compiled),
        )
        self.cache.put(key, item)
        return item

    def infer(self, spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]]) -> BackendResult:
        start = time.perf_counter()
        try:
            spec = spec.fitted(inputs)  # compiled for these shapes: a declared dynamic rank does not reach the plugin
        except ValueError as exc:
            return BackendResult(self.name, None, f"failed: {exc}", None, time.perf_counter() - start)
        try:
            item = self.compiled(spec)
        except Exception as exc:  # OpenVINO's build or compile failure is this backend's result, but for memory
            _raise_memory_refusal(exc)
            ranks = [f"input {i} has {a.ndim} dimensions" for i, a in enumerate(inputs) if a.ndim > 32]
            said = "; ".join([clean_message(exc), *ranks])
            return BackendResult(self.name, None, f"failed: {said}", None, time.perf_counter() - start)
        try:
            # A request per call: concurrent runs of one layer need no lock, and no cached request keeps its
            # last (zero-copy) input alive after the call.
            request = item.compiled.create_infer_request()
            tensors = [to_tensor(a, t) for a, t in zip(inputs, _input_types(spec), strict=True)]
            request.infer(tensors)
            output = from_tensor(request.get_output_tensor(0))
        except Exception as exc:  # an inference failure is this backend's result too, but for memory
            _raise_memory_refusal(exc)
            return BackendResult(self.name, None, f"failed: {clean_message(exc)}", item.precision,
                                 time.perf_counter() - start, runtime_precision=item.runtime_precision)  # fmt: skip
        notes: tuple[str, ...] = ()
        judged_in = item.precision
        if judged_in is None:  # the coarsest precision the request allows, for no false alarm
            judged_in = "f32" if self.precision == "f32" else "bf16"
            notes = (f"{self.device} does not report the precision it computed in; its output is judged with "
                     f"{judged_in}'s tolerance",)  # fmt: skip
        return BackendResult(self.name, output, None, item.precision, time.perf_counter() - start, notes,
                             runtime_precision=item.runtime_precision, judged_in=judged_in)  # fmt: skip


def _input_types(spec: LayerSpec) -> list[str]:
    return [spec.data_type.name] + ([spec.axes_type.name] if spec.runtime_axes else [])


def _build_model(spec: LayerSpec) -> Any:
    """The single-layer model: Parameter(s), the axes Constant, and the op from its own builder."""
    op = reduction(spec.type, spec.version)
    ov = openvino()
    from openvino import opset1 as ops

    data = ops.parameter(ov.PartialShape(str(spec.data_shape)), getattr(ov.Type, spec.data_type.name), name="data")
    params = [data]
    if spec.axes is None:
        axes = ops.parameter(ov.PartialShape(str(spec.axes_shape)), getattr(ov.Type, spec.axes_type.name), name="axes")
        params.append(axes)
    else:
        values = np.array(spec.axes, dtype=spec.axes_type.numpy)
        if spec.axes_shape.rank == 0 and values.size == 1:
            values = values.reshape(())
        axes = ov.op.Constant(values)  # opset1's constant() refuses an empty array; the class takes it
    node = op.build(data, axes, spec.keep_dims)
    node.set_friendly_name(spec.layer_name or spec.type)
    return ov.Model([node], params, f"ovreduce_{spec.type}")


def to_tensor(array: npt.NDArray[Any], type_name: str) -> Any:
    """An OpenVINO tensor holding ``array`` as element type ``type_name`` (bf16 via its bits).

    The tensor wraps the array's memory (no copy: a copy of a large input costs more than the reduction);
    leave the array unchanged while the tensor is in use. An array whose dtype is not ``type_name``'s is
    copied as it is, so that OpenVINO sees, and refuses, the mismatch.
    """
    ov = openvino()
    array = np.asarray(array, order="C")  # not ascontiguousarray: it turns a 0-d array into shape (1,)
    etype = ELEMENT_TYPES.get(type_name)
    if etype is not None and etype.name in INPUT_ONLY_TYPES:
        return _packed_tensor(array, etype)
    if etype is None or etype.numpy is None or etype.is_packed or np.dtype(etype.numpy) != array.dtype:
        return ov.Tensor(array)
    raw = array.view(np.uint16) if type_name == "bf16" else array
    return ov.Tensor(raw, ov.Shape(list(array.shape)), getattr(ov.Type, type_name))


def _packed_tensor(array: npt.NDArray[Any], etype: ElementType) -> Any:
    """An OpenVINO tensor of a type of :data:`ovreduce.tensors.INPUT_ONLY_TYPES` holding ``array`` (its values held
    unpacked), laid out as OpenVINO lays such a tensor out: one byte each for the 8-bit floats; u1 8 elements a byte,
    the first in the most significant bit; u2, u4, i4, nf4 and f4e2m1 LSB-first; u3 and u6 in OpenVINO's blocks (as its
    Constant packs them)."""
    ov = openvino()
    shape = ov.Shape(list(array.shape))
    tensor = ov.Tensor(getattr(ov.Type, etype.name), shape)
    if etype.bitwidth == 8:  # the f8 types: their bits
        raw = np.asarray(array, dtype=etype.numpy).view(np.uint8).reshape(-1)
    else:
        codes = packed_codes(array, etype)
        if etype.name == "u1":
            raw = np.packbits(codes, bitorder="big")
        elif etype.name in ("u3", "u6"):
            constant = ov.op.Constant(getattr(ov.Type, etype.name), shape, codes.tolist())  # (held: its view is
            raw = np.array(constant.get_tensor_view().data, dtype=np.uint8, copy=True).reshape(-1)  # its memory)
        else:  # 2 or 4 bits, the first element in the lowest bits
            per = 8 // etype.bitwidth
            padded = np.zeros(-(-codes.size // per) * per, dtype=np.uint8)
            padded[: codes.size] = codes
            lanes = padded.reshape(-1, per).astype(np.uint16) << (np.arange(per, dtype=np.uint16) * etype.bitwidth)
            raw = np.bitwise_or.reduce(lanes, axis=1).astype(np.uint8)
    data = tensor.data.reshape(-1)
    data[: raw.size] = raw[: data.size]
    return tensor


def _text(given: Any, declared: Any, what: str) -> npt.NDArray[Any]:
    """A given array of text for a string input (a tokenizer's): ``str`` or ``bytes`` elements, of a fitting shape."""
    from ovreduce.shapes import PartialShape

    array = np.asarray(given)
    if array.dtype.kind not in "US":
        raise InputError(f"{what} takes text (an array of str), not {array.dtype} data", parameter="inputs")
    if not declared.compatible(PartialShape.static(array.shape)):
        raise InputError(f"{what} has shape {list(array.shape)} but the model expects {declared}", parameter="inputs")
    if array.dtype.kind == "U":  # OpenVINO encodes it as UTF-8, which a lone surrogate has no bytes in
        for index, text in enumerate(array.flat):
            try:
                text.encode()
            except UnicodeEncodeError as exc:
                raise InputError(f"{what}: element {index} is not valid Unicode (a lone surrogate at character "
                                 f"{exc.start})", parameter="inputs") from None  # fmt: skip
    return array


def from_tensor(tensor: Any) -> npt.NDArray[Any]:
    """A copy of an OpenVINO tensor as a NumPy array of its values: bf16, the f8 types and f4e2m1 as ``ml_dtypes``'
    types, the other types of :data:`ovreduce.tensors.INPUT_ONLY_TYPES` unpacked as they are held (u4 in uint8, i4 in
    int8, nf4 as the f32 value of its code), text as bytes. (OpenVINO's ``data`` gives the raw codes: an f8's byte, two
    4-bit elements a byte.)"""
    type_name = tensor.get_element_type().get_type_name()
    if type_name == "string":  # a detokenizer's output: ``data`` would copy it too, with a warning
        return np.array(tensor.bytes_data, copy=True)
    data = tensor.data
    etype = ELEMENT_TYPES.get(type_name)
    if type_name == "bf16":
        import ml_dtypes

        return np.array(data.view(np.uint16), copy=True).view(ml_dtypes.bfloat16)
    if etype is not None and etype.name in INPUT_ONLY_TYPES:
        return _unpacked(tensor, etype)
    return np.array(data, copy=True)


def constant_data(node: Any) -> npt.NDArray[Any]:
    """A copy of an OpenVINO Constant's values, as :func:`from_tensor` reads a tensor (``get_data`` gives an f8
    Constant's codes, a 4-bit one's packed bytes)."""
    return from_tensor(node.get_tensor_view())


def _unpacked(tensor: Any, etype: ElementType) -> npt.NDArray[Any]:
    """The values of a tensor of a type of :data:`ovreduce.tensors.INPUT_ONLY_TYPES`, held unpacked (the inverse of
    :func:`_packed_tensor`)."""
    shape = tuple(int(d) for d in tensor.get_shape())
    count = math.prod(shape)
    raw = np.array(tensor.data, copy=True).view(np.uint8).reshape(-1)
    if etype.bitwidth == 8:  # the f8 types: their bits
        bits: npt.NDArray[Any] = raw[:count].view(etype.numpy)
        return bits.reshape(shape)
    if etype.name in ("u3", "u6"):  # OpenVINO's blocks: its Constant reads them
        values = openvino().op.Constant(tensor).get_vector()
        return np.asarray(values, dtype=np.uint8)[:count].reshape(shape)
    if etype.name == "u1":
        codes = np.unpackbits(raw, bitorder="big")[:count]
    else:  # 2 or 4 bits, the first element in the lowest bits
        per = 8 // etype.bitwidth
        shifts = np.arange(per, dtype=np.uint8) * np.uint8(etype.bitwidth)
        codes = ((raw[:, None] >> shifts[None, :]) & np.uint8((1 << etype.bitwidth) - 1)).reshape(-1)[:count]
    if etype.name == "nf4":
        return NF4_VALUES[codes].reshape(shape)
    if etype.name == "f4e2m1":
        floats: npt.NDArray[Any] = codes.view(etype.numpy)
        return floats.reshape(shape)
    if etype.name == "i4":  # two's complement nibbles
        return (codes.astype(np.int8) - np.where(codes >= 8, 16, 0).astype(np.int8)).reshape(shape)
    return codes.reshape(shape)


# -- the whole-model runner ---------------------------------------------------------------------------------
def read_model(source: str | Path | bytes, weights_path: str | Path | None = None) -> Any:
    """An ``openvino.Model`` from a file OpenVINO reads (an IR, with its weights beside it or at
    ``weights_path``; an ONNX model), or from an ONNX model's bytes. Raises whatever OpenVINO raises."""
    if isinstance(source, bytes):
        import io

        return core().read_model(io.BytesIO(source))
    path = source
    if weights_path is not None:
        return core().read_model(str(path), str(weights_path))
    return core().read_model(str(path))


# The sizes tried, in turn, for dynamic dims no input or shape fixes (beyond a leading batch dim, which is
# its lower bound, at least 1): the first that OpenVINO's shape inference accepts for the whole model wins,
# so a CNN whose pooling needs some height and width, or an audio front end whose first convolution spans
# 512 samples, still gets a shape it can run.
DEFAULT_FILLS = (1, 8, 32, 64, 128, 224, 512, 1024)

IMAGE_SIZE = 64
"""The least height and width of an image (an input ``[?, 3, ?, ?]``, or ``pixel_values``) whose size nothing says: a
CNN's or ViT's global pooling after a 32-fold downsampling (a stem of stride 4 and three stages, patches of 32) then
reduces 2x2 elements, where the first fill OpenVINO accepts, 8, left it one to reduce, and never an error to show."""


@dataclass(frozen=True)
class _Port:
    index: int
    label: str
    etype: Any
    declared: Any  # ovreduce PartialShape
    target: Any  # the shape asked for: a given array's, a given shape, or the declared one
    array: npt.NDArray[Any] | None
    origin: str
    asked: Any = None  # the shape given, where ovreduce settled its dynamic dims before the rest (token ids)
    prompt: bool = False  # an array made for the user (a prompt's): its values given, its batch and span as made ones'

    @property
    def free(self) -> bool:
        """Neither given nor shaped: ovreduce picks its shape and makes its values."""
        return self.array is None and self.target == self.declared


def _embeddings(
    embed: Embedder | None, port: _Port, dims: Sequence[int], rng: np.random.Generator, seed: int, notes: list[str]
) -> tuple[npt.NDArray[Any], str]:
    """Token embeddings for ``port`` of ``dims`` ``[batch, tokens, hidden]``: ``embed``'s of seeded ids, else seeded
    normal values and a note that they are no token's (of scale 1, where a model's own embeddings are of its own)."""
    if embed is None:
        notes.append(
            f"input {port.label!r}: token embeddings made of seeded normal values (scale 1), not the embeddings of any "
            f"token (no text-embeddings model beside it to make them): a model's own embeddings are of another "
            f"scale, so what a target precision's verdict says of the headroom is not representative; give them as an "
            f"input"
        )
        return make(Recipe("random"), port.etype, dims, rng), Recipe("random").origin(seed)
    ids = rng.integers(0, embed.vocabulary, size=(dims[0], dims[1]))
    array = np.asarray(embed(ids))
    if array.shape != tuple(dims):
        raise InputError(f"{embed.source} gives embeddings of shape {list(array.shape)} for ids of shape "
                         f"{list(ids.shape)}, where input {port.label!r} takes {list(dims)}")  # fmt: skip
    origin = (f"the export's text embeddings of the made ids (seed {seed}, ids in [0, {embed.vocabulary}) through "
              f"{embed.source})")  # fmt: skip
    return array.astype(port.etype.numpy), origin


def model_inputs(
    ov_model: Any,
    given: Mapping[str, npt.NDArray[Any]] | None,
    seed: int,
    max_elements: int | None = None,
    shapes: Mapping[str, Any] | None = None,
    origins: Mapping[str, str] | None = None,
    encoder: tuple[int, str] | None = None,
    image: tuple[tuple[int, int], str] | None = None,
    audio: tuple[int, str] | None = None,
    embed: Embedder | None = None,
) -> tuple[dict[int, npt.NDArray[Any]], list[AuditInput], list[str]]:
    """Arrays for every model input, keyed by input index, and ``ov_model`` reshaped to them.

    An input is given (an array, by tensor name, Parameter name or index; ``origins`` says how it was made, by
    the same name, where that is more than "given": such an array may be shaped too, by a shape it fits), shaped
    (``shapes``: an
    :class:`ovreduce.shapes.PartialShape` by the same names) or seeded. ``ov_model`` is reshaped to the
    arrays' static shapes before anything is generated (as ``Model.reshape``; a dynamic rank included), so
    what compiles is what runs. Dynamic dims nobody fixed take a default: a leading batch dim its lower bound
    (at least 1; no batch where another input fixes it at 1); the channels a Convolution takes, and what a Reshape to
    a constant target needs (:func:`channel_pins`); the others the first of :data:`DEFAULT_FILLS` (within the dim's
    interval) that OpenVINO's shape inference accepts for the whole model, but for a permutation the model inverts
    (:func:`ovreduce.backends.feeds.permutations`), as long as the axis it indexes is for the others' shapes. The
    documents name the dims that were defaulted. A seq2seq decoder's encoder inputs not given
    (``encoder_hidden_states``, ``encoder_attention_mask``, its cross-attention past) are made along one encoder's
    sequence (:func:`_cross_length`): as long as one of them given or shaped says, else ``encoder`` (how long the
    export's encoder output always is, and what says so: Whisper's ``max_source_positions``), else
    :data:`PROMPT_TOKENS`; a note says which. An image's height and width (:func:`_images`) are at least ``image``
    (its height and width, and what says so: the export's config), else :data:`IMAGE_SIZE`; where no size from there
    up is accepted, as any other dims. A waveform's length (``input_values [?, ?]``) is at least ``audio`` (its
    samples, and what says so: the export's feature encoder, read from its config, makes several frames of them), where
    nothing sets it; where that is refused, as any other dims. Token embeddings not given (``inputs_embeds``, a VLM's
    language model's) are ``embed``'s embeddings of seeded ids, as the export's runtime makes them, where it is given;
    else seeded normal values, with a note that they are no token's.

    Returns:
        The arrays, a description of each input (name, shape, element type, origin, defaulted dims), and
        notes on the dims chosen.

    Raises:
        InputError: a name matches no input, an array or shape does not fit its input, a dynamic rank with
            no shape, or no default that OpenVINO's shape inference accepts.
        LimitExceededError: an input would have more than ``max_elements`` elements (checked before it is
            generated).
    """
    from ovreduce._openvino import partial_shape
    from ovreduce.shapes import PartialShape

    given = dict(given or {})
    shapes = dict(shapes or {})
    spelled = [set(p.get_names()) | {p.get_node().get_friendly_name()} for p in ov_model.inputs]
    known = own_names(spelled, [{str(i)} for i in range(len(spelled))])
    unknown = (set(given) | set(shapes)) - set().union(*known)
    if unknown:
        options = ", ".join(sorted({p.get_any_name() for p in ov_model.inputs if p.get_names()}))
        # (no parameter to give it by: the name was given, and names nothing there)
        raise InputError(f"input {sorted(unknown)[0]!r} names no model input (inputs: {options or 'unnamed'})")
    labels = [p.get_any_name() if p.get_names() else p.get_node().get_friendly_name() for p in ov_model.inputs]
    inputs = [(f"input {label!r}", names) for label, names in zip(labels, known, strict=True)]
    refuse_ambiguous(given, inputs, "inputs")
    refuse_ambiguous(shapes, inputs, "shapes")
    ports: list[_Port] = []
    declared_kept: dict[int, dict[int, tuple[int, str]]] = {}  # dims left open over static ones: the size kept
    for index, port in enumerate(ov_model.inputs):
        names = known[index]
        etype = element_type(port.get_element_type().get_type_name())
        declared = partial_shape(port.get_partial_shape())
        label = labels[index]
        what = f"input {label!r}"
        match = given_once(given, names, what, "inputs")
        shape_match = given_once(shapes, names, what, "shapes")
        made_for = (origins or {}).get(match) if match is not None else None
        if match is not None and shape_match is not None and made_for is not None:
            # an array made for the user (a prompt's tokens): a shape it fits is satisfied, another is a conflict
            if not shapes[shape_match].compatible(PartialShape.static(np.shape(given[match]))):
                raise InputError(
                    f"{what} is {made_for}, of shape {list(np.shape(given[match]))}, which the shape given for it, "
                    f"{shapes[shape_match]}, does not fit; give one of the two, or a shape that "
                    f"{list(np.shape(given[match]))} fits"
                )  # fmt: skip
            shape_match = None
        if match is not None and shape_match is not None:
            raise InputError(f"{what} is given both an array and a shape; give one", parameter="shapes", twice=True)
        if match is not None:
            array = _text(given[match], declared, what) if etype.name == "string" else (
                conform_array(np.asarray(given[match]), etype, declared, what, model_input=True))  # fmt: skip
            origin = (origins or {}).get(match, "given")
            ports.append(_Port(index, label, etype, declared, PartialShape.static(array.shape), array, origin,
                               prompt=made_for is not None))  # fmt: skip
            continue
        target = declared
        if shape_match is not None:
            target = shapes[shape_match]
            if not declared.compatible(target):
                raise InputError(f"the shape given for {what}, {target}, does not fit its declared {declared}",
                                 parameter="shapes")  # fmt: skip
        if target.dims is None:
            raise InputError(f"{what} has a dynamic rank; give its shape, or an input array", parameter="shapes")
        if len(target.dims) > _MAX_RANK:
            raise InputError(f"{what} has rank {len(target.dims)}: inputs of more than {_MAX_RANK} dimensions cannot "
                             f"be made (NumPy's limit)")  # fmt: skip
        asked: Any = None
        if shape_match is not None and declared.dims is not None and len(declared.dims) == len(target.dims):
            # a dim left open over one the model declares static (`inputs_embeds=[2,16,?]` of [?,?,64]): OpenVINO's
            # reshape frees it, but the declared size is the one the file says fits; it is made that size
            kept = [i for i, (d, t) in enumerate(zip(declared.dims, target.dims, strict=True))
                    if d.is_static and not t.is_static and t.contains(d)]  # fmt: skip
            if kept:
                asked = target
                target = PartialShape(tuple(declared.dims[i] if i in kept else t for i, t in enumerate(target.dims)))
                for i in kept:
                    declared_kept.setdefault(index, {})[i] = (declared.dims[i].lo, "the size the model declares")
        ports.append(_Port(index, label, etype, declared, target, None, "", asked))
    free_past = {p.index for p in ports if p.free and any(n.startswith(PAST) for n in known[p.index])}
    past, cross_why = _past_length(ports, known), _cross_length(ports, known, encoder)[1]  # (as given or shaped)
    made_encoder = [p.label for p in ports if _open(p) and known[p.index] & ENCODER_INPUTS]
    ports = _follow_token_ids(ports, known, conv_kernel(ov_model), encoder, deepstack_layers(ov_model))
    made_encoder = [p.label for p in ports if p.label in made_encoder and p.target != p.declared]
    made_past = [p for p in ports if p.index in free_past and p.target != p.declared and p.target.is_static]
    emptied = [p.label for p in made_past if 0 in p.target.to_list()]
    filled = [p.label for p in made_past if 0 not in p.target.to_list() and not _encoders(known[p.index])]
    filled_cross = [p.label for p in made_past if 0 not in p.target.to_list() and _encoders(known[p.index])]
    pins = channel_pins(ov_model)
    for index, sizes in declared_kept.items():
        pins.setdefault(index, {}).update(sizes)
    sized: dict[int, tuple[int, str]] = {}  # the permutations sized by the axis they index (dim 0)
    floors = {**_images(ports, known, pins, image), **_waveforms(ports, known, pins, audio)}
    try:
        chosen = _fit(ov_model, ports, max_elements, pins, sized, floors)
    except (InputError, LimitExceededError):
        if not floors:
            raise
        floors = {}  # an image of that size refused (a model of smaller images): as any other dims
        chosen = _fit(ov_model, ports, max_elements, pins, sized)
    patches = _patch_grid(ov_model, ports, known, chosen)
    if patches is not None:  # a patch mask and positions beside the image: along its patches, where OpenVINO takes it
        patched = [replace(p, target=patches[0][p.index]) if p.index in patches[0] else p for p in ports]
        try:
            chosen, ports = _fit(ov_model, patched, max_elements, pins, sized, floors), patched
        except (InputError, LimitExceededError):
            patches = None
            chosen = _fit(ov_model, ports, max_elements, pins, sized, floors)
    for index, floor in floors.items():
        for dim, size_why in floor.items():
            pins.setdefault(index, {}).setdefault(dim, size_why)
    for index, (size, why) in sized.items():
        pins.setdefault(index, {})[0] = (size, why)
    if max_elements is not None:
        total = sum(math.prod(dims) for dims in chosen)
        if total > max_elements:  # each within the limit, but made all at once
            raise LimitExceededError(f"the model's {len(chosen)} inputs would have {total} elements together, more "
                                     f"than the limit of {max_elements}")  # fmt: skip
        check_tensor_sizes(ov_model, max_elements)
    rng = np.random.default_rng(seed)
    made = recipes(ov_model)  # what each input is for, read from the reshaped graph
    arrays: dict[int, npt.NDArray[Any]] = {}
    described: list[AuditInput] = []
    notes: list[str] = []
    for port, dims in zip(ports, chosen, strict=True):
        asked = port.asked if port.asked is not None else port.target
        defaulted = tuple(i for i, d in enumerate(asked) if not d.is_static)
        for i in defaulted:
            pin = pins.get(port.index, {}).get(i)
            why = f", {pin[1]}" if pin is not None and pin[0] == dims[i] else ""
            notes.append(f"input {port.label!r}: dynamic dimension {i} ({asked.dims[i]}) set to {dims[i]}{why}")
        recipe = made[port.index]
        if port.array is not None:
            array, origin = port.array, port.origin
            if recipe.kind == "ids" and recipe.high and array.dtype.kind in "iu" and array.size:
                # a Gather counts a negative index from the end (opset 8): -1 is the table's last row
                outside = int(np.count_nonzero((array < -recipe.high) | (array >= recipe.high)))
                if outside:  # an embedding Gather's rows past its table: what it gives them is no token's
                    notes.append(
                        f"input {port.label!r}: {outside} of the {array.size} ids given are outside [-{recipe.high}, "
                        f"{recipe.high}) ({recipe.why}): the rows they pick are no token's embedding, so the "
                        f"reductions after it are audited on less than the text given"
                    )
        elif known[port.index] & EMBEDDINGS and recipe.kind == "random" and len(dims) == 3 and port.etype.is_real:
            array, origin = _embeddings(embed, port, dims, rng, seed, notes)
        else:
            array, origin = make(recipe, port.etype, dims, rng), recipe.origin(seed)
            if known[port.index] & VISUAL_INPUTS:  # a run without image tokens: no token is an image's
                array = np.zeros(dims, dtype=array.dtype)
                origin = ("an all-false mask" if "visual_pos_masks" in known[port.index] else "zeros") + (
                    ", no token an image's, as optimum-intel's runtime makes it for a run without image tokens"
                )
            if patches is not None and known[port.index] & PATCH_INPUTS and port.index in patches[0]:
                array, origin = _patch_input(port, known[port.index], dims, patches[1])
            attended = _attended_positions(ports, known, port, dims) if recipe.kind == "positions" else None
            if attended is not None:  # a padded mask given: each row's tokens numbered from its first attended one
                array, origin = attended[0].astype(array.dtype), attended[1]
            elif recipe.kind == "positions" and past and _positions_of_tokens(known[port.index]):  # the new tokens'
                array, origin = array + past, f"positions {past}.. after the {past} past positions given"
        arrays[port.index] = array
        described.append(AuditInput(port.label, array.shape, port.etype.name, origin, defaulted))
    notes += _disagreeing(ports, known, arrays)
    if emptied and any(_cross_past(p, known[p.index]) for p in ports):  # a seq2seq decoder with past
        notes.append(f"the {len(emptied)} self-attention past key and value inputs ({emptied[0]}...) are empty, as no "
                     f"step of generation runs this model (its first step runs the decoder without past), beside a "
                     f"cross-attention past as long as the encoder's sequence: what reads the self-attention past was "
                     f"audited on none of it; give them as inputs to audit a later step")  # fmt: skip
    elif emptied:
        notes.append(f"the {len(emptied)} past key and value inputs ({emptied[0]}...) are empty, as in the first "
                     f"step of generation, which the token ids, mask and positions describe: what reads the past was "
                     f"audited on none of it; give them as inputs to audit a later step")  # fmt: skip
    if filled:
        notes.append(f"the {len(filled)} past key and value inputs not given ({filled[0]}...) are made of seeded "
                     f"values, {past} positions long, as the past given or shaped: the step that the mask and "
                     f"positions describe; give them as inputs to audit that step's own past")  # fmt: skip
    if made_encoder:
        notes.append(f"the encoder's inputs not given ({', '.join(made_encoder)}) are made {cross_why}: the encoder "
                     f"output that cross-attention reads; give them as inputs, or their shapes, to audit "
                     f"another")  # fmt: skip
    if filled_cross:
        notes.append(f"the {len(filled_cross)} cross-attention past key and value inputs not given ({filled_cross[0]}"
                     f"...) are made of seeded values, {cross_why}, the encoder's keys and values that every step "
                     f"with past reads; give them as inputs to audit an encoder output's own")  # fmt: skip
    return arrays, described, notes


def _disagreeing(
    ports: Sequence[_Port], names: Sequence[set[str]], arrays: Mapping[int, npt.NDArray[Any]]
) -> list[str]:
    """A note for each input of :data:`ALONG_IDS` given or shaped (``--shape``) in a shape other than the token ids':
    OpenVINO may take them, but together they describe no one text (a mask of 5 beside 8 ids)."""
    ids = _sequence(ports, names, lambda p: arrays[p.index].shape)
    if ids is None:
        return []
    shape = _lead(ids, arrays[ids.index].shape)
    covered = (*shape[:-1], shape[-1] + _past_length(ports, names))  # a mask's, over the past given too
    notes = []
    for p in ports:
        mask = bool(names[p.index] & GROWING_MASKS)
        given = arrays[p.index].shape
        if "position_ids" in names[p.index] and len(given) == 3:  # per rotary section: [sections, batch, tokens]
            given = given[1:]
        if _runs_along_ids(names[p.index]) and given != (covered if mask else shape):
            past = " and the past given" if mask and covered != shape else ""
            how = "is given in" if p.array is not None else "was shaped to" if not p.free and p.asked is None else "has"
            notes.append(f"input {p.label!r} {list(arrays[p.index].shape)} {how} another shape than the token "
                         f"ids {ids.label!r} {list(shape)}{past}: OpenVINO may take them, but together they describe "
                         f"no one text")  # fmt: skip
    return notes


def _follow_token_ids(
    ports: list[_Port],
    names: Sequence[set[str]],
    kernel: tuple[int, str] | None = None,
    encoder: tuple[int, str] | None = None,
    deepstack: Mapping[int, int] | None = None,
) -> list[_Port]:
    """``ports`` with token ids of a sequence: token ids neither given nor shaped, whose length is free, are
    :data:`PROMPT_TOKENS` long (one token would leave every reduction over the sequence with one element to
    reduce); and the inputs of :data:`ALONG_IDS` that were neither given nor shaped take the ids' shape,
    where their declared shapes allow it. A Mamba-style model's ``cache_position`` (``kernel``: its conv state's
    columns, :func:`conv_kernel`) spans the conv state at the prefill, whatever the ids' length. A decoder's encoder
    inputs follow one encoder's sequence (:func:`_follow_encoder`; ``encoder`` as there). A VLM's visual inputs
    follow the tokens too (:func:`_visual`; ``deepstack`` as there)."""
    from ovreduce.shapes import PartialShape

    shaped = {p.index: p.target for p in ports if p.array is None and not p.free}  # as given, before settling
    ports = [_prompt_length(_settled(p)) if names[p.index] & (TOKEN_IDS | EMBEDDINGS) and p.array is None else p
             for p in ports]  # fmt: skip
    source = _batch_source(ports, names)
    if source is not None:  # ids beside a past or beams given of another batch: theirs, as generation's
        ports = [_at_batch(p, names[p.index], source, shaped.get(p.index)) for p in ports]
    _refuse_prompt_past(ports, names)
    if kernel is not None:
        columns = PartialShape.static([kernel[0]])
        ports = [replace(p, target=columns) if p.free and "cache_position" in names[p.index]
                 and p.declared.compatible(columns) else p for p in ports]  # fmt: skip
    ports = _follow_encoder(ports, names, encoder)
    ids = _sequence(ports, names, lambda p: tuple(p.target.to_list()) if p.target.is_static else ())
    if ids is None:
        return ports
    lead = _lead(ids, ids.target.to_list())
    shape = PartialShape.static(list(lead))
    batch = PartialShape.static(list(lead[:1]))  # a stateful LLM's beam_idx: one per sequence
    tokens = PartialShape.static(list(lead[-1:]))  # cache_position: the new tokens' places in the cache
    # a mask covers the past given too, as in the step of generation that past is for
    pasts = {False: _past_length(ports, names), True: _cross_length(ports, names, encoder)[0]}  # each kind's
    covered = PartialShape.static([*lead[:-1], lead[-1] + pasts[False]])
    return [_follow(p, shape) if _along(p, names[p.index], shape) and not names[p.index] & GROWING_MASKS
            else _follow(p, covered) if _along(p, names[p.index], covered)
            else _covering(p, lead, pasts[False]) if p.prompt and names[p.index] & GROWING_MASKS
            and not _encoders(names[p.index])
            else replace(p, target=sections) if (sections := _sectioned(p, names[p.index], shape)) is not None
            else _follow(p, visual) if (visual := _visual(p, names[p.index], lead, deepstack)) is not None
            else _follow(p, batch) if _beams(p, names[p.index], batch)
            else replace(p, target=tokens) if p.free and "cache_position" in names[p.index]
            and p.declared.compatible(tokens)
            else _free_past(p, names[p.index], batch.to_list()[0], pasts[_encoders(names[p.index])])
            for p in ports]  # fmt: skip


VISUAL_INPUTS = frozenset({"visual_pos_masks", "deepstack_visual_embeds"})
"""A VLM language model's inputs along its tokens (Qwen3-VL's): which tokens are an image's ``[batch, tokens]``, and
the vision tower's features its deepstack layers add to them ``[layers, batch * tokens, hidden]`` (the rows the
mask picks, reshaped to the hidden states' shape). Made along the tokens, as optimum-intel's runtime makes them for a
run without image tokens: an all-false mask and zeros."""


def deepstack_layers(ov_model: Any) -> dict[int, int]:
    """How many deepstack layers each ``deepstack_visual_embeds`` input feeds, by input index: one more than the
    largest constant index its Gathers along dim 0 select (one per layer that adds them); none where it is not so
    selected."""
    out: dict[int, int] = {}
    for index, port in enumerate(ov_model.inputs):
        if "deepstack_visual_embeds" not in port.get_names():
            continue
        picked = []
        for target in port.get_node().output(0).get_target_inputs():
            node = target.get_node()
            if node.get_type_name() != "Gather" or target.get_index() != 0:
                continue
            ends = [node.input_value(i).get_node() for i in (1, 2)]
            if any(end.get_type_name() != "Constant" for end in ends):
                continue
            indices, axis = ends[0].get_data(), ends[1].get_data()
            if axis.size == 1 and int(axis.reshape(-1)[0]) == 0 and indices.size:
                picked.append(int(np.max(indices)))
        if picked and min(picked) >= 0:
            out[index] = max(picked) + 1
    return out


def _visual(port: _Port, names: set[str], lead: Sequence[int], deepstack: Mapping[int, int] | None) -> Any:
    """The shape of a VLM's visual input (:data:`VISUAL_INPUTS`) neither given nor shaped to a static shape, along
    the tokens ``lead`` (``[batch, tokens]``): the mask ``[batch, tokens]``, the deepstack features ``[layers, batch *
    tokens, hidden]`` (``deepstack``: the layers by input index, :func:`deepstack_layers`; else left to the fills);
    None where ``port`` is none or its declared shape does not allow it."""
    from ovreduce.shapes import Dimension, PartialShape

    dims = port.target.dims
    if not (_open(port) and names & VISUAL_INPUTS and dims is not None and len(lead) == 2):
        return None
    if "visual_pos_masks" in names and len(dims) == 2:
        shape = PartialShape.static(list(lead))
    elif "deepstack_visual_embeds" in names and len(dims) == 3:
        layers = (deepstack or {}).get(port.index)
        shape = PartialShape((dims[0] if layers is None else Dimension.static(layers),
                              Dimension.static(lead[0] * lead[1]), dims[2]))  # fmt: skip
    else:
        return None
    return shape if port.target.compatible(shape) else None


def _batch_source(ports: Sequence[_Port], names: Sequence[set[str]]) -> _Port | None:
    """The past keys and values given or shaped (``[batch, heads, past, head size]``, not a decoder's cross-attention
    past), or a stateful LLM's ``beam_idx`` (one per sequence) so given, whose dim 0 is the batch the sequence is
    generated at; None where none says one."""
    for p in ports:
        shape = _shape_of(p)
        if shape is None or p.free or not shape:
            continue
        past = (any(n.startswith(PAST) for n in names[p.index]) and not _encoders(names[p.index])
                and len(shape) == 4)  # fmt: skip
        if past or ("beam_idx" in names[p.index] and len(shape) == 1):
            return p
    return None


def _shape_of(port: _Port) -> list[int] | None:
    """``port``'s static shape: its array's, else the static one it is to take; None where it has none yet."""
    if port.array is not None:
        return list(port.array.shape)
    return port.target.to_list() if port.target.is_static else None


def _at_batch(port: _Port, names: set[str], source: _Port, shaped: Any) -> _Port:
    """``port`` at the batch of ``source`` (:func:`_batch_source`) where it is token ids or embeddings that ovreduce
    makes (at a static shape its declared one allows), or a prompt's array of batch 1 (the prompt repeated: a batch of
    the same text, each row's step alike); an error where it is ids or embeddings given, or shaped (``shaped``: the
    shape given) to another batch: the ids and the past they extend (or the beams that pick it) are of one batch in
    every step of generation."""
    from ovreduce.shapes import Dimension, PartialShape

    batch = _shape_of(source)[0]  # type: ignore[index]
    have = _shape_of(port)
    if have is None or not have:
        return port
    where = f"{source.label!r} {_shape_of(source)} {'given' if source.array is not None else 'shaped'}"
    if port.prompt and have[0] != batch:
        if have[0] != 1 or port.array is None:
            raise InputError(f"input {port.label!r} is {port.origin}, of batch {have[0]}, where {where} is "
                             f"of batch {batch}: the two describe no one step of generation")  # fmt: skip
        array = np.repeat(port.array, batch, axis=0)
        return replace(port, array=array, target=PartialShape.static(list(array.shape)),
                       origin=f"{port.origin}, repeated to batch {batch}, that of {where}")  # fmt: skip
    if not names & (TOKEN_IDS | EMBEDDINGS) or have[0] == batch:
        return port
    if port.array is not None or port.prompt:
        raise InputError(f"input {port.label!r} is given of batch {have[0]} ({have}), where {where} is of batch "
                         f"{batch}: {_ONE_BATCH}; give the two at one batch")  # fmt: skip
    wanted = PartialShape.static([batch, *have[1:]])
    if shaped is not None and shaped.dims and not shaped.dims[0].contains(Dimension.static(batch)):
        raise InputError(f"the shape given for input {port.label!r}, {shaped}, is of batch {shaped.dims[0]}, where "
                         f"{where} is of batch {batch}: {_ONE_BATCH}; shape the two at one batch")  # fmt: skip
    return replace(port, target=wanted) if port.declared.compatible(wanted) else port


_ONE_BATCH = "the token ids (or embeddings) and the past they extend are of one batch in every step of generation"


def _refuse_prompt_past(ports: Sequence[_Port], names: Sequence[set[str]]) -> None:
    """An error where a prompt's array runs along the encoder's sequence (a seq2seq decoder's encoder mask) beside a
    cross-attention past given or shaped of another length: the mask and the keys it masks are one encoder output's."""
    cross = _past_length(ports, names, cross=True)
    for p in ports:
        if (p.prompt and p.array is not None and names[p.index] & ENCODER_INPUTS and p.array.ndim >= 2 and cross
                and p.array.shape[1] != cross):  # fmt: skip
            raise InputError(
                f"input {p.label!r} is {p.origin}, an encoder sequence of {p.array.shape[1]} positions, where the "
                f"cross-attention past given or shaped is {cross} positions long: the mask and the encoder's keys "
                f"it masks are one encoder output's; give a past of {p.array.shape[1]} positions, or no prompt"
            )  # fmt: skip


def _covering(port: _Port, lead: Sequence[int], past: int) -> _Port:
    """``port`` (a prompt's attention mask ``[batch, tokens]``) preceded by ``past`` ones, where a past is given: the
    mask of the step with that past covers it too, as optimum-intel's generation extends it."""
    from ovreduce.shapes import PartialShape

    array = port.array
    if not past or array is None or array.ndim != 2 or array.shape[1] != lead[-1] or array.shape[0] != lead[0]:
        return port
    array = np.concatenate([np.ones((array.shape[0], past), dtype=array.dtype), array], axis=1)
    return replace(port, array=array, target=PartialShape.static(list(array.shape)),
                   origin=f"{port.origin}, after {past} ones over the {past} past positions given")  # fmt: skip


def _past_length(ports: Sequence[_Port], names: Sequence[set[str]], cross: bool = False) -> int:
    """The positions of the past keys and values given (optimum's ``past_key_values.N.key``: [batch, heads, past,
    head size]) of an export without state: 0 where none is given. A decoder's cross-attention past (``.encoder.``,
    ``cross``) is the encoder's length, not the generated sequence's: each kind is measured apart."""
    lengths = [p.array.shape[2] if p.array is not None else p.target.to_list()[2] for p in ports
               if (p.array is not None or (not p.free and p.target.is_static)) and _encoders(names[p.index]) is cross
               and any(n.startswith(PAST) for n in names[p.index]) and p.target.rank == 4]  # fmt: skip
    return max(lengths, default=0)


def _cross_length(
    ports: Sequence[_Port], names: Sequence[set[str]], encoder: tuple[int, str] | None = None
) -> tuple[int, str]:
    """How long a seq2seq decoder's encoder sequence not given is made (its cross-attention past, the encoder's keys
    and values, and its encoder mask and hidden states), and why: as the cross-attention past given or shaped; else
    as long as the encoder's sequence that its given mask or hidden states say; else ``encoder`` (the length the
    export's encoder always gives, and what says so: Whisper's ``max_source_positions``); else
    :data:`PROMPT_TOKENS`. Never empty nor one: generation runs a decoder after the encoder, whose output it reads
    (cross-attention over one key is a softmax of 1 whatever it reads, over none adds nothing)."""
    given = _past_length(ports, names, cross=True)
    if given:
        return given, f"{given} positions long, as the cross-attention past given or shaped"
    config = encoder
    given_port = next((p for p in ports if names[p.index] & ENCODER_INPUTS and not p.free and p.target.is_static
                       and (p.target.rank or 0) >= 2), None)  # fmt: skip
    if given_port is not None:
        length = (given_port.array.shape if given_port.array is not None else given_port.target.to_list())[1]
        return length, f"{length} positions long, the encoder's sequence as {given_port.label!r} gives it"
    if config is not None:
        return config[0], f"{config[0]} positions long, as {config[1]} says the encoder output is"
    return PROMPT_TOKENS, (f"{PROMPT_TOKENS} positions long, an encoder's sequence as long as a prompt made (no input "
                           f"gives the encoder's)")  # fmt: skip


def _encoders(names: set[str]) -> bool:
    """Whether an input of these names runs along the encoder's sequence, whatever its Parameter is called: an
    encoder's input, or a decoder's cross-attention past (``past_key_values.N.encoder.key``)."""
    return any("encoder" in name for name in names)


def _sequence(
    ports: Sequence[_Port], names: Sequence[set[str]], shape: Callable[[_Port], tuple[int, ...]]
) -> _Port | None:
    """The input that says the sequence, [batch, tokens] first in its ``shape``: the token ids ([batch, tokens]),
    else their embeddings ([batch, tokens, width], a model fed ``inputs_embeds``)."""
    ids = next((p for p in ports if names[p.index] & TOKEN_IDS and (len(shape(p)) == 2 or _choices(p, shape(p)))),
               None)  # fmt: skip
    return ids or next((p for p in ports if names[p.index] & EMBEDDINGS and len(shape(p)) == 3), None)


def _choices(port: _Port, dims: Sequence[Any]) -> bool:
    """Whether ``port`` of ``dims`` is token ids of choices (``[batch, choices, tokens]``, integers: a multiple-choice
    head's, as optimum-intel exports BERT's, RoBERTa's, DeBERTa's)."""
    return len(dims) == 3 and not port.etype.is_real


def _lead(port: _Port, dims: Sequence[int]) -> tuple[int, ...]:
    """The dims of the sequence that ``port`` (:func:`_sequence`'s) says in ``dims``: ``[batch, tokens]`` of token ids
    or their embeddings (not their width), ``[batch, choices, tokens]`` of ids of choices (:func:`_choices`)."""
    return tuple(dims[:3] if _choices(port, dims) else dims[:2])


def _free_past(port: _Port, names: set[str], batch: int, length: int) -> _Port:
    """``port`` ``length`` long along its sequence, where it is the past keys or values of an LLM exported without
    state (optimum's ``past_key_values.N.key``: [batch, heads, past, head size]), neither given nor shaped: as long
    as the past given of its kind, or empty where none is (the first step of generation), the step the token ids, the
    mask and the positions describe (a past of 1 beside a mask of the ids' length and positions from 0, or layers of
    different pasts, are no state generation makes)."""
    dims = port.declared.dims
    if not (port.free and any(n.startswith(PAST) for n in names) and dims is not None and len(dims) == 4):
        return port
    if not (dims[1].is_static and dims[3].is_static and not dims[2].is_static):
        return port
    made = type(port.declared).static([batch, dims[1].lo, length, dims[3].lo])
    return replace(port, target=made) if port.declared.compatible(made) else port


def _cross_past(port: _Port, names: set[str]) -> bool:
    """Whether ``port`` is a seq2seq decoder's cross-attention past (``past_key_values.N.encoder.key``)."""
    return _encoders(names) and any(n.startswith(PAST) for n in names) and port.declared.rank == 4


ENCODER_INPUTS = frozenset({"encoder_attention_mask", "encoder_hidden_states"})
"""A seq2seq decoder's inputs of the encoder's output: its mask and its hidden states, along the encoder's sequence."""


def _decoder(ports: Sequence[_Port], names: Sequence[set[str]]) -> bool:
    """Whether ``ports`` are a seq2seq decoder's that reads an encoder's output: an encoder input
    (:data:`ENCODER_INPUTS`) or a cross-attention past, beside the decoder's token ids or an encoder mask or a
    cross-attention past (a diffusion transformer's ``encoder_hidden_states`` come with none of them)."""
    encoder = any(names[p.index] & ENCODER_INPUTS or _cross_past(p, names[p.index]) for p in ports)
    return encoder and any(names[p.index] & (TOKEN_IDS | EMBEDDINGS | {"encoder_attention_mask"})
                           or _cross_past(p, names[p.index]) for p in ports)  # fmt: skip


def _follow_encoder(
    ports: list[_Port], names: Sequence[set[str]], encoder: tuple[int, str] | None = None
) -> list[_Port]:
    """``ports`` with a seq2seq decoder's encoder inputs (``encoder_attention_mask``, ``encoder_hidden_states``),
    neither given nor shaped to a static shape, along one encoder's sequence (:func:`_cross_length`, ``encoder`` as
    there), the one its cross-attention past is made for where it takes one: the mask and the keys it masks describe
    one encoder output, in a decoder with past or without (the first step of generation, and every step of a
    stateful export). Their batch is that of an encoder input given, else the token ids'; the hidden states' width
    is their own (a dynamic one left to the fills). Only a decoder's (:func:`_decoder`): a diffusion transformer's
    text tokens (FLUX's ``encoder_hidden_states``, beside the ``txt_ids`` that must be as many) are no encoder
    output, and take the fills as its other inputs."""
    from ovreduce.shapes import Dimension, PartialShape

    if not _decoder(ports, names):
        return ports
    length = _cross_length(ports, names, encoder)[0]
    given = next((p for p in ports if names[p.index] & ENCODER_INPUTS and not _open(p)
                  and (p.target.rank or 0) >= 2), None)  # fmt: skip
    ids = _sequence(ports, names, lambda p: tuple(p.target.to_list()) if p.target.is_static else ())
    batch = given.target.to_list()[0] if given is not None else ids.target.to_list()[0] if ids is not None else 1
    out = []
    for p in ports:
        dims = p.target.dims
        shape = None
        if _open(p) and "encoder_attention_mask" in names[p.index] and dims is not None and len(dims) == 2:
            shape = PartialShape.static([batch, length])
        elif _open(p) and "encoder_hidden_states" in names[p.index] and dims is not None and len(dims) == 3:
            shape = PartialShape((Dimension.static(batch), Dimension.static(length), dims[2]))
        out.append(_follow(p, shape) if shape is not None and p.target.compatible(shape) else p)
    return out


def _sectioned(port: _Port, names: set[str], shape: Any) -> Any:
    """The shape of positions given per rotary section (Qwen2-VL's ``position_ids`` [3, batch, tokens]: time, height,
    width) along the token ids of ``shape``, where ``port`` is such positions neither given nor shaped; else None."""
    dims = port.declared.dims
    if not (port.free and "position_ids" in names and dims is not None and len(dims) == 3 and dims[0].is_static):
        return None
    sections = type(port.declared).static([dims[0].lo, *shape.to_list()])
    return sections if port.declared.compatible(sections) else None


def _open(port: _Port) -> bool:
    """Whether ovreduce picks (some of) ``port``'s dims: not given, and left free or shaped with dims left dynamic
    (``--shape attention_mask=[1,?]``)."""
    return port.array is None and (port.free or not port.target.is_static)


def _follow(port: _Port, shape: Any) -> _Port:
    """``port`` at ``shape`` (the token ids'), the shape given kept for the notes where it was shaped."""
    return replace(port, target=shape, asked=None if port.free else port.target)


def _beams(port: _Port, names: set[str], batch: Any) -> bool:
    """Whether ``port`` is a stateful LLM's ``beam_idx`` (which sequence each row's state is taken from), not given
    and not shaped to a static shape (:func:`_open`): it has the token ids' batch."""
    return _open(port) and "beam_idx" in names and port.target.compatible(batch)


def _along(port: _Port, names: set[str], shape: Any) -> bool:
    """Whether ``port`` runs along the token ids of ``shape``: one of :data:`ALONG_IDS` (not an encoder's
    input, whose length is the encoder's, whatever its Parameter is called), not given and not shaped to a static
    shape (:func:`_open`)."""
    return _open(port) and _runs_along_ids(names) and port.target.compatible(shape)


PATCH_INPUTS = frozenset({"patch_attention_mask", "patch_position_ids"})
"""A vision tower's inputs along the image's patches (SmolVLM's, Idefics3's): a mask ``[batch, rows, columns]`` and
positions ``[batch, rows * columns]``, one element per patch."""


def _patch_grid(
    ov_model: Any, ports: Sequence[_Port], names: Sequence[set[str]], chosen: Sequence[tuple[int, ...]]
) -> tuple[dict[int, Any], tuple[int, int]] | None:
    """The shapes of the patch inputs (:data:`PATCH_INPUTS`) neither given nor shaped, along the patches of the image
    beside them (``pixel_values`` ``[batch, C, H, W]`` as ``chosen`` or given, cut by the strides of the Convolution
    that takes it), and the image's own shape to keep, by input index; and the patches' rows and columns. None where
    there is no such image or input."""
    from ovreduce.shapes import PartialShape

    image = next((p for p in ports if "pixel_values" in names[p.index] and len(chosen[p.index]) == 4), None)
    if image is None or not any(p.free and names[p.index] & PATCH_INPUTS for p in ports):
        return None
    strides = _patch_strides(ov_model.inputs[image.index].get_node())
    batch, _, height, width = chosen[image.index]
    if strides is None or height < strides[0] or width < strides[1]:
        return None
    rows, columns = height // strides[0], width // strides[1]
    grid: dict[int, Any] = {image.index: PartialShape.static(list(chosen[image.index]))}
    for p in ports:
        shape = (PartialShape.static([batch, rows, columns]) if "patch_attention_mask" in names[p.index]
                 else PartialShape.static([batch, rows * columns]) if "patch_position_ids" in names[p.index]
                 else None)  # fmt: skip
        if p.free and shape is not None and p.declared.compatible(shape):
            grid[p.index] = shape
    return (grid, (rows, columns)) if len(grid) > 1 else None


def _patch_strides(node: Any) -> tuple[int, int] | None:
    """The strides of the 2-D Convolution that cuts the image ``node`` gives into patches (through Converts)."""
    for _ in range(4):
        users = [t.get_node() for t in node.output(0).get_target_inputs()]
        conv = next((u for u in users if u.get_type_name() == "Convolution"), None)
        if conv is not None:
            strides = [int(v) for v in conv.get_attributes().get("strides", [])]
            return (strides[0], strides[1]) if len(strides) == 2 and min(strides) > 0 else None
        node = next((u for u in users if u.get_type_name() == "Convert"), None)
        if node is None:
            return None
    return None


def _patch_input(
    port: _Port, names: set[str], dims: Sequence[int], grid: tuple[int, int]
) -> tuple[npt.NDArray[Any], str]:
    """A patch input (:data:`PATCH_INPUTS`) of ``dims`` along the image's ``grid`` of patches (rows, columns), as
    optimum-intel's runtime makes it for a full image: ones over the grid, or the patches' positions ``0..n-1``; and
    its origin."""
    rows, columns = grid
    whose = f"the image's {rows}x{columns} patches, as optimum-intel's runtime makes them for a full image"
    if "patch_position_ids" in names:
        positions = np.broadcast_to(np.arange(rows * columns), tuple(dims)).astype(port.etype.numpy)
        return positions, f"positions 0..{rows * columns - 1} of {whose}"
    return np.ones(tuple(dims), dtype=port.etype.numpy), f"ones over {whose}"


def _padded_positions(mask: npt.NDArray[Any], tokens: int) -> npt.NDArray[np.int64]:
    """The positions of the last ``tokens`` columns of ``mask`` ``[batch, past + tokens]``, as optimum-intel's
    ``prepare_inputs_for_generation`` makes them for batch generation: ``cumsum(mask) - 1`` along each row (a row's
    tokens numbered from its first attended one, whatever the padding before it), 1 at the padding."""
    attended = np.asarray(mask) != 0
    positions = np.cumsum(attended, axis=-1, dtype=np.int64) - 1
    positions[~attended] = 1
    return positions[:, positions.shape[1] - tokens :]


def _attended_positions(
    ports: Sequence[_Port], names: Sequence[set[str]], port: _Port, dims: Sequence[int]
) -> tuple[npt.NDArray[np.int64], str] | None:
    """``position_ids`` of ``dims`` ``[batch, tokens]`` (or ``[sections, batch, tokens]``, one row per rotary section:
    Qwen2-VL's, each section alike, as optimum-intel's ``get_rope_index`` numbers text) made along a padded
    ``attention_mask`` given (one holding a 0 along the past and the tokens, the mask of a left-padded batch), and
    their origin: :func:`_padded_positions`; None where no such mask is given."""
    if "position_ids" not in names[port.index] or len(dims) not in (2, 3) or not dims[-1]:
        return None
    mask = next((p.array for p in ports if p.array is not None and "attention_mask" in names[p.index]
                 and p.array.ndim == 2), None)  # fmt: skip
    if mask is None or mask.shape[0] != dims[-2] or mask.shape[1] < dims[-1] or mask.all():
        return None
    positions = np.broadcast_to(_padded_positions(mask, dims[-1]), tuple(dims)).copy()
    return positions, (
        "positions along the attention mask given: cumsum(mask) - 1 along each row, 1 at the padding, as "
        "optimum-intel numbers a padded batch's tokens" + (", each rotary section alike" if len(dims) == 3 else "")
    )


def _positions_of_tokens(names: set[str]) -> bool:
    """Whether an input of these names holds the new tokens' positions, which a past given puts after it."""
    return _runs_along_ids(names) or "cache_position" in names


def _runs_along_ids(names: set[str]) -> bool:
    """Whether an input of these names runs along the token ids: one of :data:`ALONG_IDS`, not an encoder's input
    (whose length is the encoder's, whatever its Parameter is called)."""
    return bool(names & ALONG_IDS) and not _encoders(names)


def _settled(port: _Port) -> _Port:
    """``port`` (token ids, or their embeddings of a known width) shaped with dims left dynamic (``--shape
    input_ids=[1,1..8]``) at one static shape, chosen as for ids left free: the batch its lower bound (at least 1),
    the sequence :data:`PROMPT_TOKENS` long within the interval given; so that the inputs that run along the ids (the
    mask, the positions, the beams) follow the very shape the ids get. ``asked`` keeps the shape given, for the
    notes."""
    from ovreduce.shapes import PartialShape

    dims = port.target.dims
    if port.free or port.target.is_static or dims is None or len(dims) not in (2, 3):
        return port
    if _choices(port, dims):
        return replace(port, target=PartialShape.static(list(_of_choices(port.target))), asked=port.target)
    if len(dims) == 3 and not dims[2].is_static:  # embeddings of no known width: the fills settle it
        return port
    return replace(port, target=PartialShape.static(list(_static(port.target, PROMPT_TOKENS))), asked=port.target)


def _of_choices(shape: Any) -> tuple[int, ...]:
    """Ids of choices of ``shape`` (``[batch, choices, tokens]``) at one static shape: the batch its lower bound (at
    least 1), :data:`CHOICES` choices of :data:`PROMPT_TOKENS` tokens each, within the intervals given."""
    batch, choices, tokens = shape.dims
    return (
        _static(type(shape)((batch,)), 1, batch=False)[0],
        _static(type(shape)((choices,)), CHOICES, batch=False)[0],
        _static(type(shape)((tokens,)), PROMPT_TOKENS, batch=False)[0],
    )


CHOICES = 2
"""How many choices ovreduce makes for token ids of choices (a multiple-choice head's ``[batch, choices, tokens]``):
more than one, as the head scores choices against each other."""


def _prompt_length(port: _Port) -> _Port:
    """``port`` (token ids, or their embeddings of a known width) at its batch dim's default and
    :data:`PROMPT_TOKENS` long, where it was left free and its declared shape allows that."""
    from ovreduce.shapes import PartialShape

    dims = port.declared.dims
    if port.target != port.declared or dims is None or len(dims) not in (2, 3):
        return port
    if _choices(port, dims):  # ids of choices: their tokens free, or their choices
        if dims[1].is_static and dims[2].is_static:
            return port
        shape = PartialShape.static(list(_of_choices(port.declared)))
        return replace(port, target=shape) if port.declared.compatible(shape) else port
    if dims[1].is_static or (len(dims) == 3 and not dims[2].is_static):  # embeddings of no known width
        return port
    shape = PartialShape.static([_static(port.declared, PROMPT_TOKENS)[0], PROMPT_TOKENS, *[d.lo for d in dims[2:]]])
    return replace(port, target=shape) if port.declared.compatible(shape) else port


def _fit(
    ov_model: Any,
    ports: Sequence[_Port],
    max_elements: int | None,
    pins: Mapping[int, Mapping[int, tuple[int, str]]],
    sized: dict[int, tuple[int, str]] | None = None,
    floors: Mapping[int, Mapping[int, tuple[int, str]]] | None = None,
) -> list[tuple[int, ...]]:
    """Static shapes for ``ports``, ``ov_model`` reshaped to them; the defaults tried in turn, but for the dims
    ``pins`` sets, and the length of a permutation left dynamic, which is the axis it indexes as OpenVINO infers it
    for the others' shapes (put in ``sized``, by input index, with why; see :func:`model_inputs`)."""
    ov = openvino()
    inverted = permutations(ov_model)
    permuted = {p.index: inverted[p.index] for p in ports if p.index in inverted and p.array is None
                and p.target.rank == 1 and not p.target.dims[0].is_static}  # fmt: skip
    # a model that fixes its batch at 1 on an input of dynamic dims (Qwen2-VL's patch merger: attention_mask
    # [1, ?, ?] beside hidden_states [?, 32]) has that one batch: another input's leading dim is no batch but a
    # length like the others, and takes the fill
    one = any(p.declared.rank is not None and p.declared.rank > 1 and p.declared.dims[0].is_static
              and p.declared.dims[0].lo == 1 and not p.declared.is_static for p in ports)  # fmt: skip
    free = any(_static(p.target, 1) != _static(p.target, 2, not one) for p in ports)  # dims a fill would change
    fills = DEFAULT_FILLS if free else DEFAULT_FILLS[:1]
    refused, unkept = "", False
    model_ports = ov_model.inputs  # read once: each .inputs builds the whole list anew
    reshapes = [node for node in ov_model.get_ordered_ops() if node.get_type_name() == "Reshape"]
    for fill in fills:
        chosen = [_pinned(p, _static(p.target, fill, not one), pins.get(p.index, {})) for p in ports]
        chosen = [_floored(p, dims, (floors or {}).get(p.index, {})) for p, dims in zip(ports, chosen, strict=True)]
        if permuted:
            try:
                chosen = _permuted(ov_model, ports, chosen, permuted, sized)
            except Exception as exc:  # shape inference refusing the others' sizes
                refused = clean_message(exc)
                continue
        for port, dims in zip(ports, chosen, strict=True):
            count = int(np.prod(dims, dtype=object))
            if max_elements is not None and count > max_elements:
                if fill == fills[0]:
                    raise LimitExceededError(f"input {port.label!r} would have {count} elements {list(dims)}, more "
                                             f"than the limit of {max_elements} (OVREDUCE_MAX_ELEMENTS)")  # fmt: skip
                return _refused(ports, refused, unkept)
            check_elements(dims, max_elements, f"input {port.label!r}")  # no elements, but dims past the limit
        changed = {  # a string input keeps its shape: a tokenizer's ops cannot be reshaped (their text varies)
            model_ports[p.index]: ov.PartialShape(list(dims))
            for p, dims in zip(ports, chosen, strict=True)
            if (not p.declared.is_static or p.declared.to_list() != list(dims)) and p.etype.name != "string"
        }
        if not changed:
            return chosen
        try:
            ov_model.reshape(changed)  # OpenVINO restores the model when its shape inference refuses
        except Exception as exc:  # shape inference refusing these sizes
            refused, unkept = clean_message(exc), False
            continue
        lost = _unkept(reshapes)
        if lost is not None:  # accepted by OpenVINO, but the compiled model would read past (or short of) its input
            refused, unkept = lost, True
            continue
        return chosen
    return _refused(ports, refused, unkept)


def _unkept(reshapes: Sequence[Any]) -> str | None:
    """The first of ``reshapes`` (Reshape nodes, as OpenVINO infers their shapes) whose static output holds another
    number of elements than its static input, in words; None where each keeps its elements. OpenVINO's shape inference
    does not compare them for a Reshape of special zero without ``-1`` (``[0, 24, 24, 1024]`` takes ``[1, 1, 1024]``),
    and its CPU plugin then reads the output's elements from the input's buffer, past its end."""
    for node in reshapes:
        source, made = node.get_input_partial_shape(0), node.get_output_partial_shape(0)
        if source.is_static and made.is_static:
            before, after = source.to_shape(), made.to_shape()
            if math.prod(before) != math.prod(after):
                return (f"Reshape {node.get_friendly_name()!r} takes [{','.join(map(str, before))}] "
                        f"({math.prod(before)} elements) to [{','.join(map(str, after))}] ({math.prod(after)} "
                        f"elements)")  # fmt: skip
    return None


def _permuted(
    ov_model: Any,
    ports: Sequence[_Port],
    chosen: list[tuple[int, ...]],
    permuted: Mapping[int, tuple[Any, int, str]],
    sized: dict[int, tuple[int, str]] | None,
) -> list[tuple[int, ...]]:
    """``chosen`` with each permutation of ``permuted`` as long as the axis of the Gather it indexes, as OpenVINO's
    shape inference gives it once ``ov_model`` is reshaped to the others' shapes (Qwen2.5-VL's ``window_index``: one
    per merge unit, the rows of ``hidden_states`` over 4, where a fill gave it as many as the rows); kept where that
    axis is not static or out of the dim's interval. Raises whatever OpenVINO raises on the others' shapes."""
    ov = openvino()
    model_ports = ov_model.inputs
    others = {model_ports[p.index]: ov.PartialShape(list(dims)) for p, dims in zip(ports, chosen, strict=True)
              if p.index not in permuted and p.etype.name != "string"}  # fmt: skip
    ov_model.reshape(others)
    out = list(chosen)
    for i, port in enumerate(ports):
        if port.index not in permuted:
            continue
        gather, axis, topk = permuted[port.index]
        rows = gather.input_value(0).get_partial_shape()
        if sized is not None:
            sized.pop(port.index, None)  # (a size of another fill's)
        dim = port.target.dims[0]
        if rows.rank.is_static and axis < rows.rank.get_length() and rows[axis].is_static:
            size = int(rows[axis].get_length())
            if dim.lo <= size and (dim.hi is None or size <= dim.hi):
                out[i] = (size,)
                if sized is not None:
                    name = gather.get_friendly_name()
                    sized[port.index] = (size, f"the size of the axis {axis} of Gather {name!r} it indexes, of which "
                                               f"it is a permutation (TopK {topk!r} inverts it)")  # fmt: skip
    return out


def check_tensor_sizes(ov_model: Any, max_elements: int, where: str = "") -> None:
    """:class:`LimitExceededError` naming the first tensor of ``ov_model`` or of its bodies at any depth (as OpenVINO
    infers their shapes, after any reshape) with more than ``max_elements`` elements: checked before compiling, so a
    174-byte model whose Expand makes 96 million elements is refused without allocating them. Outputs whose shape
    depends on values (dynamic after the reshape) cannot be sized here; their bound is used where OpenVINO knows one.

    The model's weights are not held against it: a Constant (its file holds it, and OpenVINO maps it), and what ops
    make of weights alone without more elements than they hold (a decompression's Convert, Subtract and Multiply by
    scales); a Broadcast or Tile of a Constant to more elements is counted. A body's Parameters count as what feeds
    them (sized around the body: weights, or a tensor within the limit)."""
    weights: dict[Any, int] = {  # the nodes of weights alone -> the most elements any of their outputs holds
        node: elements_bound(node.get_output_partial_shape(0)) for node in ov_model.get_parameters() if where
    }
    for node in ov_model.get_ordered_ops():
        for label, body in _bodies(node):  # (before its outputs: they are made of them)
            named = f"in the {label} of {node.get_type_name()} {node.get_friendly_name()!r}, "
            check_tensor_sizes(body, max_elements, f"{where}{named}")
        sources = [weights.get(port.get_source_output().get_node()) for port in node.inputs()]
        held = max((n for n in sources if n is not None), default=0)
        counts = [elements_bound(node.get_output_partial_shape(i)) for i in range(node.get_output_size())]
        if node.get_type_name() == "Constant" or (
            sources and None not in sources and node.get_type_name() != "ReadValue"  # (its state: no weight)
            and all(0 < count <= held for count in counts)
        ):  # fmt: skip
            weights[node] = max(counts, default=0)
            continue
        for index, count in enumerate(counts):
            shape = node.get_output_partial_shape(index)
            if count > max_elements:
                name = node.get_friendly_name()
                raise LimitExceededError(
                    f"{where}the output {index} of {node.get_type_name()} {name!r} would have {count} elements "
                    f"({shape}), more than the limit of {max_elements} per tensor (OVREDUCE_MAX_ELEMENTS)"
                )


KEPT_FACTOR = 16
"""The tensors a whole-model run keeps (each checked node's inputs and output, every step) are at most this many times
the element limit per tensor together: 48 reductions over 4-million-element inputs are refused before they run, an
LLM's hundreds of norms and softmaxes are far below it."""


def check_kept(ports: Sequence[Any], max_elements: int | None, *, runs: int = 1, what: str) -> None:
    """:class:`LimitExceededError` where marking ``ports`` as outputs of ``runs`` runs would keep more than
    :data:`KEPT_FACTOR` times ``max_elements`` elements at once (their shapes as OpenVINO infers them)."""
    kept = runs * sum(elements_bound(port.get_partial_shape()) for port in ports)
    if max_elements is not None and kept > KEPT_FACTOR * max_elements:
        raise LimitExceededError(
            f"{what} would keep {kept} elements of the model's tensors at once ({len(ports)} tensors it checks, in "
            f"{runs} run(s)), more than {KEPT_FACTOR} times the limit of {max_elements} per tensor "
            f"(OVREDUCE_MAX_ELEMENTS)"
        )


def check_captured(marks: Sequence[Any], runs: Sequence[MarkedRun], max_elements: int | None, *, what: str) -> None:
    """:class:`LimitExceededError` naming the first tensor captured by ``runs`` (of ``marks``, in order) with more than
    ``max_elements`` elements. A tensor whose shape depends on input values could not be sized before the run
    (:func:`check_kept` counts it as nothing); the reference, which reads it again in float64, does not take it."""
    if max_elements is None:
        return
    for run in runs:
        for port, array in zip(marks, run.marked, strict=True):
            if array.size > max_elements:
                node = port.get_node()
                raise LimitExceededError(
                    f"in {what}, the output {port.get_index()} of {node.get_type_name()} {node.get_friendly_name()!r} "
                    f"has {array.size} elements once computed ({list(array.shape)}), more than the limit of "
                    f"{max_elements} per tensor (OVREDUCE_MAX_ELEMENTS); its shape depends on input values, so it "
                    f"could not be sized before the run: give smaller inputs"
                )


def elements_bound(shape: Any) -> int:
    """The most elements an OpenVINO partial shape can have; 0 where nothing bounds it (a dynamic rank, an unbounded
    dim: nothing to check before running)."""
    if shape.rank.is_dynamic:
        return 0
    count = 1
    for dim in shape:
        bound = dim.get_max_length()
        if bound < 0:
            return 0
        count *= int(bound)
    return count


def _refused(ports: Sequence[_Port], message: str, unkept: bool = False) -> NoReturn:
    """:class:`InputError` for inputs that OpenVINO's shape inference refused (``message``, its words), or that a
    Reshape does not keep the elements of (``unkept``: ``message`` names it, :func:`_unkept`)."""
    given = [p.label for p in ports if p.array is not None or p.target != p.declared]
    what = "the shapes given" if given and all(p.target.is_static for p in ports) else "every default tried"
    if unkept:
        fits = "the shapes given for the model's inputs do not fit it" if what == "the shapes given" else (
            "no default tried for the model's inputs fits it")  # fmt: skip
        raise InputError(f"{fits}: {message}, where a Reshape keeps the number of "
                         f"elements (OpenVINO's shape inference lets this one through, and the compiled model would "
                         f"read past its input); give the inputs' shapes that the model takes",
                         parameter="shapes")  # fmt: skip
    raise InputError(f"OpenVINO's shape inference refused {what} for the model's inputs: {message}",
                     parameter="shapes")  # fmt: skip


def channel_pins(ov_model: Any) -> dict[int, dict[int, tuple[int, str]]]:
    """The dims that the model's inputs must have, by input index and dim, with why: an input's dynamic dim 1 that a
    Convolution or GroupConvolution takes (directly or through Converts) as its data, whose filter says how many
    channels it convolves (an image's 3, where no fill of the others is); and what a Reshape needs
    (:func:`_reshape_pins`)."""
    pins: dict[int, dict[int, tuple[int, str]]] = {}
    for index, port in enumerate(ov_model.inputs):
        if port.get_partial_shape().rank.is_dynamic or len(port.get_partial_shape()) < 3:
            continue
        outputs, seen = [port.get_node().output(0)], 0
        while outputs and seen < 64:
            output, seen = outputs.pop(), seen + 1
            for use in output.get_target_inputs():
                node = use.get_node()
                kind = node.get_type_name()
                if kind == "Convert":
                    outputs.append(node.output(0))
                elif kind in ("Convolution", "GroupConvolution") and use.get_index() == 0:
                    filters = node.input(1).get_partial_shape()
                    if filters.is_static:
                        dims = filters.to_shape()
                        channels = dims[1] if kind == "Convolution" else dims[0] * dims[2]
                        pins.setdefault(index, {})[1] = (
                            int(channels),
                            f"the channels its {kind} {node.get_friendly_name()!r} takes",
                        )
    for index, (dim, size, why) in _reshape_pins(ov_model).items():
        pins.setdefault(index, {}).setdefault(dim, (size, why))
    return pins


def _reshape_pins(ov_model: Any) -> dict[int, tuple[int, int, str]]:
    """A dynamic dim of each input that a Reshape takes (directly or through Converts) to a constant target, by input
    index, and its size: the last dynamic dim the target does not copy (a ``0`` of special zero copies the input's dim
    at its place). A target of one ``-1``: what the input's static dims it does not copy lack of the product of the
    target's other dims, which its elements must divide into (Qwen2-VL's flattened patches ``[?, ?]`` to
    ``[-1, 3, 2, 14, 14]``: 1176, where no fill divides); none where those dims hold that product already. A target
    without ``-1``: what they lack of that product, which they must hold exactly (LLaVA-NeXT-Video's resampler
    ``[?, ?, 1024]`` to ``[0, 24, 24, 1024]``: 576 tokens), where that dim is the only dynamic one it does not copy."""
    pins: dict[int, tuple[int, int, str]] = {}
    constants: _Fed | None = None
    for index, port in enumerate(ov_model.inputs):
        shape = port.get_partial_shape()
        if shape.rank.is_dynamic or shape.is_static:
            continue
        outputs, seen = [port.get_node().output(0)], 0
        while outputs and seen < 64 and index not in pins:
            output, seen = outputs.pop(), seen + 1
            for use in output.get_target_inputs():
                node = use.get_node()
                if node.get_type_name() == "Convert":
                    outputs.append(node.output(0))
                elif node.get_type_name() == "Reshape" and use.get_index() == 0:
                    constants = constants or _Fed(_Graphs(ov_model), None)
                    pin = _reshape_pin(shape, node, constants.port(node, 1))
                    if pin is not None:
                        pins[index] = pin
                        break
    return pins


def _reshape_pin(shape: Any, node: Any, target: npt.NDArray[Any] | None) -> tuple[int, int, str] | None:
    """The dim of an input of ``shape`` that Reshape ``node`` needs at a size for its ``target`` (None: not constant),
    the size, and why (see :func:`_reshape_pins`); None where it needs none, or none that one dim can give."""
    if target is None or target.ndim != 1 or int(np.count_nonzero(target == -1)) > 1:
        return None
    zeros = [i for i, v in enumerate(target) if v == 0]
    if zeros and not node.get_attributes().get("special_zero"):
        return None  # a target of no elements
    if any(i >= len(shape) for i in zeros):
        return None
    copied = set(zeros)
    free = [i for i in range(len(shape)) if i not in copied and shape[i].is_dynamic]
    if not free or any(v < -1 for v in target):
        return None
    known = math.prod(int(v) for i, v in enumerate(target) if i not in copied and v != -1)
    given = math.prod(shape[i].get_length() for i in range(len(shape)) if i not in copied and shape[i].is_static)
    whole = [int(v) for v in target]
    name = node.get_friendly_name()
    if -1 in whole:
        size = known // math.gcd(known, given) if known > 0 else 1
        if size > 1:  # no fill of the others makes the elements divide into the target's rows
            return free[-1], size, f"so that its elements fill rows of the target {whole} of Reshape {name!r}"
        return None
    if len(free) == 1 and given > 0 and known % given == 0 and known // given > 0:
        return free[0], known // given, f"so that its elements fill the target {whole} of Reshape {name!r}"
    return None


def _pinned(port: _Port, dims: tuple[int, ...], pins: Mapping[int, tuple[int, str]]) -> tuple[int, ...]:
    """``dims`` with each dynamic dim of ``port`` that ``pins`` sets (within its interval) at its size."""
    out = list(dims)
    for i, (size, _) in pins.items():
        d = port.target.dims[i]
        if not d.is_static and d.lo <= size and (d.hi is None or size <= d.hi):
            out[i] = size
    return tuple(out)


def _images(
    ports: Sequence[_Port],
    names: Sequence[set[str]],
    pins: Mapping[int, Mapping[int, tuple[int, str]]],
    image: tuple[tuple[int, int], str] | None,
) -> dict[int, dict[int, tuple[int, str]]]:
    """The least height and width of each image among ``ports`` (``[?, C, ?, ?]`` of 1 or 3 channels, declared or as
    its Convolution takes them, or ``pixel_values``), its height and width neither given nor pinned: ``image`` (as the
    export's config says), else :data:`IMAGE_SIZE`, each with why; by input index and dim."""
    (height, width), why = image if image is not None else ((IMAGE_SIZE, IMAGE_SIZE), "")
    why = f"the image size {why}" if image is not None else (
        "an image's least default: a global pooling after a 32-fold downsampling then reduces 2x2 elements, where a "
        "smaller image leaves it one; give the image's shape for the model's own size")  # fmt: skip
    floors: dict[int, dict[int, tuple[int, str]]] = {}
    for p in ports:
        dims = p.target.dims
        if p.array is not None or dims is None or len(dims) != 4 or dims[2].is_static or dims[3].is_static:
            continue
        pinned = pins.get(p.index, {})
        channels = dims[1].lo if dims[1].is_static else pinned[1][0] if 1 in pinned else None
        if channels in (1, 3) or "pixel_values" in names[p.index]:
            floors[p.index] = {i: (size, why) for i, size in ((2, height), (3, width)) if i not in pinned}
    return floors


def _waveforms(
    ports: Sequence[_Port],
    names: Sequence[set[str]],
    pins: Mapping[int, Mapping[int, tuple[int, str]]],
    audio: tuple[int, str] | None,
) -> dict[int, dict[int, tuple[int, str]]]:
    """The least length of each waveform among ``ports`` (``input_values`` of rank 2, its length neither given nor
    pinned), and of an ``attention_mask`` over its samples beside it: ``audio``'s samples, with why; by input index and
    dim (none without ``audio``)."""
    if audio is None:
        return {}
    samples, why = audio

    def free(p: _Port, name: str) -> bool:
        dims = p.target.dims
        return (p.array is None and dims is not None and len(dims) == 2 and not dims[1].is_static
                and name in names[p.index] and 1 not in pins.get(p.index, {}))  # fmt: skip

    waves = [p.index for p in ports if free(p, "input_values")]
    masks = [p.index for p in ports if free(p, "attention_mask")] if waves else []
    return {index: {1: (samples, why)} for index in (*waves, *masks)}


def _floored(port: _Port, dims: tuple[int, ...], floors: Mapping[int, tuple[int, str]]) -> tuple[int, ...]:
    """``dims`` with each dim of ``port`` that ``floors`` names at least its size (within the dim's interval)."""
    out = list(dims)
    for i, (size, _) in floors.items():
        d = port.target.dims[i]
        out[i] = min(max(out[i], size), d.hi) if d.hi is not None else max(out[i], size)
    return tuple(out)


def _static(shape: Any, fill: int, batch: bool = True) -> tuple[int, ...]:
    """``shape`` with each dynamic dim given a size: a leading batch dim (rank > 1, where ``batch``) its lower bound,
    at least 1; any other ``fill`` clamped into its interval."""
    dims = []
    for i, d in enumerate(shape):
        if d.is_static:
            dims.append(d.lo)
            continue
        want = 1 if i == 0 and shape.rank > 1 and batch else fill
        size = max(d.lo, want)
        if d.hi is not None:
            size = min(size, d.hi)
        dims.append(size)
    return tuple(dims)


def fit_model(ov_model: Any, arrays: Mapping[int, npt.NDArray[Any]]) -> None:
    """Reshape another copy of a model to the arrays :func:`model_inputs` chose for the first (static shapes,
    so that every run of an audit compiles the same graph); raises whatever OpenVINO raises."""
    ov = openvino()
    ports = ov_model.inputs
    changed = {  # a string input keeps its shape, as model_inputs leaves it
        ports[i]: ov.PartialShape(list(a.shape))
        for i, a in arrays.items()
        if ports[i].get_partial_shape() != ov.PartialShape(list(a.shape)) and port_type_name(ports[i]) != "string"
    }
    if changed:
        ov_model.reshape(changed)


@dataclass
class MarkedRun:
    """What one run of a model with marked tensors gave."""

    outputs: list[npt.NDArray[Any]]  # the model's own outputs
    marked: list[npt.NDArray[Any]]  # the marked tensors, in the order they were asked for
    effective_precision: str | None
    runtime_precision: dict[str, str]  # node name -> the precision it executes in
    visited: int = 0  # compiled-model outputs fetched and indexed plus marks looked up: the work that grows with them
    reducing: frozenset[str] = frozenset()  # the node names the execution graph gives its reduction kernels
    kv_cache_precision: str | None = None  # what the compiled model keeps a stateful model's KV cache in
    other_states: tuple[tuple[str, int], ...] = ()  # the states no attention holds: (precision written in, count)
    kernels: dict[str, tuple[str, str]] = field(default_factory=dict)  # node name -> its kernel (runtime_kernels)


class InferenceTimeoutError(LimitExceededError):
    """OpenVINO's inference did not finish before the deadline. It cannot be stopped (``InferRequest.cancel``
    does not end a Loop that never terminates): the request is left running and kept (:func:`abandoned`), and
    the process should exit without waiting for it."""

    code = "limit.time"


_ABANDONED: list[Any] = []  # requests still running past their deadline, with their compiled models


def abandoned() -> bool:
    """Whether an inference of this process was left running (past its deadline, or interrupted): a process that exits
    normally then waits for it (OpenVINO's request joins its threads), so it should end with ``os._exit`` instead."""
    return bool(_ABANDONED)


# How long one wait for a running inference lasts: a signal's Python handler (Ctrl-C's KeyboardInterrupt) runs only
# between two, since OpenVINO's wait does not return for one.
_WAIT_SLICE_MS = 100


def _waited(request: Any, compiled: Any, deadline: float | None) -> bool:
    """Wait for ``request``'s inference, started, until ``deadline`` (None: until it ends); whether it ended. One left
    running (past its deadline, or when an interrupt such as KeyboardInterrupt ends the wait) is kept in
    :data:`_ABANDONED`, so that the process ends without waiting for it."""
    try:
        while True:
            left = None if deadline is None else int((deadline - time.monotonic()) * 1000)
            if request.wait_for(_WAIT_SLICE_MS if left is None else max(min(left, _WAIT_SLICE_MS), 1)):
                return True
            if left is not None and left <= _WAIT_SLICE_MS:
                _ABANDONED.append((request, compiled))
                return False
    except BaseException as exc:
        if not isinstance(exc, Exception):  # interrupted (an inference that failed has ended)
            _ABANDONED.append((request, compiled))
        raise


def run_marked(
    ov_model: Any,
    marks: Sequence[Any],
    inputs: Mapping[int, npt.NDArray[Any]],
    device: str,
    precision: str,
    on_stage: Callable[[str], object] | None = None,
    deadline: float | None = None,
    widen: bool = False,
) -> MarkedRun:
    """Run ``ov_model`` once with ``marks`` (OpenVINO outputs) added as model outputs.

    ``on_stage`` is told ``"compiling"`` before the compile and ``"inference"`` before the inference.
    ``ov_model`` keeps the added outputs. ``deadline`` (a :func:`time.monotonic` time) bounds the inference.
    ``widen``: capture each mark the model declares f16 or bf16 as the device computed it (:func:`_widened`), not
    rounded to its declared type.

    Raises:
        InferenceTimeoutError: the inference had not finished by ``deadline``.
        MemoryLimitError: the compile or the inference needed more memory than the process may use.
        whatever OpenVINO raises.
    """
    return run_steps(ov_model, marks, inputs, device, precision, None, on_stage, deadline, widen)[0]


# What the next step of a stateful model gets, from the step number (1, 2...) and the run of the step before
# (None: no further step).
NextInputs = Callable[[int, MarkedRun], Mapping[int, npt.NDArray[Any]] | None]


def run_steps(
    ov_model: Any,
    marks: Sequence[Any],
    inputs: Mapping[int, npt.NDArray[Any]],
    device: str,
    precision: str,
    next_inputs: NextInputs | None = None,
    on_stage: Callable[[str], object] | None = None,
    deadline: float | None = None,
    widen: bool = False,
) -> list[MarkedRun]:
    """Run ``ov_model`` with ``marks`` added as model outputs on one infer request: once on ``inputs``, then
    on what ``next_inputs`` gives for each further step until it gives None. A stateful model's state (its
    ReadValue/Assign variables: an LLM's KV cache) is carried from step to step by the request, as OpenVINO
    carries it in generation. Compiled once. See :func:`run_marked` for the rest."""
    try:
        return _run_steps(ov_model, marks, inputs, device, precision, next_inputs, on_stage, deadline, widen)
    except (RuntimeError, MemoryError) as exc:
        refusal = memory_refusal(exc)
        if refusal is None:
            raise
        raise refusal from None


# OpenVINO's CPU plugin's failed allocation: a line of its own, after the check that failed. Node names, which come
# from the file, are quoted within the lines before it: only a name with a line break of its own could pass for it.
_ALLOCATION_RE = re.compile(r"^Failed to allocate (\d+) bytes of memory$", re.MULTILINE)
_NODE_RE = re.compile(r"^\[\w+\] (\w+) node with name '([^'\n]*)'", re.MULTILINE)


def _raise_memory_refusal(exc: BaseException) -> None:
    """Raise :func:`memory_refusal`'s error where ``exc`` is one: running out of memory is the process's limit, not a
    verdict of the backend on the inputs."""
    refusal = memory_refusal(exc)
    if refusal is not None:
        raise refusal from None


def memory_refusal(exc: BaseException) -> MemoryLimitError | None:
    """An inference that ran out of memory, in words (OpenVINO's failed allocation; Python's :class:`MemoryError`,
    which pybind11 also makes of C++'s ``std::bad_alloc``); None for any other failure. A tensor whose shape depends
    on input values cannot be sized before running: this is where such a tensor too large for the process ends."""
    text = str(exc)
    found = None if isinstance(exc, MemoryError) else _ALLOCATION_RE.search(text)
    if found is not None:
        node = _NODE_RE.search(text, 0, found.start())
        what = f" for the output of {node[1]} {node[2]!r}" if node is not None else ""
        said = f"OpenVINO could not allocate {int(found[1])} bytes{what}"
    elif isinstance(exc, MemoryError) or clean_message(exc) == "std::bad_alloc":  # C++'s, as OpenVINO passes it on
        said = "the inference ran out of memory"
    elif clean_message(exc) == "can't alloc":  # the CPU plugin's, compiling the model (its weights, its buffers)
        said = "OpenVINO could not allocate the memory to compile the model"
    elif clean_message(exc).endswith("Resource temporarily unavailable"):  # a thread the plugin could not start
        said = "OpenVINO could not start a thread (its stack is memory too)"
    else:
        return None
    return MemoryLimitError(
        f"{said}: the model's tensors for these inputs need more memory than this process may use (a tensor whose "
        f"shape depends on input values is sized only as it is computed); give smaller inputs"
    )


def _run_steps(
    ov_model: Any,
    marks: Sequence[Any],
    inputs: Mapping[int, npt.NDArray[Any]],
    device: str,
    precision: str,
    next_inputs: NextInputs | None,
    on_stage: Callable[[str], object] | None,
    deadline: float | None,
    widen: bool,
) -> list[MarkedRun]:
    original = len(ov_model.outputs)
    aliases: dict[str, str] = {}  # a widening Convert's name -> its node's: the plugin may fuse the node into it
    added = ov_model.add_outputs([_widened(port, aliases) if widen else port for port in marks]) if marks else []
    if on_stage is not None:
        on_stage("compiling")
    compiled = compile_model(ov_model, device, precision)
    effective = effective_precision(compiled, None)
    executes = {aliases.get(name, name): p for name, p in runtime_precisions(compiled).items()}
    reducing = frozenset(aliases.get(name, name) for name in reduction_kernels(compiled))
    kernels = {aliases.get(name, name): kernel for name, kernel in runtime_kernels(compiled).items()}
    kv_caches, states = state_precisions(compiled) if ov_model.get_sinks() else (0, ())
    kv_cache = kv_cache_precision(compiled) if kv_caches else None  # (a model of states no attention holds has none)
    if kv_caches and kv_cache is None:  # a virtual device's compiled model does not report it
        asked = compile_options(precision, device).get("KV_CACHE_PRECISION")
        kv_cache = f"{asked} (as asked: {device} does not report it)" if asked else f"what {device} does not report"
    request = compiled.create_infer_request()
    ports = ov_model.inputs  # read once: each .inputs builds the whole list anew
    watched = watched_inputs(ov_model)
    model_outputs = list(ov_model.outputs)
    position: dict[Any, int] = {}
    for i, port in enumerate(model_outputs):  # an index built once: the first output equal to each mark
        position.setdefault(port, i)
    wanted = [*range(original), *(position[port] for port in added)]
    runs: list[MarkedRun] = []
    feeds: Mapping[int, npt.NDArray[Any]] | None = inputs
    while feeds is not None:
        refuse_crashing_inputs(watched, feeds)
        tensors = {i: to_tensor(a, port_type_name(ports[i])) for i, a in feeds.items()}
        if on_stage is not None and not runs:
            on_stage("inference")
        request.start_async(tensors)
        if not _waited(request, compiled, deadline):
            raise InferenceTimeoutError("OpenVINO's inference did not finish within the time limit")
        copies: dict[int, npt.NDArray[Any]] = {}
        for i in wanted:  # only the outputs asked for are copied out of the request, each once
            if i not in copies:
                copies[i] = from_tensor(request.get_output_tensor(i))
        marked = [copies[position[port]] for port in added]
        visited = len(copies) + len(added) + (len(model_outputs) if not runs else 0)  # fetched, looked up, indexed
        runs.append(MarkedRun([copies[i] for i in range(original)], marked, effective, executes, visited, reducing,
                              kv_cache, states, kernels))  # fmt: skip
        feeds = None if next_inputs is None else next_inputs(len(runs), runs[-1])
    return runs


def _widened(port: Any, aliases: dict[str, str]) -> Any:
    """``port``, or where the model declares it f16 or bf16 a Convert of it to f32: an output of such a type is
    rounded to it on the way out, though a device running the model in f32 computed the value in f32 (an f16 IR's
    square of 300 is 90,000 in OpenVINO's f32 run and inf in an f16 output). Widened, the capture holds what the
    device computed, whatever precision it ran in. The CPU plugin fuses a reduction into such a Convert, whose name
    its kernel then bears: ``aliases`` maps it back."""
    if port.get_element_type().get_type_name() not in ("f16", "bf16"):
        return port
    from openvino import opset1 as ops

    convert = ops.convert(port, "f32")
    aliases[convert.get_friendly_name()] = port.get_node().get_friendly_name()
    return convert.output(0)


def port_type_name(port: Any) -> str:
    """ovreduce's name of an OpenVINO port's element type (``f32``, ``boolean``...)."""
    return str(element_type(port.get_element_type().get_type_name()).name)
