"""The committed exports (see generate.py and README.md here) are what a user of optimum-intel and OpenVINO has.

Only openvino is needed: no torch, no transformers; the tokenizer IRs are only run where openvino-tokenizers is
installed (its ops are an extension), their files are checked everywhere.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest

from tests.exports import ir_facts

HERE = Path(__file__).resolve().parent
TOKENIZER_IRS = (
    "openvino_tokenizer.xml",
    "openvino_tokenizer.bin",
    "openvino_detokenizer.xml",
    "openvino_detokenizer.bin",
)

# export -> the files a user's export directory holds (optimum's layout; the loop is a bare convert_model + save_model)
LAYOUT = {
    "llama_int4": {
        "openvino_model.xml",
        "openvino_model.bin",
        "config.json",
        "generation_config.json",
        "openvino_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        *TOKENIZER_IRS,
    },
    "bert_encoder": {
        "openvino_model.xml",
        "openvino_model.bin",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    }
    | set(TOKENIZER_IRS),
    "t5_seq2seq": {
        "openvino_encoder_model.xml",
        "openvino_encoder_model.bin",
        "openvino_decoder_model.xml",
        "openvino_decoder_model.bin",
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        *TOKENIZER_IRS,
    },
    "loop_trip_count": {"model.xml", "model.bin"},
}

# model IR -> (inputs: name, element type, partial shape), Reduce* at the top level, Reduce* inside bodies
FACTS: dict[str, tuple[list[tuple[str, str, str]], dict[str, int], dict[str, int]]] = {
    "llama_int4/openvino_model.xml": (
        [
            ("input_ids", "i64", "[?,?]"),
            ("attention_mask", "i64", "[?,?]"),
            ("position_ids", "i64", "[?,?]"),
            ("beam_idx", "i32", "[?]"),
        ],
        {"ReduceMean": 5, "ReduceProd": 1},
        {},
    ),
    "bert_encoder/openvino_model.xml": (
        [("input_ids", "i64", "[?,?]"), ("attention_mask", "i64", "[?,?]"), ("token_type_ids", "i64", "[?,?]")],
        {"ReduceProd": 1},  # LayerNorm converts to MVN, not to reductions
        {},
    ),
    "t5_seq2seq/openvino_encoder_model.xml": (
        [("input_ids", "i64", "[?,?]"), ("attention_mask", "i64", "[?,?]")],
        {"ReduceMean": 5, "ReduceProd": 1},
        {},
    ),
    "t5_seq2seq/openvino_decoder_model.xml": (
        [
            ("encoder_attention_mask", "i64", "[?,?]"),
            ("input_ids", "i64", "[?,?]"),
            ("encoder_hidden_states", "f32", "[?,?,32]"),
            ("beam_idx", "i32", "[?]"),
        ],
        {"ReduceMean": 7, "ReduceProd": 1},
        {},
    ),
    "loop_trip_count/model.xml": (
        [("x.1", "f32", "[?,?]"), ("n.1", "i64", "[]")],
        {"ReduceSum": 1},
        {"ReduceMean": 1, "ReduceMax": 1, "ReduceSum": 1},
    ),
}


@cache
def core() -> Any:
    return ov.Core()


@cache
def read(relative: str) -> Any:
    return core().read_model(HERE / relative)


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / name / "config.json").read_text())
    return data


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout(name: str) -> None:
    files = {p.name for p in (HERE / name).iterdir()}
    assert files == LAYOUT[name]
    assert sum((HERE / name / f).stat().st_size for f in files) < 1_500_000


@pytest.mark.parametrize("relative", sorted(FACTS))
def test_model_facts(relative: str) -> None:
    model = read(relative)
    want_inputs, want_top, want_bodies = FACTS[relative]
    counts = ir_facts.reduce_counts(model)
    assert ir_facts.inputs(model) == want_inputs
    assert counts.top == Counter(want_top)
    assert counts.bodies == Counter(want_bodies)


@pytest.mark.parametrize("relative", sorted(FACTS))
def test_compiles_on_cpu(relative: str) -> None:
    compiled = core().compile_model(read(relative), "CPU")
    assert len(compiled.inputs) == len(FACTS[relative][0])


def test_llama_is_stateful_with_int4_weights() -> None:
    model = read("llama_int4/openvino_model.xml")
    ops = ir_facts.op_types(model)
    layers = config("llama_int4")["num_hidden_layers"]
    assert model.get_sinks()
    assert ops["ReadValue"] == ops["Assign"] == 2 * layers  # a key and a value cache per layer
    assert "past_key_values" not in {name.split(".")[0] for i in model.inputs for name in i.get_names()}
    consts = ir_facts.const_types(model)
    assert consts["u4"] > 0  # INT4 asymmetric: u4 weights and u4 zero points, f16 scales
    assert consts["u8"] > 0  # NNCF's INT8 backup for the embedding and the LM head
    matrices = {
        op.get_friendly_name(): op.get_output_element_type(0).get_type_name()
        for op in model.get_ordered_ops()
        if op.get_type_name() == "Constant"
        and op.get_output_partial_shape(0).rank.get_length() >= 2
        and np.prod(op.get_output_shape(0)) >= 1024
    }
    # every weight matrix is compressed (the norms' weight vectors stay f32)
    assert set(matrices.values()) == {"u4", "u8"}, matrices


def test_llama_rmsnorms_keep_their_reduce_mean() -> None:
    """Every RMSNorm (two per decoder layer, one before the head) is x * rsqrt(ReduceMean(x^2) + eps)."""
    names = {
        op.get_friendly_name()
        for op in read("llama_int4/openvino_model.xml").get_ordered_ops()
        if op.get_type_name() == "ReduceMean"
    }
    layers = config("llama_int4")["num_hidden_layers"]
    norms = [
        f"model.layers.{i}.{norm}" for i in range(layers) for norm in ("input_layernorm", "post_attention_layernorm")
    ]
    assert names == {f"__module.{norm}/aten::mean/ReduceMean" for norm in [*norms, "model.norm"]}


def test_llama_prefill_and_decode_with_state() -> None:
    """A prefill and two greedy decode steps, the KV cache carried in state; reset_state() starts over."""
    vocab = config("llama_int4")["vocab_size"]
    request = core().compile_model(read("llama_int4/openvino_model.xml"), "CPU").create_infer_request()
    prompt = np.array([[1, 40, 300, 7, 999]], dtype=np.int64)

    def step(ids: Any, past: int) -> Any:
        length = ids.shape[1]
        request.infer(
            {
                "input_ids": ids,
                "attention_mask": np.ones((1, past + length), dtype=np.int64),
                "position_ids": np.arange(past, past + length, dtype=np.int64)[None],
                "beam_idx": np.arange(1, dtype=np.int32),
            }
        )
        logits = request.get_tensor("logits").data.copy()
        assert logits.shape == (1, length, vocab)
        assert np.isfinite(logits).all()
        return logits

    request.reset_state()
    first = step(prompt, 0)
    past = prompt.shape[1]
    for _ in range(2):
        step(np.array([[int(first[0, -1].argmax())]], dtype=np.int64), past)
        past += 1
    assert len(request.query_state()) == 2 * config("llama_int4")["num_hidden_layers"]
    request.reset_state()
    np.testing.assert_array_equal(step(prompt, 0), first)


def test_bert_weights_are_fp16() -> None:
    consts = ir_facts.const_types(read("bert_encoder/openvino_model.xml"))
    assert consts["f16"] > 0
    assert "f32" not in consts


def test_t5_decoder_is_stateful() -> None:
    decoder = read("t5_seq2seq/openvino_decoder_model.xml")
    layers = config("t5_seq2seq")["num_decoder_layers"]
    # self-attention and cross-attention keys and values per layer, and encoder_hidden_states (optimum keeps the
    # encoder's output in a state too, read again by the cross-attention of later steps)
    assert len(decoder.get_sinks()) == ir_facts.op_types(decoder)["ReadValue"] == 4 * layers + 1
    assert not read("t5_seq2seq/openvino_encoder_model.xml").get_sinks()


def test_loop_trip_count_is_a_model_input() -> None:
    model = read("loop_trip_count/model.xml")
    (loop,) = [op for op in model.get_ordered_ops() if op.get_type_name() == "Loop"]
    trip_count = loop.input_value(0).get_node()
    assert trip_count.get_type_name() == "Parameter"
    assert trip_count.output(0).get_any_name() == "n.1"
    assert ir_facts.reduce_counts(loop.get_function()).top == Counter({"ReduceMean": 1})
    (branch,) = [op for op in model.get_ordered_ops() if op.get_type_name() == "If"]
    then_counts = ir_facts.reduce_counts(branch.get_then_body()).top
    else_counts = ir_facts.reduce_counts(branch.get_else_body()).top
    assert (then_counts, else_counts) == (Counter({"ReduceMax": 1}), Counter({"ReduceSum": 1}))


def loop_reference(x: Any, n: int) -> Any:
    """What the scripted module computes (generate.py's LoopAndIf), in NumPy."""
    for _ in range(n):
        x = x - x.mean(axis=-1, keepdims=True) * 0.5
    if x.sum() > 0:
        return x / (np.abs(x).max(axis=-1, keepdims=True) + 1.0)
    return x * np.tanh(x.sum(keepdims=True))


@pytest.mark.parametrize("trips", [0, 1, 3])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_loop_runs_the_given_number_of_times(trips: int, sign: float) -> None:
    compiled = core().compile_model(read("loop_trip_count/model.xml"), "CPU")
    x = sign * (np.arange(12, dtype=np.float32).reshape(3, 4) / 10 + 0.05)
    got = compiled([x, np.int64(trips)])[0]
    np.testing.assert_allclose(got, loop_reference(x, trips), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["llama_int4", "bert_encoder", "t5_seq2seq"])
def test_tokenizer_ir_gives_ids_in_the_vocabulary(name: str) -> None:
    pytest.importorskip("openvino_tokenizers")  # adds its extension to every Core made after the import
    ids = ov.Core().compile_model(HERE / name / "openvino_tokenizer.xml", "CPU")(["The mean of a row."])["input_ids"]
    assert ids.shape[0] == 1
    assert ids.min() >= 0
    assert ids.max() < config(name)["vocab_size"]
