"""Regenerate the small OpenVINO exports under tests/exports/ (random weights, no model hub).

The exports are committed, so the tests that read them need neither torch nor the network; this script is the
record of how they were made and the way to make them again. It builds tiny models from transformers config
classes with a fixed torch seed, makes their tokenizers from the text embedded below, and exports them with
optimum-intel's Python API, the way ``optimum-cli export openvino`` lays out a directory:

* ``llama_int4/``: a llama-like causal LM, stateful (KV cache as state: inputs input_ids, attention_mask,
  position_ids, beam_idx), weights compressed to INT4 by NNCF (group size 32, ratio 1.0, asymmetric; NNCF keeps
  the embedding and the LM head in INT8), with its tokenizer and detokenizer as OpenVINO IR.
* ``bert_encoder/``: a tiny BERT for feature extraction, FP16 weights, with its tokenizer as OpenVINO IR.
* ``t5_seq2seq/``: a tiny T5 for text2text generation (encoder IR and stateful decoder IR), FP16 weights.
* ``loop_trip_count/``: a TorchScript module whose Loop trip count is a model input, with ReduceMean in the Loop
  body and Reduce* ops in both branches of an If, converted by ``openvino.convert_model``.

Pinned versions, checked at start (the script stops with a message naming any difference):

    torch 2.13.0 (the CPU build, 2.13.0+cpu)   transformers 5.5.4   tokenizers 0.22.2
    optimum 2.3.0   optimum-intel 2.2.0   nncf 3.4.0   openvino 2026.4.1   openvino-tokenizers 2026.4.1.0

optimum-intel 2.2.0 declares a dependency on torchvision, but the exports here never import it, and the only
torchvision wheel for torch 2.13 on PyPI (0.28.0) is linked against the CUDA build of torch and fails to import
beside the CPU build; leave torchvision out of the environment (``pip check`` then names it, harmlessly).

How to run (about a minute on two cores, plus the install)::

    python3.11 -m venv /tmp/genvenv
    /tmp/genvenv/bin/pip install torch==2.13.0+cpu transformers==5.5.4 tokenizers==0.22.2 optimum==2.3.0 \\
        optimum-intel==2.2.0 nncf==3.4.0 openvino==2026.4.1 openvino-tokenizers==2026.4.1.0
    /tmp/genvenv/bin/pip uninstall -y torchvision   # if the resolver pulled it in
    /tmp/genvenv/bin/python tests/exports/generate.py            # all four exports
    /tmp/genvenv/bin/python tests/exports/generate.py loop_trip_count   # or just some

(``torch==2.13.0+cpu`` is the CPU wheel of https://download.pytorch.org/whl/cpu, add it with
``--extra-index-url`` or take it from a local wheel directory; PyPI's ``torch==2.13.0`` is the CUDA build, which
should do as well, untested here.) Each export runs in a process of its own and its directory is deleted and
written again, then checked: every IR compiles on CPU; the FP32 llama export matches torch over a prefill and two
decode steps with the KV cache carried in state, and the INT4 one runs; BERT and T5 match torch within FP16
rounding; the loop matches the scripted module for 0, 1 and 3 trips; each tokenizer IR gives the ids transformers
gives; each RMSNorm keeps its ReduceMean and the Loop's trip count is a Parameter. Finally the script prints a
summary (sizes, inputs, Reduce* counts, constant element types) for tests/exports/README.md, whose numbers
tests/exports/test_exports.py asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

PINNED = {
    "torch": "2.13.0",
    "transformers": "5.5.4",
    "tokenizers": "0.22.2",
    "optimum": "2.3.0",
    "optimum-intel": "2.2.0",
    "nncf": "3.4.0",
    "openvino": "2026.4.1",
    "openvino-tokenizers": "2026.4.1.0",
}

HERE = Path(__file__).resolve().parent
SEED = 20260401
VOCAB_SIZE = 1000

# The tokenizers' training text (a few hundred words, written for this purpose).
CORPUS = """
A reduction folds a tensor along one or more axes into fewer values. The mean of a row, the sum of a column, the
largest value in a window, the smallest value in a batch, the product of a few factors, the first norm and the
second norm, the logarithm of a sum of exponentials: each is a reduction, and each keeps or drops the axes it folds.
When the axes are kept, every folded axis stays in the shape with length one, so the result broadcasts back against
the input; when they are dropped, the shape loses them, and a later operation must know which ones went away.
Normalisation layers are built from reductions. Layer normalisation subtracts the mean of the last axis and divides
by the square root of the variance; root mean square normalisation skips the subtraction and divides by the square
root of the mean of the squares, then multiplies by a learned weight. Language models repeat that pattern twice in
every decoder layer and once more before the head that predicts the next token. Vision models pool the spatial axes
of their feature maps with a mean or a maximum before a classifier. Losses average over the batch. Attention takes a
maximum before its exponentials to keep them finite, and a sum after them to make the weights add up to one.
A converter that reads such a graph must agree with the runtime about every detail: the element type of the axes
input, negative axes counted from the end, an empty list of axes, repeated axes, axes out of range, a scalar input,
a dimension of length zero, a dynamic dimension whose length is only known at run time, and the value a reduction
of nothing should give. The sum of nothing is zero, the product of nothing is one, the maximum of nothing has no
good answer at all. Some graphs hide their reductions inside a loop body or a branch of a conditional, where the
shapes depend on how many times the body runs or which branch is taken, and a checker has to walk into those bodies
to find them. Other graphs store their weights in four or eight bits with a scale and a zero point per group of
columns, and decompress them on the fly before a matrix product. A small model can carry all of these features at
once: a tokenizer that turns words into numbers, an embedding table, two decoder layers with their normalisations,
a cache of keys and values kept as state between calls, and a head that maps hidden vectors back to the vocabulary.
The numbers in these tiny models are random, so their answers mean nothing; what matters is that the structure of
the graph is the structure a real export has, from the names of the inputs to the types of the constants.
Engineers who ship models to laptops, phones and servers compress them, fold constants, fuse patterns into single
operations, and then want to know whether anything changed on the way. They compare the outputs of the original
framework with the outputs of the runtime on the same inputs, they inspect the intermediate representation by hand,
they grep for suspicious layers, and they write small scripts that walk every node of every body of every graph.
Tokenizers, too, become graphs: a normaliser, a splitter on whitespace and punctuation, a table of merges or pieces,
special tokens for the beginning and the end of a sequence, padding on the left for generation, and a detokenizer
that joins the pieces back into text. Encoders read a whole sentence at once and produce one vector per token;
decoders produce one token at a time and remember what they have seen; encoder decoder pairs translate, summarise
and answer questions by reading with one half and writing with the other.
Quick brown foxes jump over lazy dogs; zebras quietly vex the jovial wizard; six big juicy steaks sizzle in a pan.
Numbers such as 0 1 2 3 4 5 6 7 8 9 10 100 1000 2026 and symbols like + - * / = < > ( ) [ ] { } , . ; : ! ? appear too.
"""


def check_versions() -> None:
    wrong = []
    for dist, wanted in PINNED.items():
        try:
            found = version(dist)
        except PackageNotFoundError:
            found = "not installed"
        # torch's CPU wheel carries a local label (2.13.0+cpu); the random weights do not depend on it.
        if found.split("+")[0] != wanted:
            wrong.append(f"{dist}: found {found}, this script is pinned to {wanted}")
    if wrong:
        sys.exit(
            "generate.py: the environment differs from the pinned versions, so the exports would too:\n  "
            + "\n  ".join(wrong)
            + "\nSee this script's docstring for the install command."
        )


def corpus_lines() -> list[str]:
    return [line.strip() for line in CORPUS.strip().splitlines() if line.strip()]


def most_common(counts: Counter[str], n: int, exclude: set[str]) -> list[str]:
    """The n most frequent keys not in exclude, ties by key: the same list on every run (the tokenizers library's
    WordPiece and Unigram trainers are not deterministic from one process to the next, its BPE trainer is)."""
    ranked = sorted((key for key in counts if key not in exclude), key=lambda key: (-counts[key], key))
    return ranked[:n]


def build_tokenizer(kind: str, vocab_size: int = VOCAB_SIZE) -> Any:
    """A tokenizer of ``vocab_size`` pieces made from CORPUS, wrapped as a transformers fast tokenizer.

    kind: "bpe" (byte-level BPE trained by the tokenizers library, <s> prepended, as llama 3's), "wordpiece"
    (BERT's: lowercased, [CLS] ... [SEP]), "unigram" (T5's: Metaspace pieces with log-frequency scores, </s>
    appended, pad id 0 as the decoder's start). The WordPiece and Unigram vocabularies are counted here rather than
    trained, for the same files on every run.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    lines = corpus_lines()
    if kind == "bpe":
        specials = ["<unk>", "<s>", "</s>", "<pad>"]
        tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(lines, trainer=trainer)
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", tok.token_to_id("<s>"))]
        )
        wrapped = PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
        )
    elif kind == "wordpiece":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        normalizer = normalizers.BertNormalizer(lowercase=True)
        pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        words = Counter(w for line in lines for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(line)))
        chars = sorted({c for w in words for c in w})
        base = specials + chars + sorted({"##" + c for w in words for c in w[1:]})
        pieces: Counter[str] = Counter()
        for word, count in words.items():
            if len(word) > 1:
                pieces[word] += count
            for start in range(1, len(word) - 1):
                pieces["##" + word[start:]] += count
        vocab = base + most_common(pieces, vocab_size - len(base), exclude=set(base))
        tok = Tokenizer(models.WordPiece({piece: i for i, piece in enumerate(vocab)}, unk_token="[UNK]"))
        tok.normalizer = normalizer
        tok.pre_tokenizer = pre_tokenizer
        tok.decoder = decoders.WordPiece()
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
        )
        wrapped = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
            model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        )
    elif kind == "unigram":
        specials = ["<pad>", "</s>", "<unk>"]
        pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        words = Counter(w for line in lines for w, _ in pre_tokenizer.pre_tokenize_str(line))
        occurrences: Counter[str] = Counter()  # every substring of up to 12 characters of a word
        for word, count in words.items():
            for start in range(len(word)):
                for end in range(start + 1, min(len(word), start + 12) + 1):
                    occurrences[word[start:end]] += count
        chars = sorted(piece for piece in occurrences if len(piece) == 1)
        # all characters, then the longer pieces that cover the most text
        coverage = Counter({piece: n * len(piece) for piece, n in occurrences.items() if len(piece) > 1})
        vocab = chars + most_common(coverage, vocab_size - len(specials) - len(chars), exclude=set())
        total = sum(occurrences[piece] for piece in vocab)
        # a piece's score: the log of its share of the occurrences, as sentencepiece's Unigram scores are
        scored = [(p, 0.0) for p in specials] + [(p, round(math.log(occurrences[p] / total), 6)) for p in vocab]
        tok = Tokenizer(models.Unigram(scored, unk_id=specials.index("<unk>"), byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizer
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
        )
        wrapped = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
    else:
        raise ValueError(kind)
    return wrapped


def clear(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def seed() -> None:
    import torch

    torch.manual_seed(SEED)


def perturb_constant_parameters(model: Any) -> None:
    """Jitter the parameters that initialisation leaves constant (norm weights of ones, biases of zeros).

    A trained model has none, and OpenVINO folds a multiplication by ones or an addition of zeros away, which would
    leave the normalisations without the Multiply (and Add) by their weight (and bias) a real export has.
    """
    import torch

    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() > 1 and bool((parameter == parameter.flatten()[0]).all()):
                parameter.add_(0.05 * torch.randn_like(parameter))


def save_source(model: Any, tokenizer: Any, src: Path) -> None:
    """The local "checkpoint" optimum exports from, as a hub download would leave it (weights as safetensors)."""
    model.save_pretrained(src)
    tokenizer.save_pretrained(src)


def export_llama(out: Path, work: Path) -> None:
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVModelForCausalLM, OVWeightQuantizationConfig
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer("bpe")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    seed()
    model = LlamaForCausalLM(config).eval()
    perturb_constant_parameters(model)
    src = work / "llama_src"
    save_source(model, tokenizer, src)
    # What `optimum-cli export openvino --weight-format int4 --group-size 32 --ratio 1.0` does: export (with the
    # tokenizer converted), load the exported IR with its weights compressed by NNCF, save that, and keep the
    # export's other files (tokenizer files and IRs) beside it.
    fp = work / "llama_fp32"
    main_export(str(src), fp, task="text-generation-with-past", library_name="transformers", convert_tokenizer=True)
    # openvino_config.json records the tokenizer a data-aware compression would calibrate with (this one has no
    # dataset, so none is loaded); name the checkpoint rather than its temporary path, so that reruns write the same.
    quantization = OVWeightQuantizationConfig(bits=4, sym=False, group_size=32, ratio=1.0, tokenizer=src.name)
    # (optimum warns that it "could not infer whether the model was already converted": offline, it looks for a hub
    # cache entry first; it then loads the IR from the directory, as wanted.)
    OVModelForCausalLM.from_pretrained(str(fp), quantization_config=quantization, compile=False).save_pretrained(out)
    for path in sorted(fp.iterdir()):
        if not (out / path.name).exists():
            shutil.copy2(path, out / path.name)
    check_llama(out, model, tokenizer, fp)


def export_bert(out: Path, work: Path) -> None:
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVConfig
    from transformers import BertConfig, BertModel

    tokenizer = build_tokenizer("wordpiece")
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
    )
    seed()
    model = BertModel(config).eval()
    perturb_constant_parameters(model)
    src = work / "bert_src"
    save_source(model, tokenizer, src)
    # `optimum-cli export openvino --task feature-extraction --weight-format fp16`
    main_export(
        str(src),
        out,
        task="feature-extraction",
        library_name="transformers",
        ov_config=OVConfig(dtype="fp16"),
        convert_tokenizer=True,
    )
    check_tokenizer(out, tokenizer)
    check_bert(out, model, tokenizer)


def deterministic_cross_attention_states() -> None:
    """Make optimum insert the T5 decoder's cross-attention states in graph order.

    optimum finds the ops whose outputs become the cross-attention KV states as a set of OpenVINO nodes, and adds a
    ReadValue/Assign pair for each in the order of that set, which changes from one process to the next: the same
    graph comes out with its ops (and the variable ids named after them) in another order every run. Sorting the
    nodes by their place in the graph keeps the graph and makes the files the same on every run.
    """
    from optimum.exporters.openvino import stateful

    find = stateful.find_output_nodes_of_dependent_subgraph
    if getattr(find, "sorted_by_graph_order", False):
        return

    def in_graph_order(model: Any, sources: list[Any]) -> list[Any]:
        place = {node: index for index, node in enumerate(model.get_ordered_ops())}
        return sorted(find(model, sources), key=place.__getitem__)

    in_graph_order.sorted_by_graph_order = True  # type: ignore[attr-defined]
    stateful.find_output_nodes_of_dependent_subgraph = in_graph_order


def export_t5(out: Path, work: Path) -> None:
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVConfig
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = build_tokenizer("unigram")
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        feed_forward_proj="relu",
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    seed()
    model = T5ForConditionalGeneration(config).eval()
    perturb_constant_parameters(model)
    src = work / "t5_src"
    save_source(model, tokenizer, src)
    deterministic_cross_attention_states()
    # `optimum-cli export openvino --task text2text-generation-with-past --weight-format fp16`
    # (OpenVINO logs "Failed to build model wrapper." for the decoder: its wrapper template names the annotation
    # transformers.cache_utils.Cache without importing transformers; it then converts the model unwrapped.)
    main_export(
        str(src),
        out,
        task="text2text-generation-with-past",
        library_name="transformers",
        ov_config=OVConfig(dtype="fp16"),
        convert_tokenizer=True,
    )
    check_tokenizer(out, tokenizer)
    check_t5(out, model, tokenizer)


def export_loop(out: Path, work: Path) -> None:
    import warnings

    import openvino as ov
    import torch

    class LoopAndIf(torch.nn.Module):
        """A Loop run ``n`` times (a model input) with ReduceMean in its body, then an If on a ReduceSum whose
        branches reduce too (ReduceMax in one, ReduceSum in the other)."""

        def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
            for _ in range(n):
                x = x - x.mean(dim=-1, keepdim=True) * 0.5
            if bool(x.sum() > 0):
                x = x / (x.abs().amax(dim=-1, keepdim=True) + 1.0)
            else:
                x = x * x.sum(dim=(0, 1), keepdim=True).tanh()
            return x

    with warnings.catch_warnings():
        # torch 2.13 deprecates TorchScript; scripting is still the way to keep a data-dependent loop a Loop.
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(LoopAndIf().eval())
    seed()
    x = torch.randn(2, 8)
    n = torch.tensor(3)  # the frontend needs a tensor to type the int input (an i64 scalar Parameter)
    model = ov.convert_model(scripted, example_input=(x, n))
    ov.save_model(model, out / "model.xml", compress_to_fp16=False)
    compiled = ov.Core().compile_model(out / "model.xml", "CPU")
    for trips in (0, 1, 3):
        got = compiled([x.numpy(), trips])[0]
        want = scripted(x, trips).numpy()
        assert abs(got - want).max() < 1e-5, (trips, got, want)


# Comparisons with torch compile this way: CPUs with bf16 support otherwise infer in bf16 and keep KV caches in u8.
EXACT = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32"}
SAMPLE_TEXT = "The mean of a row folds the last axis; quick zebras reduce tensors."


def check_tokenizer(out: Path, tokenizer: Any) -> None:
    """The tokenizer IR (needs openvino-tokenizers' extension) gives the ids the transformers tokenizer gives."""
    import numpy as np
    import openvino as ov
    import openvino_tokenizers  # noqa: F401  (registers the tokenizer ops with openvino)

    core = ov.Core()
    got = core.compile_model(out / "openvino_tokenizer.xml", "CPU")([SAMPLE_TEXT])["input_ids"][0]
    want = tokenizer(SAMPLE_TEXT)["input_ids"]
    assert got.tolist() == want, (got.tolist(), want)
    assert got.min() >= 0 and got.max() < len(tokenizer), got
    if (out / "openvino_detokenizer.xml").exists():
        text = core.compile_model(out / "openvino_detokenizer.xml", "CPU")(np.array([want]))["string_output"][0]
        assert text == tokenizer.decode(want, skip_special_tokens=True), (text, tokenizer.decode(want))


def check_llama(out: Path, model: Any, tokenizer: Any, fp: Path) -> None:
    """Prefill and two greedy decode steps with the KV cache kept as state: the FP32 export matches torch, the INT4
    export runs and is finite, and reset_state() starts over."""
    import numpy as np
    import openvino as ov
    import torch

    check_tokenizer(out, tokenizer)
    ids = np.array([tokenizer(SAMPLE_TEXT)["input_ids"]], dtype=np.int64)
    core = ov.Core()

    def run(xml: Path, config: dict[str, str]) -> tuple[list[Any], list[int]]:
        request = core.compile_model(xml, "CPU", config).create_infer_request()
        request.reset_state()
        step_ids, past, logits, tokens = ids, 0, [], []
        for _ in range(3):  # the prefill, then two decode steps
            length = step_ids.shape[1]
            request.infer(
                {
                    "input_ids": step_ids,
                    "attention_mask": np.ones((1, past + length), dtype=np.int64),
                    "position_ids": np.arange(past, past + length, dtype=np.int64)[None],
                    "beam_idx": np.arange(1, dtype=np.int32),
                }
            )
            last = request.get_tensor("logits").data[0, -1].copy()
            logits.append(last)
            tokens.append(int(last.argmax()))
            past += length
            step_ids = np.array([[tokens[-1]]], dtype=np.int64)
        assert len(request.query_state()) == 2 * model.config.num_hidden_layers, request.query_state()
        request.reset_state()
        again = request.infer(
            {
                "input_ids": ids,
                "attention_mask": np.ones(ids.shape, dtype=np.int64),
                "position_ids": np.arange(ids.shape[1], dtype=np.int64)[None],
                "beam_idx": np.arange(1, dtype=np.int32),
            }
        )
        assert np.allclose(again["logits"][0, -1], logits[0], atol=1e-5), "reset_state() did not start over"
        return logits, tokens

    fp_logits, fp_tokens = run(fp / "openvino_model.xml", EXACT)
    with torch.no_grad():
        full = torch.tensor(np.concatenate([ids[0], fp_tokens[:2]]))[None]
        want = model(full).logits[0, -3:].numpy()
    for step in range(3):
        assert np.allclose(fp_logits[step], want[step], atol=1e-4), (step, abs(fp_logits[step] - want[step]).max())
    int4_logits, _ = run(out / "openvino_model.xml", {})
    assert all(np.isfinite(step).all() for step in int4_logits)


def check_bert(out: Path, model: Any, tokenizer: Any) -> None:
    """The FP16-weight export's hidden states match torch's FP32 ones (OpenVINO also computing in f32)."""
    import numpy as np
    import openvino as ov
    import torch

    batch = tokenizer([SAMPLE_TEXT, "A short one."], padding=True, return_tensors="np")
    compiled = ov.Core().compile_model(out / "openvino_model.xml", "CPU", EXACT)
    got = compiled({name: batch[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids")})
    with torch.no_grad():
        want = model(**{k: torch.tensor(v) for k, v in batch.items()}).last_hidden_state.numpy()
    assert np.allclose(got["last_hidden_state"], want, atol=2e-2), abs(got["last_hidden_state"] - want).max()


def check_t5(out: Path, model: Any, tokenizer: Any) -> None:
    """Encoder, then the stateful decoder: its first step and two greedy steps after it match torch (in f32 with
    the FP16-rounded weights against torch's FP32 ones, hence the tolerance)."""
    import numpy as np
    import openvino as ov
    import torch

    core = ov.Core()
    ids = np.array([tokenizer(SAMPLE_TEXT)["input_ids"]], dtype=np.int64)
    mask = np.ones_like(ids)
    hidden = core.compile_model(out / "openvino_encoder_model.xml", "CPU", EXACT)([ids, mask])["last_hidden_state"]
    decoder = core.compile_model(out / "openvino_decoder_model.xml", "CPU", EXACT).create_infer_request()
    decoder.reset_state()
    tokens, logits = [model.config.decoder_start_token_id], []
    for _ in range(3):
        step = decoder.infer(
            {
                "input_ids": np.array([tokens[-1:]], dtype=np.int64),
                "encoder_hidden_states": hidden,
                "encoder_attention_mask": mask,
                "beam_idx": np.arange(1, dtype=np.int32),
            }
        )
        logits.append(step["logits"][0, -1].copy())
        tokens.append(int(logits[-1].argmax()))
    with torch.no_grad():
        want = (
            model(
                input_ids=torch.tensor(ids),
                attention_mask=torch.tensor(mask),
                decoder_input_ids=torch.tensor([tokens[:3]]),
            )
            .logits[0]
            .numpy()
        )
    for position in range(3):
        assert np.allclose(logits[position], want[position], atol=2e-2), abs(logits[position] - want[position]).max()


def check_export(out: Path) -> None:
    """Every model IR reads and compiles on CPU; the structural facts the tests rely on hold."""
    import openvino as ov

    from tests.exports import ir_facts

    core = ov.Core()
    for xml in sorted(out.glob("*.xml")):
        core.compile_model(core.read_model(xml), "CPU")
    if out.name == "llama_int4":
        model = core.read_model(out / "openvino_model.xml")
        layers = json.loads((out / "config.json").read_text())["num_hidden_layers"]
        norms = [
            f"layers.{i}.{kind}" for i in range(layers) for kind in ("input_layernorm", "post_attention_layernorm")
        ]
        means = [op.get_friendly_name() for op, _ in ir_facts.walk(model) if op.get_type_name() == "ReduceMean"]
        # every RMSNorm (two per decoder layer, the final one) keeps its ReduceMean, and there is no other
        assert sorted(means) == sorted(f"__module.model.{norm}/aten::mean/ReduceMean" for norm in [*norms, "norm"]), (
            means
        )
        assert model.get_sinks(), "not stateful"
        assert {"u4", "i4"} & set(ir_facts.const_types(model)), ir_facts.const_types(model)
    if out.name == "t5_seq2seq":
        for part, norms in (("encoder", 2 * 2 + 1), ("decoder", 3 * 2 + 1)):  # per block, times 2 blocks, + final
            counts = ir_facts.reduce_counts(core.read_model(out / f"openvino_{part}_model.xml"))
            assert counts.top["ReduceMean"] == norms, (part, counts)
    if out.name == "loop_trip_count":
        model = core.read_model(out / "model.xml")
        assert ir_facts.loop_trip_count_sources(model) == ["Parameter"], ir_facts.loop_trip_count_sources(model)
        for op in model.get_ordered_ops():
            for body in ir_facts.bodies(op):  # the Loop's body, each branch of the If
                assert ir_facts.reduce_counts(body).top, f"no Reduce* in a body of {op.get_friendly_name()}"


def summary(out: Path) -> str:
    import openvino as ov

    from tests.exports import ir_facts

    core = ov.Core()
    total = sum(p.stat().st_size for p in out.iterdir())
    lines = [f"{out.name}/ ({total / 1024:.0f} KiB)"]
    for path in sorted(out.iterdir()):
        lines.append(f"    {path.name}: {path.stat().st_size} B")
    for xml in sorted(out.glob("*.xml")):
        if "tokenizer" in xml.name:
            continue
        model = core.read_model(xml)
        counts = ir_facts.reduce_counts(model)
        lines.append(f"  {xml.name}")
        lines.append(f"    inputs: {ir_facts.inputs(model)}")
        lines.append(f"    Reduce* top level: {dict(sorted(counts.top.items()))}")
        lines.append(f"    Reduce* in bodies: {dict(sorted(counts.bodies.items()))}")
        lines.append(f"    Constant element types: {dict(sorted(ir_facts.const_types(model).items()))}")
        lines.append(f"    stateful: {bool(model.get_sinks())}")
    return "\n".join(lines)


EXPORTERS = {
    "llama_int4": export_llama,
    "bert_encoder": export_bert,
    "t5_seq2seq": export_t5,
    "loop_trip_count": export_loop,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"exports to regenerate, of {', '.join(EXPORTERS)}")
    parser.add_argument("--out", type=Path, default=HERE, help="parent directory of the exports (default: this one)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(EXPORTERS))
    if unknown:
        parser.error(f"unknown export(s) {unknown}; choose from {list(EXPORTERS)}")
    check_versions()
    names = args.names or list(EXPORTERS)
    if len(names) > 1:
        # One process per export: OpenVINO numbers the names it makes up (Model38, Constant_58768) with counters
        # global to the process, so an export made after another would differ from the same export made alone.
        for name in names:
            subprocess.run([sys.executable, __file__, name, "--out", str(args.out)], check=True)
        return 0
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for tests.exports.ir_facts
    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}.items():
        os.environ.setdefault(key, value)  # no model hub here, and none wanted: everything is built locally
    out = clear(args.out / names[0])
    with tempfile.TemporaryDirectory(prefix="ovreduce-exports-") as work:
        EXPORTERS[names[0]](out, Path(work))
    check_export(out)
    print(summary(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
