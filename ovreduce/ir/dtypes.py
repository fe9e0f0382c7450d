"""OpenVINO element types: names, IR precisions, exact byte sizes, NumPy views and KServe names.

The table is what OpenVINO 2026 serializes (``element_type`` attribute names and port ``precision``
names); byte sizes follow OpenVINO's packing: whole-byte types take ``bitwidth/8`` bytes each; u1 packs 8
elements a byte, most significant bit first; u2, u4, i4, nf4 and f4e2m1 pack LSB-first; u3 packs 8 elements
into 3 bytes and u6 packs 4 elements into 3 bytes (blocks); strings are an int32 count, count+1 int32
offsets and the characters. Sizes are computed with Python ints so no shape can overflow them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from ovreduce.errors import ElementTypeError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "ELEMENT_TYPES",
    "ElementType",
    "element_type",
    "element_type_for_numpy",
    "element_type_from_kserve",
    "element_type_from_precision",
]

Kind = Literal["float", "int", "uint", "bool", "string", "dynamic"]


@dataclass(frozen=True, slots=True)
class ElementType:
    """One OpenVINO element type."""

    name: str  # as in the IR's element_type attribute: "f32"
    precision: str  # as in a port's precision attribute: "FP32"
    bitwidth: int  # 0 for string and dynamic
    kind: Kind
    numpy_name: str | None  # the NumPy dtype values are decoded to (a wider one for packed types)
    kserve: str | None  # KServe v2 / Open Inference Protocol datatype name, None if it has none

    @property
    def numpy(self) -> Any:
        """The NumPy dtype (``ml_dtypes`` for bf16, f8 and f4); imports NumPy on first use."""
        return None if self.numpy_name is None else _numpy_dtype(self.numpy_name)

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


@cache
def _numpy_dtype(name: str) -> Any:
    import numpy as np

    if hasattr(np, name):
        return np.dtype(getattr(np, name))
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def _t(name: str, precision: str, bits: int, kind: Kind, dtype: str | None, kserve: str | None) -> ElementType:
    return ElementType(name, precision, bits, kind, dtype, kserve)


ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        _t("f64", "FP64", 64, "float", "float64", "FP64"),
        _t("f32", "FP32", 32, "float", "float32", "FP32"),
        _t("f16", "FP16", 16, "float", "float16", "FP16"),
        _t("bf16", "BF16", 16, "float", "bfloat16", "BF16"),
        _t("f8e4m3", "F8E4M3", 8, "float", "float8_e4m3fn", None),
        _t("f8e5m2", "F8E5M2", 8, "float", "float8_e5m2", None),
        _t("f8e8m0", "F8E8M0", 8, "float", "float8_e8m0fnu", None),
        _t("f4e2m1", "F4E2M1", 4, "float", "float4_e2m1fn", None),
        _t("nf4", "NF4", 4, "float", "float32", None),
        _t("i64", "I64", 64, "int", "int64", "INT64"),
        _t("i32", "I32", 32, "int", "int32", "INT32"),
        _t("i16", "I16", 16, "int", "int16", "INT16"),
        _t("i8", "I8", 8, "int", "int8", "INT8"),
        _t("i4", "I4", 4, "int", "int8", None),
        _t("u64", "U64", 64, "uint", "uint64", "UINT64"),
        _t("u32", "U32", 32, "uint", "uint32", "UINT32"),
        _t("u16", "U16", 16, "uint", "uint16", "UINT16"),
        _t("u8", "U8", 8, "uint", "uint8", "UINT8"),
        _t("u6", "U6", 6, "uint", "uint8", None),
        _t("u4", "U4", 4, "uint", "uint8", None),
        _t("u3", "U3", 3, "uint", "uint8", None),
        _t("u2", "U2", 2, "uint", "uint8", None),
        _t("u1", "BIN", 1, "uint", "uint8", None),
        _t("boolean", "BOOL", 8, "bool", "bool_", "BOOL"),
        _t("string", "STRING", 0, "string", None, "BYTES"),
        _t("dynamic", "UNSPECIFIED", 0, "dynamic", None, None),
    )
}

# Names OpenVINO's IR reader accepts in element_type (case-insensitively) besides the canonical ones.
_ELEMENT_ALIASES = {"undefined": "dynamic"}
# Names it accepts in a port's precision attribute: the upper-case precisions, U1, bin, and canonical names and aliases
# (in their own case: "undefined", not "UNDEFINED").
_PRECISIONS = {t.precision: t for t in ELEMENT_TYPES.values()} | {"U1": ELEMENT_TYPES["u1"], "bin": ELEMENT_TYPES["u1"]}
_KSERVE = {t.kserve: t for t in ELEMENT_TYPES.values() if t.kserve}


def _expected_names() -> str:
    return ", ".join(ELEMENT_TYPES)


def element_type(name: str) -> ElementType:
    """The element type named in an ``element_type`` / ``destination_type`` attribute: in any case, blanks not
    trimmed (OpenVINO refuses ``"f32 "``)."""
    key = name.lower()
    key = _ELEMENT_ALIASES.get(key, key)
    try:
        return ELEMENT_TYPES[key]
    except KeyError:
        raise ElementTypeError(f"unknown element type {name!r}; expected one of: {_expected_names()}") from None


def element_type_from_precision(precision: str) -> ElementType:
    """The element type named by a port's ``precision`` attribute (``FP32``, ``I64``, ``BIN``...)."""
    found = _PRECISIONS.get(precision) or ELEMENT_TYPES.get(_ELEMENT_ALIASES.get(precision, precision))
    if found is None:
        raise ElementTypeError(f"unknown port precision {precision!r}; expected one of: {', '.join(_PRECISIONS)}")
    return found


def element_type_from_kserve(datatype: str) -> ElementType:
    """The element type of a KServe v2 datatype name (``FP32``, ``INT64``, ``BOOL``...), spelled as the protocol
    spells it (Triton refuses ``fp32``)."""
    try:
        return _KSERVE[datatype]
    except KeyError:
        case = " (upper case, as the protocol spells them)" if datatype.upper() in _KSERVE else ""
        raise ElementTypeError(f"unknown datatype {datatype!r}; expected one of: {', '.join(_KSERVE)}{case}") from None


def element_type_for_numpy(dtype: npt.DTypeLike) -> ElementType:
    """The element type whose values a NumPy array of ``dtype`` holds directly."""
    import numpy as np

    dt = np.dtype(dtype)
    for t in ELEMENT_TYPES.values():  # (a packed type held in a wider dtype is not that dtype's: f4e2m1 has its own)
        if t.numpy is not None and (not t.is_packed or t.name == "f4e2m1") and t.numpy == dt:
            return t
    if dt.kind in ("U", "S", "O"):
        return ELEMENT_TYPES["string"]
    raise ElementTypeError(f"NumPy dtype {dt} has no OpenVINO element type")
