"""The fast reader (:mod:`ovreduce.ir.fast`) builds the very model the careful reader (:mod:`ovreduce.ir.careful`)
builds, or declines and leaves the file to it; and it is the reader OpenVINO's own files take.

Each test compares the two readers on the same bytes: equal models (every layer, port, line, edge and index) or
None from the fast one. A malformed file must never be accepted by it: every case of the malformed corpus is fed
to it, and whatever libxml2 refuses must make it decline even when its patterns would match.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovreduce import IRError, IRSyntaxError, parse_ir
from ovreduce.ir import fast as fast_reader
from ovreduce.ir.build import Builder, ParseLimits
from ovreduce.ir.careful import read_careful
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import gc_paused
from ovreduce.ir.reading import declaration_first
from ovreduce.ir.weights import Weights

from . import subgraphs
from .irxml import chain, const, edge, layer, net, parameter, port, result
from .malformed import CASE_IDS, CASES, Case

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"


def careful(xml: bytes, weights: Weights | None = None) -> IRModel:
    """The model the careful reader builds."""
    with gc_paused():
        return read_careful(xml, Builder("model.xml", weights, None, ParseLimits()))


def fast(xml: bytes, weights: Weights | None = None, limits: ParseLimits = ParseLimits()) -> IRModel | None:
    with gc_paused():
        return fast_reader.read_fast(xml, Builder("model.xml", weights, None, limits))


def assert_same(got: IRModel, want: IRModel) -> None:
    assert got == want  # name, version, layers (every field, lines included), edges (lines included), rt_info
    assert [layer.id for layer in got.layers] == [layer.id for layer in want.layers]  # the same topological order
    assert dict(got._by_id) == dict(want._by_id)
    assert dict(got._producer) == dict(want._producer)
    assert dict(got._ports) == dict(want._ports)
    for e in want.edges:  # consumers in edge order
        assert got.consumers(e.from_layer, e.from_port) == want.consumers(e.from_layer, e.from_port)


def same_or_declined(xml: bytes, weights: Weights | None = None) -> IRModel | None:
    """Assert the fast reader agrees with the careful one on ``xml`` (a valid IR); its model, or None."""
    want = careful(xml, weights)
    got = fast(xml, weights)
    if got is not None:
        assert_same(got, want)
    assert_same(parse_ir(xml, weights, source="model.xml"), want)
    return got


def _weights(xml_path: Path) -> Weights | None:
    bin_path = xml_path.with_suffix(".bin")
    return Weights(bin_path) if bin_path.exists() else None


SAVED = sorted(SAMPLES.glob("*.xml"))


@pytest.mark.parametrize("path", SAVED, ids=[p.stem for p in SAVED])
def test_every_sample_openvino_wrote_takes_the_fast_path_and_builds_the_same_model(path: Path) -> None:
    assert same_or_declined(path.read_bytes(), _weights(path)) is not None


@pytest.mark.parametrize(
    "build", [subgraphs.if_model, subgraphs.loop_model, subgraphs.ti_model, subgraphs.nested_model]
)
def test_sub_graph_models_are_left_to_the_careful_reader(build: object, tmp_path: Path) -> None:
    path = subgraphs.save(build(), tmp_path, "model")  # type: ignore[operator]
    assert same_or_declined(path.read_bytes(), _weights(path)) is None
    assert any(layer.bodies for layer in careful(path.read_bytes(), _weights(path)).layers)


def _decoder(blocks: int, folder: Path) -> Path:
    """RMSNorm and attention-ish blocks saved by OpenVINO: the layout an LLM's IR has."""
    x = ops.parameter(ov.PartialShape([1, -1, 8]), ov.Type.f32, name="x")
    h = x
    rng = np.random.default_rng(0)
    for _ in range(blocks):
        mean = ops.reduce_mean(ops.multiply(h, h), ops.constant(np.array([-1], np.int64)), True)
        norm = ops.divide(h, ops.sqrt(ops.add(mean, ops.constant(np.float32(1e-6)))))
        scores = ops.matmul(norm, ops.constant(rng.standard_normal((8, 8)).astype(np.float32)), False, False)
        h = ops.add(h, ops.softmax(scores, -1))
    path = folder / "decoder.xml"
    ov.save_model(ov.Model([ops.result(h)], [x], "decoder"), path, compress_to_fp16=False)
    return path


def test_a_saved_decoder_is_read_by_the_fast_reader_and_identically(tmp_path: Path) -> None:
    path = _decoder(40, tmp_path)
    assert same_or_declined(path.read_bytes(), _weights(path)) is not None


def test_a_compressed_model_s_rt_info_is_read_by_the_patterns(tmp_path: Path) -> None:
    """save_model compresses weights to f16 by default: each Const then feeds a Convert whose rt_info marks it as
    decompression, as in most real IRs; those layers are read by the patterns too."""
    path = _decoder(3, tmp_path)
    compressed = tmp_path / "compressed.xml"
    ov.save_model(ov.Core().read_model(path), compressed)  # compress_to_fp16=True
    xml = compressed.read_bytes()
    assert b'<attribute name="decompression"' in xml
    model = same_or_declined(xml, _weights(compressed))
    assert model is not None
    assert any(r.tag == "attribute" and ("name", "decompression") in r.attrs for x in model.layers for r in x.rt_info)


def test_lines_past_65535_are_the_true_lines(tmp_path: Path) -> None:
    """libxml2 numbers lines past 65,535 one too high (its node keeps 16 bits, then guesses); the fast reader
    counts them: every layer's, port's and edge's line is where its tag starts in the file."""
    path = _decoder(900, tmp_path)
    xml = path.read_bytes()
    assert xml.count(b"\n") > 70_000
    model = fast(xml, _weights(path))
    assert model is not None
    newlines = [m.start() for m in re.finditer(b"\n", xml)]

    def line_of(match: re.Match[bytes]) -> int:  # the newlines before it, plus one
        return bisect.bisect_left(newlines, match.start()) + 1

    starts = {m[1].decode(): line_of(m) for m in re.finditer(rb'<layer id="(\d+)"', xml)}
    assert all(layer.line == starts[layer.id] for layer in model.layers)
    port_lines = [line_of(m) for m in re.finditer(rb"<port ", xml)]
    assert sorted(p.line for layer in model.layers for p in (*layer.inputs, *layer.outputs)) == port_lines  # type: ignore[type-var]
    assert [e.line for e in model.edges] == [line_of(m) for m in re.finditer(rb"<edge ", xml)]


@pytest.mark.parametrize("blanks", ["\n", " \r\n\t\n", "\ufeff\n"], ids=["newline", "blanks", "bom-newline"])
def test_a_declaration_after_blanks_is_read_as_openvino_reads_it(tmp_path: Path, blanks: str) -> None:
    """XML allows its declaration only at the start, and libxml2 refuses it after a newline; pugixml reads past the
    blanks, and OpenVINO reads the file (its own tests write models so, as C++ raw strings). Both readers build the
    model, every line where it is in the file."""
    path = tmp_path / "m.xml"
    path.write_bytes((blanks + _BASE).encode())
    ov.Core().read_model(path)  # OpenVINO reads it
    moved = blanks.count("\n")
    plain = parse_ir(_BASE.encode())
    for model in (parse_ir(path.read_bytes()), careful(declaration_first(path.read_bytes()))):
        assert [layer.line for layer in model.layers] == [(layer.line or 0) + moved for layer in plain.layers]
        assert [(layer.id, layer.type) for layer in model.layers] == [(layer.id, layer.type) for layer in plain.layers]


_DECLARATIONS = {  # where the declaration is, and what stands there instead of '<?xml version="1.0"?>'
    "version-1": '<?xml version="1"?>',
    "version-2.0": '<?xml version="2.0"?>',
    "standalone-maybe": '<?xml version="1.0" standalone="maybe"?>',
    "no-version": '<?xml encoding="UTF-8"?>',
    "empty-encoding": '<?xml version="1.0" encoding=""?>',
    "another-attribute": '<?xml version="1.0" encoding="utf-8" foo="x"?>',
    "empty": "<?xml?>",
    "upper-case": '<?XML version="1.0"?>',
    "after-a-comment": '<!-- exported by tool x --><?xml version="1.0"?>',
    "twice": '<?xml version="1.0"?><?xml version="1.0"?>',
    "over-two-lines": '<?xml version="2.0"\n  encoding="UTF-8"?>',
    "with-markup-in-it": '<?xml version="1.0" note="<a> & --"?>',
}


@pytest.mark.parametrize("declaration", list(_DECLARATIONS.values()), ids=list(_DECLARATIONS))
def test_every_declaration_pugixml_skips_is_read_as_openvino_reads_it(tmp_path: Path, declaration: str) -> None:
    """pugixml skips an XML declaration as any processing instruction, judging nothing in it, wherever it stands;
    libxml2 refuses all but one of version 1.x at the very start. Each file is read, as OpenVINO reads it, with the
    layers, their names and their lines of the file with the usual declaration."""
    path = tmp_path / "m.xml"
    path.write_text(_BASE.replace('<?xml version="1.0"?>', declaration, 1))
    names = sorted(op.get_friendly_name() for op in ov.Core().read_model(path).get_ops())  # OpenVINO reads it
    moved = declaration.count("\n")
    plain = parse_ir(_BASE.encode())
    model = parse_ir(path.read_bytes())
    assert sorted(layer.name for layer in model.layers) == names
    assert [layer.line for layer in model.layers] == [(layer.line or 0) + moved for layer in plain.layers]
    assert [(layer.id, layer.type) for layer in model.layers] == [(layer.id, layer.type) for layer in plain.layers]


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("inside-an-element", ("<layers>", '<layers><?xml version="1.0"?>')),
        ("after-the-root", ("</net>", "</net>\n<?xml?>")),
        ("in-a-comment", ("<layers>", '<layers><!-- <?xml version="9"?> -->')),
        ("another-target", ("<layers>", '<layers><?xml-stylesheet href="a.css"?>')),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_declaration_elsewhere_is_skipped_as_openvino_skips_it(
    tmp_path: Path, where: str, text: tuple[str, str]
) -> None:
    path = tmp_path / "m.xml"
    path.write_text(_BASE.replace(*text, 1))
    names = sorted(op.get_friendly_name() for op in ov.Core().read_model(path).get_ops())
    assert sorted(layer.name for layer in parse_ir(path.read_bytes()).layers) == names


def test_a_latin1_declaration_without_a_version_is_read_in_latin1_as_openvino_reads_it(tmp_path: Path) -> None:
    """pugixml takes latin-1 from a declaration at the very start whatever else it holds (no version here), and the
    names are read in it, as OpenVINO reads them."""
    path = tmp_path / "m.xml"
    text = _BASE.replace('<?xml version="1.0"?>', '<?xml encoding="latin1"?>', 1).replace('name="relu"', 'name="relé"')
    path.write_bytes(text.encode("latin-1"))
    names = {op.get_friendly_name() for op in ov.Core().read_model(path).get_ops()}
    assert "relé" in names
    assert "relé" in {layer.name for layer in parse_ir(path.read_bytes()).layers}


def test_a_file_with_an_odd_declaration_and_another_fault_is_refused_for_that_fault(tmp_path: Path) -> None:
    """Read again with its declaration as a comment, a file libxml2 refuses for something else says what that is,
    where it is."""
    xml = _BASE.replace('<?xml version="1.0"?>', '<?xml version="2.0"?>', 1).replace("</layers>", "</layer>", 1)
    with pytest.raises(IRSyntaxError, match=r"line [0-9]+, column [0-9]+: Opening and ending tag mismatch"):
        parse_ir(xml.encode())


# Valid documents in other layouts than the serializer's: each is read the same way, by whichever path takes it.
_BASE = chain()


def _variants() -> dict[str, str]:
    two = [parameter(0, dims=(1, 3)), layer(1, "r", "ReLU", inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))])]
    two.append(result(2, dims=(1, 3)))
    edges = [edge(0, 0, 1, 0), edge(1, 1, 2, 0)]
    plain = net(two, edges)
    return {
        "hand-written": plain,
        "attributes reordered": plain.replace(
            '<layer id="1" name="r" type="ReLU"', '<layer name="r" id="1" type="ReLU"'
        ),
        "single quotes": plain.replace('name="r"', "name='r'"),
        "an escaped name": plain.replace('name="r"', 'name="a&amp;b &lt;c&gt; &#x263A;"'),
        "a newline in a value": plain.replace('name="r"', 'name="a&#10;b"'),
        "a tab in a value": plain.replace('name="r"', 'name="a\tb"'),
        "spaces around =": plain.replace('id="1" name="r"', 'id = "1"  name="r"'),
        "a start tag over two lines": plain.replace('id="1" name="r"', 'id="1"\nname="r"'),
        "CRLF line ends": plain.replace("\n", "\r\n"),
        "a comment": plain.replace("<layers>", "<layers><!-- c -->"),
        "CDATA": plain.replace("<dim>3</dim>", "<dim><![CDATA[3]]></dim>", 1),
        "a comment in a layer": plain.replace("<input>", "<input><!-- <port id='9'/> -->", 1),
        "a processing instruction in a layer": plain.replace("<input>", "<input><?pi x?>", 1),
        "a comment among the edges": plain.replace("<edges>", "<edges><!-- e -->"),
        "a comment after the root": plain + "<!-- end -->\n",
        "a processing instruction after the root": plain + "<?pi end?>\n",
        "layer rt_info": plain.replace(
            "</layer>", '<rt_info><attribute name="fused_names" version="0" value="r"/></rt_info></layer>', 1
        ),
        "layer rt_info where the serializer writes it": plain.replace(
            '<data shape="1,3" element_type="f32"/>',
            '<data shape="1,3" element_type="f32"/><rt_info><attribute name="a" version="0" value="&lt;"/>'
            '<attribute name="b" version="0"/></rt_info>',
        ),
        "port rt_info": plain.replace(
            "</port>", '<rt_info><attribute name="layout" version="0" layout="[N,C]"/></rt_info></port>', 1
        ),
        "escaped comma in names": plain.replace('names="x"', 'names="a\\,b,c"'),
        "spaces in a dim": plain.replace("<dim>3</dim>", "<dim> 3 </dim>", 1),
        "a 19-digit dim": plain.replace("<dim>3</dim>", "<dim>1000000000000000000</dim>"),
        "an unusual precision": plain.replace('precision="FP32"', 'precision="f32"'),
        "no precision on an input port": plain.replace(
            '<input><port id="0" precision="FP32">', '<input><port id="0">', 1
        ),
        "data after ports": plain.replace('<data shape="1,3" element_type="f32"/>\n', "", 1).replace(
            "</output>\n", '</output>\n<data shape="1,3" element_type="f32"/>\n', 1
        ),
        "empty data element": plain.replace("<data ", "<data></data><data ", 1),
        "two data elements": plain.replace(
            '<data shape="1,3" element_type="f32"/>', '<data shape="1,3"/><data element_type="f32"/>'
        ),
        "extra layer attributes": plain.replace('type="ReLU" version="opset1"', 'type="ReLU" version="opset1" x="1"'),
        "an XML declaration with an encoding": plain.replace(
            '<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-8"?>'
        ),
        "a Latin-1 document": plain.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="ISO-8859-1"?>'),
        "a BOM": "\ufeff" + plain,
        "no XML declaration": plain.replace('<?xml version="1.0"?>\n', ""),
        "model rt_info": _BASE.replace("</net>", '<rt_info><info name="x" value="1"/></rt_info></net>'),
        "meta data": _BASE.replace(
            "</net>", '<meta_data><x value="1"/><cli_parameters><y/></cli_parameters></meta_data>\n</net>'
        ),
        "no edges element": net([parameter(0, dims=(1, 3))]).replace("<edges>\n\n</edges>\n", ""),
        "self-closing edges": net([parameter(0, dims=(1, 3))]).replace("<edges>\n\n</edges>", "<edges/>"),
        "edge attributes reordered": plain.replace(
            '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
            '<edge to-layer="1" to-port="0" from-layer="0" from-port="0"/>',
        ),
        "a scalar const": net([const(0, "c", shape="", size="4", dims=[])]).replace("<edges>", "<edges>"),
        "a Convert": net(
            [
                parameter(0, dims=(1, 3)),
                layer(
                    1,
                    "cv",
                    "Convert",
                    data={"destination_type": "i64"},
                    inputs=[port(0, (1, 3))],
                    outputs=[port(1, (1, 3), "I64")],
                ),
            ],
            [edge(0, 0, 1, 0)],
        ),
    }


VARIANTS = _variants()


# Read by the fast reader (the others are in no grammar of its own, and left to the careful reader).
_FAST = {
    "hand-written", "no precision on an input port", "extra layer attributes", "an XML declaration with an encoding",
    "a BOM", "no XML declaration", "model rt_info", "meta data", "no edges element", "a scalar const", "a Convert",
}  # fmt: skip


@pytest.mark.parametrize("name", list(VARIANTS))
def test_other_layouts_build_the_same_model(name: str) -> None:
    xml = VARIANTS[name].encode("latin-1" if "Latin-1" in name else "utf-8")
    weights = Weights(bytes(64)) if "const" in name else None
    got = same_or_declined(xml, weights)
    assert (got is not None) >= (name in _FAST)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_no_malformed_file_is_accepted(case: Case) -> None:
    weights = Weights(case.bin) if case.bin is not None else None
    assert fast(case.xml, weights) is None


_NOT_WELL_FORMED = {
    "a duplicate attribute": (
        '<data shape="1,3" element_type="f32"/>',
        '<data shape="1,3" shape="1,3" element_type="f32"/>',
    ),
    "invalid UTF-8 in a name": ('name="r1"', 'name="r\udcff"'),
    "text after the root": ("</net>\n", "</net>\nx"),
    "a second root": ("</net>\n", "</net>\n<net/>"),
    "an undefined entity": ('name="r1"', 'name="&nbsp;"'),
}


@pytest.mark.parametrize("name", list(_NOT_WELL_FORMED))
@pytest.mark.parametrize("big", [False, True], ids=["small", "checked-on-a-thread"])
def test_what_libxml2_refuses_is_refused_even_where_the_patterns_match(name: str, big: bool) -> None:
    """The patterns alone would accept these; libxml2's verdict (on a thread for a large file) refuses them."""
    old, new = _NOT_WELL_FORMED[name]
    text = _relus(1999 if big else 1)
    assert (len(text) >= fast_reader._THREAD_FROM) == big
    valid = text.encode()
    assert fast(valid) is not None
    bad = text.replace(old, new, 1).encode("utf-8", "surrogateescape")
    assert bad != valid
    assert fast(bad) is None
    with pytest.raises(IRSyntaxError, match=r"model\.xml: not well-formed XML at line \d+"):
        parse_ir(bad, source="model.xml")


@pytest.mark.parametrize("written", ["r\x01", "r&#1;", "r&#x1b;[0m", "r&#0;x", "r\ufffe"])
@pytest.mark.parametrize("big", [False, True], ids=["small", "checked-on-a-thread"])
def test_characters_xml_refuses_and_openvino_reads_are_read_by_the_careful_reader(written: str, big: bool) -> None:
    """A control character (raw or a reference, as OpenVINO's serializer writes one), NUL by reference, U+FFFE: the
    fast reader declines the file (libxml2 refuses it); the careful reader reads the name as OpenVINO reads it."""
    text = _relus(1999 if big else 1).replace('name="r1"', f'name="{written}"', 1)
    assert fast(text.encode()) is None
    model = parse_ir(text.encode(), source="model.xml")
    expected = {"r\x01": "r\x01", "r&#1;": "r\x01", "r&#x1b;[0m": "r\x1b[0m", "r&#0;x": "r", "r\ufffe": "r\ufffe"}
    assert [layer.name for layer in model.layers if layer.id == "1"] == [expected[written]]


def _relus(length: int) -> str:
    """Parameter -> ``length`` ReLUs -> Result, f32[1,3] throughout."""
    relus = [
        layer(i, f"r{i}", "ReLU", inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]) for i in range(1, length + 1)
    ]
    edges = [edge(i, 0 if i == 0 else 1, i + 1, 0) for i in range(length + 1)]
    return net([parameter(0, dims=(1, 3)), *relus, result(length + 1, dims=(1, 3))], edges)


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(0, 12),
    indent=st.sampled_from(["", "\n", "\n\t\t", "  "]),
    names=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=6), max_size=3),
    dims=st.lists(st.sampled_from(["1", "-1", "3", "0", "224"]), max_size=4),
)
def test_generated_chains_build_the_same_model(length: int, indent: str, names: list[str], dims: list[str]) -> None:
    text = _relus(length).replace("<dim>1</dim><dim>3</dim>", "".join(f"<dim>{d}</dim>" for d in dims))
    text = text.replace("><", f">{indent}<")
    if names:
        text = text.replace('names="x"', f"names={quoteattr(','.join(names))}", 1)
    try:
        careful(text.encode())
    except IRError:
        assert fast(text.encode()) is None  # what the careful path refuses, the fast one declines
        return
    same_or_declined(text.encode())
