"""Lazy access to the OpenVINO runtime, shared by every module that needs it, and the one place that owns
OpenVINO extensions.

Importing OpenVINO costs about half a second, so nothing imports it until it is used: ``ovreduce check``
without the OpenVINO engine never does.

**Extensions.** Ops outside OpenVINO's opsets (an IR layer of ``version="extension"``) come from extension
libraries, which must be added to the ``Core`` before it reads a model that has them. :func:`core` makes the
process's one ``Core`` and, when the ``openvino_tokenizers`` package is installed, adds its library at once:
the tokenizer and detokenizer IRs of every optimum-intel export need it. The library is the one
``import openvino_tokenizers`` finds (its ``_ext_path``, beside the package or named by
``OV_TOKENIZER_PREBUILD_EXTENSION_PATH``); that import also makes every ``Core`` created after it in the process
add the library (the package patches ``openvino.Core``), which changes nothing here. :func:`load_extensions`
adds the extensions a user names: library files, or Python modules that give their library's path the same
way. Adding is idempotent (by the library's real path), and nothing is loaded before OpenVINO is used.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

from ovreduce.errors import BackendError, InputError, MemoryLimitError

__all__ = [
    "TOKENIZER_OPS",
    "Extension",
    "ExtensionSource",
    "bodies",
    "clean_message",
    "core",
    "find_extension",
    "load_extensions",
    "loaded_extensions",
    "openvino",
    "opset_types",
    "partial_shape",
    "read_failure",
    "read_ir",
    "read_ir_file",
    "read_ir_model",
    "tokenizers_status",
]

# what OpenVINO prefixes its messages with: source locations, and the words of an asynchronous request's wait
_NOISE = re.compile(r"^(Caught exception:\s*)?(Exception from \S+:\d+:|Check '.*' failed at \S+:\d+:)\s*$")

TOKENIZERS_MODULE = "openvino_tokenizers"
# The op types openvino-tokenizers' library registers (OPENVINO_CREATE_EXTENSIONS in its src/ov_extension.cpp,
# release 2026.4; every name is in the installed libopenvino_tokenizers.so): known here so that a model that
# needs them is told where they come from even where the package is not installed.
TOKENIZER_OPS = frozenset({
    "BPETokenizer", "ByteFallback", "BytesToChars", "CaseFold", "CharsMapNormalization", "CharsToBytes",
    "CombineSegments", "ContribStringJoin", "ContribStringSplit", "EqualStr", "FuzeRagged", "NormalizeUnicode",
    "NumericToString", "RaggedTensorPack", "RaggedToDense", "RaggedToRagged", "RaggedToSparse",
    "RegexNormalization", "RegexSplit", "SentencepieceDetokenizer", "SentencepieceStreamDetokenizer",
    "SentencepieceTokenizer", "SpecialTokensSplit", "StringTensorPack", "StringTensorUnpack",
    "StringToHashBucket", "TrieTokenizer", "Truncate", "UTF8Validate", "UnigramTokenizer", "VocabDecoder",
    "VocabEncoder", "WordpieceTokenizer",
})  # fmt: skip

_LIBRARY_NAME = re.compile(r"\.(so(\.\d+)*|dll|dylib)$", re.IGNORECASE)
_STANDARD_OPSET = re.compile(r"opset\d+")
# OpenVINO's IR reader on a layer whose version is no opset it knows and no extension provides
_UNSUPPORTED_OPSET = re.compile(r"Cannot create (\S+) layer .*? from unsupported opset: (\S+)")
_EXPECTED = (
    "expected an OpenVINO extension library (a .so, .dll or .dylib file) or the name of a Python module that "
    "provides one, such as openvino_tokenizers"
)
LOAD_EXTENSION = "load the OpenVINO extension library that provides"
"""How :func:`read_failure` words its advice for ops no known package provides (front ends may add how)."""


def openvino() -> Any:
    """The ``openvino`` module; :class:`BackendError` with the reason when it cannot be imported."""
    try:
        import openvino as ov
    except ImportError as exc:  # pragma: no cover - openvino is a core dependency
        raise BackendError(f"the OpenVINO runtime cannot be imported: {exc}") from None
    return ov


@dataclass(frozen=True)
class ExtensionSource:
    """An extension as it was named, found but not loaded: a library file (``library``, its absolute path), or
    a Python module (``library`` None: the module is asked for its library when it is loaded)."""

    name: str
    library: str | None


@dataclass(frozen=True)
class Extension:
    """An extension library added to :func:`core`: as it was named, and the library OpenVINO was given."""

    name: str
    library: str


class _Extensions:
    """The process's ``Core`` and what was added to it (guarded by one lock: jobs run in threads too)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.core: Any = None
        self.loaded: dict[str, Extension] = {}  # by the library's real path (or its name, when it has none)
        self.tokenizers: str | None = None  # why openvino-tokenizers is not loaded (None: it is)


_STATE = _Extensions()


def core() -> Any:
    """One shared ``openvino.Core`` per process (it is thread-safe and expensive to create), with
    openvino-tokenizers' extension added when that package is installed (see the module's docstring)."""
    made = _STATE.core
    if made is not None:
        return made
    with _STATE.lock:
        if _STATE.core is None:
            made = openvino().Core()
            _STATE.tokenizers = _add_tokenizers(made)
            _STATE.core = made
        return _STATE.core


def _add_tokenizers(new_core: Any) -> str | None:
    """Add openvino-tokenizers' library to ``new_core``; why not, when it cannot be."""
    try:
        if importlib.util.find_spec(TOKENIZERS_MODULE) is None:
            return "openvino-tokenizers is not installed"
    except (ImportError, ValueError):
        return "openvino-tokenizers is not installed"
    try:
        library = _module_library(TOKENIZERS_MODULE)
        new_core.add_extension(library)
    except InputError as exc:
        return exc.message
    except Exception as exc:  # OpenVINO refusing the library: built for another OpenVINO
        return (
            f"openvino-tokenizers {_version('openvino-tokenizers')} is installed, but OpenVINO "
            f"{_version('openvino')} refused its extension: {clean_message(exc)}"
        )
    _STATE.loaded[_key(library)] = Extension(TOKENIZERS_MODULE, library)
    return None


_OP_REGISTERED = re.compile(rb"^_OPENVINO_OP_REG\((\w+),", re.MULTILINE)
_OPSET_TABLE = re.compile(r"(opset\d+)_tbl\.hpp")


@functools.cache
def opset_types() -> dict[str, dict[str, str]]:
    """The op types each opset of the installed OpenVINO holds, by their names in lower case (its IR reader finds a
    type in any case): ``{"opset1": {"abs": "Abs", ...}, ...}``, read from the opset tables its package ships
    (``include/openvino/opsets/opsetN_tbl.hpp``) without importing it. Empty where they are not found."""
    spec = importlib.util.find_spec("openvino")
    tables: dict[str, dict[str, str]] = {}
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        folder = os.path.join(root, "include", "openvino", "opsets")
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            found = _OPSET_TABLE.fullmatch(name)
            if found is not None:
                with open(os.path.join(folder, name), "rb") as table:
                    types = _OP_REGISTERED.findall(table.read())
                tables[found[1]] = {t.decode().lower(): t.decode() for t in types}
        break
    return tables


def tokenizers_status() -> str | None:
    """None when openvino-tokenizers' extension is in :func:`core`; otherwise why it is not."""
    core()
    return _STATE.tokenizers


def loaded_extensions() -> tuple[Extension, ...]:
    """The extensions added to :func:`core` so far, in the order they were added (none before OpenVINO is
    used)."""
    with _STATE.lock:
        return tuple(_STATE.loaded.values())


def find_extension(name: str) -> ExtensionSource:
    """Where the extension ``name`` is: a library file (a path), or a Python module (a dotted name that is no
    file) whose library is asked for when it is loaded. Neither OpenVINO nor the module is imported.

    Raises:
        InputError: no such file (or a folder), and no installed Python module of that name.
    """
    if not name.strip():
        raise InputError(f"an empty extension name; {_EXPECTED}", parameter="extensions")
    path = os.path.expanduser(name)
    if os.path.isfile(path):
        return ExtensionSource(name, os.path.abspath(path))
    if os.path.exists(path):
        raise InputError(f"{name}: not a file; {_EXPECTED}", parameter="extensions")
    is_module = not _LIBRARY_NAME.search(name) and all(part.isidentifier() for part in name.split("."))
    if not is_module:
        raise InputError(f"{name}: no such file; {_EXPECTED}", parameter="extensions")
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that is not there
        found = False
    if not found:
        install = f" (install it: {_tokenizers_pip()})" if name == TOKENIZERS_MODULE else ""
        raise InputError(
            f"{name}: no such file, and no Python module of that name is installed{install}; {_EXPECTED}",
            parameter="extensions",
        )
    return ExtensionSource(name, None)


def load_extensions(names: Iterable[str]) -> tuple[Extension, ...]:
    """Add the named extensions to :func:`core` (importing OpenVINO), each once: a name already added, or a
    library already added under another name, is not added again. Every name is found before any is added.

    Args:
        names: library files (``.so``, ``.dll``, ``.dylib``) or names of Python modules that give their
            library's path as ``_ext_path`` (``openvino_tokenizers``).

    Returns:
        The extensions, one for each name, in order.

    Raises:
        InputError: a name that is not there (see :func:`find_extension`), a module that cannot be imported or
            gives no library, or a library OpenVINO refuses (built for another OpenVINO, not an extension).
    """
    sources = [find_extension(name) for name in names]
    if not sources:
        return ()
    target = core()
    out = []
    with _STATE.lock:
        for source in sources:
            library = source.library if source.library is not None else _module_library(source.name)
            key = _key(library)
            known = _STATE.loaded.get(key)
            if known is None:
                try:
                    target.add_extension(library)
                except Exception as exc:  # not a library, a missing dependency, another OpenVINO's build
                    raise InputError(
                        f"{source.name}: OpenVINO {_version('openvino')} could not load it as an extension: "
                        f"{clean_message(exc)}; expected an extension library built for this OpenVINO",
                        parameter="extensions",
                    ) from None
                known = _STATE.loaded[key] = Extension(source.name, library)
            out.append(known)
    return tuple(out)


def _module_library(name: str) -> str:
    """The library path the Python module ``name`` gives (``_ext_path``, openvino-tokenizers' attribute)."""
    try:
        module = importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # openvino_tokenizers exits on a platform it does not support
        raise InputError(
            f"{name}: the Python module cannot be imported: {type(exc).__name__}: {exc}", parameter="extensions"
        ) from None
    library = getattr(module, "_ext_path", None)
    if library is None:
        raise InputError(
            f"{name}: the Python module names no OpenVINO extension library (expected its path as "
            f"{name}._ext_path, as openvino_tokenizers gives it); name the library file instead",
            parameter="extensions",
        )
    return str(library)  # a pathlib.Path in openvino_tokenizers; Core.add_extension wants a str


def _key(library: str) -> str:
    return os.path.realpath(library) if os.path.exists(library) else library


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _tokenizers_pip() -> str:
    """The pip command that installs the openvino-tokenizers release matching the installed OpenVINO."""
    release = ".".join(_version("openvino").split(".")[:3])
    return f'pip install "openvino-tokenizers=={release}.*"'


_MADE_BY = re.compile(rb'<openvino_tokenizers_version\s+value="([^"<>]{1,100})"')


def made_by_tokenizers(path: str | os.PathLike[str] | None) -> str | None:
    """The openvino-tokenizers release that wrote the IR at ``path`` (its ``<rt_info><openvino_tokenizers_version>``,
    which its converter records, at the file's end), where it says one."""
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            file.seek(max(0, os.fstat(file.fileno()).st_size - (1 << 16)))
            hit = _MADE_BY.search(file.read())
    except OSError:
        return None
    return None if hit is None else hit[1].decode("utf-8", "replace")


def read_failure(
    exc: BaseException, ops: Iterable[tuple[str, str]] = (), source: str | os.PathLike[str] | None = None
) -> str:
    """Why OpenVINO refused a model, on one line: its own message, and, where it refused an op of no OpenVINO
    opset, the op types of the model that no loaded extension provides and where each comes from
    (openvino-tokenizers: the pip command of the release for this OpenVINO; others: :data:`LOAD_EXTENSION`).

    Args:
        exc: what OpenVINO raised reading the model.
        ops: the model's ``(type, version)`` pairs, bodies included (an IR's layers); none for other formats.
        source: the model's IR file, whose rt_info may name the openvino-tokenizers release that made it.

    Raises:
        MemoryLimitError: OpenVINO (or ovreduce, handing it the model) ran out of memory: the process's memory bound
            was reached, which says nothing of the model.
    """
    message = clean_message(exc)
    ran_out = _OUT_OF_MEMORY.search(message)
    if isinstance(exc, MemoryError) or ran_out is not None:
        raise _out_of_memory("std::bad_alloc" if ran_out is None else ran_out[0].strip()) from None
    hit = _UNSUPPORTED_OPSET.search(message)
    if hit is None:
        if "No conversion rule found for operations" in message:  # a frontend (ONNX...) without a converter
            return f"{message} ({LOAD_EXTENSION} a conversion for them, or convert the model where they are known)"
        return message
    refused, version = hit.groups()
    if _STANDARD_OPSET.fullmatch(version):  # opset99: a newer OpenVINO's IR, no extension helps
        return message
    return f"{_missing_ops(refused, version, ops, source)} (OpenVINO: {message})"


# How OpenVINO says it ran out of memory: C++'s std::bad_alloc (pybind11 makes a bare one a MemoryError), after what it
# was doing ("Converting input model std::bad_alloc"), or the XML parser's own words for it.
_OUT_OF_MEMORY = re.compile(r"(?:^|\s)std::bad_alloc$|Could not allocate memory at offset \d+$")


def _out_of_memory(said: str) -> MemoryLimitError:
    """The error of OpenVINO running out of memory (``said``: in its words) as it read or ran a model: the process's
    memory bound (:func:`ovreduce.memory.bound_memory`), named where it has one, not a fault of the model."""
    from ovreduce.memory import data_limit

    limit = data_limit()
    bound = "the system gives it" if limit is None else (
        f"this process may use ({limit} bytes; OVREDUCE_MAX_WORKER_BYTES sets it for the command line and the "
        f"service's workers)")  # fmt: skip
    return MemoryLimitError(f"OpenVINO ran out of memory ({said}), which says nothing of the model: it needs more "
                            f"memory than {bound}")  # fmt: skip


def lacks_extension(failure: str) -> bool:
    """Whether OpenVINO refused a model (:func:`read_failure` says why) for an op of no OpenVINO opset that no loaded
    extension provides: the model may be sound, and loads with the extension."""
    hit = _UNSUPPORTED_OPSET.search(failure)
    return hit is not None and not _STANDARD_OPSET.fullmatch(hit[2])


def _missing_ops(
    refused: str, version: str, ops: Iterable[tuple[str, str]], source: str | os.PathLike[str] | None = None
) -> str:
    tokenizers = tokenizers_status()  # None: loaded
    ops = list(ops)
    others_loaded = any(e.name != TOKENIZERS_MODULE for e in loaded_extensions())
    missing = {refused}
    if not others_loaded:  # no extension of the user's: every op of that version is missing, but tokenizers'
        missing |= {t for t, v in ops if v == version and (tokenizers is not None or t not in TOKENIZER_OPS)}
    from_tokenizers = sorted(missing & TOKENIZER_OPS)
    unknown = sorted(missing - TOKENIZER_OPS)
    some = "an op" if len(missing) == 1 else "ops"
    parts = [
        f"the model has {some} of no OpenVINO opset that no loaded extension provides: {', '.join(sorted(missing))} "
        f"(version {version!r})"
    ]
    if from_tokenizers:
        one = len(from_tokenizers) == 1
        what = ("it is" if one else "they are") if not unknown else f"{', '.join(from_tokenizers)} {_is(one)}"
        what += f" openvino-tokenizers' {'op' if one else 'ops'}"
        if tokenizers is None:
            parts.append(
                f"{what}, and the loaded openvino-tokenizers {_version('openvino-tokenizers')} does not provide "
                f"{'it' if one else 'them'}: the model needs a newer one (with the OpenVINO it matches)"
            )
        else:
            parts.append(
                f"{what}: {_lower_first(tokenizers)}; install the release for OpenVINO {_version('openvino')}: "
                f"{_tokenizers_pip()}"
            )
    tokenizer_ir = any(t in TOKENIZER_OPS and v == version for t, v in ops)
    if unknown and tokenizers is None and tokenizer_ir:  # a tokenizer's op this openvino-tokenizers does not know
        one = len(unknown) == 1
        made_by = made_by_tokenizers(source)
        which = f"{', '.join(unknown)} {_is(one)}" if from_tokenizers else ("it is" if one else "they are")
        said = (f"{which} no op of the loaded openvino-tokenizers {_version('openvino-tokenizers')}, though the "
                f"model's other ops of that version are its: ")  # fmt: skip
        if made_by is not None:
            said += (f"the tokenizer was made by openvino-tokenizers {made_by} (its rt_info): install that release "
                     f"(with the OpenVINO it matches), or convert the tokenizer again with this one")  # fmt: skip
        else:
            said += ("a newer openvino-tokenizers' op, most likely: install the release that made the tokenizer, or "
                     "convert it again with this one")  # fmt: skip
        parts.append(said)
    elif unknown:
        which = "" if not from_tokenizers else f"for {', '.join(unknown)}, "
        parts.append(f"{which}{LOAD_EXTENSION} {'it' if len(unknown) == 1 else 'them'}")
    return "; ".join(parts)


def _is(one: bool) -> str:
    return "is" if one else "are"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def clean_message(exc: BaseException) -> str:
    """OpenVINO's message without the C++ source locations it prefixes, on one line, and without the counter of the
    names it gives nodes before they have theirs (``ReduceSum_3327596`` while the IR reader validates a layer is
    ``ReduceSum``): a message says the same of the same model in every process."""
    said = str(exc)
    if isinstance(exc, UnicodeDecodeError) and isinstance(exc.object, bytes):  # OpenVINO's message held a byte that is
        said = exc.object.decode("utf-8", "backslashreplace")  # not UTF-8 (an i8 value printed raw): its own words
    lines = [ln.strip() for ln in said.splitlines()]
    kept = [ln for ln in lines if ln and not _NOISE.match(ln)]
    text = re.sub(r"\s+", " ", " ".join(kept) or said.strip() or type(exc).__name__)
    for kind, auto in set(_AUTO_NAME.findall(text)):  # that very name: a producer the file names Reshape_4 keeps it
        text = re.sub(rf"(?<![\w.]){re.escape(auto)}(?![\w.])", kind, text)
    if _RANK_SET.fullmatch(text):  # the CPU plugin's 32-bit set of a tensor's dimensions, in libstdc++'s words
        text = "a tensor has more than 32 dimensions: OpenVINO's CPU plugin runs tensors of at most 32"
    return text


_RANK_SET = re.compile(r"bitset::test: __position \(which is \d+\) >= _Nb \(which is 32\)")


_AUTO_NAME = re.compile(r"'opset\d+::(\w+) (\1_\d+) \(")  # "node 'opset1::ReduceSum ReduceSum_5 (...'"


def partial_shape(ov_shape: Any) -> Any:
    """An ``openvino.PartialShape`` as an :class:`ovreduce.shapes.PartialShape`."""
    from ovreduce.shapes import Dimension, PartialShape

    if ov_shape.rank.is_dynamic:
        return PartialShape(None)
    dims = []
    for d in ov_shape:
        lo = max(int(d.get_min_length()), 0)
        hi = int(d.get_max_length())
        dims.append(Dimension(lo, None if hi < 0 else hi))
    return PartialShape(tuple(dims))


_DECLARATION = re.compile(r"\A\ufeff?(\s*)<\?xml[^>]*?\?>")  # (after blanks too: read so once moved before them)
_FOREIGN = re.compile(r"""\A\s*<\?xml[^>]*?encoding\s*=\s*["'](?!(?i:utf-?8)["'])""")  # another encoding declared


def xml_text(xml: bytes) -> str:
    """An XML file's text as OpenVINO must be given it (UTF-8, no declaration of another encoding): a UTF-16
    or UTF-32 file is known by its byte order mark or its first ``<``, 8-bit text read as OpenVINO's parser reads it
    from a file (:func:`~ovreduce.ir.reading.pugixml_encoding`: UTF-8, or latin-1 by a declaration at the very start).

    Raises:
        UnicodeDecodeError, LookupError: the bytes are not text in the encoding they say they are.
    """
    if xml.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encoding = "utf-32"
    elif xml.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    elif xml.startswith(b"<\x00?\x00"):
        encoding = "utf-16-le"
    elif xml.startswith(b"\x00<\x00?"):
        encoding = "utf-16-be"
    else:
        from ovreduce.ir.reading import pugixml_encoding

        encoding = pugixml_encoding(xml) or "utf-8"
    text = xml.decode(encoding)
    if encoding == "utf-8" and not text.startswith("\ufeff") and _FOREIGN.match(text) is None:
        return text
    return _DECLARATION.sub(r"\1", text.removeprefix("\ufeff"), count=1)


_MAX_POOL_1 = frozenset(f"opset{n}" for n in range(1, 8))  # the opsets whose MaxPool is MaxPool-1


def _refuse_reader_crashes(model: Any) -> None:
    """RuntimeError, as OpenVINO refusing the model, for what OpenVINO 2026.4's reader crashes the process on
    instead (``read_model`` runs in this process: ``check`` and ``inspect`` would die with it): a Slice of fewer
    than 4 inputs (``Slice::validate_and_infer_types`` sets a default axes input past its last: SIGSEGV), a
    Broadcast-1 of one input (its mocked axes input: SIGSEGV), a MaxPool-1 (opset1 to opset7) of no input (SIGSEGV).

    Args:
        model: an :class:`~ovreduce.ir.model.IRModel` (its layers and its bodies' layers are read).
    """
    layers = [*model.layers, *(layer for ref in model.bodies() for layer in ref.body.graph.layers)]
    for layer in layers:
        kind, version = layer.type.lower(), layer.version  # (OpenVINO finds op types in any case)
        if kind == "slice" and version.startswith("opset") and len(layer.inputs) < 4:
            raise RuntimeError(f"Slice has to have 4 or 5 inputs. Got: {len(layer.inputs)}")
        if kind == "broadcast" and version in ("opset1", "opset2") and len(layer.inputs) < 2:
            raise RuntimeError(f"index '{len(layer.inputs)}' out of range")
        if kind == "maxpool" and version in _MAX_POOL_1 and not layer.inputs:
            raise RuntimeError("index '0' out of range")


def read_ir_model(model: Any) -> Any:
    """An ``openvino.Model`` of an :class:`~ovreduce.ir.model.IRModel` ovreduce read (its XML and weights), in this
    process; what OpenVINO's reader would crash the process on instead of refusing it is refused first.

    Weights in a file are read by OpenVINO from the file, which it maps as its ``read_model`` of a path does: no copy
    of them is made, so a model's ``.bin`` may be larger than the process's memory bound
    (:func:`ovreduce.memory.bound_memory`). Weights held in memory (an upload) are handed over as they are.

    Raises whatever OpenVINO raises when it refuses the model.
    """
    _refuse_reader_crashes(model)
    weights = model.weights
    if weights is not None and weights.size > 0 and (path := weights.reader_path()) is not None:
        return read_ir_file(model.xml, path)
    return read_ir(model.xml, None if weights is None else weights.view())


def read_ir_file(xml: bytes | str, weights_path: str) -> Any:
    """An ``openvino.Model`` of an IR whose XML is held in memory and whose weights are a file, which OpenVINO maps.

    OpenVINO's Python API reads weights from a path only with the XML's own path: the XML text (as :func:`read_ir`
    hands it over) is written to a temporary file for it, then removed.

    Raises whatever OpenVINO raises when it refuses the model.
    """
    import tempfile

    text = xml_text(xml) if isinstance(xml, bytes) else xml
    with tempfile.TemporaryDirectory(prefix="ovreduce-") as folder:
        xml_path = os.path.join(folder, "model.xml")
        with open(xml_path, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        return core().read_model(xml_path, weights_path)


def read_ir(xml: bytes | str, weights: bytes | bytearray | memoryview | npt.NDArray[Any] | None = None) -> Any:
    """An ``openvino.Model`` from an IR held in memory: the XML text and the weights (no files needed).

    Raises whatever OpenVINO raises when it refuses the model.
    """
    import numpy as np

    ov = openvino()
    text = xml_text(xml) if isinstance(xml, bytes) else xml
    if weights is None:
        raw = np.zeros(0, dtype=np.uint8)
    elif isinstance(weights, np.ndarray):
        raw = weights.reshape(-1).view(np.uint8)
    else:
        raw = np.frombuffer(weights, dtype=np.uint8)
    return core().read_model(text, ov.Tensor(raw))


def bodies(node: Any) -> list[tuple[str, Any]]:
    """OpenVINO's bodies of an If (then, else), a Loop or a TensorIterator (body), by ovreduce's role names.
    (Asking OpenVINO 2026.4 for a body past the last one crashes the process: the count is the op's own.)"""
    kind = node.get_type_name()
    if kind == "If":
        return [("then", node.get_function(0)), ("else", node.get_function(1))]
    if kind in ("Loop", "TensorIterator"):
        return [("body", node.get_function())]
    return []
