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
    "ovreduce.reports.inspect", "ovreduce.reports.run", "ovreduce.reports.audit", "ovreduce.reports.conform",
    "ovreduce.reports.devices", "ovreduce.cli.render.junit", "ovreduce.cli.render.sarif",
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
    assert {"ovreduce.check", "ovreduce.cli.render.check_text", "ovreduce.reports.check"} <= loaded  # it did run
    assert sorted(set(NOT_FOR_CHECK) & loaded) == []


@pytest.mark.parametrize(
    ("fmt", "module"), [("junit", "ovreduce.cli.render.junit"), ("sarif", "ovreduce.cli.render.sarif")]
)
def test_each_format_imports_its_renderer_alone(fmt: str, module: str) -> None:
    code = f"from ovreduce.cli import main\nmain(['check', '--format', {fmt!r}, {str(SAMPLE)!r}])"
    loaded = _loaded(code)
    others = {"ovreduce.cli.render.junit", "ovreduce.cli.render.sarif", "ovreduce.cli.render.check_text"} - {module}
    assert module in loaded and not (others & loaded)


def test_each_document_is_defined_once_in_the_module_of_its_command() -> None:
    """ovreduce.reports is a package of one module per command: each public name is defined in the module that
    lists it, nowhere else (the others import it), and is found, pickled and resolved there."""
    import dataclasses
    import importlib
    import inspect
    import pkgutil
    import typing

    import ovreduce.reports as package

    assert [m.name for m in pkgutil.iter_modules(package.__path__)] == [
        "audit", "check", "common", "conform", "devices", "inspect", "run",
    ]  # fmt: skip
    exported = [n for n, v in vars(package).items() if not n.startswith("__") and not inspect.ismodule(v)]
    assert exported == []  # no re-exports: one home each
    homes: dict[str, str] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"ovreduce.reports.{info.name}")
        for name in module.__all__:
            assert name not in homes, f"{name} in {homes[name]} and {module.__name__}"
            homes[name] = module.__name__
            value = getattr(module, name)
            if isinstance(value, type) or inspect.isfunction(value):  # (not a type alias: Severity)
                assert value.__module__ == module.__name__, name
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                typing.get_type_hints(value)  # its annotations resolve in its module (as pydantic resolves them)
    from ovreduce.reports.devices import Device

    device = Device("CPU", capabilities=("FP32",))
    assert pickle.loads(pickle.dumps(device)) == device
