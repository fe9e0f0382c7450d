"""``ovreduce conform`` on the command line: text and JSON, exit statuses, ``--save-ir`` for check and run,
inputs as ONNX ``TensorProto`` files laid out like ONNX's own data sets. Never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ovreduce.cli import main
from ovreduce.compare import compare
from tests.cli.inprocess import run_cli as _run

from . import onnx_models
from .test_qlinear_reduce_mean import CASES as QCASES

COMPARISON_FIELDS = set(compare(np.zeros(1), np.zeros(1)).to_json()) - {"reference", "candidate"}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("conform_cli")
    q = QCASES["u8-zp0-to-zp1"]
    np.save(folder / "q_x.npy", q.data)
    return {
        "several": onnx_models.save(onnx_models.several_reductions(), folder / "several.onnx"),
        "qlinear": onnx_models.save(q.model(), folder / "qlinear.onnx"),
        "unknown": onnx_models.save(onnx_models.unknown_op(), folder / "unknown.onnx"),
        "dead": onnx_models.save(onnx_models.dead_reduce_mean(), folder / "dead.onnx"),
        "q_x": folder / "q_x.npy",
    }


def test_json_document(capsys: pytest.CaptureFixture[str], models: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "conform", str(models["several"]), "--format", "json", "--seed", "5")
    doc = json.loads(out)
    assert status == 0
    assert doc["schema"] == "ovreduce.conform/v1"
    assert {"ok", "model", "opset", "device", "precision", "error", "inputs", "nodes", "saved_ir", "notes"} <= set(doc)
    assert (doc["ok"], doc["opset"], doc["device"], doc["precision"]) == (True, 18, "CPU", "f32")
    assert doc["inputs"][0]["origin"] == "seed 5"
    assert len(doc["nodes"]) == 4
    for node in doc["nodes"]:
        assert set(node) >= COMPARISON_FIELDS, COMPARISON_FIELDS - set(node)
        assert {"node", "op_type", "domain", "version", "observable", "missing_tensors", "status"} <= set(node)
        assert node["total"] == 3


def test_inputs_from_npz_entries(capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path) -> None:
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    np.savez(tmp_path / "inputs.npz", x=x, unrelated=np.zeros(2))
    status, out, _ = _run(capsys, "conform", str(models["several"]), "--input", f"x={tmp_path / 'inputs.npz'}:x",
                          "--format", "json")  # fmt: skip
    doc = json.loads(out)
    assert status == 0
    assert doc["inputs"] == [
        {"name": "x", "shape": [3, 5], "element_type": "f32", "origin": "given", "defaulted_dims": []}
    ]


def test_text_report(capsys: pytest.CaptureFixture[str], models: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "conform", str(models["several"]))
    assert status == 0
    assert "opset 18, CPU, precision f32" in out
    for name in ("sum", "max", "l2", "mean"):
        assert name in out
    assert "ReduceMean-18" in out
    assert "result: every node conforms" in out


def test_quantized_disagreement_exits_1(capsys: pytest.CaptureFixture[str], models: dict[str, Path]) -> None:
    """OpenVINO truncates 1.5 to 1 where QLinearReduceMean rounds to 2 (see test_qlinear_reduce_mean.py)."""
    argv = ["conform", str(models["qlinear"]), "--input", f"x={models['q_x']}"]
    q = QCASES["u8-zp0-to-zp1"]
    agree = bool(np.array_equal(onnx_models.openvino_output(models["qlinear"], {"x": q.data}), q.want))
    status, out, _ = _run(capsys, *argv)
    assert status == (0 if agree else 1)
    if not agree:
        assert "DISAGREE" in out
        assert "qrm: first mismatch at [2, 0]: onnx=3 openvino=" in out
        assert "dequantized max abs difference 0.25" in out
        assert "conversion does not conform" in out
    status, out, _ = _run(capsys, *argv, "--format", "json")
    doc = json.loads(out)
    assert doc["ok"] is agree
    assert doc["nodes"][0]["exact"] is True
    assert doc["inputs"] == [
        {"name": "x", "shape": [6, 2], "element_type": "u8", "origin": "given", "defaulted_dims": []}
    ]


def test_conversion_failure_exits_1_with_openvinos_message(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path]
) -> None:
    status, out, _ = _run(capsys, "conform", str(models["unknown"]))
    assert status == 1
    assert "OpenVINO could not convert the model" in out
    assert "NoSuchOp" in out
    assert "not observable" in out
    status, out, _ = _run(capsys, "conform", str(models["unknown"]), "--format", "json")
    assert status == 1
    assert "NoSuchOp" in json.loads(out)["error"]


def test_not_observable_node_exits_1(capsys: pytest.CaptureFixture[str], models: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "conform", str(models["dead"]))
    assert status == 1
    assert "not observable" in out
    assert "'unused'" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["conform", "{tmp}/missing.onnx"], "no such file"),
        (["conform", "{tmp}/garbage.onnx"], "not a readable ONNX model"),
        (["conform", "{tmp}/empty.onnx"], "not an ONNX model"),
        (["conform", "{several}", "--input", "nope={tmp}/x.npy"], "'nope' names no model input"),
        (["conform", "{several}", "--input", "x={tmp}/absent.npy"], "no such file"),
        (["conform", "{several}", "--input", "x"], "expected NAME=FILE"),
    ],
    ids=["missing", "garbage", "empty", "unknown-input", "missing-input-file", "malformed-input"],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path, argv: list[str], message: str
) -> None:
    (tmp_path / "garbage.onnx").write_bytes(b"\x00\x01 definitely not protobuf \xff\xfe")
    (tmp_path / "empty.onnx").write_bytes(b"")
    np.save(tmp_path / "x.npy", np.zeros((3, 5), np.float32))
    filled = [a.format(tmp=tmp_path, several=models["several"]) for a in argv]
    status, out, err = _run(capsys, *filled)
    assert status == 2
    assert out == ""
    assert message in err
    assert err.startswith("ovreduce conform: ")


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str], models: dict[str, Path]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["conform", str(models["several"]), "--precision", "f8"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'f8'" in capsys.readouterr().err


def test_save_ir_then_check_and_run_with_onnx_data_set_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """ONNX's test data set layout (``test_data_set_0/input_0.pb``...) written with ``numpy_helper``, given
    to conform and to run on the saved IR; check reads the saved IR cleanly."""
    case = next(c for c in onnx_models.backend_node_cases("ReduceMean") if c.name.endswith("keepdims_random"))
    model = onnx_models.save(case.model, tmp_path / "model.onnx")
    data_set = tmp_path / "test_data_set_0"
    data_set.mkdir()
    feeds = onnx_models.case_inputs(case)
    files = {}
    for i, (name, array) in enumerate(feeds.items()):
        files[name] = data_set / f"input_{i}.pb"
        files[name].write_bytes(numpy_helper.from_array(array, name).SerializeToString())
    expected = onnx_models.case_expected(case)
    inputs = [a for name, path in files.items() for a in ("--input", f"{name}={path}")]

    status, out, _ = _run(capsys, "conform", str(model), *inputs, "--save-ir", str(tmp_path / "ir"), "--format",
                          "json")  # fmt: skip
    doc = json.loads(out)
    assert status == 0, doc
    assert [i["origin"] for i in doc["inputs"]] == ["given", "given"]
    saved = Path(doc["saved_ir"])
    assert saved.is_file()
    assert saved.with_suffix(".bin").is_file()

    status, out, _ = _run(capsys, "conform", str(model), *inputs, "--save-ir", str(tmp_path / "ir2"))
    assert status == 0
    assert f"converted IR saved to {tmp_path / 'ir2'}" in out

    status, out, _ = _run(capsys, "check", str(saved))
    assert status == 0, out

    outputs = tmp_path / "outputs"
    status, out, _ = _run(capsys, "run", str(saved), "--layer", "reduced", *inputs, "--save-outputs", str(outputs),
                          "--format", "json")  # fmt: skip
    assert status == 0, out
    assert json.loads(out)["ok"] is True
    for backend in ("numpy", "openvino-CPU"):
        got = np.load(outputs / f"{backend}.npy")
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_save_ir_into_an_unwritable_place_exits_2(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path
) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    expected = "expected DIR, a folder ovreduce can create or write the converted IR in [usage]\n"
    status, out, err = _run(capsys, "conform", str(models["several"]), "--save-ir", str(blocker / "sub"))
    assert (status, out) == (2, "")
    assert err == f"ovreduce conform: --save-ir {blocker / 'sub'}: {blocker} is not a folder; {expected}"
    for place in (blocker, Path(os.devnull)):  # refused before the conversion, in --save-outputs's words
        status, out, err = _run(capsys, "conform", str(models["several"]), "--save-ir", str(place))
        assert (status, out) == (2, "")
        assert err == f"ovreduce conform: --save-ir {place}: it is not a folder; {expected}"


def _subprocess(*argv: str) -> Any:
    return subprocess.run([sys.executable, "-m", "ovreduce.cli", *argv], capture_output=True, text=True, timeout=120)


def test_no_traceback_from_a_real_process(models: dict[str, Path], tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00 not a model")
    bad = _subprocess("conform", str(garbage))
    failing = _subprocess("conform", str(models["unknown"]), "--format", "json")
    assert (bad.returncode, failing.returncode) == (2, 1)
    assert "not a readable ONNX model" in bad.stderr
    assert json.loads(failing.stdout)["ok"] is False
    for proc in (bad, failing):
        assert "Traceback" not in proc.stdout + proc.stderr


def test_the_cli_holds_itself_to_a_memory_bound(tmp_path: Path) -> None:
    """A 238-byte model whose Expand target is computed from the input ([25001, 25001]: 2.5 GB of f32, then more):
    no budget sizes it before it is computed. Bounded as a worker of the service is, the process fails it as a limit
    (exit 2) where it took the machine's memory."""
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Add", ["a", "big"], ["b"]),
        helper.make_node("Cast", ["b"], ["s"], to=TensorProto.INT64),
        helper.make_node("Concat", ["s", "s"], ["shape"], axis=0),
        helper.make_node("Expand", ["one", "shape"], ["e"]),
        helper.make_node("ReduceSum", ["e", "axes"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([2.5e4], np.float32), "big"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.float32(1), "one"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = tmp_path / "expand.onnx"
    path.write_bytes(model.SerializeToString())
    env = {**os.environ, "OVREDUCE_MAX_WORKER_BYTES": str(1 << 30)}
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "conform", str(path)], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 2 and done.stderr.rstrip().endswith("[limit.memory]"), (done.returncode, done.stderr)
    assert "more memory than this process may use" in done.stderr
    env["OVREDUCE_MAX_WORKER_BYTES"] = "4GB"
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "conform", str(path)], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 2 and "OVREDUCE_MAX_WORKER_BYTES='4GB': expected a number of bytes" in done.stderr


def test_the_bound_is_the_programs_not_a_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    """main() called in process (a script, a notebook, these tests) leaves the caller's memory limit as it was; the
    ``ovreduce`` program's bound is a soft limit, which the process may raise again."""
    import resource

    monkeypatch.setenv("OVREDUCE_MAX_WORKER_BYTES", str(1 << 30))
    before = resource.getrlimit(resource.RLIMIT_DATA)
    assert main(["devices", "--format", "json"]) == 0
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    code = ("import resource, sys; from ovreduce.cli.entry import main; main(['devices'], bounded=True); "
            "soft, hard = resource.getrlimit(resource.RLIMIT_DATA); print(soft, hard)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OVREDUCE_MAX_WORKER_BYTES": str(1 << 30)})  # fmt: skip
    soft, hard = (int(v) for v in done.stdout.split()[-2:])
    assert soft == 1 << 30 and hard == before[1], done.stdout


def test_save_ir_where_openvino_cannot_write_is_exit_2(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path
) -> None:
    """A folder named as the .bin is: OpenVINO's serializer raises RuntimeError, which ended in an internal error."""
    (tmp_path / "ir" / "several.bin").mkdir(parents=True)
    status, _, err = _run(capsys, "conform", str(models["several"]), "--save-ir", str(tmp_path / "ir"))
    assert status == 2 and "internal error" not in err, err
    assert err.startswith(f"ovreduce conform: --save-ir {tmp_path / 'ir'}: cannot write there (") and err.endswith(
        "); expected DIR, a folder ovreduce can create or write the converted IR in [usage]\n"
    ), err


def test_an_interrupt_during_openvino_s_run_ends_the_command_at_once(tmp_path: Path) -> None:
    """A Loop of 10^9 steps before a ReduceMean: SIGINT while OpenVINO runs it ends the command, exit 130, without
    waiting for the inference it cannot stop."""
    import signal
    import time

    path = tmp_path / "loop.onnx"
    path.write_bytes(onnx_models.endless_loop_before_a_mean().SerializeToString())
    process = subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "conform", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    time.sleep(8)  # converted, compiled, and in OpenVINO's run
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("still running 30 s after SIGINT")
    assert process.returncode == 130 and err.endswith("ovreduce: interrupted\n"), err
    assert time.monotonic() - sent < 15


def test_save_ir_replaces_links_and_leaves_their_targets_alone(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], tmp_path: Path
) -> None:
    """As --save-outputs: a link already in DIR is replaced by the IR, not written through."""
    victims = {suffix: tmp_path / f"victim{suffix}" for suffix in (".xml", ".bin")}
    folder = tmp_path / "ir"
    folder.mkdir()
    for suffix, victim in victims.items():
        victim.write_text("precious\n")
        (folder / f"several{suffix}").symlink_to(victim)
    status, _, err = _run(capsys, "conform", str(models["several"]), "--save-ir", str(folder))
    assert status in (0, 1), err
    for suffix, victim in victims.items():
        assert victim.read_text() == "precious\n"
        assert not (folder / f"several{suffix}").is_symlink()
    assert sorted(p.name for p in folder.iterdir()) == ["several.bin", "several.xml"]
    assert main(["check", str(folder / "several.xml")]) == 0
