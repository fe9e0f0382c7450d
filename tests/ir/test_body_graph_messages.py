"""A fault of a sub-graph body's own graph (an edge to a layer or port it lacks, an input port no edge feeds, a layer id
twice, a cycle) is refused as OpenVINO refuses the file, and the message says which body holds it: a body's layer
ids are its own, and layer 3 of a Loop's body is not the model's layer 3."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

from ovreduce import IRStructureError, load_ir


def _loop_ir(tmp_path: Path) -> str:
    """A Loop summing the rows of x, whose body reduces each row ('bred'); the file as OpenVINO writes it."""
    x = ops.parameter([3, 4], np.float32, name="x")
    row = ops.parameter([1, 4], np.float32, name="bp")
    acc = ops.parameter([4], np.float32, name="acc")
    summed = ops.add(acc, ops.reduce_sum(row, ops.constant(np.array([0], np.int64)), False, name="bred"), name="nacc")
    body = ov.Model([ops.constant(True).output(0), summed.output(0)], [row, acc], "body")
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_friendly_name("rows")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(row, x.output(0), 0, 1, 1, -1, 0)
    loop.set_merged_input(acc, ops.constant(np.zeros(4, np.float32)).output(0), body.outputs[1])
    out = loop.get_iter_value(body.outputs[1], -1)
    path = tmp_path / "loop.xml"
    ov.save_model(ov.Model([out], [x], "m"), path, compress_to_fp16=False)
    return path.read_text()


def _in_body(xml: str, change: Callable[[str], str]) -> str:
    start, end = xml.index("<body>"), xml.index("</body>")
    changed = change(xml[start:end])
    assert changed != xml[start:end]
    return xml[:start] + changed + xml[end:]


def _bred(body: str) -> str:
    found = re.search(r'<layer id="(\d+)" name="bred"', body)
    assert found is not None
    return found[1]


CASES: dict[str, tuple[Callable[[str], str], str]] = {
    "an edge to a layer the body lacks": (
        lambda b: b.replace(f'to-layer="{_bred(b)}" to-port="0"', 'to-layer="999" to-port="0"'),
        r"edge \d+:\d+ -> 999:0 in the body of layer id=\d+ name='rows' \(Loop\) ends at layer id 999, which does not "
        r"exist",
    ),
    "an edge to a port the layer lacks": (
        lambda b: b.replace(f'to-layer="{_bred(b)}" to-port="0"', f'to-layer="{_bred(b)}" to-port="7"'),
        r"edge \d+:\d+ -> \d+:7 in the body of layer id=\d+ name='rows' \(Loop\): layer id=\d+ name='bred' "
        r"\(ReduceSum\) has no input port 7",
    ),
    "an input port no edge feeds": (
        lambda b: re.sub(rf'<edge from-layer="\d+" from-port="\d+" to-layer="{_bred(b)}" to-port="0"\s*/>', "", b),
        r"input port 0 of layer id=\d+ name='bred' \(ReduceSum\) in the body of layer id=\d+ name='rows' \(Loop\) "
        r"has no incoming edge",
    ),
    "a layer id twice": (
        lambda b: b.replace(f'<layer id="{_bred(b)}" name="bred"', '<layer id="0" name="bred"'),
        r"duplicate layer id 0 in the body of layer id=\d+ name='rows' \(Loop\)",
    ),
}


@pytest.mark.parametrize("label", list(CASES))
def test_a_body_graph_fault_names_the_body(tmp_path: Path, label: str) -> None:
    change, said = CASES[label]
    path = tmp_path / "m.xml"
    path.write_text(_in_body(_loop_ir(tmp_path), change))
    (tmp_path / "m.bin").write_bytes((tmp_path / "loop.bin").read_bytes())
    with pytest.raises(RuntimeError):
        ov.Core().read_model(path)  # OpenVINO refuses it too
    with pytest.raises(IRStructureError) as exc:
        load_ir(path)
    assert re.search(said, exc.value.message), exc.value.message
    assert exc.value.line is not None
