"""Every reduction of real models (ONNX, TFLite, Paddle, an IR v10) as OpenVINO reads them, found and checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ovreduce import check_model, load_ir
from ovreduce._openvino import bodies as subgraph_bodies
from ovreduce._openvino import core
from ovreduce.reports.check import ReductionCheck
from ovreduce.shapes import PartialShape
from tests.models.corpus import CORPUS, CorpusModel, CorpusUnavailableError, Package, ir_path, wheel_path

# What-if shapes for the models with dynamic inputs (ovreduce resolves the rest natively).
RESHAPES = {
    "melspectrogram_tflite": {"serving_default_input:0": "[2,1280]"},
    "ppocr_rec_paddle": {"x": "[2,3,48,320]"},
}


def _reductions(ov_model: Any, *, bodies: bool) -> list[str]:
    """The friendly names of OpenVINO's Reduce* nodes, and with ``bodies`` those of sub-graph bodies too."""
    names = []
    for node in ov_model.get_ordered_ops():
        if node.get_type_name().startswith("Reduce"):
            names.append(node.get_friendly_name())
        if bodies:
            for _, body in subgraph_bodies(node):
                names += _reductions(body, bodies=True)
    return names


@pytest.mark.parametrize("bodies", [False, True], ids=["top-level", "bodies-included"])
def test_every_reduction_is_found(corpus_model: tuple[CorpusModel, Path], bodies: bool) -> None:
    """ovreduce finds the reductions OpenVINO itself sees, at the top level and inside If/Loop/TensorIterator
    bodies (silero-vad's If bodies hold the ReduceProd of its LSTM's Size)."""
    model, xml = corpus_model
    seen = _reductions(core().read_model(xml), bodies=bodies)
    ir = load_ir(xml)
    try:
        found = [r.layer_name for r in check_model(ir).reductions if bodies or r.body_path is None]
    finally:
        ir.close()
    expected = model.top_level_reductions + (model.body_reductions if bodies else 0)
    assert len(seen) == expected, f"{model.id}: the corpus table is stale"
    assert sorted(found) == sorted(seen)


@pytest.mark.parametrize("engine", ["native", "openvino"])
def test_check_is_clean(corpus_model: tuple[CorpusModel, Path], engine: str) -> None:
    model, xml = corpus_model
    ir = load_ir(xml)
    try:
        checked = check_model(ir, engine="openvino" if engine == "openvino" else "native")
    finally:
        ir.close()
    assert checked.ir_version == (10 if model.legacy_v10 else 11)
    assert checked.ok, [f.message for f in checked.findings if f.severity == "error"]
    assert not [f for f in checked.findings if f.severity != "info"]
    for r in checked.reductions:
        assert r.status == "ok" and r.inferred_output_resolved, r
        if engine == "openvino":
            # every reduction is matched to its OpenVINO node (in IR v10 too, where the outputs' producers
            # are renamed by the legacy conversion) and both engines agree
            assert r.openvino_output_resolved and r.openvino_output_shape == r.inferred_output_shape, r


def _reshaped(model_id: str) -> list[ReductionCheck]:
    model = next(m for m in CORPUS if m.id == model_id)
    reshape = {name: PartialShape.parse(text) for name, text in RESHAPES[model_id].items()}
    ir = load_ir(ir_path(model))
    try:
        checked = check_model(ir, reshape=reshape, engine="openvino")
    finally:
        ir.close()
    assert checked.ok, [f.message for f in checked.findings if f.severity == "error"]
    return [r for r in checked.reductions if r.inferred_output_resolved]


@pytest.mark.parametrize("model_id", sorted(RESHAPES))
def test_reshape_is_compatible_with_openvino(model_id: str) -> None:
    resolved = _reshaped(model_id)
    assert resolved
    for r in resolved:
        assert r.openvino_output_resolved and r.openvino_output_shape is not None, r
        native = PartialShape.from_json(r.inferred_output_shape)
        assert native.compatible(PartialShape.from_json(r.openvino_output_shape)), r


@pytest.mark.parametrize(
    "model_id",
    [
        "melspectrogram_tflite",
        "ppocr_rec_paddle",
    ],
)
def test_reshape_agrees_with_openvino(model_id: str) -> None:
    for r in _reshaped(model_id):
        assert r.inferred_output_shape == r.openvino_output_shape, r


def test_a_failed_download_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OVREDUCE_MODEL_CACHE", str(tmp_path))
    missing = Package("silero-vad", "0.0.0.999", "silero_vad-0.0.0.999-py3-none-any.whl", "0" * 64)
    with pytest.raises(CorpusUnavailableError, match=r"pip download silero-vad==0\.0\.0\.999 failed"):
        wheel_path(missing)


def test_the_fast_reader_builds_what_the_careful_one_builds(corpus_model: tuple[CorpusModel, Path]) -> None:
    """Real converted models (IR v10 and v11, sub-graph bodies, rt_info): the fast reader builds the careful
    reader's model, lines and indices included, for every model without sub-graph bodies (those it leaves to the
    careful reader)."""
    from ovreduce.ir.weights import Weights
    from tests.ir.test_readers import assert_same, careful, fast

    _, path = corpus_model
    xml = path.read_bytes()
    weights = Weights(path.with_suffix(".bin"))
    got = fast(xml, weights)
    want = careful(xml, weights)
    assert (got is None) == any(layer.bodies for layer in want.layers)
    if got is not None:
        assert_same(got, want)
