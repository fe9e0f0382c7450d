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
CPU_DEPENDENT = (
    "tests/audit/test_audit.py",
    "tests/backends/test_capabilities.py",
    "tests/backends/test_openvino_differential.py",
    "tests/test_run.py",
    "tests/golden",
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


def _emulated(qemu: str, *argv: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [qemu, "-cpu", CPU, sys.executable, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_cpu_dependent_tests_pass_on_an_avx2_only_cpu() -> None:
    qemu = _qemu()
    probe = _emulated(
        qemu,
        "-c",
        "import openvino as ov; print(' '.join(ov.Core().get_property('CPU', 'OPTIMIZATION_CAPABILITIES')))",
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr
    assert "FP32" in probe.stdout.split() and "BF16" not in probe.stdout.split(), probe.stdout  # the CPU it claims
    run = _emulated(qemu, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CPU_DEPENDENT, timeout=1700)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) > 1000, summary
    assert not re.search(r"\d+ (failed|error)", summary), summary
