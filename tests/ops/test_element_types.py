"""The element types and input ranks OpenVINO checks as it validates an op, against the installed OpenVINO: a layer
OpenVINO refuses for them (a Relu of booleans, a LogicalAnd of floats, a Select whose condition is not boolean, a
Concat of f32 and i64, integer Interpolate scales, a scalar Broadcast target) is reported, confirmed by OpenVINO's
own refusal; what OpenVINO reads, check reads clean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovreduce import load_ir
from ovreduce._openvino import read_ir_model
from ovreduce.check import check_model
from ovreduce.ops.common import UNARY_SHAPE_PRESERVING
from ovreduce.ops.elementwise import ARITHMETIC, COMPARISON, LOGICAL

from ..ir.irxml import edge, layer, net, port

_PRECISION = {
    "boolean": "BOOL",
    "i64": "I64",
    "i32": "I32",
    "u8": "U8",
    "f16": "FP16",
    "f32": "FP32",
    "nf4": "NF4",
    "string": "STRING",
    "dynamic": "UNSPECIFIED",
}
_NUMPY = {"i64": np.int64, "i32": np.int32, "f32": np.float32, "f16": np.float16}
# an input: (element type, dims, constant values or None for a Parameter)
Input = tuple[str, list[int], Any]
_CONV = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "dilations": "1,1"}
_UNARY_ATTRS = {
    "Clamp": {"min": "0", "max": "1"}, "Elu": {"alpha": "1"}, "Gelu": {"approximation_mode": "erf"},
    "MVN": {"eps": "0.001", "normalize_variance": "true", "eps_mode": "inside_sqrt", "across_channels": "false"},
    "NormalizeL2": {"eps": "0.001", "eps_mode": "add"}, "Round": {"mode": "half_to_even"},
    "Softmax": {"axis": "0"}, "SoftMax": {"axis": "0"}, "LogSoftmax": {"axis": "0"},
}  # fmt: skip
_UNARY_VERSIONS = {"MVN": "opset6", "Gelu": "opset7", "Round": "opset5", "LogSoftmax": "opset5", "HSigmoid": "opset5",
                   "SoftSign": "opset9"}  # fmt: skip


def _unary(op: str, etype: str) -> tuple[str, str, dict[str, str], list[Input]]:
    data: Input = (etype, [2, 3], None)
    extra: list[Input] = {"MVN": [("i64", [1], [1])], "NormalizeL2": [("i64", [1], [1])],
                          "Selu": [(etype, [1], None), (etype, [1], None)]}.get(op, [])  # fmt: skip
    return op, _UNARY_VERSIONS.get(op, "opset4"), _UNARY_ATTRS.get(op, {}), [data, *extra]


CASES: list[tuple[str, tuple[str, str, dict[str, str], list[Input]]]] = [
    *((f"{op}-{t}", _unary(op, t)) for op in sorted(UNARY_SHAPE_PRESERVING) for t in ("boolean", "i32", "f16", "f32")),
    *((f"{op}-{t}", (op, "opset1", {}, [(t, [2], None), (t, [2], None)]))
      for op in (*ARITHMETIC, *COMPARISON, *LOGICAL) for t in ("boolean", "i64", "f32")),
    ("add-f32-i64", ("Add", "opset1", {}, [("f32", [2], None), ("i64", [2], None)])),
    ("add-strings", ("Add", "opset1", {}, [("string", [2], None), ("string", [2], None)])),
    ("relu-string", ("Relu", "opset1", {}, [("string", [2], None)])),
    ("gelu-nf4", ("Gelu", "opset7", _UNARY_ATTRS["Gelu"], [("nf4", [2], None)])),
    ("selu-dynamic-i32", ("Selu", "opset1", {}, [("dynamic", [2], None), ("i32", [1], None), ("i32", [1], None)])),
    ("interpolate11-boolean-data", ("Interpolate", "opset11", {"mode": "nearest", "shape_calculation_mode": "sizes"},
                                    [("boolean", [1, 1, 4, 4], None), ("i64", [2], [8, 8]), ("i64", [2], [2, 3])])),
    ("swish-beta-i64", ("Swish", "opset4", {}, [("f32", [2], None), ("i64", [], None)])),
    ("swish-beta-rank-1", ("Swish", "opset4", {}, [("f32", [2], None), ("f32", [1], None)])),
    ("swish-beta-scalar", ("Swish", "opset4", {}, [("f32", [2], None), ("f32", [], None)])),
    ("mvn6-axes-scalar", ("MVN", "opset6", _UNARY_ATTRS["MVN"], [("f32", [2, 3], None), ("i64", [], [1])])),
    ("mvn6-axes-f32", ("MVN", "opset6", _UNARY_ATTRS["MVN"], [("f32", [2, 3], None), ("f32", [1], [1])])),
    ("normalize-l2-axes-2d", ("NormalizeL2", "opset1", _UNARY_ATTRS["NormalizeL2"],
                              [("f32", [2, 3], None), ("i64", [1, 1], [[1]])])),
    ("selu-f32-f16", ("Selu", "opset1", {}, [("f32", [2], None), ("f16", [1], None), ("f32", [1], None)])),
    ("select-f32-condition", ("Select", "opset1", {}, [("f32", [2], None), ("f32", [2], None), ("f32", [2], None)])),
    ("select-u8-condition", ("Select", "opset1", {}, [("u8", [2], None), ("f32", [2], None), ("f32", [2], None)])),
    ("select-then-else-differ", ("Select", "opset1", {},
                                 [("boolean", [2], None), ("i64", [2], None), ("f32", [2], None)])),
    ("select-boolean", ("Select", "opset1", {}, [("boolean", [2], None), ("f32", [2], None), ("f32", [2], None)])),
    ("matmul-f32-i64", ("MatMul", "opset1", {}, [("f32", [2, 2], None), ("i64", [2, 2], None)])),
    ("matmul-booleans", ("MatMul", "opset1", {}, [("boolean", [2, 2], None), ("boolean", [2, 2], None)])),
    ("convolution-f32-f16", ("Convolution", "opset1", _CONV,
                             [("f32", [1, 1, 4, 4], None), ("f16", [1, 1, 1, 1], None)])),
    ("group-convolution-f32-i32", ("GroupConvolution", "opset1", _CONV,
                                   [("f32", [1, 2, 4, 4], None), ("i32", [2, 1, 1, 1, 1], None)])),
    ("backprop-f32-f16", ("ConvolutionBackpropData", "opset1", _CONV,
                          [("f32", [1, 1, 4, 4], None), ("f16", [1, 1, 1, 1], None)])),
    ("concat-f32-i64", ("Concat", "opset1", {"axis": "0"}, [("f32", [2], None), ("i64", [2], None)])),
    ("concat-booleans", ("Concat", "opset1", {"axis": "0"}, [("boolean", [2], None), ("boolean", [2], None)])),
    ("interpolate4-i64-scales", ("Interpolate", "opset4", {"mode": "nearest", "shape_calculation_mode": "sizes"},
                                 [("f32", [1, 1, 4, 4], None), ("i64", [2], [8, 8]), ("i64", [2], [2, 2]),
                                  ("i64", [2], [2, 3])])),
    ("interpolate4-f32-sizes", ("Interpolate", "opset4", {"mode": "nearest", "shape_calculation_mode": "scales"},
                                [("f32", [1, 1, 4, 4], None), ("f32", [2], [8, 8]), ("f32", [2], [2, 2]),
                                 ("i64", [2], [2, 3])])),
    ("interpolate4-i32-axes", ("Interpolate", "opset4", {"mode": "nearest", "shape_calculation_mode": "sizes"},
                               [("f32", [1, 1, 4, 4], None), ("i32", [2], [8, 8]), ("f16", [2], [2, 2]),
                                ("i32", [2], [2, 3])])),
    ("interpolate4-f32-axes", ("Interpolate", "opset4", {"mode": "nearest", "shape_calculation_mode": "sizes"},
                               [("f32", [1, 1, 4, 4], None), ("i64", [2], [8, 8]), ("f32", [2], [2, 2]),
                                ("f32", [2], [2, 3])])),
    ("interpolate11-i64-scales", ("Interpolate", "opset11", {"mode": "nearest", "shape_calculation_mode": "scales"},
                                  [("f32", [1, 1, 4, 4], None), ("i64", [2], [2, 2]), ("i64", [2], [2, 3])])),
    ("interpolate11-f32-sizes", ("Interpolate", "opset11", {"mode": "nearest", "shape_calculation_mode": "sizes"},
                                 [("f32", [1, 1, 4, 4], None), ("f32", [2], [8, 8]), ("i64", [2], [2, 3])])),
    ("interpolate11-f32-scales", ("Interpolate", "opset11", {"mode": "nearest", "shape_calculation_mode": "scales"},
                                  [("f32", [1, 1, 4, 4], None), ("f32", [2], [2, 2]), ("i64", [2], [2, 3])])),
    *((f"broadcast{v[-1]}-{mode}-scalar-target", ("Broadcast", v, {"mode": mode},
                                                 [("f32", [1], None), ("i64", [], [3])]))
      for v in ("opset1", "opset3") for mode in ("numpy", "pdpd")),
    *((f"broadcast{v[-1]}-{mode}-axes-mapping", ("Broadcast", v, {"mode": mode},
                                                [("f32", [1], None), ("i64", [1], [3]), ("i64", [1], [0])]))
      for v in ("opset1", "opset3") for mode in ("numpy", "pdpd", "explicit")),
    ("broadcast3-bidirectional-axes-mapping", ("Broadcast", "opset3", {"mode": "bidirectional"},
                                              [("f32", [1], None), ("i64", [1], [3]), ("i64", [1], [0])])),
    ("reshape-scalar-pattern", ("Reshape", "opset1", {"special_zero": "false"},
                                [("f32", [1], None), ("i64", [], [1])])),
    ("reshape-scalar-runtime-pattern", ("Reshape", "opset1", {"special_zero": "false"},
                                        [("f32", [1], None), ("i64", [], None)])),
    ("transpose-short-runtime-order", ("Transpose", "opset1", {}, [("f32", [2, 3, 4], None), ("i64", [2], None)])),
    ("transpose-empty-runtime-order", ("Transpose", "opset1", {}, [("f32", [2, 3, 4], None), ("i64", [0], None)])),
    ("transpose-runtime-order", ("Transpose", "opset1", {}, [("f32", [2, 3, 4], None), ("i64", [3], None)])),
]  # fmt: skip


def _model(op: str, version: str, attrs: dict[str, str], inputs: list[Input], outputs: int) -> tuple[str, bytes]:
    """Each input a Parameter or a Const, into the op; each of its ``outputs`` into a Result."""
    layers, edges, ports, blob = [], [], [], b""
    for i, (etype, dims, values) in enumerate(inputs):
        precision = _PRECISION[etype]
        data = {"shape": ",".join(map(str, dims)), "element_type": etype}
        if values is None:
            layers.append(layer(i, f"in{i}", "Parameter", data=data, outputs=[port(0, dims, precision)]))
        else:
            raw = np.array(values, _NUMPY[etype]).tobytes()
            data.update(offset=str(len(blob)), size=str(len(raw)))
            layers.append(layer(i, f"in{i}", "Const", data=data, outputs=[port(0, dims, precision)]))
            blob += raw
        ports.append(port(i, dims, precision))
        edges.append(edge(i, 0, 100, i))
    first = len(inputs)
    layers.append(layer(100, "op", op, version=version, data=attrs or None, inputs=ports,
                        outputs=[port(first + k, []) for k in range(outputs)]))  # fmt: skip
    for k in range(outputs):
        layers.append(layer(200 + k, f"out{k}", "Result", inputs=[port(0, [])]))
        edges.append(edge(100, first + k, 200 + k, 0))
    return net(layers, edges), blob


def _judged(tmp_path: Path, xml: str, blob: bytes) -> tuple[bool, list[str]]:
    """Whether OpenVINO reads the model, and the error findings of check on it."""
    path = tmp_path / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(blob)
    ir = load_ir(path)
    try:
        errors = [f.message for f in check_model(ir).findings if f.severity == "error"]
        try:
            read_ir_model(ir)
        except RuntimeError:
            return False, errors
        return True, errors
    finally:
        ir.close()


@pytest.mark.parametrize("spec", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_an_element_type_or_rank_openvino_refuses_is_refused_and_one_it_reads_is_not(
    tmp_path: Path, spec: tuple[str, str, dict[str, str], list[Input]]
) -> None:
    op, version, attrs, inputs = spec
    read, errors = _judged(tmp_path, *_model(op, version, attrs, inputs, 1))
    if read:
        assert not errors, errors
    else:
        assert len(errors) == 1 and "OpenVINO refuses the model" in errors[0], errors


@pytest.mark.parametrize("lengths", [1, 2, 3])
def test_a_variadic_split_gives_one_output_per_split_length(tmp_path: Path, lengths: int) -> None:
    """The split lengths known only at run time, their count is not: a layer declaring more outputs than that is
    refused, as OpenVINO refuses it ("node index is out of range")."""
    inputs: list[Input] = [("f32", [6, 2], None), ("i64", [], [0]), ("i64", [lengths], None)]
    read, errors = _judged(tmp_path, *_model("VariadicSplit", "opset1", {}, inputs, 2))
    assert read == (lengths >= 2)
    assert bool(errors) == (lengths < 2), errors
