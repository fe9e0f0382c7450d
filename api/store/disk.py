"""The model store on disk: content-addressed, atomic, capped; a local directory several processes can share.

Layout (``OVREDUCE_STORE``)::

    <root>/
      models/<id>/model.xml     the IR as uploaded
                  model.bin     its weights (absent when the model has none)
                  meta.json     the summary answered by /v1/models (name, sizes, reductions...)
                  sums.json     the SHA-256 of model.xml, model.bin and meta.json, recorded when written
                  used          an empty file whose mtime is the model's last use (LRU bookkeeping)
      tmp/                      staging and trash
         stage.<random>/        one upload being written...
         stage.<random>.lock    ...and the lock its process holds (flock) until it is done
      .lock                     flock() taken while evicting, so two processes do not evict twice

A model appears atomically: its files are written (and fsync'ed) into ``tmp/stage.<random>/`` and the whole directory
is renamed to ``models/<id>``; when another process won the race the rename fails and the copy is discarded. Deleting
renames ``models/<id>`` into ``tmp/`` first, so readers see a whole model or none. ``id`` is the SHA-256 of the content
(:func:`model_id`). Eviction keeps the total under the cap, least recently used first, and never picks a model this
process is using (:meth:`ModelStore.pinned`); another process's reader holds the XML in memory and the weights open (a
descriptor), so a model evicted under it finishes its run and is 404 afterwards.

Faults are :mod:`api.errors`' store errors, never a bare ``OSError``, and no message names a path; docs/service.md
("The store") says what each answers.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import logging
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar, cast

from pydantic import ValidationError

try:
    import fcntl

    _HAVE_FLOCK = True
except ImportError:  # pragma: no cover - not POSIX
    _HAVE_FLOCK = False

from ovreduce.errors import LimitExceededError, NotFoundError

from ..errors import StoreCorruptError, StoreError, StoreFullError
from ..schemas import ModelSummary

__all__ = [
    "ModelStore",
    "Staging",
    "Stamp",
    "canonical_id",
    "is_model_id",
    "model_hasher",
    "model_id",
    "read_error",
    "write_error",
]

logger = logging.getLogger("ovreduce.api")

_ID_CHARS = frozenset("0123456789abcdef")
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_STALE_S = 3600.0
_LEFTOVER = re.compile(r"stage\.[0-9a-f]{32}(?:\.lock)?|trash\.[0-9a-f]{64}\.[0-9a-f]{32}")  # what tmp/ holds of ours
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_CHUNK = 1 << 20


Stamp = tuple[tuple[int, int, int, int] | None, ...]
"""A model's files as :meth:`ModelStore.stamp` sees them."""


T = TypeVar("T")


class _DamageError(Exception):
    """What a read found wrong with a stored model's files (:meth:`ModelStore._judged` tells whether it stayed)."""


def open_file(path: Path) -> io.BufferedReader:
    """``path`` opened for reading if it is a regular file, else :class:`_DamageError`, at once: a FIFO put in
    the store would block a plain ``open`` until the job's time is up, and a link to itself fail every read."""
    try:  # O_NONBLOCK: no effect on a regular file's reads; O_NOFOLLOW: the store writes no links
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _DamageError(f"its {path.name} is a symbolic link") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _DamageError(f"its {path.name} is not a regular file")
    return open(fd, "rb")


def read_file(path: Path) -> bytes:
    with open_file(path) as fh:
        return fh.read()


def _sums(folder: Path) -> dict[str, str] | None:
    """The recorded hashes of a model's files (None for a model stored before they were recorded)."""
    try:
        sums = json.loads(read_file(folder / "sums.json"))
    except FileNotFoundError:
        if folder.is_dir():
            return None
        raise
    except (ValueError, RecursionError):  # (nested past what the reader recurses into)
        sums = None
    if not isinstance(sums, dict) or not all(isinstance(v, str) for v in sums.values()):
        raise _DamageError("its recorded hashes (sums.json) are not readable")
    return sums


def _checked_xml(folder: Path) -> bytes:
    """model.xml, once it and model.bin match their recorded hashes and, as sums.json may be rewritten, the id."""
    xml = read_file(folder / "model.xml")
    sums = _sums(folder)
    bin_hash, id_hash = hashlib.sha256(), model_hasher(xml)
    with contextlib.suppress(FileNotFoundError), open_file(folder / "model.bin") as fh:
        while chunk := fh.read(_CHUNK):
            bin_hash.update(chunk)
            id_hash.update(chunk)
    if sums is not None and sums.get("model.xml") != hashlib.sha256(xml).hexdigest():
        raise _DamageError("its model.xml does not match its recorded hash")
    if sums is not None and sums.get("model.bin", _EMPTY_SHA256) != bin_hash.hexdigest():
        raise _DamageError("its model.bin does not match its recorded hash")
    if id_hash.hexdigest() != folder.name:
        raise _DamageError("its files no longer hash to its id")
    return xml


def _identity(path: Path, *, follow_symlinks: bool = True) -> tuple[int, int, int, int] | None:
    """Kind, inode, size and change time (which a write, a rename, or a modification time set back, moves)."""
    try:
        st = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError:
        return None
    return st.st_mode, st.st_ino, st.st_size, st.st_ctime_ns


def is_model_id(text: str) -> bool:
    return len(text) == 64 and set(text) <= _ID_CHARS


def canonical_id(text: str) -> str:
    """A model id asked for in any case, in the lower case the store names it in (hex digits are case-insensitive:
    Windows' tools write a SHA-256 in upper case); anything else as it is."""
    lower = text.lower()
    return lower if text.isascii() and is_model_id(lower) else text


def model_hasher(xml: bytes) -> hashlib._Hash:
    """The SHA-256 of a model's id, fed ``len(xml)`` (8 bytes, big-endian: the split between the files is then
    unambiguous) and the xml; update it with the bin (an empty one counts as none). As a command:
    ``printf '%016x' $(stat -c%s m.xml) | xxd -r -p | cat - m.xml m.bin | sha256sum``."""
    hasher = hashlib.sha256(len(xml).to_bytes(8, "big"))
    hasher.update(xml)
    return hasher


def model_id(xml: bytes, bin_data: bytes | None = None) -> str:
    hasher = model_hasher(xml)
    hasher.update(bin_data or b"")
    return hasher.hexdigest()


def write_error(exc: OSError, what: str, place: str = "the model store") -> StoreError:
    """The store error for a failed write to ``place``: :class:`StoreFullError` when its disk is full; never a path."""
    if exc.errno in _FULL:
        return StoreFullError(
            f"{what}: {place}'s disk is full ({exc.strerror or 'no space left'}); nothing was stored. "
            f"Retry later, or delete stored models"
        )
    return StoreError(f"{what}: {place} cannot be written ({exc.strerror or type(exc).__name__})")


def read_error(exc: OSError, mid: str) -> StoreError:
    """The store error for a failed read of a model; never a path."""
    return StoreError(f"model {mid} cannot be read from the store ({exc.strerror or type(exc).__name__})")


@dataclass
class Staging:
    """A private folder under ``tmp/`` where one model is written before it is committed; each file written records
    its SHA-256 in :attr:`sums` (``sums.json`` once committed). Failed writes raise :func:`write_error`'s errors."""

    path: Path
    sums: dict[str, str] = field(default_factory=dict)

    def write(self, name: str, data: bytes, *, record: bool = True) -> None:
        try:
            with open(self.path / name, "wb") as fh:
                _write_chunk(fh, data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise write_error(exc, "the model cannot be stored") from None
        if record:
            self.sums[name] = hashlib.sha256(data).hexdigest()


class ModelStore:
    """Models on disk under ``root``, at most ``max_bytes`` in all (see the module docstring)."""

    SUMMARIES_KEPT = 4096
    """Models whose summary this process remembers having checked (past that many, a listing checks again)."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.models = root / "models"
        self.tmp = root / "tmp"
        self._pins: Counter[str] = Counter()
        # id -> SHA-256 of the summaries found well-formed, the last checked at the end; bounded (SUMMARIES_KEPT), as
        # every model ever read stayed in the server and each worker, and a model deleted here leaves it
        self._summaries_read: dict[str, str] = {}
        self._pins_lock = threading.Lock()
        # a summary's parse takes ten times its size: the readers of one model wait for its first to parse it
        self._parsing = [threading.Lock() for _ in range(16)]
        self.on_evict: Callable[[int], None] | None = None
        """Told how many models each eviction removed, when it removed any (:class:`api.metrics.Metrics`)."""

    # -- set-up and health ---------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create the folders; :class:`StoreError` when they cannot be."""
        try:
            self.models.mkdir(parents=True, exist_ok=True)
            self.tmp.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(exc, "the model store cannot be created") from None

    def unwritable(self) -> str | None:
        """Why the store cannot take a model now (its folders cannot be made, or a byte cannot be written: a full disk
        still makes empty files); None when it can."""
        try:
            self.ensure()
            with tempfile.TemporaryFile(dir=self.tmp, buffering=0) as probe:  # gone on close, or at once
                probe.write(b"\0")
        except StoreError as exc:
            return exc.message
        except OSError as exc:
            return f"the model store cannot be written ({exc.strerror or type(exc).__name__})"
        return None

    def clean_tmp(self) -> list[str]:
        """Remove what crashed processes left in ``tmp/``; returns the names removed. Trash goes at once, a staging
        folder once no process holds its lock (the kernel lets go of a killed one's), a lock file without its folder
        (and, where locks cannot be taken, not POSIX, staging folders too) once an hour old. Names the store does not
        write are not its own: left as they are (a ``tmp/`` of the user's, in a folder given as the store)."""
        now = time.time()
        try:
            entries = sorted(self.tmp.iterdir())
        except OSError:
            return []
        removed = []
        for entry in entries:
            name, stem = entry.name, entry.name.removesuffix(".lock")
            if not _LEFTOVER.fullmatch(name):
                continue
            try:
                if name.startswith("trash."):
                    gone = True
                elif name.startswith("stage.") and _HAVE_FLOCK and stem == name:
                    gone = not _lock_held(self.tmp / f"{stem}.lock")
                elif name.startswith("stage.") and _HAVE_FLOCK and (self.tmp / stem).exists():
                    continue  # a lock: judged with its folder (alone, it may be an upload's not yet taken)
                else:
                    gone = now - entry.stat().st_mtime > _STALE_S
                if gone:
                    _remove(entry)
                    if name.startswith("stage."):
                        _remove(self.tmp / f"{stem}.lock")  # after its folder, as staging() lets go of it
                    removed.append(name)
            except OSError:  # an entry that cannot even be looked at (EIO, a stale NFS handle): left, the rest go
                continue
        return removed

    # -- reading -----------------------------------------------------------------------------------------
    def path(self, mid: str) -> Path:
        if not is_model_id(mid):
            raise NotFoundError(f"no model with id {mid!r}: an id is the 64 hex digits of a SHA-256")
        return self.models / mid

    def meta(self, mid: str) -> dict[str, Any]:
        """The model's summary, checked as :meth:`meta_json` checks it."""
        return cast(dict[str, Any], json.loads(self.meta_json(mid)))

    def meta_json(self, mid: str) -> bytes:
        """The model's summary as stored (JSON text), checked against its recorded hash and, once per content in this
        process, its schema (a listing then costs reads and hashes, which let other threads run, not parsing)."""
        return self._judged(mid, self._meta_raw)

    def open_meta(self, mid: str) -> IO[bytes]:
        """The model's summary open to be read from its start, checked as :meth:`meta_json` checks it, but hashed in
        chunks: an answer that streams it holds a chunk of it, not the whole (tens of MB for a large model, held once
        per request that reads it). A model's summary not yet found well-formed is parsed by its first reader only."""
        return self._judged(mid, self._meta_opened)

    def checked_xml(self, mid: str) -> bytes:
        """The model's xml, once it and its bin were checked against their recorded hashes and the model's id;
        :class:`StoreCorruptError` (the model removed) when a file is missing, not a regular file or not matching."""
        return self._judged(mid, _checked_xml)

    def _judged(self, mid: str, read: Callable[[Path], T]) -> T:
        """``read(folder)``, its faults as the store's errors. Damage makes the model corrupt only if its folder stayed
        the same while it was read: a delete and a new upload meanwhile make files vanish, and it reads again."""
        folder = self.path(mid)
        for _ in range(3):
            before = _identity(folder)
            try:
                return read(folder)
            except _DamageError as exc:
                damage = str(exc)
            except (FileNotFoundError, NotADirectoryError) as exc:
                if not folder.is_dir():
                    raise NotFoundError(f"no model with id {mid} in the store") from None
                damage = f"its {Path(str(exc.filename)).name} is missing"  # a model is committed whole: it lost a file
            except OSError as exc:
                raise read_error(exc, mid) from None
            if before is not None and _identity(folder) == before:
                logger.warning("model %s in the store %s is corrupted: %s; it is removed", mid, self.root, damage)
                with contextlib.suppress(NotFoundError, StoreError):
                    self.delete(mid)
                raise StoreCorruptError(
                    f"the stored model {mid} is corrupted ({damage}) and was removed from the store; upload it again"
                )
        raise StoreError(f"model {mid} was replaced in the store while it was read; retry")

    def _meta_raw(self, folder: Path) -> bytes:
        raw = read_file(folder / "meta.json")
        self._check_summary(folder, hashlib.sha256(raw).hexdigest(), lambda: raw)
        return raw

    def _meta_opened(self, folder: Path) -> io.BufferedReader:
        fh = open_file(folder / "meta.json")

        def text() -> bytes:  # (this very file's, which the answer streams)
            fh.seek(0)
            return fh.read()

        try:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
            with self._parsing[int(folder.name[:4], 16) % len(self._parsing)]:  # (the first reader of a model parses)
                self._check_summary(folder, digest, text)
            fh.seek(0)
        except BaseException:
            fh.close()
            raise
        return fh

    def _check_summary(self, folder: Path, digest: str, read: Callable[[], bytes]) -> None:
        """That the summary of ``digest`` is the one recorded and, once per content in this process, that ``read()``
        (its text) is a summary this store writes of this model."""
        sums = _sums(folder)
        if sums is not None and sums.get("meta.json") != digest:
            raise _DamageError("its summary (meta.json) does not match its recorded hash")
        mid = folder.name
        if self._summaries_read.get(mid) == digest:
            return
        try:
            summary = ModelSummary.model_validate_json(read())
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "its text"
            raise _DamageError(f"its summary (meta.json) is not one this store writes (at {where})") from None
        if summary.id != mid:
            raise _DamageError("its summary (meta.json) is another model's")
        with self._pins_lock:
            self._summaries_read.pop(mid, None)
            self._summaries_read[mid] = digest
            while len(self._summaries_read) > self.SUMMARIES_KEPT:
                del self._summaries_read[next(iter(self._summaries_read))]

    def stamp(self, mid: str) -> Stamp:
        """What the model's files are on disk, to tell that they were touched since they were checked."""
        return tuple(_identity(self.models / mid / name, follow_symlinks=False) for name in ("model.xml", "model.bin"))

    def exists(self, mid: str) -> bool:  # (NotFoundError for what is no model id)
        return (self.path(mid) / "meta.json").is_file()

    def touch(self, mid: str) -> None:
        """Record a use (the LRU clock; a lost clock file is made again); a model removed meanwhile is skipped."""
        with contextlib.suppress(OSError):
            (self.models / mid / "used").touch()

    def ids(self) -> list[str]:
        """The ids of the stored models, sorted; :class:`StoreError` when the store cannot be listed."""
        try:
            names = sorted(os.listdir(self.models))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"the model store cannot be listed ({exc.strerror or type(exc).__name__})") from None
        return [name for name in names if is_model_id(name) and (self.models / name).is_dir()]

    def usage(self) -> int:
        """The bytes of the stored models and of ``tmp/`` (uploads under way, trash not yet removed)."""
        return sum(size for _, _, size in self._entries()) + _file_bytes(self.tmp, deep=True)

    def _entries(self) -> list[tuple[str, float, int]]:
        """(id, last use, bytes) of every stored model."""
        try:
            names = [name for name in os.listdir(self.models) if is_model_id(name)]
        except OSError:
            return []
        out = []
        for name in names:
            try:
                with os.scandir(self.models / name) as entries:
                    files = {entry.name: entry.stat() for entry in entries if entry.is_file()}
            except OSError:
                continue
            used = files["used"].st_mtime if "used" in files else 0.0  # lost (by hand, a crash): counted, first to go
            out.append((name, used, sum(st.st_size for st in files.values())))
        return out

    # -- writing -----------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def staging(self) -> Iterator[Staging]:
        """A fresh staging folder, removed on exit unless :meth:`commit` moved it into place. Its lock is taken before
        it is made and let go after it is gone, so :meth:`clean_tmp` removes exactly the folders of dead processes."""
        self.ensure()
        stage = Staging(self.tmp / f"stage.{uuid.uuid4().hex}")
        lock = self.tmp / f"{stage.path.name}.lock"
        fd = -1
        try:
            try:
                if _HAVE_FLOCK:
                    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                stage.path.mkdir()
            except OSError as exc:
                raise write_error(exc, "the model cannot be stored") from None
            yield stage
        finally:
            _remove(stage.path)  # (gone, when committed)
            _remove(lock)
            if fd >= 0:
                os.close(fd)

    def commit(self, stage: Staging, mid: str) -> bool:
        """Move a complete staging folder to ``models/<id>``; False when a folder is there (a model stored first, or
        damage, which a read removes). :class:`LimitExceededError` when it is larger than the whole store."""
        stage.write("sums.json", json.dumps(stage.sums, sort_keys=True).encode(), record=False)  # the model's files
        stage.write("used", b"", record=False)  # (a commit tried again records the same)
        size = _file_bytes(stage.path)
        if size > self.max_bytes:
            raise LimitExceededError(f"the model is {size} bytes with its summary and checksums, more than the whole "
                                     f"store may hold ({self.max_bytes} bytes, OVREDUCE_STORE_MAX_BYTES)")  # fmt: skip
        _fsync_dir(stage.path)
        target = self.models / mid
        if target.is_symlink() or (target.exists() and not target.is_dir()):  # debris where a model's folder goes
            logger.warning("model store %s: %s was not a model's folder; it is removed", self.root, mid)
            _remove(target)
        try:
            os.rename(stage.path, target)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
                return False
            raise write_error(exc, "the model cannot be stored") from None
        _fsync_dir(self.models)
        return True

    def delete(self, mid: str) -> None:
        """Remove a model; :class:`NotFoundError` when it is not stored."""
        target = self.path(mid)
        trash = self.tmp / f"trash.{mid}.{uuid.uuid4().hex}"
        try:
            self.tmp.mkdir(parents=True, exist_ok=True)
            os.rename(target, trash)
        except OSError as exc:  # gone (another may be stored by now), or a read-only store not holding it: not found
            if isinstance(exc, FileNotFoundError) or not os.path.lexists(target):
                raise NotFoundError(f"no model with id {mid} in the store") from None
            raise StoreError(f"model {mid} cannot be deleted ({exc.strerror or type(exc).__name__})") from None
        with self._pins_lock:
            self._summaries_read.pop(mid, None)
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
                self._pins -= Counter([mid])  # which drops it at zero

    def evict(self, *, keep: str | None = None) -> list[str]:
        """Remove least recently used models until the total fits ``max_bytes``; returns the ids removed."""
        removed: list[str] = []
        with contextlib.ExitStack() as held:
            with contextlib.suppress(OSError):  # a store whose lock cannot be made or taken still evicts
                if _HAVE_FLOCK:  # else (not POSIX) evictions run unserialised
                    fcntl.flock(held.enter_context(open(self.root / ".lock", "a+b")), fcntl.LOCK_EX)
            entries = sorted(self._entries(), key=lambda e: e[1])
            total = sum(size for _, _, size in entries) + _file_bytes(self.tmp, deep=True)  # uploads under way too
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
        if removed and self.on_evict is not None:
            self.on_evict(len(removed))
        return removed


def _write_chunk(fh: IO[bytes], data: bytes | memoryview) -> None:
    """The one place the store's files are written (tests make it fail as a full disk would)."""
    fh.write(data)


def _lock_held(lock: Path) -> bool:
    """Whether some process holds ``lock`` (flock); False when it does not exist."""
    try:
        with open(lock, "r+b") as fh:  # closing it lets go of the lock if taken here
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except FileNotFoundError:
        pass
    return False


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


def _file_bytes(folder: str | os.PathLike[str], *, deep: bool = False) -> int:
    """The bytes of the files in ``folder`` (and, ``deep``, in its folders); what vanishes meanwhile counts 0."""
    total = 0
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    total += entry.stat().st_size
                elif deep and entry.is_dir(follow_symlinks=False):
                    total += _file_bytes(entry.path)
    return total
