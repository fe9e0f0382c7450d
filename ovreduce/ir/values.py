"""Decoding Const bytes into NumPy arrays, for every element type OpenVINO serializes (see :mod:`.dtypes`)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from ovreduce.errors import WeightsError
from ovreduce.ir.dtypes import ElementType

__all__ = ["decode"]

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


def string_spans(buf: bytes | memoryview, count: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], bytes]:
    """The begin and end of each of the first ``count`` strings of a string Const's packed bytes, and the bytes they
    index into: an int32 number of strings N, N + 1 int32 offsets, the characters. Held to OpenVINO's rules on
    reading them: N not negative, the offsets inside the bytes, every string's begin 0 or more and not past its end,
    every end inside the characters; at least ``count`` strings (the Const's shape). An offset may start past 0 and
    bytes may follow the last string, as OpenVINO allows."""
    data = bytes(buf)
    if len(data) < 4:
        raise WeightsError(f"its packed strings have {len(data)} bytes, too few for their count (4 bytes)")
    stored = int.from_bytes(data[:4], "little", signed=True)
    header = 4 * (stored + 2)
    if stored < 0 or header > len(data):
        raise WeightsError(f"its packed strings give their count as {stored}, whose offsets alone take "
                           f"{max(header, 8)} bytes, and it has {len(data)}; OpenVINO refuses the model")  # fmt: skip
    offsets = np.frombuffer(data, dtype="<i4", count=stored + 1, offset=4).astype(np.int64)
    begins, ends, chars = offsets[:-1], offsets[1:], data[header:]
    bad = np.flatnonzero((begins < 0) | (begins > ends) | (ends > len(chars)))
    if bad.size:
        i = int(bad[0])
        raise WeightsError(f"string {i} of its packed strings runs from offset {begins[i]} to {ends[i]}, outside "
                           f"0..{len(chars)} or backwards; OpenVINO refuses the model")  # fmt: skip
    if stored < count:
        raise WeightsError(f"its packed strings hold {stored} strings, and its shape needs {count}; OpenVINO "
                           f"refuses the model")  # fmt: skip
    return begins[:count], ends[:count], chars


def _decode_strings(buf: bytes | memoryview, count: int) -> npt.NDArray[Any]:
    begins, ends, chars = string_spans(buf, count)
    return np.array([chars[b:e].decode("utf-8", errors="replace") for b, e in zip(begins, ends, strict=True)],
                    dtype=object)  # fmt: skip
