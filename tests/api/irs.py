"""Small IRs written by hand for the API tests: one reduction fed by a Parameter and a Const of axes."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

from tests.ir.irxml import edge, layer, net, port


def _dims(dims: Sequence[int]) -> str:
    return "".join(f"<dim>{d}</dim>" for d in dims)


def reduce_ir(
    name: str = "reduce",
    *,
    op: str = "ReduceSum",
    shape: str = "2,3",
    dims: Sequence[int] = (2, 3),
    axes: Sequence[int] = (1,),
    keep_dims: bool = False,
    out_dims: Sequence[int] | None = None,
    param_name: str = "x",
    net_name: str = "m",
) -> tuple[bytes, bytes]:
    """``Parameter -> op(axes Const) -> Result``; returns (xml, bin)."""
    if out_dims is None:
        rank = len(dims)
        norm = {a % rank for a in axes}
        out_dims = [1 if i in norm else d for i, d in enumerate(dims) if keep_dims or i not in norm]
    weights = struct.pack(f"<{len(axes)}q", *axes)
    xml = f"""<?xml version="1.0"?>
<net name={quoteattr(net_name)} version="11">
<layers>
<layer id="0" name={quoteattr(param_name)} type="Parameter" version="opset1">
<data shape="{shape}" element_type="f32"/>
<output><port id="0" precision="FP32" names={quoteattr(param_name)}>{_dims(dims)}</port></output>
</layer>
<layer id="1" name="axes" type="Const" version="opset1">
<data element_type="i64" shape="{len(axes)}" offset="0" size="{len(weights)}"/>
<output><port id="0" precision="I64"><dim>{len(axes)}</dim></port></output>
</layer>
<layer id="2" name={quoteattr(name)} type="{op}" version="opset1">
<data keep_dims="{str(keep_dims).lower()}"/>
<input><port id="0" precision="FP32">{_dims(dims)}</port>
<port id="1" precision="I64"><dim>{len(axes)}</dim></port></input>
<output><port id="2" precision="FP32">{_dims(out_dims)}</port></output>
</layer>
<layer id="3" name="out" type="Result" version="opset1">
<input><port id="0" precision="FP32">{_dims(out_dims)}</port></input>
</layer>
</layers>
<edges>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges>
</net>
"""
    return xml.encode(), weights


def runtime_axes_ir() -> bytes:
    """A ReduceMean whose axes come from a second Parameter (no .bin)."""
    x = layer(0, "x", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, (2, 3))])
    axes = layer(1, "axes", "Parameter", data={"shape": "1", "element_type": "i64"}, outputs=[port(0, (1,), "I64")])
    mean = layer(2, "mean", "ReduceMean", data={"keep_dims": "true"}, inputs=[port(0, (2, 3)), port(1, (1,), "I64")],
                 outputs=[port(2, (-1, -1))])  # fmt: skip
    out = layer(3, "out", "Result", inputs=[port(0, (-1, -1))])
    return net([x, axes, mean, out], [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)]).encode()
