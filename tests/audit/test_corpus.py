"""The audit of real models (the test corpus, see tests/models/corpus.py) at the default precision: on a bf16
CPU the layers before their reductions run in bf16, and that must not fail a healthy model. The verdict rests
on each reduction's own error and is the same in bf16 and in f32; the drift is still reported, split.
Of the reductions inside If bodies (silero), the taken branch's are audited, the other's listed."""

from __future__ import annotations

import pytest

from ovreduce import load_ir
from ovreduce.audit import audit_model
from tests.models.corpus import CORPUS, ir_path

STATIC = ("hey_mycroft_tflite", "hey_mycroft_v10", "silero_vad_half", "silero_vad_openvino_16k")


@pytest.mark.parametrize("model_id", STATIC)
def test_a_healthy_real_model_passes_in_every_precision(model_id: str) -> None:
    path = ir_path(next(m for m in CORPUS if m.id == model_id))
    docs = {p: audit_model(load_ir(path), precision=p) for p in ("default", "bf16", "f32")}
    for precision, doc in docs.items():
        assert doc.error is None, (precision, doc.error)
        assert doc.layers, precision
        assert doc.ok is True, (precision, [(layer.layer_name, layer.status) for layer in doc.layers])
    for precision in ("default", "bf16"):
        doc = docs[precision]
        audited = [layer for layer in doc.layers if layer.status != "not-audited"]
        top = [layer for layer in audited if layer.body_path is None]  # a body, run alone, has no f32 run
        assert all(layer.drift_split is not None for layer in top)
        # what the reductions executed in is what the rows say
        assert sum(doc.reduction_precisions.values()) == len(audited)
        for layer in top:
            split = layer.drift_split
            assert split is not None and split.total.max_abs is not None
            assert split.from_input.max_abs is not None and split.added.max_abs is not None
            assert split.total.max_abs <= split.from_input.max_abs + split.added.max_abs + 1e-12
        if doc.effective_precision == "bf16":  # the drift is there, and reported, not failed
            assert max(layer.drift_split.total.max_abs for layer in doc.layers if layer.drift_split) > 0
    assert all(layer.drift_split is None for layer in docs["f32"].layers)
