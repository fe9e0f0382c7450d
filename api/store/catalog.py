"""The parse + check catalogue around the disk store: add (validate, summarise, commit), load (parse once), list.

A stored model's summary (``meta.json``, and what ``/v1/models`` answers) is made once, when the model is
added (:meth:`Catalog.add`). Parsed models are kept per process in a least-recently-used cache owned by the
:class:`Catalog` (``OVREDUCE_MODEL_CACHE_SIZE`` of them, of ``OVREDUCE_MAX_XML_BYTES`` of XML together).
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from cachetools import LRUCache

from ovreduce.backends.base import LayerSpec
from ovreduce.check import check_model
from ovreduce.check.inspect import inspect_model
from ovreduce.errors import NotFoundError, OvReduceError, WeightsError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.model import IRModel
from ovreduce.ir.parser import ParseLimits, parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.reports.inspect import InspectDocument
from ovreduce.run import layer_spec
from ovreduce.tensors import EXECUTABLE_TYPES

from ..errors import StoreCorruptError, StoreError
from .disk import ModelStore, Stamp, model_id, read_error

__all__ = ["Catalog", "LoadedModel", "path_of"]


def path_of(reduction: Mapping[str, Any]) -> str:
    """The layer path of a reduction of a summary (its id, in its body)."""
    body_path, layer_id = reduction.get("body_path"), str(reduction.get("layer_id"))
    return layer_id if body_path is None else f"{body_path}/{layer_id}"


class LoadedModel:
    """A stored model parsed once per process, with what runs and listings reuse."""

    def __init__(self, mid: str, model: IRModel, meta: dict[str, Any], stamp: Stamp = ()) -> None:
        self.id = mid
        self.model = model
        self.meta = meta
        self.stamp = stamp
        """Its files on disk when they were checked (:meth:`ModelStore.stamp`): another stamp, another check."""
        self.engine = engine = ShapeEngine(model)
        self.spec: Callable[[str], LayerSpec] = functools.cache(lambda key: layer_spec(model, key, engine))
        """The run spec of reduction ``key`` (id, name or path into a body), computed once."""

    def unready(self, key: str) -> str | None:
        """Why reduction ``key`` cannot run, or be served over KServe (None: it can)."""
        try:
            spec = self.spec(key)
        except OvReduceError as exc:
            return exc.message
        for role, etype in (("data", spec.data_type), ("axes", spec.axes_type)):
            if etype.name not in EXECUTABLE_TYPES:
                return f"its {role} input is {etype}, which ovreduce cannot execute"
            if etype.kserve is None:  # (f8e4m3: run executes it, but KServe v2 names no such datatype)
                return f"its {role} input is {etype}, which KServe v2 has no datatype for"
        return None

    @functools.cached_property
    def inspected(self) -> InspectDocument:
        """The ``ovreduce.inspect/v1`` document of every layer, computed once."""
        return inspect_model(self.model, all_layers=True)


class Catalog:
    """The store plus the parsing around it: add (validate, summarise, commit), load (parse once), list."""

    def __init__(self, store: ModelStore, *, limits: ParseLimits, cache_size: int) -> None:
        self.store = store
        self.limits = limits
        # At most ``cache_size`` models, and models of at most one largest XML's bytes together: a parsed model takes
        # some 16 times its XML in memory, so 16 large models took several GB in each worker.
        budget = limits.max_xml_bytes
        self._loaded: LRUCache[str, LoadedModel] = LRUCache(
            maxsize=budget, getsizeof=lambda m: min(budget, max(len(m.model.xml), budget // cache_size))
        )
        self._loaded_lock = threading.Lock()
        # The reduction paths of stored models, at most 262,144 of them together (some 20 MB): counted in models, a
        # store of large ones held gigabytes of them in the server process.
        self._reductions: LRUCache[str, frozenset[str]] = LRUCache(maxsize=1 << 18, getsizeof=lambda p: 1 + len(p))

    def reduction_paths(self, mid: str) -> frozenset[str]:
        """The layer paths of stored model ``mid``'s reductions, as its summary lists them (read once per model in
        this process: an id is its content's, and so are they), without parsing the model; :class:`NotFoundError`
        if it is not stored."""
        if not self.store.exists(mid):
            raise NotFoundError(f"no model with id {mid} in the store")
        with self._loaded_lock:
            paths = self._reductions.get(mid)
        if paths is None:
            paths = frozenset(map(path_of, self.store.meta(mid).get("reductions", ())))
            if 1 + len(paths) <= self._reductions.maxsize:  # a model of more is read each time
                with self._loaded_lock:
                    self._reductions[mid] = paths
        return paths

    def summaries_json(self, ids: Iterable[str] | None = None) -> Iterator[bytes]:
        """Every stored model's summary as the JSON text stored (:meth:`ModelStore.meta_json`), each read as iterated
        (GBs in all), those removed meanwhile skipped; of the stored models or of ``ids`` (as :meth:`ModelStore.ids`
        gave them: its :class:`StoreError` said before any is read)."""
        for mid in self.store.ids() if ids is None else ids:
            try:
                raw = self.store.meta_json(mid)
            except (NotFoundError, StoreError):
                continue
            yield raw

    def add(
        self, xml: bytes, bin_data: bytes | None, *, filename: str, bin_filename: str
    ) -> tuple[dict[str, Any], bool, int]:
        """Store a model unless its content is already there (answered without writing a byte, so a full disk refuses
        only new content); returns its summary, whether it was new and how many models were evicted to make room.
        IRError: the files are not a readable IR (nothing is stored); LimitExceededError: the model is larger than a
        limit or than the whole store."""
        mid = model_id(xml, bin_data)
        if (stored := self._stored(mid)) is not None:
            return stored, False, 0
        with self.store.staging() as stage:
            if bin_data:  # written first: on a full disk the upload is refused before it is parsed
                stage.write("model.bin", bin_data)
            weights = None if bin_data is None else Weights(bin_data, name=bin_filename)
            model = parse_ir(
                xml, weights, source=filename, expected_bin=f"a 'bin' file field, e.g. {bin_filename}",
                limits=self.limits,
            )  # fmt: skip
            loaded = LoadedModel(mid, model, {})
            report = check_model(model, path=filename, shapes=loaded.engine)
            counts = dict.fromkeys(("error", "warning", "info"), 0) | Counter(f.severity for f in report.findings)
            reductions = [r.to_json() for r in report.reductions]
            meta = {  # why each reduction that cannot run cannot: the KServe index reads it instead of parsing models
                "id": mid,
                "name": model.name,
                "ir_version": model.ir_version,
                "layer_count": model.layer_count(),
                "reductions": reductions,
                "ok": report.ok,
                "finding_counts": counts,
                "unready": {p: why for p in map(path_of, reductions) if (why := loaded.unready(p)) is not None},
                "filename": filename,
                "bin_filename": bin_filename if bin_data else None,
                "xml_bytes": len(xml),
                "bin_bytes": len(bin_data or b""),
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            stage.write("model.xml", xml)
            stage.write("meta.json", json.dumps(meta).encode())
            for _ in range(8):
                if self.store.commit(stage, mid):
                    break
                if (stored := self._stored(mid)) is not None:  # another request stored it first, and it is there still
                    return stored, False, 0
            else:
                raise StoreError("the model was stored and deleted by other requests while this one stored it; retry")
        evicted = self.store.evict(keep=mid)
        for removed in evicted:
            self._forget(removed)
        return meta, True, len(evicted)

    def _stored(self, mid: str) -> dict[str, Any] | None:
        """The summary of ``mid`` if it is stored and sound, read as any use reads it (today's limits); else None."""
        self.store.touch(mid)
        try:
            return self.load(mid).meta
        except (StoreCorruptError, NotFoundError):
            self._forget(mid)
            return None

    def load(self, mid: str) -> LoadedModel:
        """The parsed model (from the cache when this process has it); :class:`NotFoundError` if not stored. A model
        read from disk is first checked against the hashes recorded when it was stored; a corrupted one is removed and
        :class:`~api.errors.StoreCorruptError` (410) raised."""
        try:
            meta = self.store.meta(mid)  # also notices a model another process deleted, or corrupted
            stamp = self.store.stamp(mid)
            with self._loaded_lock:
                cached = self._loaded.get(mid)
            if cached is not None and cached.stamp == stamp:  # its files untouched since they were checked
                if cached.model.weights is not None:
                    cached.model.weights.resume()  # let go of between jobs (:meth:`idle`): held again for this one
                self.store.touch(mid)
                return cached
            xml = self.store.checked_xml(mid)  # the files as they were stored, or StoreCorruptError (removed)
            weights = None
            if meta.get("bin_bytes"):
                weights = Weights(self.store.path(mid) / "model.bin", name=str(meta.get("bin_filename", "model.bin")))
                weights.read(0, 0)  # map it now: a later eviction cannot pull the file away
        except (NotFoundError, StoreCorruptError):
            self._forget(mid)
            raise
        except (FileNotFoundError, NotADirectoryError, WeightsError):
            self._forget(mid)
            raise NotFoundError(f"model {mid} was removed from the store") from None
        except OSError as exc:
            raise read_error(exc, mid) from None
        model = parse_ir(xml, weights, source=str(meta.get("filename", "model.xml")), limits=self.limits)
        loaded = LoadedModel(mid, model, meta, stamp)
        with self._loaded_lock:
            self._loaded[mid] = loaded
        self.store.touch(mid)
        return loaded

    def idle(self) -> None:
        """Between two jobs of a worker: let go of every kept model's weights file and of its weights read whole
        (an audit's), which :meth:`load` takes again. So a model deleted or evicted meanwhile by another process
        gives its disk space back, and a worker's memory holds no weights between jobs: the cache keeps parsed
        models within the XML budget only."""
        with self._loaded_lock:
            kept = [loaded.model.weights for loaded in self._loaded.values()]
        for weights in kept:
            if weights is not None:
                weights.suspend()

    def delete(self, mid: str) -> None:
        self._forget(mid)
        self.store.delete(mid)

    def _forget(self, mid: str) -> None:
        with self._loaded_lock:
            self._loaded.pop(mid, None)
