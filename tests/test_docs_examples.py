"""Every example in README.md and docs/*.md, run against the output it shows (as Polygraphy's
``tests/test_examples.py`` runs its examples). The convention, by a fenced block's language:

``console``
    Lines starting with ``$ `` are commands (a line ending in ``\\`` continues on the next one); the lines after
    a command, up to the next one, are what it prints, stdout and stderr together. They run in one bash, in
    order (so ``echo $?`` shows the status of the command before it), from the page's scratch folder, which
    holds ``ir_samples/`` and ``tests/`` (links to the repository's), with this interpreter's ``bin`` first on
    ``PATH`` (so ``ovreduce`` and ``python`` are this checkout's). The output is
    compared as doctest compares with ``ELLIPSIS``: ``...`` stands for any text, across lines too; blanks at
    the ends of lines are ignored. The exit status is not compared: a command shows it with ``echo $?``.
``pycon``
    A doctest session (``ELLIPSIS``), run in the same scratch folder.
``python``
    Code run as it is; it must print nothing. A page's ``python`` and ``pycon`` blocks share one namespace, so a
    later block sees what an earlier one defined (and the files it wrote, for the commands too).
``sh``
    Shown, never run: commands a test cannot run (a container build, a server that runs until stopped, an
    install of the package itself). Each must be listed in :data:`NOT_RUN` with the reason, and every entry of
    :data:`NOT_RUN` must be on its page, so no example leaves the tests unnoticed.
``json``, ``text``
    Data (a document's shape, a diagram), not examples: neither may hold a ``$ `` or ``>>> `` line.

Any other language, or a fence without one, fails. An example that talks to the service at
``localhost:8000`` or ``127.0.0.1:8000`` talks to one started for the test (on a free port, written in its place,
and written back in what it prints). A page that shows ``curl`` is skipped, with the reason, where curl is not
installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"console", "pycon", "python"}
DATA = {"json", "text"}

# (page, the block's first command: its first line without a trailing comment or "\\") -> why it is not run.
NOT_RUN: dict[tuple[str, str], str] = {
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt . "
        "&& .venv/bin/ovreduce check ir_samples/",
    ): "installs the package into a new virtual environment; the tour below runs its check of the samples",
    (
        "README.md",
        "python3 -m venv .venv && .venv/bin/pip install -q -c constraints.txt -e '.[test]' "
        "&& .venv/bin/python -m pytest",
    ): "the test suite itself (.ci/run runs exactly this line: test_ci_runs_the_readme_test_command)",
    ("docs/service.md", "ovreduce serve --port 8000 --store ./store"): "a server that runs until it is stopped",
    ("docs/service.md", "docker build -t ovreduce ."): "builds and runs the image: tests/container does, with buildah",
    (
        "docs/service.md",
        "docker run -d -p 8000:8000 -e OVREDUCE_ALLOWED_HOSTS=ovreduce.example.com,localhost ovreduce",
    ): "runs the container image with settings: tests/container runs it so",
    (
        "docs/service.md",
        "docker buildx imagetools inspect python:3.11-slim",
    ): "asks a container registry, which the tests cannot reach",
    (
        "docs/service.md",
        "podman build --format docker -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro",
    ): "a container build behind a TLS-intercepting proxy",
}

_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_SERVICE = re.compile(r"\b(?:localhost|127\.0\.0\.1):8000\b")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    return blocks_of(page, ROOT)


def blocks_of(page: Path, root: Path) -> list[Block]:
    """The fenced blocks of ``page``, named by its path under ``root``."""
    text = page.read_text()
    name = str(page.relative_to(root))
    return [Block(name, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in _FENCE.finditer(text)]


def _first_command(block: Block) -> str:
    return block.text.splitlines()[0].split("  #")[0].removesuffix("\\").strip()


def commands(block: Block) -> Iterator[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    lines = block.text.splitlines()
    i = 0
    if lines and not lines[0].startswith("$ "):
        raise AssertionError(f"{block.where}: a console block starts with a '$ ' command")
    while i < len(lines):
        command = lines[i][2:]
        i += 1
        while command.endswith("\\") and i < len(lines):
            command = command[:-1] + "\n" + lines[i]
            i += 1
        out = []
        while i < len(lines) and not lines[i].startswith("$ "):
            out.append(lines[i])
            i += 1
        yield command, "\n".join(out)


def _tidy(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def _matches(want: str, got: str) -> bool:
    return doctest.OutputChecker().check_output(_tidy(want), _tidy(got), doctest.ELLIPSIS)


class Service:
    """``ovreduce``'s service on a free port, started on first use and stopped when the module's tests end."""

    def __init__(self, store: Path) -> None:
        self._store = store
        self._stack = contextlib.ExitStack()
        self.address: str | None = None

    def __call__(self, text: str) -> str:
        """``text`` with the documented address replaced by the running service's."""
        if not _SERVICE.search(text):
            return text
        if self.address is None:
            from tests.api.test_server import serve

            url, _ = self._stack.enter_context(serve(self._store))
            self.address = url.removeprefix("http://")
        return _SERVICE.sub(self.address, text)

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("docs-service") / "store")
    yield running
    running.close()


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVREDUCE_") and k not in ("COLUMNS", "LINES")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _scratch(tmp_path: Path) -> Path:
    for name in ("ir_samples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def _run_console(block: Block, cwd: Path, service: Service) -> list[str]:
    """The block's commands in one bash, in order (so ``echo $?`` sees the command before it)."""
    pairs = list(commands(block))
    mark = "@@docs-example-output@@"
    keep = f"status=$?; printf '%s\\n' '{mark}'; (exit $status)\n"  # the mark leaves $? as the command set it
    script = "exec 2>&1\n" + "".join(f"{keep}{service(c)}\n" for c, _ in pairs)
    proc = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=_environment(), stdout=subprocess.PIPE, text=True, timeout=300
    )
    outputs = re.split(rf"\n?{re.escape(mark)}\n", proc.stdout)[1:]
    assert len(outputs) == len(pairs), f"{block.where}: the commands printed\n{proc.stdout}"
    failures = []
    for (command, want), got in zip(pairs, outputs, strict=True):
        if service.address:
            got = got.replace(service.address, "localhost:8000")
        if not _matches(want, got):
            failures.append(f"{block.where}: $ {command}\n--- shown:\n{want}\n--- printed:\n{got}")
    return failures


def _run_python(block: Block, scope: dict[str, object], service: Service) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(service(block.text), block.where, "exec"), scope)
    return [f"{block.where}: a python block printed (use pycon to show output):\n{out.getvalue()}"] * bool(
        out.getvalue()
    )


def _run_pycon(block: Block, scope: dict[str, object], service: Service) -> list[str]:
    test = doctest.DocTestParser().get_doctest(service(block.text), scope, block.where, block.page, block.line)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.write, clear_globs=False)
    scope.update(test.globs)  # doctest runs on a copy: what it defined is for the page's next blocks
    text = report.getvalue()
    if service.address:
        text = text.replace(service.address, "localhost:8000")
    return [f"{block.where}:\n{text}"] * bool(runner.failures)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_examples_print_what_they_show(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: Service
) -> None:
    if shutil.which("curl") is None and any("curl " in b.text for b in blocks(page) if b.language == "console"):
        pytest.skip(f"{page.name} shows curl, which is not installed (.ci/run installs it)")
    cwd = _scratch(tmp_path)
    monkeypatch.chdir(cwd)
    scope: dict[str, object] = {"__name__": "__docs__"}
    failures: list[str] = []
    for block in blocks(page):
        if block.language == "console":
            failures += _run_console(block, cwd, service)
        elif block.language == "python":
            failures += _run_python(block, scope, service)
        elif block.language == "pycon":
            failures += _run_pycon(block, scope, service)
    assert not failures, "\n\n".join(failures)


def test_every_block_is_run_or_listed() -> None:
    """A block is run, or data, or a ``sh`` block listed with its reason in NOT_RUN; nothing else."""
    shown = set()
    for page in PAGES:
        for block in blocks(page):
            assert block.language in RUN | DATA | {"sh"}, f"{block.where}: fence language {block.language!r}"
            if block.language in DATA:
                prompts = [x for x in block.text.splitlines() if x.startswith(("$ ", ">>> "))]
                assert not prompts, f"{block.where}: a {block.language} block with commands: fence it console or pycon"
            if block.language == "sh":
                shown.add((block.page, _first_command(block)))
    assert shown == set(NOT_RUN), {"not listed": shown - set(NOT_RUN), "listed, not there": set(NOT_RUN) - shown}
    assert all(NOT_RUN.values())


def test_ci_runs_the_readme_test_command() -> None:
    """The README's second command is the one ``.ci/run`` runs, verbatim."""
    readme = [b for b in blocks(ROOT / "README.md") if b.language == "sh"]
    test_command = readme[1].text.strip()
    ci = (ROOT / ".ci" / "run").read_text().rstrip().splitlines()
    assert ci[-1] == test_command


def test_the_readme_is_short_and_starts_with_its_two_commands() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) <= 200
    first = blocks(readme)[:2]
    assert [b.language for b in first] == ["sh", "sh"]
    assert "ovreduce check ir_samples/" in first[0].text and "pytest" in first[1].text


_WORK_ITEMS = re.compile(r"\bissues? #?\d|(?<![&\w])#\d{1,2}\b|\bfirst branch\b", re.IGNORECASE)


def test_no_text_speaks_of_how_the_work_was_organised() -> None:
    """Pages, comments and messages speak of the tool, not of issue numbers or branches (the CHANGELOG may)."""
    paths = [*PAGES, *(p for d in ("ovreduce", "api", "tests", "bench") for p in (ROOT / d).rglob("*.py"))]
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in paths
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if _WORK_ITEMS.search(line) and p != Path(__file__)
    ]
    assert not found, "\n".join(found)


def test_the_convention_catches_a_wrong_output(tmp_path: Path) -> None:
    """The machinery itself: continuation lines, ``...`` across lines, ``echo $?``, and a mismatch reported."""
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n$ printf 'a\\nb\\nc\\n'; exit_with() { return $1; }; \\\n  exit_with 3\n"
        "a\n...\nc\n$ echo $?\n3\n$ echo wrong\nright\n```\n"
    )
    [block] = blocks_of(page, tmp_path)
    assert next(c for c, _ in commands(block)).endswith("\n  exit_with 3")
    failures = _run_console(block, tmp_path, Service(tmp_path / "store"))
    assert len(failures) == 1 and "$ echo wrong" in failures[0] and "right" in failures[0]


def test_the_container_examples_of_another_name_show_what_they_claim() -> None:
    """service.md showed that a container answers another name with ``curl -H 'Host: NAME' .../healthz``, which
    answers any Host, set or not: it proves nothing. The Dockerfile's example listed the name without ``localhost``,
    after which every ``curl localhost:8000`` of the docs is 400. A check asks a route held to the list, and an
    example that lists names keeps ``localhost``."""
    service = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    checks = re.findall(r"curl -H 'Host: [^']+' \S+?:\d+(/\S*)", service)
    assert checks, "service.md shows no request by another name"
    for path in checks:
        assert path not in ("/healthz", "/readyz", "/v2/health/live", "/v2/health/ready"), path
    for text in (service, (ROOT / "Dockerfile").read_text(encoding="utf-8")):
        for hosts in re.findall(r"OVREDUCE_ALLOWED_HOSTS=(\S+)", text):
            if "example.com" in hosts:
                assert "localhost" in hosts.split(","), hosts
