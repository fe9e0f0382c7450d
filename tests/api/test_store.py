"""The model store: atomic commits, LRU eviction with pins, deletes, crash leftovers; eviction under a run."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.store.catalog import Catalog
from api.store.disk import ModelStore, model_id
from ovreduce.errors import NotFoundError
from ovreduce.ir.parser import ParseLimits

from .conftest import assert_problem, files
from .irs import reduce_ir


def _catalog(root: Path, max_bytes: int = 1 << 30) -> Catalog:
    return Catalog(ModelStore(root, max_bytes), limits=ParseLimits(), max_upload_bytes=1 << 20, cache_size=4)


def _add(catalog: Catalog, name: str) -> tuple[dict[str, Any], bool]:
    xml, bin_data = reduce_ir(name)
    return catalog.add(xml, io.BytesIO(bin_data), filename=f"{name}.xml", bin_filename=f"{name}.bin")


def test_model_id() -> None:
    assert model_id(b"ab", b"c") != model_id(b"a", b"bc")  # the length prefix settles the split
    assert model_id(b"ab", b"") == model_id(b"ab", None)


def test_concurrent_adds_of_one_model(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    results: list[tuple[dict[str, Any], bool]] = []
    threads = [threading.Thread(target=lambda: results.append(_add(catalog, "same"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(created for _, created in results) == 1
    assert len({meta["id"] for meta, _ in results}) == 1
    [folder] = (tmp_path / "models").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "model.bin", "model.xml", "used"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_lru_eviction_skips_pinned(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    store = catalog.store
    ids = [_add(catalog, f"m{i}")[0]["id"] for i in range(4)]
    for age, mid in enumerate(ids):  # m0 is the oldest use, m3 the newest
        stamp = time.time() - 1000 + age
        os.utime(store.models / mid / "used", (stamp, stamp))
    size = store.usage() // 4
    store.max_bytes = 2 * size
    with store.pinned(ids[0]):
        removed = store.evict()
    assert removed == [ids[1], ids[2]]  # m0 is in use: the next least recently used go
    assert store.exists(ids[0]) and store.exists(ids[3])
    store.touch(ids[0])
    store.max_bytes = size
    assert store.evict() == [ids[3]]
    assert [m["id"] for m in catalog.summaries()] == [ids[0]]


def test_add_evicts_the_least_recently_used(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    first = _add(catalog, "a")[0]["id"]
    catalog.store.max_bytes = catalog.store.usage() + 100  # room for one model
    time.sleep(0.01)
    second = _add(catalog, "b")[0]["id"]
    assert not catalog.store.exists(first) and catalog.store.exists(second)
    with pytest.raises(NotFoundError):
        catalog.load(first)


def test_delete_and_leftovers(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    mid = _add(catalog, "a")[0]["id"]
    catalog.load(mid)
    catalog.delete(mid)
    with pytest.raises(NotFoundError):
        catalog.load(mid)
    with pytest.raises(NotFoundError):
        catalog.delete(mid)
    stale = tmp_path / "tmp" / "stage.old"
    stale.mkdir()
    os.utime(stale, (0, 0))
    fresh = tmp_path / "tmp" / "stage.new"
    fresh.mkdir()
    trash = tmp_path / "tmp" / f"trash.{mid}.x"
    trash.mkdir()
    catalog.store.clean_tmp()
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == ["stage.new"]  # another process's work


def test_models_survive_a_restart(make_client: Callable[..., TestClient]) -> None:
    xml, bin_data = reduce_ir("sum")
    mid = make_client().post("/v1/models", files=files(xml, bin_data)).json()["id"]
    again = make_client()  # a new app (a restarted process) on the same directory
    assert again.get(f"/v1/models/{mid}").status_code == 200
    assert again.post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]}).status_code == 200


def test_removed_while_running(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    """Another process removes the model while an audit of it runs in a worker: the audit finishes (its
    weights stay readable through the descriptor it holds), later requests are 404."""
    from tests.audit.ov_models import many_reductions

    client = make_client()
    other = make_client()  # same store directory, its own process state
    xml = many_reductions(tmp_path / "many.xml", 400)
    mid = client.post("/v1/models", files=files(xml.read_bytes(), xml.with_suffix(".bin").read_bytes())).json()["id"]
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(client.post(f"/v1/models/{mid}/audit", json={})))
    thread.start()
    time.sleep(1.0)  # the worker has read the model by now; the audit runs for seconds more
    assert other.delete(f"/v1/models/{mid}").status_code == 204
    thread.join(60)
    assert out[0].status_code == 200, out[0].text
    assert_problem(client.post(f"/v1/models/{mid}/layers/sum/run"), 404, "not_found")
    assert_problem(client.get(f"/v1/models/{mid}/layers"), 404, "not_found")
