"""Build and run OCI images without a Docker daemon or a registry: buildah in a private storage root.

``Buildah``      one private containers/storage (graph root, run root, temp dir) under a temp folder; every
                 call passes it, so the machine's global storage is never read or written.
``base_tarball`` a debootstrapped Debian root file system standing in for ``python:3.11-slim`` (bookworm's
                 python3 is 3.11), cached between runs outside the repository.
``commit_base``  that tarball committed into the private storage under the real base image's name.
``unmount_below``/``remove_tree``  cleanup that never descends into a mount (debootstrap and buildah
                 bind-mount /proc, /dev, ... into their root file systems).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BASE_IMAGE",
    "BASE_PACKAGES",
    "SUITE",
    "Buildah",
    "CommandError",
    "base_tarball",
    "cache_dir",
    "commit_base",
    "debian_mirror",
    "global_cache_restored",
    "remove_tree",
    "run",
    "unmount_below",
]

SUITE = "bookworm"  # its python3 is 3.11, like the real base
BASE_PACKAGES = ("python3", "python3-venv", "python3-pip", "ca-certificates")
# The name a Dockerfile's `FROM python:3.11-slim` resolves to; --pull=never makes the build use this copy.
BASE_IMAGE = "docker.io/library/python:3.11-slim"
# What python:3.11-slim sets, so that the stand-in behaves the same in RUN steps.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}
_RECIPE = 1  # bump when the post-processing of the root file system changes: invalidates the cache
_OUTPUT_TAIL = 12_000


class CommandError(AssertionError):
    """A command failed or timed out; the message carries the command line and the tail of its output."""


def _tail(text: str | bytes | None) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return text if len(text) <= _OUTPUT_TAIL else "...\n" + text[-_OUTPUT_TAIL:]


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv``, stdout and stderr together; raise ``CommandError`` with the output on failure."""
    try:
        proc = subprocess.run(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            timeout=timeout,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CommandError(f"timed out after {timeout:.0f} s: {' '.join(argv)}\n{_tail(exc.output)}") from None
    if check and proc.returncode != 0:
        raise CommandError(f"exit status {proc.returncode}: {' '.join(argv)}\n{_tail(proc.stdout)}")
    return proc


# -- cleanup ----------------------------------------------------------------------------------------------
def _mount_points() -> list[Path]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        # field 5 is the mount point, with spaces and the like escaped as octal
        raw = line.split()[4]
        points.append(Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), raw)))
    return points


def unmount_below(root: Path) -> None:
    """Lazily unmount everything mounted at or below ``root``, deepest first."""
    root = root.resolve()
    below = [p for p in _mount_points() if p == root or root in p.parents]
    for point in sorted(below, key=lambda p: len(p.parts), reverse=True):
        subprocess.run(["umount", "--lazy", str(point)], check=False, capture_output=True, timeout=60)


def remove_tree(root: Path) -> None:
    """``rm -rf`` that first unmounts whatever is mounted inside, so that it never deletes through a mount."""
    if not root.exists():
        return
    unmount_below(root)
    leftover = [p for p in _mount_points() if p == root.resolve() or root.resolve() in p.parents]
    if leftover:
        raise CommandError(f"{root}: still mounted below it after umount: {leftover}; not removing it")
    shutil.rmtree(root)


# -- buildah in a private storage -----------------------------------------------------------------------
@dataclass
class Buildah:
    """buildah with its own graph root, run root and temp dir, all under ``workdir``."""

    workdir: Path
    driver: str = "vfs"  # works everywhere (nested containers, any backing file system); overlay may not
    executable: str = field(default_factory=lambda: shutil.which("buildah") or "buildah")

    def __post_init__(self) -> None:
        for sub in ("root", "runroot", "tmp"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
        # A storage.conf of our own, so that options from /etc/containers/storage.conf
        # (additional image stores, mount programs) cannot leak in.
        self.storage_conf.write_text(
            "[storage]\n"
            f'driver = "{self.driver}"\n'
            f'graphroot = "{self.workdir / "root"}"\n'
            f'runroot = "{self.workdir / "runroot"}"\n'
        )

    @property
    def storage_conf(self) -> Path:
        return self.workdir / "storage.conf"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["CONTAINERS_STORAGE_CONF"] = str(self.storage_conf)
        env["TMPDIR"] = str(self.workdir / "tmp")
        return env

    def argv(self, *args: str) -> list[str]:
        return [
            self.executable,
            "--root",
            str(self.workdir / "root"),
            "--runroot",
            str(self.workdir / "runroot"),
            "--storage-driver",
            self.driver,
            *args,
        ]

    def __call__(self, *args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(self.argv(*args), timeout=timeout, env=self.env, check=check)

    def popen(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        """Start buildah in the background, in a session of its own (stop it with ``os.killpg``)."""
        with log.open("wb") as out:
            return subprocess.Popen(
                self.argv(*args),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )

    def inspect_image(self, image: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self("inspect", "--type", "image", image).stdout)
        return data

    def from_image(self, image: str) -> str:
        return self("from", "--pull=never", image).stdout.strip().splitlines()[-1]

    @contextlib.contextmanager
    def mounted(self, container: str) -> Iterator[Path]:
        path = Path(self("mount", container).stdout.strip().splitlines()[-1])
        try:
            yield path
        finally:
            self("umount", container, check=False)

    def cleanup(self) -> None:
        """Remove every container and image in this storage, then the storage itself."""
        try:
            self("rm", "--all", check=False, timeout=300)
            self("rmi", "--all", "--force", check=False, timeout=300)
        finally:
            remove_tree(self.workdir)


@contextlib.contextmanager
def global_cache_restored() -> Iterator[None]:
    """Remove the blob-info cache that buildah, run as root, writes to /var/lib/containers/cache whatever
    its storage root, if it was not there before (containers/image has no option to move it)."""
    candidates = [Path("/var/lib/containers"), Path("/var/lib/containers/cache")]
    created = [path for path in candidates if not path.exists()]
    try:
        yield
    finally:
        if created:
            remove_tree(created[0])  # the outermost one that this run created


# -- the stand-in base image -----------------------------------------------------------------------------
def debian_mirror() -> str:
    """The Debian mirror apt uses on this machine for ``SUITE`` (``OVREDUCE_DEBIAN_MIRROR`` overrides)."""
    if override := os.environ.get("OVREDUCE_DEBIAN_MIRROR"):
        return override
    sources = Path("/etc/apt/sources.list.d")
    for path in sorted(sources.glob("*.sources")) if sources.is_dir() else []:
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.lstrip().startswith("#"):
                    fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and SUITE in fields.get("suites", "").split():
                return fields["uris"].split()[0]
    for path in [Path("/etc/apt/sources.list"), *sorted(sources.glob("*.list"))]:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = re.sub(r"\[[^]]*\]", "", line).split()  # drop `[signed-by=...]` options
            if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                return words[1]
    raise CommandError(
        f"no apt source for Debian {SUITE} in /etc/apt/sources.list{{,.d/}}; "
        "set OVREDUCE_DEBIAN_MIRROR to a Debian mirror, e.g. http://deb.debian.org/debian"
    )


def cache_dir() -> Path:
    """Where the bootstrapped base survives between runs: ``OVREDUCE_CONTAINER_CACHE`` or the XDG cache."""
    if override := os.environ.get("OVREDUCE_CONTAINER_CACHE"):
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "ovreduce-test"


def _architecture() -> str:
    return run(["dpkg", "--print-architecture"], timeout=30).stdout.strip()


def _finish_rootfs(rootfs: Path) -> None:
    """Make the debootstrapped tree look like python:3.11-slim where the Dockerfile could notice."""
    for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    local_bin = rootfs / "usr/local/bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    for name, target in (("python", "/usr/bin/python3"), ("pip", "/usr/bin/pip3")):
        link = local_bin / name
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    # apt's downloads and lists, and the device nodes debootstrap made (a container runtime provides /dev)
    for pattern in ("var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*", "dev/*"):
        for path in rootfs.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def base_tarball(*, timeout: float = 1200) -> Path:
    """The stand-in's root file system as a tar, bootstrapped once and cached by mirror, suite and packages."""
    mirror = debian_mirror()
    recipe = {
        "recipe": _RECIPE,
        "suite": SUITE,
        "variant": "minbase",
        "packages": sorted(BASE_PACKAGES),
        "mirror": mirror,
        "arch": _architecture(),
    }
    key = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"debian-{SUITE}-python3-{key}.tar"
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one bootstrap at a time; the others wait and reuse it
        if tarball.is_file():
            return tarball
        work = Path(tempfile.mkdtemp(prefix="bootstrap-", dir=cache))
        try:
            rootfs = work / "rootfs"
            run(
                [
                    shutil.which("debootstrap") or "/usr/sbin/debootstrap",
                    "--variant=minbase",
                    f"--include={','.join(BASE_PACKAGES)}",
                    SUITE,
                    str(rootfs),
                    mirror,
                ],
                timeout=timeout,
            )
            unmount_below(rootfs)
            _finish_rootfs(rootfs)
            partial = work / "rootfs.tar"
            run(["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-cf", str(partial), "."], timeout=600)
            (cache / "recipe.json").write_text(json.dumps(recipe, indent=1) + "\n")
            partial.replace(tarball)
        finally:
            remove_tree(work)
    return tarball


def commit_base(buildah: Buildah, tarball: Path) -> str:
    """Commit ``tarball`` into ``buildah``'s storage as ``BASE_IMAGE``; return the name."""
    container = buildah("from", "scratch").stdout.strip().splitlines()[-1]
    buildah("add", container, str(tarball), "/", timeout=600)
    config = ["config", "--cmd", '["python3"]']
    for name, value in BASE_ENV.items():
        config += ["--env", f"{name}={value}"]
    buildah(*config, container)
    buildah("commit", "--rm", container, BASE_IMAGE, timeout=600)
    return BASE_IMAGE
