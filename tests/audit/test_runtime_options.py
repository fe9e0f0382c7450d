"""What a model's ``<rt_info><runtime_options>`` makes OpenVINO do at compile, and what the audit does about it.

optimum-intel writes ``KV_CACHE_PRECISION`` (f16) and ``ACTIVATIONS_SCALE_FACTOR`` (8.0) there. The KV cache: an
f32 audit and the f32 reference run keep a stateful model's KV cache in f32 (the inference precision does not set
it: OpenVINO's CPU keeps it in u8 by default, or in what the model's runtime options set), and the document names
the precision the compiled model keeps it in. Differential: the decode steps equal a compile of OpenVINO's own with
the KV cache asked in f32.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from openvino.op.util import Variable, VariableInfo

from ovreduce.audit import audit_model
from ovreduce.backends.openvino import precision_name, read_model, run_steps
from ovreduce.ir.parser import load_ir

HEADS, DIM, EMBED = 2, 16, 32
F32_CACHE = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}


def _kv_model(path: Path, kv_cache: str | None) -> Path:
    """A stateful attention block: ``inputs_embeds`` projected to q, k, v; k and v appended to the past read from
    state (ReadValue -> Gather(beam_idx) -> Concat -> Assign), SDPA, then an RMSNorm's ReduceMean. ``kv_cache``: the
    ``KV_CACHE_PRECISION`` its runtime options set (None: none)."""
    rng = np.random.default_rng(0)
    x = ops.parameter([-1, -1, EMBED], np.float32, name="inputs_embeds")
    x.output(0).get_tensor().set_names({"inputs_embeds"})
    beam = ops.parameter([-1], np.int32, name="beam_idx")
    beam.output(0).get_tensor().set_names({"beam_idx"})

    def project(t: Any) -> Any:
        y = ops.matmul(t, ops.constant((rng.standard_normal((EMBED, HEADS * DIM)) * 0.3).astype(np.float32)), False,
                       False)  # fmt: skip
        y = ops.reshape(y, ops.constant(np.array([0, 0, HEADS, DIM], np.int64)), True)
        return ops.transpose(y, ops.constant(np.array([0, 2, 1, 3], np.int64)))

    q, k, v = project(x), project(x), project(x)
    pasts, sinks = [], []
    for name, t in (("k", k), ("v", v)):
        info = VariableInfo()
        info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, HEADS, -1, DIM]), ov.Type.f32, name
        variable = Variable(info)
        batch = ops.gather(ops.shape_of(x), ops.constant(np.array([0])), ops.constant(0))
        empty = ops.concat([batch, ops.constant(np.array([HEADS, 0, DIM], np.int64))], 0)
        read = ops.read_value(ops.broadcast(ops.constant(np.float32(0)), empty), variable)
        past = ops.concat([ops.gather(read, beam, ops.constant(0)), t], 2)
        pasts.append(past)
        sinks.append(ops.assign(past, variable))
    attention = ops.scaled_dot_product_attention(q, pasts[0], pasts[1], causal=True)
    o = ops.reshape(ops.transpose(attention, ops.constant(np.array([0, 2, 1, 3], np.int64))),
                    ops.constant(np.array([0, 0, HEADS * DIM], np.int64)), True)  # fmt: skip
    mean = ops.reduce_mean(ops.power(o, ops.constant(np.float32(2))), ops.constant(np.array([-1], np.int64)), True)
    mean.set_friendly_name("norm/ReduceMean")
    y = ops.multiply(o, ops.power(ops.add(mean, ops.constant(np.float32(1e-6))), ops.constant(np.float32(-0.5))))
    result = ops.result(y)
    result.output(0).get_tensor().set_names({"logits"})
    model = ov.Model([result], sinks, [x, beam], "kv")
    if kv_cache is not None:
        model.set_rt_info(kv_cache, ["runtime_options", "KV_CACHE_PRECISION"])
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _feeds(step: int) -> dict[int, np.ndarray]:
    tokens = 6 if step == 0 else 1
    embeds = np.random.default_rng(step + 1).standard_normal((1, tokens, EMBED)).astype(np.float32)
    return {0: embeds, 1: np.zeros(1, np.int32)}


def _openvino_steps(path: Path, config: dict[str, str], steps: int) -> list[np.ndarray]:
    """The outputs of the first run and of each decode step, with OpenVINO's API alone."""
    request = ov.Core().compile_model(str(path), "CPU", config).create_infer_request()
    return [np.array(request.infer(_feeds(step))[0], copy=True) for step in range(steps + 1)]


def test_f32_decode_steps_read_an_f32_kv_cache(tmp_path: Path) -> None:
    path = _kv_model(tmp_path / "kv.xml", "f16")  # as optimum-intel writes it
    runs = run_steps(read_model(path), [], _feeds(0), "CPU", "f32", lambda step, _: _feeds(step) if step <= 3 else None)
    exact = _openvino_steps(path, F32_CACHE, 3)
    for run, expected in zip(runs, exact, strict=True):
        np.testing.assert_array_equal(run.outputs[0], expected)
    assert [run.kv_cache_precision for run in runs] == ["f32"] * 4
    # the hint alone keeps the export's f16 cache: its decode steps are not an f32 run's
    hinted = _openvino_steps(path, {"INFERENCE_PRECISION_HINT": "f32"}, 3)
    assert all(not np.array_equal(a, b) for a, b in zip(hinted[1:], exact[1:], strict=True))


def _audit(path: Path, **kwargs: Any) -> Any:
    model = load_ir(path)
    try:
        return audit_model(model, **kwargs)
    finally:
        model.close()


def test_an_f32_audit_says_its_kv_cache_is_f32(tmp_path: Path) -> None:
    doc = _audit(_kv_model(tmp_path / "kv.xml", None), precision="f32", steps=2)
    kept = [note for note in doc.notes if "KV cache" in note]
    assert len(kept) == 1 and "is kept in f32 in the audited and plain runs" in kept[0], doc.notes


def test_the_default_precision_names_the_kv_cache_openvino_keeps(tmp_path: Path) -> None:
    for kv_cache in ("f16", None):  # the export's runtime options; the CPU's own default (u8)
        path = _kv_model(tmp_path / f"kv_{kv_cache}.xml", kv_cache)
        compiled = ov.Core().compile_model(str(path), "CPU")
        keeps = precision_name(compiled.get_property("KV_CACHE_PRECISION"))
        doc = _audit(path, steps=2)
        kept = [note for note in doc.notes if "KV cache" in note]
        assert len(kept) == 1 and f"is kept in {keeps} in the audited and plain runs" in kept[0], doc.notes
        if doc.effective_precision != "f32":
            assert "the f32 run keeps it in f32" in kept[0], kept


@pytest.mark.parametrize("device", ["AUTO", "AUTO:CPU", "HETERO:CPU", "MULTI:CPU"])
def test_a_virtual_device_keeps_the_f32_kv_cache_too(tmp_path: Path, device: str) -> None:
    """A virtual device (``AUTO``, ``HETERO:CPU``...) lists no KV-cache property of its own, but passes one given to
    the device it runs on: an f32 audit through it asks the f32 cache as on that device (its decode steps equal
    OpenVINO's own f32 compile with the cache in f32), and its note says so, though the compiled model does not
    report the precision."""
    path = _kv_model(tmp_path / "kv.xml", "f16")
    runs = run_steps(
        read_model(path), [], _feeds(0), device, "f32", lambda step, _: _feeds(step) if step <= 3 else None
    )
    exact = _openvino_steps(path, F32_CACHE, 3)
    for run, expected in zip(runs, exact, strict=True):
        np.testing.assert_array_equal(run.outputs[0], expected)
    doc = _audit(path, precision="f32", steps=2, device=device)
    kept = [note for note in doc.notes if "KV cache" in note]
    assert len(kept) == 1 and "is kept in f32 (as asked" in kept[0], doc.notes


def test_a_virtual_device_is_not_said_to_lack_native_reductions(tmp_path: Path) -> None:
    """AUTO reports no inference precision; the target's note says that, not that it ran "an unknown precision"
    and lacks the target's reductions (the device it chose may execute them natively)."""
    doc = _audit(_kv_model(tmp_path / "kv.xml", None), precision="f32", device="AUTO", target="bf16")
    assert doc.target is not None and doc.target.emulated
    assert not any("does not execute" in note for note in doc.target.notes), doc.target.notes
    assert any("AUTO is a virtual device" in note for note in doc.target.notes), doc.target.notes


# -- ACTIVATIONS_SCALE_FACTOR: a GPU's f16 compile divides the input of every MatMul and Convolution by it ----------
LLAMA = Path(__file__).resolve().parents[1] / "exports" / "llama_int4" / "openvino_model.xml"


def _norm_model(
    path: Path, factor: str | None, *, scaled_down: bool = False, between: str | None = None, norm: str = "rms"
) -> Path:
    """``x -> MatMul(w) -> h -> Power(h, 2) -> ReduceMean -> + eps -> ^-0.5 -> h * it``: an RMSNorm after a
    projection, with ``factor`` as the model's ``ACTIVATIONS_SCALE_FACTOR`` (None: none). ``scaled_down``: the
    MatMul's input multiplied by 1/8 first, as OpenVINO's ScaleDownSingleLayer makes it. ``between``: an op put
    between the MatMul and the Power (``Relu``). ``norm``: ``rms``, ``divide`` (the reciprocal as ``1 / Sqrt``), or
    what OpenVINO's RMSFusion does not fuse: ``log`` (``Log(mean + eps)``, no norm), ``axis1`` (the RMSNorm with its
    mean over the tokens, not the last axis)."""
    rng = np.random.default_rng(0)
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    source = ops.multiply(x, ops.constant(np.float32(1 / 8))) if scaled_down else x
    h = ops.matmul(source, ops.constant((rng.standard_normal((64, 64)) * 40).astype(np.float32)), False, False)
    if between == "Relu":
        h = ops.relu(h)
    square = ops.power(h, ops.constant(np.float32(2)))
    square.set_friendly_name("norm/pow")
    mean = ops.reduce_mean(square, ops.constant(np.array([1 if norm == "axis1" else -1], np.int64)), True)
    mean.set_friendly_name("norm/ReduceMean")
    shifted = ops.add(mean, ops.constant(np.float32(1e-6)))
    if norm == "log":
        y = ops.log(shifted)
    elif norm == "divide":
        y = ops.multiply(h, ops.divide(ops.constant(np.float32(1)), ops.sqrt(shifted)))
    else:
        y = ops.multiply(h, ops.power(shifted, ops.constant(np.float32(-0.5))))
    model = ov.Model([ops.result(y)], [x], "norm")
    if factor is not None:
        model.set_rt_info(factor, ["runtime_options", "ACTIVATIONS_SCALE_FACTOR"])
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _x() -> dict[str, np.ndarray]:  # |h| reaches ~900: h^2 past f16's 65504, (h/8)^2 well within it
    return {"x": (np.random.default_rng(1).standard_normal((1, 8, 64)) * 0.8).astype(np.float32)}


def _row(doc: Any, name: str) -> Any:
    return next(layer.target for layer in doc.layers if layer.layer_name == name)


def test_the_f16_target_judges_the_values_a_device_applying_the_factor_holds(tmp_path: Path) -> None:
    doc = _audit(_norm_model(tmp_path / "m.xml", "8.0"), inputs=_x(), precision="f32", target="f16")
    # as OpenVINO's pass makes the graph: its input scaled down before the MatMul, the model run with no factor
    scaled = _audit(_norm_model(tmp_path / "s.xml", None, scaled_down=True), inputs=_x(), precision="f32",
                    target="f16")  # fmt: skip
    unscaled = _audit(_norm_model(tmp_path / "u.xml", None), inputs=_x(), precision="f32", target="f16")
    row, expected, before = (_row(d, "norm/ReduceMean") for d in (doc, scaled, unscaled))
    assert before.status == "overflow" and expected.status == "headroom", (before, expected)
    # the overflow is certain on every f16 device that does not apply the factor (a GPU with systolic arrays): the row
    # is that overflow, and fails; what a device applying the factor meets is in its message
    assert row.status == before.status and row.failed and doc.target is not None and not doc.target.ok, row
    assert row.largest == pytest.approx(before.largest, rel=1e-6)
    assert "as a device that does not apply ACTIVATIONS_SCALE_FACTOR 8" in row.message, row.message
    assert "for a device that applies it: headroom: " + expected.message.split(" (")[0] in row.message, row.message
    assert "divided by ACTIVATIONS_SCALE_FACTOR 8" in row.message
    assert any("ACTIVATIONS_SCALE_FACTOR 8" in note for note in doc.target.notes)


def test_bf16_and_an_unscaled_chain_are_judged_as_they_are(tmp_path: Path) -> None:
    with_factor, without = _norm_model(tmp_path / "m.xml", "8.0"), _norm_model(tmp_path / "u.xml", None)
    bf16 = _audit(with_factor, inputs=_x(), precision="f32", target="bf16")
    rows = [_row(bf16, "norm/ReduceMean"),
            _row(_audit(without, inputs=_x(), precision="f32", target="bf16"), "norm/ReduceMean")]  # fmt: skip
    # (a CPU running bf16 natively names the RMS kernel after the norm's last Multiply, which each model names apart)
    assert [replace(row, message=re.sub(r"its kernel '[^']*'", "its kernel", row.message)) for row in rows[:1]] == [
        replace(row, message=re.sub(r"its kernel '[^']*'", "its kernel", row.message)) for row in rows[1:]
    ]
    assert bf16.target is not None and any("applies it in f16 only" in note for note in bf16.target.notes)
    # a chain no MatMul feeds: the model's own values, whatever the factor
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    mean = ops.reduce_mean(ops.power(x, ops.constant(np.float32(2))), ops.constant(np.array([-1], np.int64)), True)
    mean.set_friendly_name("mean")
    model = ov.Model([ops.result(ops.add(mean, ops.constant(np.float32(1e-6))))], [x], "plain")
    ov.save_model(model, str(tmp_path / "p.xml"), compress_to_fp16=False)
    model.set_rt_info("8.0", ["runtime_options", "ACTIVATIONS_SCALE_FACTOR"])
    ov.save_model(model, str(tmp_path / "f.xml"), compress_to_fp16=False)
    feeds = {"x": (np.random.default_rng(2).standard_normal((1, 8, 64)) * 300).astype(np.float32)}
    rows = [_row(_audit(tmp_path / f"{n}.xml", inputs=feeds, precision="f32", target="f16"), "mean") for n in "pf"]
    assert rows[0] == rows[1] and rows[0].status == "overflow"


def test_a_chain_the_scaling_is_not_followed_through_says_so(tmp_path: Path) -> None:
    doc = _audit(_norm_model(tmp_path / "m.xml", "8.0", between="Relu"), inputs=_x(), precision="f32", target="f16")
    row = _row(doc, "norm/ReduceMean")
    assert row.status == "overflow" and row.failed, row  # as a device that does not apply the factor runs it
    assert "cannot follow OpenVINO's activations scaling through Relu" in row.message
    assert "as a device that does not apply ACTIVATIONS_SCALE_FACTOR 8" in row.message, row.message
    assert "for a device that applies it, not established" in row.message, row.message


def test_a_malformed_factor_is_a_note(tmp_path: Path) -> None:
    doc = _audit(_norm_model(tmp_path / "m.xml", "eight"), inputs=_x(), precision="f32", target="f16")
    assert _row(doc, "norm/ReduceMean").status == "overflow"
    assert doc.target is not None and any("'eight', which is not a finite number" in n for n in doc.target.notes)


def test_an_optimum_intel_llm_export_is_judged_scaled_where_matmuls_feed_its_norms() -> None:
    doc = _audit(LLAMA, precision="f32", target="f16")
    assert doc.target is not None and any("ACTIVATIONS_SCALE_FACTOR 8" in note for note in doc.target.notes)
    scaled = [layer for layer in doc.layers if "divided by ACTIVATIONS_SCALE_FACTOR 8" in layer.target.message]
    own = [layer for layer in doc.layers if "ACTIVATIONS_SCALE_FACTOR" not in layer.target.message]
    # the first layer's norm takes the embeddings (a Gather of the table): no MatMul before it
    assert any("layers.0.input_layernorm" in layer.layer_name for layer in own), [layer.layer_name for layer in own]
    assert any("post_attention_layernorm" in layer.layer_name for layer in scaled), [
        layer.layer_name for layer in scaled
    ]
    # no overflow; the tiny model's means, divided by 8, are f16 subnormals: one off by more than f16's rtol against
    # its mean plus eps is inaccurate, judged relatively (a tolerance grown with the elements averaged hid it)
    assert not any(layer.target.status == "overflow" for layer in scaled)
    for layer in scaled:
        if layer.target.failed:
            assert layer.target.status == "inaccurate" and "absolute tolerance" in layer.target.message, layer.target


def _gated_model(path: Path, factor: str | None, *, scaled_down: bool = False, reshaped: bool = False) -> Path:
    """``x -> MatMul -> h``; ``Softmax(x -> MatMul) -> g``; ``ReduceMax(h * g)``: a product of a projection's output
    and weights of the model's own values (a MoE's routing weights), as the passes carry the factor through it once.
    ``reshaped``: the weights reach the product through a Reshape, as a MoE export routes them."""
    rng = np.random.default_rng(0)
    x = ops.parameter([1, 8, 64], np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    source = ops.multiply(x, ops.constant(np.float32(1 / 8))) if scaled_down else x
    h = ops.matmul(source, ops.constant((rng.standard_normal((64, 64)) * 6000).astype(np.float32)), False, False)
    gate = ops.softmax(ops.matmul(x, ops.constant(rng.standard_normal((64, 64)).astype(np.float32)), False, False), -1)
    if reshaped:
        flat = ops.reshape(gate, ops.constant(np.array([8, 64], np.int64)), False)
        gate = ops.reshape(flat, ops.constant(np.array([1, 8, 64], np.int64)), False)
    total = ops.reduce_max(ops.multiply(h, gate), ops.constant(np.array([-1], np.int64)), True)
    total.set_friendly_name("gated")
    model = ov.Model([ops.result(total)], [x], "gated")
    if factor is not None:
        model.set_rt_info(factor, ["runtime_options", "ACTIVATIONS_SCALE_FACTOR"])
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("reshaped", [False, True])
def test_a_product_with_the_models_own_values_carries_the_factor_once(tmp_path: Path, reshaped: bool) -> None:
    """The weights of the model's own values are not divided by the factor, nor is anything above them that feeds them
    (the Reshape a MoE routes them through): the row is that of the model with the projection's input divided by 8."""
    doc = _audit(_gated_model(tmp_path / "m.xml", "8.0", reshaped=reshaped), inputs=_x(), precision="f32",
                 target="f16")  # fmt: skip
    scaled = _audit(_gated_model(tmp_path / "s.xml", None, scaled_down=True, reshaped=reshaped), inputs=_x(),
                    precision="f32", target="f16")  # fmt: skip
    unscaled = _audit(_gated_model(tmp_path / "u.xml", None, reshaped=reshaped), inputs=_x(), precision="f32",
                      target="f16")  # fmt: skip
    row, expected, before = (_row(d, "gated") for d in (doc, scaled, unscaled))
    assert expected.status == "headroom", expected
    assert before.status == "overflow" and row.status == "overflow" and row.failed, row  # without the factor applied
    assert "for a device that applies it: headroom: " + expected.message.split(" (")[0] in row.message, row.message


def test_a_scaled_rms_norm_is_judged_as_the_gpus_fused_rms_kernel_computes_it(tmp_path: Path) -> None:
    """A device applying the factor cancels it at the RMSNorm only because it runs the norm fused into its RMS kernel,
    which takes the f16 input and accumulates the squares and their mean in f32 (OpenVINO's GPU RMS kernel: the
    accumulator of an f16 input is f32). Activations of std 0.03, divided by 8, square to f16 subnormals: computed as
    separate f16 ops (the same values, no factor, the norm left unfused) the mean is inaccurate, and fused it is not."""
    feeds = {"x": (np.random.default_rng(0).standard_normal((1, 8, 64)) * 0.03 / 320).astype(np.float32)}  # h: 0.03
    doc = _audit(_norm_model(tmp_path / "m.xml", "8.0"), inputs=feeds, precision="f32", target="f16")
    apart = _audit(_norm_model(tmp_path / "s.xml", None, scaled_down=True), inputs=feeds, precision="f32", target="f16")
    row, unfused = _row(doc, "norm/ReduceMean"), _row(apart, "norm/ReduceMean")
    assert unfused.status == "inaccurate", unfused
    assert row.status == "headroom" and not row.failed, row
    assert "fused into its RMS kernel" in row.message and "squares and their mean in f32" in row.message, row.message
    assert [stage.kept for stage in row.stages] == [False, True, True], row.stages


def _conv_state_model(path: Path) -> Path:
    """A stateful model with no attention, as a Mamba-style export keeps its conv and SSM states: each run's mean of
    ``inputs_embeds`` over its tokens folded into a state variable (ReadValue -> Gather(beam_idx) -> Assign), which
    scales the embeddings before an RMSNorm's ReduceMean."""
    x = ops.parameter([-1, -1, EMBED], np.float32, name="inputs_embeds")
    x.output(0).get_tensor().set_names({"inputs_embeds"})
    beam = ops.parameter([-1], np.int32, name="beam_idx")
    beam.output(0).get_tensor().set_names({"beam_idx"})
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, EMBED]), ov.Type.f32, "conv"
    variable = Variable(info)
    batch = ops.gather(ops.shape_of(x), ops.constant(np.array([0])), ops.constant(0))
    shape = ops.concat([batch, ops.constant(np.array([EMBED], np.int64))], 0)
    read = ops.gather(ops.read_value(ops.broadcast(ops.constant(np.float32(1)), shape), variable), beam,
                      ops.constant(0))  # fmt: skip
    state = ops.add(ops.multiply(read, ops.constant(np.float32(0.5))),
                    ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), False))  # fmt: skip
    y = ops.multiply(x, ops.unsqueeze(state, ops.constant(np.array([1], np.int64))))
    mean = ops.reduce_mean(ops.multiply(y, y), ops.constant(np.array([-1], np.int64)), True, name="norm/ReduceMean")
    result = ops.result(ops.multiply(y, mean))
    result.output(0).get_tensor().set_names({"logits"})
    ov.save_model(ov.Model([result], [ops.assign(state, variable)], [x, beam], "conv"), str(path),
                  compress_to_fp16=False)  # fmt: skip
    return path


def _written_states(path: Path, config: dict[str, str]) -> set[str]:
    """The precisions OpenVINO's execution graph writes the model's states in (its MemoryOutput layers)."""
    compiled = ov.Core().compile_model(str(path), "CPU", config)
    return {op.get_rt_info()["outputPrecisions"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()
            if op.get_rt_info()["layerType"].astype(str) == "MemoryOutput"}  # fmt: skip


@pytest.mark.parametrize("precision", [None, "f32"])
def test_a_state_no_attention_holds_is_not_called_a_kv_cache(tmp_path: Path, precision: str | None) -> None:
    """A Mamba-style model's states (no attention, no KV cache) were said to be "the KV cache ... kept in f16" (the
    compiled model's KV_CACHE_PRECISION, which governs no such state), where OpenVINO writes them in the inference
    precision (bf16 on a CPU with bf16). Such states are named as the execution graph writes them, and not called a
    KV cache."""
    path = _conv_state_model(tmp_path / "conv.xml")
    doc = _audit(path, steps=2, **({"precision": precision} if precision else {}))
    assert doc.error is None, doc.error
    assert not any("KV cache" in note for note in doc.notes), doc.notes
    (written,) = _written_states(path, {"INFERENCE_PRECISION_HINT": "f32"} if precision else {})
    kept = [note for note in doc.notes if "state" in note and "kept in" in note]
    assert len(kept) == 1 and f"are kept in {written} in the audited and plain runs" in kept[0], doc.notes


def test_the_kv_cache_note_names_no_other_state(tmp_path: Path) -> None:
    doc = _audit(_kv_model(tmp_path / "kv.xml", "f16"), steps=1)
    assert not any("other state" in note or "no attention" in note for note in doc.notes), doc.notes


@pytest.mark.parametrize(("norm", "status"), [("divide", "headroom"), ("log", "overflow"), ("axis1", "overflow")])
def test_only_a_mean_square_openvinos_rms_fusion_fuses_is_judged_scaled(tmp_path: Path, norm: str, status: str) -> None:
    """OpenVINO's RMSFusion (``transformations/common_optimizations/rms_fusion.cpp``, which the GPU plugin runs) fuses
    ``x * 1/Sqrt(ReduceMean(x², last axis) + eps)`` only: the factor cancels there, and a device applying it has
    headroom. A log-energy ``Log(mean(x²) + eps)``, or a norm whose mean runs over another axis, is not fused, and the
    factor is multiplied back before the Power: its squares of activations near 900 overflow f16 there too, as the
    same model without the factor says. (Without the factor applied, every variant overflows: the row fails.)"""
    doc = _audit(_norm_model(tmp_path / "m.xml", "8.0", norm=norm), inputs=_x(), precision="f32", target="f16")
    plain = _audit(_norm_model(tmp_path / "u.xml", None, norm=norm), inputs=_x(), precision="f32", target="f16")
    row, unscaled = _row(doc, "norm/ReduceMean"), _row(plain, "norm/ReduceMean")
    assert unscaled.status == "overflow", unscaled
    assert row.status == "overflow" and row.failed, row  # as a device that does not apply the factor runs it
    fused = "for a device that applies it: headroom" in row.message and "fused into its RMS kernel" in row.message
    assert fused == (status == "headroom"), row.message
