"""How long ``ovreduce check`` takes on an LLM-sized IR, next to OpenVINO reading the same file.

Run ``python bench/check_bench.py`` (``--help`` for options). The first run builds the model with
OpenVINO's Python API (``--blocks`` transformer-ish blocks: RMSNorm with ReduceMean/Sqrt/Divide, attention
with MatMul/Reshape/Transpose and Softmax or a ReduceMax/Exp/ReduceSum softmax, an MLP) and caches it
under bench/out/ (git-ignored). Each measurement is repeated and its median printed:

  (a) in process: ``ovreduce.load_ir`` + ``ovreduce.check_model``
  (b) in process: ``openvino.Core().read_model`` (the Core created once, outside the timing)
  (c) in process: a bare ``lxml.etree.parse`` of the XML
  (d) a whole ``ovreduce check model.xml`` process, wall clock
  (e) a Python process that only runs ``import openvino; openvino.Core().read_model(path)``

Targets (reported, not asserted): (a) <= (b) and (d) < (e).

``--chain N`` measures instead a generated N-layer chain IR (Parameter -> N-2 Relu -> Result, written
straight as XML, no OpenVINO needed): ``load_ir`` + ``check_model`` time and the peak RSS of a fresh
process that loads and checks it, next to the same for OpenVINO's ``read_model``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HIDDEN, HEADS = 16, 2
CLI_IMPORTS = "import ovreduce.cli, ovreduce.check, ovreduce.cli.render"  # what `ovreduce check` imports
MODEL_VERSION = 1  # bump when the generated graph changes, so the cache is rebuilt


def build_model(blocks: int, xml: Path) -> None:
    """A decoder-like stack of ``blocks`` blocks with small random weights, saved as IR at ``xml``."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    rng = np.random.default_rng(0)

    def const(values: Any, dtype: Any = np.float32) -> Any:
        return ops.constant(np.asarray(values, dtype=dtype))

    def weight(*shape: int) -> Any:
        return const(rng.standard_normal(shape) * 0.1)

    def rms_norm(x: Any) -> Any:
        mean = ops.reduce_mean(ops.multiply(x, x), const([-1], np.int64), True)
        root = ops.sqrt(ops.add(mean, const(1e-6)))
        return ops.multiply(ops.divide(x, root), weight(HIDDEN))

    def heads(x: Any) -> Any:
        split = ops.reshape(x, const([0, 0, HEADS, HIDDEN // HEADS], np.int64), True)
        return ops.transpose(split, const([0, 2, 1, 3], np.int64))

    def softmax(scores: Any, decomposed: bool) -> Any:
        if not decomposed:
            return ops.softmax(scores, -1)
        shifted = ops.subtract(scores, ops.reduce_max(scores, const([-1], np.int64), True))
        exp = ops.exp(shifted)
        return ops.divide(exp, ops.reduce_sum(exp, const([3], np.int32), True))

    x = ops.parameter(ov.PartialShape([1, -1, HIDDEN]), ov.Type.f32, name="input_embeds")
    h: Any = x
    for block in range(blocks):
        n = rms_norm(h)
        q, k, v = (heads(ops.matmul(n, weight(HIDDEN, HIDDEN), False, False)) for _ in range(3))
        scores = ops.multiply(ops.matmul(q, k, False, True), const(1.0 / np.sqrt(HIDDEN // HEADS)))
        attn = ops.matmul(softmax(scores, decomposed=block % 2 == 1), v, False, False)
        merged = ops.reshape(ops.transpose(attn, const([0, 2, 1, 3], np.int64)), const([0, 0, HIDDEN], np.int64), True)
        h = ops.add(h, ops.matmul(merged, weight(HIDDEN, HIDDEN), False, False))
        up = ops.relu(ops.matmul(rms_norm(h), weight(HIDDEN, 4 * HIDDEN), False, False))
        h = ops.add(h, ops.matmul(up, weight(4 * HIDDEN, HIDDEN), False, False))
    logits = ops.matmul(rms_norm(h), weight(HIDDEN, 32), False, False)
    xml.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([ops.result(logits)], [x], "bench_llm"), str(xml), compress_to_fp16=False)


def build_chain(layers: int, xml: Path) -> None:
    """A chain IR of ``layers`` layers: Parameter [1,?,16] f32 -> ``layers - 2`` Relu -> Result; no weights."""
    if layers < 2:
        raise SystemExit("--chain needs at least 2 layers")
    xml.parent.mkdir(parents=True, exist_ok=True)
    dims = "".join(f"<dim>{d}</dim>" for d in (1, -1, 16))
    port = '<port id="{}" precision="FP32">' + dims + "</port>"
    with xml.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0"?>\n<net name="chain" version="11">\n<layers>\n')
        out.write(
            '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,?,16" element_type="f32"/>'
            f"<output>{port.format(0)}</output></layer>\n"
        )
        relu = (
            f'type="Relu" version="opset1"><input>{port.format(0)}</input><output>{port.format(1)}</output></layer>\n'
        )
        for i in range(1, layers - 1):
            out.write(f'<layer id="{i}" name="relu_{i}" {relu}')
        out.write(
            f'<layer id="{layers - 1}" name="out" type="Result" version="opset1"><input>{port.format(0)}</input>'
            "</layer>\n</layers>\n<edges>\n"
        )
        for i in range(1, layers - 1):
            out.write(f'<edge from-layer="{i - 1}" from-port="{0 if i == 1 else 1}" to-layer="{i}" to-port="0"/>\n')
        last = layers - 2
        out.write(
            f'<edge from-layer="{last}" from-port="{0 if last == 0 else 1}" to-layer="{layers - 1}" to-port="0"/>\n'
        )
        out.write("</edges>\n</net>\n")


CHAIN_CODE = """
import resource, sys, time
start = time.perf_counter()
if sys.argv[1] == "ovreduce":
    import ovreduce
    model = ovreduce.load_ir(sys.argv[2])
    loaded = time.perf_counter()
    report = ovreduce.check_model(model)
    assert report.layer_count == int(sys.argv[3]), report.layer_count
    errors = sum(f.severity == "error" for f in report.findings)
    assert errors == 0, [f for f in report.findings if f.severity == "error"][:3]
else:
    import openvino
    openvino.Core().read_model(sys.argv[2])
    loaded = time.perf_counter()
end = time.perf_counter()
print(loaded - start, end - loaded, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def chain(layers: int, out: Path, repeat: int, openvino: bool) -> int:
    """Time and peak RSS of checking an N-layer chain, each in a fresh process (medians of ``repeat``)."""
    xml = out / f"chain_{layers}.xml"
    if not xml.exists():
        start = time.perf_counter()
        build_chain(layers, xml)
        print(f"built {xml} in {time.perf_counter() - start:.1f} s")
    print(f"chain: {xml} ({xml.stat().st_size / 1e6:.1f} MB XML), {layers} layers, repeat {repeat}")
    bare = "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    base = subprocess.run([sys.executable, "-c", bare], check=True, capture_output=True, text=True)
    base_kib = int(base.stdout)
    engines = ["ovreduce", "openvino"] if openvino else ["ovreduce"]
    for engine in engines:
        runs = []
        for _ in range(repeat):
            done = subprocess.run([sys.executable, "-c", CHAIN_CODE, engine, str(xml), str(layers)],
                                  check=True, capture_output=True, text=True)  # fmt: skip
            load, check, rss = done.stdout.split()
            runs.append((float(load), float(check), int(rss)))
        load_s = statistics.median(r[0] for r in runs)
        check_s = statistics.median(r[1] for r in runs)
        rss_mib = statistics.median(r[2] for r in runs) / 1024
        what = "load_ir + check_model" if engine == "ovreduce" else "Core().read_model"
        print(
            f"{engine:9} {what:24} {load_s + check_s:7.2f} s (load {load_s:.2f} s, check {check_s:.2f} s), "
            f"peak RSS {rss_mib:,.0f} MiB (+{rss_mib - base_kib / 1024:,.0f} MiB over a bare interpreter), "
            f"{(load_s + check_s) / layers * 1e6:.1f} us/layer"
        )
    return 0


def median_time(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def ovreduce_command() -> list[str]:
    script = Path(sys.executable).parent / "ovreduce"
    if script.exists():
        return [str(script)]
    found = shutil.which("ovreduce")
    return [found] if found else [sys.executable, "-m", "ovreduce.cli"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=500, help="transformer-ish blocks (default 500)")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions of each measurement (default 7)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="cache folder (default bench/out)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the model even if cached")
    parser.add_argument("--no-breakdown", action="store_true", help="skip the per-stage breakdown")
    parser.add_argument("--chain", type=int, metavar="N", help="measure an N-layer Relu chain instead")
    parser.add_argument("--no-openvino", action="store_true", help="with --chain: skip OpenVINO's read_model")
    args = parser.parse_args(argv)
    if args.chain is not None:
        return chain(args.chain, args.out, args.repeat, not args.no_openvino)

    xml = args.out / f"llm_{args.blocks}blocks_v{MODEL_VERSION}.xml"
    if args.rebuild or not xml.exists() or not xml.with_suffix(".bin").exists():
        start = time.perf_counter()
        build_model(args.blocks, xml)
        print(f"built {xml} in {time.perf_counter() - start:.1f} s")

    import openvino as ov
    from lxml import etree

    import ovreduce

    def run_ovreduce() -> ovreduce.ModelCheck:
        model = ovreduce.load_ir(xml)
        try:
            return ovreduce.check_model(model)
        finally:
            model.close()

    report = run_ovreduce()  # warm-up, and the figures for the header
    core = ov.Core()
    core.read_model(str(xml))  # warm-up
    errors = sum(f.severity == "error" for f in report.findings)
    print(
        f"model: {xml} ({xml.stat().st_size / 1e6:.1f} MB XML, {xml.with_suffix('.bin').stat().st_size / 1e6:.1f} MB "
        f"bin), {report.layer_count} layers, {len(report.reductions)} reductions, {errors} error findings"
    )
    print(f"python {sys.version.split()[0]}, openvino {ov.__version__}, {os.cpu_count()} CPUs, repeat {args.repeat}")

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    read_code = "import sys, openvino; openvino.Core().read_model(sys.argv[1])"
    rows: dict[str, tuple[float, list[float]]] = {
        "a": median_time(run_ovreduce, args.repeat),
        "b": median_time(lambda: core.read_model(str(xml)), args.repeat),
        "c": median_time(lambda: etree.parse(str(xml)), args.repeat),
        "d": median_time(
            lambda: subprocess.run([*ovreduce_command(), "check", str(xml)], stdout=subprocess.DEVNULL, env=env),
            args.repeat,
        ),
        "e": median_time(
            lambda: subprocess.run([sys.executable, "-c", read_code, str(xml)], check=True, env=env), args.repeat
        ),
    }
    labels = {
        "a": "ovreduce load_ir + check_model (in process)",
        "b": "openvino Core.read_model (in process)",
        "c": "lxml.etree.parse (in process)",
        "d": "`ovreduce check model.xml` (process)",
        "e": "python -c 'import openvino; Core().read_model' (process)",
    }
    print()
    print(f"{'':4}{'measurement':58}{'median':>10}{'min':>10}{'max':>10}")
    for key, (med, times) in rows.items():
        print(f"({key}) {labels[key]:58}{med * 1e3:8.0f} ms{min(times) * 1e3:7.0f} ms{max(times) * 1e3:7.0f} ms")
    a, b, c, d, e = (rows[k][0] for k in "abcde")
    print()
    print(f"(a)/(b) = {a / b:5.2f}   target <= 1.00  {'PASS' if a <= b else 'FAIL'}")
    print(f"(a)/(c) = {a / c:5.2f}")
    print(f"(d)/(e) = {d / e:5.2f}   target <  1.00  {'PASS' if d < e else 'FAIL'}")
    if not args.no_breakdown:
        breakdown(xml, args.repeat, env)
    return 0


def breakdown(xml: Path, repeat: int, env: dict[str, str]) -> None:
    """Where (a) and (d) spend their time, stage by stage (medians)."""
    import gc

    from ovreduce import check_model, load_ir
    from ovreduce.check import check_document
    from ovreduce.cli.render.text import check_text
    from ovreduce.infer import ShapeEngine

    model = load_ir(xml)
    engine = ShapeEngine(model)
    report = check_model(model, shapes=engine)

    def no_gc(fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            gc.disable()
            try:
                return fn()
            finally:
                gc.enable()

        return run

    def process(code: str) -> Callable[[], object]:
        return lambda: subprocess.run([sys.executable, "-c", code], check=True, env=env)

    def whole() -> object:
        m = load_ir(xml)
        try:
            return check_model(m)
        finally:
            m.close()

    stages = {
        "python -c pass (interpreter start)": process("pass"),
        "python -c 'import ovreduce.cli, .check, .render'": process(CLI_IMPORTS),
        "python -c 'import openvino'": process("import openvino"),
        "load_ir (lxml parse + IRModel)": lambda: load_ir(xml),
        "ShapeEngine(model)": lambda: ShapeEngine(model),
        "check_model(model, shapes=engine) (findings)": lambda: check_model(model, shapes=engine),
        "render.check_text": lambda: check_text(check_document([report])),
        "(a) with the cyclic GC disabled": no_gc(whole),
    }
    print()
    print(f"{'where the time goes':62}{'median':>10}")
    for label, fn in stages.items():
        med, _ = median_time(fn, repeat)
        print(f"    {label:58}{med * 1e3:8.0f} ms")
    model.close()


if __name__ == "__main__":
    sys.exit(main())
