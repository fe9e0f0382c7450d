"""The OpenVINO engine of ``check``: compare every layer's declared dims with what OpenVINO itself infers.

The model is read with ``openvino.Core().read_model`` from the bytes ovreduce parsed (after ``reshape``
when asked), and each OpenVINO
node is matched to the IR layer of the same name (names are the IR's layer names); output ``i`` of the
node is the ``i``-th ``<port>`` of the layer's ``<output>``.

IR v10 is read with a legacy conversion at the model's boundary (``update_v10_model`` in OpenVINO's
``src/inference/src/model_reader.cpp``, applied after the IR frontend has built the graph): every f16
Parameter becomes f32 followed by a Convert to f16, and every Result's producer whose type is not f32 gets a
Convert to the legacy type (i64/u64/i32/u32 to i32, anything else to f32) that takes over the producer's name
(the producer is renamed; a multi-output producer keeps its name and the Convert is called ``name.port``).
Neither is in the file: :func:`_legacy_v10` finds them, so that each layer is compared with the node the file
describes (the type behind the inserted Convert, the producer under its generated name) and a consistent v10
file is clean while a real inconsistency in it still is not.

OpenVINO reads no output port ``precision`` of an op it knows, in any IR version: its IR frontend
(``parse_generic_params`` in ``src/frontends/ir/src/ir_deserializer.cpp``) keeps it only to type the outputs of a
``FrameworkNode`` (an op of no opset), and every other op's output type is inferred from its inputs and
attributes (``validate_and_infer_types``); an input port's precision is not even parsed. In IR v11 the
serializer writes each precision from the element type, so a difference says the file is not what it claims
(``openvino-type-mismatch``, an error). In IR v10 Model Optimizer wrote the legacy Inference Engine's precisions,
hints for its plugins (an FP16 model's DetectionOutput says FP32, where OpenVINO computes in f16 and the v10
conversion gives the output as f32): a difference changes nothing OpenVINO computes, so it is
``openvino-legacy-precision``, an info (and the native checks' ``legacy-precision``, in place of
``precision-mismatch`` and ``edge-precision-mismatch``). An output OpenVINO leaves of the dynamic type is one it did not
infer (a Loop whose port map names no execution condition, which it builds without validating its body; an If's
output its then-branch does not map): no precision contradicts it, as no dims contradict a dynamic rank.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from ovreduce._openvino import bodies, openvino, partial_shape, read_failure, read_ir_model
from ovreduce.check.findings import LEGACY_PRECISION, compare_declared, dims_text, finding
from ovreduce.ir.dtypes import ElementType, element_type
from ovreduce.ir.model import IRModel, Layer
from ovreduce.reports.check import Finding, ReductionCheck
from ovreduce.shapes import JsonShape, PartialShape

__all__ = ["Refusal", "crosscheck", "input_shapes", "v10_renamed"]


def crosscheck(
    model: IRModel,
    reports: Sequence[ReductionCheck],
    reshape: Mapping[str, PartialShape] | None,
) -> tuple[list[Finding], list[ReductionCheck]]:
    """Findings from OpenVINO's view of the model, and the reports with ``openvino_output_shape`` set."""
    openvino()  # (a clear BackendError where the runtime is missing)
    ov_model, refusal = _read(model, reshape)
    if ov_model is None:  # OpenVINO raises RuntimeError and friends; any of them is a finding
        assert refusal is not None
        failed = finding("openvino-read-failed", None, f"OpenVINO {refusal.what}: {refusal.reason}")
        return [failed], [replace(r, openvino_checked=True) for r in reports]
    legacy = _legacy_v10(ov_model, {layer.name for layer in model.layers}) if model.ir_version == 10 else _NO_LEGACY
    findings: list[Finding] = []
    ov_shapes: dict[tuple[str | None, str], JsonShape] = {}
    _compare(ov_model, model, legacy, bool(reshape), findings, ov_shapes)
    updated = []
    for r in reports:
        key = (r.body_path, r.layer_id)
        matched = key in ov_shapes
        ov_shape = ov_shapes.get(key)
        r = replace(r, openvino_output_shape=ov_shape, openvino_output_resolved=matched, openvino_checked=True)
        native = r.inferred_output_shape
        if matched and r.inferred_output_resolved and native != ov_shape:
            layer = model.graph_at(r.body_path).layer(r.layer_id)
            if r.input_shape_engine == "declared":
                why = "the native inference went through declared dims that OpenVINO does not use"
            elif reshape:
                why = ("under the reshape: ovreduce's shape rules, following the SmartReshape rewrites of OpenVINO's "
                       "reshape as far as it ports them, and OpenVINO's reshaped model differ here")  # fmt: skip
            else:
                why = "ovreduce's shape rules and OpenVINO's shape inference differ here"
            differs = finding(
                "native-inference-differs", layer,
                f"ovreduce infers {_text(native)} natively but OpenVINO infers {_text(ov_shape)} ({why})",
            )  # fmt: skip
            findings.append(replace(differs, body_path=r.body_path))
        updated.append(r)
    return findings, updated


def _matched(
    ov_model: Any, graph: IRModel, body_path: str | None, legacy: _Legacy
) -> Iterator[tuple[str | None, Layer, Any]]:
    """Each layer of ``graph`` (a model or one of its bodies, nested ones too) with OpenVINO's node of the
    same name and type, and the path of the body it lives in."""
    by_name: dict[str, list[Layer]] = {}
    for layer in graph.layers:
        by_name.setdefault(layer.name, []).append(layer)
    for node in ov_model.get_ordered_ops():
        if node.get_name() in legacy.inserted:
            continue
        name = legacy.renamed.get(node.get_name(), node.get_friendly_name())
        candidates = [c for c in by_name.get(name, []) if _same_type(c, node)]
        if len(candidates) != 1:
            continue
        layer = candidates[0]
        yield body_path, layer, node
        for role, ov_body in bodies(node):
            body = layer.body(role)
            if body is not None:
                inner = f"{layer.id}/{role}" if body_path is None else f"{body_path}/{layer.id}/{role}"
                yield from _matched(ov_body, body.graph, inner, _NO_LEGACY)


def _compare(
    ov_model: Any,
    model: IRModel,
    legacy: _Legacy,
    reshaped: bool,
    findings: list[Finding],
    ov_shapes: dict[tuple[str | None, str], JsonShape],
) -> None:
    """Compare every matched layer's declared dims and precisions with OpenVINO's, and note its shape."""
    for body_path, layer, node in _matched(ov_model, model, None, legacy):
        for index, port in enumerate(layer.outputs[: node.get_output_size()]):
            shape = partial_shape(node.get_output_partial_shape(index))
            retyped = legacy.parameter_types.get(node.get_name())
            etype = _ov_type(node.get_output_element_type(index) if retyped is None else retyped)
            if index == 0:
                ov_shapes[(body_path, layer.id)] = shape.to_json()
            if reshaped:
                continue  # the declared dims describe the file's shapes, not the reshaped ones
            verdict = compare_declared(port, shape)
            if verdict in ("mismatch", "ambiguous"):
                findings.append(replace(finding(
                    "openvino-shape-mismatch", layer,
                    f"output port {port.id} declares {dims_text(port)} but OpenVINO infers {shape}",
                    port.id,
                ), body_path=body_path))  # fmt: skip
            if etype is not None and etype.name != "dynamic" and port.precision is not None and etype != port.precision:
                said = (
                    f"output port {port.id} declares precision {port.precision.precision} but OpenVINO infers {etype}"
                )
                if model.ir_version == 10:  # a legacy hint: see the module's docstring
                    code, said = "openvino-legacy-precision", f"{said}; {LEGACY_PRECISION}"
                else:
                    code = "openvino-type-mismatch"
                findings.append(replace(finding(code, layer, said, port.id), body_path=body_path))


def _reshape(ov_model: Any, reshape: Mapping[str, PartialShape]) -> None:
    """OpenVINO's reshape of ``ov_model`` as ovreduce takes ``reshape``: each name a tensor's, else a Parameter's own
    name (OpenVINO's reshape by a name takes tensor names only)."""
    ov = openvino()
    tensors = {name for port in ov_model.inputs for name in port.get_names()}
    params = {param.get_friendly_name(): param for param in ov_model.get_parameters()}
    ov_model.reshape({
        name if name in tensors or name not in params else params[name].output(0): ov.PartialShape(str(shape))
        for name, shape in reshape.items()
    })  # fmt: skip


class Refusal(NamedTuple):
    """What OpenVINO refused: the model (``what``: "could not read the model"), or, having read it, the reshape
    (``what``: "refused the reshape (x=[1,40,32])"); and why, in its words."""

    what: str
    reason: str
    reshape: bool


def _read(model: IRModel, reshape: Mapping[str, PartialShape] | None) -> tuple[Any, Refusal | None]:
    """OpenVINO's model of ``model``, reshaped as asked; or None and what OpenVINO refused: the read, or the reshape
    of the model it read."""
    try:
        ov_model = read_ir_model(model)
    except Exception as exc:  # OpenVINO raises RuntimeError and friends
        return None, Refusal("could not read the model", read_failure(exc, model.op_types()), False)
    if reshape:
        try:
            _reshape(ov_model, reshape)
        except Exception as exc:
            shapes = ", ".join(f"{name}={shape}" for name, shape in reshape.items())
            return None, Refusal(f"refused the reshape ({shapes})", read_failure(exc, model.op_types()), True)
    return ov_model, None


def input_shapes(
    model: IRModel, reshape: Mapping[str, PartialShape] | None, wanted: Collection[tuple[str | None, str]]
) -> tuple[dict[tuple[str | None, str], PartialShape], Refusal | None]:
    """OpenVINO's shape of input 0 of the ``wanted`` layers (by body path and layer id), after ``reshape``:
    what ovreduce asks where it has no native rule for an op before a reduction. Also what OpenVINO refused, when it
    could not answer (the model, or the reshape)."""
    openvino()  # (a clear BackendError where the runtime is missing)
    ov_model, refusal = _read(model, reshape)
    if ov_model is None:  # OpenVINO refusing the model leaves those inputs unresolved
        return {}, refusal
    legacy = _legacy_v10(ov_model, {layer.name for layer in model.layers}) if model.ir_version == 10 else _NO_LEGACY
    return {
        (path, layer.id): partial_shape(node.get_input_partial_shape(0))
        for path, layer, node in _matched(ov_model, model, None, legacy)
        if (path, layer.id) in wanted and node.get_input_size() > 0
    }, None


class _Legacy(NamedTuple):
    """IR v10's read-time conversion, by OpenVINO's unique node names (``Node.get_name()``)."""

    renamed: dict[str, str]  # a Result's producer, renamed by the conversion -> its layer name in the file
    inserted: set[str]  # the Converts the conversion added (matched to no layer)
    parameter_types: dict[str, Any]  # a Parameter read as f32 -> the element type the file gave it


_NO_LEGACY = _Legacy({}, set(), {})


def _legacy_v10(ov_model: Any, layer_names: set[str]) -> _Legacy:
    """The nodes of OpenVINO's legacy IR v10 conversion (see the module's docstring)."""
    ov = openvino()
    legacy = _Legacy({}, set(), {})
    for param in ov_model.get_parameters():
        consumers = list(param.output(0).get_target_inputs())
        if len(consumers) != 1 or param.get_element_type() != ov.Type.f32:
            continue
        convert = consumers[0].get_node()
        if (
            convert.get_type_name() == "Convert"
            and convert.get_friendly_name() not in layer_names
            and convert.get_output_element_type(0) == ov.Type.f16
        ):
            legacy.inserted.add(convert.get_name())
            legacy.parameter_types[param.get_name()] = convert.get_output_element_type(0)
    for result in ov_model.get_results():
        convert = result.input_value(0).get_node()
        if convert.get_type_name() != "Convert" or convert.get_friendly_name() not in layer_names:
            continue
        source = convert.input_value(0)
        producer = source.get_node()
        if producer.get_friendly_name() in layer_names or producer.get_output_size() != 1:
            continue  # a multi-output producer keeps its name; its Convert (``name.port``) matches no layer
        before, after = source.get_element_type(), convert.get_output_element_type(0)
        if before != after and after == _legacy_output_type(ov, before):
            legacy.inserted.add(convert.get_name())
            legacy.renamed[producer.get_name()] = convert.get_friendly_name()
    return legacy


def v10_renamed(ov_model: Any, model: IRModel) -> dict[str, str]:
    """The layer name of each of ``ov_model``'s nodes that IR v10's read-time conversion renamed, by the name it gave
    it (``Node.get_friendly_name()``).

    OpenVINO reads an IR v10 output whose type is not f32 or i32 through a Convert to the legacy type that takes over
    its producer's name, the producer getting a generated one (``ReduceMean_6``, see the module's docstring). The
    names cannot be given back in the model: OpenVINO's compile checks again that no output's producer is named as
    another output's tensor (the conversion gave the Convert's output the layer's name). Empty for a model of another
    IR version.
    """
    if model.ir_version != 10:
        return {}
    legacy = _legacy_v10(ov_model, {layer.name for layer in model.layers})
    return {
        node.get_friendly_name(): legacy.renamed[node.get_name()]
        for node in ov_model.get_ordered_ops()
        if node.get_name() in legacy.renamed
    }


def _legacy_output_type(ov: Any, t: Any) -> Any:
    """The element type IR v10's legacy conversion gives a model output of type ``t``."""
    if t in (ov.Type.i64, ov.Type.u64, ov.Type.i32, ov.Type.u32):
        return ov.Type.i32
    return ov.Type.f32


# The IR type names OpenVINO's reader translates (``translate_type_name`` in its ir_deserializer.cpp, the inverse
# of the serializer's): OpenVINO's serializer writes these for opset1's Constant, PRelu, Relu and Softmax.
_IR_TYPE_NAMES = {"Const": "Constant", "PReLU": "PRelu", "ReLU": "Relu", "SoftMax": "Softmax"}


def _same_type(layer: Layer, node: Any) -> bool:
    """Whether ``node`` is what OpenVINO made of ``layer``: its type name after the reader's translation, in any
    case (the reader creates an op by ``create_insensitive``)."""
    name = str(node.get_type_name())
    return name == layer.type or name.lower() == _IR_TYPE_NAMES.get(layer.type, layer.type).lower()


def _ov_type(t: Any) -> ElementType | None:
    try:
        return element_type(t.get_type_name())
    except Exception:
        return None


def _text(shape: JsonShape) -> str:
    return str(PartialShape.from_json(shape))
