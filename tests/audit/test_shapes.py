"""Shapes that reach the runtime in ``audit``: ``--shape`` (ovreduce's and benchmark_app's syntax) and
``--input`` files reshape the whole model before it compiles, a dynamic rank included; dynamic dims nobody
fixed get a default that OpenVINO's own shape inference accepts, and the document names them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovreduce.audit import audit_model
from ovreduce.backends.openvino import DEFAULT_FILLS, IMAGE_SIZE
from ovreduce.errors import InputError
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape
from tests.cli.inprocess import run_cli


def _axes(*axes: int) -> Any:
    return ops.constant(np.array(axes, np.int64))


def _save(model: Any, path: Path) -> Path:
    ov.save_model(model, path, compress_to_fp16=False)
    return path


def cnn(path: Path) -> Path:
    """``x [?,3,?,?] -> AvgPool 5x5 -> ReduceMean over H, W 'gap'``: a spatial size of 1 is refused by
    OpenVINO's shape inference (the kernel is larger than the data), 8 is accepted."""
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), ov.Type.f32, name="x")
    pool = ops.avg_pool(x, [1, 1], [0, 0], [0, 0], [5, 5], exclude_pad=True, name="pool")
    gap = ops.reduce_mean(pool, _axes(2, 3), False, name="gap")
    return _save(ov.Model([gap], [x], "cnn"), path)


def any_rank(path: Path) -> Path:
    """``y`` of dynamic rank -> ReduceSum over axis 0 'sum0'; ``x [2..6,4]`` -> ReduceMax over axis 1 'max1'."""
    y = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="y")
    x = ops.parameter(ov.PartialShape([ov.Dimension(2, 6), 4]), ov.Type.f32, name="x")
    outputs = [ops.reduce_sum(y, _axes(0), True, name="sum0"), ops.reduce_max(x, _axes(1), False, name="max1")]
    return _save(ov.Model(outputs, [y, x], "any_rank"), path)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("audit_shapes")
    return {"cnn": cnn(folder / "cnn.xml"), "any_rank": any_rank(folder / "any_rank.xml")}


def _audit(path: Path, **kwargs: Any) -> Any:
    model = load_ir(path)
    try:
        return audit_model(model, precision="f32", **kwargs)
    finally:
        model.close()


def test_dynamic_rank_is_refused_without_a_shape(files: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="input 'y' has a dynamic rank; give its shape") as info:
        _audit(files["any_rank"])
    assert info.value.parameter == "shapes"


@pytest.mark.parametrize("spec", ["y=[3,5,2]", "y[3,5,2]", "y[3,5,2],x[6,4]", "y=[3,5,2],x=[6,4]"])
def test_shape_reaches_the_runtime_in_either_syntax(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], spec: str
) -> None:
    status, out, err = run_cli(capsys, "audit", str(files["any_rank"]), "--precision", "f32", "--shape", spec,
                               "--format", "json")  # fmt: skip
    assert status == 0, err
    doc = json.loads(out)
    inputs = {i["name"]: i for i in doc["inputs"]}
    assert inputs["y"]["shape"] == [3, 5, 2] and inputs["y"]["defaulted_dims"] == []
    given_x = "x" in spec
    assert inputs["x"]["shape"] == ([6, 4] if given_x else [2, 4])  # an interval's default: its lower bound
    assert inputs["x"]["defaulted_dims"] == ([] if given_x else [0])
    layers = {layer["layer_name"]: layer for layer in doc["layers"]}
    assert layers["sum0"]["input_shape"] == [3, 5, 2] and layers["sum0"]["ok"]
    assert layers["max1"]["ok"] and layers["max1"]["max_abs_error"] == 0


def test_input_file_of_dynamic_rank_reaches_the_runtime(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    data = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    np.save(tmp_path / "y.npy", data)
    status, out, err = run_cli(capsys, "audit", str(files["any_rank"]), "--precision", "f32",
                               "--input", f"y={tmp_path}/y.npy", "--format", "json")  # fmt: skip
    assert status == 0, err
    doc = json.loads(out)
    sum0 = next(layer for layer in doc["layers"] if layer["layer_name"] == "sum0")
    assert sum0["input_shape"] == [2, 3, 4, 5] and sum0["ok"]
    assert doc["inputs"][0] == {"name": "y", "shape": [2, 3, 4, 5], "element_type": "f32", "origin": "given",
                                "defaulted_dims": []}  # fmt: skip


def test_pooling_gets_a_default_its_shape_inference_accepts(files: dict[str, Path], tmp_path: Path) -> None:
    """Setting every dynamic dim to 1 breaks a CNN with pooling; the batch stays 1, H and W take the first
    default OpenVINO accepts: of an image (3 channels), no less than an image's least default; of other data, 8."""
    doc = _audit(files["cnn"])
    assert doc.error is None, doc.error
    (x,) = doc.inputs
    assert x.shape == (1, 3, IMAGE_SIZE, IMAGE_SIZE) and x.defaulted_dims == (0, 2, 3)
    (gap,) = doc.layers
    assert gap.input_shape == (1, 3, IMAGE_SIZE - 4, IMAGE_SIZE - 4) and gap.ok
    assert any(f"dynamic dimension 2 (?) set to {IMAGE_SIZE}, an image's least default" in n for n in doc.notes)
    x = ops.parameter(ov.PartialShape([-1, 5, -1, -1]), ov.Type.f32, name="x")  # five channels: no image
    pool = ops.avg_pool(x, [1, 1], [0, 0], [0, 0], [5, 5], exclude_pad=True, name="pool")
    doc = _audit(_save(ov.Model([ops.reduce_mean(pool, _axes(2, 3), False, name="gap")], [x]), tmp_path / "m.xml"))
    assert DEFAULT_FILLS[:2] == (1, 8) and doc.inputs[0].shape == (1, 5, 8, 8), doc.inputs
    assert doc.layers[0].input_shape == (1, 5, 4, 4) and doc.layers[0].ok
    assert any("dynamic dimension 2 (?) set to 8" in n for n in doc.notes)


def _classifier(folder: Path, config: dict[str, Any] | None, preprocessor: dict[str, Any] | None = None) -> Path:
    """An image classifier as optimum-intel exports it (ConvNeXt's shape): ``pixel_values [?,3,?,?]``, a stem of
    stride 4, a downsampling of stride 2, then the global pooling, its one reduction; ``config.json`` and
    ``preprocessor_config.json`` beside it as given."""
    folder.mkdir()
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), ov.Type.f32, name="pixel_values")
    x.output(0).set_names({"pixel_values"})
    stem = ops.convolution(x, ops.constant(np.full((16, 3, 4, 4), 0.1, np.float32)), [4, 4], [0, 0], [0, 0], [1, 1])
    down = ops.convolution(stem, ops.constant(np.full((16, 16, 2, 2), 0.1, np.float32)), [2, 2], [0, 0], [0, 0], [1, 1])
    pooled = ops.reduce_mean(down, _axes(2, 3), False, name="pooler")
    _save(ov.Model([pooled], [x], "convnext"), folder / "openvino_model.xml")
    for name, content in (("config.json", config), ("preprocessor_config.json", preprocessor)):
        if content is not None:
            (folder / name).write_text(json.dumps(content))
    return folder


@pytest.mark.parametrize(("config", "preprocessor", "size", "said"), [
    ({"model_type": "convnext", "image_size": 32}, None, 32, "the image size config.json gives (image_size)"),
    ({"vision_config": {"image_size": [40, 40]}}, None, 40, "config.json gives (vision_config.image_size)"),
    ({"model_type": "vision-encoder-decoder", "encoder": {"model_type": "vit", "image_size": 48}}, None, 48,
     "config.json gives (encoder.image_size)"),  # TrOCR's, Donut's, ViT-GPT2's
    ({"model_type": "colpali", "vlm_config": {"vision_config": {"image_size": 56}}}, None, 56,
     "config.json gives (vlm_config.vision_config.image_size)"),
    ({"model_type": "convnext"}, {"size": {"height": 48, "width": 48}}, 48, "preprocessor_config.json gives (size)"),
    (None, None, 64, "a global pooling after a 32-fold downsampling then reduces 2x2 elements"),
])  # fmt: skip
def test_an_image_gets_the_size_its_export_says_or_one_a_global_pooling_reduces(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    config: dict[str, Any] | None,
    preprocessor: dict[str, Any] | None,
    size: int,
    said: str,
) -> None:
    """An image's height and width took the first fill OpenVINO accepts, 8: after the stem and one downsampling the
    global pooling (the only reduction of most image classifiers) reduced one element, never established. They are
    the export's image size (config.json, its vision_config, or the processor's), else at least 64."""
    folder = _classifier(tmp_path / "export", config, preprocessor)
    status, out, err = run_cli(capsys, "audit", str(folder), "--precision", "f32", "--format", "json")
    doc = json.loads(out)
    assert status == 0, err
    (pixels,) = doc["inputs"]
    assert pixels["shape"] == [1, 3, size, size], pixels
    assert any(f"input 'pixel_values': dynamic dimension 2 (?) set to {size}, " in n and said in n
               for n in doc["notes"]), doc["notes"]  # fmt: skip
    (pooler,) = doc["layers"]
    assert pooler["input_shape"] == [1, 16, size // 8, size // 8] and pooler["status"] == "ok", pooler


@pytest.mark.parametrize(("size", "patches"), [(384, 576), ([64, 48], 12)], ids=["trocr", "donut"])
def test_a_vision_encoder_decoders_encoder_takes_the_image_size_its_config_nests(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, size: int | list[int], patches: int
) -> None:
    """A vision-encoder-decoder export (optimum-intel's image-to-text: TrOCR's ViT at 384x384, Donut's Swin at
    [2560, 1920]) gives its image size under config.json's ``encoder``, which was not read: no default fill makes the
    patches its position table holds, and the audit of the export was refused. It reads it, as a VLM's vision_config."""
    folder = tmp_path / "trocr"
    folder.mkdir()
    x = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), ov.Type.f32, name="pixel_values")
    x.output(0).set_names({"pixel_values"})
    rng = np.random.default_rng(0)
    patched = ops.convolution(x, ops.constant(rng.standard_normal((8, 3, 16, 16)).astype(np.float32) * 0.05),
                              [16, 16], [0, 0], [0, 0], [1, 1])  # fmt: skip
    flat = ops.transpose(ops.reshape(patched, ops.constant(np.array([0, 8, -1], np.int64)), True),
                         ops.constant(np.array([0, 2, 1], np.int64)))  # fmt: skip
    hidden = ops.add(flat, ops.constant(rng.standard_normal((1, patches, 8)).astype(np.float32)))  # the positions
    norm = ops.reduce_mean(ops.multiply(hidden, hidden), _axes(2), True, name="layernorm")
    _save(ov.Model([norm], [x], "encoder"), folder / "openvino_encoder_model.xml")
    ids = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.i64, name="input_ids")
    encoded = ops.parameter(ov.PartialShape([-1, -1, 8]), ov.Type.f32, name="encoder_hidden_states")
    words = ops.gather(ops.constant(np.ones((10, 8), np.float32)), ids, ops.constant(np.int64(0)))
    decoded = ops.reduce_mean(ops.concat([words, encoded], 1), _axes(2), True, name="decoded")
    _save(ov.Model([decoded], [ids, encoded], "decoder"), folder / "openvino_decoder_model.xml")
    (folder / "config.json").write_text(json.dumps({
        "model_type": "vision-encoder-decoder", "is_encoder_decoder": True,
        "encoder": {"model_type": "vit", "image_size": size, "patch_size": 16, "num_channels": 3},
        "decoder": {"model_type": "trocr", "max_position_embeddings": 64},
    }))  # fmt: skip
    status, out, err = run_cli(capsys, "audit", str(folder), "--precision", "f32", "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    height, width = size if isinstance(size, list) else (size, size)
    assert doc["model"] == str(folder / "openvino_encoder_model.xml")
    assert doc["inputs"][0]["shape"] == [1, 3, height, width], doc["inputs"]
    assert any("the image size config.json gives (encoder.image_size)" in note for note in doc["notes"]), doc["notes"]


@pytest.mark.parametrize("kind", ["Convolution", "GroupConvolution", "Convert then Convolution"])
def test_an_image_of_dynamic_channels_gets_the_channels_its_convolution_takes(tmp_path: Path, kind: str) -> None:
    """CLIP as optimum-intel exports it: ``pixel_values [?,?,?,?]`` into a patch convolution of 3 channels. No fill
    gives every dim 3 (the spatial dims need 8 and more): the channels are the filter's, the rest is filled."""
    x = ops.parameter(ov.PartialShape([-1] * 4), ov.Type.f32, name="pixel_values")
    data = ops.convert(x, ov.Type.f16) if kind.startswith("Convert") else x
    etype = np.float16 if kind.startswith("Convert") else np.float32
    if kind == "GroupConvolution":  # 3 groups of 1 channel each
        filters = ops.constant(np.ones((3, 4, 1, 4, 4), etype))
        conv = ops.group_convolution(data, filters, [4, 4], [0, 0], [0, 0], [1, 1], name="patches")
    else:
        filters = ops.constant(np.ones((8, 3, 4, 4), etype))
        conv = ops.convolution(data, filters, [4, 4], [0, 0], [0, 0], [1, 1], name="patches")
    mean = ops.reduce_mean(conv, _axes(2, 3), False, name="pooled")
    doc = _audit(_save(ov.Model([mean], [x], "clip"), tmp_path / "clip.xml"))
    assert doc.error is None, doc.error
    (pixels,) = doc.inputs
    assert pixels.shape[:2] == (1, 3) and pixels.shape[2] >= 4, pixels.shape
    assert any(f"dimension 1 (?) set to 3, the channels its {kind.split()[-1]} 'patches' takes" in n for n in doc.notes)
    (pooled,) = doc.layers
    assert pooled.ok and pooled.input_shape[1] in (8, 12)


def test_flattened_patches_get_a_width_that_fills_the_rows_their_reshape_makes(tmp_path: Path) -> None:
    """Qwen2-VL's vision embeddings as optimum-intel exports them: ``hidden_states [?, ?]``, the flattened patches,
    reshaped to ``[-1, 3, 2, 8, 8]`` (384 per patch). No fill divides into 384, so every default was refused."""
    x = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32, name="hidden_states")
    patches = ops.reshape(x, ops.constant(np.array([-1, 3, 2, 8, 8], np.int64)), False, name="patches")
    mean = ops.reduce_mean(patches, _axes(2, 3, 4), False, name="pooled")
    doc = _audit(_save(ov.Model([mean], [x], "vision"), tmp_path / "vision.xml"))
    assert doc.error is None, doc.error
    (hidden,) = doc.inputs
    assert hidden.shape == (1, 384), hidden.shape
    assert any("dynamic dimension 1 (?) set to 384, so that its elements fill rows of the target [-1, 3, 2, 8, 8] of "
               "Reshape 'patches'" in n for n in doc.notes), doc.notes  # fmt: skip
    assert [layer.status for layer in doc.layers] == ["ok"]


def test_inputs_beside_one_fixing_the_batch_at_1_take_the_fill_on_their_leading_dim(tmp_path: Path) -> None:
    """Qwen2-VL's patch merger: ``hidden_states [?, 32]``, ``attention_mask [1, ?, ?]``, ``rotary_pos_emb [?, 8]``,
    each sized by the patch count. The leading dims were taken as a batch and made 1 while the mask's took the fill:
    OpenVINO failed on the attention's shapes ovreduce had made inconsistent, and the report blamed it."""
    hidden = ops.parameter(ov.PartialShape([-1, 32]), ov.Type.f32, name="hidden_states")
    mask = ops.parameter(ov.PartialShape([1, -1, -1]), ov.Type.f32, name="attention_mask")
    rotary = ops.parameter(ov.PartialShape([-1, 8]), ov.Type.f32, name="rotary_pos_emb")
    for node, name in ((hidden, "hidden_states"), (mask, "attention_mask"), (rotary, "rotary_pos_emb")):
        node.output(0).set_names({name})
    rows = ops.concat([hidden, ops.tile(rotary, ops.constant(np.array([1, 4], np.int64)))], 1)  # [N, 64]
    grouped = ops.reshape(rows, ops.constant(np.array([-1, 4 * 64], np.int64)), False)  # 4 patches merged
    query = ops.unsqueeze(rows, ops.constant(np.int64(0)))  # [1, N, 64]
    attended = ops.scaled_dot_product_attention(query, query, query, mask, causal=False)
    out = [ops.reduce_mean(attended, _axes(2), False, name="attended"), ops.reduce_sum(grouped, _axes(1), False)]
    doc = _audit(_save(ov.Model(out, [hidden, mask, rotary], "merger"), tmp_path / "merger.xml"))
    assert doc.error is None, doc.error
    shapes = {i.name: i.shape for i in doc.inputs}
    patches = shapes["hidden_states"][0]
    assert patches % 4 == 0 and shapes["attention_mask"] == (1, patches, patches), shapes
    assert shapes["rotary_pos_emb"] == (patches, 8), shapes
    assert all(layer.status == "ok" for layer in doc.layers), [(layer.name, layer.status) for layer in doc.layers]


def _window_merger() -> Any:
    """Qwen2.5-VL's patch merger as optimum-intel exports it: ``hidden_states [?, 32]`` grouped in merge units of 4
    rows (``Reshape`` to ``[rows // 4, 4, -1]``), the units reordered by ``window_index [?]`` (i64, one index per
    unit) and put back by its argsort (a ``TopK`` of all of it) after the merge, the rows attended under
    ``window_attention_mask [1, ?, ?]`` and ``attention_mask [1, ?, ?]``, ``rotary_pos_emb [?, 8]`` grouped as the
    rows are."""
    hidden = ops.parameter(ov.PartialShape([-1, 32]), ov.Type.f32, name="hidden_states")
    mask = ops.parameter(ov.PartialShape([1, -1, -1]), ov.Type.f32, name="attention_mask")
    window_mask = ops.parameter(ov.PartialShape([1, -1, -1]), ov.Type.f32, name="window_attention_mask")
    window = ops.parameter(ov.PartialShape([-1]), ov.Type.i64, name="window_index")
    rotary = ops.parameter(ov.PartialShape([-1, 8]), ov.Type.f32, name="rotary_pos_emb")
    inputs = [hidden, mask, window_mask, window, rotary]
    for node in inputs:
        node.output(0).set_names({node.get_friendly_name()})
    rows = ops.gather(ops.shape_of(hidden), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    units = ops.unsqueeze(ops.floor(ops.divide(rows, ops.constant(np.int64(4)))), ops.constant(np.int32(0)))
    grouped = ops.concat([units, ops.constant(np.array([4, -1], np.int64))], 0)
    back = ops.concat([ops.reshape(rows, ops.constant(np.array([1], np.int64)), False),
                       ops.constant(np.array([-1], np.int64))], 0)  # fmt: skip
    index = ops.convert(window, ov.Type.i32)

    def reorder(x: Any) -> Any:
        return ops.reshape(ops.gather(ops.reshape(x, grouped, False), index, ops.constant(np.int32(0))), back, False)

    x = reorder(hidden)
    angles = ops.concat([reorder(rotary)] * 4, 1)  # [rows, 32]
    x = ops.add(x, ops.multiply(ops.sin(angles), ops.constant(np.full((1, 32), 0.5, np.float32))))
    norm = ops.reduce_mean(ops.multiply(x, x), _axes(-1), True, name="norm")  # an RMSNorm's
    x = ops.multiply(ops.divide(x, ops.sqrt(ops.add(norm, ops.constant(np.float32(1e-6))))),
                     ops.constant(np.ones((1, 32), np.float32)))  # fmt: skip
    query = ops.unsqueeze(x, ops.constant(np.int64(0)))
    x = ops.scaled_dot_product_attention(query, query, query, window_mask, causal=False)
    x = ops.scaled_dot_product_attention(x, x, x, mask, causal=False)
    merged = ops.reshape(ops.squeeze(x, ops.constant(np.int64(0))), ops.constant(np.array([-1, 128], np.int64)), False)
    pooled = ops.reduce_sum(merged, _axes(1), True, name="merged")
    order = ops.squeeze(ops.shape_of(window), ops.constant(np.int64(0)))
    argsort = ops.topk(window, order, 0, "min", "value", ov.Type.i64).output(1)
    return ov.Model([ops.gather(pooled, ops.convert(argsort, ov.Type.i32), ops.constant(np.int32(0)))], inputs, "m")


def test_a_window_index_has_one_index_per_merge_unit_and_is_a_permutation(tmp_path: Path) -> None:
    """Qwen2.5-VL's patch merger: every default gave ``window_index`` as many indices as ``hidden_states`` has rows,
    where it has one per merge unit of 4 rows, so that no default was accepted; and where shapes were given, its
    values were drawn with repeats, where the model inverts it by argsort (rows lost, others twice)."""
    from ovreduce.backends.openvino import model_inputs

    doc = _audit(_save(_window_merger(), tmp_path / "merger.xml"))
    assert doc.error is None, doc.error
    shapes = {i.name: i.shape for i in doc.inputs}
    rows = shapes["hidden_states"][0]
    assert rows % 4 == 0 and shapes["window_index"] == (rows // 4,), shapes
    assert shapes["window_attention_mask"] == shapes["attention_mask"] == (1, rows, rows), shapes
    assert all(layer.status == "ok" for layer in doc.layers), [(layer.name, layer.status) for layer in doc.layers]
    origin = next(i.origin for i in doc.inputs if i.name == "window_index")
    assert "permutation" in origin and "TopK" in origin, origin
    assert any(
        f"input 'window_index': dynamic dimension 0 (?) set to {rows // 4}, the size of the axis 0 of Gather" in n
        for n in doc.notes
    )
    for given in ({}, {"hidden_states": PartialShape.static([64, 32])}):  # the rows shaped: the units follow them
        arrays, _, _ = model_inputs(_window_merger(), None, 3, shapes=given)
        units = arrays[0].shape[0] // 4
        assert sorted(arrays[3].tolist()) == list(range(units)) and units > 1, arrays[3]


def test_a_given_shape_the_model_refuses_says_what_openvino_said(files: dict[str, Path]) -> None:
    with pytest.raises(InputError, match=r"refused the shapes given .*Kernel after dilation"):
        _audit(files["cnn"], shapes={"x": PartialShape.static([1, 3, 2, 2])})


def test_a_given_shape_outside_the_declared_one_is_refused(files: dict[str, Path]) -> None:
    with pytest.raises(InputError, match=r"the shape given for input 'x', \[9,4\], does not fit its declared"):
        _audit(files["any_rank"], shapes={"y": PartialShape.static([2]), "x": PartialShape.static([9, 4])})


def test_a_shape_for_no_input_names_the_inputs(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    status, out, err = run_cli(capsys, "audit", str(files["any_rank"]), "--shape", "z[1]")
    assert status == 2 and out == ""
    # (no "give it with --shape": it was given so, and names nothing there)
    assert "'z' names no model input (inputs: x, y)" in err and "--shape NAME=SHAPE" not in err


def test_dims_left_dynamic_by_a_partial_shape_are_defaulted(files: dict[str, Path]) -> None:
    doc = _audit(files["cnn"], shapes={"x": PartialShape.parse("[2,3,?,16]")})
    (x,) = doc.inputs
    assert x.shape[:2] == (2, 3) and x.shape[3] == 16 and x.defaulted_dims == (2,)
    assert x.shape[2] >= 5 and doc.error is None  # the 5x5 pooling needs a height of at least 5


def test_intermediate_tensors_over_the_budget_are_refused_before_compiling(tmp_path: Path) -> None:
    """A model whose Tile makes 6 million elements from a [2,3] input: refused from OpenVINO's inferred
    shapes, naming the tensor and the limit, before anything is compiled or allocated."""
    from ovreduce.errors import LimitExceededError

    x = ops.parameter([2, 3], ov.Type.f32, name="x")
    big = ops.tile(x, ops.constant(np.array([1000, 1000], np.int64)), name="blow_up")
    path = _save(ov.Model([ops.reduce_mean(big, _axes(0, 1), False, name="mean")], [x], "tile"), tmp_path / "t.xml")
    expected = r"the output 0 of Tile 'blow_up' would have 6000000 elements \(\[2000,3000\]\), more than the limit"
    with pytest.raises(LimitExceededError, match=expected + " of 1048576 per tensor"):
        _audit(path, max_elements=1 << 20)
    assert _audit(path, max_elements=1 << 23).layers[0].ok


def _loop(inner: Any) -> Any:
    """What makes a Loop (one iteration) whose body computes ``inner(its parameter)`` of a [1] value."""

    def make(value: Any) -> Any:
        bx = ops.parameter([1], ov.Type.f32, name="bx")
        body = ov.Model([ops.result(ops.constant(np.array(True))), ops.result(inner(bx.output(0)))], [bx], "body")
        loop = ops.loop(ops.constant(np.int64(1)), ops.constant(np.array(True)))
        loop.set_friendly_name("loop")
        loop.set_function(body)
        loop.set_special_body_ports([-1, 0])
        loop.set_invariant_input(bx, value)
        return loop.get_iter_value(body.get_results()[1].output(0), -1)

    return make


def _if(inner: Any) -> Any:
    """What makes an If whose then body computes ``inner(its parameter)`` of a [1] value (the else body passes it)."""

    def make(value: Any) -> Any:
        bx, ex = ops.parameter([1], ov.Type.f32, name="bx"), ops.parameter([1], ov.Type.f32, name="ex")
        branch = ops.if_op(ops.greater(ops.reduce_sum(value, _axes(0), False), ops.constant(np.float32(-1))))
        branch.set_friendly_name("if")
        then, other = (
            ov.Model([ops.result(inner(bx.output(0)))], [bx], "then"),
            ov.Model([ops.result(ex)], [ex], "else"),
        )
        branch.set_then_body(then)
        branch.set_else_body(other)
        branch.set_input(value, bx, ex)
        return branch.set_output(then.get_results()[0], other.get_results()[0])

    return make


def test_the_tensors_of_bodies_are_held_to_the_budget_before_compiling(tmp_path: Path) -> None:
    """A Broadcast to [300,300] (90,000 elements) in a Loop's body, an If's then body or an If inside a Loop: refused
    before compiling, naming the body it is in, as at the top level (the Loop's ran, and the If's was sized only once
    computed, as if its shape depended on input values); a body that only reads a large weight is audited."""
    from ovreduce.errors import LimitExceededError

    def blow_up(bx: Any) -> Any:
        big = ops.broadcast(bx, ops.constant(np.array([300, 300], np.int64)), name="blow_up")
        return ops.unsqueeze(ops.reduce_sum(big, _axes(0, 1), False), _axes(0))

    weight = ops.constant(np.ones(90_000, np.float16))
    read = lambda bx: ops.add(bx, ops.gather(ops.convert(weight, ov.Type.f32), _axes(7), _axes(0)))  # noqa: E731
    bodies = {"Loop": "in the body of Loop 'loop', ", "If": "in the then body of If 'if', ",
              "If in Loop": "in the body of Loop 'loop', in the then body of If 'if', "}  # fmt: skip
    makers = {"Loop": _loop, "If": _if, "If in Loop": lambda inner: _loop(_if(inner))}
    for kind, where in bodies.items():

        def model(inner: Any, kind: str = kind) -> Any:
            x = ops.parameter([1], ov.Type.f32, name="x")
            return ov.Model([ops.reduce_mean(makers[kind](inner)(x.output(0)), _axes(0), True)], [x], "bodies")

        path = _save(model(blow_up), tmp_path / "big.xml")
        expected = where + r"the output 0 of Broadcast 'blow_up' would have 90000 elements \(\[300,300\]\)"
        with pytest.raises(LimitExceededError, match=expected + ", more than the limit of 4096 per tensor"):
            _audit(path, max_elements=4096)
        assert _audit(path, max_elements=1 << 17).error is None
        assert _audit(_save(model(read), tmp_path / "w.xml"), max_elements=4096).error is None, kind


def test_the_models_weights_are_not_held_to_the_budget_but_what_they_are_broadcast_to_is(tmp_path: Path) -> None:
    """An embedding table of 40,000 elements (stored in f16 and decompressed: Convert, Subtract a zero point, Multiply
    by a scale), a Gather of 8 ids from it and a ReduceMean: every tensor the audit computes has 40 elements, so a
    limit of 4,096 audits it (the weights were counted, which refused the audit of every BERT and LLM at the service's
    defaults); a Tile of a small Constant to 40,000 elements is still refused."""
    from ovreduce.errors import LimitExceededError

    ids = ops.parameter([1, 8], ov.Type.i64, name="input_ids")
    table = ops.convert(ops.constant(np.random.default_rng(0).random((8000, 5)).astype(np.float16)), ov.Type.f32)
    table = ops.multiply(
        ops.subtract(table, ops.constant(np.float32(0.5))), ops.constant(np.full((1, 5), 2, np.float32))
    )
    rows = ops.gather(table, ids, ops.constant(np.int64(0)))
    path = _save(ov.Model([ops.reduce_mean(rows, _axes(2), False, name="mean")], [ids], "emb"), tmp_path / "e.xml")
    [row] = _audit(path, inputs={"input_ids": np.arange(8).reshape(1, 8)}, max_elements=4096).layers
    assert row.ok and row.input_shape == (1, 8, 5)
    tiled = ops.tile(ops.constant(np.ones((2, 5), np.float32)), ops.constant(np.array([4000, 1], np.int64)),
                     name="blow_up")  # fmt: skip
    rows = ops.gather(tiled, ids, ops.constant(np.int64(0)))
    path = _save(ov.Model([ops.reduce_mean(rows, _axes(2), False, name="mean")], [ids], "tile"), tmp_path / "t.xml")
    with pytest.raises(LimitExceededError, match="the output 0 of Tile 'blow_up' would have 40000 elements"):
        _audit(path, inputs={"input_ids": np.arange(8).reshape(1, 8)}, max_elements=4096)


def test_a_tensor_sized_by_input_values_is_held_to_the_budget_once_computed(tmp_path: Path) -> None:
    """A Range whose length is an input's value cannot be sized before the run: once computed, a tensor over the
    limit is refused naming it, before the reference reads it again (in float64) or the other runs repeat it."""
    from ovreduce.errors import LimitExceededError

    n = ops.parameter([], ov.Type.i64, name="n")
    values = ops.range(ops.constant(np.int64(0)), n, ops.constant(np.int64(1)), "f32", name="values")
    model = ov.Model([ops.reduce_mean(values, _axes(0), False, name="mean")], [n], "range")
    path = _save(model, tmp_path / "r.xml")
    inputs = {"n": np.array(5000, np.int64)}
    expected = r"in the audit, the output 0 of Range 'values' has 5000 elements once computed \(\[5000\]\), more than"
    with pytest.raises(LimitExceededError, match=expected + " the limit of 4096 per tensor"):
        _audit(path, inputs=inputs, max_elements=4096)
    assert _audit(path, inputs=inputs, max_elements=8192).layers[0].input_shape == (5000,)


def test_a_tensor_sized_by_input_values_in_an_if_body_is_held_to_the_budget(tmp_path: Path) -> None:
    """The same Range inside the body an If took, which the audit runs alone on the values it received: it was audited
    in full past the limit."""
    from ovreduce.errors import LimitExceededError

    n, cond = ops.parameter([], ov.Type.i64, name="n"), ops.parameter([], ov.Type.boolean, name="cond")
    then_n, else_n = ops.parameter([], ov.Type.i64), ops.parameter([], ov.Type.i64)
    values = ops.range(ops.constant(np.int64(0)), then_n, ops.constant(np.int64(1)), "f32", name="values")
    then_body = ov.Model([ops.result(ops.reduce_mean(values, _axes(0), True, name="mean"))], [then_n])
    as_float = ops.convert(else_n, "f32")
    else_body = ov.Model([ops.result(ops.reshape(as_float, ops.constant(np.array([1], np.int64)), False))], [else_n])
    branch = ops.if_op(cond)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(n.output(0), then_n, else_n)
    out = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    path = _save(ov.Model([out], [n, cond]), tmp_path / "if.xml")
    inputs = {"n": np.array(5000, np.int64), "cond": np.array(True)}
    with pytest.raises(
        LimitExceededError,
        match=r"in the audit of the then body of If 'If_\d+' \(layer \d+\), the output 0 of Range 'values'",
    ):
        _audit(path, inputs=inputs, max_elements=4096)
    [row] = [row for row in _audit(path, inputs=inputs, max_elements=8192).layers if row.body_path]
    assert row.input_shape == (5000,)


def test_cs_bad_alloc_as_openvino_passes_it_on_is_running_out_of_memory() -> None:
    """Under a memory bound OpenVINO's inference can fail with the bare text of C++'s std::bad_alloc: that was
    "OpenVINO failed: std::bad_alloc", exit 1, where running out of the bound is [limit.memory], exit 2."""
    from ovreduce.backends.openvino import memory_refusal

    assert memory_refusal(RuntimeError("std::bad_alloc")) is not None
    assert memory_refusal(RuntimeError("Exception from node 'std::bad_alloc': cannot broadcast")) is None


def test_a_compile_that_cannot_allocate_under_the_memory_bound_is_the_memory_limit(tmp_path: Path) -> None:
    """The CPU plugin compiling 400 chained reductions and their outputs under a 256 MiB bound fails with "can't
    alloc": that was "OpenVINO failed: can't alloc", every reduction "not audited", where running out of the bound
    is [limit.memory], exit 2."""
    import subprocess
    import sys

    from ovreduce.backends.openvino import memory_refusal

    from .ov_models import many_reductions

    assert (
        memory_refusal(RuntimeError("Exception from src/inference/src/dev/plugin.cpp:54:\ncan't alloc\n")) is not None
    )
    path = many_reductions(tmp_path / "many.xml", 400)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--precision", "f32"],
                          capture_output=True, text=True, timeout=300, env={**os.environ,
                          "OVREDUCE_MAX_WORKER_BYTES": str(256 << 20)})  # fmt: skip
    assert "can't alloc" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode == 0 or (done.returncode == 2 and "[limit.memory]" in done.stderr), done.stderr


@pytest.mark.parametrize("name", ["plain", "bad_alloc", "Failed to allocate 5 bytes of memory"])
def test_a_failure_of_a_node_named_like_an_allocation_is_not_a_memory_limit(tmp_path: Path, name: str) -> None:
    """OpenVINO quotes node names in its messages: a Broadcast that cannot broadcast is the model's failure, whatever
    the node is called (a name holding "bad_alloc" made it 413 limit.memory, and replaced the service's worker)."""
    target = ops.parameter([1], ov.Type.i64, name="target")
    x = ops.parameter([3], ov.Type.f32, name="x")
    spread = ops.broadcast(x, target, name=name)
    path = _save(ov.Model([ops.reduce_sum(spread, _axes(0), False, name="sum")], [x, target]), tmp_path / "b.xml")
    doc = _audit(path, inputs={"target": np.array([2], np.int64), "x": np.ones(3, np.float32)})
    assert doc.error is not None and doc.error.startswith("OpenVINO failed: ") and "broadcast" in doc.error, doc.error


def _state_through_a_loop(path: Path) -> Path:
    """A state ``[batch, 4]`` updated through a Loop over the sequence whose slices are flattened and reshaped back to
    ``[batch, 4]`` (a Mamba2 scan's, as Granite-4.0's export has it): OpenVINO's CPU plugin runs it as it is, and fails
    to once it is reshaped to static input shapes ("Can't reorder data with dynamic shapes" at the state's Assign)."""
    from openvino.op.util import Variable, VariableInfo

    x = ops.parameter([-1, -1], np.float32, name="x")
    x.output(0).set_names({"x"})
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, 4]), ov.Type.f32, "cache_params.ssm.0"
    variable = Variable(info)
    batch = ops.gather(ops.shape_of(x), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
    rows = ops.concat([batch, ops.constant(np.array([4], np.int64))], 0)
    state = ops.read_value(ops.broadcast(ops.constant(np.float32(0)), rows), variable)
    carried, column = ops.parameter([-1, 4], np.float32), ops.parameter([-1, 1], np.float32)
    updated = ops.add(ops.multiply(carried, ops.constant(np.float32(0.5))), column)
    body = ov.Model([ops.result(ops.constant(True)), ops.result(updated),
                     ops.result(ops.unsqueeze(updated, ops.constant(np.int64(0))))], [carried, column])  # fmt: skip
    loop = ops.loop(ops.gather(ops.shape_of(x), ops.constant(np.int64(1)), ops.constant(np.int64(0))),
                    ops.constant(True))  # fmt: skip
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(carried, state.output(0), body.get_results()[1].output(0))
    loop.set_sliced_input(column, x.output(0), 0, 1, 1, -1, 1)
    flat = ops.reshape(loop.get_concatenated_slices(body.get_results()[2].output(0), 0, 1, 1, -1, 0), _axes(-1), False)
    end = ops.gather(ops.shape_of(flat), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    last = ops.slice(flat, ops.unsqueeze(ops.subtract(end, ops.constant(np.int64(4))), ops.constant(np.int64(0))),
                     _axes(2**62), _axes(1))  # fmt: skip
    new = ops.reshape(last, rows, False)
    total = ops.reduce_sum(ops.multiply(new, x), _axes(1), False, name="state_sum")  # (x [1, 4]: one token per row)
    return _save(ov.Model([ops.result(ops.reduce_mean(x, _axes(1), False, name="x_mean")), ops.result(total)],
                          [ops.assign(new, variable)], [x], "loop_state"), path)  # fmt: skip


def test_a_model_openvino_runs_only_as_it_is_is_audited_so(tmp_path: Path) -> None:
    """OpenVINO fails the model reshaped to its inputs' static shapes, which audit applies, and runs it as it is: the
    audit said "OpenVINO failed", every reduction not audited, and blamed integer inputs. It now runs every run of
    the model as it is, as it runs decode steps, and says why."""
    path = _state_through_a_loop(tmp_path / "m.xml")
    feed = np.ones((1, 4), np.float32)
    ov.Core().compile_model(str(path), "CPU").create_infer_request().infer({"x": feed})  # as it is: it runs
    static = ov.Core().read_model(path)
    static.reshape({"x": [1, 4]})
    with pytest.raises(RuntimeError, match="Can't reorder data with dynamic shapes"):
        ov.Core().compile_model(static, "CPU").create_infer_request().infer({"x": feed})
    doc = _audit(path, shapes={"x": PartialShape.parse("[1,4]")})
    assert doc.error is None, doc.error
    assert {layer.layer_name: layer.status for layer in doc.layers} == {"x_mean": "ok", "state_sum": "ok"}, doc.layers
    note = next(n for n in doc.notes if "reshaped to the inputs' static shapes" in n)
    assert "Can't reorder data with dynamic shapes" in note and "as it is (its dynamic shapes)" in note, note


_KERNELS, _STRIDES = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)  # every wav2vec2 checkpoint's feature encoder


def _speech_classifier(folder: Path, config: dict[str, Any] | None) -> Path:
    """An audio classifier as optimum-intel exports the wav2vec2 family: ``input_values [?,?]`` through the feature
    encoder's strided convolutions, then the mean over frames, its one reduction; ``config.json`` beside it as given,
    and the processor's ``preprocessor_config.json``."""
    folder.mkdir()
    x = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32, name="input_values")
    x.output(0).set_names({"input_values"})
    h, channels = ops.unsqueeze(x, _axes(1)), 1
    rng = np.random.default_rng(0)
    for kernel, stride in zip(_KERNELS, _STRIDES, strict=True):
        weights = ops.constant((rng.standard_normal((8, channels, kernel)) * 0.3).astype(np.float32))
        h, channels = ops.gelu(ops.convolution(h, weights, [stride], [0], [0], [1]), "erf"), 8
    frames = ops.transpose(h, ops.constant(np.array([0, 2, 1], np.int64)))
    pooled = ops.reduce_mean(frames, _axes(1), False, name="pooler")
    _save(ov.Model([pooled], [x], "wav2vec2"), folder / "openvino_model.xml")
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    (folder / "preprocessor_config.json").write_text(json.dumps({"sampling_rate": 16000, "feature_size": 1}))
    return folder


def test_a_waveform_gets_the_length_of_several_frames_its_export_config_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A waveform's length took the first fill OpenVINO accepts, 512 samples, of which wav2vec2's feature encoder
    makes one frame: the pooling over frames reduced one element, never established. config.json's conv_kernel and
    conv_stride say how many samples make 8 frames (400 + 320 x 7), as OpenVINO's shape inference counts them."""
    config = {"model_type": "wav2vec2", "conv_kernel": list(_KERNELS), "conv_stride": list(_STRIDES)}
    folder = _speech_classifier(tmp_path / "export", config)
    status, out, err = run_cli(capsys, "audit", str(folder), "--precision", "f32", "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    (wave,) = doc["inputs"]
    samples = 400 + 320 * 7
    assert wave["shape"] == [1, samples], wave
    model = ov.Core().read_model(folder / "openvino_model.xml")
    model.reshape({"input_values": [1, samples]})
    pooler = next(op for op in model.get_ops() if op.get_friendly_name() == "pooler")
    assert pooler.input_value(0).get_partial_shape()[1].get_length() == 8  # OpenVINO's count of the frames
    assert any(f"input 'input_values': dynamic dimension 1 (?) set to {samples}, 8 frames of its feature encoder "
               f"(config.json's conv_kernel and conv_stride: a frame spans 400 samples, one every 320), 165 ms at the "
               f"16000 Hz" in n for n in doc["notes"]), doc["notes"]  # fmt: skip
    (row,) = doc["layers"]
    assert row["input_shape"] == [1, 8, 8] and row["status"] == "ok", row


def test_a_waveform_without_an_encoder_config_takes_the_first_fill_accepted(tmp_path: Path) -> None:
    """Without conv_kernel and conv_stride nothing says how long a waveform is: the first fill OpenVINO accepts."""
    folder = _speech_classifier(tmp_path / "export", None)
    doc = audit_model(load_ir(folder / "openvino_model.xml"), precision="f32")
    assert doc.inputs[0].shape == (1, 512), doc.inputs


def _resampler(path: Path, hidden: int = 16, grid: int = 4) -> Path:
    """LLaVA-NeXT-Video's vision resampler as optimum-intel exports it: ``image_features [?, ?, hidden]`` viewed as
    a grid (``Reshape`` of special zero to ``[0, grid, grid, hidden]``: the batch copied, no ``-1``), pooled 2x2, then
    averaged."""
    x = ops.parameter(ov.PartialShape([-1, -1, hidden]), ov.Type.f32, name="image_features")
    x.output(0).set_names({"image_features"})
    grid_view = ops.reshape(x, ops.constant(np.array([0, grid, grid, hidden], np.int64)), True, name="aten::view")
    channels = ops.transpose(grid_view, ops.constant(np.array([0, 3, 1, 2], np.int64)))
    pooled = ops.avg_pool(channels, [2, 2], [0, 0], [0, 0], [2, 2], False, name="pool")
    flat = ops.reshape(pooled, ops.constant(np.array([0, hidden, -1], np.int64)), True)
    mean = ops.reduce_mean(flat, _axes(2), False, name="pooled")
    return _save(ov.Model([mean], [x], "resampler"), path)


def test_features_reshaped_to_a_grid_without_minus_one_get_the_tokens_the_grid_holds(tmp_path: Path) -> None:
    """A special-zero Reshape to ``[0, 4, 4, 16]`` takes 16 tokens of each batch. OpenVINO's shape inference does not
    compare the element counts of such a Reshape, so one token was fed, and the CPU plugin read past the input: the
    reduction after it was audited on memory nobody fed."""
    doc = _audit(_resampler(tmp_path / "resampler.xml"))
    assert doc.error is None, doc.error
    (features,) = doc.inputs
    assert features.shape == (1, 16, 16), features.shape
    assert any("dynamic dimension 1 (?) set to 16, so that its elements fill the target [0, 4, 4, 16] of Reshape "
               "'aten::view'" in n for n in doc.notes), doc.notes  # fmt: skip
    assert [layer.status for layer in doc.layers] == ["ok"], doc.layers
    assert all(f.identical for f in doc.final_outputs), doc.final_outputs


def test_a_shape_whose_elements_a_reshape_does_not_keep_is_refused_naming_the_reshape(tmp_path: Path) -> None:
    """OpenVINO reshapes the model to ``[1, 1, 16]`` beside a Reshape to ``[0, 4, 4, 16]`` (256 elements of 16): no
    run on such a feed, whose compiled model reads past its input; the refusal names the Reshape and the counts."""
    path = _resampler(tmp_path / "resampler.xml")
    with pytest.raises(InputError, match=r"Reshape 'aten::view' takes \[1,1,16\] \(16 elements\) to \[1,4,4,16\] "
                                         r"\(256 elements\)") as info:  # fmt: skip
        _audit(path, shapes={"image_features": PartialShape.static([1, 1, 16])})
    assert info.value.parameter == "shapes"


def _multiple_choice(path: Path, vocab: int = 1000) -> Path:
    """A multiple-choice head as optimum-intel exports BERT's: ``input_ids``, ``attention_mask``, ``token_type_ids``
    ``[?,?,?]`` (batch, choices, tokens), flattened to ``[batch * choices, tokens]`` (the last dim read from the ids'
    shape), embedded, masked, and averaged over the tokens; one score per choice."""
    rng = np.random.default_rng(0)
    params = {}
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        params[name] = ops.parameter(ov.PartialShape([-1, -1, -1]), ov.Type.i64, name=name)
        params[name].output(0).set_names({name})

    def flat(x: Any) -> Any:
        tokens = ops.gather(ops.shape_of(x), ops.constant(np.array([2], np.int64)), ops.constant(np.int64(0)))
        return ops.reshape(x, ops.concat([ops.constant(np.array([-1], np.int64)), tokens], 0), False)

    words = ops.gather(ops.constant(rng.standard_normal((vocab, 16)).astype(np.float32)), flat(params["input_ids"]),
                       ops.constant(np.int64(0)), name="word_embeddings")  # fmt: skip
    kinds = ops.gather(ops.constant(rng.standard_normal((2, 16)).astype(np.float32)), flat(params["token_type_ids"]),
                       ops.constant(np.int64(0)), name="token_type_embeddings")  # fmt: skip
    mask = ops.convert(ops.unsqueeze(flat(params["attention_mask"]), ops.constant(np.int64(-1))), ov.Type.f32)
    mean = ops.reduce_mean(ops.multiply(ops.add(words, kinds), mask), _axes(1), False, name="pooled")
    scores = ops.matmul(mean, ops.constant(rng.standard_normal((16, 1)).astype(np.float32)), False, False)
    batch = ops.gather(ops.shape_of(params["input_ids"]), ops.constant(np.array([0], np.int64)),
                       ops.constant(np.int64(0)))  # fmt: skip
    logits = ops.reshape(scores, ops.concat([batch, ops.constant(np.array([-1], np.int64))], 0), False)
    logits.output(0).set_names({"logits"})
    return _save(ov.Model([logits], list(params.values()), "multiple_choice"), path)


def test_ids_of_choices_are_made_as_choices_of_a_sequence(tmp_path: Path) -> None:
    """``[batch, choices, tokens]`` ids were made ``[1,1,1]``: one choice of one token, every reduction over the
    tokens reducing one element. They are made 2 choices of 8 tokens, and the mask and token types along them."""
    doc = _audit(_multiple_choice(tmp_path / "openvino_model.xml"))
    assert doc.error is None, doc.error
    assert {i.name: i.shape for i in doc.inputs} == dict.fromkeys(("input_ids", "attention_mask", "token_type_ids"),
                                                                   (1, 2, 8))  # fmt: skip
    (pooled,) = doc.layers
    assert pooled.ok and pooled.input_shape == (2, 8, 16), pooled


@pytest.mark.parametrize("given", ["[1,3,5]", "[1,?,5]"])
def test_the_mask_and_token_types_follow_ids_of_choices_shaped(tmp_path: Path, given: str) -> None:
    """``--shape input_ids=[1,3,5]``: the mask and token types were made along ``[1,3]`` (the ids' first two dims),
    which fits no ``[?,?,?]`` input; they were left ``[1,1,1]`` (broadcast, or refused by a real BERT)."""
    doc = _audit(_multiple_choice(tmp_path / "openvino_model.xml"), shapes={"input_ids": PartialShape.parse(given)})
    assert doc.error is None, doc.error
    shapes = {i.name: i.shape for i in doc.inputs}
    choices = 3 if given == "[1,3,5]" else 2
    assert set(shapes.values()) == {(1, choices, 5)}, shapes
    assert not any("another shape than the token ids" in n for n in doc.notes), doc.notes


def test_ids_of_choices_past_the_models_positions_are_refused_naming_them(tmp_path: Path) -> None:
    """Ids of choices (``[batch, choices, tokens]``) shaped past the positions the model takes were not checked (only
    ``[batch, tokens]`` ids were): OpenVINO failed on them, or ran rows past the table. Each choice's tokens are a
    sequence, counted along the last axis and refused as a prompt's; a length within the table is audited."""
    path = _multiple_choice(tmp_path / "openvino_model.xml")
    table = (16, "config.json: max_position_embeddings")
    refused = r"positions 0\.\.19 \(20 token\(s\) of 'input_ids'\), more than the 16 positions the model takes"
    with pytest.raises(InputError, match=refused) as info:
        _audit(path, shapes={"input_ids": PartialShape.static([1, 2, 20])}, positions=table)
    assert info.value.parameter == "shapes"
    doc = _audit(path, shapes={"input_ids": PartialShape.static([1, 2, 16])}, positions=table)
    assert doc.error is None and {i.name: i.shape for i in doc.inputs}["input_ids"] == (1, 2, 16), doc.error


def _patch_embeddings(path: Path) -> Path:
    """A vision tower's embeddings as optimum-intel exports SmolVLM's and Idefics3's: ``pixel_values [?,3,?,?]``
    cut into 8x8 patches by a Convolution of stride 8, ``patch_position_ids [?,?]`` (one per patch) picking rows of a
    position table of 16, ``patch_attention_mask [?,?,?]`` (one per patch, a grid) masking them, a mean pooling."""
    rng = np.random.default_rng(0)
    pixels = ops.parameter(ov.PartialShape([-1, 3, -1, -1]), ov.Type.f32, name="pixel_values")
    mask = ops.parameter(ov.PartialShape([-1, -1, -1]), ov.Type.boolean, name="patch_attention_mask")
    ids = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.i64, name="patch_position_ids")
    for node, name in ((pixels, "pixel_values"), (mask, "patch_attention_mask"), (ids, "patch_position_ids")):
        node.output(0).set_names({name})
    patches = ops.convolution(pixels, ops.constant(rng.standard_normal((16, 3, 8, 8)).astype(np.float32) * 0.05),
                              [8, 8], [0, 0], [0, 0], [1, 1])  # fmt: skip
    tokens = ops.transpose(ops.reshape(patches, ops.constant(np.array([0, 16, -1], np.int64)), True),
                           ops.constant(np.array([0, 2, 1], np.int64)))  # fmt: skip
    positions = ops.gather(ops.constant(rng.standard_normal((16, 16)).astype(np.float32)), ids,
                           ops.constant(np.int64(0)))  # fmt: skip
    kept = ops.convert(ops.reshape(mask, ops.constant(np.array([0, -1, 1], np.int64)), True), ov.Type.f32)
    pooled = ops.reduce_mean(ops.multiply(ops.add(tokens, positions), kept), _axes(1), False, name="pooled")
    return _save(ov.Model([pooled], [pixels, mask, ids], "vision_embeddings"), path)


def test_a_patch_mask_and_patch_positions_follow_the_images_patches(tmp_path: Path) -> None:
    """SmolVLM's (Idefics3's) vision embeddings take a patch mask and patch positions beside the image: they were made
    ``[1,1,1]`` and ``[1,1]`` (one seeded id) beside an image of 4x4 patches, which OpenVINO broadcasts, so every
    patch got one position and the audit ran what no generation runs. They are made as optimum-intel's runtime makes
    them for a full image: a mask of ones over the patches' grid, positions 0..n-1 of the patches."""
    from ovreduce.backends.openvino import model_inputs

    image = ((32, 32), "config.json gives (vision_config.image_size)")
    path = _patch_embeddings(tmp_path / "openvino_vision_embeddings_model.xml")
    model = ov.Core().read_model(path)
    arrays, described, _ = model_inputs(model, {}, 0, image=image)  # (made inputs reshape the model)
    names = [port.get_any_name() for port in model.inputs]
    fed = {names[i]: array for i, array in arrays.items()}
    assert fed["pixel_values"].shape == (1, 3, 32, 32)
    np.testing.assert_array_equal(fed["patch_attention_mask"], np.ones((1, 4, 4), bool))
    np.testing.assert_array_equal(fed["patch_position_ids"], np.arange(16).reshape(1, 16))
    origins = {i.name: i.origin for i in described}
    assert "4x4 patches" in origins["patch_position_ids"] and "4x4 patches" in origins["patch_attention_mask"], origins
    given = {"pixel_values": np.zeros((1, 3, 16, 24), np.float32)}
    fed = {names[i]: array for i, array in model_inputs(ov.Core().read_model(path), given, 0, image=image)[0].items()}
    assert fed["patch_attention_mask"].shape == (1, 2, 3) and fed["patch_position_ids"].tolist() == [list(range(6))]


@pytest.mark.parametrize("open_dim", ["?", "1..100"])
def test_a_dim_left_open_over_a_declared_size_is_made_that_size(tmp_path: Path, open_dim: str) -> None:
    """``--shape inputs_embeds=[2,16,?]`` over a declared ``[?,?,64]``: OpenVINO's reshape frees the 64, and the fill
    made the dim 1, a width no model of the export takes (an RMSNorm over one element; where the weight does not
    broadcast, every default refused). The declared size is kept, and a note says so; the shape OpenVINO infers
    for the norm's input is that of the model reshaped to it."""
    x = ops.parameter([-1, -1, 64], np.float32, name="inputs_embeds")
    mean = ops.reduce_mean(ops.power(x, ops.constant(np.float32(2))), _axes(-1), True, name="norm/ReduceMean")
    y = ops.multiply(ops.divide(x, ops.sqrt(ops.add(mean, ops.constant(np.float32(1e-6))))),
                     ops.constant(np.ones((1, 1, 64), np.float32)))  # fmt: skip
    path = _save(ov.Model([y], [x], "norm"), tmp_path / "m.xml")
    doc = audit_model(
        load_ir(path), precision="f32", shapes={"inputs_embeds": PartialShape.parse(f"[2,16,{open_dim}]")}
    )
    assert doc.error is None, doc.error
    assert [tuple(i.shape) for i in doc.inputs] == [(2, 16, 64)], doc.inputs
    reshaped = ov.Core().read_model(path)
    reshaped.reshape({"inputs_embeds": [2, 16, 64]})
    power = next(op for op in reshaped.get_ordered_ops() if op.get_type_name() == "Power")
    (layer,) = doc.layers
    assert list(layer.input_shape) == list(power.get_output_partial_shape(0).to_shape()), layer
    assert layer.status == "ok", layer
    assert any("dynamic dimension 2 (" in n and "set to 64, the size the model declares" in n for n in doc.notes), (
        doc.notes)  # fmt: skip
