"""The command line's own pieces: its usage error, its path expansion, the renderers' home."""

from __future__ import annotations

from pathlib import Path

import pytest

import ovreduce
import ovreduce.errors
from ovreduce.cli.errors import UsageError
from ovreduce.cli.paths import expand_paths
from ovreduce.cli.wording import in_flag_terms

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


@pytest.mark.parametrize(
    ("library", "cli"),
    [
        (
            "layer id=5 takes its axes at run time (from a Parameter): give them as input 1 (or the Parameter's name)",
            "layer id=5 takes its axes at run time (from a Parameter): give them with --input 1=FILE (or the "
            "Parameter's name)",
        ),
        (
            "input 'y' has a dynamic rank; give its shape, or an input array",
            "input 'y' has a dynamic rank; give its shape with --shape NAME=SHAPE or an --input file",
        ),
        ("the shape given for input 0: [2] is not compatible", "--shape for input 0: [2] is not compatible"),
        ("input 'z' names no model input (inputs: x)", "--input 'z' names no model input (inputs: x)"),
        ("cannot save the converted IR in /x: Permission denied", "--save-ir /x: Permission denied"),
        ("x.xml: no such file", "x.xml: no such file"),
    ],
    ids=["runtime-axes", "dynamic-rank", "shape", "input-name", "save-ir", "untouched"],
)
def test_library_messages_in_flag_terms(library: str, cli: str) -> None:
    assert in_flag_terms(library) == cli
