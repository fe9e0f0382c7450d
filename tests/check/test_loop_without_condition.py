"""A Loop whose port map names no execution condition: OpenVINO reads it without inferring the Loop (its outputs are
of the dynamic type and rank), so no declared precision contradicts OpenVINO's; the OpenVINO engine called the Loop's
FP32 output an ``openvino-type-mismatch`` (an error) against that dynamic type."""

from __future__ import annotations

import re
from pathlib import Path

import openvino as ov
import pytest

from ovreduce.check import check_model
from ovreduce.ir.parser import load_ir
from tests.ir import subgraphs

_CONDITION = re.compile(r'\s*<output external_port_id="-1" internal_layer_id="(\d+)" purpose="execution_condition" />')


def _loop(folder: Path, *, condition: bool, body_result: bool = True) -> Path:
    """``Loop_1`` (one output: the accumulator) with or without the execution_condition entry of its port map (and,
    without it, with or without the body Result that gave it)."""
    path = subgraphs.save(subgraphs.loop_model(last_only=True), folder, "loop")
    text = path.read_text()
    found = _CONDITION.search(text)
    assert found is not None
    if not condition:
        text = text.replace(found[0], "", 1)
        if not body_result:
            head, body = text.split("<body>", 1)
            result = re.search(rf'\s*<layer id="{found[1]}" name="[^"]*" type="Result".*?</layer>', body, re.S)
            assert result is not None
            edge = re.search(rf'\s*<edge from-layer="(\d+)" from-port="\d+" to-layer="{found[1]}" to-port="0" />', body)
            assert edge is not None
            const = re.search(rf'\s*<layer id="{edge[1]}" name="[^"]*" type="Const".*?</layer>', body, re.S)
            assert const is not None
            for part in (result[0], edge[0], const[0]):
                body = body.replace(part, "", 1)
            text = f"{head}<body>{body}"
    path.write_text(text)
    return path


def _openvino_loop(path: Path) -> ov.Node:
    return next(n for n in ov.Core().read_model(str(path)).get_ordered_ops() if n.get_type_name() == "Loop")


@pytest.mark.parametrize("body_result", [True, False], ids=["body-result-kept", "body-result-removed"])
def test_an_output_openvino_does_not_infer_is_no_type_mismatch(tmp_path: Path, body_result: bool) -> None:
    path = _loop(tmp_path, condition=False, body_result=body_result)
    node = _openvino_loop(path)
    assert node.get_output_element_type(0) == ov.Type.dynamic  # not inferred: OpenVINO reads the Loop as it is
    assert node.get_output_partial_shape(0).rank.is_dynamic
    model = load_ir(path)
    try:
        checked = check_model(model, engine="openvino")
    finally:
        model.close()
    assert checked.ok, checked.findings
    assert not [f for f in checked.findings if f.code.startswith("openvino-")], checked.findings


def test_a_precision_openvino_infers_otherwise_is_still_a_type_mismatch(tmp_path: Path) -> None:
    """The same Loop with its condition, its output declared FP16 where OpenVINO infers f32: a real mismatch."""
    path = _loop(tmp_path, condition=True)
    text = path.read_text()
    head, loop = text.split('type="Loop"', 1)
    before_body, rest = loop.split("<body>", 1)
    before_body = re.sub(r'(<output>\s*<port id="\d+") precision="FP32"', r'\1 precision="FP16"', before_body, count=1)
    path.write_text(f'{head}type="Loop"{before_body}<body>{rest}')
    assert _openvino_loop(path).get_output_element_type(0) == ov.Type.f32
    model = load_ir(path)
    try:
        checked = check_model(model, engine="openvino")
    finally:
        model.close()
    assert [f.code for f in checked.findings if f.layer_name == "Loop_1"] == ["openvino-type-mismatch"]
