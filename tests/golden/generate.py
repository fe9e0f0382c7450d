"""Record the documents ovreduce gives for the bundled samples and a few ONNX models as golden files.

    python tests/golden/generate.py          # rewrite tests/golden/docs/ (and tests/golden/models/*.onnx)
    python tests/golden/generate.py '*.check.sarif'   # rewrite only the cases whose names match

Each case is one command line, run in-process from the repository root; its standard output is stored as
it is (text, SARIF), with the measured times set to 0 (JUnit) or, for JSON, parsed with the measured times set
to 0. ``test_golden.py`` runs the same cases and compares: the documents may gain fields, never lose or change
one (see :func:`contains`).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
MODELS = HERE / "models"
SAMPLES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "ir_samples").rglob("*.xml"))
ONNX_MODELS = ("rms_norm_chain", "layer_norm_chain", "several_reductions", "qlinear", "reduce_mean_13_all_axes")
# Keys whose values are measured (times, rounding errors of the runtime's kernels, which differ between CPUs:
# an AVX2 and an AVX512 kernel round differently): compared loosely, see contains(); a comparison's measured
# figures are checked against its own stated tolerances instead (see consistent()).
MEASURED = {"seconds", "max_abs_error", "max_rel_error", "mean_abs_error", "max_abs_diff", "max_rel_diff",
            "dequantized_max_abs_diff", "worst_index", "required_atol", "required_rtol", "allowance_max"}  # fmt: skip
# Facts about the machine that ran (the OpenVINO version, what its devices execute): not recorded; tests of
# their own check them against OpenVINO.
MACHINE = {"openvino", "devices"}
# Samples also audited against a target precision (audit --target f16)
TARGET_SAMPLES = ("rmsnorm_f16",)


def reduction_layers(sample: str) -> list[str]:
    text = (ROOT / sample).read_text()
    return re.findall(r'<layer id="(\d+)" name="[^"]*" type="Reduce', text)


def cases() -> Iterator[tuple[str, list[str]]]:
    """(golden file name, command line) for every recorded document."""
    for sample in SAMPLES:
        stem = sample.removeprefix("ir_samples/").removesuffix(".xml").replace("/", "__")
        for fmt in ("json", "text", "junit", "sarif"):
            yield f"{stem}.check.{fmt}", ["check", sample, "--format", fmt, *(["-v"] if fmt == "text" else [])]
        yield f"{stem}.check-openvino.json", ["check", sample, "--format", "json", "--engine", "openvino"]
        yield f"{stem}.inspect.json", ["inspect", sample, "--format", "json"]
        yield f"{stem}.inspect-all.json", ["inspect", sample, "--format", "json", "--all"]
        yield f"{stem}.inspect.text", ["inspect", sample]
        yield f"{stem}.inspect-all.text", ["inspect", sample, "--all"]
        yield f"{stem}.audit.json", ["audit", sample, "--format", "json", "--precision", "f32"]
        if stem in TARGET_SAMPLES:
            yield (
                f"{stem}.audit-f16.json",
                ["audit", sample, "--format", "json", "--precision", "f32", "--target", "f16"],
            )
        for layer in reduction_layers(sample):
            yield f"{stem}.run-{layer}.json", ["run", sample, "--layer", layer, "--format", "json"]
    for name in ONNX_MODELS:
        yield f"onnx__{name}.conform.json", ["conform", f"tests/golden/models/{name}.onnx", "--format", "json"]


def run_cli(argv: list[str]) -> tuple[int, str]:
    from ovreduce.cli import main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    forced = os.environ.pop("OVREDUCE_WIDTH", None)  # the recorded text is the piped form: no width
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    finally:
        os.chdir(cwd)
        if forced is not None:
            os.environ["OVREDUCE_WIDTH"] = forced
    return rc, out.getvalue() + ("" if not err.getvalue() else "\n[stderr]\n" + err.getvalue())


_JUNIT_TIME = re.compile(r'\btime="[0-9.]+"')
_NODE = re.compile(r"While validating node '[^']*' with friendly_name '[^']*'")


def normalise(name: str, text: str) -> Any:
    """The stored form: JSON documents parsed with measured values zeroed, other output as text."""
    if name.endswith(".junit"):  # measured check times
        return _JUNIT_TIME.sub('time="0"', text)
    if not name.endswith(".json") or "[stderr]" in text:
        return text
    return _zero(json.loads(text, parse_constant=_not_json))


def _not_json(token: str) -> Any:
    raise ValueError(f"{token} is not JSON: every document spells a non-finite float as a string")


def _zero(doc: Any) -> Any:
    if isinstance(doc, str):  # OpenVINO names the nodes it builds from a process-wide counter
        return _NODE.sub("While validating node '...' with friendly_name '...'", doc)
    if isinstance(doc, dict):
        return {k: (0 if k == "seconds" else _zero(v)) for k, v in doc.items() if k not in MACHINE}
    if isinstance(doc, list):
        return [_zero(v) for v in doc]
    return doc


def contains(new: Any, old: Any, where: str = "$") -> list[str]:
    """Differences that matter between a recorded document ``old`` and a new one: a missing or changed
    value (fields the new document adds are fine; measured values only need the same kind: a number,
    or null)."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{where}: was an object, now {type(new).__name__}"]
        out = []
        for key, value in old.items():
            if key not in new:
                out.append(f"{where}.{key}: missing")
            elif key in MEASURED:
                if (value is None) != (new[key] is None):
                    out.append(f"{where}.{key}: {value!r} -> {new[key]!r}")
            else:
                out += contains(new[key], value, f"{where}.{key}")
        return out
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{where}: {old!r} -> {new!r}"]
        if where.endswith(".layers") and all(isinstance(o, dict) and "status" in o for o in old):
            # an audit's rows, worst first: their order follows the measured errors, so rows are matched by
            # layer and the order is checked against the new document's own figures (see consistent())
            new, old = (sorted(rows, key=lambda row: str(row["layer_id"])) for rows in (new, old))
        return [d for i, (n, o) in enumerate(zip(new, old, strict=True)) for d in contains(n, o, f"{where}[{i}]")]
    return [] if new == old else [f"{where}: {old!r} -> {new!r}"]


# An audit's row order: failing rows, then established ones, then those that establish nothing or were not audited.
_RANK = {"error": 0, "drift": 0, "ok": 1, "not-established": 2, "not-audited": 3}


def consistent(doc: Any, where: str = "$") -> list[str]:
    """What the measured figures of a document contradict: a comparison that says ``ok`` needs no larger
    tolerance than it states (``required_atol <= atol``, ``required_rtol <= rtol``), and an audit's rows are
    failing first, then by status and decreasing own error."""
    out = []
    if isinstance(doc, dict):
        if doc.get("ok") is True and doc.get("exact") is False:
            for need, given in (("required_atol", "atol"), ("required_rtol", "rtol")):
                if doc.get(need) is not None and doc[need] > doc[given]:
                    out.append(f"{where}: ok, but {need} {doc[need]!r} > {given} {doc[given]!r}")
        rows = doc.get("layers") if doc.get("schema") == "ovreduce.audit/v1" else None
        if rows:
            keys = [(_RANK[row["status"]], -_error(row["max_rel_error"])) for row in rows]
            if keys != sorted(keys):
                out.append(f"{where}.layers: not failing first, then by decreasing error: {keys}")
        for key, value in doc.items():
            out += consistent(value, f"{where}.{key}")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += consistent(value, f"{where}[{i}]")
    return out


def _error(value: float | str | None) -> float:
    """A relative error as an audit sorts it: null (nothing compared) and the strings "NaN", "Infinity" as
    infinite."""
    return math.inf if value is None or isinstance(value, str) else value


def write_models() -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from tests.conform import onnx_models as m

    MODELS.mkdir(exist_ok=True)
    builders = {
        "rms_norm_chain": m.rms_norm_chain,
        "layer_norm_chain": m.layer_norm_chain,
        "several_reductions": m.several_reductions,
        "qlinear": lambda: m.qlinear_reduce_mean(
            np.uint8,
            [2, 6],
            [2, 1],
            axes=[1],
            keepdims=1,
            data_scale=0.5,
            data_zero_point=3,
            reduced_scale=0.25,
            reduced_zero_point=7,
        ),
        "reduce_mean_13_all_axes": lambda: m.reduce_mean(13, [2, 3, 4]),
    }
    for name in ONNX_MODELS:
        m.save(builders[name](), MODELS / f"{name}.onnx")


def main(patterns: list[str]) -> None:
    """Every golden file (``patterns``: only the cases whose names match one of these globs, e.g.
    ``'*.check.sarif'``; the models and the other files are left as they are)."""
    from fnmatch import fnmatch

    if not patterns:
        write_models()
        DOCS.mkdir(exist_ok=True)
        for old in DOCS.iterdir():
            old.unlink()
    for name, argv in cases():
        if patterns and not any(fnmatch(name, p) for p in patterns):
            continue
        rc, text = run_cli(argv)
        doc = {"argv": argv, "exit": rc, "output": normalise(name, text)}
        (DOCS / (name + ".golden")).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(rc, name)


if __name__ == "__main__":
    main(sys.argv[1:])
