"""A model that draws random values (a RandomUniform or Multinomial of seeds 0: SpeechT5's decoder prenet keeps its
dropout at inference) draws anew at every compile, as OpenVINO itself shows here: the audit's runs (audited, plain,
f32), each a compile of its own, would see other draws, and their differences were reported as drift and as OpenVINO's
fusions. The audit fixes such ops' seeds in the copies it compiles, so that its runs draw the same, and says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.audit import audit_model
from ovreduce.backends.openvino import fix_random_seeds

CORE = ov.Core()


def _dropout(xml: Path, seeds: tuple[int, int] = (0, 0)) -> Path:
    """x -> a dropout of rate 0.5 (a RandomUniform of x's shape, compared with the rate, kept values doubled) -> a
    mean over the last axis."""
    x = ops.parameter([4, 64], np.float32, name="x")
    noise = ops.random_uniform(ops.shape_of(x), ops.constant(np.float32(0)), ops.constant(np.float32(1)), "f32",
                               *seeds, name="drop/RandomUniform")  # fmt: skip
    keep = ops.greater_equal(noise, ops.constant(np.float32(0.5)))
    dropped = ops.select(keep, ops.multiply(x, ops.constant(np.float32(2))), ops.constant(np.float32(0)))
    mean = ops.reduce_mean(dropped, ops.constant(np.array([-1], np.int64)), True, name="pool/ReduceMean")
    ov.save_model(ov.Model([ops.result(mean)], [x], "dropout"), str(xml), compress_to_fp16=False)
    return xml


def _sampled(xml: Path) -> Path:
    """x -> softmax -> Multinomial of 16 samples (seeds 0) -> a sum of the samples, in f32."""
    x = ops.parameter([4, 10], np.float32, name="x")
    drawn = ops.multinomial(ops.softmax(x, -1), ops.constant(np.int64(16)), "i64", True, False, 0, 0, name="draw")
    total = ops.reduce_sum(ops.convert(drawn, "f32"), ops.constant(np.array([-1], np.int64)), False, name="total")
    ov.save_model(ov.Model([ops.result(total)], [x], "sampled"), str(xml), compress_to_fp16=False)
    return xml


def _compiled_twice(model: Any, feeds: dict[str, Any]) -> tuple[Any, Any]:
    """The first output of two compiles of ``model`` (its clones) on the same feeds."""
    return tuple(CORE.compile_model(model.clone(), "CPU")(feeds)[0].copy() for _ in range(2))  # type: ignore[return-value]


@pytest.mark.parametrize("make", [_dropout, _sampled], ids=["RandomUniform", "Multinomial"])
def test_fixed_seeds_make_two_compiles_draw_the_same(make: Any, tmp_path: Path) -> None:
    """OpenVINO's own behaviour: of seeds 0, two compiles of a RandomUniform draw differently (a Multinomial's, the
    first compile in a process and the next); once fixed, the same."""
    xml = make(tmp_path / "m.xml")
    model = CORE.read_model(str(xml))
    shape = tuple(model.inputs[0].get_partial_shape().to_shape())
    feeds = {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
    first, second = _compiled_twice(model, feeds)
    if make is _dropout:
        assert not np.array_equal(first, second)  # the draws are the compile's
    fixed, unfixed = fix_random_seeds(model)
    assert len(fixed) == 1 and fixed[0].split()[0] in ("RandomUniform", "Multinomial") and unfixed == []
    first, second = _compiled_twice(model, feeds)
    np.testing.assert_array_equal(first, second)


def test_seeds_the_model_gives_are_kept(tmp_path: Path) -> None:
    """A random op the model seeds already draws the same at every compile: nothing is changed, nothing said."""
    model = CORE.read_model(str(_dropout(tmp_path / "m.xml", (5, 7))))
    assert fix_random_seeds(model) == ([], [])
    (node,) = [n for n in model.get_ordered_ops() if n.get_type_name() == "RandomUniform"]
    assert (node.get_attributes()["global_seed"], node.get_attributes()["op_seed"]) == (5, 7)
    doc = audit_model(load_ir(tmp_path / "m.xml"), precision="f32").to_json()
    assert not any("random" in note for note in doc["notes"]), doc["notes"]


@pytest.mark.parametrize("precision", ["f32", "default", "f16"])
def test_an_audit_of_a_model_that_draws_compares_the_same_draws(tmp_path: Path, precision: str) -> None:
    """The audited, plain and f32 runs draw the same mask: the final outputs are identical (no fusion blamed), the
    reduction's drift is what its precision makes of it (none where every run computes in f32), and a drift limit does
    not fail it on the draws' difference. The note says what was done."""
    doc = audit_model(
        load_ir(_dropout(tmp_path / "m.xml")), precision=precision, fail_on_drift=None if precision == "f32" else 0.05
    ).to_json()  # (f32 on the CPU: no drift)
    (row,) = doc["layers"]
    assert row["status"] == "ok", row
    assert [f["identical"] for f in doc["final_outputs"]] == [True]
    assert not any("changed OpenVINO's graph" in note for note in doc["notes"]), doc["notes"]
    (said,) = [note for note in doc["notes"] if "draws random values" in note]
    assert "RandomUniform 'drop/RandomUniform'" in said and "fixed their seeds" in said, said
    if row["drift"] is not None and doc["effective_precision"] == "f32":
        assert row["drift"]["max_abs_error"] == 0.0, row["drift"]


def test_a_multinomial_is_fixed_too(tmp_path: Path) -> None:
    doc = audit_model(load_ir(_sampled(tmp_path / "m.xml")), precision="f32").to_json()
    assert [f["identical"] for f in doc["final_outputs"]] == [True]
    assert any("Multinomial 'draw'" in note and "fixed their seeds" in note for note in doc["notes"]), doc["notes"]
