"""The malformed-IR corpus, as data: each case is a document (and maybe a .bin) plus what must be said.

Every case is generated here, so nothing binary is committed; :func:`write_case` puts one on disk as
``<folder>/<id>/model.xml`` (and ``model.bin`` when the case has weights).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from ovreduce.errors import (
    ElementTypeError,
    IRError,
    IRStructureError,
    IRSyntaxError,
    IRVersionError,
    LimitExceededError,
    WeightsError,
)

from .irxml import chain, const, edge, layer, net, parameter, port, result, unary

XML = "model\\.xml"  # every message names the file
LINE = XML + r":\d+"  # ... and the line, where there is one


@dataclass(frozen=True)
class Case:
    id: str
    xml: bytes
    error: type[IRError]
    match: str  # a regex the message must match: the location and what was expected
    bin: bytes | None = None
    # Does OpenVINO 2026.4's read_model refuse it too? None: not asked (XXE and friends are not sent to it).
    openvino_refuses: bool | None = True


def _b(text: str) -> bytes:
    return text.encode()


def _garbage() -> bytes:
    data = bytearray(random.Random(7).randbytes(4096))
    data[0:1] = b"\x89"  # not '<', so no parser can mistake it for markup
    return bytes(data)


_VALID = chain()
_PASSWD_XXE = (
    '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
    '<net name="&xxe;" version="11"><layers/></net>\n'
)
_PASSWD_XXE_TEXT = (
    '<!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
    '<net name="m" version="11"><layers/><rt_info><info name="a">&xxe;</info></rt_info></net>\n'
)
_LAUGHS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    + ']>\n<net name="&lol9;" version="11"><layers/></net>\n'
)
_PAD = "<!--" + "x" * 70_000 + "-->\n"  # a long comment before a DOCTYPE
_DOCTYPE = r": a DOCTYPE declaration at line {line}, column 1: DOCTYPE/ENTITY declarations are not allowed"


def _nest(depth: int) -> str:
    return "<info>" * depth + "</info>" * depth


def _const_case(
    cid: str,
    error: type[IRError],
    match: str,
    *,
    bin_size: int | None = 12,
    dims: tuple[int, ...] = (1, 3),
    openvino_refuses: bool | None = True,
    **kw: str,
) -> Case:
    args = {"shape": "1,3", "size": "12"} | kw
    # Const(0) -> Result(1): nothing else for OpenVINO to object to.
    xml = net([const(0, "w", dims=dims, **args), result(1, dims=dims)], [edge(0, 0, 1, 0)])
    return Case(cid, _b(xml), error, match,
                bin=None if bin_size is None else bytes(bin_size), openvino_refuses=openvino_refuses)  # fmt: skip


def _dim_case(cid: str, dim: str, match: str, openvino_refuses: bool = True) -> Case:
    return Case(cid, _b(net([parameter(dims=(1, dim)), unary(1), result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)])),
                IRStructureError, LINE + r": layer id=0 name='x' \(Parameter\), port 0, line \d+: " + match,
                openvino_refuses=openvino_refuses)  # fmt: skip


CASES: list[Case] = [
    # -- not XML at all ---------------------------------------------------------------------------------
    Case("not-xml", b"hello, world\n", IRSyntaxError, XML + r": not well-formed XML at line 1, column \d+"),
    Case("truncated", _b(_VALID[: len(_VALID) // 2]), IRSyntaxError, XML + r": not well-formed XML at line \d+"),
    Case("binary-garbage", _garbage(), IRSyntaxError, XML + r": not well-formed XML at line 1"),
    Case("empty-file", b"", IRSyntaxError, XML + r": the file is empty; expected an OpenVINO IR XML document"),
    Case("whitespace-only", b" \n\t\r\n ", IRSyntaxError, XML + r": the file is empty; expected an OpenVINO IR"),
    # -- the document -----------------------------------------------------------------------------------
    Case("wrong-root", b'<model version="11"><layers/></model>', IRStructureError,
         LINE + r": the root element is <model>, expected <net>"),
    Case("missing-version", b'<net name="m"><layers/></net>', IRVersionError,
         LINE + r": <net> has no 'version' attribute; expected IR version 10 or 11"),
    *[
        Case(f"ir-version-{v}", _b(chain(version=v)), IRVersionError,
             LINE + rf": IR version '{v}' is not supported; ovreduce reads IR versions 10 and 11")
        for v in ("12", "7", "abc", "")
    ],
    Case("no-layers", b'<net name="m" version="11"><edges/></net>', IRStructureError,
         LINE + r": <net> has no <layers> element", openvino_refuses=False),
    # -- layers -----------------------------------------------------------------------------------------
    Case("layer-without-id", _b(net([layer(None, "x", "Parameter")])), IRStructureError,
         LINE + r": <layer> has no 'id' attribute"),
    Case("layer-without-name", _b(net([layer(0, None, "Parameter")])), IRStructureError,
         LINE + r": layer id=0 \(Parameter\): <layer> has no 'name' attribute"),
    Case("layer-without-type", _b(net([layer(0, "x", None)])), IRStructureError,
         LINE + r": layer id=0 name='x': <layer> has no 'type' attribute"),
    Case("layer-id-not-integer", _b(net([layer("x1", "x", "Parameter")])), IRStructureError,
         LINE + r": layer id 'x1' is not a non-negative integer"),
    Case("layer-id-negative", _b(net([layer("-1", "x", "Parameter")])), IRStructureError,
         LINE + r": layer id '-1' is not a non-negative integer"),
    Case("duplicate-layer-id", _b(net([parameter(0), parameter(0, name="y")])), IRStructureError,
         LINE + r": duplicate layer id 0 \(name 'y'\); it was already used at line \d+ by layer 'x'",
         openvino_refuses=False),
    Case("duplicate-input-port-id",
         _b(net([layer(0, "a", "Add", inputs=[port(1), port(1)], outputs=[port(2)])])), IRStructureError,
         LINE + r": layer id=0 name='a' \(Add\): input port id 1 is used twice; each input of a layer needs an id "
                r"of its own \(OpenVINO connects an edge to the first and leaves the other unconnected\)",
         openvino_refuses=False),
    Case("duplicate-output-port-id",
         _b(net([layer(0, "s", "Split", inputs=[port(0), port(1)], outputs=[port(2), port(2)])])), IRStructureError,
         LINE + r": layer id=0 name='s' \(Split\): output port id 2 is used twice; each output of a layer needs an "
                r"id of its own \(OpenVINO connects an edge to the first and leaves the other without consumers\)",
         openvino_refuses=False),
    Case("port-id-not-integer", _b(net([layer(0, "r", "ReLU", inputs=[port("in")])])), IRStructureError,
         LINE + r": layer id=0 name='r' \(ReLU\), line \d+: <port> has id 'in'; expected a non-negative integer"),
    # -- dims -------------------------------------------------------------------------------------------
    _dim_case("dim-abc", "abc", r"<dim>abc</dim> is not an integer; expected a size >= 0 or -1"),
    _dim_case("dim-empty", "", r"<dim></dim> is not an integer; expected a size >= 0 or -1"),
    _dim_case("dim-below-minus-one", "-2", r"<dim>-2</dim> is out of range; expected a size >= 0"),
    _dim_case("dim-above-int64", "9223372036854775808", r"<dim>9223372036854775808</dim> is out of range"),
    # -- element types ----------------------------------------------------------------------------------
    Case("unknown-element-type", _b(net([parameter(etype="f128"), result(1)], [edge(0, 0, 1, 0)])),
         ElementTypeError, LINE + r": layer id=0 name='x' \(Parameter\): element_type: unknown element type "
         r"'f128'; expected one of: f64, f32"),
    Case("element-type-with-blank", _b(net([parameter(etype="f32 "), result(1)], [edge(0, 0, 1, 0)])),
         ElementTypeError, LINE + r": layer id=0 name='x' \(Parameter\): element_type: unknown element type "
         r"'f32 '; expected one of: f64, f32"),
    Case("destination-type-with-blank", _b(net([parameter(), layer(1, "c", "Convert", data={"destination_type": " f16"},
                                                                  inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]),
                                                result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)])),
         ElementTypeError, LINE + r": layer id=1 name='c' \(Convert\): destination_type: unknown element type "
         r"' f16'"),
    *(Case(f"{attr}-with-blank", _b(net([parameter(), layer(1, "r", ltype, version=version, inputs=[port(0, (1, 3))],
                                                           outputs=[port(1, (1, 3))]),
                                         result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)])),
           IRStructureError, LINE + rf": layer id=1 name='r' \({ltype.strip()}? ?\): its {attr} '{text}' begins or "
           r"ends with a blank, which OpenVINO does not trim")
      for attr, ltype, version, text in (("type", "Relu ", "opset1", "Relu "),
                                         ("version", "Relu", " opset1", " opset1"))),
    Case("unknown-precision", _b(net([layer(0, "x", "Parameter", data={"element_type": "f32", "shape": "1"},
                                            outputs=[port(0, (1,), precision="FP128")])])),
         ElementTypeError, LINE + r": layer id=0 name='x' \(Parameter\), port 0: unknown port precision 'FP128'; "
         r"expected one of: FP64, FP32"),
    Case("parameter-shape-unparsable", _b(net([parameter(shape="1,,3"), result(1)], [edge(0, 0, 1, 0)])),
         IRStructureError, LINE + r": layer id=0 name='x' \(Parameter\): shape='1,,3': cannot parse shape"),
    Case("parameter-shape-nonsense", _b(net([parameter(shape="-2,3"), result(1)], [edge(0, 0, 1, 0)])),
         IRStructureError, LINE + r": layer id=0 name='x' \(Parameter\): shape='-2,3': cannot parse dimension "
         r"'-2': expected a non-negative integer", openvino_refuses=False),
    # -- Const and the .bin -----------------------------------------------------------------------------
    _const_case("const-outside-bin", WeightsError,
                LINE + r": layer id=0 name='w' \(Const\): Const data \[offset 8, size 12\] lies outside "
                r".*model\.bin \(12 bytes\): expected offset \+ size <= 12", offset="8"),
    _const_case("const-past-bin-end", WeightsError,
                LINE + r": layer id=0 name='w' \(Const\): Const data \[offset 0, size 16\] lies outside "
                r".*model\.bin \(12 bytes\): expected offset \+ size <= 12", shape="1,4", size="16", dims=(1, 4)),
    _const_case("const-size-mismatch", WeightsError,
                LINE + r": layer id=0 name='w' \(Const\): size=8 does not match shape \[1,3\] of f32: "
                r"expected 12 bytes", size="8"),
    _const_case("const-size-larger-than-shape", WeightsError,
                LINE + r": layer id=0 name='w' \(Const\): size=16 does not match shape \[1,3\] of f32: "
                r"expected 12 bytes \(3 elements\)", size="16", bin_size=16,
                openvino_refuses=False),  # OpenVINO only checks that the size is not too small
    # 2^32 * 2^32 elements * 8 bytes wraps to 0 in 64-bit arithmetic: OpenVINO reads both of these.
    *[
        _const_case(f"const-huge-shape-size-{size}", WeightsError,
                    LINE + rf": layer id=0 name='w' \(Const\): size={size} does not match shape "
                    r"\[4294967296,4294967296\] of i64: expected 147573952589676412928 bytes "
                    r"\(18446744073709551616 elements\)",
                    shape="4294967296,4294967296", etype="i64", size=size, dims=(4294967296, 4294967296),
                    openvino_refuses=False)
        for size in ("0", "8")
    ],
    _const_case("const-offset-negative", IRStructureError,
                LINE + r": layer id=0 name='w' \(Const\): offset='-4' is not a non-negative integer", offset="-4"),
    _const_case("const-offset-not-integer", IRStructureError,
                LINE + r": layer id=0 name='w' \(Const\): offset='1\.5' is not a non-negative integer",
                offset="1.5"),
    _const_case("const-size-not-integer", IRStructureError,
                LINE + r": layer id=0 name='w' \(Const\): size='twelve' is not a non-negative integer",
                size="twelve"),
    _const_case("missing-bin", WeightsError,
                LINE + r": layer id=0 name='w' \(Const\): needs 12 bytes at offset 0 of the weights file, but "
                r"there is none \(expected .*model\.bin\)", bin_size=None),
    _const_case("const-dynamic-element-type", ElementTypeError,
                LINE + r": layer id=0 name='w' \(Const\): a Const cannot have the dynamic element type",
                etype="dynamic", openvino_refuses=False),
    _const_case("const-dynamic-shape", IRStructureError,
                LINE + r": layer id=0 name='w' \(Const\): shape='1,\?': a Const must have a static shape",
                shape="1,?", dims=(1, -1)),
    # -- edges ------------------------------------------------------------------------------------------
    Case("edge-to-missing-layer", _b(net([parameter(), result(1)], [edge(0, 0, 1, 0), edge(0, 0, 9, 0)])),
         IRStructureError, LINE + r": edge 0:0 -> 9:0 ends at layer id 9, which does not exist",
         openvino_refuses=False),
    Case("edge-from-missing-layer", _b(net([parameter(), result(1)], [edge(7, 0, 1, 0)])),
         IRStructureError, LINE + r": edge 7:0 -> 1:0 starts at layer id 7, which does not exist"),
    Case("edge-to-missing-port", _b(net([parameter(), result(1)], [edge(0, 0, 1, 0), edge(0, 0, 1, 3)])),
         IRStructureError, LINE + r": edge 0:0 -> 1:3: layer id=1 name='out' \(Result\) has no input port 3 "
         r"\(its input ports: 0\)"),
    Case("edge-from-missing-port", _b(net([parameter(), result(1)], [edge(0, 5, 1, 0)])),
         IRStructureError, LINE + r": edge 0:5 -> 1:0: layer id=0 name='x' \(Parameter\) has no output port 5 "
         r"\(its output ports: 0\)"),
    Case("edge-attribute-missing", _b(net([parameter(), result(1)], ['<edge from-layer="0" to-layer="1"/>'])),
         IRStructureError, LINE + r": <edge> attribute 'from-port' is missing; expected a non-negative integer"),
    Case("two-edges-into-one-port",
         _b(net([parameter(), parameter(1, name="y"), result(2)], [edge(0, 0, 2, 0), edge(1, 0, 2, 0)])),
         IRStructureError, LINE + r": edge 1:0 -> 2:0: input port 0 of layer id=2 name='out' \(Result\) already "
         r"has an incoming edge \(line \d+\); an input port takes exactly one"),
    Case("unconnected-input", _b(net([parameter(), result(1)], [])), IRStructureError,
         LINE + r": input port 0 of layer id=1 name='out' \(Result\) has no incoming edge; every input port must "
         r"be connected"),
    Case("cycle", _b(net([parameter(), layer(1, "a", "Add", inputs=[port(0), port(1)], outputs=[port(2)]),
                          unary(2, "b"), result(3)],
                         [edge(0, 0, 1, 0), edge(2, 1, 1, 1), edge(1, 2, 2, 0), edge(2, 1, 3, 0)])),
         # 'out' hangs below the cycle and is not on it: the message must not blame it.
         IRStructureError, XML + r": the graph has a cycle through layers id=1 'a', id=2 'b'; an IR must be acyclic"),
    Case("cycle-self-loop", _b(net([parameter(), layer(1, "a", "Add", inputs=[port(0), port(1)], outputs=[port(2)]),
                                    result(2)], [edge(0, 0, 1, 0), edge(1, 2, 1, 1), edge(1, 2, 2, 0)])),
         IRStructureError, XML + r": the graph has a cycle through layers id=1 'a'; an IR must be acyclic"),
    # -- hostile XML ------------------------------------------------------------------------------------
    Case("doctype", _b('<?xml version="1.0"?>\n<!DOCTYPE net>\n' + _VALID.split("\n", 1)[1]), IRSyntaxError,
         XML + _DOCTYPE.format(line=2), openvino_refuses=False),
    Case("xxe-passwd", _b(_PASSWD_XXE), IRSyntaxError, XML + _DOCTYPE.format(line=2), openvino_refuses=False),
    # However long the comments before it, in whatever encoding: refused before libxml2 reads the file
    Case("xxe-passwd-after-64k", _b('<?xml version="1.0"?>\n' + _PAD + _PASSWD_XXE.split("\n", 1)[1]),
         IRSyntaxError, XML + _DOCTYPE.format(line=3), openvino_refuses=False),
    Case("xxe-passwd-in-text-after-64k", _b(_PAD + _PASSWD_XXE_TEXT), IRSyntaxError, XML + _DOCTYPE.format(line=2),
         openvino_refuses=False),
    Case("xxe-passwd-utf16", _PASSWD_XXE_TEXT.encode("utf-16"), IRSyntaxError, XML + _DOCTYPE.format(line=1),
         openvino_refuses=None),
    Case("billion-laughs", _b(_LAUGHS), IRSyntaxError, XML + _DOCTYPE.format(line=1), openvino_refuses=False),
    Case("billion-laughs-after-64k", _b(_PAD + _LAUGHS), IRSyntaxError, XML + _DOCTYPE.format(line=2),
         openvino_refuses=False),
    Case("result-without-input", _b(net([parameter(), unary(1), result(2), layer(3, "z", "Result")],
         [edge(0, 0, 1, 0), edge(1, 1, 2, 0)])), IRStructureError,
         LINE + r": layer id=3 name='z' \(Result\): 0 input port\(s\); a Result takes exactly one input port"),
    Case("result-two-inputs", _b(net([parameter(), unary(1), layer(2, "out", "Result",
         inputs=[port(0, (1, 3)), port(1, (1, 3))])], [edge(0, 0, 1, 0), edge(1, 1, 2, 0), edge(0, 0, 2, 1)])),
         IRStructureError, LINE + r": layer id=2 name='out' \(Result\): 2 input port\(s\); a Result takes exactly "
         r"one input port"),
    *(Case(f"{op.lower()}-{version}-without-variable-id", _b(net([parameter(), layer(1, "state", op, version=version,
          inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]), result(2)], [edge(0, 0, 1, 0), edge(1, 1, 2, 0)])),
          IRStructureError, LINE + rf": layer id=1 name='state' \({op}\): no variable_id attribute; a {op} of opset6 "
          r"on names the variable it reads or writes by it \(OpenVINO's reader crashes on the model\)",
          openvino_refuses=None) for op, version in (("ReadValue", "opset6"), ("Assign", "opset16"))),
    *(Case(f"assign-{version}-{why}", _b(net([parameter(), layer(1, "state", "ReadValue", version=read,
          data={"variable_id": "v", **({"variable_type": "f32", "variable_shape": "1,3"} if read >= "opset6" else {})},
          inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]), result(2), layer(3, "write", "Assign", version=version,
          data={"variable_id": written}, inputs=[port(0, (1, 3))])], [edge(0, 0, 1, 0), edge(1, 1, 2, 0),
          edge(0 if why == "not-after-it" else 1, 0 if why == "not-after-it" else 1, 3, 0)])),
          IRStructureError, LINE + rf": layer id=3 name='write' \(Assign\): it writes the variable '{written}', but "
          + (r"no ReadValue of its graph declares it" if version == "opset6" else
             r"no ReadValue of opset3 to opset5 before it reads it") + rf" \(OpenVINO refuses the model: Can't find "
          rf"variable with id = {written}\)")
      for version, read, written, why in (("opset6", "opset6", "w", "undeclared"),
                                          ("opset3", "opset3", "w", "undeclared"),
                                          ("opset3", "opset3", "v", "not-after-it"),
                                          ("opset3", "opset6", "v", "opset6-read"))),
    Case("parameter-fed", _b(net([parameter(), unary(1), result(2), layer(3, "y", "Parameter",
         data={"shape": "1,3", "element_type": "f32"}, inputs=[port(5, (1, 3))], outputs=[port(0, (1, 3))])],
         [edge(0, 0, 1, 0), edge(1, 1, 2, 0), edge(0, 0, 3, 5)])), IRStructureError,
         LINE + r": layer id=3 name='y' \(Parameter\): 1 input port\(s\); a Parameter takes no input ports"),
    Case("const-fed", _b(net([parameter(), unary(1), result(2), layer(3, "w", "Const",
         data={"element_type": "f32", "shape": "1,3", "offset": "0", "size": "12"}, inputs=[port(5, (1, 3))],
         outputs=[port(0, (1, 3))]), result(4, "out2")], [edge(0, 0, 1, 0), edge(1, 1, 2, 0), edge(0, 0, 3, 5),
         edge(3, 0, 4, 0)])), IRStructureError,
         LINE + r": layer id=3 name='w' \(Const\): 1 input port\(s\); a Const takes no input ports", bin=bytes(12)),
    Case("rt-info-300-deep", _b(chain(extra=f"<rt_info>{_nest(300)}</rt_info>")), IRSyntaxError,
         XML + r": elements nested more than 256 deep at line \d+, column \d+, past libxml2's bound, which ovreduce "
         r"keeps though OpenVINO reads it", openvino_refuses=False),
    Case("attribute-11M", _b(chain().replace('<net name="m"', '<net x="' + "a" * 11_000_000 + '" name="m"', 1)),
         IRSyntaxError, XML + r": an attribute value, name or other token longer than 10,000,000 characters, past "
         r"libxml2's bound", openvino_refuses=False),
    Case("text-11M", _b(chain(extra="<note>" + "a" * 11_000_000 + "</note>")), IRSyntaxError,
         XML + r": a run of text longer than 10,000,000 characters at line 23, column \d+, past libxml2's bound",
         openvino_refuses=False),
    Case("comment-11M", _b(chain().replace("<layers>", "<!--" + "a" * 11_000_000 + "-->\n<layers>", 1)),
         IRSyntaxError, XML + r": a comment longer than 10,000,000 characters at line 3, column \d+, past libxml2's "
         r"bound", openvino_refuses=False),
    Case("pi-11M", _b(chain().replace("<layers>", "<?pi " + "a" * 11_000_000 + "?>\n<layers>", 1)), IRSyntaxError,
         XML + r": a processing instruction longer than 10,000,000 characters at line 3, column \d+, past libxml2's "
         r"bound", openvino_refuses=False),
    Case("cdata-11M", _b(chain(extra="<note><![CDATA[" + "a" * 11_000_000 + "]]></note>")), IRSyntaxError,
         XML + r": a CDATA section longer than 10,000,000 characters at line 23, column \d+, past libxml2's bound",
         openvino_refuses=False),
    Case("element-name-60k", _b(chain(extra="<" + "n" * 60_000 + "/>")), IRSyntaxError,
         XML + r": an element or attribute name longer than 50,000 characters at line 23, column \d+, past libxml2's "
         r"bound", openvino_refuses=False),
]  # fmt: skip

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def write_case(case: Case, folder: Path) -> Path:
    """``folder/<id>/model.xml`` (+ ``model.bin``); returns the .xml path."""
    where = folder / case.id
    where.mkdir(parents=True)
    xml = where / "model.xml"
    xml.write_bytes(case.xml)
    if case.bin is not None:
        (where / "model.bin").write_bytes(case.bin)
    return xml


__all__ = ["CASES", "CASE_IDS", "Case", "LimitExceededError", "write_case"]
