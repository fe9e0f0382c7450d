"""Every element type, written by ``ov.save_model`` and read back by ovreduce, against OpenVINO's values.

For each type a model of five Consts (1, 3, 8, 9 and 17 elements, random bit patterns) is saved by
OpenVINO; ovreduce must parse it, agree on the byte size OpenVINO wrote, and decode the same values
OpenVINO holds after ``core.read_model``. OpenVINO's values come from evaluating a Convert of the
read-back Constant with OpenVINO's own reference kernels (exact: no flush-to-zero), and for the narrow
types also from the CPU plugin running a compiled ``Const -> Convert(f32) -> Result``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

from ovreduce import load_ir
from ovreduce.errors import ElementTypeError, WeightsError
from ovreduce.ir.dtypes import (
    ELEMENT_TYPES,
    element_type,
    element_type_for_numpy,
    element_type_from_kserve,
    element_type_from_precision,
)
from ovreduce.ir.model import IRModel, Layer
from ovreduce.ir.values import decode

from . import irxml

TYPES = [name for name, t in ELEMENT_TYPES.items() if t.kind != "dynamic"]
SHAPES = [(1,), (3,), (2, 4), (9,), (17,)]  # 1, 3, 8, 9 and 17 elements

# Byte sizes written from the format definitions (not from ovreduce): bits per element, or a block.
_BITS = {
    "f64": 64, "f32": 32, "f16": 16, "bf16": 16, "f8e4m3": 8, "f8e5m2": 8, "f8e8m0": 8, "f4e2m1": 4, "nf4": 4,
    "i64": 64, "i32": 32, "i16": 16, "i8": 8, "i4": 4, "u64": 64, "u32": 32, "u16": 16, "u8": 8, "u4": 4,
    "u2": 2, "u1": 1, "boolean": 8,
}  # fmt: skip
_BLOCKS = {"u3": (8, 3), "u6": (4, 3)}  # (elements, bytes) per block: low bits in 2 bytes, high bits in 1


def expected_size(name: str, count: int, strings: list[str] | None = None) -> int:
    if name == "string":  # int32 count, count+1 int32 offsets, the UTF-8 characters
        assert strings is not None
        return 4 + 4 * (count + 1) + sum(len(s.encode()) for s in strings)
    if name in _BLOCKS:
        per, nbytes = _BLOCKS[name]
        return -(-count // per) * nbytes
    return -(-count * _BITS[name] // 8)


@dataclass
class Saved:
    name: str
    xml: Path
    model: IRModel  # ovreduce's parse
    ov_consts: dict[str, Any]  # friendly name -> the Constant OpenVINO read back
    ov_sizes: dict[str, int]  # friendly name -> ov.Tensor(type, shape).byte_size
    strings: dict[str, list[str]]


def _random_constant(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> tuple[Any, list[str] | None]:
    if name == "string":
        pool = ["", "a", "héllo", "日本語", "x" * 33, "comma,sep", "\\", "tab\tnl\n"]
        values = [pool[i] for i in rng.integers(0, len(pool), math.prod(shape))]
        return ov.op.Constant(ov.Tensor(np.array(values, dtype=str).reshape(shape))), values
    tensor = ov.Tensor(getattr(ov.Type, name), ov.Shape(list(shape)))
    raw = tensor.data.view(np.uint8).reshape(-1)
    high = 2 if name == "boolean" else 256  # a boolean byte other than 0/1 is not a value
    raw[:] = rng.integers(0, high, raw.size, dtype=np.uint8)
    return ov.op.Constant(tensor), None


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Saved]]:
    rng = np.random.default_rng(20260422)
    core = ov.Core()
    out: dict[str, Saved] = {}
    for name in TYPES:
        folder = tmp_path_factory.mktemp(name)
        results, sizes, strings = [], {}, {}
        for shape in SHAPES:
            const, values = _random_constant(name, shape, rng)
            cname = f"c{math.prod(shape)}"
            const.set_friendly_name(cname)
            results.append(ops.result(const))
            if values is not None:
                strings[cname] = values
            else:
                sizes[cname] = ov.Tensor(getattr(ov.Type, name), ov.Shape(list(shape))).byte_size
        xml = folder / "model.xml"
        ov.save_model(ov.Model(results, [], name), xml, compress_to_fp16=False)
        back = core.read_model(xml)
        consts = {op.get_friendly_name(): op for op in back.get_ordered_ops() if op.get_type_name() == "Constant"}
        out[name] = Saved(name, xml, load_ir(xml), consts, sizes, strings)
    yield out
    for s in out.values():
        s.model.close()


def _const_layers(s: Saved) -> list[Layer]:
    layers = [layer for layer in s.model.layers if layer.type == "Const"]
    assert sorted(layer.name for layer in layers) == sorted(f"c{math.prod(sh)}" for sh in SHAPES)
    return layers


def _openvino_values(const: Any) -> npt.NDArray[Any]:
    """The values OpenVINO holds, via its reference Convert kernel (exact for every type)."""
    etype = ELEMENT_TYPES[const.get_element_type().get_type_name()]
    if etype.kind == "float":
        # f64 holds every float type exactly; OpenVINO's Convert cannot target f64 from these three,
        # and f32 holds them exactly too (f8e8m0's 2^-127 is an f32 subnormal, kept by the reference kernel).
        target = ov.Type.f32 if etype.name in ("f8e8m0", "f4e2m1", "nf4") else ov.Type.f64
    else:
        target = ov.Type.u64 if etype.kind in ("uint", "bool") else ov.Type.i64
    convert = ops.convert(const, target)
    result = ov.Tensor(target, const.get_output_shape(0))
    assert convert.evaluate([result], [const.get_tensor_view()]), f"OpenVINO cannot evaluate Convert from {etype}"
    return np.array(result.data).reshape(-1)


@pytest.mark.parametrize("name", TYPES)
def test_const_element_type_and_precision(saved: dict[str, Saved], name: str) -> None:
    for layer in _const_layers(saved[name]):
        assert layer.element_type is ELEMENT_TYPES[name]
        assert layer.outputs[0].precision is ELEMENT_TYPES[name]
        assert layer.shape is not None and layer.const is not None
        assert layer.const.count == math.prod(layer.shape.to_list())


@pytest.mark.parametrize("name", TYPES)
def test_const_size_is_what_openvino_wrote(saved: dict[str, Saved], name: str) -> None:
    s = saved[name]
    written = {
        el.get("name"): int(el.find("data").get("size"))
        for el in etree.parse(str(s.xml)).getroot().iter("layer")
        if el.get("type") == "Const"
    }
    for layer in _const_layers(s):
        assert layer.const is not None
        assert layer.const.size == written[layer.name]
        assert layer.const.size == expected_size(name, layer.const.count, s.strings.get(layer.name))
        if name != "string":
            assert layer.const.size == s.ov_sizes[layer.name], "OpenVINO's own byte size disagrees"
            assert ELEMENT_TYPES[name].nbytes(layer.const.count) == layer.const.size
        else:
            assert ELEMENT_TYPES[name].nbytes(layer.const.count) is None


@pytest.mark.parametrize("name", TYPES)
def test_decode_equals_openvino_values(saved: dict[str, Saved], name: str) -> None:
    s = saved[name]
    assert s.model.weights is not None
    for layer in _const_layers(s):
        assert layer.const is not None
        ours = decode(layer.element_type, s.model.weights.read(layer.const.offset, layer.const.size), layer.const.count)
        assert ours.shape == (layer.const.count,)
        const = s.ov_consts[layer.name]
        if name == "string":
            assert list(ours) == const.get_value_strings() == s.strings[layer.name]
            continue
        theirs = _openvino_values(const)
        widened = ours.astype(theirs.dtype)
        np.testing.assert_array_equal(widened, theirs, err_msg=f"{name} {layer.name}")  # NaN matches NaN
        if ELEMENT_TYPES[name].kind == "float":  # 0.0 == -0.0 above: the signs must agree too
            np.testing.assert_array_equal(np.signbit(widened), np.signbit(theirs), err_msg=f"{name} {layer.name}")


# Narrow types whose values f32 holds exactly: the CPU plugin itself must produce the same numbers.
CPU_TYPES = [
    n for n in TYPES if ELEMENT_TYPES[n].bitwidth <= 16 and ELEMENT_TYPES[n].kind in ("float", "int", "uint", "bool")
]


@pytest.mark.parametrize("name", CPU_TYPES)
def test_cpu_plugin_agrees_with_decode(saved: dict[str, Saved], name: str) -> None:
    s = saved[name]
    assert s.model.weights is not None
    core = ov.Core()
    layers = sorted(_const_layers(s), key=lambda layer: layer.name)
    model = ov.Model([ops.result(ops.convert(s.ov_consts[layer.name], ov.Type.f32)) for layer in layers], [], name)
    outputs = core.compile_model(model, "CPU")({})
    for i, layer in enumerate(layers):
        assert layer.const is not None
        ours = decode(layer.element_type, s.model.weights.read(layer.const.offset, layer.const.size), layer.const.count)
        ours32 = ours.astype(np.float32)
        theirs = np.asarray(outputs[i]).reshape(-1)
        # The CPU plugin flushes f32 subnormals to zero (bf16 and f8e8m0 have some); everything else is exact.
        subnormal = (ours32 != 0) & (np.abs(ours32) < np.finfo(np.float32).tiny)
        assert np.all(theirs[subnormal] == 0)
        np.testing.assert_array_equal(ours32[~subnormal], theirs[~subnormal], err_msg=f"{name} {layer.name}")


# -- packing, from the format definition (independent decoders) -----------------------------------------
def _independent_decode(name: str, raw: bytes, count: int) -> list[int]:
    """Codes (unsigned ints) of ``count`` elements, written from OpenVINO's packing rules bit by bit."""
    bits = "".join(f"{b:08b}" for b in raw)  # MSB-first bit string
    if name == "u1":
        return [int(bits[i]) for i in range(count)]
    if name in ("u2", "u4", "i4", "nf4", "f4e2m1"):
        w = 2 if name == "u2" else 4
        per = 8 // w
        return [(raw[i // per] >> (w * (i % per))) & ((1 << w) - 1) for i in range(count)]  # LSB-first
    low_bits, high_bits, per = (2, 1, 8) if name == "u3" else (4, 2, 4)
    codes = []
    for i in range(count):
        block, j = divmod(i, per)
        base = 24 * block
        low = int(bits[base + j * low_bits : base + (j + 1) * low_bits], 2)
        high = int(bits[base + 16 + j * high_bits : base + 16 + (j + 1) * high_bits], 2)
        codes.append(high << low_bits | low)
    return codes


# NF4 and F4E2M1 code books written from their definitions (bitsandbytes NF4; OCP MX E2M1).
_NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
        -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
        0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
        0.7229568362236023, 1.0]  # fmt: skip
_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@pytest.mark.parametrize("name", ["u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1"])
@pytest.mark.parametrize("count", [1, 3, 7, 8, 9, 17, 64])
def test_packed_decode_matches_format_definition(name: str, count: int) -> None:
    rng = np.random.default_rng(count)
    etype = ELEMENT_TYPES[name]
    raw = rng.integers(0, 256, expected_size(name, count), dtype=np.uint8).tobytes()
    codes = _independent_decode(name, raw, count)
    if name == "i4":
        expected: list[float] = [c - 16 if c >= 8 else c for c in codes]
    elif name == "nf4":
        expected = [_NF4[c] for c in codes]
    elif name == "f4e2m1":
        expected = [(-1.0 if c & 8 else 1.0) * _E2M1[c & 7] for c in codes]
    else:
        expected = [float(c) for c in codes]
    got = decode(etype, raw, count)
    np.testing.assert_array_equal(got.astype(np.float64), np.array(expected, dtype=np.float32).astype(np.float64))


def test_u1_is_msb_first() -> None:
    assert decode(ELEMENT_TYPES["u1"], b"\x80\x01", 16).tolist() == [1] + [0] * 14 + [1]


def test_u4_is_lsb_first() -> None:
    assert decode(ELEMENT_TYPES["u4"], b"\x21\x43", 4).tolist() == [1, 2, 3, 4]


def test_decode_refuses_wrong_byte_count() -> None:
    with pytest.raises(WeightsError, match=r"9 elements of u3 take 6 bytes, got 5"):
        decode(ELEMENT_TYPES["u3"], b"\x00" * 5, 9)


# -- names ----------------------------------------------------------------------------------------------
def test_precisions_openvino_writes_round_trip(tmp_path: Path) -> None:
    """Every port precision OpenVINO writes (for every type, dynamic included) maps back to that type."""
    results, params = [], []
    for name in TYPES:
        tensor = ov.Tensor(np.array(["s"])) if name == "string" else ov.Tensor(getattr(ov.Type, name), ov.Shape([2]))
        results.append(ops.result(ov.op.Constant(tensor)))
    params.append(ops.parameter([2], ov.Type.dynamic, name="dyn"))
    results.append(ops.result(params[0]))
    ov.save_model(ov.Model(results, params, "all"), tmp_path / "all.xml", compress_to_fp16=False)
    seen = set()
    for layer in etree.parse(str(tmp_path / "all.xml")).getroot().iter("layer"):
        if layer.get("type") not in ("Const", "Parameter"):
            continue
        name = layer.find("data").get("element_type")
        precision = layer.find("output/port").get("precision")
        assert element_type_from_precision(precision) is ELEMENT_TYPES[name], (name, precision)
        assert ELEMENT_TYPES[name].precision == precision
        assert element_type(name) is ELEMENT_TYPES[name]
        seen.add(name)
    assert seen == set(ELEMENT_TYPES)
    assert {"FP32", "BIN", "BOOL", "STRING", "UNSPECIFIED"} <= {t.precision for t in ELEMENT_TYPES.values()}


def test_element_type_names_are_case_insensitive_with_alias() -> None:
    assert element_type("F32") is ELEMENT_TYPES["f32"]
    with pytest.raises(ElementTypeError, match="unknown element type ' F32 '"):  # OpenVINO trims no blank either
        element_type(" F32 ")
    assert element_type("undefined") is ELEMENT_TYPES["dynamic"]
    assert element_type_from_precision("U1") is ELEMENT_TYPES["u1"]


PORT_SPELLINGS = ["FP32", "f32", "fp32", "I64", "i64", "BIN", "U1", "u1", "BOOL", "boolean", "bool", "dynamic",
                  "DYNAMIC", "undefined", "UNDEFINED", "UNSPECIFIED", "unspecified", "FP16", "BF16", "bf16", "U4",
                  "NF4", "nf4", "F8E4M3", "f8e4m3", "STRING", "string", ""]  # fmt: skip


def test_port_precisions_read_as_openvino_reads_them(tmp_path: Path) -> None:
    """A port ``precision`` spelling is read exactly where OpenVINO's reader reads it (``undefined``, its old name
    of the dynamic type, included)."""
    core = ov.Core()
    for spelling in PORT_SPELLINGS:
        path = tmp_path / "m.xml"
        layers = [irxml.parameter(), irxml.layer(1, "relu", "ReLU", inputs=[irxml.port(0, (1, 3))],
                                                 outputs=[irxml.port(1, (1, 3), precision=spelling)]),
                  irxml.result(2)]  # fmt: skip
        path.write_text(irxml.net(layers, [irxml.edge(0, 0, 1, 0), irxml.edge(1, 1, 2, 0)]))
        try:
            core.read_model(path)
            openvino_reads = True
        except RuntimeError:
            openvino_reads = False
        try:
            element_type_from_precision(spelling)
            ours = True
        except ElementTypeError:
            ours = False
        assert ours == openvino_reads, (spelling, openvino_reads)


@pytest.mark.parametrize(
    ("call", "text", "message"),
    [
        pytest.param(element_type, "f128", r"unknown element type 'f128'; expected one of: f64, f32", id="etype"),
        pytest.param(element_type_from_precision, "FP128", r"unknown port precision 'FP128'.*FP32", id="precision"),
        pytest.param(element_type_from_kserve, "FP128", r"unknown datatype 'FP128'.*FP32", id="kserve"),
    ],
)
def test_unknown_names_are_refused(call: Any, text: str, message: str) -> None:
    with pytest.raises(ElementTypeError, match=message) as info:
        call(text)
    assert info.value.code == "ir.element_type"


def test_numpy_round_trip() -> None:
    for t in ELEMENT_TYPES.values():
        if t.numpy is not None and not t.is_packed and t.name != "nf4":
            assert element_type_for_numpy(t.numpy) is t
    assert element_type_for_numpy(np.dtype("U3")) is ELEMENT_TYPES["string"]


# -- sizes of huge counts: Python ints, never wrapped -----------------------------------------------------
@pytest.mark.parametrize(
    ("name", "count", "size"),
    [
        ("i64", 4294967296**2, 8 * 2**64),
        ("f32", 2**63 - 1, 4 * (2**63 - 1)),
        ("u1", 2**64 + 1, 2**61 + 1),
        ("u3", 2**64 + 1, 3 * (2**61 + 1)),
        ("u6", 2**64 + 1, 3 * (2**62 + 1)),
        ("i4", 2**64 - 1, 2**63),
        ("boolean", 2**70, 2**70),
    ],
)
def test_nbytes_of_huge_counts_is_exact(name: str, count: int, size: int) -> None:
    assert ELEMENT_TYPES[name].nbytes(count) == size
    assert expected_size(name, count) == size


@pytest.mark.parametrize(("name", "count", "size", "blocks"), [("u3", 3, 2, 3), ("u3", 9, 4, 6), ("u6", 5, 4, 6)])
def test_a_packed_const_of_its_bits_alone_is_refused_saying_the_blocks(
    tmp_path: Path, name: str, count: int, size: int, blocks: int
) -> None:
    """OpenVINO writes u3 and u6 in whole blocks of 3 bytes; a size of just the bits the values take (which OpenVINO
    also reads) is refused, and the message says the blocks, not only a byte count that seems to contradict it."""
    data = {"element_type": name, "shape": str(count), "offset": "0", "size": str(size)}
    values = irxml.layer(0, "c", "Const", data=data, outputs=[irxml.port(0, [count], name.upper())])
    convert = irxml.layer(1, "cv", "Convert", data={"destination_type": "f32"}, inputs=[irxml.port(0, [count])],
                          outputs=[irxml.port(1, [count])])  # fmt: skip
    out = irxml.layer(2, "out", "Result", inputs=[irxml.port(0, [count])])
    path = tmp_path / "m.xml"
    path.write_text(irxml.net([values, convert, out], [irxml.edge(0, 0, 1, 0), irxml.edge(1, 1, 2, 0)]))
    path.with_suffix(".bin").write_bytes(b"\x00" * 8)
    ov.Core().read_model(path)  # OpenVINO reads it
    with pytest.raises(WeightsError, match=rf"expected {blocks} bytes \({count} elements, packed \d to a block of 3"):
        load_ir(path)
