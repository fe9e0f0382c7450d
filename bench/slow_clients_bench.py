"""Slow-header clients against the server: does ``/healthz`` stay up? Loopback only, bounded in time.

    python bench/slow_clients_bench.py                   # ovreduce serve, as the image runs it
    python bench/slow_clients_bench.py --old-image-cmd   # the image's former CMD, for comparison:
                                                          # uvicorn --limit-concurrency 32, no header deadline

It starts the server itself on a free 127.0.0.1 port (a temporary store), opens ``--clients`` connections
(default 40) that send a request line and then one header line every ``--trickle`` seconds, never ending
their headers (a closed one reconnects at once, so that many are always there), and meanwhile asks
``GET /healthz`` back to back, each on a new connection as a health checker does, for ``--seconds``
(default 10). It prints the ``/healthz`` answers by status, errors, p50/p99/max latency, and how often the
server closed a slow client. It never asserts; tests/api/test_server.py has the test.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(store: Path, *, old: bool, header_timeout_s: float | None) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVREDUCE_")}
    env.update(PYTHONPATH=str(ROOT), OVREDUCE_STORE=str(store))
    if header_timeout_s is not None:
        env["OVREDUCE_HEADER_TIMEOUT_S"] = str(header_timeout_s)
    if old:
        command = [sys.executable, "-m", "uvicorn", "--factory", "ovreduce_api.main:create_app", "--host", "127.0.0.1",
                   "--port", str(port), "--limit-concurrency", "32", "--timeout-keep-alive", "5",
                   "--no-server-header", "--log-level", "error", "--no-access-log"]  # fmt: skip
    else:
        command = [sys.executable, "-m", "ovreduce.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                   "--log-level", "error", "--no-access-log"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc, port
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


class SlowClients:
    """``count`` connections trickling header lines until :meth:`stop`; reconnecting when closed."""

    def __init__(self, port: int, count: int, trickle_s: float) -> None:
        self.port = port
        self.count = count
        self.trickle_s = trickle_s
        self.closed_by_server = 0
        self.answers: Counter[str] = Counter()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError:
                time.sleep(0.1)
                continue
            with sock:
                sock.settimeout(0)
                try:
                    sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    line = 0
                    while not self._stop.wait(self.trickle_s):
                        answer = b""
                        try:
                            answer = sock.recv(64)
                        except BlockingIOError:
                            pass
                        else:  # an answer (408), or b"" (closed): the server let go of it
                            self._closed(answer.split(b"\r\n")[0].decode(errors="replace") or "closed")
                            break
                        sock.sendall(b"X-Slow-%d: x\r\n" % line)
                        line += 1
                except OSError as exc:
                    self._closed(type(exc).__name__)

    def _closed(self, how: str) -> None:
        with self._lock:
            self.closed_by_server += 1
            self.answers[how] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--trickle", type=float, default=0.5, help="seconds between a slow client's header lines")
    parser.add_argument("--header-timeout", type=float, default=None, help="OVREDUCE_HEADER_TIMEOUT_S (default 10)")
    parser.add_argument("--old-image-cmd", action="store_true", help="run the image's former uvicorn command")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ovreduce-slow-bench.") as tmp:
        proc, port = _start(Path(tmp) / "store", old=args.old_image_cmd, header_timeout_s=args.header_timeout)
        slow = SlowClients(port, args.clients, args.trickle)
        statuses: Counter[str] = Counter()
        latencies: list[float] = []
        try:
            slow.start()
            time.sleep(min(1.0, args.seconds / 4))  # let them all connect
            deadline = time.monotonic() + args.seconds
            # no keep-alive: a fresh connection for each request, as a health checker makes
            with httpx.Client(timeout=5, limits=httpx.Limits(max_keepalive_connections=0)) as http:
                while time.monotonic() < deadline:
                    started = time.perf_counter()
                    try:
                        status = str(http.get(f"http://127.0.0.1:{port}/healthz").status_code)
                    except httpx.HTTPError as exc:
                        status = type(exc).__name__
                    latencies.append(time.perf_counter() - started)
                    statuses[status] += 1
                    time.sleep(0.02)
        finally:
            slow.stop()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")

    server = "uvicorn --limit-concurrency 32 (the former image CMD)" if args.old_image_cmd else "ovreduce serve"
    total = sum(statuses.values())
    errors = total - statuses.get("200", 0)
    print(f"server: {server}; {args.clients} slow-header clients, a header line every {args.trickle:g} s")
    print(f"/healthz: {total} requests in {args.seconds:g} s, {errors} not 200: {dict(statuses)}")
    print(f"/healthz latency: p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, max {pct(1.0):.1f} ms")
    print(f"slow clients closed by the server: {slow.closed_by_server} {dict(slow.answers)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
