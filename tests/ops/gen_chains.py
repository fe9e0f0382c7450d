"""Random op chains between a Parameter and a reduction, built with OpenVINO's Python API, for the shape
rules' differential test (``test_shape_differential.py``).

A chain is drawn from ``random.Random(seed)`` while it is built: each step picks an op that fits the
current (static) shape, with random attributes, and OpenVINO's own shape inference decides the rest.
The reduction at the end takes axes computed from the shape (``Range(1, Rank(ShapeOf(x)))``) or a Const.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset8 as ops8
import openvino.opset10 as ops10
import openvino.opset11 as ops11
import openvino.opset12 as ops12
import openvino.opset13 as ops
import openvino.opset14 as ops14

STEPS = (
    "relu", "add", "multiply", "select", "conv", "group_conv", "max_pool", "avg_pool", "matmul",
    "transpose", "reshape_const", "reshape_shapeof", "concat", "split", "variadic_split", "unsqueeze_squeeze",
    "tile", "softmax", "gather", "broadcast", "batch_norm", "strided_none",
    "interpolate", "pad", "strided_slice", "conv_backprop", "slice",
)  # fmt: skip


@dataclass
class Chain:
    param: Any  # the chain's Parameter node
    steps: list[str]
    channels_fixed: bool  # whether a reshape must keep dim 1 (a convolution reads it)
    last_fixed: bool = False  # whether a reshape must keep the last dim (a MatMul reads it)
    frozen: bool = False  # whether a reshape must keep every dim (a Broadcast or Split reads them)


def _const(values: Any, dtype: Any = np.float32) -> Any:
    return ops.constant(np.asarray(values, dtype=dtype))


def _shape(node: Any) -> list[int]:
    return [int(d) for d in node.get_partial_shape().to_shape()]


def _step(rng: random.Random, x: Any, chain: Chain) -> Any:
    shape = _shape(x)
    rank = len(shape)
    kind = rng.choice(STEPS)
    chain.steps.append(kind)
    if kind in ("matmul", "gather", "variadic_split", "concat", "select", "add", "multiply", "tile"):
        chain.last_fixed = True
    if kind in ("broadcast", "split", "transpose", "reshape_const", "reshape_shapeof", "unsqueeze_squeeze"):
        chain.frozen = True  # later steps drew their attributes from this step's dims
    if kind == "relu":
        return ops.relu(x)
    if kind in ("add", "multiply"):
        other = [1 for d in shape[rng.randint(0, rank) : -1]] + ([shape[-1]] if rank and rng.random() < 0.5 else [])
        fn = ops.add if kind == "add" else ops.multiply
        c = _const(np.ones(other))
        return fn(x, c) if rng.random() < 0.5 else fn(c, x)
    if kind == "select":
        cond = ops.constant(np.ones([1 for _ in shape[-2:-1]] + shape[-1:], dtype=bool))
        return ops.select(cond, x, _const(np.zeros([1])))
    if kind == "softmax":
        return ops.softmax(x, rng.randint(-rank, rank - 1))
    if kind == "transpose":
        order = list(range(rank))
        rng.shuffle(order)
        return ops.transpose(x, _const(order, np.int64))
    if kind == "reshape_const":
        if rank < 2:
            return ops.relu(x)
        target = [0] * (rank - 2) + [-1]
        return ops.reshape(x, _const(target, np.int64), special_zero=True)
    if kind == "reshape_shapeof":
        if rank < 2:
            return ops.relu(x)
        head = ops.gather(ops.shape_of(x), _const([0], np.int64), _const(0, np.int64))
        return ops.reshape(x, ops.concat([head, _const([-1], np.int64)], 0), special_zero=False)
    if kind == "concat":
        return ops.concat([x, x], rng.randint(-rank, rank - 1)) if rank else ops.relu(x)
    if kind == "split":
        axis = rng.randrange(rank) if rank else 0
        parts = shape[axis] if rank and shape[axis] in (1, 2, 3) else 1
        return ops.split(x, _const(axis, np.int64), parts).output(0) if rank else ops.relu(x)
    if kind == "variadic_split":
        if not rank or shape[-1] < 2:
            return ops.relu(x)
        lengths = [1, -1]
        return ops.variadic_split(x, _const(-1, np.int64), _const(lengths, np.int64)).output(1)
    if kind == "unsqueeze_squeeze":
        axis = rng.randint(-rank - 1, rank)
        y = ops.unsqueeze(x, _const([axis], np.int64))
        return ops.squeeze(y, _const([axis], np.int64)) if rng.random() < 0.5 else y
    if kind == "tile":
        return ops.tile(x, _const([rng.randint(1, 3) for _ in range(rng.randint(1, rank + 1))], np.int64))
    if kind == "gather":
        if not rank or shape[-1] < 1:
            return ops.relu(x)
        indices = [rng.randrange(shape[-1]) for _ in range(rng.randint(1, 3))]
        return ops.gather(x, _const(indices, np.int64), _const(-1, np.int64))
    if kind == "broadcast":
        target = [rng.randint(1, 3), *shape]
        return ops.broadcast(x, _const(target, np.int64))
    if kind == "matmul":
        if rank < 1:
            return ops.relu(x)
        transpose_b = rng.random() < 0.5
        k, n = shape[-1], rng.randint(1, 4)
        w = _const(np.ones([n, k] if transpose_b else [k, n]))
        return ops.matmul(x, w, False, transpose_b)
    if kind == "interpolate" and rank >= 2:
        axes = sorted(rng.sample(range(rank), rng.randint(1, min(2, rank))))
        pads = {
            "pads_begin": [rng.randint(0, 1) for _ in range(rank)],
            "pads_end": [rng.randint(0, 1) for _ in range(rank)],
        }
        if rng.random() < 0.5:  # sizes: the interpolated dims no longer follow the input
            sizes = _const([rng.randint(1, 9) for _ in axes], np.int64)
            if rng.random() < 0.5:
                return ops11.interpolate(x, sizes, "nearest", "sizes", axes=_const(axes, np.int64), **pads)
            return ops10.interpolate(x, sizes, _const([1.0] * len(axes)), "nearest", "sizes",
                                     axes=_const(axes, np.int64), **pads)  # fmt: skip
        scales = _const([rng.choice([1.0, 2.0, 3.0, 0.5, 1.5, 0.3333, 2.7]) for _ in axes])
        if rng.random() < 0.5:
            return ops11.interpolate(x, scales, "nearest", "scales", axes=_const(axes, np.int64), **pads)
        return ops10.interpolate(x, _const([1] * len(axes), np.int64), scales, "nearest", "scales",
                                 axes=_const(axes, np.int64), **pads)  # fmt: skip
    if kind == "pad" and rank:
        mode = rng.choice(["constant", "edge", "reflect", "symmetric"])
        v12 = rng.random() < 0.5
        low = -1 if v12 else 0  # Pad-12 takes negative pads
        begin = [rng.randint(low, 2) for _ in range(rank)]
        end = [rng.randint(low, 2) for _ in range(rank)]
        fn = ops12.pad if v12 else ops1.pad
        return fn(x, _const(begin, np.int64), _const(end, np.int64), mode)
    if kind == "strided_slice" and rank:
        n = rng.randint(1, rank)
        begin = [rng.randint(-4, 4) for _ in range(n)]
        end = [rng.choice([rng.randint(-4, 6), 2**63 - 1]) for _ in range(n)]
        strides = [rng.choice([1, 1, 2, 3, -1, -2]) for _ in range(n)]
        masks = [[int(rng.random() < 0.3) for _ in range(n)] for _ in range(2)]
        extra: list[list[int]] = [[], [], []]
        roll = rng.random()
        if roll < 0.2:
            extra[0] = [int(i == 0) for i in range(n)]  # new axis first
        elif roll < 0.4:
            extra[1] = [int(i == n - 1) for i in range(n)]  # shrink the last sliced axis
        elif roll < 0.5 and n >= 2:
            extra[2] = [int(i == 1) for i in range(n)]  # an ellipsis second
        return ops1.strided_slice(x, _const(begin, np.int64), _const(end, np.int64), _const(strides, np.int64),
                                  masks[0], masks[1], *extra)  # fmt: skip
    if kind == "slice" and rank:
        if rank > 1 and rng.random() < 0.3:  # the first dims of the shape, as a value, then the rest: -1
            chain.frozen = True  # (OpenVINO bounds a slice of interval dims, which ovreduce does not model)
            head = ops8.slice(ops.shape_of(x), _const([0], np.int64), _const([rng.randint(1, rank - 1)], np.int64),
                              _const([1], np.int64))  # fmt: skip
            return ops.reshape(x, ops.concat([head, _const([-1], np.int64)], 0), special_zero=False)
        n = rng.randint(1, rank)
        start = [rng.randint(-4, 4) for _ in range(n)]
        stop = [rng.choice([rng.randint(-4, 6), 2**63 - 1, -(2**63)]) for _ in range(n)]
        steps = [rng.choice([1, 1, 2, 3, -1, -2]) for _ in range(n)]
        given = [_const(start, np.int64), _const(stop, np.int64), _const(steps, np.int64)]
        if rng.random() < 0.7:  # else the first n axes
            given.append(_const([a - rank if rng.random() < 0.5 else a for a in rng.sample(range(rank), n)], np.int32))
        return ops8.slice(x, *given)
    if rank != 4 or shape[1] < 1:
        chain.steps[-1] = "relu"
        return ops.relu(x)
    c = shape[1]
    if kind == "batch_norm":
        chain.channels_fixed = True
        ones = _const(np.ones([c]))
        return ops.batch_norm_inference(x, ones, ones, ones, ones, 1e-5)
    auto_pad = rng.choice(["explicit", "explicit", "valid", "same_upper", "same_lower"])
    k = [rng.randint(1, 3) for _ in range(2)]
    strides = [rng.randint(1, 3) for _ in range(2)]
    dil = [rng.randint(1, 2) for _ in range(2)]
    pb = [rng.randint(0, 2) for _ in range(2)]
    pe = [rng.randint(0, 2) for _ in range(2)]
    if kind in ("max_pool", "avg_pool", "strided_none"):
        if any((shape[2 + i] + pb[i] + pe[i]) < (k[i] - 1) * dil[i] + 1 for i in range(2)):
            chain.steps[-1] = "relu"
            return ops.relu(x)
        rounding = rng.choice(["floor", "ceil"])
        if kind == "avg_pool":
            return ops14.avg_pool(x, strides, pb, pe, k, rng.random() < 0.5, rounding, auto_pad)
        return ops.max_pool(x, strides, dil, pb, pe, k, rounding, auto_pad).output(0)
    chain.channels_fixed = True
    if any((shape[2 + i] + pb[i] + pe[i]) < (k[i] - 1) * dil[i] + 1 for i in range(2)):
        chain.steps[-1] = "relu"
        return ops.relu(x)
    if kind == "conv_backprop":
        out_pad = [rng.randint(0, s - 1) for s in strides]
        w = _const(np.ones([c, rng.randint(1, 3), *k]))
        if rng.random() < 0.2:
            out_shape = _const([rng.randint(4, 12) for _ in range(2)], np.int64)
            return ops1.convolution_backprop_data(x, w, strides, out_shape, pb, pe, dil, auto_pad)
        return ops1.convolution_backprop_data(x, w, strides, None, pb, pe, dil, auto_pad, out_pad)
    if kind == "group_conv":
        groups = c
        w = _const(np.ones([groups, rng.randint(1, 2), 1, *k]))
        return ops.group_convolution(x, w, strides, pb, pe, dil, auto_pad)
    w = _const(np.ones([rng.randint(1, 4), c, *k]))
    return ops.convolution(x, w, strides, pb, pe, dil, auto_pad)


def build_chain(rng: random.Random, name: str) -> tuple[Chain, Any]:
    """One chain: its Parameter, the steps taken, and the reduction at its end."""
    shape = [rng.randint(1, 3), rng.randint(1, 4), rng.randint(4, 12), rng.randint(4, 12)]
    param = ops.parameter(shape, ov.Type.f32, name=name)
    chain = Chain(param, [], False)
    x = param.output(0)
    for _ in range(rng.randint(1, 5)):
        before = x
        try:
            x = _step(rng, x, chain)
        except RuntimeError:  # OpenVINO refuses the attributes drawn: a Relu instead
            chain.steps[-1] = "relu"
            x = ops.relu(x)
        if hasattr(x, "output"):
            x = x.output(0)
        if x.get_partial_shape().is_dynamic or 0 in _shape(x):  # an empty slice, a pad past a dim: none of those
            chain.steps[-1] = "relu"
            x = ops.relu(before).output(0)
    rank = len(x.get_partial_shape())
    if rank and rng.random() < 0.6:
        # axes from the shape: Range(1 or 0, Rank(x)), Rank = Squeeze(ShapeOf(ShapeOf(x)))
        r = ops.squeeze(ops.shape_of(ops.shape_of(x)), _const([0], np.int64))
        axes = ops.range(_const(rng.randint(0, 1) if rank > 1 else 0, np.int64), r, _const(1, np.int64), "i64")
    else:
        axes = _const(list(range(rank))[:1] or [], np.int64)
    return chain, ops.reduce_mean(x, axes, rng.random() < 0.5)


def build_model(seed: int, count: int) -> tuple[Any, list[Chain]]:
    """``count`` independent chains side by side in one model."""
    rng = random.Random(seed)
    chains, results = [], []
    for i in range(count):
        chain, out = build_chain(rng, f"x{seed}_{i}")
        chains.append(chain)
        results.append(ops.result(out))
    return ov.Model(results, [c.param for c in chains], f"chains{seed}"), chains


def new_shape(rng: random.Random, shape: list[int], chain: Chain) -> str:
    """A random new input shape of the same rank, in OpenVINO syntax: static, dynamic or interval dims."""
    dims = []
    for i, d in enumerate(shape):
        if chain.frozen or (i == 1 and chain.channels_fixed) or (i == len(shape) - 1 and chain.last_fixed):
            dims.append(str(d))
            continue
        roll = rng.random()
        if roll < 0.5:
            dims.append(str(rng.randint(d, d + 9) if i >= 2 else rng.randint(1, 4)))
        elif roll < 0.75:
            dims.append("?")
        else:
            lo = rng.randint(1, 8) if i < 2 else rng.randint(d, d + 4)
            dims.append(rng.choice([f"{lo}..{lo + rng.randint(0, 20)}", f"{lo}.."]))
    return "[" + ",".join(dims) + "]"
