"""Load benchmark of the REST API: requests/s and p50/p99 latency at 32 concurrent connections, loopback only.

    python bench/api_bench.py                 # --workers 1
    python bench/api_bench.py --workers auto  # one worker process per CPU

It starts ``ovreduce serve`` itself on a free 127.0.0.1 port (a temporary store), uploads
``ir_samples/rmsnorm.xml``, and measures, each bounded by ``--requests`` and ``--seconds``:

* ``GET /healthz``                          the ceiling: a trivial endpoint of the same app
* ``POST /v1/check``                        a small IR (rmsnorm, 6 KB), the same bytes every time
* ``POST /v1/check`` (distinct)             the same IR under a new model name each time: never cached
* ``POST /v1/models/{id}/layers/.../run``   a cached layer run (seeded input, numpy + OpenVINO)

Target: ``POST /v1/check`` at no less than 40% of ``/healthz``'s throughput with zero errors (both check
variants are judged). It prints PASS or FAIL; it never asserts. The client shares the machine's CPUs with
the server, so absolute figures depend on both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "ir_samples" / "rmsnorm.xml"
TARGET_RATIO = 0.40
Request = Callable[[int], tuple[str, str, bytes, dict[str, str]]]  # i -> method, path, body, headers


@dataclass
class Result:
    name: str
    requests: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _multipart(xml: bytes, bin_data: bytes | None) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [(b"xml", b"rmsnorm.xml", xml)] + ([(b"bin", b"rmsnorm.bin", bin_data)] if bin_data else [])
    body = b"".join(
        b'--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n%s\r\n" % (boundary.encode(), name, filename, data)
        for name, filename, data in parts
    )
    return body + b"--%s--\r\n" % boundary.encode(), f"multipart/form-data; boundary={boundary}"


async def _load(url: str, name: str, make: Request, *, requests: int, seconds: float, concurrency: int) -> Result:
    """``concurrency`` connections, each its own one-connection client (httpx's shared pool costs more CPU
    than the server's trivial endpoint, which would flatter every ratio)."""
    latencies: list[float] = []
    errors = 0
    issued = 0
    deadline = time.perf_counter() + seconds

    async def connection() -> None:
        nonlocal errors, issued
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
            while issued < requests and time.perf_counter() < deadline:
                i = issued
                issued += 1
                method, path, body, headers = make(i)
                start = time.perf_counter()
                try:
                    response = await client.request(method, path, content=body or None, headers=headers)
                    ok = response.status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies.append(time.perf_counter() - start)
                errors += not ok

    start = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(concurrency)))
    return Result(name, len(latencies), errors, time.perf_counter() - start, latencies)


def _start(workers: int, store: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    exe = Path(sys.executable).with_name("ovreduce")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ovreduce.cli"]
    args = ["serve", "--port", str(port), "--store", str(store), "--workers", str(workers), "--no-access-log",
            "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen([*command, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            # every worker process must be up: ask a few times
            if all(httpx.get(f"{url}/readyz", timeout=5).status_code == 200 for _ in range(workers * 2)):
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1", help="server worker processes, or 'auto' (CPU count)")
    parser.add_argument("--requests", type=int, default=5000, help="requests per scenario at most (5000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per scenario at most (10)")
    parser.add_argument("--concurrency", type=int, default=32, help="concurrent connections (32)")
    args = parser.parse_args(argv)
    workers = (os.cpu_count() or 1) if args.workers == "auto" else int(args.workers)

    xml = SAMPLE.read_bytes()
    bin_path = SAMPLE.with_suffix(".bin")
    bin_data = bin_path.read_bytes() if bin_path.exists() else None
    check_body, check_type = _multipart(xml, bin_data)
    with tempfile.TemporaryDirectory(prefix="ovreduce-bench.") as tmp:
        proc, url = _start(workers, Path(tmp) / "store")
        try:
            up = httpx.post(f"{url}/v1/models", content=check_body, headers={"content-type": check_type}, timeout=60)
            model_id = up.json()["id"]
            run_path = f"/v1/models/{model_id}/layers/rmsnorm%2Fvariance/run"
            run_body = b'{"seed": 0}'
            distinct = xml.replace(b'<net name="', b'<net name="@ID@-', 1)  # a new model, in the layout read fast

            scenarios: list[tuple[str, Request]] = [
                ("GET /healthz", lambda i: ("GET", "/healthz", b"", {})),
                ("POST /v1/check", lambda i: ("POST", "/v1/check", check_body, {"content-type": check_type})),
                ("POST /v1/check (distinct)", lambda i: ("POST", "/v1/check", *_distinct(distinct, bin_data, i))),
                ("POST .../run (cached layer)",
                 lambda i: ("POST", run_path, run_body, {"content-type": "application/json"})),
            ]  # fmt: skip
            results = []
            for name, make in scenarios:
                asyncio.run(_load(url, name, make, requests=200, seconds=5, concurrency=args.concurrency))  # warm-up
                results.append(asyncio.run(_load(url, name, make, requests=args.requests, seconds=args.seconds,
                                                 concurrency=args.concurrency)))  # fmt: skip
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    print(f"ovreduce API bench: {workers} worker(s), {args.concurrency} connections, {os.cpu_count()} CPUs, loopback")
    print(f"{'scenario':32} {'requests':>8} {'errors':>6} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for r in results:
        print(f"{r.name:32} {r.requests:8d} {r.errors:6d} {r.rps:9.1f} {r.pct(0.50):8.2f} {r.pct(0.99):8.2f}")
    ceiling = results[0].rps
    verdict = True
    for r in results[1:3]:
        ratio = r.rps / ceiling if ceiling else 0.0
        ok = ratio >= TARGET_RATIO and r.errors == 0
        verdict &= ok
        print(f"{r.name}: {ratio:.0%} of /healthz, {r.errors} errors -> {'PASS' if ok else 'FAIL'}")
    errors = sum(r.errors for r in results)
    print(f"{'PASS' if verdict and errors == 0 else 'FAIL'} (target: check >= {TARGET_RATIO:.0%} of /healthz, "
          f"zero errors; {errors} errors in all)")  # fmt: skip
    return 0


def _distinct(xml: bytes, bin_data: bytes | None, i: int) -> tuple[bytes, dict[str, str]]:
    body, ctype = _multipart(xml.replace(b"@ID@", str(i).encode()), bin_data)
    return body, {"content-type": ctype}


if __name__ == "__main__":
    sys.exit(main())
