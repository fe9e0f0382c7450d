"""``--extension`` on the commands where OpenVINO reads the model, and what each says of a model that needs an
extension no one loaded; optimum exports (their tokenizer IRs) check clean with openvino-tokenizers installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openvino_tokenizers
import pytest

from tests.cli.inprocess import run_cli
from tests.ir.extension_ops import LLAMA, ROOT, python, save_unknown_op_ir

SAMPLE = str(ROOT / "ir_samples" / "spec_examples.xml")
LIBRARY = str(openvino_tokenizers._ext_path)
HINT = "hint: load the extension with --extension PATH_OR_MODULE (its library, or a Python module that provides one)\n"
EXPECTED = (
    "expected an OpenVINO extension library (a .so, .dll or .dylib file) or the name of a Python module that "
    "provides one, such as openvino_tokenizers"
)


def test_an_optimum_export_checks_clean_on_openvino(capsys: pytest.CaptureFixture[str]) -> None:
    """The model, tokenizer and detokenizer IRs: OpenVINO reads all three with openvino-tokenizers' extension."""
    status, out, err = run_cli(capsys, "check", "--engine", "openvino", "--format", "json", str(LLAMA))
    doc = json.loads(out)
    assert (status, err) == (0, "")
    assert [(Path(m["path"]).name, m["ok"], m["findings"]) for m in doc["models"]] == [
        ("openvino_detokenizer.xml", True, []),
        ("openvino_model.xml", True, []),
        ("openvino_tokenizer.xml", True, []),
    ]
    assert all(r["openvino_output_resolved"] for m in doc["models"] for r in m["reductions"])


def test_worker_processes_load_the_extensions_too() -> None:
    """-j 2 checks in processes of their own (a fork server's, with the OpenVINO engine): each loads the
    tokenizers' extension and the named library, the document is the serial one."""
    argv = ["check", "--engine", "openvino", "--format", "json", "--extension", LIBRARY, str(LLAMA)]
    serial = subprocess.run([sys.executable, "-m", "ovreduce.cli", *argv], capture_output=True, text=True, cwd=ROOT)
    parallel = subprocess.run(
        [sys.executable, "-m", "ovreduce.cli", *argv, "-j", "2"], capture_output=True, text=True, cwd=ROOT
    )
    assert (parallel.returncode, parallel.stderr) == (0, ""), parallel.stderr
    assert json.loads(parallel.stdout) == json.loads(serial.stdout)


def test_a_library_named_by_path_is_loaded_where_the_package_is_hidden() -> None:
    """Without openvino-tokenizers' module, ``--extension`` with its library is what makes the tokenizer IR
    readable: the check fails without it and is clean with it."""
    argv = ["check", "--engine", "openvino", str(LLAMA / "openvino_tokenizer.xml")]
    code = "from ovreduce.cli import main\nraise SystemExit(main({!r}))"
    without = python(code.format(argv))
    assert without.returncode == 1
    assert "openvino-tokenizers is not installed" in without.stdout
    assert without.stderr == ""  # openvino-tokenizers' ops: the pip command is the advice, not --extension
    loaded = python(code.format([*argv, "--extension", LIBRARY]))
    assert (loaded.returncode, loaded.stderr) == (0, ""), loaded.stdout + loaded.stderr


def test_check_names_the_op_and_hints_at_the_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = save_unknown_op_ir(tmp_path)
    status, out, err = run_cli(capsys, "check", "--engine", "openvino", str(path))
    assert status == 1
    assert (
        "openvino-read-failed: model: OpenVINO could not read the model: the model has an op of no OpenVINO opset "
        "that no loaded extension provides: Frobnicate (version 'extension'); load the OpenVINO extension library "
        "that provides it" in out
    )
    assert err == f"ovreduce check: {HINT}"


def test_audit_names_the_op_and_hints_at_the_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = save_unknown_op_ir(tmp_path)
    status, out, err = run_cli(capsys, "audit", "--format", "json", str(path))
    assert status == 1
    assert json.loads(out)["error"].startswith(
        "OpenVINO could not read the model: the model has an op of no OpenVINO opset that no loaded extension "
        "provides: Frobnicate (version 'extension')"
    )
    assert err == f"ovreduce audit: {HINT}"


def test_conform_names_the_unconverted_op_and_hints_at_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    onnx = pytest.importorskip("onnx")
    helper, proto = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [
            helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example"),
            helper.make_node("ReduceMean", ["y"], ["z"], keepdims=1),
        ],
        "needs_an_extension",
        [helper.make_tensor_value_info("x", proto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", proto.FLOAT, None)],
    )
    path = tmp_path / "custom.onnx"
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]
    onnx.save(helper.make_model(graph, opset_imports=opsets), str(path))
    status, out, err = run_cli(capsys, "conform", "--format", "json", str(path))
    assert status == 1
    error = json.loads(out)["error"]
    assert "No conversion rule found for operations: com.example.Frobnicate" in error
    assert error.endswith(
        "(load the OpenVINO extension library that provides a conversion for them, or convert the model where "
        "they are known)"
    )
    assert err == f"ovreduce conform: {HINT}"


@pytest.mark.parametrize("command", ["check", "audit", "conform"])
def test_an_extension_that_is_not_there_is_a_usage_error(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Before anything is read (conform would refuse the .xml as ONNX, later)."""
    status, out, err = run_cli(capsys, command, "--extension", "missing/libcustom.so", SAMPLE)
    assert (status, out) == (2, "")
    assert err == f"ovreduce {command}: --extension missing/libcustom.so: no such file; {EXPECTED} [usage]\n"


def test_an_extension_openvino_refuses_is_an_input_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"not a shared library")
    status, out, err = run_cli(capsys, "check", "--engine", "openvino", "--extension", str(fake), SAMPLE)
    assert (status, out) == (2, "")
    assert err.startswith(f"ovreduce check: --extension {fake}: OpenVINO 2026.4.1 could not load it as an extension")
    assert err.endswith("; expected an extension library built for this OpenVINO [input]\n")


def test_a_module_name_is_an_extension(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "check", "--engine", "openvino", "--extension", "openvino_tokenizers", SAMPLE)
    assert (status, err) == (0, "")


@pytest.mark.parametrize("command", ["check", "audit", "conform"])
def test_help_documents_the_option(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit):
        run_cli(capsys, command, "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "--extension PATH_OR_MODULE an OpenVINO extension to load before OpenVINO reads the model" in text
    assert "openvino-tokenizers' extension (the ops of optimum's tokenizer IRs) is loaded without asking" in text


@pytest.mark.parametrize("engine", [[], ["--engine", "openvino"]], ids=["native", "openvino"])
@pytest.mark.parametrize("extension", ["json", "not-a-library"])
def test_an_extension_openvino_cannot_load_is_refused_before_any_model_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: list[str], extension: str
) -> None:
    """The native check loaded the extensions only when a model asked OpenVINO: the same wrong ``--extension`` was
    exit 0 for a clean model, and on a folder it made exactly the models OpenVINO was asked to confirm (the broken
    ones) NOT CHECKED, after the others were checked. It is loaded, as OpenVINO would, before any model is read."""
    if extension == "not-a-library":
        extension = str(tmp_path / "libnot.so")
        Path(extension).write_text("not a shared library")
    folder = str(ROOT / "ir_samples" / "broken")
    for models in ([SAMPLE], [folder]):
        status, out, err = run_cli(capsys, "check", "-j", "1", *engine, "--extension", extension, *models)
        assert (status, out) == (2, ""), (out, err)
        assert err.startswith(f"ovreduce check: --extension {extension}: ") and err.endswith(" [input]\n"), err
        assert err.count("\n") == 1, err
