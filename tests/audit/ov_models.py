"""IR models for the audit tests, built with OpenVINO's Python API and saved as IR (f32 weights kept).

Every builder writes ``<path>`` (.xml, with its .bin beside it) and returns it. Layer names are fixed so
tests can find the reductions in the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops


def _save(outputs: list[Any], parameters: list[Any], name: str, path: Path) -> Path:
    ov.save_model(ov.Model(outputs, parameters, name), str(path), compress_to_fp16=False)
    return path


def _parameter(shape: list[int], dtype: Any, name: str) -> Any:
    param = ops.parameter(shape, dtype, name=name)
    param.output(0).set_names({name})
    return param


def _axes(*axes: int) -> Any:
    return ops.constant(np.array(axes, np.int64))


def _f32(array: Any) -> Any:
    return ops.constant(np.asarray(array, np.float32))


def rms_norm(path: Path, *, hidden: int = 512, tokens: int = 8, seed: int = 0, last: bool = False) -> Path:
    """``x -> MatMul(w1) -> h*h -> ReduceMean(-1, keep) 'mean_square' -> +eps -> Sqrt -> h/rms -> *gamma
    -> MatMul(w2)``: an RMSNorm between two projections, as in a transformer block; ``last``: without the second
    projection, the model's last norm (an embedding export's). Input ``x`` is ``[1, tokens, hidden]`` f32."""
    x = _parameter([1, tokens, hidden], np.float32, "x")
    return _save([_rms_block(x, hidden, seed, last)], [x], "rmsnorm", path)


def _rms_block(x: Any, hidden: int, seed: int, last: bool = False) -> Any:
    rng = np.random.default_rng(seed)
    scale = np.float32(1 / np.sqrt(hidden))
    h = ops.matmul(x, _f32(rng.standard_normal((hidden, hidden)) * scale), False, False, name="proj_in")
    squared = ops.multiply(h, h, name="square")
    mean_square = ops.reduce_mean(squared, _axes(-1), True, name="mean_square")
    rms = ops.sqrt(ops.add(mean_square, _f32(1e-6), name="add_eps"), name="rms")
    normalized = ops.divide(h, rms, name="normalize")
    scaled = ops.multiply(normalized, _f32(rng.uniform(0.5, 1.5, hidden)), name="gamma")
    if last:
        return scaled
    return ops.matmul(scaled, _f32(rng.standard_normal((hidden, hidden)) * scale), False, False, name="proj_out")


def rms_norm_in_if(path: Path, *, hidden: int = 512, tokens: int = 8) -> Path:
    """``If(cond)`` whose then body is :func:`rms_norm`'s block and whose else body doubles ``x``."""
    x, cond = _parameter([1, tokens, hidden], np.float32, "x"), _parameter([], np.bool_, "cond")
    then_x, else_x = (ops.parameter([1, tokens, hidden], np.float32) for _ in range(2))
    then = ov.Model([ops.result(_rms_block(then_x, hidden, 0))], [then_x], "then")
    other = ov.Model([ops.result(ops.multiply(else_x, _f32(2.0)))], [else_x], "else")
    branch = ops.if_op(cond)
    branch.set_then_body(then)
    branch.set_else_body(other)
    branch.set_input(x.output(0), then_x, else_x)
    return _save([branch.set_output(then.get_results()[0], other.get_results()[0])], [x, cond], "rms_if", path)


_KINDS = (ops.reduce_mean, ops.reduce_sum, ops.reduce_max, ops.reduce_min, ops.reduce_l2)


def many_reductions(path: Path, count: int = 100) -> Path:
    """``count`` reductions (Mean, Sum, Max, Min, L2 in turn, over the last axis, kept) named
    ``red000``..., chained through element-wise layers so that each one sees a different tensor."""
    x = _parameter([4, 16], np.float32, "x")
    h = x
    for i in range(count):
        r = _KINDS[i % len(_KINDS)](h, _axes(-1), True, name=f"red{i:03d}")
        if i % len(_KINDS) == len(_KINDS) - 1:  # L2 grows: subtract a little of it
            h = ops.subtract(h, ops.multiply(r, _f32(0.01)), name=f"sub{i:03d}")
        else:
            h = ops.add(h, r, name=f"add{i:03d}")
        h = ops.multiply(h, _f32(0.5), name=f"scale{i:03d}")
    return _save([h], [x], "many", path)


def u8_mean(path: Path, *, length: int = 16) -> Path:
    """``ReduceMean`` over the last axis of a u8 ``[2, length]`` input, named ``mean_u8``. The CPU plugin
    stores partial sums in the u8 output buffer, so a mean of 16 hundreds comes out as 15, not 100."""
    x = _parameter([2, length], np.uint8, "x")
    return _save([ops.reduce_mean(x, _axes(1), False, name="mean_u8")], [x], "u8", path)


def uncompilable(path: Path) -> Path:
    """``ReduceMean`` with empty axes and keep_dims=false on a rank-2 input: valid OpenVINO (the identity),
    but the CPU plugin refuses to compile it."""
    x = _parameter([2, 3], np.float32, "x")
    r = ops.reduce_mean(x, ops.constant(np.zeros([0], np.int64)), False, name="empty_axes")
    return _save([ops.relu(r)], [x], "uncompilable", path)


def softmax_like(path: Path, *, seed: int = 0) -> Path:
    """``MatMul -> ReduceMax 'mx' -> Subtract -> Exp -> ReduceSum 'sum' -> Divide -> MatMul``: marking the
    reductions' tensors as outputs changes how the CPU plugin fuses this graph, so the final output of the
    audited run moves a little from the plain run even in f32."""
    rng = np.random.default_rng(seed)
    x = _parameter([1, 8, 256], np.float32, "x")
    w = _f32(rng.standard_normal((256, 256)) / 16)
    h = ops.matmul(x, w, False, False, name="proj")
    mx = ops.reduce_max(h, _axes(-1), True, name="mx")
    e = ops.exp(ops.subtract(h, mx, name="shift"), name="exp")
    s = ops.reduce_sum(e, _axes(-1), True, name="sum")
    y = ops.matmul(ops.divide(e, s, name="softmax"), w, False, False, name="proj_out")
    return _save([y], [x], "softmax_like", path)


def pooled(path: Path, *, seed: int = 0) -> Path:
    """``MatMul -> *2 +0.1 -> Relu -> ReduceMean(axis 1) 'pool' -> MatMul``: in bf16 the CPU plugin runs the
    pooling in bf16 in the plain graph but in f32 once its tensors are marked."""
    rng = np.random.default_rng(seed)
    x = _parameter([1, 8, 256], np.float32, "x")
    w = _f32(rng.standard_normal((256, 256)) / 16)
    h = ops.relu(ops.add(ops.multiply(ops.matmul(x, w, False, False), _f32(2.0)), _f32(0.1)))
    pool = ops.reduce_mean(h, _axes(1), False, name="pool")
    return _save([ops.matmul(pool, w, False, False, name="proj_out")], [x], "pooled", path)


def mixed(path: Path) -> Path:
    """Two inputs: f32 ``x`` [4, 32] with ReduceSum 'sum_f32', ReduceMean 'mean_f32' and ReduceMax 'max_f32'
    over axis 1, and u8 ``q`` [2, 16] with ReduceMean 'mean_u8' (wrong on the CPU when its sums saturate)."""
    x = _parameter([4, 32], np.float32, "x")
    q = _parameter([2, 16], np.uint8, "q")
    outputs = [
        ops.reduce_sum(x, _axes(1), False, name="sum_f32"),
        ops.reduce_mean(x, _axes(1), False, name="mean_f32"),
        ops.reduce_max(x, _axes(1), False, name="max_f32"),
        ops.reduce_mean(q, _axes(1), False, name="mean_u8"),
    ]
    return _save(outputs, [x, q], "mixed", path)


def wide(path: Path, *, inputs: int, elements: int, fan_out: int = 1) -> Path:
    """``inputs`` Parameters ``x0``... of ``[elements]`` f32, each reduced ``fan_out`` times (a Sum over its axis
    after adding 1, 2...): as many tensors as reductions, each within a per-tensor limit of ``elements``."""
    params = [_parameter([elements], np.float32, f"x{i}") for i in range(inputs)]
    outs = [ops.reduce_sum(ops.add(p, _f32(k + 1)), _axes(0), True, name=f"sum{i}_{k}")
            for i, p in enumerate(params) for k in range(fan_out)]  # fmt: skip
    return _save(outs, params, "wide", path)


def runtime_axes(path: Path) -> Path:
    """``ReduceMean(x, axes, keep)``: ``x`` ``[2, 3, 4]`` f32, its axes an i64 input ``axes`` of shape ``[2]``."""
    x = _parameter([2, 3, 4], np.float32, "x")
    axes = _parameter([2], np.int64, "axes")
    return _save([ops.reduce_mean(x, axes, True, name="mean")], [x, axes], "runtime_axes", path)


def shared_axes(path: Path) -> Path:
    """One i64 input ``a`` of shape ``[1]`` is the axes of a ReduceSum of ``[2, 3, 4]``, a ReduceMax of ``[5, 6]`` and a
    ReduceMean of a scalar: axes all three take."""
    x3, x2, x0 = (_parameter(s, np.float32, n) for s, n in (([2, 3, 4], "x3"), ([5, 6], "x2"), ([], "x0")))
    a = _parameter([1], np.int64, "a")
    outs = [ops.reduce_sum(x3, a, False, name="sum3"), ops.reduce_max(x2, a, True, name="max2"),
            ops.reduce_mean(x0, a, False, name="mean0")]  # fmt: skip
    return _save(outs, [x3, x2, x0, a], "shared_axes", path)


def norm_beside_peak(path: Path, *, peak: str) -> Path:
    """An RMS norm between two 64-wide projections, its ReduceMean named ``norm``, beside a ReduceMax of the input
    named ``peak`` (``norm`` too, where a test shares the name: IR names need not be unique)."""
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    rng = np.random.default_rng(0)
    h = ops.matmul(x, _f32(rng.standard_normal((64, 64)) / 8), False, False)
    mean_square = ops.reduce_mean(ops.multiply(h, h), _axes(-1), True, name="norm")
    y = ops.multiply(ops.divide(h, ops.sqrt(ops.add(mean_square, _f32(1e-6)))), _f32(np.ones(64)))
    y = ops.matmul(y, _f32(rng.standard_normal((64, 64)) / 8), False, False)
    return _save([y, ops.reduce_max(x, _axes(-1), True, name=peak)], [x], "norm_beside_peak", path)
