"""Structure-aware fuzzing of everything that reads untrusted bytes: the IR parser (and the check that
follows it), the .npy / .npz / TensorProto readers and the KServe v2 decoder.

Each starts from a valid input and mutates it the way an attacker would: values swapped for hostile ones
(huge, negative, Unicode digits, control characters, empty), elements deleted, duplicated or moved, header
fields rewritten, bytes flipped or cut. Whatever comes out must be a result or one of ovreduce's own errors
(:class:`~ovreduce.errors.OvReduceError`), whose message the user sees; any other exception is a crash. The
budget is fixed (examples per test, no deadline per example), so CI time is bounded.
"""

from __future__ import annotations

import functools
import io
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from ovreduce.check import check_model
from ovreduce.errors import OvReduceError
from ovreduce.ir.parser import parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.tensors import from_kserve, load_tensor

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples"
# CI's budget; OVREDUCE_FUZZ_EXAMPLES=20000 (and OVREDUCE_FUZZ_RANDOM=1 for new seeds) for a longer campaign.
EXAMPLES = int(os.environ.get("OVREDUCE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=not os.environ.get("OVREDUCE_FUZZ_RANDOM"), database=None,
)  # fmt: skip

HOSTILE_VALUES = st.sampled_from([
    "", " ", "-1", "-2", "0", "1", "3", "65", "9" * 25, "9" * 5000, "1e3", "0x10", "1_0", "²", "٣", "３", "1,2",
    ",", "1,,2", "?", "...", "-1..5", "5..3", "nan", "inf", "true", "yes", "a\r\nb", "\x85", "\u202e", "f32", "u1",
    "string", "opset1", "opset999", "ReduceMean", "Parameter", "Const", "If", "Loop", "..", "[", "]",
])  # fmt: skip


def _outcome(call: Any) -> tuple[Any, OvReduceError | None]:
    """What ``call()`` gave: its result, or the ovreduce error it raised (anything else propagates: a crash)."""
    try:
        return call(), None
    except OvReduceError as exc:
        return None, exc


def _sample(name: str) -> tuple[bytes, bytes]:
    return (SAMPLES / f"{name}.xml").read_bytes(), (SAMPLES / f"{name}.bin").read_bytes()


@functools.cache
def _bodies() -> dict[str, bytes]:
    """IRs with If, Loop, TensorIterator and nested bodies (port maps, back edges), as OpenVINO writes them."""
    import tempfile

    from tests.ir import subgraphs

    with tempfile.TemporaryDirectory() as folder:
        models = {"if": subgraphs.if_model(), "loop": subgraphs.loop_model(keep_dims=True), "ti": subgraphs.ti_model(),
                  "nested": subgraphs.nested_model(), "padded": subgraphs.padded_loop_model()}  # fmt: skip
        return {name: subgraphs.save(model, Path(folder), name).read_bytes() for name, model in models.items()}


@st.composite
def mutated_ir(draw: st.DrawFn) -> bytes:
    """A bundled sample IR, or one with sub-graph bodies, with a few structure-aware mutations."""
    source = draw(st.sampled_from(["all_reductions", "spec_examples", "dynamic", "runtime_axes", "rmsnorm", "if",
                                   "loop", "ti", "nested", "padded"]))  # fmt: skip
    xml = _bodies()[source] if source in _bodies() else _sample(source)[0]
    root = etree.fromstring(xml)
    elements = list(root.iter())
    for _ in range(draw(st.integers(1, 4))):
        el = elements[draw(st.integers(0, len(elements) - 1))]
        action = draw(st.sampled_from(["attr", "text", "delete", "duplicate", "new_attr", "move"]))
        if action == "attr" and el.attrib:
            key = draw(st.sampled_from(sorted(el.attrib)))
            el.set(key, draw(HOSTILE_VALUES))
        elif action == "new_attr":
            attr = draw(st.sampled_from(["axes", "keep_dims", "shape", "element_type", "offset", "size", "id", "stride",
                                         "start", "end", "part_size", "axis", "external_port_id", "internal_layer_id",
                                         "from-layer", "to-layer", "from-port", "to-port"]))  # fmt: skip
            el.set(attr, draw(HOSTILE_VALUES))
        elif action == "text":
            el.text = draw(HOSTILE_VALUES)
        elif action == "delete" and el.getparent() is not None:
            el.getparent().remove(el)
        elif action == "duplicate" and el.getparent() is not None:
            el.getparent().append(etree.fromstring(etree.tostring(el)))
        elif action == "move" and el.getparent() is not None:
            target = elements[draw(st.integers(0, len(elements) - 1))]
            if el not in target.iterancestors() and el is not target:
                el.getparent().remove(el)
                target.append(el)
    return bytes(etree.tostring(root))


@FUZZ
@given(mutated_ir(), st.sampled_from(["all_reductions", "spec_examples"]))
def test_ir_parser_and_check_never_crash(xml: bytes, weights_of: str) -> None:
    _, weights = _sample(weights_of)
    model, error = _outcome(lambda: parse_ir(xml, Weights(weights)))
    if model is None:
        assert error is not None and error.message
        return
    try:
        _, error = _outcome(lambda: check_model(model))
        assert error is None or error.message
    finally:
        model.close()


@FUZZ
@given(st.binary(max_size=4096))
def test_ir_parser_on_random_bytes(data: bytes) -> None:
    model, error = _outcome(lambda: parse_ir(data))
    if model is not None:
        model.close()
    assert model is not None or (error is not None and error.message)


def _npy(array: Any) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


@st.composite
def mutated_npy(draw: st.DrawFn) -> bytes:
    data = bytearray(_npy(np.arange(24, dtype=draw(st.sampled_from(["<f4", "<i8", "|u1", ">f8"]))).reshape(2, 3, 4)))
    header_end = data.index(b"\n") + 1
    kind = draw(st.sampled_from(["header", "flip", "cut", "append"]))
    if kind == "header":
        header = draw(st.sampled_from([
            "{'descr': '<f4', 'fortran_order': False, 'shape': (10**12,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }",
            "{'descr': 'O', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f4', 'fortran_order': True, 'shape': (1000000, 1000000), }",
            "{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }",
            "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
            "{'descr': '<f4', 'shape': (2,), }", "[1, 2]", "__import__('os')", "{",
        ]))  # fmt: skip
        header += " " * (-(len(header) + 11) % 64) + "\n"
        data = bytearray(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()) + data[header_end:]
    elif kind == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    elif kind == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    else:
        data += draw(st.binary(max_size=64))
    return bytes(data)


@FUZZ
@given(mutated_npy())
def test_npy_reader_never_crashes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("npy") / "x.npy"
    path.write_bytes(data)
    array, error = _outcome(lambda: load_tensor(str(path), 1 << 20))
    assert (array is not None and array.size <= 1 << 20) or (error is not None and error.message)


@FUZZ
@given(mutated_npy(), st.booleans(), st.sampled_from(["x", "x.npy", "../x", "", "a/b"]))
def test_npz_reader_never_crashes(
    tmp_path_factory: pytest.TempPathFactory, member: bytes, compressed: bool, name: str
) -> None:
    path = tmp_path_factory.mktemp("npz") / "x.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED) as z:
        z.writestr(name or "empty", member)
    array, error = _outcome(lambda: load_tensor(str(path), 1 << 20))
    assert array is not None or (error is not None and error.message)


@FUZZ
@given(st.binary(max_size=512), st.integers(0, 200))
def test_tensor_proto_reader_never_crashes(tmp_path_factory: pytest.TempPathFactory, noise: bytes, cut: int) -> None:
    from onnx import numpy_helper

    valid = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x").SerializeToString()
    path = tmp_path_factory.mktemp("pb") / "x.pb"
    path.write_bytes(valid[:cut] + noise)
    array, error = _outcome(lambda: load_tensor(str(path), 1 << 20))
    assert array is not None or (error is not None and error.message)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=20,
)


@FUZZ
@given(
    st.one_of(
        JSON_VALUES, st.sampled_from(["FP16", "BF16", "FP32", "FP64", "INT8", "UINT8", "INT64", "BOOL", "BYTES"])
    ),
    st.one_of(JSON_VALUES, st.lists(st.integers(-2, 5), max_size=4)),
    JSON_VALUES,
)
def test_kserve_decoder_never_crashes(datatype: Any, shape: Any, data: Any) -> None:
    array, error = _outcome(lambda: from_kserve({"name": "x", "datatype": datatype, "shape": shape, "data": data}, "x"))
    assert (array is not None and list(array.shape) == shape) or (error is not None and error.message)
