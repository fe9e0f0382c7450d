"""``ovreduce run``: execute one reduction layer of an IR on several backends and compare them.

The public entry points are :func:`layer_spec` (what defines the layer), :func:`prepare_inputs` (given or
seeded inputs, checked against the layer) and :func:`run_layer`, which returns a :class:`RunReport`
(the ``ovreduce.run/v1`` document, and the output arrays).

A reduction inside a sub-graph body runs standalone like any other, addressed by its path
(:data:`ovreduce.ir.model.PATH_GRAMMAR`, e.g. ``12/then/110``); its inputs are one body execution's (a Loop
body's sliced input is one slice).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from ovreduce.backends.base import Backend, BackendResult, LayerSpec
from ovreduce.compare import (
    DECIDING,
    NARROW_FLOAT_TOLERANCES,
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
from ovreduce.errors import InputError, OvReduceError, ShapeInferenceError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.dtypes import ElementType, element_type_for_numpy
from ovreduce.ir.model import IRModel, Layer
from ovreduce.ops.registry import reductions, type_name
from ovreduce.reference.evaluate import undefined_elements
from ovreduce.reports.run import BLIND, BackendRun, RunDocument, RunLayer, TensorInfo
from ovreduce.shapes import PartialShape, merge
from ovreduce.tensors import (
    DEFAULT_MAX_ELEMENTS,
    check_elements,
    concrete_shape,
    conform_array,
    generate,
    given_once,
    own_names,
)

if TYPE_CHECKING:
    from ovreduce.backends.openvino import LayerCache


__all__ = [
    "PreparedInputs",
    "RunReport",
    "layer_spec",
    "make_backends",
    "prepare_inputs",
    "rounding_mass",
    "run_layer",
    "run_spec",
]

BACKEND_NAMES = ("numpy", "openvino")


_MAX_RANK = 64  # NumPy's most dimensions


def _body_reductions(model: IRModel, key: str) -> str:
    """ "; did you mean PATH?" for the reductions of sub-graph bodies whose own id or name is ``key`` (which names
    a top-level layer that is no reduction); "" when there are none."""
    from ovreduce.ops.registry import reductions

    kinds = reductions()
    held = [f"{b.path}/{x.id}" for b in model.bodies() for x in b.body.graph.layers
            if x.type in kinds and key in (x.id, x.name)]  # fmt: skip
    if not held:
        return ""
    some = "a sub-graph body holds a reduction" if len(held) == 1 else f"sub-graph bodies hold {len(held)} reductions"
    return f"; {some} with that id or name: did you mean {' or '.join(repr(p) for p in held)}?"


def layer_spec(model: IRModel, key: str, engine: ShapeEngine | None = None) -> LayerSpec:
    """The :class:`LayerSpec` of reduction layer ``key`` (id, name, or path into a sub-graph body).

    Raises:
        NotFoundError: no such layer.
        InputError: it is not a reduction, or its shape or types cannot be resolved or are not executable.
    """
    ref = model.locate(key)
    layer = ref.layer
    where = layer.where if ref.body_path is None else f"{layer.where} in body {ref.body_path}"
    engine = (engine or ShapeEngine(model)).body_engine(ref.body_path)
    try:
        info = engine.reduction(layer.id)
    except KeyError:
        raise InputError(
            f"{where} is not a reduction; ovreduce runs {', '.join(reductions())} layers"
            f"{_body_reductions(model, key) if ref.body_path is None else ''}"
        ) from None
    if info.error is not None:
        raise InputError(f"{where} is invalid: {info.error}")
    data_type = info.data.element_type
    axes_type = info.axes_state.element_type
    if data_type is None or data_type.kind == "dynamic":
        raise InputError(f"{where}: the element type of its data input is not known")
    if axes_type is None or axes_type.kind == "dynamic":
        raise InputError(f"{where}: the element type of its axes input is not known")
    if info.axes.kind == "unresolved":
        raise InputError(f"{where}: its axes cannot be resolved: {info.axes.reason}")
    axes_shape = info.axes_state.shape
    if axes_shape is None:
        axes_shape = (
            PartialShape.dynamic(1) if info.axes.values is None else PartialShape.static([len(info.axes.values)])
        )
    return LayerSpec(
        type=type_name(layer.type, layer.version),
        keep_dims=info.keep_dims,
        data_type=data_type,
        data_shape=info.data.shape if info.data.shape is not None else PartialShape.dynamic(),
        axes_type=axes_type,
        axes_shape=axes_shape,
        axes=info.axes.values if info.axes.kind == "const" else None,
        layer_id=layer.id,
        layer_name=layer.name,
    )


def _input_names(model: IRModel, layer: Layer, index: int) -> set[str]:
    """The names an input may be given by: its port index, or the Parameter (and its tensors) feeding it."""
    names = {str(index)}
    ref = model.producer(layer.id, layer.inputs[index].id)
    if ref is not None:
        src = model.layer(ref[0])
        if src.type == "Parameter":
            names.add(src.name)
            names.update(src.outputs[0].names)
    return names


class PreparedInputs(NamedTuple):
    """A layer's inputs as :func:`prepare_inputs` made them."""

    arrays: list[npt.NDArray[Any]]
    notes: list[str]
    defaulted: list[tuple[int, ...]]  # per input: the dims that were dynamic and got a default size


def prepare_inputs(
    model: IRModel,
    spec: LayerSpec,
    *,
    given: Mapping[str, npt.NDArray[Any]] | None = None,
    shapes: Mapping[str, PartialShape] | None = None,
    seed: int = 0,
    max_elements: int | None = DEFAULT_MAX_ELEMENTS,
    body_path: str | None = None,
    aliases: Sequence[str] = ("data", "axes"),
) -> PreparedInputs:
    """The layer's inputs (data, and axes when runtime) from ``given`` arrays or generated from ``seed``.

    ``given`` and ``shapes`` are keyed by port index (``"0"``, ``"1"``), by the name of the Parameter
    feeding the port, or by its alias: ``aliases[i]`` names port ``i`` (``data`` and ``axes``, the names the
    messages call the ports by: ``input 0 (data)``). An index or alias names its own port before a Parameter of that
    name feeding another (:func:`own_names`).
    ``body_path`` is the ids path of the body holding the layer (None: top level).
    Returns the arrays, notes (casts, dynamic dims chosen) and, per input, the dims ovreduce chose a size for.

    Raises:
        InputError: an unknown name, an incompatible array, runtime axes without values, too many elements.
    """
    given = dict(given or {})
    shapes = dict(shapes or {})
    model = model.graph_at(body_path)
    layer = model.layer(spec.layer_id)
    ports = [(0, spec.data_type, spec.data_shape, "data")]
    if spec.runtime_axes:
        ports.append((1, spec.axes_type, spec.axes_shape, "axes"))
    reserved = [{str(i), *aliases[i : i + 1]} for i, *_ in ports]
    known = dict(enumerate(own_names([_input_names(model, layer, i) for i, *_ in ports], reserved)))
    for name in list(given) + list(shapes):
        if not any(name in names for names in known.values()):
            options = ", ".join(sorted(n for names in known.values() for n in names))
            raise InputError(f"{name!r} names no input of {layer.where}; use one of: {options}")
    rng = np.random.default_rng(seed)
    arrays: list[npt.NDArray[Any]] = []
    notes: list[str] = []
    defaulted: list[tuple[int, ...]] = []
    data_given = False
    for index, etype, shape, role in ports:
        what = f"input {index} ({role})"
        key = given_once(given, known[index], what, "inputs")
        shape_key = given_once(shapes, known[index], what, "shapes")
        if key is not None and shape_key is not None:  # the array's own shape would win silently
            raise InputError(f"{what} is given both an array and a shape; give one", parameter="shapes", twice=True)
        array = None if key is None else given[key]
        data_given = data_given if index else array is not None
        override = None if shape_key is None else shapes[shape_key]
        if array is not None:
            arr = conform_array(np.asarray(array), etype, shape, what)
            if arr.dtype != np.asarray(array).dtype:
                notes.append(f"{what}: cast from {np.asarray(array).dtype} to {etype}")
        elif role == "axes":
            data_rank = arrays[0].ndim if arrays else spec.data_shape.rank
            words = reserved[index] - _input_names(model, layer, index)  # its word, which every axes input has
            raise InputError(_axes_advice(layer.where, sorted(known[index] - {"1"} - words), etype, shape, data_rank),
                             parameter="inputs")  # fmt: skip
        else:
            if override is not None:
                if not override.compatible(shape):
                    raise InputError(
                        f"the shape given for {what}: {override} is not compatible with the layer's {shape}",
                        parameter="shapes",
                    )
                if override.dims is not None and shape.dims is not None:  # a '?' given stays within the layer's dim
                    shape = PartialShape(
                        tuple(merge(o, d) or o for o, d in zip(override.dims, shape.dims, strict=True))
                    )
                elif override.dims is not None:
                    shape = override
            dims, chosen = concrete_shape(shape, what)
            if len(dims) > _MAX_RANK:  # NumPy cannot make it: a ValueError, which the service answered 500
                given_rank = override is not None and override.dims is not None  # else the layer's: no shape helps
                raise InputError(
                    f"{what} would have rank {len(dims)}: inputs of more than {_MAX_RANK} dimensions cannot be made "
                    f"(NumPy's limit)",
                    parameter="shapes" if given_rank else None,
                )
            notes += chosen
            if shape.dims is not None:
                defaulted.append(tuple(i for i, d in enumerate(shape.dims) if not d.is_static))
            check_elements(dims, max_elements, what)
            arr = generate(etype, dims, rng)
        check_elements(arr.shape, max_elements, what)
        arrays.append(arr)
        if len(defaulted) < len(arrays):
            defaulted.append(())
    # held to OpenVINO's rule before any backend runs: its CPU plugin would run i64 axes as i32 (2**32 as axis 0), and
    # a data shape given or made may not fit the layer's own axes (keep_dims of a scalar)
    axes = arrays[1] if spec.runtime_axes else spec.axes
    if axes is not None:
        from ovreduce.reference.openvino import normalized_axes

        try:
            normalized_axes(arrays[0], axes, spec.keep_dims)
        except ShapeInferenceError as exc:
            said = "input 1 (axes)" if spec.runtime_axes else f"the layer's axes {list(axes)}"
            raise InputError(f"{said} do not fit input 0 (data) of shape {list(arrays[0].shape)}: {exc.message}",
                             parameter="inputs" if spec.runtime_axes else None) from None  # fmt: skip
    if spec.type in DECIDING and arrays[0].dtype.kind in "biu" and not data_given:  # informative slices
        arrays[0] = deciding_once(arrays[0], axes, spec.type, rng)
    if spec.type == "ReduceProd" and has_factors(arrays[0].dtype) and not data_given and axes is not None:
        arrays[0] = factors(arrays[0], axes, rng)
    return PreparedInputs(arrays, notes, defaulted)


def deciding_once(data: npt.NDArray[Any], axes: Any, op: str, rng: np.random.Generator) -> npt.NDArray[Any]:
    """Made ``data`` remade so that each output of the reduction ``op`` over ``axes`` depends on one element, which a
    kernel that misses or misreads it gets wrong. Booleans of a logical reduction (or a ReduceMax/Min): each slice holds
    the value that decides it once, or not at all, about half of them each way, both kinds where there are two slices
    or more (at fair odds, a slice of 12 held it about 6 times, and every output was that value). Integers of a
    ReduceMax/Min: each slice's extreme once, the other elements equal to it moved one step in (drawn over a whole
    8-bit range, a slice of 4,096 held the type's limit about 16 times, and every output was that limit)."""
    shape = data.shape
    reduced = sorted({int(a) % len(shape) for a in np.asarray(axes).reshape(-1).tolist()}) if shape else []
    order = [a for a in range(len(shape)) if a not in reduced] + reduced
    slices = math.prod(shape[a] for a in order[: len(order) - len(reduced)])
    size = math.prod(shape[a] for a in reduced)
    if data.dtype.kind == "b":
        decides = DECIDING[op]
        flat = np.full((slices, size), not decides)
        if slices and size:
            once = rng.random(slices) < 0.5
            if slices == 1 or not once.any():
                once[0] = True  # (one slice without it: a constant input)
            elif once.all():
                once[0] = False
            flat[np.flatnonzero(once), rng.integers(0, size, int(once.sum()))] = decides
    else:
        flat = np.transpose(data, order).reshape(slices, size).astype(np.int64)
        if slices and size:
            largest = DECIDING[op]
            extreme = (flat.max if largest else flat.min)(axis=1, keepdims=True)
            step = -1 if largest else 1
            info = np.iinfo(data.dtype)
            tied = (flat == extreme) & (info.min <= extreme + step) & (extreme + step <= info.max)
            kept = np.where(tied, rng.random(flat.shape), -1.0).argmax(axis=1)  # one of each slice's ties stays
            tied[np.arange(slices), kept] = False
            flat = np.where(tied, extreme + step, flat)
        flat = flat.astype(data.dtype)
    return np.transpose(flat.reshape([shape[a] for a in order]), np.argsort(order)).copy()  # (a scalar stays one)


def has_factors(dtype: np.dtype[Any]) -> bool:
    """Whether :func:`factors` makes a product's input of ``dtype``: the integers, f16, f32, f64 and bf16 (a void-kind
    type of ml_dtypes, the type of most LLM exports)."""
    return dtype.kind in "fiu" or dtype.name == "bfloat16"


def factors(data: npt.NDArray[Any], axes: Any, rng: np.random.Generator) -> npt.NDArray[Any]:
    """Factors for a ReduceProd over ``axes`` in ``data``'s type whose products each element shows in: floats of a
    random sign and a magnitude ``exp(N(0, 1/n))`` for slices of ``n`` (a product about 1), odd integers from 3 to 7 of
    a random sign (a product never 0, whatever it wraps to). Normal floats gave a product below any tolerance over 64
    elements, and 64 seeded integers held 32 factors of 2: a product wrapped to 0, which a kernel that gives zeros
    matches."""
    reduced = {int(a) % data.ndim for a in np.asarray(axes).reshape(-1).tolist()} if data.ndim else set()
    n = max(math.prod(data.shape[a] for a in reduced), 1)
    signs: npt.NDArray[np.int64] = rng.choice([1] if data.dtype.kind == "u" else [-1, 1], data.shape)
    if data.dtype.kind == "f" or data.dtype.name == "bfloat16":
        magnitudes: npt.NDArray[Any] = np.exp(rng.normal(0.0, 1.0 / math.sqrt(n), data.shape))
    else:
        magnitudes = rng.choice([3, 5, 7], data.shape)
    return np.asarray(signs * magnitudes).astype(data.dtype)


def _axes_advice(where: str, names: list[str], etype: ElementType, shape: PartialShape, rank: int | None) -> str:
    """What to give for runtime axes: the shape and type the layer expects, the values allowed, an example
    that fits (a .npy the user can write with one line of NumPy)."""
    count: int | None = None
    if shape.dims is not None and shape.is_static:
        count = 1 if shape.rank == 0 else shape.to_list()[0] if shape.rank == 1 else None
    if count is None:
        count = 1
        shape_text = f"a 1-D array (the layer declares {shape})"
    else:
        shape_text = f"an array of shape {shape}"
    if rank is not None and count > rank:
        values = f"{count} axes but the data has rank {rank}: no valid axes exist for this layer"
        example = ""
    else:
        span = f"in [-{rank}, {rank - 1}]" if rank else "(the data's rank is not known: give its shape too)"
        values = f"{count} distinct axis {'index' if count == 1 else 'indices'} {span}"
        literal = "0" if shape.rank == 0 else f"[{', '.join(str(i) for i in range(count))}]"
        example = f", e.g. np.save('axes.npy', np.array({literal}, dtype=np.{etype.numpy_name}))"
    via = f"input 1 (or {', '.join(repr(n) for n in names)})" if names else "input 1"
    return f"{where} takes its axes at run time: give {via} as {shape_text} of {etype} holding {values}{example}"


def make_backends(
    names: Sequence[str], *, device: str | None = None, precision: str | None = None, cache: LayerCache | None = None
) -> list[Backend]:
    """Backends by name (``numpy``, ``openvino``); OpenVINO's on ``device`` in ``precision`` (None: not given, CPU and
    f32).

    Raises:
        InputError: an unknown backend name, or one given twice; a device or precision given with NumPy alone (it
            would be dropped without a word).
        DeviceNotAvailableError: the OpenVINO device is not available.
    """
    unused = [
        f"{name} {value!r}" for name, value in (("device", device), ("precision", precision)) if value is not None
    ]
    if unused and "openvino" not in names:
        they, none = ("it has", f"no {unused[0].split()[0]}") if len(unused) == 1 else ("they have", "neither")
        raise InputError(
            f"{' and '.join(unused)} with the numpy backend alone: only OpenVINO runs on a device and in a precision, "
            f"so {they} no effect; expected the openvino backend too, or {none}"
        )
    out: list[Backend] = []
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:  # it would be compared with itself, and agree
        raise InputError(f"backend {twice!r} is given twice; each backend runs once, and is compared with the others",
                         twice=True)  # fmt: skip
    for name in names:
        if name == "numpy":
            from ovreduce.backends.numpy import NumPyBackend

            out.append(NumPyBackend())
        elif name == "openvino":
            from ovreduce.backends.openvino import OpenVINOBackend

            out.append(  # (only what is not given is the default: an empty device is refused, as audit refuses it)
                OpenVINOBackend(
                    "CPU" if device is None else device, "f32" if precision is None else precision, cache=cache
                )
            )  # ("": refused, as audit refuses it)
        else:
            raise InputError(f"unknown backend {name!r}; expected one of: {', '.join(BACKEND_NAMES)}")
    if not out:
        raise InputError("no backend was chosen")
    return out


@dataclass
class RunReport:
    """The ``ovreduce.run/v1`` document, with the outputs kept as arrays."""

    spec: LayerSpec
    inputs: list[npt.NDArray[Any]]
    results: list[BackendResult]
    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)
    requested_precision: str | None = None
    body_path: str | None = None  # the ids path of the body holding the layer (None: top level)
    defaulted: list[tuple[int, ...]] = field(default_factory=list)  # per input, the dims given a default size
    not_established: str | None = None  # why the backends' agreement rests on nothing (None: it stands, or none)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results) and all(c.ok for c in self.comparisons)

    @property
    def outcome(self) -> Literal["agree", "disagree", "failed", "nothing-compared"]:
        """What the run established: every backend ran and the comparisons agree, some disagree, some backend
        failed, or one backend ran and there was nothing to compare it with."""
        if not all(r.ok for r in self.results):
            return "failed"
        if not self.comparisons:
            return "nothing-compared"
        return "agree" if self.ok else "disagree"

    @property
    def outputs(self) -> dict[str, npt.NDArray[Any]]:
        return {r.backend: r.output for r in self.results if r.output is not None}

    def to_json(self) -> Any:
        return self.document.to_json()

    @property
    def document(self) -> RunDocument:
        """The ``ovreduce.run/v1`` document (without the arrays)."""
        spec = self.spec
        return RunDocument(
            ok=self.ok,
            layer=RunLayer(spec.layer_id, spec.layer_name, spec.type, spec.keep_dims, spec.axes, spec.data_type.name),
            inputs=tuple(
                TensorInfo(str(i), a.shape, _kserve_name(a), self.defaulted[i] if i < len(self.defaulted) else ())
                for i, a in enumerate(self.inputs)
            ),
            results=tuple(self._result(r) for r in self.results),
            comparisons=tuple(self.comparisons),
            notes=tuple(self.notes),
            body_path=self.body_path,
            outcome=self.outcome,
            not_established=self.not_established if self.outcome == "agree" else None,
            **_platform(r.backend for r in self.results),
        )

    def _result(self, r: BackendResult) -> BackendRun:
        on_openvino = r.backend.startswith("openvino")
        return BackendRun(
            backend=r.backend,
            ok=r.ok,
            shape=None if r.output is None else r.output.shape,
            datatype=None if r.output is None else _kserve_name(r.output),
            error=r.error,
            seconds=round(r.seconds, 6),
            precision=self.requested_precision if on_openvino else None,
            effective_precision=r.precision if on_openvino else None,
            notes=r.notes,
            runtime_precision=r.runtime_precision,
        )


def _platform(backends: Iterable[str]) -> dict[str, Any]:
    """``openvino`` and ``devices`` of a document: the OpenVINO version and the :class:`Device` record of each
    OpenVINO device among ``backends`` (``openvino:CPU``...); nothing where OpenVINO did not run."""
    names = list(dict.fromkeys(b.split(":", 1)[1] for b in backends if b.startswith("openvino:")))
    if not names:
        return {}
    from ovreduce.backends.openvino import describe_device, openvino_version

    return {"openvino": openvino_version(), "devices": tuple(describe_device(name) for name in names)}


def _kserve_name(array: npt.NDArray[Any]) -> str | None:
    etype: ElementType = element_type_for_numpy(array.dtype)
    return etype.kserve


def run_spec(
    spec: LayerSpec,
    inputs: Sequence[npt.NDArray[Any]],
    backends: Sequence[Backend],
    *,
    atol: float | None = None,
    rtol: float | None = None,
    notes: Sequence[str] = (),
    requested_precision: str | None = None,
    body_path: str | None = None,
    defaulted: Sequence[tuple[int, ...]] = (),
) -> RunReport:
    """Run ``spec`` on every backend and compare each with the first that succeeded (the reference);
    ``body_path`` names the body holding the layer in the report. Output elements whose value the
    specification leaves undefined (a ReduceMax over an empty set) are left out of the comparisons."""
    results = [b.infer(spec, inputs) for b in backends]
    comparisons: list[Comparison] = []
    notes = list(notes)
    vacuous = None
    reference = next((r for r in results if r.ok), None)
    if reference is not None:
        assert reference.output is not None
        undefined = _undefined(spec, inputs, reference.output.shape)
        narrow = spec.data_type.name in NARROW_FLOAT_TOLERANCES
        axes_given = spec.axes if spec.axes is not None else inputs[1]
        mass = rounding_mass(spec.type, inputs[0], axes_given, spec.keep_dims, spec.data_type.name, atol, rtol)
        for cand in results:
            if cand is reference or cand.output is None:
                continue
            # (an f64 reduction is judged in what it executed in, where the runtime says: OpenVINO's CPU computes f64
            # in f32 whatever precision the model was compiled for)
            f64_ran = cand.runtime_precision if spec.data_type.name == "f64" else None
            c_atol, c_rtol = tolerances(
                spec.data_type.name,
                f64_ran or cand.precision or cand.judged_in,
                inputs[0].size,
                reference.output.size,
                atol,
                rtol,
                op=spec.type,
            )
            allowance = rounding_allowance(mass, spec.data_type.name, f64_ran or cand.precision or cand.judged_in,
                                           atol, rtol)  # fmt: skip
            comparisons.append(
                compare(
                    reference.output,
                    cand.output,
                    reference_name=reference.backend,
                    candidate_name=cand.backend,
                    atol=c_atol,
                    rtol=c_rtol,
                    allowance=allowance,
                    undefined=undefined,
                )
            )
            if comparisons[-1].ok and spec.data_type.name == "f64":
                computed_in = f64_ran or cand.precision or cand.judged_in or "f32"
                notes += f64_computed_note(reference.output, cand.output, comparisons[-1], cand.backend, computed_in,
                                           inputs[0].size, atol, rtol, mass=mass, undefined=undefined)  # fmt: skip
            count = inputs[0].size // max(reference.output.size, 1)
            wide = None if rtol is not None or narrow else too_wide(comparisons[-1], count, reference.output, allowance)
            if wide is not None:  # (an rtol given is the user's to judge)
                notes.append(f"{cand.backend}: {wide}")
        axes = spec.axes if spec.axes is not None else inputs[1] if len(inputs) > 1 else ()
        # (no axes: the identity, which shows whether a backend keeps to it, but of one element or none)
        expected = reference.output if reference is not None else None
        shown = inputs and (np.size(axes) or inputs[0].size <= 1)
        judged = min((c.atol for c in comparisons), default=None)  # (the strictest: a product within it of 0)
        blind = cannot_show_error(inputs[0], np.asarray(axes), spec.type, expected, judged) if shown else None
        if blind is not None and comparisons and all(c.ok for c in comparisons):
            notes.append(f"the backends agree {BLIND}: {blind}")
            vacuous = blind
        masked = masked_note(inputs[0], np.asarray(axes), spec.type) if shown else None
        if masked is not None:
            notes.append(masked)
    return RunReport(spec, list(inputs), results, comparisons, notes, requested_precision, body_path,
                     list(defaulted), vacuous)  # fmt: skip


def rounding_mass(
    op_type: str,
    data: npt.NDArray[Any],
    axes: Any,
    keep_dims: bool,
    element_type: str,
    atol: float | None,
    rtol: float | None,
) -> npt.NDArray[Any] | None:
    """The rounding mass of a sum's or mean's output elements: the sum or mean of ``|x|`` each reduces over ``axes``,
    from which :func:`ovreduce.compare.rounding_allowance` makes each element's allowance (``compare``'s
    ``allowance``: the mass times the rtol of the table, not grown with the elements). A float sum errs in
    proportion to what it adds, so one that cancels (a result near 0 from terms of 10^3) is judged against that, not
    against its own small value. The one rule of ``run``, ``audit`` and ``conform``: the default tolerances only (None
    where ``atol`` or ``rtol`` is given), not for an 8- or 4-bit float output (judged to one unit in its last place:
    neither a mass nor a grown rtol), and None for the other ops and for axes the reference refuses (it reports them).
    ONNX's ReduceLogSum, the log of a sum, is allowed the sum's mass over the sum (the error of the log of ``s + e`` is
    ``e / s``)."""
    if atol is not None or rtol is not None or element_type in NARROW_FLOAT_TOLERANCES:
        return None
    if op_type == "ReduceLogSum":  # (ONNX's log of a sum errs by the sum's error over the sum: its mass over |sum|)
        from ovreduce.reference import openvino as ref

        mass = rounding_mass("ReduceSum", data, axes, keep_dims, element_type, atol, rtol)
        if mass is None:
            return None
        total, _ = ref.run_kernel(ref.kernel_sum, False, data.astype(np.float64), np.asarray(axes), keep_dims)
        with np.errstate(divide="ignore", invalid="ignore"):  # (a sum of 0 or below: no finite log, no allowance)
            return np.asarray(np.where(np.asarray(total) > 0, mass / np.abs(total), np.nan), dtype=np.float64)
    op = reductions().get(op_type)
    if op is None:
        return None
    try:
        return op.rounding_mass(data, np.asarray(axes), keep_dims)
    except Exception:  # axes the reference refuses: it reports them
        return None


def _undefined(
    spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]], shape: tuple[int, ...]
) -> npt.NDArray[np.bool_] | None:
    """The output elements of ``spec`` on ``inputs`` whose value the specification leaves undefined, when
    they fit an output of ``shape``; None otherwise (and when the axes are invalid: then no backend agrees)."""
    axes: Any = spec.axes if spec.axes is not None else inputs[1]
    try:
        mask = undefined_elements(spec.type, inputs[0].shape, axes, spec.keep_dims, version=spec.version)
    except OvReduceError:
        return None
    return mask if mask is not None and mask.shape == shape else None


def run_layer(
    model: IRModel,
    key: str,
    *,
    inputs: Mapping[str, npt.NDArray[Any]] | None = None,
    shapes: Mapping[str, PartialShape] | None = None,
    seed: int = 0,
    backends: Sequence[str] = BACKEND_NAMES,
    device: str | None = None,
    precision: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    max_elements: int | None = DEFAULT_MAX_ELEMENTS,
) -> RunReport:
    """Execute reduction layer ``key`` (id, name or body path) of ``model`` on ``backends`` and compare them
    (``device``, ``precision``: see :func:`make_backends`).

    Raises:
        NotFoundError: no such reduction layer.
        InputError: unusable inputs or options.
        DeviceNotAvailableError: the OpenVINO device is not available.
    """
    refuse_invalid_options(atol=atol, rtol=rtol, seed=seed)
    body_path = model.locate(key).body_path
    spec = layer_spec(model, key)
    runners = make_backends(backends, device=device, precision=precision)
    arrays, notes, defaulted = prepare_inputs(
        model, spec, given=inputs, shapes=shapes, seed=seed, max_elements=max_elements, body_path=body_path
    )
    shadowed = model.shadowed_note(key)  # a layer named as the id taken: said, not silently passed over
    if shadowed is not None:
        notes = [shadowed, *notes]
    report = run_spec(spec, arrays, runners, atol=atol, rtol=rtol, notes=notes, requested_precision=precision or "f32",
                      body_path=body_path, defaulted=defaulted)  # fmt: skip
    if max_elements is not None:
        for r in report.results:
            if r.output is not None:
                check_elements(r.output.shape, max_elements, f"the {r.backend} output")
    return report
