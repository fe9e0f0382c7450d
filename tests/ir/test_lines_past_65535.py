"""Lines past 65,535 in files the careful reader reads: libxml2 keeps an element's line in 16 bits, and past it
says 65535 or the line of some later text. Every line the careful reader gives (a layer's, a port's, an edge's, a
body's, a port map's, a back edge's) and every line its messages name is the element's own, however far down.

Each file is compared with itself moved down by 70,000 blank lines: every line moves by exactly that much.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from ovreduce import IRError, parse_ir
from ovreduce.ir.build import Builder, ParseLimits
from ovreduce.ir.careful import read_careful
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import gc_paused
from ovreduce.ir.weights import Weights
from tests.cli.inprocess import run_cli

from . import subgraphs
from .irxml import edge, layer, net, parameter, port, result, unary
from .test_readers import VARIANTS

DOWN = 70_000


def careful(xml: bytes, weights: Weights | None = None) -> IRModel:
    with gc_paused():
        return read_careful(xml, Builder("model.xml", weights, None, ParseLimits()))


def _lines(value: Any) -> list[int | None]:
    """Every ``line`` in a model's layers or edges, in order (bodies, ports, port maps and back edges included)."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        items = [(f, getattr(value, f)) for f in value._fields]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif isinstance(value, (list, tuple)):
        return [line for v in value for line in _lines(v)]
    else:
        return []
    found: list[int | None] = []
    for field, v in items:
        if field == "line":
            found.append(v)
        else:
            found += _lines(v)
    return found


def _down(xml: bytes) -> bytes:
    """``xml`` with 70,000 blank lines after the start tag of the model's ``<layers>``."""
    assert xml.count(b"<layers>") >= 1
    return xml.replace(b"<layers>", b"<layers>" + b"\n" * DOWN, 1)


def _same_moved_down(xml: bytes, weights: Weights | None = None) -> None:
    here = careful(xml, weights)
    below = careful(_down(xml), weights)
    want = _lines(here.layers) + _lines(here.edges)
    assert want and all(line is not None and line < 65535 for line in want)
    got = _lines(below.layers) + _lines(below.edges)
    assert got == [line + DOWN for line in want if line is not None]


_CAREFUL_VARIANTS = [name for name in VARIANTS if "BOM" not in name]


@pytest.mark.parametrize("name", _CAREFUL_VARIANTS)
def test_every_line_of_a_layout_moves_down_with_the_file(name: str) -> None:
    xml = VARIANTS[name].encode("latin-1" if "Latin-1" in name else "utf-8")
    _same_moved_down(xml, Weights(bytes(64)) if "const" in name else None)


@pytest.mark.parametrize(
    "build",
    [subgraphs.if_model, subgraphs.loop_model, subgraphs.ti_model, subgraphs.nested_model],
    ids=["if", "loop", "tensor_iterator", "nested"],
)
def test_bodies_port_maps_and_back_edges_move_down_with_the_file(build: Any, tmp_path: Path) -> None:
    path = subgraphs.save(build(), tmp_path, "model")
    bin_path = path.with_suffix(".bin")
    _same_moved_down(path.read_bytes(), Weights(bin_path) if bin_path.exists() else None)


def _line_of(xml: bytes, needle: bytes) -> int:
    return xml[: xml.index(needle)].count(b"\n") + 1


def _faulty(bad_layer: str) -> bytes:
    """Parameter -> ReLU -> ``bad_layer`` (id 2) -> ReLU -> Result, the bad layer past line 70,000 and followed by
    blank lines (where libxml2's guess for a line past 65535 would look)."""
    layers = [parameter(), unary(1), "\n" * DOWN + bad_layer + "\n" * 7, unary(3), result(4)]
    edges = [edge(0, 0, 1, 0), edge(1, 1, 2, 0), edge(2, 1, 3, 0), edge(3, 1, 4, 0)]
    return net(layers, edges).encode()


# A layer whose only child is <data/> (no text inside it: libxml2 would take a later line), and a layer over many
# lines whose first text is lines below its start tag.
_DATA_ONLY = layer(2, "bad", "Parameter", data={"shape": "1,x", "element_type": "f32"})
_MANY_LINES = (
    layer(2, "bad", "ReLU", inputs=[port(0, (1, 3)), port(0, (1, 3))], outputs=[port(1, (1, 3))])
    .replace('<layer id="2"', '<layer\n\nid="2"')
    .replace("<input>", "\n\n\n<input>\n\n")
    .replace('<port id="0" precision="FP32">', '<port id="0" precision="FP32">\n\n', 1)
)


@pytest.mark.parametrize("bad", [_DATA_ONLY, _MANY_LINES], ids=["data-only", "many-lines"])
def test_a_fault_past_line_65535_names_its_own_line(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    xml = _faulty(bad)
    tag_end = xml.index(b">", xml.index(b'id="2"'))  # libxml2's line of an element: its start tag's '>'
    want = xml[:tag_end].count(b"\n") + 1
    assert want > DOWN
    with pytest.raises(IRError) as raised:
        parse_ir(xml, source="m.xml")
    assert f"m.xml:{want}: layer id=2 name='bad'" in str(raised.value)
    assert raised.value.line == want
    path = tmp_path / "m.xml"
    path.write_bytes(xml)
    status, out, err = run_cli(capsys, "check", str(path))
    assert status != 0
    assert f"m.xml:{want}: layer id=2" in out + err
    assert not re.search(r"m\.xml:65535\b", out + err)


def test_a_dim_past_line_65535_is_named_at_its_own_line_and_its_layer_at_its_own() -> None:
    xml = _faulty(unary(2).replace("<dim>3</dim>", "\n\n<dim>three</dim>", 1))
    with pytest.raises(IRError) as raised:
        parse_ir(xml, source="m.xml")
    layer_line, dim_line = _line_of(xml, b'<layer id="2"'), _line_of(xml, b"<dim>three")
    assert str(raised.value).startswith(f"m.xml:{layer_line}: layer id=2 name='relu' (ReLU), port 0, line {dim_line}:")
    assert raised.value.line == dim_line


def test_where_the_line_past_65535_cannot_be_known_none_is_said() -> None:
    """UTF-16 bytes do not count lines as 8-bit text does: past line 65535 the line is not said, never 65535."""
    xml = _faulty(_DATA_ONLY).decode().replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
    with pytest.raises(IRError) as raised:
        parse_ir(xml.encode("utf-16"), source="m.xml")
    assert str(raised.value).startswith("m.xml: layer id=2 name='bad'")
    assert raised.value.line is None
