"""The command line's own pieces: its usage error, its path expansion, the renderers' home."""

from __future__ import annotations

from pathlib import Path

import pytest

import ovreduce
import ovreduce.errors
from ovreduce.cli.errors import UsageError
from ovreduce.cli.paths import expand_paths
from ovreduce.cli.wording import in_flag_terms
from ovreduce.errors import InputError, OvReduceError

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
    assert expand_paths(["ir_samples/d*.xml", "ir_samples/rmsnorm.xml"]) == [
        Path("ir_samples/dynamic.xml"),
        Path("ir_samples/rmsnorm.xml"),
    ]
    with pytest.raises(UsageError, match=r"x\.xml: no such file"):  # what is not there is a usage error
        expand_paths(["x.xml"])
    with pytest.raises(UsageError, match="the pattern matches no files"):
        expand_paths(["ir_samples/nothing*.xml"])
    with pytest.raises(UsageError, match=r"the folder holds no \.xml files"):
        expand_paths([str(tmp_path)])


@pytest.mark.parametrize(
    ("command", "error", "cli"),
    [
        ("run", InputError("takes its axes at run time", parameter="inputs"),
         "takes its axes at run time (give it with --input NAME=FILE)"),
        ("run", InputError("has a dynamic rank", parameter="shapes"),
         "has a dynamic rank (give it with --shape NAME=SHAPE or --input NAME=FILE)"),
        ("audit", InputError("has a dynamic rank", parameter="shapes"),
         "has a dynamic rank (give it with --shape NAME=SHAPE or --input NAME=FILE)"),
        ("check", InputError("reshape x: no Parameter", parameter="reshape"),
         "reshape x: no Parameter (give it with --reshape NAME=SHAPE)"),
        ("conform", InputError("cannot save", parameter="save_ir"), "cannot save (give it with --save-ir DIR)"),
        ("run", InputError("no parameter named"), "no parameter named"),
        ("run", OvReduceError("x.xml: no such file"), "x.xml: no such file"),
    ],
    ids=["runtime-axes", "dynamic-rank", "audit-shape", "reshape", "save-ir", "untouched", "not-input"],
)  # fmt: skip
def test_library_errors_in_flag_terms(command: str, error: OvReduceError, cli: str) -> None:
    assert in_flag_terms(command, error) == cli


def test_errors_only_suggest_options_the_command_has() -> None:
    """Every option a library error's hint names exists on that command (no "pass --shape" on a command
    without one)."""
    import re

    from ovreduce.cli.parser import build_parser
    from ovreduce.cli.wording import OPTIONS

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # argparse's subparsers
    assert isinstance(commands, dict)
    checked = 0
    for per_command in OPTIONS.values():
        for command, hint in per_command.items():
            flags = {s for a in commands[command]._actions for s in a.option_strings}
            for flag in re.findall(r"--[a-z][a-z-]*", hint):
                assert flag in flags, f"{command}: the hint {hint!r} names {flag}, which {command} does not have"
                checked += 1
    assert checked >= 8
