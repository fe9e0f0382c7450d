"""A layer of many ports is read and checked to the shapes OpenVINO reads.

Every port an edge, a Result or a folded value names is found through the model's index of the ports of each layer
of many of them, built once as the model is built: a walk of the layer's ports for each would make a Split of N
outputs cost N * N (the reader's edges, the IR v10 naming of Results, the check of each edge); a Split's outputs whose
values are folded are folded from one read of its input, not one each. That the time grows linearly is measured, not
asserted, by ``bench/many_ports_bench.py``, which times these models beside OpenVINO reading them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import openvino as ov
import pytest

from ovreduce.check import check_model
from ovreduce.infer import ShapeEngine
from ovreduce.ir.parser import load_ir


def _split(n: int, *, to_concat: bool, version: int = 11) -> str:
    """A Split of ``n`` outputs of one element, each feeding a Result, or an input of a Concat then a ReduceSum."""
    outs = "".join(f'<port id="{i + 2}" precision="FP32"><dim>1</dim></port>' for i in range(n))
    if to_concat:
        ins = "".join(f'<port id="{i}" precision="FP32"><dim>1</dim></port>' for i in range(n))
        after = (
            f'<layer id="3" name="cc" type="Concat" version="opset1"><data axis="0"/><input>{ins}</input><output>'
            f'<port id="{n}" precision="FP32"><dim>{n}</dim></port></output></layer>\n'
            '<layer id="4" name="rs" type="ReduceSum" version="opset1"><data keep_dims="false"/><input>'
            f'<port id="0" precision="FP32"><dim>{n}</dim></port><port id="1" precision="I64"/></input><output>'
            '<port id="2" precision="FP32"/></output></layer>\n'
            '<layer id="5" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"/></input>'
            "</layer>\n"
        )
        edges = "".join(f'<edge from-layer="1" from-port="{i + 2}" to-layer="3" to-port="{i}"/>\n' for i in range(n))
        edges += (
            f'<edge from-layer="3" from-port="{n}" to-layer="4" to-port="0"/>'
            '<edge from-layer="2" from-port="0" to-layer="4" to-port="1"/><edge from-layer="4" from-port="2" '
            'to-layer="5" to-port="0"/>'
        )
    else:
        after = "".join(
            f'<layer id="{i + 10}" name="r{i}" type="Result" version="opset1"><input><port id="0" precision="FP32">'
            f"<dim>1</dim></port></input></layer>\n"
            for i in range(n)
        )
        edges = "".join(
            f'<edge from-layer="1" from-port="{i + 2}" to-layer="{i + 10}" to-port="0"/>\n' for i in range(n)
        )
    return (
        f'<?xml version="1.0"?>\n<net name="m" version="{version}">\n<layers>\n'
        f'<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{n}" element_type="f32"/><output>'
        f'<port id="0" precision="FP32"><dim>{n}</dim></port></output></layer>\n'
        '<layer id="2" name="ax" type="Const" version="opset1"><data element_type="i64" shape="" offset="0" size="8"/>'
        '<output><port id="0" precision="I64"/></output></layer>\n'
        f'<layer id="1" name="c" type="Split" version="opset1"><data num_splits="{n}"/><input><port id="0" '
        f'precision="FP32"><dim>{n}</dim></port><port id="1" precision="I64"/></input><output>{outs}</output>'
        f"</layer>\n{after}</layers>\n<edges>\n"
        '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/><edge from-layer="2" from-port="0" to-layer="1" '
        f'to-port="1"/>\n{edges}</edges>\n</net>\n'
    )


MODELS: dict[str, Callable[[int], str]] = {
    "a Split feeding a Concat": lambda n: _split(n, to_concat=True),
    "a Split feeding Results": lambda n: _split(n, to_concat=False),
    "a Split feeding Results, IR v10": lambda n: _split(n, to_concat=False, version=10),
}


def written_model(tmp_path: Path, label: str, xml: str) -> Path:
    """``xml`` written in ``tmp_path`` as ``label``.xml, with the weights of its axes (0)."""
    path = tmp_path / f"{label}.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(struct.pack("<q", 0))
    return path


@pytest.mark.parametrize("label", list(MODELS))
def test_a_layer_of_many_ports_is_checked_to_openvinos_shapes(tmp_path: Path, label: str) -> None:
    path = written_model(tmp_path, "m", MODELS[label](2000))
    ov_model = ov.Core().read_model(path)
    model = load_ir(path)
    engine = ShapeEngine(model)
    by_name = {layer.name: layer for layer in model.layers}
    for result in ov_model.get_results():  # the shapes OpenVINO gives are those ovreduce infers
        layer = by_name[result.get_friendly_name()]
        ref = model.producer(layer.id, layer.inputs[0].id)
        assert ref is not None
        assert str(engine.state(ref).shape) == str(result.get_output_partial_shape(0)), layer.where
    assert not [f for f in check_model(model).findings if f.severity == "error"]
    model.close()


def _folded_split(n: int) -> str:
    """A Const of ``n`` ones split in ``n`` parts, put together again by a Concat whose ReduceMax is a ReduceSum's axes:
    each part's value folded."""
    outs = "".join(f'<port id="{i + 2}" precision="I64"><dim>1</dim></port>' for i in range(n))
    ins = "".join(f'<port id="{i}" precision="I64"><dim>1</dim></port>' for i in range(n))
    edges = "".join(f'<edge from-layer="1" from-port="{i + 2}" to-layer="3" to-port="{i}"/>\n' for i in range(n))
    return (
        '<?xml version="1.0"?>\n<net name="m" version="11">\n<layers>\n'
        '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/><output>'
        '<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>\n'
        f'<layer id="6" name="vals" type="Const" version="opset1"><data element_type="i64" shape="{n}" offset="8" '
        f'size="{8 * n}"/><output><port id="0" precision="I64"><dim>{n}</dim></port></output></layer>\n'
        '<layer id="2" name="ax" type="Const" version="opset1"><data element_type="i64" shape="" offset="0" size="8"/>'
        '<output><port id="0" precision="I64"/></output></layer>\n'
        f'<layer id="1" name="c" type="Split" version="opset1"><data num_splits="{n}"/><input><port id="0" '
        f'precision="I64"><dim>{n}</dim></port><port id="1" precision="I64"/></input><output>{outs}</output></layer>\n'
        f'<layer id="3" name="cc" type="Concat" version="opset1"><data axis="0"/><input>{ins}</input><output>'
        f'<port id="{n}" precision="I64"><dim>{n}</dim></port></output></layer>\n'
        '<layer id="7" name="mx" type="ReduceMax" version="opset1"><data keep_dims="true"/><input><port id="0" '
        f'precision="I64"><dim>{n}</dim></port><port id="1" precision="I64"/></input><output><port id="2" '
        'precision="I64"><dim>1</dim></port></output></layer>\n'
        '<layer id="4" name="rs" type="ReduceSum" version="opset1"><data keep_dims="false"/><input><port id="0" '
        'precision="FP32"><dim>2</dim><dim>3</dim></port><port id="1" precision="I64"><dim>1</dim></port></input>'
        '<output><port id="2" precision="FP32"><dim>2</dim></port></output></layer>\n'
        '<layer id="5" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>2</dim>'
        "</port></input></layer>\n</layers>\n<edges>\n"
        '<edge from-layer="6" from-port="0" to-layer="1" to-port="0"/><edge from-layer="2" from-port="0" to-layer="1" '
        f'to-port="1"/>\n{edges}<edge from-layer="3" from-port="{n}" to-layer="7" to-port="0"/><edge from-layer="2" '
        'from-port="0" to-layer="7" to-port="1"/><edge from-layer="0" from-port="0" to-layer="4" to-port="0"/>'
        '<edge from-layer="7" from-port="2" to-layer="4" to-port="1"/><edge from-layer="4" from-port="2" to-layer="5" '
        'to-port="0"/>\n</edges>\n</net>\n'
    )


def folded_split_files(folder: Path, n: int) -> Path:
    """:func:`_folded_split` of ``n`` parts written in ``folder``, with its weights."""
    path = folder / f"folded{n}.xml"
    path.write_text(_folded_split(n))
    path.with_suffix(".bin").write_bytes(struct.pack(f"<{n + 1}q", 0, *[1] * n))
    return path


def test_the_folded_values_of_a_split_of_many_outputs_are_openvinos(tmp_path: Path) -> None:
    path = folded_split_files(tmp_path, 1000)  # (values of up to 4,096 elements are folded)
    reduced = ov.Core().read_model(path).get_result().get_output_partial_shape(0)
    model = load_ir(path)
    [reduction] = [r for r in check_model(model).reductions if r.layer_name == "rs"]
    assert reduction.axes == (1,), reduction
    assert str(ov.PartialShape(reduction.inferred_output_shape)) == str(reduced), reduction
    model.close()
