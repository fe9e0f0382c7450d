"""Command lines a person or a script can get wrong, and streams that cannot take the output: each is a message and
exit status 2 (never 3, "internal error", nor a traceback), and a document is written whatever the file's name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "ir_samples" / "spec_examples.xml")


def _process(*args: str, **streams: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ovreduce.cli", *args], capture_output="stdout" not in streams,
                          timeout=180, check=False, **streams)  # type: ignore[call-overload]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", SAMPLE, "--layer", "8", "--seed", "-1"], "'-1' is not a seed"),
        (["audit", SAMPLE, "--seed", "1" * 5000], "is not a seed"),
        (["run", SAMPLE, "--layer", "8", "--atol", "nan"], "'nan' is not a tolerance"),
        (["audit", SAMPLE, "--rtol", "-1"], "'-1' is not a tolerance"),
        (["run", SAMPLE, "--layer", "8", "--rtol", "inf"], "'inf' is not a tolerance: a finite number >= 0"),
        (["audit", SAMPLE, "--timeout", "2147484"], "is not a positive number of seconds up to 2147483"),
        (["check", ""], "an empty path names no file"),
        (["audit", ""], "an empty path names no file"),
        (["check", SAMPLE, "--bin", ""], "an empty path names no file"),
    ],
)
def test_option_values_are_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str], says: str) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli(capsys, *args)
    assert info.value.code == 2
    assert says in capsys.readouterr().err


def test_a_file_name_the_system_refuses_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "check", "a" * 300 + ".xml")
    assert status == 2 and "File name too long [usage]" in err, err


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_file_name_that_is_not_utf8_is_written_escaped(tmp_path: Path, fmt: str) -> None:
    """Python keeps a name's undecodable bytes as lone surrogates, which UTF-8 (orjson, the URI) refuses."""
    model = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xff.xml"))
    model.write_bytes(Path(SAMPLE).read_bytes()[:-20])  # cut short: the result names the file, in SARIF too
    proc = _process("check", "--format", fmt, os.fsdecode(model))
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    text = json.dumps(doc)
    assert "bad\\\\xff.xml" in text or "bad%FF.xml" in text, text[:500]


@pytest.mark.parametrize("args", [["check", SAMPLE], ["devices"], ["--version"], ["--help"], ["run", "--help"],
                                  ["check", SAMPLE, "--format", "json"],
                                  ["check", str(ROOT / "ir_samples" / "broken")]])  # fmt: skip
def test_output_that_cannot_be_written_is_a_message_and_status_2(args: list[str]) -> None:
    """Whatever the verdict (``ir_samples/broken`` has findings), and tagged as the output's failure, not the command
    line's: the command line was right."""
    with open("/dev/full", "wb") as device:
        full = _process(*args, stdout=device, stderr=subprocess.PIPE)
    closed = subprocess.run(f"{sys.executable} -m ovreduce.cli {' '.join(args)} >&-", shell=True, capture_output=True,
                            timeout=180, check=False)  # fmt: skip
    for proc in (full, closed):
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        assert b"Traceback" not in proc.stderr and b"cannot write its output to standard output" in proc.stderr
        assert proc.stderr.endswith(b" [output]\n") and proc.stderr.count(b"\n") == 1, proc.stderr


def test_a_usage_error_is_status_2_with_standard_error_closed() -> None:
    proc = subprocess.run(f"{sys.executable} -m ovreduce.cli check no-such-file.xml 2>&-", shell=True,
                          capture_output=True, timeout=180, check=False)  # fmt: skip
    assert proc.returncode == 2


@pytest.mark.parametrize("args", [["serve", "--port", "99999"], ["serve", "--port", "-1"]])
def test_serve_refuses_what_it_cannot_bind(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli(capsys, *args)
    assert info.value.code == 2 and "is not a" in capsys.readouterr().err


def test_a_sarif_message_escapes_a_names_undecodable_bytes(tmp_path: Path) -> None:
    model = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xfe.xml"))
    model.write_bytes(Path(SAMPLE).read_bytes()[:-20])
    proc = _process("check", "--format", "sarif", os.fsdecode(model))
    text = proc.stdout.decode("utf-8")
    doc = json.loads(text)
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere: valid Unicode
    message = doc["runs"][0]["results"][0]["message"]["text"]
    assert "bad\\xfe.xml" in message, message


def test_running_out_of_memory_is_a_limit_not_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory the system refuses (NumPy's MemoryError while a reference reads a tensor whose shape depends on input
    values, under a memory cap) was exit 3, "internal error ... please report": it is exit 2, [limit.memory]."""
    from ovreduce.cli import entry

    def audit(_args: object) -> int:
        raise MemoryError("Unable to allocate 3.85 GiB for an array with shape (516855968,) and data type float64")

    monkeypatch.setitem(entry.COMMANDS, "audit", audit)
    status, out, err = run_cli(capsys, "audit", SAMPLE)
    assert status == 2 and out == ""
    assert err.startswith("ovreduce audit: it needs more memory than the process may use (") and "internal" not in err
    assert err.endswith("[limit.memory]\n"), err


def test_a_file_name_that_is_not_utf8_has_one_spelling_that_names_one_file(tmp_path: Path) -> None:
    """The byte 0xff and a name with a real backslash, x, f, f: text, JSON and JUnit spell each alike, and apart."""
    from xml.etree import ElementTree

    byte = Path(os.fsdecode(bytes(tmp_path) + b"/kd\xff.xml"))
    backslash = tmp_path / "kd\\xff.xml"
    for model in (byte, backslash):
        model.write_bytes(Path(SAMPLE).read_bytes())
        model.with_suffix(".bin").write_bytes(Path(SAMPLE).with_suffix(".bin").read_bytes())
    names = [os.fsdecode(model) for model in (byte, backslash)]
    expected = [f"{tmp_path}/kd\\xff.xml", f"{tmp_path}/kd\\\\xff.xml"]
    doc = json.loads(_process("check", "--format", "json", *names).stdout)
    assert [m["path"] for m in doc["models"]] == expected
    junit = ElementTree.fromstring(_process("check", "--format", "junit", *names).stdout)
    assert [suite.get("name") for suite in junit.iter("testsuite")] == expected
    text = _process("check", *names).stdout.decode()
    assert [line.split("  ")[0] for line in text.splitlines() if line.startswith(str(tmp_path))] == expected


def test_the_memory_limit_names_the_setting_that_holds_it() -> None:
    """A run whose tensors pass OVREDUCE_MAX_WORKER_BYTES: the refusal names the setting and its value, the one thing
    a user can change, not "the system"."""
    env = dict(os.environ, OVREDUCE_MAX_WORKER_BYTES=str(1 << 28))
    argv = [sys.executable, "-m", "ovreduce.cli", "run", str(ROOT / "ir_samples" / "dynamic.xml"), "--layer", "5",
            "--shape", "0=[256,8,16,8192]"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert f"(OVREDUCE_MAX_WORKER_BYTES, {1 << 28} bytes)" in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith("[limit.memory]"), done.stderr


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_verbose_with_a_report_format_is_refused(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """The JSON, SARIF and JUnit reports carry the info findings whatever ``-v`` says: it was accepted and did
    nothing. It is a usage error naming it, as an option a combination makes useless is."""
    status, out, err = run_cli(capsys, "check", SAMPLE, "-v", "--format", fmt)
    assert (status, out) == (2, "")
    assert err == (f"ovreduce check: -v with --format {fmt}: the {fmt} report lists the info findings always, so it "
                   f"has no effect; expected --format text, or no -v [usage]\n")  # fmt: skip
    status, out, _ = run_cli(capsys, "check", SAMPLE, "-v")
    assert status == 0 and out


def test_a_drift_limit_with_an_f32_audit_on_the_cpu_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """An audit in f32 on the CPU makes no f32 run to measure drift against: ``--fail-on-drift`` could never fail,
    and neither the text nor the JSON said so. The library refuses the pair (the service's audit answers it 400):
    an input error naming both."""
    rms = str(ROOT / "ir_samples" / "rmsnorm.xml")
    for device in ((), ("--device", "CPU")):
        status, out, err = run_cli(capsys, "audit", rms, "--precision", "f32", "--fail-on-drift", "0.0001", *device)
        assert (status, out) == (2, "")
        assert err == ("ovreduce audit: a drift limit (fail_on_drift 0.0001) with precision 'f32' on the CPU: the "
                       "audit runs in f32 there, so no drift from an f32 run is measured and the limit has no effect; "
                       "expected another precision, or the limit left out [input]\n")  # fmt: skip
    status, out, err = run_cli(capsys, "audit", rms, "--precision", "bf16", "--fail-on-drift", "1", "--format", "json")
    assert status == 0 and json.loads(out)["fail_on_drift"] == 1, err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", SAMPLE, "--layer", "mean_hw", "--layer", "mean_hw_keep"], "--layer is given twice, as 'mean_hw' and "
                                                                            "'mean_hw_keep'"),
        (["run", SAMPLE, "--layer", "8", "--device", "GPU", "--device", "CPU"], "--device is given twice, as 'GPU' and "
                                                                                "'CPU'"),
        (["run", SAMPLE, "--layer", "8", "--atol", "1", "--atol", "0"], "--atol is given twice, as 1.0 and 0.0"),
        (["check", SAMPLE, "--format", "json", "--format", "text"], "--format is given twice, as 'json' and 'text'"),
        (["audit", str(ROOT / "ir_samples" / "rmsnorm_f16.xml"), "--precision", "f32", "--target", "f16", "--target",
          "bf16"], "--target is given twice, as 'f16' and 'bf16'"),
        (["inspect", SAMPLE, "--layer", "8", "--layer", "9"], "--layer is given twice, as '8' and '9'"),
    ],
)  # fmt: skip
def test_an_option_of_one_value_given_twice_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """argparse kept the last value of an option given twice and dropped the first without a word (``--target f16
    --target bf16`` judged bf16 alone: the f16 overflow was not said, exit 0). It is a usage error, as a repeated
    ``--input`` port is."""
    status, out, err = run_cli(capsys, *argv)
    assert (status, out) == (2, "")
    assert err == f"ovreduce {argv[0]}: {says}; give it once [usage]\n"


@pytest.mark.parametrize(
    ("command", "argv", "says"),
    [
        ("run", ["--layer", "mean_hw", "--backend", "numpy", "--backend", "numpy"],
         "backend 'numpy' is given twice; each backend runs once, and is compared with the others"),
        ("run", ["--layer", "mean_hw", "--input", "0=X", "--input", "data=X"],
         "input 0 (data) is given twice, as '0' and 'data'; give it once"),
        ("run", ["--layer", "mean_hw", "--input", "0=X", "--shape", "0=[6,12,10,24]"],
         "input 0 (data) is given both an array and a shape; give one"),
        ("audit", ["--input", "data=X", "--shape", "data=[6,12,10,24]"],
         "is given both an array and a shape; give one"),
    ],
)  # fmt: skip
def test_an_input_given_twice_however_spelled_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, argv: list[str], says: str
) -> None:
    """``--input 0=F --input 0=F`` was ``[usage]``, but one input named twice another way (by its port and its name, as
    an array and a shape; a backend twice) was ``[input]``, with a hint to give it with ``--input``, which the user
    did: the command line alone is wrong, so it is a usage error, without that hint."""
    import numpy as np

    np.save(tmp_path / "x.npy", np.ones((6, 12, 10, 24), np.float32))
    argv = [a.replace("=X", f"={tmp_path / 'x.npy'}") for a in argv]
    status, out, err = run_cli(capsys, command, SAMPLE, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"ovreduce {command}: ") and err.endswith(f"{says} [usage]\n"), err
    assert "(give it with" not in err


@pytest.mark.parametrize(
    ("command", "argv", "name"),
    [
        ("run", ["--layer", "mean_hw"], "0"),
        ("audit", [], "data"),
    ],
)
@pytest.mark.parametrize("entry", ["", ":x"], ids=["file", "npz-entry"])
def test_an_input_that_is_a_folder_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, argv: list[str], name: str, entry: str
) -> None:
    """A folder where a command takes one file is a usage error (``it is a folder, expected a file``), as for MODEL
    and ``--bin``; ``--input NAME=FOLDER`` was ``[input]``, "it is a directory"."""
    folder = tmp_path / ("d.npz" if entry else "d")
    folder.mkdir()
    status, out, err = run_cli(capsys, command, SAMPLE, *argv, "--input", f"{name}={folder}{entry}")
    assert (status, out) == (2, "")
    assert err == (f"ovreduce {command}: --input {name}={folder}{entry}: it is a folder, expected a file (a .npy, .npz "
                   f"or ONNX TensorProto .pb file) [usage]\n")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["check", "no-such-file.xml"], "ovreduce check: no-such-file.xml: no such file [usage]\n"),
        (["run", SAMPLE, "--layer", "nope"], "ovreduce run: no layer with id or name 'nope' in "),
        (["run", SAMPLE], "ovreduce run: --layer ID_OR_NAME is required; the model's "),
        (["check", SAMPLE], "ovreduce check: cannot write its output to standard output: it is closed [output]\n"),
    ],
)
def test_with_standard_output_closed_the_command_line_is_read_first(args: list[str], says: str) -> None:
    """Started with standard output closed, every command said it could not write its output before it read its
    command line: a missing file, a mistyped layer, the reduction list (written on stderr) were never said."""
    closed = subprocess.run(f"{sys.executable} -m ovreduce.cli {' '.join(args)} >&-", shell=True, capture_output=True,
                            timeout=180, check=False)  # fmt: skip
    assert closed.returncode == 2 and closed.stderr.decode().startswith(says), closed.stderr
    assert b"Traceback" not in closed.stderr


def test_an_onnx_model_given_for_an_ir_and_an_ir_given_to_conform_are_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The commonest mix-up: an ONNX model given to check or inspect was "not text ... (the weights, the .bin, given
    as the .xml?)", an IR given to conform protobuf's "Wire format was corrupt". Each message names what the file is,
    and the command that reads it; the weights given as the .xml keep their hint."""
    onnx = str(ROOT / "tests" / "golden" / "models" / "several_reductions.onnx")
    for command in ("check", "inspect"):
        _, out, err = run_cli(capsys, command, onnx)
        assert "the file is an ONNX model (protobuf), not an OpenVINO IR's XML: 'ovreduce conform' reads" in out + err
    pytest.importorskip("onnx")
    status, _, err = run_cli(capsys, "conform", SAMPLE)
    assert status == 2, err
    assert "it is XML, an OpenVINO IR's .xml, which 'ovreduce check', inspect, run and audit read" in err
    (tmp_path / "weights.xml").write_bytes(b"\x00\x00\x80\x3f\x00\x00\x00\x40")  # f32 weights
    _, out, _ = run_cli(capsys, "check", str(tmp_path / "weights.xml"))
    assert "(the weights, the .bin, given as the .xml?)" in out and "ONNX" not in out


@pytest.mark.parametrize("width", ["abc", "-1", "80px"])
def test_a_width_that_is_not_a_number_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: str
) -> None:
    """``OVREDUCE_WIDTH=abc`` was ignored without a word (on a terminal, fitting silently off, as only 0 is said to
    do), where every other ``OVREDUCE_*`` setting the command line reads is a usage error when malformed."""
    monkeypatch.setenv("OVREDUCE_WIDTH", width)
    status, out, err = run_cli(capsys, "check", SAMPLE)
    assert (status, out) == (2, "")
    assert err == f"ovreduce check: OVREDUCE_WIDTH={width!r}: expected a number of columns (0: no fitting) [usage]\n"


@pytest.mark.parametrize(("argv", "says"), [
    (["--version", "extra"], "--version takes nothing else, but 'extra' was given too; expected --version alone"),
    (["--version", "check", SAMPLE], "--version takes nothing else, but 'check' was given too; expected --version "
                                     "alone"),
    (["--version", "--version"], "--version is given twice; give it once"),
])  # fmt: skip
def test_version_with_anything_else_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """argparse's version action printed the version and exited 0, the rest of the command line dropped."""
    status, out, err = run_cli(capsys, *argv)
    assert (status, out, err) == (2, "", f"ovreduce: {says} [usage]\n")
    with pytest.raises(SystemExit) as done:
        run_cli(capsys, "--version")
    assert done.value.code == 0 and capsys.readouterr().out.startswith("ovreduce ")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-v", "check", SAMPLE], "ovreduce: error: '-v' is an option of 'check': write it after the command"),
        (["--format", "json", "check", SAMPLE], "'--format' is an option of 'check': write it after the command"),
        (["-j2", "check", SAMPLE], "'-j' is an option of 'check'"),
        (["--seed", "3", "run", SAMPLE], "'--seed' is an option of 'run'"),
        (["--store=x", "serve"], "'--store' is an option of 'serve'"),
        (["check", "-dash.xml"], "ovreduce check: error: '-dash.xml' is read as an option, and 'check' has none of "
                                 "that name: a path that begins with '-' goes after '--' (ovreduce check -- "
                                 "-dash.xml) or as ./-dash.xml"),
        (["inspect", "-dash.xml"], "'-dash.xml' is read as an option, and 'inspect' has none of that name"),
    ],
)  # fmt: skip
def test_what_argparse_would_blame_on_something_else_is_said_as_it_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], says: str
) -> None:
    """A command's option written before the command was "check: unrecognized arguments: -v" (check takes -v) or
    "invalid choice: 'json'" (its value taken for the command); a model named ``-dash.xml`` was "the following
    arguments are required: PATH". Each is said as it is, exit 2."""
    for suffix in (".xml", ".bin"):
        (tmp_path / f"-dash{suffix}").write_bytes(
            (ROOT / "ir_samples" / "spec_examples").with_suffix(suffix).read_bytes()
        )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        run_cli(capsys, *args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert says in err, err
    assert "invalid choice" not in err and "unrecognized arguments" not in err and "are required" not in err


def test_a_path_that_begins_with_a_dash_is_read_after_two_dashes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for suffix in (".xml", ".bin"):
        (tmp_path / f"-dash{suffix}").write_bytes(
            (ROOT / "ir_samples" / "spec_examples").with_suffix(suffix).read_bytes()
        )
    monkeypatch.chdir(tmp_path)
    status, out, _ = run_cli(capsys, "check", "--", "-dash.xml")
    assert status == 0 and out.startswith("-dash.xml  OK")
