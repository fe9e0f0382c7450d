"""Long chains are checked without deep recursion: value folds up a chain of thousands of layers."""

from __future__ import annotations

from pathlib import Path

from ovreduce import check_model, load_ir


def _port(pid: int, dims: list[int], precision: str = "I64") -> str:
    return f'<port id="{pid}" precision="{precision}">' + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>"


def _axes_chain(tmp_path: Path, depth: int) -> Path:
    """Parameter [2,3] reduced by a ReduceSum whose axes come from a Const through ``depth`` Abs layers."""
    layers = [
        '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/>'
        f"<output>{_port(0, [2, 3], 'FP32')}</output></layer>",
        '<layer id="1" name="axes" type="Const" version="opset1"><data element_type="i64" shape="1" offset="0" '
        f'size="8"/><output>{_port(0, [1])}</output></layer>',
    ]
    edges = []
    prev = (1, 0)
    for i in range(2, depth + 2):
        layers.append(f'<layer id="{i}" name="abs_{i}" type="Abs" version="opset1"><input>{_port(0, [1])}</input>'
                      f"<output>{_port(1, [1])}</output></layer>")  # fmt: skip
        edges.append(f'<edge from-layer="{prev[0]}" from-port="{prev[1]}" to-layer="{i}" to-port="0"/>')
        prev = (i, 1)
    r = depth + 2
    inputs = _port(0, [2, 3], "FP32") + _port(1, [1])
    layers.append(f'<layer id="{r}" name="sum" type="ReduceSum" version="opset1"><data keep_dims="true"/><input>'
                  f'{inputs}</input><output>{_port(2, [1, 3], "FP32")}</output></layer>')  # fmt: skip
    layers.append(f'<layer id="{r + 1}" name="out" type="Result" version="opset1"><input>{_port(0, [1, 3], "FP32")}'
                  "</input></layer>")  # fmt: skip
    edges += [
        f'<edge from-layer="0" from-port="0" to-layer="{r}" to-port="0"/>',
        f'<edge from-layer="{prev[0]}" from-port="{prev[1]}" to-layer="{r}" to-port="1"/>',
        f'<edge from-layer="{r}" from-port="2" to-layer="{r + 1}" to-port="0"/>',
    ]
    xml = tmp_path / f"chain_{depth}.xml"
    xml.write_text(
        f'<net name="deep" version="11"><layers>{"".join(layers)}</layers><edges>{"".join(edges)}</edges></net>'
    )
    xml.with_suffix(".bin").write_bytes((0).to_bytes(8, "little"))
    return xml


def test_a_value_folded_up_a_long_chain_does_not_recurse(tmp_path: Path) -> None:
    """3,000 layers between a reduction and its axes (Python's recursion limit is 1,000 frames): the same report
    as a short chain's, layer ids aside."""
    reports = []
    for depth in (10, 3000):
        model = load_ir(_axes_chain(tmp_path, depth))
        try:
            reports.append(check_model(model))
        finally:
            model.close()
    short, deep = (r.reductions[0] for r in reports)
    assert deep.layer_id == "3002"
    assert (deep.axes, deep.axes_kind, deep.input_shape, deep.inferred_output_shape) == (
        short.axes,
        short.axes_kind,
        short.input_shape,
        short.inferred_output_shape,
    )
    assert reports[1].ok == reports[0].ok
