"""The README's reproducer of the ONNX-frontend defects, run as written there: ``ovreduce conform`` must
print exactly what the README shows (so the README changes the day OpenVINO or conform does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("### Known OpenVINO 2026.4 CPU defects ovreduce reports")
    return readme[start : readme.index("\n## ", start)]


def test_the_readme_reproducer_prints_what_the_readme_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    section = _section()
    part = section[section.index("OpenVINO 2026.4's ONNX frontend") :]
    code = part[part.index("```python\n") + len("```python\n") : part.index("\n```\n")]
    shown = part[part.index("$ ovreduce conform repro.onnx\n") :]
    shown = shown[len("$ ovreduce conform repro.onnx\n") : shown.index("\n```")]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    status, out, _ = run_cli(capsys, "conform", "repro.onnx")
    assert status == 1
    assert out.rstrip("\n") == shown
