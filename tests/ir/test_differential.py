"""Three readers of the same bytes: the fast reader, the careful reader and OpenVINO's ``read_model``.

A generated corpus crosses layout variants (line ends, blanks, comments, processing instructions, character
references, quotes, attribute order, BOM, encodings, long runs at chunk boundaries) with semantic variants (names
with namespaces, duplicate elements, ids, dim syntax, Parameter shapes, tensor names, sections, bodies). On every
file: the two ovreduce readers build equal models (or the fast one declines), and ``check``'s verdict follows
OpenVINO's reading: where OpenVINO reads the file, ovreduce reads it too and infers every reduction's output shape
as OpenVINO does, and finds as many reductions; where OpenVINO refuses it, ovreduce refuses it or finds an error.
The few files ovreduce refuses on purpose though OpenVINO reads them are :data:`REFUSED_ON_PURPOSE`, each with the
reason the documentation gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovreduce import IRError
from ovreduce.check import check_model
from ovreduce.ir.build import Builder, ParseLimits
from ovreduce.ir.careful import read_careful
from ovreduce.ir.fast import read_fast
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import gc_paused, parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.shapes import PartialShape
from tests.api.irs import reduce_ir

from . import subgraphs

AXES = np.array([1], np.int64).tobytes()

BASE = reduce_ir("rm", op="ReduceMean", shape="2,3,4", dims=(2, 3, 4), keep_dims=True)[0].decode()
RM_DATA = '<data keep_dims="true"/>'
RM_OUT = '<output><port id="2" precision="FP32"><dim>2</dim><dim>1</dim><dim>4</dim></port></output>'
RM_IN = """<input><port id="0" precision="FP32"><dim>2</dim><dim>3</dim><dim>4</dim></port>
<port id="1" precision="I64"><dim>1</dim></port></input>"""
X_DATA = '<data shape="2,3,4" element_type="f32"/>'


def _sub(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    def apply(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)

    return apply


def _chain(*steps: Callable[[str], str]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        for step in steps:
            text = step(text)
        return text

    return apply


# What the file means, each a change of BASE that OpenVINO reads one way or refuses.
SEMANTIC: dict[str, Callable[[str], str]] = {
    "as written": lambda t: t,
    "keep_dims false": _sub('keep_dims="true"', 'keep_dims="false"'),
    "keep_dims True": _sub('keep_dims="true"', 'keep_dims="True"'),
    "keep_dims 1": _sub('keep_dims="true"', 'keep_dims="1"'),
    "keep_dims with a blank": _sub('keep_dims="true"', 'keep_dims=" true"'),
    "keep_dims yes": _sub('keep_dims="true"', 'keep_dims="yes"'),
    "no keep_dims": _sub(RM_DATA, "<data/>"),
    "an xml: prefixed attribute": _sub(RM_DATA, '<data xml:keep_dims="true"/>'),
    "an xml: prefixed shape beside the plain one": _sub(
        X_DATA, '<data shape="2,3,4" xml:shape="5,3,4" element_type="f32"/>'
    ),
    "an id with 21 digits, leading zeros": _sub('<layer id="2"', '<layer id="000000000000000000002"'),
    "a dim with leading zeros": _sub("<dim>3</dim>", "<dim>00000000000000000000003</dim>"),
    "the type in lower case": _sub('type="ReduceMean"', 'type="reducemean"'),
    "the type in upper case": _sub('type="ReduceMean"', 'type="REDUCEMEAN"'),
    "a default namespace on <data>": _sub(RM_DATA, '<data xmlns="urn:x" keep_dims="true"/>'),
    "a prefixed <data>": _sub(RM_DATA, '<p:data xmlns:p="urn:x" keep_dims="true"/>'),
    "a prefixed <data> before the plain one": _sub(
        RM_DATA, '<p:data xmlns:p="urn:x" keep_dims="false"/><data keep_dims="true"/>'
    ),
    "a prefixed attribute": _sub(RM_DATA, '<data xmlns:p="urn:x" p:keep_dims="true"/>'),
    "a default namespace on <net>": _sub('<net name="m"', '<net xmlns="urn:x" name="m"'),
    "a default namespace on <port>": _sub('<port id="2"', '<port xmlns="urn:x" id="2"'),
    "a default namespace on <edges>": _sub("<edges>", '<edges xmlns="urn:x">'),
    "a default namespace on <dim>": _sub("<dim>3</dim>", '<dim xmlns="urn:x">3</dim>'),
    "two <data>, the first wins": _sub(RM_DATA, '<data keep_dims="false"/><data keep_dims="true"/>'),
    "an empty <data> first": _sub(RM_DATA, '<data/><data keep_dims="true"/>'),
    "two <output>, the first wins": _sub(
        RM_OUT, RM_OUT + '<output><port id="7" precision="FP32"><dim>9</dim></port></output>'
    ),
    "two <input>, the first wins": _sub(RM_IN, RM_IN + "<input/>"),
    "two <rt_info>": _sub(
        RM_DATA,
        RM_DATA + '<rt_info><attribute name="fused_names" version="0" value="a"/></rt_info><rt_info/>',
    ),
    "id 02 with edges saying 2": _sub('<layer id="2"', '<layer id="02"'),
    "edges saying 02": _sub('to-layer="2" to-port="0"', 'to-layer="02" to-port="0"'),
    "ids with a plus and blanks": _chain(
        _sub('<layer id="2"', '<layer id="+2"'), _sub('from-layer="1"', 'from-layer=" 1"')
    ),
    "port id 002": _chain(_sub('<port id="2"', '<port id="002"'), _sub('from-port="2"', 'from-port="2"')),
    "a layer id with a trailing blank": _sub('<layer id="2"', '<layer id="2 "'),
    "a negative layer id": _sub('<layer id="2"', '<layer id="-2"'),
    "a hexadecimal layer id": _sub('<layer id="2"', '<layer id="0x2"'),
    "dim +1": _sub("<dim>1</dim></port></output>", "<dim>+1</dim></port></output>"),
    "dim 1.0": _sub("<dim>1</dim></port></output>", "<dim>1.0</dim></port></output>"),
    "dim with blanks": _sub("<dim>3</dim>", "<dim> 3 </dim>"),
    "dim as a character reference": _sub("<dim>3</dim>", "<dim>&#51;</dim>"),
    "dim in CDATA": _sub("<dim>3</dim>", "<dim><![CDATA[3]]></dim>"),
    "dim then a CDATA section": _sub("<dim>3</dim>", "<dim>3<![CDATA[9]]></dim>"),
    "dim in CDATA then text": _sub("<dim>3</dim>", "<dim><![CDATA[3]]>9</dim>"),
    "dim sign then a CDATA section": _sub("<dim>3</dim>", "<dim>-<![CDATA[5]]></dim>"),
    "dim blanks, CDATA, text": _sub("<dim>3</dim>", "<dim> <![CDATA[3]]>9</dim>"),
    "dim after a comment": _sub("<dim>3</dim>", "<dim><!-- c -->3</dim>"),
    "dim split by a comment": _sub("<dim>3</dim>", "<dim>3<!-- c -->9</dim>"),
    "dim ?": _sub("<dim>3</dim>", "<dim>?</dim>"),
    "dim -2": _sub("<dim>3</dim>", "<dim>-2</dim>"),
    "an empty dim": _sub("<dim>3</dim>", "<dim></dim>"),
    "a Parameter without shape": _sub(X_DATA, '<data element_type="f32"/>'),
    "a Parameter with shape ?": _sub(X_DATA, '<data shape="?" element_type="f32"/>'),
    "a Parameter with shape [2,3,4]": _sub(X_DATA, '<data shape="[2,3,4]" element_type="f32"/>'),
    "a Parameter with dynamic rank": _sub(X_DATA, '<data shape="..." element_type="f32"/>'),
    "a Parameter without element_type": _sub(X_DATA, '<data shape="2,3,4"/>'),
    "a Parameter without <data>": _sub(X_DATA, ""),
    "port dims that disagree with the Parameter": _sub(
        "<dim>2</dim><dim>3</dim><dim>4</dim></port></output>", "<dim>7</dim></port></output>"
    ),
    "names with empty fields": _sub('names="x"', 'names=",x,,z,"'),
    "names with an escaped comma": _sub('names="x"', 'names="x\\,z,w"'),
    "an output port without precision": _sub('<port id="2" precision="FP32"', '<port id="2"'),
    "an input port with an unknown precision": _sub('<port id="1" precision="I64"', '<port id="1" precision="XYZ"'),
    "an unknown element in <layers>": _sub("<layers>", "<layers><note/>"),
    "an unknown element in <input>": _sub(RM_IN, RM_IN.replace("<input>", "<input><note/>")),
    "an unknown element in <edges>": _sub("<edges>", "<edges><note/>"),
    "a second, empty <layers>": _sub("</layers>", "</layers><layers/>"),
    "a second <edges>": _sub(
        "</edges>", '</edges><edges><edge from-layer="9" from-port="0" to-layer="3" to-port="0"/></edges>'
    ),
    "an empty <edges> first": _sub("<edges>", "<edges/><edges>"),
    "the root <NET>": _chain(_sub("<net ", "<NET "), _sub("</net>", "</NET>")),
    "net version 011": _sub('version="11">', 'version="011">'),
    "net version with a trailing blank": _sub('version="11">', 'version="11 ">'),
    "const offset +0": _sub('offset="0"', 'offset="+0"'),
    # characters XML 1.0 has no place for, which pugixml reads (OpenVINO's serializer writes a control character of a
    # name or an rt_info value as a reference)
    "a reference to ESC in a name": _sub('name="rm"', 'name="r&#27;[0m"'),
    "a reference to a control character in a name": _sub('name="rm"', 'name="&#1;rm&#x1F;"'),
    "a reference to NUL in a name": _sub('name="rm"', 'name="rm&#0;x"'),
    "a reference to NUL in a dim": _sub("<dim>3</dim>", "<dim>3&#x0;9</dim>"),
    "a raw control character in a name": _sub('name="rm"', 'name="r\x01m\x1b"'),
    "a raw U+FFFE in a name": _sub('name="rm"', 'name="r\ufffem"'),
    "a reference to U+FFFF in a name": _sub('name="rm"', 'name="r&#xFFFF;m"'),
    "a control character in the model's rt_info": _sub(
        "</net>", '<rt_info><note value="a&#27;[1m\x02"/></rt_info></net>'
    ),
    "a control character in a tensor name": _sub('names="x"', 'names="x&#7;"'),
    "a second BOM": lambda t: "\ufeff\ufeff" + t,
    # the legacy <meta_data>, read where there is no <rt_info>: each element with a value but <cli_parameters>
    "legacy meta_data": _sub(
        "</net>",
        '<meta_data><MO_version value="2022.3"/><cli_parameters><input value="x"/></cli_parameters>'
        '<framework value=""/></meta_data><quantization_parameters><config>x</config></quantization_parameters></net>',
    ),
    "legacy meta_data, an element without a value": _sub("</net>", "<meta_data><framework/></meta_data></net>"),
    "legacy meta_data, a Value": _sub("</net>", '<meta_data><framework Value="x"/></meta_data></net>'),
    "legacy meta_data, text": _sub("</net>", "<meta_data>x</meta_data></net>"),
    "legacy meta_data, text after an element": _sub(
        "</net>", '<meta_data><a value="1"/>x<b value="2"/></meta_data></net>'
    ),
    "legacy meta_data, blanks and a comment": _sub(
        "</net>", '<meta_data>\n\t<!-- c --><a value="1"/> \r\n</meta_data></net>'
    ),
    "legacy meta_data, CDATA": _sub("</net>", "<meta_data><![CDATA[x]]></meta_data></net>"),
    "legacy meta_data beside rt_info": _sub("</net>", "<meta_data><framework/></meta_data><rt_info/></net>"),
    "a second legacy meta_data": _sub("</net>", "<meta_data/><meta_data><framework/></meta_data></net>"),
    # size, offset and element_type, read on a layer of any type that has all three (where its weights are)
    **{
        f"a ReduceMean's size={size!r} offset={offset!r} element_type={etype!r}": _sub(
            RM_DATA, f'<data keep_dims="true" size="{size}" offset="{offset}" element_type="{etype}"/>'
        )
        for size, offset, etype in [
            ("1", "0", "f32"),
            ("+1", " 0", "BF16"),
            ("-0", "00", "undefined"),
            ("-1", "0", "f32"),
            ("abc", "0", "f32"),
            ("1 ", "0", "f32"),
            ("", "0", "f32"),
            ("9223372036854775808", "0", "f32"),
            ("1", "-5", "f32"),
            ("1", "0", "zz"),
            ("1", "0", "F32"),
            ("1", "0", "f32 "),
            ("1", "0", "bin"),
        ]
    },
    "a ReduceMean's bad size and offset without element_type": _sub(
        RM_DATA, '<data keep_dims="true" size="abc" offset="-1"/>'
    ),
    "a Parameter's size abc": _sub(X_DATA, '<data shape="2,3,4" element_type="f32" size="abc" offset="0"/>'),
    "a Parameter's size 24": _sub(X_DATA, '<data shape="2,3,4" element_type="f32" size="24" offset="0"/>'),
    "a port precision bin": _sub('<port id="2" precision="FP32"', '<port id="2" precision="bin"'),
    "a prefixed meta_data": _sub("</net>", '<p:meta_data xmlns:p="urn:x"><framework/></p:meta_data></net>'),
}

# Files ovreduce refuses on purpose though OpenVINO reads them: not well-formed XML (libxml2 refuses it; pugixml,
# OpenVINO's parser, reads past it), or a document whose meaning OpenVINO silently changes.
REFUSED_ON_PURPOSE: dict[str, Callable[[str], str]] = {
    "an undeclared prefix": _sub(RM_DATA, '<p:data keep_dims="true"/>'),
    "a duplicate attribute": _sub(RM_DATA, '<data keep_dims="false" keep_dims="true"/>'),
    "an undefined entity": _sub('name="rm"', 'name="r&nbsp;m"'),
    "text after the root": lambda t: t + "x",
    "a second root": lambda t: t + "<net/>",
    "a duplicate layer id": _sub(
        "</layers>",
        '<layer id="0" name="x2" type="Parameter" version="opset1"><data shape="2,3,4" element_type="f32"/>'
        '<output><port id="0" precision="FP32"/></output></layer></layers>',
    ),
    "an edge to a layer that does not exist": _sub(
        "</edges>", '<edge from-layer="2" from-port="2" to-layer="9" to-port="0"/></edges>'
    ),
}

_CHUNK = 1 << 16


def _between_layers(fill: str) -> Callable[[str], str]:
    return lambda t: t.replace("</layer>\n<layer", f"</layer>{fill}<layer")


# How the file is written, each keeping its meaning.
LAYOUT: dict[str, Callable[[str], str]] = {
    "LF": lambda t: t,
    "CRLF": lambda t: t.replace("\n", "\r\n"),
    "CR": lambda t: t.replace("\n", "\r"),
    "tabs": lambda t: t.replace("\n<", "\n\t\t<"),
    "comments between elements": lambda t: t.replace(">\n<", ">\n<!-- a <layer> -->\n<"),
    "processing instructions": lambda t: t.replace(">\n<", "><?pi x?>\n<"),
    "a run of CRLFs across a chunk boundary": _between_layers("\r\n" * 40_000),
    "a run of character references": _between_layers("&#32;" * 30_000),
    "a run of comments": _between_layers("<!--c-->" * 10_000),
    "a run of tabs and CRs": _between_layers("\t\r" * 50_000),
    "single quotes": lambda t: t.replace('name="rm"', "name='rm'"),
    "attributes in another order": lambda t: t.replace(
        '<layer id="2" name="rm" type="ReduceMean"', '<layer type="ReduceMean" name="rm" id="2"'
    ),
    "a BOM": lambda t: "\ufeff" + t,
    "UTF-16": lambda t: t.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>'),
}


def _encode(layout: str, text: str) -> bytes:
    return text.encode("utf-16") if layout == "UTF-16" else text.encode()


def _openvino(xml: bytes, weights: bytes) -> ov.Model | None:
    try:
        return ov.Core().read_model(model=xml, weights=ov.Tensor(np.frombuffer(weights, np.uint8).copy()))
    except RuntimeError:
        return None


def _reductions(model: ov.Model) -> Iterator[ov.Node]:
    for op in model.get_ordered_ops():
        if op.get_type_name().startswith("Reduce"):
            yield op
        if op.get_type_name() == "If":
            yield from _reductions(op.get_then_body())
            yield from _reductions(op.get_else_body())
        elif op.get_type_name() in ("Loop", "TensorIterator"):
            yield from _reductions(op.get_function())


def _careful(xml: bytes, weights: Weights) -> IRModel:
    with gc_paused():
        return read_careful(xml, Builder("model.xml", weights, None, ParseLimits()))


def _fast(xml: bytes, weights: Weights) -> IRModel | None:
    with gc_paused():
        return read_fast(xml, Builder("model.xml", weights, None, ParseLimits()))


# Findings about what the file declares and OpenVINO ignores (port dims, precisions): the file says something
# else than what OpenVINO computes. Any other error finding is about the model itself.
DECLARATIONS = frozenset(
    {
        "reduce-output-mismatch",
        "edge-dims-mismatch",
        "edge-precision-mismatch",
        "parameter-shape-mismatch",
        "const-shape-mismatch",
        "precision-mismatch",
    }
)


def assert_follows_openvino(xml: bytes, weights: bytes, *, on_purpose: bool = False) -> None:
    """The two readers agree, and check's verdict follows OpenVINO's reading of ``xml``."""
    ov_model = _openvino(xml, weights)
    bin_file = Weights(weights)
    try:
        model = _careful(xml, bin_file)
    except IRError:
        assert _fast(xml, bin_file) is None  # what the careful reader refuses, the fast one declines
        assert on_purpose or ov_model is None, "OpenVINO reads this file; ovreduce refused it"
        return
    assert not on_purpose, "ovreduce read a file it refuses on purpose"
    fast = _fast(xml, bin_file)
    if fast is not None:
        assert fast == model
        assert dict(fast._by_id) == dict(model._by_id) and dict(fast._producer) == dict(model._producer)
    assert parse_ir(xml, bin_file, source="model.xml") == model
    report = check_model(model)
    about_the_model = [f.message for f in report.findings if f.severity == "error" and f.code not in DECLARATIONS]
    if ov_model is None:
        assert about_the_model, "OpenVINO refuses this model; check found nothing wrong with it"
        return
    assert not about_the_model
    expected = {op.get_friendly_name(): PartialShape.parse(str(op.get_output_partial_shape(0))) for op in
                _reductions(ov_model)}  # fmt: skip
    got = {r.layer_name: PartialShape.from_json(r.inferred_output_shape) for r in report.reductions}
    assert got == expected
    stale = {f.layer_name for f in report.findings if f.code == "reduce-output-mismatch"}
    for r in report.reductions:
        declared = PartialShape.from_json(r.declared_output_shape)
        assert (r.layer_name in stale) == (r.declared_has_dims and not declared.compatible(expected[r.layer_name]))


@pytest.mark.parametrize("layout", list(LAYOUT))
@pytest.mark.parametrize("meaning", list(SEMANTIC))
def test_check_follows_openvino_s_reading(meaning: str, layout: str) -> None:
    text = LAYOUT[layout](SEMANTIC[meaning](BASE))
    assert_follows_openvino(_encode(layout, text), AXES)


@pytest.mark.parametrize("layout", ["LF", "CRLF", "comments between elements"])
@pytest.mark.parametrize("meaning", list(REFUSED_ON_PURPOSE))
def test_what_is_refused_on_purpose_is_refused_in_every_layout(meaning: str, layout: str) -> None:
    text = LAYOUT[layout](REFUSED_ON_PURPOSE[meaning](BASE))
    assert _openvino(_encode(layout, text), AXES) is not None  # OpenVINO reads it: the docs list it
    assert_follows_openvino(_encode(layout, text), AXES, on_purpose=True)


@pytest.fixture(scope="module")
def if_ir(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes]:
    path = subgraphs.save(subgraphs.if_model(), tmp_path_factory.mktemp("if"), "model")
    return path.read_text(), path.with_suffix(".bin").read_bytes()


BODY_SEMANTIC: dict[str, Callable[[str], str]] = {
    "as written": lambda t: t,
    "a default namespace on <then_body>": _sub("<then_body>", '<then_body xmlns="urn:x">'),
    "a prefixed <then_body>": _chain(
        _sub("<then_body>", '<p:then_body xmlns:p="urn:x">'), _sub("</then_body>", "</p:then_body>")
    ),
    "a default namespace on a body's <dim>": _sub("<then_body>", '<then_body xmlns="urn:x">'),
    "a second <then_body>": _sub("</then_body>", "</then_body><then_body><layers/></then_body>"),
    "an unknown element in a body's <layers>": _sub("<then_body>\n\t\t\t\t<layers>", "<then_body><layers><x/>"),
    "a body's legacy meta_data": _sub("</then_body>", '<meta_data><framework value="x"/></meta_data></then_body>'),
    "a body's legacy meta_data, an element without a value": _sub(
        "</then_body>", "<meta_data><framework/></meta_data></then_body>"
    ),
    "a body's legacy meta_data without its rt_info, an element without a value": lambda t: _without_body_rt_info(
        t.replace("</then_body>", "<meta_data><framework/></meta_data></then_body>", 1)
    ),
    "a body's legacy meta_data without its rt_info": lambda t: _without_body_rt_info(
        t.replace("</then_body>", '<meta_data><framework value="x"/></meta_data></then_body>', 1)
    ),
}


def _without_body_rt_info(text: str) -> str:
    """``text`` without the ``<rt_info />`` the serializer writes in ``<then_body>``."""
    head, body = text.split("<then_body>", 1)
    body, tail = body.split("</then_body>", 1)
    assert body.count("<rt_info />") == 1, body
    return f"{head}<then_body>{body.replace('<rt_info />', '')}</then_body>{tail}"


@pytest.mark.parametrize(
    "layout", ["LF", "CRLF", "comments between elements", "a run of CRLFs across a chunk boundary"]
)
@pytest.mark.parametrize("meaning", list(BODY_SEMANTIC))
def test_bodies_follow_openvino_s_reading(meaning: str, layout: str, if_ir: tuple[str, bytes]) -> None:
    text, weights = if_ir
    assert_follows_openvino(LAYOUT[layout](BODY_SEMANTIC[meaning](text)).encode(), weights)


@pytest.mark.parametrize(
    "fill",
    ["\r\n", "\r", "\t", "&#32;", "&#x20;", "<!---->", "<?p?>", " \r\n\t"],
    ids=["CRLF", "CR", "tab", "decimal-ref", "hex-ref", "comment", "pi", "mixed"],
)
@pytest.mark.parametrize("where", ["between layers", "inside a layer", "before </layers>", "among the edges"])
@pytest.mark.parametrize("size", [_CHUNK - 7, 3 * _CHUNK + 1, 3 << 20])
def test_long_runs_anywhere_never_crash_and_read_the_same_model(fill: str, where: str, size: int) -> None:
    """Runs of whatever lies between elements, up to a few MB, across the careful reader's chunk boundaries: the same
    model as without them (libxml2's in-place text appends once wrote into freed memory here)."""
    run = fill * (size // len(fill))
    anchor = {
        "between layers": '</layer>\n<layer id="2"',
        "inside a layer": RM_DATA,
        "before </layers>": "</layers>",
        "among the edges": '\n<edge from-layer="1"',
    }[where]
    text = BASE.replace(anchor, run + anchor if where != "inside a layer" else anchor + run, 1)
    if fill.startswith("&") and where == "inside a layer":
        text = text.replace(RM_DATA + run, RM_DATA + " " * len(run), 1)  # text inside <layer> is no reference
    want = _careful(BASE.encode(), Weights(AXES))
    got = _careful(text.encode(), Weights(AXES))
    assert [(x.id, x.name, x.data, x.outputs[0].dims if x.outputs else ()) for x in got.layers] == [
        (x.id, x.name, x.data, x.outputs[0].dims if x.outputs else ()) for x in want.layers
    ]
    assert [e[:4] for e in got.edges] == [e[:4] for e in want.edges]


def _with_rt_info(items: str, where: str, version: str = "11") -> str:
    """tests.ir.irxml.chain with ``items`` in the <rt_info> of the ReLU layer, or of its output port."""
    from .irxml import chain

    xml = chain(version=version)
    if where == "layer":
        return xml.replace('type="ReLU" version="opset1">', f'type="ReLU" version="opset1"><rt_info>{items}</rt_info>')
    return xml.replace('<port id="1" precision="FP32">', f'<port id="1" precision="FP32"><rt_info>{items}</rt_info>')


def _both_read(xml: str, path: Path) -> tuple[str | None, IRModel | IRError]:
    """OpenVINO's refusal of ``xml`` (None: it reads it), and ovreduce's model or refusal; ovreduce reads what
    OpenVINO reads."""
    path.write_text(xml)
    try:
        ov.Core().read_model(path)
        refused = None
    except RuntimeError as exc:
        refused = str(exc)
    try:
        ours: IRModel | IRError = parse_ir(xml.encode())
    except IRError as exc:
        ours = exc
    assert refused is not None or isinstance(ours, IRModel), ours
    return refused, ours


def _attribute(name: str, version: str = "0", value: str = "a", tag: str = "attribute") -> str:
    return f'<{tag} name="{name}" version="{version}" value="{value}"/>'


@pytest.mark.parametrize("where", ["layer", "port"])
@pytest.mark.parametrize(
    ("items", "version"),
    [(_attribute("fused_names") * 2, "11"), (_attribute("old_api_map_order", value="0,1") * 2, "11"),
     (_attribute("layout", value="[N,C]") * 2, "11"), (_attribute("precise") + _attribute("precise", value=""), "11"),
     (_attribute("nms_selected_indices"), "11"),
     (_attribute("fused_names") * 2, "10"),  # an IR v10's runtime attributes are not read
     (_attribute("fused_names", version="1") * 2, "11"),  # a version OpenVINO does not know: skipped
     (_attribute("my_own_note") * 2, "11"), (_attribute("fused_names") + _attribute("layout", value="[N,C]"), "11"),
     # OpenVINO looks at the <attribute> elements only
     (_attribute("fused_names", tag="foo") * 2, "11"), (_attribute("nms_selected_indices", tag="foo"), "11"),
     (_attribute("decompression", tag="info") * 2, "11"), (_attribute("fused_names", tag="Attribute") * 2, "11"),
     (_attribute("old_api_map_order", value="x,y", tag="foo"), "11"),
     (_attribute("fused_names", tag="foo") + _attribute("fused_names"), "11"),
     (_attribute("memory_type") * 2, "11"), (_attribute("DisableConstantFolding"), "11"),
     (_attribute("strides_propagation"), "11"), (_attribute("disabled_constant_folding") * 2, "11")],
    ids=["fused_names-twice", "old_api_map_order-twice", "layout-twice", "precise-twice", "nms_selected_indices",
         "v10", "unknown-version", "unknown-name", "two-names", "other-element-twice", "other-element-unreadable",
         "info-element-twice", "capital-Attribute-twice", "other-element-unparsable", "other-element-and-attribute",
         "memory_type-twice", "DisableConstantFolding", "strides_propagation", "an-old-name-twice"],
)  # fmt: skip
def test_runtime_attributes_are_read_as_openvino_reads_them(
    items: str, version: str, where: str, tmp_path: Path
) -> None:
    """OpenVINO reads the runtime attributes it knows from a layer's or port's <rt_info> and refuses one given twice,
    or one it knows and cannot read; it skips the others, and reads none in an IR v10."""
    refused, ours = _both_read(_with_rt_info(items, where, version), tmp_path / "m.xml")
    if refused is not None:
        assert isinstance(ours, IRError) and "OpenVINO refuses the model" in ours.message, ours
        said = [line for line in refused.splitlines() if line.strip()][-1]  # OpenVINO's words, in ours
        assert f"the runtime attribute {items.split(chr(34))[1]!r}" in ours.message and said in ours.message


# The values OpenVINO parses, each attribute's texts: some it reads, some it refuses.
ATTRIBUTE_VALUES = {
    "old_api_map_order": ["0,3,1,2", "x,y", "-1,0", "+1", "-0", "99999999999999999999", "18446744073709551615",
                          "18446744073709551616", "1,,2", ",1", "1,", "", " ", "1.5", "0x1", " 1", "1 , 2"],
    "old_api_map_element_type": ["f32", "zz", "F32", "FP32", " f32", "", "undefined", "dYnAmIc", "nf4", "f16,f32"],
    "layout": ["[N,C", "NCHW", "nchw", "NN", "N?C...", "...", "N...C...", "N.C", "N..", "N C", " NC ", "", " ",
               "**SCALAR**", "[N,C,...]", "[N,...,C]", "[...]", "[]", "[N,,C]", "[N,C,]", "[ N , ? ]", "[N C]",
               "[batch,N]", "[_]", "[_1]", "[N,C...]", "[...C]", "[N...]", "[,...]", "[...,]", "[N,?,C]"],
    "fused_names": ["a,b", "a,,b", "", ",", "a,", ",a", " ", "a, ,b", " a , b ", "a,b,a"],
}  # fmt: skip


@pytest.mark.parametrize("where", ["layer", "port"])
@pytest.mark.parametrize(
    ("name", "text"), [(name, text) for name, texts in ATTRIBUTE_VALUES.items() for text in texts],
    ids=[f"{name}={text!r}" for name, texts in ATTRIBUTE_VALUES.items() for text in texts],
)  # fmt: skip
def test_runtime_attribute_values_are_parsed_as_openvino_parses_them(
    name: str, text: str, where: str, tmp_path: Path
) -> None:
    """A runtime attribute's value OpenVINO cannot parse (an ``old_api_map_order`` of ``x,y``, a ``layout`` of
    ``[N,C``) makes it refuse the model; ovreduce refuses the same texts, in OpenVINO's words, and reads the others."""
    key = "layout" if name == "layout" else "value"
    item = f'<attribute name="{name}" version="0" {key}="{text}"/>'
    refused, ours = _both_read(_with_rt_info(item, where), tmp_path / "m.xml")
    if refused is not None:
        assert isinstance(ours, IRError) and "OpenVINO refuses the model" in ours.message, ours
        said = [line for line in refused.splitlines() if line.strip()][-1]
        assert f"the runtime attribute {name!r}" in ours.message and said in ours.message, (said, ours.message)


@pytest.mark.parametrize("tag", ["attribute", "foo", "Attribute"])
def test_a_decompression_mark_is_read_from_an_attribute_element_only(tag: str, tmp_path: Path) -> None:
    """A Convert marked ``decompression`` keeps OpenVINO from computing an Interpolate's scales behind it, so the dims
    after it are dynamic; a mark in another element is no mark to OpenVINO, which then folds them."""
    import openvino.opset11 as o11
    import openvino.opset15 as op

    x = op.parameter([1, 2, 4, 4], np.float32, name="x")
    scales = op.convert(op.constant(np.array([2.0, 2.0], np.float16)), "f32")
    y = o11.interpolate(x, scales, "nearest", "scales", axes=op.constant(np.array([2, 3], np.int64)))
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([op.reduce_mean(y, op.constant(np.array([1], np.int64)), False, name="r")], [x]), path,
                  compress_to_fp16=False)  # fmt: skip
    text = path.read_text()
    at = text.index("/>", text.index("<data", text.index('type="Convert"'))) + 2
    mark = f'<rt_info><{tag} name="decompression" version="0"/></rt_info>'
    assert_follows_openvino((text[:at] + mark + text[at:]).encode(), path.with_suffix(".bin").read_bytes())


@pytest.mark.parametrize(
    ("change", "refused"),
    [(None, None), (('names="x"', 'names="relu"'), "the name of its output, 'relu'"),
     (('<port id="1" precision="FP32">', '<port id="1" precision="FP32" names="x">'), None),  # OpenVINO reads it
     (('name="relu"', 'name="x"'), "the name of its output, 'x'")],
    ids=["clean", "tensor-named-as-the-result", "tensor-name-twice", "layer-named-as-a-tensor"],
)  # fmt: skip
def test_an_ir_v10_s_names_are_read_as_openvino_reads_them(
    change: tuple[str, str] | None, refused: str | None, tmp_path: Path
) -> None:
    """In an IR v10, OpenVINO names each Parameter and each Result's output by its layer, and refuses a name that is
    another tensor's (its own IR test NamesCollisionV10); an IR v11 it reads as written."""
    from .irxml import chain

    for version in ("10", "11"):
        xml = chain(version=version)
        if change is not None:
            xml = xml.replace(*change, 1)
        openvino, ours = _both_read(xml, tmp_path / f"v{version}.xml")
        if openvino is not None:
            assert "Model operation names have collisions with tensor names" in openvino, openvino
            assert isinstance(ours, IRError) and refused is not None and refused in ours.message, ours
            assert "in an IR v10, OpenVINO names each Parameter" in ours.message, ours
        assert (openvino is not None) == (version == "10" and refused is not None), (version, openvino)


def _v10(param_names: str | None, *, direct: bool, relu: bool, results: int = 1) -> str:
    """An IR v10: Parameter ``in`` (with ``param_names`` as its tensor names) feeding a Result directly, and/or a ReLU
    ``r`` feeding ``results`` Results."""
    from .irxml import edge, layer, net, parameter, port, result

    x = parameter(0, "in", "1,3", dims=(1, 3)).replace(' names="in"', "" if param_names is None else
                                                       f' names="{param_names}"')  # fmt: skip
    layers, edges = [x], []
    if relu:
        layers.append(layer(1, "r", "ReLU", inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]))
        edges.append(edge(0, 0, 1, 0))
        for k in range(results):
            layers.append(result(10 + k, f"o{k}"))
            edges.append(edge(1, 1, 10 + k, 0))
    if direct:
        layers.append(result(20, "direct"))
        edges.append(edge(0, 0, 20, 0))
    return net(layers, edges, version="10")


@pytest.mark.parametrize(
    ("param_names", "direct", "relu", "results"),
    [(None, True, False, 1), (None, True, True, 1), (None, False, True, 2), ("in", True, False, 1),
     ("in", True, True, 1), ("in", False, True, 1), ("t", True, False, 1), ("t", False, True, 2),
     ("r", False, True, 1)],
)  # fmt: skip
def test_an_ir_v10_s_inputs_and_outputs_are_named_as_openvino_names_them(
    param_names: str | None, direct: bool, relu: bool, results: int, tmp_path: Path
) -> None:
    """OpenVINO's own IR tests read a v10 Parameter feeding a Result, and one output feeding two Results; it refuses a
    Parameter whose tensor name is the name a Result's output then has too (its own name, fed to a Result)."""
    openvino, ours = _both_read(_v10(param_names, direct=direct, relu=relu, results=results), tmp_path / "m.xml")
    if openvino is None:
        assert isinstance(ours, IRModel), ours
        return
    said = "tensor names have collisions" if "tensor names have collisions" in openvino else "operation names"
    assert isinstance(ours, IRError) and said in ours.message, (openvino, ours)


def _renamed(case: str) -> str:
    """IR v10 models whose tensor name ``x`` comes twice, read only where OpenVINO renames the later copy as it does:
    in the order it builds the layers (a producer first, whatever the file's order), the layers it builds only, and
    a name given twice on one port as one."""
    from .irxml import edge, layer, net, port, result

    def param(lid: int, name: str, names: str) -> str:
        return layer(lid, name, "Parameter", data={"shape": "1,3", "element_type": "f32"},
                     outputs=[port(0, (1, 3), names=names)])  # fmt: skip

    def relu(lid: int, name: str, names: str | None) -> str:
        return layer(lid, name, "ReLU", inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3), names=names)])

    if case == "consumer-listed-first":
        layers = [relu(1, "x_1", "x"), param(0, "in", "x"), result(2)]
        edges = [edge(0, 0, 1, 0), edge(1, 1, 2, 0)]
    elif case == "unbuilt-layer":
        layers = [param(0, "x_1", "p"), relu(1, "d", "x"), relu(2, "r", "x"), result(3)]
        edges = [edge(0, 0, 1, 0), edge(0, 0, 2, 0), edge(2, 1, 3, 0)]
    else:  # "twice-on-one-port"
        layers = [param(0, "in", "x,x"), relu(1, "x_1", None), result(2)]
        edges = [edge(0, 0, 1, 0), edge(1, 1, 2, 0)]
    return net(layers, edges, version="10")


@pytest.mark.parametrize("case", ["consumer-listed-first", "unbuilt-layer", "twice-on-one-port"])
def test_an_ir_v10_s_tensor_name_given_twice_is_renamed_as_openvino_renames_it(case: str, tmp_path: Path) -> None:
    openvino, ours = _both_read(_renamed(case), tmp_path / "m.xml")
    assert openvino is None and isinstance(ours, IRModel), (openvino, ours)


_EXTRA_PORT = '<port id="5" precision="I64"><dim>1</dim></port>'
UNCONNECTED_INPUTS: dict[str, Callable[[str], str]] = {
    "after the others": _sub(RM_IN, RM_IN.replace("</input>", _EXTRA_PORT + "</input>")),
    "two after the others": _sub(
        RM_IN, RM_IN.replace("</input>", _EXTRA_PORT + _EXTRA_PORT.replace('"5"', '"6"') + "</input>")
    ),
    "before the others": _sub(RM_IN, RM_IN.replace("<input>", "<input>" + _EXTRA_PORT)),
    "between the others": _sub(RM_IN, RM_IN.replace("\n", _EXTRA_PORT + "\n")),
    "a Result's, after its input": _sub(
        "</port></input>\n</layer>\n</layers>", "</port>" + _EXTRA_PORT + "</input>\n</layer>\n</layers>"
    ),
    "a Parameter's": _sub(X_DATA, X_DATA + "<input>" + _EXTRA_PORT + "</input>"),
}


@pytest.mark.parametrize("version", ["10", "11"])
@pytest.mark.parametrize("where", list(UNCONNECTED_INPUTS))
def test_unconnected_input_ports_follow_openvino_s_reading(where: str, version: str) -> None:
    """An IR v10's layer does without input ports no edge reaches after its connected ones (OpenVINO makes the op
    of the inputs edges reach, and reads no port's runtime attributes); an IR v11 is refused, as any other place."""
    text = UNCONNECTED_INPUTS[where](BASE).replace('<net name="m" version="11">', f'<net name="m" version="{version}">')
    assert_follows_openvino(text.encode(), AXES)


@pytest.mark.parametrize("layout", list(LAYOUT))
@pytest.mark.parametrize(
    "written", ["3<![CDATA[9]]>", "<![CDATA[3]]>9", "3<![CDATA[]]>9", "<!-- c -->3<![CDATA[9]]>", "3<!-- c -->9"]
)
def test_a_dim_is_its_first_run_of_text_or_cdata_as_openvino_reads_it(written: str, layout: str) -> None:
    # The Parameter's dims declare [2,3,4] read as OpenVINO reads them: nothing is said to disagree with its shape.
    text = LAYOUT[layout](BASE.replace("<dim>3</dim>", f"<dim>{written}</dim>", 1))
    xml = _encode(layout, text)
    assert _openvino(xml, AXES) is not None
    model = _careful(xml, Weights(AXES))
    fast = _fast(xml, Weights(AXES))
    assert fast is None or fast == model
    said = [f.message for f in check_model(model).findings if f.code in DECLARATIONS]
    assert not said, said


# A UTF-16 code unit of a surrogate pair without its other half, which libxml2 refuses: pugixml drops the unit
# (its utf16_decoder), and so does ovreduce; a whole pair is the character it stands for.
LONE_SURROGATES: dict[str, Callable[[str], str]] = {
    "a lone high surrogate in a layer's name": _sub('name="rm"', 'name="r\ud800m"'),
    "a lone low surrogate in a tensor name": _sub('names="x"', 'names="x\udc00"'),
    "a high surrogate at the end of a name": _sub('name="rm"', 'name="rm\udbff"'),
    "a lone high surrogate before a pair": _sub('name="rm"', 'name="r\ud800\ud801\udc00m"'),
}


@pytest.mark.parametrize("order", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("meaning", list(LONE_SURROGATES))
def test_a_lone_surrogate_in_utf16_is_dropped_as_openvino_drops_it(meaning: str, order: str) -> None:
    text = LONE_SURROGATES[meaning](LAYOUT["UTF-16"](BASE))
    xml = "\ufeff".encode(order) + text.encode(order, "surrogatepass")
    ov_model = _openvino(xml, AXES)
    assert ov_model is not None
    assert_follows_openvino(xml, AXES)
    model = _careful(xml, Weights(AXES))
    assert {layer.name for layer in model.layers} == {op.get_friendly_name() for op in ov_model.get_ops()}
    assert set(model.layers[0].outputs[0].names) == ov_model.inputs[0].get_names()
    assert not any("\ud800" <= c <= "\udfff" for layer in model.layers for c in layer.name)
