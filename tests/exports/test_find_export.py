"""``ovreduce.find_export`` and ``ovreduce.tokenize`` on the committed exports: what each directory holds, and its
tokenizer IR's ids spelled by the export's own ``tokenizer.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ovreduce
from ovreduce.errors import BackendError, InputError, LimitExceededError
from ovreduce.exports import MAX_CONFIG_BYTES, MAX_TEXT_BYTES
from tests.ir.extension_ops import TOKENIZER_IR_OPS, python

HERE = Path(__file__).resolve().parent
TEXT = "The mean of a row."

# export -> (model IRs, model_type of config.json, outputs of the tokenizer, the tokens of TEXT)
EXPORTS = {
    "llama_int4": (
        ["openvino_model.xml"], "llama", ["input_ids", "attention_mask"],
        ["<s>", "The", "Ġmean", "Ġof", "Ġa", "Ġrow", "."],
    ),
    "bert_encoder": (
        ["openvino_model.xml"], "bert", ["input_ids", "token_type_ids", "attention_mask"],
        ["[CLS]", "the", "mean", "of", "a", "r", "##ow", ".", "[SEP]"],
    ),
    "t5_seq2seq": (
        ["openvino_encoder_model.xml", "openvino_decoder_model.xml"], "t5", ["input_ids", "attention_mask"],
        ["▁The", "▁mean", "▁of", "▁a", "▁ro", "w", ".", "</s>"],
    ),
}  # fmt: skip


def spelled(name: str, ids: list[int]) -> list[str]:
    """``ids`` as the tokens of the export's tokenizer.json (its model's vocabulary and added tokens)."""
    data = json.loads((HERE / name / "tokenizer.json").read_text())
    vocab = data["model"]["vocab"]
    pieces = {i: t for t, i in vocab.items()} if isinstance(vocab, dict) else {i: t for i, (t, _) in enumerate(vocab)}
    pieces.update({t["id"]: t["content"] for t in data["added_tokens"]})
    return [pieces[i] for i in ids]


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_what_an_export_holds(name: str) -> None:
    models, model_type, _, _ = EXPORTS[name]
    export = ovreduce.find_export(HERE / name)
    assert [p.name for p in export.models] == models
    assert export.tokenizer == HERE / name / "openvino_tokenizer.xml"
    assert export.detokenizer == HERE / name / "openvino_detokenizer.xml"
    assert export.config is not None and export.config["model_type"] == model_type


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_tokenize_gives_the_tokenizer_json_s_tokens(name: str) -> None:
    _, _, outputs, tokens = EXPORTS[name]
    got = ovreduce.tokenize(ovreduce.find_export(HERE / name), TEXT)
    assert list(got) == outputs
    assert spelled(name, got["input_ids"][0].tolist()) == tokens
    assert all(array.shape == (1, len(tokens)) for array in got.values())
    assert got["attention_mask"].tolist() == [[1] * len(tokens)]


def test_a_folder_of_another_kind_is_not_an_export() -> None:
    with pytest.raises(InputError) as caught:
        ovreduce.find_export(HERE / "loop_trip_count")
    assert caught.value.message == (
        f"{HERE / 'loop_trip_count'}: not an optimum-intel export: it holds no openvino_model.xml (nor "
        "openvino_encoder_model.xml with openvino_decoder_model.xml); its .xml files: model.xml"
    )


@pytest.mark.parametrize(("make", "what"), [("file", "not a directory"), ("nothing", "no such directory")])
def test_what_is_no_directory(tmp_path: Path, make: str, what: str) -> None:
    path = tmp_path / "export"
    if make == "file":
        path.write_text("")
    with pytest.raises(InputError, match=f": {what}; expected an optimum-intel export directory$"):
        ovreduce.find_export(path)


def test_an_encoder_alone_is_no_export(tmp_path: Path) -> None:
    (tmp_path / "openvino_encoder_model.xml").write_text("<net/>")
    with pytest.raises(InputError, match=r"its \.xml files: openvino_encoder_model\.xml$"):
        ovreduce.find_export(tmp_path)


def test_other_parts_follow_the_model_and_the_config_is_optional(tmp_path: Path) -> None:
    for name in ("openvino_model.xml", "openvino_vision_embeddings_model.xml", "openvino_text_embeddings_model.xml"):
        (tmp_path / name).write_text("<net/>")
    export = ovreduce.find_export(tmp_path)
    assert [p.name for p in export.models] == [
        "openvino_model.xml", "openvino_text_embeddings_model.xml", "openvino_vision_embeddings_model.xml"
    ]  # fmt: skip
    assert (export.tokenizer, export.detokenizer, export.config) == (None, None, None)
    with pytest.raises(InputError, match=r"the export has no tokenizer IR \(openvino_tokenizer\.xml\)"):
        ovreduce.tokenize(export, TEXT)


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (b"{", InputError, "not valid JSON: Expecting property name enclosed in double quotes"),
        (b"[1, 2]", InputError, "expected a JSON object, not list"),
        (b"\xff", InputError, "not valid JSON"),
        (b" " * MAX_CONFIG_BYTES + b"{}", LimitExceededError, f"larger than the limit of {MAX_CONFIG_BYTES} bytes"),
        (b'{"max_position_embeddings": ' + b"9" * 5000 + b"}", InputError, "an integer of more than 4300 digits"),
    ],
    ids=["truncated", "list", "not-utf8", "too-large", "an-int-of-5000-digits"],
)
def test_a_config_that_is_no_config(tmp_path: Path, content: bytes, error: type[Exception], message: str) -> None:
    (tmp_path / "openvino_model.xml").write_text("<net/>")
    (tmp_path / "config.json").write_bytes(content)
    with pytest.raises(error, match=message):
        ovreduce.find_export(tmp_path)


def test_a_text_over_the_limit_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    (tmp_path / "openvino_model.xml").write_text("<net/>")
    (tmp_path / "openvino_tokenizer.xml").write_text("not even XML")  # never read
    export = ovreduce.find_export(tmp_path)
    with pytest.raises(LimitExceededError, match=f"more than the limit of {MAX_TEXT_BYTES} to tokenize"):
        ovreduce.tokenize(export, "é" * (MAX_TEXT_BYTES // 2 + 1))  # 2 bytes each in UTF-8
    with pytest.raises(InputError, match="the text is not valid Unicode: surrogates not allowed at character 1"):
        ovreduce.tokenize(export, "a\ud800")
    with pytest.raises(BackendError, match="OpenVINO could not read the tokenizer"):
        ovreduce.tokenize(export, TEXT)


def test_without_openvino_tokenizers_tokenize_says_what_to_install() -> None:
    export = HERE / "llama_int4"
    code = (
        "import ovreduce\n"
        f"try:\n    ovreduce.tokenize(ovreduce.find_export({str(export)!r}), 'x')\n"
        "except ovreduce.BackendError as exc:\n    print(exc.message)\n"
    )
    done = python(code)
    assert done.stdout.strip() == (
        f"{export / 'openvino_tokenizer.xml'}: OpenVINO could not read the tokenizer: the model has ops of no "
        f"OpenVINO opset that no loaded extension provides: {', '.join(TOKENIZER_IR_OPS)} (version 'extension'); "
        "they are openvino-tokenizers' ops: openvino-tokenizers is not installed; install the release for OpenVINO "
        '2026.4.1: pip install "openvino-tokenizers==2026.4.1.*" (OpenVINO: Cannot create SpecialTokensSplit layer '
        "SpecialTokensSplit_16502 id:20 from unsupported opset: extension)"
    ), done.stderr


def _copy_model(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    target.with_suffix(".bin").write_bytes(source.with_suffix(".bin").read_bytes())


def _vlm(folder: Path, language: bool = True) -> Path:
    """A multimodal export as optimum-intel writes a VLM's: its language model, vision and text embeddings, and
    tokenizer."""
    parts = ["vision_embeddings", "text_embeddings"] + (["language"] if language else [])
    for part in parts:
        _copy_model(HERE / "llama_int4" / "openvino_model.xml", folder / f"openvino_{part}_model.xml")
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "config.json"):
        (folder / name).write_bytes((HERE / "llama_int4" / name).read_bytes())
    return folder


def test_a_multimodal_export_s_language_model_comes_first(tmp_path: Path) -> None:
    """A VLM's folder (no openvino_model.xml) was no export: "not an optimum-intel export". Its language model is its
    model, as a seq2seq export's encoder is, the other parts after it."""
    export = ovreduce.find_export(_vlm(tmp_path / "vlm"))
    assert [p.name for p in export.models] == [
        "openvino_language_model.xml",
        "openvino_text_embeddings_model.xml",
        "openvino_vision_embeddings_model.xml",
    ]
    assert export.tokenizer == tmp_path / "vlm" / "openvino_tokenizer.xml"


def test_a_folder_of_parts_or_of_a_pipeline_lists_its_models_and_how_to_give_each(tmp_path: Path) -> None:
    parts = _vlm(tmp_path / "parts", language=False)
    with pytest.raises(InputError) as caught:
        ovreduce.find_export(parts)
    assert caught.value.message.startswith(
        f"{parts}: holds 2 models, none of them the model of an optimum-intel export"
    )
    assert caught.value.message.endswith(
        ": openvino_text_embeddings_model.xml, openvino_vision_embeddings_model.xml; give each by its path: "
        f"{parts / 'openvino_text_embeddings_model.xml'}, {parts / 'openvino_vision_embeddings_model.xml'}"
    )
    pipeline = tmp_path / "sd"
    for part in ("unet", "text_encoder", "vae_decoder"):
        _copy_model(HERE / "bert_encoder" / "openvino_model.xml", pipeline / part / "openvino_model.xml")
    (pipeline / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline"}')
    with pytest.raises(InputError) as caught:
        ovreduce.find_export(pipeline)
    assert caught.value.message == (
        f"{pipeline}: holds 3 models (a diffusers pipeline, as its model_index.json says), none of them the model of "
        "an optimum-intel export (openvino_model.xml, openvino_encoder_model.xml with openvino_decoder_model.xml, or a "
        "multimodal export's openvino_language_model.xml): text_encoder/openvino_model.xml, unet/openvino_model.xml, "
        "vae_decoder/openvino_model.xml; give each by its path (a folder holding openvino_model.xml is an export of "
        f"its own): {pipeline / 'text_encoder'}, {pipeline / 'unet'}, {pipeline / 'vae_decoder'}"
    )
    assert [p.name for p in ovreduce.find_export(pipeline / "unet").models] == ["openvino_model.xml"]


@pytest.mark.parametrize("suffix", ["", "_2"])
def test_a_pipelines_text_encoder_takes_the_tokenizer_beside_it(tmp_path: Path, suffix: str) -> None:
    """A diffusers pipeline keeps text_encoder's tokenizer in tokenizer/ beside it (text_encoder_2's in tokenizer_2/):
    --prompt on the text encoder said optimum-cli had written no tokenizer."""
    pipeline = tmp_path / "sd"
    _copy_model(HERE / "bert_encoder" / "openvino_model.xml", pipeline / f"text_encoder{suffix}" / "openvino_model.xml")
    for name in ("openvino_tokenizer.xml", "openvino_detokenizer.xml"):
        _copy_model(HERE / "bert_encoder" / name, pipeline / f"tokenizer{suffix}" / name)
    assert ovreduce.find_export(pipeline / f"text_encoder{suffix}").tokenizer is None  # not a pipeline: no sibling
    (pipeline / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline"}')
    export = ovreduce.find_export(pipeline / f"text_encoder{suffix}")
    assert export.tokenizer == pipeline / f"tokenizer{suffix}" / "openvino_tokenizer.xml"
    assert export.detokenizer == pipeline / f"tokenizer{suffix}" / "openvino_detokenizer.xml"


@pytest.mark.parametrize(
    "layout",
    [
        ["openvino_vision_encoder.xml", "openvino_prompt_encoder_mask_decoder.xml"],  # SAM's
        ["openvino_model_text.xml", "openvino_model_vision.xml"],  # open_clip's
    ],
)
def test_an_export_of_models_not_named_as_parts_lists_them(tmp_path: Path, layout: list[str]) -> None:
    """optimum-intel names some exports' models otherwise than ``openvino_<part>_model.xml`` (SAM's vision encoder and
    prompt encoder with mask decoder, open_clip's text and vision models): such a folder was "not an optimum-intel
    export", naming no model to audit. Its models are listed with how to give each, as a multimodal export's parts."""
    folder = tmp_path / "export"
    for name in layout:
        _copy_model(HERE / "bert_encoder" / "openvino_model.xml", folder / name)
    _copy_model(HERE / "bert_encoder" / "openvino_tokenizer.xml", folder / "openvino_tokenizer.xml")
    with pytest.raises(InputError) as caught:
        ovreduce.find_export(folder)
    shown = sorted(layout)
    assert caught.value.message.startswith(f"{folder}: holds 2 models, none of them the model of an optimum-intel")
    assert caught.value.message.endswith(
        f": {shown[0]}, {shown[1]}; give each by its path: {folder / shown[0]}, {folder / shown[1]}"
    )


def test_every_model_of_an_export_is_among_its_models(tmp_path: Path) -> None:
    """SpeechT5's text-to-speech export holds its postnet and vocoder (``openvino_postnet.xml``,
    ``openvino_vocoder.xml``, the model that makes the audio) beside its encoder and decoder: they were not among the
    export's models, so the note of what else it holds named the decoder alone. Every model IR is; the tokenizers
    are not models."""
    folder = tmp_path / "speecht5"
    for name in ("openvino_encoder_model.xml", "openvino_decoder_model.xml", "openvino_postnet.xml",
                 "openvino_vocoder.xml", "openvino_tokenizer.xml", "openvino_detokenizer.xml"):  # fmt: skip
        _copy_model(HERE / "bert_encoder" / ("openvino_model.xml" if "tokenizer" not in name else name), folder / name)
    export = ovreduce.find_export(folder)
    assert [p.name for p in export.models] == [
        "openvino_encoder_model.xml",
        "openvino_decoder_model.xml",
        "openvino_postnet.xml",
        "openvino_vocoder.xml",
    ]
    assert export.tokenizer == folder / "openvino_tokenizer.xml"
