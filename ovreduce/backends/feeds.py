"""Inputs that exercise a model: how each model input is made when the user gives none.

Uniform random integers leave most models degenerate. Token ids drawn far outside a vocabulary of a thousand
make the embedding Gather return zero rows (OpenVINO's Gather gives 0 for an index out of range), so every
RMSNorm after it averages zeros and any audit of it "passes" on zero errors; a random trip count runs a Loop a
million times, or forever when it is negative. The graph says what an input is for, and the input is made for
that (:func:`recipes`), in this order:

==============================================  ================================================================
what the graph (or optimum's input name) says   what the input gets
==============================================  ================================================================
``attention_mask``, other integer ``*mask*``    ones: every position attended
a mask a pooling reduces (within a few          ones with right padding, row k ending k+1 tokens early (never a
Converts, Unsqueezes, Broadcasts, Multiplies,   row of padding alone): a pooling's count and masked sum vary, a
flips, Equals, Selects; no decoder's: no        last-token pooling picks another token, a max pooling's fill
state, past or beams)                           meets padding
``inputs_embeds`` (a VLM's language model)      the export's own text embeddings of seeded ids (:class:`Embedder`,
                                                where the export holds its text-embeddings model), else as below
``position_ids``, ``cache_position``            ``arange`` along the last axis: positions 0..n-1 of a sequence
``cache_position`` beside a Mamba conv state    ``arange(k)``, k the state's columns (``config.conv_kernel``),
                                                whatever the prompt's length: the prefill, as optimum-intel feeds it
``beam_idx``                                    ``arange(batch)``: each beam keeps its own cache
``past_key_values.N.key`` / ``.value``          empty along the past (see :mod:`ovreduce.backends.openvino`): the
                                                first step of generation, as the mask and positions describe it
indices of a Gather that a TopK also sorts in   a seeded permutation of ``[0, n)``, n the size of the axis they
full (an argsort: the model inverts them)       index, as long as it (Qwen2.5-VL's ``window_index``: one per
                                                merge unit); shorter or longer, as below
indices of Gather*, Scatter*, embedding bags    seeded integers in ``[0, n)``, n the size of the axis they index
                                                (the smallest of those a GatherND or ScatterNDUpdate indexes; where
                                                it is unknown, but for a Gather's: 0); lengths along an axis
                                                (ReverseSequence, CTCGreedyDecoderSeqLen) in ``[0, n]``
segment ids, offsets, batch indices, OneHot's   zeros, which fit whatever the data (sorted, below any count)
a Loop's trip count, a shape, a Range bound,    a small count, 3, or seeded integers in ``[1, 4]``
a DFT's signal size
a bound a Loop's execution condition compares   3, as a trip count
a Loop's execution condition                    true
the axes of reductions, Slices, DFTs,          the lowest-ranked data's last axes (rank-1, rank-2...; a scalar: 0;
Unsqueezes                                      a complex DFT's last axis of 2 left out)
anything else                                   :func:`ovreduce.tensors.generate` (normal floats, wide integers)
==============================================  ================================================================

What the graph says is read through the ops that pass a value on (Convert, Reshape, any input of a Concat...), the
arithmetic that offsets or scales it, and into the If, Loop and TensorIterator bodies it feeds. Each recipe says what
it rests on, and the documents carry that as the input's ``origin``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ovreduce.ir.dtypes import ElementType
from ovreduce.tensors import generate_input, within_input_range

T = TypeVar("T")

__all__ = [
    "ALONG_IDS",
    "EMBEDDINGS",
    "GROWING_MASKS",
    "PAST",
    "PROMPT_TOKENS",
    "TOKEN_IDS",
    "Embedder",
    "Recipe",
    "conv_kernel",
    "make",
    "permutations",
    "recipes",
]

Kind = Literal[
    "random", "ids", "ones", "padded", "positions", "arange", "count", "small", "true", "axes", "text", "permutation"
]


@dataclass(frozen=True)
class Recipe:
    """How one model input is made: ``kind``, the exclusive upper bound of ``ids`` (of ``positions``: the columns of a
    Mamba conv state, which its prefill's ``cache_position`` spans; 0 for positions along the tokens), and what it
    rests on."""

    kind: Kind
    high: int = 0
    why: str = ""
    token: tuple[int, str] | None = None  # ids: a token the model counts (an Equal with it, reduced), and where

    def origin(self, seed: int) -> str:
        """How the input was made, as the documents say it."""
        seeded = f"seed {seed}"
        return {
            "random": seeded,
            "ids": f"{seeded}, ids in [0, {self.high}) ({self.why})"
            + (f", token {self.token[0]} once in each row ({self.token[1]})" if self.token is not None else ""),
            "permutation": f"{seeded}, a permutation of [0, {self.high}) ({self.why})",
            "ones": f"ones ({self.why})",
            "padded": (
                f"ones with right padding as a tokenizer pads a batch, row k ending k+1 tokens early but never "
                f"padding alone ({self.why})"
            ),
            "positions": (
                f"positions 0..{self.high - 1} ({self.why})"
                if self.high
                else f"positions 0..n-1 along the last axis ({self.why})"
            ),
            "arange": f"arange over its first axis ({self.why})",
            "count": f"3 ({self.why})",
            "small": f"{seeded}, integers in [1, 4] ({self.why})",
            "true": f"true ({self.why})",
            "axes": f"{f'its last axes, {self.high - 1} down' if self.high else '0, a scalar'} ({self.why})",
            "text": f"sample sentences, each a word shorter than the one before ({self.why})",
        }[self.kind]


# optimum-intel's input names, as its exports spell them: the token ids; the inputs that run along them, one
# value per token (given token ids and not these, they take the ids' shape); the masks that cover the generated
# sequence and grow by one each decode step (an encoder's mask stays as it is).
TOKEN_IDS = frozenset({"input_ids", "decoder_input_ids"})
EMBEDDINGS = frozenset({"inputs_embeds"})  # the token ids' embeddings, fed instead of them (a VLM's language model)
ALONG_IDS = frozenset({"attention_mask", "position_ids", "token_type_ids", "decoder_attention_mask"})
GROWING_MASKS = frozenset({"attention_mask", "decoder_attention_mask"})
PAST = "past_key_values."  # the past keys and values of an export without state (past_key_values.0.key...)
PROMPT_TOKENS = 8  # the length of token ids ovreduce makes itself: a sequence, not one token


class Embedder(Protocol):
    """What makes a model's ``inputs_embeds`` of token ids as the export's runtime does (a VLM export's text-embeddings
    model: optimum-intel feeds its language model that model's output for the text's tokens)."""

    @property
    def source(self) -> str:
        """What embeds the ids, for the documents (the text-embeddings model's file name)."""
        ...

    @property
    def vocabulary(self) -> int:
        """The ids it embeds: ``[0, vocabulary)``."""
        ...

    def __call__(self, ids: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """The embeddings of ``ids`` (``[batch, tokens]``): ``[batch, tokens, hidden]``."""
        ...


# Ops a value passes through unchanged or picks elements of (as values: their data input, port 0; every input of a
# Concat), so that an input converted, reshaped or indexed (TorchScript's ``n[0]``) before its use is still known for
# what it is; and the arithmetic an index is offset or scaled by on its way (its bound then taken as the op's, an
# approximation: no longer random).
_THROUGH = frozenset({"Convert", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Broadcast", "Tile",
                      "Slice", "StridedSlice", "Identity", "ConvertLike", "Gather", "GatherElements", "GatherND",
                      "Split", "VariadicSplit", "ReduceMax", "ReduceMin"})  # fmt: skip
_ARITHMETIC = frozenset({"Add", "Subtract", "Multiply", "Minimum", "Maximum", "Abs", "Negative"})  # (no divisor: zeros)
# (op, input port) that take shapes, counts or bounds: an input there is small and non-negative.
_SHAPE_LIKE = frozenset({
    ("Reshape", 1), ("Broadcast", 1), ("Tile", 1), ("TopK", 1), ("Pad", 1), ("Pad", 2), ("Range", 0), ("Range", 1),
    ("Range", 2), ("OneHot", 1), ("Interpolate", 1), ("Slice", 1), ("Slice", 2), ("Slice", 3), ("StridedSlice", 1),
    ("StridedSlice", 2), ("RandomUniform", 0), ("Multinomial", 1), ("SegmentMax", 2), ("EmbeddingSegmentsSum", 3),
    ("SparseFillEmptyRows", 1), ("DFT", 2), ("IDFT", 2), ("RDFT", 2), ("IRDFT", 2),
})  # fmt: skip
# (op, input port) that take axes of the op's data, input 0, and the trailing axes they leave out (a complex DFT's
# last axis of 2, its real and imaginary parts); a reduction's axes are input 1 of any Reduce*.
_AXES = {("Slice", 4): 0, ("Unsqueeze", 1): 0, ("DFT", 1): 1, ("IDFT", 1): 1, ("IRDFT", 1): 1, ("RDFT", 1): 0}
_EMBEDDING_BAGS = frozenset({"EmbeddingBagOffsetsSum", "EmbeddingBagPackedSum", "EmbeddingSegmentsSum"})
# (op, input port) that index an axis of the op's data, input 0 (:func:`_indexed_size`)...
_INDEXED = frozenset(
    {
        ("Gather", 1),
        ("GatherElements", 1),
        ("GatherND", 1),
        ("ScatterUpdate", 1),
        ("ScatterElementsUpdate", 1),
        ("ScatterNDUpdate", 1),
        ("VocabDecoder", 0),  # (openvino-tokenizers': a detokenizer's ids, into its vocabulary)
        *((bag, 1) for bag in _EMBEDDING_BAGS),
    }
)
# ...that give lengths along one, at most its size...
_LENGTHS = frozenset({("ReverseSequence", 1), ("CTCGreedyDecoderSeqLen", 1), ("GatherTree", 2)})
# ...and that only zeros fit whatever the data: ids, offsets and indices bounded by other inputs, sorted, or both.
# Out of range, these fail OpenVINO's CPU plugin, or crash it (SegmentMax, SparseFillEmptyRows: SIGSEGV, SIGABRT).
# Comparisons: an integer input compared with what feeds a Loop's execution condition bounds its iterations (the
# ``while i < n`` TorchScript writes: ``Less(i + 1, n)``), a count as a trip count is; on the way to the condition, the
# logical ops that combine it.
_COMPARISONS = frozenset({"Less", "Greater", "LessEqual", "GreaterEqual", "Equal", "NotEqual"})
_LOGICAL = frozenset({"LogicalAnd", "LogicalOr", "LogicalNot", "LogicalXor"})
_ZEROS = frozenset({("ROIAlign", 2), ("ROIAlignRotated", 2), ("EmbeddingBagOffsetsSum", 2),
                    ("EmbeddingBagOffsetsSum", 3), ("EmbeddingSegmentsSum", 2), ("EmbeddingSegmentsSum", 4),
                    ("SegmentMax", 1), ("SparseFillEmptyRows", 2), ("GatherTree", 1), ("OneHot", 0)})  # fmt: skip
_WALK_LIMIT = 10_000  # consumers visited per input, at most: the walk stays linear in the model


def recipes(ov_model: Any) -> list[Recipe]:
    """A :class:`Recipe` for each input of ``ov_model`` (reshaped to the shapes it will run at), by index."""
    kernel = conv_kernel(ov_model)
    permuted = permutations(ov_model)
    # a decoder (a state, a past, beams) grows its mask by the tokens it generates: never padded at the end
    decoder = bool(ov_model.get_sinks()) or any(
        name.startswith(PAST) or name == "beam_idx" for port in ov_model.inputs for name in port.get_names()
    )
    out = []
    for index, port in enumerate(ov_model.inputs):
        found, shape = permuted.get(index), port.get_partial_shape()
        size = None if found is None else _dim(found[0].input_value(0).get_partial_shape(), found[1])
        if found is not None and size is not None and shape.is_static and list(shape.to_shape()) == [size]:
            why = (f"indices of Gather {found[0].get_friendly_name()!r} that TopK {found[2]!r} sorts in full, an "
                   f"argsort: the model inverts them, so each index is there once")  # fmt: skip
            out.append(Recipe("permutation", size, why))
        else:
            out.append(_recipe(port, kernel, pooling=not decoder))
    return out


def permutations(ov_model: Any) -> dict[int, tuple[Any, int, str]]:
    """The rank-1 integer inputs of ``ov_model`` that the model takes for a permutation, by input index: indices of a
    Gather (directly or through Converts) that a TopK also sorts in full, its ``k`` their own length (an argsort, which
    inverts a permutation: Qwen2.5-VL's ``window_index``, one per merge unit, reordering the units into windows and
    back). Each with the Gather, the axis it indexes (a constant), and the TopK's name."""
    found: dict[int, tuple[Any, int, str]] = {}
    for index, port in enumerate(ov_model.inputs):
        shape = port.get_partial_shape()
        if shape.rank.is_dynamic or shape.rank.get_length() != 1 or not port.get_element_type().is_integral():
            continue
        parameter = port.get_node()
        gather, axis, topk = None, None, None
        outputs, seen = [parameter.output(0)], 0
        while outputs and seen < 16:
            output, seen = outputs.pop(), seen + 1
            for use in output.get_target_inputs():
                node, kind = use.get_node(), use.get_node().get_type_name()
                if kind == "Convert":
                    outputs.append(node.output(0))
                elif kind == "Gather" and use.get_index() == 1:  # (of several, the first name: consumers come in
                    value = node.input_value(2).get_node()  # no fixed order)
                    if value.get_type_name() == "Constant" and np.asarray(value.get_data()).size == 1:
                        rank = node.input_value(0).get_partial_shape().rank
                        at = int(np.asarray(value.get_data()).reshape(-1)[0])
                        at = at + rank.get_length() if at < 0 and rank.is_static else at
                        if at >= 0 and (gather is None or node.get_friendly_name() < gather.get_friendly_name()):
                            gather, axis = node, at
                elif kind == "TopK" and use.get_index() == 0 and _length_of(node.input_value(1), parameter):
                    topk = node
        if gather is not None and axis is not None and topk is not None:
            found[index] = (gather, axis, topk.get_friendly_name())
    return found


def _length_of(value: Any, parameter: Any) -> bool:
    """Whether ``value`` is the length of ``parameter`` (a rank-1 input): its ShapeOf, through ops that pass it on."""
    shaped = False
    for _ in range(8):
        node = value.get_node()
        kind = node.get_type_name()
        if node.get_name() == parameter.get_name():
            return shaped
        if kind == "ShapeOf" and not shaped:
            shaped = True
        elif kind not in ("Squeeze", "Unsqueeze", "Reshape", "Convert", "Gather"):
            return False
        value = node.input_value(0)
    return False


def conv_kernel(ov_model: Any) -> tuple[int, str] | None:
    """The columns of a Mamba-style model's conv state, and the state's variable, where ``ov_model`` takes a
    ``cache_position`` and holds one (optimum-intel's ``cache_params.present.conv.N``, ``[batch, channels,
    conv_kernel]``); else None. Such a model tells its prefill from a decode step by the length of
    ``cache_position``: ``arange(conv_kernel)`` at the prefill whatever the prompt's length, one position at each
    step (transformers' and optimum-intel's Mamba), with an attention mask of the new tokens alone."""
    if not any("cache_position" in port.get_names() for port in ov_model.inputs):
        return None
    for sink in ov_model.get_sinks():
        name = str(sink.get_variable_id()) if hasattr(sink, "get_variable_id") else ""
        shape = sink.input_value(0).get_partial_shape()
        if ".conv." in name and shape.rank.is_static and shape.rank.get_length() == 3 and shape[2].is_static:
            return int(shape[2].get_length()), name
    return None


def _recipe(port: Any, kernel: tuple[int, str] | None = None, pooling: bool = False) -> Recipe:
    """How ``port`` is made (see the module's table); ``pooling``: a mask a pooling reduces may be padded (no
    decoder's)."""
    etype = port.get_element_type()
    integral = etype.is_integral() or etype.get_type_name() == "boolean"
    names = {n.lower() for n in port.get_names()} | {port.get_node().get_friendly_name().lower()}
    boolean = etype.get_type_name() == "boolean"
    if etype.get_type_name() == "string":
        return Recipe("text", why="a string input: a tokenizer's text")
    if any("attention_mask" in n for n in names) or (integral and not boolean and any("mask" in n for n in names)):
        pooled = _pooled(port.get_node()) if pooling else None
        if pooled is not None:  # a pooling reduces it: a mask of ones leaves its count constant and nothing masked
            return Recipe("padded", why=f"an attention mask, by its name, that {pooled} reduces: a pooling")
        return Recipe("ones", why="an attention mask, by its name")
    if integral and "cache_position" in names and kernel is not None:
        return Recipe("positions", kernel[0], f"a Mamba-style prefill: the {kernel[0]} columns of the conv state "
                      f"{kernel[1]!r}, whatever the prompt's length, as optimum-intel feeds them")  # fmt: skip
    if integral and names & {"position_ids", "cache_position"}:
        return Recipe("positions", why="positions, by its name")
    if integral and "beam_idx" in names:
        return Recipe("arange", why="a beam index, by its name")
    if not integral:
        return Recipe("random")
    # Of several consumers of a kind, the smallest bound wins, then the first name: OpenVINO lists an output's
    # consumers in no fixed order, and the documents name the one an input was made for.
    bound, shape_like, trip, condition, axes, token = None, None, None, None, None, None
    uses = _uses(port.get_node())
    conditions = _body_conditions(uses)
    for consumer, index in uses:
        kind = consumer.get_type_name()
        name = consumer.get_friendly_name()
        if (kind, index) in _INDEXED or (kind, index) in _LENGTHS:
            size = _indexed_size(consumer)
            lengths = (kind, index) in _LENGTHS
            what = f"{'lengths' if lengths else 'indices'} of {kind} {name!r}"
            if size is not None:
                bound = _first(bound, (size + lengths, what))
            elif kind != "Gather":  # out of range, these fail or crash OpenVINO's CPU plugin: 0 is in range
                bound = _first(bound, (1, f"{what}, whose range is unknown: zeros"))
        elif (kind, index) in _ZEROS:
            bound = _first(bound, (1, f"input {index} of {kind} {name!r}, which zeros fit whatever the data"))
        elif kind == "Loop" and index == 0:
            trip = _first(trip, f"the trip count of Loop {name!r}")
        elif kind == "Loop" and index == 1:
            condition = _first(condition, f"the execution condition of Loop {name!r}")
        elif kind in _COMPARISONS and (loop := _condition_of(consumer, conditions)) is not None:
            trip = _first(trip, f"a bound of the execution condition of Loop {loop!r}, by {kind} {name!r}")
        elif kind == "Equal" and (counted := _counted_token(consumer, index)) is not None:
            token = _first(token, counted)
        elif (kind, index) in _SHAPE_LIKE:
            shape_like = _first(shape_like, f"input {index} of {kind} {name!r}")
        elif (rank := _axes_rank(consumer, index)) is not None:
            axes = _first(axes, (rank, f"the axes of {kind} {name!r}"))  # the lowest rank: axes every one takes
    if bound is not None and bound[0] > 0:
        held = token if token is not None and 0 <= token[0] < bound[0] else None
        return Recipe("ids", bound[0], bound[1], held)
    if axes is not None:
        return Recipe("axes", axes[0], axes[1])
    if condition is not None:
        return Recipe("true", why=condition)
    if trip is not None:
        return Recipe("count", why=trip)
    if shape_like is not None:
        return Recipe("small", why=shape_like)
    return Recipe("random")


def _axes_rank(op: Any, index: int) -> int | None:
    """The number of axes ``op``'s input ``index`` picks among, where it takes axes: a reduction's, a Slice's (out of
    range, OpenVINO's CPU plugin reads outside its buffers), a DFT's (of the data's axes but the complex numbers' last),
    an Unsqueeze's; None for any other input, or a rank not known."""
    kind = op.get_type_name()
    if not ((kind.startswith("Reduce") and index == 1) or (kind, index) in _AXES):
        return None
    shape = op.input_value(0).get_partial_shape()
    return None if shape.rank.is_dynamic else shape.rank.get_length() - _AXES.get((kind, index), 0)


def _first(current: T | None, new: T) -> T:
    """The smaller of two findings (a bound, then a name), ``new`` where there is none yet."""
    return new if current is None or new < current else current  # type: ignore[operator]


# The ops a mask passes through on its way into a pooling's reduction, and how far that way is looked along: a mean
# pooling's ``mask.unsqueeze(-1).expand(...).float()`` times the token embeddings, a last-token pooling's flip
# (``mask.flip(1).max(1)``: a Slice of step -1, or a Reverse), a max pooling's masked fill (``masked_fill(mask == 0,
# -1e9)``: an Equal, a Select).
_POOLING_WAY = frozenset({"Convert", "ConvertLike", "Unsqueeze", "Reshape", "Squeeze", "Broadcast", "Tile", "Multiply",
                          "Slice", "StridedSlice", "Reverse", "Equal", "NotEqual", "LogicalNot", "Select"})  # fmt: skip
_POOLING_STEPS = 6


def _pooled(parameter: Any) -> str | None:
    """The reduction (its type and name) that takes ``parameter``'s value, an attention mask, as its data within a
    few ops that pass it on, multiply by it, flip it or fill by it (:data:`_POOLING_WAY`): a mean pooling's token count
    and masked sum (sentence-transformers': ``sum(embeddings * mask) / sum(mask)``), a last-token pooling's search of
    the last real token (``mask.flip(1).max(1)``), a max pooling's max over the embeddings filled at the padding; not
    the attention's use of it; None where there is none (an LLM decoder's mask)."""
    found: list[str] = []
    frontier, seen = [parameter], set[str]()
    for _ in range(_POOLING_STEPS):
        ahead = []
        for node in frontier:
            for target in node.output(0).get_target_inputs():
                consumer, index = target.get_node(), target.get_index()
                kind = consumer.get_type_name()
                if kind.startswith("Reduce") and index == 0:
                    found.append(f"{kind} {consumer.get_friendly_name()!r}")
                elif kind in _POOLING_WAY and consumer.get_name() not in seen and len(seen) < 64:
                    seen.add(consumer.get_name())
                    ahead.append(consumer)
        frontier = ahead
    return min(found) if found else None


def _uses(parameter: Any) -> list[tuple[Any, int]]:
    """The (op, input port) pairs that consume ``parameter``'s value: through ops that pass it on (:data:`_THROUGH`,
    :data:`_ARITHMETIC`), and into the bodies of the If, Loop and TensorIterator ops it feeds."""
    out: list[tuple[Any, int]] = []
    queue: deque[Any] = deque([parameter])
    seen: set[str] = set()
    while queue and len(seen) < _WALK_LIMIT:
        node = queue.popleft()
        for output in node.outputs():
            for target in output.get_target_inputs():
                consumer, index = target.get_node(), target.get_index()
                out.append((consumer, index))
                kind = consumer.get_type_name()
                passes = (kind in _THROUGH and (index == 0 or kind == "Concat")) or kind in _ARITHMETIC
                for inner in [consumer] if passes else _body_parameters(consumer, index):
                    key = inner.get_name()  # unique per node (the Python wrapper is made anew per call)
                    if key not in seen:
                        seen.add(key)
                        queue.append(inner)
    return out


def _counted_token(equal: Any, index: int) -> tuple[int, str] | None:
    """The token ``equal`` compares the ids (its input ``index``) with, where that is an integer constant and a
    reduction counts the matches (through Converts and reshapes: ESM-2's token dropout sums each row's mask tokens,
    ``(input_ids == mask_token_id).sum(-1)``), and why; None otherwise. Ids seeded over a whole vocabulary hold one
    given token practically never, and that count would sum zeros."""
    other = equal.input_value(1 - index).get_node()
    if other.get_type_name() != "Constant" or not other.get_output_element_type(0).is_integral():
        return None
    values = np.asarray(other.get_data())
    if values.size != 1:
        return None
    token = int(values.reshape(-1)[0])
    pending, seen = [equal], 0
    while pending and seen < 16:
        node = pending.pop()
        seen += 1
        for target in node.output(0).get_target_inputs():
            consumer = target.get_node()
            kind = consumer.get_type_name()
            if kind.startswith("Reduce") and target.get_index() == 0:
                return token, (f"Equal {equal.get_friendly_name()!r} compares them with {token}, which {kind} "
                               f"{consumer.get_friendly_name()!r} counts")  # fmt: skip
            if kind in ("Convert", "Unsqueeze", "Squeeze", "Reshape") and target.get_index() == 0:
                pending.append(consumer)
    return None


def _body_conditions(uses: list[tuple[Any, int]]) -> dict[str, str]:
    """The body Results that give the execution condition of the Loops among ``uses``, each to its Loop's name."""
    found: dict[str, str] = {}
    for op, _ in uses:
        if op.get_type_name() == "Loop" and (result := op.get_special_body_ports()[1]) >= 0:
            found[op.get_function().get_results()[result].get_name()] = op.get_friendly_name()
    return found


def _condition_of(compare: Any, conditions: dict[str, str]) -> str | None:
    """The name of a Loop whose execution condition ``compare``'s output gives, as it is (its input 1) or combined
    (through :data:`_LOGICAL` and :data:`_THROUGH` ops) or as one of ``conditions`` (:func:`_body_conditions`)."""
    queue: deque[Any] = deque([compare])
    seen = {compare.get_name()}
    while queue and len(seen) < _WALK_LIMIT:
        for output in queue.popleft().outputs():
            for target in output.get_target_inputs():
                consumer, index = target.get_node(), target.get_index()
                kind = consumer.get_type_name()
                if kind == "Loop" and index == 1:
                    return str(consumer.get_friendly_name())
                if kind == "Result" and consumer.get_name() in conditions:
                    return conditions[consumer.get_name()]
                if (kind in _LOGICAL or (kind in _THROUGH and index == 0)) and consumer.get_name() not in seen:
                    seen.add(consumer.get_name())
                    queue.append(consumer)
    return None


def _body_parameters(op: Any, index: int) -> list[Any]:
    """The Parameters of ``op``'s bodies that its input ``index`` feeds (none for an op without bodies)."""
    kind = op.get_type_name()
    if kind == "If":
        bodies = [
            (op.get_then_body(), op.get_input_descriptions(0)),
            (op.get_else_body(), op.get_input_descriptions(1)),
        ]
    elif kind in ("Loop", "TensorIterator"):
        bodies = [(op.get_function(), op.get_input_descriptions())]
    else:
        return []
    return [body.get_parameters()[d.body_parameter_index] for body, said in bodies for d in said
            if d.input_index == index]  # fmt: skip


def _indexed_size(op: Any) -> int | None:
    """The size of the data axis an index (or length) input of ``op`` ranges over, if static: the axis a Gather,
    GatherElements or Scatter(Elements)Update indexes, an embedding bag's rows, the smallest of the axes a
    GatherND or ScatterNDUpdate indexes, the sequence axis of a ReverseSequence, CTCGreedyDecoderSeqLen or
    GatherTree, the vocabulary of a VocabDecoder."""
    kind = op.get_type_name()
    if kind == "VocabDecoder":  # the vocabulary: its tokens' begins, input 1
        return _dim(op.input_value(1).get_partial_shape(), 0)
    shape = op.input_value(0).get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    rank = shape.rank.get_length()
    if kind in ("GatherND", "ScatterNDUpdate"):
        first = int(op.get_attributes().get("batch_dims", 0))
        depth = op.input_value(1).get_partial_shape()
        last = depth[depth.rank.get_length() - 1] if depth.rank.is_static and depth.rank.get_length() else None
        count = last.get_length() if last is not None and last.is_static else rank - first
        sizes = [_dim(shape, i) for i in range(first, min(first + count, rank))]
        return None if not sizes or None in sizes else min(s for s in sizes if s is not None)
    if kind in _EMBEDDING_BAGS:
        axis: int | None = 0
    elif kind in ("GatherElements", "ReverseSequence"):
        axis = int(op.get_attributes()["axis" if kind == "GatherElements" else "seq_axis"])
    elif kind in ("CTCGreedyDecoderSeqLen", "GatherTree"):  # data [N, T, C]; step ids [T, B, W]
        axis = 1 if kind == "CTCGreedyDecoderSeqLen" else 0
    else:  # Gather's axis is input 2, Scatter(Elements)Update's input 3
        node = op.input_value(2 if kind == "Gather" else 3).get_node()
        axis = int(np.asarray(node.get_data()).reshape(-1)[0]) if node.get_type_name() == "Constant" else None
    if axis is None:
        return None
    return _dim(shape, axis + rank if axis < 0 else axis)


def _dim(shape: Any, index: int) -> int | None:
    if shape.rank.is_dynamic or not 0 <= index < shape.rank.get_length() or shape[index].is_dynamic:
        return None
    return int(shape[index].get_length())


SAMPLE_TEXT = "The quick brown fox jumps over the lazy dog, and ovreduce audits every reduction it meets."
"""The text a string input (a tokenizer's) is given when none is: its first element; each next one a word shorter
(a batch of one sentence repeated shows no error of a reduction over the batch's lengths)."""
_WORDS = SAMPLE_TEXT.split()


def make(recipe: Recipe, etype: ElementType, shape: Sequence[int], rng: np.random.Generator) -> npt.NDArray[Any]:
    """The input ``recipe`` describes, of element type ``etype`` and ``shape`` (within a packed integer type's
    values: a u4 index is at most 15)."""
    return within_input_range(_make(recipe, etype, shape, rng), etype)


def _make(recipe: Recipe, etype: ElementType, shape: Sequence[int], rng: np.random.Generator) -> npt.NDArray[Any]:
    dtype = etype.numpy
    shape = tuple(shape)
    if recipe.kind == "text":
        texts = [" ".join(_WORDS[: len(_WORDS) - k % len(_WORDS)]) for k in range(math.prod(shape))]
        return np.array(texts, dtype=np.str_).reshape(shape)
    if recipe.kind == "ids":
        ids = rng.integers(0, recipe.high, size=shape)
        if recipe.token is not None and len(shape) >= 2 and shape[-1] > 1:  # the counted token once in each row
            rows = ids.reshape(-1, shape[-1])
            rows[np.arange(rows.shape[0]), (1 + np.arange(rows.shape[0])) % shape[-1]] = recipe.token[0]
        return ids.astype(dtype)
    if recipe.kind == "permutation":
        return rng.permutation(recipe.high).reshape(shape).astype(dtype)
    if recipe.kind == "ones":
        return np.ones(shape, dtype=dtype)
    if recipe.kind == "padded":  # right padding: row k k+1 tokens short, never all of it
        mask = np.ones(shape, dtype=dtype)
        if len(shape) == 2 and shape[1] > 1:
            for row in range(shape[0]):
                mask[row, shape[1] - min(row + 1, shape[1] - 1) :] = 0
        return mask
    if recipe.kind == "positions":
        last = shape[-1] if shape else 1
        return np.broadcast_to(np.arange(last), shape).astype(dtype)
    if recipe.kind == "arange":
        first = shape[0] if shape else 1
        return np.broadcast_to(np.arange(first).reshape((first,) + (1,) * (len(shape) - 1)), shape).astype(dtype)
    if recipe.kind == "count":
        return np.full(shape, 3, dtype=dtype)
    if recipe.kind == "small":
        return rng.integers(1, 5, size=shape).astype(dtype)
    if recipe.kind == "true":
        return np.ones(shape, dtype=dtype)
    if recipe.kind == "axes":
        return np.resize(np.arange(recipe.high - 1, -1, -1) if recipe.high else np.zeros(1, int), shape).astype(dtype)
    return generate_input(etype, shape, rng)
