"""Hostile names never reach the terminal, JUnit or SARIF raw.

An IR's layer names may carry CR/LF (forging report lines), C1 controls (U+009B is a terminal's CSI),
bidirectional overrides and line separators; a file name may carry ESC. Every renderer of every command is
fed such names: text output keeps them as visible escapes, JUnit stays well-formed XML 1.0, SARIF URIs are
percent-encoded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli.inprocess import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
FORGED = "\n9 models checked: 9 clean"
HOSTILE_NAME = f"any_first\r{FORGED}\u009b31m\u202egnp.exe\u2028end"
# what may appear in text output: printable characters and the line feeds ovreduce writes itself
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / "dir \x1b[2J #%?"
    folder.mkdir()
    text = (SAMPLES / "all_reductions.xml").read_text()
    escaped = HOSTILE_NAME.replace("\r", "&#13;").replace("\n", "&#10;")
    text = text.replace('name="any_first"', f'name="{escaped}"', 1)
    xml = folder / "model \x1b]0;title\x07.xml"
    xml.write_text(text, encoding="utf-8")
    shutil.copy(SAMPLES / "all_reductions.bin", xml.with_suffix(".bin"))
    return xml


def _clean(text: str) -> None:
    assert not RAW.search(text), repr(RAW.search(text))
    assert "\n9 models checked: 9 clean" not in text


@pytest.mark.parametrize(
    "args",
    [
        ["check"], ["check", "-v"], ["inspect"], ["inspect", "--all"], ["inspect", "--layer", "3"],
        ["run", "--layer", "3"], ["audit", "--precision", "f32"],
    ],
    ids=["check", "check-v", "inspect", "inspect-all", "inspect-layer", "run", "audit"],
)  # fmt: skip
def test_text_output_escapes_every_hostile_character(
    capsys: pytest.CaptureFixture[str], hostile: Path, args: list[str]
) -> None:
    status, out, err = run_cli(capsys, args[0], str(hostile), *args[1:])
    assert status in (0, 1), err
    _clean(out)
    _clean(err)
    if args[:2] in (["check", "-v"], ["inspect"], ["inspect", "--all"], ["inspect", "--layer"], ["run", "--layer"]):
        assert "any_first\\r\\n9 models checked: 9 clean\\x9b31m\\u202egnp.exe\\u2028end" in out
    assert "any_first\\\\r" not in out  # escaped once, as the tables show it: not repr() of the escape


def test_error_messages_escape_names(capsys: pytest.CaptureFixture[str], hostile: Path) -> None:
    status, out, err = run_cli(capsys, "run", str(hostile), "--layer", f"nope{FORGED}\x1b[31m")
    assert status == 2 and out == ""
    _clean(err.rstrip("\n"))
    assert "\\x1b[31m" in err


def test_junit_is_well_formed_xml(capsys: pytest.CaptureFixture[str], hostile: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken \x1b\x01.xml"
    broken.write_text("<net version='11'><layers><layer id='0' name='a\x0b' type='Parameter'/></layers></net>")
    status, out, _ = run_cli(capsys, "check", str(hostile), str(broken), "--format", "junit")
    assert status == 2
    root = ET.fromstring(out)  # raises on anything XML 1.0 cannot carry
    names = [s.get("name") or "" for s in root.iter("testsuite")]
    assert any("\\x1b\\x01" in n for n in names), names


def test_sarif_uris_are_percent_encoded(capsys: pytest.CaptureFixture[str], hostile: Path) -> None:
    broken = hostile.with_name("broken \x1b #.xml")
    broken.write_text("<net version='11'></net>")
    status, out, _ = run_cli(capsys, "check", str(hostile), str(broken), "--format", "sarif")
    assert status == 2
    doc = json.loads(out)
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in doc["runs"]
        for result in run["results"]
        for loc in result.get("locations", [])
    ]
    assert uris
    for uri in uris:
        assert re.fullmatch(r"[A-Za-z0-9\-._~/%!$&'()*+,;=:@]+", uri), uri
        assert "%1B" in uri and "%20" in uri and "%23" in uri


@pytest.mark.skipif(sys.platform != "linux", reason="a file name that is not UTF-8: Linux's file systems take one")
def test_a_path_that_is_not_utf8_is_spelled_with_its_byte_in_every_message(tmp_path: Path) -> None:
    """The reports write a path's byte that is not UTF-8 as ``\\xe9``, but a message naming the path kept Python's
    surrogate escape: check's text wrote the raw byte 0xE9 (its output then not UTF-8), JUnit and every stderr line
    ``\\udce9``, a spelling that names no byte."""
    cut = os.path.join(os.fsencode(tmp_path), b"cut\xe9.xml")
    with open(cut, "wb") as handle:
        handle.write(b'<net version="11"><layers>\n<layer id="0"')

    def ovreduce(*args: bytes | str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "ovreduce.cli", *args], capture_output=True, timeout=300)

    text = ovreduce("check", cut)
    assert text.returncode == 2
    said = text.stdout.decode("utf-8")  # UTF-8, every byte of it
    assert said.count("cut\\xe9.xml") >= 2 and "\\udce9" not in said, said  # the header and the message
    junit = ovreduce("check", cut, "--format", "junit").stdout.decode("utf-8")
    assert "cut\\xe9.xml: " in junit and "\\udce9" not in junit, junit
    for done in (ovreduce("inspect", cut), ovreduce("check", os.path.join(os.fsencode(tmp_path), b"m\xe9.xml"))):
        err = done.stderr.decode("utf-8")
        assert done.returncode == 2 and "\\xe9.xml" in err and "\\udce9" not in err, err


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_standard_output_that_is_not_utf8_takes_every_name(tmp_path: Path, encoding: str) -> None:
    """Under a locale whose encoding is not UTF-8, a layer name that encoding lacks was an internal error (exit 3,
    no report), and JUnit was written in that encoding under its ``encoding="UTF-8"`` declaration. Text is written
    as the stream can take it (what it lacks escaped, as on standard error); the documents for machines in UTF-8."""
    text = (SAMPLES / "spec_examples.xml").read_text(encoding="utf-8").replace("mean_hw_keep", "平均値_é")
    (tmp_path / "m.xml").write_text(text, encoding="utf-8")
    shutil.copy(SAMPLES / "spec_examples.bin", tmp_path / "m.bin")
    env = dict(os.environ, PYTHONIOENCODING=encoding)

    def ovreduce(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "ovreduce.cli", *args, str(tmp_path / "m.xml")],
                              capture_output=True, timeout=300, env=env)  # fmt: skip

    said = ovreduce("check")
    assert said.returncode == 0, said.stderr
    out = said.stdout.decode(encoding)
    assert "\\u5e73\\u5747\\u5024_" in out and ("é" if encoding == "latin-1" else "\\xe9") in out, out
    assert ovreduce("inspect").returncode == 0
    for machine in ("junit", "sarif"):
        document = ovreduce("check", "--format", machine)
        assert document.returncode == 0, document.stderr
        assert "平均値_é" in document.stdout.decode("utf-8") or machine == "sarif"
    junit = ET.fromstring(ovreduce("check", "--format", "junit").stdout)  # the bytes, as a CI parser reads them
    assert any("平均値_é" in (case.get("name") or "") for case in junit.iter("testcase"))
