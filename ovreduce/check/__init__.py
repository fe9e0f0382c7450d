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
model's ``notes`` says so. The OpenVINO engine compares the layers of bodies too.

Where a reduction's data input cannot be inferred natively (an op on its way has no native rule, or its port
declares no dims), OpenVINO's own inference supplies it: the model is read with OpenVINO (after the reshape)
and the reduction's rule runs on OpenVINO's input shape; ``input_shape_engine`` says which engine inferred
each reduction's input. OpenVINO is imported only when that happens.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ovreduce._openvino import lacks_extension
from ovreduce.check.findings import compare_declared, finding, ordered
from ovreduce.check.graph import graph_findings
from ovreduce.check.reductions import reduction_check
from ovreduce.errors import BackendError, InputError, IRError, IRStructureError, LimitExceededError, OvReduceError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel, PortRef
from ovreduce.ir.parser import ParseLimits, gc_paused, load_ir
from ovreduce.ops.base import INPUT_COUNT_REFUSED
from ovreduce.ops.reduce import ReductionInfo
from ovreduce.processes import end_with_parent, start_fork_server
from ovreduce.reports.check import CheckDocument, Finding, ModelCheck, ReductionCheck
from ovreduce.reports.common import ErrorInfo
from ovreduce.shapes import PartialShape
from ovreduce.smart_reshape import REWRITTEN_FIRST

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ovreduce.check.openvino import Refusal

__all__ = ["check_document", "check_model", "check_paths", "unreadable"]

Engine = Literal["native", "openvino"]


def check_model(
    model: IRModel,
    *,
    reshape: Mapping[str, PartialShape] | None = None,
    engine: Engine = "native",
    path: str | None = None,
    shapes: ShapeEngine | None = None,
    extensions: Sequence[str] = (),
) -> ModelCheck:
    """Check one parsed model: integrity findings over the whole graph and the reductions' shapes.

    Args:
        model: the parsed IR.
        reshape: what-if shapes for Parameters (by layer or tensor name).
        engine: ``"openvino"`` also reads the model with the OpenVINO runtime and compares its inferred
            shape of every layer with the declared dims.
        path: the name to show for the model (defaults to the model's source).
        shapes: an engine already run over ``model`` with the same ``reshape`` (saves a second walk).
        extensions: OpenVINO extensions to load (:func:`ovreduce.load_extensions`) before OpenVINO reads the
            model, if it does: with the OpenVINO engine, or where no native rule reaches a reduction.

    Raises:
        InputError: a ``reshape`` key names no Parameter; an extension that cannot be loaded.
    """
    with gc_paused():  # the states and findings of a large model: a quarter of the time went to collections
        return _check_model(model, reshape=reshape, engine=engine, path=path, shapes=shapes, extensions=extensions)


def _validate_bodies(model: IRModel) -> None:
    """Refuse a model with a body whose reduction fails its shape rule on the body Parameters' own declared shapes,
    or on what a body holding it feeds it on those: OpenVINO validates each body on them as it reads it, before its
    container feeds it."""
    for ref in model.bodies():
        engine = ShapeEngine(ref.body.graph)
        for path, walk in [(ref.path, engine), *((f"{ref.path}/{sub}", e) for sub, e in engine.body_engines())]:
            for info in walk.reductions:
                if info.error is not None:
                    line = info.layer.line
                    raise IRStructureError(
                        f"{model.source}{f':{line}' if line else ''}: {info.layer.where} in the {path} body: "
                        f"{info.error} (on the declared shapes "
                        f"of the Parameters of this body or of a body holding it, on which OpenVINO validates each "
                        f"body as it reads it: OpenVINO refuses the model)",
                        line=line,
                    )


def _check_model(
    model: IRModel,
    *,
    reshape: Mapping[str, PartialShape] | None,
    engine: Engine,
    path: str | None,
    shapes: ShapeEngine | None,
    extensions: Sequence[str],
) -> ModelCheck:
    _validate_bodies(model)
    if shapes is None:
        shapes = ShapeEngine(model, reshape)
    engines: list[tuple[str | None, ShapeEngine]] = [(None, shapes), *shapes.body_engines()]
    infos = {(body_path, info.layer.id): info for body_path, graph in engines for info in graph.reductions}
    notes = [*model.notes, *_body_notes(engines)]
    unknown = {key for key, info in infos.items() if info.data.shape is None and info.error is None}
    # an error only where OpenVINO, reading the model, feeds the reduction what ovreduce infers
    suspect = set() if reshape else {key for key, info in infos.items() if _contradicted(info)}
    refusals = {body_path: _inconsistent(graph, reshaped=bool(reshape)) for body_path, graph in engines}
    openvino_reshaped = False  # OpenVINO read the model and took the reshape
    failed: str | None = None  # why OpenVINO could not read the model, when it was asked and could not
    refusal: Refusal | None = None  # what it refused then: the model, or the reshape
    # a shape input (axes, pads, a target, ...) whose value ovreduce leaves unresolved where the layer's dims depend on
    # it may make OpenVINO refuse the model: a Const of values its shape inference does not read as the file writes
    # them (u1: "Element not supported"; nf4: its byte), a constant sub-graph ovreduce does not fold (OpenVINO folds
    # it, and may refuse what it computes: axes out of range, pads of another length than the rank). OpenVINO is
    # asked whether it reads the model where each layer of that sub-graph has a static shape ovreduce infers and all
    # hold few elements (OpenVINO would fold a Range of 3e9 elements too): else a note says the value was not
    # confirmed, and why
    unread = False
    for _, graph in engines:
        walked: dict[PortRef, str | None] = {}
        reductions = {info.layer.id for info in graph.reductions}
        roots: dict[PortRef, tuple[PortRef, ...]] = {}
        for layer, indices in graph.unfolded_reads():
            producers = graph.model.input_producers(layer)
            for index in indices:
                ref = producers[index] if index < len(producers) else None
                if ref is None:
                    continue
                if ref not in roots:
                    roots[ref] = _unfolded_parts(graph, ref)
                for root in roots[ref]:
                    if root not in walked:
                        walked[root] = _unfolded_value(graph, root)
                    unfolded = walked[root]
                    if unfolded is None:
                        continue
                    if not unfolded:
                        unread = True
                    elif layer.id in reductions and index == 1:
                        notes.append(f"layer {layer.id} {layer.name!r}: its axes, computed by a constant sub-graph "
                                     f"ovreduce does not fold, are not confirmed by OpenVINO: {unfolded}")  # fmt: skip
                    else:
                        source = graph.model.layer(root[0])
                        notes.append(f"layer {layer.id} {layer.name!r}: the value of its input {index} (of "
                                     f"{source.type} layer {source.name!r}), computed by a constant sub-graph ovreduce "
                                     f"does not fold, is not confirmed by OpenVINO: {unfolded}")  # fmt: skip
    # layers OpenVINO's reshape rewrites first (SmartReshape), which ovreduce leaves unresolved with all after them: no
    # native rule judges those under the reshape, so OpenVINO is asked whether it takes it, reductions after them or not
    rewritten = bool(reshape) and any(_rewritten(graph) for _, graph in engines)
    asked = bool(unknown or suspect or unread or rewritten or any(refusals.values()))
    if asked:  # OpenVINO's own inference supplies what no native rule gives, and confirms the errors
        from ovreduce.check.openvino import input_shapes

        _load(extensions)
        found, refusal = input_shapes(model, reshape, unknown | suspect)
        failed = None if refusal is None else refusal.reason
        for key, shape in found.items():
            info = infos[key]
            if key in suspect:
                if shape == info.data.shape:
                    continue
                notes.append(f"layer {info.layer.id} {info.layer.name!r}: OpenVINO's inference feeds it {shape}, "
                             f"where ovreduce's gives {info.data.shape}; OpenVINO's is used")  # fmt: skip
            infos[key] = info.op.with_data(info, replace(info.data, shape=shape, origin="openvino", reason=""))
        if refusal is not None and unknown:
            either = f"{refusal.what} too" if refusal.reshape else f"{refusal.what} either"
            notes.append(
                f"{len(unknown - found.keys())} reduction input(s) stay unresolved: OpenVINO {either}: {refusal.reason}"
            )
        openvino_reshaped = failed is None and bool(reshape)
    findings: list[Finding] = []
    reports: list[ReductionCheck] = []
    reshaped = bool(reshape)
    for body_path, graph in engines:  # not ``path``: that is the model's name in the document
        refused = refusals[body_path]
        if refused and openvino_reshaped:  # a native rule stricter than OpenVINO's, which took the reshape
            notes += [f"layer {f.layer_id} {f.layer_name!r}: {f.message.partition(':')[0]} as ovreduce writes it, but "
                      f"OpenVINO takes the reshape: its shapes are used after the layer" for f in refused]  # fmt: skip
            refused = []
        elif refused and not reshaped:  # an error only where OpenVINO refuses the model at that very layer
            said = {id(f): _refused_at(failed, graph.model, f) if failed else None for f in refused}
            notes += [f"layer {f.layer_id} {f.layer_name!r}: {f.message.partition(':')[0]} as ovreduce writes it, but "
                      + ("OpenVINO reads the model" if failed is None else "OpenVINO refuses the model elsewhere")
                      + ": the layers after it stay unresolved" for f in refused if said[id(f)] is None]  # fmt: skip
            refused = [replace(f, message=f"{f.message}; {said[id(f)]}") for f in refused if said[id(f)] is not None]
        found_here = graph_findings(graph.model, graph) + refused
        for info in graph.reductions:
            report, more = reduction_check(
                infos[(body_path, info.layer.id)], reshaped=reshaped, body_path=body_path, ir_version=model.ir_version
            )
            reports.append(report)
            found_here += more
        findings += found_here if body_path is None else [replace(f, body_path=body_path) for f in found_here]
    clean = not any(f.severity == "error" for f in findings)
    if failed is not None and clean and engine != "openvino" and not lacks_extension(failed):
        # a model OpenVINO does not load is not clean, where ovreduce cannot say at which layer (its own refusals are
        # notes then) or has no rule to say it (its inputs unresolved); the OpenVINO engine says so itself
        assert refusal is not None
        findings.append(finding("openvino-read-failed", None, f"OpenVINO {refusal.what}: {refusal.reason}"))
    if engine == "openvino":
        from ovreduce.check.openvino import crosscheck

        _load(extensions)
        ov_findings, reports = crosscheck(model, reports, reshape)
        findings += ov_findings
    reports.sort(key=lambda r: model.graph_at(r.body_path).layer(r.layer_id).line or 0)
    return ModelCheck(
        path=path or model.source,
        ok=not any(f.severity == "error" for f in findings),
        ir_version=model.ir_version,
        layer_count=model.layer_count(),
        error=None,
        findings=ordered(model, findings),
        reductions=tuple(reports),
        notes=tuple(notes),
    )


FOLD_BUDGET = 1 << 20
"""The most elements the layers of a constant sub-graph behind a shape input (a reduction's axes, a Pad's pads, a
Reshape's target) ovreduce does not fold may compute for ``check`` to let OpenVINO fold it, reading the model."""


def _unfolded_parts(graph: ShapeEngine, ref: PortRef) -> tuple[PortRef, ...]:
    """The outputs whose values ovreduce leaves unresolved that output ``ref``'s value is computed from: itself where it
    is one; for a runtime value (a shape put together of dims and of a part ovreduce does not fold), those above it,
    up to the ShapeOfs and Parameters its runtime part comes from."""
    model = graph.model
    found: list[PortRef] = []
    pending = [ref]
    seen: set[PortRef] = set()
    while pending:
        item = pending.pop()
        if item in seen:
            continue
        seen.add(item)
        value = graph.value(item)
        if value.kind == "unresolved":
            if value.reals is None:
                found.append(item)
            continue
        layer = model.layer(item[0])
        if value.kind != "runtime" or layer.type in ("ShapeOf", "Parameter") or layer.bodies or len(seen) > 4096:
            continue
        pending += [p for p in model.input_producers(layer) if p is not None]
    return tuple(found)


def _unfolded_value(graph: ShapeEngine, ref: PortRef) -> str | None:
    """For a value ovreduce leaves unresolved, output ``ref``: ``""`` where it is a Const or a constant sub-graph
    OpenVINO may fold (every layer of it ovreduce does not fold of a static shape ovreduce infers, :data:`FOLD_BUDGET`
    elements in all; the values it folds, a ShapeOf of a static shape, end it), else why not; None where it is no
    constant sub-graph (it reads a Parameter, a body's input, a sub-graph's output)."""
    model = graph.model
    pending: list[PortRef | None] = [ref]
    seen: set[str] = set()
    total = 0
    why = ""
    while pending:
        item = pending.pop()
        if item is None:
            return None
        if item[0] in seen:
            continue
        seen.add(item[0])
        layer = model.layer(item[0])
        if layer.type == "Const" or graph.value(item).kind == "const":  # (a ShapeOf of a static shape too)
            continue  # a value ovreduce folds: a constant to OpenVINO too
        if not layer.inputs or layer.bodies:  # a Parameter, a body's input or a sub-graph: not walked
            return None
        for port in layer.outputs:
            state = graph.state((layer.id, port.id))
            if state.shape is None or not state.shape.is_static or state.origin != "inferred":
                why = why or f"ovreduce infers no static shape for {layer.type} layer {layer.name!r}"
            else:
                total += math.prod(state.shape.to_list())
        pending += model.input_producers(layer)
    if not why and total > FOLD_BUDGET:
        why = (f"its layers compute {total} elements, more than the {FOLD_BUDGET} ovreduce lets OpenVINO fold as it "
               "reads the model")  # fmt: skip
    return why


def _contradicted(info: ReductionInfo) -> bool:
    """Whether the reduction's own rule refuses what ovreduce infers it is fed, or its output contradicts its declared
    dims: the errors confirmed against OpenVINO's inference before they are reported."""
    if info.error is not None:
        return True
    port = info.layer.outputs[0] if info.layer.outputs else None
    return (
        port is not None and info.output.shape is not None and compare_declared(port, info.output.shape) == "mismatch"
    )


_INPUT_COUNT_SAID = re.compile(
    r"index '\d+' out of range|node index is out of range|input_shapes\.(?:size|empty)\(\)|[Ii]ncorrect number of "
    r"(?:new )?(?:arguments|inputs)|element in new_args|inputs\. Got: \d+"
)
"""OpenVINO's refusals of an input count that name no node: its checks of an input's or output's index, of the number
of shapes a shape inference is given, of the inputs an op is made of."""


def _refused_at(failed: str, graph: IRModel, refused: Finding) -> str | None:
    """How OpenVINO's refusal (``failed``) confirms a layer's (``refused``), in words; None where it does not. It does
    where the node OpenVINO validated is of the layer's type and fed by the layer's producers, named as the file names
    them; or, where OpenVINO's message names no node (some checks do not), where it says what the layer's rule says."""
    assert refused.layer_id is not None
    layer = graph.layer(refused.layer_id)
    if "While validating node '" not in failed:
        rule = refused.message.rpartition(" shape rule: ")[2].partition(" (")[0]  # OpenVINO's words, not ovreduce's
        blank = str.maketrans("\t\n\r", "   ")  # pugixml reads &#9; in an attribute as a space, libxml2 as a tab
        found = rule and rule.translate(blank) in failed.translate(blank)
        # an input count: OpenVINO says so in the words of whichever check its validation meets first
        found = found or (INPUT_COUNT_REFUSED.match(rule) is not None and _INPUT_COUNT_SAID.search(failed) is not None)
        return f"OpenVINO refuses the model too, naming no layer ({failed})" if found else None
    # (the type as OpenVINO names it: an IR's SoftMax is its Softmax)
    node = re.search(rf"While validating node '[^' ]*::(?i:{re.escape(layer.type)}) .*?\((.*)\) -> ", failed)
    if node is None:
        return None
    fed = node[1]
    for ref in graph.input_producers(layer):
        at = -1 if ref is None else fed.find(f" {graph.layer(ref[0]).name}[")
        if at < 0:
            return None
        fed = fed[at + 1 :]
    return "OpenVINO refuses the model at this layer too"


def _inconsistent(graph: ShapeEngine, *, reshaped: bool) -> list[Finding]:
    """The layers that break the model (under a reshape: that it breaks): each of their inputs resolved, an output left
    unresolved by the layer's own shape rule (which refused the inputs as OpenVINO's does). Downstream layers,
    unresolved because of it, are not named again."""
    code, under = ("reshape-inconsistent", "under the new shapes ") if reshaped else ("layer-invalid", "")
    found = []
    seen: set[str] = set()
    for layer_id, port_id in graph.unresolved():
        layer = graph.model.layer(layer_id)
        own = f"{layer.type} ({layer.name}): "
        reason = graph.state((layer_id, port_id)).reason
        if layer_id in seen or not reason.startswith(own):
            continue
        states = [graph.input_state(layer, i) for i in range(len(layer.inputs))]
        # (an input count is refused whatever the inputs' shapes)
        if all(s.shape is not None for s in states) or INPUT_COUNT_REFUSED.match(reason.removeprefix(own)):
            seen.add(layer_id)
            shapes = ", ".join("unresolved" if s.shape is None else str(s.shape) for s in states) or "(none)"
            message = f"{under}its inputs {shapes} do not fit {layer.type}'s shape rule: {reason.removeprefix(own)}"
            found.append(finding(code, layer, message.rstrip("."), port_id))
    return found


def _rewritten(graph: ShapeEngine) -> bool:
    """Whether ``graph`` leaves a layer unresolved as one OpenVINO's reshape rewrites first, which ovreduce's shape
    inference does not follow (:mod:`ovreduce.smart_reshape`)."""
    return any(graph.state(ref).reason.startswith(REWRITTEN_FIRST) for ref in graph.unresolved())


def _load(extensions: Sequence[str]) -> None:
    if extensions:
        from ovreduce._openvino import load_extensions

        load_extensions(extensions)


def _body_notes(engines: Sequence[tuple[str | None, ShapeEngine]]) -> list[str]:
    """A note for each body its container's inputs could not feed (it is checked on its own declarations)."""
    notes = []
    for path, engine in engines:
        for (layer_id, role), note in engine.body_notes.items():
            container = engine.model.layer(layer_id)
            inside = "" if path is None else f" in body {path}"
            notes.append(f"{container.where}{inside}: its {role!r} body is checked on its own declarations: {note}")
    return notes


def unreadable(path: str, error: OvReduceError, model: IRModel | None = None) -> ModelCheck:
    """The entry of a model that could not be read or checked (with the reader's position of the problem); where it
    was read (``model``) but not checked, with the IR version and layer count it was read with."""
    line, column = (error.line, error.column) if isinstance(error, IRError) else (None, None)
    if isinstance(error, LimitExceededError):
        line = error.line
    version, count = (None, None) if model is None else (model.ir_version, len(model.layers))
    return ModelCheck(path, False, version, count, ErrorInfo(error.code, error.message, line, column), (), ())


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
    jobs: int = 1,
    extensions: Sequence[str] = (),
    seconds: list[float] | None = None,
) -> CheckDocument:
    """Check every model; a model that cannot be read is reported with its error, never raised.

    With ``jobs`` > 1 the models are checked by that many worker processes; the document is the same as a
    serial run's, in the same order. The workers are forked from this process while nothing but its own thread
    runs and OpenVINO is not loaded (they then start with everything imported: a check of a few hundred
    layers takes less than importing the checker); otherwise they start from a fork server, so that OpenVINO's
    threads are never forked.
    ``progress`` is called once after each model; ``seconds``, where given, gets the time each model took to read
    and check, in the document's order, measured where it was checked (with ``jobs`` > 1, in its worker: not the
    time between results). ``extensions`` are loaded in each process that reads a model
    with OpenVINO, before it does (see :func:`check_model`); one that cannot be loaded makes each such model
    unreadable, with the reason. Of several models (an export's), each takes the names of ``reshape`` its inputs
    have, and a note on those it has not.

    Raises:
        InputError: a name of ``reshape`` that no model of several read has.
    """
    several = len(paths) > 1 and bool(reshape)  # (an export's tokenizer has no input_ids: not its reshape)
    options = (bin_path, reshape, engine, limits, tuple(extensions), several)
    done: list[Checked] = []
    if jobs <= 1 or len(paths) <= 1:
        for p in paths:
            done.append(_timed_check(p, *options))
            if progress is not None:
                progress()
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        context = multiprocessing.get_context(_start_method(engine))
        parent = (_parent_of(context),)
        pool: ProcessPoolExecutor | None = None
        start_fork_server(context)  # (and the resource tracker) ignoring Ctrl-C: the command alone takes it
        try:
            with _interrupts_held():  # the workers are forked (as each is submitted) and the pool's threads started
                pool = ProcessPoolExecutor(min(jobs, len(paths)), context, end_with_parent, parent)
                futures = [pool.submit(_timed_check, p, *options) for p in paths]
            for p, future in zip(paths, futures, strict=True):  # in the order given: the document is the serial one
                try:
                    done.append(future.result())
                except BrokenProcessPool:  # a worker crashed (in OpenVINO): the models not done are checked alone
                    with _interrupts_held():
                        done.append(_check_alone(context, p, options))
                if progress is not None:
                    progress()
        except BaseException:  # an interrupt: the models not done are not waited for
            if pool is not None:
                _stop(pool)
            raise
        pool.shutdown()
    if several and (nowhere := sorted(set(reshape or {}).difference(*(applied for _, applied, _ in done)))):
        read = sum(1 for m, _, _ in done if m.error is None)
        raise InputError(f"reshape {nowhere[0]}: no Parameter of the {read} model(s) read has that name",
                         parameter="reshape")  # fmt: skip
    if seconds is not None:
        seconds += [took for _, _, took in done]
    return check_document([m for m, _, _ in done])


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT held back while the block runs, then taken: a Ctrl-C while a worker is forked would be raised in a fork
    hook, where Python prints it and drops it, and the check would run on. What starts in the block (the workers, the
    pool's threads) starts with it held, so that the command alone takes it, and stops them."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _stop(pool: Any) -> None:
    """End ``pool``'s workers at once, the checks they run and those waiting with them, and its threads."""
    for process in list((pool._processes or {}).values()):
        process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


Checked = tuple[ModelCheck, frozenset[str], float]
"""A model's check, the names of the reshape it applied, and the seconds it took."""


def _timed_check(path: Path, *options: Any) -> Checked:
    """:func:`_check_one`, and the seconds it took (in the process that checked the model)."""
    start = time.perf_counter()
    check, applied = _check_one(path, *options)
    return check, applied, time.perf_counter() - start


def _check_alone(context: Any, path: Path, options: tuple[Any, ...]) -> Checked:
    """:func:`_check_one` in a process of its own: a model whose check crashes that process (OpenVINO's reader, on
    what ovreduce does not know it crashes on) is unreadable, with how the process ended; the other models are not."""
    start = time.perf_counter()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_send_check, args=(sender, path, options, _parent_of(context)), daemon=True)
    process.start()
    sender.close()
    try:
        result: Checked = receiver.recv()
        return result
    except EOFError:  # it ended without an answer
        pass
    finally:
        receiver.close()
        process.join()
    code = process.exitcode or 0
    how = f"killed by signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"ended with status {code}"
    error = BackendError(f"the process checking the model was {how}: OpenVINO crashed reading it, on something "
                         f"ovreduce does not know it crashes on")  # fmt: skip
    return unreadable(str(path), error), frozenset(), time.perf_counter() - start


def _send_check(sender: Connection, path: Path, options: tuple[Any, ...], parent: int | None) -> None:
    end_with_parent(parent)
    sender.send(_timed_check(path, *options))
    sender.close()


def _parent_of(context: Any) -> int | None:
    """The process a worker of ``context`` starts from: this one where it is forked, else a server's (None)."""
    return os.getpid() if context.get_start_method() == "fork" else None


def _start_method(engine: Engine) -> str:
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and engine == "native" and "openvino" not in sys.modules and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _check_one(
    path: Path,
    bin_path: Path | None,
    reshape: Mapping[str, PartialShape] | None,
    engine: Engine,
    limits: ParseLimits,
    extensions: Sequence[str],
    own_only: bool,
) -> tuple[ModelCheck, frozenset[str]]:
    """The check of one model, and the names of ``reshape`` it applied; with ``own_only``, a name that none of the
    model's Parameters has is left out, and said in a note."""
    asked = reshape or {}
    model: IRModel | None = None
    try:
        model = load_ir(path, bin_path, limits=limits)
        try:
            if asked and own_only:
                params = [layer for layer in model.layers if layer.type == "Parameter"]
                names = {n for p in params for n in (p.name, *(n for port in p.outputs for n in port.names))}
                reshape = {name: shape for name, shape in asked.items() if name in names}
            check = check_model(model, reshape=reshape, engine=engine, path=str(path), extensions=extensions)
        finally:
            model.close()
    except OvReduceError as exc:
        return unreadable(str(path), exc, model), frozenset()
    if missing := sorted(set(asked) - set(reshape or {})):
        note = f"the reshape of {', '.join(missing)} is not this model's: none of its inputs has that name"
        check = replace(check, notes=(*check.notes, note))
    return check, frozenset(reshape or {})
