"""The model store on disk: content-addressed, atomic, capped; a local directory several processes can share.

Layout (``OVREDUCE_STORE``)::

    <root>/
      models/<id>/model.xml     the IR as uploaded
                  model.bin     its weights (absent when the model has none)
                  meta.json     the summary answered by /v1/models (name, sizes, reductions...)
                  used          an empty file whose mtime is the model's last use (LRU bookkeeping)
      tmp/                      staging and trash; entries older than an hour are removed at start
      .lock                     flock() taken while evicting, so two processes do not evict twice

A model appears atomically: its files are written (and fsync'ed) into ``tmp/<id>.<random>/`` and the whole
directory is renamed to ``models/<id>``; when another process won the race the rename fails and the
copy is discarded. Deleting renames ``models/<id>`` into ``tmp/`` first, so readers see a whole model or
none. ``id`` is the SHA-256 of the content (:func:`model_id`). Eviction keeps the total under the cap,
least recently used first, and never picks a model this process is using (:meth:`ModelStore.pinned`);
another process's reader holds the XML in memory and the weights memory-mapped, so a model evicted under
it finishes its run and is 404 afterwards.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from api.errors import StoreError
from ovreduce.errors import NotFoundError

__all__ = ["ModelHasher", "ModelStore", "Staging", "is_model_id", "model_id"]

_ID_CHARS = frozenset("0123456789abcdef")
_STALE_S = 3600.0
_CHUNK = 1 << 20


def is_model_id(text: str) -> bool:
    return len(text) == 64 and set(text) <= _ID_CHARS


class ModelHasher:
    """The id of a model: SHA-256 over ``len(xml)`` (8 bytes, big-endian), the xml, then the bin.

    The length prefix makes the split between the two files unambiguous; an empty ``.bin`` counts as none.
    ``printf '%016x' $(stat -c%s m.xml) | xxd -r -p | cat - m.xml m.bin | sha256sum`` computes it.
    """

    def __init__(self, xml: bytes) -> None:
        self._h = hashlib.sha256(len(xml).to_bytes(8, "big"))
        self._h.update(xml)

    def update(self, chunk: bytes) -> None:
        self._h.update(chunk)

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def model_id(xml: bytes, bin_data: bytes | None = None) -> str:
    hasher = ModelHasher(xml)
    if bin_data:
        hasher.update(bin_data)
    return hasher.hexdigest()


@dataclass
class Staging:
    """A private folder under ``tmp/`` where one model is written before it is committed."""

    path: Path
    committed: bool = False
    files: dict[str, int] = field(default_factory=dict)

    def write(self, name: str, data: bytes) -> None:
        _write_synced(self.path / name, data)
        self.files[name] = len(data)

    def copy_from(self, name: str, src: IO[bytes], *, limit: int, on_chunk: Callable[[bytes], None]) -> int:
        """Copy a stream into ``name`` chunk by chunk; returns the size, or -1 when it passed ``limit``."""
        total = 0
        with open(self.path / name, "wb") as fh:
            while chunk := src.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    return -1
                on_chunk(chunk)
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        self.files[name] = total
        return total


class ModelStore:
    """Models on disk under ``root``, at most ``max_bytes`` in all (see the module docstring)."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.models = root / "models"
        self.tmp = root / "tmp"
        self._pins: Counter[str] = Counter()
        self._pins_lock = threading.Lock()

    # -- set-up and health ---------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create the folders; :class:`StoreError` when they cannot be."""
        try:
            self.models.mkdir(parents=True, exist_ok=True)
            self.tmp.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"the model store cannot be created: {exc.strerror or exc}") from None

    def writable(self) -> bool:
        try:
            self.ensure()
            probe = self.tmp / f"probe.{uuid.uuid4().hex}"
            probe.write_bytes(b"")
            probe.unlink()
            return True
        except (OSError, StoreError):
            return False

    def clean_tmp(self, older_than_s: float = _STALE_S) -> None:
        """Remove staging folders and trash left by crashed processes."""
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in self.tmp.iterdir():
                try:
                    if entry.name.startswith("trash.") or now - entry.stat().st_mtime > older_than_s:
                        _remove(entry)
                except OSError:
                    continue

    # -- reading -----------------------------------------------------------------------------------------
    def path(self, mid: str) -> Path:
        if not is_model_id(mid):
            raise NotFoundError(f"no model with id {mid!r}: an id is the 64 hex digits of a SHA-256")
        return self.models / mid

    def meta(self, mid: str) -> dict[str, Any]:
        """The model's summary; :class:`NotFoundError` when it is not (or no longer) stored."""
        try:
            data: dict[str, Any] = json.loads((self.path(mid) / "meta.json").read_bytes())
            return data
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"no model with id {mid} in the store") from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"model {mid} cannot be read from the store: {exc}") from None

    def exists(self, mid: str) -> bool:
        return is_model_id(mid) and (self.models / mid / "meta.json").is_file()

    def touch(self, mid: str) -> None:
        """Record a use (the LRU clock); a model removed meanwhile is simply skipped."""
        with contextlib.suppress(OSError):
            os.utime(self.models / mid / "used")

    def ids(self) -> list[str]:
        """The ids of the stored models, sorted; :class:`StoreError` when the store cannot be listed."""
        try:
            names = sorted(os.listdir(self.models))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"the model store cannot be listed: {exc.strerror or exc}") from None
        return [name for name in names if is_model_id(name)]

    def usage(self) -> int:
        return sum(size for _, _, size in self._entries())

    def _entries(self) -> list[tuple[str, float, int]]:
        """(id, last use, bytes) of every stored model."""
        out = []
        try:
            names = os.listdir(self.models)
        except OSError:
            return []
        for name in names:
            if not is_model_id(name):
                continue
            folder = self.models / name
            try:
                used = (folder / "used").stat().st_mtime
                size = sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())
            except OSError:
                continue
            out.append((name, used, size))
        return out

    # -- writing -----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def staging(self) -> Iterator[Staging]:
        """A fresh staging folder, removed on exit unless :meth:`commit` moved it into place."""
        self.ensure()
        path = self.tmp / f"stage.{uuid.uuid4().hex}"
        try:
            path.mkdir()
        except OSError as exc:
            raise StoreError(f"the model store is not writable: {exc.strerror or exc}") from None
        stage = Staging(path)
        try:
            yield stage
        finally:
            if not stage.committed:
                _remove(path)

    def commit(self, stage: Staging, mid: str) -> bool:
        """Move a complete staging folder to ``models/<id>``; False when the model was already there."""
        _write_synced(stage.path / "used", b"")
        _fsync_dir(stage.path)
        try:
            os.rename(stage.path, self.models / mid)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
                return False  # another request (or process) stored the same content first
            raise StoreError(f"the model cannot be stored: {exc.strerror or exc}") from None
        stage.committed = True
        _fsync_dir(self.models)
        return True

    def delete(self, mid: str) -> None:
        """Remove a model; :class:`NotFoundError` when it is not stored."""
        target = self.path(mid)
        trash = self.tmp / f"trash.{mid}.{uuid.uuid4().hex}"
        try:
            self.tmp.mkdir(parents=True, exist_ok=True)
            os.rename(target, trash)
        except FileNotFoundError:
            raise NotFoundError(f"no model with id {mid} in the store") from None
        except OSError as exc:
            raise StoreError(f"model {mid} cannot be deleted: {exc.strerror or exc}") from None
        _remove(trash)

    # -- pins and eviction ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def pinned(self, mid: str) -> Iterator[None]:
        """Keep this process's eviction away from ``mid`` while the block runs."""
        with self._pins_lock:
            self._pins[mid] += 1
        try:
            yield
        finally:
            with self._pins_lock:
                self._pins[mid] -= 1
                if self._pins[mid] <= 0:
                    del self._pins[mid]

    def evict(self, *, keep: str | None = None) -> list[str]:
        """Remove least recently used models until the total fits ``max_bytes``; returns the ids removed."""
        removed: list[str] = []
        with self._evict_lock():
            entries = sorted(self._entries(), key=lambda e: e[1])
            total = sum(size for _, _, size in entries)
            with self._pins_lock:
                pinned = set(self._pins)
            for mid, _, size in entries:
                if total <= self.max_bytes:
                    break
                if mid == keep or mid in pinned:
                    continue
                try:
                    self.delete(mid)
                except (NotFoundError, StoreError):
                    continue
                total -= size
                removed.append(mid)
        return removed

    @contextlib.contextmanager
    def _evict_lock(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: eviction is only serialised within the process
            yield
            return
        try:
            fh = open(self.root / ".lock", "a+b")  # noqa: SIM115 - held across the yield
        except OSError:
            yield
            return
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            yield
        finally:
            fh.close()  # releases the lock


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()
