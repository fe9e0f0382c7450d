"""GET /metrics: real traffic through the app, then the Prometheus text parsed and the counts checked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from .conftest import assert_problem, files
from .irs import reduce_ir

ROOT = Path(__file__).resolve().parents[2]
LAYER = "rmsnorm%2Fvariance"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: TestClient) -> Samples:
    """Every sample of ``/metrics`` by name and labels."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    out: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_requests_runs_and_store_are_counted(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> None:
    before = scrape(client)
    assert value(before, "ovreduce_runs_total", backend="numpy", device="CPU", outcome="agree") == 0
    for _ in range(3):
        assert client.get("/healthz").status_code == 200
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    assert client.get(f"/v1/models/{mid}").status_code == 200
    assert client.get(f"/v1/models/{'0' * 64}").status_code == 404
    assert client.get("/no/such/page").status_code == 404
    ran = client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"seed": 1})
    assert ran.status_code == 200 and ran.json()["outcome"] == "agree", ran.text
    alone = client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"backends": ["numpy"]})
    assert alone.status_code == 200 and alone.json()["outcome"] == "nothing-compared", alone.text
    v2 = client.post(f"/v2/models/{mid}.5/infer", json={"inputs": [
        {"name": "data", "shape": [1, 2, 64], "datatype": "FP32", "data": [0.5] * 128}]})  # fmt: skip
    assert v2.status_code == 200 and v2.json()["parameters"]["outcome"] == "agree", v2.text
    no_device = client.post(f"/v1/models/{mid}/layers/{LAYER}/run", json={"device": "NOSUCHDEVICE"})
    assert_problem(no_device, 400, "input")

    after = scrape(client)
    req = "ovreduce_http_requests_total"
    assert value(after, req, method="GET", route="/healthz", status="200") == 3
    assert value(after, req, method="POST", route="/v1/models", status="201") == 1
    # by route template, never by the concrete path: both models (found and unknown) under one route
    assert value(after, req, method="GET", route="/v1/models/{model_id}", status="200") == 1
    assert value(after, req, method="GET", route="/v1/models/{model_id}", status="404") == 1
    assert value(after, req, method="GET", route="<unmatched>", status="404") == 1
    assert not any(mid in dict(labels).get("route", "") for _, labels in after)
    run_route = "/v1/models/{model_id}/layers/{layer}/run"
    assert value(after, req, method="POST", route=run_route, status="200") == 2
    assert value(after, req, method="POST", route=run_route, status="400") == 1
    # the scrape before this one was counted too
    assert value(after, req, method="GET", route="/metrics", status="200") == 1

    latency = "ovreduce_http_request_duration_seconds_count"
    assert value(after, latency, method="GET", route="/healthz") == 3
    assert value(after, latency, method="POST", route=run_route) == 3

    runs = "ovreduce_runs_total"
    assert value(after, runs, backend="numpy", device="CPU", outcome="agree") == 2
    assert value(after, runs, backend="openvino", device="CPU", outcome="agree") == 2  # a v1 run, a v2 inference
    assert value(after, runs, backend="numpy", device="CPU", outcome="nothing-compared") == 1
    assert value(after, runs, backend="openvino", device="unavailable", outcome="input") == 1

    assert value(after, "ovreduce_store_models") == 1
    assert value(after, "ovreduce_store_bytes") >= len(rmsnorm[0])
    assert value(after, "ovreduce_store_max_bytes") > 0
    assert value(after, "ovreduce_jobs_queued") == 0
    assert value(after, "ovreduce_jobs_rejected_total", reason="busy") == 0


def test_head_requests_are_counted_by_their_route(client: TestClient) -> None:
    assert client.head("/healthz").status_code == 200
    samples = scrape(client)
    assert value(samples, "ovreduce_http_requests_total", method="HEAD", route="/healthz", status="200") == 1


def test_metrics_are_behind_the_host_allow_list(client: TestClient) -> None:
    refused = client.get("/metrics", headers={"host": "evil.example"})
    assert_problem(refused, 400, "request.host")
    samples = scrape(client)  # the refusal is counted, under the route the request was for
    assert value(samples, "ovreduce_http_requests_total", method="GET", route="/metrics", status="400") == 1


def test_the_schema_and_the_files_are_counted_by_their_template(client: TestClient) -> None:
    """Routes outside the API's own (the OpenAPI schema, the page's files) have templates too: no request path
    becomes a label value, and none of them is lumped with requests for no route at all."""
    assert client.get("/openapi.json").status_code == 200
    for name in ("app.js", "style.css", "no-such-file.js"):
        client.get(f"/static/{name}")
    client.get("/nothing/here")
    samples = scrape(client)
    req = "ovreduce_http_requests_total"
    assert value(samples, req, method="GET", route="/openapi.json", status="200") == 1
    assert value(samples, req, method="GET", route="/static/{path}", status="200") == 2
    assert value(samples, req, method="GET", route="/static/{path}", status="404") == 1
    assert value(samples, req, method="GET", route="<unmatched>", status="404") == 1
    assert not any("app.js" in dict(labels).get("route", "") for _, labels in samples)


def test_apps_in_one_process_count_apart(make_client: Callable[..., TestClient]) -> None:
    one, two = make_client(), make_client()
    for _ in range(2):
        one.get("/healthz")
    two.get("/healthz")
    req = "ovreduce_http_requests_total"
    assert value(scrape(one), req, method="GET", route="/healthz", status="200") == 2
    assert value(scrape(two), req, method="GET", route="/healthz", status="200") == 1


def test_evictions_are_counted(make_client: Callable[..., TestClient]) -> None:
    """A store that holds one model: each upload after the first evicts the one before."""
    models = [reduce_ir(f"m{i}", net_name=f"net{i}") for i in range(3)]
    client = make_client(store_max_bytes=3 * sum(map(len, models[0])))  # one model with its summary (~1 KB)
    for xml, bin_data in models:
        assert client.post("/v1/models", files=files(xml, bin_data)).status_code == 201
    samples = scrape(client)
    assert value(samples, "ovreduce_store_evictions_total") == 2
    assert value(samples, "ovreduce_store_models") == 1


@pytest.fixture(scope="module")
def slow_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes | None]:
    from tests.audit.ov_models import many_reductions

    xml = many_reductions(tmp_path_factory.mktemp("slow") / "many.xml", 400)
    return xml.read_bytes(), xml.with_suffix(".bin").read_bytes()


def test_timeouts_and_killed_workers_are_counted(
    make_client: Callable[..., TestClient], slow_model: tuple[bytes, bytes | None]
) -> None:
    """A real audit that needs seconds, under a limit of half a second: 504, its worker killed."""
    mid = make_client().post("/v1/models", files=files(*slow_model)).json()["id"]  # the same store, no hurry
    client = make_client(run_timeout_s=0.5, concurrency=1)
    assert_problem(client.post(f"/v1/models/{mid}/audit", json={"precision": "f32"}), 504, "limit.time")
    samples = scrape(client)
    assert value(samples, "ovreduce_jobs_rejected_total", reason="timeout") == 1
    assert value(samples, "ovreduce_workers_killed_total") == 1
    assert value(samples, "ovreduce_jobs_queued") == 0
    status = "ovreduce_http_requests_total"
    assert value(samples, status, method="POST", route="/v1/models/{model_id}/audit", status="504") == 1


_WORKER = """
import sys, tempfile
from pathlib import Path
from fastapi.testclient import TestClient
from api.config import Settings
from api.main import create_app

store, count, scrape = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "scrape"
with TestClient(create_app(Settings(store=store)), base_url="http://127.0.0.1") as client:
    for _ in range(count):
        assert client.get("/healthz").status_code == 200
    if scrape:
        sys.stdout.write(client.get("/metrics").text)
"""


def test_multiprocess_mode_sums_the_processes(tmp_path: Path) -> None:
    """PROMETHEUS_MULTIPROC_DIR set (as for several uvicorn workers): whichever process answers the scrape,
    it shows the counts of every process, finished ones included."""
    shared = tmp_path / "prometheus"
    shared.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(shared), "PYTHONPATH": str(ROOT)}
    store = str(tmp_path / "store")
    for count in (2, 3):
        subprocess.run([sys.executable, "-c", _WORKER, store, str(count), "no"], check=True, env=env, cwd=ROOT,
                       timeout=120)  # fmt: skip
    out = subprocess.run([sys.executable, "-c", _WORKER, store, "1", "scrape"], check=True, env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(out)
        for s in family.samples
    }
    assert value(samples, "ovreduce_http_requests_total", method="GET", route="/healthz", status="200") == 6
    assert value(samples, "ovreduce_store_models") == 0


_QUEUED_THEN_KILLED = """
import os, signal, sys
from pathlib import Path
from api.config import Settings
from api.main import create_app

app = create_app(Settings(store=Path(sys.argv[1])))
app.state.services.metrics.job_event("queued")  # a job waits for a worker...
os.kill(os.getpid(), signal.SIGKILL)  # ...when the process is killed
"""


def test_a_killed_process_leaves_no_jobs_queued(tmp_path: Path) -> None:
    """A uvicorn worker killed (the OOM killer) while jobs were queued: its live gauge was summed for ever, so an
    idle service reported jobs queued until it restarted."""
    shared = tmp_path / "prometheus"
    shared.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(shared), "PYTHONPATH": str(ROOT)}
    store = str(tmp_path / "store")
    killed = subprocess.run([sys.executable, "-c", _QUEUED_THEN_KILLED, store], env=env, cwd=ROOT, timeout=120)
    assert killed.returncode == -signal.SIGKILL and list(shared.glob("gauge_livesum_*.db"))
    out = subprocess.run([sys.executable, "-c", _WORKER, store, "1", "scrape"], check=True, env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    samples = {(s.name, frozenset(s.labels.items())): s.value
               for family in text_string_to_metric_families(out) for s in family.samples}  # fmt: skip
    assert value(samples, "ovreduce_jobs_queued") == 0


def test_an_empty_multiprocess_folder_is_not_multiprocess_mode(tmp_path: Path) -> None:
    """``PROMETHEUS_MULTIPROC_DIR=`` (an app started by ``uvicorn --factory``; ``ovreduce serve`` refuses it): the
    scrape answers this process's counts, as prometheus_client's collector cannot sum an empty folder (it was a 500)."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": "", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _WORKER, str(tmp_path / "store"), "2", "scrape"], check=True, env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    samples = {(s.name, frozenset(s.labels.items())): s.value
               for family in text_string_to_metric_families(out) for s in family.samples}  # fmt: skip
    assert value(samples, "ovreduce_http_requests_total", method="GET", route="/healthz", status="200") == 2


def test_scrapes_at_once_read_the_store_once(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> None:
    """Each scrape reads the whole store: many at once took every thread the readiness checks wait for. Those that
    come while one is made share the next."""
    assert client.post("/v1/models", files=files(*rmsnorm)).status_code == 201
    store = client.app.state.services.metrics.store  # type: ignore[attr-defined]
    reads: list[float] = []
    usage = store.usage

    def slow_usage() -> int:  # a store large enough to take a while to read
        reads.append(time.monotonic())
        time.sleep(0.5)
        return int(usage())

    store.usage = slow_usage
    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(lambda _: client.get("/metrics"), range(12)))
    assert [a.status_code for a in answers] == [200] * 12
    assert all("ovreduce_store_models 1.0" in a.text for a in answers)
    assert len(reads) < 4, f"{len(reads)} reads of the store for 12 scrapes at once"
    assert "ovreduce_store_models 1.0" in client.get("/metrics").text and len(reads) >= 2  # (a later one reads anew)


def test_a_scrape_after_an_upload_counts_it(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> None:
    """A scrape that comes while another is made does not get that one's answer, read before it came: a client that
    uploaded a model, then asked, was told the store held none."""
    store = client.app.state.services.metrics.store  # type: ignore[attr-defined]
    ids = store.ids

    def slow_ids() -> list[str]:  # a store large enough to take a while to list
        listed = list(ids())
        time.sleep(1.0)
        return listed

    store.ids = slow_ids
    with ThreadPoolExecutor(1) as pool:
        earlier = pool.submit(client.get, "/metrics")
        time.sleep(0.3)  # (that scrape is listing the store)
        assert client.post("/v1/models", files=files(*rmsnorm)).status_code == 201
        later = client.get("/metrics")
        assert "ovreduce_store_models 0.0" in earlier.result().text
    assert "ovreduce_store_models 1.0" in later.text


def test_metrics_is_read_only(client: TestClient) -> None:
    refused = client.post("/metrics")
    assert_problem(refused, 405, "http.405")
    assert "GET" in refused.headers["allow"]


def test_anonymous_requests_add_no_label_values(client: TestClient, rmsnorm: tuple[bytes, bytes | None]) -> None:
    """Thousands of distinct bogus methods and paths, and runs on a hundred distinct unknown devices: the set
    of series and the size of /metrics stay what one request of each kind made them."""
    mid = client.post("/v1/models", files=files(*rmsnorm)).json()["id"]
    run = f"/v1/models/{mid}/layers/{LAYER}/run"

    def bogus(i: int) -> None:
        assert client.request(f"X{i:04d}" + "M" * 2000, "/healthz").status_code in (400, 405)
        assert client.get(f"/nowhere/{i}").status_code == 404
        if i % 20 == 0:
            assert_problem(client.post(run, json={"device": f"NOSUCH{i}", "backends": ["openvino"]}), 400, "input")

    bogus(0)
    client.get("/metrics")  # the scrape's own series
    before = client.get("/metrics").text
    for i in range(1, 2001):
        bogus(i)
    after = client.get("/metrics").text
    series = [
        {line.split(" ")[0] for line in text.splitlines() if not line.startswith("#")} for text in (before, after)
    ]
    assert series[0] == series[1]
    assert len(after) < len(before) * 1.1, (len(before), len(after))
    assert 'method="other"' in after and 'device="unavailable"' in after
