"""OpenVINO element types: names, IR precisions, exact byte sizes, NumPy views and KServe names.

The table is what OpenVINO 2026 serializes (``element_type`` attribute names and port ``precision``
names); byte sizes follow OpenVINO's packing: whole-byte types take ``bitwidth/8`` bytes each; u1 packs 8
elements a byte, most significant bit first; u2, u4, i4, nf4 and f4e2m1 pack LSB-first; u3 packs 8 elements
into 3 bytes and u6 packs 4 elements into 3 bytes (blocks); strings are an int32 count, count+1 int32
offsets and the characters. Sizes are computed with Python ints so no shape can overflow them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.errors import ElementTypeError, WeightsError

__all__ = [
    "ELEMENT_TYPES",
    "ElementType",
    "decode",
    "element_type",
    "element_type_for_numpy",
    "element_type_from_kserve",
    "element_type_from_precision",
]

Kind = Literal["float", "int", "uint", "bool", "string", "dynamic"]

# NF4 code book, as in OpenVINO's src/core/src/type/nf4.cpp.
_NF4_LUT = np.array(
    [
        -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
        -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
        0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
        0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
    ],
    dtype=np.float32,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ElementType:
    """One OpenVINO element type."""

    name: str  # as in the IR's element_type attribute: "f32"
    precision: str  # as in a port's precision attribute: "FP32"
    bitwidth: int  # 0 for string and dynamic
    kind: Kind
    numpy: Any  # the NumPy dtype values are decoded to (a wider one for packed types)
    kserve: str | None  # KServe v2 / Open Inference Protocol datatype name, None if it has none

    @property
    def is_real(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_numeric(self) -> bool:
        return self.kind in ("float", "int", "uint")

    @property
    def is_packed(self) -> bool:
        return 0 < self.bitwidth < 8

    def nbytes(self, count: int) -> int | None:
        """Bytes that ``count`` elements take in a ``.bin``; None for strings (variable length)."""
        if self.kind in ("string", "dynamic"):
            return None
        if self.name == "u3":
            return (count + 7) // 8 * 3
        if self.name == "u6":
            return (count + 3) // 4 * 3
        return (count * self.bitwidth + 7) // 8

    def __str__(self) -> str:
        return self.name


def _t(name: str, precision: str, bits: int, kind: Kind, dtype: Any, kserve: str | None) -> ElementType:
    return ElementType(name, precision, bits, kind, np.dtype(dtype) if dtype is not None else None, kserve)


ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        _t("f64", "FP64", 64, "float", np.float64, "FP64"),
        _t("f32", "FP32", 32, "float", np.float32, "FP32"),
        _t("f16", "FP16", 16, "float", np.float16, "FP16"),
        _t("bf16", "BF16", 16, "float", ml_dtypes.bfloat16, "BF16"),
        _t("f8e4m3", "F8E4M3", 8, "float", ml_dtypes.float8_e4m3fn, None),
        _t("f8e5m2", "F8E5M2", 8, "float", ml_dtypes.float8_e5m2, None),
        _t("f8e8m0", "F8E8M0", 8, "float", ml_dtypes.float8_e8m0fnu, None),
        _t("f4e2m1", "F4E2M1", 4, "float", ml_dtypes.float4_e2m1fn, None),
        _t("nf4", "NF4", 4, "float", np.float32, None),
        _t("i64", "I64", 64, "int", np.int64, "INT64"),
        _t("i32", "I32", 32, "int", np.int32, "INT32"),
        _t("i16", "I16", 16, "int", np.int16, "INT16"),
        _t("i8", "I8", 8, "int", np.int8, "INT8"),
        _t("i4", "I4", 4, "int", np.int8, None),
        _t("u64", "U64", 64, "uint", np.uint64, "UINT64"),
        _t("u32", "U32", 32, "uint", np.uint32, "UINT32"),
        _t("u16", "U16", 16, "uint", np.uint16, "UINT16"),
        _t("u8", "U8", 8, "uint", np.uint8, "UINT8"),
        _t("u6", "U6", 6, "uint", np.uint8, None),
        _t("u4", "U4", 4, "uint", np.uint8, None),
        _t("u3", "U3", 3, "uint", np.uint8, None),
        _t("u2", "U2", 2, "uint", np.uint8, None),
        _t("u1", "BIN", 1, "uint", np.uint8, None),
        _t("boolean", "BOOL", 8, "bool", np.bool_, "BOOL"),
        _t("string", "STRING", 0, "string", None, "BYTES"),
        _t("dynamic", "UNSPECIFIED", 0, "dynamic", None, None),
    )
}

# Names OpenVINO's IR reader accepts in element_type (case-insensitively) besides the canonical ones.
_ELEMENT_ALIASES = {"undefined": "dynamic"}
# Names it accepts in a port's precision attribute: the upper-case precisions, U1, and canonical names.
_PRECISIONS = {t.precision: t for t in ELEMENT_TYPES.values()} | {"U1": ELEMENT_TYPES["u1"]}
_KSERVE = {t.kserve: t for t in ELEMENT_TYPES.values() if t.kserve}


def _expected_names() -> str:
    return ", ".join(ELEMENT_TYPES)


def element_type(name: str) -> ElementType:
    """The element type named in an ``element_type`` / ``destination_type`` attribute."""
    key = name.strip().lower()
    key = _ELEMENT_ALIASES.get(key, key)
    try:
        return ELEMENT_TYPES[key]
    except KeyError:
        raise ElementTypeError(f"unknown element type {name!r}; expected one of: {_expected_names()}") from None


def element_type_from_precision(precision: str) -> ElementType:
    """The element type named by a port's ``precision`` attribute (``FP32``, ``I64``, ``BIN``...)."""
    found = _PRECISIONS.get(precision) or ELEMENT_TYPES.get(precision)
    if found is None:
        raise ElementTypeError(f"unknown port precision {precision!r}; expected one of: {', '.join(_PRECISIONS)}")
    return found


def element_type_from_kserve(datatype: str) -> ElementType:
    """The element type of a KServe v2 datatype name (``FP32``, ``INT64``, ``BOOL``...)."""
    try:
        return _KSERVE[datatype.upper()]
    except KeyError:
        raise ElementTypeError(f"unknown datatype {datatype!r}; expected one of: {', '.join(_KSERVE)}") from None


def element_type_for_numpy(dtype: npt.DTypeLike) -> ElementType:
    """The element type whose values a NumPy array of ``dtype`` holds directly."""
    dt = np.dtype(dtype)
    for t in ELEMENT_TYPES.values():
        if t.numpy is not None and not t.is_packed and t.numpy == dt:
            return t
    if dt.kind in ("U", "S", "O"):
        return ELEMENT_TYPES["string"]
    raise ElementTypeError(f"NumPy dtype {dt} has no OpenVINO element type")


def decode(etype: ElementType, buf: bytes | memoryview, count: int) -> npt.NDArray[Any]:
    """Decode ``count`` elements of ``etype`` from ``buf`` (exactly ``etype.nbytes(count)`` bytes).

    Packed integer types widen to uint8/int8, nf4 to float32 through its code book; strings become a
    NumPy array of ``str``. Raises :class:`WeightsError` when the bytes do not hold ``count`` values.
    """
    if etype.kind == "dynamic":
        raise WeightsError("a Const of dynamic element type has no values to decode")
    if etype.kind == "string":
        return _decode_strings(buf, count)
    expected = etype.nbytes(count)
    if len(buf) != expected:
        raise WeightsError(f"{count} elements of {etype} take {expected} bytes, got {len(buf)}")
    if not etype.is_packed:
        return np.frombuffer(buf, dtype=etype.numpy, count=count)
    raw = np.frombuffer(buf, dtype=np.uint8)
    if etype.name == "u1":
        return np.unpackbits(raw, bitorder="big")[:count]
    if etype.name == "u3":
        return _decode_blocks(raw, count, low_bits=2, high_bits=1)
    if etype.name == "u6":
        return _decode_blocks(raw, count, low_bits=4, high_bits=2)
    # 2- and 4-bit types: LSB-first within each byte.
    per_byte = 8 // etype.bitwidth
    mask = (1 << etype.bitwidth) - 1
    shifts: npt.NDArray[Any] = np.arange(per_byte, dtype=np.uint8) * etype.bitwidth
    codes: npt.NDArray[Any] = ((raw[:, None] >> shifts) & mask).reshape(-1)[:count]
    if etype.name == "i4":
        signed: npt.NDArray[Any] = (codes.astype(np.int8) ^ 8) - 8
        return signed
    if etype.name == "nf4":
        nf4: npt.NDArray[Any] = _NF4_LUT[codes]
        return nf4
    if etype.name == "f4e2m1":
        floats: npt.NDArray[Any] = codes.view(ml_dtypes.float4_e2m1fn)
        return floats
    return codes


def _unpack_msb_first(raw: npt.NDArray[np.uint8], bits: int) -> npt.NDArray[np.uint8]:
    per_byte = 8 // bits
    shifts: npt.NDArray[Any] = (np.arange(per_byte - 1, -1, -1, dtype=np.uint8) * bits).astype(np.uint8)
    out: npt.NDArray[np.uint8] = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)
    return out


def _decode_blocks(raw: npt.NDArray[np.uint8], count: int, low_bits: int, high_bits: int) -> npt.NDArray[np.uint8]:
    """u3 / u6: blocks of 3 bytes; the first two hold the low bits, the third the high bits, MSB-first."""
    blocks = raw.reshape(-1, 3)
    low = _unpack_msb_first(np.ascontiguousarray(blocks[:, :2]).reshape(-1), low_bits).reshape(len(blocks), -1)
    high = _unpack_msb_first(np.ascontiguousarray(blocks[:, 2]), high_bits).reshape(len(blocks), -1)
    values: npt.NDArray[np.uint8] = ((high << low_bits) | low).astype(np.uint8).reshape(-1)[:count]
    return values


def _decode_strings(buf: bytes | memoryview, count: int) -> npt.NDArray[Any]:
    data = bytes(buf)
    header = 4 * (count + 2)
    if len(data) < header:
        raise WeightsError(
            f"a string Const of {count} elements needs at least {header} bytes of header, got {len(data)}"
        )
    stored = int.from_bytes(data[:4], "little", signed=True)
    if stored != count:
        raise WeightsError(f"string Const header holds {stored} elements, the shape says {count}")
    offsets = np.frombuffer(data, dtype="<i4", count=count + 1, offset=4).astype(np.int64)
    chars = data[header:]
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != len(chars):
        raise WeightsError(
            f"string Const offsets are inconsistent: expected non-decreasing offsets from 0 to {len(chars)}"
        )
    return np.array(
        [chars[offsets[i] : offsets[i + 1]].decode("utf-8", errors="replace") for i in range(count)],
        dtype=object,
    )
