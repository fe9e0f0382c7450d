"""The tests whose results depend on the CPU, run once more on an emulated AVX2-only CPU.

OpenVINO's CPU plugin executes a bf16 reduction natively where the CPU has bf16 instructions and through f32
elsewhere, and its kernels round differently on AVX2 and AVX512: those tests assert what OpenVINO does on the
CPU they run on (tests/cpu.py). So that one machine checks both kinds, they run again under QEMU's user-mode
emulator with a Haswell CPU model (AVX2, no AVX512, no bf16): OpenVINO's release builds have no switch that
caps the instruction set (oneDNN's ``ONEDNN_MAX_CPU_ISA`` is compiled out of the CPU plugin), and QEMU shows the
program a CPU that lacks them. Emulation makes Python about ten times slower, so only those tests run there.

Needs Debian's ``qemu-user`` (``.ci/run`` installs it); where it is missing the test skips and says so, unless
``OVREDUCE_REQUIRE_QEMU=1`` makes that a failure (as in CI).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Haswell without TSX, minus the system features QEMU's user mode cannot emulate (it warns about each).
CPU = "Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid"
# In two groups of about equal emulated time, run at once (emulation uses one core per process).
CPU_DEPENDENT = (
    (
        "tests/backends/test_openvino_differential.py",
        "tests/audit/test_target.py::test_the_bf16_emulation_equals_this_cpus_native_bf16_execution",
    ),
    ("tests/audit/test_audit.py", "tests/backends/test_capabilities.py", "tests/test_run.py", "tests/golden"),
)


def _qemu() -> str:
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"QEMU's x86-64 emulation runs x86-64 programs; this Python is built for {platform.machine()}")
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        message = "Debian's qemu-user is not installed (apt-get install qemu-user)"
        if os.environ.get("OVREDUCE_REQUIRE_QEMU") == "1":
            pytest.fail(message + " and OVREDUCE_REQUIRE_QEMU=1")
        pytest.skip(message)
    return qemu


def _emulated(qemu: str, *argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [qemu, "-cpu", CPU, sys.executable, *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
    )


def _emulated_pytest(qemu: str, *paths: str) -> subprocess.Popen[str]:
    """pytest on ``paths`` in one emulated process (-n 0: a worker process xdist started would run natively, on
    this CPU, not emulated). Only the plugins the command line needs are loaded (xdist for pyproject's ``-n``,
    pytest-timeout for the ``timeout`` marks): importing the others (Hypothesis's, schemathesis's, anyio's) cost
    some 20 s a process under emulation, and none of these tests uses them."""
    return _emulated(
        qemu,
        *("-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-p", "xdist.plugin", "-p", "pytest_timeout"),
        *paths,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_cpu_dependent_tests_pass_on_an_avx2_only_cpu() -> None:
    qemu = _qemu()
    # The probe and the runs start at once (the probe alone would leave a core idle for its seconds).
    probe = _emulated(
        qemu, "-c", "import openvino as ov; print(*ov.Core().get_property('CPU', 'OPTIMIZATION_CAPABILITIES'))"
    )
    runs = [_emulated_pytest(qemu, *group) for group in CPU_DEPENDENT]
    try:
        out, err = probe.communicate(timeout=300)
        assert probe.returncode == 0, err
        assert "FP32" in out.split() and "BF16" not in out.split(), out  # the CPU it claims to be
    except BaseException:
        for run in runs:
            run.kill()
            run.communicate()
        raise
    passed = 0
    for run in runs:
        out, err = run.communicate(timeout=1700)
        summary = out.strip().splitlines()[-1] if out.strip() else err[-2000:]
        assert run.returncode == 0, out[-6000:] + err[-2000:]
        count = re.search(r"(\d+) passed", summary)
        assert count is not None and not re.search(r"\d+ (failed|error)", summary), summary
        passed += int(count.group(1))
    assert passed > 1400  # every test of both groups ran
