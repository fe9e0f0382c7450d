"""``ovreduce serve`` without a server: the settings it builds from the environment and its flags, its errors.

The real process on a port is tested in tests/api/test_server.py.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ovreduce.cli import main
from ovreduce.cli import serve as cli_serve


class _ListenError(Exception):
    pass


@pytest.fixture(autouse=True)
def _keep_signal_handlers() -> Iterator[None]:
    """serve installs SIGTERM/SIGINT handlers (a requested stop exits 0): not for pytest's own process."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """The calls the CLI makes to the API's ``serve`` (which does nothing here)."""
    from api.config import Settings

    calls: list[tuple[Any, dict[str, Any]]] = []

    def fake_serve(settings: Settings, **options: Any) -> None:
        calls.append((settings, options))

    monkeypatch.setattr(cli_serve, "_server", lambda: (Settings, fake_serve, _ListenError))
    for name in list(os.environ):
        if name.startswith("OVREDUCE_"):
            monkeypatch.delenv(name)
    return calls


def test_flags_override_the_environment_and_nothing_is_written_to_it(
    served: list[tuple[Any, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OVREDUCE_PORT", "9000")
    monkeypatch.setenv("OVREDUCE_MAX_LAYERS", "7")
    monkeypatch.setenv("OVREDUCE_CONCURRENCY", "8")
    before = dict(os.environ)
    argv = ["serve", "--host", "0.0.0.0", "--port", "8123", "--store", str(tmp_path / "s"), "--workers", "2"]
    assert main(argv) == 0
    assert dict(os.environ) == before
    [(settings, options)] = served
    assert (settings.host, settings.port, settings.workers, settings.store) == ("0.0.0.0", 8123, 2, tmp_path / "s")
    assert (settings.max_layers, settings.concurrency) == (7, 8)  # the environment's, the flags do not name them
    assert options == {"workers": 2, "log_level": "info", "access_log": True, "graceful_timeout": 10}


def test_log_and_access_flags(served: list[tuple[Any, dict[str, Any]]]) -> None:
    assert main(["serve", "--workers", "3", "--log-level", "debug", "--no-access-log", "--graceful-timeout", "3"]) == 0
    [(settings, options)] = served
    assert settings.workers == 3
    assert options == {"workers": 3, "log_level": "debug", "access_log": False, "graceful_timeout": 3}


def test_the_environment_gives_the_defaults(
    served: list[tuple[Any, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OVREDUCE_HOST", "127.0.0.2")
    monkeypatch.setenv("OVREDUCE_LOG_LEVEL", "WARNING")  # in any case, as uvicorn takes it
    assert main(["serve"]) == 0
    [(settings, options)] = served
    assert (settings.host, settings.port, settings.workers) == ("127.0.0.2", 8000, 1)
    assert options["log_level"] == "warning"


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (
            ["serve"],
            {"OVREDUCE_WORKERS": "1000"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_WORKERS: Input should be less than or "
            "equal to 256 [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_WORKERS": "0"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_WORKERS: Input should be greater than or "
            "equal to 1 [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_PORT": "x"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_PORT: Input should be a valid integer, "
            "unable to parse string as an integer [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_EXTENSIONS": "openvino_tokenizers, missing/libcustom.so"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_EXTENSIONS: "
            "missing/libcustom.so: no such file; expected an OpenVINO extension library (a .so, .dll or .dylib file) "
            "or the name of a Python module that provides one, such as openvino_tokenizers [usage]\n",
        ),
        (  # OpenVINO's wait takes an int32 of milliseconds: every audit failed with its TypeError
            ["serve"],
            {"OVREDUCE_RUN_TIMEOUT_S": "3000000"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_RUN_TIMEOUT_S: Input should be less than "
            "or equal to 2147483 [usage]\n",
        ),
        (  # accepted, it made every upload a 500 (read(limit + 1) overflows) or killed every worker (setrlimit)
            ["serve"],
            {"OVREDUCE_MAX_UPLOAD_BYTES": str(2**63 - 1)},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_MAX_UPLOAD_BYTES: Input should be less "
            "than or equal to 4611686018427387904 [usage]\n",
        ),
        (  # uvicorn's logging refused it: exit 3, "internal error"
            ["serve"],
            {"OVREDUCE_LOG_LEVEL": "verbose"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_LOG_LEVEL: Input should be 'critical', "
            "'error', 'warning', 'info', 'debug' or 'trace' [usage]\n",
        ),
        (  # the working directory, whose tmp/ the store's start-up tidied: files in it were deleted
            ["serve"],
            {"OVREDUCE_STORE": ""},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_STORE: an empty path names no "
            "folder; give the store's folder [usage]\n",
        ),
        (  # a URL matched no Host: every request by the name it meant was 400 "add it to OVREDUCE_ALLOWED_HOSTS"
            ["serve"],
            {"OVREDUCE_ALLOWED_HOSTS": "localhost,http://ovreduce.example.com"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_ALLOWED_HOSTS: "
            "'http://ovreduce.example.com' can match no Host: give the name alone, without a scheme or path [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_ALLOWED_HOSTS": "::1"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_ALLOWED_HOSTS: '::1' can match no Host: "
            "write an IPv6 address in brackets, e.g. [::1] [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_ALLOWED_HOSTS": "ovreduce.example.com:99999"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_ALLOWED_HOSTS: "
            "'ovreduce.example.com:99999' can match no Host: give a name or address, name:port (a port up to 65535), "
            "[IPv6 address], *.suffix or * [usage]\n",
        ),
        (  # set but empty (a compose file's unset ${HOSTS}): it started, answering 400 to every name, its health green
            ["serve"],
            {"OVREDUCE_ALLOWED_HOSTS": " , "},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_ALLOWED_HOSTS: an empty list allows no "
            "Host; give names, e.g. localhost,127.0.0.1,[::1] (the default) [usage]\n",
        ),
        (  # every interface
            ["serve"],
            {"OVREDUCE_HOST": ""},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_HOST: '' is not a host name "
            "or address; give one, e.g. 127.0.0.1 (0.0.0.0: every interface) [usage]\n",
        ),
        (
            ["serve", "--host", "\xff"],
            {},
            "ovreduce serve: invalid option: --host: '\xff' is not a host name or address; give one, "
            "e.g. 127.0.0.1 (0.0.0.0: every interface) [usage]\n",
        ),
        (  # no deadline at all
            ["serve"],
            {"OVREDUCE_HEADER_TIMEOUT_S": "inf"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_HEADER_TIMEOUT_S: Input should be a "
            "finite number [usage]\n",
        ),
        (
            ["serve"],
            {"OVREDUCE_RUN_TIMEOUT_S": "nan"},
            "ovreduce serve: the environment has invalid settings: OVREDUCE_RUN_TIMEOUT_S: Input should be a finite "
            "number [usage]\n",
        ),
    ],
    ids=["workers-env-high", "workers-env", "invalid-env", "extensions-env", "run-timeout-env", "bytes-env-huge",
         "log-level-env", "store-env-empty", "hosts-url", "hosts-v6", "hosts-port", "hosts-empty", "host-env-empty",
         "host-flag-not-ascii", "header-timeout-inf", "run-timeout-nan"],
)  # fmt: skip
def test_usage_errors(
    served: list[tuple[Any, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    assert capsys.readouterr().err == message
    assert served == []


def test_an_extension_openvino_refuses_is_a_usage_error(
    served: list[tuple[Any, dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """A file that is there but is no extension library: said before the server starts, not as the application's
    startup failure (a traceback in the log, then exit 3)."""
    (tmp_path / "libnot.so").write_text("not a library")
    monkeypatch.setenv("OVREDUCE_EXTENSIONS", str(tmp_path / "libnot.so"))
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ovreduce serve: the environment has invalid settings: OVREDUCE_EXTENSIONS: "), err
    assert "could not load it as an extension" in err and err.endswith("[usage]\n"), err
    assert served == []


@pytest.mark.parametrize(("flags", "message"), [
    (["--workers", "0"], "--workers: '0' is not a number of worker processes: an integer from 1 to 256"),
    (["--workers", "257"], "--workers: '257' is not a number of worker processes: an integer from 1 to 256"),
    (["--graceful-timeout", "-1"], "--graceful-timeout: '-1' is not a number of seconds: an integer from 0 to"),
    (["--store", ""], "--store: an empty path names no file"),
])  # fmt: skip
def test_flags_out_of_range_are_usage_errors(
    served: list[tuple[Any, dict[str, Any]]], capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["serve", *flags])
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert served == []


def test_a_store_behind_a_loop_of_links_is_a_usage_error(
    served: list[tuple[Any, dict[str, Any]]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert main(["serve", "--store", str(tmp_path / "loop" / "store")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ovreduce serve: --store '{tmp_path / 'loop' / 'store'}' cannot be resolved: "), err
    assert served == []


def test_more_workers_than_the_bound_start_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """uvicorn would start every one at once: 10^12 of them filled this machine with processes. The range is said
    in one form, in the message and the help, and the parser's bound is the server's."""
    from api.config import MAX_WORKERS, Settings
    from api.server import ServeError, serve
    from ovreduce.cli.parser import MAX_WORKERS as PARSER_BOUND

    assert PARSER_BOUND == MAX_WORKERS
    with pytest.raises(SystemExit) as info:
        main(["serve", "--port", "0", "--workers", "257"])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "ovreduce serve: error: argument --workers: '257' is not a number of worker processes: an integer from 1 to "
        "256\n"
    )
    with pytest.raises(ServeError, match="'257' is not a number of worker processes: an integer from 1 to 256"):
        serve(Settings(), workers=257)
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "worker processes, 1 to 256" in " ".join(capsys.readouterr().out.split())


def test_a_listen_failure_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from api.config import Settings

    def fake_serve(settings: Settings, **options: Any) -> None:
        raise _ListenError("cannot listen on 127.0.0.1:1: Permission denied")

    monkeypatch.setattr(cli_serve, "_server", lambda: (Settings, fake_serve, _ListenError))
    assert main(["serve", "--workers", "2"]) == 2
    assert capsys.readouterr().err == "ovreduce serve: cannot listen on 127.0.0.1:1: Permission denied [usage]\n"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_asked_for_by_a_signal_is_exit_0(tmp_path: Path, sig: signal.Signals) -> None:
    """The ``ovreduce serve`` program, stopped as a supervisor or Ctrl-C stops it, ends its graceful shutdown with
    status 0 (what systemd and other supervisors count as a clean stop), not the 130/143 of the other commands."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVREDUCE_")}
    argv = [sys.executable, "-m", "ovreduce.cli", "serve", "--port", str(port), "--store", str(tmp_path / "store"),
            "--no-access-log", "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert b"interrupted" not in err and b"Traceback" not in err, err


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs CPU affinities and two CPUs to choose one of")  # fmt: skip
def test_the_default_concurrency_is_the_cpus_the_service_may_run_on() -> None:
    """Under ``taskset -c 0``, ``docker run --cpuset-cpus=0`` or a pod's exclusive CPUs, the service ran as many jobs at
    once as the host has CPUs, all on the one it was given (``check -j``'s default already counted those it may use).
    Its default is the CPUs it may run on."""
    import subprocess
    import sys

    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
            "from api.config import Settings; print(Settings().concurrency)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OVREDUCE_CONCURRENCY"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == "1\n"
