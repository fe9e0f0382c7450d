"""The embedded model store: a local directory several processes can share, and the in-memory caches.

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
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from api.errors import RequestTooLargeError, StoreError
from ovreduce.backends.base import LayerSpec
from ovreduce.check import check_model
from ovreduce.check.inspect import inspect_model
from ovreduce.errors import LimitExceededError, NotFoundError, WeightsError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import ParseLimits, parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.reports import ModelCheck
from ovreduce.run import layer_spec

__all__ = ["LRU", "Catalog", "LoadedModel", "ModelHasher", "ModelStore", "display_name", "model_id"]

K = TypeVar("K")
V = TypeVar("V")

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


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used mapping."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


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

    def summaries(self) -> list[dict[str, Any]]:
        out = []
        try:
            names = sorted(os.listdir(self.models))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"the model store cannot be listed: {exc.strerror or exc}") from None
        for name in names:
            if not is_model_id(name):
                continue
            with contextlib.suppress(NotFoundError, StoreError):
                out.append(self.meta(name))
        return out

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


# -- parsed models ----------------------------------------------------------------------------------------
def display_name(filename: str | None, default: str) -> str:
    """The name an uploaded file is shown by: its base name, printable, at most 200 characters."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()[:200]
    return base or default


def summarize(mid: str, model: IRModel, report: ModelCheck, **extra: Any) -> dict[str, Any]:
    """The stored summary of a model (meta.json, and the /v1/models answers)."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in report.findings:
        counts[finding.severity] += 1
    return {
        "id": mid,
        "name": model.name,
        "ir_version": model.ir_version,
        "layer_count": len(model.layers),
        "reductions": [r.to_json() for r in report.reductions],
        "ok": report.ok,
        "finding_counts": counts,
        **extra,
    }


class LoadedModel:
    """A stored model parsed once per process, with what runs and listings reuse."""

    def __init__(self, mid: str, model: IRModel, meta: dict[str, Any]) -> None:
        self.id = mid
        self.model = model
        self.meta = meta
        self.engine = ShapeEngine(model)
        self._specs: dict[str, LayerSpec] = {}
        self._inspect: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def spec(self, key: str) -> LayerSpec:
        """The run spec of reduction ``key`` (id or name), computed once."""
        found = self._specs.get(key)
        if found is None:
            found = layer_spec(self.model, key, self.engine)
            with self._lock:
                self._specs[key] = found
        return found

    def inspected(self) -> dict[str, Any]:
        """The ``ovreduce.inspect/v1`` document of every layer, computed once."""
        if self._inspect is None:
            doc = inspect_model(self.model, all_layers=True).to_json()
            with self._lock:
                self._inspect = doc
        assert self._inspect is not None
        return self._inspect


class Catalog:
    """The store plus the parsing around it: add (validate, summarise, commit), load (parse once), list."""

    def __init__(self, store: ModelStore, *, limits: ParseLimits, max_upload_bytes: int, cache_size: int) -> None:
        self.store = store
        self.limits = limits
        self.max_upload_bytes = max_upload_bytes
        self.cache: LRU[str, LoadedModel] = LRU(cache_size)

    def add(
        self, xml: bytes, bin_src: IO[bytes] | None, *, filename: str, bin_filename: str
    ) -> tuple[dict[str, Any], bool]:
        """Store a model unless its content is already there; returns its summary and whether it was new.

        Raises:
            IRError: the files are not a readable IR (nothing is stored).
            LimitExceededError: the model is larger than a limit or than the whole store.
        """
        hasher = ModelHasher(xml)
        with self.store.staging() as stage:
            bin_size = 0
            if bin_src is not None:
                bin_size = stage.copy_from("model.bin", bin_src, limit=self.max_upload_bytes, on_chunk=hasher.update)
                if bin_size < 0:
                    raise RequestTooLargeError(
                        f"{bin_filename} is larger than the upload limit of {self.max_upload_bytes} bytes "
                        f"(OVREDUCE_MAX_UPLOAD_BYTES)"
                    )
            mid = hasher.hexdigest()
            if self.store.exists(mid):
                self.store.touch(mid)
                return self.store.meta(mid), False
            size = len(xml) + bin_size
            if size > self.store.max_bytes:
                raise LimitExceededError(
                    f"the model is {size} bytes, more than the whole store may hold ({self.store.max_bytes} bytes, "
                    f"OVREDUCE_STORE_MAX_BYTES)"
                )
            weights = Weights(stage.path / "model.bin", name=bin_filename) if bin_size else None
            try:
                model = parse_ir(
                    xml, weights, source=filename, expected_bin=f"a 'bin' file field, e.g. {bin_filename}",
                    limits=self.limits,
                )  # fmt: skip
                report = check_model(model, path=filename)
            finally:
                if weights is not None:
                    weights.close()
            meta = summarize(
                mid, model, report, filename=filename, bin_filename=bin_filename, xml_bytes=len(xml),
                bin_bytes=bin_size, created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            )  # fmt: skip
            if bin_size == 0:
                with contextlib.suppress(OSError):
                    (stage.path / "model.bin").unlink()
            stage.write("model.xml", xml)
            stage.write("meta.json", json.dumps(meta).encode())
            created = self.store.commit(stage, mid)
        if not created:
            self.store.touch(mid)
            return self.store.meta(mid), False
        for removed in self.store.evict(keep=mid):
            self.cache.pop(removed)
        return meta, True

    def load(self, mid: str) -> LoadedModel:
        """The parsed model (from the cache when this process has it); :class:`NotFoundError` if not stored."""
        meta = self.store.meta(mid)  # also notices a model another process deleted
        cached = self.cache.get(mid)
        if cached is not None:
            self.store.touch(mid)
            return cached
        folder = self.store.path(mid)
        try:
            xml = (folder / "model.xml").read_bytes()
            weights = None
            if meta.get("bin_bytes"):
                weights = Weights(folder / "model.bin", name=str(meta.get("bin_filename", "model.bin")))
                weights.read(0, 0)  # map it now: a later eviction cannot pull the file away
        except (FileNotFoundError, NotADirectoryError, WeightsError):
            self.cache.pop(mid)
            raise NotFoundError(f"model {mid} was removed from the store") from None
        except OSError as exc:
            raise StoreError(f"model {mid} cannot be read from the store: {exc.strerror or exc}") from None
        model = parse_ir(xml, weights, source=str(meta.get("filename", "model.xml")), limits=self.limits)
        loaded = LoadedModel(mid, model, meta)
        self.cache.put(mid, loaded)
        self.store.touch(mid)
        return loaded

    def delete(self, mid: str) -> None:
        self.cache.pop(mid)
        self.store.delete(mid)
