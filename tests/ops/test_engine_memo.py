"""The shape engine's memo (:class:`ovreduce.infer._Memo`) changes no result, and does save work.

Differential: every IR under ``ir_samples/``, random op chains (``gen_chains``) repeated so that the memo
hits, models with bodies (``tests/ir/subgraphs``) and hand-written repeated blocks, each walked with and
without the memo (``memoize=False``), with and without a reshape: every port state, reduction analysis, body
note and Result value must be equal. Work: on a model of repeated blocks, counting rules run once per
distinct reading (not once per block).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.errors import ShapeInferenceError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.ir.model import IRModel
from ovreduce.ops.base import LayerContext, Op, PortState, ValueInfo
from ovreduce.ops.common import Const0
from ovreduce.ops.elementwise import Binary
from ovreduce.ops.reduce import ReduceMean_1, ReductionInfo
from ovreduce.ops.registry import registered
from ovreduce.shapes import PartialShape
from tests.ir import subgraphs
from tests.ir.irxml import edge, layer, net, parameter, port, result

from .gen_chains import build_chain, new_shape

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "ir_samples").rglob("*.xml"))


# -- what an engine says ------------------------------------------------------------------------------------
def snapshot(engine: ShapeEngine) -> dict[str, Any]:
    """Everything the engine answers: each output port's state, each reduction, the bodies' notes, each
    Result's value, and the same for every body (by ids path)."""
    model = engine.model
    states = {(lay.id, p.id): engine.state((lay.id, p.id)) for lay in model.layers for p in lay.outputs}
    values: dict[str, ValueInfo | str] = {}
    for lay in model.layers:
        if lay.type == "Result":
            try:
                values[lay.id] = engine.result_value(lay.id)
            except Exception as exc:  # compared as text: the other walk must fail alike
                values[lay.id] = f"{type(exc).__name__}: {exc}"
    reductions = [(info.layer.id, info.layer is model.layer(info.layer.id), info) for info in engine.reductions]
    bodies = {path: snapshot(child) for path, child in engine.body_engines() if path.count("/") == 1}
    return {"states": states, "reductions": reductions, "notes": dict(engine.body_notes), "values": values,
            "bodies": bodies}  # fmt: skip


def assert_same(model: IRModel, reshape: Mapping[str, PartialShape] | None = None) -> ShapeEngine:
    memoized = ShapeEngine(model, reshape, memoize=True)
    plain = ShapeEngine(model, reshape, memoize=False)
    got, expected = snapshot(memoized), snapshot(plain)
    if got != expected:  # name the first difference rather than dumping both
        for (k, a), (_, b) in zip(sorted(got["states"].items()), sorted(expected["states"].items()), strict=True):
            assert a == b, f"port {k}: memoized {a}, plain {b}"
    assert got == expected
    return memoized


def _dynamic_reshape(model: IRModel) -> dict[str, PartialShape]:
    """Every Parameter reshaped to its rank with dynamic dims (stale declarations, unresolved rules)."""
    out = {}
    for lay in model.layers:
        if lay.type == "Parameter" and lay.shape is not None and lay.shape.rank is not None:
            out[lay.name] = PartialShape.dynamic(lay.shape.rank)
    return out


# -- the samples ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(ROOT / "ir_samples")) for p in SAMPLES])
def test_samples_are_the_same_with_the_memo(path: Path) -> None:
    model = load_ir(path)
    try:
        assert_same(model)
        assert_same(model, _dynamic_reshape(model))
    finally:
        model.close()


def test_there_are_samples() -> None:
    assert len(SAMPLES) >= 10


# -- random chains, each built several times over --------------------------------------------------------------
def _repeated_chains(seed: int, copies: int) -> tuple[ov.Model, list[tuple[Any, list[int]]]]:
    """``copies`` identical chains of seed ``seed`` and one chain of another seed, side by side."""
    params, results, chains = [], [], []
    for i in range(copies + 1):
        rng = random.Random(seed if i < copies else seed + 10_000)
        chain, out = build_chain(rng, f"x{i}")
        params.append(chain.param)
        results.append(ov.opset13.result(out))
        chains.append((chain, [int(d) for d in chain.param.get_partial_shape().to_shape()]))
    return ov.Model(results, params, f"repeated{seed}"), chains


@pytest.mark.parametrize("seed", range(24))
def test_repeated_chains_are_the_same_with_the_memo(seed: int, tmp_path: Path) -> None:
    built, chains = _repeated_chains(seed, 3)
    xml = tmp_path / "chains.xml"
    ov.save_model(built, str(xml), compress_to_fp16=False)
    model = load_ir(xml)
    try:
        assert_same(model)
        rng = random.Random(seed)
        # copies 0 and 1 get one new shape, copy 2 and the other chain their own: hits and misses alike
        shapes = [new_shape(rng, shape, chain) for chain, shape in chains]
        shapes[1] = shapes[0]
        reshape = {chain.param.get_friendly_name(): PartialShape.parse(text)
                   for (chain, _), text in zip(chains, shapes, strict=True)}  # fmt: skip
        assert_same(model, reshape)
        assert_same(model, _dynamic_reshape(model))
    finally:
        model.close()


# -- bodies ---------------------------------------------------------------------------------------------------
BODY_MODELS = {
    "if": subgraphs.if_model,
    "loop": subgraphs.loop_model,
    "ti": subgraphs.ti_model,
    "nested": subgraphs.nested_model,
    **{f"random{seed}": (lambda seed=seed: subgraphs.RandomModel(seed).model()) for seed in range(12)},
}


@pytest.mark.parametrize("name", list(BODY_MODELS))
def test_bodies_are_the_same_with_the_memo(name: str, tmp_path: Path) -> None:
    model = load_ir(subgraphs.save(BODY_MODELS[name](), tmp_path, name))
    try:
        assert_same(model)
        assert_same(model, _dynamic_reshape(model))
    finally:
        model.close()


# -- hand-written repeated blocks -----------------------------------------------------------------------------
DIMS = (2, 3, 4)
OFFSETS = {"one": 0, "target": 8, "axes": 32, "other_target": 40}  # where _BIN holds each Const's bytes
_BIN = (
    struct.pack("<f", 1) + b"\0" * 4 + struct.pack("<3q", 2, 3, 4) + struct.pack("<q", 1) + struct.pack("<3q", 4, 3, 2)
)


def _const(lid: int, name: str, etype: str, dims: Sequence[int], bytes_at: str) -> str:
    size = {"f32": 4, "i64": 8}[etype] * dims[0]
    shape = ",".join(map(str, dims))
    return layer(lid, name, "Const", data={"element_type": etype, "shape": shape, "offset": str(OFFSETS[bytes_at]),
                                          "size": str(size)},
                 outputs=[port(0, dims, "FP32" if etype == "f32" else "I64")])  # fmt: skip


def blocks_xml(count: int) -> str:
    """Parameter x [2,3,4], then ``count`` blocks of y = ReLU(x + 1); z = Reshape(y * ReduceMean(y, [1], keep),
    [2,3,4]): every block reads what the one before read. Block i's layers have ids 8i+1 ... 8i+8."""
    layers, edges = [parameter(0, "x", "2,3,4", dims=DIMS)], []
    prev = (0, 0)
    red = (2, 1, 4)
    for i in range(count):
        one, add, relu, axes, mean, mul, target, reshape = range(8 * i + 1, 8 * i + 9)
        layers += [
            _const(one, f"one{i}", "f32", (1,), "one"),
            layer(add, f"add{i}", "Add", inputs=[port(0, DIMS), port(1, (1,))], outputs=[port(2, DIMS)]),
            layer(relu, f"relu{i}", "ReLU", inputs=[port(0, DIMS)], outputs=[port(1, DIMS)]),
            _const(axes, f"axes{i}", "i64", (1,), "axes"),
            layer(mean, f"mean{i}", "ReduceMean", data={"keep_dims": "true"},
                  inputs=[port(0, DIMS), port(1, (1,), "I64")], outputs=[port(2, red)]),
            layer(mul, f"mul{i}", "Multiply", inputs=[port(0, DIMS), port(1, red)], outputs=[port(2, DIMS)]),
            _const(target, f"target{i}", "i64", (3,), "target"),
            layer(reshape, f"reshape{i}", "Reshape", data={"special_zero": "false"},
                  inputs=[port(0, DIMS), port(1, (3,), "I64")], outputs=[port(2, DIMS)]),
        ]  # fmt: skip
        edges += [edge(*prev, add, 0), edge(one, 0, add, 1), edge(add, 2, relu, 0), edge(relu, 1, mean, 0),
                  edge(axes, 0, mean, 1), edge(relu, 1, mul, 0), edge(mean, 2, mul, 1), edge(mul, 2, reshape, 0),
                  edge(target, 0, reshape, 1)]  # fmt: skip
        prev = (reshape, 2)
    layers.append(result(8 * count + 1, "out", DIMS))
    edges.append(edge(*prev, 8 * count + 1, 0))
    return net(layers, edges)


def fan_xml(targets: Sequence[str]) -> str:
    """Parameter x [2,3,4] feeding Reshape i (id 3i+2, named reshape<i>) to the Const at ``targets[i]``
    ([2,3,4] or, for "other_target", [4,3,2]): the same op, attributes and input, other values read."""
    layers, edges = [parameter(0, "x", "2,3,4", dims=DIMS)], []
    for i, bytes_at in enumerate(targets):
        target, reshape, out = 3 * i + 1, 3 * i + 2, 3 * i + 3
        dims = DIMS if bytes_at == "target" else (4, 3, 2)
        layers += [
            _const(target, f"target{i}", "i64", (3,), bytes_at),
            layer(reshape, f"reshape{i}", "Reshape", data={"special_zero": "false"},
                  inputs=[port(0, DIMS), port(1, (3,), "I64")], outputs=[port(2, dims)]),
            result(out, f"out{i}", dims),
        ]  # fmt: skip
        edges += [edge(0, 0, reshape, 0), edge(target, 0, reshape, 1), edge(reshape, 2, out, 0)]
    return net(layers, edges)


def _load(tmp_path: Path, xml: str) -> IRModel:
    (tmp_path / "m.xml").write_text(xml)
    (tmp_path / "m.bin").write_bytes(_BIN)
    return load_ir(tmp_path / "m.xml")


@pytest.fixture
def blocks(tmp_path: Path) -> Iterator[IRModel]:
    model = _load(tmp_path, blocks_xml(20))
    yield model
    model.close()


class _Counting:
    """Rules that count their runs, registered over the built-in ones for Add, ReduceMean and Const."""

    def __init__(self) -> None:
        self.runs = {"Add": 0, "ReduceMean": 0, "Const fold": 0}
        counter = self

        class Add(Binary):
            def infer(self, ctx: LayerContext) -> Sequence[PortState]:
                counter.runs["Add"] += 1
                return super().infer(ctx)

        class Mean(ReduceMean_1):
            def analyse(self, ctx: LayerContext) -> ReductionInfo:
                counter.runs["ReduceMean"] += 1
                return super().analyse(ctx)

        class Const(Const0):
            def fold(self, ctx: LayerContext) -> ValueInfo:
                counter.runs["Const fold"] += 1
                return super().fold(ctx)

        self.ops = (Add("Add", "opset1", range(1, 17)), Mean(), Const())


@pytest.mark.parametrize(("memoize", "expected"), [
    (True, {"Add": 2, "ReduceMean": 1, "Const fold": 2}),  # block 0's Add reads x's state, "parameter"
    (False, {"Add": 20, "ReduceMean": 20, "Const fold": 40}),
])  # fmt: skip
def test_repeated_blocks_run_each_rule_once(blocks: IRModel, memoize: bool, expected: dict[str, int]) -> None:
    counting = _Counting()
    with registered(*counting.ops):
        engine = ShapeEngine(blocks, memoize=memoize)
    assert counting.runs == expected
    assert engine.state(("160", "2")) == PortState(PartialShape.static(DIMS), ELEMENT_TYPES["f32"], "inferred")
    assert [info.output.shape for info in engine.reductions] == [PartialShape.static((2, 1, 4))] * 20
    assert all(info.layer is blocks.layer(info.layer.id) for info in engine.reductions)


def test_repeated_blocks_are_the_same_with_the_memo(blocks: IRModel) -> None:
    assert_same(blocks)
    assert_same(blocks, {"x": PartialShape.parse("[2,?,4]")})
    assert_same(blocks, {"x": PartialShape.parse("[5,5,5]")})  # the first Reshape refuses, naming itself


def test_layers_reading_other_values_are_not_confused(tmp_path: Path) -> None:
    """Same op, attributes and input state, another target value: the memo keeps both, each for its own."""
    targets = ["target", "target", "other_target"] * 3
    model = _load(tmp_path, fan_xml(targets))
    try:
        engine = assert_same(model)
        shapes = [engine.state((str(3 * i + 2), "2")).shape for i in range(len(targets))]
        assert shapes == [PartialShape.static(DIMS if t == "target" else (4, 3, 2)) for t in targets]
    finally:
        model.close()


def test_a_reason_names_its_own_layer(tmp_path: Path) -> None:
    """A refusal names the layer: equal layers refusing alike each keep their own reason."""
    model = _load(tmp_path, fan_xml(["target"] * 4))
    try:
        engine = assert_same(model, {"x": PartialShape.parse("[5,5,5]")})
        for i in range(4):
            state = engine.state((str(3 * i + 2), "2"))
            assert state.shape is None and state.reason.startswith(f"Reshape (reshape{i}): "), state
    finally:
        model.close()


def test_layers_sharing_one_data_mapping(blocks: IRModel) -> None:
    """The parser may give layers with equal <data> one mapping: the memo keys it by identity, then content."""
    shared: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}
    layers = tuple(
        lay._replace(data=shared.setdefault(tuple(lay.data.items()), MappingProxyType(dict(lay.data))))
        for lay in blocks.layers
    )
    model = IRModel(blocks.name, blocks.ir_version, layers, blocks.edges, blocks.source, blocks.weights)
    assert len({id(lay.data) for lay in model.layers}) < len(model.layers) // 2
    assert_same(model)
    assert_same(model, {"x": PartialShape.parse("[2,?,4]")})
    counting = _Counting()
    with registered(*counting.ops):
        ShapeEngine(model)
    assert counting.runs == {"Add": 2, "ReduceMean": 1, "Const fold": 2}


class _Boom(Op):
    """A toy op passing its input's value on, except that layer ``bad`` fails to fold."""

    type = "Boom"

    def fold(self, ctx: LayerContext) -> ValueInfo:
        if ctx.layer.name == "bad":
            raise ShapeInferenceError("boom")
        return ctx.value(0)


def test_a_value_that_fails_to_fold_fails_in_the_rule(tmp_path: Path) -> None:
    """Reshape 1 reads what Reshape 0 read, up to a value whose fold fails: its rule says so, as without the memo."""
    layers, edges = [parameter(0, "x", "2,3,4", dims=DIMS)], []
    for i, name in enumerate(("good", "bad")):
        target, boom, reshape, out = 4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4
        layers += [
            _const(target, f"target{i}", "i64", (3,), "target"),
            layer(boom, name, "Boom", inputs=[port(0, (3,), "I64")], outputs=[port(1, (3,), "I64")]),
            layer(reshape, f"reshape{i}", "Reshape", data={"special_zero": "false"},
                  inputs=[port(0, DIMS), port(1, (3,), "I64")], outputs=[port(2, DIMS)]),
            result(out, f"out{i}", DIMS),
        ]  # fmt: skip
        edges += [edge(target, 0, boom, 0), edge(0, 0, reshape, 0), edge(boom, 1, reshape, 1), edge(reshape, 2, out, 0)]
    with registered(_Boom()):  # (an op of no opset: the reader refuses it unless it is registered)
        model = _load(tmp_path, net(layers, edges))
    try:
        with registered(_Boom()):
            engine = assert_same(model)
        assert engine.state(("3", "2")).shape == PartialShape.static(DIMS)
        assert engine.state(("7", "2")) == PortState(
            None, ELEMENT_TYPES["f32"], "unresolved", "Reshape (reshape1): boom"
        )
    finally:
        model.close()


def test_layers_of_an_input_count_their_op_never_takes(tmp_path: Path) -> None:
    """ReLUs without inputs (OpenVINO refuses them) are refused alike, each naming itself, whatever dims they
    declare: equal attributes, other dims, other names."""
    layers = [parameter(0, "x", "2,3,4", dims=DIMS)]
    for i, dims in enumerate(((1, 3), (2, 5), (), (1, 3))):
        layers.append(layer(i + 1, f"relu{i}", "ReLU", outputs=[port(0, dims)]))
    model = _load(tmp_path, net(layers))
    try:
        engine = assert_same(model)
        states = [engine.state((str(i + 1), "0")) for i in range(4)]
        assert [s.shape for s in states] == [None] * 4
        assert [s.reason for s in states] == [f"ReLU (relu{i}): ReLU takes 1 input; the layer has 0" for i in range(4)]
    finally:
        model.close()
