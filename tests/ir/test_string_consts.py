"""String Consts whose packed bytes break OpenVINO's rules: ovreduce refuses a model exactly where OpenVINO's
``read_model`` refuses it, and otherwise reads the strings OpenVINO reads (a first offset past 0, bytes after the
last string and more strings than the shape holds are all read)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovreduce.check import check_model
from ovreduce.errors import WeightsError
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.parser import load_ir
from ovreduce.ir.values import decode


def _packed(count: int, offsets: list[int], chars: bytes) -> bytes:
    return struct.pack("<i", count) + struct.pack(f"<{len(offsets)}i", *offsets) + chars


CASES = {
    "plain": (2, _packed(2, [0, 2, 5], b"abcde")),
    "scalar": (1, _packed(1, [0, 3], b"abc")),
    "none": (0, _packed(0, [0], b"")),
    "first-offset-past-0": (2, _packed(2, [1, 2, 5], b"abcde")),
    "bytes-after-the-last": (2, _packed(2, [0, 1, 2], b"abcde")),
    "more-strings-than-the-shape": (2, _packed(3, [0, 1, 2, 3], b"abc")),
    "fewer-strings-than-the-shape": (2, _packed(1, [0, 1], b"abc")),
    "backwards": (2, _packed(2, [0, 4, 2], b"abcde")),
    "past-the-end": (2, _packed(2, [0, 2, 9], b"abcde")),
    "negative-offset": (2, _packed(2, [-1, 2, 5], b"abcde")),
    "negative-count": (2, _packed(-1, [0, 2, 5], b"abcde")),
    "huge-count": (2, _packed(0x7FFFFFFF, [0, 2, 5], b"abcde")),
    "an-extra-string-past-the-end": (2, _packed(3, [0, 1, 2, 99], b"abc")),
}


def _model(folder: Path, count: int, packed: bytes) -> Path:
    """A ReduceSum model with a string Const of ``count`` elements (shape [] for 1) beside it, to its own Result."""
    dims = "" if count == 1 else f"<dim>{count}</dim>"
    shape = "" if count == 1 else str(count)
    xml = f"""<?xml version="1.0"?>
<net name="strings" version="11">
<layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/><output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>
<layer id="1" name="axes" type="Const" version="opset1"><data element_type="i64" shape="1" offset="0" size="8"/><output><port id="0" precision="I64"><dim>1</dim></port></output></layer>
<layer id="2" name="sum" type="ReduceSum" version="opset1"><data keep_dims="false"/><input><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port><port id="1" precision="I64"><dim>1</dim></port></input><output><port id="2" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>2</dim></port></input></layer>
<layer id="4" name="s" type="Const" version="opset1"><data element_type="string" shape="{shape}" offset="8" size="{len(packed)}"/><output><port id="0" precision="STRING">{dims}</port></output></layer>
<layer id="5" name="out2" type="Result" version="opset1"><input><port id="0" precision="STRING">{dims}</port></input></layer>
</layers>
<edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/><edge from-layer="1" from-port="0" to-layer="2" to-port="1"/><edge from-layer="2" from-port="2" to-layer="3" to-port="0"/><edge from-layer="4" from-port="0" to-layer="5" to-port="0"/></edges>
</net>
"""  # noqa: E501
    path = folder / "strings.xml"
    path.write_text(xml)
    path.with_suffix(".bin").write_bytes(np.array([1], np.int64).tobytes() + packed)
    return path


UNDEFINED = {"fewer-strings-than-the-shape"}
"""OpenVINO reads past the Const's bytes here: it fails to allocate (std::bad_alloc) or reads whatever lies there."""


@pytest.mark.parametrize("case", CASES)
def test_string_consts_are_read_as_openvino_reads_them(tmp_path: Path, case: str) -> None:
    count, packed = CASES[case]
    path = _model(tmp_path, count, packed)
    expected: list[str] | None = None
    if case not in UNDEFINED:
        try:
            const = next(op for op in ov.Core().read_model(path).get_ordered_ops() if op.get_friendly_name() == "s")
            expected = list(const.get_value_strings())
        except Exception:
            expected = None
    if expected is None:
        with pytest.raises(WeightsError) as refused:
            check_model(load_ir(path))
        assert "name='s' (Const)" in refused.value.message, refused.value.message
        return
    assert check_model(load_ir(path)).ok
    assert list(decode(element_type("string"), packed, count)) == expected
