"""What this machine's OpenVINO CPU plugin does, asked of OpenVINO itself (its own Python API, not ovreduce).

Some of the CPU plugin's results depend on the CPU: a bf16 reduction executes natively where the CPU has bf16
instructions (OpenVINO lists ``BF16`` in ``OPTIMIZATION_CAPABILITIES``: AVX512-bf16, AMX) and through f32
elsewhere (AVX2), and the two give different values for the same input. A test of such a result looks up
what this machine executes (:func:`reduction_executes_in`), asserts the value recorded for that condition,
and asserts that ovreduce reports exactly what OpenVINO computed (:func:`cpu_output`), so that it holds on
every CPU and is never skipped because the machine differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import openvino as ov
from openvino import opset13 as ops

__all__ = ["capabilities", "cpu_output", "inference_precision", "reduction_executes_in", "reduction_isa"]

_BUILD = {
    "ReduceMean": ops.reduce_mean,
    "ReduceSum": ops.reduce_sum,
    "ReduceMax": ops.reduce_max,
    "ReduceMin": ops.reduce_min,
    "ReduceProd": ops.reduce_prod,
    "ReduceL1": ops.reduce_l1,
    "ReduceL2": ops.reduce_l2,
    "ReduceLogicalAnd": ops.reduce_logical_and,
    "ReduceLogicalOr": ops.reduce_logical_or,
}
_PRECISIONS = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}


@cache
def _core() -> Any:
    return ov.Core()


@cache
def capabilities() -> tuple[str, ...]:
    """The CPU's ``OPTIMIZATION_CAPABILITIES`` as OpenVINO reports them."""
    return tuple(str(c) for c in _core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def _compiled(op: str, type_name: str, shape: Sequence[int], axes: Sequence[int], keep_dims: bool) -> Any:
    data = ops.parameter(list(shape), getattr(ov.Type, type_name), name="data")
    node = _BUILD[op](data, ops.constant(np.array(axes, np.int64)), keep_dims)
    node.set_friendly_name("reduction")
    return _core().compile_model(ov.Model([node], [data]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def _reduce_info(type_name: str, key: str) -> str:
    compiled = _compiled("ReduceMax", type_name, [2], [0], True)
    (value,) = [
        str(info[key].astype(str))
        for info in (node.get_rt_info() for node in compiled.get_runtime_model().get_ordered_ops())
        if str(info["layerType"].astype(str)) == "Reduce"
    ]
    return value


@cache
def reduction_isa(type_name: str = "f32") -> str:
    """The instruction set the CPU plugin's reduction kernel of element type ``type_name`` uses (``avx512``,
    ``avx2``...), read from the compiled model's execution graph (``primitiveType``, ``jit_avx512_f32``)."""
    primitive = _reduce_info(type_name, "primitiveType")
    return primitive.removeprefix("jit_").rsplit("_", 1)[0]


@cache
def reduction_executes_in(type_name: str) -> str:
    """The precision the CPU plugin executes a reduction of element type ``type_name`` in (``bf16``: natively;
    ``f32``: through f32), read from the compiled model's execution graph (``runtimePrecision``)."""
    precision = _reduce_info(type_name, "runtimePrecision")
    return _PRECISIONS.get(precision.lower(), precision.lower())


def cpu_output(
    op: str, type_name: str, data: npt.NDArray[Any], axes: Sequence[int], keep_dims: bool
) -> npt.NDArray[Any]:
    """What the CPU plugin computes for one reduction layer, built and run with OpenVINO's own API."""
    compiled = _compiled(op, type_name, data.shape, axes, keep_dims)
    # OpenVINO's Python API holds bf16 and f8 tensors as words of their width
    raw = data.view(_WORDS[type_name][0]) if type_name in _WORDS else data
    request = compiled.create_infer_request()
    request.infer([ov.Tensor(np.ascontiguousarray(raw), ov.Shape(list(data.shape)), getattr(ov.Type, type_name))])
    out = request.get_output_tensor(0).data
    if type_name in _WORDS:
        word, dtype = _WORDS[type_name]
        return np.array(out).view(word).view(dtype)
    return np.array(out)


_WORDS: dict[str, tuple[Any, Any]] = {
    "bf16": (np.uint16, ml_dtypes.bfloat16),
    "f8e4m3": (np.uint8, ml_dtypes.float8_e4m3fn),
    "f8e5m2": (np.uint8, ml_dtypes.float8_e5m2),
}


@cache
def inference_precision(hint: str | None) -> str:
    """The inference precision a model compiled for the CPU with ``INFERENCE_PRECISION_HINT=hint`` (None: no
    hint, the device's default) reports, for a MatMul model (the kind of op a precision hint is for)."""
    a = ops.parameter([4, 8], ov.Type.f32, name="a")
    node = ops.matmul(a, ops.constant(np.ones((8, 4), np.float32)), False, False)
    config = {} if hint is None else {"INFERENCE_PRECISION_HINT": hint}
    name = _core().compile_model(ov.Model([node], [a]), "CPU", config).get_property("INFERENCE_PRECISION_HINT")
    return _PRECISIONS.get(name.get_type_name().lower(), name.get_type_name().lower())
