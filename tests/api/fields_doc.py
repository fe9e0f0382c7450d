# ruff: noqa: E501  (the descriptions are table cells: one line each reads best)
"""``docs/api-fields.md``: every JSON document of the REST API and each of its fields, in one place.

Made from the app's own OpenAPI schema (the documents, their fields, types and which are always present) and
the descriptions below (what each field means), so it lists exactly what the service answers::

    python -m tests.api.fields_doc        # rewrite docs/api-fields.md (run from the repository root)

``tests/api/test_openapi.py`` fails when the file is not what this writes (a field added without a description
included: :func:`render` raises for a field it cannot describe).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ovreduce.reports.common import NON_FINITE

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api-fields.md"

_SHAPE = (
    'a shape: a list of dims (an int, -1 for a dynamic dim, or an interval "lo..hi" / "lo.."), null for a dynamic rank'
)

# Field meanings, by field name; "Document.field" where one name means something else in one document.
FIELDS: dict[str, str] = {
    "added": "the drift the reduction added itself: the audited output against the reference on the audited input",
    "all": "whether every layer is listed (`?all=true`), not only the reductions",
    "allowance_max": "the largest per-element allowance added to `atol` (for reductions over many elements), if any",
    "architecture": "the device's architecture, as OpenVINO names it",
    "atol": "the absolute tolerance: |candidate - reference| <= atol + rtol * |reference| passes",
    "attributes": "the layer's `<data>` attributes, as written in the file",
    "axes": "the reduction axes as the model gives them, in its order: a negative one counts from the end (RMSNorm's `[-1]`) (null: not known before run time)",
    "axes_kind": "where the axes come from: `const` (a Const input), `runtime` (given at run time) and the like",
    "backend": "the backend that ran: `numpy` (the reference) or `openvino:DEVICE`",
    "backends": "the backends to run, `numpy` and/or `openvino`; the first that succeeds is the reference",
    "bin": "the `.bin` weights file (multipart file field); needed when the model has Consts",
    "bin_bytes": "the size of the stored `.bin` in bytes (0: the model has none)",
    "body_path": "the path of the sub-graph body holding the layer, e.g. `12/then` (null: the top-level graph)",
    "candidate": "the backend compared with the reference",
    "capabilities": "the device's OPTIMIZATION_CAPABILITIES (FP32, FP16, BF16, INT8, ...)",
    "code": "a stable code: the finding's code (see docs/cli.md's finding codes), or the error's",
    "comparisons": "each backend other than the reference, compared with it",
    "created_at": "when the model was stored (UTC, ISO 8601)",
    "data": "the tensor's elements, flat in row-major order (in requests also lists nested as the shape); NaN and infinities as strings",
    "datatype": "the KServe v2 datatype: FP32, FP16, BF16, FP64, INT8 ... INT64, UINT8 ... UINT64, BOOL",
    "declared_has_dims": "whether the port declares `<dim>`s at all (a port with none is a scalar or of dynamic rank)",
    "declared_output_shape": f"the output shape the file declares; {_SHAPE}",
    "declared_shape": f"the shape the file declares for the port; {_SHAPE}",
    "default_inference_precision": "the precision the device computes f32 models in unless told otherwise",
    "defaulted_dims": "the dims that were dynamic and that ovreduce gave a size (indices)",
    "dequantized_max_abs_diff": "QLinearReduceMean: the largest difference in dequantized (real) values",
    "detail": "what went wrong, for a person (no server path in it)",
    "device": "the OpenVINO device, e.g. CPU, GPU, AUTO:GPU,CPU",
    "devices": "the OpenVINO devices available on the server",
    "domain": "the ONNX node's domain (`ai.onnx`, `com.microsoft`, ...)",
    "drift": "the reduction's output against an f32 run of the whole model: the total drift (null: not measured)",
    "drift_split": "that drift split into what arrived with the input and what the reduction added",
    "effective_precision": "the precision OpenVINO reports it computed in (INFERENCE_PRECISION_HINT of the compiled "
    "model); null where the device reports none (AUTO, HETERO, MULTI)",
    "element_type": "the element type, as OpenVINO names it (f32, f16, i64, ...); null when not known",
    "error": "why this could not be done (null: no error)",
    "errors": "request validation errors (code `request.invalid`): where (`loc`), what (`msg`) and its kind (`type`)",
    "exact": "whether the comparison asked for equality (integer and boolean outputs)",
    "exceeded": "whether the total relative drift is above `limit` (false without a limit)",
    "fail_on_drift": "the limit on a reduction's relative drift from an f32 run; above it the reduction fails (null: drift is reported, never failed)",
    "filename": "the `.xml` file name the model was uploaded as",
    "final_outputs": "each model output, compared between the plain run and the audited run",
    "finding_counts": "the model's findings counted by severity",
    "findings": "what check found: problems and remarks, each tied to a layer, port and line where it has one",
    "first_mismatch": 'the first element outside the tolerance: its index and both values, a non-finite one as "NaN", "Infinity" or "-Infinity" (null: none)',
    "from_input": "the drift that arrived with the input: the reference on the audited input against the f32 run",
    "full_name": "the device's full name",
    "id": "the stored model's id: SHA-256 of len(xml) (8 bytes, big-endian) + xml + bin, in hex",
    "identical": "whether the output is bit-for-bit the same in both runs",
    "inf": "the infinities in the reference and the candidate, counted",
    "inferred_output_resolved": "whether the inferred output shape is known",
    "inferred_output_shape": f"the output shape ovreduce infers, as OpenVINO would; {_SHAPE}",
    "info": "findings of severity info",
    "input_shape": f"the shape of the data input; {_SHAPE}",
    "input_shape_engine": "who knows the input's shape: `native` (ovreduce's rules), `openvino` (OpenVINO's inference) or `declared` (only the producer's declaration); null: unresolved",
    "input_shape_resolved": "whether the input shape is known",
    "inputs": "the inputs: given ones and seeded ones",
    "instance": "the request path the problem is about",
    "ir_version": "the IR version in the file's `<net version>`",
    "is_reduction": "whether the layer is a Reduce* layer",
    "keep_dims": "the layer's keep_dims (false when the attribute is missing, as OpenVINO reads it)",
    "layer": "the layer that ran",
    "layer_count": "the number of layers in the model (sub-graph bodies included)",
    "layer_id": "the layer's id in the IR",
    "Finding.layer_id": "the layer's id in the IR (null: the finding concerns no one layer)",
    "AuditLayer.layer_id": "the layer's id in the IR (null: OpenVINO's node is named for no layer of the file)",
    "layer_name": "the layer's name in the IR",
    "layers": "the layers: reductions (or every layer)",
    "limit": "the `fail_on_drift` limit on the total relative drift (null: drift is reported only)",
    "line": "the line in the .xml (null: not known)",
    "loc": "where the invalid value is in the request, e.g. [`body`, `seed`]",
    "max_abs": "the largest absolute difference",
    "max_abs_diff": "the largest absolute difference between the two runs",
    "max_abs_error": 'the largest |candidate - reference|; "Infinity" when an element failed on a non-finite value (see `nonfinite_mismatched`; null: not compared)',
    "max_bytes": "the store's limit in bytes (OVREDUCE_STORE_MAX_BYTES)",
    "max_rel": 'the largest relative difference ("Infinity" where the f32 run\'s value is 0 and this one is not)',
    "max_rel_diff": "the largest relative difference between the two runs",
    "max_rel_error": 'the largest |candidate - reference| / |reference|; "Infinity" when a reference of 0 met another value or an element failed on a non-finite value (null: not compared)',
    "message": "what was found or what went wrong, for a person",
    "mismatched": "the elements outside the tolerance",
    "missing_tensors": "the node's tensors that OpenVINO's converted model no longer has (fused away)",
    "model": "the model's file name",
    "models": "the models",
    "msg": "what is wrong with the value",
    "names": "the tensor names of the port",
    "nan": "the NaNs in the reference and the candidate, counted",
    "nonfinite_mismatched": "the mismatched elements that failed on a non-finite value (a NaN against a number, an infinity against a finite value or the other infinity): each an infinite error",
    "node": "the ONNX node's name",
    "nodes": "the ONNX nodes of interest (mean and reduce nodes)",
    "notes": "remarks: what was chosen for you (seeds, dynamic dims) or could not be analysed",
    "observable": "whether the node's output can be compared (it survives conversion)",
    "ok": "whether everything here passed",
    "onnx": "the ONNX model (multipart file field)",
    "op_type": "the ONNX operator, e.g. ReduceMean",
    "openvino": "whether the OpenVINO runtime loads, and its devices",
    "openvino_checked": "whether the model was also read by OpenVINO (`engine=openvino`)",
    "openvino_output_resolved": "whether OpenVINO's model has this layer, so `openvino_output_shape` is its shape",
    "openvino_output_shape": f"the output shape OpenVINO infers; {_SHAPE}",
    "opset": "the model's ONNX opset (default domain)",
    "origin": '"given", or how the input was made from the graph: "seed N" (random), "seed N, ids in [0, n) '
    '(indices of Gather ...)", "seed N, a permutation of [0, n) (indices of Gather ... that TopK ... sorts in full ...)", '
    '"ones (an attention mask ...)", "positions ...", "arange ...", "3 (the trip count '
    'of Loop ...)"',
    "outcome": "what the run established: `agree`, `disagree`, `failed` (a backend failed) or `nothing-compared` (one backend)",
    "outputs": "each backend's output, as KServe v2 tensors",
    "path": "the model's path as given",
    "plain_reduction_precisions": "the reductions of the plain run, counted by the precision they executed in",
    "plain_runtime_precision": "the precision the reduction executed in during the plain run",
    "port": "the port id",
    "precision": "the inference precision asked for: f32, f16, bf16 or `default` (the device's)",
    "producer": "the output port feeding this input port (null for output ports)",
    "reduction": "the layer as check sees it, when it is a reduction (null otherwise)",
    "reduction_precisions": "the reductions of the audited run, counted by the precision they executed in (`unknown`: not found in the execution graph)",
    "reductions": "the model's reduction layers: declared against inferred output shape",
    "reference": "the backend the others are compared with: the first that succeeded",
    "required_atol": "the smallest atol that passes at this rtol (null: none would)",
    "required_rtol": "the smallest rtol that passes at this atol (null: none would)",
    "results": "what each backend produced",
    "rtol": "the relative tolerance (see `atol`)",
    "runtime_precision": "the precision the reduction executed in, read from OpenVINO's execution graph",
    "saved_ir": "where the converted IR was saved (null: not saved; the service never saves)",
    "schema": "the document's schema name and version, e.g. `ovreduce.check/v1`",
    "seconds": "how long it took, in seconds",
    "seed": "the seed of the generated inputs",
    "severity": "`error`, `warning` or `info`",
    "shape_origin": "where the shape comes from: `inferred`, `const`, `declared`, ...",
    "shape_reason": "why the shape is unresolved, where ovreduce knows (`no native shape rule for SpaceToDepth (s2d)` under a reshape, OpenVINO's refusal of a layer's inputs, an unresolved input's reason), or why it has dims ovreduce leaves unknown where OpenVINO may know them (a value ovreduce does not compute feeds them, or the file declares them); null when the shape is resolved or nothing more is known",
    "shape_resolved": "whether the shape is known",
    "shapes": 'the shapes of generated inputs, by input index or name, e.g. {"0": "[1,8,64]"}',
    "store": "whether the model store is writable",
    "title": "the HTTP status's phrase",
    "total": "the elements compared",
    "total_bytes": "the bytes the store holds",
    "type": "the layer's type, e.g. ReduceMean",
    "undefined": "elements the specification leaves undefined (a ReduceMax over an empty set; in conform, an ONNX ReduceMean over one): counted in `total`, never compared",
    "unready": "why each reduction that cannot run (or be served over KServe) cannot, by layer path (`12/then/110`); absent in a model stored by an older ovreduce",
    "version": "the layer's opset, e.g. opset1",
    "warning": "findings of severity warning",
    "xml": "the IR's `.xml` file (multipart file field)",
    "xml_bytes": "the size of the stored `.xml` in bytes",
    # where a name means something else
    "AuditLayer.status": "`ok`, `drift` (its drift is above `fail_on_drift`), `error` (its own error), "
    "`not-established` (within tolerance, but on an input that cannot show an error or on a kernel other than the one "
    "the model runs) or `not-audited` (inside a sub-graph body)",
    "ConformNode.status": "`ok`, `disagree`, `error` or `not-observable`",
    "ConformNode.version": "the operator's version in its domain (the opset it came from)",
    "DriftSplit.total": "the total drift: the audited output against the f32 run",
    "ErrorInfo.column": "the column in that line where the reader found the problem, 1-based (null: not known)",
    "ErrorInfo.line": "the line in the .xml where the reader found the problem, 1-based (null: not known)",
    "FieldError.type": "the kind of validation error, e.g. `greater_than_equal`",
    "Health.status": '`"ok"`: the process answers',
    "LayerEntry.status": "check's status of a reduction: `ok`, `mismatch`, `error` or `unresolved`",
    "ModelCheck.ok": "whether the model was read and has no finding of severity error",
    "OutputTensor.name": "the backend that produced it (`numpy`, `openvino:CPU`)",
    "Problem.code": "the stable error code, e.g. `ir.syntax`, `not_found`, `limit.body` (see docs/api.md)",
    "Problem.status": "the HTTP status",
    "Problem.type": "`urn:ovreduce:problem:<code>`",
    "Problem.layer_id": "the layer the error is about, where there is one",
    "Problem.layer_name": "the layer the error is about, where there is one",
    "Readiness.status": "`ready` or `not ready` (then 503)",
    "ReadinessCheck.detail": "what was found (the devices), or what is wrong",
    "ReadinessCheck.ok": "whether this part is ready",
    "ReductionCheck.status": "`ok`, `mismatch` (declared and inferred shapes contradict), `error` or `unresolved`",
    "Tensor.name": "the input's index (`0`, `1`) or its Parameter's name (a layer's run also takes its ports' words, `data` and `axes`)",
    "TensorInfo.name": "the input's index",
    "Device.device": "the device's name, e.g. CPU",
    "Device.inference_precisions": "requested precision (`f32`, `f16`, `bf16`, `default`) -> the inference "
    "precision a model compiled with it reports on this device (`refused`: the device does not compile it)",
    "Device.reduction_precisions": "a reduction's element type (`f32`, `bf16`, `f16`) -> the precision this device "
    "executes it in (the same type: natively; `f32`: through f32), read from OpenVINO's execution graph; "
    "CPU-dependent results differ between machines where this does",
    "DevicesDocument.openvino": "the OpenVINO version",
    "AuditAnswer.openvino": "the OpenVINO version that ran the model",
    "AuditRequest.steps": "decode steps after the first run of a stateful model (an LLM), its state carried "
    "between them, each fed the argmax token of the step before (a seeded id where the model has no `logits`; 0 to "
    "64; default 0)",
    "AuditAnswer.steps": "decode steps run after the first run of a stateful model, its state carried between them",
    "AuditLayer.step": "of a stateful model's steps, the one with this reduction's worst error (0: the first run); "
    "null: one run",
    "AuditAnswer.coverage": "how many of the model's reductions (bodies included) each row status holds, and "
    "`reductions`, all of them",
    "AuditAnswer.complete": "every reduction audited, on inputs that exercise it, and within tolerance (`ok` only "
    "says that none failed); false for a model without reductions",
    "not_established": "why no verdict rests on this row: its input cannot show an error (constant, all zeros, "
    "non-finite, empty), or it could not be audited (inside a sub-graph body); null: the verdict stands",
    "AuditAnswer.devices": "the device that ran the model, with what it executes (its verdicts depend on it)",
    "ConformDocument.openvino": "the OpenVINO version that converted and ran the model",
    "ConformDocument.devices": "the device that ran the model, with what it executes (its results depend on it)",
    "RunAnswer.not_established": "where `outcome` is `agree`: why the agreement establishes nothing, the input being one that cannot show an error (constant, all zeros, not finite, empty, or reduced in slices of one element), as an audit's row is `not-established` (the same reason is among `notes`); null: the agreement stands, or the outcome is another",
    "RunAnswer.openvino": "the OpenVINO version that ran the layer (null: OpenVINO did not run)",
    "RunAnswer.devices": "each OpenVINO device that ran the layer, with what it executes (its results depend on it)",
    # the layer route's consumers (the page draws them)
    "consumers": "the input ports the layer's outputs feed, with the shapes those inputs declare",
    "output_port": "the layer's output port that feeds this input",
    "Consumer.port": "the consumer's input port",
    "Consumer.layer_id": "the consuming layer's id",
    "Consumer.layer_name": "the consuming layer's name",
    "Consumer.type": "the consuming layer's type",
    "AuditInput.name": "the model input's name",
    "AuditAnswer.layers": "every reduction of the model: failing ones first, then by decreasing error",
    "AuditLayer.error": "the reduction's own error against the reference (null: none)",
    "FinalOutput.name": "the model output's name",
    "ModelSummary.name": "the model's name (`<net name>`)",
    # the inspect document (the command line's)
    "InspectDocument.path": "the model's path as given on the command line",
    "InspectDocument.name": "the model's name (`<net name>`)",
    "InspectDocument.layers": "the reductions (sub-graph bodies' included, after their container), every layer "
    "with `--all`, or the one layer `--layer` names",
    "reduction_count": "the number of reduction layers in the model (sub-graph bodies included)",
    "LayerView.layer_id": "the layer's id in the IR",
    "LayerView.inputs": "the layer's input ports, each with the output port that feeds it (`producer`)",
    "LayerView.outputs": "the layer's output ports",
    "ModelSummary.bin_filename": "the file name of the uploaded `.bin` (null: the model has none)",
    "LayerNeighbourhood.inputs": "the layer's input ports, each with the output port that feeds it (`producer`)",
    "LayerNeighbourhood.outputs": "the layer's output ports",
    "PortView.precision": "the port's `precision` attribute, as the element type it names (`FP32`: `f32`); null: none written",
    "AuditInput.shape": f"the shape the input was fed with; {_SHAPE}",
    "BackendRun.shape": "the output's shape (null: no output)",
    "OutputTensor.shape": "the output's shape",
    "PortView.shape": f"the port's shape as ovreduce resolves it; {_SHAPE}",
    "Tensor.shape": "the tensor's shape",
    "TensorInfo.shape": "the shape the input was fed with",
    # audit --target: whether each reduction survives f16 or bf16
    "AuditRequest.target": "`f16` or `bf16`: also judge whether each reduction survives that precision, from its "
    "captured input chain (an overflow or an error outside its tolerance fails the audit); with a device that is "
    "not present, the model runs on the CPU and the figures are emulated (default: null, not judged)",
    "AuditAnswer.target": "with a target precision: the model's verdict on it (null: no target asked for)",
    "AuditLayer.target": "with a target precision: whether this reduction survives it (null: no target asked for)",
    "TargetSummary.precision": "the target precision, `f16` or `bf16`",
    "TargetSummary.device": "the device the target is meant for, as asked (it may not be present on the server)",
    "TargetSummary.emulated": "true: the figures are NumPy's emulation only, no device here ran the model in the target precision",
    "TargetSummary.executed_on": "the device that ran the audited run in the target precision, compared with the emulation (null: none)",
    "TargetSummary.ok": "no reduction overflows or leaves the target's tolerance",
    "TargetSummary.finite_max": "the target type's largest finite value (65504 for f16)",
    "TargetSummary.counts": "how many reductions each target status holds",
    "TargetSummary.notes": "where the figures come from, and what could not be examined",
    "TargetHeadroom.status": "`protected` (OpenVINO keeps its chain in the original precision: marked in the model, or run in f32 "
    "by a bf16 device, as its execution graph says; or an integer reduction, which OpenVINO's conversion to f16 or bf16 "
    "leaves integer), "
    "`headroom` (finite and within the target's tolerance), `overflow` (inf or NaN where the f64 reference is finite), "
    "`inaccurate` (finite, outside the tolerance) or `not-established` (not examined: see `message`)",
    "TargetHeadroom.failed": "`overflow` or `inaccurate`: the reduction fails the audit",
    "TargetHeadroom.message": "the verdict for a person, naming the op where the range is lost",
    "TargetHeadroom.largest": "the largest magnitude any op of its chain, or any op above it that was captured, reaches, computed in f64",
    "TargetHeadroom.finite_max": "the target type's largest finite value",
    "TargetHeadroom.headroom": "`finite_max / largest`: how many times the largest value fits (null: nothing non-zero, or not examined)",
    "TargetHeadroom.overflowed": "elements that become inf or NaN in the target precision, over its chain (null: not examined)",
    "TargetHeadroom.underflowed": "non-zero elements that flush to 0 in the target precision, over its chain: their exact values below its smallest subnormal, bf16's below its smallest normal, which the CPU's bf16 conversion flushes (an element a difference of values the type holds equal cancels to 0 is not counted; the message says how many) (null: not examined, or not counted: `error_bound` covers them)",
    "TargetHeadroom.max_abs_error": "the emulated result against the f64 reference of the chain: largest absolute difference",
    "TargetHeadroom.max_rel_error": "the emulated result against the f64 reference of the chain: largest relative difference",
    "TargetHeadroom.atol": "the target type's absolute tolerance the error is judged by (0 where every output lies within it of 0, which would pass any result: the row is then judged relatively)",
    "TargetHeadroom.rtol": "the target type's relative tolerance the error is judged by",
    "TargetHeadroom.stages": "each op of the chain emulated: what it receives, the range-changing op feeding the reduction, the reduction",
    "TargetHeadroom.above": "the elementwise ops above the chain that were captured, and the ops that only move values between them (a Reshape, a Concat), after the values they start from (the farthest first): the largest magnitude each reaches and, where they were emulated (a value above reaches the target type's maximum, or what they deliver differs from the captured values rounded), what overflows or flushes to 0 there",
    "TargetHeadroom.device_max_rel_diff": "where a device ran the model in the target precision: the emulation against its output, largest relative difference (a row settled by `error_bound`: the f64 reference against its output)",
    "TargetHeadroom.device_agrees": "the same elements non-finite in the emulation and on the device, the finite ones within the tolerance (and `error_bound`, where one settles the row; null: no device ran it)",
    "TargetHeadroom.device_precision": "what that device executes the reduction in, from its execution graph (null: no device ran it)",
    "TargetHeadroom.step": "of a stateful model's steps, the one this row comes from (null: one run)",
    "TargetHeadroom.error_bound": "where a proven bound settles it: the largest error rounding the chain to the target can cause, within the tolerance everywhere; the chain is then not emulated element by element (`max_*_error` and `underflowed` null)",
    "TargetStage.op": "`input` (what the chain receives), the range-changing op's type, or the reduction's type; in `above`, the op's type",
    "TargetStage.name": "the OpenVINO node's name (null: the input)",
    "TargetStage.layer_id": "the node's IR layer id (null: the input, or not found by name)",
    "TargetStage.largest": "the largest finite magnitude it reaches, computed in f64",
    "TargetStage.overflowed": "elements that first become inf or NaN in the target precision here",
    "TargetStage.underflowed": "non-zero elements that first flush to 0 here, their exact values below the type's smallest subnormal, bf16's below its smallest normal (null: not counted, a bound covers them)",
    "TargetStage.kept": "OpenVINO keeps this op in the original precision (marked): emulated in f32; for the input, "
    "that it arrives unrounded (from a Parameter, a Constant or a marked op)",
}


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for key in ("anyOf", "oneOf"):
        if key in schema:  # a number's non-finite spellings are said once, at the top
            kinds = [_type(s) for s in schema[key] if s.get("enum") != list(NON_FINITE)]
            return " or ".join(dict.fromkeys(kinds))
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}" if schema.get("items") else "list"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"map of {_type(schema['additionalProperties'])}"
    if "const" in schema:
        return f"`{schema['const']}`"
    if "enum" in schema:
        return " / ".join(f"`{v}`" for v in schema["enum"])
    if kind == "string" and schema.get("format") == "binary":
        return "file"
    return str(kind or "any")


def describe(document: str, field: str) -> str:
    text = FIELDS.get(f"{document}.{field}") or FIELDS.get(field)
    if text is None:
        raise KeyError(f"{document}.{field}: no description; add one to FIELDS in {__name__}")
    return text


# The command line's documents that the service does not answer (it lists a model's layers as LayerList and
# LayerNeighbourhood), described here all the same, with the documents they share with it: document -> its command.
CLI_ONLY = {"InspectDocument": "ovreduce inspect --format json", "LayerView": "ovreduce inspect --format json"}


def _with_cli_documents(schemas: dict[str, Any]) -> dict[str, Any]:
    """``schemas`` and the schemas of :data:`CLI_ONLY`'s documents, made from their dataclasses as the service makes
    its own (a document both have is the service's)."""
    from pydantic import TypeAdapter

    from ovreduce.reports.inspect import InspectDocument

    made = TypeAdapter(InspectDocument).json_schema(ref_template="#/components/schemas/{model}", mode="serialization")
    out = {**made.pop("$defs", {}), "InspectDocument": made}
    return {**out, **schemas}


def render(openapi: dict[str, Any]) -> str:
    schemas = _with_cli_documents(openapi["components"]["schemas"])
    users: dict[str, list[str]] = {name: [command] for name, command in CLI_ONLY.items()}
    for path, item in openapi["paths"].items():
        for method, op in item.items():
            for status, answer in op.get("responses", {}).items():
                for content in answer.get("content", {}).values():
                    ref = content.get("schema", {}).get("$ref", "")
                    if ref:
                        users.setdefault(ref.rsplit("/", 1)[-1], []).append(f"{method.upper()} {path} {status}")
            for content in op.get("requestBody", {}).get("content", {}).values():
                ref = content.get("schema", {}).get("$ref", "")
                if ref:
                    users.setdefault(ref.rsplit("/", 1)[-1], []).append(f"{method.upper()} {path} (request)")
    out = [
        "# The REST API's JSON documents, field by field",
        "",
        "Every document the service answers or accepts, and every field of each, in one place, as the service's",
        'OpenAPI schema gives them (`/openapi.json`, where each operation and each error has examples). "required": the',
        "schema requires the field (a request must give it). An answer carries every field of its document, null",
        "where the type allows, except where the document says it carries fewer (a LayerEntry of a layer other than",
        "a reduction: its identity fields). Documents only gain fields (see the CHANGELOG). The command line's",
        "`--format json` documents are these too, and InspectDocument and LayerView, which only `ovreduce inspect`",
        "writes (`ovreduce.inspect/v1`), are here with them.",
        "",
        'A float that is not finite is written as one of the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (KServe\'s',
        "spelling), so that every strict JSON parser reads every document: a `number` field, or a value in a",
        "`first_mismatch` or a tensor's `data`, may hold one of them. The CLI's `--format json` documents do the same;",
        "null never stands for a number (it means that there is no value: nothing measured, no tolerance would pass).",
        "",
    ]
    for name in sorted(schemas):
        schema = schemas[name]
        title = name
        out += [f"### {title}", ""]
        summary = " ".join((schema.get("description") or "").split()).replace("``", "`")
        if summary:
            out += [summary, ""]
        if users.get(name):
            out += ["Used by: " + ", ".join(f"`{u}`" for u in sorted(set(users[name]))) + ".", ""]
        required = set(schema.get("required", []))
        out += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for field, prop in schema.get("properties", {}).items():
            meaning = describe(name, field)
            out.append(f"| `{field}` | {_type(prop)} | {'required' if field in required else ''} | {meaning} |")
        out.append("")
    return "\n".join(out)


def current() -> str:
    """The document as the app's schema makes it now."""
    from api.config import Settings
    from api.main import create_app

    with tempfile.TemporaryDirectory() as store:
        return render(create_app(Settings(store=Path(store))).openapi())


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(current())
    print(DOC)
