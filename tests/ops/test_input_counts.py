"""Every op with a native rule, given fewer or more inputs than it takes, against the installed OpenVINO: a layer of
an input count its op never takes is OpenVINO's refusal of the model, whether or not the rule reads the inputs
missing or left over (a StridedSlice of two, a ShapeOf of two, a Relu of none), and check reports it, confirmed;
a count OpenVINO reads is never refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovreduce import load_ir
from ovreduce._openvino import read_ir_model
from ovreduce.check import check_model
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
}  # fmt: skip
_OUTPUTS = {"Split": 2, "VariadicSplit": 2}


def _ops() -> list[tuple[str, str]]:
    """Every (type, version) whose rule knows its op's input counts, a rule of any version at the newest opset (and
    MVN also before MVN-6, which takes one input fewer)."""
    found = {(op_type, version or "opset16") for (op_type, version), op in table().items()
             if op.input_counts(_probe(op_type, version or "opset16")) is not None}  # fmt: skip
    return sorted({*found, ("MVN", "opset2")})


def _probe(op_type: str, version: str) -> Layer:
    return Layer(id="0", name="op", type=op_type, version=version, data={}, inputs=(), outputs=())


def _model(op_type: str, version: str, count: int) -> str:
    """``count`` Parameters (f32 [2,3,4] first, then i64 [1]) into the op, each of its outputs into a Result."""
    kinds = [("f32", [2, 3, 4], "FP32"), *[("i64", [1], "I64")] * max(count - 1, 0)][:count]
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
