"""How ``ovreduce audit`` scales: the same generated model with 500 and with 2,000 reductions, both audited
in one run.

Run ``python bench/audit_bench.py`` (``--help`` for options). The models are built with OpenVINO's Python
API and cached under bench/out/ (git-ignored): a chain over an f32 ``[4, 16]`` input in which every step is
a reduction over the last axis (Mean, Sum, Max, Min in turn, kept dims) subtracted from the running tensor,
with a MatMul after every tenth step. Each audit is timed as a whole and by stage, from the audit's own
progress reports (:class:`ovreduce.audit.AuditProgress`):

  reading    OpenVINO reading the model (twice: the audited and the plain run), the inputs, the marks
  compile    OpenVINO compiling the plain, the audited and the f32 run (each with its infer request)
  inference  the three inferences, fetching and indexing the outputs, the f32 run's read and node matching
  checks     recomputing and comparing every reduction (reference, tolerance, drift and its split)
  document   the final outputs' comparison and the sorted document

Next to them, as an anchor: OpenVINO alone compiling the unmarked model once (``Core.compile_model``).

Then a real exported LLM (``--llm``, default the tiny INT4 stateful llama of tests/exports) audited through
``--steps`` decode steps, against OpenVINO alone compiling it once and generating the same steps (target
<= 3x), with the audit's time by stage: it compiles three models (audited, plain, f32) and runs each through
every step, so most of it is OpenVINO's.

Then the cost of ``--target`` (``--target``, default f16; ``--only-target`` runs this part alone): the time the
audit spends emulating each reduction's input chain in the target precision against the time it spends in
its own NumPy reference on the captured inputs (``AuditTimings.target_seconds`` / ``reference_seconds``, target
<= 1x), on the large chain (reductions alone), on a stack of RMSNorms (``Power -> ReduceMean``: the chain
the emulation exists for, [16, 4096] activations) and on the LLM through its decode steps.
Each model is audited ``--repeat`` times (default 3, after a warm-up audit of a small chain) and the
medians are shown; the machine's load moves single figures by tens of percent. The ratio of each column
(2,000 / 500) is printed with PASS/FAIL against 4x (reported, not asserted), as is
the count of the audit's per-item steps (:class:`ovreduce.audit.AuditWork`), which does not depend on the
machine's speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's ovreduce, whatever is installed
MODEL_VERSION = 1  # bump when the generated graph changes, so the cache is rebuilt
LLAMA = HERE.parent / "tests" / "exports" / "llama_int4" / "openvino_model.xml"
STAGES = ("reading", "compile plain", "compile audited", "compile f32", "inference", "checks", "document")


def build_model(reductions: int, xml: Path) -> None:
    """The chain of ``reductions`` reductions described above, saved as IR at ``xml``."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    kinds = (ops.reduce_mean, ops.reduce_sum, ops.reduce_max, ops.reduce_min)
    x = ops.parameter([4, 16], np.float32, name="x")
    x.output(0).set_names({"x"})
    w = ops.constant(np.eye(16, dtype=np.float32) * 0.9)
    h: Any = x
    for i in range(reductions):
        r = kinds[i % len(kinds)](h, ops.constant(np.array([-1], np.int64)), True, name=f"red{i:05d}")
        h = ops.subtract(h, r, name=f"sub{i:05d}")
        if i % 10 == 9:
            h = ops.matmul(h, w, False, False, name=f"mm{i:05d}")
    xml.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([ops.result(h)], [x], f"audit_chain_{reductions}"), str(xml), compress_to_fp16=False)


def stage_of(announced: str) -> str:
    """The benchmark's column for one of the audit's progress stages."""
    if announced.startswith("compiling the "):  # "compiling the audited run" -> "compile audited"
        return "compile " + announced.split()[2]
    if announced.startswith("inference"):
        return "inference"
    if announced.startswith("checking"):
        return "checks"
    return "document" if announced == "done" else "reading"


def build_rms_stack(blocks: int, xml: Path) -> None:
    """``blocks`` RMSNorms in a row over an f32 ``[16, 4096]`` input, each ``x / sqrt(mean(x^2) + eps) * 1.5``."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([16, 4096], np.float32, name="x")
    x.output(0).set_names({"x"})
    h: Any = x
    for i in range(blocks):
        square = ops.power(h, ops.constant(np.float32(2.0)), name=f"pow{i:04d}")
        mean = ops.reduce_mean(square, ops.constant(np.array([-1], np.int64)), True, name=f"mean{i:04d}")
        root = ops.sqrt(ops.add(mean, ops.constant(np.float32(1e-6))))
        h = ops.multiply(ops.divide(h, root), ops.constant(np.float32(1.5)), name=f"gain{i:04d}")
    xml.parent.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([ops.result(h)], [x], f"rms_stack_{blocks}"), str(xml), compress_to_fp16=False)


def audit_once(xml: Path, precision: str, steps: int = 0, target: str | None = None) -> dict[str, Any]:
    """One audit of ``xml``: its total time, the time of each stage, its work count and verdict."""
    from ovreduce import load_ir
    from ovreduce.audit import AuditTimings, AuditWork, audit_model

    times = dict.fromkeys(STAGES, 0.0)
    current = ["reading", 0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        times[str(current[0])] += now - float(current[1])
        current[:] = [stage_of(stage), now]

    work, timings = AuditWork(), AuditTimings()
    model = load_ir(xml)
    gc.collect()
    start = time.perf_counter()
    current[1] = start
    try:
        doc = audit_model(
            model, precision=precision, progress=progress, work=work, steps=steps, target=target, timings=timings
        )
    finally:
        end = time.perf_counter()
        model.close()
    times[str(current[0])] += end - float(current[1])
    return {"total": end - start, **times, "work": work.total, "doc": doc, "reference": timings.reference_seconds,
            "check": timings.check_seconds, "target": timings.target_seconds,
            "device": timings.device_seconds}  # fmt: skip


def openvino_compile(xml: Path) -> float:
    """OpenVINO alone compiling the unmarked model once (read outside the timing)."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(xml))
    start = time.perf_counter()
    core.compile_model(model, "CPU", {})
    return time.perf_counter() - start


def openvino_generate(xml: Path, steps: int, precision: str) -> float:
    """OpenVINO alone doing what the audit of a stateful LLM runs: compile the model once and run the first run
    and ``steps`` greedy decode steps on one request (read outside the timing), with the audit's inputs."""
    import numpy as np
    import openvino as ov

    from ovreduce.audit import _decoding
    from ovreduce.backends.openvino import MarkedRun, compile_options, model_inputs

    core = ov.Core()
    model = core.read_model(str(xml))
    probe = core.read_model(str(xml))
    arrays, _, _ = model_inputs(probe, None, 0)
    next_inputs, _ = _decoding(probe, arrays, steps, 0)
    start = time.perf_counter()
    request = core.compile_model(model, "CPU", compile_options(precision)).create_infer_request()
    feeds: Any = arrays
    step = 0
    while feeds is not None:
        request.infer(feeds)
        step += 1
        logits = np.array(request.get_output_tensor(0).data)  # what the next step's token is chosen from
        feeds = next_inputs(step, MarkedRun([logits], [], None, {}))
    return time.perf_counter() - start


def llm(xml: Path, steps: int, precision: str, repeat: int) -> None:
    """The audit of a real exported LLM through ``steps`` decode steps against OpenVINO generating the same
    steps once (target <= 3x), with where the audit's time goes."""
    rows = [audit_once(xml, precision, steps) for _ in range(repeat)]
    total = statistics.median(r["total"] for r in rows)
    alone = statistics.median(openvino_generate(xml, steps, precision) for _ in range(repeat))
    ratio = total / alone
    doc = rows[-1]["doc"]
    print(f"\n{xml} ({len(doc.layers)} reductions, {steps} decode steps, effective precision "
          f"{doc.effective_precision}, ok={doc.ok}, complete={doc.complete})")  # fmt: skip
    print(f"{'audit':26} {total:>9.3f}s")
    print(f"{'OpenVINO generating alone':26} {alone:>9.3f}s")
    print(f"{'ratio':26} {ratio:>9.2f}x  {'PASS' if ratio <= 3 else 'FAIL'} (target <= 3x)")
    for stage in STAGES:
        print(f"  {stage:24} {statistics.median(r[stage] for r in rows):>9.3f}s")


def target_cost(models: dict[str, tuple[Path, int]], precision: str, target: str, repeat: int) -> None:
    """The emulation of ``target`` against the audit's own reference computation, per model (medians)."""
    print(f"\n--target {target}: its check against the audit's reference on the captured inputs, and against the "
          f"audit's whole check of each reduction (reference, tolerance, comparison); target <= 1x")  # fmt: skip
    print(f"{'':30} {'reference':>10} {'check':>10} {'target':>10} {'/reference':>11} {'/check':>7}")
    for label, (xml, steps) in models.items():
        runs = [audit_once(xml, precision, steps, target) for _ in range(repeat)]
        reference, check, emulation = (statistics.median(r[k] for r in runs) for k in ("reference", "check", "target"))
        device = statistics.median(r["device"] for r in runs)
        ratio = emulation / reference if reference else float("inf")
        whole = emulation / check if check else float("inf")
        doc = runs[-1]["doc"]
        counts = doc.target.counts if doc.target is not None else {}
        print(f"{label:30} {reference:>9.4f}s {check:>9.4f}s {emulation:>9.4f}s {ratio:>10.2f}x {whole:>6.2f}x"
              f"  {'PASS' if ratio <= 1 else 'FAIL'}/{'PASS' if whole <= 1 else 'FAIL'}"
              f"  ({len(doc.layers)} reductions: {counts})")  # fmt: skip
        if device:
            print(f"{'':30} and the chains' own run on the CPU in {target} (OpenVINO's compile and inference): "
                  f"{device:.4f}s")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs=2, default=(500, 2000), metavar=("SMALL", "LARGE"),
                        help="reductions in the two models (default 500 2000)")  # fmt: skip
    parser.add_argument("--precision", default="default", choices=("f32", "f16", "bf16", "default"),
                        help="the audit's precision (default: the device's own choice)")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="audits of each model; medians are shown (default 3)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="cache folder (default bench/out)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the models even if cached")
    parser.add_argument("--llm", type=Path, default=LLAMA,  # a stateful LLM export, audited through decode steps
                        help="an LLM export audited through --steps (default: a tiny INT4 llama)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=4, help="its decode steps (default 4)")
    parser.add_argument("--only-llm", action="store_true", help="only the LLM, not the generated chains")
    parser.add_argument("--target", default="f16", choices=("f16", "bf16"), help="the precision emulated (default f16)")
    parser.add_argument("--only-target", action="store_true", help="only the cost of --target")
    args = parser.parse_args(argv)
    if args.only_target:
        run_target(args)
        return 0
    if args.only_llm:
        audit_once(args.llm, args.precision, args.steps)  # warm-up: imports and first-call costs
        llm(args.llm, args.steps, args.precision, args.repeat)
        return 0

    import openvino as ov

    paths = {}
    for n in args.sizes:
        xml = args.out / f"audit_chain_{n}_v{MODEL_VERSION}.xml"
        if args.rebuild or not xml.exists() or not xml.with_suffix(".bin").exists():
            start = time.perf_counter()
            build_model(n, xml)
            print(f"built {xml} in {time.perf_counter() - start:.1f} s")
        paths[n] = xml
    print(f"python {sys.version.split()[0]}, openvino {ov.__version__}, {os.cpu_count()} CPUs, "
          f"precision {args.precision}")  # fmt: skip

    warm_up = args.out / f"audit_chain_10_v{MODEL_VERSION}.xml"
    if not warm_up.exists():
        build_model(10, warm_up)
    audit_once(warm_up, args.precision)  # imports and first-call costs, outside the figures
    rows = {}
    for n, xml in paths.items():
        runs = [audit_once(xml, args.precision) for _ in range(args.repeat)]
        rows[n] = {key: statistics.median(run[key] for run in runs) for key in ("total", *STAGES, "work")}
        rows[n]["openvino"] = statistics.median(openvino_compile(xml) for _ in range(args.repeat))
        doc = runs[-1]["doc"]
        totals = ", ".join(f"{run['total']:.2f}" for run in runs)
        print(f"{n} reductions: audited in {totals} s, {len(doc.layers)} reductions reported, ok={doc.ok}, "
              f"effective precision {doc.effective_precision}", flush=True)  # fmt: skip

    small, large = args.sizes
    columns = ["total", *STAGES, "work", "openvino"]
    labels = {"work": "work count", "openvino": "OpenVINO compile alone"}
    print()
    print(f"{'':26} {small:>10} {large:>10} {'ratio':>7}")
    for column in columns:
        a, b = rows[small][column], rows[large][column]
        ratio = b / a if a else float("inf")
        unit = (lambda v: f"{v:>10}") if column == "work" else (lambda v: f"{v:>9.3f}s")
        verdict = "PASS" if ratio <= large / small else "FAIL"
        mark = f"  {verdict} (target <= {large / small:g}x)" if column in ("total", "work") else ""
        print(f"{labels.get(column, column):26} {unit(a)} {unit(b)} {ratio:>6.2f}x{mark}")
    sums = {
        "OpenVINO's runs": ("compile plain", "compile audited", "compile f32", "inference"),
        "ovreduce's own work": ("reading", "checks", "document"),
    }
    for label, parts in sums.items():
        a, b = (sum(rows[n][part] for part in parts) for n in (small, large))
        print(f"{label:26} {a:>9.3f}s {b:>9.3f}s {b / a:>6.2f}x  ({' + '.join(p.split()[-1] for p in parts)})")
    llm(args.llm, args.steps, args.precision, args.repeat)
    run_target(args)
    return 0


def run_target(args: argparse.Namespace) -> None:
    """The models of :func:`target_cost`, built or taken from the cache."""
    large = args.out / f"audit_chain_{args.sizes[1]}_v{MODEL_VERSION}.xml"
    if args.rebuild or not large.exists():
        build_model(args.sizes[1], large)
    stack = args.out / f"rms_stack_100_v{MODEL_VERSION}.xml"
    if args.rebuild or not stack.exists():
        build_rms_stack(100, stack)
    warm_up = args.out / f"audit_chain_10_v{MODEL_VERSION}.xml"
    if not warm_up.exists():
        build_model(10, warm_up)
    audit_once(warm_up, args.precision, 0, args.target)  # imports and first-call costs, outside the figures
    models = {f"chain of {args.sizes[1]} reductions": (large, 0), "100 RMSNorms [16, 4096]": (stack, 0),
              f"LLM, {args.steps} decode steps": (args.llm, args.steps)}  # fmt: skip
    target_cost(models, args.precision, args.target, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
