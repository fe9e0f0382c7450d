"""``ovreduce check`` / ``inspect`` / ``devices`` on the bundled samples: findings, formats, engines, exit codes."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
GOOD = ["all_reductions", "convert_axes", "dynamic", "rmsnorm", "rmsnorm_f16", "runtime_axes", "spec_examples"]
# What each hand-broken sample demonstrates (ir_samples/generate.py): layer name -> finding codes.
BROKEN: dict[str, dict[str, set[str]]] = {
    "stale_output": {"mean_hw_keep": {"reduce-output-mismatch"}},
    "keep_dims_yes": {"mean_hw_keep": {"bool-attr-invalid", "reduce-output-mismatch"}},
    "missing_keep_dims": {"mean_hw": {"keep-dims-missing"}},
    "edge_dims": {"mean_channels": {"edge-dims-mismatch"}},
    "precision": {"mean_minus2": {"edge-precision-mismatch", "precision-mismatch"}},
    "parameter_shape": {
        "data": {"parameter-shape-mismatch"},
        "mean_minus2": {"reduce-output-mismatch"},
        "mean_channels": {"reduce-output-mismatch"},
    },
    "axis_out_of_range": {"mean_channels": {"reduce-invalid"}},
}


def ovreduce(*args: str, check_rc: int | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "ovreduce.cli", *args], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)  # fmt: skip
    assert "Traceback" not in out.stdout + out.stderr
    if check_rc is not None:
        assert out.returncode == check_rc, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    return out


def check_json(*args: str, rc: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(ovreduce("check", *args, "--format", "json", check_rc=rc).stdout)
    assert doc["schema"] == "ovreduce.check/v1"
    return doc


def by_path(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(m["path"]).stem: m for m in doc["models"]}


def codes_by_layer(
    model: dict[str, Any], severities: tuple[str, ...] = ("error", "warning", "info")
) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in model["findings"]:
        if f["layer_name"] is not None:
            out.setdefault(f["layer_name"], set()).add(f["code"])
    return out


def test_the_samples_folder() -> None:
    """The README's first command: the good samples are clean, each broken one shows exactly its findings."""
    doc = check_json(str(SAMPLES), rc=1)
    models = by_path(doc)
    assert set(models) == set(GOOD) | set(BROKEN)
    for name in GOOD:
        assert models[name]["ok"], models[name]["findings"]
        assert not [f for f in models[name]["findings"] if f["severity"] != "info"], name
    for name, expected in BROKEN.items():
        found = codes_by_layer(models[name])
        for layer, codes in expected.items():
            assert codes <= found.get(layer, set()), (name, layer, found)
        # Result layers see the stale edge too; nothing else is reported.
        extra = {layer for layer in found if layer not in expected and not layer.startswith("Result")}
        assert not extra, (name, found)
        assert models[name]["ok"] == (name == "missing_keep_dims")


def test_good_samples_exit_0_and_text_is_a_table() -> None:
    out = ovreduce("check", *(str(SAMPLES / f"{n}.xml") for n in GOOD), check_rc=0)
    assert "7 models checked: 7 clean, 0 with errors, 0 unreadable" in out.stdout
    assert "mean_hw_keep" in out.stdout and "[6,12,1,1]" in out.stdout


def test_info_findings_need_verbose() -> None:
    path = str(SAMPLES / "broken" / "missing_keep_dims.xml")
    assert "keep-dims-missing" not in ovreduce("check", path, check_rc=0).stdout
    assert "keep-dims-missing" in ovreduce("check", path, "--verbose", check_rc=0).stdout


def test_engine_openvino_agrees_with_the_native_inference() -> None:
    """OpenVINO's own view: the stale dims are flagged by both engines, and on the good samples every
    reduction's native inferred shape equals OpenVINO's."""
    doc = check_json(str(SAMPLES), "--engine", "openvino", rc=1)
    models = by_path(doc)
    assert "openvino-shape-mismatch" in codes_by_layer(models["stale_output"])["mean_hw_keep"]
    assert "openvino-shape-mismatch" in codes_by_layer(models["keep_dims_yes"])["mean_hw_keep"]
    assert "openvino-type-mismatch" in codes_by_layer(models["precision"])["mean_minus2"]
    read_failed = [f for f in models["axis_out_of_range"]["findings"] if f["code"] == "openvino-read-failed"]
    assert read_failed and "Axis 7 out of the tensor rank range" in read_failed[0]["message"]
    compared = 0
    for name in GOOD:
        model = models[name]
        assert model["ok"], model["findings"]
        assert not [f for f in model["findings"] if f["code"] == "native-inference-differs"], name
        for r in model["reductions"]:
            if r["inferred_output_resolved"]:
                assert r["openvino_output_shape"] == r["inferred_output_shape"], (name, r)
                compared += 1
    assert compared >= 20


def test_reshape_what_if() -> None:
    spec = str(SAMPLES / "spec_examples.xml")
    doc = check_json(spec, "--reshape", "data=[2,12,10,?]", rc=0)
    model = doc["models"][0]
    inferred = {r["layer_name"]: r["inferred_output_shape"] for r in model["reductions"]}
    assert inferred == {"mean_minus2": [2, 12, -1], "mean_channels": [2, 10, -1], "mean_hw": [2, 12],
                        "mean_hw_keep": [2, 12, 1, 1]}  # fmt: skip
    changed = {f["layer_name"] for f in model["findings"] if f["code"] == "reshape-changes-output"}
    assert changed == {"mean_minus2", "mean_channels", "mean_hw", "mean_hw_keep"}
    assert all(f["severity"] == "info" for f in model["findings"])
    # Through OpenVINO too (the engine applies the reshape before inferring).
    doc = check_json(spec, "--reshape", "data=[2,12,10,?]", "--engine", "openvino", rc=0)
    for r in doc["models"][0]["reductions"]:
        assert r["openvino_output_shape"] == r["inferred_output_shape"], r
    # By tensor name as well as layer name; errors say what the Parameters are.
    assert check_json(spec, "--reshape", "data=[1,12,10,24]", rc=0)["ok"]
    out = ovreduce("check", spec, "--reshape", "nope=[1]", check_rc=2)
    assert "NOT CHECKED  [input]" in out.stdout
    assert "no Parameter has that name (Parameters: 'data')" in out.stdout
    out = ovreduce("check", spec, "--reshape", "data=[1,x]", check_rc=2)
    assert "cannot parse dimension" in out.stderr


def test_a_reshape_of_several_models_applies_to_those_that_have_the_input(tmp_path: Path) -> None:
    """An export's folder checked under ``--reshape input_ids=...``: its tokenizer and detokenizer have no such input.
    They are checked as declared, with a note, not "unreadable" (exit 2); a name no model has is a usage error."""
    import shutil

    for name in ("spec_examples", "all_reductions"):
        for suffix in (".xml", ".bin"):
            shutil.copy(SAMPLES / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    doc = check_json(str(tmp_path), "--reshape", "data=[2,12,10,?]", rc=0)
    models = {Path(m["path"]).stem: m for m in doc["models"]}
    assert models["spec_examples"]["error"] is None and models["all_reductions"]["error"] is None
    assert any(f["code"] == "reshape-changes-output" for f in models["spec_examples"]["findings"])
    assert models["all_reductions"]["notes"] == [
        "the reshape of data is not this model's: none of its inputs has that name"
    ], models["all_reductions"]
    assert not any(f["code"] == "reshape-changes-output" for f in models["all_reductions"]["findings"])
    out = ovreduce("check", str(tmp_path), "--reshape", "dta=[2,12,10,?]", check_rc=2)
    assert "reshape dta: no Parameter of the 2 model(s) read has that name" in out.stderr and out.stdout == ""


def test_junit_output() -> None:
    out = ovreduce("check", str(SAMPLES / "spec_examples.xml"), str(SAMPLES / "broken" / "stale_output.xml"),
                   "--format", "junit", check_rc=1)  # fmt: skip
    root = etree.fromstring(out.stdout.encode())
    suites = {Path(s.get("name")).stem: s for s in root.iter("testsuite")}
    assert set(suites) == {"spec_examples", "stale_output"}
    assert suites["spec_examples"].get("failures") == "0"
    assert suites["stale_output"].get("failures") == "1"
    failed = [c for c in suites["stale_output"].iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["ReduceMean 8 mean_hw_keep"]
    assert "reduce-output-mismatch" in failed[0].find("failure").get("type")


def _two_parameters(second_names: str) -> str:
    """Two Parameters [2,3,4], the first named ``b``, the second ``a`` with the tensor names ``second_names``: a
    ReduceMean over axis 1 of each (``r_of_first``, ``r_of_second``)."""
    from tests.ir.irxml import const, edge, layer, net, parameter, port, result

    def mean(lid: int, name: str) -> str:
        return layer(lid, name, "ReduceMean", data={"keep_dims": "false"}, inputs=[port(0, (2, 3, 4)),
                     port(1, (1,), "I64")], outputs=[port(2, (2, 4))])  # fmt: skip

    axes = const(2, "axes", shape="1", etype="i64", size="8", dims=(1,)).replace("FP32", "I64")
    second = parameter(1, "a", shape="2,3,4", dims=(2, 3, 4))
    second = second.replace('names="a"', f'names="{second_names}"') if second_names else second
    return net(
        [parameter(0, "b", shape="2,3,4", dims=(2, 3, 4)).replace(' names="b"', ""), second, axes,
         mean(3, "r_of_first"), mean(4, "r_of_second"),
         result(5, "o1", (2, 4)), result(6, "o2", (2, 4))],
        [edge(0, 0, 3, 0), edge(2, 0, 3, 1), edge(1, 0, 4, 0), edge(2, 0, 4, 1), edge(3, 2, 5, 0), edge(4, 2, 6, 0)],
    )  # fmt: skip


def test_reshape_name_is_a_tensor_name_first_as_openvino_reads_it(tmp_path: Path) -> None:
    """``--reshape b=...`` where one Parameter is named ``b`` and another's tensor is: OpenVINO's reshape takes the
    tensor name, and so does ovreduce (it reshaped the first Parameter by its layer name, silently)."""
    import numpy as np
    import openvino as ov

    xml = tmp_path / "model.xml"
    xml.write_text(_two_parameters("b"))
    (tmp_path / "model.bin").write_bytes(np.array([1], np.int64).tobytes())
    model = ov.Core().read_model(xml)
    model.reshape({"b": [5, 3, 4]})
    want = {n.get_friendly_name(): list(n.get_output_partial_shape(0).to_shape())
            for n in model.get_ordered_ops() if n.get_type_name() == "ReduceMean"}  # fmt: skip
    doc = check_json(str(xml), "--reshape", "b=[5,3,4]", "--engine", "openvino", rc=0)
    got = {r["layer_name"]: r["inferred_output_shape"] for r in doc["models"][0]["reductions"]}
    assert got == want == {"r_of_first": [2, 4], "r_of_second": [5, 4]}
    # Without the tensor name, the layer name of one Parameter still names it ...
    xml.write_text(_two_parameters(""))
    got = {r["layer_name"]: r["inferred_output_shape"]
           for r in check_json(str(xml), "--reshape", "b=[5,3,4]", rc=0)["models"][0]["reductions"]}  # fmt: skip
    assert got == {"r_of_first": [5, 4], "r_of_second": [2, 4]}
    # ... but the name of two is refused: which one was meant is not for ovreduce to guess.
    xml.write_text(_two_parameters("").replace('name="a"', 'name="b"'))
    out = ovreduce("check", str(xml), "--reshape", "b=[5,3,4]", check_rc=2)
    assert "reshape b: 2 Parameters have that name (layers 0, 1) and no tensor does" in out.stdout


@pytest.mark.parametrize(("name", "given"), [("a=b", "a=b=[5,3,4]"), ("x[1]", "x[1]=[5,3,4]"), ("a=b", "a=b=5,3,4")])
def test_reshape_names_an_input_whose_name_holds_equals_or_bracket(name: str, given: str, tmp_path: Path) -> None:
    """A tensor name holding '=' or '[' (OpenVINO's reshape takes it) is named up to the last '=' before the shape."""
    import numpy as np
    import openvino as ov

    xml = tmp_path / "model.xml"
    xml.write_text(_two_parameters(name))
    (tmp_path / "model.bin").write_bytes(np.array([1], np.int64).tobytes())
    model = ov.Core().read_model(xml)
    model.reshape({name: [5, 3, 4]})
    want = {n.get_friendly_name(): list(n.get_output_partial_shape(0).to_shape())
            for n in model.get_ordered_ops() if n.get_type_name() == "ReduceMean"}  # fmt: skip
    got = {r["layer_name"]: r["inferred_output_shape"]
           for r in check_json(str(xml), "--reshape", given, rc=0)["models"][0]["reductions"]}  # fmt: skip
    assert got == want and got["r_of_second"] == [5, 4]


def test_sarif_output(tmp_path: Path) -> None:
    broken = SAMPLES / "broken" / "stale_output.xml"
    unreadable = tmp_path / "truncated.xml"  # there, but not an IR: reported in the document
    unreadable.write_text("<net><layers>")
    out = ovreduce("check", str(broken), str(unreadable), "--format", "sarif", check_rc=2)
    doc = json.loads(out.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} <= rules
    mismatch = next(r for r in run["results"] if r["ruleId"] == "reduce-output-mismatch")
    assert mismatch["level"] == "error"
    location = mismatch["locations"][0]
    line = location["physicalLocation"]["region"]["startLine"]
    assert 'name="mean_hw_keep"' in broken.read_text().splitlines()[line - 1]
    assert location["logicalLocations"][0]["name"] == "mean_hw_keep"
    assert any(r["ruleId"] == "unreadable-ir" for r in run["results"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ir_samples/nothing-here/*.xml"], "the pattern matches no .xml files"),
        (["ir_samples/missing.xml"], "ir_samples/missing.xml: no such file"),
        (["ir_samples/spec_examples.xml", "ir_samples/rmsnorm.xml", "--bin", "x.bin"], "--bin names the weights"),
        (["--format", "yaml", "ir_samples/spec_examples.xml"], "invalid choice"),
    ],
    ids=["glob-matches-nothing", "missing-file", "bin-with-two-models", "bad-format"],
)  # fmt: skip
def test_usage_and_input_errors_exit_2(args: list[str], message: str) -> None:
    out = ovreduce("check", *args, check_rc=2)
    assert message in out.stdout + out.stderr


def test_glob_and_folder_expansion() -> None:
    doc = check_json("ir_samples/broken/*.xml", rc=1)
    assert len(doc["models"]) == len(BROKEN)
    doc = check_json("ir_samples/broken", rc=1)
    assert len(doc["models"]) == len(BROKEN)


def test_a_folder_is_searched_through_its_links(tmp_path: Path) -> None:
    """Python's rglob enters no linked folder, and dropped a dangling link: a folder linking to the broken samples
    held "no .xml files", and one of an IR, such a link and a dangling model.xml checked one model, exit 0."""
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "samples").symlink_to(SAMPLES / "broken")
    (linked / "loop").symlink_to(linked)  # a link to an ancestor: searched once
    doc = check_json(str(linked), rc=1)
    assert len(doc["models"]) == len(BROKEN), [m["path"] for m in doc["models"]]
    (linked / "model.xml").symlink_to(tmp_path / "gone.xml")
    doc = check_json(str(linked), rc=2)
    unreadable = [m for m in doc["models"] if m["error"] is not None]
    assert len(doc["models"]) == len(BROKEN) + 1 and [Path(m["path"]).name for m in unreadable] == ["model.xml"]


def test_progress_bar_on_a_terminal_only() -> None:
    """With stderr on a terminal and several models, a progress bar is drawn there; stdout is unchanged."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a size
    proc = subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "check", str(SAMPLES)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=slave, text=True)  # fmt: skip
    os.close(slave)
    stdout, _ = proc.communicate(timeout=300)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    drawn = b"".join(chunks).decode(errors="replace")
    assert "/14 [" in drawn  # tqdm's bar, e.g. "0/14 [00:00<?, ?model/s]", cleared when done
    assert "/14 [" not in stdout
    plain = ovreduce("check", str(SAMPLES))
    assert "/14 [" not in plain.stderr


def test_inspect() -> None:
    path = str(SAMPLES / "spec_examples.xml")
    out = ovreduce("inspect", path, check_rc=0)
    assert "4 reductions" in out.stdout and "mean_hw_keep" in out.stdout
    doc = json.loads(ovreduce("inspect", path, "--all", "--format", "json", check_rc=0).stdout)
    assert doc["schema"] == "ovreduce.inspect/v1"
    assert len(doc["layers"]) == doc["layer_count"] == 13
    one = json.loads(ovreduce("inspect", path, "--layer", "mean_hw_keep", "--format", "json", check_rc=0).stdout)
    (entry,) = one["layers"]
    assert entry["attributes"] == {"keep_dims": "true"}
    assert entry["reduction"]["axes"] == [2, 3]
    assert entry["inputs"][0]["shape"] == [6, 12, 10, 24]
    assert entry["inputs"][1]["producer"]["type"] == "Const"
    assert entry["outputs"][0]["declared_shape"] == [6, 12, 1, 1]
    text = ovreduce("inspect", path, "--layer", "8", check_rc=0).stdout
    assert "axes: [2, 3] (const)" in text
    assert "no layer with id or name 'nope'" in ovreduce("inspect", path, "--layer", "nope", check_rc=2).stderr


def test_inspect_under_a_reshape_shows_the_shapes_openvino_infers_under_it() -> None:
    import openvino as ov

    path = str(SAMPLES / "spec_examples.xml")
    doc = json.loads(ovreduce("inspect", path, "--all", "--reshape", "data=[2,12,10,?]", "--format", "json",
                              check_rc=0).stdout)  # fmt: skip
    model = ov.Core().read_model(path)
    model.reshape({"data": ov.PartialShape("[2,12,10,?]")})
    nodes = {n.get_friendly_name(): n for n in model.get_ordered_ops()}
    compared = 0
    for entry in doc["layers"]:
        node = nodes[entry["layer_name"]]
        for index, out in enumerate(entry["outputs"]):
            expected = [d.get_length() if d.is_static else -1 for d in node.get_output_partial_shape(index)]
            assert out["shape"] == expected, (entry["layer_name"], out, expected)
            compared += 1
    assert compared == 9  # every output of the 13 layers (the Results have none)
    said = ovreduce("inspect", path, "--reshape", "nope=[1]", check_rc=2).stderr
    assert "no Parameter has that name (Parameters: 'data') (give it with --reshape NAME=SHAPE)" in said


def test_devices() -> None:
    import openvino as ov

    doc = json.loads(ovreduce("devices", "--format", "json", check_rc=0).stdout)
    assert doc["schema"] == "ovreduce.devices/v1"
    core = ov.Core()
    assert [d["device"] for d in doc["devices"]] == core.available_devices
    cpu = next(d for d in doc["devices"] if d["device"] == "CPU")
    assert cpu["full_name"] == core.get_property("CPU", "FULL_DEVICE_NAME")
    assert "FP32" in cpu["capabilities"]
    assert "CPU" in ovreduce("devices", check_rc=0).stdout


def test_axes_computed_past_64_bits_are_written_as_their_type_holds_them(tmp_path: Path) -> None:
    """i64 ``2**62 * 4`` is 0 to OpenVINO (its reduction runs over axis 0): the JSON document says axes [0] and
    the shape OpenVINO infers; it once failed to write the unwrapped 2**64 (exit 3, "internal error")."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as o13

    x = o13.parameter([2, 3, 4], np.float32, name="x")
    axes = o13.multiply(o13.constant(np.array([2**62], np.int64)), o13.constant(np.array([4], np.int64)))
    mean = o13.reduce_mean(x, axes, False)
    mean.set_friendly_name("r")
    ov.save_model(ov.Model([mean], [x], "m"), tmp_path / "m.xml")
    (model,) = check_json(str(tmp_path / "m.xml"), rc=0)["models"]
    (reduction,) = model["reductions"]
    assert reduction["axes"] == [0]
    assert reduction["inferred_output_shape"] == [3, 4] == list(mean.get_output_shape(0))


@pytest.mark.parametrize(("model", "status"), [("broken/stale_output.xml", 1), ("rmsnorm.xml", 0)])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_reader_of_the_output_that_has_gone_leaves_the_verdict_as_the_status(
    model: str, status: int, fmt: str
) -> None:
    """``ovreduce check broken.xml | head -1``: the reader gone, the status was 0 whatever the verdict, so a pipeline
    (``set -o pipefail``) passed a broken model. The output is dropped; the status is the verdict's."""
    with subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "check", "--format", fmt, str(SAMPLES / model)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # before the check writes a byte (it takes longer to start)
        stderr = process.stderr.read()
        assert process.wait(timeout=120) == status, stderr
    assert stderr == b""


def test_a_utf16_model_with_a_lone_surrogate_is_read_as_openvino_reads_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A UTF-16 IR whose layer name holds half a surrogate pair: OpenVINO drops the unit and reads the model; so does
    check, which names the layer as OpenVINO does."""
    import shutil

    import openvino as ov

    from tests.cli.inprocess import run_cli

    samples = SAMPLES
    text = (samples / "rmsnorm.xml").read_text()
    text = text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>', 1)
    text = text.replace('name="rmsnorm/variance"', 'name="var\ud800iance"', 1)
    xml = tmp_path / "u16.xml"
    xml.write_bytes("\ufeff".encode("utf-16-le") + text.encode("utf-16-le", "surrogatepass"))
    shutil.copy(samples / "rmsnorm.bin", tmp_path / "u16.bin")
    names = {op.get_friendly_name() for op in ov.Core().read_model(xml).get_ops()}
    status, out, _ = run_cli(capsys, "check", str(xml), "--format", "json")
    (model,) = json.loads(out)["models"]
    assert status == 0 and model["error"] is None
    assert [r["layer_name"] for r in model["reductions"]] == ["variance"]
    assert "variance" in names


def test_argparse_mistakes_say_what_is_wrong_and_what_was_expected() -> None:
    """``check a.xml -v b.xml`` said ``ovreduce: error: unrecognized arguments: b.xml`` (the command dropped, nothing
    on where options go); ``ovreduce --bogus`` said a command is required and never named ``--bogus``."""
    a, b = str(SAMPLES / "spec_examples.xml"), str(SAMPLES / "rmsnorm.xml")
    last = ovreduce("check", a, "-v", b, check_rc=2).stderr.splitlines()[-1]
    assert (
        last.startswith(f"ovreduce check: error: {b}: a path after an option")
        and "before or after all the paths" in last
    )
    last = ovreduce("--bogus", check_rc=2).stderr.splitlines()[-1]
    assert last.startswith("ovreduce: error: unrecognized option '--bogus': expected a command first (check, "), last
    last = ovreduce("inspect", a, b, check_rc=2).stderr.splitlines()[-1]
    assert last == f"ovreduce inspect: error: unrecognized arguments: {b}; expected those of 'ovreduce inspect --help'"


def test_a_folder_and_a_glob_take_an_upper_case_xml(tmp_path: Path) -> None:
    """OpenVINO reads ``M.XML`` (with ``M.bin`` beside it), and ``check M.XML`` finds its error; a folder holding it
    skipped it without a word (a broken model, exit 0), and one holding it alone was "no .xml files"."""
    for name, sample in (("a", "spec_examples"), ("M", "broken/stale_output")):
        shutil.copy(SAMPLES / f"{sample}.xml", tmp_path / f"{name}.{'XML' if name == 'M' else 'xml'}")
        shutil.copy(SAMPLES / f"{sample}.bin", tmp_path / f"{name}.bin")
    import openvino as ov

    ov.Core().read_model(str(tmp_path / "M.XML"))  # (OpenVINO takes it as an IR)
    for given in (str(tmp_path), str(tmp_path / "*")):
        doc = check_json(given, rc=1)
        assert [Path(m["path"]).name for m in doc["models"]] == ["M.XML", "a.xml"]
        assert doc["models"][0]["ok"] is False
    (tmp_path / "a.xml").unlink()
    assert [Path(m["path"]).name for m in check_json(str(tmp_path), rc=1)["models"]] == ["M.XML"]


def test_a_quoted_glob_takes_the_hidden_entries_a_folder_does(tmp_path: Path) -> None:
    """``check 'DIR/*'`` checks what ``check DIR`` does: Python's glob, like a shell's, leaves out the names beginning
    with a dot, which the folder's search takes."""
    for place in (tmp_path / "sub" / "a.xml", tmp_path / ".h" / "b.xml", tmp_path / ".dot.xml"):
        place.parent.mkdir(exist_ok=True)
        shutil.copy(SAMPLES / "spec_examples.xml", place)
        shutil.copy(SAMPLES / "spec_examples.bin", place.with_suffix(".bin"))
    folder = [m["path"] for m in check_json(str(tmp_path), rc=0)["models"]]
    assert len(folder) == 3
    assert [m["path"] for m in check_json(str(tmp_path / "*"), rc=0)["models"]] == folder
    assert [m["path"] for m in check_json(str(tmp_path / "**" / "*.xml"), rc=0)["models"]] == folder


@pytest.mark.skipif(sys.platform != "linux", reason="file modes, and dropping root's override of them, are Linux's")
def test_a_model_in_a_folder_it_may_not_search_is_reported_as_one_it_may_not_read(tmp_path: Path) -> None:
    """A model the user may not read was ``UNREADABLE`` (``cannot read ...: Permission denied``, ``[ir.structure]``)
    where its own mode forbade it, but ``Permission denied [usage]``, with no report at all, where its folder's did:
    one cause, two classes. Both are now reported by the command."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("root reads every file; setpriv drops that")
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    for sub in ("own", "folder"):
        (tmp_path / sub).mkdir()
        for suffix in (".xml", ".bin"):
            shutil.copy(SAMPLES / f"spec_examples{suffix}", tmp_path / sub / f"m{suffix}")
    (tmp_path / "own" / "m.xml").chmod(0)
    (tmp_path / "folder").chmod(0)
    try:
        for sub in ("own", "folder"):
            model = str(tmp_path / sub / "m.xml")

            def ovreduce(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([*drop, sys.executable, "-m", "ovreduce.cli", *args], capture_output=True,
                                      text=True, timeout=300, cwd=ROOT)  # fmt: skip

            done = ovreduce("check", model, "--format", "sarif")
            assert done.returncode == 2, done.stderr
            (result,) = json.loads(done.stdout)["runs"][0]["results"]
            assert result["ruleId"] == "unreadable-ir" and "Permission denied" in result["message"]["text"], result
            done = ovreduce("inspect", model)
            assert done.stderr == f"ovreduce inspect: cannot read {model}: Permission denied [ir.structure]\n"
    finally:
        (tmp_path / "folder").chmod(0o755)


def test_a_type_written_in_another_case_is_named_as_openvino_names_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``type="reducemean"`` is a ReduceMean to OpenVINO's reader (and ovreduce's): check's, inspect's and run's
    documents said ``reducemean`` where audit's (OpenVINO's model) says ReduceMean, one layer spelled two ways."""
    import openvino as ov

    from tests.cli.inprocess import run_cli

    text = (SAMPLES / "all_reductions.xml").read_text()
    (tmp_path / "lc.xml").write_text(text.replace('type="ReduceSum"', 'type="reducesum"'))
    shutil.copy(SAMPLES / "all_reductions.bin", tmp_path / "lc.bin")
    model = str(tmp_path / "lc.xml")
    (theirs,) = {n.get_type_name() for n in ov.Core().read_model(model).get_ops() if n.get_type_name().lower() ==
                 "reducesum"}  # fmt: skip
    status, out, _ = run_cli(capsys, "check", model, "--format", "json")
    assert status == 0
    checked = {r["layer_name"]: r["type"] for r in json.loads(out)["models"][0]["reductions"]}
    _, out, _ = run_cli(capsys, "inspect", model, "--format", "json")
    inspected = {r["layer_name"]: r["type"] for r in json.loads(out)["layers"]}
    _, out, _ = run_cli(capsys, "run", model, "--layer", "sum_scalar_axis", "--backend", "numpy", "--format", "json")
    assert checked["sum_scalar_axis"] == inspected["sum_scalar_axis"] == json.loads(out)["layer"]["type"] == theirs
    assert theirs == "ReduceSum"
