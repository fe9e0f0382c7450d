"""Model inputs of a packed (sub-byte) or 8-bit float type, which a model converts before it computes: the audit
makes values of the type, packs them as OpenVINO lays such a tensor out, and audits the model; a type the device
takes no input of is said as OpenVINO's refusal, naming the input.

The packing is checked against OpenVINO itself: the values the audit makes, fed through ``to_tensor``, come out of
the model's Convert as the same numbers (a wrong bit order or a wrong code would show as other values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovreduce.audit import audit_model
from ovreduce.backends.feeds import Recipe, make
from ovreduce.backends.openvino import to_tensor
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.parser import load_ir
from ovreduce.tensors import NF4_VALUES

RUNS_ON_CPU = ["u4", "i4", "u2", "nf4", "f4e2m1", "f8e4m3", "f8e5m2", "f8e8m0"]
REFUSED_BY_CPU = ["u1", "u3", "u6"]


def _converted_sum(path: Path, type_name: str, shape: list[int]) -> Path:
    x = ops.parameter(shape, getattr(ov.Type, type_name), name="x")
    wide = ops.convert(x, ov.Type.f32)
    total = ops.reduce_sum(wide, ops.constant(np.array([1], np.int64)), keep_dims=False)
    ov.save_model(ov.Model([total, wide], [x], "packed"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("type_name", RUNS_ON_CPU)
def test_made_values_reach_the_model_as_made(tmp_path: Path, type_name: str) -> None:
    """Differential: what OpenVINO's Convert gives of the tensor fed is the array the audit made (odd lengths
    leave a byte half used)."""
    shape = [3, 7]
    path = _converted_sum(tmp_path / f"{type_name}.xml", type_name, shape)
    etype = element_type(type_name)
    array = make(Recipe("random"), etype, shape, np.random.default_rng(5))
    assert array.shape == tuple(shape)
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer({0: to_tensor(array, type_name)})
    received = request.get_output_tensor(1).data
    np.testing.assert_array_equal(received, np.asarray(array).astype(np.float32))
    if type_name in ("u4", "i4", "u2"):  # every value of the type's range is drawn
        bits = etype.bitwidth
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if type_name == "i4" else (0, (1 << bits) - 1)
        assert lo <= int(array.min()) and int(array.max()) <= hi
    if type_name == "nf4":
        assert np.isin(array, NF4_VALUES).all()


@pytest.mark.parametrize("type_name", ["u4", "nf4", "i4", "f8e4m3"])
def test_a_packed_input_converted_before_a_reduction_is_audited(tmp_path: Path, type_name: str) -> None:
    model = load_ir(_converted_sum(tmp_path / f"{type_name}.xml", type_name, [2, 16]))
    try:
        doc = audit_model(model, precision="f32")
    finally:
        model.close()
    assert doc.error is None, doc.error
    assert [(i.name, i.element_type, tuple(i.shape)) for i in doc.inputs] == [("x", type_name, (2, 16))]
    assert [layer.status for layer in doc.layers] == ["ok"]


def test_a_given_packed_input_is_checked_against_the_types_range(tmp_path: Path) -> None:
    from ovreduce.errors import InputError

    model = load_ir(_converted_sum(tmp_path / "u4.xml", "u4", [2, 4]))
    try:
        doc = audit_model(model, inputs={"x": np.array([[0, 15, 3, 4], [1, 2, 3, 4]], np.int64)}, precision="f32")
        assert doc.error is None and doc.layers[0].status == "ok"
        with pytest.raises(InputError, match=r"do not fit in u4 \[0, 15\]"):
            audit_model(model, inputs={"x": np.array([[0, 16, 3, 4], [1, 2, 3, 4]], np.int64)})
    finally:
        model.close()


@pytest.mark.parametrize("type_name", REFUSED_BY_CPU)
def test_an_input_type_the_device_refuses_is_said_for_that_input(tmp_path: Path, type_name: str) -> None:
    x = ops.parameter([2, 8], getattr(ov.Type, type_name), name="x")
    total = ops.reduce_sum(ops.convert(x, ov.Type.f32), ops.constant(np.array([1], np.int64)), keep_dims=False)
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([total], [x], "packed"), str(path), compress_to_fp16=False)
    with pytest.raises(Exception, match=f"format {type_name} is not supported"):  # OpenVINO's own refusal
        ov.Core().compile_model(str(path), "CPU")
    model = load_ir(path)
    try:
        doc = audit_model(model)
    finally:
        model.close()
    assert doc.error is not None
    assert f"the device takes no {type_name} input (the model's input 'x' is {type_name})" in doc.error
    assert [i.element_type for i in doc.inputs] == [type_name]


@pytest.mark.parametrize("type_name", ["u1", "u2", "u3", "u4", "u6"])
def test_packed_bytes_are_those_of_openvinos_own_constant(type_name: str) -> None:
    """Differential, for the types a CPU takes no input of too: the bytes fed are those OpenVINO's Constant packs the
    same values into (u1 MSB-first, u2 and u4 LSB-first, u3 and u6 in blocks)."""
    etype = element_type(type_name)
    array = make(Recipe("random"), etype, [3, 11], np.random.default_rng(2))
    fed = to_tensor(array, type_name)
    constant = ov.op.Constant(getattr(ov.Type, type_name), ov.Shape([3, 11]), array.reshape(-1).tolist())
    own = constant.get_tensor_view()  # (a view of the constant's memory: the constant is held)
    assert constant.get_vector().tolist() == array.reshape(-1).tolist()
    assert fed.byte_size == own.byte_size
    assert bytes(np.asarray(fed.data).reshape(-1)) == bytes(np.asarray(own.data).reshape(-1))
    assert int(array.min()) >= 0 and int(array.max()) <= (1 << etype.bitwidth) - 1  # within the type's range
