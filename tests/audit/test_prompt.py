"""``ovreduce audit EXPORT_DIR --prompt TEXT --steps N``: an optimum-intel export audited on a real prompt,
tokenized by the export's own tokenizer IR (openvino-tokenizers), through decode steps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovreduce.exports import find_export, tokenize
from tests.cli.inprocess import run_cli

EXPORTS = Path(__file__).resolve().parents[1] / "exports"
LLAMA = EXPORTS / "llama_int4"


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    status, out, err = run_cli(capsys, "audit", *argv, "--format", "json")
    assert status == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc


def test_an_export_audited_on_a_prompt_through_decode_steps(capsys: pytest.CaptureFixture[str]) -> None:
    prompt = "The quick brown fox jumps over the lazy dog"
    doc = _audit(capsys, str(LLAMA), "--prompt", prompt, "--steps", "4", "--precision", "f32")
    tokens = tokenize(find_export(LLAMA), prompt)["input_ids"].shape[-1]
    origins = {i["name"]: (i["origin"], i["shape"]) for i in doc["inputs"]}  # type: ignore[attr-defined]
    assert origins["input_ids"] == (f"the prompt, {tokens} tokens through openvino_tokenizer.xml", [1, tokens])
    assert origins["attention_mask"][0].startswith("the prompt")
    assert origins["position_ids"][1] == [1, tokens]  # the positions of the prompt's tokens
    assert doc["steps"] == 4 and doc["ok"] is True and doc["complete"] is True
    assert doc["model"] == str(LLAMA / "openvino_model.xml")
    assert any("carried its state" in note for note in doc["notes"])  # type: ignore[attr-defined]
    norms = [row for row in doc["layers"] if row["type"] == "ReduceMean"]  # type: ignore[attr-defined]
    assert len(norms) == 5 and all(row["input_shape"][1] in (1, tokens) for row in norms)


def test_its_error_figures_change_with_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    def figures(prompt: str) -> list[object]:
        doc = _audit(capsys, str(LLAMA), "--prompt", prompt, "--steps", "2")
        rows = sorted(doc["layers"], key=lambda row: row["layer_id"])  # type: ignore[arg-type,index]
        return [(row["max_abs_error"], row["drift"] and row["drift"]["max_abs_error"]) for row in rows]

    assert figures("hello world") != figures("a completely different and longer prompt about models")


def test_a_prompt_needs_the_exports_tokenizer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lone = tmp_path / "model.xml"
    shutil.copy(LLAMA / "openvino_model.xml", lone)
    shutil.copy(LLAMA / "openvino_model.bin", tmp_path / "model.bin")
    status, out, err = run_cli(capsys, "audit", str(lone), "--prompt", "hi")
    assert status == 2 and out == ""
    assert "--prompt needs the export's tokenizer" in err and "[usage]" in err


@pytest.mark.parametrize("lone", [False, True])
def test_a_prompt_for_a_model_that_takes_no_token_ids_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lone: bool
) -> None:
    """An image classifier's export (``pixel_values`` only, no tokenizer IR, as optimum-cli writes it): the prompt
    is refused for what the model takes, naming its inputs, not sent looking for a tokenizer that would give it
    nothing; so too for its model file alone, outside any export."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([-1, 3, -1, -1], np.float32, name="pixel_values")
    kernel = ops.constant(np.ones((4, 3, 3, 3), np.float32))
    pooled = ops.reduce_mean(ops.convolution(x, kernel, [2, 2], [0, 0], [0, 0], [1, 1]), ops.constant([2, 3]), False)
    path = tmp_path / ("model.xml" if lone else "openvino_model.xml")
    ov.save_model(ov.Model([pooled], [x]), path, compress_to_fp16=False)
    if not lone:
        (tmp_path / "config.json").write_text(json.dumps({"model_type": "resnet"}))
    assert [p.get_any_name() for p in ov.Core().read_model(path).inputs] == ["pixel_values"]
    target = path if lone else tmp_path
    status, out, err = run_cli(capsys, "audit", str(target), "--prompt", "a cat")
    assert status == 2 and out == "", err
    assert "takes no token ids (its inputs: pixel_values)" in err and "tokenizer IR" not in err, err
    assert "needs the export's tokenizer" not in err, err


def test_a_seq2seq_export_audits_its_encoder_and_names_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _audit(capsys, str(EXPORTS / "t5_seq2seq"), "--prompt", "translate this", "--precision", "f32")
    assert doc["model"] == str(EXPORTS / "t5_seq2seq" / "openvino_encoder_model.xml")
    assert any("openvino_decoder_model.xml: audit each by its path" in n for n in doc["notes"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["llama_int4", "bert_encoder", "t5_seq2seq"])
def test_an_exports_tokenizer_and_detokenizer_are_audited(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """A tokenizer takes text (it was refused: "reductions of string data cannot be executed", though its one
    reduction is of i32); a detokenizer gives text (its final outputs were compared as floats: exit 3)."""
    status, out, err = run_cli(capsys, "audit", str(EXPORTS / name / "openvino_tokenizer.xml"), "--format", "json")
    assert status in (0, 1), err
    doc = json.loads(out)
    assert doc["error"] is None and doc["inputs"][0]["element_type"] == "string"
    assert doc["inputs"][0]["origin"] == (  # no seed in it
        "sample sentences, each a word shorter than the one before (a string input: a tokenizer's text)"
    )
    assert [row["type"] for row in doc["layers"]] == ["ReduceMax"] and doc["layers"][0]["input_shape"][0] == 1
    # a batch of texts of distinct lengths: the one reduction, over the batch's token counts, is established
    text = f"{doc['inputs'][0]['name']}=[3]"
    status, out, err = run_cli(capsys, "audit", str(EXPORTS / name / "openvino_tokenizer.xml"), "--shape", text,
                               "--format", "json")  # fmt: skip
    assert status == 0 and [row["status"] for row in json.loads(out)["layers"]] == ["ok"], out
    status, out, err = run_cli(capsys, "audit", str(EXPORTS / name / "openvino_detokenizer.xml"), "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["error"] is None and [f["identical"] for f in doc["final_outputs"]] == [True]
    # ids within the vocabulary, which decode to text: ids past it decode to '', and '' == '' compared nothing
    vocab = len(json.loads((EXPORTS / name / "tokenizer.json").read_text())["model"]["vocab"])
    assert doc["inputs"][0]["origin"].startswith(f"seed 0, ids in [0, {vocab}) (indices of VocabDecoder"), doc["inputs"]


def test_a_stateful_model_audited_without_steps_says_its_state_went_unread(capsys: pytest.CaptureFixture[str]) -> None:
    """The first run reads an empty KV cache: without --steps, what reads the state is audited on none of it."""
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--format", "json")
    assert status == 0, err
    [note] = [n for n in json.loads(out)["notes"] if "stateful" in n]
    assert "started from empty state" in note and "(steps N)" in note
    # a tokenizer's one variable (openvino-tokenizers' truncation flag) is no KV cache: nothing to say
    status, out, err = run_cli(capsys, "audit", str(LLAMA / "openvino_tokenizer.xml"), "--format", "json")
    assert status == 0, err
    assert not [n for n in json.loads(out)["notes"] if "stateful" in n]
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--steps", "1", "--format", "json")
    assert status == 0, err
    assert not [n for n in json.loads(out)["notes"] if "started from empty state" in n]


def test_a_batch_of_two_given_by_the_token_ids_shape_reaches_beam_idx(capsys: pytest.CaptureFixture[str]) -> None:
    """beam_idx takes the token ids' batch, as the mask and positions take their shape: a batch of 2 was refused by
    OpenVINO's shape inference (beam_idx defaulted to 1 on its own)."""
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--shape", "input_ids=2,3", "--format", "json")
    assert status == 0, err
    shapes = {i["name"]: i["shape"] for i in json.loads(out)["inputs"]}
    assert shapes["beam_idx"] == [2] and shapes["attention_mask"] == [2, 3]


def test_given_ids_outside_the_embedding_table_are_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The ids it makes are within the embedding Gather's table; given ones past it pick no token's row (zeros on the
    CPU), and the verdict rests on less than it seems: a note says how many."""
    import numpy as np

    np.save(tmp_path / "ids.npy", np.array([[5, 5000, 6000, 7, 8000, 9000, 10000, -11000]], np.int64))
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--input", f"input_ids={tmp_path / 'ids.npy'}",
                               "--format", "json")  # fmt: skip
    assert status == 0, err
    [note] = [n for n in json.loads(out)["notes"] if "ids given" in n]
    assert note.startswith("input 'input_ids': 6 of the 8 ids given are outside [-1000, 1000)"), note
    np.save(tmp_path / "ids.npy", np.array([[5, 6, -1, -1000]], np.int64))  # Gather counts -1 from the end
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--input", f"input_ids={tmp_path / 'ids.npy'}",
                               "--format", "json")  # fmt: skip
    assert not [n for n in json.loads(out)["notes"] if "ids given" in n]


def test_a_decoders_encoder_states_are_as_long_as_the_prompts_encoder_mask(capsys: pytest.CaptureFixture[str]) -> None:
    """A prompt's attention mask feeds the T5 decoder's encoder_attention_mask: the encoder's hidden states it makes
    are as long (they were one token long beside a mask of the prompt's length)."""
    decoder = EXPORTS / "t5_seq2seq" / "openvino_decoder_model.xml"
    status, out, err = run_cli(capsys, "audit", str(decoder), "--prompt", "hello there my friend", "--format", "json")
    assert status == 0, err
    shapes = {i["name"]: i["shape"] for i in json.loads(out)["inputs"]}
    assert shapes["encoder_hidden_states"][:2] == shapes["encoder_attention_mask"], shapes
    assert shapes["encoder_attention_mask"][1] > 1


def test_a_model_openvino_fails_to_run_lists_its_reductions_as_not_audited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An empty text makes the tokenizer's run fail in OpenVINO: its reduction is listed, not audited, with why."""
    import numpy as np

    tokenizer = LLAMA / "openvino_tokenizer.xml"
    name = json.loads(run_cli(capsys, "audit", str(tokenizer), "--format", "json")[1])["inputs"][0]["name"]
    np.save(tmp_path / "empty.npy", np.array([], dtype=str))
    status, out, err = run_cli(capsys, "audit", str(tokenizer), "--input", f"{name}={tmp_path / 'empty.npy'}",
                               "--format", "json")  # fmt: skip
    doc = json.loads(out)
    assert status == 1 and doc["error"].startswith("OpenVINO failed: "), err
    assert [(row["type"], row["status"]) for row in doc["layers"]] == [("ReduceMax", "not-audited")]
    assert doc["layers"][0]["not_established"].startswith("OpenVINO failed: ")


def test_a_given_mask_of_another_shape_than_the_ids_is_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A mask of 7 given beside 5 ids: OpenVINO takes them, and the audit ran on inputs of no one text unsaid."""
    import numpy as np

    np.save(tmp_path / "ids.npy", np.array([[5, 6, 7, 8, 9]], np.int64))
    np.save(tmp_path / "mask.npy", np.ones((1, 7), np.int64))
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--input", f"input_ids={tmp_path / 'ids.npy'}",
                               "--input", f"attention_mask={tmp_path / 'mask.npy'}", "--format", "json")  # fmt: skip
    assert status == 0, err
    [note] = [n for n in json.loads(out)["notes"] if "another shape" in n]
    assert note.startswith("input 'attention_mask' [1, 7] is given in another shape than the token ids 'input_ids'")
    np.save(tmp_path / "mask.npy", np.array([[0, 1, 1, 1, 1]], np.int64))  # the same shape: nothing to say
    status, out, err = run_cli(capsys, "audit", str(LLAMA), "--input", f"input_ids={tmp_path / 'ids.npy'}",
                               "--input", f"attention_mask={tmp_path / 'mask.npy'}", "--format", "json")  # fmt: skip
    assert not [n for n in json.loads(out)["notes"] if "another shape" in n]


def test_a_prompt_longer_than_the_models_positions_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """The export's config.json says 256 positions: a prompt of more tokens was audited on positions the model was
    not made for, its memory growing with their square (14,622 tokens: 3.8 GB)."""
    status, _, err = run_cli(capsys, "audit", str(LLAMA), "--prompt", "the fox " * 300)
    assert status == 2 and "tokens, more than the 256 positions the model takes (config.json: " \
        "max_position_embeddings)" in err, err  # fmt: skip


def test_a_text_input_that_is_not_unicode_is_an_input_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A lone surrogate in a given text array: OpenVINO's string tensor failed inside pybind11 ("returned a result
    with an exception set"), every row not audited, exit 1."""
    import numpy as np

    np.save(tmp_path / "text.npy", np.array(["\ud800x"], dtype="U"))
    tokenizer = LLAMA / "openvino_tokenizer.xml"
    name = next(n.get_any_name() for n in __import__("openvino").Core().read_model(tokenizer).inputs)
    status, _, err = run_cli(capsys, "audit", str(tokenizer), "--input", f"{name}={tmp_path / 'text.npy'}")
    assert status == 2 and "element 0 is not valid Unicode" in err, err


def test_a_shape_the_prompts_tokens_do_not_fit_is_a_conflict_said(capsys: pytest.CaptureFixture[str]) -> None:
    """``--prompt`` and ``--shape input_ids=...`` both ask for the ids' shape: one the prompt's tokens do not fit
    was refused as an array "given" with a shape (none was given), and one they fit was refused too. The rule: a shape
    the prompt's tokens fit is satisfied by them; any other is refused, naming both."""
    prompt = "The quick brown fox"
    tokens = tokenize(find_export(LLAMA), prompt)["input_ids"].shape[-1]
    for shape in (f"[1,{tokens + 3}]", f"[2,{tokens}]", f"[1,1..{tokens - 1}]"):
        status, out, err = run_cli(capsys, "audit", str(LLAMA), "--prompt", prompt, "--shape", f"input_ids={shape}")
        assert status == 2 and out == "", err
        assert (f"input 'input_ids' is the prompt, {tokens} tokens through openvino_tokenizer.xml, of shape "
                f"[1, {tokens}], which the shape given for it, {shape}, does not fit" in err), err  # fmt: skip
        assert "given both an array and a shape" not in err
    for shaped in (["--shape", f"input_ids=[1,1..{tokens}]"], ["--shape", "input_ids=[1,?]", "--shape",
                                                                "attention_mask=[?,?]"]):  # fmt: skip
        doc = _audit(capsys, str(LLAMA), "--prompt", prompt, *shaped)
        shapes = {i["name"]: i["shape"] for i in doc["inputs"]}  # type: ignore[attr-defined]
        assert shapes["input_ids"] == shapes["attention_mask"] == shapes["position_ids"] == [1, tokens]
        assert not any("another shape" in note for note in doc["notes"])  # type: ignore[attr-defined]


def test_a_multimodal_export_audits_its_language_model_and_names_the_rest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """As a seq2seq export audits its encoder and names the rest: a VLM's folder was refused as no export at all, and a
    diffusers pipeline's said it held no .xml file, with no word of the models in its subfolders."""
    vlm = tmp_path / "vlm"
    vlm.mkdir()
    for part in ("language", "vision_embeddings", "text_embeddings"):
        shutil.copy(LLAMA / "openvino_model.xml", vlm / f"openvino_{part}_model.xml")
        shutil.copy(LLAMA / "openvino_model.bin", vlm / f"openvino_{part}_model.bin")
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "config.json"):
        shutil.copy(LLAMA / name, vlm / name)
    doc = _audit(capsys, str(vlm), "--prompt", "hello", "--precision", "f32")
    assert doc["model"] == str(vlm / "openvino_language_model.xml")
    assert any("the export also holds openvino_text_embeddings_model.xml, openvino_vision_embeddings_model.xml: audit "
               "each by its path" in n for n in doc["notes"])  # type: ignore[attr-defined]  # fmt: skip
    pipeline = tmp_path / "sd"
    for part in ("unet", "text_encoder"):
        (pipeline / part).mkdir(parents=True)
        shutil.copy(LLAMA / "openvino_model.xml", pipeline / part / "openvino_model.xml")
    status, out, err = run_cli(capsys, "audit", str(pipeline))
    assert status == 2 and out == ""
    assert (
        "text_encoder/openvino_model.xml, unet/openvino_model.xml; give each by its path (a folder holding "
        f"openvino_model.xml is an export of its own): {pipeline / 'text_encoder'}, {pipeline / 'unet'}" in err
    ), err


def test_a_prompt_for_a_model_fed_embeddings_is_refused_and_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A VLM's language model takes ``inputs_embeds``: the prompt reached it as an attention mask alone, beside
    seeded embeddings of another length, and the audit ran as if on the prompt."""
    from tests.audit.test_steps import _fed_embeddings

    vlm = tmp_path / "vlm"
    vlm.mkdir()
    _fed_embeddings(vlm)
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "config.json"):
        shutil.copy(LLAMA / name, vlm / name)
    shutil.copy(LLAMA / "openvino_model.xml", vlm / "openvino_text_embeddings_model.xml")
    shutil.copy(LLAMA / "openvino_model.bin", vlm / "openvino_text_embeddings_model.bin")
    status, out, err = run_cli(capsys, "audit", str(vlm), "--prompt", "hello there")
    assert status == 2 and out == "", err
    assert (f"--prompt: {vlm / 'openvino_language_model.xml'} takes the prompt's token embeddings (inputs_embeds), "
            "not the token ids its tokenizer gives (openvino_text_embeddings_model.xml in the export computes them)"
            in err), err  # fmt: skip


@pytest.mark.parametrize("options", [
    ["--shape", "input_ids=[1,260]"],  # ids shaped past the positions
    ["--shape", "input_ids=[1,250]", "--steps", "10"],  # decode steps carrying them past
])  # fmt: skip
def test_positions_past_the_models_are_refused_whatever_the_route(
    capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    """A prompt longer than the positions config.json gives the model was refused, but the same positions reached by
    --shape or --steps were fed without a word (a learned position table gives zeros past its end)."""
    status, _, err = run_cli(capsys, "audit", str(LLAMA), *options)
    assert status == 2, err
    assert "more than the 256 positions the model takes (config.json: max_position_embeddings)" in err, err
    assert "the audit would feed positions 0..259 (" in err, err


@pytest.mark.parametrize(("config", "where"), [
    ({"max_target_positions": 8}, "config.json: max_target_positions"),  # a seq2seq decoder's (Whisper's)
    ({"text_config": {"max_position_embeddings": 8}}, "config.json: text_config.max_position_embeddings"),  # a VLM's
    ({"max_seq_len": 8}, "config.json: max_seq_len"),  # MPT's and DBRX's (their ALiBi bias, their rotary table)
])  # fmt: skip
def test_the_positions_of_a_decoder_or_a_language_model_config_are_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: dict[str, object], where: str
) -> None:
    """Whisper's config.json names its decoder's positions ``max_target_positions``, a VLM's nests them under
    ``text_config``: neither was read, so a prompt or steps past them were fed."""
    folder = tmp_path / "export"
    shutil.copytree(LLAMA, folder)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", **config}))
    status, _, err = run_cli(capsys, "audit", str(folder), "--steps", "1")  # 8 tokens made, then a ninth
    assert status == 2 and f"more than the 8 positions the model takes ({where})" in err, err
    status, _, err = run_cli(capsys, "audit", str(folder), "--prompt", "the fox " * 10)
    assert status == 2 and f"positions the model takes ({where}); give a shorter prompt" in err, err


@pytest.mark.parametrize(("config", "count"), [
    ({"model_type": "roberta", "pad_token_id": 0}, 63),  # positions pad+1 .. pad+n in a table of 64 rows
    ({"model_type": "roberta", "pad_token_id": 1}, 62),
    ({"model_type": "xlm-roberta"}, 62),  # no pad_token_id written: the config's default, 1
    ({"model_type": "camembert", "pad_token_id": 1}, 62),
    ({"model_type": "esm", "pad_token_id": 1, "position_embedding_type": "absolute"}, 62),
    ({"model_type": "mpnet", "pad_token_id": 0}, 62),  # MPNet numbers them from 2 whatever its pad_token_id
    ({"model_type": "m2m_100", "pad_token_id": 3}, 62),  # sinusoids of 64 + 2 rows from pad+1
    ({"model_type": "m2m_100", "pad_token_id": 1}, 64),
    ({"model_type": "esm", "pad_token_id": 1, "position_embedding_type": "rotary"}, 64),  # no table of positions
    ({"model_type": "roberta", "pad_token_id": 1, "position_embedding_type": "relative_key"}, 64),  # distances
    ({"model_type": "opt", "pad_token_id": 1}, 64),  # positions 0..n-1 offset by 2 in a table of 64 + 2 rows
    ({"model_type": "bert", "pad_token_id": 0}, 64),
])  # fmt: skip
def test_positions_numbered_from_the_padding_id_take_fewer_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: dict[str, object], count: int
) -> None:
    """RoBERTa's family numbers its positions from pad_token_id + 1 (transformers' create_position_ids_from_input_ids)
    in a table of max_position_embeddings rows, so it holds max_position_embeddings - pad_token_id - 1 tokens: a
    sequence of max_position_embeddings passed the check, then OpenVINO failed (or read a row past the table) and the
    audit told the user to give the ids. The limit is the model's count of tokens, refused up front, exit 2."""
    folder = tmp_path / "export"
    shutil.copytree(EXPORTS / "bert_encoder", folder)
    stored = json.loads((folder / "config.json").read_text())
    stored.pop("pad_token_id")
    (folder / "config.json").write_text(json.dumps({**stored, **config}))  # max_position_embeddings 64
    status, _, err = run_cli(capsys, "audit", str(folder), "--shape", f"input_ids=[1,{count}]")
    assert status == 0, err  # as many as the model takes (64: as many as the export's own table, of BERT, holds)
    if count < 64:
        status, _, err = run_cli(capsys, "audit", str(folder), "--shape", f"input_ids=[1,{count + 1}]")
        assert status == 2, err
        assert f"the audit would feed positions 0..{count} (" in err, err
        assert f"more than the {count} positions the model takes (config.json: max_position_embeddings 64" in err, err


def test_positions_past_the_table_are_refused_before_openvino_reshapes(capsys: pytest.CaptureFixture[str]) -> None:
    """BERT's export slices its position ids from a buffer as long as its table: OpenVINO's reshape to a longer
    sequence refuses first, in words about an Add of the embeddings. The positions are checked on the shape asked for
    before that, so the refusal names the positions and the table, as for every other export."""
    status, _, err = run_cli(capsys, "audit", str(EXPORTS / "bert_encoder"), "--shape", "input_ids=[1,80]")
    assert status == 2, err
    assert "the audit would feed positions 0..79 (80 token(s) of 'input_ids'), more than the 64 positions" in err, err
    assert "Argument shapes are inconsistent" not in err


def _text_embeddings(folder: Path) -> Path:
    """The llama export's own embedding lookup (its INT8 table, dequantized, gathered by the ids) as an optimum-intel
    VLM export's ``openvino_text_embeddings_model.xml`` has it: ``input`` ids in, ``inputs_embeds`` out."""
    import openvino as ov

    model = ov.Core().read_model(LLAMA / "openvino_model.xml")
    lookup = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Gather" and "embed_tokens" in
                  n.get_friendly_name())  # fmt: skip
    ids = next(p for p in model.get_parameters() if p.get_friendly_name() == "input_ids")
    result = ov.opset13.result(lookup.output(0))
    result.output(0).set_names({"inputs_embeds"})
    path = folder / "openvino_text_embeddings_model.xml"
    ov.save_model(ov.Model([result], [ids], "text_embeddings"), path, compress_to_fp16=False)
    return path


def _vlm(folder: Path, embeddings: bool = True) -> Path:
    from tests.audit.test_steps import _fed_embeddings

    folder.mkdir()
    _fed_embeddings(folder)
    if embeddings:
        _text_embeddings(folder)
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "config.json"):
        shutil.copy(LLAMA / name, folder / name)
    return folder


def _embedded_rows(folder: Path) -> np.ndarray[Any, Any]:
    """Every row the export's text-embeddings model gives, by id (OpenVINO on CPU, in f32)."""
    import openvino as ov

    compiled = ov.Core().compile_model(folder / "openvino_text_embeddings_model.xml", "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})  # fmt: skip
    return np.asarray(compiled({0: np.arange(1000, dtype=np.int64).reshape(1, -1)})[0])[0]


def test_a_vlm_language_model_is_fed_the_exports_own_text_embeddings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A VLM's language model took seeded normal embeddings (scale 1) where the export's runtime feeds it its
    text-embeddings model's (scale 0.02 here): made ids go through that model, each row OpenVINO's embedding of one
    id; each decode step's new token too; a prompt's ids as well, where the prompt was refused."""
    vlm = _vlm(tmp_path / "vlm")
    doc = _audit(capsys, str(vlm), "--precision", "f32", "--steps", "2")
    origins = {i["name"]: (i["origin"], i["shape"]) for i in doc["inputs"]}  # type: ignore[attr-defined]
    assert origins["inputs_embeds"] == ("the export's text embeddings of the made ids (seed 0, ids in [0, 1000) "
                                        "through openvino_text_embeddings_model.xml)", [1, 8, 64])  # fmt: skip
    assert any("the embedding of the argmax token of the step before (of its logits, through "
               "openvino_text_embeddings_model.xml)" in note for note in doc["notes"]), doc["notes"]  # type: ignore[attr-defined]  # fmt: skip
    assert not any("synthetic" in note or "scale 1" in note for note in doc["notes"])  # type: ignore[attr-defined]
    from ovreduce.backends.openvino import model_inputs
    from ovreduce.exports import text_embeddings

    embed = text_embeddings(find_export(vlm))
    assert embed is not None and embed.vocabulary == 1000
    import openvino as ov

    probe = ov.Core().read_model(vlm / "openvino_language_model.xml")
    arrays, _, _ = model_inputs(probe, {}, 0, embed=embed)
    made = arrays[[port.get_any_name() for port in probe.inputs].index("inputs_embeds")][0]
    rows = _embedded_rows(vlm)
    assert all(any(np.array_equal(row, table_row) for table_row in rows) for row in made)  # each one id's embedding
    prompt = "The quick brown fox"
    tokens = tokenize(find_export(vlm), prompt)["input_ids"]
    doc = _audit(capsys, str(vlm), "--prompt", prompt, "--precision", "f32")
    origins = {i["name"]: (i["origin"], i["shape"]) for i in doc["inputs"]}  # type: ignore[attr-defined]
    count = tokens.shape[-1]
    assert origins["inputs_embeds"] == (f"the prompt, {count} tokens through openvino_tokenizer.xml and "
                                        "openvino_text_embeddings_model.xml", [1, count, 64])  # fmt: skip
    assert origins["attention_mask"][1] == [1, count]


def test_a_model_fed_made_embeddings_without_the_exports_says_they_are_synthetic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    vlm = _vlm(tmp_path / "vlm", embeddings=False)
    doc = _audit(capsys, str(vlm), "--precision", "f32", "--target", "f16")
    assert {i["name"]: i["origin"] for i in doc["inputs"]}["inputs_embeds"] == "seed 0"  # type: ignore[attr-defined]
    assert (
        "input 'inputs_embeds': token embeddings made of seeded normal values (scale 1), not the embeddings of any "
        "token (no text-embeddings model beside it to make them): a model's own embeddings are of another scale, so "
        "what a target precision's verdict says of the headroom is not representative; give them as an input"
    ) in doc["notes"], doc["notes"]  # type: ignore[operator]


def _outlier_vlm(folder: Path) -> tuple[Path, np.ndarray[Any, Any]]:
    """A text-embeddings model whose table holds a massive-activation dim (300, whose square passes f16's 65504 in an
    RMSNorm) and a language model of one RMSNorm fed its ``inputs_embeds``; the export's embeddings of 8 ids."""
    import openvino as ov
    from openvino import opset13 as ops

    folder.mkdir()
    rng = np.random.default_rng(0)
    table = (rng.standard_normal((100, 64)) * 0.02).astype(np.float32)
    table[:, 7] = 300.0
    ids = ops.parameter([-1, -1], np.int64, name="input")
    ids.output(0).set_names({"input"})
    found = ops.result(ops.gather(ops.constant(table), ids, ops.constant(np.int64(0))))
    found.output(0).set_names({"inputs_embeds"})
    ov.save_model(
        ov.Model([found], [ids], "emb"), folder / "openvino_text_embeddings_model.xml", compress_to_fp16=False
    )
    x = ops.parameter([-1, -1, 64], np.float32, name="inputs_embeds")
    x.output(0).set_names({"inputs_embeds"})
    power = ops.power(x, ops.constant(np.float32(2)), name="norm/pow")
    mean = ops.reduce_mean(power, ops.constant(np.array([-1], np.int64)), True, name="norm/ReduceMean")
    scaled = ops.multiply(x, ops.power(ops.add(mean, ops.constant(np.float32(1e-6))), ops.constant(np.float32(-0.5))))
    logits = ops.matmul(scaled, ops.constant(rng.standard_normal((64, 100)).astype(np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    ov.save_model(ov.Model([logits], [x], "lm"), folder / "openvino_language_model.xml", compress_to_fp16=False)
    (folder / "config.json").write_text(json.dumps({"model_type": "llava", "text_config": {"hidden_size": 64}}))
    return folder, table[rng.integers(0, 100, (1, 8))]


def test_the_target_verdict_on_made_embeddings_is_the_one_on_the_exports_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Made of seeded normal values, the embeddings left the RMSNorm's square far from f16's maximum (headroom),
    where the export's own embeddings overflow it: made through the export's text-embeddings model, the audit says
    what it says on them."""
    vlm, own = _outlier_vlm(tmp_path / "vlm")
    np.save(tmp_path / "own.npy", own)

    def verdict(*extra: str) -> object:
        _, out, _ = run_cli(capsys, "audit", str(vlm / "openvino_language_model.xml"), "--precision", "f32",
                                 "--target", "f16", "--format", "json", *extra)  # fmt: skip
        doc = json.loads(out)
        return next(row for row in doc["layers"] if row["layer_name"] == "norm/ReduceMean")["target"]["status"]

    assert verdict() == verdict("--input", f"inputs_embeds={tmp_path / 'own.npy'}") == "overflow"


def _speecht5(folder: Path, *, decoder: bool = True) -> Path:
    """A SpeechT5-like text-to-speech export: an encoder of ``input_ids`` (embeddings + a table of 32 text positions,
    sliced to the sequence: its prenet) and, where ``decoder`` says so, a decoder of ``inputs_embeds`` (mel frames +
    a table of 64 speech positions) beside ``encoder_hidden_states``, each into a mean; config.json as SpeechT5's
    gives them."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    def table(x: object, rows: int, width: int) -> object:
        length = ops.gather(ops.shape_of(x), ops.constant(np.array([1], np.int64)), ops.constant(np.int64(0)))
        pe = ops.constant(np.random.default_rng(rows).standard_normal((1, rows, width)).astype(np.float32))
        one = ops.constant(np.array([1], np.int64))
        return ops.slice(pe, ops.constant(np.array([0], np.int64)), length, one, one)

    folder.mkdir()
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    words = ops.gather(ops.constant(np.ones((100, 32), np.float32)), ids, ops.constant(np.int64(0)))
    mean = ops.reduce_mean(ops.add(words, table(ids, 32, 32)), ops.constant(np.array([-1], np.int64)), True)
    ov.save_model(ov.Model([ops.result(mean)], [ids]), folder / "openvino_encoder_model.xml", compress_to_fp16=False)
    if decoder:
        frames = ops.parameter([-1, -1, 16], np.float32, name="inputs_embeds")
        encoded = ops.parameter([-1, -1, 32], np.float32, name="encoder_hidden_states")
        axis = ops.constant(np.array([-1], np.int64))
        means = [ops.reduce_mean(ops.add(frames, table(frames, 64, 16)), axis, True), ops.reduce_mean(encoded, axis)]
        ov.save_model(ov.Model([ops.result(m) for m in means], [frames, encoded]),
                      folder / "openvino_decoder_model.xml", compress_to_fp16=False)  # fmt: skip
    (folder / "config.json").write_text(json.dumps({"model_type": "speecht5", "max_text_positions": 32,
                                                    "max_speech_positions": 64, "vocab_size": 100}))  # fmt: skip
    return folder


@pytest.mark.parametrize("decoder", [True, False], ids=["export", "encoder-alone"])
def test_speecht5s_text_positions_are_its_encoders(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, decoder: bool
) -> None:
    """SpeechT5's config.json gives its text positions as ``max_text_positions``, which was not read: ids past them
    reached OpenVINO, whose shape error ended the audit with "give it with --shape". They are refused up front, naming
    the key, for the encoder (in its export, or copied alone beside its config.json); the decoder, fed speech frames,
    takes ``max_speech_positions`` of them, not the text's."""
    folder = _speecht5(tmp_path / "speecht5", decoder=decoder)
    target = str(folder) if decoder else str(folder / "openvino_encoder_model.xml")
    status, _, err = run_cli(capsys, "audit", target, "--shape", "input_ids=[1,32]")
    assert status == 0, err  # as many as the table holds
    status, _, err = run_cli(capsys, "audit", target, "--shape", "input_ids=[1,40]")
    assert status == 2, err
    assert ("the audit would feed positions 0..39 (40 token(s) of 'input_ids'), more than the 32 positions the model "
            "takes (config.json: max_text_positions)") in err, err  # fmt: skip
    assert "Argument shapes are inconsistent" not in err, err
    if not decoder:
        return
    speech = str(folder / "openvino_decoder_model.xml")
    status, _, err = run_cli(capsys, "audit", speech, "--shape", "inputs_embeds=[1,40,16]")
    assert status == 0, err  # 40 frames: past the text's positions, within the speech's
    status, _, err = run_cli(capsys, "audit", speech, "--shape", "inputs_embeds=[1,65,16]")
    assert status == 2, err
    assert "more than the 64 positions the model takes (config.json: max_speech_positions)" in err, err


def test_a_vision_encoder_decoders_decoder_takes_the_positions_its_config_nests(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """TrOCR's (Donut's, ViT-GPT2's) config.json nests its decoder's positions as ``decoder.max_position_embeddings``:
    ids past them reached OpenVINO's shape error; they are refused naming the key, and the image encoder is held to
    none of them."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    folder = tmp_path / "trocr"
    folder.mkdir()
    pixels = ops.parameter([-1, 3, -1, -1], np.float32, name="pixel_values")
    patched = ops.convolution(pixels, ops.constant(np.ones((8, 3, 4, 4), np.float32)), [4, 4], [0, 0], [0, 0], [1, 1])
    pooled = ops.reduce_mean(patched, ops.constant(np.array([2, 3], np.int64)), False)
    ov.save_model(ov.Model([ops.result(pooled)], [pixels]), folder / "openvino_encoder_model.xml",
                  compress_to_fp16=False)  # fmt: skip
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    encoded = ops.parameter([-1, -1, 8], np.float32, name="encoder_hidden_states")
    length = ops.gather(ops.shape_of(ids), ops.constant(np.array([1], np.int64)), ops.constant(np.int64(0)))
    one = ops.constant(np.array([1], np.int64))
    table = ops.slice(ops.constant(np.ones((1, 16, 8), np.float32)), ops.constant(np.array([0], np.int64)), length,
                      one, one)  # fmt: skip
    words = ops.add(ops.gather(ops.constant(np.ones((10, 8), np.float32)), ids, ops.constant(np.int64(0))), table)
    axis = ops.constant(np.array([-1], np.int64))
    means = [ops.reduce_mean(words, axis, True), ops.reduce_mean(encoded, axis, True)]
    ov.save_model(ov.Model([ops.result(m) for m in means], [ids, encoded]), folder / "openvino_decoder_model.xml",
                  compress_to_fp16=False)  # fmt: skip
    (folder / "config.json").write_text(json.dumps({
        "model_type": "vision-encoder-decoder", "encoder": {"model_type": "vit", "image_size": 32},
        "decoder": {"model_type": "trocr", "max_position_embeddings": 16},
    }))  # fmt: skip
    decoder = str(folder / "openvino_decoder_model.xml")
    status, _, err = run_cli(capsys, "audit", decoder, "--shape", "input_ids=[1,16]")
    assert status == 0, err
    status, _, err = run_cli(capsys, "audit", decoder, "--shape", "input_ids=[1,20]")
    assert status == 2, err
    assert "more than the 16 positions the model takes (config.json: decoder.max_position_embeddings)" in err, err
    status, _, err = run_cli(capsys, "audit", str(folder))  # the encoder, fed an image: no positions of ids
    assert status == 0, err


def test_a_prompt_is_the_one_choice_of_a_multiple_choice_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A multiple-choice head takes ``[batch, choices, tokens]``; the tokenizer gives ``[1, n]``, which was refused
    ("has shape [1, 7] but the layer expects [?,?,?]"). The prompt is fed as the model's one choice."""
    from tests.audit.test_shapes import _multiple_choice

    bert = EXPORTS / "bert_encoder"
    for name in ("config.json", "openvino_tokenizer.xml", "openvino_tokenizer.bin", "tokenizer.json",
                 "tokenizer_config.json"):  # fmt: skip
        shutil.copy(bert / name, tmp_path / name)
    _multiple_choice(tmp_path / "openvino_model.xml")
    prompt = "the cat sat on the mat"
    tokens = tokenize(find_export(bert), prompt)["input_ids"].shape[-1]
    doc = _audit(capsys, str(tmp_path), "--prompt", prompt, "--precision", "f32")
    made = {i["name"]: (i["shape"], i["origin"]) for i in doc["inputs"]}  # type: ignore[attr-defined]
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert made[name][0] == [1, 1, tokens], made
        assert made[name][1].endswith("as the one choice of the model's [batch, choices, tokens]"), made
    assert doc["ok"] is True


def test_a_prompt_for_a_model_of_a_folder_of_several_takes_the_tokenizer_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """open_clip's export holds its text and vision models (``openvino_model_text.xml``, ``openvino_model_vision.xml``)
    and the tokenizer: its text model given by its path with --prompt was "not in an optimum-intel export directory
    (with openvino_tokenizer.xml)", beside that very tokenizer. The tokenizer beside a model file is its tokenizer."""
    for name in ("openvino_model_text", "openvino_model_vision"):
        shutil.copy(LLAMA / "openvino_model.xml", tmp_path / f"{name}.xml")
        shutil.copy(LLAMA / "openvino_model.bin", tmp_path / f"{name}.bin")
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin"):
        shutil.copy(LLAMA / name, tmp_path / name)
    doc = _audit(capsys, str(tmp_path / "openvino_model_text.xml"), "--prompt", "hi there", "--precision", "f32")
    tokens = tokenize(find_export(LLAMA), "hi there")["input_ids"].shape[-1]
    origins = {i["name"]: i["origin"] for i in doc["inputs"]}  # type: ignore[attr-defined]
    assert origins["input_ids"] == f"the prompt, {tokens} tokens through openvino_tokenizer.xml", origins


def test_the_detokenizer_takes_the_prompts_ids_and_the_tokenizer_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    """--prompt on an export's tokenizer IRs was refused as "takes no token ids": the detokenizer's one input is the
    token ids (unnamed: openvino-tokenizers leaves it so), the tokenizer's the text. The detokenizer gets the ids
    the export's tokenizer gives the prompt, as OpenVINO's tokenizer run alone gives them, and the tokenizer the
    prompt itself."""
    import openvino as ov

    from ovreduce._openvino import core

    folder = Path(__file__).resolve().parents[1] / "exports" / "llama_int4"
    ids = core().compile_model(str(folder / "openvino_tokenizer.xml"), "CPU")(
        [ov.Tensor(np.array(["hello there"]))])["input_ids"]  # fmt: skip
    status, out, err = run_cli(capsys, "audit", str(folder / "openvino_detokenizer.xml"), "--prompt", "hello there",
                               "--format", "json")  # fmt: skip
    assert status == 0, err
    [fed] = json.loads(out)["inputs"]
    assert fed["shape"] == list(ids.shape) and fed["element_type"] == "i64", fed
    assert fed["origin"] == f"the prompt's token ids, {ids.shape[-1]} through openvino_tokenizer.xml", fed
    status, out, err = run_cli(capsys, "audit", str(folder / "openvino_tokenizer.xml"), "--prompt", "hello there",
                               "--format", "json")  # fmt: skip
    assert status in (0, 1), err
    [fed] = json.loads(out)["inputs"]
    assert fed["origin"] == "the prompt's text" and fed["shape"] == [1], fed


def test_a_prompt_beside_beams_of_two_is_a_batch_of_the_same_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    """A prompt (batch 1) beside beam_idx shaped to 2: OpenVINO's shape inference refused the state's Concat, with
    its validation text and a hint to give the shape that was given. The prompt is repeated over the beams' batch,
    as ids made are, and the model runs."""
    prompt = "hello world"
    doc = _audit(capsys, str(LLAMA), "--prompt", prompt, "--shape", "beam_idx=[2]", "--precision", "f32")
    tokens = tokenize(find_export(LLAMA), prompt)["input_ids"].shape[-1]
    inputs = {i["name"]: i for i in doc["inputs"]}  # type: ignore[attr-defined]
    assert inputs["input_ids"]["shape"] == inputs["attention_mask"]["shape"] == [2, tokens], inputs
    assert inputs["input_ids"]["origin"].endswith("repeated to batch 2, that of 'beam_idx' [2] shaped"), inputs
    assert doc["ok"] is True


@pytest.mark.parametrize("option", ["--shape", "--input"])
def test_a_name_of_another_model_of_the_export_names_that_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str
) -> None:
    """An input of the export's decoder named on its folder (which audits the encoder) was refused "names no model
    input ... (give it with --shape NAME=SHAPE ...)": the hint repeated what was given, and the model that takes the
    input went unnamed. The refusal names it, and the path that audits it."""
    np.save(tmp_path / "states.npy", np.zeros((1, 3, 32), np.float32))
    given = "encoder_hidden_states=[1,3,32]" if option == "--shape" else f"encoder_hidden_states={tmp_path}/states.npy"
    status, out, err = run_cli(capsys, "audit", str(EXPORTS / "t5_seq2seq"), option, given)
    assert status == 2 and out == ""
    assert "'encoder_hidden_states' names no model input (inputs: attention_mask, input_ids)" in err, err
    assert "is an input of openvino_decoder_model.xml in the export" in err, err
    assert str(EXPORTS / "t5_seq2seq" / "openvino_decoder_model.xml") in err and "give it with" not in err, err
