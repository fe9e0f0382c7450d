"""The model store: atomic commits, LRU eviction with pins, deletes, crash leftovers; eviction under a run."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.errors import RunTimeoutError, StoreError, WorkerDiedError
from api.store import disk
from api.store.catalog import Catalog
from api.store.disk import ModelStore, model_id
from ovreduce.errors import LimitExceededError, MemoryLimitError, NotFoundError
from ovreduce.ir.parser import ParseLimits

from .conftest import assert_problem, files
from .irs import reduce_ir


def _catalog(root: Path, max_bytes: int = 1 << 30) -> Catalog:
    return Catalog(ModelStore(root, max_bytes), limits=ParseLimits(), cache_size=4)


def _add(catalog: Catalog, name: str) -> tuple[dict[str, Any], bool, int]:
    xml, bin_data = reduce_ir(name)
    return catalog.add(xml, bin_data, filename=f"{name}.xml", bin_filename=f"{name}.bin")


def test_model_id() -> None:
    assert model_id(b"ab", b"c") != model_id(b"a", b"bc")  # the length prefix settles the split
    assert model_id(b"ab", b"") == model_id(b"ab", None)


def test_the_summaries_a_process_remembers_checking_are_bounded(tmp_path: Path) -> None:
    """Each summary read is remembered as checked, not read and hashed again: every model ever read stayed so, in
    the server and in each worker, though it was long deleted (~0.3 KB a model, for good)."""
    catalog = _catalog(tmp_path)
    store = catalog.store
    store.SUMMARIES_KEPT = 3
    ids = [_add(catalog, f"model{i}")[0]["id"] for i in range(6)]
    for mid in ids:
        assert store.meta(mid)["id"] == mid
    assert list(store._summaries_read) == ids[-3:]  # the most recent, at most SUMMARIES_KEPT
    store.delete(ids[-1])
    assert list(store._summaries_read) == ids[-3:-1]  # a model deleted here leaves it at once


def test_concurrent_adds_of_one_model(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    results: list[tuple[dict[str, Any], bool, int]] = []
    threads = [threading.Thread(target=lambda: results.append(_add(catalog, "same"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(created for _, created, _ in results) == 1
    assert len({meta["id"] for meta, _, _ in results}) == 1
    [folder] = (tmp_path / "models").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "model.bin", "model.xml", "sums.json", "used"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_adds_racing_deletes_of_one_model_always_store_it(tmp_path: Path) -> None:
    """An upload that meets a delete of the same content (before, between or after its own write) stores it
    or finds it stored: never 'not found'."""
    catalog = _catalog(tmp_path)
    xml, bin_data = reduce_ir("same")
    mid = model_id(xml, bin_data)
    stop = time.monotonic() + 4
    failures: list[BaseException] = []

    def add() -> None:
        while time.monotonic() < stop:
            try:
                meta, _, _ = catalog.add(xml, bin_data, filename="same.xml", bin_filename="same.bin")
                assert meta["id"] == mid
            except BaseException as exc:  # every failure is the finding
                failures.append(exc)

    def delete() -> None:
        while time.monotonic() < stop:
            with contextlib.suppress(NotFoundError):
                catalog.delete(mid)

    threads = [threading.Thread(target=add) for _ in range(4)] + [threading.Thread(target=delete) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [], failures[:3]


def test_reads_racing_deletes_and_adds_of_one_model_never_find_it_corrupt(tmp_path: Path) -> None:
    """A reader that meets a delete and a new upload of the same content sees files vanish from one folder and a
    new folder under the same name: the model is read again or not found, never reported corrupt and removed. (A
    reader that loses the race three times in a row is told to retry: a 503, not a verdict on the model.)"""
    catalog = _catalog(tmp_path)
    xml, bin_data = reduce_ir("same")
    mid = _add(catalog, "same")[0]["id"]
    stop = time.monotonic() + 4
    failures: list[BaseException] = []
    reads = retries = 0

    def add() -> None:
        while time.monotonic() < stop:
            catalog.add(xml, bin_data, filename="same.xml", bin_filename="same.bin")

    def delete() -> None:
        while time.monotonic() < stop:
            with contextlib.suppress(NotFoundError):
                catalog.delete(mid)

    def read() -> None:
        nonlocal reads, retries
        store = ModelStore(tmp_path, 1 << 30)  # as another process sees the store
        while time.monotonic() < stop:
            try:
                assert store.meta(mid)["id"] == mid
                assert store.checked_xml(mid) == xml
                reads += 1
            except NotFoundError:
                pass
            except StoreError as exc:
                if "was replaced in the store while it was read; retry" not in exc.message:
                    failures.append(exc)
                retries += 1
            except BaseException as exc:  # every other failure is the finding
                failures.append(exc)

    threads = [threading.Thread(target=f) for f in (add, add, delete, read, read, read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [], failures[:3]
    assert reads > retries, (reads, retries)


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
    assert [json.loads(raw)["id"] for raw in catalog.summaries_json()] == [ids[0]]


def test_add_evicts_the_least_recently_used(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    first = _add(catalog, "a")[0]["id"]
    catalog.store.max_bytes = catalog.store.usage() + 100  # room for one model
    time.sleep(0.01)
    second = _add(catalog, "b")[0]["id"]
    assert not catalog.store.exists(first) and catalog.store.exists(second)
    with pytest.raises(NotFoundError):
        catalog.load(first)


def test_a_model_that_lost_its_clock_file_is_counted_and_evicted_first(tmp_path: Path) -> None:
    """Without ``used`` a model was left out of the store's size and of eviction, for good; a stray file named as
    an id was counted as a model."""
    catalog = _catalog(tmp_path)
    store = catalog.store
    lost, kept = (_add(catalog, name)[0]["id"] for name in ("a", "b"))
    both = store.usage()
    (store.models / lost / "used").unlink()
    assert store.usage() == both
    (store.models / ("f" * 64)).write_bytes(b"not a model")
    assert store.ids() == sorted([lost, kept])
    store.max_bytes = both - 1
    assert store.evict() == [lost]
    store.touch(kept)
    (store.models / kept / "used").unlink()
    store.touch(kept)  # a use makes the clock again
    assert (store.models / kept / "used").is_file()


def test_delete_and_leftovers(tmp_path: Path) -> None:
    """What crashed processes left in tmp/ is removed; what the store does not write there (a tmp/ of the user's, in
    a folder given as the store) is left, however old: it once went after an hour, the user's files with it."""
    catalog = _catalog(tmp_path)
    mid = _add(catalog, "a")[0]["id"]
    catalog.load(mid)
    catalog.delete(mid)
    with pytest.raises(NotFoundError):
        catalog.load(mid)
    with pytest.raises(NotFoundError):
        catalog.delete(mid)
    orphan, bare, live = (f"stage.{uuid.uuid4().hex}" for _ in range(3))
    (tmp_path / "tmp" / orphan).mkdir()  # its process died: nobody holds its lock
    (tmp_path / "tmp" / f"{orphan}.lock").touch()
    (tmp_path / "tmp" / bare).mkdir()  # left by a version without locks
    (tmp_path / "tmp" / live).mkdir()  # another process's upload under way: its lock is held
    fd = os.open(tmp_path / "tmp" / f"{live}.lock", os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    (tmp_path / "tmp" / f"trash.{mid}.{uuid.uuid4().hex}").mkdir()
    users = ["notes.txt", "stage.orphan", "trash.old", "scratch"]
    for name in users:
        (tmp_path / "tmp" / name).touch()
        os.utime(tmp_path / "tmp" / name, (0, 0))
    try:
        catalog.store.clean_tmp()
        left = sorted(p.name for p in (tmp_path / "tmp").iterdir())
        assert left == sorted([*users, live, f"{live}.lock"])
    finally:
        os.close(fd)
    catalog.store.clean_tmp()  # its process is gone now
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == sorted(users)


def test_a_lock_file_without_its_folder_is_left_while_it_is_fresh(tmp_path: Path) -> None:
    """An upload makes its lock file, then takes the lock, then makes its folder: a tidy-up of another process between
    the first two steps sees an unheld lock and no folder. Removing it left the upload staging without a lock file,
    and the next tidy-up removed its folder under it (503). Such a lock goes once an hour old, as other debris."""
    store = _catalog(tmp_path).store
    store.ensure()
    making = tmp_path / "tmp" / f"stage.{uuid.uuid4().hex}.lock"
    making.touch()
    old = tmp_path / "tmp" / f"stage.{uuid.uuid4().hex}.lock"
    old.touch()
    os.utime(old, (0, 0))
    assert store.clean_tmp() == [old.name]
    with store.staging() as stage:  # the upload goes on: its folder stays through a tidy-up
        assert store.clean_tmp() == []
        stage.write("model.xml", b"<net/>")
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == [making.name]


def test_a_leftover_that_cannot_be_looked_at_leaves_the_others_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry of ``tmp/`` whose stat fails (an I/O error, a stale NFS handle) escaped as an OSError naming the
    store's path: the server did not start, and the leftovers after it stayed."""
    store = _catalog(tmp_path).store
    store.ensure()
    a, b = sorted(f"stage.{uuid.uuid4().hex}.lock" for _ in range(2))  # (locks without their folders, an hour old)
    for name in (a, b):
        (store.tmp / name).touch()
        os.utime(store.tmp / name, (0, 0))
    real = Path.stat

    def stat(path: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if path.name == a:
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert store.clean_tmp() == [b]
    monkeypatch.undo()
    assert [p.name for p in store.tmp.iterdir()] == [a]


def test_a_model_stored_on_a_second_try_records_its_own_files(tmp_path: Path) -> None:
    """Stored again over a folder that lost its summary, a model is committed on a second try: its sums.json also
    recorded the first try's sums.json and its clock file, under a hash the file holding it does not have."""
    catalog = _catalog(tmp_path)
    xml, bin_data = reduce_ir("a")
    damaged = catalog.store.models / model_id(xml, bin_data)
    damaged.mkdir(parents=True)
    (damaged / "model.xml").write_bytes(xml)
    meta, created, _ = _add(catalog, "a")
    assert created and meta["id"] == damaged.name
    sums = json.loads((damaged / "sums.json").read_bytes())
    assert set(sums) == {"meta.json", "model.xml"} | ({"model.bin"} if bin_data else set()), sums
    assert all(hashlib.sha256((damaged / name).read_bytes()).hexdigest() == sums[name] for name in sums)


def test_a_model_a_store_cannot_change_is_still_not_found(tmp_path: Path) -> None:
    """Deleting what the store does not hold is 404 even where nothing can be deleted (a read-only store, here a
    ``tmp/`` that is a file): it was 503, "cannot be deleted", which no retry changes."""
    catalog = _catalog(tmp_path)
    mid = _add(catalog, "a")[0]["id"]
    shutil.rmtree(tmp_path / "tmp")
    (tmp_path / "tmp").write_bytes(b"")
    with pytest.raises(NotFoundError):
        catalog.delete("0" * 64)
    with pytest.raises(StoreError, match="cannot be deleted"):
        catalog.delete(mid)


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


# -- faults: a full disk, corrupted files, interrupted uploads ---------------------------------------------
def _failing_writes(_context: Any, code: int | None, store: Path) -> None:
    """(A job of the worker process that stores uploads.) Every write of the store's files fails as the disk
    would, naming the file (as the OS does); ``code`` None: writes work again."""
    original = getattr(disk, "_real_write_chunk", disk._write_chunk)
    disk._real_write_chunk = original  # type: ignore[attr-defined]

    def write(fh: Any, data: bytes) -> None:
        raise OSError(code, os.strerror(code or 0), str(store / "tmp" / "model.bin"))

    disk._write_chunk = original if code is None else write


def _fail_writes(client: TestClient, code: int | None, store: Path) -> None:
    """Make the writes of the app's one worker process fail (see :func:`_failing_writes`); None: work again."""
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    assert isolated.size == 1
    client.portal.call(isolated.run, "faults", _failing_writes, code, store)  # type: ignore[union-attr]


@pytest.mark.parametrize(("code", "status", "problem"), [(errno.ENOSPC, 503, "store.full"), (errno.EIO, 503, "store")])
def test_failed_writes_are_503_with_retry_after(
    make_client: Callable[..., TestClient], code: int, status: int, problem: str
) -> None:
    """A new model is refused, with the reason; one already stored is still answered (200): nothing is written."""
    client = make_client(concurrency=1)
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    kept = client.post("/v1/models", files=files(*reduce_ir("max"))).json()
    _fail_writes(client, code, store)
    xml, bin_data = reduce_ir("sum")
    response = client.post("/v1/models", files=files(xml, bin_data))
    doc = assert_problem(response, status, problem)
    assert int(response.headers["retry-after"]) > 0
    assert str(store) not in response.text and os.strerror(code) in doc["detail"]
    assert [p.name for p in (store / "models").iterdir()] == [kept["id"]]
    assert list((store / "tmp").iterdir()) == []  # nothing half-made
    again = client.post("/v1/models", files=files(*reduce_ir("max")))
    assert again.status_code == 200 and again.json() == kept, again.text
    _fail_writes(client, None, store)
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201  # space again: stored


@pytest.mark.parametrize("route", ["/v1/models", "/v1/check"])
def test_an_upload_that_cannot_wait_on_disk_is_503_not_500(
    make_client: Callable[..., TestClient], route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file part past 1 MiB waits in the temporary folder while the form is read: where that cannot be written (a
    full disk, a folder gone), the answer was 500 internal, with a traceback per request in the log."""
    client = make_client()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    xml, bin_data = reduce_ir("sum")
    response = client.post(route, files=files(xml, bin_data + bytes(1_200_000)))
    doc = assert_problem(response, 503, "store")
    assert doc["detail"].startswith("the upload cannot be received: the server's temporary folder cannot be written")
    assert int(response.headers["retry-after"]) > 0 and str(tmp_path) not in response.text
    monkeypatch.undo()
    assert client.post(route, files=files(xml, bin_data + bytes(1_200_000))).status_code in (200, 201)


def test_a_store_that_cannot_take_a_byte_is_not_ready(tmp_path: Path) -> None:
    """A full disk still makes empty files: the readiness probe writes a byte, as every model needs (here the file
    size limit of a process refuses it, as a full disk would)."""
    code = (
        "import resource, signal, sys; from pathlib import Path; from api.store.disk import ModelStore\n"
        "store = ModelStore(Path(sys.argv[1]), 1 << 20); print(store.unwritable())\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        "print(store.unwritable())"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=repo)
    assert out.stdout.splitlines() == ["None", f"the model store cannot be written ({os.strerror(errno.EFBIG)})"], out
    assert list((tmp_path / "tmp").iterdir()) == []  # the probe is gone


def _stored(make_client: Callable[..., TestClient]) -> tuple[Path, str]:
    client = make_client()
    xml, bin_data = reduce_ir("sum")
    mid: str = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    return store, mid


def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


@pytest.mark.parametrize("part", ["model.bin", "model.xml"])
def test_corrupted_model_files_are_410_and_removed(make_client: Callable[..., TestClient], part: str) -> None:
    store, mid = _stored(make_client)
    target = store / "models" / mid / part
    _overwrite(target, target.stat().st_size // 2, b"\xff\x00\xff")  # a few bytes changed in the middle
    client = make_client()  # a restarted process: nothing of the model in memory
    response = client.post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]})
    doc = assert_problem(response, 410, "store.corrupt")
    assert part in doc["detail"] and "upload it again" in doc["detail"]
    assert str(store) not in response.text and "retry-after" not in response.headers
    assert not (store / "models" / mid).exists()  # quarantined: removed from the store
    assert_problem(client.get(f"/v1/models/{mid}"), 404, "not_found")
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201  # and can be stored again


@pytest.mark.parametrize("damage", [b"{ not json", b'{"id": "someone else"}'])
def test_corrupted_summaries_are_410_and_not_listed(make_client: Callable[..., TestClient], damage: bytes) -> None:
    store, mid = _stored(make_client)
    (store / "models" / mid / "meta.json").write_bytes(damage)
    client = make_client()
    assert client.get("/v1/models").json()["models"] == []  # listed no more, and removed
    assert not (store / "models" / mid).exists()
    store, mid = _stored(make_client)
    (store / "models" / mid / "meta.json").write_bytes(damage)
    response = client.get(f"/v1/models/{mid}")
    assert_problem(response, 410, "store.corrupt")
    assert str(store) not in response.text
    assert not (store / "models" / mid).exists()


@pytest.mark.parametrize("damage", [b"{ not json", b"[" * 100_000])
def test_unreadable_recorded_hashes_are_410_and_not_listed(
    make_client: Callable[..., TestClient], damage: bytes
) -> None:
    """A sums.json that is not JSON, or nested past what a JSON reader recurses into: the model is corrupt and
    removed, and the listing goes on without it (the nested one was a 500 on every use, and cut the listing off)."""
    for get in ("/v1/models", "/v1/models/{mid}", "/v1/models/{mid}/layers"):
        store, mid = _stored(make_client)
        (store / "models" / mid / "sums.json").write_bytes(damage)
        response = make_client().get(get.format(mid=mid))
        if get == "/v1/models":
            assert response.status_code == 200 and response.json()["models"] == [], response.text
        else:
            assert "recorded hashes" in assert_problem(response, 410, "store.corrupt")["detail"]
        assert not (store / "models" / mid).exists()


@pytest.mark.parametrize("sums", ["recorded to match", "absent"])
@pytest.mark.parametrize("summary", ['"reductions": "x"', '"reductions": [1]', '"x": NaN, ]]] not json'])
def test_a_summary_not_of_the_stores_own_form_is_corrupt_everywhere(
    make_client: Callable[..., TestClient], summary: str, sums: str
) -> None:
    """A meta.json that is not a summary the store writes, its hash recorded to match (or, as a model stored before
    hashes were recorded, none): the KServe index and the listing leave it out (once a 500 with a traceback, and a
    200 that was not JSON), the model's page is 410, and the model is removed each time."""

    def damaged() -> tuple[Path, TestClient]:
        store, mid = _stored(make_client)
        folder = store / "models" / mid
        damage = (f'{{"id": "{mid}", ' + summary + "}").encode()
        (folder / "meta.json").write_bytes(damage)
        if sums == "absent":
            (folder / "sums.json").unlink()
        else:
            recorded = json.loads((folder / "sums.json").read_text())
            (folder / "sums.json").write_text(json.dumps(recorded | {"meta.json": hashlib.sha256(damage).hexdigest()}))
        return folder, make_client()  # a restarted process: the summary is read afresh

    folder, client = damaged()
    index = client.post("/v2/repository/index")
    assert index.status_code == 200 and index.json() == [], index.text
    assert not folder.exists()
    folder, client = damaged()
    listing = client.get("/v1/models")
    assert listing.status_code == 200 and listing.json()["models"] == [], listing.text
    assert not folder.exists()
    folder, client = damaged()
    assert_problem(client.get(f"/v1/models/{folder.name}"), 410, "store.corrupt")
    assert not folder.exists()


def test_summaries_are_answered_as_stored_and_only_for_their_own_model(
    make_client: Callable[..., TestClient],
) -> None:
    """The listing and a model's page answer the stored summary; one copied in from another model's folder, with
    a recorded hash to match, is not that model's: it is corrupt, whatever its hash says."""
    store, mid = _stored(make_client)
    client = make_client()
    xml, bin_data = reduce_ir("mean", net_name="other")
    other = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    stored = {m: json.loads((store / "models" / m / "meta.json").read_bytes()) for m in (mid, other)}
    listing = client.get("/v1/models").json()
    assert listing["models"] == [stored[m] for m in sorted(stored)] and listing["total_bytes"] > 0
    assert client.get(f"/v1/models/{mid}").json() == stored[mid]
    foreign = (store / "models" / other / "meta.json").read_bytes()
    (store / "models" / mid / "meta.json").write_bytes(foreign)
    sums = json.loads((store / "models" / mid / "sums.json").read_text())
    sums["meta.json"] = hashlib.sha256(foreign).hexdigest()
    (store / "models" / mid / "sums.json").write_text(json.dumps(sums))
    assert [m["id"] for m in make_client().get("/v1/models").json()["models"]] == [other]
    assert not (store / "models" / mid).exists()  # removed as corrupt


@pytest.mark.parametrize("part", ["model.xml", "model.bin", "meta.json", "sums.json"])
@pytest.mark.parametrize("kind", ["fifo", "folder", "link-to-itself", "gone"])
def test_a_file_replaced_by_a_fifo_a_folder_or_nothing_is_corrupt(
    make_client: Callable[..., TestClient], part: str, kind: str
) -> None:
    """A stored file that became a FIFO (which would block its reader until the job's time is up), a folder, a link
    to itself (every read failed: 503 for good, the upload too), or nothing: the model is 410 and removed at once,
    and the same upload stores it again."""
    store, mid = _stored(make_client)
    target = store / "models" / mid / part
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link-to-itself":
        target.symlink_to(target.name)
    client = make_client(run_timeout_s=20)  # a restarted process: nothing of the model in memory
    started = time.monotonic()
    response = client.get(f"/v1/models/{mid}/layers")
    if kind == "gone" and part in ("sums.json", "model.bin"):  # as a model stored before hashes were recorded
        assert response.status_code in (200, 410), response.text
    else:
        doc = assert_problem(response, 410, "store.corrupt")
        assert "upload it again" in doc["detail"]
    assert time.monotonic() - started < 10
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code in (200, 201)
    assert client.get(f"/v1/models/{mid}/layers").status_code == 200


@pytest.mark.parametrize("damage", ["gone", "fifo", "rewritten", "rewritten-in-place"])
def test_files_touched_under_a_cached_model_are_noticed(make_client: Callable[..., TestClient], damage: str) -> None:
    """The same process, its parsed copy of the model in memory: a touched file is noticed on the next use (410,
    removed), and an upload of the same content stores it whole again."""
    client = make_client()
    xml, bin_data = reduce_ir("sum")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    assert client.get(f"/v1/models/{mid}/layers").status_code == 200  # parsed and kept by a worker
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    target = store / "models" / mid / "model.xml"
    if damage != "rewritten-in-place":
        target.unlink()
    if damage == "fifo":
        os.mkfifo(target)
    elif damage == "rewritten":
        target.write_bytes(xml.replace(b"sum", b"sux"))
    elif damage == "rewritten-in-place":  # same inode, same size, its modification time set back
        target.write_bytes(xml)
        before = target.stat()
        with open(target, "r+b") as fh:
            fh.write(xml.replace(b"sum", b"sux"))
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert_problem(client.get(f"/v1/models/{mid}/layers"), 410, "store.corrupt")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201
    assert (store / "models" / mid / "model.xml").read_bytes() == xml
    if damage == "gone":  # damaged under a model not in memory: the upload repairs it as well
        (store / "models" / mid / "model.xml").unlink()
        assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201
        assert (store / "models" / mid / "model.xml").read_bytes() == xml


def test_files_and_their_hashes_rewritten_together_are_noticed_by_the_id(
    make_client: Callable[..., TestClient],
) -> None:
    """sums.json rewritten to match changed files: the content no longer hashes to the model's id (410), and the
    same upload stores the original again."""
    store, mid = _stored(make_client)
    folder = store / "models" / mid
    changed = (folder / "model.xml").read_bytes().replace(b"sum", b"sux")
    (folder / "model.xml").write_bytes(changed)
    sums = json.loads((folder / "sums.json").read_text())
    sums["model.xml"] = hashlib.sha256(changed).hexdigest()
    (folder / "sums.json").write_text(json.dumps(sums))
    client = make_client()
    doc = assert_problem(client.get(f"/v1/models/{mid}/layers"), 410, "store.corrupt")
    assert "no longer hash to its id" in doc["detail"]
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201


def test_a_model_with_its_summary_may_not_outgrow_the_store(tmp_path: Path) -> None:
    xml, bin_data = reduce_ir("sum")
    size = len(xml) + len(bin_data)
    catalog = _catalog(tmp_path, max_bytes=size + 16)  # room for the files, not for the summary beside them
    with pytest.raises(LimitExceededError, match="with its summary"):
        catalog.add(xml, bin_data, filename="sum.xml", bin_filename="sum.bin")
    assert catalog.store.usage() == 0


def test_models_stored_before_hashes_were_recorded_are_checked_by_their_id(
    make_client: Callable[..., TestClient],
) -> None:
    store, mid = _stored(make_client)
    (store / "models" / mid / "sums.json").unlink()  # as an older version stored it
    assert make_client().post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]}).status_code == 200
    target = store / "models" / mid / "model.bin"
    _overwrite(target, 0, b"\x01\x02\x03\x04")
    response = make_client().post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]})
    assert_problem(response, 410, "store.corrupt")


def test_orphaned_staging_is_removed_at_start_and_counted_while_it_exists(
    make_settings: Callable[..., Any], make_client: Callable[..., TestClient]
) -> None:
    store: Path = make_settings().store
    (store / "tmp").mkdir(parents=True)
    orphan = store / "tmp" / f"stage.{'a' * 32}"  # an upload killed with SIGKILL: its lock file is left, unheld
    orphan.mkdir()
    (orphan / "model.bin").write_bytes(bytes(50_000))
    (store / "tmp" / f"{orphan.name}.lock").touch()
    catalog = _catalog(store, max_bytes=1 << 30)
    assert catalog.store.usage() == 50_000  # counted against the cap while it exists
    client = make_client()  # start-up removes it, fresh as it is
    assert list((store / "tmp").iterdir()) == []
    assert client.get("/v1/models").json()["total_bytes"] == 0


def test_live_staging_counts_against_the_cap(tmp_path: Path) -> None:
    """An upload under way (another process's, its lock held) takes room: eviction makes it for it."""
    catalog = _catalog(tmp_path)
    first = _add(catalog, "a")[0]["id"]
    store = catalog.store
    store.max_bytes = store.usage() + 1000
    with store.staging() as stage:
        stage.write("model.bin", bytes(2000))
        assert store.usage() > store.max_bytes
        assert store.evict() == [first]
        assert ModelStore(tmp_path, store.max_bytes).clean_tmp() == []  # another process: not an orphan
    assert list((tmp_path / "tmp").iterdir()) == []


def test_the_store_path_is_in_no_answer(make_client: Callable[..., TestClient]) -> None:
    """Store faults of every kind, answered: the store's path (nor its real path) never appears."""
    client = make_client(concurrency=1)
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    secrets = {str(store), str(store.resolve()), str(store.parent)}
    xml, bin_data = reduce_ir("sum")
    answers = [client.post("/v1/models", files=files(xml, bin_data))]
    mid = answers[0].json()["id"]
    answers += [client.get("/v1/models"), client.get(f"/v1/models/{mid}"), client.get(f"/v1/models/{mid}/layers")]
    (store / "models" / mid / "meta.json").write_bytes(b"\x00")
    answers.append(client.get(f"/v1/models/{mid}"))
    _fail_writes(client, errno.ENOSPC, store)
    answers.append(client.post("/v1/models", files=files(xml, bin_data)))
    _fail_writes(client, None, store)
    meta = store / "models" / mid
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    (meta / "model.xml").unlink()  # gone under the service
    answers.append(client.post(f"/v1/models/{mid}/layers/sum/run"))
    answers.append(client.get(f"/v1/models/{'0' * 64}"))
    answers.append(client.get(f"/v1/models/{store!s}"))  # a path in the request is not the server's telling
    statuses = [a.status_code for a in answers]
    assert statuses[:4] == [201, 200, 200, 200] and 410 in statuses and 503 in statuses, statuses
    for answer in answers[:-1]:
        for secret in secrets:
            assert secret not in answer.text, (answer.status_code, answer.text)
    assert json.loads(answers[-1].text)["status"] == 404


def _crash_while_staging(context: Any) -> None:
    """(A job.) Begin storing an upload, then die of SIGSEGV, as a parser crash would."""
    with context.catalog.store.staging() as stage:
        stage.write("model.xml", b"<net/>")
        os.kill(os.getpid(), signal.SIGSEGV)


def test_a_worker_that_dies_mid_upload_leaves_nothing_in_the_store(make_client: Callable[..., TestClient]) -> None:
    """Its staging folder would count against the store's size until the next start: it is removed at once."""
    client = make_client(concurrency=1)
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    with pytest.raises(WorkerDiedError, match=r"killed by signal 11 \(SIGSEGV\)"):
        client.portal.call(isolated.run, "the upload", _crash_while_staging)  # type: ignore[union-attr]
    assert list((store / "tmp").iterdir()) == []
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201  # a fresh worker


def _stall_while_staging(context: Any) -> None:
    """(A job.) Begin storing an upload, then outlive the time limit (a slow parse of a large upload)."""
    with context.catalog.store.staging() as stage:
        stage.write("model.xml", b"<net/>" * 1000)
        time.sleep(60)


def test_an_upload_killed_at_the_time_limit_leaves_nothing_in_the_store(
    make_client: Callable[..., TestClient],
) -> None:
    """Each one would hold its bytes of the store's cap until the next start, evicting stored models for nothing."""
    client = make_client(concurrency=1, run_timeout_s=3)
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    with pytest.raises(RunTimeoutError):
        client.portal.call(isolated.run, "the upload", _stall_while_staging)  # type: ignore[union-attr]
    assert list((store / "tmp").iterdir()) == []


def test_a_stored_model_uploaded_again_is_read_under_todays_limits(make_client: Callable[..., TestClient]) -> None:
    """A service restarted with a lower limit answers an upload of a model it already stores as it answers every use
    of it (413), not 200 with the old summary."""
    store, mid = _stored(make_client)
    layers = json.loads((store / "models" / mid / "meta.json").read_bytes())["layer_count"]
    tight = make_client(max_layers=layers - 1)
    xml, bin_data = reduce_ir("sum")
    upload = assert_problem(tight.post("/v1/models", files=files(xml, bin_data)), 413, "limit")
    run = assert_problem(tight.post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]}), 413, "limit")
    assert upload["detail"] == run["detail"] and "OVREDUCE_MAX_LAYERS" in upload["detail"]
    assert make_client().post("/v1/models", files=files(xml, bin_data)).status_code == 200  # the limit of before


def test_a_model_folder_replaced_by_a_file_is_stored_again(make_client: Callable[..., TestClient]) -> None:
    """Where a model's folder became a plain file, the model is not found, and its upload stores it again (it was 503
    "the model store cannot be written" until someone deleted it)."""
    store, mid = _stored(make_client)
    folder = store / "models" / mid
    shutil.rmtree(folder)
    folder.write_bytes(b"debris")
    client = make_client()
    assert_problem(client.get(f"/v1/models/{mid}"), 404, "not_found")
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201
    assert client.get(f"/v1/models/{mid}/layers").status_code == 200


def test_the_parsed_models_a_process_keeps_are_bounded_by_their_xml_bytes(tmp_path: Path) -> None:
    """Each worker kept 16 parsed models whatever their size (large models: several GB per worker). Models whose XML
    together passes the XML limit are not all kept; small ones are, up to the model count."""
    models = [reduce_ir(kind) for kind in ("sum", "mean", "max")]
    sizes = sorted(len(xml) for xml, _ in models)
    assert sizes[0] + sizes[1] - 1 >= sizes[-1]
    limits = ParseLimits(max_xml_bytes=sizes[0] + sizes[1] - 1)  # room for any one of these models, not two
    catalog = Catalog(ModelStore(tmp_path, 1 << 30), limits=limits, cache_size=4)
    ids = [catalog.add(xml, b or None, filename="m.xml", bin_filename="m.bin")[0]["id"]
           for xml, b in models]  # fmt: skip
    for mid in ids:
        assert catalog.load(mid).id == mid
    assert list(catalog._loaded) == ids[-1:]
    roomy = Catalog(ModelStore(tmp_path, 1 << 30), limits=ParseLimits(), cache_size=4)
    for mid in ids:
        roomy.load(mid)
    assert sorted(roomy._loaded) == sorted(ids)


def _weights_held_whole(context: Any) -> list[str]:
    """(A job.) The models whose weights this worker holds read whole, as the last job left them."""
    loaded = list(context.catalog._loaded.values())
    return [m.id for m in loaded if m.model.weights is not None and m.model.weights._buffer is not None]


def _store_files_open(pid: int, store: Path) -> list[str]:
    """The files of ``store`` (deleted ones too) process ``pid`` holds open."""
    root, found = os.path.realpath(store), []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if (target := os.readlink(f"/proc/{pid}/fd/{fd}")).startswith(root):
                found.append(target)
    return found


def test_between_jobs_a_worker_holds_no_model_s_weights(make_client: Callable[..., TestClient]) -> None:
    """A worker kept each model it had read with its weights file open and, after an audit, its weights read whole,
    until other models pushed it out of its cache: a deleted model's disk space was not given back, and the worker
    grew by the weights of each model audited. Between jobs it now holds neither; the next job takes them again."""
    client = make_client(concurrency=1)
    store: Path = client.app.state.services.settings.store  # type: ignore[attr-defined]
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    xml, bin_data = reduce_ir("sum")
    mid = client.post("/v1/models", files=files(xml, bin_data)).json()["id"]
    first = client.post(f"/v1/models/{mid}/audit", json={})
    assert first.status_code == 200, first.text
    (pid,) = isolated.pids()
    assert client.portal.call(isolated.run, "the look", _weights_held_whole) == []  # type: ignore[union-attr]
    assert _store_files_open(pid, store) == []
    again = client.post(f"/v1/models/{mid}/audit", json={})  # the parsed model kept, its weights read again
    assert again.status_code == 200 and again.json()["layers"] == first.json()["layers"]
    assert client.post(f"/v1/models/{mid}/layers/sum/run", json={"backends": ["numpy"]}).status_code == 200
    assert client.delete(f"/v1/models/{mid}").status_code == 204
    assert _store_files_open(pid, store) == [] and isolated.pids() == [pid]
    assert_problem(client.post(f"/v1/models/{mid}/audit", json={}), 404, "not_found")


class _NoMemoryToSend:
    """An answer whose pickling runs out of memory, as a document near the worker's memory bound can."""

    def __reduce__(self) -> Any:
        raise MemoryError


def _answer_without_memory(context: Any) -> _NoMemoryToSend:
    """(A job.) Finish, with an answer the worker has no memory left to send."""
    return _NoMemoryToSend()


def test_an_answer_a_worker_has_no_memory_to_send_is_413_and_the_worker_replaced(
    make_client: Callable[..., TestClient],
) -> None:
    """It was a RuntimeError (500 internal) and the worker went on; as a job that runs out of memory: 413, replaced."""
    client = make_client(concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    xml, bin_data = reduce_ir("sum")
    assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201
    (pid,) = isolated.pids()
    with pytest.raises(MemoryLimitError, match="OVREDUCE_MAX_WORKER_BYTES"):
        client.portal.call(isolated.run, "the check", _answer_without_memory)  # type: ignore[union-attr]
    assert client.post("/v1/check", files=files(xml, bin_data)).status_code == 200
    assert isolated.pids() != [pid] and len(isolated.pids()) == 1


def _openvino_out_of_memory(context: Any) -> None:
    """(A job.) End as OpenVINO running out of the worker's memory bound does, in the library's words."""
    from ovreduce._openvino import _out_of_memory

    raise _out_of_memory("std::bad_alloc")


def test_openvino_out_of_the_workers_memory_names_the_bound_once(make_client: Callable[..., TestClient]) -> None:
    """The library's message names the bound a process may use; the service named it a second time after it."""
    client = make_client(concurrency=1)
    isolated = client.app.state.services.isolated  # type: ignore[attr-defined]
    with pytest.raises(MemoryLimitError) as raised:
        client.portal.call(isolated.run, "the check", _openvino_out_of_memory)  # type: ignore[union-attr]
    said = raised.value.message
    assert said.count("OVREDUCE_MAX_WORKER_BYTES") == 1 and said.endswith("this worker process is replaced"), said


@pytest.mark.parametrize("damage", ["removed", "a folder"])
def test_a_stored_model_without_its_summary_is_stored_again_by_an_upload(
    make_client: Callable[..., TestClient], damage: str
) -> None:
    """A model's folder whose meta.json is gone (or not a file) is no stored model, yet took its place: every upload
    of it was 503 "stored and deleted by other requests; retry", for ever. The upload replaces the damaged folder."""
    store, mid = _stored(make_client)
    meta = store / "models" / mid / "meta.json"
    meta.unlink()
    if damage == "a folder":
        meta.mkdir()
    client = make_client()
    response = client.post("/v1/models", files=files(*reduce_ir("sum")))
    assert response.status_code == 201 and response.json()["id"] == mid, response.text
    assert meta.is_file()
    assert client.get(f"/v1/models/{mid}/layers").status_code == 200
