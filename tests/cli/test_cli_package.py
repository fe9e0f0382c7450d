"""The command line's own pieces: its usage error, its path expansion, the renderers' home."""

from __future__ import annotations

import os
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
    with pytest.raises(UsageError, match=r"the pattern matches no \.xml files"):
        expand_paths(["ir_samples/nothing*.xml"])
    with pytest.raises(UsageError, match=r"the folder holds no \.xml files"):
        expand_paths([str(tmp_path)])


def test_a_glob_takes_its_matches_as_a_folder_takes_its_entries(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A glob ovreduce expands itself dropped the folders it matched, took a model's .bin as a model, and dropped a
    FIFO, a dangling link or a loop of links named .xml, all of which a folder's search lists."""
    monkeypatch.chdir(ROOT)
    broken = expand_paths(["ir_samples/broken"])
    assert expand_paths(["ir_samples/bro*"]) == broken
    everything = expand_paths(["ir_samples/*"])
    assert set(broken) <= set(everything)
    assert everything == expand_paths(["ir_samples"])
    assert expand_paths(["ir_samples/rms*"]) == [Path("ir_samples/rmsnorm.xml"), Path("ir_samples/rmsnorm_f16.xml")]
    with pytest.raises(UsageError, match=r"rms\*\.bin: the pattern matches no \.xml files"):
        expand_paths(["ir_samples/rms*.bin"])
    (tmp_path / "good.xml").write_text("<net/>")
    (tmp_path / "good.bin").write_bytes(b"")
    (tmp_path / "dangling.xml").symlink_to(tmp_path / "gone.xml")
    (tmp_path / "loop.xml").symlink_to(tmp_path / "loop.xml")
    os.mkfifo(tmp_path / "fifo.xml")
    names = ["dangling.xml", "fifo.xml", "good.xml", "loop.xml"]
    assert [p.name for p in expand_paths([str(tmp_path)])] == names
    assert [p.name for p in expand_paths([str(tmp_path / "*.xml")])] == names
    assert [p.name for p in expand_paths([str(tmp_path / "*")])] == names


def test_a_file_named_twice_is_taken_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Overlapping paths (``models/ models/*.xml``, ``a.xml ./a.xml``) checked and counted one file twice."""
    monkeypatch.chdir(ROOT)
    folder = expand_paths(["ir_samples"])
    assert expand_paths(["ir_samples/", "ir_samples/spec_examples.xml"]) == folder
    assert expand_paths(["ir_samples/broken/edge_dims.xml", "ir_samples/broken/./edge_dims.xml"]) == [
        Path("ir_samples/broken/edge_dims.xml")
    ]
    (tmp_path / "samples").symlink_to(ROOT / "ir_samples")  # a folder through a link to it is the same folder
    assert len(expand_paths(["ir_samples", str(tmp_path / "samples"), "ir_samples/*.xml"])) == len(folder)
    (tmp_path / "other.xml").symlink_to(ROOT / "ir_samples" / "rmsnorm.xml")  # another name: its own .bin beside
    assert len(expand_paths(["ir_samples/rmsnorm.xml", str(tmp_path / "other.xml")])) == 2


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
