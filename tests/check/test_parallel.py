"""``check`` of many models on several processes gives the very document a serial check gives, in the same
order: models that are clean, with findings, unreadable, and a reshape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovreduce.check import check_paths
from ovreduce.cli.paths import expand_paths
from ovreduce.shapes import PartialShape

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
