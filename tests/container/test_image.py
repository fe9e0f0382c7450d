"""The Dockerfile, built and run for real without a Docker daemon or Docker Hub.

1. A debootstrapped Debian bookworm (python3 3.11, venv, pip, CA certificates) stands in for
   ``python:3.11-slim`` and is committed under that name into a private buildah storage.
2. ``buildah bud`` builds the repository's unchanged Dockerfile with ``--pull=never``; the host's CA bundle is
   bind-mounted read-only into the RUN steps (and named by the ``PIP_CERT`` build argument) so that pip gets
   through a TLS-intercepting proxy, without the bundle ending up in the image.
3. The image's own CMD runs as the image's user on the host network; the image's own HEALTHCHECK command
   runs in a second container until it passes; then ``/healthz`` and ``POST /v1/check`` are called from
   the host, and ``ovreduce check`` runs in the image on a bind-mounted sample.

Needs root, ``buildah`` and ``debootstrap`` (``apt-get install buildah debootstrap``): without them the
tests skip, unless ``OVREDUCE_REQUIRE_CONTAINER=1`` (CI), where they fail. Everything created -- containers,
images, the storage, the server -- is removed at the end; only the bootstrapped base stays, cached in
``$XDG_CACHE_HOME/ovreduce-test`` (or ``$OVREDUCE_CONTAINER_CACHE``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from .buildah import Buildah, CommandError, base_tarball, commit_base, global_cache_restored

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "ir_samples"
SAMPLE = "spec_examples"
IMAGE = "localhost/ovreduce:container-test"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
IMAGE_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # where Debian-based images keep theirs
PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
HEALTH_DEADLINE_S = 90.0
COMPILER = re.compile(r"^(?:[\w.-]+-)?(?:gcc|cc|g\+\+|c\+\+|clang|clang\+\+|tcc)(?:-[\d.]+)?$")
PEM = re.compile(rb"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", re.S)


# -- prerequisites ---------------------------------------------------------------------------------------
def _required() -> bool:
    return os.environ.get("OVREDUCE_REQUIRE_CONTAINER", "") not in ("", "0")


def _which(tool: str) -> str | None:
    return shutil.which(tool, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))


def _require_tools() -> None:
    missing = []
    if os.geteuid() != 0:
        missing.append("root (buildah --isolation chroot and debootstrap need it)")
    missing += [f"{tool} (apt-get install {tool})" for tool in ("buildah", "debootstrap") if _which(tool) is None]
    if missing:
        message = "cannot build the image here: missing " + ", ".join(missing)
        if _required():
            pytest.fail(f"{message}; OVREDUCE_REQUIRE_CONTAINER is set, so this is a failure")
        pytest.skip(f"{message}; set OVREDUCE_REQUIRE_CONTAINER=1 to make this a failure")


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is fine
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def _group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # after "pid (comm)": state ppid pgrp ...; comm may hold spaces, so split after the last ")"
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid:
                members.append(int(stat.parent.name))
    return members


# -- fixtures ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Image:
    name: str
    config: dict[str, Any]  # the Docker image config: User, Cmd, Healthcheck, Volumes, ExposedPorts, Env

    @property
    def user(self) -> str:
        return str(self.config.get("User") or "")

    @property
    def command(self) -> list[str]:
        return [*(self.config.get("Entrypoint") or []), *(self.config.get("Cmd") or [])]

    @property
    def port(self) -> int:
        ports = list(self.config.get("ExposedPorts") or {})
        assert ports, f"{self.name}: no EXPOSE"
        return int(ports[0].split("/")[0])

    @property
    def env(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.config.get("Env") or [])

    def healthcheck_argv(self) -> list[str]:
        test = list((self.config.get("Healthcheck") or {}).get("Test") or [])
        assert test, f"{self.name}: no HEALTHCHECK in the image config"
        if test[0] == "CMD":
            return test[1:]
        if test[0] == "CMD-SHELL":
            return ["/bin/sh", "-c", test[1]]
        raise AssertionError(f"{self.name}: HEALTHCHECK test {test!r} is neither CMD nor CMD-SHELL")


@pytest.fixture(scope="module")
def buildah() -> Iterator[Buildah]:
    """A private buildah storage on disk (vfs keeps whole copies of each layer: not for a tmpfs /tmp)."""
    _require_tools()
    parent = Path(os.environ.get("OVREDUCE_CONTAINER_TMP", "/var/tmp"))
    with global_cache_restored():
        session = Buildah(Path(tempfile.mkdtemp(prefix="ovreduce-buildah-", dir=parent)))
        try:
            yield session
        finally:
            session.cleanup()


@pytest.fixture(scope="module")
def image(buildah: Buildah) -> Image:
    """The repository's Dockerfile, built on the stand-in base."""
    commit_base(buildah, base_tarball())
    args = ["bud", "--isolation", "chroot", "--network", "host", "--pull=never"]
    # Docker's format: OCI image configs have no HEALTHCHECK, and buildah drops it from them.
    args += ["--format", "docker", "--layers=false", "--tag", IMAGE, "--file", str(REPO / "Dockerfile")]
    if HOST_CA_BUNDLE.is_file():
        args += ["--volume", f"{HOST_CA_BUNDLE}:{IMAGE_CA_BUNDLE}:ro", "--build-arg", f"PIP_CERT={IMAGE_CA_BUNDLE}"]
    args += [f"--build-arg={name}={os.environ[name]}" for name in PROXY_VARIABLES if os.environ.get(name)]
    buildah(*args, str(REPO), timeout=1800)
    info = buildah.inspect_image(IMAGE)
    config = (info.get("Docker") or {}).get("config") or {}
    assert config, f"{IMAGE}: buildah inspect shows no Docker config: {sorted(info)}"
    return Image(IMAGE, config)


@pytest.fixture(scope="module")
def container(buildah: Buildah, image: Image) -> str:
    """A container of the image for one-off commands (health check, CLI) and for reading its files."""
    return buildah.from_image(image.name)


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-8000:] if self.log.exists() else ""


def _start_server(buildah: Buildah, image: Image, port: int, env: dict[str, str], name: str) -> Server:
    """The image's own CMD, as the image's user, on the host network, with ``env`` added (``--env``)."""
    if _port_in_use(port):
        pytest.fail(
            f"port {port} is already in use on this machine. The image's CMD binds {port} on the host network "
            f"(buildah has no port mapping) and cannot be moved; stop whatever listens there (ss -ltnp)."
        )
    log = buildah.workdir / f"{name}.log"
    ctr = buildah.from_image(image.name)
    options = [arg for key, value in env.items() for arg in ("--env", f"{key}={value}")]
    proc = buildah.popen(
        "run", "--isolation", "chroot", "--network", "host", "--user", image.user, *options, ctr, "--",
        *image.command, log=log,
    )  # fmt: skip
    return Server(f"http://127.0.0.1:{port}", proc, log)


def _stop_server(running: Server, port: int) -> None:
    proc = running.process
    with_log = f"\n--- server output ---\n{running.output()}"
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)  # buildah, its chroot runtime and uvicorn share this process group
        except ProcessLookupError:
            break
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            continue
        break
    proc.wait(10)
    for pid in _group_members(proc.pid):  # a straggler that outlived buildah: only ours, by pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _port_in_use(port) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _port_in_use(port), f"port {port} still in use after stopping the server{with_log}"
    print(with_log)


@pytest.fixture(scope="module")
def server(buildah: Buildah, image: Image) -> Iterator[Server]:
    """The image's own CMD, as the image's user, on the host network."""
    running = _start_server(buildah, image, image.port, {}, "server")
    try:
        yield running
    finally:
        _stop_server(running, image.port)


# -- the image's metadata --------------------------------------------------------------------------------
def test_image_runs_as_a_non_root_user(image: Image) -> None:
    user = image.user.split(":")[0]
    assert user not in ("", "0", "root"), f"USER is {image.user!r}: the image would run as root"


def test_image_declares_the_store_volume_and_the_port(image: Image) -> None:
    assert "/data" in (image.config.get("Volumes") or {}), f"VOLUME: {image.config.get('Volumes')}"
    assert "8000/tcp" in (image.config.get("ExposedPorts") or {}), f"EXPOSE: {image.config.get('ExposedPorts')}"
    store = image.env.get("OVREDUCE_STORE", "")
    assert store == "/data" or store.startswith("/data/"), f"OVREDUCE_STORE={store!r} is not on the /data volume"


def test_image_command_is_ovreduce_serve_and_a_python_healthcheck_on_its_port(image: Image) -> None:
    """ovreduce serve reads every limit (header timeout, requests in flight) and the port from OVREDUCE_*."""
    command = image.command
    assert command == ["ovreduce", "serve"], f"CMD/ENTRYPOINT: {command}"
    assert image.env.get("OVREDUCE_HOST") == "0.0.0.0" and image.env.get("OVREDUCE_PORT") == str(image.port)
    health = image.healthcheck_argv()
    assert Path(health[0]).name.startswith("python"), f"HEALTHCHECK should use Python (no curl in slim): {health}"
    assert "OVREDUCE_PORT" in " ".join(health), f"HEALTHCHECK should ask the configured port: {health}"


# -- the image's file system -----------------------------------------------------------------------------
def _certificates(data: bytes) -> set[bytes]:
    return {b"".join(body.split()) for body in PEM.findall(data)}


def test_image_has_no_compilers_no_pip_cache_and_no_baked_ca(buildah: Buildah, image: Image, container: str) -> None:
    base_container = buildah.from_image("docker.io/library/python:3.11-slim")
    with buildah.mounted(container) as root, buildah.mounted(base_container) as base_root:
        compilers, pip_caches, cert_files = [], [], []
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            if here.name == ".cache" and "pip" in dirnames:
                pip_caches.append(here / "pip")
            if here.name in ("bin", "sbin"):
                compilers += [here / name for name in filenames if COMPILER.match(name)]
            # not symlinks: absolute ones would resolve on the host (e.g. usr/lib/ssl/cert.pem)
            cert_files += [
                here / name
                for name in filenames
                if name.endswith((".pem", ".crt", ".cer")) and not (here / name).is_symlink()
            ]
        assert not compilers, f"compilers left in the final image: {compilers}"
        assert not pip_caches, f"pip caches left in the final image: {pip_caches}"
        assert not (root / "src").exists(), "the build stage's /src leaked into the final image"
        assert (root / "opt/venv/bin/ovreduce").is_file(), "no /opt/venv/bin/ovreduce in the final image"

        uid = int(image.user.split(":")[0]) if image.user.split(":")[0].isdigit() else None
        store = root / image.env.get("OVREDUCE_STORE", "/data/store").lstrip("/")
        assert store.is_dir(), f"{store}: the store directory does not exist in the image"
        if uid is not None:
            assert store.stat().st_uid == uid, f"{store} is owned by uid {store.stat().st_uid}, not the image's {uid}"

        image_bundle = root / IMAGE_CA_BUNDLE.lstrip("/")
        base_bundle = base_root / IMAGE_CA_BUNDLE.lstrip("/")
        assert image_bundle.read_bytes() == base_bundle.read_bytes(), f"{IMAGE_CA_BUNDLE} differs from the base's"
        if HOST_CA_BUNDLE.is_file():
            # the host's certificates that the base lacks: the intercepting proxy's CA, if any
            proxy_cas = _certificates(HOST_CA_BUNDLE.read_bytes()) - _certificates(base_bundle.read_bytes())
            baked = [path for path in cert_files if proxy_cas & _certificates(path.read_bytes())]
            assert not baked, f"the build host's CA certificates were baked into the image: {baked}"


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_image_installs_the_pinned_versions(buildah: Buildah, image: Image, container: str) -> None:
    """pip install -c constraints.txt: every distribution in the image that constraints.txt pins is at its pin."""
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[_normalised(name)] = version.strip()
    with buildah.mounted(container) as root:
        installed = {}
        for meta in root.glob("opt/venv/lib/python3*/site-packages/*.dist-info/METADATA"):
            headers = dict(
                line.split(": ", 1) for line in meta.read_text(errors="replace").split("\n\n", 1)[0].splitlines()
                if ": " in line
            )  # fmt: skip
            installed[_normalised(headers["Name"])] = headers["Version"]
    assert {"fastapi", "openvino", "prometheus-client", "uvicorn"} <= set(installed), sorted(installed)
    off = {name: (version, pins[name]) for name, version in installed.items() if name in pins and version != pins[name]}
    assert not off, f"installed (version, pinned) that differ: {off}"
    unpinned = sorted(set(installed) - set(pins) - {"ovreduce", "pip", "setuptools", "wheel"})
    assert not unpinned, f"installed without a pin in constraints.txt: {unpinned}"


# -- running it ------------------------------------------------------------------------------------------
def test_cli_checks_a_sample_in_the_image(buildah: Buildah, image: Image, container: str) -> None:
    assert (SAMPLES / f"{SAMPLE}.xml").is_file(), f"{SAMPLES}: missing; run python ir_samples/generate.py"
    result = buildah(
        "run", "--isolation", "chroot", "--network", "host", "--user", image.user,
        "--volume", f"{SAMPLES}:/models:ro", container,
        "--", "ovreduce", "check", f"/models/{SAMPLE}.xml",
        timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"ovreduce check in the image: exit {result.returncode}\n{result.stdout}"
    assert f"{SAMPLE}.xml" in result.stdout, result.stdout


def _wait_healthy(
    buildah: Buildah, image: Image, container: str, server: Server, env: dict[str, str] | None = None
) -> None:
    argv = image.healthcheck_argv()
    timeout_s = (image.config.get("Healthcheck") or {}).get("Timeout", 0) / 1e9 or 30
    deadline = time.monotonic() + HEALTH_DEADLINE_S
    while True:
        try:
            last = buildah(
                "run", "--isolation", "chroot", "--network", "host", "--user", image.user,
                *[arg for key, value in (env or {}).items() for arg in ("--env", f"{key}={value}")],
                container, "--", *argv,
                timeout=timeout_s + 30, check=False,
            )  # fmt: skip
        except CommandError as exc:
            last_output = str(exc)
        else:
            if last.returncode == 0:
                return
            last_output = f"exit {last.returncode}\n{last.stdout}"
        if server.process.poll() is not None:
            pytest.fail(f"the image's CMD {image.command} exited ({server.process.returncode}):\n{server.output()}")
        if time.monotonic() > deadline:
            pytest.fail(
                f"the image's HEALTHCHECK {argv} did not pass within {HEALTH_DEADLINE_S:.0f} s; last attempt: "
                f"{last_output}\n--- server output ---\n{server.output()}"
            )
        time.sleep(2)


def test_server_passes_its_healthcheck_and_serves_the_api(
    buildah: Buildah, image: Image, container: str, server: Server
) -> None:
    _wait_healthy(buildah, image, container, server)
    with httpx.Client(base_url=server.url, trust_env=False, timeout=120) as client:
        health = client.get("/healthz")
        assert health.status_code == 200, health.text
        assert health.headers["content-type"].startswith("application/json"), health.headers
        files = {
            "xml": (f"{SAMPLE}.xml", (SAMPLES / f"{SAMPLE}.xml").read_bytes(), "application/xml"),
            "bin": (f"{SAMPLE}.bin", (SAMPLES / f"{SAMPLE}.bin").read_bytes(), "application/octet-stream"),
        }
        checked = client.post("/v1/check", files=files)
        assert checked.status_code == 200, checked.text
        assert checked.json()["schema"] == "ovreduce.check/v1", checked.text
        metrics = client.get("/metrics")
        assert metrics.status_code == 200, metrics.text
        assert 'ovreduce_http_requests_total{method="POST",route="/v1/check",status="200"} 1.0' in metrics.text
        # the service answers only the names it is told (docs/service.md: docker run -e OVREDUCE_ALLOWED_HOSTS=...)
        refused = client.get("/metrics", headers={"host": "ovreduce.example.com"})
        assert refused.status_code == 400 and refused.json()["code"] == "request.host", refused.text
        if (REPO / "api/static/index.html").is_file():  # the page: package data that must reach the image
            page = client.get("/static/index.html")
            assert page.status_code == 200, page.text
            assert page.headers["content-type"].startswith("text/html"), page.headers


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_healthcheck_follows_ovreduce_port(buildah: Buildah, image: Image, container: str) -> None:
    """docker run -e OVREDUCE_PORT=P (docs/service.md): the server listens on P and the image's HEALTHCHECK, run
    with the container's environment, asks P."""
    port = _free_port()
    env = {"OVREDUCE_PORT": str(port)}
    running = _start_server(buildah, image, port, env, "server-port")
    try:
        _wait_healthy(buildah, image, container, running, env)
        with httpx.Client(base_url=running.url, trust_env=False, timeout=60) as client:
            assert client.get("/healthz").json() == {"status": "ok"}
        # and it asks that port, not 8000 (where the module's other server may answer): a port nothing
        # listens on fails it
        idle = buildah(
            "run", "--isolation", "chroot", "--network", "host", "--user", image.user,
            "--env", f"OVREDUCE_PORT={_free_port()}", container, "--", *image.healthcheck_argv(),
            timeout=120, check=False,
        )  # fmt: skip
        assert idle.returncode != 0, idle.stdout
    finally:
        _stop_server(running, port)
