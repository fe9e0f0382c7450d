"""One function per command: turn the arguments into the library's, call it, render, return the exit status.

The library is imported inside each function, so that ``ovreduce check`` never pays for NumPy or OpenVINO.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ovreduce.cli.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, OUTPUT_FAILED, OutputError, UsageError
from ovreduce.cli.options import (
    existing_file,
    extension_names,
    load_extensions,
    max_elements,
    model_files,
    parse_named_files,
    parse_named_shapes,
)
from ovreduce.cli.paths import expand_paths
from ovreduce.cli.render.safe import printable
from ovreduce.cli.render.terminal import terminal_width
from ovreduce.errors import InputError
from ovreduce.processes import usable_cpus

if TYPE_CHECKING:
    from ovreduce.reports.check import CheckDocument

__all__ = ["audit", "check", "conform", "devices", "inspect", "run"]


def _emit(text: str | bytes) -> None:
    """Write to standard output: a document for machines (bytes) in UTF-8 whatever the locale's encoding, where the
    stream has bytes underneath (not a StringIO); text in the stream's encoding, what it lacks escaped. Where its
    reader has gone (``| head -1``), the rest is dropped and the command's exit status is still its verdict's."""
    buffer = getattr(sys.stdout, "buffer", None) if isinstance(text, bytes) else None
    try:
        if buffer is not None:
            sys.stdout.flush()
            buffer.write(text)
        else:
            sys.stdout.write(text.decode() if isinstance(text, bytes) else text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (what is still buffered goes nowhere)
    except OSError as exc:  # a full disk: the report is not there, which the exit status says
        raise OutputError(f"{OUTPUT_FAILED}: {exc.strerror or exc}") from None


def _json(doc: Any) -> bytes:
    from ovreduce.reports.common import dumps

    return dumps(doc)


def check(args: argparse.Namespace) -> int:
    """``ovreduce check``: 0 clean, 1 a finding of severity error, 2 a model could not be read."""
    from ovreduce.check import check_paths

    if args.verbose and args.format != "text":
        raise UsageError(f"-v with --format {args.format}: the {args.format} report lists the info findings always, so "
                         f"it has no effect; expected --format text, or no -v")  # fmt: skip
    paths = expand_paths(args.paths)
    if args.bin is not None and len(paths) != 1:
        raise UsageError(f"--bin names the weights of one model, but {len(paths)} models were given")
    if args.bin is not None:
        existing_file(args.bin)
    reshape = parse_named_shapes(args.reshape, "--reshape")
    extensions = extension_names(args.extension)
    # loaded before any model is read, whichever models will ask OpenVINO (all with its engine, else those that need
    # its inference): one it refuses is refused whatever the models, never as each model that needed it
    load_extensions(extensions)
    progress = None
    if len(paths) > 1 and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(total=len(paths), unit="model", file=sys.stderr, leave=False)
    # For the JUnit report: each model's own time, measured where it was checked, and the run's wall time
    seconds: list[float] = []
    start = time.perf_counter()

    def checked() -> None:
        if progress is not None:
            progress.update(1)

    try:
        report = check_paths(
            paths, bin_path=Path(args.bin) if args.bin else None, reshape=reshape, engine=args.engine,
            progress=checked, jobs=args.jobs if args.jobs is not None else usable_cpus(),
            extensions=extensions, seconds=seconds,
        )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    wall = time.perf_counter() - start
    shown = report
    if args.format != "sarif":  # (SARIF's uri percent-encodes the path's bytes itself: %FF)
        from dataclasses import replace

        from ovreduce.reports.common import path_text

        shown = replace(report, models=tuple(replace(m, path=path_text(m.path)) for m in report.models))
    _emit(_CHECK_RENDERERS[args.format](shown, args, seconds, wall))
    refusals = [f.message for m in report.models for f in m.findings if f.code == "openvino-read-failed"]
    _extension_hint("check", refusals + [note for m in report.models for note in m.notes])
    if report.unreadable:
        return EXIT_INPUT
    return EXIT_OK if report.ok else EXIT_FINDINGS


def _check_json(report: CheckDocument, args: argparse.Namespace, seconds: list[float], wall: float) -> bytes:
    return _json(report)


# The documents for machines (JSON, JUnit, SARIF) are bytes in UTF-8, whatever the locale's encoding: JUnit declares
# it, and a parser reads them as such; text is for the terminal, in its encoding.
def _check_junit(report: CheckDocument, args: argparse.Namespace, seconds: list[float], wall: float) -> bytes:
    from ovreduce.cli.render.junit import check_junit

    return check_junit(report, seconds=seconds, total=wall).encode("utf-8")


def _check_sarif(report: CheckDocument, args: argparse.Namespace, seconds: list[float], wall: float) -> bytes:
    from ovreduce.cli.render.sarif import check_sarif

    return check_sarif(report).encode("utf-8")


def _check_text(report: CheckDocument, args: argparse.Namespace, seconds: list[float], wall: float) -> str:
    from ovreduce.cli.render.check_text import check_text

    return check_text(report, verbose=args.verbose, width=terminal_width())


# ``check --format``: each renderer imported only when its format is asked for.
_CHECK_RENDERERS: dict[str, Callable[[CheckDocument, argparse.Namespace, list[float], float], str | bytes]] = {
    "json": _check_json,
    "junit": _check_junit,
    "sarif": _check_sarif,
    "text": _check_text,
}


def inspect(args: argparse.Namespace) -> int:
    """``ovreduce inspect``: 1 where a layer it shows has a finding of severity error, else 0 (as ``check``)."""
    from ovreduce.check.inspect import inspect_model
    from ovreduce.cli.layers import locate_layer
    from ovreduce.cli.render.text import inspect_text
    from ovreduce.ir.parser import load_ir

    if args.all and args.layer is not None:
        raise UsageError(f"--all with --layer {args.layer}: --layer shows one layer, --all lists every layer; "
                         f"expected one of them")  # fmt: skip
    reshape = parse_named_shapes(args.reshape, "--reshape")
    model = load_ir(*model_files(args.path, args.bin))
    try:
        shadowed = None
        if args.layer is not None:
            locate_layer(model, args.layer)
            shadowed = model.shadowed_note(args.layer)
        doc = inspect_model(model, layer=args.layer, all_layers=args.all, reshape=reshape)
    finally:
        model.close()
    if shadowed is not None:
        sys.stderr.write(f"ovreduce inspect: note: {shadowed}\n")
    _emit(
        _json(doc)
        if args.format == "json"
        else inspect_text(doc, detail=args.layer is not None, width=terminal_width())
    )
    errors = any(f.severity == "error" for layer in doc.layers for f in layer.findings)
    return EXIT_FINDINGS if errors else EXIT_OK


def run(args: argparse.Namespace) -> int:
    """``ovreduce run``: 0 when every backend ran and agrees with the reference, 1 otherwise."""
    from ovreduce.cli.layers import locate_layer
    from ovreduce.cli.render.text import run_text
    from ovreduce.ir.parser import load_ir
    from ovreduce.run import run_layer

    backends = args.backend or ["numpy", "openvino"]
    inputs = parse_named_files(args.input)
    shapes = parse_named_shapes(args.shape, "--shape")
    model = load_ir(*model_files(args.model, args.bin))
    try:
        if args.layer is None:
            return _no_layer(model)
        locate_layer(model, args.layer, reductions_only=True)
        report = run_layer(
            model, args.layer, inputs=inputs, shapes=shapes, seed=args.seed,
            backends=backends, device=args.device, precision=args.precision,
            atol=args.atol, rtol=args.rtol, max_elements=max_elements(),
        )  # fmt: skip
    finally:
        model.close()
    if args.save_outputs:
        _save_arrays(Path(args.save_outputs), report.outputs, "--save-outputs")
    if args.save_inputs:
        _save_arrays(Path(args.save_inputs), {str(i): a for i, a in enumerate(report.inputs)}, "--save-inputs")
    doc = report.document
    _emit(_json(doc) if args.format == "json" else run_text(doc, source=args.model, width=terminal_width()))
    return EXIT_OK if doc.ok else EXIT_FINDINGS


def _no_layer(model: Any) -> int:
    """``run`` without ``--layer``: the model's reductions (id, name, type) on standard error; exit 2."""
    from ovreduce.check.inspect import inspect_model
    from ovreduce.cli.render.text import table
    from ovreduce.cli.render.width import fit_lines
    from ovreduce.reports.common import layer_path

    views = [v for v in printable(inspect_model(model)).layers if v.reduction is not None]
    if not views:
        raise UsageError(f"--layer is required, but {model.source} has no reduction layer to run")
    rows = [[layer_path(v.body_path, v.layer_id), v.layer_name, v.type] for v in views]
    sys.stderr.write(
        f"ovreduce run: --layer ID_OR_NAME is required; the model's {len(rows)} "
        f"reduction{'s' if len(rows) != 1 else ''}:\n"
        + fit_lines(table(rows, ["id", "name", "type"], width=terminal_width(sys.stderr)), terminal_width(sys.stderr))
        + "\n"
    )
    return EXIT_INPUT


def output_folder(folder: Path, option: str, expected: str) -> None:
    """:class:`UsageError` naming ``option`` where ``folder`` cannot be a folder: it, or the nearest of its parents
    that is there, is not one (a file, a device). ``expected`` says what the option takes."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                what = "it" if place == folder else str(place)
                raise UsageError(f"{option} {folder}: {what} is not a folder; {expected}")
            return


def _save_arrays(folder: Path, arrays: dict[str, Any], option: str) -> None:
    """Each array as ``folder/<name>.npy`` (``:`` in a name becomes ``-``), written beside it and renamed over it:
    a link there is replaced, the file it points to left alone; :class:`UsageError` naming ``option`` when the
    folder cannot be written. An array of a type NumPy's .npy header cannot name (ml_dtypes' bf16, f8, f4) is
    written as its raw bytes, which ``--input`` reads back as the port's type."""
    import tempfile

    import numpy as np

    from ovreduce.tensors import npy_writable

    expected = "expected DIR, a folder ovreduce can create or write .npy files in"
    output_folder(folder, option, expected)
    mask = os.umask(0o22)
    os.umask(mask)
    mode = 0o666 & ~mask
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, array in arrays.items():
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".ovreduce-", suffix=".npy", delete=False) as handle:
                try:
                    np.save(handle, npy_writable(array))
                    os.chmod(handle.fileno(), mode)  # a temporary file is its owner's alone: the mode open() gives
                except BaseException:
                    Path(handle.name).unlink()
                    raise
            os.replace(handle.name, folder / (name.replace(":", "-") + ".npy"))
    except OSError as exc:
        # (a folder that takes no file, as /proc's, says the file it was asked for does not exist)
        why = "it takes no new file" if exc.errno == errno.ENOENT and folder.is_dir() else exc.strerror or str(exc)
        raise UsageError(f"{option} {folder}: cannot write there ({why}); {expected}") from None


def audit(args: argparse.Namespace) -> int:
    """``ovreduce audit``: 0 when every reduction of the whole model is within tolerance (and, with
    ``--fail-on-drift``, within that drift of an f32 run), 1 otherwise."""
    import math

    from ovreduce.audit import audit_model, device_refuses
    from ovreduce.cli.render.text import audit_text
    from ovreduce.exports import audio_length, image_size
    from ovreduce.ir.parser import load_ir

    limit = args.fail_on_drift
    if limit is not None and not (math.isfinite(limit) and limit >= 0):
        raise UsageError("--fail-on-drift must be a finite number >= 0")
    refused = device_refuses(args.device or "CPU", args.target)
    if refused is not None:
        expected = refused.replace("expected f16", "expected --target f16")
        raise UsageError(f"--target {args.target} with --device {args.device}: {expected}")
    inputs = parse_named_files(args.input)
    shapes = parse_named_shapes(args.shape, "--shape")
    extensions = extension_names(args.extension)
    try:
        export = _export_of(args.model, args.prompt is not None)
    except UsageError:  # no export, so no tokenizer: where no input of the model takes tokens, that is the answer
        if args.prompt is not None:
            lone = load_ir(*model_files(args.model, args.bin))
            try:
                _refuse_without_tokens(lone)
            finally:
                lone.close()
        raise
    model = load_ir(*model_files(str(export.models[0]) if Path(args.model).is_dir() else args.model, args.bin))
    origins: dict[str, str] = {}
    notes = []
    if Path(args.model).is_dir() and len(export.models) > 1:
        notes.append(f"the export also holds {', '.join(m.name for m in export.models[1:])}: audit each by its path")
    bar = None
    if sys.stderr.isatty() and args.format == "text":
        from tqdm import tqdm

        bar = tqdm(total=1, unit="step", file=sys.stderr, leave=False, desc="audit")

    def progress(stage: str, done: int, total: int) -> None:  # one bar through reading, compiles, inference, checks
        if bar is None:
            return
        bar.total = total
        bar.set_description(stage, refresh=False)
        if stage.startswith("checking"):  # many quick steps: tqdm throttles the redraws
            bar.update(done - bar.n)
        else:  # a long step starts: show it now
            bar.n = done
            bar.refresh()

    try:
        load_extensions(extensions)  # the model's ops, and the tokenizer's for a prompt
        embed = _embedder(model, export, inputs)
        if args.prompt is not None:
            inputs = {**_prompt_inputs(model, export, args.prompt, inputs, origins, embed), **inputs}
        doc = audit_model(
            model, inputs=inputs, shapes=shapes, seed=args.seed, device=args.device, precision=args.precision,
            atol=args.atol, rtol=args.rtol, progress=None if bar is None else progress, fail_on_drift=limit,
            max_elements=max_elements(), timeout=args.timeout, steps=args.steps, origins=origins, target=args.target,
            positions=_positions(export.config, model), encoder=_encoder_length(export.config),
            image_size=image_size(export), audio_length=audio_length(export), embed=embed,
        )  # fmt: skip
    except (UsageError, InputError) as exc:
        elsewhere = _inputs_elsewhere(model, export.models[1:], {*inputs, *shapes}) if notes else {}
        if elsewhere:  # a name of another model's input: that model is audited by its own path
            name, other = next(iter(elsewhere.items()))
            exc.message = (f"{exc.message}; {name!r} is an input of {other.name} in the export, not of "
                           f"{export.models[0].name}, the model the export's folder audits: audit {other}")  # fmt: skip
        elif notes and (args.steps or args.prompt is not None):  # (a seq2seq export's: its decoder takes them)
            exc.message = f"{exc.message}; {export.models[0].name} is the model audited: {notes[0]}"
        raise
    finally:
        model.close()
        if bar is not None:
            bar.close()
    if notes:
        doc = replace(doc, notes=(*doc.notes, *notes))
    _emit(_json(doc) if args.format == "json" else audit_text(doc, width=terminal_width()))
    _extension_hint("audit", [doc.error])
    return EXIT_OK if doc.ok else EXIT_FINDINGS


def _input_names(model: Any) -> set[str]:
    """The names ``model``'s inputs go by: each Parameter's, its tensors', and its index."""
    params = [layer for layer in model.layers if layer.type == "Parameter"]
    return {str(i) for i in range(len(params))} | {
        name for layer in params for name in (layer.name, *(n for port in layer.outputs for n in port.names))
    }


def _inputs_elsewhere(model: Any, others: Sequence[Path], names: set[str]) -> dict[str, Path]:
    """Of ``names`` that no input of ``model`` goes by, each that an input of one of ``others`` (the export's other
    models) goes by, and the first such model."""
    from ovreduce.errors import OvReduceError
    from ovreduce.ir.parser import load_ir

    unknown = {name for name in names if not name.isdigit()} - _input_names(model)
    found: dict[str, Path] = {}
    for path in others:
        if not unknown - found.keys():
            break
        try:
            other = load_ir(*model_files(str(path), None))
        except OvReduceError:
            continue
        try:
            found.update({name: path for name in sorted(unknown & _input_names(other)) if name not in found})
        finally:
            other.close()
    return found


def _export_of(target: str, needed: bool) -> Any:
    """The optimum-intel export ``target`` is (a directory) or lies in (a model file beside its tokenizer); a
    model file outside any export gets an export of its own, with the tokenizer beside it where there is one (a
    :class:`UsageError` where ``needed`` says it must have one and there is none)."""
    from ovreduce.errors import OvReduceError
    from ovreduce.exports import find_export, lone_export

    path = Path(target)
    if path.is_dir():
        expand_paths([target])  # a folder with no .xml at all names nothing: the usage error it is for every command
        return find_export(path)
    existing_file(target)
    try:
        return find_export(path.parent)
    except OvReduceError:
        lone = lone_export(path)  # (its tokenizer where one is beside it: open_clip's text model's)
        if needed and lone.tokenizer is None:
            raise UsageError(
                f"--prompt needs the export's tokenizer: {target} is not in an optimum-intel export directory "
                f"(with openvino_tokenizer.xml); give the export directory"
            ) from None
        return lone


_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_target_positions", "max_sequence_length", "seq_length",
                 "max_seq_len")  # fmt: skip
"""Where a config.json says how many positions the model takes (GPT-2's ``n_positions``, ChatGLM's ``seq_length``, a
seq2seq decoder's ``max_target_positions``: Whisper's, whose ``max_source_positions`` are its encoder's frames; MPT's
and DBRX's ``max_seq_len``, the keys optimum-intel's export precomputes their ALiBi bias or rotary table for)."""


_FROM_PADDING = {
    "roberta": 1, "xlm-roberta": 1, "camembert": 1, "xlm-roberta-xl": 1, "roberta-prelayernorm": 1,
    "data2vec-text": 1, "xmod": 1, "ibert": 1, "longformer": 1, "esm": 1, "layoutlmv3": 1, "luke": 1, "lilt": 0,
    "markuplm": 0, "bridgetower_text_model": 1, "altclip_text_model": 1, "clap_text_model": 1,
}  # fmt: skip
"""The model types whose embeddings number the positions of n tokens ``pad_token_id + 1 .. pad_token_id + n``
(transformers' ``create_position_ids_from_input_ids``, RoBERTa's) in a table of ``max_position_embeddings`` rows,
each with the ``pad_token_id`` its config takes where ``config.json`` leaves it out: they hold
``max_position_embeddings - pad_token_id - 1`` tokens."""

_SINUSOIDS_FROM_PADDING = frozenset({"m2m_100", "nllb-moe", "speech_to_text"})
"""The model types numbering positions from ``pad_token_id + 1`` as :data:`_FROM_PADDING` do, in a table of sinusoids
two rows longer than the positions config.json gives (M2M100's, traced at that length into the export): they hold
``positions + 1 - pad_token_id`` tokens (their config's ``pad_token_id`` is 1 where config.json leaves it out)."""


_PART_KEYS = {
    "speecht5": ("max_text_positions", "max_speech_positions"),
    "led": ("max_encoder_position_embeddings", "max_decoder_position_embeddings"),
}
"""The model types whose config.json gives the positions of the encoder and of the decoder under keys of their own
(encoder's, decoder's): SpeechT5's encoder takes text ids, ``max_text_positions`` of them (a table of sinusoids
sliced to the sequence), its speech decoder ``max_speech_positions`` frames (``inputs_embeds``); LED's encoder
``max_encoder_position_embeddings`` tokens, its decoder ``max_decoder_position_embeddings``."""


_COMPOSITES = frozenset({"vision-encoder-decoder", "encoder-decoder", "speech-encoder-decoder"})
"""The model types whose config.json nests the config of each part under ``encoder`` and ``decoder`` (TrOCR's, Donut's
and ViT-GPT2's decoder gives its positions as ``decoder.max_position_embeddings``)."""


def _positions(config: Any, model: Any = None) -> tuple[int, str] | None:
    """How many positions ``config`` (``config.json``) gives ``model`` (an export's model), and the key that says so:
    a top-level key of :data:`_CONTEXT_KEYS` (first, for a model type of :data:`_PART_KEYS`, its key for the encoder,
    or for the decoder where ``model`` takes ``encoder_hidden_states``), else one of its ``text_config`` (a VLM's
    language model), else, of a composite (:data:`_COMPOSITES`), one of the sub-config of the part ``model`` is (its
    ``decoder`` or ``encoder``); of a model numbering its positions from its padding id (:data:`_FROM_PADDING`,
    :data:`_SINUSOIDS_FROM_PADDING`), the tokens its table holds."""
    decoder = model is not None and any(
        "encoder_hidden_states" in (layer.name, *(n for port in layer.outputs for n in port.names))
        for layer in model.layers if layer.type == "Parameter"
    )  # fmt: skip
    part_of = "decoder" if decoder else "encoder"  # (a composite's sub-config of the model: TrOCR's decoder)
    composite = (config or {}).get("model_type") in _COMPOSITES
    sections = [("", config), ("text_config.", (config or {}).get("text_config"))]
    sections += [(f"{part_of}.", (config or {}).get(part_of))] if composite else []
    for where, section in sections:
        if isinstance(section, dict):
            part = _PART_KEYS.get(section.get("model_type"))  # type: ignore[arg-type]
            keys = _CONTEXT_KEYS if part is None else (part[decoder], *_CONTEXT_KEYS)
            key = next((k for k in keys if type(section.get(k)) is int and section[k] > 0), None)
            if key is not None:
                return _from_padding(section, section[key], f"config.json: {where}{key}")
    return None


def _from_padding(section: dict[str, Any], count: int, where: str) -> tuple[int, str]:
    """``count`` positions that ``where`` gives, as tokens: fewer where the model type of ``section`` numbers its
    positions from its padding id (transformers' ``create_position_ids_from_input_ids``: ``pad_token_id + 1`` for the
    first token), so that a table of ``count`` rows holds ``count - pad_token_id - 1`` tokens; MPNet numbers them from
    2 whatever its ``pad_token_id``. A position embedding other than an absolute table (ESM's rotary, a relative
    one) takes the positions as counted."""
    kind = section.get("model_type")
    if section.get("position_embedding_type", "absolute") != "absolute" or not isinstance(kind, str):
        return count, where
    pad = section.get("pad_token_id")
    if kind == "mpnet":
        first, rows = 2, count
    elif kind in _FROM_PADDING or kind in _SINUSOIDS_FROM_PADDING:
        pad = pad if type(pad) is int and pad >= 0 else _FROM_PADDING.get(kind, 1)
        first, rows = pad + 1, count + 2 if kind in _SINUSOIDS_FROM_PADDING else count
    else:
        return count, where
    named = "" if kind == "mpnet" else "pad_token_id + 1, "
    table = f"{count} + 2" if rows != count else f"{count}"
    return (
        rows - first,
        f"{where} {count}: {kind} numbers its positions from {named}{first}, in a table of {table} rows",
    )


def _encoder_length(config: Any) -> tuple[int, str] | None:
    """How long the encoder output that the export's decoder reads always is, and what says so: Whisper's encoder
    gives ``max_source_positions`` frames (``config.json``) whatever the audio (30 seconds, padded); another
    encoder's output is as long as its text, which no config fixes."""
    if isinstance(config, dict) and config.get("model_type") == "whisper":
        frames = config.get("max_source_positions")
        if type(frames) is int and frames > 0:
            return frames, "config.json: max_source_positions"
    return None


_TOKENIZER_GIVES = ("input_ids", "attention_mask", "token_type_ids")
"""The model inputs a tokenizer IR gives (openvino-tokenizers' outputs)."""


def _refuse_without_tokens(model: Any) -> set[str]:
    """The names of ``model``'s inputs (each Parameter's and its tensors'); a :class:`UsageError` for ``--prompt``
    where none of them is one a tokenizer gives (:data:`_TOKENIZER_GIVES`) nor token embeddings (an image or audio
    model's ``pixel_values``, ``input_values``): no tokenizer would give it anything."""
    params = [layer for layer in model.layers if layer.type == "Parameter"]
    names = {name for layer in params for name in (layer.name, *(n for port in layer.outputs for n in port.names))}
    if not names & {*_TOKENIZER_GIVES, "inputs_embeds"}:
        labels = [next((n for port in layer.outputs for n in port.names), layer.name) for layer in params]
        raise UsageError(
            f"--prompt: {model.source} takes no token ids (its inputs: {', '.join(labels) or 'none'}), and a "
            f"prompt gives a model {', '.join(_TOKENIZER_GIVES[:-1])} or {_TOKENIZER_GIVES[-1]}; audit it without "
            f"--prompt"
        )
    return names


def _embedder(model: Any, export: Any, given: dict[str, Any]) -> Any:
    """The export's text-embeddings model, where ``model`` takes token embeddings (``inputs_embeds``) and no token
    ids, and ``--input`` does not give them (a VLM's language model): what makes them of token ids, as the export's
    runtime does; None otherwise."""
    from ovreduce.exports import text_embeddings

    params = [layer for layer in model.layers if layer.type == "Parameter"]
    names = {name for layer in params for name in (layer.name, *(n for port in layer.outputs for n in port.names))}
    if "inputs_embeds" not in names or "input_ids" in names or "inputs_embeds" in given:
        return None
    return text_embeddings(export)


def _prompt_inputs(
    model: Any, export: Any, text: str, given: dict[str, Any], origins: dict[str, str], embed: Any = None
) -> dict[str, Any]:
    """The model inputs ``text`` gives through the export's tokenizer (those the model has and ``--input`` does
    not give), and how each was made, in ``origins``; a model fed token embeddings gets ``embed``'s of the prompt's
    ids (the export's text-embeddings model), where there is one."""
    from ovreduce.exports import tokenize

    params = [layer for layer in model.layers if layer.type == "Parameter"]
    label = (next((n for port in params[0].outputs for n in port.names), params[0].name) if len(params) == 1
             else None)  # fmt: skip
    kind = None if label is None or params[0].element_type is None else params[0].element_type.name
    if label is not None and label not in given and kind == "string":  # a tokenizer IR: its text is the prompt
        import numpy as np

        origins[label] = "the prompt's text"
        return {label: np.array([text])}
    if (label is not None and label not in given and kind in ("i32", "i64")
            and any(layer.type == "VocabDecoder" for layer in model.layers)):  # fmt: skip
        # a detokenizer IR: its one input is token ids, by position (openvino-tokenizers leaves it unnamed)
        ids = tokenize(export, text).get("input_ids")
        if ids is not None:
            origins[label] = f"the prompt's token ids, {int(ids.shape[-1])} through {export.tokenizer.name}"
            return {label: ids}
    names = _refuse_without_tokens(model)  # before the tokenizer: none would help a model that takes no text
    tokens = tokenize(export, text)
    embedded = "input_ids" in tokens and "input_ids" not in names and "inputs_embeds" in names
    if embedded and embed is not None and "inputs_embeds" not in given:
        import numpy as np

        tokens = {**tokens, "inputs_embeds": np.asarray(embed(tokens["input_ids"]))}
    elif embedded and "inputs_embeds" not in given:
        parts = [m.name for m in export.models if "embeddings" in m.name]
        where = f" ({', '.join(parts)} in the export computes them)" if parts else ""
        raise UsageError(
            f"--prompt: {model.source} takes the prompt's token embeddings (inputs_embeds), not the token ids its "
            f"tokenizer gives{where}, as a VLM's language model does: the prompt would reach it as a mask alone; "
            f"audit it without --prompt, or give inputs_embeds with --input"
        )
    chosen = {name: array for name, array in tokens.items() if name in names and name not in given}
    if not chosen:
        raise UsageError(
            f"--prompt: the tokenizer gives {', '.join(sorted(tokens)) or 'nothing'}, none of them an input of "
            f"the model ({', '.join(sorted(names)) or 'none'})"
        )
    count = int((tokens["input_ids"] if "input_ids" in tokens else next(iter(chosen.values()))).shape[-1])
    positions = _positions(export.config, model)
    if positions is not None and count > positions[0]:  # positions the model was not made for (memory: their square)
        raise UsageError(f"--prompt: the prompt is {count} tokens, more than the {positions[0]} positions the model "
                         f"takes ({positions[1]}); give a shorter prompt")  # fmt: skip
    ranks = {name: layer.shape.rank for layer in model.layers if layer.type == "Parameter" and layer.shape is not None
             for name in (layer.name, *(n for port in layer.outputs for n in port.names))}  # fmt: skip
    for name in chosen:
        through = f" and {embed.source}" if name == "inputs_embeds" and embed is not None else ""
        origins[name] = f"the prompt, {count} tokens through {export.tokenizer.name}{through}"
        if name in _TOKENIZER_GIVES and ranks.get(name) == 3 and chosen[name].ndim == 2:
            # a multiple-choice head's [batch, choices, tokens]: the prompt is its one choice
            chosen[name] = chosen[name][:, None, :]
            origins[name] += ", as the one choice of the model's [batch, choices, tokens]"
    return chosen


def conform(args: argparse.Namespace) -> int:
    """``ovreduce conform``: 0 when every mean/reduce node conforms, 1 otherwise."""
    from ovreduce.cli.render.text import conform_text
    from ovreduce.conform import conform_model
    from ovreduce.errors import InputError

    existing_file(args.model)
    inputs = parse_named_files(args.input)
    shapes = parse_named_shapes(args.shape, "--shape")
    expected = "expected DIR, a folder ovreduce can create or write the converted IR in"
    if args.save_ir:  # before the conversion, as --save-outputs's folder is before the run
        output_folder(Path(args.save_ir), "--save-ir", expected)
    load_extensions(extension_names(args.extension))
    try:
        doc = conform_model(
            args.model, inputs=inputs, seed=args.seed, device=args.device, precision=args.precision,
            save_ir=args.save_ir, atol=args.atol, rtol=args.rtol, shapes=shapes, max_elements=max_elements(),
            timeout=args.timeout,
        )  # fmt: skip
    except InputError as exc:  # the folder could not take the IR: the option's, as --save-outputs's is
        if exc.parameter != "save_ir":
            raise
        why = str(exc.args[0]).removeprefix(f"cannot save the converted IR in {Path(args.save_ir)}: ")
        raise UsageError(f"--save-ir {args.save_ir}: cannot write there ({why}); {expected}") from None
    _emit(_json(doc) if args.format == "json" else conform_text(doc, width=terminal_width()))
    _extension_hint("conform", [doc.error])
    return EXIT_OK if doc.ok else EXIT_FINDINGS


def _extension_hint(command: str, messages: Sequence[str | None]) -> None:
    """Where OpenVINO refused a model for ops no loaded extension provides, say on standard error how to load one
    (the library's message says what is missing, never which option gives it)."""
    texts = [m for m in messages if m]
    if not texts:
        return
    from ovreduce._openvino import LOAD_EXTENSION

    if any(LOAD_EXTENSION in text for text in texts):
        sys.stderr.write(
            f"ovreduce {command}: hint: load the extension with --extension PATH_OR_MODULE (its library, or a "
            f"Python module that provides one)\n"
        )


def devices(args: argparse.Namespace) -> int:
    """``ovreduce devices``: the OpenVINO devices; always 0."""
    from ovreduce.backends.openvino import device_info
    from ovreduce.cli.render.text import devices_text

    doc = device_info()
    _emit(_json(doc) if args.format == "json" else devices_text(doc, width=terminal_width()))
    return EXIT_OK
