"""The command line's own pieces: its usage error, its path expansion, the renderers' home."""

from __future__ import annotations

from pathlib import Path

import pytest

import ovreduce
import ovreduce.errors
from ovreduce.cli.errors import UsageError
from ovreduce.cli.paths import expand_paths

ROOT = Path(__file__).resolve().parents[2]


def test_usage_error_belongs_to_the_cli() -> None:
    assert issubclass(UsageError, ovreduce.OvReduceError)
    assert UsageError.code == "usage"
    assert "UsageError" not in ovreduce.__all__
    assert "UsageError" not in ovreduce.errors.__all__
    assert "UsageError" not in (ovreduce.errors.__doc__ or "")


def test_expand_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    assert expand_paths(["ir_samples/broken"]) == sorted((ROOT / "ir_samples/broken").relative_to(ROOT).glob("*.xml"))
    assert expand_paths(["ir_samples/d*.xml", "x.xml"]) == [Path("ir_samples/dynamic.xml"), Path("x.xml")]
    with pytest.raises(UsageError, match="the pattern matches no files"):
        expand_paths(["ir_samples/nothing*.xml"])
    with pytest.raises(UsageError, match=r"the folder holds no \.xml files"):
        expand_paths([str(tmp_path)])
