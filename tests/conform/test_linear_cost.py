"""conform's cost grows linearly with the model: counted with :class:`ovreduce.conform.Work`, never timed.

A 20,000-node model once took 24 GB in conform. Two shapes of model, at 200 and 800 reductions, must give
counts that are exact linear functions of the node count:

* a chain ``t = t - ReduceMean(t)``: every tensor is read by one node;
* a fan: every ReduceMean reads the one input ``x`` and is itself a graph output -- the shape that made
  marking quadratic, as OpenVINO's ``Model.add_outputs`` searches all Results for each port that already
  feeds one (``result_scans``), and that conform now marks once (``x``) or not at all (the graph outputs).

OpenVINO's own compile time is not linear in a chain's length (about 1.6 s, 5 s and 22 s for 1,000, 2,000
and 4,000 links with no extra outputs on two cores); that is OpenVINO's, not conform's, and not asserted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.conform import Work, conform_model

from . import onnx_models

WIDTH = 8


def _finish(nodes: list[onnx.NodeProto], outputs: list[str]) -> bytes:
    graph = helper.make_graph(
        nodes, "cost", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.array([-1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = onnx_models.IR_VERSION
    return bytes(model.SerializeToString())


def chain(n: int) -> bytes:
    """``t{i} = t{i-1} - ReduceMean(t{i-1}, -1)``, ``t{-1} = x``: n reductions, each tensor read once (a sum would
    double the values at each link, past f32's range, where OpenVINO's CPU overflows a mean's f32 sum)."""
    nodes, t = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("ReduceMean", [t, "axes"], [f"r{i}"], name=f"rm{i}"))
        nodes.append(helper.make_node("Sub", [t, f"r{i}"], [f"t{i}"], name=f"sub{i}"))
        t = f"t{i}"
    return _finish(nodes, [t])


def fan(n: int) -> bytes:
    """n ReduceMean nodes all reading ``x``, each output a graph output."""
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], [f"r{i}"], name=f"rm{i}") for i in range(n)]
    return _finish(nodes, [f"r{i}" for i in range(n)])


@functools.cache
def _work(build: Callable[[int], bytes], n: int) -> Work:
    work = Work()
    doc = conform_model(build(n), work=work)
    assert doc.ok, doc.to_json()
    assert len(doc.nodes) == work.nodes
    return work


@pytest.mark.parametrize("n", [200, 800])
def test_a_chain_costs_a_constant_per_node(n: int) -> None:
    work = _work(chain, n)
    assert work.nodes == n
    assert work.lookups == 3 * n  # data, axes, output
    assert work.marks == 2 * n  # x, t0..t{n-2} and r0..r{n-1}: each once
    assert work.reused == 0
    assert work.initializers_read == 1  # axes, converted once
    assert work.result_scans == 0
    assert n <= work.indexed <= 4 * n + 8  # the name index holds a few names per link, built once


@pytest.mark.parametrize("n", [200, 800])
def test_a_fan_marks_its_shared_input_once_and_no_graph_output(n: int) -> None:
    work = _work(fan, n)
    assert work.nodes == n
    assert work.lookups == 3 * n
    assert work.marks == 1  # x; every ReduceMean output is read from the model's own outputs
    assert work.reused == 2 * n - 1
    assert work.initializers_read == 1
    assert work.result_scans == 0


def test_counts_grow_linearly_from_200_to_800_nodes() -> None:
    for build in (chain, fan):
        small, big = _work(build, 200), _work(build, 800)
        for count in ("nodes", "lookups", "marks", "reused", "initializers_read", "result_scans", "indexed"):
            a, b = getattr(small, count), getattr(big, count)
            assert b <= 4 * a + 8, (build.__name__, count, a, b)  # 4x the nodes: at most 4x the work


def test_result_scans_counts_what_marking_an_output_would_cost() -> None:
    """The counter itself can fail: marking the fan's graph outputs again would make OpenVINO search every
    Result for each of them, n * (n + 1) searches in all -- the quadratic cost conform avoids."""
    import openvino as ov

    from ovreduce.conform import _result_scans

    model = ov.Core().read_model(fan(50), ov.Tensor(np.empty(0, np.uint8)))
    producers = [result.get_node().input_value(0) for result in model.outputs]
    assert _result_scans(producers, len(model.outputs)) == 50 * 50
    assert _result_scans([model.inputs[0]] * 3, len(model.outputs)) == 2 * (50 + 1)
    assert _result_scans([model.inputs[0]], len(model.outputs)) == 0
