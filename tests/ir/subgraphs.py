"""Models with sub-graph bodies (If, Loop, TensorIterator, nested), built with OpenVINO's Python API and saved
with ``openvino.save_model``: the XML is exactly what OpenVINO's serializer writes."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset5 as o5
import openvino.opset8 as o8

from ovreduce._openvino import partial_shape
from ovreduce.infer import ShapeEngine
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape


def _axes(values: list[int]) -> Any:
    return o8.constant(np.array(values, np.int64))


def _if_model(name: str, then_reduction: Any) -> ov.Model:
    """``If_1`` on a Parameter condition over x [2,3,4]: the then-body is ``then_reduction(tp)`` of its Parameter
    ``tp``, the else-body ReduceSum over axis 1."""
    x = o8.parameter([2, 3, 4], np.float32, name="x")
    cond = o8.parameter([], np.bool_, name="cond")
    tp = o8.parameter([2, 3, 4], np.float32, name="tp")
    then_body = ov.Model([o8.result(then_reduction(tp))], [tp])
    ep = o8.parameter([2, 3, 4], np.float32, name="ep")
    else_body = ov.Model([o8.result(o8.reduce_sum(ep, _axes([1]), keep_dims=False, name="ReduceSum_else"))], [ep])
    node = o8.if_op(cond)
    node.set_friendly_name("If_1")
    node.set_then_body(then_body)
    node.set_else_body(else_body)
    node.set_input(x.output(0), tp, ep)
    out = node.set_output(then_body.get_results()[0], else_body.get_results()[0])
    return ov.Model([out], [x, cond], name)


def if_model() -> ov.Model:
    """``If_1`` on a Parameter condition: then = ReduceMean over axis 1, else = ReduceSum over axis 1."""
    return _if_model("if_model", lambda tp: o8.reduce_mean(tp, _axes([1]), keep_dims=False, name="ReduceMean_then"))


def loop_model(*, keep_dims: bool = False, inner: ov.Model | None = None, last_only: bool = False) -> ov.Model:
    """``Loop_1`` slicing x [5,3,4] along axis 0 (trip count 5): ReduceMean_loop over axes [0, 2], summed into an
    accumulator (a back edge) and concatenated along axis 0 (``last_only``: the accumulator is its one output)."""
    x = o5.parameter([5, 3, 4], np.float32, name="x")
    bp = o5.parameter([1, 3, 4], np.float32, name="bp")
    acc = o5.parameter([3], np.float32, name="acc")
    reduced = o5.reduce_mean(bp, _axes([0, 2]), keep_dims=keep_dims, name="ReduceMean_loop")
    flat = o5.reshape(reduced, _axes([3]), special_zero=False) if keep_dims else reduced
    total = o5.add(acc, flat)
    stacked = o5.unsqueeze(flat, _axes([0]))
    body = ov.Model([o5.result(o5.constant(np.array(True))), o5.result(total), o5.result(stacked)], [bp, acc])
    node = o5.loop(o5.constant(np.array(5, np.int64)), o5.constant(np.array(True)))
    node.set_friendly_name("Loop_1")
    node.set_function(body)
    node.set_special_body_ports([-1, 0])
    node.set_sliced_input(bp, x.output(0), 0, 1, 1, -1, 0)
    node.set_merged_input(acc, o5.constant(np.zeros([3], np.float32)).output(0), total.output(0))
    last = node.get_iter_value(total.output(0), -1)
    if last_only:
        return ov.Model([last], [x], "loop_model")
    cat = node.get_concatenated_slices(stacked.output(0), 0, 1, 1, -1, 0)
    return ov.Model([last, cat], [x], "loop_model")


def ti_model() -> ov.Model:
    """``TensorIterator_1`` over x [2,6,4] in slices of 2 along axis 1: ReduceMax_ti over axis 2 (keep_dims)."""
    x = o1.parameter([2, 6, 4], np.float32, name="x")
    bp = o1.parameter([2, 2, 4], np.float32, name="bp")
    reduced = o1.reduce_max(bp, _axes([2]), keep_dims=True, name="ReduceMax_ti")
    body = ov.Model([o1.result(reduced)], [bp])
    node = ov.op.tensor_iterator()
    node.set_friendly_name("TensorIterator_1")
    node.set_body(body)
    node.set_sliced_input(bp, x.output(0), 0, 2, 2, -1, 1)
    out = node.get_concatenated_slices(reduced.output(0), 0, 2, 2, -1, 1)
    return ov.Model([out], [x], "ti_model")


def nested_model() -> ov.Model:
    """An If inside a Loop body: ``Loop_1/body/If_inner/then/ReduceMean_nested``."""
    x = o8.parameter([4, 6], np.float32, name="x")
    cond = o8.parameter([], np.bool_, name="cond")
    bp = o8.parameter([1, 6], np.float32, name="bp")
    bc = o8.parameter([], np.bool_, name="bc")
    tp = o8.parameter([1, 6], np.float32, name="tp")
    then_body = ov.Model([o8.result(o8.reduce_mean(tp, _axes([1]), keep_dims=True, name="ReduceMean_nested"))], [tp])
    ep = o8.parameter([1, 6], np.float32, name="ep")
    else_body = ov.Model([o8.result(o8.reduce_max(ep, _axes([1]), keep_dims=True, name="ReduceMax_nested"))], [ep])
    inner = o8.if_op(bc)
    inner.set_friendly_name("If_inner")
    inner.set_then_body(then_body)
    inner.set_else_body(else_body)
    inner.set_input(bp.output(0), tp, ep)
    picked = inner.set_output(then_body.get_results()[0], else_body.get_results()[0])
    body = ov.Model([o8.result(o8.constant(np.array(True))), o8.result(picked)], [bp, bc])
    node = o8.loop(o8.constant(np.array(4, np.int64)), o8.constant(np.array(True)))
    node.set_friendly_name("Loop_1")
    node.set_function(body)
    node.set_special_body_ports([-1, 0])
    node.set_sliced_input(bp, x.output(0), 0, 1, 1, -1, 0)
    node.set_invariant_input(bc, cond.output(0))
    out = node.get_concatenated_slices(picked, 0, 1, 1, -1, 0)
    return ov.Model([out], [x, cond], "nested_model")


def save(model: ov.Model, folder: Path, name: str) -> Path:
    path = folder / f"{name}.xml"
    ov.save_model(model, path, compress_to_fp16=False)
    return path


# -- random models with bodies, for the differential tests -----------------------------------------------------
_REDUCE = (o8.reduce_mean, o8.reduce_sum, o8.reduce_max, o8.reduce_min, o8.reduce_prod)


class RandomModel:
    """Random models whose reductions sit at the top level and in If, Loop and TensorIterator bodies (nested up
    to two deep). ``dynamic``: the input may have dynamic and interval dims (bodies take them as they come);
    ``no_rule``: bodies may hold a Pad, an op with no native shape rule in ovreduce; ``always_body``: the model
    has at least one body."""

    def __init__(self, seed: int, *, dynamic: bool = False, no_rule: bool = False, always_body: bool = False) -> None:
        self.rng = np.random.default_rng(seed)
        self.names = itertools.count()
        self.dynamic = dynamic
        self.no_rule = no_rule
        self.always_body = always_body

    def name(self, what: str) -> str:
        return f"{what}_{next(self.names)}"

    def reduce(self, x: Any) -> Any:
        rank = x.get_partial_shape().rank
        if rank.is_dynamic or rank.get_length() == 0:
            return x
        count = int(self.rng.integers(1, rank.get_length() + 1))
        axes = sorted(int(a) for a in self.rng.choice(rank.get_length(), size=count, replace=False))
        op = _REDUCE[int(self.rng.integers(len(_REDUCE)))]
        keep = bool(self.rng.integers(2))
        return op(x, _axes(axes), keep_dims=keep, name=self.name("Reduce")).output(0)

    def pad(self, x: Any) -> Any:
        rank = x.get_partial_shape().rank.get_length()
        begin = [int(v) for v in self.rng.integers(0, 2, size=rank)]
        end = [int(v) for v in self.rng.integers(0, 2, size=rank)]
        return o1.pad(x, _axes(begin), _axes(end), "constant", name=self.name("Pad")).output(0)

    def block(self, x: Any, depth: int, in_ti: bool = False) -> Any:
        first = 1 if depth == 0 and self.always_body else 0
        kind = ["reduce", "if", "loop", "ti"][int(self.rng.integers(first, 4 if depth < 2 else 1))]
        if kind == "ti" and in_ti:  # OpenVINO refuses a TensorIterator nested in another
            kind = "loop"
        pshape = x.get_partial_shape()
        if kind == "reduce" or pshape.rank.get_length() == 0:
            if depth > 0 and self.no_rule and pshape.rank.get_length() > 0 and self.rng.integers(3) == 0:
                x = self.pad(x)
            return self.reduce(x)
        if kind == "if":
            cond = o8.greater(o8.reduce_sum(x, _axes(list(range(len(pshape))))), o8.constant(np.float32(0)))
            node = o8.if_op(cond.output(0))
            node.set_friendly_name(self.name("If"))
            bodies = []
            for _ in range(2):
                p = o8.parameter(pshape, np.float32)
                bodies.append((p, ov.Model([o8.result(self.block(p.output(0), depth + 1, in_ti))], [p])))
            node.set_then_body(bodies[0][1])
            node.set_else_body(bodies[1][1])
            node.set_input(x, bodies[0][0], bodies[1][0])
            return node.set_output(bodies[0][1].get_results()[0], bodies[1][1].get_results()[0])
        axis = int(self.rng.integers(len(pshape)))
        dims = list(pshape)
        sliced = ov.PartialShape([*dims[:axis], ov.Dimension(1), *dims[axis + 1 :]])
        p = o8.parameter(sliced, np.float32)
        out = self.reduce(self.block(p.output(0), depth + 1, in_ti or kind == "ti"))
        if kind == "loop":
            trips = pshape[axis].get_length() if pshape[axis].is_static else 2
            body = ov.Model([o8.result(o8.constant(np.array(True))), o8.result(out)], [p])
            node = o8.loop(o8.constant(np.array(trips, np.int64)), o8.constant(np.array(True)))
            node.set_function(body)
            node.set_special_body_ports([-1, 0])
        else:
            body = ov.Model([o8.result(out)], [p])
            node = ov.op.tensor_iterator()
            node.set_body(body)
        node.set_friendly_name(self.name("Loop" if kind == "loop" else "TensorIterator"))
        node.set_sliced_input(p, x, 0, 1, 1, -1, axis)
        return node.get_iter_value(out, -1)

    def dim(self) -> ov.Dimension:
        pick = int(self.rng.integers(4 if self.dynamic else 1))
        low = int(self.rng.integers(1, 5))
        if pick == 1:
            return ov.Dimension()
        if pick == 2:
            return ov.Dimension(low, low + int(self.rng.integers(1, 4)))
        return ov.Dimension(low)

    def model(self) -> ov.Model:
        rank = int(self.rng.integers(2, 5))
        x = o8.parameter(ov.PartialShape([self.dim() for _ in range(rank)]), np.float32, name="x")
        return ov.Model([o8.result(self.block(x.output(0), 0))], [x])

    def reshape(self, rank: int) -> str:
        """A random new shape for the input, in OpenVINO's syntax: static, ``?`` and ``lo..hi`` dims; one time in
        six of rank one less (then reductions' axes or a slicing axis may be out of range: OpenVINO refuses)."""
        if rank > 1 and self.rng.integers(6) == 0:
            rank -= 1
        dims = []
        for _ in range(rank):
            pick, low = int(self.rng.integers(3)), int(self.rng.integers(1, 6))
            dims.append("?" if pick == 1 else f"{low}..{low + int(self.rng.integers(1, 4))}" if pick == 2 else str(low))
        return f"[{','.join(dims)}]"


def padded_loop_model() -> ov.Model:
    """``Loop_1`` slicing x [4,3,4] along axis 0; its body moves each slice's space into depth (SpaceToDepth
    with block 2: no native rule in ovreduce) to [1,6,2] and ReduceSum_pad reduces axis 2 (keep_dims);
    ReduceMax_after reduces the Loop's last value over axis 0 to [6,1] at the top level."""
    x = o8.parameter([4, 3, 4], np.float32, name="x")
    bp = o8.parameter([1, 3, 4], np.float32, name="bp")
    padded = o1.space_to_depth(bp, "blocks_first", 2, name="S2D_body")
    reduced = o8.reduce_sum(padded, _axes([2]), keep_dims=True, name="ReduceSum_pad")
    body = ov.Model([o8.result(o8.constant(np.array(True))), o8.result(reduced)], [bp])
    node = o8.loop(o8.constant(np.array(4, np.int64)), o8.constant(np.array(True)))
    node.set_friendly_name("Loop_1")
    node.set_function(body)
    node.set_special_body_ports([-1, 0])
    node.set_sliced_input(bp, x.output(0), 0, 1, 1, -1, 0)
    last = node.get_iter_value(reduced.output(0), -1)
    after = o8.reduce_max(last, _axes([0]), keep_dims=False, name="ReduceMax_after")
    return ov.Model([after], [x], "padded_loop_model")


def deep_if_model() -> ov.Model:
    """``If_1`` whose then-body reaches ``ReduceMean_deep`` through three Relus: the reduction's id in its body
    is higher than any top-level id. The else-body is a plain ReduceSum."""
    return _if_model(
        "deep_if_model",
        lambda tp: o8.reduce_mean(o8.relu(o8.relu(o8.relu(tp))), _axes([1]), keep_dims=False, name="ReduceMean_deep"),
    )


def output_shapes(path: Path, op_type: str) -> tuple[list[PartialShape | None], list[PartialShape]]:
    """The output shapes of the one ``op_type`` layer of the IR at ``path``: ovreduce's, then OpenVINO's."""
    node = next(n for n in ov.Core().read_model(path).get_ordered_ops() if n.get_type_name() == op_type)
    model = load_ir(path)
    try:
        [layer] = [layer for layer in model.layers if layer.type == op_type]
        engine = ShapeEngine(model)
        got = [engine.state((layer.id, port.id)).shape for port in layer.outputs]
    finally:
        model.close()
    return got, [partial_shape(node.get_output_partial_shape(i)) for i in range(node.get_output_size())]
