"""Layers of many ports: ``ovreduce.load_ir`` + ``check_model`` at N and 4N ports, beside OpenVINO reading the same.

Run ``python bench/many_ports_bench.py`` (``--small N``, ``--repeat R``). The models are the test suite's
(tests/check/test_many_ports.py): a Split of N outputs feeding a Concat, feeding Results (IR v11 and v10), and a
Split of N constant parts whose values are folded into a reduction's axes. Each is timed in this process, the shortest
of ``--repeat`` runs, at N and at 4N ports. Four times the ports should cost about four times the time: target
(reported, not asserted) ovreduce's growth <= 8x, where a walk of a layer's ports for each of them costs 16x. OpenVINO's
own growth and the ratio ovreduce / OpenVINO at 4N are printed beside it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's ovreduce and tests, whatever is installed


def _shortest(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=2000, help="N: the ports of the smaller model (default 2000)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import openvino as ov

    from ovreduce.check import check_model
    from ovreduce.ir.parser import load_ir
    from tests.check.test_many_ports import MODELS, folded_split_files, written_model

    def ovreduce_check(path: Path) -> None:
        model = load_ir(path)
        try:
            check_model(model)
        finally:
            model.close()

    core = ov.Core()
    ok = True
    print(
        f"{'model':<36} {'N':>6} {'ovreduce N':>11} {'4N':>9} {'growth':>7} {'OpenVINO growth':>16} {'ov/OV at 4N':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        builders: dict[str, Callable[[int], Path]] = {
            label: (lambda n, make=make, label=label: written_model(folder, f"{label}{n}".replace(" ", "_"), make(n)))
            for label, make in MODELS.items()
        }
        builders["a Split's parts folded into axes"] = lambda n: folded_split_files(folder, n)
        for label, build in builders.items():
            small = args.small if "folded" not in label else min(args.small, 1024)  # (folds of <= 4,096 elements)
            paths = [build(small), build(4 * small)]
            ours = [_shortest(lambda p=p: ovreduce_check(p), args.repeat) for p in paths]
            theirs = [_shortest(lambda p=p: core.read_model(p), args.repeat) for p in paths]
            growth = ours[1] / ours[0]
            ok &= growth <= 8
            print(f"{label:<36} {small:>6} {ours[0] * 1000:>9.1f}ms {ours[1] * 1000:>7.1f}ms {growth:>6.1f}x "
                  f"{theirs[1] / theirs[0]:>15.1f}x {ours[1] / theirs[1]:>11.2f}")  # fmt: skip
    print(f"growth <= 8x for 4x the ports: {'PASS' if ok else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
