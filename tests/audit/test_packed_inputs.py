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


NARROW_FLOATS = ["f8e4m3", "f8e5m2", "f4e2m1"]


def _reduced(path: Path, type_name: str, op: str, shape: list[int]) -> Path:
    """x (f32) -> Convert to the type -> the reduction over axis 1, in that type -> Convert to f32 (and the converted
    input as a second output)."""
    x = ops.parameter(shape, ov.Type.f32, name="x")
    narrow = ops.convert(x, getattr(ov.Type, type_name))
    red = getattr(ops, op)(narrow, ops.constant(np.array([1], np.int64)), keep_dims=False)
    red.set_friendly_name("red")
    wide = [ops.convert(red, ov.Type.f32), ops.convert(narrow, ov.Type.f32)]
    ov.save_model(ov.Model([*wide, narrow, red], [x], "narrow"), str(path), compress_to_fp16=False)
    return path


@pytest.mark.parametrize("type_name", [t for t in RUNS_ON_CPU if t != "u2"])  # (the CPU converts no f32 to u2)
def test_a_tensor_of_the_type_reads_back_as_its_values(tmp_path: Path, type_name: str) -> None:
    """Differential: an output tensor (or a Constant) of the type reads as the numbers OpenVINO's own Convert to f32
    gives of it, not as its codes (an f8's byte) or packed bytes (two 4-bit elements a byte)."""
    from ovreduce.backends.openvino import constant_data, from_tensor

    path = _reduced(tmp_path / "m.xml", type_name, "reduce_max", [3, 7])
    values = np.random.default_rng(3).standard_normal((3, 7)).astype(np.float32) * 4
    if type_name in ("u4", "i4"):  # within the type's range (the CPU's conversion beyond it is its own)
        bits = element_type(type_name).bitwidth
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if type_name == "i4" else (0, (1 << bits) - 1)
        values = np.clip(values.round(), lo, hi)
    if type_name == "f8e8m0":  # positive
        values = np.abs(values) + 1
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer({0: values})
    own = request.get_output_tensor(1).data
    read = from_tensor(request.get_output_tensor(2))
    assert read.shape == (3, 7) and read.dtype == element_type(type_name).numpy
    np.testing.assert_array_equal(read.astype(np.float32), own)
    reduced = from_tensor(request.get_output_tensor(3))
    np.testing.assert_array_equal(reduced.astype(np.float32), request.get_output_tensor(0).data)
    constant = ov.op.Constant(request.get_output_tensor(2))
    np.testing.assert_array_equal(constant_data(constant).astype(np.float32), own)


@pytest.mark.parametrize("type_name", NARROW_FLOATS)
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_mean"])
def test_a_reduction_on_a_narrow_float_is_audited_on_its_values(tmp_path: Path, type_name: str, op: str) -> None:
    """An f8 or f4 reduction OpenVINO computed exactly agrees: the captured tensors are its values, not the codes that
    the reference summed as uint8 integers (an ERROR: "the exact sum (348) does not fit in uint8")."""
    data = np.array([[1.5, 2, 3, 4], [0.5, 1, -1, 6]], np.float32)
    path = _reduced(tmp_path / "m.xml", type_name, op, [2, 4])
    cpu = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})({0: data})[0]
    nptype = element_type(type_name).numpy
    exact = getattr(np, op.removeprefix("reduce_"))(data.astype(nptype).astype(np.float64), axis=1)
    np.testing.assert_array_equal(cpu, exact.astype(nptype).astype(np.float32))  # OpenVINO computed it exactly
    model = load_ir(path)
    try:
        doc = audit_model(model, inputs={"x": data}, precision="f32")
    finally:
        model.close()
    assert doc.error is None, doc.error
    (row,) = [layer for layer in doc.layers if layer.layer_name == "red"]
    assert (row.status, tuple(row.input_shape or ()), row.element_type) == ("ok", (2, 4), type_name), row
    assert row.max_abs_error == 0.0
    assert not any("uint8" in note for note in row.notes), row.notes


@pytest.mark.parametrize("type_name", ["nf4", "f8e8m0", "u4", "i4"])
def test_a_reduction_in_a_type_the_reference_does_not_model_is_not_audited(tmp_path: Path, type_name: str) -> None:
    """OpenVINO's CPU reduces nf4, f8e8m0 and the packed integers in a wider type and converts the result back: no
    verdict rests on such a row (it was an ERROR: "Axis 1 out of the tensor rank range", from the packed bytes)."""
    path = _reduced(tmp_path / "m.xml", type_name, "reduce_max", [2, 4])
    model = load_ir(path)
    try:
        doc = audit_model(model, inputs={"x": np.array([[1, 2, 3, 4], [1, 1, 2, 6]], np.float32)}, precision="f32")
    finally:
        model.close()
    assert doc.error is None, doc.error
    (row,) = [layer for layer in doc.layers if layer.layer_name == "red"]
    assert row.status == "not-audited", row
    assert f"reduces {type_name} data" in (row.not_established or "")


@pytest.mark.parametrize("type_name", NARROW_FLOATS)
def test_run_executes_a_narrow_float_reduction(tmp_path: Path, type_name: str) -> None:
    """``run`` executes an f8 or f4 reduction, as OpenVINO's CPU does, and judges it to one unit in the type's last
    place: seeded random data agrees (it was refused: "reductions of f8e4m3 data cannot be executed")."""
    from ovreduce.compare import NARROW_FLOAT_TOLERANCES
    from ovreduce.run import run_layer

    model = load_ir(_reduced(tmp_path / "m.xml", type_name, "reduce_sum", [16, 64]))
    try:
        report = run_layer(model, "red", seed=1)
    finally:
        model.close()
    doc = report.document
    assert doc.outcome == "agree", doc
    (comparison,) = doc.comparisons
    assert (comparison.atol, comparison.rtol) == NARROW_FLOAT_TOLERANCES[type_name]


@pytest.mark.parametrize("type_name", ["nf4", "u4"])
def test_run_refuses_a_reduction_in_a_type_the_reference_does_not_model(tmp_path: Path, type_name: str) -> None:
    from ovreduce.errors import InputError
    from ovreduce.run import run_layer

    model = load_ir(_reduced(tmp_path / "m.xml", type_name, "reduce_sum", [2, 4]))
    try:
        with pytest.raises(InputError, match=f"converts the result back to {type_name}, a conversion ovreduce's"):
            run_layer(model, "red")
    finally:
        model.close()
