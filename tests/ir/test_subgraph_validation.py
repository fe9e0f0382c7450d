"""What OpenVINO's validation of If, Loop and TensorIterator refuses of their bodies, held to ``read_model``.

* A TensorIterator among the layers its TensorIterator container's body Results are computed from ("No nested
  TensorIterator", ``tensor_iterator.cpp``); a Loop's body may hold one.
* An If whose condition is not constant and whose branches give an output different element types ("type of
  then_body output ... is not equal type of else_body output", ``if.cpp``); the dynamic type takes the other's.
* A Loop whose execution condition is constant false with a static scalar last-value output (``loop.cpp`` sets dim 0
  of each static last value to 0: "Accessing out-of-range dimension").

Each file is written by hand, as small as the rule allows, so the tests stay fast.
"""

from __future__ import annotations

import struct
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine


def _port(pid: int, dims: list[int], precision: str = "FP32") -> str:
    return f'<port id="{pid}" precision="{precision}">' + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>"


def _edges(edges: list[tuple[int, int, int, int]]) -> str:
    return "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>' for a, b, c, d in edges)


def _param(lid: int, name: str, dims: list[int], etype: str = "f32") -> str:
    shape = ",".join(map(str, dims))
    precision = {"f32": "FP32", "boolean": "BOOL", "dynamic": "UNSPECIFIED"}[etype]
    return (
        f'<layer id="{lid}" name="{name}" type="Parameter" version="opset1"><data shape="{shape}" '
        f'element_type="{etype}"/><output>{_port(0, dims, precision)}</output></layer>'
    )


def _const(lid: int, name: str, etype: str, dims: list[int], offset: int, size: int, precision: str) -> str:
    shape = ",".join(map(str, dims))
    return (
        f'<layer id="{lid}" name="{name}" type="Const" version="opset1"><data element_type="{etype}" '
        f'shape="{shape}" offset="{offset}" size="{size}"/><output>{_port(0, dims, precision)}</output></layer>'
    )


def _result(lid: int, name: str, dims: list[int]) -> str:
    return f'<layer id="{lid}" name="{name}" type="Result" version="opset1"><input>{_port(0, dims)}</input></layer>'


def _net(layers: str, edges: list[tuple[int, int, int, int]]) -> str:
    head = '<?xml version="1.0"?>\n<net name="m" version="11">'
    return f"{head}<layers>{layers}</layers><edges>{_edges(edges)}</edges></net>\n"


# 0: an i64 1 (axes), 8: two i32 or f32 (an else-branch's value), 16: a boolean true, 17: a boolean false, 18: i64 3,
# 26: i64 0 and 1 (axes)
_BIN = struct.pack("<q", 1) + struct.pack("<2i", 7, 8) + b"\x01\x00" + struct.pack("<3q", 3, 0, 1)


def _write(folder: Path, xml: str) -> Path:
    path = folder / "m.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(_BIN)
    return path


def _openvino(path: Path) -> str | None:
    """OpenVINO's refusal of the model, None where it reads it."""
    try:
        ov.Core().read_model(str(path))
    except RuntimeError as exc:
        return str(exc)
    return None


def _refusals(path: Path, layer_name: str) -> list[str]:
    """The messages of ``check``'s layer-invalid findings at ``layer_name``."""
    model = load_ir(path)
    try:
        return [
            f.message for f in check_model(model).findings if f.code == "layer-invalid" and f.layer_name == layer_name
        ]
    finally:
        model.close()


def _reduce_body(prefix: str, keep: bool = True) -> tuple[str, list[tuple[int, int, int, int]]]:
    """A body: Parameter 0 [2,3] -> ReduceSum(axis 1) -> Result 3."""
    dims = [2, 1] if keep else [2]
    layers = (
        _param(0, f"{prefix}_p", [2, 3])
        + _const(1, f"{prefix}_ax", "i64", [1], 0, 8, "I64")
        + f'<layer id="2" name="{prefix}_red" type="ReduceSum" version="opset1"><data keep_dims="{str(keep).lower()}"/>'
        f"<input>{_port(0, [2, 3])}{_port(1, [1], 'I64')}</input><output>{_port(2, dims)}</output></layer>"
        + _result(3, f"{prefix}_res", dims)
    )
    return layers, [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)]


def _ti(lid: int, name: str, body: str, body_out: list[int]) -> str:
    """A TensorIterator of input 0 [2,3] invariant into body Parameter 0, output 1 the last value of body Result 3."""
    return (
        f'<layer id="{lid}" name="{name}" type="TensorIterator" version="opset1"><port_map>'
        f'<input external_port_id="0" internal_layer_id="0"/><output external_port_id="1" internal_layer_id="3"/>'
        f"</port_map><input>{_port(0, [2, 3])}</input><output>{_port(1, body_out)}</output><body>{body}</body>"
        "</layer>"
    )


@pytest.mark.parametrize("inner", ["TensorIterator", "Loop-held TensorIterator", "none"])
def test_a_tensor_iterator_in_a_tensor_iterators_body_is_refused_as_openvino_refuses_it(
    tmp_path: Path, inner: str
) -> None:
    layers, edges = _reduce_body("in")
    ti = f"<layers>{layers}</layers><edges>{_edges(edges)}</edges>"
    if inner == "TensorIterator":
        body = (
            f"<layers>{_param(0, 'p', [2, 3])}{_ti(1, 'inner', ti, [2, 1])}{_result(3, 'res', [2, 1])}</layers>"
            f"<edges>{_edges([(0, 0, 1, 0), (1, 1, 3, 0)])}</edges>"
        )
    elif inner == "Loop-held TensorIterator":  # a Loop whose body holds the TensorIterator: not the outer one's concern
        loop_body = (
            f"<layers>{_param(0, 'lp', [2, 3])}{_ti(1, 'inner', ti, [2, 1])}{_result(3, 'lres', [2, 1])}"
            f"{_const(4, 'ltrue', 'boolean', [], 16, 1, 'BOOL')}"
            f'<layer id="5" name="lcond" type="Result" version="opset1"><input><port id="0" precision="BOOL"/>'
            f"</input></layer></layers><edges>{_edges([(0, 0, 1, 0), (1, 1, 3, 0), (4, 0, 5, 0)])}</edges>"
        )
        body = (
            f"<layers>{_param(0, 'p', [2, 3])}{_const(6, 'trip', 'i64', [], 18, 8, 'I64')}"
            f"{_const(7, 'go', 'boolean', [], 16, 1, 'BOOL')}"
            f'<layer id="1" name="loop" type="Loop" version="opset5"><port_map>'
            f'<input external_port_id="2" internal_layer_id="0"/><output external_port_id="3" internal_layer_id="3"/>'
            f'<output external_port_id="-1" internal_layer_id="5" purpose="execution_condition"/></port_map>'
            f'<input>{_port(0, [], "I64")}<port id="1" precision="BOOL"/>{_port(2, [2, 3])}</input>'
            f"<output>{_port(3, [2, 1])}</output><body>{loop_body}</body></layer>{_result(3, 'res', [2, 1])}"
            f"</layers><edges>{_edges([(6, 0, 1, 0), (7, 0, 1, 1), (0, 0, 1, 2), (1, 3, 3, 0)])}</edges>"
        )
    else:
        body = ti
    xml = _net(
        _param(0, "x", [2, 3]) + _ti(1, "outer", body, [2, 1]) + _result(2, "out", [2, 1]), [(0, 0, 1, 0), (1, 1, 2, 0)]
    )
    path = _write(tmp_path, xml)
    refused = _openvino(path)
    said = _refusals(path, "outer")
    if refused is None:
        assert inner != "TensorIterator" and not said, said
        return
    assert inner == "TensorIterator" and "No nested TensorIterator" in refused
    assert len(said) == 1 and "No nested TensorIterator" in said[0] and "name='inner'" in said[0], said


def _if(else_type: str, x_type: str, condition: str) -> str:
    """An If over x [2,3] whose then-body gives ReduceSum(x, 1), its else-body a Const [2,1] of ``else_type``; the
    condition a Parameter or a constant."""
    then, then_edges = _reduce_body("t")
    precision = {"f32": "FP32", "i32": "I32", "f16": "FP16"}[else_type]
    size = 4 if else_type == "f16" else 8
    other = (
        _param(0, "e_p", [2, 3]) + _const(4, "e_c", else_type, [2, 1], 8, size, precision) + _result(3, "e_res", [2, 1])
    )
    if condition == "parameter":
        cond = _param(1, "cond", [], "boolean")
    else:
        cond = _const(1, "cond", "boolean", [], 16 if condition == "true" else 17, 1, "BOOL")
    if_layer = (
        '<layer id="2" name="if" type="If" version="opset8">'
        '<then_port_map><input external_port_id="1" internal_layer_id="0"/><output external_port_id="2" '
        'internal_layer_id="3"/></then_port_map><else_port_map><input external_port_id="1" internal_layer_id="0"/>'
        '<output external_port_id="2" internal_layer_id="3"/></else_port_map>'
        f'<input><port id="0" precision="BOOL"/>{_port(1, [2, 3])}</input><output>{_port(2, [2, 1])}</output>'
        f"<then_body><layers>{then}</layers><edges>{_edges(then_edges)}</edges></then_body>"
        f"<else_body><layers>{other}</layers><edges>{_edges([(4, 0, 3, 0)])}</edges></else_body></layer>"
    )
    return _net(
        _param(0, "x", [2, 3], x_type) + cond + if_layer + _result(3, "out", [2, 1]),
        [(0, 0, 2, 1), (1, 0, 2, 0), (2, 2, 3, 0)],
    )


@pytest.mark.parametrize(
    ("else_type", "x_type", "condition"),
    [
        ("i32", "f32", "parameter"),
        ("f16", "f32", "parameter"),
        ("f32", "f32", "parameter"),
        ("f32", "dynamic", "parameter"),
        ("i32", "f32", "false"),
        ("i32", "f32", "true"),
    ],
)
def test_if_branches_of_different_element_types_are_typed_as_openvino_types_them(
    tmp_path: Path, else_type: str, x_type: str, condition: str
) -> None:
    path = _write(tmp_path, _if(else_type, x_type, condition))
    refused = _openvino(path)
    said = _refusals(path, "if")
    if refused is not None:
        assert "is not equal type of else_body output" in refused
        assert len(said) == 1, said
        assert f"type of then_body output {x_type} is not equal type of else_body output {else_type}" in said[0]
        assert "port 2" in said[0], said
        return
    assert not said, said
    node = next(n for n in ov.Core().read_model(str(path)).get_ordered_ops() if n.get_type_name() == "If")
    model = load_ir(path)
    try:
        [layer] = [layer for layer in model.layers if layer.type == "If"]
        state = ShapeEngine(model).state((layer.id, layer.outputs[0].id))
        assert state.element_type is not None
        assert state.element_type.name == node.get_output_element_type(0).get_type_name()
    finally:
        model.close()


def _loop(go: bool, keep: bool) -> str:
    """A Loop (trip count 3, execution condition ``go``, body condition true) whose one last-value output is
    ReduceSum(x, 1) of x [2,3]: [2,1] with ``keep``, else a scalar (axes [0,1])."""
    axes = _const(1, "ax", "i64", [2] if not keep else [1], 0 if keep else 26, 8 if keep else 16, "I64")
    dims = [2, 1] if keep else []
    red = (
        f'<layer id="2" name="red" type="ReduceSum" version="opset1"><data keep_dims="{str(keep).lower()}"/>'
        f"<input>{_port(0, [2, 3])}{_port(1, [1] if keep else [2], 'I64')}</input><output>{_port(2, dims)}</output>"
        "</layer>"
    )
    body = (
        f"<layers>{_param(0, 'p', [2, 3])}{axes}{red}{_result(3, 'res', dims)}"
        f"{_const(4, 'true', 'boolean', [], 16, 1, 'BOOL')}"
        '<layer id="5" name="cond" type="Result" version="opset1"><input><port id="0" precision="BOOL"/></input>'
        f"</layer></layers><edges>{_edges([(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0), (4, 0, 5, 0)])}</edges>"
    )
    out = ([0, *dims[1:]] if not go else dims) if dims else []
    loop = (
        '<layer id="3" name="loop" type="Loop" version="opset5"><port_map>'
        '<input external_port_id="2" internal_layer_id="0"/><output external_port_id="3" internal_layer_id="3"/>'
        '<output external_port_id="-1" internal_layer_id="5" purpose="execution_condition"/></port_map>'
        f'<input>{_port(0, [], "I64")}<port id="1" precision="BOOL"/>{_port(2, [2, 3])}</input>'
        f"<output>{_port(3, out)}</output><body>{body}</body></layer>"
    )
    layers = (
        _param(0, "x", [2, 3])
        + _const(1, "trip", "i64", [], 18, 8, "I64")
        + _const(2, "go", "boolean", [], 16 if go else 17, 1, "BOOL")
        + loop
        + _result(4, "out", out)
    )
    return _net(layers, [(1, 0, 3, 0), (2, 0, 3, 1), (0, 0, 3, 2), (3, 3, 4, 0)])


@pytest.mark.parametrize(("go", "keep"), [(False, False), (False, True), (True, False)])
def test_a_loop_of_no_iteration_with_a_scalar_last_value_is_refused_as_openvino_refuses_it(
    tmp_path: Path, go: bool, keep: bool
) -> None:
    path = _write(tmp_path, _loop(go, keep))
    refused = _openvino(path)
    said = _refusals(path, "loop")
    if refused is None:
        assert not said, said
        return
    assert not go and not keep and "Accessing out-of-range dimension" in refused
    assert len(said) == 1 and "Accessing out-of-range dimension" in said[0] and "constant false" in said[0], said
