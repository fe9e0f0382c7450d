"""An optimum-intel export directory, the unit a user of ``optimum-cli export openvino`` has, and its tokenizer.

An export holds the model IR (``openvino_model.xml``; a seq2seq model ``openvino_encoder_model.xml`` and
``openvino_decoder_model.xml``; other parts ``openvino_<part>_model.xml``, or ``openvino_<part>.xml`` as SAM's,
open_clip's and SpeechT5's), its tokenizer and detokenizer as IRs
(``openvino_tokenizer.xml``, ``openvino_detokenizer.xml``, whose ops are openvino-tokenizers' extension) and
the Hugging Face configs (``config.json``...). :func:`find_export` says what a directory holds; :func:`tokenize`
runs its tokenizer IR on one text, as openvino-genai does before a generation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce._openvino import core, openvino, read_failure
from ovreduce.errors import BackendError, InputError, LimitExceededError, OvReduceError

__all__ = [
    "AUDIO_FRAMES", "MAX_CONFIG_BYTES", "MAX_TEXT_BYTES", "Export", "TextEmbeddings", "audio_length", "find_export",
    "image_size", "lone_export", "text_embeddings", "tokenize",
]  # fmt: skip

MAX_CONFIG_BYTES = 1 << 20
"""``config.json`` larger than this is refused (a model's config is a few KiB, a multimodal one tens)."""
MAX_TEXT_BYTES = 1 << 20
"""A text longer than this (UTF-8 bytes) is refused before it is tokenized."""

_MODEL = "openvino_model.xml"
_SEQ2SEQ = ("openvino_encoder_model.xml", "openvino_decoder_model.xml", "openvino_decoder_with_past_model.xml")
_LANGUAGE = "openvino_language_model.xml"  # a multimodal export's language model (a VLM's), beside its other parts
_TEXT_EMBEDDINGS = "openvino_text_embeddings_model.xml"  # a VLM export's token ids -> its language model's embeddings
_TOKENIZER = "openvino_tokenizer.xml"
_DETOKENIZER = "openvino_detokenizer.xml"
_PIPELINE = "model_index.json"  # a diffusers pipeline's, beside its parts' folders


@dataclass(frozen=True)
class Export:
    """What an export directory holds.

    ``models`` are its model IRs: ``openvino_model.xml``; or the encoder, the decoder (and the decoder with past
    of older exports); or a multimodal export's language model (``openvino_language_model.xml``, a VLM's); then any
    other ``openvino_<part>_model.xml`` (multimodal parts: vision and text embeddings...) or ``openvino_<part>.xml``
    (SpeechT5's postnet and vocoder), by name. ``config`` is
    ``config.json`` parsed (None where there is none).
    """

    path: Path
    models: tuple[Path, ...]
    tokenizer: Path | None
    detokenizer: Path | None
    config: Mapping[str, Any] | None


def find_export(path: str | os.PathLike[str]) -> Export:
    """The export in the directory ``path``.

    Raises:
        InputError: ``path`` is not a directory, holds no model IR named as optimum-intel names them (the message
            lists the ``.xml`` files it does hold), holds several models and none an export's own (multimodal parts
            without a language model, a diffusers pipeline's subfolders: the message lists them and how to give
            each), or its ``config.json`` is not a JSON object.
        LimitExceededError: ``config.json`` is larger than :data:`MAX_CONFIG_BYTES`.
    """
    folder = Path(path)
    if not folder.is_dir():
        what = "no such directory" if not folder.exists() else "not a directory"
        raise InputError(f"{folder}: {what}; expected an optimum-intel export directory", parameter="export")
    xmls = sorted(p.name for p in folder.glob("*.xml") if p.is_file())
    if _MODEL in xmls:
        names = [_MODEL]
    else:
        names = [n for n in _SEQ2SEQ if n in xmls]
        if names and _SEQ2SEQ[1] not in names:
            names = []  # an encoder alone is no seq2seq export
    if not names and _LANGUAGE in xmls:  # a VLM: the language model first, its vision and embedding parts after it
        names = [_LANGUAGE]
    if not names:
        _refuse_several(folder, xmls)
        held = ", ".join(xmls[:8]) or "none"
        if len(xmls) > 8:
            held += f" and {len(xmls) - 8} more"
        raise InputError(
            f"{folder}: not an optimum-intel export: it holds no {_MODEL} (nor {_SEQ2SEQ[0]} with {_SEQ2SEQ[1]}); "
            f"its .xml files: {held}",
            parameter="export",
        )
    parts = [n for n in xmls if _is_model(n) and n not in (*names, _MODEL)]
    tokenizers = folder
    if _TOKENIZER not in xmls and folder.name.startswith("text_encoder") and (folder.parent / _PIPELINE).is_file():
        # a diffusers pipeline keeps text_encoder's tokenizer in tokenizer/ beside it (text_encoder_2's in tokenizer_2/)
        tokenizers = folder.parent / f"tokenizer{folder.name.removeprefix('text_encoder')}"
    return Export(
        path=folder,
        models=tuple(folder / n for n in [*names, *parts]),
        tokenizer=tokenizers / _TOKENIZER if (tokenizers / _TOKENIZER).is_file() else None,
        detokenizer=tokenizers / _DETOKENIZER if (tokenizers / _DETOKENIZER).is_file() else None,
        config=_config(folder / "config.json"),
    )


def _refuse_several(folder: Path, xmls: list[str]) -> None:
    """:class:`InputError` for a folder that holds models but not one optimum-intel makes an export's own: parts
    (:func:`_is_model`) with no language model among them (SAM's, open_clip's), or a pipeline's models in subfolders (a
    diffusers export: ``unet/openvino_model.xml``, ``text_encoder/``...), each listed with how to give it; nothing
    where it holds neither."""
    parts = [n for n in xmls if _is_model(n)]
    nested = []
    try:
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        subfolders = []
    for sub in subfolders[:_MAX_SUBFOLDERS]:
        try:
            found = sorted(p.name for p in sub.glob("openvino_*model.xml") if p.is_file())
        except OSError:
            continue
        nested += [f"{sub.name}/{n}" for n in ([_MODEL] if _MODEL in found else found)]
    if not nested and len(parts) < 2:  # a part alone (an encoder without its decoder): listed among the .xml files
        return
    pipeline = " (a diffusers pipeline, as its model_index.json says)" if (folder / _PIPELINE).is_file() else ""
    models = parts + nested
    shown = ", ".join(models[:12]) + (f" and {len(models) - 12} more" if len(models) > 12 else "")
    how = ", ".join(str(folder / (m.split("/")[0] if m.endswith(f"/{_MODEL}") else m)) for m in models[:3])
    own = f" (a folder holding {_MODEL} is an export of its own)" if any("/" in m for m in models) else ""
    raise InputError(
        f"{folder}: holds {len(models)} model{'s' if len(models) > 1 else ''}{pipeline}, none of them the model of an "
        f"optimum-intel export "
        f"({_MODEL}, {_SEQ2SEQ[0]} with {_SEQ2SEQ[1]}, or a multimodal export's {_LANGUAGE}): {shown}; give each "
        f"by its path{own}: {how}{' ...' if len(models) > 3 else ''}",
        parameter="export",
    )


def _is_model(name: str) -> bool:
    """Whether the ``.xml`` file ``name`` is one of an export's models as optimum-intel names them: ``openvino_`` and
    a part (``openvino_<part>_model.xml``; SAM's ``openvino_vision_encoder.xml``, open_clip's
    ``openvino_model_text.xml``, SpeechT5's ``openvino_postnet.xml`` and ``openvino_vocoder.xml``), not its tokenizer
    or detokenizer."""
    return name.startswith("openvino_") and name.endswith(".xml") and not name.endswith("tokenizer.xml")


_MAX_SUBFOLDERS = 64
"""Subfolders of a folder that is no export looked into for the models of a pipeline, at most."""


def lone_export(model: Path) -> Export:
    """A model file outside any export (its folder holds no export's models, as an encoder copied alone, or several
    none of which is an export's own, as open_clip's text and vision models): an export of its own, with the tokenizer
    and detokenizer IRs beside it where there are (optimum-intel writes them beside the model that takes the text)
    and the ``config.json`` beside it where that is a JSON object (what it says of the model, its positions and
    image size, holds for the file as for the export it came from)."""
    try:
        config = _config(model.parent / "config.json")
    except (InputError, LimitExceededError):  # (not the model's config: the file is audited without one)
        config = None
    tokenizer, detokenizer = (model.parent / name for name in (_TOKENIZER, _DETOKENIZER))
    beside = model.name not in (_TOKENIZER, _DETOKENIZER)
    return Export(model.parent, (model,), tokenizer if beside and tokenizer.is_file() else None,
                  detokenizer if beside and detokenizer.is_file() else None, config)  # fmt: skip


def _config(path: Path) -> Mapping[str, Any] | None:
    if not path.is_file():
        return None
    with path.open("rb") as f:
        raw = f.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise LimitExceededError(f"{path}: larger than the limit of {MAX_CONFIG_BYTES} bytes for a config.json")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON: {exc}", parameter="export") from None
    except ValueError:  # Python's json refuses an integer of more than 4,300 digits in its own words
        raise InputError(
            f"{path}: holds an integer of more than 4300 digits, which no setting of a model takes", parameter="export"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object, not {type(data).__name__}", parameter="export")
    return data


_VISION_SECTIONS = (("vision_config",), ("encoder",), ("vlm_config", "vision_config"))
"""Where a composite config.json nests the config of the model that takes the images: a VLM's ``vision_config``; a
vision-encoder-decoder's (TrOCR's, Donut's, Nougat's, ViT-GPT2's) ``encoder``; a retriever built on a VLM (ColPali's)
``vlm_config.vision_config``."""


def _section(config: Mapping[str, Any] | None, path: tuple[str, ...]) -> Any:
    """The sub-config of ``config`` at ``path`` (None where there is none)."""
    section: Any = config
    for key in path:
        section = section.get(key) if isinstance(section, Mapping) else None
    return section


def image_size(export: Export) -> tuple[tuple[int, int], str] | None:
    """The height and width of the images the export's model takes, and what says so: ``config.json``'s
    ``image_size`` (an int, or height and width), else that of the sub-config of the model that takes the images
    (:data:`_VISION_SECTIONS`: a VLM's ``vision_config``, a vision-encoder-decoder's ``encoder``), else the processor's
    ``crop_size`` or ``size`` in ``preprocessor_config.json`` (an int, ``height`` and ``width``, or ``shortest_edge``);
    None where none says (a processor's config that cannot be read is none)."""
    try:
        processor = _config(export.path / "preprocessor_config.json")
    except (InputError, LimitExceededError, OSError):
        processor = None
    places = [
        ("config.json", "", export.config),
        *(("config.json", "".join(f"{key}." for key in path), _section(export.config, path))
          for path in _VISION_SECTIONS),
        ("preprocessor_config.json", "", processor),
    ]  # fmt: skip
    for file, where, section in places:
        if not isinstance(section, Mapping):
            continue
        for key in ("image_size",) if file == "config.json" else ("crop_size", "size"):
            size = _height_width(section.get(key))
            if size is not None:
                return size, f"{file} gives ({where}{key})"
    return None


AUDIO_FRAMES = 8
"""The frames an audio model's feature encoder makes of the waveform ovreduce makes where nothing sets its length: as
many as the token ids it makes for a text model, so that a pooling or an attention over frames reduces several."""


def audio_length(export: Export) -> tuple[int, str] | None:
    """The samples of a waveform from which the export's feature encoder (wav2vec2's, HuBERT's, WavLM's: strided 1-D
    convolutions) makes :data:`AUDIO_FRAMES` frames, and what says so: ``config.json``'s ``conv_kernel`` and
    ``conv_stride`` (a frame spans ``1 + sum((k - 1) * hop so far)`` samples, one every ``prod(strides)``; 400 and 320
    for every wav2vec2 checkpoint), with ``preprocessor_config.json``'s ``sampling_rate`` where it gives one; None where
    the config says neither."""
    config = export.config or {}
    kernels, strides = config.get("conv_kernel"), config.get("conv_stride")
    if not isinstance(kernels, list) or not isinstance(strides, list) or not 0 < len(kernels) == len(strides) <= 64:
        return None
    if not all(type(v) is int and 0 < v <= 1 << 14 for v in (*kernels, *strides)):
        return None
    span, hop = 1, 1
    for kernel, stride in zip(kernels, strides, strict=True):
        span += (kernel - 1) * hop
        hop *= stride
    samples = span + hop * (AUDIO_FRAMES - 1)
    if samples > 1 << 24:
        return None
    why = (f"{AUDIO_FRAMES} frames of its feature encoder (config.json's conv_kernel and conv_stride: a frame spans "
           f"{span} samples, one every {hop})")  # fmt: skip
    try:
        processor = _config(export.path / "preprocessor_config.json")
    except (InputError, LimitExceededError, OSError):
        processor = None
    rate = (processor or {}).get("sampling_rate")
    if type(rate) is int and rate > 0:
        why += f", {samples / rate * 1000:.0f} ms at the {rate} Hz of preprocessor_config.json's sampling_rate"
    return samples, why


def _height_width(value: Any) -> tuple[int, int] | None:
    """An image size as Hugging Face configs write it, as height and width; None for anything else."""
    if isinstance(value, Mapping):
        value = [value.get("height"), value.get("width")] if "height" in value else value.get("shortest_edge")
    if isinstance(value, list) and len(value) == 2:
        height, width = value
        return (height, width) if all(type(v) is int and 0 < v <= 1 << 14 for v in value) else None
    return (value, value) if type(value) is int and 0 < value <= 1 << 14 else None


def tokenize(export: Export, text: str) -> dict[str, npt.NDArray[Any]]:
    """``text`` through the export's tokenizer IR, compiled on CPU: its outputs by name (``input_ids``,
    ``attention_mask``, and ``token_type_ids`` where the tokenizer makes them), each of shape ``[1, tokens]``.

    Raises:
        InputError: the export has no tokenizer IR, the tokenizer takes more than one text (pairs), or ``text``
            is not valid Unicode (a lone surrogate).
        LimitExceededError: ``text`` is longer than :data:`MAX_TEXT_BYTES` in UTF-8 (refused before anything
            is read).
        BackendError: OpenVINO cannot read, compile or run the tokenizer; when its ops' extension is not loaded,
            the message names them and says how to install openvino-tokenizers for this OpenVINO.
    """
    if export.tokenizer is None:
        raise InputError(
            f"{export.path}: the export has no tokenizer IR ({_TOKENIZER}); optimum-cli writes one unless told "
            f"--disable-convert-tokenizer, and openvino_tokenizers.convert_tokenizer makes one",
            parameter="export",
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InputError(f"the text is not valid Unicode: {exc.reason} at character {exc.start}") from None
    if size > MAX_TEXT_BYTES:
        raise LimitExceededError(f"the text is {size} bytes, more than the limit of {MAX_TEXT_BYTES} to tokenize")
    path = export.tokenizer
    try:
        model = core().read_model(str(path))
    except Exception as exc:  # most often: openvino-tokenizers' extension is not loaded
        reason = read_failure(exc, _op_types(path), path)
        raise BackendError(f"{path}: OpenVINO could not read the tokenizer: {reason}") from None
    if len(model.inputs) != 1:
        raise InputError(f"{path}: the tokenizer takes {len(model.inputs)} texts (pairs); tokenize gives it one")
    try:
        compiled = core().compile_model(model, "CPU")
        request = compiled.create_infer_request()
        request.infer({0: openvino().Tensor(np.array([text]))})
        return {port.get_any_name(): np.array(request.get_tensor(port).data, copy=True) for port in compiled.outputs}
    except Exception as exc:  # a compile or inference failure of the tokenizer
        raise BackendError(f"{path}: OpenVINO could not run the tokenizer: {read_failure(exc)}") from None


class TextEmbeddings:
    """A multimodal export's text-embeddings model (``openvino_text_embeddings_model.xml``: token ids -> the
    ``inputs_embeds`` its language model takes), compiled on CPU in f32: what optimum-intel's runtime feeds the
    language model for a text's tokens. Called on ids ``[batch, tokens]``, it gives their embeddings; ``vocabulary``
    is how many ids its table holds (the rows of the embedding Gather, else ``config.json``'s ``vocab_size``)."""

    def __init__(self, path: Path, compiled: Any, vocabulary: int) -> None:
        self.path = path
        self.vocabulary = vocabulary
        self._compiled = compiled

    @property
    def source(self) -> str:
        return self.path.name

    def __call__(self, ids: npt.NDArray[Any]) -> npt.NDArray[Any]:
        try:
            request = self._compiled.create_infer_request()
            request.infer({0: np.ascontiguousarray(ids, dtype=np.int64)})
            return np.array(request.get_tensor(self._compiled.outputs[0]).data, copy=True)
        except Exception as exc:  # a failure of the embeddings model on ids in its vocabulary
            raise BackendError(
                f"{self.path}: OpenVINO could not run the text embeddings: {read_failure(exc)}"
            ) from None


def text_embeddings(export: Export) -> TextEmbeddings | None:
    """The export's text-embeddings model (a VLM's), read and compiled on CPU in f32; None where the export holds
    none, or one that takes other than one input of integer ids.

    Raises:
        BackendError: OpenVINO cannot read or compile it.
    """
    path = export.path / _TEXT_EMBEDDINGS
    if path not in export.models or not path.is_file():
        return None
    from ovreduce.backends.feeds import recipes

    try:
        model = core().read_model(str(path))
    except Exception as exc:
        raise BackendError(f"{path}: OpenVINO could not read the text embeddings model: {read_failure(exc)}") from None
    if len(model.inputs) != 1 or not model.inputs[0].get_element_type().is_integral():
        return None
    [made] = recipes(model)
    text = (export.config or {}).get("text_config")
    said = (text if isinstance(text, Mapping) else {}).get("vocab_size", (export.config or {}).get("vocab_size"))
    vocabulary = made.high if made.kind == "ids" and made.high else said if isinstance(said, int) and said > 0 else None
    if vocabulary is None:
        return None
    try:
        compiled = core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception as exc:
        raise BackendError(
            f"{path}: OpenVINO could not compile the text embeddings model: {read_failure(exc)}"
        ) from None
    return TextEmbeddings(path, compiled, vocabulary)


def _op_types(path: Path) -> set[tuple[str, str]]:
    """The ``(type, version)`` of the IR's layers, for a read failure's message; none when ovreduce cannot read
    it either."""
    from ovreduce.ir.parser import load_ir

    try:
        model = load_ir(path)
    except OvReduceError:
        return set()
    try:
        return model.op_types()
    finally:
        model.close()
