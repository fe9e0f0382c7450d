"""Every op with a native rule, given fewer or more inputs than it takes, against the installed OpenVINO: a layer of
an input count its op never takes is OpenVINO's refusal of the model, whether or not the rule reads the inputs
missing or left over (a StridedSlice of two, a ShapeOf of two, a Relu of none), and check reports it, confirmed;
a count OpenVINO reads is never refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ovreduce import load_ir
from ovreduce._openvino import read_ir_model
from ovreduce.check import check_model
from ovreduce.errors import IRStructureError
from ovreduce.ir.model import Layer
from ovreduce.ops.registry import resolve, table

from ..ir.irxml import edge, layer, net, port

_POOL = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "kernel": "1,1", "rounding_type": "floor"}
_CONV = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "dilations": "1,1"}
_ATTRS = {
    "AvgPool": {**_POOL, "exclude-pad": "true"}, "MaxPool": _POOL, "BatchNormInference": {"epsilon": "0.001"},
    "Broadcast": {"mode": "numpy"}, "Clamp": {"min": "0", "max": "1"}, "Concat": {"axis": "0"},
    "Convert": {"destination_type": "f32"}, "Convolution": _CONV, "GroupConvolution": _CONV,
    "ConvolutionBackpropData": _CONV, "Elu": {"alpha": "1"}, "Gather": {"batch_dims": "0"},
    "Interpolate": {"mode": "nearest", "shape_calculation_mode": "sizes"}, "LogSoftmax": {"axis": "0"},
    "MVN": {"eps": "0.001", "normalize_variance": "true", "eps_mode": "inside_sqrt", "across_channels": "false"},
    "NormalizeL2": {"eps": "0.001", "eps_mode": "add"}, "Softmax": {"axis": "0"}, "SoftMax": {"axis": "0"},
    "Pad": {"pad_mode": "constant"}, "Reshape": {"special_zero": "false"}, "Split": {"num_splits": "2"},
    "StridedSlice": {"begin_mask": "0", "end_mask": "0"}, "Range": {"output_type": "f32"},
    "ShapeOf": {"output_type": "i64"}, "Round": {"mode": "half_to_even"}, "Gelu": {"approximation_mode": "erf"},
    "ReadValue": {"variable_id": "v", "variable_shape": "2,3,4", "variable_type": "f32"},
}  # fmt: skip
_OUTPUTS = {"Split": 2, "VariadicSplit": 2}


def _ops() -> list[tuple[str, str]]:
    """Every (type, version) whose rule knows its op's input counts, a rule of any version at the newest opset (and
    MVN also before MVN-6, which takes one input fewer)."""
    # (not Assign: alone, it writes no variable a ReadValue declares, which the reader refuses, as OpenVINO does)
    found = {(op_type, version or "opset16") for (op_type, version), op in table().items()
             if op.input_counts(_probe(op_type, version or "opset16")) is not None and op_type != "Assign"}  # fmt: skip
    return sorted({*found, ("MVN", "opset2")})


def _probe(op_type: str, version: str) -> Layer:
    return Layer(id="0", name="op", type=op_type, version=version, data={}, inputs=(), outputs=())


# ops that merge their inputs' element types before they count them (OpenVINO refuses f32 beside i64 first)
_ONE_TYPE = frozenset({"FakeConvert"})


def _model(op_type: str, version: str, count: int) -> str:
    """``count`` Parameters (f32 [2,3,4] first, then i64 [1], or f32 [1] for an op of one type) into the op, each of
    its outputs into a Result."""
    more = ("f32", [1], "FP32") if op_type in _ONE_TYPE else ("i64", [1], "I64")
    kinds = [("f32", [2, 3, 4], "FP32"), *[more] * max(count - 1, 0)][:count]
    layers = [layer(i, f"p{i}", "Parameter", data={"shape": ",".join(map(str, dims)), "element_type": etype},
                    outputs=[port(0, dims, precision)])
              for i, (etype, dims, precision) in enumerate(kinds)]  # fmt: skip
    outputs = _OUTPUTS.get(op_type, 1)
    layers.append(layer(100, "op", op_type, version=version, data=_ATTRS.get(op_type),
                        inputs=[port(i, dims, precision) for i, (_, dims, precision) in enumerate(kinds)],
                        outputs=[port(count + j, [2, 3, 4]) for j in range(outputs)]))  # fmt: skip
    layers += [layer(200 + j, f"r{j}", "Result", inputs=[port(0, [2, 3, 4])]) for j in range(outputs)]
    edges = [edge(i, 0, 100, i) for i in range(count)] + [edge(100, count + j, 200 + j, 0) for j in range(outputs)]
    return net(layers, edges)


@pytest.mark.parametrize(
    ("op_type", "version"),
    [("MVN", "opset²"), ("SoftMax", "opset٦"), ("Relu", "opset" + "1" * 5000)],
    ids=["mvn-superscript", "softmax-arabic-indic", "relu-5000-digits"],
)
def test_a_version_of_other_digits_names_no_opset_and_breaks_no_check(
    tmp_path: Path, op_type: str, version: str
) -> None:
    """Python's ``isdigit`` and ``int`` take digits of other scripts and refuse more than 4,300 of them: a version so
    written made check exit 3. It names no opset, to OpenVINO as to ovreduce: one of ASCII digits is an opset OpenVINO
    lacks, which the reader refuses as OpenVINO does; another an extension's, for check to judge."""
    path = tmp_path / "m.xml"
    path.write_text(_model(op_type, version, 1))
    path.with_suffix(".bin").write_bytes(b"")
    if version[5:].isascii():
        with pytest.raises(IRStructureError, match=f"unsupported opset: '{version}'; OpenVINO refuses the model"):
            load_ir(path)
        return
    ir = load_ir(path)
    try:
        check_model(ir)  # no exception
        with pytest.raises(RuntimeError):
            read_ir_model(ir)
    finally:
        ir.close()


@pytest.mark.parametrize(("op_type", "version"), _ops(), ids=[f"{t}-{v}" for t, v in _ops()])
def test_a_layer_of_an_input_count_its_op_never_takes_is_refused_as_openvino_refuses_it(
    tmp_path: Path, op_type: str, version: str
) -> None:
    counts = resolve(op_type, version).input_counts(_probe(op_type, version))
    assert counts is not None
    path = tmp_path / "m.xml"
    path.with_suffix(".bin").write_bytes(b"")
    for count in range(7):
        path.write_text(_model(op_type, version, count))
        ir = load_ir(path)
        try:
            errors = [f.message for f in check_model(ir).findings if f.severity == "error"]
            try:
                read_ir_model(ir)
                read = True
            except RuntimeError:
                read = False
        finally:
            ir.close()
        said = [message for message in errors if f"{op_type} takes " in message]
        if count in counts:
            assert not said, (count, said)
        else:
            assert not read, f"OpenVINO reads a {op_type} of {count} inputs, which ovreduce says it never takes"
            assert len(said) == 1 and f"the layer has {count}" in said[0], (count, errors)
            assert "OpenVINO refuses the model" in said[0], said[0]  # confirmed by OpenVINO's own refusal
        if read:  # whatever the kinds of its inputs make of the layer: what OpenVINO reads, check reads clean
            assert not errors, (count, errors)


@pytest.mark.parametrize(("op_type", "version"), _ops(), ids=[f"{t}-{v}" for t, v in _ops()])
def test_a_reductions_axes_from_a_layer_of_too_few_inputs_are_refused_not_a_crash(
    tmp_path: Path, op_type: str, version: str
) -> None:
    """The op's first output as a ReduceMean's axes, the op given fewer inputs than it takes: the axes' fold read an
    input past the layer's and check, inspect and run ended in an internal error (the service: 500). The model is
    refused as OpenVINO refuses it."""
    counts = resolve(op_type, version).input_counts(_probe(op_type, version))
    assert counts is not None
    path = tmp_path / "m.xml"
    path.with_suffix(".bin").write_bytes(b"")
    for count in [c for c in (0, 1) if c not in counts]:
        ir = _model(op_type, version, count)
        reduce = (layer(300, "x", "Parameter", data={"shape": "2,3,4", "element_type": "f32"},
                        outputs=[port(0, [2, 3, 4])])
                  + layer(301, "red", "ReduceMean", data={"keep_dims": "true"},
                          inputs=[port(0, [2, 3, 4]), port(1, [1], "I64")], outputs=[port(2, [2, 1, 4])])
                  + layer(302, "red_out", "Result", inputs=[port(0, [2, 1, 4])]))  # fmt: skip
        edges = edge(300, 0, 301, 0) + edge(100, count, 301, 1) + edge(301, 2, 302, 0)
        path.write_text(ir.replace("\n</layers>", "\n" + reduce + "\n</layers>").replace("<edges>", "<edges>" + edges))
        model = load_ir(path)
        try:
            report = check_model(model)  # (no exception)
            with pytest.raises(RuntimeError):
                read_ir_model(model)
        finally:
            model.close()
        assert not report.ok and any(f.layer_name == "op" for f in report.findings if f.severity == "error"), (
            count, [f.message for f in report.findings])  # fmt: skip


def test_an_input_count_is_refused_whatever_ovreduce_makes_of_the_inputs(tmp_path: Path) -> None:
    """A ReLU of two inputs, one an Interpolate of scales through an Exp (ovreduce computes no Exp: the scales are not
    read natively, and its output is unresolved).
    An input count depends on no shape: the refusal was dropped with the unresolved input, and check said OK."""
    interpolate = {"mode": "linear", "shape_calculation_mode": "scales", "coordinate_transformation_mode": "half_pixel"}
    layers = [
        layer(0, "x", "Parameter", data={"shape": "1,1,4,4", "element_type": "f32"}, outputs=[port(0, [1, 1, 4, 4])]),
        layer(1, "scales", "Const", data={"element_type": "f32", "shape": "2", "offset": "0", "size": "8"},
              outputs=[port(0, [2])]),
        layer(2, "axes", "Const", data={"element_type": "i64", "shape": "2", "offset": "8", "size": "16"},
              outputs=[port(0, [2], "I64")]),
        layer(3, "up", "Interpolate", version="opset11", data=interpolate,
              inputs=[port(0, [1, 1, 4, 4]), port(1, [2]), port(2, [2], "I64")], outputs=[port(3, [1, 1, 6, 6])]),
        layer(4, "op", "ReLU", inputs=[port(0, [1, 1, 6, 6]), port(1, [1, 1, 4, 4])], outputs=[port(2, [1, 1, 6, 6])]),
        layer(5, "out", "Result", inputs=[port(0, [1, 1, 6, 6])]),
        layer(6, "exp", "Exp", inputs=[port(0, [2])], outputs=[port(1, [2])]),
    ]  # fmt: skip
    edges = [edge(0, 0, 3, 0), edge(1, 0, 6, 0), edge(6, 1, 3, 1), edge(2, 0, 3, 2), edge(3, 3, 4, 0), edge(0, 0, 4, 1),
             edge(4, 2, 5, 0)]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    scales = np.log(np.array([1.5, 1.5], np.float32))
    path.with_suffix(".bin").write_bytes(scales.tobytes() + np.array([2, 3]).tobytes())
    ir = load_ir(path)
    try:
        errors = [f.message for f in check_model(ir).findings if f.severity == "error"]
        with pytest.raises(RuntimeError):
            read_ir_model(ir)
    finally:
        ir.close()
    assert len(errors) == 1 and "ReLU takes 1 input; the layer has 2" in errors[0], errors
    assert "its inputs unresolved, [1,1,4,4]" in errors[0] and "OpenVINO refuses the model" in errors[0], errors
