"""What the command line says agrees with itself and with docs/cli.md: counts in words, the folders it saves in, the
exit statuses of a signal, where the service's settings and the inspect document's fields are described."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ovreduce.cli import main
from tests.cli.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
RMSNORM = str(SAMPLES / "rmsnorm.xml")


def test_a_count_of_one_takes_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    """rmsnorm.xml has one reduction: check and inspect say so alike."""
    _, checked, _ = run_cli(capsys, "check", RMSNORM)
    _, inspected, _ = run_cli(capsys, "inspect", RMSNORM)
    assert ", 1 reduction" in checked.splitlines()[0] and checked.splitlines()[0].endswith("1 reduction")
    assert inspected.splitlines()[0].endswith("layers, 1 reduction")
    assert "1 model checked" in checked
    _, both, _ = run_cli(capsys, "check", RMSNORM, str(SAMPLES / "spec_examples.xml"))
    assert "2 models checked" in both and ", 4 reductions" in both


def test_a_count_in_the_text_renderers_agrees_with_its_noun() -> None:
    """No renderer writes a count before a plural noun without choosing it by the count."""
    fixed = re.compile(r"\{[^{}]*\} (layers|reductions|models|elements|findings)\b")
    for source in (ROOT / "ovreduce" / "cli" / "render").glob("*text.py"):
        assert not fixed.findall(source.read_text()), source


@pytest.mark.parametrize("option", ["--save-outputs", "--save-inputs"])
def test_a_save_folder_that_is_a_file_is_said_to_be_no_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str
) -> None:
    file = tmp_path / "afile"
    file.write_text("x")
    status, out, err = run_cli(capsys, "run", str(SAMPLES / "spec_examples.xml"), "--layer", "8", option, str(file))
    assert (status, out) == (2, "")
    assert err == (f"ovreduce run: {option} {file}: it is not a folder; expected DIR, a folder ovreduce can create or "
                   f"write .npy files in [usage]\n")  # fmt: skip
    assert file.read_text() == "x"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="a folder that takes no file: /proc's")
def test_a_save_folder_that_takes_no_file_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """/proc/self is a folder, but no file can be made in it: the system says the file does not exist."""
    status, out, err = run_cli(capsys, "run", str(SAMPLES / "spec_examples.xml"), "--layer", "8", "--save-inputs",
                               "/proc/self")  # fmt: skip
    assert (status, out) == (2, "")
    assert "--save-inputs /proc/self: cannot write there (it takes no new file); expected DIR, a folder" in err
    assert "No such file or directory" not in err


def test_the_documented_exit_statuses_include_the_signals() -> None:
    text = " ".join((ROOT / "docs" / "cli.md").read_text().split())
    assert "130 interrupted (SIGINT" in text and "128+N ended by signal N (SIGTERM 143, SIGHUP 129" in text


def test_serve_help_names_the_document_of_its_settings() -> None:
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "serve", "--help"], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    said = " ".join(done.stdout.split())
    assert "docs/service.md" in said and "api/config.py" not in said
    assert "OVREDUCE_MAX_ELEMENTS" in (ROOT / "docs" / "service.md").read_text()


def test_every_field_of_the_inspect_document_is_described(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/cli.md sends readers to api-fields.md for the documents' fields: the inspect document's are there."""
    _, out, _ = run_cli(capsys, "inspect", RMSNORM, "--all", "--format", "json")
    doc = json.loads(out)
    fields = (ROOT / "docs" / "api-fields.md").read_text()
    sections = {m[1]: m[2] for m in re.finditer(r"^### (\w+)\n(.*?)(?=^### |\Z)", fields, re.M | re.S)}
    assert "`ovreduce.inspect/v1`" in sections["InspectDocument"]
    for name, document in (("InspectDocument", doc), ("LayerView", doc["layers"][0])):
        for key in document:
            assert f"| `{key}` |" in sections[name], (name, key)
    assert "api-fields.md#inspectdocument" in (ROOT / "docs" / "cli.md").read_text()


def test_the_help_gives_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    """``ovreduce --help`` gave 0-3 alone: not Ctrl-C's 130, a signal's 128+N, nor output that cannot be written."""
    with pytest.raises(SystemExit):
        main(["--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "output that cannot be written" in said and "130 interrupted" in said and "128+N ended by signal N" in said
