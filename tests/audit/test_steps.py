"""A stateful LLM audited as it generates: the first run, then decode steps on one infer request with the
KV cache carried as OpenVINO's state, each step fed the argmax token of the step before.

Differential: the steps ovreduce runs give exactly the logits of a generation loop written with OpenVINO's
own API (one request, the previous step's argmax fed back, the mask one longer, the next position).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest

from ovreduce.audit import _decoding, audit_model
from ovreduce.backends.openvino import model_inputs, read_model, run_steps
from ovreduce.errors import InputError
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape
from tests.cli.inprocess import run_cli

EXPORTS = Path(__file__).resolve().parents[1] / "exports"
LLAMA = EXPORTS / "llama_int4" / "openvino_model.xml"
# an f32 run as ovreduce compiles one: the KV cache in f32 too (the precision hint does not set it)
EXACT = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}


def _audited(path: Any, **kwargs: Any) -> Any:
    """The audit document of the model at ``path`` (read, audited with ``kwargs``, closed)."""
    model = load_ir(path)
    try:
        return audit_model(model, **kwargs)
    finally:
        model.close()


def _generate(prompt: np.ndarray, steps: int) -> list[np.ndarray]:
    """Greedy generation with OpenVINO's API alone: the logits of the first run and of each step."""
    compiled = ov.Core().compile_model(str(LLAMA), "CPU", EXACT)
    request = compiled.create_infer_request()
    ids, length = prompt, prompt.shape[1]
    out = []
    for step in range(steps + 1):
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones((1, length + step), np.int64),
            "position_ids": np.arange(length + step - ids.shape[1], length + step, dtype=np.int64).reshape(1, -1),
            "beam_idx": np.zeros(1, np.int32),
        }
        logits = np.array(request.infer(feeds)["logits"], copy=True)
        out.append(logits)
        ids = np.argmax(logits[:, -1, :], axis=-1).reshape(1, 1).astype(np.int64)
    return out


def test_decode_steps_are_generation_as_openvino_runs_it() -> None:
    prompt = np.array([[5, 17, 300, 42]], np.int64)
    model = read_model(LLAMA)
    probe = read_model(LLAMA)
    arrays, described, _ = model_inputs(probe, {"input_ids": prompt}, 0)  # the mask and positions follow the ids
    assert [tuple(i.shape) for i in described] == [(1, 4), (1, 4), (1, 4), (1,)]
    next_inputs, _ = _decoding(probe, arrays, 3, 0)
    runs = run_steps(model, [], arrays, "CPU", "f32", next_inputs)
    expected = _generate(prompt, 3)
    assert len(runs) == 4
    for run, logits in zip(runs, expected, strict=True):
        np.testing.assert_array_equal(run.outputs[0], logits)


def test_an_llm_audit_over_decode_steps() -> None:
    doc = _audited(LLAMA, precision="f32", steps=3)
    assert doc.error is None and doc.ok and doc.steps == 3
    assert all(layer.step is not None and 0 <= layer.step <= 3 for layer in doc.layers)
    assert any("carried its state from the first run through 3 decode step(s)" in note for note in doc.notes)
    assert sum(layer.type == "ReduceMean" and layer.status == "ok" for layer in doc.layers) == 5


def test_steps_need_a_stateful_model() -> None:
    model = load_ir(EXPORTS / "bert_encoder" / "openvino_model.xml")
    try:
        with pytest.raises(InputError, match="has no state"):
            audit_model(model, steps=2)
    finally:
        model.close()


def test_steps_need_a_prompt_of_a_token_at_least() -> None:
    """An empty prompt predicts no token for the first step to feed: that is the request's fault, said so. The
    audit reported its own IndexError as "OpenVINO failed", with advice about integer inputs."""
    model = load_ir(LLAMA)
    empty = {"input_ids": PartialShape.parse("[1,0]")}
    try:
        assert audit_model(model, shapes=empty).error is None  # no steps: the prompt may be empty
        with pytest.raises(InputError, match=r"after an empty prompt \(input_ids is \[1, 0\]\)"):
            audit_model(model, shapes=empty, steps=2)
    finally:
        model.close()


@pytest.mark.parametrize("value", ["65", "-1", "two"])
def test_the_steps_option_is_bounded(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(capsys, "audit", str(LLAMA), "--steps", value)
    assert exit_info.value.code == 2
    assert "is not a number of decode steps: an integer from 0 to 64" in capsys.readouterr().err


def test_the_steps_reach_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "audit", str(LLAMA), "--steps", "2", "--precision", "f32", "--format", "json")
    assert status == 0
    doc = json.loads(out)
    assert doc["steps"] == 2 and {layer["step"] for layer in doc["layers"]} <= {0, 1, 2}


def test_the_service_audits_decode_steps_as_the_library_does(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from api.config import Settings
    from api.main import create_app
    from tests.api.conftest import files

    settings = Settings(store=tmp_path / "store", run_timeout_s=60.0)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        upload = files(LLAMA.read_bytes(), LLAMA.with_suffix(".bin").read_bytes(), "llama.xml")
        mid = client.post("/v1/models", files=upload).json()["id"]
        response = client.post(f"/v1/models/{mid}/audit", json={"steps": 2, "precision": "f32"})
        assert response.status_code == 200, response.text
        doc = response.json()
        assert client.post(f"/v1/models/{mid}/audit", json={"steps": 65}).status_code == 400
    library = _audited(LLAMA, precision="f32", steps=2).to_json()
    assert doc["steps"] == library["steps"] == 2
    assert sorted((r["layer_id"], r["status"]) for r in doc["layers"]) == sorted(
        (r["layer_id"], r["status"]) for r in library["layers"]
    )
    assert all(r["step"] in (0, 1, 2) for r in doc["layers"])
    assert any("carried its state" in note for note in doc["notes"])


def test_a_seq2seq_decoder_keeps_its_encoder_mask_through_the_steps() -> None:
    path = EXPORTS / "t5_seq2seq" / "openvino_decoder_model.xml"
    probe = read_model(path)
    encoder = {
        "encoder_hidden_states": np.ones((1, 5, 32), np.float32),
        "encoder_attention_mask": np.ones((1, 5), np.int64),
    }
    arrays, described, _ = model_inputs(probe, {**encoder, "input_ids": np.array([[0]])}, 0)
    next_inputs, _ = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    assert len(runs) == 3
    names = [i.name for i in described]
    feeds = next_inputs(1, runs[0])
    assert feeds is not None
    assert feeds[names.index("encoder_attention_mask")].shape == (1, 5)  # the encoder's length, every step
    assert feeds[names.index("input_ids")].shape == (1, 1)


def test_a_given_attention_mask_grows_by_the_new_token_keeping_its_padding() -> None:
    """A left-padded prompt's mask, given: each decode step attends what the prompt did plus the new token, as
    generation feeds it (the padding was replaced by ones from the first step on)."""
    import types

    model = ov.Core().read_model(Path(__file__).resolve().parents[1] / "exports" / "llama_int4" / "openvino_model.xml")
    index = {port.get_any_name(): i for i, port in enumerate(model.inputs)}
    mask = np.array([[0, 0, 0, 1, 1, 1, 1, 1]], np.int64)
    first = {index["input_ids"]: np.array([[0, 0, 0, 5, 6, 7, 8, 9]], np.int64), index["attention_mask"]: mask,
             index["position_ids"]: np.array([[0, 0, 0, 0, 1, 2, 3, 4]], np.int64),
             index["beam_idx"]: np.array([0], np.int32)}  # fmt: skip
    next_inputs, _ = _decoding(model, first, 2, 0)
    logits = types.SimpleNamespace(outputs=[np.zeros((1, 8, 1000), np.float32)])
    step1 = next_inputs(1, logits)  # type: ignore[arg-type]
    assert step1 is not None and step1[index["attention_mask"]].tolist() == [[0, 0, 0, 1, 1, 1, 1, 1, 1]]
    step2 = next_inputs(2, logits)  # type: ignore[arg-type]
    assert step2 is not None and step2[index["attention_mask"]].tolist() == [[0, 0, 0, 1, 1, 1, 1, 1, 1, 1]]


def test_decode_tokens_stay_among_the_ids_the_embedding_holds(tmp_path: Path) -> None:
    """Logits wider than the embedding table (a padded head): the likeliest token, 19, is no row of a 16-row table,
    where OpenVINO's Gather would give a row of zeros; each step is fed the likeliest token the table holds."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)
    ids = ops.parameter([1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    rows = ops.gather(ops.constant(np.abs(rng.standard_normal((16, 8))).astype(np.float32)), ids,
                      ops.constant(np.int64(0)))  # fmt: skip
    head = np.zeros((8, 32), np.float32)
    head[:, 19], head[:, 5] = 50.0, 1.0  # 19 first, then 5
    logits = ops.result(ops.matmul(rows, ops.constant(head), False, False))
    logits.output(0).set_names({"logits"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([logits], [ids], "padded_head"), path)
    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, {}, 0)
    next_inputs, replay = _decoding(probe, arrays, 3, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    assert int(np.argmax(runs[0].outputs[0][0, -1])) == 19  # what an argmax over every logit would feed
    fed = [int(np.asarray(replay(step, runs[step - 1])[0]).reshape(-1)[0]) for step in (1, 2, 3)]
    assert fed == [5, 5, 5], fed


def _fed_embeddings(folder: Path) -> Path:
    """The llama export as an optimum-intel VLM's language model has it: ``inputs_embeds`` in place of its embedding
    lookup (and of the ids whose shape it read), beside the mask, the positions and the beams; stateful."""
    from openvino import opset13 as ops

    model = ov.Core().read_model(LLAMA)
    lookup = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Gather" and "embed_tokens" in
                  n.get_friendly_name())  # fmt: skip
    embeds = ops.parameter(ov.PartialShape([-1, -1, 64]), np.float32, name="inputs_embeds")
    lookup.output(0).replace(embeds.output(0))
    embeds.output(0).set_names({"inputs_embeds"})  # (after: the replace gives it the lookup's names)
    ids = next(p for p in model.get_parameters() if p.get_friendly_name() == "input_ids")
    for target in list(ids.output(0).get_target_inputs()):  # the sequence's shape, read from the embeddings
        shape_of = target.get_node()
        if shape_of.get_type_name() != "ShapeOf":  # (the lookup's index, gone with it)
            continue
        whole = ops.shape_of(embeds, shape_of.get_output_element_type(0))
        first_two = ops.strided_slice(whole, np.array([0]), np.array([2]), np.array([1]), [0], [0])
        shape_of.output(0).replace(first_two.output(0))
    parameters = [p for p in model.get_parameters() if p is not ids] + [embeds]
    lm = ov.Model(model.get_results(), model.get_sinks(), parameters, "language_model")
    path = folder / "openvino_language_model.xml"
    ov.save_model(lm, path, compress_to_fp16=False)
    return path


def test_a_model_fed_embeddings_gets_a_mask_positions_and_decode_steps_along_them(tmp_path: Path) -> None:
    """Fed ``inputs_embeds``, not token ids, the model got a mask and positions of one token beside 8 embeddings
    (every token at position 0), and each decode step the first run's 8 embeddings again, said to be an argmax
    token. The mask and positions now follow the embeddings, and a step is fed one new token's embedding: its
    logits are those of a generation loop fed the same, written with OpenVINO's API."""
    path = _fed_embeddings(tmp_path)
    probe = read_model(path)
    names = [port.get_any_name() for port in probe.inputs]
    given = np.random.default_rng(3).standard_normal((1, 5, 64)).astype(np.float32)
    arrays, _, notes = model_inputs(probe, {"inputs_embeds": given}, 0)
    fed = {names[i]: array for i, array in arrays.items()}
    assert fed["attention_mask"].tolist() == [[1] * 5] and fed["position_ids"].tolist() == [list(range(5))], notes
    _, described, _ = model_inputs(read_model(path), {}, 0)
    assert {i.name: tuple(i.shape) for i in described}["inputs_embeds"] == (1, 8, 64)
    next_inputs, replay = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    steps = [replay(step, runs[step - 1]) for step in range(3)]
    assert all(feeds is not None for feeds in steps)
    for step, feeds in enumerate(steps[1:], start=1):
        assert feeds is not None and feeds[names.index("inputs_embeds")].shape == (1, 1, 64)
        assert feeds[names.index("attention_mask")].shape == (1, 5 + step)
        assert feeds[names.index("position_ids")].tolist() == [[4 + step]]
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    for run, feeds in zip(runs, steps, strict=True):
        assert feeds is not None
        logits = request.infer({names[i]: array for i, array in feeds.items()})["logits"]
        np.testing.assert_array_equal(run.outputs[0], logits)
    doc = _audited(path, precision="f32", steps=2)
    assert any("each fed a new token's embedding (seeded normal values: the model takes no token ids)" in note
               for note in doc.notes), doc.notes  # fmt: skip


def test_a_model_fed_embeddings_with_token_types_gets_a_new_embedding_each_step() -> None:
    """Beside ``inputs_embeds``, a model's other input that picks rows of a table (``token_type_ids``) was taken for
    its token: each step got it as the argmax of the logits, and the prompt's embeddings again."""
    from openvino import opset13 as ops

    def parameter(shape: list[int], etype: type, name: str) -> Any:
        node = ops.parameter(ov.PartialShape(shape), etype, name=name)
        node.output(0).set_names({name})
        return node

    embeds, mask = parameter([-1, -1, 16], np.float32, "inputs_embeds"), parameter([-1, -1], np.int64, "attention_mask")
    positions, types = parameter([-1, -1], np.int64, "position_ids"), parameter([-1, -1], np.int64, "token_type_ids")
    typed = ops.add(embeds, ops.gather(ops.constant(np.ones((2, 16), np.float32)), types, ops.constant(np.int64(0))))
    logits = ops.matmul(typed, ops.constant(np.ones((16, 30), np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    model = ov.Model([logits, ops.reduce_sum(ops.convert(ops.add(mask, positions), "f32"), [1], False)],
                     [embeds, mask, positions, types])  # fmt: skip
    arrays, _, _ = model_inputs(model, {}, 0)
    next_inputs, _ = _decoding(model, arrays, 1, 0)
    step = next_inputs(1, None)  # type: ignore[arg-type]  # (the run before: what a token would be picked from)
    assert step is not None
    names = [port.get_any_name() for port in model.inputs]
    fed = {names[i]: array for i, array in step.items()}
    assert fed["inputs_embeds"].shape == (1, 1, 16) and fed["token_type_ids"].shape == (1, 1), fed
    assert fed["attention_mask"].shape == (1, 9) and fed["position_ids"].tolist() == [[8]], fed


def _token_rows(rng: np.random.Generator) -> tuple[Any, Any, Any]:
    """Token ids ``[1, ?]`` (``input_ids``), their rows of a random embedding ``[100, 16]``, and a state variable
    ``kv`` ``[1, ?, 16]`` for a cache of them: (ids, rows, variable)."""
    from openvino import opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    ids = ops.parameter([1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    rows = ops.gather(ops.constant(rng.standard_normal((100, 16)).astype(np.float32)), ids, ops.constant(np.int64(0)))
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([1, -1, 16]), ov.Type.f32, "kv"
    return ids, rows, Variable(info)


def test_decode_steps_feed_the_argmax_of_logits_of_the_last_position_only(tmp_path: Path) -> None:
    """An export that keeps the last position only has ``[batch, vocab]`` logits: each step is fed their argmax, as
    a generation loop written with OpenVINO's API feeds it. The audit indexed them as ``[batch, positions, vocab]``
    and reported its own IndexError as "OpenVINO failed", with advice to give the inputs it had made."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)
    ids, rows, variable = _token_rows(rng)
    cache = ops.concat([ops.read_value(variable), rows], 1)
    mean = ops.reduce_mean(cache, ops.constant(np.array([1], np.int64)), False, name="cache_mean")
    logits = ops.matmul(mean, ops.constant(rng.standard_normal((16, 100)).astype(np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(logits)], [ops.assign(cache, variable)], [ids], "last_only"), path)
    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, {}, 0)
    next_inputs, replay = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    feeds = arrays[0]
    for step, run in enumerate(runs):
        expected = np.array(request.infer({0: feeds})[0], copy=True)
        np.testing.assert_array_equal(run.outputs[0], expected)
        feeds = np.argmax(expected, axis=-1).reshape(1, 1)
        if step < 2:
            fed = replay(step + 1, run)
            assert fed is not None and fed[0].tolist() == feeds.tolist()
    doc = _audited(path, precision="f32", steps=2)
    assert doc.error is None and doc.steps == 2, doc.error
    assert [layer.status for layer in doc.layers] == ["ok"]


def _stateful_with_if(path: Path, logits: bool = True) -> Path:
    """A stateful model whose cache (the state and this run's token rows) goes through a top-level If, whose then
    body reduces it along the sequence: a prompt of one token leaves that reduction one element per slice on the
    first run (nothing established), and the decode steps grow it."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)
    ids, rows, variable = _token_rows(rng)
    cache = ops.concat([ops.read_value(variable), rows], 1)
    inner = ops.parameter([1, -1, 16], np.float32, name="inner")
    summed = ops.reduce_sum(inner, ops.constant(np.array([1], np.int64)), False, name="body_sum")
    then_body = ov.Model([ops.result(summed)], [inner], "then")
    other = ops.parameter([1, -1, 16], np.float32, name="other")
    else_body = ov.Model(
        [ops.result(ops.squeeze(ops.gather(other, ops.constant(np.array([0])), ops.constant(np.int64(1))), [1]))],
        [other],
        "else",
    )
    condition = ops.greater(
        ops.reduce_sum(ids, ops.constant(np.array([0, 1], np.int64)), False), ops.constant(np.array(-1, np.int64))
    )  # ids are never negative: the then body
    branch = ops.if_op(condition.output(0))
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    branch.set_input(cache.output(0), inner, other)
    out = branch.set_output(then_body.get_results()[0], else_body.get_results()[0])
    head = ops.matmul(out, ops.constant(rng.standard_normal((16, 100)).astype(np.float32)), False, False)
    if logits:
        head.output(0).set_names({"logits"})
    ov.save_model(ov.Model([ops.result(head)], [ops.assign(cache, variable)], [ids], "if_in_steps"), path)
    return path


def test_a_top_level_if_s_body_is_judged_over_the_steps(tmp_path: Path) -> None:
    """The body's reduction was judged on the first run only: one token, one element per slice, nothing established,
    though the decode steps fed it a growing cache; its row now shows its worst step, as a top-level row does."""
    model = load_ir(_stateful_with_if(tmp_path / "m.xml"))
    try:
        doc = audit_model(model, inputs={"input_ids": np.array([[7]], np.int64)}, precision="f32", steps=3)
        first = audit_model(model, inputs={"input_ids": np.array([[7]], np.int64)}, precision="f32")
    finally:
        model.close()
    assert doc.error is None, doc.error
    body = next(layer for layer in doc.layers if layer.layer_name == "body_sum")
    assert next(layer for layer in first.layers if layer.layer_name == "body_sum").status == "not-established"
    assert body.body_path is not None and body.status == "ok", body
    assert body.step is not None and 0 <= body.step <= 3 and body.input_shape is not None
    assert body.input_shape[1] == body.step + 1  # the cache the step shown fed it
    assert any("judged over the 4 of the 4 runs" in note for note in body.notes), body.notes


def test_the_steps_note_says_what_the_steps_were_fed(tmp_path: Path) -> None:
    """A model with no ``logits`` output is fed seeded random ids each step; the note said "the argmax token"."""
    for logits, said in ((True, "each fed the argmax token of the step before (of its logits) as 'input_ids';"),
                         (False, "each fed a seeded random token id in [0, 100) as 'input_ids' (the model has no "
                                 "'logits' output to take the likeliest token of);")):  # fmt: skip
        doc = _audited(_stateful_with_if(tmp_path / f"m{logits}.xml", logits=logits), precision="f32", steps=2)
        assert any(said in note for note in doc.notes), doc.notes
        assert not any("mask" in note and "decode step" in note for note in doc.notes)  # it takes none


def _conv_state(ids: Any, channels: int, kernel: int) -> tuple[Any, Any]:
    """A Mamba-style conv state: its variable (``[batch, channels, kernel]`` of f32) and the zeros it starts from, as
    many as ``ids`` has rows."""
    from openvino import opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    info = VariableInfo()
    info.data_shape, info.data_type = ov.PartialShape([-1, channels, kernel]), ov.Type.f32
    info.variable_id = "cache_params.present.conv.0"
    zeros = ops.broadcast(ops.constant(np.float32(0)), ops.concat(
        [ops.gather(ops.shape_of(ids), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0))),
         ops.constant(np.array([channels, kernel], np.int64))], 0))  # fmt: skip
    return Variable(info), zeros


def _mamba(path: Path, kernel: int = 4, channels: int = 6, vocab: int = 50) -> Path:
    """A model built as optimum-intel exports Mamba: a conv state ``[batch, channels, kernel]`` (the variable named as
    optimum-intel names it), the prefill told from a decode step by the length of ``cache_position`` (``kernel`` at
    the prefill), the state updated at ``clamp(cache_position, 0, kernel - 1)`` after a roll, by the new tokens'
    columns (the prompt's last ``kernel`` at the prefill), each token's column scaled by the attention mask."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(3)

    def parameter(shape: list[int], name: str) -> Any:
        node = ops.parameter(shape, np.int64, name=name)
        node.output(0).set_names({name})
        return node

    ids, mask, cache = (
        parameter([-1, -1], "input_ids"),
        parameter([-1, -1], "attention_mask"),
        parameter([-1], "cache_position"),
    )
    table = ops.constant(rng.standard_normal((vocab, channels)).astype(np.float32))
    hidden = ops.gather(table, ids, ops.constant(np.int64(0)))  # [batch, tokens, channels]
    hidden = ops.multiply(hidden, ops.unsqueeze(ops.convert(mask, np.float32), ops.constant(np.int64(-1))))
    columns = ops.transpose(hidden, ops.constant(np.array([0, 2, 1], np.int64)))  # [batch, channels, tokens]
    length = ops.gather(ops.shape_of(cache), ops.constant(np.int64(0)), ops.constant(np.int64(0)))
    prefill = ops.convert(ops.equal(length, ops.constant(np.int64(kernel))), np.int64)
    tokens = ops.gather(ops.shape_of(columns), ops.constant(np.int64(2)), ops.constant(np.int64(0)))
    pad = ops.multiply(ops.subtract(ops.constant(np.int64(kernel)), tokens), prefill)  # negative: the last kernel
    zero = ops.constant(np.int64(0))
    begins = ops.concat([ops.unsqueeze(c, zero) for c in (zero, zero, pad)], 0)
    new = ops.pad(columns, begins, ops.constant(np.zeros(3, np.int64)), "constant", ops.constant(np.float32(0)))
    variable, zeros = _conv_state(ids, channels, kernel)
    state = ops.read_value(zeros, variable)
    rolled = ops.concat([ops.slice(state, ops.constant([1]), ops.constant([kernel]), ops.constant([1]),
                                   ops.constant([2])), ops.slice(state, ops.constant([0]), ops.constant([1]),
                                                                 ops.constant([1]), ops.constant([2]))], 2)  # fmt: skip
    where = ops.clamp(cache, 0, kernel - 1)
    updated = ops.scatter_update(rolled, where, new, ops.constant(np.int64(2)))
    weights = ops.constant(rng.standard_normal((channels, kernel)).astype(np.float32))
    conv = ops.reduce_sum(ops.multiply(updated, weights), ops.constant(np.array([2], np.int64)), False, name="conv_sum")
    logits = ops.matmul(conv, ops.constant(rng.standard_normal((channels, vocab)).astype(np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    model = ov.Model([ops.result(logits)], [ops.assign(updated, variable)], [ids, mask, cache], "mamba_like")
    ov.save_model(model, path)
    return path


def _generate_mamba(path: Path, prompt: np.ndarray, steps: int, kernel: int = 4) -> list[np.ndarray]:
    """Greedy generation as optimum-intel's Mamba runtime feeds it, with OpenVINO's API alone: ``cache_position``
    ``arange(kernel)`` at the prefill, then the new token's place in the sequence; the mask of the new token alone."""
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    feeds = {"input_ids": prompt, "attention_mask": np.ones(prompt.shape, np.int64),
             "cache_position": np.arange(kernel, dtype=np.int64)}  # fmt: skip
    out = []
    for step in range(steps + 1):
        logits = np.array(request.infer(feeds)["logits"], copy=True)
        out.append(logits)
        token = np.argmax(logits, axis=-1).reshape(1, 1).astype(np.int64)
        feeds = {"input_ids": token, "attention_mask": np.ones((1, 1), np.int64),
                 "cache_position": np.array([prompt.shape[1] + step], np.int64)}  # fmt: skip
    return out


def test_a_mamba_style_model_is_fed_its_prefill_and_decode_steps_as_optimum_intel_feeds_them(tmp_path: Path) -> None:
    """A Mamba export tells its prefill by ``cache_position`` spanning the conv state (``arange(conv_kernel)``,
    whatever the prompt's length) and takes the new token's mask alone at each step. ovreduce made ``cache_position``
    the prompt's positions (another computation than generation's, audited as if it were), and grew the mask each
    step, which OpenVINO refused: every decode-step audit of such a model ended in "OpenVINO failed"."""
    path = _mamba(tmp_path / "mamba.xml")
    probe = read_model(path)
    arrays, described, _ = model_inputs(probe, {}, 0)
    made = {i.name: i for i in described}
    assert list(made["cache_position"].shape) == [4] and "conv state" in made["cache_position"].origin, made
    next_inputs, _ = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    expected = _generate_mamba(path, arrays[0], 2)
    assert len(runs) == 3
    for run, logits in zip(runs, expected, strict=True):
        np.testing.assert_array_equal(run.outputs[0], logits)
    doc = _audited(path, precision="f32", steps=2)
    assert doc.error is None, doc.error
    assert [layer.status for layer in doc.layers] == ["ok"]
    note = next(n for n in doc.notes if "decode step" in n)
    assert "of the new token alone" in note and "one longer" not in note, note


def test_the_steps_note_names_only_what_the_model_was_fed(tmp_path: Path) -> None:
    """A decoder that takes neither a mask nor positions (Whisper's: token ids and beams; its state counts the
    positions) was said to be fed "an attention mask one longer and the next position"."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)
    ids, rows, variable = _token_rows(rng)
    beams = ops.parameter([-1], np.int32, name="beam_idx")
    beams.output(0).set_names({"beam_idx"})
    past = ops.gather(ops.read_value(variable), beams, ops.constant(np.int64(0)))
    cache = ops.concat([past, rows], 1)
    mean = ops.reduce_mean(cache, ops.constant(np.array([1], np.int64)), False, name="cache_mean")
    logits = ops.matmul(mean, ops.constant(rng.standard_normal((16, 100)).astype(np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(logits)], [ops.assign(cache, variable)], [ids, beams], "no_mask"), path)
    doc = _audited(path, precision="f32", steps=2)
    assert doc.error is None, doc.error
    note = next(n for n in doc.notes if "decode step" in n)
    said = "each fed the argmax token of the step before (of its logits) as 'input_ids';"
    assert said in note and "mask" not in note and "position" not in note, note


def test_a_refusal_of_steps_on_a_seq2seq_export_names_its_decoder(capsys: pytest.CaptureFixture[str]) -> None:
    """The folder of a seq2seq export audits its encoder, which has no state: the refusal of --steps said "audit it
    without steps" and named no decoder, where decode steps are."""
    status, out, err = run_cli(capsys, "audit", str(EXPORTS / "t5_seq2seq"), "--steps", "2")
    assert status == 2 and out == "", err
    assert "openvino_encoder_model.xml is the model audited: the export also holds openvino_decoder_model.xml" in err


def _parameter(shape: list[int], etype: Any, name: str) -> Any:
    from openvino import opset13 as ops

    node = ops.parameter(ov.PartialShape(shape), etype, name=name)
    node.output(0).set_names({name})
    return node


def _deepstack(path: Path, hidden: int = 16, vocab: int = 40) -> Path:
    """A language model as optimum-intel exports Qwen3-VL's: fed ``inputs_embeds`` beside the mask, positions per
    rotary section, ``visual_pos_masks`` ``[batch, tokens]`` (boolean) and ``deepstack_visual_embeds`` ``[layers,
    batch * tokens, hidden]``, which it reshapes along the embeddings (as the export's traced deepstack ops do) and adds
    where the mask says; its state the sequence so far, which the mask covers."""
    from openvino import opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    rng = np.random.default_rng(5)
    embeds = _parameter([-1, -1, hidden], np.float32, "inputs_embeds")
    mask = _parameter([-1, -1], np.int64, "attention_mask")
    positions = _parameter([3, -1, -1], np.int64, "position_ids")
    visual = _parameter([-1, -1], np.bool_, "visual_pos_masks")
    deep = _parameter([-1, -1, hidden], np.float32, "deepstack_visual_embeds")
    beams = _parameter([-1], np.int32, "beam_idx")
    last = ops.constant(np.int64(-1))
    along = ops.reshape(deep, ops.shape_of(embeds), False)
    x = ops.add(embeds, ops.multiply(along, ops.unsqueeze(ops.convert(visual, np.float32), last)))
    text = ops.convert(ops.gather(positions, ops.constant(np.int64(0)), ops.constant(np.int64(0))), np.float32)
    x = ops.add(x, ops.unsqueeze(ops.multiply(text, ops.constant(np.float32(0.01))), last))
    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([-1, -1, hidden]), ov.Type.f32, "past.0"
    variable = Variable(info)
    empty = ops.broadcast(ops.constant(np.float32(0)), ops.concat(
        [ops.gather(ops.shape_of(embeds), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0))),
         ops.constant(np.array([0, hidden], np.int64))], 0))  # fmt: skip
    past = ops.gather(ops.read_value(empty, variable), beams, ops.constant(np.int64(0)))
    cache = ops.concat([past, x], 1)
    attended = ops.multiply(cache, ops.unsqueeze(ops.convert(mask, np.float32), last))
    mean = ops.reduce_mean(attended, ops.constant(np.array([1], np.int64)), True, name="cache_mean")
    head = ops.constant(rng.standard_normal((hidden, vocab)).astype(np.float32))
    logits = ops.matmul(ops.add(x, mean), head, False, False)
    logits.output(0).set_names({"logits"})
    inputs = [embeds, mask, positions, visual, deep, beams]
    model = ov.Model([ops.result(logits)], [ops.assign(cache, variable)], inputs, "deepstack_lm")
    ov.save_model(model, path)
    return path


def test_an_input_along_the_tokens_is_fed_each_step_for_its_new_token(tmp_path: Path) -> None:
    """A VLM's language model (Qwen3-VL's) takes a mask of the image's tokens and their deepstack embeddings, as long as
    the token sequence: the decode steps kept the first run's 8 beside one new token's embedding, which OpenVINO
    refused ("OpenVINO failed", every reduction not audited). Each step now feeds them zeros along the new token, as
    optimum-intel feeds a step without image tokens: its logits are those of such a loop written with OpenVINO's API."""
    path = _deepstack(tmp_path / "openvino_language_model.xml")
    probe = read_model(path)
    names = [port.get_any_name() for port in probe.inputs]
    arrays, _, _ = model_inputs(probe, {}, 0)
    first = {names[i]: array for i, array in arrays.items()}
    assert first["visual_pos_masks"].shape == (1, 8) and first["deepstack_visual_embeds"].shape == (1, 8, 16)
    next_inputs, replay = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    assert len(runs) == 3
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    for step, run in enumerate(runs):
        feeds = dict(first)
        if step:
            fed = replay(step, runs[step - 1])
            assert fed is not None
            feeds = {"inputs_embeds": fed[names.index("inputs_embeds")],  # (seeded: a new token's embedding)
                     "attention_mask": np.ones((1, 8 + step), np.int64),
                     "position_ids": np.full((3, 1, 1), 7 + step, np.int64),
                     "visual_pos_masks": np.zeros((1, 1), np.bool_),
                     "deepstack_visual_embeds": np.zeros((1, 1, 16), np.float32),
                     "beam_idx": np.zeros(1, np.int32)}  # fmt: skip
        np.testing.assert_array_equal(run.outputs[0], request.infer(feeds)["logits"])
    doc = _audited(path, precision="f32", steps=2)
    assert doc.error is None and doc.steps == 2, doc.error
    note = next(n for n in doc.notes if "decode step" in n)
    assert "zeros along the new token as 'visual_pos_masks', 'deepstack_visual_embeds'" in note, note


def _deepstack_layers(path: Path, layers: int = 3, hidden: int = 16) -> Path:
    """A language model whose deepstack inputs are used as Qwen3-VL's export uses them: ``visual_pos_masks`` flattened,
    its cumulative count picking rows of each of ``layers`` deepstack layers (``deepstack_visual_embeds[l]``, rows
    ``batch * tokens`` long), reshaped to the embeddings' shape and added where the mask says; then an RMSNorm."""
    from openvino import opset13 as ops

    embeds = _parameter([-1, -1, hidden], np.float32, "inputs_embeds")
    visual = _parameter([-1, -1], np.bool_, "visual_pos_masks")
    deep = _parameter([-1, -1, hidden], np.float32, "deepstack_visual_embeds")
    zero = ops.constant(np.int64(0))
    flat = ops.convert(ops.reshape(visual, ops.constant(np.array([-1], np.int64)), False), np.int64)
    rows = ops.maximum(ops.subtract(ops.cumsum(flat, zero), ops.constant(np.int64(1))), zero)
    where = ops.unsqueeze(ops.convert(visual, np.float32), ops.constant(np.int64(-1)))
    x = embeds
    for layer in range(layers):
        picked = ops.gather(ops.gather(deep, ops.constant(np.int64(layer)), zero), rows, zero)
        x = ops.add(x, ops.multiply(ops.reshape(picked, ops.shape_of(embeds), False), where))
    mean = ops.reduce_mean(ops.multiply(x, x), ops.constant(np.array([-1], np.int64)), True, name="norm/ReduceMean")
    y = ops.multiply(x, ops.sqrt(ops.add(mean, ops.constant(np.float32(1e-6)))))
    y.output(0).set_names({"logits"})
    ov.save_model(ov.Model([ops.result(y)], [embeds, visual, deep], "deepstack_layers"), path)
    return path


@pytest.mark.parametrize("embeds", [(1, 16), (2, 8), (3, 5)])
def test_the_deepstack_inputs_follow_the_embeddings_in_the_first_run(tmp_path: Path, embeds: tuple[int, int]) -> None:
    """Qwen3-VL's language model: the mask of the image's tokens and the deepstack features were filled generically,
    so any embeddings but the default 8 tokens at batch 1 were refused ("refused every default tried"). They are made
    along the embeddings, as optimum-intel's runtime makes them for a run without image tokens: an all-false mask
    ``[batch, tokens]``, zeros ``[layers, batch * tokens, hidden]`` (the layers the graph selects); the audit runs,
    its output that of OpenVINO's own run on those inputs."""
    path = _deepstack_layers(tmp_path / "openvino_language_model.xml")
    batch, tokens = embeds
    doc = _audited(path, precision="f32", shapes={"inputs_embeds": PartialShape.static([batch, tokens, 16])})
    assert doc.error is None, doc.error
    made = {made.name: made for made in doc.inputs}
    assert made["visual_pos_masks"].shape == (batch, tokens), made
    assert made["deepstack_visual_embeds"].shape == (3, batch * tokens, 16), made
    assert "optimum-intel's runtime makes it for a run without image tokens" in made["visual_pos_masks"].origin
    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, {}, 0, shapes={"inputs_embeds": PartialShape.static([batch, tokens, 16])})
    names = [port.get_any_name() for port in probe.inputs]
    fed = {names[i]: array for i, array in arrays.items()}
    assert not fed["visual_pos_masks"].any() and not fed["deepstack_visual_embeds"].any()
    expected = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request().infer(fed)["logits"]
    np.testing.assert_array_equal(run_steps(read_model(path), [], arrays, "CPU", "f32", None)[0].outputs[0], expected)


def _hybrid(path: Path, whole_mask: bool, channels: int = 6, kernel: int = 4, vocab: int = 50) -> Path:
    """A model with a conv state as optimum-intel exports a Mamba-class hybrid (``cache_params.present.conv.0``,
    ``[batch, channels, kernel]``), no ``cache_position``: the new tokens' columns rolled into the state, each scaled by
    the attention mask. Zamba2's takes the mask along the new tokens (broadcast to the ids' shape, which a mask one
    longer fails); with ``whole_mask`` (Granite-4.0's, LFM2's) the mask covers the whole sequence, the new tokens'
    places counted from its length."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(4)
    ids, mask = _parameter([-1, -1], np.int64, "input_ids"), _parameter([-1, -1], np.int64, "attention_mask")
    beams = _parameter([-1], np.int32, "beam_idx")
    zero, last = ops.constant(np.int64(0)), ops.constant(np.int64(-1))
    hidden = ops.gather(ops.constant(rng.standard_normal((vocab, channels)).astype(np.float32)), ids, zero)
    if whole_mask:  # the new tokens' places: the mask's length back
        length = ops.gather(ops.shape_of(mask), ops.constant(np.int64(1)), zero)
        tokens = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), zero)
        places = ops.range(ops.subtract(length, tokens), length, ops.constant(np.int64(1)), "f32")
        hidden = ops.add(hidden, ops.unsqueeze(ops.multiply(places, ops.constant(np.float32(0.1))), last))
        scale = ops.slice(mask, ops.unsqueeze(ops.negative(tokens), zero), ops.constant(np.array([2**62])),
                          ops.constant(np.array([1])), ops.constant(np.array([1])))  # fmt: skip
    else:  # the mask of the new tokens alone
        scale = ops.broadcast(mask, ops.shape_of(ids))
    hidden = ops.multiply(hidden, ops.unsqueeze(ops.convert(scale, np.float32), last))
    columns = ops.transpose(hidden, ops.constant(np.array([0, 2, 1], np.int64)))
    variable, zeros = _conv_state(ids, channels, kernel)
    state = ops.gather(ops.read_value(zeros, variable), beams, zero)
    ends = [ops.constant(np.array([value])) for value in (-kernel, 2**62, 1, 2)]  # the last kernel columns
    rolled = ops.slice(ops.concat([state, columns], 2), *ends)
    weights = ops.constant(rng.standard_normal((channels, kernel)).astype(np.float32))
    conv = ops.reduce_sum(ops.multiply(rolled, weights), ops.constant(np.array([2], np.int64)), False, name="conv_sum")
    logits = ops.matmul(conv, ops.constant(rng.standard_normal((channels, vocab)).astype(np.float32)), False, False)
    logits.output(0).set_names({"logits"})
    ov.save_model(ov.Model([ops.result(logits)], [ops.assign(rolled, variable)], [ids, mask, beams], "hybrid"), path)
    return path


@pytest.mark.parametrize("whole_mask", [False, True])
def test_a_hybrid_without_cache_position_is_fed_the_mask_its_steps_take(tmp_path: Path, whole_mask: bool) -> None:
    """A Mamba-class hybrid without ``cache_position`` (Zamba2's export): its steps were fed a mask one longer, as a
    transformer's, which OpenVINO refused at the first step. optimum-intel feeds such a model's steps the new token's
    mask alone (``[batch, 1]`` ones), but for the few whose attention reads the whole mask (Granite-4.0's), which get it
    one longer: each is fed so, the logits those of a generation loop fed so with OpenVINO's API."""
    path = _hybrid(tmp_path / "hybrid.xml", whole_mask)
    doc = _audited(path, precision="f32", steps=3)
    assert doc.error is None, doc.error
    note = next(n for n in doc.notes if "decode step" in n)
    assert ("one longer" in note) is whole_mask and ("of the new token alone" in note) is not whole_mask, note
    from ovreduce.audit import _mask_alone

    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, {}, 0)
    alone = _mask_alone(probe, arrays, 0, lambda: read_model(path), "CPU", "f32", None)
    assert alone is not whole_mask
    next_inputs, _ = _decoding(probe, arrays, 3, 0, alone)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    prompt = arrays[0]
    feeds = {"input_ids": prompt, "attention_mask": np.ones(prompt.shape, np.int64), "beam_idx": np.zeros(1, np.int32)}
    assert len(runs) == 4
    for step, run in enumerate(runs):
        logits = np.array(request.infer(feeds)["logits"], copy=True)
        np.testing.assert_array_equal(run.outputs[0], logits)
        width = prompt.shape[1] + step + 1 if whole_mask else 1
        feeds = {"input_ids": np.argmax(logits, axis=-1).reshape(1, 1).astype(np.int64),
                 "attention_mask": np.ones((1, width), np.int64), "beam_idx": np.zeros(1, np.int32)}  # fmt: skip


def test_a_failure_at_a_decode_step_is_said_to_be_the_step_s(tmp_path: Path) -> None:
    """A model whose runs need two tokens at least (the ids reshaped to ``[batch, 2, -1]``): its first run goes through
    and its first decode step, one token, fails. The failure blamed the integer inputs ovreduce made, to be given,
    though no one can give a step's inputs; it now names the step, and says the runs before it went through."""
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)
    ids, rows, variable = _token_rows(rng)
    pairs = ops.reshape(ids, ops.constant(np.array([0, 2, -1], np.int64)), True)
    cache = ops.concat([ops.read_value(variable), rows], 1)
    mean = ops.reduce_mean(cache, ops.constant(np.array([1], np.int64)), False, name="cache_mean")
    paired = ops.convert(ops.reduce_sum(pairs, ops.constant(np.array([1, 2], np.int64)), True), np.float32)
    logits = ops.add(ops.matmul(mean, ops.constant(rng.standard_normal((16, 100)).astype(np.float32)), False, False),
                     ops.multiply(paired, ops.constant(np.float32(0))))  # fmt: skip
    logits.output(0).set_names({"logits"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(logits)], [ops.assign(cache, variable)], [ids], "pairs"), path)
    doc = _audited(path, precision="f32", steps=2)
    assert doc.error is not None and doc.error.startswith("OpenVINO failed: "), doc.error
    assert "it failed at decode step 1, on the inputs ovreduce makes for each step from the run before" in doc.error
    assert "the first run went through" in doc.error and "give them" not in doc.error, doc.error


def _generate_padded(prompt: np.ndarray, mask: np.ndarray, steps: int) -> list[np.ndarray]:
    """Greedy generation of a left-padded batch with OpenVINO's API alone, its positions made as optimum-intel's
    ``prepare_inputs_for_generation`` makes them: ``cumsum(mask) - 1``, 1 at the padding, the new token's the last."""
    compiled = ov.Core().compile_model(str(LLAMA), "CPU", EXACT)
    request = compiled.create_infer_request()
    ids, out = prompt, []
    for _ in range(steps + 1):
        positions = np.cumsum(mask, axis=-1) - 1
        positions[mask == 0] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "position_ids": positions[:, -ids.shape[1] :],
                 "beam_idx": np.arange(ids.shape[0], dtype=np.int32)}  # fmt: skip
        logits = np.array(request.infer(feeds)["logits"], copy=True)
        out.append(logits)
        ids = np.argmax(logits[:, -1, :], axis=-1).reshape(-1, 1).astype(np.int64)
        mask = np.concatenate([mask, np.ones((mask.shape[0], 1), np.int64)], axis=1)
    return out


def test_a_left_padded_mask_given_numbers_the_positions_from_each_rows_first_token() -> None:
    """A left-padded mask given (batch generation's) got positions 0..n-1, and steps n, n+1..., counting the padding:
    no generation feeds those (optimum-intel numbers a row's tokens from its first attended one, the padding 1), and
    the check of the positions the model takes counted the padding too. The positions follow the mask as
    optimum-intel makes them, at the first run and at each step: the logits are a generation loop's, written with
    OpenVINO's API; and only the tokens attended count toward the positions."""
    prompt = np.array([[5, 17, 300, 42, 7, 9], [11, 12, 13, 14, 15, 16]], np.int64)
    mask = np.array([[0, 0, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1]], np.int64)
    probe = read_model(LLAMA)
    arrays, described, _ = model_inputs(probe, {"input_ids": prompt, "attention_mask": mask}, 0)
    names = [port.get_any_name() for port in probe.inputs]
    assert arrays[names.index("position_ids")].tolist() == [[1, 1, 1, 0, 1, 2], [1, 0, 1, 2, 3, 4]]
    assert "attention mask" in {i.name: i.origin for i in described}["position_ids"], described
    next_inputs, _ = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(LLAMA), [], arrays, "CPU", "f32", next_inputs)
    for run, logits in zip(runs, _generate_padded(prompt, mask, 2), strict=True):
        np.testing.assert_array_equal(run.outputs[0], logits)
    table = (7, "config.json: max_position_embeddings")  # 5 tokens attended and 2 steps: positions 0..6
    given = {"input_ids": prompt, "attention_mask": mask}
    assert _audited(LLAMA, precision="f32", steps=2, inputs=given, positions=table).error is None
    with pytest.raises(InputError, match=r"positions 0\.\.7 \(5 token\(s\) of 'input_ids' attended .*, then 3 decode"):
        _audited(LLAMA, precision="f32", steps=3, inputs=given, positions=table)


def test_a_row_of_padding_alone_numbers_its_first_token_zero() -> None:
    """A row of the mask given that is padding alone: its first run's positions are the fill 1, and the steps took
    that fill for the row's last position (2, 3); optimum-intel's ``cumsum(mask) - 1`` gives its first attended token
    position 0. The logits are a generation loop's, written with OpenVINO's API."""
    prompt = np.array([[5, 17, 300, 42, 7, 9], [11, 12, 13, 14, 15, 16]], np.int64)
    mask = np.array([[0] * 6, [1] * 6], np.int64)
    probe = read_model(LLAMA)
    arrays, _, _ = model_inputs(probe, {"input_ids": prompt, "attention_mask": mask}, 0)
    next_inputs, replay = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(LLAMA), [], arrays, "CPU", "f32", next_inputs)
    position = [port.get_any_name() for port in probe.inputs].index("position_ids")
    assert [replay(step, runs[step - 1])[position].tolist() for step in (1, 2)] == [[[0], [6]], [[1], [7]]]  # type: ignore[index]
    for run, logits in zip(runs, _generate_padded(prompt, mask, 2), strict=True):
        np.testing.assert_array_equal(run.outputs[0], logits)


def test_positions_per_rotary_section_follow_a_left_padded_mask(tmp_path: Path) -> None:
    """Qwen2-VL's language model (``position_ids`` ``[3, batch, tokens]``) given a left-padded mask: its positions
    were 0..n-1 in every row and the steps n, n+1..., where optimum-intel's ``get_rope_index`` numbers text
    ``cumsum(mask) - 1`` (1 at the padding) in each section and each step one past the row's last position. The
    audit's runs are a loop written with OpenVINO's API that numbers them so; the check of the positions the model
    takes counts the tokens attended."""
    path = _deepstack(tmp_path / "openvino_language_model.xml", hidden=12)  # (not batch * tokens wide)
    mask = np.array([[0, 0, 0, 1, 1, 1, 1, 1], [1] * 8], np.int64)
    probe = read_model(path)
    names = [port.get_any_name() for port in probe.inputs]
    shapes = {"inputs_embeds": PartialShape.static([2, 8, 12])}
    arrays, _, _ = model_inputs(probe, {"attention_mask": mask}, 0, shapes=shapes)
    first = {names[i]: array for i, array in arrays.items()}
    text = np.cumsum(mask, axis=-1) - 1
    text[mask == 0] = 1
    np.testing.assert_array_equal(first["position_ids"], np.broadcast_to(text, (3, 2, 8)))
    next_inputs, replay = _decoding(probe, arrays, 2, 0)
    runs = run_steps(read_model(path), [], arrays, "CPU", "f32", next_inputs)
    request = ov.Core().compile_model(str(path), "CPU", EXACT).create_infer_request()
    deltas = text.max(axis=-1, keepdims=True) + 1 - mask.shape[1]  # optimum-intel's rope_deltas
    for step, run in enumerate(runs):
        feeds = dict(first)
        if step:
            fed = replay(step, runs[step - 1])
            assert fed is not None
            cache_position = 8 + step - 1
            feeds = {"inputs_embeds": fed[names.index("inputs_embeds")],
                     "attention_mask": np.concatenate([mask, np.ones((2, step), np.int64)], axis=1),
                     "position_ids": np.broadcast_to(cache_position + deltas, (3, 2, 1)),
                     "visual_pos_masks": np.zeros((2, 1), np.bool_),
                     "deepstack_visual_embeds": np.zeros((1, 2, 12), np.float32),
                     "beam_idx": np.arange(2, dtype=np.int32)}  # fmt: skip
        np.testing.assert_array_equal(run.outputs[0], request.infer(feeds)["logits"])
    table = (8, "config.json: max_position_embeddings")  # 7 tokens attended and a step fit; 8 and a step do not
    given = {"attention_mask": np.array([[0, 0, 1, 1, 1, 1, 1, 1], [0] + [1] * 7], np.int64)}
    assert _audited(path, precision="f32", steps=1, inputs=given, shapes=shapes, positions=table).error is None
    with pytest.raises(InputError, match=r"positions 0\.\.8 \(8 token\(s\) of 'inputs_embeds' attended"):
        _audited(path, precision="f32", steps=1, inputs={"attention_mask": mask}, shapes=shapes, positions=table)
