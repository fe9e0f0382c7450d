"""The OpenVINO engine reads a model's weights from its file, as OpenVINO's ``read_model`` of a path does (it maps
them): no copy of the weights is made, so a ``.bin`` larger than the process's memory bound still reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ovreduce.check import check_model
from ovreduce.ir.parser import load_ir

from ..ir.irxml import edge, layer, net, parameter, port

_BOUND = 1 << 28  # the smallest OVREDUCE_MAX_WORKER_BYTES
_COUNT = 80_000_000  # f32 elements of the weights: 320 MB, past the bound


def _big_model(folder: Path, count: int = _COUNT) -> Path:
    """x[1,count] + w (a Const of ``count`` f32, written as a sparse file) -> ReduceSum over axis 1."""
    xml = net(
        [
            parameter(0, "x", f"1,{count}", dims=(1, count)),
            layer(
                1,
                "w",
                "Const",
                data={"element_type": "f32", "shape": f"1,{count}", "offset": "0", "size": str(4 * count)},
                outputs=[port(0, (1, count))],
            ),
            layer(2, "add", "Add", inputs=[port(0, (1, count)), port(1, (1, count))], outputs=[port(2, (1, count))]),
            layer(
                3,
                "axes",
                "Const",
                data={"element_type": "i64", "shape": "1", "offset": str(4 * count), "size": "8"},
                outputs=[port(0, (1,), "I64")],
            ),
            layer(
                4,
                "sum",
                "ReduceSum",
                data={"keep_dims": "false"},
                inputs=[port(0, (1, count)), port(1, (1,), "I64")],
                outputs=[port(2, (1,))],
            ),
            layer(5, "out", "Result", inputs=[port(0, (1,))]),
        ],
        [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 4, 0), edge(3, 0, 4, 1), edge(4, 2, 5, 0)],
    )
    path = folder / "big.xml"
    path.write_text(xml)
    with open(folder / "big.bin", "wb") as f:
        f.truncate(4 * count)  # zeros, without writing them
        f.seek(4 * count)
        f.write((1).to_bytes(8, "little"))
    return path


_OPENVINO_READS = """
import resource, sys
resource.setrlimit(resource.RLIMIT_DATA, (int(sys.argv[3]), resource.getrlimit(resource.RLIMIT_DATA)[1]))
import openvino as ov
model = ov.Core().read_model(sys.argv[1], sys.argv[2])
print(next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "sum").get_output_partial_shape(0))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory bound is Linux's RLIMIT_DATA")
def test_weights_past_the_memory_bound_are_read_from_the_file(tmp_path: Path) -> None:
    path = _big_model(tmp_path)
    assert path.with_suffix(".bin").stat().st_size > _BOUND
    # OpenVINO itself reads the model under the bound, from its files
    theirs = subprocess.run([sys.executable, "-c", _OPENVINO_READS, str(path), str(path.with_suffix(".bin")),
                             str(_BOUND)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert theirs.returncode == 0, theirs.stderr
    ov_shape = json.loads(theirs.stdout)
    env = {**os.environ, "OVREDUCE_MAX_WORKER_BYTES": str(_BOUND)}
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "check", "--engine", "openvino", "--format", "json",
                           str(path)], capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    checked = json.loads(done.stdout)["models"][0]
    assert not [f for f in checked["findings"] if f["code"] == "openvino-read-failed"], checked["findings"]
    (reduction,) = checked["reductions"]
    assert reduction["openvino_output_shape"] == ov_shape == [1]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="a descriptor is named by /proc/self/fd")
def test_a_weights_file_removed_after_it_was_opened_is_still_read(tmp_path: Path) -> None:
    """OpenVINO opens the very file ovreduce opened (by its descriptor), not whatever its name leads to now."""
    path = _big_model(tmp_path, count=6)
    model = load_ir(path)
    try:
        path.with_suffix(".bin").unlink()
        checked = check_model(model, engine="openvino")
    finally:
        model.close()
    assert checked.ok, checked.findings
    (reduction,) = checked.reductions
    assert reduction.openvino_output_shape == [1]


_OUT_OF_MEMORY = """
import resource, sys
import openvino as ov
from ovreduce.check import check_document, check_model, unreadable
from ovreduce.errors import MemoryLimitError
from ovreduce.ir.parser import load_ir
from ovreduce.memory import data_size
core = ov.Core()
core.read_model(sys.argv[1])  # OpenVINO reads it, its reader's libraries loaded, before the bound
model = load_ir(sys.argv[1])
resource.setrlimit(resource.RLIMIT_DATA, (data_size() + (8 << 20), resource.getrlimit(resource.RLIMIT_DATA)[1]))
try:
    core.read_model(sys.argv[1])
except Exception as exc:
    print("OpenVINO:", type(exc).__name__, str(exc).strip().splitlines()[-1])
try:
    print("ovreduce:", check_model(model, engine="openvino").findings)
except MemoryLimitError as exc:
    error = check_document([unreadable(sys.argv[1], exc, model)]).models[0].error
    print("ovreduce:", error.code, error.message)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory bound is Linux's RLIMIT_DATA")
def test_openvino_out_of_memory_is_the_memory_limit_not_a_finding(tmp_path: Path) -> None:
    """Where OpenVINO's read ran out of the process's memory bound (a model larger than the machine's memory, or than
    OVREDUCE_MAX_WORKER_BYTES), the engine reported an ``openvino-read-failed`` error, "std::bad_alloc": a healthy
    model called broken. The model is not checked, for the memory limit."""
    path = _big_model(tmp_path, count=6)
    text = path.read_text()
    padding = ("<!-- " + "x" * (4 << 20) + " -->\n") * 6  # 24 MB of XML, which OpenVINO's reader holds whole
    path.write_text(text.replace("<layers>", padding + "<layers>", 1))
    done = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY, str(path)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    theirs, ours = done.stdout.splitlines()
    assert theirs == "OpenVINO: RuntimeError Could not allocate memory at offset 0", done.stdout  # under the bound
    assert ours.startswith("ovreduce: limit.memory OpenVINO ran out of memory ("), ours
    assert "more memory than this process may use (" in ours, ours  # its bound, in bytes
