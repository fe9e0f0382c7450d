"""Where no native rule reaches a reduction's input, OpenVINO's inference supplies it, and the report says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset11 as ops
import pytest

from ovreduce._openvino import partial_shape
from ovreduce.check import check_model
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape

from ..ir.irxml import edge, layer, net, port


def _space_to_depth_mean(folder: Path) -> Path:
    """x[1,3,8,8] -> SpaceToDepth (block 2; no native rule in ovreduce) -> ReduceMean over H, W (keep_dims)."""
    x = ops.parameter([1, 3, 8, 8], np.float32, name="x")
    moved = ops.space_to_depth(x, "blocks_first", 2)
    moved.set_friendly_name("moved")
    mean = ops.reduce_mean(moved, ops.constant(np.array([2, 3], np.int64)), True)
    mean.set_friendly_name("mean")
    path = folder / "s2d.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "s2d"), str(path), compress_to_fp16=False)
    return path


def _openvino_after(path: Path, shape: str) -> tuple[PartialShape, PartialShape]:
    model = ov.Core().read_model(str(path))
    model.reshape({"x": ov.PartialShape(shape)})
    node = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "mean")
    return partial_shape(node.get_input_partial_shape(0)), partial_shape(node.get_output_partial_shape(0))


def _openvino_refuses(path: Path, name: str, shape: str) -> bool:
    model = ov.Core().read_model(str(path))
    try:
        model.reshape({name: ov.PartialShape(shape)})
    except Exception:
        return True
    return False


def test_without_reshape_the_declared_dims_are_said_to_be_declared(tmp_path: Path) -> None:
    [reduction] = check_model(load_ir(_space_to_depth_mean(tmp_path))).reductions
    assert (reduction.input_shape_engine, reduction.input_shape, reduction.status) == ("declared", [1, 12, 4, 4], "ok")


def test_under_reshape_openvino_infers_what_no_native_rule_does(tmp_path: Path) -> None:
    path = _space_to_depth_mean(tmp_path)
    new = "[2,3,6,10]"
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse(new)})
    [reduction] = report.reductions
    ov_input, ov_output = _openvino_after(path, new)
    assert reduction.input_shape_engine == "openvino"
    assert reduction.input_shape == ov_input.to_json() == [2, 12, 3, 5]
    assert reduction.inferred_output_shape == ov_output.to_json() == [2, 12, 1, 1]
    # never the file's stale dims reported as they were: the output changed, and the finding says why
    [changed] = [f for f in report.findings if f.code == "reshape-changes-output"]
    assert "as OpenVINO infers it" in changed.message


def test_a_reshape_by_a_parameters_own_name_reaches_openvino_too(tmp_path: Path) -> None:
    """A Parameter without a tensor name is reshaped by its layer name, as ovreduce takes it: OpenVINO's reshape by a
    name takes tensor names only, so it was handed the name and refused ("Input for tensor name 'x' is not found"):
    the reduction after the SpaceToDepth was unresolved, and --engine openvino reported a false read failure."""
    path = _space_to_depth_mean(tmp_path)
    path.write_text(path.read_text().replace(' names="x"', ""))
    model = ov.Core().read_model(str(path))
    assert not model.inputs[0].get_names()  # only its layer name names it
    model.reshape({model.get_parameters()[0].output(0): ov.PartialShape("[2,3,6,10]")})
    mean = next(n for n in model.get_ordered_ops() if n.get_friendly_name() == "mean")
    for engine in ("native", "openvino"):
        report = check_model(load_ir(path), reshape={"x": PartialShape.parse("[2,3,6,10]")}, engine=engine)
        [reduction] = report.reductions
        assert reduction.input_shape_engine == "openvino"
        assert reduction.inferred_output_shape == partial_shape(mean.get_output_partial_shape(0)).to_json()
        assert not [f for f in report.findings if f.code == "openvino-read-failed"], report.findings


@pytest.mark.parametrize("shape", ["[1,8,65]", "[1,8,64]", "[2,16,64]", "[1,8,1]", "[1,8,63]", "[4,1,128]", "[?,?,64]"])
def test_a_reshape_that_breaks_any_layer_is_an_error_as_openvino_refuses_it(shape: str) -> None:
    """RMSNorm's weight is [1,1,64]: a last dim other than 64 (or 1) breaks its Multiply, after the reduction.
    ovreduce's native check reports exactly the reshapes OpenVINO refuses, at that layer."""
    sample = Path(__file__).resolve().parents[2] / "ir_samples" / "rmsnorm.xml"
    report = check_model(load_ir(sample), reshape={"hidden_states": PartialShape.parse(shape)})
    found = [f for f in report.findings if f.code == "reshape-inconsistent"]
    assert bool(found) == _openvino_refuses(sample, "hidden_states", shape) == (not report.ok), (
        shape, [f.message for f in report.findings])  # fmt: skip
    if found:
        assert [f.layer_name for f in found] == ["rmsnorm/output"] and "Multiply" in found[0].message


def test_a_layer_ovreduce_cannot_read_under_reshape_is_not_called_refused(tmp_path: Path) -> None:
    """Interpolate by scales 0.5 computed through an Exp (ovreduce computes no Exp) under a reshape OpenVINO accepts:
    no "OpenVINO refuses" finding (it once named ovreduce's own limit as OpenVINO's refusal); OpenVINO's inference
    supplies the shape."""
    x = ops.parameter([1, 3, 12, 8], np.float32, name="x")
    one = ops.exp(ops.constant(np.zeros(2, np.float32)))  # exp(0) is 1, exactly
    scales = ops.multiply(one, ops.constant(np.array([0.5, 0.5], np.float32)))
    small = ops.interpolate(x, scales, "nearest", "scales", axes=ops.constant(np.array([2, 3], np.int64)))
    mean = ops.reduce_mean(small, ops.constant(np.array([2, 3], np.int64)), True)
    mean.set_friendly_name("mean")
    path = tmp_path / "interp.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "interp"), str(path), compress_to_fp16=False)
    new = "[1,3,20,14]"
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse(new)})
    ov_input, ov_output = _openvino_after(path, new)  # OpenVINO accepts the reshape
    assert report.ok and not [f for f in report.findings if f.code == "reshape-inconsistent"], report.findings
    [reduction] = report.reductions
    assert reduction.input_shape_engine == "openvino"
    assert reduction.input_shape == ov_input.to_json() == [1, 3, 10, 7]
    assert reduction.inferred_output_shape == ov_output.to_json()


@pytest.mark.parametrize("shape", ["[3]", "[1..3]", "[?]", "[1]", "[5]", "[3,4]", "[]", "[2..4,3]"])
def test_explicit_broadcast_under_reshape_is_refused_where_openvino_refuses_it(shape: str, tmp_path: Path) -> None:
    """Broadcast (explicit) of x to [2,3,4] with axes_mapping [1]: x must be one dim, 1 or 3 (a scalar takes the
    mapped target dim as 1). ovreduce's native check reports exactly the reshapes OpenVINO refuses (it once let
    an axes_mapping of the wrong length through)."""
    x = ops.parameter([-1], np.float32, name="x")
    wide = ops.broadcast(x, ops.constant(np.array([2, 3, 4], np.int64)), ops.constant(np.array([1], np.int64)),
                         "explicit")  # fmt: skip
    mean = ops.reduce_mean(wide, ops.constant(np.array([1], np.int64)), False)
    path = tmp_path / "bcast.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "bcast"), str(path), compress_to_fp16=False)
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse(shape)})
    found = [f for f in report.findings if f.code == "reshape-inconsistent"]
    assert bool(found) == _openvino_refuses(path, "x", shape) == (not report.ok), (
        shape, [f.message for f in report.findings])  # fmt: skip


def _refused_natively(path: Path, *, beside: bool = False, reshaped: bool = False) -> None:
    """x[2,3] -> Einsum (no rule), whose output declares FP16 where OpenVINO infers f32 -> ReLU -> MatMul with an f32
    Const -> ReduceSum over axis 1 ("mean"): ovreduce's MatMul rule refuses f16 by f32 on the declared type, OpenVINO
    reads the file. ``beside``: x -> an op of an extension's opset too, which OpenVINO refuses without naming a node;
    ``reshaped``: the chain's Parameter is "y", and beside it x[?,3] -> ReLU, for a reshape of x."""
    half = "FP16"
    dims = [2, 3]
    source = "y" if reshaped else "x"
    layers = [
        layer(0, source, "Parameter", data={"shape": "2,3", "element_type": "f32"},
              outputs=[port(0, dims, names=source)]),
        layer(3, "cs", "Einsum", version="opset7", data={"equation": "ij->ij"}, inputs=[port(0, dims)],
              outputs=[port(1, dims, half)]),
        layer(4, "relu", "ReLU", inputs=[port(0, dims, half)], outputs=[port(1, dims, half)]),
        layer(5, "w", "Const", data={"element_type": "f32", "shape": "3,3", "offset": "8", "size": "36"},
              outputs=[port(0, [3, 3])]),
        layer(6, "mm", "MatMul", data={"transpose_a": "false", "transpose_b": "false"},
              inputs=[port(0, dims, half), port(1, [3, 3])], outputs=[port(2, dims, half)]),
        layer(10, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(11, "mean", "ReduceSum", data={"keep_dims": "false"},
              inputs=[port(0, dims, half), port(1, [1], "I64")], outputs=[port(2, dims[:1], half)]),
        layer(7, "out", "Result", inputs=[port(0, dims[:1], half)]),
    ]  # fmt: skip
    edges = [edge(0, 0, 3, 0), edge(3, 1, 4, 0), edge(4, 1, 6, 0), edge(5, 0, 6, 1), edge(6, 2, 11, 0),
             edge(10, 0, 11, 1), edge(11, 2, 7, 0)]  # fmt: skip
    if reshaped:
        layers += [
            layer(12, "x", "Parameter", data={"shape": "?,3", "element_type": "f32"},
                  outputs=[port(0, [-1, 3], names="x")]),
            layer(13, "r2", "ReLU", inputs=[port(0, [-1, 3])], outputs=[port(1, [-1, 3])]),
            layer(14, "out3", "Result", inputs=[port(0, [-1, 3])]),
        ]  # fmt: skip
        edges += [edge(12, 0, 13, 0), edge(13, 1, 14, 0)]
    if beside:
        layers += [
            layer(8, "custom", "MyOp", version="my_opset", inputs=[port(0, dims)], outputs=[port(1, dims)]),
            layer(9, "out2", "Result", inputs=[port(0, dims)]),
        ]
        edges += [edge(0, 0, 8, 0), edge(8, 1, 9, 0)]
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.int64(1).tobytes() + np.ones(9, np.float32).tobytes())


def test_a_native_rule_stricter_than_openvino_under_reshape_is_not_called_refused(tmp_path: Path) -> None:
    """A rule that refuses what OpenVINO reads (:func:`_refused_natively`) beside x[?,3], reshaped to [4,3]: OpenVINO
    takes the reshape. The check says so as a note, not as OpenVINO refusing the reshape, and the reduction gets
    OpenVINO's shape."""
    path = tmp_path / "resized.xml"
    _refused_natively(path, reshaped=True)
    assert not _openvino_refuses(path, "x", "[4,3]")
    report = check_model(load_ir(path), reshape={"x": PartialShape.parse("[4,3]")})
    assert report.ok and not [f for f in report.findings if f.code == "reshape-inconsistent"], report.findings
    assert any("OpenVINO takes the reshape" in note for note in report.notes), report.notes
    [reduction] = report.reductions
    ov_input, _ = _openvino_after(path, "[4,3]")
    assert reduction.input_shape_engine == "openvino" and reduction.input_shape == ov_input.to_json()


def test_an_error_rests_on_what_openvino_infers_too(tmp_path: Path) -> None:
    """x[2,?] -> Broadcast(x, ShapeOf(x) * Exp([0, 0])) -> Squeeze axis 0 -> ReduceSum axis 1. The native rules
    compute no Exp, so know no element of the target, so the Squeeze seems to remove a '?' and the axis to be out of
    range: once a reduce-invalid error. OpenVINO feeds the reduction [2,?]: the check uses that, says so, and finds
    nothing."""
    x = ops.parameter(ov.PartialShape("[2,?]"), np.float32, name="x")
    wide = ops.broadcast(x, ops.multiply(ops.shape_of(x), ops.exp(ops.constant(np.array([0, 0], np.int64)))))
    squeezed = ops.squeeze(wide, ops.constant(np.array([0], np.int64)))
    total = ops.reduce_sum(squeezed, ops.constant(np.array([1], np.int64)), False)
    total.set_friendly_name("total")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(total)], [x], "m"), str(path), compress_to_fp16=False)
    report = check_model(load_ir(path))
    [reduction] = report.reductions
    assert report.ok and reduction.status == "ok", report.findings
    assert reduction.input_shape_engine == "openvino"
    assert reduction.input_shape == partial_shape(total.get_input_partial_shape(0)).to_json() == [2, -1]
    assert any("OpenVINO's inference feeds it [2,?]" in note for note in report.notes), report.notes
    stale = load_ir(
        Path(__file__).resolve().parents[2] / "ir_samples" / "broken" / "stale_output.xml"
    )  # where OpenVINO infers what ovreduce does: it stands
    assert [f.code for f in check_model(stale).findings if f.severity == "error"] == ["reduce-output-mismatch"]


def _zero_stride_slice(folder: Path, *, reduced: bool) -> Path:
    """x[4,6] -> StridedSlice with strides [1, 0] (OpenVINO refuses a zero stride as it reads the file) -> a
    ReduceMean over axis 1 (``reduced``) or a Result, beside a ReduceSum of x that is fine."""
    x = ops.parameter([4, 6], np.float32, name="x")
    sliced = ops.strided_slice(x, ops.constant(np.array([0, 0], np.int64)), ops.constant(np.array([4, 6], np.int64)),
                               ops.constant(np.array([1, 7], np.int64)), [0, 0], [0, 0])  # fmt: skip
    sliced.set_friendly_name("sliced")
    out = ops.reduce_mean(sliced, ops.constant(np.array([1], np.int64)), False) if reduced else sliced
    fine = ops.reduce_sum(x, ops.constant(np.array([0], np.int64)), True)
    path = folder / "slice.xml"
    ov.save_model(ov.Model([ops.result(out), ops.result(fine)], [x], "slice"), str(path), compress_to_fp16=False)
    weights = path.with_suffix(".bin")
    data = weights.read_bytes()
    at = data.index(np.array([1, 7], np.int64).tobytes())
    weights.write_bytes(data[:at] + np.array([1, 0], np.int64).tobytes() + data[at + 16 :])
    return path


@pytest.mark.parametrize("reduced", [True, False], ids=["reduction-after", "no-reduction-after"])
def test_a_layer_openvino_refuses_is_an_error_with_or_without_a_reduction_after_it(
    reduced: bool, tmp_path: Path
) -> None:
    """A layer whose inputs break its shape rule, where OpenVINO refuses the file at that layer, is an error naming
    it: the model was checked clean, whatever OpenVINO made of it."""
    path = _zero_stride_slice(tmp_path, reduced=reduced)
    with pytest.raises(RuntimeError, match="Stride must be non-zero"):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    [found] = [f for f in report.findings if f.severity == "error"]
    assert not report.ok and found.code == "layer-invalid" and found.layer_name == "sliced", report.findings
    assert "Stride must be non-zero" in found.message and "OpenVINO refuses the model at this layer" in found.message


def test_a_native_rule_stricter_than_openvino_is_a_note_not_an_error(tmp_path: Path) -> None:
    """A rule that refuses what OpenVINO reads (:func:`_refused_natively`). Nothing is called wrong; a note
    says the rule refuses it, and the reduction after it gets OpenVINO's shape."""
    path = tmp_path / "resized.xml"
    _refused_natively(path)
    total = next(n for n in ov.Core().read_model(str(path)).get_ordered_ops() if n.get_friendly_name() == "mean")
    report = check_model(load_ir(path))
    assert report.ok and not [f for f in report.findings if f.code == "layer-invalid"], report.findings
    assert any("as ovreduce writes it, but OpenVINO reads the model" in note for note in report.notes), report.notes
    [reduction] = report.reductions
    assert reduction.input_shape_engine == "openvino"
    assert reduction.input_shape == partial_shape(total.get_input_partial_shape(0)).to_json()


@pytest.mark.parametrize(
    ("gather", "indices"),
    [
        (ops.gather, [1]), (ops.gather, [1, 2]), (ops.gather, 1), (ops.gather, [-2]), (ops.gather, [0]),
        (ops.gather, [0, 2]), (__import__("openvino.opset7", fromlist=["gather"]).gather, [1]),
        (__import__("openvino.opset7", fromlist=["gather"]).gather, [-2]),
    ],
    ids=["one", "two", "scalar", "negative", "dynamic-dim", "dynamic-and-static", "gather-7", "gather-7-negative"],
)  # fmt: skip
def test_axes_picked_from_the_static_dims_of_a_partly_dynamic_shape_are_known(
    gather: Any, indices: Any, tmp_path: Path
) -> None:
    """x[?,2,3,4], axes = Gather(ShapeOf(x), indices): OpenVINO knows the static dims' values, so the axes too. They
    were 'runtime' natively: the output [?,?,?] hid a declared dim OpenVINO infers otherwise."""
    x = ops.parameter(ov.PartialShape("[?,2,3,4]"), np.float32, name="x")
    axes = gather(ops.shape_of(x), ops.constant(np.array(indices, np.int64)), ops.constant(np.int64(0)))
    mean = ops.reduce_mean(x, axes, False)
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "m"), str(path), compress_to_fp16=False)
    expected = partial_shape(ov.Core().read_model(str(path)).get_result().get_output_partial_shape(0))
    [reduction] = check_model(load_ir(path)).reductions
    assert reduction.inferred_output_shape == expected.to_json(), (reduction, expected)
    assert (reduction.axes_kind == "const") == (0 not in np.atleast_1d(indices))  # dim 0 is the dynamic one


def test_a_stale_output_after_axes_from_a_partly_dynamic_shape_is_an_error(tmp_path: Path) -> None:
    x = ops.parameter(ov.PartialShape("[?,2,3,4]"), np.float32, name="x")
    axes = ops.gather(ops.shape_of(x), ops.constant(np.array([1], np.int64)), ops.constant(np.int64(0)))
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.reduce_mean(x, axes, False))], [x], "m"), str(path), compress_to_fp16=False)
    text = path.read_text()
    tabs = "\n\t\t\t\t\t"
    stale = text.replace(
        f"<dim>-1</dim>{tabs}<dim>2</dim>{tabs}<dim>4</dim>", f"<dim>-1</dim>{tabs}<dim>3</dim>{tabs}<dim>4</dim>"
    )
    assert stale != text
    path.write_text(stale)
    report = check_model(load_ir(path))
    assert [f.code for f in report.findings if f.severity == "error"] == ["reduce-output-mismatch"], report.findings


def test_a_refusal_openvino_words_otherwise_blames_no_layer(tmp_path: Path) -> None:
    """A rule that refuses what OpenVINO reads (:func:`_refused_natively`) beside an op of an extension's opset, which
    OpenVINO refuses without naming a node: the refusing layer was blamed for it."""
    path = tmp_path / "m.xml"
    _refused_natively(path, beside=True)
    with pytest.raises(RuntimeError, match="MyOp"):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    assert any("OpenVINO refuses the model elsewhere" in note for note in report.notes), report.notes


def test_a_refusal_under_a_reshape_is_an_error_only_where_openvino_refuses_the_reshape(tmp_path: Path) -> None:
    """y[2,3] -> Einsum (no rule), whose output declares FP16 where OpenVINO infers f32 -> ReLU -> MatMul with an f32
    Const: ovreduce's rule refuses f16 by f32; beside it, x[?,3] -> ReLU. Under a reshape of x, with no reduction to
    ask OpenVINO about, the refusal was a reshape-inconsistent error, though OpenVINO reads the model and takes the
    reshape: OpenVINO is asked first, and the refusal is a note."""
    half = "FP16"
    layers = [
        layer(0, "x", "Parameter", data={"shape": "?,3", "element_type": "f32"}, outputs=[port(0, [-1, 3], names="x")]),
        layer(1, "y", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, [2, 3])]),
        layer(3, "cs", "Einsum", version="opset7", data={"equation": "ij->ij"}, inputs=[port(0, [2, 3])],
              outputs=[port(1, [2, 3], half)]),
        layer(4, "relu", "ReLU", inputs=[port(0, [2, 3], half)], outputs=[port(1, [2, 3], half)]),
        layer(5, "w", "Const", data={"element_type": "f32", "shape": "3,3", "offset": "8", "size": "36"},
              outputs=[port(0, [3, 3])]),
        layer(6, "mm", "MatMul", data={"transpose_a": "false", "transpose_b": "false"},
              inputs=[port(0, [2, 3], half), port(1, [3, 3])], outputs=[port(2, [2, 3])]),
        layer(7, "out", "Result", inputs=[port(0, [2, 3])]),
        layer(8, "r2", "ReLU", inputs=[port(0, [-1, 3])], outputs=[port(1, [-1, 3])]),
        layer(9, "out2", "Result", inputs=[port(0, [-1, 3])]),
    ]  # fmt: skip
    edges = [edge(1, 0, 3, 0), edge(3, 1, 4, 0), edge(4, 1, 6, 0), edge(5, 0, 6, 1), edge(6, 2, 7, 0),
             edge(0, 0, 8, 0), edge(8, 1, 9, 0)]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.int64(1).tobytes() + np.ones(9, np.float32).tobytes())
    assert not _openvino_refuses(path, "x", "[4,3]")
    ir = load_ir(path)
    try:
        report = check_model(ir, reshape={"x": PartialShape.parse("[4,3]")})
    finally:
        ir.close()
    assert report.ok, report.findings
    assert any("OpenVINO takes the reshape" in note for note in report.notes), report.notes


@pytest.mark.parametrize("mode", ["explicit", "none"])
def test_a_broadcast_1_without_axes_mapping_is_read_as_numpy_as_openvino_reads_it(mode: str, tmp_path: Path) -> None:
    """Broadcast-1 in its explicit mode, given no axes mapping, broadcasts as numpy in OpenVINO: ovreduce refused it,
    a note without a reshape and a reshape-inconsistent error under one."""
    layers = [
        layer(0, "x", "Parameter", data={"shape": "?", "element_type": "f32"}, outputs=[port(0, [-1], names="x")]),
        layer(1, "target", "Const", data={"element_type": "i64", "shape": "2", "offset": "0", "size": "16"},
              outputs=[port(0, [2], "I64")]),
        layer(2, "wide", "Broadcast", data={"mode": mode}, inputs=[port(0, [-1]), port(1, [2], "I64")],
              outputs=[port(2, [2, 3])]),
        layer(3, "out", "Result", inputs=[port(0, [2, 3])]),
    ]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)]))
    path.with_suffix(".bin").write_bytes(np.array([2, 3], np.int64).tobytes())
    assert not _openvino_refuses(path, "x", "[1]")
    ir = load_ir(path)
    try:
        report = check_model(ir, reshape={"x": PartialShape.parse("[1]")})
        plain = check_model(ir)
    finally:
        ir.close()
    assert report.ok and not report.notes, (report.findings, report.notes)
    assert plain.ok and not plain.notes, (plain.findings, plain.notes)


@pytest.mark.parametrize("producer", ["act", "Reshape_4"])
def test_a_layer_openvino_refuses_is_blamed_whatever_its_producer_is_named(producer: str, tmp_path: Path) -> None:
    """x[2,3] -> Reshape -> Reshape to [0,-1] (special_zero false), which OpenVINO refuses, -> ReduceSum. A producer
    named as OpenVINO names its nodes (``Reshape_4``, what its serializer writes for an unnamed one) was renamed
    ``Reshape`` in OpenVINO's message, so the refusal was tied to no layer, and the model checked clean."""
    dims, two = [2, 3], [2]
    layers = [
        layer(0, "x", "Parameter", data={"shape": "2,3", "element_type": "f32"}, outputs=[port(0, dims, names="x")]),
        layer(1, "same", "Const", data={"element_type": "i64", "shape": "2", "offset": "0", "size": "16"},
              outputs=[port(0, two, "I64")]),
        layer(2, producer, "Reshape", data={"special_zero": "true"}, inputs=[port(0, dims), port(1, two, "I64")],
              outputs=[port(2, dims)]),
        layer(3, "target", "Const", data={"element_type": "i64", "shape": "2", "offset": "0", "size": "16"},
              outputs=[port(0, two, "I64")]),
        layer(4, "Reshape_7", "Reshape", data={"special_zero": "false"}, inputs=[port(0, dims), port(1, two, "I64")],
              outputs=[port(2, dims)]),
        layer(5, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "16", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(6, "red", "ReduceSum", data={"keep_dims": "false"}, inputs=[port(0, dims), port(1, [1], "I64")],
              outputs=[port(2, two)]),
        layer(7, "out", "Result", inputs=[port(0, two)]),
    ]  # fmt: skip
    edges = [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 4, 0), edge(3, 0, 4, 1), edge(4, 2, 6, 0), edge(5, 0, 6, 1),
             edge(6, 2, 7, 0)]  # fmt: skip
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.array([0, -1, 1], np.int64).tobytes())
    with pytest.raises(RuntimeError, match="Cannot infer '-1' dimension"):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    [found] = [f for f in report.findings if f.severity == "error"]
    assert found.code == "layer-invalid" and found.layer_name == "Reshape_7", report.findings
    assert "OpenVINO refuses the model at this layer too" in found.message
    assert not any(f.code == "openvino-read-failed" for f in report.findings), report.findings  # (said once)


def test_a_model_openvino_refuses_where_ovreduce_has_no_rule_is_not_clean(tmp_path: Path) -> None:
    """x[1,3,7,8] -> SpaceToDepth (no native rule) by blocks of 2, which OpenVINO refuses (7 is no multiple of 2), its
    output declared [?,?,?,?] -> ReduceMean: OpenVINO, asked for the reduction's input, refuses the model. It was
    clean, with a note; OpenVINO's refusal is an error of the model now."""
    dims, free = [1, 3, 7, 8], [-1, -1, -1, -1]
    layers = [
        layer(0, "x", "Parameter", data={"shape": "1,3,7,8", "element_type": "f32"},
              outputs=[port(0, dims, names="x")]),
        layer(1, "moved", "SpaceToDepth", data={"block_size": "2", "mode": "blocks_first"}, inputs=[port(0, dims)],
              outputs=[port(1)]),  # (no dims: not even a rank said)
        layer(2, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(3, "red", "ReduceMean", data={"keep_dims": "false"}, inputs=[port(0, free), port(1, [1], "I64")],
              outputs=[port(2, [-1, -1, -1])]),
        layer(4, "out", "Result", inputs=[port(0, [-1, -1, -1])]),
    ]  # fmt: skip
    edges = [edge(0, 0, 1, 0), edge(1, 1, 3, 0), edge(2, 0, 3, 1), edge(3, 2, 4, 0)]
    path = tmp_path / "m.xml"
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.array([1], np.int64).tobytes())
    with pytest.raises(RuntimeError, match="multiple of"):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    [found] = [f for f in report.findings if f.severity == "error"]
    assert not report.ok and found.code == "openvino-read-failed" and found.layer_id is None, report.findings
    assert "OpenVINO could not read the model" in found.message and "multiple of" in found.message


def _position_table(folder: Path, before: str | None = None) -> Path:
    """x[?,?,32] (-> a HardSigmoid, an op of no native rule, where ``before`` says so) + a position table of 32 rows
    [1,32,32] (as SpeechT5's encoder adds its sinusoids) -> ReduceMean: a reshape to more than 32 rows OpenVINO reads
    the model but refuses."""
    x = ops.parameter([-1, -1, 32], np.float32, name="x")
    data = x if before is None else ops.hard_sigmoid(x, ops.constant(np.float32(0.2)), ops.constant(np.float32(0.5)))
    added = ops.add(data, ops.constant(np.ones((1, 32, 32), np.float32)), name="positions")
    mean = ops.reduce_mean(added, ops.constant(np.array([-1], np.int64)), True, name="norm")
    path = folder / "table.xml"
    ov.save_model(ov.Model([ops.result(mean)], [x], "table"), str(path), compress_to_fp16=False)
    return path


def _reshape_refusal(path: Path, shape: str) -> str:
    """OpenVINO's own words refusing the reshape of ``x`` (it reads the model)."""
    model = ov.Core().read_model(str(path))
    with pytest.raises(RuntimeError) as refused:
        model.reshape({"x": ov.PartialShape(shape)})
    return str(refused.value).strip().splitlines()[-1]


@pytest.mark.parametrize(("engine", "before"), [("openvino", None), ("openvino", "HardSigmoid"),
                                                ("native", "HardSigmoid")])  # fmt: skip
def test_a_reshape_openvino_refuses_is_said_to_be_the_reshape_not_the_read(
    engine: Any, before: str | None, tmp_path: Path
) -> None:
    """OpenVINO reads the model and refuses the reshape: the finding says so, with the shapes asked and OpenVINO's
    words, not that OpenVINO could not read the model (a CI log read so blames the file). The OpenVINO engine said
    "could not read the model", and so did the note on what stays unresolved."""
    path = _position_table(tmp_path, before)
    words = _reshape_refusal(path, "[1,40,32]")
    ir = load_ir(path)
    try:
        assert check_model(ir, engine=engine).ok  # read as it is, it is clean
        report = check_model(ir, engine=engine, reshape={"x": PartialShape.parse("[1,40,32]")})
    finally:
        ir.close()
    [found] = [f for f in report.findings if f.code == "openvino-read-failed"]
    assert found.message.startswith("OpenVINO refused the reshape (x=[1,40,32]): "), found.message
    assert words in found.message, (words, found.message)
    said = [f.message for f in report.findings] + list(report.notes)
    assert not any("could not read" in message for message in said), said


def test_a_model_openvino_cannot_read_is_still_said_so_under_a_reshape(tmp_path: Path) -> None:
    """A read OpenVINO refuses (the mean's axis 7, of a rank-3 input) stays a read it refuses, reshape or not."""
    path = _position_table(tmp_path)
    weights = path.with_suffix(".bin")
    minus_one = np.array([-1], np.int64).tobytes()
    assert weights.read_bytes().count(minus_one) == 1
    weights.write_bytes(weights.read_bytes().replace(minus_one, np.array([7], np.int64).tobytes()))
    ir = load_ir(path)
    try:
        report = check_model(ir, engine="openvino", reshape={"x": PartialShape.parse("[1,40,32]")})
    finally:
        ir.close()
    [found] = [f for f in report.findings if f.code == "openvino-read-failed"]
    assert found.message.startswith("OpenVINO could not read the model: "), found.message


def test_a_variadic_split_of_a_scalar_is_refused_in_openvinos_words(tmp_path: Path) -> None:
    """x[2] -> ReduceSum over all (a scalar) -> VariadicSplit: OpenVINO refuses it naming no node, "Accessing
    out-of-range dimension"; ovreduce's rule said it in words of its own, so the refusal was tied to no layer."""
    path = tmp_path / "m.xml"
    layers = [
        layer(0, "x", "Parameter", data={"shape": "2", "element_type": "f32"}, outputs=[port(0, [2], names="x")]),
        layer(1, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(2, "all", "ReduceSum", data={"keep_dims": "false"}, inputs=[port(0, [2]), port(1, [1], "I64")],
              outputs=[port(2)]),
        layer(3, "axis", "Const", data={"element_type": "i64", "shape": "", "offset": "0", "size": "8"},
              outputs=[port(0, [], "I64")]),
        layer(4, "lengths", "Const", data={"element_type": "i64", "shape": "2", "offset": "8", "size": "16"},
              outputs=[port(0, [2], "I64")]),
        layer(5, "vs", "VariadicSplit", inputs=[port(0), port(1, [], "I64"), port(2, [2], "I64")],
              outputs=[port(3, [1]), port(4, [1])]),
        layer(6, "out", "Result", inputs=[port(0, [1])]),
        layer(7, "out2", "Result", inputs=[port(0, [1])]),
    ]  # fmt: skip
    edges = [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 5, 0), edge(3, 0, 5, 1), edge(4, 0, 5, 2), edge(5, 3, 6, 0),
             edge(5, 4, 7, 0)]  # fmt: skip
    path.write_text(net(layers, edges))
    path.with_suffix(".bin").write_bytes(np.array([0, 1, -1], np.int64).tobytes())
    with pytest.raises(RuntimeError, match="Accessing out-of-range dimension"):
        ov.Core().read_model(str(path))
    report = check_model(load_ir(path))
    [found] = [f for f in report.findings if f.severity == "error"]
    assert found.code == "layer-invalid" and found.layer_name == "vs", report.findings
    assert "OpenVINO refuses the model too, naming no layer" in found.message


def test_a_reshaped_parameter_keeps_its_element_type_for_the_rules_that_judge_it(tmp_path: Path) -> None:
    """An f32 Parameter as a Reshape's pattern: OpenVINO refuses the model for the pattern's type, whatever shape the
    Parameter is given. Under a reshape of that Parameter the check refuses it too (it once took a reshaped
    Parameter's type as unknown and called the reduction ok)."""
    path = tmp_path / "pattern.xml"
    path.write_text(net([
        layer(0, "x", "Parameter", data={"shape": "2,3,4", "element_type": "f32"}, outputs=[port(0, [2, 3, 4])]),
        layer(1, "p", "Parameter", data={"shape": "2", "element_type": "f32"}, outputs=[port(0, [2], names="p")]),
        layer(2, "r", "Reshape", data={"special_zero": "false"}, inputs=[port(0, [2, 3, 4]), port(1, [2])],
              outputs=[port(2, [-1, -1])]),
        layer(3, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
              outputs=[port(0, [1], "I64")]),
        layer(4, "mean", "ReduceMean", data={"keep_dims": "true"}, inputs=[port(0, [-1, -1]), port(1, [1], "I64")],
              outputs=[port(2, [1, -1])]),
        layer(5, "out", "Result", inputs=[port(0, [1, -1])]),
    ], [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 4, 0), edge(3, 0, 4, 1), edge(4, 2, 5, 0)]))  # fmt: skip
    path.with_suffix(".bin").write_bytes(np.zeros(1, np.int64).tobytes())
    with pytest.raises(Exception, match="integral"):
        ov.Core().read_model(str(path))
    for reshape in (None, {"p": PartialShape.parse("[2]")}):
        report = check_model(load_ir(path), reshape=reshape)
        assert not report.ok and any("integral number type, not f32" in f.message for f in report.findings), (
            reshape, [f.message for f in report.findings])  # fmt: skip
        [reduction] = report.reductions
        assert reduction.status != "ok"


def test_a_reduction_of_an_input_reshaped_to_a_scalar_says_so() -> None:
    """``dynamic.xml``'s ReduceSum over axis 0 of ``y`` with keep_dims, ``y`` reshaped to a scalar: OpenVINO refuses it
    in words that name neither the axis nor the scalar ("Accessing out-of-range dimension"); the finding adds both."""
    sample = Path(__file__).resolve().parents[2] / "ir_samples" / "dynamic.xml"
    assert _openvino_refuses(sample, "y", "[]")
    report = check_model(load_ir(sample), reshape={"y": PartialShape.parse("[]")})
    [found] = [f for f in report.findings if f.code == "reduce-invalid"]
    assert found.message == (
        "Accessing out-of-range dimension: axes [0] of a scalar input (rank 0), which keep_dims=true cannot keep as a "
        "dim of 1"
    )


_AXES_OF = {  # an axes Const's type -> its bytes (axis 1 where OpenVINO reads it)
    "u1": b"\x80",
    "u2": b"\x40",
    "u3": b"\x20\x00\x00",
    "u6": b"\x04\x00\x00",
    "string": np.array([1, 0, 1], np.int32).tobytes() + b"1",
    "nf4": b"\x07",
    "u4": b"\x01",
    "i4": b"\x01",
    "i64": np.array([1], np.int64).tobytes(),
}


def _mean_over_axes(folder: Path, etype: str) -> Path:
    """x[2,3,4] -> ReduceMean over the axes a Const of ``etype`` holds (keep_dims)."""
    raw = _AXES_OF[etype]
    layers = [
        layer(0, "x", "Parameter", data={"shape": "2,3,4", "element_type": "f32"}, outputs=[port(0, (2, 3, 4))]),
        layer(1, "ax", "Const", data={"element_type": etype, "shape": "1", "offset": "0", "size": str(len(raw))},
              outputs=[port(0, (1,), etype.upper())]),
        layer(2, "mean", "ReduceMean", data={"keep_dims": "true"},
              inputs=[port(0, (2, 3, 4)), port(1, (1,), etype.upper())], outputs=[port(2, (2, 1, 4))]),
        layer(3, "out", "Result", inputs=[port(0, (2, 1, 4))]),
    ]  # fmt: skip
    path = folder / "m.xml"
    path.write_text(net(layers, [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)]))
    path.with_suffix(".bin").write_bytes(raw)
    return path


@pytest.mark.parametrize("etype", list(_AXES_OF))
def test_axes_ovreduce_cannot_fold_are_judged_by_openvinos_reading(etype: str, tmp_path: Path) -> None:
    """Axes in a Const of u1, u2, u3, u6 or string values OpenVINO's shape inference does not read ("Element not
    supported"), nf4 ones it reads as their byte (axis 7): OpenVINO refuses the model, where ``check`` called it clean
    (the reduction unresolved, an info finding), never asking OpenVINO since the reduction's input was known. It asks
    OpenVINO where axes stay unfolded, and the model is clean exactly where OpenVINO reads it."""
    path = _mean_over_axes(tmp_path, etype)
    try:
        ov.Core().read_model(str(path))
        refused = None
    except RuntimeError as exc:
        refused = str(exc)
    model = load_ir(path)
    try:
        report = check_model(model)
    finally:
        model.close()
    assert report.ok == (refused is None), (refused, [f.message for f in report.findings])
    if refused is not None:
        [failed] = [f for f in report.findings if f.severity == "error"]
        assert failed.code == "openvino-read-failed"
