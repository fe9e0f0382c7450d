"""``ovreduce audit`` on the command line: text and JSON, exit statuses, ``--input`` files. Never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovreduce.cli import main
from tests.cli.inprocess import run_cli as _run

from . import ov_models
from .test_audit import _expect_drift


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("audit_cli")
    np.save(folder / "hundreds.npy", np.full((2, 16), 100, np.uint8))
    np.save(folder / "tokens.npy", np.random.default_rng(2).standard_normal((1, 4, 256)).astype(np.float32))
    np.savez(folder / "inputs.npz", x=np.ones((1, 4, 256), np.float32), other=np.zeros(3))
    return {
        "rms": ov_models.rms_norm(folder / "rms.xml", hidden=256, tokens=4),
        "u8": ov_models.u8_mean(folder / "u8.xml"),
        "uncompilable": ov_models.uncompilable(folder / "uncompilable.xml"),
        "hundreds": folder / "hundreds.npy",
        "tokens": folder / "tokens.npy",
        "npz": folder / "inputs.npz",
    }


def test_text_report_at_f32(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", "f32")
    assert status == 0
    assert "CPU, precision f32" in out
    assert "precision: requested f32, compiled model infers in f32; reductions execute in f32 (1)" in out
    assert "input x: [1,4,256] f32 (seed 0)" in out
    header = next(line for line in out.splitlines() if "max abs" in line)
    for column in ("name", "type", "runs in", "max rel", "mismatched", "min atol", "min rtol", "status"):
        assert column in header
    assert "drift rel" not in header
    assert "mean_square" in out
    assert "final output" in out
    assert "result: every reduction within tolerance" in out


@pytest.mark.parametrize("precision", ["bf16", "default"])
def test_inaccurate_precision_reports_drift_and_passes(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], precision: str
) -> None:
    status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", precision)
    header = next(line for line in out.splitlines() if "max abs" in line)
    for column in ("drift rel", "from input", "added"):
        assert column in header
    assert status == 0  # drift is reported, not failed
    assert "DRIFT" not in out
    assert "reported, not judged (see --fail-on-drift)" in out
    if _expect_drift(precision):  # the plain run fuses it into a bf16 RMS kernel that was not observed
        assert "result: no reduction outside tolerance, but coverage is partial" in out
        assert "1 not established (each row says why" in out and "NOT ESTABLISHED" in out
    else:
        assert "result: every reduction within tolerance; largest drift from the f32 run" in out
    row = next(line for line in out.splitlines() if "mean_square" in line)
    # the header's summary of what the reductions execute in agrees with the row
    runs_in = row.split()[4]
    assert f"reductions execute in {runs_in} (1)" in out
    if _expect_drift(precision):
        assert "compiled model infers in bf16" in out


@pytest.mark.parametrize("precision", ["bf16", "f32"])
def test_fail_on_drift(capsys: pytest.CaptureFixture[str], files: dict[str, Path], precision: str) -> None:
    if precision == "f32":  # on the CPU an f32 audit measures no drift: the limit would have no effect
        status, out, err = _run(capsys, "audit", str(files["rms"]), "--precision", "f32", "--fail-on-drift", "1e-6")
        assert (status, out) == (2, "") and "(fail_on_drift 1e-06) with precision 'f32' on the CPU" in err, err
        return
    status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", precision, "--fail-on-drift", "1e-6")
    drifts = _expect_drift(precision)
    assert status == (1 if drifts else 0)
    if drifts:
        row = next(line for line in out.splitlines() if "mean_square" in line)
        assert row.rstrip().endswith("DRIFT")
        assert "DRIFT: drift rel above the --fail-on-drift limit 1e-06" in out
        assert "result: 1 reduction(s) drift above 1e-06" in out
    status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", precision, "--fail-on-drift", "0.5",
                          "--format", "json")  # fmt: skip
    doc = json.loads(out)
    assert (status, doc["ok"], doc["fail_on_drift"]) == (0, True, 0.5)
    if drifts:
        assert doc["layers"][0]["drift_split"]["limit"] == 0.5


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_a_bad_drift_limit_exits_2(capsys: pytest.CaptureFixture[str], files: dict[str, Path], value: str) -> None:
    status, out, err = _run(capsys, "audit", str(files["rms"]), f"--fail-on-drift={value}")
    assert (status, out) == (2, "")
    assert "--fail-on-drift must be a finite number >= 0" in err


def test_json_document(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", "f32", "--format", "json")
    doc = json.loads(out)
    assert status == 0
    assert doc["schema"] == "ovreduce.audit/v1"
    assert doc["ok"] is True
    [layer] = doc["layers"]
    assert {"max_abs_error", "max_rel_error", "mismatched", "total", "atol", "rtol", "required_atol",
            "required_rtol", "first_mismatch", "status"} <= set(layer)  # fmt: skip
    assert [set(f) for f in doc["final_outputs"]] == [{"name", "identical", "max_abs_diff", "max_rel_diff"}]


def test_inputs_from_files(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    for spec in (f"x={files['tokens']}", f"x={files['npz']}:x", f"0={files['tokens']}"):
        status, out, _ = _run(capsys, "audit", str(files["rms"]), "--precision", "f32", "--input", spec,
                              "--format", "json")  # fmt: skip
        doc = json.loads(out)
        assert status == 0, spec
        assert doc["inputs"] == [
            {"name": "x", "shape": [1, 4, 256], "element_type": "f32", "origin": "given", "defaulted_dims": []}
        ]


def test_integer_saturation_exits_1(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    status, out, _ = _run(capsys, "audit", str(files["u8"]), "--precision", "f32", "--input", f"x={files['hundreds']}")
    assert status == 1
    assert "input x: [2,16] u8 (given)" in out
    row = next(line for line in out.splitlines() if "mean_u8" in line)
    assert row.rstrip().endswith("ERROR")
    assert "1 reduction(s) outside tolerance" in out


def test_uncompilable_model_exits_1_with_openvinos_message(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    status, out, _ = _run(capsys, "audit", str(files["uncompilable"]))
    assert status == 1
    assert "OpenVINO failed: " in out
    assert "'empty_axes' gets incorrect number of input/output dimensions" in out
    status, out, _ = _run(capsys, "audit", str(files["uncompilable"]), "--format", "json")
    assert status == 1
    assert json.loads(out)["error"].startswith("OpenVINO failed: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "{tmp}/missing.xml"], "no such file"),
        (["audit", "{tmp}/not_xml.xml"], "the file is not text: it begins with the byte 0x00"),
        (["audit", "{u8}", "--input", "nope={hundreds}"], "'nope' names no model input"),
        (["audit", "{u8}", "--input", "x={tmp}/absent.npy"], "no such file"),
        (["audit", "{u8}", "--input", "x={tmp}/floats.npy"], "declares it u8; give it u8 values"),
    ],
    ids=["missing", "not-xml", "unknown-input", "missing-input-file", "wrong-kind"],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path, argv: list[str], message: str
) -> None:
    (tmp_path / "not_xml.xml").write_bytes(b"\x00\x01 binary")
    np.save(tmp_path / "floats.npy", np.zeros((2, 16), np.float32))
    filled = [a.format(tmp=tmp_path, u8=files["u8"], hundreds=files["hundreds"]) for a in argv]
    status, out, err = _run(capsys, *filled)
    assert status == 2
    assert out == ""
    assert err.startswith("ovreduce audit: ")
    assert message in err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", str(files["u8"]), "--precision", "f64"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'f64'" in capsys.readouterr().err


def test_no_traceback_from_a_real_process(files: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_text("<net")
    runs = [
        subprocess.run([sys.executable, "-m", "ovreduce.cli", *argv], capture_output=True, text=True, timeout=120)
        for argv in (["audit", str(broken)], ["audit", str(files["uncompilable"]), "--format", "json"])
    ]
    assert [r.returncode for r in runs] == [2, 1]
    assert json.loads(runs[1].stdout)["ok"] is False
    for r in runs:
        assert "Traceback" not in r.stdout + r.stderr


def test_the_progress_bar_moves_through_the_stages_on_a_terminal(files: dict[str, Path]) -> None:
    """On a terminal (stderr a pty) the bar names each stage while it runs; the document on stdout is the
    same as without a terminal."""
    import fcntl
    import os
    import pty
    import struct
    import termios
    import threading

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))  # a terminal 200 columns wide
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the follower side closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(files["rms"]), "--precision", "bf16"]
    try:
        run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=follower, text=True, timeout=120)
    finally:
        os.close(follower)
    reader.join(timeout=10)
    os.close(leader)
    bar = b"".join(chunks).decode(errors="replace")
    assert run.returncode == 0
    for stage in ("reading the model", "compiling the plain run", "compiling the audited run",
                  "compiling the f32 run", "inference of the f32 run"):  # fmt: skip
        assert stage in bar, (stage, bar)
    assert "step" in bar  # tqdm's counter of steps
    assert "Traceback" not in bar
    assert ("result: no reduction outside tolerance" if _expect_drift("bf16") else
            "result: every reduction within tolerance") in run.stdout  # fmt: skip
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert piped.stderr == ""  # no bar when stderr is not a terminal


@pytest.mark.parametrize(
    ("port_map", "said"),
    [("input", "input 2 slices axis 0 with stride 0"),
     ("output", "output 1 concatenates along axis 0, beside a sliced input, with stride 0")],
)  # fmt: skip
def test_a_loop_that_slices_with_stride_0_is_refused_not_run(tmp_path: Path, port_map: str, said: str) -> None:
    """OpenVINO reads a Loop whose sliced input, or whose concatenated output beside a sliced input, has stride 0, and
    its CPU plugin dies of it (SIGFPE): the audit says so instead of compiling it (in a process of its own here: the
    crash would take pytest with it)."""
    from tests.ir import subgraphs

    path = subgraphs.save(subgraphs.loop_model(), tmp_path, "loop")
    text = path.read_text()
    at = text.index(f'<{port_map} axis="0"')
    sliced = 'stride="1" part_size="1"'
    assert text.index(sliced, at) < text.index(">", at)
    path.write_text(text[:at] + text[at:].replace(sliced, 'stride="0" part_size="1"', 1))
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert f"{said}; OpenVINO compiles that into a crash" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("begin", "end", "why", "written"),
    [(2**62, 2**62, "overflow int64", "const"), (2**63 - 1, 2**63 - 1, "overflow int64", "const"),
     (-8, 10, "take more than the 3 elements it holds", "const"),
     (-8, 10, "take more than the 3 elements it holds", "convert"),
     (-8, 10, "take more than the 3 elements it holds", "concat")],
    ids=["overflow", "wrapping-sum", "taking-more", "taking-more-converted", "taking-more-concatenated"],
)  # fmt: skip
def test_a_pad_openvino_would_crash_on_is_refused_not_run(
    tmp_path: Path, begin: int, end: int, why: str, written: str
) -> None:
    """Constant pads that overflow int64, or take more from an axis than it holds: OpenVINO reads the Pad, and its CPU
    plugin reads and writes outside its buffers running it (SIGSEGV). Pads computed from Constants (an i32 Convert, a
    Concat: what exporters write) are read too."""
    import openvino as ov
    import openvino.opset12 as ops

    def pad(value: int) -> object:
        if written == "convert":
            return ops.convert(ops.constant(np.array([0, value], np.int32)), "i64")
        if written == "concat":
            return ops.concat([ops.constant(np.array([0], np.int64)), ops.constant(np.array([value], np.int64))], 0)
        return ops.constant(np.array([0, value], np.int64))

    x = ops.parameter([2, 3], np.float32, name="x")
    pads = [pad(v) for v in (begin, end)]
    padded = ops.pad(x, *pads, "constant")
    total = ops.reduce_sum(padded, ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "pad.xml"
    ov.save_model(ov.Model([ops.result(total)], [x], "pad"), str(path), compress_to_fp16=False)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert f"its pads on axis 1 (begin {begin}, end {end}) {why}" in done.stdout, done.stdout


def _indexing_model(tmp_path: Path, kind: str, indices: np.ndarray[Any, Any] | None) -> Path:
    """``x [1, 8]`` gathered by GatherND, or scattered into by a summing ScatterElementsUpdate along axis 1, with
    ``indices`` as a Constant (None: an input ``idx [1, 2]``), then reduced."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 8], np.float32, name="x")
    params = [x]
    if indices is None:
        params.append(ops.parameter([1, 2], np.int64, name="idx"))
    index = params[1] if indices is None else ops.constant(indices)
    if kind == "GatherND":
        fed = ops.gather_nd(x, index)
    else:
        updates = ops.constant(np.ones((1, 2 if indices is None else indices.shape[-1]), np.float32))
        fed = ops.scatter_elements_update(x, index, updates, ops.constant(np.int64(1)), "sum")
    total = ops.reduce_sum(fed, ops.constant(np.array([-1], np.int64)), True)
    path = tmp_path / "indexing.xml"
    ov.save_model(ov.Model([ops.result(total)], params, "indexing"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("kind", ["GatherND", "ScatterElementsUpdate"])
def test_constant_indices_outside_the_data_are_refused_not_run(tmp_path: Path, kind: str) -> None:
    """Indices outside the data: OpenVINO reads and compiles the model, and its CPU plugin follows them outside its
    buffers (SIGSEGV: in a process of its own here). The audit names the layer and the index, in its own words."""
    indices = np.array([[0, 99999999]], np.int64) if kind == "GatherND" else np.full((1, 8), -99999, np.int64)
    path = _indexing_model(tmp_path, kind, indices)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    axis, index = (1, 99999999) if kind == "GatherND" else (1, -99999)
    said = f"its indices hold index {index} for axis {axis} of the data, which has 8 there: expected [-8, 8)"
    assert said in done.stdout and "OpenVINO failed" not in done.stdout, done.stdout


def test_given_indices_outside_the_data_are_an_input_error(tmp_path: Path) -> None:
    """GatherND indices given to the audit: in range they run (a negative one counts from the end, as OpenVINO's
    CPU plugin takes it); outside the data they are the input's mistake, refused before OpenVINO would crash on it."""
    path = _indexing_model(tmp_path, "GatherND", None)
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input"]
    cases = [([[0, -8]], None), ([[0, 8]], "index 8 for axis 1 of the data, which has 8 there: expected [-8, 8)"),
             ([[-2, 0]], "index -2 for axis 0 of the data, which has 1 there: expected [-1, 1)")]  # fmt: skip
    for values, said in cases:
        np.save(tmp_path / "idx.npy", np.array(values, np.int64))
        done = subprocess.run([*argv, f"idx={tmp_path / 'idx.npy'}"], capture_output=True, text=True, timeout=120)
        assert done.returncode == (0 if said is None else 2), (values, done.returncode, done.stdout, done.stderr)
        if said is not None:
            assert f"given as input 'idx', hold {said}" in done.stderr, done.stderr
            assert done.stderr.rstrip().endswith("[input]"), done.stderr


def test_indices_computed_from_an_input_are_checked_as_openvino_computes_them(tmp_path: Path) -> None:
    """Exporters compute indices (an offset added, an Unsqueeze) from an input: the indices GatherND would follow
    are computed from the given input by OpenVINO's own evaluation of each op, and refused outside the data."""
    import openvino as ov
    import openvino.opset13 as ops

    x, idx = ops.parameter([1, 8], np.float32, name="x"), ops.parameter([2], np.int64, name="idx")
    offset = ops.add(ops.unsqueeze(idx, ops.constant(np.int64(0))), ops.constant(np.array([[0, 3]], np.int64)))
    total = ops.reduce_sum(ops.gather_nd(x, offset), ops.constant(np.array([-1], np.int64)), True)
    path = tmp_path / "computed.xml"
    ov.save_model(ov.Model([ops.result(total)], [x, idx], "computed"), str(path), compress_to_fp16=False)
    for values, code in (([0, 4], 0), ([0, 5], 2)):  # 4 + 3 is the last element; 5 + 3 is past it
        np.save(tmp_path / "idx.npy", np.array(values, np.int64))
        argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"idx={tmp_path / 'idx.npy'}"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == code, (values, done.returncode, done.stdout, done.stderr)
    assert ("computed from input(s) 'idx', hold index 8 for axis 1 of the data, which has 8 there: expected [-8, 8)"
            in done.stderr), done.stderr  # fmt: skip


def test_a_crash_of_openvino_that_ovreduce_does_not_judge_is_said(tmp_path: Path) -> None:
    """GatherND indices computed from an input through a tensor larger than ovreduce computes ahead (an offset added
    to 600,000 index pairs), one of them outside the data: OpenVINO's CPU plugin follows it (SIGSEGV). The command
    runs in a child process of its own: the crash is said in one line and exit 2, not a silent death."""
    import openvino as ov
    import openvino.opset13 as ops

    x, idx = ops.parameter([1, 8], np.float32, name="x"), ops.parameter([600_000, 2], np.int64, name="idx")
    shifted = ops.add(idx, ops.constant(np.zeros((1, 2), np.int64)))
    total = ops.reduce_sum(ops.gather_nd(x, shifted), ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "large.xml"
    ov.save_model(ov.Model([ops.result(total)], [x, idx], "large"), str(path), compress_to_fp16=False)
    values = np.zeros((600_000, 2), np.int64)
    values[-1, 1] = 99_999_999
    np.save(tmp_path / "idx.npy", values)
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"idx={tmp_path / 'idx.npy'}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert done.stderr.startswith("ovreduce audit: OpenVINO crashed the process (SIGSEGV, a segmentation fault)")
    assert done.stderr.rstrip().endswith("[backend]") and done.stderr.count("\n") == 1, done.stderr


def test_a_reorg_yolo_of_stride_0_is_refused_not_run(tmp_path: Path) -> None:
    """OpenVINO reads and compiles a ReorgYolo of stride 0, and its CPU plugin divides by it as it runs (SIGFPE): the
    audit names the layer instead."""
    import openvino as ov
    import openvino.opset12 as ops

    x = ops.parameter([1, 8, 8, 8], np.float32, name="x")
    total = ops.reduce_sum(ops.reorg_yolo(x, [2]), ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "reorg.xml"
    ov.save_model(ov.Model([ops.result(total)], [x], "reorg"), str(path), compress_to_fp16=False)
    path.write_text(path.read_text().replace('stride="2"', 'stride="0"'))
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert "its stride is 0; OpenVINO's CPU plugin divides by it" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("build", "said"),
    [("dft-signal", "DFT 'dft': its signal_size holds -5: expected a size of at least 1, or -1"),
     ("slice-axes", "Slice 'slice': its axes are computed at run time, and its data's shape is static")],
)  # fmt: skip
def test_dft_sizes_and_run_time_slice_axes_are_refused_not_run(tmp_path: Path, build: str, said: str) -> None:
    """A DFT's signal size of -5 (only -1 or a size is one) and a Slice of static data taking its axes at run time,
    valid axes too: OpenVINO reads and compiles both, and its CPU plugin crashes running them (SIGSEGV)."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 8, 4], np.float32, name="x")
    params = [x]
    if build == "dft-signal":
        pairs = ops.reshape(x, ops.constant(np.array([1, 16, 2], np.int64)), False)
        fed = ops.dft(pairs, ops.constant(np.array([1], np.int64)), ops.constant(np.array([-5], np.int64)))
    else:
        params.append(ops.parameter([1], np.int64, name="ax"))
        one = [ops.constant(np.array([v], np.int64)) for v in (0, 1, 1)]
        fed = ops.slice(x, *one, params[1])
    fed.set_friendly_name(build.split("-")[0])
    total = ops.reduce_sum(fed, ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "crash.xml"
    ov.save_model(ov.Model([ops.result(total)], params, "crash"), str(path), compress_to_fp16=False)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert said in done.stdout and "OpenVINO failed" not in done.stdout, done.stdout


def test_slice_axes_openvino_folds_from_a_static_shape_are_run(tmp_path: Path) -> None:
    """A Slice's axes computed from the static shape of its data (the rank less one) are not run-time axes: OpenVINO
    folds them as it compiles, and runs the model; so does the audit."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 8, 4], np.float32, name="x")
    axes = ops.subtract(ops.shape_of(ops.shape_of(x)), ops.constant(np.array([1], np.int64)))
    one = [ops.constant(np.array([v], np.int64)) for v in (0, 1, 1)]
    total = ops.reduce_sum(ops.slice(x, *one, axes), ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "folded.xml"
    ov.save_model(ov.Model([ops.result(total)], [x], "folded"), str(path), compress_to_fp16=False)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and "not audited" not in done.stdout, (done.returncode, done.stdout, done.stderr)


def test_given_pads_are_judged_as_constant_ones(tmp_path: Path) -> None:
    """Pads given as an input that take more from an axis than it holds and leave some of it: the input's error, as
    the same constant pads are refused (OpenVINO's CPU plugin reads and writes outside its buffers on them)."""
    import openvino as ov
    import openvino.opset13 as ops

    x, begin = ops.parameter([1, 8], np.float32, name="x"), ops.parameter([2], np.int64, name="pb")
    padded = ops.pad(x, begin, ops.constant(np.array([0, 2], np.int64)), "constant")
    total = ops.reduce_sum(padded, ops.constant(np.array([1], np.int64)), False)
    path = tmp_path / "pads.xml"
    ov.save_model(ov.Model([ops.result(total)], [x, begin], "pads"), str(path), compress_to_fp16=False)
    np.save(tmp_path / "pb.npy", np.array([0, -9], np.int64))
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"pb={tmp_path / 'pb.npy'}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert ("given as input 'pb', on axis 1 (begin -9, end 2) take more than the 8 elements it holds"
            in done.stderr), done.stderr  # fmt: skip


def test_a_pad_that_crops_an_axis_to_nothing_is_run(tmp_path: Path) -> None:
    """[2,3] padded by -5 and +2 is [2,0]: nothing is left to copy, and OpenVINO runs it; so does ovreduce."""
    import openvino as ov
    import openvino.opset12 as ops

    x = ops.parameter([2, 3], np.float32, name="x")
    pads = [ops.constant(np.array([0, v], np.int64)) for v in (-5, 2)]
    total = ops.reduce_sum(ops.pad(x, *pads, "constant"), ops.constant(np.array([1], np.int64)), False)
    path = tmp_path / "crop.xml"
    ov.save_model(ov.Model([ops.result(total)], [x], "crop"), str(path), compress_to_fp16=False)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert "outside its buffers" not in done.stdout and done.returncode >= 0, (done.returncode, done.stdout)
    assert "OpenVINO failed" not in done.stdout, done.stdout


def test_values_computed_through_shared_ops_are_computed_once(tmp_path: Path) -> None:
    """GatherND indices computed through 40 doublings of one tensor (``y = y + y``: each Add reads the one before
    twice), as residual blocks share their inputs: each op is computed once, not once per path to it (2**40), so an
    index pushed outside the data is still refused at once, and one within it runs."""
    import openvino as ov
    import openvino.opset13 as ops

    x, idx = ops.parameter([1, 8], np.float32, name="x"), ops.parameter([1, 2], np.int64, name="idx")
    doubled = idx
    for _ in range(40):
        doubled = ops.add(doubled, doubled)
    shifted = ops.floor_mod(doubled, ops.constant(np.array([[1, 1 << 62]], np.int64)))  # 2**40 idx mod 2**62
    total = ops.reduce_sum(ops.gather_nd(x, shifted), ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "shared.xml"
    ov.save_model(ov.Model([ops.result(total)], [x, idx], "shared"), str(path), compress_to_fp16=False)
    for values, code in (([0, 0], 0), ([0, 1], 2)):  # 0 stays 0; 1 becomes 2**40, past the 8 elements
        np.save(tmp_path / "idx.npy", np.array([values], np.int64))
        argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"idx={tmp_path / 'idx.npy'}"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == code, (values, done.returncode, done.stdout, done.stderr)
    assert f"computed from input(s) 'idx', hold index {1 << 40} for axis 1" in done.stderr, done.stderr


def test_pads_computed_from_an_inputs_shape_name_that_input(tmp_path: Path) -> None:
    """Pads that take more than an axis holds, computed from the shape of the input ``x`` (a ShapeOf, negated): the
    refusal names ``x``, whose shape is what is wrong."""
    import openvino as ov
    import openvino.opset13 as ops

    data, x = ops.parameter([4], np.float32, name="d"), ops.parameter([-1], np.float32, name="x")
    begin = ops.negative(ops.convert(ops.shape_of(x), "i64"))
    padded = ops.pad(data, begin, ops.constant(np.array([5], np.int64)), "constant")
    padded.set_friendly_name("P")
    total = ops.reduce_sum(padded, ops.constant(np.array([0], np.int64)), False)
    path = tmp_path / "pads.xml"
    ov.save_model(ov.Model([ops.result(total)], [data, x], "pads"), str(path), compress_to_fp16=False)
    np.save(tmp_path / "x.npy", np.ones([6], np.float32))
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"x={tmp_path / 'x.npy'}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "the pads of Pad 'P', computed from input(s) 'x', on axis 0 (begin -6, end 5)" in done.stderr, done.stderr


def test_a_bf16_target_for_a_gpu_is_refused(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    """OpenVINO's GPU plugin accepts an inference precision of f16, f32 or dynamic only (bf16 is an invalid value
    there) and runs f16 by default: a bf16 verdict says nothing of what a GPU computes. `--target bf16 --device GPU` is
    a usage error saying so, and the library refuses it too; `--target f16 --device GPU` is audited."""
    from ovreduce import load_ir
    from ovreduce.audit import audit_model
    from ovreduce.errors import InputError

    status, out, err = _run(capsys, "audit", str(files["rms"]), "--target", "bf16", "--device", "GPU")
    assert status == 2 and out == "", err
    assert "never runs bf16" in err and "expected --target f16" in err and err.rstrip().endswith("[usage]"), err
    with pytest.raises(InputError, match="never runs bf16"):
        audit_model(load_ir(files["rms"]), target="bf16", device="GPU.1")
    status, out, err = _run(capsys, "audit", str(files["rms"]), "--target", "f16", "--device", "GPU")
    assert status in (0, 1) and "target f16" in out, err


@pytest.mark.parametrize("device", ["AUTO:GPU", "MULTI:GPU,CPU", "HETERO:GPU.1,CPU", "BATCH:GPU(4)", "AUTO:CPU,GPU"])
def test_a_bf16_target_for_a_gpu_named_through_a_virtual_device_is_refused(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], device: str
) -> None:
    """OpenVINO's AUTO, MULTI, HETERO and BATCH devices place the model (or what the GPU supports of it) on the GPUs
    their list names: a bf16 verdict says nothing of what that GPU computes, as for ``--device GPU``. Checked before any
    device is asked for, so it holds on a machine without a GPU."""
    status, out, err = _run(capsys, "audit", str(files["rms"]), "--target", "bf16", "--device", device)
    assert status == 2 and out == "", err
    assert "never runs bf16" in err and device in err and err.rstrip().endswith("[usage]"), err


@pytest.mark.parametrize("device", ["NPU", "NPU.0", "AUTO:NPU", "HETERO:NPU,CPU", "MULTI:CPU,NPU"])
def test_a_bf16_target_for_an_npu_is_refused(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], device: str
) -> None:
    """OpenVINO's NPU plugin takes f32 or f16 as its inference precision and its hardware computes in f16 (its device
    documentation): `--target bf16 --device NPU` was audited on the CPU in its place and answered "bf16: no overflow"
    for an RMSNorm whose square overflows f16. It is a usage error, as for a GPU, and the library refuses it too;
    `--target f16` is audited."""
    from ovreduce import load_ir
    from ovreduce.audit import audit_model
    from ovreduce.errors import InputError

    status, out, err = _run(capsys, "audit", str(files["rms"]), "--target", "bf16", "--device", device)
    assert status == 2 and out == "", err
    assert "NPU plugin never runs bf16" in err and "expected --target f16" in err, err
    assert err.rstrip().endswith("[usage]") and (device == "NPU" or device in err), err
    with pytest.raises(InputError, match="never runs bf16"):
        audit_model(load_ir(files["rms"]), target="bf16", device=device)


def _bodied_model(tmp_path: Path, op: str, fed: str, holder: str) -> Path:
    """``x [4, 8]`` through an If (its condition computed from ``x``, so not folded) or a Loop of one iteration whose
    body (``holder`` "if", "loop", or "nested": an If inside the If's then-body) applies ``op`` ("gathernd": a
    GatherND of ``x`` by indices [1, 1]; "slice": a Slice of ``x`` along axes [1]) to a value the port maps feed from
    ``fed``: "constant" (a Constant around the body: indices [[100000]], axes [1]) or "input" (the model's input
    ``v``)."""
    import openvino as ov
    import openvino.opset13 as ops

    def c(values: object, dtype: type = np.int64) -> Any:
        return ops.constant(np.array(values, dtype))

    shape, etype = ([1, 1], np.int32) if op == "gathernd" else ([1], np.int64)
    x = ops.parameter([4, 8], np.float32, name="x")
    params = [x] + ([ops.parameter(shape, etype, name="v")] if fed == "input" else [])
    value = params[1] if fed == "input" else c([[100000]], np.int32) if op == "gathernd" else c([1])

    def apply(data: Any, given: Any) -> Any:
        if op == "gathernd":
            return ops.gather_nd(data, given)
        return ops.slice(data, c([0]), c([2]), c([1]), given)

    def guarded(data: Any, given: Any, depth: int) -> Any:
        """An If of ``apply`` (``depth`` Ifs deep) on ``data`` and ``given``, its else-branch of constant operands."""
        cond = ops.greater(ops.reduce_sum(data, c([0, 1]), False), ops.constant(np.float32(-1e30)))
        bodies = []
        for branch in ("then", "else"):
            bv, bx = ops.parameter(shape, etype, name=f"{branch}_v"), ops.parameter([4, 8], np.float32)
            operand = bv if branch == "then" else c(np.zeros(shape), etype)
            out = guarded(bx, bv, depth - 1) if branch == "then" and depth > 1 else apply(bx, operand)
            bodies.append(ov.Model([ops.result(out)], [bv, bx], branch))
        choice = ops.if_op(cond.output(0))
        choice.set_then_body(bodies[0])
        choice.set_else_body(bodies[1])
        for outer, i in ((given, 0), (data, 1)):
            choice.set_input(outer.output(0), bodies[0].get_parameters()[i], bodies[1].get_parameters()[i])
        return choice.set_output(bodies[0].get_results()[0], bodies[1].get_results()[0])

    if holder == "loop":
        bv, bx = ops.parameter(shape, etype), ops.parameter([4, 8], np.float32)
        body = ov.Model([ops.result(c(True, np.bool_)), ops.result(apply(bx, bv))], [bv, bx], "body")
        loop = ops.loop(c(1), c(True, np.bool_))
        loop.set_function(body)
        loop.set_special_body_ports([-1, 0])
        loop.set_invariant_input(bv, value.output(0))
        loop.set_invariant_input(bx, x.output(0))
        out = loop.get_iter_value(body.get_results()[1].output(0), -1)
    else:
        out = guarded(x, value, 2 if holder == "nested" else 1)
    total = ops.reduce_sum(out, c([-1]), True)
    path = tmp_path / "bodied.xml"
    ov.save_model(ov.Model([ops.result(total)], params, "bodied"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("holder", ["if", "nested", "loop"])
def test_what_openvino_crashes_on_inside_a_body_is_judged_through_its_port_maps(tmp_path: Path, holder: str) -> None:
    """A GatherND inside a body (an If's, an If's inside it, a Loop's) whose indices the port maps feed from a
    Constant around it or from a model input: OpenVINO's CPU plugin follows them as at the top level (SIGSEGV out of
    the data). Constant indices are refused before anything compiles, naming the layer; given ones are the input's
    error, naming the input and the value; in range they run."""
    path = _bodied_model(tmp_path, "gathernd", "constant", holder)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-500:])
    assert "its indices hold index 100000 for axis 0 of the data, which has 4 there: expected [-4, 4)" in done.stdout
    path = _bodied_model(tmp_path, "gathernd", "input", holder)
    argv = [sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--input", f"v={tmp_path / 'v.npy'}"]
    for value, code in ((3, 0), (100000, 2)):
        np.save(tmp_path / "v.npy", np.array([[value]], np.int32))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == code, (value, done.returncode, done.stdout, done.stderr)
    said = "given as input 'v', hold index 100000 for axis 0 of the data, which has 4 there: expected [-4, 4)"
    assert said in done.stderr and done.stderr.rstrip().endswith("[input]"), done.stderr


@pytest.mark.parametrize(("fed", "code"), [("input", 1), ("constant", 0)])
def test_slice_axes_a_body_takes_at_run_time_are_refused_not_run(tmp_path: Path, fed: str, code: int) -> None:
    """A Slice of static data inside an If's body whose axes its port map feeds from a model input: OpenVINO's CPU
    plugin crashes on it whatever the axes (SIGSEGV), so the audit refuses it by name, as at the top level. Fed from
    a Constant, OpenVINO folds the axes, and the model runs."""
    path = _bodied_model(tmp_path, "slice", fed, "if")
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr[-500:])
    said = "its axes are computed at run time, and its data's shape is static"
    assert (said in done.stdout) == (fed == "input") and "crashed" not in done.stderr, (done.stdout, done.stderr)
