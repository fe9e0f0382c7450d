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
    ],
    ids=["truncated", "list", "not-utf8", "too-large"],
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
