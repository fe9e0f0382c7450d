"""How fast ``ovreduce run``'s two backends reduce a large f32 tensor, next to the machine's memory bandwidth.

Run ``python bench/run_bench.py`` (``--help`` for options). One f32 input of at least 256 MiB
(default [64, 1024, 1024]) is reduced with ReduceMean over four axis patterns; each time is the best of
several repetitions and every throughput is *input bytes / time*:

  copy        a plain NumPy copy of the input into a preallocated array (the memory bandwidth)
  reference   ``ovreduce.reference.openvino.reduce("ReduceMean", x, axes)`` (f64 accumulation)
  openvino    ``OpenVINOBackend("CPU", "f32").infer(spec, [x])`` on a cache hit
  bare        the same layer compiled by hand: ``compiled([x])`` and an InferRequest with shared inputs

and, on the innermost pattern, a first run (which compiles) against a cached second run.

Targets (printed as PASS/FAIL, never asserted): the cache-hit path within 10% of the bare compiled-model
call; the reference at >= 0.5x the copy bandwidth for the innermost and all-axes patterns.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import openvino as ov
from openvino import opset13 as ops

from ovreduce.backends.base import LayerSpec
from ovreduce.backends.openvino import LayerCache, OpenVINOBackend
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.reference.evaluate import reduce
from ovreduce.shapes import PartialShape

PATTERNS: dict[str, tuple[int, ...]] = {"innermost": (2,), "outermost": (0,), "middle": (1,), "all": (0, 1, 2)}


def best(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """The fastest of ``repeat`` timed calls of each function, in seconds; the calls are interleaved (one of
    each per round) so that a busy machine slows them all alike."""
    times: dict[str, float] = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name] = min(times[name], time.perf_counter() - start)
    return times


def spec_for(shape: tuple[int, ...], axes: tuple[int, ...]) -> LayerSpec:
    return LayerSpec(
        type="ReduceMean", keep_dims=False, data_type=ELEMENT_TYPES["f32"], data_shape=PartialShape.static(shape),
        axes_type=ELEMENT_TYPES["i64"], axes_shape=PartialShape.static([len(axes)]), axes=axes,
        layer_name="bench_mean",
    )  # fmt: skip


def bare_compiled(shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """The same single-layer model, built and compiled directly with OpenVINO's API."""
    data = ops.parameter(list(shape), ov.Type.f32, name="data")
    node = ops.reduce_mean(data, ops.constant(np.array(axes, np.int64)), False)
    return ov.Core().compile_model(ov.Model([node], [data], "bare"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="64,1024,1024", help="input shape (default 64,1024,1024 = 256 MiB)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement (best is kept)")
    args = parser.parse_args()
    shape = tuple(int(d) for d in args.shape.split(","))
    if len(shape) != 3:
        parser.error("--shape needs three dims")

    x: npt.NDArray[np.float32] = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    nbytes = x.nbytes
    print(f"input: f32 {list(shape)} = {nbytes / 2**20:.0f} MiB; {os.cpu_count()} CPUs; openvino {ov.__version__}")
    print(f"best of {args.repeat} (interleaved); throughput = input bytes / time; ratios to the copy: >1 is faster\n")

    dst = np.empty_like(x)
    cache = LayerCache()
    backend = OpenVINOBackend("CPU", "f32", cache=cache)
    widths = [10, 9, 9, 9, 9, 9, 9, 9]
    print(row(["pattern", "copy ms", "copy GB/s", "ref ms", "ref GB/s", "ref/copy", "ov ms", "ov GB/s"], widths)
          + "  ov/copy")  # fmt: skip
    ratios: dict[str, float] = {}
    for name, axes in PATTERNS.items():
        spec = spec_for(shape, axes)
        first = backend.infer(spec, [x])  # compiles; every later call is a cache hit
        assert first.ok, first.error
        t = best(
            {
                "copy": lambda: np.copyto(dst, x),
                "ref": lambda axes=axes: reduce("ReduceMean", x, axes),
                "ov": lambda spec=spec: backend.infer(spec, [x]),
            },
            args.repeat,
        )
        ratios[name] = t["copy"] / t["ref"]
        cells = [name, f"{t['copy'] * 1e3:.1f}", f"{gbps(nbytes, t['copy']):.2f}", f"{t['ref'] * 1e3:.1f}",
                 f"{gbps(nbytes, t['ref']):.2f}", f"{ratios[name]:.2f}x", f"{t['ov'] * 1e3:.1f}",
                 f"{gbps(nbytes, t['ov']):.2f}"]  # fmt: skip
        print(row(cells, widths) + f"  {t['copy'] / t['ov']:.2f}x")

    # First run (compiles) against cached runs, on the innermost pattern.
    spec = spec_for(shape, PATTERNS["innermost"])
    cache.clear()
    misses = cache.misses
    start = time.perf_counter()
    backend.infer(spec, [x])
    first_s = time.perf_counter() - start
    assert cache.misses - misses == 1

    # The cache-hit path against the same layer compiled by hand, interleaved, many rounds (they are short).
    compiled = bare_compiled(shape, PATTERNS["innermost"])
    request = compiled.create_infer_request()
    t = best(
        {
            "cached": lambda: backend.infer(spec, [x]),
            "call": lambda: compiled([x]),
            "request": lambda: request.infer([x], share_inputs=True),
        },
        max(args.repeat, 20),
    )
    assert cache.misses - misses == 1  # every run after the first was a cache hit
    cached_s, bare_s = t["cached"], min(t["call"], t["request"])
    overhead = cached_s / bare_s
    print(
        f"\ninnermost, first run (compile + infer): {first_s * 1e3:.1f} ms; cached run: {cached_s * 1e3:.2f} ms "
        f"(first/cached {first_s / cached_s:.0f}x; the compile costs ~{(first_s - cached_s) * 1e3:.0f} ms)"
    )
    print(f"bare compiled([x]): {t['call'] * 1e3:.2f} ms; InferRequest.infer(share_inputs=True): "
          f"{t['request'] * 1e3:.2f} ms; cache-hit path / bare: {overhead:.3f}")  # fmt: skip

    print("\ntargets:")
    print(f"  {'PASS' if overhead <= 1.10 else 'FAIL'}  OpenVINO cache-hit path within 10% of the bare call "
          f"({(overhead - 1) * 100:+.1f}%)")  # fmt: skip
    for name in ("innermost", "all"):
        print(f"  {'PASS' if ratios[name] >= 0.5 else 'FAIL'}  reference >= 0.5x copy bandwidth, {name}: "
              f"{ratios[name]:.2f}x")  # fmt: skip
    print(f"\npeak RSS: {peak_rss_gib():.2f} GiB")


if __name__ == "__main__":
    main()
