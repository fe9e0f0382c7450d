"""One rule for inputs that are not there, "did you mean" for --layer, run without --layer, --version.

The rule (docs/cli.md, "Errors"): a path on the command line that names nothing (a missing file, a folder without
.xml files, a glob that matches nothing, a missing --bin or .onnx) is a usage error: one line on standard
error ending in ``[usage]``, nothing on standard output, exit 2, before anything is read. A file that is
there but cannot be read is reported by the command: ``check`` lists it in its report (UNREADABLE, every
format), the one-model commands print one line on standard error with the error's code; exit 2 too.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from tests.cli.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
ALL = str(SAMPLES / "all_reductions.xml")
MISSING = str(SAMPLES / "missing.xml")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", MISSING],
        ["check", str(SAMPLES / "nothing-here" / "*.xml")],
        ["check", ALL, "--bin", str(SAMPLES / "missing.bin")],
        ["inspect", MISSING],
        ["inspect", ALL, "--bin", str(SAMPLES / "missing.bin")],
        ["run", MISSING, "--layer", "3"],
        ["run", ALL, "--layer", "3", "--bin", str(SAMPLES / "missing.bin")],
        ["audit", MISSING],
        ["conform", str(SAMPLES / "missing.onnx")],
        ["run", str(SAMPLES / "spec_examples.xml"), "--layer", "8", "--input", f"0={SAMPLES / 'missing.npy'}"],
        ["audit", str(SAMPLES / "rmsnorm.xml"), "--input", f"hidden_states={SAMPLES / 'missing.npz'}:x"],
    ],
    ids=[
        "check",
        "check-glob",
        "check-bin",
        "inspect",
        "inspect-bin",
        "run",
        "run-bin",
        "audit",
        "conform",
        "run-input",
        "audit-input",
    ],
)
def test_what_is_not_there_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("[usage]\n")
    assert "no such file" in err or "matches no .xml files" in err


@pytest.mark.parametrize("command", ["check", "inspect", "run", "audit", "input"])
def test_a_loop_of_links_is_said_to_be_one(capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    """A link that leads back to itself names no file, as a missing file: a usage error, which says it is a loop."""
    loop = tmp_path / "loop.xml"
    loop.symlink_to(loop)
    argv = [command, str(loop)] if command != "input" else ["audit", str(SAMPLES / "rmsnorm.xml"), "--input",
                                                            f"hidden_states={loop}"]  # fmt: skip
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert f"{loop}: a loop of symbolic links, which names no file" in err and err.endswith("[usage]\n"), err


@pytest.mark.parametrize("ending", ["/", "/."])
@pytest.mark.parametrize("command", ["check", "inspect", "run", "audit", "bin", "input"])
def test_a_file_spelled_as_a_folder_names_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, ending: str
) -> None:
    """``m.xml/`` and ``m.xml/.`` name no file, as the system says (Not a directory) and OpenVINO's reader cannot open
    them; every command read them as ``m.xml`` (a path's ending dropped before it was looked up)."""
    model, weights = str(SAMPLES / "spec_examples.xml"), str(SAMPLES / "spec_examples.bin")
    npy = tmp_path / "x.npy"
    npy.write_bytes(b"")
    spelled = {"bin": weights, "input": str(npy)}.get(command, model) + ending
    with pytest.raises(NotADirectoryError):
        os.stat(spelled)
    argv = {
        "bin": ["check", model, "--bin", spelled],
        "input": ["run", model, "--layer", "8", "--input", f"0={spelled}"],
        "run": ["run", spelled, "--layer", "8", "--backend", "numpy"],
    }.get(command, [command, spelled])
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, ""), (out, err)
    assert f"{spelled}: no such file" in err and "(Not a directory)" in err and err.endswith("[usage]\n"), err


def test_what_is_there_but_unreadable_is_reported_by_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<net><layers>")
    status, out, err = run_cli(capsys, "check", str(bad), ALL)
    assert status == 2 and err == ""
    assert "UNREADABLE  [ir.syntax]" in out and "2 models checked: 1 clean, 0 with errors, 1 unreadable" in out
    for argv in (["inspect", str(bad)], ["run", str(bad), "--layer", "1"], ["audit", str(bad)]):
        status, out, err = run_cli(capsys, *argv)
        assert (status, out) == (2, "")
        assert err.startswith(f"ovreduce {argv[0]}: ") and err.endswith("[ir.syntax]\n")


def test_a_model_left_unchecked_by_an_option_is_not_called_unreadable(capsys: pytest.CaptureFixture[str]) -> None:
    """A reshape naming no Parameter leaves a readable model unchecked: the summary says so, not "unreadable"."""
    status, out, err = run_cli(capsys, "check", str(SAMPLES / "rmsnorm.xml"), "--reshape", "nope=[1]")
    assert status == 2 and err == ""
    assert "NOT CHECKED  [input]" in out
    assert out.rstrip().endswith("1 model checked: 0 clean, 0 with errors, 0 unreadable, 1 not checked"), out


def test_every_format_keeps_a_model_left_unchecked_apart_from_an_unreadable_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """JSON keeps the IR version and layer count the model was read with; SARIF gives it a rule of its own, JUnit a
    case named for the check it did not get; an unreadable file keeps ``unreadable-ir``, "read" and nulls."""
    import json
    from xml.etree import ElementTree

    bad = tmp_path / "bad.xml"
    bad.write_text("<net")
    unchecked = ["check", str(SAMPLES / "rmsnorm.xml"), "--reshape", "nope=[1]"]
    unreadable = ["check", str(bad)]

    def formatted(argv: list[str], form: str) -> str:
        status, out, err = run_cli(capsys, *argv, "--format", form)
        assert status == 2 and err == "", err
        return out

    read, broken = (json.loads(formatted(argv, "json"))["models"][0] for argv in (unchecked, unreadable))
    _, text, _ = run_cli(capsys, "inspect", str(SAMPLES / "rmsnorm.xml"), "--format", "json")
    inspected = json.loads(text)
    assert (read["ir_version"], read["layer_count"]) == (inspected["ir_version"], inspected["layer_count"])
    assert read["error"]["code"] == "input"
    assert (broken["ir_version"], broken["layer_count"]) == (None, None)
    sarif = [json.loads(formatted(argv, "sarif"))["runs"][0]["results"] for argv in (unchecked, unreadable)]
    rules = [results[0]["ruleId"] for results in sarif]
    assert rules == ["model-not-checked", "unreadable-ir"]
    cases = [ElementTree.fromstring(formatted(argv, "junit")).find(".//testcase") for argv in (unchecked, unreadable)]
    assert [c.get("name") for c in cases if c is not None] == ["check", "read"]


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["run", ALL, "--layer", "mean_lst"], "did you mean 'mean_last'"),
        (["run", ALL, "--layer", "Mean_Last"], "did you mean 'mean_last'"),
        (["inspect", str(SAMPLES / "rmsnorm.xml"), "--layer", "rmsnorm/varience"], "did you mean 'rmsnorm/variance'"),
        (["inspect", ALL, "--layer", "Constant_5"], "did you mean"),
    ],
    ids=["run", "run-case", "inspect", "inspect-any-layer"],
)
def test_a_mistyped_layer_gets_did_you_mean(capsys: pytest.CaptureFixture[str], argv: list[str], hint: str) -> None:
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert "no layer with id or name" in err and hint in err and err.endswith("[not_found]\n")


def test_a_layer_far_from_every_name_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "run", ALL, "--layer", "zzzzzzzz")
    assert status == 2 and "did you mean" not in err


def test_run_without_layer_lists_the_reductions(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "run", ALL)
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == "ovreduce run: --layer ID_OR_NAME is required; the model's 9 reductions:"
    assert lines[1].split() == ["id", "name", "type"]
    assert ["19", "mean_last", "ReduceMean"] in [line.split() for line in lines[2:]]
    assert len(lines) == 2 + 9


def test_version_names_ovreduce_openvino_and_python(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    import ovreduce

    with pytest.raises(SystemExit) as exit_:
        run_cli(capsys, "--version")
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out == (
        f"ovreduce {ovreduce.__version__} (OpenVINO {version('openvino')}, Python {platform.python_version()})\n"
    )


@pytest.mark.parametrize("command", ["check", "inspect", "run", "audit", "conform"])
def test_a_folder_with_no_xml_is_a_usage_error_for_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """The one rule: a path that names nothing (a folder with no .xml among them) is ``[usage]``, for every command."""
    (tmp_path / "notes.txt").write_text("no model here\n")
    status, out, err = run_cli(capsys, command, str(tmp_path))
    assert (status, out) == (2, "")
    assert err.startswith(f"ovreduce {command}: {tmp_path}: ") and err.endswith(" [usage]\n"), err


@pytest.mark.parametrize("kind", ["device", "fifo"])
@pytest.mark.parametrize("command", ["check", "inspect", "run", "audit", "conform", "bin"])
def test_a_device_or_fifo_is_there_and_unreadable_for_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, kind: str
) -> None:
    """A device or a FIFO is there but cannot be read: ``check`` reported it ``[ir.structure]`` while the other
    commands called it ``not a file [usage]``, the class of a path that names nothing. Every command now gives the
    reader's code; a FIFO is refused without blocking."""
    path = tmp_path / ("m.onnx" if command == "conform" else "m.xml")
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/null")
    argv = {
        "check": ["check", str(path)],
        "inspect": ["inspect", str(path)],
        "run": ["run", str(path), "--layer", "1"],
        "audit": ["audit", str(path)],
        "conform": ["conform", str(path)],
        "bin": ["inspect", ALL, "--bin", str(path)],
    }[command]
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    what = {"conform": "an ONNX model (.onnx) file", "bin": "an IR weights (.bin) file"}.get(command, "an IR .xml file")
    said = f"it is {'a device' if kind == 'device' else 'a FIFO'}, expected {what}"
    if command == "check":
        assert "UNREADABLE  [ir.structure]" in out and said in out, out
    else:
        code = {"conform": "input", "bin": "ir.weights"}.get(command, "ir.structure")
        assert out == "" and said in err and err.endswith(f"[{code}]\n"), err


def test_a_folder_for_a_file_is_a_usage_error_saying_what_was_expected(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "inspect", str(SAMPLES))
    assert (status, out) == (2, "")
    assert err.endswith(f"{SAMPLES}: it is a folder, expected a file [usage]\n"), err
