"""ovreduce.tensors: loading .npy / .npz / ONNX TensorProto files, and KServe v2 JSON tensors both ways."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from onnx import numpy_helper

from ovreduce.errors import InputError, LimitExceededError
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.shapes import PartialShape
from ovreduce.tensors import conform_array, from_kserve, load_tensor, to_kserve

BF16 = np.dtype(ml_dtypes.bfloat16)


def _same(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind in "fV":
        assert np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True)
    else:
        assert np.array_equal(a, b)


# -- files ----------------------------------------------------------------------------------------------------
A = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
B = np.array([[1, -2], [3, -4]], dtype=np.int64)


def test_load_npy(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", A)
    _same(load_tensor(str(tmp_path / "a.npy")), A)


def test_load_npy_scalar_and_bf16_bits(tmp_path: Path) -> None:
    np.save(tmp_path / "s.npy", np.array(7, np.int8))
    _same(load_tensor(str(tmp_path / "s.npy")), np.array(7, np.int8))


def test_load_npz_single_entry(tmp_path: Path) -> None:
    np.savez(tmp_path / "one.npz", only=A)
    _same(load_tensor(str(tmp_path / "one.npz")), A)


def test_load_npz_named_entry(tmp_path: Path) -> None:
    np.savez(tmp_path / "two.npz", a=A, b=B)
    _same(load_tensor(f"{tmp_path / 'two.npz'}:b"), B)
    _same(load_tensor(f"{tmp_path / 'two.npz'}:a"), A)


@pytest.mark.parametrize(
    "array",
    [
        pytest.param(A, id="f32"),
        pytest.param(B, id="i64"),
        pytest.param(np.array([True, False]), id="bool"),
        pytest.param(np.array([1.5, -0.0], np.float16), id="f16"),
        pytest.param(np.array([[255, 0]], np.uint8), id="u8"),
        pytest.param(np.array([1.0, 2.5], np.float64), id="f64"),
    ],
)
def test_load_onnx_tensor_proto(tmp_path: Path, array: npt.NDArray[Any]) -> None:
    path = tmp_path / "t.pb"
    path.write_bytes(numpy_helper.from_array(array, name="t").SerializeToString())
    _same(load_tensor(str(path)), array)


def _write(tmp_path: Path, name: str, content: bytes) -> str:
    (tmp_path / name).write_bytes(content)
    return str(tmp_path / name)


def _npy_bytes(array: npt.NDArray[Any], tmp_path: Path) -> bytes:
    np.save(tmp_path / "scratch.npy", array)
    return (tmp_path / "scratch.npy").read_bytes()


def _error_cases(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(spec given to load_tensor, the path the message must name, what the message must say)."""
    np.savez(tmp_path / "two.npz", a=A, b=B)
    np.savez(tmp_path / "one.npz", a=A)
    np.savez(tmp_path / "none.npz")
    (tmp_path / "x.data").write_bytes(bytes(24))
    full = _npy_bytes(np.arange(100, dtype=np.int64), tmp_path)
    return [
        (str(tmp_path / "missing.npy"), "missing.npy", "no such file"),
        (str(tmp_path / "missing.npz") + ":a", "missing.npz", "no such file"),
        (str(tmp_path / "two.npz"), "two.npz", "holds 2 arrays (a, b); name one as"),
        (str(tmp_path / "none.npz"), "none.npz", "holds 0 arrays"),
        (str(tmp_path / "two.npz") + ":c", "two.npz", "has no entry 'c' (entries: a, b)"),
        (str(tmp_path / "one.npz") + ":b", "one.npz", "has no entry 'b' (entries: a)"),
        (_write(tmp_path, "data.txt", b"1 2 3"), "data.txt", "unknown tensor file type '.txt'"),
        (_write(tmp_path, "data.csv", b"1,2"), "data.csv", "expected .npy, .npz or .pb"),
        (_write(tmp_path, "garbage.npy", b"\x00\x01not an npy file" * 8), "garbage.npy", "not a valid .npy header"),
        (
            _write(tmp_path, "truncated.npy", full[:-40]),
            "truncated.npy",
            "the header declares shape [100] of int64 (800 bytes) but the file holds only 760 bytes",
        ),
        (_write(tmp_path, "empty.npy", b""), "empty.npy", "not a valid .npy header"),
        (_write(tmp_path, "garbage.npz", b"PK\x03\x04 broken zip" * 4), "garbage.npz", "cannot read the tensor"),
        (_write(tmp_path, "garbage.pb", b"\xff\xff\xff\xff\xff\xff"), "garbage.pb", "not a readable ONNX TensorProto"),
        (_write(tmp_path, "array.npz", full), "array.npz", "is an .npy file, not an .npz archive"),
        (
            _write(tmp_path, "call.npy", _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (f(),)}")),
            "call.npy",
            "not a valid .npy header: it holds an expression where a .npy header holds only literals",
        ),
        (
            _write(tmp_path, "negative.npy", _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3)}")),
            "negative.npy",
            "the header declares shape [-1, 3]; expected sizes >= 0",
        ),
        (
            _write(
                tmp_path,
                "long.npy",
                _npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}" + " " * 20_000),
            ),
            "long.npy",
            "it declares 20,056 bytes, more than the 10,000 any array's header fits in",
        ),
        (_write(tmp_path, "type.pb", _proto(data_type=999)), "type.pb", "data_type 999 is no ONNX element type"),
        (
            _write(tmp_path, "offset.pb", _proto(offset="abc")),
            "offset.pb",
            "the tensor keeps its data in 'x.data' at offset 'abc', which is not a count of bytes",
        ),
        (
            _write(tmp_path, "length.pb", _proto(length="-5")),
            "length.pb",
            "the tensor keeps its data in 'x.data' at length '-5', which is not a count of bytes",
        ),
        (_write(tmp_path, "archive.npy", (tmp_path / "one.npz").read_bytes()), "archive.npy", "is an .npz archive"),
    ]


def _npy_header(header: str) -> bytes:
    """An .npy version 1.0 file of ``header`` and no data."""
    text = header.encode().ljust(117) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text


def _proto(data_type: int | None = None, **external: str) -> bytes:
    """A 2x3 f32 TensorProto, of ``data_type`` or with its data in x.data at ``external`` offset/length."""
    from onnx import TensorProto

    proto = numpy_helper.from_array(np.zeros((2, 3), np.float32), "x")
    if data_type is not None:
        proto.data_type = data_type
    if external:
        proto.ClearField("raw_data")
        proto.data_location = TensorProto.EXTERNAL
        for key, value in {"location": "x.data", **external}.items():
            proto.external_data.add(key=key, value=value)
    return proto.SerializeToString()


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    for spec, name, message in _error_cases(tmp_path):
        with pytest.raises(InputError) as info:
            load_tensor(spec)
        text = str(info.value)
        assert name in text and message in text, (spec, text)
        assert "Traceback" not in text


def test_pickled_npy_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match=r"obj\.npy: holds Python objects, which ovreduce does not load"):
        load_tensor(str(tmp_path / "obj.npy"))


# -- KServe v2 --------------------------------------------------------------------------------------------------
KSERVE_VALUES: dict[str, npt.NDArray[Any]] = {
    "FP64": np.array([[0.1, -1e300], [math.nan, math.inf]], np.float64),
    "FP32": np.array([[0.1, -3.4e38], [-math.inf, math.nan]], np.float32),
    "FP16": np.array([[65504.0, -0.0], [math.nan, 6e-8]], np.float16),
    "BF16": np.array([[3.38e38, 1.0078125], [-math.inf, math.nan]], BF16),
    "INT64": np.array([[-(2**63), 2**63 - 1], [0, -1]], np.int64),
    "INT32": np.array([[-(2**31), 2**31 - 1], [0, -1]], np.int32),
    "INT16": np.array([[-(2**15), 2**15 - 1], [0, -1]], np.int16),
    "INT8": np.array([[-128, 127], [0, -1]], np.int8),
    "UINT64": np.array([[0, 2**64 - 1], [2**63, 1]], np.uint64),
    "UINT32": np.array([[0, 2**32 - 1], [2**31, 1]], np.uint32),
    "UINT16": np.array([[0, 2**16 - 1], [2**15, 1]], np.uint16),
    "UINT8": np.array([[0, 255], [128, 1]], np.uint8),
    "BOOL": np.array([[True, False], [False, True]]),
}


def test_every_executable_kserve_datatype_is_covered() -> None:
    names = {t.kserve for t in ELEMENT_TYPES.values() if t.kserve}
    assert names - set(KSERVE_VALUES) == {"BYTES"}  # strings have no reduction to run


@pytest.mark.parametrize("datatype", list(KSERVE_VALUES))
def test_kserve_round_trip(datatype: str) -> None:
    array = KSERVE_VALUES[datatype]
    doc = to_kserve("x", array)
    assert doc["name"] == "x"
    assert doc["datatype"] == datatype
    assert doc["shape"] == [2, 2]
    text = json.dumps(doc, allow_nan=False)  # real JSON: NaN and infinities travel as strings
    back = from_kserve(json.loads(text), "x")
    _same(back, array)


def test_kserve_special_floats_are_strings() -> None:
    doc = to_kserve("x", np.array([math.nan, math.inf, -math.inf, 1.5], np.float32))
    assert doc["data"] == ["NaN", "Infinity", "-Infinity", 1.5]
    back = from_kserve(doc, "x")  # read back, and as Python's JSON writes them (bare NaN, Infinity)
    _same(back, np.array([math.nan, math.inf, -math.inf, 1.5], np.float32))
    _same(from_kserve(json.loads(json.dumps({**doc, "data": [math.nan, math.inf, -math.inf, 1.5]})), "x"), back)


@pytest.mark.parametrize(
    ("values", "dtype", "etype"),
    [([-1, 0, 3], np.int64, "u64"), ([2**64 - 2], np.uint64, "i64"), ([2**63], np.uint64, "i64"),
     ([-1], np.int8, "u8"), ([300], np.int64, "i8"), ([-129], np.int32, "i8")],
)  # fmt: skip
def test_integers_that_do_not_fit_the_port_are_refused(values: list[int], dtype: type, etype: str) -> None:
    """By value, not by a round trip: -1 goes to u64 and back unchanged, yet is 2^64-1 there."""
    target = next(t for t in ELEMENT_TYPES.values() if t.name == etype)
    array = np.array(values, dtype)
    with pytest.raises(InputError, match=f"do not fit in {etype}"):
        conform_array(array, target, PartialShape.static(array.shape), "x")
    fits = np.array([0, 1, 2], dtype)
    assert conform_array(fits, target, PartialShape.static(fits.shape), "x").tolist() == [0, 1, 2]


def test_kserve_nested_data_is_row_major() -> None:
    back = from_kserve({"datatype": "INT32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]}, "x")
    _same(back, np.arange(1, 7, dtype=np.int32).reshape(2, 3))


def test_kserve_scalar_and_empty() -> None:
    _same(from_kserve({"datatype": "FP32", "shape": [], "data": [2.5]}, "x"), np.array(2.5, np.float32))
    _same(from_kserve({"datatype": "FP32", "shape": [0, 3], "data": []}, "x"), np.zeros((0, 3), np.float32))


def test_kserve_bytes_are_read_as_text() -> None:
    """BYTES data is read as the text it holds, judged against the port it is given for as any other type is (a
    layer's number input refuses it, naming its type: tests/api/test_run.py)."""
    doc = to_kserve("s", np.array(["ab", "c"]))
    assert doc["datatype"] == "BYTES" and doc["data"] == ["ab", "c"]
    assert from_kserve(doc, "s").tolist() == ["ab", "c"]


@pytest.mark.parametrize(
    ("tensor", "message"),
    [
        pytest.param(
            {"datatype": "FP32", "shape": [2, 2], "data": [1.0, 2.0, 3.0]},
            "needs 4 values, data holds 3",
            id="too-short",
        ),
        pytest.param(
            {"datatype": "INT8", "shape": [2], "data": [[1, 2], [3]]},
            "data[0] is a list of 2 where shape [2] has a value",
            id="too-long-nested",
        ),
        pytest.param({"datatype": "FP128", "shape": [1], "data": [1.0]}, "unknown datatype 'FP128'", id="datatype"),
        pytest.param({"shape": [1], "data": [1.0]}, "unknown datatype ''", id="no-datatype"),
        pytest.param(
            {"datatype": "FP32", "shape": [-1, 2], "data": []},
            "shape must be a list of non-negative",
            id="negative-dim",
        ),
        pytest.param(
            {"datatype": "FP32", "shape": [True], "data": [1.0]}, "shape must be a list of non-negative", id="bool-dim"
        ),
        pytest.param({"datatype": "FP32", "shape": "2", "data": [1.0, 2.0]}, "shape must be a list", id="shape-text"),
        pytest.param({"datatype": "FP32", "shape": [2], "data": "1,2"}, "data must be a list, got str", id="data-text"),
        pytest.param(
            {"datatype": "INT32", "shape": [2], "data": [1, True]},
            "value true at index 1 is not an integer",
            id="bool-for-int",
        ),
        pytest.param(
            {"datatype": "INT32", "shape": [2], "data": [1, 1.5]},
            "value 1.5 at index 1 is not an integer",
            id="float-for-int",
        ),
        pytest.param(
            {"datatype": "UINT8", "shape": [2], "data": [255, 256]},
            "value 256 at index 1 is outside the UINT8 range [0, 255]",
            id="u8-too-big",
        ),
        pytest.param(
            {"datatype": "INT8", "shape": [1], "data": [-129]},
            "value -129 at index 0 is outside the INT8 range [-128, 127]",
            id="i8-too-small",
        ),
        pytest.param(
            {"datatype": "UINT64", "shape": [1], "data": [2**64]}, "outside the UINT64 range", id="u64-too-big"
        ),
        pytest.param(
            {"datatype": "INT64", "shape": [1], "data": [-(2**63) - 1]}, "outside the INT64 range", id="i64-too-small"
        ),
        pytest.param({"datatype": "UINT32", "shape": [1], "data": [-1]}, "outside the UINT32 range", id="negative-u32"),
        pytest.param(
            {"datatype": "BOOL", "shape": [2], "data": [True, 2]}, "value 2 at index 1 is not a BOOL", id="bool-2"
        ),
        pytest.param(
            {"datatype": "FP32", "shape": [1], "data": ["one"]},
            'value "one" at index 0 is not a number',
            id="text-for-float",
        ),
        # float() reads these: a number in text, an underscore, spaces, a bool, NaN in another spelling
        pytest.param(
            {"datatype": "FP32", "shape": [2], "data": [1.0, "7"]},
            'value "7" at index 1 is not a number',
            id="number-as-text",
        ),
        pytest.param({"datatype": "FP16", "shape": [1], "data": [" 1_0 "]}, "is not a number", id="underscore"),
        pytest.param({"datatype": "FP32", "shape": [1], "data": [True]}, "value true at index 0", id="bool-for-float"),
        pytest.param({"datatype": "FP64", "shape": [1], "data": ["nan "]}, '"NaN", "Infinity"', id="nan-and-space"),
        pytest.param({"datatype": "BOOL", "shape": [1], "data": [1.0]}, "1.0 at index 0 is not a BOOL", id="bool-1.0"),
    ],
)
def test_from_kserve_errors(tensor: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        from_kserve(tensor, "inputs[0]")
    assert str(info.value).startswith("inputs[0]: ") or "cannot be executed" in str(info.value)
    assert message in str(info.value)


# -- budgets before allocation -----------------------------------------------------------------------------------
def _limited(code: str, memory: int = 1 << 30) -> subprocess.CompletedProcess[str]:
    """``code`` in a child whose address space is limited to ``memory`` bytes."""
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
    return subprocess.run([sys.executable, "-c", limit + code], capture_output=True, text=True, timeout=60, check=False)


def test_npy_header_declaring_a_trillion_elements_is_refused_before_allocating(tmp_path: Path) -> None:
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }"
    header += " " * (118 - len(header)) + "\n"
    (tmp_path / "big.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    assert (tmp_path / "big.npy").stat().st_size < 200
    with pytest.raises(LimitExceededError, match=r"shape \[1000000, 1000000\] has 1000000000000 elements"):
        load_tensor(str(tmp_path / "big.npy"))
    with pytest.raises(InputError, match=r"declares shape \[1000000, 1000000\] of float32 \(4000000000000 bytes\)"):
        load_tensor(str(tmp_path / "big.npy"), max_elements=None)


def test_npz_bomb_is_refused_before_inflating(tmp_path: Path) -> None:
    """An entry that inflates to 1.6 GB from a ~1.5 MB archive: refused by its header, under a 1 GiB
    address-space limit, with the element count."""
    import zipfile

    path = tmp_path / "bomb.npz"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (400000000,), }"
    header += " " * (118 - len(header)) + "\n"
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("x.npy", "w", force_zip64=True) as member,
    ):
        member.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        block = bytes(1 << 24)
        for _ in range(100):
            member.write(block)
    assert path.stat().st_size < 4 << 20
    done = _limited(f"from ovreduce.tensors import load_tensor\nload_tensor({str(path)!r}, max_elements=1 << 22)")
    assert (
        "LimitExceededError" in done.stderr and "has 400000000 elements, more than the limit of 4194304" in done.stderr
    )
    assert "MemoryError" not in done.stderr


def test_tensor_bytes_are_counted_only_for_types_of_a_settled_size() -> None:
    """Data held to the byte count of its dims is refused otherwise: a count for a type stored another way than onnx
    sizes it would refuse a valid model."""
    from onnx import TensorProto

    from ovreduce.tensors import tensor_nbytes

    def proto(data_type: int) -> Any:
        tensor = TensorProto(data_type=data_type)
        tensor.dims.extend([3, 5])
        return tensor

    assert [tensor_nbytes(proto(t)) for t in (1, 10, 22, 25, 17)] == [60, 30, 8, 4, 15]  # f32 f16 int4 uint2 f8
    assert [tensor_nbytes(proto(t)) for t in (0, 8, 27, 28)] == [None] * 4  # undefined, string, the 6-bit floats


def test_an_encrypted_npz_entry_is_an_input_error(tmp_path: Path) -> None:
    """zipfile asks for a password (RuntimeError): ``run`` ended with an internal error."""
    import io
    import zipfile

    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3, np.float32))
    path = tmp_path / "locked.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.npy", buffer.getvalue())
    data = bytearray(path.read_bytes())
    data[data.find(b"PK\x03\x04") + 6] |= 1  # the general purpose flags' bit 0: encrypted
    data[data.find(b"PK\x01\x02") + 8] |= 1
    path.write_bytes(data)
    with pytest.raises(InputError, match=r"locked\.npz:a: is encrypted"):
        load_tensor(str(path))


def test_npy_header_length_is_held_to_its_bound_before_the_header_is_read(tmp_path: Path) -> None:
    """A member whose header declares 4 GiB, and inflates to 1.6 GB of blanks from a ~1.5 MB archive: NumPy reads the
    header whole before it holds it to its bound, and ran out of a 1 GiB address space (3 GB without one)."""
    import zipfile

    path = tmp_path / "header.npz"
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("x.npy", "w", force_zip64=True) as member,
    ):
        member.write(b"\x93NUMPY\x02\x00" + (2**32 - 1).to_bytes(4, "little"))
        block = b" " * (1 << 24)
        for _ in range(100):
            member.write(block)
    assert path.stat().st_size < 4 << 20
    done = _limited(f"from ovreduce.tensors import load_tensor\nload_tensor({str(path)!r})")
    assert "InputError" in done.stderr and "it declares 4,294,967,295 bytes" in done.stderr, done.stderr[-2000:]
    assert "MemoryError" not in done.stderr


def test_external_tensor_data_is_resolved_beside_the_pb_and_never_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from onnx import TensorProto, numpy_helper
    from onnx.external_data_helper import set_external_data

    folder = tmp_path / "tensors"
    folder.mkdir()
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    (folder / "x.data").write_bytes(values.tobytes())
    proto = numpy_helper.from_array(values, "x")
    set_external_data(proto, location="x.data")
    proto.ClearField("raw_data")
    proto.data_location = TensorProto.EXTERNAL
    (folder / "x.pb").write_bytes(proto.SerializeToString())
    monkeypatch.chdir(tmp_path)  # the current directory holds no x.data: it must be found beside the .pb
    assert np.array_equal(load_tensor(str(folder / "x.pb")), values)
    for location in ("../secret.data", "/etc/passwd", "sub/../../secret.data"):
        del proto.external_data[:]
        proto.external_data.add(key="location", value=location)
        (folder / "evil.pb").write_bytes(proto.SerializeToString())
        with pytest.raises(InputError, match=r"keeps its data in .*, outside the folder of the \.pb file"):
            load_tensor(str(folder / "evil.pb"))
    del proto.external_data[:]
    for key, value in (("location", "x.data"), ("offset", "20"), ("length", "24")):
        proto.external_data.add(key=key, value=value)
    (folder / "short.pb").write_bytes(proto.SerializeToString())
    with pytest.raises(InputError, match="holds 24 bytes; offset 20 and length 24 lie outside it"):
        load_tensor(str(folder / "short.pb"))
    (folder / "sub").mkdir()
    odd = [({"location": "x.data", "offset": "30"}, "'x.data', which holds 24 bytes; offset 30 lies outside it"),
           ({"location": "sub"}, "sub', it is a directory, expected an external data file")]  # fmt: skip
    for entries, said in odd:
        del proto.external_data[:]
        for key, value in entries.items():
            proto.external_data.add(key=key, value=value)
        (folder / "odd.pb").write_bytes(proto.SerializeToString())
        with pytest.raises(InputError, match=re.escape(said)):
            load_tensor(str(folder / "odd.pb"))
    # bytes other than the dims need are refused before they are read (a 3 GiB file behind 24 bytes was read whole)
    (folder / "big.data").write_bytes(bytes(4096))
    cases = [({"location": "big.data"}, "4096 bytes from offset 0 (to the end of the file)"),
             ({"location": "x.data", "length": "12"}, "12 bytes from offset 0 (by its length)")]  # fmt: skip
    for entries, said in cases:
        del proto.external_data[:]
        for key, value in entries.items():
            proto.external_data.add(key=key, value=value)
        (folder / "other.pb").write_bytes(proto.SerializeToString())
        with pytest.raises(InputError, match=re.escape(f"{said}, where its dims [2, 3] of FLOAT need 24")):
            load_tensor(str(folder / "other.pb"))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_not_a_tensor_file(device: str, tmp_path: Path) -> None:
    link = tmp_path / "x.npy"
    link.symlink_to(device)
    with pytest.raises(InputError, match="it is a device"):
        load_tensor(str(link))


@pytest.mark.parametrize(("datatype", "value"), [("FP16", 70000.0), ("FP16", -1e6), ("BF16", 1e39), ("FP32", 1e300)])
def test_kserve_floats_out_of_range_are_refused_like_integers(datatype: str, value: float) -> None:
    tensor = {"name": "x", "shape": [2], "datatype": datatype, "data": [1.0, value]}
    with pytest.raises(InputError, match=re.escape(f"value {value!r} at index 1 is outside the {datatype} range")):
        from_kserve(tensor, "input x")


@pytest.mark.parametrize("datatype", ["FP16", "BF16", "FP32"])
def test_kserve_explicit_infinities_and_the_largest_values_pass(datatype: str) -> None:
    largest = {"FP16": 65504.0, "BF16": 3.3895313892515355e38, "FP32": 3.4028234663852886e38}[datatype]
    tensor = {"name": "x", "shape": [3], "datatype": datatype, "data": ["inf", -largest, largest]}
    array = from_kserve(tensor, "input x")
    assert np.isinf(array[0]) and np.isfinite(array[1:].astype(np.float64)).all()


@pytest.mark.parametrize(
    ("values", "src", "etype"),
    [([1e300, 2.0], np.float64, "f32"), ([1e5, 2.0], np.float32, "f16"), ([1e39, 1.0], np.float64, "bf16")],
)
def test_finite_floats_that_would_become_infinite_are_refused(values: list[float], src: Any, etype: str) -> None:
    """A narrowing cast of a given input is refused where it would turn a finite value into inf, as the KServe
    decoding refuses such FP32/FP16 values; infinities given as such, and values in range, pass."""
    shape = PartialShape.static((2,))
    with pytest.raises(InputError, match="would become infinite"):
        conform_array(np.array(values, dtype=src), ELEMENT_TYPES[etype], shape, "input 'x'")
    kept = conform_array(np.array([np.inf, 2.0], dtype=src), ELEMENT_TYPES[etype], shape, "input 'x'")
    assert np.isinf(kept[0]) and kept[1] == 2.0


@pytest.mark.parametrize(
    ("data", "shape", "message"),
    [
        ([[1.0] * 119, [[[[[2.0]]]]], []], [2, 3, 4, 5],
         "data holds 3 items, lists among them, where shape [2, 3, 4, 5] has 2"),
        ([[1, 2, 3], [4, 5]], [2, 3], "data[1] is a list of 2 where shape [2, 3] has a list of 3"),
        ([[1, 2], [3, [4]]], [2, 2], "data[1][1] is a list of 1 where shape [2, 2] has a value"),
        ([[1, 2], 3], [2, 2], "data[1] is a value where shape [2, 2] has a list of 2"),
    ],
)  # fmt: skip
def test_ragged_data_is_no_tensor(data: list[Any], shape: list[int], message: str) -> None:
    """Nested lists follow the shape, level by level: ragged rows whose leaves happen to add up were read."""
    with pytest.raises(InputError, match=re.escape(f"input x: {message}; give flat row-major data, or lists nested")):
        from_kserve({"datatype": "FP32", "shape": shape, "data": data}, "input x")
