"""What a model's ``<rt_info><runtime_options>`` makes OpenVINO do at compile, and what the audit does about it.

optimum-intel writes ``KV_CACHE_PRECISION`` (f16) and ``ACTIVATIONS_SCALE_FACTOR`` (8.0) there. The KV cache: an
f32 audit and the f32 reference run keep a stateful model's KV cache in f32 (the inference precision does not set
it: OpenVINO's CPU keeps it in u8 by default, or in what the model's runtime options set), and the document names
the precision the compiled model keeps it in. Differential: the decode steps equal a compile of OpenVINO's own with
the KV cache asked in f32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
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
