"""``ovreduce check`` imports what it uses and nothing else: each lazy import below is one that was once paid
on every run (the documents of other commands, the other output formats, json, difflib, glob, shutil...).

Run in fresh interpreters: what a test process has already imported says nothing.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "ir_samples" / "all_reductions.xml"

# Never on the check path (text output): heavy dependencies, and what only other commands or formats use.
NOT_FOR_CHECK = (
    "numpy", "openvino", "ml_dtypes", "fastapi", "pydantic", "tqdm", "api",
    "json", "difflib", "glob", "shutil", "multiprocessing",
    "ovreduce._report_more", "ovreduce.cli.render.junit", "ovreduce.cli.render.sarif",
    "ovreduce.cli.render.text", "ovreduce.cli.render.width", "ovreduce.cli.layers",
    "ovreduce.check.inspect", "ovreduce.check.openvino", "ovreduce.run", "ovreduce.audit", "ovreduce.conform",
)  # fmt: skip


def _loaded(code: str) -> set[str]:
    """The modules loaded after running ``code`` (which may print) in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint('\\n' + repr(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(ast.literal_eval(done.stdout.splitlines()[-1]))


def test_importing_ovreduce_imports_no_module_of_it() -> None:
    loaded = _loaded("import ovreduce")
    assert sorted(m for m in loaded if m.startswith("ovreduce")) == ["ovreduce"]


def test_the_check_command_imports_only_what_it_uses() -> None:
    code = f"from ovreduce.cli import main\nstatus = main(['check', {str(SAMPLE)!r}])\nassert status == 0, status"
    loaded = _loaded(code)
    assert {"ovreduce.check", "ovreduce.cli.render.check_text", "ovreduce.reports"} <= loaded  # it did run
    assert sorted(set(NOT_FOR_CHECK) & loaded) == []


@pytest.mark.parametrize(
    ("fmt", "module"), [("junit", "ovreduce.cli.render.junit"), ("sarif", "ovreduce.cli.render.sarif")]
)
def test_each_format_imports_its_renderer_alone(fmt: str, module: str) -> None:
    code = f"from ovreduce.cli import main\nmain(['check', '--format', {fmt!r}, {str(SAMPLE)!r}])"
    loaded = _loaded(code)
    others = {"ovreduce.cli.render.junit", "ovreduce.cli.render.sarif", "ovreduce.cli.render.check_text"} - {module}
    assert module in loaded and not (others & loaded)


def test_the_other_documents_are_the_reports_module_s_on_first_use() -> None:
    code = (
        "import ovreduce.reports as r\nassert 'AuditDocument' not in vars(r)\n"
        "r.AuditDocument\nassert 'LayerView' in vars(r)"
    )
    assert "ovreduce._report_more" in _loaded(code)
    from ovreduce import reports

    for name in reports.__all__:
        value = getattr(reports, name)
        if isinstance(value, type):
            assert value.__module__ == "ovreduce.reports", name
    device = reports.Device("CPU", capabilities=("FP32",))
    assert pickle.loads(pickle.dumps(device)) == device
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        reports.Nothing  # noqa: B018


def test_reports_names_every_document_it_defines_on_first_use() -> None:
    """ovreduce.reports lists the names it defines lazily (so as not to import them to know them): the list is
    _report_more's, and each resolves to the class defined there, as this module's."""
    import ovreduce._report_more as more
    import ovreduce.reports as reports

    assert frozenset(more.__all__) == reports._MORE
    for name in more.__all__:
        assert getattr(reports, name) is getattr(more, name)
