"""A DOCTYPE or ENTITY declaration is refused where the document has one, and only there.

XML has one place for a DOCTYPE: the prolog, after the XML declaration, comments and processing instructions, before
the root element. The text ``<!DOCTYPE`` or ``<!ENTITY`` anywhere else (in a comment, a processing instruction, a
CDATA section, after ``</net>``) is text, and OpenVINO reads such a file; both readers read it, LF or CRLF, wherever it
stands. A real declaration is refused with its line, wherever it stands in the prolog (after a comment of any
length) and in whatever encoding.
"""

from __future__ import annotations

import re
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import IRSyntaxError, parse_ir

from .irxml import chain
from .test_readers import assert_same, careful, fast

_BASE = chain()  # <?xml ...?> on line 1, <net> on line 2, <layers> on line 3
_LONG = "<!--" + "x" * 70_000 + "-->\n"  # a comment longer than any first look at the bytes

TEXT = {
    "a comment in <layers>": _BASE.replace("<layers>\n", "<layers>\n<!-- was: <!DOCTYPE net> -->\n", 1),
    "a comment naming ENTITY": _BASE.replace("<layers>\n", "<layers>\n<!-- no <!ENTITY here -->\n", 1),
    "a processing instruction": _BASE.replace("<layers>\n", "<layers>\n<?note <!DOCTYPE?>\n", 1),
    "a CDATA section in rt_info": _BASE.replace(
        "</net>", '<rt_info><note value="1"><![CDATA[<!DOCTYPE x [<!ENTITY y "z">]>]]></note></rt_info>\n</net>'
    ),
    "a comment after </net>": _BASE + "<!-- <!DOCTYPE x> -->\n",
    "a comment before <net>": _BASE.replace("<net ", "<!-- <!DOCTYPE x> --><net ", 1),
    "an attribute": _BASE.replace('name="m"', 'name="&lt;!DOCTYPE m&gt;"', 1),
}


def _endings(xml: str) -> dict[str, bytes]:
    return {"LF": xml.encode(), "CRLF": xml.replace("\n", "\r\n").encode()}


@pytest.mark.parametrize("ending", ["LF", "CRLF"])
@pytest.mark.parametrize("label", list(TEXT))
def test_declaration_text_outside_markup_is_read_as_openvino_reads_it(tmp_path: Path, label: str, ending: str) -> None:
    xml = _endings(TEXT[label])[ending]
    path = tmp_path / "m.xml"
    path.write_bytes(xml)
    ov_model = ov.Core().read_model(path)  # OpenVINO reads it
    model = parse_ir(xml, source="model.xml")  # (the name the readers of test_readers give)
    assert [r.get_friendly_name() for r in ov_model.get_results()] == [
        layer.name for layer in model.layers if layer.type == "Result"
    ]
    by_careful = careful(xml)
    assert_same(model, by_careful)  # the careful reader reads it to the same model
    by_fast = fast(xml)
    if by_fast is not None:  # the fast reader, where it reads the file at all, to the same model too
        assert_same(by_fast, by_careful)


def _declared(prolog: str) -> str:
    return _BASE.replace("<net ", prolog + "<net ", 1)


DECLARED = {  # (document, the line of its declaration)
    "a DOCTYPE": (_declared("<!DOCTYPE net>\n"), 2),
    "an internal subset": (_declared('<!DOCTYPE net [<!ENTITY x "y">]>\n'), 2),
    "after a long comment": (_declared(_LONG + "<!DOCTYPE net>\n"), 3),
    "an external one after a long comment": (_declared(_LONG + '<!DOCTYPE net SYSTEM "/etc/passwd">\n'), 3),
    "after comments and a processing instruction": (_declared("<!-- a -->\n<?pi x?>\n<!-- b\n-->\n<!DOCTYPE n>\n"), 6),
    "entities past 64 KiB": (
        _declared(_LONG + '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;">]>\n').replace(
            'name="m"', 'name="&lol1;"', 1
        ),
        3,
    ),
    "an ENTITY without a DOCTYPE": (_declared('<!ENTITY x "y">\n'), 2),
}


@pytest.mark.parametrize("ending", ["LF", "CRLF", "UTF-16"])
@pytest.mark.parametrize("label", list(DECLARED))
def test_a_declaration_is_refused_with_its_line_wherever_the_prolog_puts_it(label: str, ending: str) -> None:
    text, line = DECLARED[label]
    xml = text.encode("utf-16") if ending == "UTF-16" else _endings(text)[ending]
    for read in (lambda: parse_ir(xml, source="m.xml"), lambda: careful(xml)):
        with pytest.raises(IRSyntaxError) as exc:
            read()
        assert exc.value.line == line, exc.value.message
        assert re.match(
            rf"m(odel)?\.xml: a (DOCTYPE|ENTITY) declaration at line {line}, column 1: DOCTYPE/ENTITY declarations "
            r"are not allowed",
            exc.value.message,
        ), exc.value.message
    assert fast(xml) is None
