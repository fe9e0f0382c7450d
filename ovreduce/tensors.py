"""Tensors in and out: ``.npy`` / ``.npz`` / ONNX ``TensorProto`` files, seeded generation, KServe v2 JSON."""

from __future__ import annotations

import math
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.errors import ElementTypeError, InputError
from ovreduce.ir.dtypes import ElementType, element_type_for_numpy, element_type_from_kserve
from ovreduce.shapes import PartialShape

__all__ = [
    "EXECUTABLE_TYPES",
    "concrete_shape",
    "conform_array",
    "from_kserve",
    "generate",
    "load_tensor",
    "to_kserve",
]

# Element types a reduction can be executed on (by both backends).
EXECUTABLE_TYPES = frozenset(
    {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "boolean"}
)


def load_tensor(spec: str) -> npt.NDArray[Any]:
    """Load ``FILE.npy``, ``FILE.npz`` (its only entry) / ``FILE.npz:ENTRY``, or an ONNX ``TensorProto`` ``.pb``.

    Raises:
        InputError: the file is missing, unreadable, or the entry does not exist.
    """
    path_text, entry = spec, None
    if ".npz:" in spec:
        path_text, _, entry = spec.partition(".npz:")
        path_text += ".npz"
    path = Path(path_text)
    if not path.is_file():
        raise InputError(f"{path_text}: no such file (expected a .npy, .npz or ONNX TensorProto .pb file)")
    suffix = path.suffix.lower()
    try:
        # np.load gets an open file (given a path, it leaks it when a .npz is corrupt) and goes by the content,
        # not the suffix: an archive named .npy, or an array named .npz, is refused rather than misread.
        if suffix == ".npy":
            with path.open("rb") as stream:
                loaded = np.load(stream, allow_pickle=False)
                if isinstance(loaded, np.lib.npyio.NpzFile):
                    loaded.close()
                    raise InputError(f"{path}: is an .npz archive, not an .npy file; rename it to .npz")
                return np.asarray(loaded)
        if suffix == ".npz":
            with path.open("rb") as stream:
                archive = np.load(stream, allow_pickle=False)
                if not isinstance(archive, np.lib.npyio.NpzFile):
                    raise InputError(f"{path}: is an .npy file, not an .npz archive; rename it to .npy")
                with archive:
                    names = list(archive.files)
                    if entry is None:
                        if len(names) != 1:
                            raise InputError(
                                f"{path}: holds {len(names)} arrays ({', '.join(names)}); name one as {path}:ENTRY"
                            )
                        entry = names[0]
                    if entry not in names:
                        raise InputError(f"{path}: has no entry {entry!r} (entries: {', '.join(names) or 'none'})")
                    return np.asarray(archive[entry])
        if suffix == ".pb":
            return _load_tensor_proto(path)
    except InputError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"{path}: cannot read the tensor: {exc}") from None
    raise InputError(f"{path}: unknown tensor file type {suffix!r}; expected .npy, .npz or .pb (ONNX TensorProto)")


def _load_tensor_proto(path: Path) -> npt.NDArray[Any]:
    try:
        from onnx import TensorProto, numpy_helper
    except ImportError:
        raise InputError(
            f"{path}: reading ONNX TensorProto files needs the onnx package: pip install 'ovreduce[onnx]'"
        ) from None
    proto = TensorProto()
    try:
        proto.ParseFromString(path.read_bytes())
        return np.asarray(numpy_helper.to_array(proto))
    except Exception as exc:  # protobuf raises DecodeError and friends
        raise InputError(f"{path}: not a readable ONNX TensorProto: {exc}") from None


def concrete_shape(shape: PartialShape, what: str) -> tuple[tuple[int, ...], list[str]]:
    """A static shape for generated data: dynamic dims become 1 (an interval its lower bound, at least 1).

    Returns the shape and notes for each dim that was chosen, as Polygraphy does.

    Raises:
        InputError: the rank is dynamic (no shape can be chosen).
    """
    if shape.dims is None:
        raise InputError(f"{what} has a dynamic rank; give its shape, or an input array")
    dims: list[int] = []
    notes: list[str] = []
    for i, d in enumerate(shape.dims):
        if d.is_static:
            dims.append(d.lo)
            continue
        chosen = max(d.lo, 1) if d.hi is None or d.hi >= 1 else d.lo
        dims.append(chosen)
        notes.append(f"{what}: dynamic dimension {i} ({d}) set to {chosen}")
    return tuple(dims), notes


def generate(etype: ElementType, shape: Sequence[int], rng: np.random.Generator) -> npt.NDArray[Any]:
    """Seeded data that exercises the type: normal floats, integers over the type's whole range for
    8/16-bit types (so saturation and wrap-around show) and +-2**20 for wider ones, random booleans."""
    _check_executable(etype)
    size = math.prod(shape)
    if etype.kind == "bool":
        return rng.integers(0, 2, size=size).astype(np.bool_).reshape(shape)
    if etype.is_real:
        return rng.standard_normal(size).astype(etype.numpy).reshape(shape)
    info = np.iinfo(etype.numpy)
    lo, hi = (int(info.min), int(info.max)) if info.bits <= 16 else (-(2**20), 2**20)
    lo = max(lo, int(info.min))
    return rng.integers(lo, hi, size=size, endpoint=True).astype(etype.numpy).reshape(shape)


def _check_executable(etype: ElementType) -> None:
    if etype.name not in EXECUTABLE_TYPES:
        raise InputError(
            f"reductions of {etype} data cannot be executed; supported: {', '.join(sorted(EXECUTABLE_TYPES))}"
        )


def conform_array(array: npt.NDArray[Any], etype: ElementType, shape: PartialShape, what: str) -> npt.NDArray[Any]:
    """Check a user-supplied array against the port it feeds; same-kind casts are allowed (f64 -> f32).

    Raises:
        InputError: incompatible shape, or a cast that would change the kind of values.
    """
    _check_executable(etype)
    if not shape.compatible(PartialShape.static(array.shape)):
        raise InputError(f"{what} has shape {list(array.shape)} but the layer expects {shape}")
    target = np.dtype(etype.numpy)
    if array.dtype == target:
        return array
    src_kind, dst_kind = array.dtype.kind, target.kind
    if array.dtype.name == "bfloat16":
        src_kind = "f"
    if dst_kind == "V" or etype.name == "bf16":
        dst_kind = "f"
    compatible = src_kind == dst_kind or (src_kind in "iu" and dst_kind in "iu")
    if not compatible:
        raise InputError(f"{what} holds {array.dtype} values but the layer expects {etype}; convert the file first")
    converted = array.astype(target)
    if src_kind in "iu" and not np.array_equal(converted.astype(array.dtype), array):
        raise InputError(f"{what}: {array.dtype} values do not fit in {etype}")
    return converted


def to_kserve(name: str, array: npt.NDArray[Any]) -> dict[str, Any]:
    """A KServe v2 tensor: ``{"name", "shape", "datatype", "data"}`` with flat row-major data."""
    etype = element_type_for_numpy(array.dtype)
    if etype.kserve is None:
        raise ElementTypeError(f"{etype} has no KServe v2 datatype")
    flat = array.reshape(-1)
    if etype.is_real:
        data: list[Any] = [_json_float(v) for v in flat.astype(np.float64).tolist()]
    else:
        data = flat.tolist()
    return {"name": name, "shape": list(array.shape), "datatype": etype.kserve, "data": data}


def _json_float(value: float) -> float | str:
    # JSON has no NaN/Infinity; KServe implementations pass them as strings.
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def from_kserve(tensor: dict[str, Any], what: str) -> npt.NDArray[Any]:
    """A NumPy array from a KServe v2 tensor (flat or nested row-major data).

    Raises:
        InputError: unknown datatype, negative dims, or a data length that does not match the shape.
    """
    try:
        etype = element_type_from_kserve(str(tensor.get("datatype", "")))
    except ElementTypeError as exc:
        raise InputError(f"{what}: {exc}") from None
    _check_executable(etype)
    shape = tensor.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise InputError(f"{what}: shape must be a list of non-negative integers, got {shape!r}")
    data = tensor.get("data")
    if not isinstance(data, list):
        raise InputError(f"{what}: data must be a list, got {type(data).__name__}")
    flat = list(_flatten(data))
    expected = math.prod(shape)
    if len(flat) != expected:
        raise InputError(f"{what}: shape {shape} needs {expected} values, data holds {len(flat)}")
    try:
        if etype.is_real:
            values = np.array([float(v) for v in flat], dtype=np.float64)
            return values.astype(etype.numpy).reshape(shape)
        if etype.kind == "bool":
            if not all(isinstance(v, bool) or v in (0, 1) for v in flat):
                raise InputError(f"{what}: BOOL data must be true/false")
            return np.array(flat, dtype=np.bool_).reshape(shape)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in flat):
            raise InputError(f"{what}: {etype.kserve} data must be integers")
        info = np.iinfo(etype.numpy)
        if flat and (min(flat) < info.min or max(flat) > info.max):
            raise InputError(f"{what}: values outside the {etype.kserve} range [{info.min}, {info.max}]")
        return np.array(flat, dtype=etype.numpy).reshape(shape)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{what}: data is not {etype.kserve}: {exc}") from None


def _flatten(data: list[Any]) -> Any:
    for item in data:
        if isinstance(item, list):
            yield from _flatten(item)
        else:
            yield item
