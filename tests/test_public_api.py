"""The public API: ``ovreduce.__all__`` is honest, and importing ovreduce stays cheap."""

from __future__ import annotations

import subprocess
import sys

import ovreduce


def test_all_names_resolve_and_are_documented() -> None:
    for name in ovreduce.__all__:
        value = getattr(ovreduce, name)
        if callable(value) and not name.startswith("__"):
            assert value.__doc__, f"ovreduce.{name} has no docstring"


def test_all_is_unique() -> None:
    assert len(set(ovreduce.__all__)) == len(ovreduce.__all__)


def test_importing_ovreduce_does_not_import_numpy_or_openvino() -> None:
    """``ovreduce check`` must not pay for NumPy or OpenVINO: the heavy names load on first use."""
    code = (
        "import sys, ovreduce, ovreduce.cli;"
        "print(sorted(m for m in ('numpy', 'openvino', 'ml_dtypes') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
