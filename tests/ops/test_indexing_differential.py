"""TopK-1/3/11, Roll-7, CumSum-3, GatherElements-6, ScatterUpdate-3, ScatterElementsUpdate-3/12 and ScatterNDUpdate-3/15
against the installed OpenVINO: random input shapes (static, zero-sized, interval and dynamic dims, dynamic ranks),
element types and attributes, each written as an IR of Parameters and Consts (a TopK's ``k`` also a value known at run
time only, or a dim ShapeOf gives, of an interval) into one layer named ``op``, read as it is and again after
``Model.reshape`` to other random shapes. ovreduce must infer each output's shape and element type as OpenVINO does,
and refuse (leave unresolved, saying why) the models and reshapes it refuses. Then a small mixture-of-experts router
(Softmax, TopK, the weights normalised by a ReduceSum) under ``check --reshape``: the reduction is resolved natively."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset11 as o11
import pytest

from ovreduce import load_ir
from ovreduce.cli import main
from ovreduce.infer import ShapeEngine
from ovreduce.ops.base import PortState
from ovreduce.shapes import PartialShape

from ..ir.irxml import edge, layer, net, port
from .test_reduce_differential import to_shape

Shape = list[int | str] | None  # None: a dynamic rank
_PRECISION = {"f32": "FP32", "f16": "FP16", "i32": "I32", "i64": "I64", "i8": "I8", "u8": "U8", "u32": "U32",
              "u64": "U64", "boolean": "BOOL"}  # fmt: skip
_NUMPY = {"i32": np.int32, "i64": np.int64, "i8": np.int8, "u8": np.uint8, "u32": np.uint32, "u64": np.uint64,
          "f32": np.float32, "f16": np.float16, "boolean": np.bool_}  # fmt: skip

# An input of the layer: ("p", shape, type) a Parameter; ("c", values, shape, type) a Const; ("dim", shape, index) the
# dim ``index`` of a Parameter of ``shape``, as a scalar i64 (ShapeOf, then Gather).
Input = tuple[Any, ...]


def _text(shape: Shape) -> str:
    return "..." if shape is None else ",".join(map(str, shape))


def _dims(shape: Shape) -> list[int]:
    return [d if isinstance(d, int) else -1 for d in shape or ()]


def _write(folder: Path, inputs: Sequence[Input], op: tuple[str, str], data: dict[str, str], outputs: int) -> Path:
    """An IR of the inputs into the layer ``op`` (its ``outputs`` ports each to a Result)."""
    layers, edges, blob = [], [], b""
    sources: list[tuple[int, int, list[int], str]] = []  # (layer, port, dims, precision) feeding each input
    for i, spec in enumerate(inputs):
        base = 10 * (i + 1)
        if spec[0] == "p":
            _, shape, etype = spec
            layers.append(layer(base, f"p{i}", "Parameter", data={"shape": _text(shape), "element_type": etype},
                                outputs=[port(0, _dims(shape), _PRECISION[etype], names=f"p{i}")]))  # fmt: skip
            sources.append((base, 0, _dims(shape), _PRECISION[etype]))
        elif spec[0] == "c":
            _, values, shape, etype = spec
            raw = np.array(values, np.int64).astype(_NUMPY[etype]).reshape(shape).tobytes()
            layers.append(layer(base, f"c{i}", "Const", data={"element_type": etype, "shape": _text(shape),
                                                              "offset": str(len(blob)), "size": str(len(raw))},
                                outputs=[port(0, shape, _PRECISION[etype])]))  # fmt: skip
            blob += raw
            sources.append((base, 0, list(shape), _PRECISION[etype]))
        else:
            _, shape, index = spec
            layers.append(layer(base, f"p{i}", "Parameter", data={"shape": _text(shape), "element_type": "f32"},
                                outputs=[port(0, _dims(shape), names=f"p{i}")]))  # fmt: skip
            layers.append(layer(base + 1, f"s{i}", "ShapeOf", version="opset3", data={"output_type": "i64"},
                                inputs=[port(0, _dims(shape))], outputs=[port(1, [len(shape)], "I64")]))  # fmt: skip
            raw = np.array([index, 0], np.int64).tobytes()
            for j in range(2):
                layers.append(layer(base + 2 + j, f"g{i}_{j}", "Const",
                                    data={"element_type": "i64", "shape": "", "offset": str(len(blob) + 8 * j),
                                          "size": "8"}, outputs=[port(0, [], "I64")]))  # fmt: skip
            blob += raw
            layers.append(layer(base + 4, f"d{i}", "Gather", version="opset8", data={"batch_dims": "0"},
                                inputs=[port(0, [len(shape)], "I64"), port(1, [], "I64"), port(2, [], "I64")],
                                outputs=[port(3, [], "I64")]))  # fmt: skip
            edges += [edge(base, 0, base + 1, 0), edge(base + 1, 1, base + 4, 0), edge(base + 2, 0, base + 4, 1),
                      edge(base + 3, 0, base + 4, 2)]  # fmt: skip
            sources.append((base + 4, 3, [], "I64"))
    n = len(inputs)
    layers.append(layer(1000, "op", op[0], version=op[1], data=data,
                        inputs=[port(i, dims, precision) for i, (_, _, dims, precision) in enumerate(sources)],
                        outputs=[port(n + k, (), "FP32") for k in range(outputs)]))  # fmt: skip
    edges += [edge(src, p, 1000, i) for i, (src, p, _, _) in enumerate(sources)]
    for k in range(outputs):
        layers.append(layer(2000 + k, f"out{k}", "Result", inputs=[port(0)]))
        edges.append(edge(1000, n + k, 2000 + k, 0))
    xml = folder / "m.xml"
    xml.write_text(net(layers, edges))
    xml.with_suffix(".bin").write_bytes(blob)
    return xml


Outcome = list[tuple[PartialShape, str]] | None  # each output's (shape, element type); None: refused


def _both(core: ov.Core, xml: Path, reshape: dict[str, Shape] | None) -> tuple[Outcome, list[PortState]]:
    """OpenVINO's outputs of the layer ``op`` (None: it refuses the file or the reshape) and ovreduce's states."""
    try:
        model = core.read_model(xml)
        if reshape:
            model.reshape({name: ov.PartialShape(_text(s)) for name, s in reshape.items()})
        (node,) = [n for n in model.get_ordered_ops() if n.get_friendly_name() == "op"]
        expected: Outcome = [
            (to_shape(node.get_output_partial_shape(i)), node.get_output_element_type(i).get_type_name())
            for i in range(node.get_output_size())
        ]
    except (RuntimeError, UnicodeDecodeError):  # (OpenVINO's message of an i8 k of -1 holds the byte 0xff)
        expected = None
    ir = load_ir(xml)
    try:
        new = {name: PartialShape.parse(_text(s)) for name, s in (reshape or {}).items()}
        (op,) = [lay for lay in ir.layers if lay.name == "op"]
        engine = ShapeEngine(ir, new)
        return expected, [engine.state((op.id, p.id)) for p in op.outputs]
    finally:
        ir.close()


def _ovreduce(states: list[PortState]) -> Outcome:
    if any(s.shape is None for s in states):
        return None
    return [(s.shape, "dynamic" if s.element_type is None else s.element_type.name) for s in states]  # type: ignore[misc]


def _same(expected: Outcome, states: list[PortState]) -> bool:
    if expected is None:  # a refusal: unresolved, saying why
        return all(s.shape is None and bool(s.reason) for s in states)
    return _ovreduce(states) == expected


DIMS: list[int | str] = [0, 1, 1, 2, 2, 3, 4, 5, "?", "1..3", "0..2", "2..", "2..6"]


def _vary(rng: random.Random, shape: Shape) -> Shape:
    """``shape`` with some dims swapped for random ones (a reshape that often fits, sometimes not)."""
    if shape is None or rng.random() < 0.05:
        return None if rng.random() < 0.5 else [rng.choice(DIMS) for _ in range(rng.randint(1, 4))]
    return [rng.choice(DIMS) if rng.random() < 0.3 else d for d in shape]


def _some(rng: random.Random, rank: int | None = None) -> Shape:
    if rank is None and rng.random() < 0.07:
        return None
    return [rng.choice(DIMS) for _ in range(rng.randint(1, 4) if rank is None else rank)]


Draw = Callable[[random.Random], tuple[list[Input], tuple[str, str], dict[str, str], int]]


def _check(rng: random.Random, tmp: Path, cases: int, draw: Draw) -> tuple[list[str], int, int]:
    core = ov.Core()
    wrong, refused, static = [], 0, 0
    for case in range(cases):
        inputs, op, data, outputs = draw(rng)
        folder = tmp / str(case)
        folder.mkdir()
        xml = _write(folder, inputs, op, data, outputs)
        params = {f"p{i}": spec[1] for i, spec in enumerate(inputs) if spec[0] in ("p", "dim")}
        for reshape in (None, {name: _vary(rng, s) for name, s in params.items()}):
            expected, states = _both(core, xml, reshape)
            refused += expected is None
            static += expected is not None and all(s.is_static for s, _ in expected)
            if expected is None and reshape is None:  # (a file OpenVINO refuses is not reshaped)
                if not _same(expected, states):
                    wrong.append(f"{op} {data} {inputs}: ovreduce {_ovreduce(states)}, OpenVINO refuses it")
                break
            if not _same(expected, states):
                reasons = [s.reason for s in states]
                wrong.append(f"{op} {data} {inputs} reshaped to {reshape}: ovreduce {_ovreduce(states)} {reasons}, "
                             f"OpenVINO {expected}")  # fmt: skip
    return wrong, refused, static


def _topk(rng: random.Random) -> Any:
    version = rng.choice(["opset1", "opset3", "opset11", "opset11"])
    data = _some(rng)
    rank = 2 if data is None else len(data)
    data_type = rng.choice(["f32", "f32", "f16", "i32"])
    k_type = rng.choice(["i64", "i64", "i32", "i8", "u8", "u32"] + (["f32"] if rng.random() < 0.1 else []))
    kind = rng.random()
    if kind < 0.45:
        value = rng.choice([0, 1, 2, 3, 5, 7] + ([-1] if k_type[0] in "if" and rng.random() < 0.2 else []))
        k_shape = [] if rng.random() < 0.93 else rng.choice([[1], [2]])
        k: Input = ("c", [value] * (2 if k_shape == [2] else 1), k_shape, k_type)
    elif kind < 0.65:
        k = ("p", [] if rng.random() < 0.93 else rng.choice([[1], ["?"], None]), k_type)
    else:
        k = ("dim", [rng.choice([2, 3, "?", "1..4", "2..9", "3.."]), 4], 0)
    data_attrs = {
        "axis": str(rng.choice([-1, -1, 0, 1, rank - 1, -rank, rank])),
        "mode": rng.choice(["max", "max", "min", "MAX"] + (["maximum"] if rng.random() < 0.05 else [])),
        "sort": rng.choice(["value", "value", "index", "none"]),
        "index_element_type": rng.choice(["i32", "i64", "i64"] + (["u32"] if rng.random() < 0.1 else [])),
    }
    for name in ("index_element_type", "axis", "mode", "sort"):  # (a layer without it: OpenVINO's default)
        if rng.random() < 0.08:
            del data_attrs[name]
    if version == "opset11" and rng.random() < 0.7:
        data_attrs["stable"] = rng.choice(["true", "false"])
    return [("p", data, data_type), k], ("TopK", version), data_attrs, 2


@pytest.mark.parametrize("seed", range(4))
def test_a_topk_shape_is_openvinos(seed: int, tmp_path: Path) -> None:
    wrong, refused, static = _check(random.Random(seed), tmp_path, 120, _topk)
    assert refused >= 5 and static >= 10, (refused, static)
    assert wrong == [], "\n".join(wrong)


def _index_type(rng: random.Random) -> str:
    return rng.choice(["i64", "i64", "i32"] + (["f32", "u8", "boolean"] if rng.random() < 0.15 else []))


def _roll(rng: random.Random) -> Any:
    data = _some(rng)
    rank = 2 if data is None else len(data)
    count = rng.choice([1, 1, 2])
    axes_values = [rng.choice([0, -1, 1, rank - 1, rank, -rank - 1]) for _ in range(count)]
    shift: Input = ("c", [1] * count, [count] if count > 1 or rng.random() < 0.7 else [], _index_type(rng))
    if rng.random() < 0.15:
        shift = ("p", rng.choice([[2], [1, 1], ["?"]]), "i64")
    axes: Input = ("c", axes_values, [count], _index_type(rng))
    if rng.random() < 0.2:
        axes = ("p", rng.choice([[count], [], [1, 1], None]), "i32")
    return [("p", data, "f32"), shift, axes], ("Roll", "opset7"), {}, 1


def _cumsum(rng: random.Random) -> Any:
    axis_type = _index_type(rng)
    axis: Input = (
        "c",
        [rng.choice([0, 1, -1, 5] if axis_type[0] in "if" else [0, 1])],
        rng.choice([[], [], [1]]),
        axis_type,
    )
    if rng.random() < 0.2:
        axis = ("p", [], rng.choice(["i64", "i32", "f32"]))
    data = {"exclusive": rng.choice(["true", "false"]), "reverse": rng.choice(["true", "false"])}
    return [("p", _some(rng), rng.choice(["f32", "i32"])), axis], ("CumSum", "opset3"), data, 1


def _gather_elements(rng: random.Random) -> Any:
    data = _some(rng)
    rank = 2 if data is None else len(data)
    indices = None if rng.random() < 0.07 else [rng.choice([d, d, *DIMS]) for d in (data or [2, 3])]
    if indices is not None and rng.random() < 0.1:
        indices = indices[1:] or [2]
    axis = rng.choice([0, -1, 1, rank - 1, rank])
    indices_type = rng.choice(["i32", "i64", "i64"] + (["u8"] if rng.random() < 0.1 else []))
    return [("p", data, "f32"), ("p", indices, indices_type)], ("GatherElements", "opset6"), {"axis": str(axis)}, 1


def _scatter_update(rng: random.Random) -> Any:
    data = _some(rng)
    rank = 2 if data is None else len(data)
    axis = rng.choice([0, 0, 1, -1, rank - 1, rank])
    indices = _some(rng)
    at = axis + rank if axis < 0 else axis
    if data is not None and indices is not None and rng.random() < 0.8 and 0 <= at < rank:
        updates: Shape = [*data[:at], *indices, *data[at + 1 :]]
        updates = [rng.choice(DIMS) if rng.random() < 0.1 else d for d in updates]
    else:
        updates = _some(rng)
    axis_input: Input = ("c", [axis], rng.choice([[], [], [1]]), _index_type(rng))
    types = ["f32", _index_type(rng), rng.choice(["f32", "f32", "f32", "i32"])]
    return ([("p", data, types[0]), ("p", indices, types[1]), ("p", updates, types[2]), axis_input],
            ("ScatterUpdate", "opset3"), {}, 1)  # fmt: skip


def _scatter_elements(rng: random.Random) -> Any:
    version = rng.choice(["opset3", "opset12", "opset12"])
    data = _some(rng)
    rank = 2 if data is None else len(data)
    indices = None if rng.random() < 0.07 else [rng.choice([d, *DIMS]) for d in (data or [2, 3])]
    updates = indices if rng.random() < 0.8 else _some(rng)
    axis: Input = ("c", [rng.choice([0, 1, -1, rank, -rank - 1])], rng.choice([[], [], [1], [1, 1]]), _index_type(rng))
    data_type = rng.choice(["f32", "f32", "i32", "boolean"])
    attrs = {}
    if version == "opset12":
        attrs = {"reduction": rng.choice(["none", "sum", "mean", "max", "SUM"]),
                 "use_init_val": rng.choice(["true", "false"])}  # fmt: skip
    return ([("p", data, data_type), ("p", indices, _index_type(rng)),
             ("p", updates, data_type if rng.random() < 0.9 else "f16"), axis],
            ("ScatterElementsUpdate", version), attrs, 1)  # fmt: skip


def _scatter_nd(rng: random.Random) -> Any:
    version = rng.choice(["opset4", "opset15", "opset15"])  # (ScatterNDUpdate-3 is in opset4 first)
    data = _some(rng)
    rank = 2 if data is None else len(data)
    depth = rng.choice([1, 1, 2, rank, rank + 1])
    lead = [rng.choice(DIMS) for _ in range(rng.randint(0, 2))]
    indices: Shape = [*lead, depth] if rng.random() < 0.9 else _some(rng)
    if indices is not None and rng.random() < 0.1:
        indices = [*lead, rng.choice(["?", "1..2"])]
    if data is not None and rng.random() < 0.8:
        updates: Shape = [*lead, *data[depth:]]
        updates = [rng.choice(DIMS) if rng.random() < 0.1 else d for d in updates]
    else:
        updates = _some(rng)
    data_type = rng.choice(["f32", "f32", "i32"])
    attrs = (
        {"reduction": rng.choice(["none", "sum", "sub", "prod", "min", "max", "mean"])} if version == "opset15" else {}
    )
    return ([("p", data, data_type), ("p", indices, _index_type(rng)),
             ("p", updates, data_type if rng.random() < 0.9 else "f16")],
            ("ScatterNDUpdate", version), attrs, 1)  # fmt: skip


@pytest.mark.parametrize(
    ("draw", "seed"),
    [
        (d, s)
        for d in (_roll, _cumsum, _gather_elements, _scatter_update, _scatter_elements, _scatter_nd)
        for s in (0, 1)
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else str(v),
)
def test_an_element_moving_shape_is_openvinos(draw: Draw, seed: int, tmp_path: Path) -> None:
    wrong, refused, static = _check(random.Random(seed), tmp_path, 100, draw)
    assert refused >= 5 and static >= 5, (refused, static)
    assert wrong == [], "\n".join(wrong)


def _one_hot(rng: random.Random) -> Any:
    version = rng.choice(["opset1", "opset16", "opset16"])
    indices = _some(rng)
    if indices is not None and rng.random() < 0.1:
        indices = []
    rank = 2 if indices is None else len(indices)
    depth_type = rng.choice(["i64", "i64", "i32", "u8"] + (["f32"] if rng.random() < 0.1 else []))
    kind = rng.random()
    if kind < 0.5:
        value = rng.choice([0, 1, 3, 4, 8] + ([-1] if depth_type[0] == "i" and rng.random() < 0.2 else []))
        depth: Input = ("c", [value], [] if rng.random() < 0.92 else [1], depth_type)
    elif kind < 0.65:
        depth = ("p", [] if rng.random() < 0.9 else rng.choice([[1], ["?"], None]), depth_type)
    else:
        depth = ("dim", [rng.choice([2, 3, "?", "1..4", "2..9", "3.."]), 4], 0)
    on_type = rng.choice(["f32", "f32", "i32"])
    off_type = on_type if rng.random() < 0.9 else rng.choice(["f32", "i32", "f16"])
    on: Input = ("c", [1], [] if rng.random() < 0.95 else [1], on_type)
    off: Input = ("c", [0], [] if rng.random() < 0.95 else [1], off_type)
    attrs = {"axis": str(rng.choice([-1, -1, 0, 1, rank, -rank - 1, rank + 1, -rank - 2]))}
    if rng.random() < 0.05:
        del attrs["axis"]
    if version == "opset16" and rng.random() < 0.7:
        attrs["negative_indices_mode"] = rng.choice(["ignore_negative", "normalize", "NORMALIZE", "wrap"])
    indices_type = rng.choice(["i64", "i64", "i32", "u8"] + (["f32", "boolean"] if rng.random() < 0.1 else []))
    return [("p", indices, indices_type), depth, on, off], ("OneHot", version), attrs, 1


def _non_zero(rng: random.Random) -> Any:
    data_type = rng.choice(["f32", "f32", "i32", "i64", "u8", "boolean"])
    data: Input = ("p", _some(rng) if rng.random() < 0.9 else [], data_type)
    if rng.random() < 0.3:  # (a constant: OpenVINO counts its non-zero elements)
        shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 3))]  # (none empty: a blob of no bytes is refused)
        values = [rng.choice([0, 0, 1, 3]) for _ in range(int(np.prod(shape)) if shape else 1)]
        data = ("c", values, shape, rng.choice(["f32", "i32", "i64", "u8"]))
    attrs = {"output_type": rng.choice(["i64", "i64", "i32"] + (["f32", "u32", "int"] if rng.random() < 0.15 else []))}
    if rng.random() < 0.1:
        del attrs["output_type"]
    return [data], ("NonZero", "opset3"), attrs, 1


def _gather_nd(rng: random.Random) -> Any:
    version = rng.choice(["opset5", "opset8", "opset8"])
    batch = rng.choice([0, 0, 1, 2, 3])
    data = _some(rng)
    depth = rng.choice([1, 1, 2, 3, 4])
    if data is not None and rng.random() < 0.8:
        lead = [d if rng.random() < 0.8 else rng.choice(DIMS) for d in data[:batch]]
        indices: Shape = [*lead, *[rng.choice(DIMS) for _ in range(rng.randint(0, 2))], depth]
    else:
        indices = _some(rng)
    if indices is not None and rng.random() < 0.1:
        indices[-1] = rng.choice(["?", "1..2"])
    indices_type = rng.choice(["i64", "i64", "i32", "u8"] + (["f32", "boolean"] if rng.random() < 0.1 else []))
    return ([("p", data, rng.choice(["f32", "i32"])), ("p", indices, indices_type)], ("GatherND", version),
            {"batch_dims": str(batch)}, 1)  # fmt: skip


@pytest.mark.parametrize(
    ("draw", "seed"),
    [(d, s) for d in (_one_hot, _non_zero, _gather_nd) for s in (0, 1, 2)],
    ids=lambda v: v.__name__.strip("_") if callable(v) else str(v),
)
def test_a_one_hot_non_zero_or_gather_nd_shape_is_openvinos(draw: Draw, seed: int, tmp_path: Path) -> None:
    wrong, refused, static = _check(random.Random(seed), tmp_path, 100, draw)
    assert refused >= 5 and static >= 5, (refused, static)
    assert wrong == [], "\n".join(wrong)


def _router(folder: Path) -> Path:
    """A mixture-of-experts router as optimum-intel exports one (Qwen-MoE's, in small): the tokens' router logits, their
    Softmax, the top 2 of 4 experts by TopK-11, and their weights normalised by a ReduceSum; the experts picked are
    one-hot counted through a ScatterElementsUpdate, and the step's tokens rolled and summed as a running total."""
    hidden, experts = 16, 4
    x = o11.parameter(ov.PartialShape([-1, -1, hidden]), np.float32, name="hidden_states")
    router = np.linspace(-1, 1, hidden * experts, dtype=np.float32).reshape(hidden, experts)
    logits = o11.matmul(x, o11.constant(router), False, False)
    probs = o11.softmax(logits, -1)
    top = o11.topk(probs, o11.constant(np.int64(2)), -1, "max", "value", "i64", stable=True)
    total = o11.reduce_sum(top.output(0), o11.constant(np.array([-1], np.int64)), True)
    total.set_friendly_name("weights_sum")
    weights = o11.divide(top.output(0), total)
    counts = o11.scatter_elements_update(o11.multiply(probs, o11.constant(np.float32(0))), top.output(1),
                                         o11.broadcast(o11.constant(np.float32(1)), o11.shape_of(top.output(1))),
                                         o11.constant(np.int64(-1)))  # fmt: skip
    rolled = o11.cumsum(
        o11.roll(counts, o11.constant(np.int64(1)), o11.constant(np.int64(1))), o11.constant(np.int64(1))
    )
    load = o11.reduce_mean(rolled, o11.constant(np.array([1], np.int64)), False)
    load.set_friendly_name("expert_load")
    model = ov.Model([o1.result(weights), o1.result(load)], [x], "router")
    xml = folder / "router.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


def _native_under_reshape(xml: Path, capsys: pytest.CaptureFixture[str], names: set[str]) -> dict[str, Any]:
    """``check --reshape hidden_states=[2,5,16]`` of ``xml``: the reductions ``names``, each checked ok on the input
    shape ovreduce infers natively, OpenVINO's, and no note; ``inspect --all`` leaves no port unresolved. The input
    shapes by reduction."""
    model = ov.Core().read_model(xml)
    model.reshape({"hidden_states": ov.PartialShape([2, 5, 16])})
    fed = {node.get_friendly_name(): to_shape(node.get_input_partial_shape(0)) for node in model.get_ordered_ops()
           if node.get_type_name().startswith("Reduce")}  # fmt: skip
    assert main(["check", str(xml), "--format", "json", "--reshape", "hidden_states=[2,5,16]"]) == 0
    (checked,) = json.loads(capsys.readouterr().out)["models"]
    got = {r["layer_name"]: r for r in checked["reductions"]}
    assert set(got) == names and checked["notes"] == [], (got, checked["notes"])
    for name, reduction in got.items():
        assert (reduction["input_shape_engine"], reduction["status"]) == ("native", "ok"), reduction
        assert PartialShape.from_json(reduction["input_shape"]) == fed[name], (name, reduction)
    assert main(["inspect", str(xml), "--all", "--format", "json", "--reshape", "hidden_states=[2,5,16]"]) == 0
    doc = json.loads(capsys.readouterr().out)
    unresolved = [(lay["layer_name"], out["shape_reason"]) for lay in doc["layers"] for out in lay["outputs"]
                  if not out["shape_resolved"]]  # fmt: skip
    assert unresolved == [], unresolved
    return {name: reduction["input_shape"] for name, reduction in got.items()}


def test_a_reduction_after_a_topk_is_resolved_natively_under_a_reshape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --reshape`` of a mixture-of-experts router: the ReduceSum that normalises the TopK weights and the
    ReduceMean after a ScatterElementsUpdate, a Roll and a CumSum are checked on the shapes ovreduce infers (no
    OpenVINO shape engine needed), each OpenVINO's; ``inspect --all`` leaves no port unresolved."""
    xml = _router(tmp_path)
    got = _native_under_reshape(xml, capsys, {"weights_sum", "expert_load"})
    assert got["weights_sum"] == [2, 5, 2]


REFUSED: list[tuple[list[Input], tuple[str, str], dict[str, str]]] = [
    ([("p", [2, 3], "i64"), ("c", [4], [], "i64"), ("c", [1], [], "f32"), ("c", [0], [], "f32")], ("OneHot", "opset16"),
     {"axis": "-1", "negative_indices_mode": "wrap"}),
    ([("p", [2, 3], "i64"), ("c", [4], [1], "i64"), ("c", [1], [], "f32"), ("c", [0], [], "f32")], ("OneHot", "opset1"),
     {"axis": "-1"}),
    ([("p", [2, 3], "f32"), ("c", [4], [], "i64"), ("c", [1], [], "f32"), ("c", [0], [], "i32")], ("OneHot", "opset1"),
     {"axis": "-1"}),
    ([("p", [2, 3], "i64"), ("c", [-2], [], "i64"), ("c", [1], [], "f32"), ("c", [0], [], "f32")], ("OneHot", "opset1"),
     {"axis": "0"}),
    ([("p", [2, 3], "i64"), ("c", [4], [], "i64"), ("c", [1], [], "f32"), ("c", [0], [], "f32")], ("OneHot", "opset1"),
     {"axis": "-4"}),
    ([("p", [2, 3], "f32")], ("NonZero", "opset3"), {"output_type": "f32"}),
    ([("p", [2, 3], "f32")], ("NonZero", "opset3"), {"output_type": "int"}),
    ([("p", [2, 3], "f32"), ("p", [2, 3], "f32")], ("GatherND", "opset8"), {"batch_dims": "0"}),
    ([("p", [2, 3], "f32"), ("p", [2, 3], "i64")], ("GatherND", "opset8"), {"batch_dims": "0"}),
    ([("p", [2, 3], "f32"), ("p", [3, 1], "i64")], ("GatherND", "opset5"), {"batch_dims": "1"}),
    ([("p", [2, 3], "f32"), ("p", [2, 3, 1], "i64")], ("GatherND", "opset8"), {"batch_dims": "2"}),
]  # fmt: skip


@pytest.mark.parametrize(("inputs", "op", "data"), REFUSED, ids=[f"{c[1][0]}-{i}" for i, c in enumerate(REFUSED)])
def test_a_one_hot_non_zero_or_gather_nd_refusal_is_in_openvinos_words(
    inputs: list[Input], op: tuple[str, str], data: dict[str, str], tmp_path: Path
) -> None:
    """What OpenVINO's reader refuses, ovreduce refuses in its words, naming the layer."""
    xml = _write(tmp_path, inputs, op, data, 1)
    with pytest.raises(RuntimeError) as refused:
        ov.Core().read_model(xml)
    words = str(refused.value).strip().splitlines()[-1]
    _, states = _both(ov.Core(), xml, None)
    assert states[0].shape is None and states[0].reason == f"{op[0]} (op): {words}", (states[0].reason, words)


def _expert_router(folder: Path, depth_from_shape: bool) -> Path:
    """A mixture-of-experts router's expert mask, as optimum-intel exports Mixtral's, Qwen2-MoE's or GraniteMoE's (in
    small): the tokens' router logits, their Softmax, the top 2 of 4 experts by TopK, a OneHot of the experts picked
    (its depth a constant, or the experts' count a ShapeOf of the logits gives) and a ReduceSum counting each expert's
    tokens; the tokens routed to an expert found by a NonZero of those counts and their weights picked by a GatherND,
    averaged by a ReduceMean."""
    import openvino.opset16 as o16

    hidden, experts = 16, 4
    x = o16.parameter(ov.PartialShape([-1, -1, hidden]), np.float32, name="hidden_states")
    router = np.linspace(-1, 1, hidden * experts, dtype=np.float32).reshape(hidden, experts)
    logits = o16.matmul(x, o16.constant(router), False, False)
    probs = o16.softmax(logits, -1)
    top = o16.topk(probs, o16.constant(np.int64(2)), -1, "max", "value", "i64")
    depth = (o16.gather(o16.shape_of(logits), o16.constant(np.int64(-1)), o16.constant(np.int64(0)))
             if depth_from_shape else o16.constant(np.int64(experts)))  # fmt: skip
    mask = o16.one_hot(top.output(1), depth, o16.constant(np.float32(1)), o16.constant(np.float32(0)), -1)
    counts = o16.reduce_sum(mask, o16.constant(np.array([2], np.int64)), False)
    counts.set_friendly_name("tokens_per_expert")
    routed = o16.transpose(o16.non_zero(counts, "i64"), o16.constant(np.array([1, 0], np.int64)))
    picked = o16.gather_nd(probs, routed, 0)
    load = o16.reduce_mean(picked, o16.constant(np.array([0], np.int64)), True)
    load.set_friendly_name("routed_weight")
    model = ov.Model([o1.result(counts), o1.result(load)], [x], "router")
    xml = folder / "router.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


@pytest.mark.parametrize("depth_from_shape", [False, True], ids=["depth_const", "depth_shape_of"])
def test_a_reduction_after_a_one_hot_of_the_experts_is_resolved_natively_under_a_reshape(
    depth_from_shape: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --reshape`` of a mixture-of-experts router's expert mask: the ReduceSum over the OneHot of the experts
    TopK picks, and the ReduceMean after a NonZero and a GatherND, are checked on the shapes ovreduce infers (no
    OpenVINO shape engine needed), each OpenVINO's; ``inspect --all`` leaves no port unresolved."""
    xml = _expert_router(tmp_path, depth_from_shape)
    got = _native_under_reshape(xml, capsys, {"tokens_per_expert", "routed_weight"})
    assert got["tokens_per_expert"] == [2, 5, 2, 4]


def _shape_scatter(rng: random.Random, folder: Path) -> tuple[Path, dict[str, Shape]]:
    """A shape put together at run time with one or two dims replaced by a ScatterUpdate, ScatterElementsUpdate or
    ScatterNDUpdate (the data a ShapeOf or a constant, an update a constant or a dim ShapeOf gives), the target of a
    Broadcast ``op``."""
    import openvino.opset15 as o15

    rank = rng.randint(1, 3)
    shape: Shape = [rng.choice([1, 2, 3, "?", "2..5"]) for _ in range(rank)]
    other: Shape = [rng.choice([2, 3, "?", "1..4"]), 2]
    itype = np.int64  # (an i32 of an unbounded dim is -1 to OpenVINO, which refuses the Broadcast as it is made)
    p0 = o15.parameter(ov.PartialShape(_text(shape)), np.float32, name="p0")
    p1 = o15.parameter(ov.PartialShape(_text(other)), np.float32, name="p1")
    data = (o15.shape_of(p0, "i64" if itype is np.int64 else "i32") if rng.random() < 0.8
            else o15.constant(np.array([rng.randint(1, 4) for _ in range(rank)], itype)))  # fmt: skip
    count = rng.randint(1, rank)
    at = rng.sample(range(rank), count)
    dim = o15.convert(o15.gather(o15.shape_of(p1), o15.constant(np.array([0], np.int64)), o15.constant(np.int64(0))),
                      "i64" if itype is np.int64 else "i32")  # fmt: skip
    parts = [o15.constant(np.array([rng.randint(1, 5)], itype)) if rng.random() < 0.5 else dim for _ in range(count)]
    updates = parts[0] if count == 1 else o15.concat(parts, 0)
    kind = rng.random()
    if kind < 0.35:
        target = o15.scatter_update(data, o15.constant(np.array(at, np.int64)), updates, o15.constant(np.int64(0)))
    elif kind < 0.65:
        backwards = [a - rank if rng.random() < 0.3 else a for a in at]  # (an index from the end)
        axis = o15.constant(np.int64(rng.choice([0, -1])))
        target = o15.scatter_elements_update(data, o15.constant(np.array(backwards, np.int64)), updates, axis)
    else:
        indices = o15.constant(np.array([[a] for a in at], np.int64))
        target = o15.scatter_nd_update(data, indices, updates, "none")
    op = o15.broadcast(o15.constant(np.float32(1)), target)
    op.set_friendly_name("op")
    xml = folder / "m.xml"
    ov.save_model(ov.Model([o1.result(op), o1.result(p0), o1.result(p1)], [p0, p1], "m"), str(xml))
    return xml, {"p0": shape, "p1": other}


@pytest.mark.parametrize("seed", range(2))
def test_a_shape_a_scatter_puts_together_is_known_as_openvino_knows_it(seed: int, tmp_path: Path) -> None:
    """The dims of a Broadcast to a shape a ScatterUpdate, ScatterElementsUpdate or ScatterNDUpdate makes of a
    ShapeOf: constant, or each an interval, as OpenVINO's bounds know them, read as it is and after a random reshape."""
    rng = random.Random(seed)
    core = ov.Core()
    wrong, static = [], 0
    for case in range(60):
        folder = tmp_path / str(case)
        folder.mkdir()
        xml, params = _shape_scatter(rng, folder)
        for reshape in (None, {name: _vary(rng, s) for name, s in params.items()}):
            if reshape is not None and any(s is None or len(s) != len(params[n] or ()) for n, s in reshape.items()):
                continue  # (a rank the indices are out of range of: OpenVINO's Broadcast asks for the value and fails)
            expected, states = _both(core, xml, reshape)
            static += expected is not None and expected[0][0].is_static
            if not _same(expected, states):
                wrong.append(f"{case} {params} reshaped to {reshape}: ovreduce {_ovreduce(states)} "
                             f"{[s.reason for s in states]}, OpenVINO {expected}")  # fmt: skip
    assert static >= 10, static
    assert wrong == [], "\n".join(wrong)
