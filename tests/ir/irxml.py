"""Tiny builders for hand-written IR XML (the tests need documents OpenVINO would never write)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from xml.sax.saxutils import quoteattr

Dims = Sequence[int | str]


def port(pid: int | str, dims: Dims = (), precision: str | None = "FP32", names: str | None = None) -> str:
    attrs = f'id="{pid}"'
    if precision is not None:
        attrs += f' precision="{precision}"'
    if names is not None:
        attrs += f" names={quoteattr(names)}"
    body = "".join(f"<dim>{d}</dim>" for d in dims)
    return f"<port {attrs}>{body}</port>"


def layer(
    lid: int | str | None,
    name: str | None,
    ltype: str | None,
    *,
    data: Mapping[str, str] | None = None,
    inputs: Iterable[str] = (),
    outputs: Iterable[str] = (),
    version: str = "opset1",
    inner: str = "",
) -> str:
    attrs = " ".join(
        f"{k}={quoteattr(str(v))}" for k, v in (("id", lid), ("name", name), ("type", ltype)) if v is not None
    )
    parts = [f'<layer {attrs} version="{version}">']
    if data is not None:
        parts.append("<data " + " ".join(f"{k}={quoteattr(v)}" for k, v in data.items()) + "/>")
    ins, outs = list(inputs), list(outputs)
    if ins:
        parts.append("<input>" + "".join(ins) + "</input>")
    if outs:
        parts.append("<output>" + "".join(outs) + "</output>")
    parts.append(inner)
    parts.append("</layer>")
    return "\n".join(parts)


def edge(from_layer: int, from_port: int, to_layer: int, to_port: int) -> str:
    return f'<edge from-layer="{from_layer}" from-port="{from_port}" to-layer="{to_layer}" to-port="{to_port}"/>'


def net(layers: Iterable[str], edges: Iterable[str] = (), *, version: str = "11", extra: str = "") -> str:
    return (
        f'<?xml version="1.0"?>\n<net name="m" version="{version}">\n<layers>\n'
        + "\n".join(layers)
        + "\n</layers>\n<edges>\n"
        + "\n".join(edges)
        + f"\n</edges>\n{extra}</net>\n"
    )


def parameter(lid: int = 0, name: str = "x", shape: str = "1,3", etype: str = "f32", dims: Dims = (1, 3)) -> str:
    return layer(
        lid, name, "Parameter", data={"shape": shape, "element_type": etype}, outputs=[port(0, dims, names=name)]
    )


def const(
    lid: int, name: str, *, shape: str, etype: str = "f32", offset: str = "0", size: str, dims: Dims | None = None
) -> str:
    return layer(
        lid,
        name,
        "Const",
        data={"element_type": etype, "shape": shape, "offset": offset, "size": size},
        outputs=[port(0, dims if dims is not None else [d for d in shape.split(",") if d])],
    )


def unary(lid: int, name: str = "relu", ltype: str = "ReLU", dims: Dims = (1, 3)) -> str:
    return layer(lid, name, ltype, inputs=[port(0, dims)], outputs=[port(1, dims)])


def result(lid: int, name: str = "out", dims: Dims = (1, 3), pid: int = 0) -> str:
    return layer(lid, name, "Result", inputs=[port(pid, dims)])


def chain(*, version: str = "11", extra: str = "") -> str:
    """Parameter(0) -> ReLU(1) -> Result(2): the smallest valid IR."""
    return net([parameter(), unary(1), result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)], version=version, extra=extra)


def const_add(const_layer: str) -> str:
    """Parameter(0) + Const(1) -> Add(2) -> Result(3), with a Const of f32[1,3] by default."""
    add = layer(2, "add", "Add", inputs=[port(0, (1, 3)), port(1, (1, 3))], outputs=[port(2, (1, 3))])
    return net(
        [parameter(), const_layer, add, result(3)],
        [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)],
    )
