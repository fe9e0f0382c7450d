"""Where an unreadable file's problem is comes from the reader's own position, 1-based, never from the message.

* a syntax error's ``line``/``column`` are libxml2's own (1-based: SARIF forbids column 0; lxml's
  ``XMLSyntaxError.offset`` is one less; in characters, which the SARIF run's ``columnKind`` says), in the
  error, the JSON document and the SARIF region;
* a message that quotes the file (a layer named ``a at line 77, column 0`` in a cycle's message) sets no region;
* every document here is valid against the vendored SARIF 2.1.0 schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lxml import etree

from ovreduce import parse_ir
from ovreduce.check import check_document, unreadable
from ovreduce.cli.render.sarif import check_sarif
from ovreduce.errors import IRError, IRSyntaxError, IRVersionError
from ovreduce.reports.check import CheckDocument, ModelCheck
from ovreduce.reports.common import ErrorInfo

from .inprocess import run_cli

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0-rtm.4.json").read_text())

# (name, document, the 1-based (line, column) of the character libxml2 stops at, counted here by hand)
SYNTAX = [
    ("first-character", b"x", (1, 1)),  # lxml's offset is 0 here: column 0 is not SARIF
    ("attribute-value", b"<net>\n  <layers x=1/>", (2, 13)),  # at the '1'
    ("truncated", b"<net>\n<oops", (2, 6)),  # past the last character
    ("mismatched-tag", b'<net version="11">\n\t<layers></net>', (2, 16)),  # after '</net>'
    ("bad-reference", b"<net>&</net>", (1, 7)),  # after the '&'
    ("non-ascii", "<net>\U0001f600\U0001f600 &</net>".encode(), (1, 10)),  # after the '&', in characters (UTF-16: 12)
]

CYCLE_NAME = "a at line 77, column 0"
CYCLE = f"""<?xml version="1.0"?>
<net name="x" version="11">
<layers>
<layer id="0" name="x" type="Parameter" version="opset1">
<data shape="2" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>2</dim></port></output>
</layer>
<layer id="1" name="{CYCLE_NAME}" type="Add" version="opset1">
<input><port id="0" precision="FP32"><dim>2</dim></port><port id="1" precision="FP32"><dim>2</dim></port></input>
<output><port id="2" precision="FP32"><dim>2</dim></port></output>
</layer>
<layer id="2" name="r" type="Relu" version="opset1">
<input><port id="0" precision="FP32"><dim>2</dim></port></input>
<output><port id="1" precision="FP32"><dim>2</dim></port></output>
</layer>
<layer id="3" name="out" type="Result" version="opset1">
<input><port id="0" precision="FP32"><dim>2</dim></port></input>
</layer>
</layers>
<edges>
<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="2" from-port="1" to-layer="1" to-port="1"/>
<edge from-layer="1" from-port="2" to-layer="2" to-port="0"/>
<edge from-layer="2" from-port="1" to-layer="3" to-port="0"/>
</edges>
</net>
"""


def _valid(doc: dict[str, Any]) -> None:
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft4Validator(SCHEMA).iter_errors(doc)]
    assert errors == []


def _regions(doc: dict[str, Any]) -> list[dict[str, int] | None]:
    return [r["locations"][0]["physicalLocation"].get("region") for r in doc["runs"][0]["results"]]


def _libxml2_position(data: bytes) -> tuple[int, int]:
    """libxml2's own (line, column) of the error it stops at, from its error log (not lxml's offset)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(data, parser)
    last = parser.error_log.last_error
    assert last is not None
    return last.line, last.column


@pytest.mark.parametrize(("name", "data", "where"), SYNTAX, ids=[case[0] for case in SYNTAX])
def test_a_syntax_error_carries_libxml2s_1_based_position(name: str, data: bytes, where: tuple[int, int]) -> None:
    assert _libxml2_position(data) == where, "the hand count is libxml2's"
    with pytest.raises(IRSyntaxError) as caught:
        parse_ir(data, None, source="m.xml")
    error = caught.value
    assert (error.line, error.column) == where
    assert f"at line {where[0]}, column {where[1]}:" in error.message, error.message


@pytest.mark.parametrize(("name", "data", "where"), SYNTAX, ids=[case[0] for case in SYNTAX])
def test_every_format_gives_that_position(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, data: bytes, where: tuple[int, int]
) -> None:
    path = tmp_path / f"{name}.xml"
    path.write_bytes(data)
    status, out, _ = run_cli(capsys, "check", str(path), "--format", "json")
    assert status == 2
    error = json.loads(out)["models"][0]["error"]
    assert (error["code"], error["line"], error["column"]) == ("ir.syntax", *where)
    _, out, _ = run_cli(capsys, "check", str(path), "--format", "sarif")
    doc = json.loads(out)
    _valid(doc)
    assert _regions(doc) == [{"startLine": where[0], "startColumn": where[1]}]
    assert doc["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_a_position_in_a_layer_name_sets_no_region(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cycle.xml"
    path.write_text(CYCLE)
    status, out, _ = run_cli(capsys, "check", str(path), "--format", "json")
    assert status == 2
    error = json.loads(out)["models"][0]["error"]
    assert error["code"] == "ir.structure" and CYCLE_NAME in error["message"], error
    assert (error["line"], error["column"]) == (None, None)
    _, out, _ = run_cli(capsys, "check", str(path), "--format", "sarif")
    doc = json.loads(out)
    _valid(doc)
    assert _regions(doc) == [None]


def _document(error: ErrorInfo) -> CheckDocument:
    return check_document([ModelCheck("m.xml", False, None, None, error, (), ())])


def test_the_region_is_the_errors_position_and_only_that() -> None:
    quoted = "m.xml:12: layer id=3 name='m.xml:5:7: at line 77, column 9' (Relu): broken"
    cases: list[tuple[ErrorInfo, dict[str, int] | None]] = [
        (ErrorInfo("ir.structure", quoted), None),
        (ErrorInfo("ir.structure", quoted, 12), {"startLine": 12}),
        (ErrorInfo("ir.syntax", quoted, 3, 1), {"startLine": 3, "startColumn": 1}),
        (ErrorInfo("ir.syntax", quoted, 3, 0), {"startLine": 3}),  # no column 0 in SARIF
        (ErrorInfo("ir.syntax", quoted, 0, 4), None),  # nor line 0
    ]
    for error, region in cases:
        doc = json.loads(check_sarif(_document(error)))
        _valid(doc)
        assert _regions(doc) == [region], error


def test_ir_errors_keep_only_1_based_positions() -> None:
    assert (IRError("x").line, IRError("x").column) == (None, None)
    assert (IRVersionError("x", line=4, column=2).line, IRVersionError("x", line=4, column=2).column) == (4, 2)
    assert (IRError("x", line=0, column=3).line, IRError("x", line=0, column=3).column) == (None, None)
    assert (IRError("x", line=2, column=0).line, IRError("x", line=2, column=0).column) == (2, None)
    entry = unreadable("m.xml", IRSyntaxError("m.xml: not well-formed XML", line=7, column=3))
    assert entry.error == ErrorInfo("ir.syntax", "m.xml: not well-formed XML", 7, 3)
