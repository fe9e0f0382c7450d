"""``check`` of many models on several processes gives the very document a serial check gives, in the same
order: models that are clean, with findings, unreadable, and a reshape."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ovreduce.check import check_paths
from ovreduce.cli.paths import expand_paths
from ovreduce.shapes import PartialShape
from tests.ir.irxml import edge, layer, net, port

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"


@pytest.mark.parametrize("jobs", [2, 3])
def test_parallel_check_is_byte_identical_to_serial(jobs: int) -> None:
    paths = expand_paths([str(SAMPLES)])
    assert len(paths) > 10 and any("broken" in str(p) for p in paths)
    serial = json.dumps(check_paths(paths).to_json())
    parallel = json.dumps(check_paths(paths, jobs=jobs).to_json())
    assert parallel == serial
    assert not check_paths(paths, jobs=jobs).ok  # the broken samples are found in parallel too


def test_parallel_check_passes_options_and_counts_progress() -> None:
    paths = [SAMPLES / "dynamic.xml", SAMPLES / "rmsnorm.xml", SAMPLES / "all_reductions.xml"]
    reshape = {"x": PartialShape.parse("[2,4,16,3]")}
    ticks: list[int] = []
    parallel = check_paths(paths, reshape=reshape, jobs=2, progress=lambda: ticks.append(1))
    assert parallel.to_json() == check_paths(paths, reshape=reshape).to_json()
    assert len(ticks) == 3


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif"])
def test_the_command_line_gives_the_same_bytes_and_status_with_any_jobs(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    import re

    from tests.cli.inprocess import run_cli

    def run(jobs: str) -> tuple[int, str, str]:
        status, out, err = run_cli(capsys, "check", str(SAMPLES), "--format", fmt, "-j", jobs)
        return status, re.sub(r' time="[0-9.]+"', ' time="T"', out), err  # JUnit's times are measured

    serial = run("1")
    for jobs in ("2", "4"):
        assert run(jobs) == serial
    assert serial[0] == 1


def test_jobs_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.inprocess import run_cli

    with pytest.raises(SystemExit) as info:
        run_cli(capsys, "check", str(SAMPLES), "-j", "0")
    assert info.value.code == 2
    assert "'0' is not a number of processes: an integer of at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("", "fork"),  # the CLI's case: workers forked with the checker imported
        ("import openvino", "forkserver"),  # OpenVINO's threads are never forked
        ("import threading, time; threading.Thread(target=time.sleep, args=(5,), daemon=True).start()", "forkserver"),
    ],
    ids=["plain", "openvino-loaded", "another-thread"],
)
def test_workers_are_forked_only_when_nothing_else_runs(setup: str, expected: str) -> None:
    code = f"{setup}\nfrom ovreduce.check import _start_method\nprint(_start_method('native'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected


def _crashing_extension_and_a_model_that_loads_it(folder: Path) -> Path:
    """A Python module that crashes the process importing it (SIGSEGV) as an OpenVINO extension, and a model whose
    check loads the extensions: a GRN's output declared without dims, for which ovreduce has no rule and asks
    OpenVINO. (A real OpenVINO crash ovreduce does not refuse beforehand is, by its nature, not known.)"""
    (folder / "crashing_extension.py").write_text("import ctypes\n\nctypes.string_at(0)\n")
    x = layer(0, "x", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, [2, 3])])
    grn = layer(1, "grn", "GRN", data={"bias": "1e-6"}, inputs=[port(0, [2, 3])], outputs=[port(1)])
    axes = layer(2, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
                 outputs=[port(0, [1], "I64")])  # fmt: skip
    mean = layer(3, "mean", "ReduceMean", inputs=[port(0), port(1, [1], "I64")], outputs=[port(2, [2])])
    out = layer(4, "out", "Result", inputs=[port(0, [2])])
    path = folder / "asks_openvino.xml"
    path.write_text(net([x, grn, axes, mean, out], [edge(0, 0, 1, 0), edge(1, 1, 3, 0), edge(2, 0, 3, 1),
                                                    edge(3, 2, 4, 0)]))  # fmt: skip
    path.with_suffix(".bin").write_bytes((1).to_bytes(8, "little"))
    return path


def test_a_model_whose_check_crashes_its_process_is_unreadable_and_the_others_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies checking one model (OpenVINO crashing, here in an extension it loads for the model) ended the
    whole run, "internal error: BrokenProcessPool" (exit 3), without a word of the other models. That model is now
    unreadable, saying how its process ended, and the others are checked as in a serial run."""
    crashing = _crashing_extension_and_a_model_that_loads_it(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [SAMPLES / "dynamic.xml", crashing, SAMPLES / "all_reductions.xml", SAMPLES / "spec_examples.xml"]
    document = check_paths(paths, jobs=2, extensions=["crashing_extension"])
    assert [m.path for m in document.models] == [str(p) for p in paths]
    crashed = document.models[1]
    assert crashed.error is not None and "killed by signal 11 (SIGSEGV)" in crashed.error.message, crashed.error
    serial = check_paths([p for p in paths if p != crashing])
    assert [m for m in document.models if m is not crashed] == list(serial.models)


def _processes_naming(text: str) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except OSError:  # (ended meanwhile)
            continue
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="the workers' end with their parent is the system's (Linux)")
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP])
def test_the_workers_of_a_check_that_is_killed_end_with_it(tmp_path: Path, sent: signal.Signals) -> None:
    """``check DIR -j 2`` killed by SIGTERM (a CI job cancelled) or SIGHUP (its terminal closed) ended, but its workers
    slept on for ever, each holding its memory. They end with it now."""
    for i in range(400):
        for suffix in (".xml", ".bin"):
            (tmp_path / f"m{i}{suffix}").write_bytes((SAMPLES / "all_reductions").with_suffix(suffix).read_bytes())
    with subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "check", str(tmp_path), "-j", "2"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:  # fmt: skip
        deadline = time.monotonic() + 60
        while len(_processes_naming(str(tmp_path))) < 3 and process.poll() is None:  # the command and its 2
            assert time.monotonic() < deadline, "the check's workers did not start"
            time.sleep(0.05)
        process.send_signal(sent)
        assert process.wait(timeout=60) == -sent
    deadline = time.monotonic() + 10
    while (left := _processes_naming(str(tmp_path))) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} of the check's processes outlived it"


def _relu_chain(count: int) -> str:
    """A Parameter, ``count`` ReLUs and a Result: a model that takes a worker a moment to check."""
    layers = [layer(0, "x", "Parameter", data={"shape": "2,8", "element_type": "f32"}, outputs=[port(0, (2, 8))])]
    edges = []
    for i in range(1, count + 1):
        layers.append(layer(i, f"r{i}", "ReLU", inputs=[port(0, (2, 8))], outputs=[port(1, (2, 8))]))
        edges.append(edge(i - 1, 0 if i == 1 else 1, i, 0))
    layers.append(layer(count + 1, "out", "Result", inputs=[port(0, (2, 8))]))
    edges.append(edge(count, 1, count + 1, 0))
    return net(layers, edges)


@pytest.mark.skipif(sys.platform != "linux", reason="the workers' end with their parent is the system's (Linux)")
def test_ctrl_c_ends_a_parallel_check_at_once(tmp_path: Path) -> None:
    """``check -j 2 DIR`` interrupted (SIGINT) while its workers checked went on checking every model left, then threw
    the report away: it ended as late as it would have without the Ctrl-C. The workers are stopped, and it ends at
    once, ``ovreduce: interrupted``, 130."""
    (tmp_path / "chain.xml").write_text(_relu_chain(3000))
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(200):  # two names of one file are two models
        (folder / f"m{i}.xml").symlink_to(tmp_path / "chain.xml")
    with subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "check", str(folder), "-j", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:  # fmt: skip
        deadline = time.monotonic() + 60
        while len(_processes_naming(str(folder))) < 3 and process.poll() is None:  # the command and its 2 workers
            assert time.monotonic() < deadline, "the check's workers did not start"
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = process.communicate(timeout=600)
        took = time.monotonic() - sent
    assert (process.returncode, out, err) == (130, b"", b"ovreduce: interrupted\n")
    assert took < 5, f"it ended {took:.1f} s after the interrupt"
    deadline = time.monotonic() + 10
    while (left := _processes_naming(str(folder))) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} of the check's processes outlived it"


@pytest.mark.skipif(sys.platform != "linux", reason="the workers' end with their parent is the system's (Linux)")
@pytest.mark.parametrize("attempt", range(4))
def test_ctrl_c_as_the_workers_start_is_never_lost(tmp_path: Path, attempt: int) -> None:
    """An interrupt while the pool forked its workers was raised in a fork hook, where Python prints it ("Exception
    ignored ... KeyboardInterrupt") and drops it: the check ran on to exit 0. It is 130, whenever it comes."""
    for i in range(40):
        for suffix in (".xml", ".bin"):
            (tmp_path / f"m{i}{suffix}").write_bytes((SAMPLES / "all_reductions").with_suffix(suffix).read_bytes())
    with subprocess.Popen([sys.executable, "-m", "ovreduce.cli", "check", str(tmp_path), "-j", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:  # fmt: skip
        deadline = time.monotonic() + 60
        while len(_processes_naming(str(tmp_path))) < 2 and process.poll() is None:  # its first worker is forked
            assert time.monotonic() < deadline, "the check's workers did not start"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=600)
    if process.returncode == 0:  # it was done before the interrupt came
        assert b"Exception ignored" not in err and b"KeyboardInterrupt" not in err, err
        return
    assert (process.returncode, out, err) == (130, b"", b"ovreduce: interrupted\n")


def _descendants(pid: int) -> dict[int, int]:
    """The processes started by ``pid`` and by those, with the signals each ignores (``SigIgn``, a mask)."""
    children: dict[int, list[int]] = {}
    ignored: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                status = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines())
                children.setdefault(int(status["PPid"]), []).append(int(entry.name))
                ignored[int(entry.name)] = int(status["SigIgn"], 16)
        except (OSError, ValueError):  # (ended meanwhile)
            continue
    found: dict[int, int] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found[child] = ignored.get(child, 0)
        todo += children.get(child, [])
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server is the system's (Linux)")
@pytest.mark.parametrize("attempt", range(2))
def test_ctrl_c_of_a_terminal_as_the_workers_start_is_one_line(attempt: int) -> None:
    """A terminal's Ctrl-C reaches every process of the command's group. Pressed while ``check --engine openvino -j 2``
    started its workers (forked from multiprocessing's fork server, which a fresh interpreter runs), it printed the
    tracebacks of a worker's or of the fork server's own start besides ``ovreduce: interrupted``. The helpers ignore
    it from their start (the command stops them itself): one line, 130."""
    argv = [sys.executable, "-m", "ovreduce.cli", "check", "--engine", "openvino", "-j", "2", str(SAMPLES)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as process:
        deadline = time.monotonic() + 120
        while len(helpers := _descendants(process.pid)) < 3 and process.poll() is None:  # a worker of the fork server
            assert time.monotonic() < deadline, "the check's workers did not start"
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=600)
    sigint = 1 << (signal.SIGINT - 1)
    assert all(mask & sigint for mask in helpers.values()), f"helpers that take Ctrl-C: {helpers}"
    if process.returncode != 0:  # (0: it was done before the interrupt came)
        assert (process.returncode, out, err) == (130, b"", b"ovreduce: interrupted\n")


def test_junit_times_are_each_model_s_own_with_jobs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With ``-j 2`` a suite's ``time`` was the wall time between results: a big model checked beside another was
    given the other's time and the pool's start, the second big one (done a moment after) almost nothing, the small
    one 0.000. Each suite's time is its own model's, measured in its worker; ``testsuites``' is the run's."""
    import re

    from tests.cli.inprocess import run_cli

    for name, count in (("a_big", 8000), ("b_small", 10), ("c_big", 8000)):
        (tmp_path / f"{name}.xml").write_text(_relu_chain(count))
    times = {}
    for jobs in ("1", "2"):
        _, out, _ = run_cli(capsys, "check", "-j", jobs, str(tmp_path), "--format", "junit")
        suites = re.findall(r'<testsuite name="[^"]*/([^"/]+)"[^>]* time="([0-9.]+)"', out)
        times[jobs] = {name: float(seconds) for name, seconds in suites}
        total = float(re.findall(r'<testsuites [^>]*time="([0-9.]+)"', out)[0])
        assert total >= max(times[jobs].values()), (total, times[jobs])
    serial, parallel = times["1"], times["2"]
    for big in ("a_big.xml", "c_big.xml"):  # its own time, of the order of a serial check's (not a gap between results)
        assert parallel[big] >= serial[big] / 3, (serial, parallel)
    assert parallel["b_small.xml"] < min(parallel["a_big.xml"], parallel["c_big.xml"]) / 5, parallel


def test_ctrl_c_while_the_program_loads_is_said_as_any_other() -> None:
    """A Ctrl-C while the program's modules loaded (before the command took it: a slow disk, a busy machine) was
    Python's traceback of the import it stopped, and an end by the signal: it is ``ovreduce: interrupted``, 130."""
    code = ("import sys; sys.argv[0] = '-m'\nimport os, signal, time\nimport ovreduce.cli\n"
            "os.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "ovreduce: interrupted\n")
    code = "import os, signal, ovreduce.cli\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == "True\n"  # a process that imports the package keeps its own


def test_ctrl_c_while_the_program_ends_is_said_as_any_other() -> None:
    """A Ctrl-C after the command was done, while the process ended (multiprocessing's exit joins its helpers and runs
    its finalizers), was Python's traceback of the exit it stopped, and status 0: it is ``ovreduce: interrupted``,
    130, as at any other moment."""
    code = ("import atexit, os, signal, sys, time\n"
            "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(30)))  # (run last)\n"
            f"sys.argv = ['ovreduce', 'check', {str(SAMPLES / 'rmsnorm.xml')!r}]\n"
            "from ovreduce.cli.entry import console\nconsole()")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "ovreduce: interrupted\n")
    assert done.stdout.startswith(str(SAMPLES / "rmsnorm.xml"))
