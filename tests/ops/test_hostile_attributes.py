"""Native shape rules on attributes and constant inputs no exporter writes (strides 0, negative kernels, splits
into 0 or -1 parts, split lengths below -1, scales that overflow), against the installed OpenVINO: each layer
must come out as OpenVINO reads it (its shape), refused where OpenVINO refuses it (unresolved, and the check
reports the layer), or unresolved with ovreduce's reason; never a crash of the check, never another shape."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine

from ..ir.irxml import edge, layer, net, port
from .test_reduce_differential import to_shape

POOL = {"kernel": "2,2", "strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "rounding_type": "floor",
        "auto_pad": "explicit"}  # fmt: skip
CONV = {"strides": "1,1", "dilations": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "auto_pad": "explicit"}
INTERPOLATE = {"mode": "nearest", "shape_calculation_mode": "scales", "coordinate_transformation_mode": "half_pixel",
               "nearest_mode": "round_prefer_floor", "antialias": "false", "pads_begin": "0", "pads_end": "0",
               "cube_coeff": "-0.75"}  # fmt: skip
I64 = np.int64
F32 = np.float32

# (case id, op type, version, attributes, input shape, constant inputs, output ports)
CASES: list[tuple[str, str, str, dict[str, str], list[int], list[Any], int]] = [
    ("maxpool_strides_0", "MaxPool", "opset1", {**POOL, "strides": "0,0"}, [1, 1, 5, 5], [], 1),
    ("maxpool_strides_0_ceil", "MaxPool", "opset1", {**POOL, "strides": "0,0", "rounding_type": "ceil"},
     [1, 1, 5, 5], [], 1),
    ("maxpool8_dilations_0", "MaxPool", "opset8", {**POOL, "dilations": "0,0"}, [1, 1, 5, 5], [], 2),
    ("maxpool8_dilations_minus_1", "MaxPool", "opset8", {**POOL, "dilations": "-1,1"}, [1, 1, 5, 5], [], 2),
    ("maxpool14_dilations_minus_2", "MaxPool", "opset14", {**POOL, "dilations": "1,-2"}, [1, 1, 5, 5], [], 2),
    ("avgpool_strides_0_same", "AvgPool", "opset1", {**POOL, "strides": "0,0", "auto_pad": "same_lower",
     "exclude-pad": "true"}, [1, 1, 5, 5], [], 1),
    ("avgpool_kernel_negative_same", "AvgPool", "opset1", {**POOL, "kernel": "-2,-2", "auto_pad": "same_upper",
     "exclude-pad": "false"}, [1, 1, 5, 5], [], 1),
    ("avgpool_kernel_0", "AvgPool", "opset1", {**POOL, "kernel": "0,0", "exclude-pad": "false"}, [1, 1, 5, 5], [], 1),
    ("avgpool_kernel_0_dynamic", "AvgPool", "opset1", {**POOL, "kernel": "0,0", "exclude-pad": "false"},
     [1, 1, -1, -1], [], 1),
    ("conv_strides_negative_same", "Convolution", "opset1", {**CONV, "strides": "-1,-1", "auto_pad": "same_upper"},
     [1, 1, 5, 5], [np.zeros((1, 1, 3, 3), np.float32)], 1),
    ("conv_dilations_negative", "Convolution", "opset1", {**CONV, "dilations": "-1,-1"}, [1, 1, 5, 5],
     [np.zeros((1, 1, 3, 3), np.float32)], 1),
    ("split_0", "Split", "opset1", {"num_splits": "0"}, [4, 6], [np.array(1, I64)], 1),
    ("split_negative", "Split", "opset1", {"num_splits": "-1"}, [4, 6], [np.array(1, I64)], 1),
    ("split_more_parts_than_ports", "Split", "opset1", {"num_splits": "3"}, [4, 6], [np.array(1, I64)], 1),
    ("strided_slice_masks_of_two_sizes", "StridedSlice", "opset1", {"begin_mask": "0,0", "end_mask": "0"}, [2, 3],
     [np.array([0, 1], I64), np.array([2, 3], I64), np.array([1, 1], I64)], 1),
    ("strided_slice_mask_of_2", "StridedSlice", "opset1", {"begin_mask": "0,2", "end_mask": "0,0"}, [2, 3],
     [np.array([0, 1], I64), np.array([2, 3], I64), np.array([1, 1], I64)], 1),
    ("strided_slice_empty_mask", "StridedSlice", "opset1", {"begin_mask": "", "end_mask": "1,0"}, [2, 3],
     [np.array([0, 1], I64), np.array([2, 3], I64), np.array([1, 1], I64)], 1),
    # what OpenVINO reads of shape-preserving ops: their numbers, enums and axes
    ("softmax1_axis_5", "SoftMax", "opset1", {"axis": "5"}, [2, 3], [], 1),
    ("softmax1_axis_minus_1", "SoftMax", "opset1", {"axis": "-1"}, [2, 3], [], 1),
    ("softmax8_axis_minus_2", "SoftMax", "opset8", {"axis": "-2"}, [2, 3], [], 1),
    ("softmax8_axis_minus_3", "SoftMax", "opset8", {"axis": "-3"}, [2, 3], [], 1),
    ("softmax8_axis_text", "SoftMax", "opset8", {"axis": "bogus"}, [2, 3], [], 1),
    ("logsoftmax_axis_2", "LogSoftmax", "opset5", {"axis": "2"}, [2, 3], [], 1),
    ("mvn2_eps_text", "MVN", "opset2", {"eps": "bogus", "across_channels": "false", "normalize_variance": "true"},
     [2, 3], [], 1),
    ("mvn6_eps_mode_bogus", "MVN", "opset6", {"eps": "1e-5", "eps_mode": "bogus", "normalize_variance": "true"},
     [2, 3], [np.array([1], I64)], 1),
    ("mvn6_eps_mode_case", "MVN", "opset6", {"eps": "1e-5", "eps_mode": "Inside_Sqrt", "normalize_variance": "true"},
     [2, 3], [np.array([1], I64)], 1),
    ("normalize_l2_eps_mode_blank", "NormalizeL2", "opset1", {"eps": "1e-5", "eps_mode": "add "}, [2, 3],
     [np.array([1], I64)], 1),
    ("elu_alpha_text", "Elu", "opset1", {"alpha": "bogus"}, [2, 3], [], 1),
    ("clamp_min_above_max", "Clamp", "opset1", {"min": "2", "max": "1"}, [2, 3], [], 1),
    ("clamp_without_max", "Clamp", "opset1", {"min": "1"}, [2, 3], [], 1),
    ("gelu_mode_bogus", "Gelu", "opset7", {"approximation_mode": "bogus"}, [2, 3], [], 1),
    ("gelu_mode_case", "Gelu", "opset7", {"approximation_mode": "TANH"}, [2, 3], [], 1),
    ("round_mode_bogus", "Round", "opset5", {"mode": "bogus"}, [2, 3], [], 1),
    # AvgPool excludes the padding unless told otherwise: a kernel inside the padding is refused then
    ("avgpool_exclude_pad_absent", "AvgPool", "opset1", {**POOL, "pads_begin": "2,2", "pads_end": "2,2"},
     [1, 1, 5, 5], [], 1),
    ("avgpool_exclude_pad_blank", "AvgPool", "opset1", {**POOL, "pads_begin": "2,2", "pads_end": "2,2",
     "exclude-pad": " false"}, [1, 1, 5, 5], [], 1),
    ("avgpool_exclude_pad_false", "AvgPool", "opset1", {**POOL, "pads_begin": "2,2", "pads_end": "2,2",
     "exclude-pad": "false"}, [1, 1, 5, 5], [], 1),
    # Gather's batch_dims: negative ones index from the end, as OpenVINO's loops do; checked without the data's rank
    ("gather8_batch_dims_below_minus_rank", "Gather", "opset8", {"batch_dims": "-3"}, [2, 3, 4],
     [np.array([[0, 1]], I64), np.array([1], I64)], 1),
    ("gather8_batch_dims_minus_1", "Gather", "opset8", {"batch_dims": "-1"}, [2, 3, 4],
     [np.array([[0, 1], [1, 2]], I64), np.array([1], I64)], 1),
    ("gather8_batch_dims_above_axis_dynamic_rank", "Gather", "opset8", {"batch_dims": "2"}, [],
     [np.array([[0, 1]], I64), np.array(0, I64)], 1),
    # inputs read as values: of an integral type (a float target, order or axis is OpenVINO's refusal) and rank
    ("reshape_target_f32", "Reshape", "opset1", {"special_zero": "false"}, [2, 3], [np.array([3, 2], F32)], 1),
    ("gather_axis_f32", "Gather", "opset8", {"batch_dims": "0"}, [2, 3], [np.array([1], I64), np.array(1, F32)], 1),
    ("gather_indices_f32", "Gather", "opset8", {"batch_dims": "0"}, [2, 3], [np.array([1], F32), np.array(1, I64)],
     1),
    ("transpose_order_f32", "Transpose", "opset1", {}, [2, 3], [np.array([1, 0], F32)], 1),
    ("transpose_order_2d", "Transpose", "opset1", {}, [2, 3], [np.array([[1, 0]], I64)], 1),
    ("tile_repeats_f32", "Tile", "opset1", {}, [2, 3], [np.array([1, 2], F32)], 1),
    ("tile_repeats_2d", "Tile", "opset1", {}, [2, 3], [np.array([[1, 2]], I64)], 1),
    ("tile_repeats_scalar", "Tile", "opset1", {}, [2, 3], [np.array(2, I64)], 1),
    ("broadcast_target_f32", "Broadcast", "opset3", {"mode": "numpy"}, [1, 3], [np.array([2, 3], F32)], 1),
    ("broadcast_target_2d", "Broadcast", "opset3", {"mode": "numpy"}, [1, 3], [np.array([[2, 3]], I64)], 1),
    ("split_axis_1d", "Split", "opset1", {"num_splits": "2"}, [4, 6], [np.array([1], I64)], 2),
    ("split_axis_f32", "Split", "opset1", {"num_splits": "2"}, [4, 6], [np.array(1, F32)], 2),
    ("variadic_axis_1d", "VariadicSplit", "opset1", {}, [4, 6], [np.array([1], I64), np.array([2, 4], I64)], 2),
    ("variadic_lengths_2d", "VariadicSplit", "opset1", {}, [4, 6], [np.array(1, I64), np.array([[2, 4]], I64)], 2),
    ("strided_slice_begin_f32", "StridedSlice", "opset1", {"begin_mask": "0,0", "end_mask": "0,0"}, [2, 3],
     [np.array([0, 1], F32), np.array([2, 3], I64), np.array([1, 1], I64)], 1),
    ("pad_pads_f32", "Pad", "opset1", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 1], F32), np.array([0, 1], I64)], 1),
    ("range_start_1d", "Range", "opset4", {"output_type": "f32"}, [1], [np.array(5, F32), np.array(1, F32)], 1),
    ("reshape_zero_and_minus_1_dynamic_rank", "Reshape", "opset1", {"special_zero": "false"}, [],
     [np.array([0, -1], I64)], 1),
    ("interpolate_pads_end_minus_0", "Interpolate", "opset11", {**INTERPOLATE, "pads_end": "0,0,-0,0"}, [1, 1, 5, 5],
     [np.array([2, 2], np.float32), np.array([2, 3], I64)], 1),
    ("maxpool_pads_begin_minus_1", "MaxPool", "opset1", {**POOL, "pads_begin": "-1,0"}, [1, 1, 5, 5], [], 1),
    ("avgpool_pads_end_minus_1", "AvgPool", "opset14", {**POOL, "pads_end": "0,-1", "exclude-pad": "false"},
     [1, 1, 5, 5], [], 1),
    ("tile_repeats_boolean", "Tile", "opset1", {}, [2, 3], [np.array([True, False])], 1),
    ("unsqueeze_axes_boolean", "Unsqueeze", "opset1", {}, [2, 3], [np.array([True])], 1),
    ("unsqueeze_axes_f32", "Unsqueeze", "opset1", {}, [2, 3], [np.array([1.0], F32)], 1),
    ("range_step_0_beside_a_runtime_start", "Range", "opset4", {"output_type": "f32"}, [],
     [np.array(5, F32), np.array(0, F32)], 1),
    # pdpd aligns the data with the target's first dims
    ("broadcast3_pdpd_misaligned", "Broadcast", "opset3", {"mode": "pdpd"}, [3], [np.array([2, 3], I64)], 1),
    ("broadcast3_pdpd_short", "Broadcast", "opset3", {"mode": "pdpd"}, [2], [np.array([2, 3], I64)], 1),
    ("broadcast3_pdpd_same_rank", "Broadcast", "opset3", {"mode": "pdpd"}, [2, 1], [np.array([2, 3], I64)], 1),
    ("broadcast3_pdpd_target_1", "Broadcast", "opset3", {"mode": "pdpd"}, [2, 3], [np.array([2, 1], I64)], 1),
    ("broadcast1_pdpd", "Broadcast", "opset1", {"mode": "pdpd"}, [2, 1], [np.array([2, 3], I64)], 1),
    ("pad_value_i64_beside_f32", "Pad", "opset12", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 1], I64), np.array([0, 1], I64), np.array(0, I64)], 1),
    ("pad_value_f32", "Pad", "opset12", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 1], I64), np.array([0, 1], I64), np.array(0, F32)], 1),
    ("maxpool8_axis_text", "MaxPool", "opset8", {**POOL, "dilations": "1,1", "axis": "bogus"}, [1, 1, 5, 5], [], 2),
    ("maxpool8_axis_past_rank", "MaxPool", "opset8", {**POOL, "dilations": "1,1", "axis": "4"}, [1, 1, 5, 5], [], 2),
    ("maxpool8_axis_minus_4", "MaxPool", "opset8", {**POOL, "dilations": "1,1", "axis": "-4"}, [1, 1, 5, 5], [], 2),
    ("interpolate_cube_coeff_text", "Interpolate", "opset11", {**INTERPOLATE, "cube_coeff": "+-0.75"}, [1, 1, 5, 5],
     [np.array([2, 2], np.float32), np.array([2, 3], I64)], 1),
    ("split_fewer_parts_than_ports", "Split", "opset1", {"num_splits": "2"}, [4, 6], [np.array(1, I64)], 3),
    ("split_without_num_splits", "Split", "opset1", {}, [4, 6], [np.array(1, I64)], 2),
    ("variadic_axis_of_two", "VariadicSplit", "opset1", {}, [4, 6], [np.array([1, 1], I64), np.array([2, 4], I64)], 2),
    ("split_huge_dynamic_rank", "Split", "opset1", {"num_splits": "400000000"}, [], [np.array(0, I64)], 1),
    ("variadic_lengths_below_minus_1", "VariadicSplit", "opset1", {}, [4, 6],
     [np.array(1, I64), np.array([-1, -5], I64)], 2),
    ("variadic_two_minus_1", "VariadicSplit", "opset1", {}, [4, 6], [np.array(1, I64), np.array([-1, -1], I64)], 2),
    ("variadic_rest_minus_1", "VariadicSplit", "opset1", {}, [4, 6], [np.array(1, I64), np.array([7, -1], I64)], 2),
    ("variadic_rest_negative", "VariadicSplit", "opset1", {}, [4, 6], [np.array(1, I64), np.array([9, -1], I64)], 2),
    ("pad_overflows_int64", "Pad", "opset1", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 2**62], I64), np.array([0, 2**62], I64)], 1),
    ("pad_sum_wraps", "Pad", "opset1", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 2**63 - 1], I64), np.array([0, 2**63 - 1], I64)], 1),
    ("shapeof_into_f32", "ShapeOf", "opset3", {"output_type": "f32"}, [2, 3], [], 1),
    ("shapeof3_without_output_type", "ShapeOf", "opset3", {}, [2, 3], [], 1),
    ("shapeof1_without_output_type", "ShapeOf", "opset1", {}, [2, 3], [], 1),
    ("batchnorm_epsilon_nan", "BatchNormInference", "opset5", {"epsilon": "nan"}, [2, 3],
     [np.ones(3, np.float32)] * 4, 1),
    ("batchnorm_epsilon_negative", "BatchNormInference", "opset5", {"epsilon": "-1"}, [2, 3],
     [np.ones(3, np.float32)] * 4, 1),
    ("batchnorm_epsilon_negative_prefix", "BatchNormInference", "opset5", {"epsilon": "-1e-5f"}, [2, 3],
     [np.ones(3, np.float32)] * 4, 1),  # OpenVINO's reader takes the number it begins with
    ("pad_to_int64_max", "Pad", "opset1", {"pad_mode": "constant"}, [2, 3],
     [np.array([0, 2**63 - 1], I64), np.array([0, -3], I64)], 1),  # OpenVINO's "no bound": '?'
    ("variadic_length_int64_max", "VariadicSplit", "opset1", {}, [4, -1],
     [np.array(1, I64), np.array([2**63 - 1, 3], I64)], 2),
    ("interpolate_scales_overflow", "Interpolate", "opset11", INTERPOLATE, [1, 1, 5, 5],
     [np.array([1e30, 1e30], np.float32), np.array([0, 0], I64)], 1),
    # a boolean with a blank is no boolean to OpenVINO: the attribute keeps its default (false)
    ("matmul_transpose_b_blank", "MatMul", "opset1", {"transpose_a": "false", "transpose_b": "true "}, [2, -1],
     [np.zeros((3, 5), np.float32)], 1),
    ("matmul_transpose_a_blank", "MatMul", "opset1", {"transpose_a": " 1", "transpose_b": "false"}, [3, 2],
     [np.zeros((3, 5), np.float32)], 1),
    ("reshape_special_zero_blank", "Reshape", "opset1", {"special_zero": " true"}, [2, 3, 4],
     [np.array([0, -1], I64)], 1),
    # a literal 0 beside a -1: OpenVINO takes it only where an input dim is known to be 0
    ("reshape_zero_and_minus_1_dynamic", "Reshape", "opset1", {"special_zero": "false"}, [-1, 3],
     [np.array([0, -1], I64)], 1),
    ("reshape_zero_and_minus_1_zero_input", "Reshape", "opset1", {"special_zero": "false"}, [-1, 0],
     [np.array([0, -1], I64)], 1),
    ("reshape_special_zero_case", "Reshape", "opset1", {"special_zero": "TRUE"}, [2, 3, 4],
     [np.array([0, -1], I64)], 1),
    # an enum's text is one of its members in any case, blanks not trimmed; another is OpenVINO's refusal
    ("add_auto_broadcast_blank", "Add", "opset1", {"auto_broadcast": "numpy "}, [2, 3], [np.zeros((2, 3), F32)], 1),
    ("add_auto_broadcast_case", "Add", "opset1", {"auto_broadcast": "NumPy"}, [2, 3], [np.zeros((2, 3), F32)], 1),
    ("pad_mode_bogus", "Pad", "opset1", {"pad_mode": "bogus"}, [2, 3],
     [np.array([0, 1], I64), np.array([0, 1], I64)], 1),
    ("maxpool_auto_pad_empty", "MaxPool", "opset1", {**POOL, "auto_pad": ""}, [1, 1, 5, 5], [], 1),
    ("maxpool14_rounding_blank", "MaxPool", "opset14", {**POOL, "dilations": "1,1", "rounding_type": "ceil "},
     [1, 1, 5, 5], [], 2),
    ("maxpool8_index_type", "MaxPool", "opset8", {**POOL, "dilations": "1,1", "index_element_type": "0f32"},
     [1, 1, 5, 5], [], 2),
    ("conv_auto_pad_blank", "Convolution", "opset1", {**CONV, "auto_pad": " valid"}, [1, 1, 5, 5],
     [np.zeros((1, 1, 3, 3), np.float32)], 1),
    ("broadcast1_bidirectional", "Broadcast", "opset1", {"mode": "bidirectional"}, [1, 3], [np.array([2, 3], I64)], 1),
    ("broadcast3_mode_blank", "Broadcast", "opset3", {"mode": "bidirectional "}, [1, 3], [np.array([2, 3], I64)], 1),
    ("shapeof_output_type_blank", "ShapeOf", "opset3", {"output_type": "i32 "}, [2, 3], [], 1),
    ("interpolate_mode_bogus", "Interpolate", "opset11", {**INTERPOLATE, "mode": "bogus"}, [1, 1, 5, 5],
     [np.array([2, 2], np.float32), np.array([2, 3], I64)], 1),
    # two element types: OpenVINO's elementwise ops merge them, and refuse those that differ
    ("add_f32_i64", "Add", "opset1", {}, [2, 3], [np.zeros((2, 3), I64)], 1),
    ("less_f32_i64", "Less", "opset1", {}, [2, 3], [np.zeros((2, 3), I64)], 1),
    ("interpolate_nearest_mode_blank", "Interpolate", "opset11", {**INTERPOLATE, "nearest_mode": "floor "},
     [1, 1, 5, 5], [np.array([2, 2], np.float32), np.array([2, 3], I64)], 1),
]  # fmt: skip


def _ir(
    op: str, version: str, attrs: dict[str, str], shape: list[int], consts: list[Any], outs: int
) -> tuple[str, bytes]:
    """Parameter (dynamic rank for an empty ``shape``) and ``consts`` -> the op -> Result per output port."""
    blob = b""
    spec = ",".join(map(str, shape)) if shape else "..."
    layers = [layer(0, "x", "Parameter", data={"shape": spec, "element_type": "f32"}, outputs=[port(0, shape)])]
    ins, edges = [port(0, shape)], [edge(0, 0, 2, 0)]
    for i, array in enumerate(consts, start=1):
        etype, precision = {"int64": ("i64", "I64"), "bool": ("boolean", "BOOL")}.get(array.dtype.name, ("f32", "FP32"))
        data = {"element_type": etype, "shape": ",".join(map(str, array.shape)), "offset": str(len(blob)),
                "size": str(array.nbytes)}  # fmt: skip
        layers.append(layer(10 + i, f"c{i}", "Const", data=data, outputs=[port(0, array.shape, precision)]))
        ins.append(port(i, array.shape, precision))
        edges.append(edge(10 + i, 0, 2, i))
        blob += array.tobytes()
    first = len(ins)
    layers.append(layer(2, "op", op, version=version, data=attrs, inputs=ins,
                        outputs=[port(first + k, shape) for k in range(outs)]))  # fmt: skip
    for k in range(outs):
        layers.append(layer(20 + k, f"out{k}", "Result", inputs=[port(0, shape)]))
        edges.append(edge(2, first + k, 20 + k, 0))
    return net(layers, edges), blob


def _errors(path: Path) -> list[tuple[str, str | None]]:
    """The error findings of ``check`` on the model at ``path``: (code, layer name)."""
    ir = load_ir(path)
    try:
        return [(f.code, f.layer_name) for f in check_model(ir).findings if f.severity == "error"]
    finally:
        ir.close()


def _openvino(path: Path) -> list[Any] | str:
    """OpenVINO's output shapes of the op, or its refusal."""
    try:
        model = ov.Core().read_model(path)
    except RuntimeError as exc:
        return str(exc)
    (node,) = [n for n in model.get_ordered_ops() if n.get_friendly_name() == "op"]
    return [to_shape(node.get_output_partial_shape(i)) for i in range(node.get_output_size())]


@pytest.mark.parametrize(("op", "version", "attrs", "shape", "consts", "outs"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_hostile_attribute_is_read_as_openvino_reads_it_or_said(
    op: str, version: str, attrs: dict[str, str], shape: list[int], consts: list[Any], outs: int, tmp_path: Path
) -> None:
    xml, blob = _ir(op, version, attrs, shape, consts, outs)
    path = tmp_path / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(blob)
    # OpenVINO builds every part of a Split before it validates the layer: a huge num_splits is not given to it
    openvino = _openvino(path) if attrs.get("num_splits") != "400000000" else None
    ir = load_ir(path)
    try:
        (node,) = [lay for lay in ir.layers if lay.name == "op"]
        states = [ShapeEngine(ir).state((node.id, p.id)) for p in node.outputs]
        report = check_model(ir, engine="native")  # no crash, whatever the rule made of it
    finally:
        ir.close()
    for index, state in enumerate(states):
        if state.shape is None:
            assert state.reason, state
        elif isinstance(openvino, list):
            assert state.shape == openvino[index], (state, openvino)
        else:
            assert openvino is None, f"OpenVINO refuses the layer, ovreduce reads {state.shape}: {openvino}"
    if isinstance(openvino, str) and all(s.shape is None for s in states):
        said = [s.reason.partition("): ")[2].partition(" (")[0] for s in states]  # OpenVINO's words
        counted = all(f"{op} takes " in r for r in said) and "out of range" in openvino  # an input count
        assert f"::{op} " in openvino or counted or all(r and r in openvino for r in said), (openvino, said)
        refusals = [f for f in report.findings if f.code == "layer-invalid"]
        reasons = " ".join(s.reason for s in states)
        assert refusals or "read" in reasons or "cannot evaluate" in reasons, report.findings


BATCHNORM = ("BatchNormInference", "opset5", [2, 3], [np.ones(3, np.float32)] * 4)
CONCAT = ("Concat", "opset1", [1, 3, 4], [np.zeros((1, 3, 4), np.float32)])
MAXPOOL = ("MaxPool", "opset1", [1, 1, 6, 6], [])
# (op, version, input shape, constant inputs), the attribute, and texts of it: numbers as OpenVINO's reader takes
# them (the number a text begins with, after spaces) and as it refuses them (a plus sign on an integer, no digit,
# an empty field of a list, an exponent without digits, beyond the type's range, NaN and Infinity as C writes them)
TEXTS: list[tuple[tuple[str, str, list[int], list[Any]], str, str]] = [
    *((CONCAT, "axis", t) for t in ["1.5", "1x", " 1", "-2", "0x1", "0" * 30 + "1", "+1", "", "abc", "- 1",
                                    "9223372036854775808", "-9223372036854775809"]),
    *((MAXPOOL, "strides", t) for t in ["2.5,2", "2 3,2", "2,2,", "2,2 ,", "2,,2", ",2,2", "2,+2", "2, ,2", "", " ",
                                        "2,2,,", "18446744073709551615,2"]),
    *((BATCHNORM, "epsilon", t) for t in ["inf", " inf ", "-inf", "nan", "NaN", "INF", "+inf", "Infinity", "1e400",
                                          "1e-400", "1.7e308", "abc", "", "1e", "1e+", "+.5", "1.5abc", "0x10"]),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "name", "text"), TEXTS, ids=[f"{s[0]}-{n}={t[:24]!r}" for s, n, t in TEXTS])
def test_an_attribute_text_is_read_as_openvino_reads_it(
    spec: tuple[str, str, list[int], list[Any]], name: str, text: str, tmp_path: Path
) -> None:
    """OpenVINO's reader takes an attribute's leading number and refuses a text without one, naming no layer: a value
    it reads comes out in its shape, natively; one it refuses makes the check fail at that layer, in its words."""
    op, version, shape, consts = spec
    attrs = {**POOL, name: text} if op == "MaxPool" else {name: text}
    xml, blob = _ir(op, version, attrs, shape, consts, 1)
    path = tmp_path / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(blob)
    openvino = _openvino(path)
    ir = load_ir(path)
    try:
        (node,) = [lay for lay in ir.layers if lay.name == "op"]
        state = ShapeEngine(ir).state((node.id, node.outputs[0].id))
        report = check_model(ir, engine="native")
    finally:
        ir.close()
    if isinstance(openvino, list):
        assert state.shape == openvino[0], (state, openvino)
        assert report.ok, report.findings
    else:
        assert state.shape is None, f"OpenVINO refuses the layer, ovreduce reads {state.shape}: {openvino}"
        refusals = [f for f in report.findings if f.code == "layer-invalid" and f.layer_name == "op"]
        assert refusals and not report.ok, (report.findings, openvino)


@pytest.mark.parametrize("data", [None, {"destination_type": "dynamic"}], ids=["no-data", "dynamic"])
def test_axes_through_a_convert_to_no_type_are_not_taken_as_read(tmp_path: Path, data: dict[str, str] | None) -> None:
    """OpenVINO cannot evaluate a Convert to no element type, and refuses a reduction whose axes pass through one
    ("Tensor was not initialized."): the axes were taken as the Const's values, and the reduction checked clean."""
    layers = [
        layer(0, "x", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, [2, 3])]),
        layer(1, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(2, "cast", "Convert", data=data, inputs=[port(0, [1], "I64")], outputs=[port(1, [1], "I64")]),
        layer(3, "sum", "ReduceSum", data={"keep_dims": "false"}, inputs=[port(0, [2, 3]), port(1, [1], "I64")],
              outputs=[port(2, [2])]),
        layer(4, "out", "Result", inputs=[port(0, [2])]),
    ]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 3, 0), edge(1, 0, 2, 0), edge(2, 1, 3, 1), edge(3, 2, 4, 0)]))
    path.with_suffix(".bin").write_bytes(np.array([1], I64).tobytes())
    with pytest.raises(RuntimeError, match="Tensor was not initialized"):
        ov.Core().read_model(path)
    ir = load_ir(path)
    try:
        [reduction] = check_model(ir).reductions
    finally:
        ir.close()
    assert reduction.status == "unresolved" and reduction.inferred_output_shape is None, reduction


@pytest.mark.parametrize(("op", "version", "axis"), [("SoftMax", "opset1", "0"), ("SoftMax", "opset8", "-1"),
                                                     ("LogSoftmax", "opset5", "0")])  # fmt: skip
def test_a_softmax_of_a_scalar_is_read_as_openvino_reads_it(tmp_path: Path, op: str, version: str, axis: str) -> None:
    """OpenVINO checks a scalar's axis as a rank-1 tensor's: the layer was taken for a refusal, and the layers after
    it left to OpenVINO's inference."""
    layers = [layer(0, "x", "Parameter", data={"shape": "", "element_type": "f32"}, outputs=[port(0, [])]),
              layer(1, "op", op, version=version, data={"axis": axis}, inputs=[port(0, [])], outputs=[port(1, [])]),
              layer(2, "out", "Result", inputs=[port(0, [])])]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 1, 0), edge(1, 1, 2, 0)]))
    [openvino] = _openvino(path)
    ir = load_ir(path)
    try:
        report = check_model(ir)
        shape = ShapeEngine(ir).state(("1", "1")).shape
        assert shape == openvino and shape is not None and shape.dims == (), shape
    finally:
        ir.close()
    assert report.ok and not report.notes, report


def test_the_warning_on_an_unread_boolean_names_openvinos_default(tmp_path: Path) -> None:
    """Divide floors unless told otherwise: the warning said OpenVINO reads an unreadable m_pythondiv as false."""
    xml, blob = _ir("Divide", "opset1", {"m_pythondiv": " false"}, [2, 3], [np.ones((2, 3), F32)], 1)
    path = tmp_path / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(blob)
    ir = load_ir(path)
    try:
        [warning] = [f for f in check_model(ir).findings if f.code == "bool-attr-invalid"]
    finally:
        ir.close()
    assert warning.message.endswith("the attribute's default (true for m_pythondiv)"), warning.message


def test_a_batch_dims_past_runtime_indices_is_refused_not_a_crash(tmp_path: Path) -> None:
    """Gather-8 with batch_dims 2 and indices given at run time of rank 1: OpenVINO refuses it; ovreduce's rule read
    past the indices' dims (exit 3, internal error)."""
    layers = [
        layer(0, "x", "Parameter", data={"shape": "2,3,4", "element_type": "f32"}, outputs=[port(0, [2, 3, 4])]),
        layer(1, "i", "Parameter", data={"shape": "2", "element_type": "i32"}, outputs=[port(0, [2], "I32")]),
        layer(2, "axis", "Const", data={"element_type": "i64", "shape": "", "offset": "0", "size": "8"},
              outputs=[port(0, [], "I64")]),
        layer(3, "op", "Gather", version="opset8", data={"batch_dims": "2"},
              inputs=[port(0, [2, 3, 4]), port(1, [2], "I32"), port(2, [], "I64")], outputs=[port(3, [2, 3])]),
        layer(4, "out", "Result", inputs=[port(0, [2, 3])]),
    ]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 3, 0), edge(1, 0, 3, 1), edge(2, 0, 3, 2), edge(3, 3, 4, 0)]))
    path.with_suffix(".bin").write_bytes(np.array(-1, I64).tobytes())
    assert "batch_dims must be <= indices_rank" in str(_openvino(path))
    assert _errors(path) == [("layer-invalid", "op")]


@pytest.mark.parametrize(
    ("op", "version", "data", "consts", "outs"),
    [("Gather", "opset8", {"batch_dims": "0"}, [np.array([0], I64), np.array(0, I64)], 1),
     ("Gather", "opset1", {}, [np.array([0], I64), np.array(0, I64)], 1),
     ("Split", "opset1", {"num_splits": "1"}, [np.array(0, I64)], 1),
     ("Concat", "opset1", {"axis": "0"}, [np.zeros(2, np.float32)], 1)],
    ids=["gather8", "gather1", "split", "concat"],
)  # fmt: skip
def test_a_scalar_into_an_op_along_an_axis_is_refused_as_openvino_refuses_it(
    tmp_path: Path, op: str, version: str, data: dict[str, str], consts: list[Any], outs: int
) -> None:
    """A scalar has no axis: OpenVINO refuses the layer ("Accessing out-of-range dimension", naming no layer), where
    ovreduce left it unresolved with a message of its own, which nothing matched: the check was clean."""
    xml, blob = _ir(op, version, data, [1], consts, outs)
    path = tmp_path / "m.xml"
    path.write_text(xml.replace('shape="1"', 'shape=""', 1).replace("<dim>1</dim>", ""))
    path.with_suffix(".bin").write_bytes(blob)
    assert "Accessing out-of-range dimension" in str(_openvino(path))
    assert _errors(path) == [("layer-invalid", "op")]


@pytest.mark.parametrize(
    ("op", "values"),
    [("Range", None), ("Add", (np.arange(64, dtype=I64).reshape(64, 1), np.arange(128, dtype=I64).reshape(1, 128)))],
    ids=["range-3e9", "add-64x128"],
)
def test_a_value_too_large_to_compute_is_said_not_allocated(
    tmp_path: Path, op: str, values: tuple[Any, Any] | None
) -> None:
    """A Range of 3e9 steps (three 8-byte constants) folded into a reduction's axes took 8 GB and 16 s before
    the memory bound stopped the check: a value of more elements than ovreduce computes is unresolved, saying so."""
    consts = values or (np.array(0, I64), np.array(3 * 10**9, I64), np.array(1, I64))
    shapes = [list(v.shape) for v in consts]
    data, offset = b"", 0
    layers = [layer(0, "x", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, [2, 3])])]
    for i, (v, shape) in enumerate(zip(consts, shapes, strict=True), start=1):
        attrs = {
            "element_type": "i64",
            "shape": ",".join(map(str, shape)),
            "offset": str(offset),
            "size": str(v.nbytes),
        }
        layers.append(layer(i, f"c{i}", "Const", data=attrs, outputs=[port(0, shape, "I64")]))
        data, offset = data + v.tobytes(), offset + v.nbytes
    n = len(consts) + 1
    big = [3 * 10**9] if op == "Range" else [64, 128]
    ins = [port(i, shape, "I64") for i, shape in enumerate(shapes)]
    kind = {"output_type": "i64"} if op == "Range" else {"auto_broadcast": "numpy"}
    axes = [1] if op == "Range" else []  # the smallest element, as a reduction's axes
    layers += [
        layer(n, "big", op, data=kind, inputs=ins, outputs=[port(len(shapes), big, "I64")], version="opset4"),
        layer(n + 1, "axes_of_big", "ReduceMin", data={"keep_dims": str(op == "Range").lower()},
              inputs=[port(0, big, "I64"), port(1, [len(big)], "I64")], outputs=[port(2, axes, "I64")]),
        layer(n + 2, "all", "Const", data={"element_type": "i64", "shape": str(len(big)), "offset": str(offset),
              "size": str(8 * len(big))}, outputs=[port(0, [len(big)], "I64")]),
        layer(n + 3, "mean", "ReduceMean", data={"keep_dims": "false"}, inputs=[port(0, [2, 3]), port(1, axes, "I64")],
              outputs=[port(2, [3])]),
        layer(n + 4, "out", "Result", inputs=[port(0, [3])]),
    ]  # fmt: skip
    data += np.arange(len(big), dtype=I64).tobytes()
    edges = [edge(i, 0, n, i - 1) for i in range(1, n)]
    edges += [edge(n, len(shapes), n + 1, 0), edge(n + 2, 0, n + 1, 1), edge(0, 0, n + 3, 0)]
    edges += [edge(n + 1, 2, n + 3, 1), edge(n + 3, 2, n + 4, 0)]
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(data)
    ir = load_ir(path)
    try:
        report = check_model(ir)
    finally:
        ir.close()
    [mean] = [r for r in report.reductions if r.layer_name == "mean"]
    assert mean.status == "unresolved", mean
    said = " ".join(f.message for f in report.findings if f.layer_name == "mean")
    assert f"{op} layer 'big' makes a value of {3 * 10**9 if op == 'Range' else 8192} elements" in said, said


def test_a_value_known_in_part_is_not_kept_past_the_size_computed(tmp_path: Path) -> None:
    """A runtime value known in part (ShapeOf of a [?] tensor) concatenated with a Const of 4,096 elements, then
    with itself 64 times per level, grew with no bound (three levels: 1e9 elements, a MemoryError, check's memory
    bound after 30 s): a value known in part of more elements than ovreduce computes keeps none of them."""
    x = ov.opset13.parameter(ov.PartialShape([-1]), ov.Type.f32, name="x")
    cat = ov.opset13.concat([ov.opset3.shape_of(x), ov.opset13.constant(np.arange(4096, dtype=I64))], 0)
    cat.set_friendly_name("cat")
    pick = ov.opset8.slice(cat, *(ov.opset13.constant(np.array([v], I64)) for v in (1, 3, 1)))
    op = ov.opset3.broadcast(ov.opset13.constant(np.float32(1)), pick)
    op.set_friendly_name("op")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ov.opset13.result(op)], [x], "m"), str(path), compress_to_fp16=False)
    ir = load_ir(path)
    try:
        engine = ShapeEngine(ir)
        [layer] = [item for item in ir.layers if item.name == "op"]
        shape = engine.state((layer.id, layer.outputs[0].id)).shape
    finally:
        ir.close()
    assert shape is not None and not shape.is_static, f"a value of 4,097 elements known in part was kept: {shape}"


@pytest.mark.parametrize("count", [2, 3])
def test_a_slice_of_too_few_inputs_is_refused_without_crashing_openvino(tmp_path: Path, count: int) -> None:
    """OpenVINO's reader crashes the process (SIGSEGV) on a Slice of 2 or 3 inputs where it should refuse it; check
    asks OpenVINO to confirm a refusal in its own process, so the native Slice rule's refusal made check die with it."""
    data, offset, layers = b"", 0, [layer(0, "x", "Parameter", data={"shape": "4,5", "element_type": "f32"},
                                          outputs=[port(0, [4, 5])])]  # fmt: skip
    for i in range(1, count):
        attrs = {"element_type": "i64", "shape": "1", "offset": str(offset), "size": "8"}
        layers.append(layer(i, f"c{i}", "Const", data=attrs, outputs=[port(0, [1], "I64")]))
        data, offset = data + np.array([i], I64).tobytes(), offset + 8
    ins = [port(0, [4, 5])] + [port(i, [1], "I64") for i in range(1, count)]
    layers += [
        layer(count, "op", "Slice", inputs=ins, outputs=[port(count, [-1, -1])], version="opset8"),
        layer(count + 1, "out", "Result", inputs=[port(0, [-1, -1])]),
    ]
    edges = [edge(i, 0, count, i) for i in range(count)] + [edge(count, count, count + 1, 0)]
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(data)
    code = "import sys; from ovreduce.cli.entry import console; sys.argv[0] = 'ovreduce'; console()"
    done = subprocess.run([sys.executable, "-c", code, "check", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert f"Slice has to have 4 or 5 inputs. Got: {count}" in done.stdout, done.stdout


@pytest.mark.parametrize("kind", ["Slice of 3 inputs", "Broadcast-1 of 1 input"])
def test_an_audit_of_a_model_openvinos_reader_crashes_on_is_a_refusal(tmp_path: Path, kind: str) -> None:
    """An audit reads the whole model with OpenVINO in its own process (the service's worker): a Slice of 3 inputs or
    a Broadcast-1 of one input crashed it (SIGSEGV), and the service answered 503 "retry" for every such audit,
    where OpenVINO refusing the model is the audit's error, as check reports it."""
    x = layer(0, "x", "Parameter", data={"shape": "4,5", "element_type": "f32"}, outputs=[port(0, [4, 5])])
    out = layer(9, "out", "Result", inputs=[port(0, [-1, -1])])
    data = b""
    if kind.startswith("Slice"):
        attrs = [{"element_type": "i64", "shape": "1", "offset": str(8 * i), "size": "8"} for i in (0, 1)]
        consts = [layer(i + 1, f"c{i}", "Const", data=attrs[i], outputs=[port(0, [1], "I64")]) for i in (0, 1)]
        data = np.array([1, 3], I64).tobytes()
        ins = [port(0, [4, 5]), port(1, [1], "I64"), port(2, [1], "I64")]
        op = layer(3, "op", "Slice", version="opset8", inputs=ins, outputs=[port(3, [-1, -1])])
        text = net([x, *consts, op, out], [edge(0, 0, 3, 0), edge(1, 0, 3, 1), edge(2, 0, 3, 2), edge(3, 3, 9, 0)])
        words = "Slice has to have 4 or 5 inputs. Got: 3"
    else:
        op = layer(3, "op", "Broadcast", version="opset1", inputs=[port(0, [4, 5])], outputs=[port(1, [4, 5])])
        text = net([x, op, out], [edge(0, 0, 3, 0), edge(3, 1, 9, 0)])
        words = "index '1' out of range"
    path = tmp_path / "m.xml"
    path.write_text(text)
    path.with_suffix(".bin").write_bytes(data)
    code = ("import sys; from ovreduce import load_ir; from ovreduce.audit import audit_model; "
            "print(audit_model(load_ir(sys.argv[1])).error)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the audit died with OpenVINO's reader: {done.returncode} {done.stderr[-500:]}"
    assert f"OpenVINO could not read the model: {words}" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("op", "version", "count"),
    [("Reshape", "opset1", 1), ("Broadcast", "opset1", 1), ("Broadcast", "opset3", 1), ("Pad", "opset12", 1),
     ("Tile", "opset1", 1), ("Reshape", "opset1", 0), ("broadcast", "opset1", 1), ("BROADCAST", "opset2", 1)],
)  # fmt: skip
def test_an_op_of_too_few_inputs_is_refused_as_openvino_refuses_it(
    tmp_path: Path, op: str, version: str, count: int
) -> None:
    """A layer of fewer inputs than its op reads: OpenVINO refuses the model (index '1' out of range, whichever
    input its validation reads first; a Broadcast-1's reader crashes the process instead); check exited 3 with an
    IndexError ("please report"), and confirming the refusal with OpenVINO in its own process would die with it; so
    did a Broadcast-1 written in another case (OpenVINO finds op types and opsets in any case)."""
    layers = [layer(0, "x", "Parameter", data={"shape": "4,5", "element_type": "f32"}, outputs=[port(0, [4, 5])]),
              layer(1, "op", op, version=version, inputs=[port(0, [4, 5])][:count], outputs=[port(1, [-1, -1])]),
              layer(2, "out", "Result", inputs=[port(0, [-1, -1])])]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 1, 0), edge(1, 1, 2, 0)][1 - count :]))
    path.with_suffix(".bin").write_bytes(b"")
    if (op.lower(), version) not in (("broadcast", "opset1"), ("broadcast", "opset2")):  # (a crash)
        with pytest.raises(RuntimeError):
            ov.Core().read_model(path)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "layer-invalid: layer 1 'op'" in done.stdout and f"{op} takes " in done.stdout, done.stdout
    assert f"the layer has {count}; OpenVINO refuses the model" in done.stdout, done.stdout


@pytest.mark.parametrize(("kind", "version"), [("MaxPool", "opset1"), ("MaxPool", "opset7"), ("maxpool", "opset3")])
def test_a_maxpool_1_of_no_input_is_refused_without_crashing_openvino(tmp_path: Path, kind: str, version: str) -> None:
    """A MaxPool-1 of no input crashes OpenVINO 2026.4's reader (SIGSEGV), and check, which asks it in its own process
    to confirm the refusal, died with it (exit -11): it is taken as refused without asking, in whatever case the type
    is written (OpenVINO finds op types in any case)."""
    pool = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "kernel": "1,1", "rounding_type": "floor"}
    layers = [layer(1, "op", kind, version=version, data=pool, outputs=[port(0, [-1, -1, -1, -1])]),
              layer(2, "out", "Result", inputs=[port(0, [-1, -1, -1, -1])])]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(1, 0, 2, 0)]))
    path.with_suffix(".bin").write_bytes(b"")
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "layer-invalid: layer 1 'op'" in done.stdout and "index '0' out of range" in done.stdout, done.stdout


def test_a_slice_of_three_inputs_of_a_shape_value_is_refused_not_a_crash(tmp_path: Path) -> None:
    """A Slice of a ShapeOf with no step input, into a reduction's axes: folding the elements it picks read the step
    it lacks, and check exited 3 (an IndexError, "please report"); OpenVINO refuses the model, and so does check."""
    layers = [
        layer(0, "x", "Parameter", data={"shape": "?,3,4", "element_type": "f32"}, outputs=[port(0, [-1, 3, 4])]),
        layer(1, "shape", "ShapeOf", version="opset3", data={"output_type": "i64"}, inputs=[port(0, [-1, 3, 4])],
              outputs=[port(1, [3], "I64")]),
        *(layer(i, f"c{i}", "Const", data={"element_type": "i64", "shape": "1", "offset": str(8 * (i - 2)),
                                           "size": "8"}, outputs=[port(0, [1], "I64")]) for i in (2, 3)),
        layer(4, "sl", "Slice", version="opset8", inputs=[port(0, [3], "I64"), port(1, [1], "I64"),
              port(2, [1], "I64")], outputs=[port(3, [2], "I64")]),
        layer(5, "mean", "ReduceMean", data={"keep_dims": "false"}, inputs=[port(0, [-1, 3, 4]), port(1, [2], "I64")],
              outputs=[port(2, [4])]),
        layer(6, "out", "Result", inputs=[port(0, [4])]),
    ]  # fmt: skip
    edges = [edge(0, 0, 1, 0), edge(1, 1, 4, 0), edge(2, 0, 4, 1), edge(3, 0, 4, 2), edge(0, 0, 5, 0),
             edge(4, 3, 5, 1), edge(5, 2, 6, 0)]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.array([0, 2], I64).tobytes())
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "check", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "layer-invalid: layer 4 'sl'" in done.stdout and "Slice has to have 4 or 5 inputs" in done.stdout


_DIVISIONS = [  # (op, m_pythondiv, type, dividend, divisor, OpenVINO's reader killed computing it)
    ("Divide", "true", np.int64, np.iinfo(np.int64).min, -1, True),
    ("Divide", "false", np.int32, np.iinfo(np.int32).min, -1, True),
    ("Mod", None, np.int64, np.iinfo(np.int64).min, -1, True),
    ("FloorMod", None, np.uint8, 4, 0, True),
    ("FloorMod", None, np.uint64, 4, 0, True),
    ("Divide", "true", np.int64, -2, -1, False),
    ("Mod", None, np.int8, np.iinfo(np.int8).min, -1, False),
    ("FloorMod", None, np.int64, np.iinfo(np.int64).min, -1, False),
]


@pytest.mark.parametrize(("op", "python", "dtype", "a", "b", "killed"), _DIVISIONS)
def test_a_constant_division_openvinos_reader_is_killed_by_is_refused(
    tmp_path: Path, op: str, python: str | None, dtype: Any, a: int, b: int, killed: bool
) -> None:
    """A reduction's axes divided in constants where OpenVINO 2026.4's ``evaluate`` traps (the least i64 by -1, an
    unsigned value by 0): its reader is killed by SIGFPE, and so were check and inspect, which ask it in their own
    process, and an audit. ovreduce refuses such a model, naming the layer; a division beside it is read."""
    kind = np.dtype(dtype).name.replace("int", "i").replace("ui", "u")
    size = str(np.dtype(dtype).itemsize)
    x = layer(0, "x", "Parameter", data={"shape": "2,3,4", "element_type": "f32"}, outputs=[port(0, [2, 3, 4])])
    consts = [
        layer(i, f"c{i}", "Const", data={"element_type": kind, "shape": "1", "offset": str(8 * i - 8), "size": size},
              outputs=[port(0, [1], kind.upper())])
        for i in (1, 2)
    ]  # fmt: skip
    divide = layer(3, "d", op, data={"m_pythondiv": python} if python else None,
                   inputs=[port(0, [1]), port(1, [1])], outputs=[port(2, [1], kind.upper())])  # fmt: skip
    convert = layer(4, "cv", "Convert", data={"destination_type": "i64"}, inputs=[port(0, [1])],
                    outputs=[port(1, [1], "I64")])  # fmt: skip
    reduce = layer(5, "R", "ReduceSum", data={"keep_dims": "true"}, inputs=[port(0, [2, 3, 4]), port(1, [1])],
                   outputs=[port(2, [-1, -1, -1])])  # fmt: skip
    out = layer(6, "out", "Result", inputs=[port(0, [-1, -1, -1])])
    edges = [edge(0, 0, 5, 0), edge(1, 0, 3, 0), edge(2, 0, 3, 1), edge(3, 2, 4, 0), edge(4, 1, 5, 1), edge(5, 2, 6, 0)]
    path = tmp_path / "m.xml"
    path.write_text(net([x, *consts, divide, convert, reduce, out], edges))
    path.with_suffix(".bin").write_bytes(b"".join(np.array([v], dtype).tobytes().ljust(8, b"\0") for v in (a, b)))
    code = "import sys, openvino as ov; m = ov.Core().read_model(sys.argv[1]); print(m.output(0).get_partial_shape())"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == (-signal.SIGFPE if killed else 0), (done.returncode, done.stderr[-300:])
    if not killed:
        [reduction] = check_model(load_ir(path)).reductions
        assert reduction.inferred_output_shape == to_shape(ov.PartialShape(done.stdout.strip())).to_json()
        return
    code = ("import sys; from ovreduce import load_ir; from ovreduce.audit import audit_model; "
            "from ovreduce.check import check_model; from ovreduce.errors import IRError\n"
            "for use in (check_model, audit_model):\n"
            "    try: use(load_ir(sys.argv[1])); print('read')\n"
            "    except IRError as exc: print(exc)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"killed with OpenVINO's reader: {done.returncode} {done.stderr[-300:]}"
    refusals = done.stdout.splitlines()
    assert len(refusals) == 2, refusals  # check's, then the audit's
    for refusal in refusals:
        assert re.fullmatch(r".*m\.xml:\d+: layer id=3 name='d' .*killed by the signal SIGFPE.*", refusal), refusal
