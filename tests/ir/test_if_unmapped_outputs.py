"""An If whose condition is not constant, with an output one of its port maps leaves out, held to ``read_model``.

OpenVINO builds such an If with as many outputs as its then-branch maps (``If::clone_with_new_inputs``), and its
validation wants each of them in the else-branch's map too. An output port past those it built is refused in an IR v11
only (the reader asks each port for its runtime attributes); an IR v10 reads, the port of no known type or shape (and
OpenVINO cannot compile it). ovreduce refused every such model ("not associated with results in then_body"), where
OpenVINO reads an IR v10 one, and one whose else-branch maps an output more than its then-branch.
"""

from __future__ import annotations

import re
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import IRStructureError, load_ir
from ovreduce._openvino import partial_shape
from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine

from .test_port_map_negative_ids import _extra_if_output, _if


def _unmap(path: Path, role: str) -> None:
    """Leave the <output> of ``role``'s port map out."""
    text = path.read_text()
    head, rest = text.split(f"<{role}_port_map>", 1)
    block, tail = rest.split(f"</{role}_port_map>", 1)
    block = re.sub(r"\s*<output [^>]*/>", "", block)
    path.write_text(f"{head}<{role}_port_map>{block}</{role}_port_map>{tail}")


def _as_v10(path: Path) -> None:
    path.write_text(path.read_text().replace('<net name="if" version="11">', '<net name="if" version="10">', 1))


def _openvino(path: Path) -> tuple[str | None, object]:
    """OpenVINO's refusal of the model (None where it reads it), and its If node."""
    try:
        model = ov.Core().read_model(str(path))
    except RuntimeError as exc:
        return str(exc), None
    return None, next(n for n in model.get_ordered_ops() if n.get_type_name() == "If")


@pytest.mark.parametrize("version", ["10", "11"])
@pytest.mark.parametrize("unmapped", [("then",), ("else",), ("then", "else")], ids="-".join)
def test_an_unmapped_output_is_read_where_openvino_reads_it(tmp_path: Path, version: str, unmapped: tuple[str]) -> None:
    path = _if(tmp_path, None)
    for role in unmapped:
        _unmap(path, role)
    if version == "10":
        _as_v10(path)
    refused, node = _openvino(path)
    model = load_ir(path)
    try:
        if refused is not None:
            with pytest.raises(IRStructureError, match="OpenVINO refuses the model") as info:
                ShapeEngine(model)
            said = str(info.value)
            if "else_body" in refused:
                assert "not associated with results in else_body" in said
            else:  # the port's runtime attributes, asked of an If built without it
                assert version == "11" and "so that OpenVINO builds it with 0" in said
            return
        [layer] = [layer for layer in model.layers if layer.type == "If"]
        got = ShapeEngine(model).state((layer.id, layer.outputs[0].id))
        assert got.shape == partial_shape(node.get_output_partial_shape(0))  # type: ignore[attr-defined]
        assert check_model(model, engine="openvino").ok
    finally:
        model.close()


def test_an_unmapped_then_output_of_an_ir_v10_is_read_and_cannot_be_compiled(tmp_path: Path) -> None:
    """The case as it was met: OpenVINO reads the IR v10 (its CPU plugin cannot compile it), ovreduce refused it."""
    path = _if(tmp_path, None)
    _unmap(path, "then")
    _as_v10(path)
    model = ov.Core().read_model(str(path))
    with pytest.raises(RuntimeError, match="out of range"):
        ov.Core().compile_model(model, "CPU")
    checked = check_model(load_ir(path))
    assert checked.ok, checked.findings


def test_an_output_the_else_branch_maps_past_the_then_branchs_is_read(tmp_path: Path) -> None:
    """The else-branch maps a second output, past the If's one port: OpenVINO builds the If with the then-branch's one
    output and reads the model; ovreduce refused it ("not associated with results in then_body")."""
    path = _if(tmp_path, None)
    _extra_if_output(path, ("else",), "9")
    refused, node = _openvino(path)
    assert refused is None
    model = load_ir(path)
    try:
        [layer] = [layer for layer in model.layers if layer.type == "If"]
        got = ShapeEngine(model).state((layer.id, layer.outputs[0].id)).shape
        assert got == partial_shape(node.get_output_partial_shape(0))  # type: ignore[attr-defined]
        assert check_model(model, engine="openvino").ok
    finally:
        model.close()
