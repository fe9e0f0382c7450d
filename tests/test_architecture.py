"""The layering of the source, read from the code itself (ast), so that it cannot quietly erode.

bytes -> ``ovreduce.ir`` -> ``ovreduce.ops``/``ovreduce.check`` -> ``ovreduce.backends`` -> reports ->
``ovreduce.cli`` / ``api``: nothing lower imports anything higher, and there are no import cycles. Every
import counts, also one inside a function (a lazy import is a dependency all the same).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ovreduce", "api")
TERMINAL_MODULES = {"argparse", "curses", "tqdm", "rich", "readline", "getpass", "tty", "termios"}
TERMINAL_NAMES = {"print", "input", "isatty"}
TERMINAL_STREAMS = {"stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


MODULES = sources()


def imported(name: str, path: Path) -> Iterator[str]:
    """The modules ``name`` imports (absolute names; ``from pkg import sub`` counts as ``pkg.sub`` when
    ``sub`` is a module of ours, else as ``pkg``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield full if full in MODULES else base


@functools.cache
def graph() -> dict[str, set[str]]:
    """Our modules -> the modules of ours they import (read once: every parametrized test asks for it)."""
    out: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        deps = set()
        for target in imported(name, path):
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        out[name] = deps
    return out


def is_library(name: str) -> bool:
    return name.split(".")[0] == "ovreduce" and not (name == "ovreduce.cli" or name.startswith("ovreduce.cli."))


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "ovreduce.check" in edges["ovreduce.check.inspect"]
    assert {"ovreduce.reports", "ovreduce.cli", "api.main"} <= set(edges)


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_library(n)))
def test_library_module_imports_neither_cli_nor_api(name: str) -> None:
    bad = {d for d in graph()[name] if not is_library(d)}
    assert bad == set(), f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("api")))
def test_api_does_not_import_the_cli(name: str) -> None:
    bad = {d for d in graph()[name] if d == "ovreduce.cli" or d.startswith("ovreduce.cli.")}
    assert bad == set(), f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_library(n)))
def test_library_module_does_not_touch_terminals(name: str) -> None:
    tree = ast.parse(MODULES[name].read_text())
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            problems += [f"imports {m}" for m in mods if m.split(".")[0] in TERMINAL_MODULES]
        elif isinstance(node, ast.Name) and node.id in TERMINAL_NAMES:
            problems.append(f"uses {node.id}() at line {node.lineno}")
        elif isinstance(node, ast.Attribute) and (
            node.attr == "isatty" or (node.attr in TERMINAL_STREAMS and _is_sys(node.value))
        ):
            problems.append(f"uses .{node.attr} at line {node.lineno}")
    assert problems == []


def _is_sys(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "sys"


def test_the_checker_catches_a_cycle_and_a_terminal() -> None:
    """The rules above can fail: a made-up cycle is found, and so is a print in library code."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("import sys\nsys.stderr.write('x')\nprint(1)")
    assert any(isinstance(n, ast.Attribute) and n.attr == "stderr" and _is_sys(n.value) for n in ast.walk(tree))


def test_every_package_folder_is_installed_and_api_under_its_own_name() -> None:
    """pyproject's package list names every folder with an ``__init__.py`` (the repository's ``api/`` as
    ``ovreduce_api``: a top-level ``api`` would collide with other projects'), and ``api/`` imports itself
    only relatively, so that the same code runs under both names."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"ovreduce_api": "api"}
    folders = {module_name(p.parent / "__init__.py") for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")}
    assert set(config["packages"]) == {"ovreduce_api" + f[3:] if f.startswith("api") else f for f in folders}
    for name, path in MODULES.items():
        if name.startswith("api"):
            absolute = [n.module for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)
                        and not n.level and (n.module or "").split(".")[0] in ("api", "ovreduce_api")]  # fmt: skip
            assert absolute == [], (name, absolute)


READERS = ("ovreduce.ir.fast", "ovreduce.ir.careful")
BUILT_ONLY_BY_THE_BUILDER = {"Layer", "Port", "ConstData", "Edge", "Body", "PortMapping", "BackEdge", "IRModel"}


def test_the_two_ir_readers_share_a_builder_and_never_import_each_other() -> None:
    deps = graph()
    for reader in READERS:
        assert "ovreduce.ir.build" in deps[reader]
        assert not set(READERS) & deps[reader], f"{reader} imports the other reader"


def test_only_the_builder_makes_the_parsed_model() -> None:
    """ "Where is this layer built?" has one answer: ovreduce.ir.build (a reader, a rule or a report may read a
    layer, copy it with ``_replace`` or ``dataclasses.replace``, never construct one)."""
    makers: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        if name in ("ovreduce.ir.build", "ovreduce.ir.model"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        ours = {  # the model's classes as this module names them
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "ovreduce.ir.model"
            for alias in node.names
            if alias.name in BUILT_ONLY_BY_THE_BUILDER
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ours:
                makers.setdefault(name, set()).add(node.func.id)
    assert makers == {}


OTHER_TOOLS_OPTIONS = {"--disable-convert-tokenizer"}  # optimum-cli's, named where a tokenizer is missing
"""Options of other programs the library may name: its own words name no option of ovreduce's command line."""


def _message_text(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """The string literals of ``tree`` that are not docstrings (the parts of f-strings too), with their lines."""
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


@pytest.mark.parametrize("name", sorted(n for n in MODULES if is_library(n)))
def test_library_messages_name_no_command_line_option(name: str) -> None:
    """The library's messages and notes reach the command line and the service alike: advice in them says what to
    give, never a flag of one surface (the service has no ``--steps``); the command adds its flags to an input error
    (``ovreduce.cli.wording``)."""
    import re

    tree = ast.parse(MODULES[name].read_text())
    named = [
        (line, flag) for line, text in _message_text(tree) for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", text)
    ]
    flags = [(line, flag) for line, flag in named if flag not in OTHER_TOOLS_OPTIONS]
    assert flags == [], f"{name} names command-line options in its messages: {flags}"
