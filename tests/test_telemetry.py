"""OpenVINO's telemetry stays off in every process ovreduce loads OpenVINO in (the commands, ``check``'s workers, the
service's workers) unless the user agreed to it: nothing is sent and no client id or usage count is written.

No request leaves the machine: a ``sitecustomize`` on the processes' path replaces urllib's ``urlopen`` (the one way
openvino-telemetry sends) by one that writes down the address and refuses. Each process runs in a fresh home folder,
where openvino-telemetry keeps its consent file, client id and usage count (``~/intel``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETTLE_S = 3.0  # openvino-telemetry sends from a process of its own, which may outlive the command by a moment


class _Sandbox:
    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "sent.log"
        hook = tmp_path / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(
            "import urllib.request\n"
            "def _urlopen(request, *args, **kwargs):\n"
            f"    with open({str(self.log)!r}, 'a') as log:\n"
            "        log.write(getattr(request, 'full_url', str(request)).split('?')[0] + '\\n')\n"
            "    raise OSError('no network in this test')\n"
            "urllib.request.urlopen = _urlopen\n",
            encoding="utf-8",
        )
        self.home = tmp_path / "home"
        self.home.mkdir()
        path = os.pathsep.join(p for p in (str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OVREDUCE_") and k not in ("CI",)}
        self.env |= {"HOME": str(self.home), "PYTHONPATH": path}
        for name in ("TF_BUILD", "JENKINS_URL"):  # (openvino-telemetry sends nothing where it sees a CI job)
            self.env.pop(name, None)

    def ovreduce(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ovreduce.cli", *args], env=self.env, capture_output=True, text=True, timeout=300
        )

    def sent(self) -> list[str]:
        time.sleep(SETTLE_S)
        return self.log.read_text(encoding="utf-8").split() if self.log.exists() else []

    def written(self) -> list[str]:
        return sorted(p.name for p in (self.home / "intel").glob("*")) if (self.home / "intel").exists() else []


@pytest.fixture
def sandbox(tmp_path: Path) -> _Sandbox:
    return _Sandbox(tmp_path)


def test_the_commands_and_check_workers_send_nothing(sandbox: _Sandbox) -> None:
    """``devices``, ``check --engine openvino`` with workers, ``run`` and ``conform`` (an ONNX model, whose front end
    reports its own events) each load OpenVINO; none sends anything or writes under the home folder."""
    commands = [
        ["devices"],
        ["check", "--engine", "openvino", "-j", "2", str(ROOT / "ir_samples")],
        ["run", str(ROOT / "ir_samples" / "rmsnorm.xml"), "--layer", "5", "--format", "json"],
        ["conform", str(ROOT / "tests" / "golden" / "models" / "several_reductions.onnx"), "--format", "json"],
    ]
    for args in commands:
        done = sandbox.ovreduce(*args)
        assert done.returncode in (0, 1), (args, done.stderr)
    assert sandbox.sent() == [], "OpenVINO's telemetry sent requests the user never agreed to"
    assert sandbox.written() == [], f"OpenVINO's telemetry wrote {sandbox.written()} in {sandbox.home / 'intel'}"


def test_the_service_workers_send_nothing(sandbox: _Sandbox, tmp_path: Path) -> None:
    """``ovreduce serve`` answering a request its workers run on OpenVINO sends nothing and writes nothing."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "ovreduce.cli", "serve", "--port", str(port), "--store", str(tmp_path / "store"),
            "--no-access-log", "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(argv, env=sandbox.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    opener = urllib.request.build_opener()  # (urllib here is this process's own, not the hooked one)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                with opener.open(f"http://127.0.0.1:{port}/v1/devices", timeout=60) as answer:
                    assert answer.status == 200
                    assert b"CPU" in answer.read()
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert sandbox.sent() == []
    assert sandbox.written() == []


@pytest.mark.parametrize("answer", ["1", "0"])
def test_the_users_answer_stands(sandbox: _Sandbox, answer: str) -> None:
    """Where the user answered OpenVINO's question (``opt_in_out --opt_in`` writes ``1`` in the consent file,
    ``--opt_out`` ``0``), OpenVINO does as they said: it sends (here: tries to) after a yes, nothing after a no."""
    (sandbox.home / "intel").mkdir()
    (sandbox.home / "intel" / "openvino_telemetry").write_text(answer, encoding="utf-8")
    assert sandbox.ovreduce("devices").returncode == 0
    sent = sandbox.sent()
    if answer == "1":
        assert sent and all(url.startswith("https://www.google-analytics.com/") for url in sent), sent
    else:
        assert sent == []
