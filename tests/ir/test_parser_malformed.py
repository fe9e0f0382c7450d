"""Malformed and hostile IR: every class of bad input is refused with the right error, code and message.

The corpus lives in :mod:`.malformed` as data; each case is written to ``tmp_path`` by the tests (nothing
binary is committed). Where OpenVINO's own reader is stricter or more lenient, the case says so and
:func:`test_openvino_reader_agrees` keeps that claim honest.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import openvino as ov
import pytest

from ovreduce import ParseLimits, load_ir, parse_ir
from ovreduce.check import check_model
from ovreduce.cli import main
from ovreduce.errors import IRStructureError, IRSyntaxError, LimitExceededError, OvReduceError
from ovreduce.ir.weights import Weights

from .irxml import chain, net, parameter, port, unary
from .malformed import CASE_IDS, CASES, Case, write_case

PASSWD = Path("/etc/passwd")
PASSWD_LINES = [line for line in PASSWD.read_text().splitlines() if line.strip()] if PASSWD.exists() else []


def _refusal(case: Case, tmp_path: Path) -> OvReduceError:
    xml = write_case(case, tmp_path)
    with pytest.raises(OvReduceError) as info:
        load_ir(xml)
    return info.value


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_malformed_is_refused(case: Case, tmp_path: Path) -> None:
    exc = _refusal(case, tmp_path)
    assert type(exc) is case.error, f"{type(exc).__name__}: {exc}"
    assert exc.code == case.error.code
    message = str(exc)
    assert re.search(case.match, message), message
    assert str(tmp_path / case.id / "model.xml") in message  # the full path, not only the name
    for line in PASSWD_LINES:
        assert line not in message


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_parse_ir_from_bytes_refuses_alike(case: Case) -> None:
    """The in-memory entry point (uploads) refuses the same way, naming the given source."""
    weights = Weights(case.bin, name="upload.bin") if case.bin is not None else None
    with pytest.raises(OvReduceError) as info:
        parse_ir(case.xml, weights, source="model.xml")
    assert type(info.value) is case.error
    if "model\\.bin" not in case.match:  # the .bin is named differently in memory
        assert re.search(case.match, str(info.value)), str(info.value)


@pytest.mark.parametrize("case", [c for c in CASES if c.openvino_refuses is not None], ids=lambda c: c.id)
def test_openvino_reader_agrees(case: Case, tmp_path: Path) -> None:
    """OpenVINO 2026.4 refuses what the case says it refuses; where it reads the file, ovreduce is stricter."""
    xml = write_case(case, tmp_path)
    core = ov.Core()
    if case.openvino_refuses:
        with pytest.raises(RuntimeError):
            core.read_model(str(xml))
    else:
        core.read_model(str(xml))  # OpenVINO accepts it (and ovreduce deliberately does not)


@pytest.mark.parametrize("case", [c for c in CASES if "variable-id" in c.id], ids=lambda c: c.id)
def test_openvino_reader_crashes_where_the_case_says_so(case: Case, tmp_path: Path) -> None:
    """What OpenVINO 2026.4's reader crashes the process on (SIGSEGV) instead of refusing it: ovreduce refuses it
    before OpenVINO is asked, in check, inspect and the service's workers alike. Should a release of OpenVINO read or
    refuse it, this says so, and the refusal's words must change."""
    xml = write_case(case, tmp_path)
    code = "import openvino as ov, sys; ov.Core().read_model(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, str(xml)], capture_output=True, timeout=120, check=False)
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-300:])


# -- hostile XML: nothing is read from the file system, memory stays bounded ---------------------------
@pytest.mark.parametrize(
    "template",
    [
        pytest.param('<!DOCTYPE net [<!ENTITY s SYSTEM "{uri}">]><net name="&s;" version="11"><layers/></net>',
                     id="attribute"),
        pytest.param('<!DOCTYPE net [<!ENTITY s SYSTEM "{uri}">]><net name="m" version="11"><layers/>'
                     '<rt_info><info name="a">&s;</info></rt_info></net>', id="text"),
        pytest.param('<!--' + "x" * 70_000 + '--><!DOCTYPE net [<!ENTITY s SYSTEM "{uri}">]><net name="m" '
                     'version="11"><layers/><rt_info><info name="a">&s;</info></rt_info></net>', id="text-after-64k"),
        pytest.param('<!DOCTYPE net [<!ENTITY % p SYSTEM "{uri}"> %p;]><net name="m" version="11"><layers/></net>',
                     id="parameter-entity"),
        pytest.param('<!DOCTYPE net SYSTEM "{uri}"><net name="m" version="11"><layers/></net>', id="external-dtd"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_external_entities_never_leak(template: str, encoding: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-7f3a9\n")
    xml = tmp_path / "model.xml"
    xml.write_bytes(template.format(uri=secret.as_uri()).encode(encoding))
    with pytest.raises(IRSyntaxError) as info:
        load_ir(xml)
    assert info.value.code == "ir.syntax"
    assert "TOP-SECRET" not in str(info.value)
    assert str(xml) in str(info.value)


_OPEN_PROBE = """
import sys
from ovreduce import load_ir
from ovreduce.errors import OvReduceError
try:
    load_ir(sys.argv[1])
except OvReduceError as exc:
    print(exc.code, exc)
"""


@pytest.mark.parametrize(
    "template",
    [
        pytest.param('<!DOCTYPE net SYSTEM "{uri}"><net name="m" version="11"><layers/></net>', id="external-dtd"),
        pytest.param('<!DOCTYPE net [<!ENTITY % p SYSTEM "{uri}"> %p;]><net name="m" version="11"><layers/></net>',
                     id="parameter-entity"),
        pytest.param('<!DOCTYPE net [<!ENTITY s SYSTEM "{uri}">]><net name="m" version="11"><layers/>'
                     '<rt_info><info name="a">&s;</info></rt_info></net>', id="text-entity"),
    ],
)  # fmt: skip
@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param(lambda text: text.encode("utf-16"), id="utf-16"),
        pytest.param(lambda text: ("<!--" + "x" * 70_000 + "-->" + text).encode(), id="after-64k"),
    ],
)
def test_doctype_never_opens_local_files(template: str, disguise: object, tmp_path: Path) -> None:
    """A DOCTYPE the byte sniff cannot see must still not make libxml2 open a path: a FIFO would block forever.

    Runs in a child process, so a regression fails on the timeout instead of hanging the suite.
    """
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    xml = tmp_path / "model.xml"
    assert callable(disguise)
    xml.write_bytes(disguise(template.format(uri=fifo)))
    try:
        proc = subprocess.run([sys.executable, "-c", _OPEN_PROBE, str(xml)], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing blocked: libxml2 opened {fifo} named in the DOCTYPE")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ir.syntax "), proc.stdout
    assert "external subset" not in proc.stdout


# The peak RSS of this process alone: VmHWM belongs to the address space, which exec replaces, whereas
# getrusage's ru_maxrss in a child starts at the parent's peak (Linux carries it across fork and exec).
_MEMORY_PROBE = """
import json, sys
from ovreduce import load_ir
from ovreduce.errors import OvReduceError
def peak_kib():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
before = peak_kib()
try:
    load_ir(sys.argv[1])
    code = None
except OvReduceError as exc:
    code = exc.code
ballast = b"\\x01" * (int(sys.argv[2]) << 20)  # the control: memory the probe must see
print(json.dumps({"code": code, "grew_kib": peak_kib() - before}))
"""


def _memory_growth_kib(xml: Path, ballast_mib: int = 0) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(xml), str(ballast_mib)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    report: dict[str, object] = json.loads(proc.stdout)
    return report


@pytest.mark.parametrize("case_id", ["billion-laughs", "billion-laughs-after-64k", "rt-info-300-deep"])
def test_hostile_xml_memory_is_bounded(case_id: str, tmp_path: Path) -> None:
    """Expanded, billion laughs is ~3 GB; refusing it must cost next to nothing (measured in a fresh process)."""
    xml = write_case(next(c for c in CASES if c.id == case_id), tmp_path)
    report = _memory_growth_kib(xml)
    assert report["code"] == "ir.syntax"
    assert isinstance(report["grew_kib"], int) and report["grew_kib"] < 32 * 1024, report


def test_memory_probe_sees_growth(tmp_path: Path) -> None:
    """The control for the test above: 64 MiB allocated after a clean parse is measured."""
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    report = _memory_growth_kib(xml, ballast_mib=64)
    assert report["code"] is None
    assert isinstance(report["grew_kib"], int) and report["grew_kib"] > 32 * 1024, report


def test_nesting_below_the_depth_limit_parses(tmp_path: Path) -> None:
    """libxml2 refuses depth > 256 (the 300-deep case); 250 levels of rt_info parse, and are kept whole."""
    depth = 250
    xml = tmp_path / "model.xml"
    xml.write_text(chain(extra="<rt_info>" + "<info>" * depth + "</info>" * depth + "</rt_info>"))
    model = load_ir(xml)
    node, levels = model.rt_info[0], 1
    while node.children:
        node, levels = node.children[0], levels + 1
    assert levels == depth


# -- limits and paths --------------------------------------------------------------------------------------
def test_layer_count_limit(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    with pytest.raises(
        LimitExceededError, match=r"model\.xml: more than 2 layers \(ovreduce.s fixed bound, bodies included\)"
    ) as info:
        load_ir(xml, limits=ParseLimits(max_layers=2))
    assert info.value.code == "limit"
    assert len(load_ir(xml, limits=ParseLimits(max_layers=3)).layers) == 3


def test_xml_size_limit(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    size = xml.stat().st_size
    pattern = rf"model\.xml: the XML is {size} bytes, more than the limit of 100 bytes"
    with pytest.raises(LimitExceededError, match=pattern) as info:
        load_ir(xml, limits=ParseLimits(max_xml_bytes=100))
    assert info.value.code == "limit"
    with pytest.raises(LimitExceededError, match=pattern):
        parse_ir(xml.read_bytes(), source=str(xml), limits=ParseLimits(max_xml_bytes=100))
    load_ir(xml, limits=ParseLimits(max_xml_bytes=size))  # the limit is inclusive


def test_rank_limit(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    dims = [1] * 65
    xml.write_text(net([parameter(shape=",".join(["1"] * 65), dims=dims)]))
    with pytest.raises(LimitExceededError, match=r"layer id=0 name='x' \(Parameter\), port 0, line \d+: rank 65 "
                       r"exceeds the limit of 64") as info:  # fmt: skip
        load_ir(xml)
    assert info.value.code == "limit"
    assert f", line {info.value.line}: " in info.value.message  # the document's line is the message's
    xml.write_text(net([parameter(shape=",".join(["1"] * 65), dims=[1])]))
    with pytest.raises(
        LimitExceededError, match=r"layer id=0 name='x' \(Parameter\): rank 65 exceeds the limit"
    ) as info:
        load_ir(xml)
    assert f":{info.value.line}: " in info.value.message


def test_directory_as_xml_path(tmp_path: Path) -> None:
    folder = tmp_path / "model.xml"
    folder.mkdir()
    with pytest.raises(
        IRStructureError, match=rf"{re.escape(str(folder))}: it is a directory, expected an IR \.xml file"
    ):
        load_ir(folder)


def test_missing_xml_file(tmp_path: Path) -> None:
    with pytest.raises(IRStructureError, match=r"cannot read .*nothing\.xml: No such file or directory"):
        load_ir(tmp_path / "nothing.xml")


def test_explicit_bin_that_does_not_exist(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(chain())
    with pytest.raises(OvReduceError, match=r"cannot read weights file .*other\.bin: No such file") as info:
        load_ir(xml, tmp_path / "other.bin")
    assert info.value.code == "ir.weights"


def test_port_without_id(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(net([unary(0).replace('<port id="0"', "<port", 1)]))
    with pytest.raises(IRStructureError, match=r"<port> has no 'id' attribute; expected a non-negative integer id"):
        load_ir(xml)


def test_port_precision_may_be_absent(tmp_path: Path) -> None:
    xml = tmp_path / "model.xml"
    xml.write_text(net([parameter(), "<layer id='1' name='r' type='Result' version='opset1'><input>"
                        + port(0, (1, 3), precision=None) + "</input></layer>"],
                       ['<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>']))  # fmt: skip
    assert load_ir(xml).find_layer("r").inputs[0].precision is None


# -- the command line over the whole corpus ----------------------------------------------------------------
@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    for case in CASES:
        write_case(case, folder)
    return folder


def _check_json(doc: dict[str, object], folder: Path) -> None:
    models = doc["models"]
    assert isinstance(models, list)
    by_path = {m["path"]: m for m in models}
    assert len(by_path) == len(CASES)
    assert doc["ok"] is False
    for case in CASES:
        model = by_path[str(folder / case.id / "model.xml")]
        assert model["ok"] is False
        error = model["error"]
        assert set(error) == {"code", "message", "line", "column"}
        assert all(error[k] is None or error[k] >= 1 for k in ("line", "column")), (case.id, error)
        assert error["code"] == case.error.code, (case.id, error)
        assert re.search(case.match, error["message"]), (case.id, error["message"])


def test_cli_check_corpus_json(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "--format", "json", str(corpus)])
    out, err = capsys.readouterr()
    assert status == 2
    assert "Traceback" not in out + err
    _check_json(json.loads(out), corpus)
    for line in PASSWD_LINES:
        assert line not in out


def test_cli_check_corpus_text(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", str(corpus)])
    out, err = capsys.readouterr()
    assert status == 2
    assert "Traceback" not in out + err
    for case in CASES:
        assert case.id in out  # every model is reported, none silently dropped


def test_console_script_over_corpus(corpus: Path) -> None:
    exe = shutil.which("ovreduce", path=str(Path(sys.executable).parent)) or shutil.which("ovreduce")
    assert exe is not None, "the ovreduce console script is not installed"
    proc = subprocess.run(
        [exe, "check", "--format", "json", str(corpus)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": "error"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    _check_json(json.loads(proc.stdout), corpus)


def test_console_script_single_unreadable_model(tmp_path: Path) -> None:
    exe = shutil.which("ovreduce", path=str(Path(sys.executable).parent)) or shutil.which("ovreduce")
    assert exe is not None
    xml = tmp_path / "model.xml"
    xml.write_bytes(b"")
    proc = subprocess.run([exe, "check", str(xml)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "the file is empty" in proc.stdout + proc.stderr


_RMSNORM = Path(__file__).resolve().parents[2] / "ir_samples" / "rmsnorm.xml"


@pytest.mark.parametrize(
    ("encode", "said"),
    [
        pytest.param(lambda t: t.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="cp1252"?>')
                     .replace("rmsnorm", "rmsnorm\u00e9", 1).encode("cp1252"),
                     "is not UTF-8, and the XML declaration names the encoding 'cp1252'", id="cp1252-bytes"),
        pytest.param(lambda t: t.replace('<?xml version="1.0"?>\n', "").encode("utf-16-le"),
                     "UTF-16 without a byte order mark", id="utf-16-no-mark-no-declaration"),
        pytest.param(lambda t: t.encode("utf-32"), "the file is UTF-32", id="utf-32"),
        pytest.param(lambda t: t.replace('<?xml version="1.0"?>\n', "").encode("utf-16-be"),
                     "UTF-16 without a byte order mark", id="utf-16-be-no-mark-no-declaration"),
        pytest.param(lambda t: _RMSNORM.with_suffix(".bin").read_bytes(), "the file is not text: it begins with the "
                     "byte 0x00, a control character no XML text holds (the weights, the .bin, given as the .xml?)",
                     id="weights-as-xml"),  # libxml2: "Document is empty"
        pytest.param(lambda t: b"\x00" + t.encode(), "the file is not text: it begins with the byte 0x00",
                     id="nul-then-xml"),  # not UTF-16: the bytes after it are not 0 every other
    ],
)  # fmt: skip
def test_an_encoding_libxml2_refuses_is_named(encode: Any, said: str, tmp_path: Path) -> None:
    """libxml2's words were "Blank needed here", "Char 0x0 out of allowed range", "Start tag expected"."""
    xml = tmp_path / "model.xml"
    xml.write_bytes(encode(_RMSNORM.read_text()))
    shutil.copy(_RMSNORM.with_suffix(".bin"), xml.with_suffix(".bin"))
    with pytest.raises(IRSyntaxError, match=re.escape(said)):
        load_ir(xml)


@pytest.mark.parametrize(
    ("declaration", "codec"),
    [
        ('<?xml version="1.0" encoding="windows-1252"?>', "utf-8"),
        ('<?xml version="1.0" encoding="ISO-8859-15"?>', "utf-8"),
        ('<?xml version="1.0" encoding="x-nope"?>', "utf-8"),
        ('<?xml version="1.0" encoding="UTF-16"?>', "utf-8"),
        ('\n<?xml version="1.0" encoding="ISO-8859-1"?>', "utf-8"),
        ('<?xml version="1.0" encoding="ISO-8859-1"?>', "latin-1"),
        ('<?xml version="1.0" encoding="Latin1"?>', "latin-1"),
    ],
    ids=["windows-1252", "iso-8859-15", "unknown", "utf-16-on-8-bit", "latin-1-after-a-blank", "latin-1", "latin1"],
)
def test_the_names_are_read_in_the_encoding_openvino_reads(declaration: str, codec: str, tmp_path: Path) -> None:
    """pugixml applies no declared encoding but latin-1 at the very start: libxml2 applied each, so that a name written
    'xé' in UTF-8 was 'xÃ©' to ovreduce and 'xé' to OpenVINO (a reshape by it failed), or the file was refused."""
    text = _RMSNORM.read_text().replace('<?xml version="1.0"?>', declaration).replace('name="rmsnorm/variance"',
                                                                                   'name="variancé"')  # fmt: skip
    xml = tmp_path / "model.xml"
    xml.write_bytes(text.encode(codec))
    shutil.copy(_RMSNORM.with_suffix(".bin"), xml.with_suffix(".bin"))
    names = {op.get_friendly_name() for op in ov.Core().read_model(str(xml)).get_ops()}
    assert "variancé" in names
    model = load_ir(xml)
    assert "variancé" in {layer.name for layer in model.layers}
    # the OpenVINO engine reads the model as OpenVINO does from the file, and finds its reduction
    report = check_model(model, engine="openvino")
    assert report.ok and [r.openvino_output_shape for r in report.reductions] == [[1, -1, 1]], report


def test_a_utf16_file_readable_by_its_declaration_keeps_libxml2s_own_message(tmp_path: Path) -> None:
    text = _RMSNORM.read_text().replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16LE"?>')
    xml = tmp_path / "model.xml"
    xml.write_bytes(text.replace("</layers>", "</layer>", 1).encode("utf-16-le"))  # no byte order mark
    with pytest.raises(IRSyntaxError, match="not well-formed XML") as info:
        load_ir(xml)
    assert "byte order mark" not in str(info.value)


def test_a_utf32_file_without_its_mark_keeps_libxml2s_own_message(tmp_path: Path) -> None:
    """libxml2 reads UTF-32 without a byte order mark; its first bytes are "<\\0", as UTF-16's are."""
    xml = tmp_path / "model.xml"
    xml.write_bytes(_RMSNORM.read_text().replace("</layers>", "</layer>", 1).encode("utf-32-le"))
    with pytest.raises(IRSyntaxError, match="Opening and ending tag mismatch"):
        load_ir(xml)


@pytest.mark.parametrize(
    "unused",
    [
        '<layer id="9" name="c" type="Const " version="opset1"><data element_type="i64" shape="1" offset="0" size="8"/>'
        '<output><port id="0" precision="I64"><dim>1</dim></port></output></layer>',
        '<layer id="9" name="c" type="Const" version="opset1"><data element_type="i64 " shape="1" offset="0" size="8"/>'
        '<output><port id="0" precision="I64"><dim>1</dim></port></output></layer>',
        '<layer id="9" name="c" type="Const" version=" opset1"><data element_type="i64" shape="1" offset="0" size="8"/>'
        '<output><port id="0" precision="I64"><dim>1</dim></port></output></layer>',
    ],
    ids=["type", "element-type", "version"],
)
def test_a_blank_is_refused_only_where_openvino_builds_the_layer(unused: str, tmp_path: Path) -> None:
    """OpenVINO builds the layers a Result reaches: one no Result reaches, with a blank in its type, element type or
    version, is never built and the model is read; where a Result reaches it, the model is refused (malformed.py)."""
    path = tmp_path / "model.xml"
    path.write_text(chain().replace("</layers>", unused + "</layers>"))
    path.with_suffix(".bin").write_bytes(bytes(8))
    ov.Core().read_model(path)
    model = load_ir(path)
    try:
        assert len(model.layers) == 4
    finally:
        model.close()
    assert main(["check", str(path)]) == 0
