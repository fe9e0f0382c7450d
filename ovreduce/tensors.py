"""Tensors in and out: ``.npy`` / ``.npz`` / ONNX ``TensorProto`` files, seeded generation, KServe v2 JSON."""

from __future__ import annotations

import contextlib
import json
import math
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.errors import ElementTypeError, InputError, LimitExceededError, OvReduceError
from ovreduce.files import FileError, check_regular, read_bounded
from ovreduce.ir.dtypes import ElementType, element_type, element_type_for_numpy, element_type_from_kserve
from ovreduce.reports.common import json_float
from ovreduce.shapes import PartialShape

__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "EXECUTABLE_TYPES",
    "INPUT_ONLY_TYPES",
    "NF4_VALUES",
    "UNMODELLED_TYPES",
    "check_elements",
    "concrete_shape",
    "conform_array",
    "from_kserve",
    "generate",
    "generate_input",
    "json_quoted",
    "load_tensor",
    "packed_codes",
    "tensor_file",
    "to_kserve",
    "within_input_range",
]

# Element types a reduction can be executed on (by both backends): f8e4m3, f8e5m2 and f4e2m1 too, which OpenVINO's CPU
# reduces in f32 and the reference in f64, each rounding the result to the type.
EXECUTABLE_TYPES = frozenset(
    {"f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "f4e2m1", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8",
     "boolean"}
)  # fmt: skip

# The types of :data:`INPUT_ONLY_TYPES` that are not executable: OpenVINO's CPU reduces them in a wider type (f32, u8,
# i8) and converts the result back (to nf4's nearest code, to f8e8m0's power of two, to a packed integer), conversions
# the reference does not model.
UNMODELLED_TYPES = frozenset({"f8e8m0", "nf4", "i4", "u6", "u4", "u3", "u2", "u1"})


# Element types a model input can be made in and fed: the packed (sub-byte) and 8-bit float types, which a model most
# often converts before it computes (a compressed model's u4 or nf4 input). Their values are held unpacked, one NumPy
# element each (u4 in uint8, i4 in int8, nf4 as the f32 value of its code, f8 and f4e2m1 in ml_dtypes' types), packed
# as OpenVINO lays out such a tensor when fed (see :func:`packed_codes`) and unpacked when read back from OpenVINO.
INPUT_ONLY_TYPES = frozenset({"f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1", "nf4", "i4", "u6", "u4", "u3", "u2", "u1"})

NF4_VALUES = np.array(
    [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
     -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
     0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0],
    dtype=np.float32,
)  # fmt: skip
"""The values of nf4's 16 codes, by code, as OpenVINO converts them (``ConvertNF4``)."""

DEFAULT_MAX_ELEMENTS = 1 << 28  # one tensor's elements where no limit is given: 1 GiB of f32


def tensor_file(spec: str) -> str:
    """The file of a :func:`load_tensor` spec: ``FILE.npz:ENTRY``'s ``FILE.npz``, else the spec itself."""
    if ".npz:" in spec:
        return spec.partition(".npz:")[0] + ".npz"
    return spec


def load_tensor(spec: str, max_elements: int | None = DEFAULT_MAX_ELEMENTS) -> npt.NDArray[Any]:
    """Load ``FILE.npy``, ``FILE.npz`` (its only entry) / ``FILE.npz:ENTRY``, or an ONNX ``TensorProto`` ``.pb``.

    Nothing is allocated before the tensor's header has been checked: the shape it declares against
    ``max_elements`` and the bytes it needs against what the file (or the archive entry) holds, so a
    144-byte ``.npy`` that declares 10^12 elements, or an ``.npz`` entry that inflates to gigabytes, is
    refused before it is read.

    Raises:
        InputError: the file is missing, not a regular file, unreadable, inconsistent, or the entry does not
            exist.
        LimitExceededError: the tensor has more than ``max_elements`` elements.
    """
    path_text = tensor_file(spec)
    entry = spec[len(path_text) + 1 :] if len(spec) > len(path_text) else None
    path = Path(path_text)
    what = "a .npy, .npz or ONNX TensorProto .pb file"
    try:
        size = check_regular(path, what)
    except FileError as exc:
        raise InputError(f"{path_text}: {exc.reason}" if exc.reason.startswith("it is") else
                         f"{path_text}: no such file (expected {what})") from None  # fmt: skip
    suffix = path.suffix.lower()
    try:
        # np.load would go by the content, not the suffix; the headers are read here first, so an archive
        # named .npy, or an array named .npz, is refused rather than misread.
        if suffix == ".npy":
            with path.open("rb") as stream:
                if stream.read(len(_ZIP_MAGIC)) == _ZIP_MAGIC:
                    raise InputError(f"{path}: is an .npz archive, not an .npy file; rename it to .npz")
                stream.seek(0)
                return _read_npy(stream, size, max_elements, str(path))
        if suffix == ".npz":
            with path.open("rb") as stream:
                if stream.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                    raise InputError(f"{path}: is an .npy file, not an .npz archive; rename it to .npy")
                stream.seek(0)
                with zipfile.ZipFile(stream) as archive:
                    members = {n[: -len(".npy")] if n.endswith(".npy") else n: n for n in archive.namelist()}
                    names = list(members)
                    if entry is None:
                        if len(names) != 1:
                            raise InputError(
                                f"{path}: holds {len(names)} arrays ({', '.join(names)}); name one as {path}:ENTRY"
                            )
                        entry = names[0]
                    if entry not in members:
                        raise InputError(f"{path}: has no entry {entry!r} (entries: {', '.join(names) or 'none'})")
                    info = archive.getinfo(members[entry])
                    if info.flag_bits & 0x1:  # (zipfile asks for a password: RuntimeError)
                        raise InputError(f"{path}:{entry}: is encrypted; ovreduce reads no password-protected entry")
                    with archive.open(info) as member:
                        return _read_npy(member, info.file_size, max_elements, f"{path}:{entry}")
        if suffix == ".pb":
            return _load_tensor_proto(path, size, max_elements)
    except InputError:
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError) as exc:
        raise InputError(f"{path}: cannot read the tensor: {exc}") from None
    raise InputError(f"{path}: unknown tensor file type {suffix!r}; expected .npy, .npz or .pb (ONNX TensorProto)")


_NPY_HEADER_MAX = 10_000
_ZIP_MAGIC = b"PK"  # a local file header (PK 3 4) or, for an empty archive, the end record (PK 5 6)


def _read_npy(stream: Any, available: int, max_elements: int | None, where: str) -> npt.NDArray[Any]:
    """An array from an ``.npy`` stream whose header is checked before its data is allocated."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(stream)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise InputError(f"{where}: unsupported .npy format version {version}")
        reader = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        start = stream.tell()  # NumPy reads a header of the length it declares (up to 4 GiB) before it checks it
        said = int.from_bytes(stream.read(2 if version == (1, 0) else 4), "little")
        if said > _NPY_HEADER_MAX:
            raise InputError(f"{where}: not a valid .npy header: it declares {said:,} bytes, more than the "
                             f"{_NPY_HEADER_MAX:,} any array's header fits in")  # fmt: skip
        stream.seek(start)
        shape, fortran, dtype = reader(stream, max_header_size=_NPY_HEADER_MAX)
    except InputError:
        raise
    except Exception as exc:  # NumPy parses the header as a Python literal: SyntaxError, TokenError, ValueError...
        reason = f"{type(exc).__name__}: {exc}"
        if "malformed node" in str(exc):  # ast.literal_eval names the node by its address
            reason = "it holds an expression where a .npy header holds only literals"
        raise InputError(f"{where}: not a valid .npy header: {reason}") from None
    if dtype.hasobject:
        raise InputError(f"{where}: holds Python objects, which ovreduce does not load (allow_pickle is off)")
    if any(int(d) < 0 for d in shape):
        raise InputError(f"{where}: the header declares shape {list(shape)}; expected sizes >= 0")
    count = check_elements([int(d) for d in shape], max_elements, f"{where}: the tensor's shape {list(shape)}")
    needed = count * dtype.itemsize
    header = stream.tell()
    if needed > available - header:
        raise InputError(
            f"{where}: the header declares shape {list(shape)} of {dtype} ({needed} bytes) but the file holds only "
            f"{max(available - header, 0)} bytes of data"
        )
    data = stream.read(needed)
    if len(data) != needed:
        raise InputError(f"{where}: the data ends after {len(data)} of {needed} bytes")
    array = np.frombuffer(data, dtype=dtype, count=count)
    return array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)


def check_elements(shape: Sequence[int], limit: int | None, what: str) -> int:
    """The elements of a tensor of ``shape`` (``what`` names it), held to ``limit`` (OVREDUCE_MAX_ELEMENTS).

    Raises:
        LimitExceededError: more elements than ``limit``; or none, but dims other than 0 that multiply past it: such a
            tensor cannot be described (NumPy refuses one past 2**63 bytes), and a reduction over its empty axis would
            fill the rest (``[0, n, n]`` reduced over axis 0 is ``[n, n]``).
    """
    count = math.prod(shape)
    if limit is None:
        return count
    if count > limit:
        raise LimitExceededError(f"{what} has {count} elements, more than the limit of {limit} (OVREDUCE_MAX_ELEMENTS)")
    spread = math.prod(d for d in shape if d)
    if spread > limit:
        raise LimitExceededError(f"{what} has no elements, but its dims other than 0 ({list(shape)}) multiply to "
                                 f"{spread}, more than the limit of {limit} (OVREDUCE_MAX_ELEMENTS); a reduction over "
                                 f"its empty axis would fill that many")  # fmt: skip
    return count


def _load_tensor_proto(path: Path, size: int, max_elements: int | None) -> npt.NDArray[Any]:
    try:
        from onnx import TensorProto, numpy_helper
    except ImportError:
        raise InputError(
            f"{path}: reading ONNX TensorProto files needs the onnx package: pip install 'ovreduce[onnx]'"
        ) from None
    proto = TensorProto()
    try:
        proto.ParseFromString(read_bounded(path, size, "an ONNX TensorProto .pb file"))
    except OvReduceError:
        raise
    except Exception as exc:  # protobuf raises DecodeError and friends
        raise InputError(f"{path}: not a readable ONNX TensorProto: {exc}") from None
    for d in proto.dims:
        if d < 0:
            raise InputError(f"{path}: the TensorProto has a negative dim {d}")
    check_elements([int(d) for d in proto.dims], max_elements, f"{path}: the tensor's shape {list(proto.dims)}")
    if proto.data_type not in TensorProto.DataType.values():
        raise InputError(f"{path}: the TensorProto's data_type {proto.data_type} is no ONNX element type")
    if proto.data_location == TensorProto.EXTERNAL:
        check_external_data(proto, path.parent, f"{path}: the tensor keeps its data in", "the folder of the .pb file")
    try:
        return np.asarray(numpy_helper.to_array(proto, base_dir=str(path.parent)))
    except Exception as exc:  # onnx raises ValueError, TypeError and friends for inconsistent tensors
        raise InputError(f"{path}: not a readable ONNX TensorProto: {exc}") from None


def check_external_data(tensor: Any, folder: Path, where: str, home: str) -> None:
    """An ONNX tensor's external data, checked without reading it: a regular file inside ``folder`` (resolved
    against it, never the current directory; ``../``, absolute paths and links out are refused), with the
    tensor's offset and length inside the file. ``where`` opens each message ("x.pb: the tensor keeps its data
    in"), ``home`` names the folder ("the folder of the .pb file").

    Raises:
        InputError: any of that is not so.
    """
    entries = {e.key: e.value for e in tensor.external_data}
    location = entries.get("location", "")
    if not location:
        raise InputError(f"{where} a file it does not name: its external data has no 'location'")
    folder = folder.resolve()
    target = (folder / location).resolve()
    if Path(location).is_absolute() or not target.is_relative_to(folder):
        raise InputError(f"{where} {location!r}, outside {home}: external data must be in {home} or below it")
    try:
        available = check_regular(target, "an external data file")
    except FileError as exc:
        reason = "which does not exist" if not os.path.lexists(folder / location) else exc.reason  # "it is a ..."
        raise InputError(f"{where} {str(folder / location)!r}, {reason}") from None
    offset = _external_count(entries, "offset", where, location) or 0
    length = _external_count(entries, "length", where, location)
    if offset > available or (length is not None and offset + length > available):
        span = f"offset {offset} lies" if length is None else f"offset {offset} and length {length} lie"
        raise InputError(f"{where} {location!r}, which holds {available} bytes; {span} outside it")
    held, needed = available - offset if length is None else length, tensor_nbytes(tensor)
    if needed is not None and held != needed:  # (read whole, a 3 GiB file behind a 96-byte tensor was)
        said = "to the end of the file" if length is None else "by its length"
        raise InputError(f"{where} {location!r}: {held} bytes from offset {offset} ({said}), where its dims "
                         f"{list(tensor.dims)} of {_onnx_type(tensor)} need {needed}")  # fmt: skip


# ONNX's packed types (UINT4, INT4, FLOAT4E2M1, UINT2, INT2): bits per element
_PACKED_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}
_UNSIZED = frozenset({0, 8, 27, 28})  # UNDEFINED, STRING, and FLOAT6E2M3/E3M2, whose packing is not settled here


def tensor_nbytes(tensor: Any) -> int | None:
    """The bytes an ONNX tensor's dims take in its raw or external data; None for a type of no fixed size (STRING)
    or one not known here (onnx gives the 6-bit floats a byte each, which may not be how they are stored)."""
    from onnx import helper

    count = math.prod(int(d) for d in tensor.dims)
    bits = _PACKED_BITS.get(tensor.data_type)
    if bits is not None:
        return (count * bits + 7) // 8
    if tensor.data_type in _UNSIZED:
        return None
    try:
        return count * helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except Exception:  # a type this onnx does not know, or one of no NumPy type
        return None


def _onnx_type(tensor: Any) -> str:
    from onnx import TensorProto

    return (
        str(TensorProto.DataType.Name(tensor.data_type))
        if tensor.data_type in TensorProto.DataType.values()
        else str(tensor.data_type)
    )


def _external_count(entries: Mapping[str, str], key: str, where: str, location: str) -> int | None:
    """External data's ``offset`` or ``length``: a count of bytes, or None where it is not given."""
    text = entries.get(key) or None
    if text is not None and not (text.isascii() and text.isdigit() and len(text) <= 20):
        raise InputError(f"{where} {location!r} at {key} {text!r}, which is not a count of bytes")
    return None if text is None else int(text)


def concrete_shape(shape: PartialShape, what: str) -> tuple[tuple[int, ...], list[str]]:
    """A static shape for generated data: dynamic dims become 1 (an interval its lower bound, at least 1).

    Returns the shape and notes for each dim that was chosen, as Polygraphy does.

    Raises:
        InputError: the rank is dynamic (no shape can be chosen).
    """
    if shape.dims is None:
        raise InputError(f"{what} has a dynamic rank; give its shape, or an input array", parameter="shapes")
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


def _integer_range(etype: ElementType) -> tuple[int, int]:
    """The values of an integer type, packed ones included (u4: 0..15, i4: -8..7)."""
    if etype.is_packed or etype.name == "u6":
        bits = etype.bitwidth
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if etype.kind == "int" else (0, (1 << bits) - 1)
    info = np.iinfo(etype.numpy)
    return int(info.min), int(info.max)


def generate_input(etype: ElementType, shape: Sequence[int], rng: np.random.Generator) -> npt.NDArray[Any]:
    """Seeded values for a model input of ``etype``: as :func:`generate` makes them for the types a reduction executes
    on; for a type of :data:`INPUT_ONLY_TYPES`, values over its whole range (every code of a packed integer or nf4
    type, normal floats rounded to an 8-bit float type, powers of two for f8e8m0), held unpacked."""
    if etype.name not in INPUT_ONLY_TYPES:
        return generate(etype, shape, rng)
    size = math.prod(shape)
    if etype.name == "nf4":
        return NF4_VALUES[rng.integers(0, 16, size=size)].reshape(shape)
    if etype.name == "f4e2m1":
        codes: npt.NDArray[Any] = rng.integers(0, 16, size=size).astype(np.uint8).view(etype.numpy)
        return codes.reshape(shape)
    if etype.name == "f8e8m0":  # exponents only: positive powers of two
        return (2.0 ** rng.integers(-8, 9, size=size)).astype(etype.numpy).reshape(shape)
    if etype.is_real:
        return rng.standard_normal(size).astype(etype.numpy).reshape(shape)
    lo, hi = _integer_range(etype)
    return rng.integers(lo, hi, size=size, endpoint=True).astype(etype.numpy).reshape(shape)


def within_input_range(array: npt.NDArray[Any], etype: ElementType) -> npt.NDArray[Any]:
    """``array`` (made for a model input of ``etype``) clipped to the values of a packed integer type (a u4 count
    of 3 stays 3, a position past 15 becomes 15); any other array as it is."""
    if etype.name in INPUT_ONLY_TYPES and etype.is_integral:
        lo, hi = _integer_range(etype)
        clipped: npt.NDArray[Any] = np.clip(array, lo, hi).astype(etype.numpy)
        return clipped
    return array


def packed_codes(array: npt.NDArray[Any], etype: ElementType) -> npt.NDArray[np.uint8]:
    """Each element of ``array`` (held unpacked, as :data:`INPUT_ONLY_TYPES` says) as its code of ``etype``'s
    bitwidth: a u4's value, an i4's two's complement nibble, an nf4's index in :data:`NF4_VALUES` (the nearest),
    an f4e2m1's bits."""
    flat = np.asarray(array).reshape(-1)
    if etype.name == "nf4":
        nearest: npt.NDArray[np.uint8] = np.abs(flat.astype(np.float32)[:, None] - NF4_VALUES[None, :]).argmin(axis=1)
        return nearest.astype(np.uint8)
    if etype.name == "f4e2m1":
        bits: npt.NDArray[np.uint8] = flat.astype(etype.numpy).view(np.uint8) & np.uint8(0xF)
        return bits
    return (flat.astype(np.int64) & ((1 << etype.bitwidth) - 1)).astype(np.uint8)


def _check_input_only(array: npt.NDArray[Any], etype: ElementType, what: str) -> npt.NDArray[Any]:
    """A given array for a model input of a type of :data:`INPUT_ONLY_TYPES`, as its values are held.

    Raises:
        InputError: values the type does not hold (an integer out of its range, a value no nf4 code has, a float
            for an integer type).
    """
    kind = "f" if array.dtype.name in ("bfloat16",) or array.dtype.kind == "V" else array.dtype.kind
    if etype.is_integral:
        if kind not in "iub":
            raise InputError(f"{what} holds {array.dtype} values but the model input is {etype}; give it integers")
        lo, hi = _integer_range(etype)
        if array.size and (int(array.min()) < lo or int(array.max()) > hi):
            raise InputError(f"{what}: values from {int(array.min())} to {int(array.max())} do not fit in {etype} "
                             f"[{lo}, {hi}]")  # fmt: skip
        return array.astype(etype.numpy)
    values = array.astype(np.float32) if kind == "f" or array.dtype == np.dtype(etype.numpy) else None
    if values is None:
        raise InputError(f"{what} holds {array.dtype} values but the model input is {etype}; give it float values")
    if etype.name == "nf4":
        if not np.isin(values, NF4_VALUES).all():
            raise InputError(f"{what}: nf4 holds 16 values only (-1, -0.696..., ..., 1: its codes' values, as OpenVINO "
                             f"converts them); give values among them")  # fmt: skip
        return values
    converted = values.astype(etype.numpy)
    if np.any(~np.isfinite(converted.astype(np.float32)) & np.isfinite(values)):
        raise InputError(f"{what}: values beyond the range of {etype} would not be finite in it")
    return converted


def _check_executable(etype: ElementType) -> None:
    if etype.name in UNMODELLED_TYPES:
        raise InputError(
            f"reductions of {etype} data cannot be executed: OpenVINO's CPU reduces {etype} in a wider type and "
            f"converts the result back to {etype}, a conversion ovreduce's reference does not model; supported: "
            f"{', '.join(sorted(EXECUTABLE_TYPES))}"
        )
    if etype.name not in EXECUTABLE_TYPES:
        raise InputError(
            f"reductions of {etype} data cannot be executed; supported: {', '.join(sorted(EXECUTABLE_TYPES))}"
        )


def own_names(names: Sequence[AbstractSet[str]], reserved: Sequence[AbstractSet[str]]) -> list[set[str]]:
    """Each input's names (``names[i]``), where the names ``reserved[i]`` (its port index, an alias) are input
    ``i``'s alone: a Parameter named ``1`` feeding input 0 is not input 0's ``1`` when input 1 exists. Every
    input stays reachable by its index, and an index means one input whatever the model's names."""
    taken = [set().union(*(r for j, r in enumerate(reserved) if j != i)) for i in range(len(names))]
    return [(set(known) - taken[i]) | set(reserved[i]) for i, known in enumerate(names)]


def refuse_ambiguous(names: Iterable[str], inputs: Sequence[tuple[str, AbstractSet[str]]], parameter: str) -> None:
    """Refuse a name that names two inputs (``inputs``: each one's description and the names it goes by): two
    Parameters of one name.

    Raises:
        InputError: such a name is among ``names``.
    """
    for name in sorted(set(names)):
        holders = [what for what, known in inputs if name in known]
        if len(holders) > 1:
            raise InputError(f"{name!r} names {' and '.join(holders)}; give each input by a name only it has",
                             parameter=parameter)  # fmt: skip


def given_once(items: Mapping[str, Any], names: AbstractSet[str], what: str, parameter: str) -> str | None:
    """The one key of ``items`` among ``names`` (an input's port index, Parameter name, tensor names), or None.

    Raises:
        InputError: two of them are given: which one would be used is no rule a user could know.
    """
    found = sorted(n for n in items if n in names)
    if len(found) > 1:
        raise InputError(
            f"{what} is given twice, as {' and '.join(map(repr, found))}; give it once", parameter=parameter, twice=True
        )
    return found[0] if found else None


def conform_array(
    array: npt.NDArray[Any], etype: ElementType, shape: PartialShape, what: str, model_input: bool = False
) -> npt.NDArray[Any]:
    """Check a user-supplied array against the port it feeds; same-kind casts are allowed (f64 -> f32). A
    ``model_input`` may also be of a type of :data:`INPUT_ONLY_TYPES` (held unpacked: see there).

    Raises:
        InputError: incompatible shape, a cast that would change the kind of values, integers that do not fit,
            or finite floats that would become infinite (1e300 in f32, 1e5 in f16).
    """
    if not (model_input and etype.name in INPUT_ONLY_TYPES):
        _check_executable(etype)
    expects = "the model declares it" if model_input else "the layer expects"  # (a whole model's input: audit's)
    if not shape.compatible(PartialShape.static(array.shape)):
        raise InputError(f"{what} has shape {list(array.shape)} but {expects} {shape}")
    if etype.name in INPUT_ONLY_TYPES:
        return _check_input_only(_raw_read(array, np.dtype(etype.numpy)), etype, what)
    target = np.dtype(etype.numpy)
    array = _raw_read(array, target)
    if array.dtype == target:
        return array
    src_kind, dst_kind = array.dtype.kind, target.kind
    if array.dtype.name == "bfloat16":
        src_kind = "f"
    if dst_kind == "V" or etype.name == "bf16":
        dst_kind = "f"
    compatible = src_kind == dst_kind or (src_kind in "iu" and dst_kind in "iu")
    if not compatible:
        held = "BYTES (text)" if array.dtype.kind in "USO" else array.dtype
        raise InputError(f"{what} holds {held} values but {expects} {etype}; give it {etype} values")
    if src_kind in "iu" and array.size:  # by value: -1 would go to u64 and back unchanged
        low, high = int(array.min()), int(array.max())
        info = np.iinfo(target)
        if low < info.min or high > info.max:
            raise InputError(f"{what}: {array.dtype} values from {low} to {high} do not fit in {etype} "
                             f"[{info.min}, {info.max}]")  # fmt: skip
    with np.errstate(over="ignore"):
        converted = array.astype(target)
    if src_kind == "f" and np.any(np.isinf(converted) & np.isfinite(array)):
        raise InputError(f"{what}: {array.dtype} values beyond the range of {etype} would become infinite")
    return converted


def _npy_names(dtype: np.dtype[Any]) -> bool:
    """Whether a .npy header names ``dtype`` so that NumPy reads it back as itself: not so for ml_dtypes' types
    (bf16 and most f8/f4 are written ``|V``, read back as raw bytes; float8_e5m2 is written ``<f1``, which NumPy
    refuses to read)."""
    from numpy.lib import format as npy

    try:
        return bool(npy.descr_to_dtype(npy.dtype_to_descr(dtype)) == dtype)
    except (TypeError, ValueError):
        return False


def npy_writable(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array`` as a .npy file can hold it: as it is, or, for a type the header cannot name, its raw bytes
    (``|V1``, ``|V2``), which NumPy reads back and ``--input`` reads as the port's type."""
    if array.dtype.fields is not None or _npy_names(array.dtype):
        return array
    return array.view(np.dtype(f"V{array.dtype.itemsize}"))


def _raw_read(array: npt.NDArray[Any], target: np.dtype[Any]) -> npt.NDArray[Any]:
    """An array of ml_dtypes' types as NumPy reads it back from a .npy (which ``--save-inputs`` writes): raw bytes,
    ``|V2`` for bf16, ``|V1`` for the f8 and f4 types. Read as the port's type where that is one of them and as wide,
    else two bytes as bf16, the one two-byte type ml_dtypes adds; any other array as it is."""
    if array.dtype.kind != "V" or array.dtype.fields is not None:
        return array
    if not _npy_names(target) and target.itemsize == array.dtype.itemsize:
        return array.view(target)
    if array.dtype.itemsize == 2:
        return array.view(np.dtype(element_type("bf16").numpy))
    return array


def to_kserve(name: str, array: npt.NDArray[Any]) -> dict[str, Any]:
    """A KServe v2 tensor: ``{"name", "shape", "datatype", "data"}`` with flat row-major data."""
    etype = element_type_for_numpy(array.dtype)
    if etype.kserve is None:
        raise ElementTypeError(f"{etype} has no KServe v2 datatype")
    flat = array.reshape(-1)
    if etype.is_real:
        data: list[Any] = [json_float(v) for v in flat.astype(np.float64).tolist()]
    else:
        data = flat.tolist()
    return {"name": name, "shape": list(array.shape), "datatype": etype.kserve, "data": data}


def from_kserve(tensor: dict[str, Any], what: str) -> npt.NDArray[Any]:
    """A NumPy array from a KServe v2 tensor (flat or nested row-major data); ``BYTES`` of JSON strings (a tokenizer's
    text) as an array of ``str``, which the port it feeds judges (:func:`conform_array`).

    Raises:
        InputError: unknown datatype, negative dims, or a data length that does not match the shape.
    """
    try:
        etype = element_type_from_kserve(str(tensor.get("datatype", "")))
    except ElementTypeError as exc:
        raise InputError(f"{what}: {exc}") from None
    strings = etype.name == "string"
    shape = tensor.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise InputError(f"{what}: shape must be a list of non-negative integers, got {shape!r}")
    data = tensor.get("data")
    if not isinstance(data, list):
        raise InputError(f"{what}: data must be a list, got {type(data).__name__}")
    flat = flat_values(data, shape, what)
    try:
        if strings:
            bad = next((i for i, v in enumerate(flat) if type(v) is not str), -1)
            if bad >= 0:
                raise InputError(f"{what}: value {json_quoted(flat[bad])} at index {bad} is not a string; BYTES data "
                                 f"of a text input are JSON strings")  # fmt: skip
            return np.array(flat, dtype=np.str_).reshape(shape)
        if etype.is_real:
            dtype = np.dtype(etype.numpy)
            limit = float(np.finfo(dtype).max) if dtype.kind == "f" else 3.3895313892515355e38  # (bf16)

            def outside(value: Any, index: int) -> InputError:
                return InputError(
                    f"{what}: value {value} at index {index} is outside the {etype.kserve} range "
                    f"[-{limit:.7g}, {limit:.7g}] (it would become inf); give inf explicitly if that is meant"
                )

            for index, v in enumerate(flat):  # numbers; not true, "7" or " 1_0 " (float() reads them)
                if type(v) not in (int, float) and not (type(v) is str and v.lower() in _NON_FINITE):
                    raise InputError(
                        f"{what}: value {json_quoted(v)} at index {index} is not a number; {etype.kserve} data are "
                        f'JSON numbers, and "NaN", "Infinity" or "-Infinity"'
                    )
                if type(v) is int and v.bit_length() > 1000:  # (past float64's range, where NumPy's conversion fails)
                    with contextlib.suppress(OverflowError):
                        float(v)
                        continue
                    raise outside(json_quoted(v), index)
            values = np.array([_NON_FINITE[v.lower()] if type(v) is str else v for v in flat], dtype=np.float64)
            with np.errstate(over="ignore"):
                converted = values.astype(dtype)
            overflow = np.isinf(converted.astype(np.float64)) & np.isfinite(values)
            if overflow.any():
                first = int(np.flatnonzero(overflow)[0])
                raise outside(repr(float(values[first])), first)
            return converted.reshape(shape)
        if etype.kind == "bool":
            bad = next((i for i, v in enumerate(flat) if not (type(v) is bool or (type(v) is int and v in (0, 1)))), -1)
            if bad >= 0:
                raise InputError(
                    f"{what}: value {json_quoted(flat[bad])} at index {bad} is not a BOOL (true, false, 1 or 0)"
                )
            return np.array(flat, dtype=np.bool_).reshape(shape)
        bad = next((i for i, v in enumerate(flat) if type(v) is not int), -1)
        if bad >= 0:
            raise InputError(f"{what}: value {json_quoted(flat[bad])} at index {bad} is not an integer; "
                             f"{etype.kserve} data are JSON integers")  # fmt: skip
        info = np.iinfo(etype.numpy)
        bad = next((i for i, v in enumerate(flat) if not info.min <= v <= info.max), -1)
        if bad >= 0:
            raise InputError(f"{what}: value {json_quoted(flat[bad])} at index {bad} is outside the {etype.kserve} "
                             f"range [{info.min}, {info.max}]")  # fmt: skip
        return np.array(flat, dtype=etype.numpy).reshape(shape)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{what}: data is not {etype.kserve}: {exc}") from None


_NON_FINITE = {  # ovreduce writes "NaN", "Infinity", "-Infinity"; it reads them in any case, signed, inf for Infinity
    sign + name: float(sign + name) for sign in ("", "+", "-") for name in ("nan", "inf", "infinity")
}


def json_quoted(value: Any) -> str:
    """A value as the client wrote it: JSON (``null``, ``true``, ``"7"``), anything else as Python writes it."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."


def flat_values(data: list[Any], shape: Sequence[int], what: str, limit: int | None = None) -> list[Any]:
    """Tensor data as a flat row-major list: ``data`` flat already, or lists nested exactly as ``shape`` (a list
    of ``shape[0]`` lists of ``shape[1]`` ...), walked without recursion and no deeper than the shape's rank.

    Raises:
        InputError: nesting that does not follow ``shape`` (a ragged list is no row-major tensor).
        LimitExceededError: more than ``limit`` values.
    """
    if not any(isinstance(item, list) for item in data):
        flat = data
    else:
        if not shape or len(data) != shape[0]:
            raise InputError(f"{what}: data holds {len(data)} items, lists among them, where shape {list(shape)} has "
                             f"{shape[0] if shape else 'no dimension'}; give flat row-major data, or lists nested "
                             f"as the shape")  # fmt: skip
        flat = []
        stack: list[list[Any]] = [data]
        at = [0]  # the next index in each list of the stack
        while stack:
            if at[-1] == len(stack[-1]):
                stack.pop()
                at.pop()
                continue
            item = stack[-1][at[-1]]
            at[-1] += 1
            depth = len(stack)  # the dimension ``item`` stands at
            if isinstance(item, list) != (depth < len(shape)) or (isinstance(item, list) and len(item) != shape[depth]):
                where = "data" + "".join(f"[{i - 1}]" for i in at)
                held = f"a list of {len(item)}" if isinstance(item, list) else "a value"
                wanted = f"a list of {shape[depth]}" if depth < len(shape) else "a value"
                raise InputError(f"{what}: {where} is {held} where shape {list(shape)} has {wanted}; give flat "
                                 f"row-major data, or lists nested as the shape")  # fmt: skip
            if isinstance(item, list):
                stack.append(item)
                at.append(0)
            else:
                flat.append(item)
                if limit is not None and len(flat) > limit:
                    break
    if limit is not None and len(flat) > limit:
        raise LimitExceededError(f"{what} has more than {limit} values (OVREDUCE_MAX_ELEMENTS)")
    expected = math.prod(shape)
    if len(flat) != expected:
        raise InputError(f"{what}: shape {list(shape)} needs {expected} values, data holds {len(flat)}")
    return flat
