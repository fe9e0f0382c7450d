"""Folder throughput of ``ovreduce check DIR``: serial (``-j 1``) against ``-j N`` (default: every core).

Run ``python bench/folder_bench.py`` (``--help`` for options). The first run builds a decoder-like IR with
``bench/check_bench.py``'s generator (``--blocks`` blocks) and copies it ``--models`` times into
bench/out/folder/ (git-ignored); each configuration is a whole ``ovreduce check --format json`` process,
repeated, median wall clock printed with models per second. The documents of every configuration must be
byte-identical; the script says so or fails. Target (reported, not asserted): ``-j 2`` >= 1.7x serial on two
cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _folder(blocks: int, models: int) -> Path:
    sys.path.insert(0, str(HERE))
    from check_bench import build_model  # the same generator as the check benchmark

    source = HERE / "out" / f"folder_src_{blocks}" / "model.xml"
    if not source.is_file():
        source.parent.mkdir(parents=True, exist_ok=True)
        build_model(blocks, source)
    folder = HERE / "out" / f"folder_{blocks}x{models}"
    if not folder.is_dir() or len(list(folder.glob("*.xml"))) != models:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i in range(models):
            shutil.copy(source, folder / f"m{i:03d}.xml")
            shutil.copy(source.with_suffix(".bin"), folder / f"m{i:03d}.bin")
    return folder


def _run(folder: Path, jobs: int) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ovreduce.cli", "check", str(folder), "--format", "json", "-j", str(jobs)],
        capture_output=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"ovreduce check -j {jobs} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=40, help="blocks of the generated IR (40: about 2,300 layers)")
    parser.add_argument("--models", type=int, default=24, help="copies of it in the folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="*", default=None, help="the -j values to compare with -j 1")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    jobs = args.jobs or sorted({2, cores})
    folder = _folder(args.blocks, args.models)
    print(f"{args.models} copies of a {args.blocks}-block IR in {folder}, {cores} cores, median of {args.repeat}")
    results: dict[int, tuple[float, bytes]] = {}
    for j in [1, *jobs]:
        runs = [_run(folder, j) for _ in range(args.repeat)]
        outputs = {out for _, out in runs}
        if len(outputs) != 1:
            raise SystemExit(f"-j {j}: the document differs between runs")
        results[j] = (statistics.median(s for s, _ in runs), runs[0][1])
    serial_time, serial_out = results[1]
    for j, (seconds, out) in results.items():
        same = "identical" if out == serial_out else "DIFFERENT"
        ratio = serial_time / seconds
        print(f"  -j {j:<3} {seconds * 1000:8.0f} ms  {args.models / seconds:6.2f} models/s  {ratio:5.2f}x serial  "
              f"document {same}")  # fmt: skip
        if out != serial_out:
            raise SystemExit(f"-j {j}: the document differs from the serial one")
    if 2 in results:
        ratio = serial_time / results[2][0]
        print(f"-j 2 / -j 1 throughput = {ratio:.2f}   target >= 1.70  {'ok' if ratio >= 1.7 else 'MISSED'}")


if __name__ == "__main__":
    main()
