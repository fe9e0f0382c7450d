"""``ovreduce run`` end to end: inputs from files, shapes, saved outputs, the JSON document, exit statuses.

Exit statuses: 0 every backend ran and they agree, 1 a disagreement or a failed backend, 2 unusable input or
usage. No output ever holds a Python traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovreduce.cli import main
from tests.cli.inprocess import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
ALL = str(SAMPLES / "all_reductions.xml")
RUNTIME = str(SAMPLES / "runtime_axes.xml")
DYNAMIC = str(SAMPLES / "dynamic.xml")


def ovreduce(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "run", *args)


def ovreduce_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status, out, _err = ovreduce(capsys, *args, "--format", "json")
    return status, json.loads(out)


# -- runtime axes from a file ----------------------------------------------------------------------------------
def test_runtime_axes_without_a_file_says_how_to_give_them(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = ovreduce(capsys, RUNTIME, "--layer", "mean_one_runtime_axis")
    assert status == 2
    assert out == ""
    assert "takes its axes at run time" in err and "--input NAME=FILE" in err and "[input]" in err


@pytest.mark.parametrize("name", ["1", "axis"])
def test_runtime_axes_from_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    np.save(tmp_path / "axes.npy", np.array([1], np.int64))
    status, doc = ovreduce_json(
        capsys, RUNTIME, "--layer", "mean_one_runtime_axis", "--input", f"{name}={tmp_path}/axes.npy"
    )
    assert status == 0, doc
    assert doc["ok"] is True
    assert doc["inputs"][1] == {"name": "1", "shape": [1], "datatype": "INT64", "defaulted_dims": []}
    assert [r["shape"] for r in doc["results"]] == [[4, 8], [4, 8]]


def test_runtime_axes_from_an_npz_entry(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    np.savez(tmp_path / "in.npz", axes=np.array([0, 2], np.int64), other=np.zeros(3))
    status, doc = ovreduce_json(
        capsys, RUNTIME, "--layer", "mean_runtime_axes_keep", "--input", f"axes={tmp_path}/in.npz:axes"
    )
    assert status == 0
    assert doc["results"][1]["shape"] == [1, 6, 1]


# -- shapes for dynamic inputs ------------------------------------------------------------------------------------
def test_dynamic_dims_default_to_one_and_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = ovreduce(capsys, DYNAMIC, "--layer", "mean_static_dim")
    assert status == 0, out + err
    assert "note: input 0 (data): dynamic dimension 0 (?) set to 1" in out
    assert "note: input 0 (data): dynamic dimension 1 (3..8) set to 3" in out
    assert "input 0: [1,3,16,1] FP32" in out
    assert "AGREE" in out


def test_shape_option_sets_the_generated_shape(capsys: pytest.CaptureFixture[str]) -> None:
    status, doc = ovreduce_json(capsys, DYNAMIC, "--layer", "mean_static_dim", "--shape", "x=[2,4,16,3]")
    assert status == 0
    assert doc["inputs"][0]["shape"] == [2, 4, 16, 3]
    assert doc["notes"] == []
    assert [r["shape"] for r in doc["results"]] == [[2, 4, 3], [2, 4, 3]]


def test_dynamic_rank_without_shape_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = ovreduce(capsys, DYNAMIC, "--layer", "sum_dynamic_rank")
    assert status == 2
    assert "has a dynamic rank; give its shape" in err and "--shape NAME=SHAPE" in err


def test_the_name_a_message_calls_an_input_by_is_a_name_run_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """The messages call a port ``input 0 (data)``; ``--shape data=...`` was refused as naming no input (the
    Parameter feeding it is ``y``). Each port's own word names it, as the index and the Parameter's name do."""
    status, _out, err = ovreduce(capsys, DYNAMIC, "--layer", "sum_dynamic_rank")
    assert status == 2 and "input 0 (data) has a dynamic rank" in err, err
    status, doc = ovreduce_json(capsys, DYNAMIC, "--layer", "sum_dynamic_rank", "--shape", "data=[2,3]")
    assert status == 0 and doc["outcome"] == "agree", doc
    status, _out, err = ovreduce(capsys, DYNAMIC, "--layer", "sum_dynamic_rank", "--shape", "zz=[2,3]")
    assert status == 2 and "use one of: 0, data, y" in err, err


@pytest.mark.parametrize("shape", ["y=[2,3]", "y[2,3]", "0=[2,3]", "0[2,3]"])
def test_dynamic_rank_with_shape_reaches_the_cpu(capsys: pytest.CaptureFixture[str], shape: str) -> None:
    """The CPU plugin refuses a Parameter of dynamic rank; the layer is compiled for the given shape instead,
    in ovreduce's NAME=SHAPE syntax or benchmark_app's NAME[SHAPE]."""
    status, doc = ovreduce_json(capsys, DYNAMIC, "--layer", "sum_dynamic_rank", "--shape", shape)
    assert status == 0, doc
    numpy_doc, ov_doc = doc["results"]
    assert numpy_doc["ok"] and numpy_doc["shape"] == [1, 3] and numpy_doc["datatype"] == "FP16"
    assert ov_doc["ok"] and ov_doc["shape"] == [1, 3], ov_doc
    assert doc["outcome"] == "agree" and doc["comparisons"][0]["ok"]
    assert doc["inputs"][0]["defaulted_dims"] == []


def test_an_array_and_a_shape_for_one_input_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The array's own shape would win over the shape given for it, silently: the contradiction is refused."""
    np.save(tmp_path / "y.npy", np.zeros((2, 3), np.float16))
    status, _out, err = ovreduce(capsys, DYNAMIC, "--layer", "sum_dynamic_rank", "--input", f"y={tmp_path}/y.npy",
                                 "--shape", "y=[4,5]")  # fmt: skip
    assert status == 2
    assert "input 0 (data) is given both an array and a shape; give one" in err


def test_dynamic_rank_with_an_input_file_reaches_the_cpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    np.save(tmp_path / "y.npy", data)
    status, doc = ovreduce_json(capsys, DYNAMIC, "--layer", "sum_dynamic_rank", "--input", f"y={tmp_path}/y.npy")
    assert status == 0, doc
    assert [r["shape"] for r in doc["results"]] == [[1, 3, 4], [1, 3, 4]]
    assert doc["comparisons"][0]["max_abs_error"] == 0


def test_bad_shape_syntax_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = ovreduce(capsys, DYNAMIC, "--layer", "mean_static_dim", "--shape", "x=[2,a]")
    assert status == 2 and "--shape 'x=[2,a]'" in err


# -- saved outputs -----------------------------------------------------------------------------------------------
def test_save_outputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "out" / "nested"
    status, doc = ovreduce_json(capsys, ALL, "--layer", "prod_i32_axes", "--save-outputs", str(folder))
    assert status == 0
    assert sorted(p.name for p in folder.iterdir()) == ["numpy.npy", "openvino-CPU.npy"]
    saved = {r["backend"]: np.load(folder / (r["backend"].replace(":", "-") + ".npy")) for r in doc["results"]}
    for r in doc["results"]:
        assert list(saved[r["backend"]].shape) == r["shape"] == [2, 1, 1, 5]
        assert saved[r["backend"]].dtype == np.float32 and r["datatype"] == "FP32"
    np.testing.assert_allclose(saved["openvino:CPU"], saved["numpy"], rtol=1e-5, atol=1e-5)


def test_save_outputs_into_a_file_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--save-outputs", str(tmp_path / "file"))
    assert status == 2 and "--save-outputs" in err


def test_saved_outputs_replace_a_link_and_leave_what_it_points_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    (tmp_path / "out" / "numpy.npy").symlink_to(precious)
    status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--save-outputs", str(tmp_path / "out"))
    assert status == 0, err
    assert precious.read_text() == "keep me"  # it was overwritten with the array through the link
    assert not (tmp_path / "out" / "numpy.npy").is_symlink() and np.load(tmp_path / "out" / "numpy.npy").size
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["numpy.npy", "openvino-CPU.npy"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_saved_arrays_have_the_mode_the_umask_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mask: int
) -> None:
    """As np.save or any writer would: another user or a CI step reads the inputs that reproduce the run."""
    import os

    before = os.umask(mask)
    try:
        out, given = tmp_path / "out", tmp_path / "in"
        status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--save-outputs", str(out), "--save-inputs",
                                  str(given))  # fmt: skip
        np.save(tmp_path / "plain.npy", np.zeros(1))
    finally:
        os.umask(before)
    assert status == 0, err
    expected = (tmp_path / "plain.npy").stat().st_mode & 0o777
    assert expected == 0o666 & ~mask
    modes = {p.name: p.stat().st_mode & 0o777 for p in (*out.iterdir(), *given.iterdir())}
    assert modes == dict.fromkeys(["numpy.npy", "openvino-CPU.npy", "0.npy"], expected)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--device", "GPU"], "device 'GPU' with the numpy backend alone: "),
        (["--precision", "bf16"], "precision 'bf16' with the numpy backend alone: "),
        (["--device", "CPU", "--precision", "f32"], "device 'CPU' and precision 'f32' with the numpy backend alone: "),
    ],
)
def test_an_option_that_numpy_alone_would_ignore_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Only OpenVINO runs on a device and in a precision: with NumPy alone they would be dropped without a word."""
    status, out, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--backend", "numpy", *argv)
    assert (status, out) == (2, "")
    assert err.startswith(f"ovreduce run: {says}") and err.endswith(
        "expected the openvino backend too, or " + (f"no {argv[0][2:]}" if len(argv) == 2 else "neither") + " [input]\n"
    ), err
    if "GPU" in argv:  # (with OpenVINO it is used: there, a machine without one says so)
        return
    both = ("--backend", "numpy", "--backend", "openvino")
    status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", *both, *argv)
    assert status == 0, err


def test_inspect_refuses_all_with_layer(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "inspect", ALL, "--layer", "mean_last", "--all")
    assert (status, out) == (2, "")
    assert err == ("ovreduce inspect: --all with --layer mean_last: --layer shows one layer, --all lists every "
                   "layer; expected one of them [usage]\n")  # fmt: skip


@pytest.mark.parametrize(
    ("model", "argv", "expected"),
    [
        ("broken/stale_output.xml", (), 1),  # a reduction's declared output is not the inferred one
        ("broken/stale_output.xml", ("--layer", "8"), 1),
        ("broken/stale_output.xml", ("--layer", "2", "--format", "json"), 0),  # a sound layer of it
        ("broken/axis_out_of_range.xml", ("--all", "--format", "json"), 1),
        ("broken/missing_keep_dims.xml", (), 0),  # a warning only
        ("spec_examples.xml", ("--all",), 0),
    ],
)
def test_inspect_exits_1_where_a_layer_it_shows_has_an_error(
    capsys: pytest.CaptureFixture[str], model: str, argv: tuple[str, ...], expected: int
) -> None:
    """The exit status is every command's: ``inspect`` printed a layer's error finding and exited 0, where ``check``
    of the same model exits 1. It exits 1 where what it shows has an error, as ``check`` does for the model."""
    status, out, err = run_cli(capsys, "inspect", str(SAMPLES / model), *argv)
    assert status == expected, (out, err)
    if "json" in argv:  # the document holds the finding the status is for
        assert ('"severity": "error"' in out) == (expected == 1)
    if not argv:
        assert run_cli(capsys, "check", str(SAMPLES / model))[0] == expected


def test_an_input_given_twice_is_refused_not_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.ones((2, 3, 4, 5), np.float32))
    given = ("--input", f"0={tmp_path / 'a.npy'}")
    status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", *given, *given)
    assert status == 2 and "--input '0' is given twice" in err, err


# -- the JSON document ---------------------------------------------------------------------------------------------
def test_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    status, doc = ovreduce_json(capsys, ALL, "--layer", "all_last")
    assert status == 0
    assert {"schema", "ok", "layer", "inputs", "results", "comparisons"} <= set(doc)
    assert doc["schema"] == "ovreduce.run/v1"
    assert doc["layer"] == {
        "layer_id": doc["layer"]["layer_id"], "layer_name": "all_last", "type": "ReduceLogicalAnd",
        "keep_dims": False, "axes": [2], "element_type": "boolean",
    }  # fmt: skip
    assert doc["inputs"] == [{"name": "0", "shape": [2, 3, 4], "datatype": "BOOL", "defaulted_dims": []}]
    assert [r["datatype"] for r in doc["results"]] == ["BOOL", "BOOL"]
    assert doc["comparisons"][0]["exact"] is True and doc["comparisons"][0]["ok"] is True


@pytest.mark.parametrize(("layer", "datatype"), [("mean_last", "FP32"), ("any_first", "BOOL")])
def test_json_datatypes_are_kserve_names(capsys: pytest.CaptureFixture[str], layer: str, datatype: str) -> None:
    _, doc = ovreduce_json(capsys, ALL, "--layer", layer)
    assert {i["datatype"] for i in doc["inputs"]} == {datatype}
    assert {r["datatype"] for r in doc["results"]} == {datatype}


@pytest.mark.parametrize("precision", ["f32", "f16", "bf16", "default"])
def test_the_text_says_what_the_reduction_executed_in(capsys: pytest.CaptureFixture[str], precision: str) -> None:
    """The precision column says what the JSON says: the requested precision, the compiled model's inference
    precision where it differs, and what the reduction executed in (OpenVINO's execution graph) where that differs
    from the inference precision, never that it "runs in" a precision the execution graph did not run it in."""
    args = (ALL, "--layer", "mean_last", "--precision", precision)
    _, doc = ovreduce_json(capsys, *args)
    (ov_doc,) = [r for r in doc["results"] if r["backend"].startswith("openvino")]
    _, text, _ = ovreduce(capsys, *args)
    (row,) = [line for line in text.splitlines() if line.strip().startswith("openvino:")]
    cell = row.split("ms", 1)[1].strip()
    requested, effective, executed = ov_doc["precision"], ov_doc["effective_precision"], ov_doc["runtime_precision"]
    assert cell.startswith(requested), (cell, ov_doc)
    if effective != requested:
        assert effective in cell, (cell, ov_doc)
    if executed is not None and executed != effective:
        assert f"reduction ran in {executed}" in cell and f"runs in {effective}" not in cell, (cell, ov_doc)
    elif effective == requested:
        assert cell == requested, (cell, ov_doc)


# -- exit statuses ----------------------------------------------------------------------------------------------------
@pytest.fixture
def u8_mean_ir(tmp_path: Path) -> Path:
    """A one-layer IR: ReduceMean over a u8 [3] input, keep_dims=true (saturates on the CPU plugin)."""
    data = ops.parameter([3], ov.Type.u8, name="data")
    mean = ops.reduce_mean(data, ops.constant(np.array([0], np.int64)), True)
    mean.set_friendly_name("mean_u8")
    path = tmp_path / "u8_mean.xml"
    ov.save_model(ov.Model([mean], [data], "u8_mean"), str(path))
    np.save(tmp_path / "hundreds.npy", np.array([100, 100, 100], np.uint8))
    return path


def test_non_finite_counts_read_per_backend(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = np.ones((2, 3, 4, 5), np.float32)
    data[0, 0, 0, 0], data[1, 0, 0, :2] = np.nan, np.inf
    np.save(tmp_path / "x.npy", data)
    status, out, _ = ovreduce(capsys, ALL, "--layer", "mean_last", "--input", f"0={tmp_path / 'x.npy'}")
    assert status == 0, out
    assert "    NaN: numpy 1, openvino:CPU 1  Inf: numpy 1, openvino:CPU 1\n" in out


def test_exit_0_when_all_agree(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = ovreduce(capsys, ALL, "--layer", "mean_last")
    assert status == 0
    assert "result: all 2 backends ran and agree" in out


def test_exit_1_on_a_disagreement(capsys: pytest.CaptureFixture[str], u8_mean_ir: Path) -> None:
    data = str(u8_mean_ir.parent / "hundreds.npy")
    status, out, _ = ovreduce(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"data={data}")
    assert status == 1
    assert "DISAGREE" in out
    assert "first mismatch at [0]: numpy=100 openvino:CPU=85" in out
    status, doc = ovreduce_json(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"0={data}")
    assert status == 1 and doc["ok"] is False
    assert doc["comparisons"][0]["first_mismatch"] == {"index": [0], "reference": 100, "candidate": 85}


def test_a_tolerance_given_is_taken_for_an_integer_output(capsys: pytest.CaptureFixture[str], u8_mean_ir: Path) -> None:
    """An integer output is compared exactly by default, but ``--atol`` given was replaced by 0 without a word: a known
    difference (OpenVINO's saturated u8 mean, 85 for 100) could not be accepted. The tolerance given is taken."""
    data = str(u8_mean_ir.parent / "hundreds.npy")
    status, doc = ovreduce_json(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"0={data}", "--atol", "20")
    assert status == 0 and doc["ok"] is True, doc
    (judged,) = doc["comparisons"]
    assert (judged["atol"], judged["rtol"], judged["exact"], judged["max_abs_error"]) == (20, 0, False, 15)
    status, doc = ovreduce_json(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"0={data}", "--atol", "10")
    assert status == 1 and doc["comparisons"][0]["mismatched"] == 1, doc
    status, doc = ovreduce_json(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"0={data}", "--rtol", "0.2")
    assert status == 0 and doc["comparisons"][0]["rtol"] == 0.2, doc
    status, doc = ovreduce_json(capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"0={data}")
    assert status == 1 and doc["comparisons"][0]["exact"] is True, doc


def test_exit_0_with_numpy_alone(capsys: pytest.CaptureFixture[str], u8_mean_ir: Path) -> None:
    data = str(u8_mean_ir.parent / "hundreds.npy")
    status, doc = ovreduce_json(
        capsys, str(u8_mean_ir), "--layer", "mean_u8", "--input", f"data={data}", "--backend", "numpy"
    )
    assert status == 0 and doc["comparisons"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([ALL, "--layer", "nope"], "no layer with id or name 'nope'", id="unknown-layer"),
        pytest.param([ALL, "--layer", "x"], "is not a reduction", id="non-reduction-layer"),
        pytest.param([ALL, "--layer", "mean_last", "--input", "data.npy"], "expected NAME=FILE", id="input-syntax"),
        pytest.param([ALL, "--layer", "mean_last", "--input", "=x.npy"], "expected NAME=FILE", id="input-no-name"),
        pytest.param([ALL, "--layer", "mean_last", "--input", "0=/nonexistent/x.npy"], "no such file", id="no-file"),
        pytest.param([str(SAMPLES / "missing.xml"), "--layer", "a"], "missing.xml", id="missing-model"),
    ],
)
def test_exit_2_on_bad_input(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    status, out, err = ovreduce(capsys, *args)
    assert status == 2, out + err
    assert message in err
    assert out == ""


def test_exit_2_on_an_unknown_input_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 4, 5), np.float32))
    status, _, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--input", f"zz={tmp_path}/x.npy")
    assert status == 2
    assert "'zz' names no input of layer" in err and "use one of: 0, data, x" in err


def test_exit_2_on_an_unavailable_device_lists_the_available_ones(capsys: pytest.CaptureFixture[str]) -> None:
    if "GPU" in ov.Core().available_devices:
        pytest.skip("a GPU is available here")
    status, _out, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--device", "GPU")
    assert status == 2
    assert "device 'GPU' is not available on this machine; available: " + ", ".join(ov.Core().available_devices) in err
    assert "[backend.device]" in err


def test_exit_2_on_argparse_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--layer", "3"])  # the model is required
    _out, err = capsys.readouterr()
    assert info.value.code == 2
    assert "the following arguments are required: model" in err and "Traceback" not in err


def test_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    """The installed command, in its own process: an error is one line on stderr and status 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "ovreduce.cli", "run", ALL, "--layer", "mean_last", "--device", "FOO"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stderr.startswith("ovreduce run: device 'FOO' is not a device OpenVINO knows")


# -- advice that works, reproducible inputs, what was compared -------------------------------------------------------
@pytest.mark.parametrize("layer", ["mean_one_runtime_axis", "mean_runtime_axes_keep"])
def test_runtime_axes_advice_works_when_followed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, layer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error for missing runtime axes gives an example that fits: following it runs the layer."""
    import re

    status, _, err = ovreduce(capsys, RUNTIME, "--layer", layer)
    assert status == 2
    example = re.search(r"e\.g\. (np\.save\('axes\.npy', np\.array\(.*?, dtype=np\.\w+\)\))", err)
    assert example is not None, err
    monkeypatch.chdir(tmp_path)
    exec(example.group(1), {"np": np})
    status, doc = ovreduce_json(capsys, RUNTIME, "--layer", layer, "--input", "1=axes.npy")
    assert status == 0, doc
    assert doc["outcome"] == "agree"


def test_save_inputs_reproduces_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, first = ovreduce_json(capsys, DYNAMIC, "--layer", "mean_interval_dims", "--seed", "11",
                                  "--shape", "x[2,5,16,3]", "--save-inputs", str(tmp_path / "in"),
                                  "--save-outputs", str(tmp_path / "out1"))  # fmt: skip
    assert status == 0, first
    saved = np.load(tmp_path / "in" / "0.npy")
    assert saved.shape == (2, 5, 16, 3) and saved.dtype == np.float32
    status, again = ovreduce_json(capsys, DYNAMIC, "--layer", "mean_interval_dims", "--seed", "99", "--input",
                                  f"0={tmp_path}/in/0.npy", "--save-outputs", str(tmp_path / "out2"))  # fmt: skip
    assert status == 0, again
    for backend in ("numpy", "openvino-CPU"):
        assert np.array_equal(
            np.load(tmp_path / "out1" / f"{backend}.npy"), np.load(tmp_path / "out2" / f"{backend}.npy")
        )


def test_save_inputs_of_a_bf16_layer_reproduce_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """NumPy has no bf16: the saved input is ml_dtypes' bfloat16, which NumPy reads back as raw two-byte values
    (``|V2``). ``--input`` refused it ("holds |V2 values but the layer expects bf16"); it is read as bf16, and the run
    and the audit take it."""
    x = ops.parameter([2, 16], ov.Type.bf16, name="x")
    x.output(0).set_names({"x"})
    total = ops.reduce_sum(x, ops.constant(np.array([-1], np.int64)), False, name="s")
    model = str(tmp_path / "m.xml")
    ov.save_model(ov.Model([ops.result(total)], [x], "m"), model, compress_to_fp16=False)
    status, first = ovreduce_json(capsys, model, "--layer", "s", "--seed", "11", "--save-inputs", str(tmp_path / "in"),
                                  "--save-outputs", str(tmp_path / "out1"))  # fmt: skip
    assert status == 0, first
    assert np.load(tmp_path / "in" / "0.npy").dtype == np.dtype("V2")
    status, again = ovreduce_json(capsys, model, "--layer", "s", "--seed", "99", "--input", f"0={tmp_path}/in/0.npy",
                                  "--save-outputs", str(tmp_path / "out2"))  # fmt: skip
    assert status == 0, again
    for backend in ("numpy", "openvino-CPU"):
        assert np.array_equal(
            np.load(tmp_path / "out1" / f"{backend}.npy"), np.load(tmp_path / "out2" / f"{backend}.npy")
        )
    status, out, err = run_cli(capsys, "audit", model, "--input", f"x={tmp_path}/in/0.npy")
    assert status == 0 and "given" in out, err


def test_save_inputs_with_runtime_axes_saves_both(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    np.save(tmp_path / "axes.npy", np.array([0, 2], np.int64))
    status, _ = ovreduce_json(capsys, RUNTIME, "--layer", "mean_runtime_axes_keep", "--input",
                              f"1={tmp_path}/axes.npy", "--save-inputs", str(tmp_path / "in"))  # fmt: skip
    assert status == 0
    assert np.load(tmp_path / "in" / "0.npy").shape == (4, 6, 8)
    assert np.array_equal(np.load(tmp_path / "in" / "1.npy"), [0, 2])


@pytest.mark.parametrize("backend", ["numpy", "openvino"])
def test_one_backend_says_nothing_was_compared(capsys: pytest.CaptureFixture[str], backend: str) -> None:
    status, out, _ = ovreduce(capsys, ALL, "--layer", "mean_last", "--backend", backend)
    assert status == 0
    assert "ran; nothing to compare" in out and "agree" not in out
    status, doc = ovreduce_json(capsys, ALL, "--layer", "mean_last", "--backend", backend)
    assert doc["outcome"] == "nothing-compared" and doc["comparisons"] == []


def test_a_backend_given_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Compared with itself, it would agree: a verdict that compared nothing."""
    status, out, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--backend", "numpy", "--backend", "numpy")
    assert status == 2 and "agree" not in out
    assert "backend 'numpy' is given twice" in err


@pytest.mark.parametrize("axes", [[2**32, 1], [3, 0]], ids=["beyond-int32", "beyond-rank"])
def test_runtime_axes_out_of_range_are_refused_before_any_backend(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, axes: list[int]
) -> None:
    """OpenVINO's CPU plugin runs i64 axes as i32: [2**32, 1] ran as [0, 1], and with --backend openvino alone the
    run said nothing was wrong."""
    np.save(tmp_path / "axes.npy", np.array(axes, np.int64))
    status, out, err = ovreduce(capsys, RUNTIME, "--layer", "mean_runtime_axes_keep", "--input",
                                f"1={tmp_path}/axes.npy", "--backend", "openvino")  # fmt: skip
    assert status == 2 and not out, out
    assert f"Axis {axes[0]} out of the tensor rank range [-3, 2]" in err, err


def test_a_shape_the_layers_own_axes_do_not_fit_is_refused_before_any_backend(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A scalar for a ReduceSum over axis 0 with keep_dims: OpenVINO's shape rule refuses it. Both backends, the NumPy
    reference too, were reported FAILED, exit 1, as though they were at fault and not the shape given."""
    status, out, err = ovreduce(capsys, DYNAMIC, "--layer", "3", "--shape", "0=[]")
    assert status == 2 and not out, out
    assert "the layer's axes [0] do not fit input 0 (data) of shape []: Accessing out-of-range dimension" in err, err


def test_a_failed_backend_is_named_in_the_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ReduceMean with runtime axes and keep_dims=false has an output of dynamic rank, which the CPU plugin
    refuses to compile: the result line names the backend that failed."""
    np.save(tmp_path / "axes.npy", np.array([0, 1], np.int64))
    status, out, _ = ovreduce(capsys, RUNTIME, "--layer", "mean_two_runtime_axes", "--input", f"1={tmp_path}/axes.npy")
    assert status == 1
    assert "result: openvino:CPU failed" in out


def test_a_huge_shape_is_refused_before_allocating(capsys: pytest.CaptureFixture[str]) -> None:
    """1.6e9 elements asked for with --shape: exit 2 naming the input and the limit, not a MemoryError."""
    status, out, err = ovreduce(capsys, DYNAMIC, "--layer", "mean_interval_dims", "--shape", "x[40000,5,16,2000]")
    assert status == 2 and out == ""
    assert "input 0 (data) has 6400000000 elements, more than the limit of 268435456 (OVREDUCE_MAX_ELEMENTS)" in err


def test_the_element_limit_follows_the_services_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OVREDUCE_MAX_ELEMENTS", "100")
    np.save(tmp_path / "x.npy", np.zeros((4, 6, 8), np.float32))
    status, _, err = ovreduce(capsys, DYNAMIC, "--layer", "mean_interval_dims", "--input", f"0={tmp_path}/x.npy")
    assert status == 2 and "has 192 elements, more than the limit of 100 (OVREDUCE_MAX_ELEMENTS)" in err
    for bad in ("0", "1e3", "9" * 5000):  # past Python's 4,300 digits int() refuses: it was an internal error
        monkeypatch.setenv("OVREDUCE_MAX_ELEMENTS", bad)
        status, _, err = ovreduce(capsys, DYNAMIC, "--layer", "mean_interval_dims")
        assert status == 2 and "OVREDUCE_MAX_ELEMENTS=" in err and "expected a positive integer [usage]" in err, err


@pytest.mark.parametrize(("op", "axis", "said"), [
    ("reduce_max", 1, "no value was compared: all 4 of its elements are undefined"),  # [2,0,2] over its empty axis
    ("reduce_sum", 0, "no value was compared: it is empty"),  # [0,2]
])  # fmt: skip
def test_an_agreement_on_no_value_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, op: str, axis: int, said: str
) -> None:
    """A reduction over an empty set has no defined value, and an empty output none at all: the backends agree on the
    output's shape, and the text says that this is all they agree on."""
    x = ops.parameter([2, 0, 2], np.float32, name="x")
    path = tmp_path / "m.xml"
    reduced = getattr(ops, op)(x, ops.constant(np.array([axis], np.int64)), False, name="red")
    ov.save_model(ov.Model([reduced], [x], "m"), path)
    status, out, _ = ovreduce(capsys, str(path), "--layer", "red")
    assert status == 0 and "AGREE" in out
    assert f"{said}; the backends agree on the output's shape only" in out, out


def test_an_agreement_on_an_input_that_cannot_show_an_error_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Zeros given, or a reduced dim left dynamic and set to 1: the backends agree, and the result says that the
    input could not have shown an error; random values of a reduced dim of 3 show one."""
    x = ops.parameter([2, -1], np.float32, name="x")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), False, name="red")], [x]), path)
    zeros = tmp_path / "zeros.npy"
    np.save(zeros, np.zeros((2, 3), np.float32))
    said = "result: all 2 backends ran and agree, but on an input that cannot show an error (see the note)"
    one = "each output element reduces one input element (axes [1] of input shape [2, 1])"
    for argv, why in ((["--input", f"x={zeros}"], "every one of its 6 input elements is 0.0"), ([], one)):
        status, out, _ = ovreduce(capsys, str(path), "--layer", "red", *argv)
        assert status == 0 and said in out, out
        assert f"note: the backends agree on an input that cannot show an error: {why}" in out, out
    status, out, _ = ovreduce(capsys, str(path), "--layer", "red", "--shape", "x=[2,3]")
    assert status == 0 and "cannot show an error" not in out and "result: all 2 backends ran and agree\n" in out


def test_the_run_document_marks_an_agreement_on_an_input_that_cannot_show_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The JSON document says what the text result says, in a field a client reads: ``not_established`` holds why the
    agreement rests on nothing (``outcome`` stays ``agree``, ``ok`` true: the backends do agree); null where it
    stands."""
    x = ops.parameter([2, -1], np.float32, name="x")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), False, name="red")], [x]), path)
    status, out, _ = ovreduce(capsys, str(path), "--layer", "red", "--format", "json")
    doc = json.loads(out)
    assert status == 0 and doc["outcome"] == "agree" and doc["ok"] is True, doc
    one = "each output element reduces one input element (axes [1] of input shape [2, 1])"
    assert doc["not_established"].startswith(one) and doc["not_established"] in " ".join(doc["notes"]), doc
    status, out, _ = ovreduce(capsys, str(path), "--layer", "red", "--shape", "x=[2,3]", "--format", "json")
    doc = json.loads(out)
    assert status == 0 and doc["outcome"] == "agree" and doc["not_established"] is None, doc


@pytest.mark.parametrize("element", ["f8e5m2", "f8e4m3", "bf16"])
def test_saved_arrays_of_every_narrow_float_load_in_numpy_and_reproduce_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, element: str
) -> None:
    """ml_dtypes' float8_e5m2 is of NumPy kind 'f': saved as it is, its header's ``<f1`` is no type NumPy (or
    ``--input``) reads. Every narrow float is saved as raw bytes, read back as the port's type."""
    x = ops.parameter([4, 6], getattr(ov.Type, element), name="x")
    x.output(0).set_names({"x"})
    top = ops.reduce_max(x, ops.constant(np.array([1], np.int64)), False, name="red")
    model = str(tmp_path / "m.xml")
    ov.save_model(ov.Model([ops.result(top)], [x], "m"), model, compress_to_fp16=False)
    status, first = ovreduce_json(capsys, model, "--layer", "red", "--save-inputs", str(tmp_path / "in"),
                                  "--save-outputs", str(tmp_path / "out1"))  # fmt: skip
    assert status in (0, 1), first
    for saved in [tmp_path / "in" / "0.npy", *(tmp_path / "out1").glob("*.npy")]:
        np.load(saved)  # NumPy reads every file ovreduce writes
    status, again = ovreduce_json(capsys, model, "--layer", "red", "--input", f"0={tmp_path}/in/0.npy",
                                  "--save-outputs", str(tmp_path / "out2"))  # fmt: skip
    assert status in (0, 1), again
    for backend in ("numpy", "openvino-CPU"):
        first_bytes, again_bytes = ((tmp_path / out / f"{backend}.npy").read_bytes() for out in ("out1", "out2"))
        assert first_bytes == again_bytes


def test_an_empty_device_is_refused_as_audit_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``--device ''`` (a script's unset variable) ran on the CPU without a word, where audit and conform refuse it."""
    status, out, err = ovreduce(capsys, ALL, "--layer", "mean_last", "--device", "")
    assert (status, out) == (2, "")
    assert err.startswith("ovreduce run: device '' is not a device OpenVINO knows") and err.endswith("[input]\n"), err
    status, out, audited = run_cli(capsys, "audit", ALL, "--device", "")
    assert (status, out) == (2, "") and audited.partition(": ")[2] == err.partition(": ")[2], audited
