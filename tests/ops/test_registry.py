"""The op registry: lookup by opset as OpenVINO's IR reader does, boolean attributes, and an op added in a
test reaching the shape engine and both backends with no other edit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ovreduce.backends.base import LayerSpec
from ovreduce.backends.numpy import NumPyBackend
from ovreduce.backends.openvino import LayerCache, OpenVINOBackend
from ovreduce.errors import IRStructureError
from ovreduce.infer import ShapeEngine
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.ir.parser import parse_ir
from ovreduce.ir.weights import Weights
from ovreduce.ops.base import LAST_OPSET
from ovreduce.ops.reduce import ReductionOp
from ovreduce.ops.registry import (
    boolean_attributes,
    lookup,
    opset_number,
    reduction,
    reductions,
    registered,
    resolve,
    table,
)
from ovreduce.shapes import PartialShape
from tests.ir.irxml import edge, layer, net, port


# -- lookup by opset ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("op_type", "version", "found"),
    [
        ("ReduceMean", "opset1", "opset1"),
        ("ReduceMean", "opset8", "opset1"),
        ("ReduceMean", f"opset{LAST_OPSET}", "opset1"),
        ("ReduceMean", f"opset{LAST_OPSET + 1}", None),  # opset17 holds no reduction (yet)
        ("ReduceL1", "opset1", None),
        ("ReduceL1", "opset3", None),
        ("ReduceL1", "opset4", "opset4"),
        ("ReduceL2", "opset13", "opset4"),
        ("ReduceLogicalOr", "opset5", "opset1"),
        ("ReduceMean", "", None),
        ("ReduceMean", "extension", None),
        ("Squeeze", "opset14", "opset1"),
        ("Squeeze", "opset15", "opset15"),
        ("Parameter", f"opset{LAST_OPSET + 1}", "opset1"),
        ("Relu", "opset1", ""),  # a rule for every version
        ("Relu", "whatever", ""),
        ("NoSuchOp", "opset1", None),
    ],
)
def test_lookup_finds_what_openvinos_ir_reader_finds(op_type: str, version: str, found: str | None) -> None:
    op = lookup(op_type, version)
    assert (None if op is None else op.version) == found
    if op is not None:
        assert op.type == op_type


@pytest.mark.parametrize("version", ["opset1", "opset4", "opset8", "opset16", "opset17", "", "opset99"])
def test_lookup_matches_openvino(version: str) -> None:
    """Whether the installed OpenVINO reads each reduction under ``version`` is whether lookup finds it."""
    import openvino as ov

    core = ov.Core()
    weights = ov.Tensor(np.array([1], dtype=np.int64).view(np.uint8))
    for op_type in reductions():
        etype = "boolean" if reductions()[op_type].logical else "f32"
        xml = _single_reduction_xml(op_type, version, etype)
        try:
            core.read_model(xml, weights)
            read = True
        except Exception:
            read = False
        assert read == (lookup(op_type, version) is not None), (op_type, version)


def test_resolve_falls_back_to_the_newest_version() -> None:
    assert resolve("ReduceL1", "opset1") is lookup("ReduceL1", "opset4")
    assert resolve("Squeeze", "") is lookup("Squeeze", "opset15")
    assert resolve("NoSuchOp", "opset1") is None


def test_opset_number() -> None:
    assert [opset_number(v) for v in ("opset1", "opset16", "opset01", "opset", "", "ie")] == [
        1,
        16,
        None,
        None,
        None,
        None,
    ]


def test_table_keys_are_type_and_version() -> None:
    for key, op in table().items():
        assert key == (op.type, op.version)


def test_reductions_are_the_family() -> None:
    assert list(reductions()) == [
        "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogicalAnd", "ReduceLogicalOr",
    ]  # fmt: skip
    assert [op.type for op in reductions().values() if op.logical] == ["ReduceLogicalAnd", "ReduceLogicalOr"]
    assert {t for t, op in reductions().items() if op.allowance} == {"ReduceSum", "ReduceMean", "ReduceL1"}


def test_unknown_reduction_lists_the_family() -> None:
    from ovreduce.errors import InputError

    with pytest.raises(InputError, match=r"unknown reduction 'Relu'; expected one of: ReduceMean, ReduceSum, "):
        reduction("Relu")


@pytest.mark.parametrize(
    ("op_type", "version", "expected"),
    [
        ("ReduceMean", "opset1", ("keep_dims",)),
        ("ReduceL2", "opset1", ("keep_dims",)),  # resolved leniently, as check reads every layer
        ("MatMul", "opset1", ("transpose_a", "transpose_b")),
        ("MVN", "opset6", ("normalize_variance", "across_channels")),
        ("CumSum", "opset3", ("exclusive", "reverse")),
        ("GRUCell", "opset3", ("linear_before_reset",)),
        ("GRUSequence", "opset5", ("linear_before_reset",)),
        ("NonMaxSuppression", "opset9", ("sort_result_descending",)),
        ("Interpolate", "opset11", ("antialias",)),
        ("Proposal", "opset4", ("clip_before_nms", "clip_after_nms", "normalize")),
        ("AvgPool", "opset14", ("exclude-pad",)),
        ("MaxPool", "opset14", ()),
        ("Divide", "opset1", ("m_pythondiv",)),
        ("Add", "opset1", ()),
        ("Relu", "opset1", ()),
        ("NoSuchOp", "opset1", ()),
    ],
)
def test_boolean_attributes(op_type: str, version: str, expected: tuple[str, ...]) -> None:
    assert boolean_attributes(op_type, version) == expected


# -- a toy op, registered for one test ----------------------------------------------------------------------
class ToySumSquare(ReductionOp):
    """Sum of squares, as ONNX's ReduceSumSquare: its own kernel, and a builder composing OpenVINO ops."""

    type, version, opsets = "ToySumSquare", "opset1", range(1, LAST_OPSET + 1)

    def kernel(
        self, data: npt.NDArray[Any], axes: tuple[int, ...], keep_dims: bool, notes: list[str]
    ) -> npt.NDArray[Any]:
        wide = data.astype(np.float64)
        return np.asarray(np.sum(wide * wide, axis=axes, keepdims=keep_dims)).astype(data.dtype)

    def build(self, data: Any, axes: Any, keep_dims: bool) -> Any:
        import openvino.opset1 as ops

        return ops.reduce_sum(ops.multiply(data, data), axes, keep_dims)


@pytest.fixture
def toy() -> Iterator[ToySumSquare]:
    op = ToySumSquare()
    with registered(op):
        yield op


def test_registered_op_is_scoped() -> None:
    with registered(ToySumSquare()):
        assert isinstance(lookup("ToySumSquare", "opset3"), ToySumSquare)
        assert "ToySumSquare" in reductions()
    assert lookup("ToySumSquare", "opset3") is None
    assert "ToySumSquare" not in reductions()


def test_registering_a_key_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="share the registry key"), registered(ToySumSquare(), ToySumSquare()):
        pass  # pragma: no cover


def test_toy_op_reaches_the_shape_engine(toy: ToySumSquare) -> None:
    engine = ShapeEngine(parse_ir(_toy_ir(keep_dims="true"), Weights(_AXES_BIN)))
    [info] = engine.reductions
    assert info.op is toy and info.op.type == "ToySumSquare" and not info.op.logical
    assert info.axes.values == (1,)
    assert info.output.shape == PartialShape.static([2, 1, 4])
    assert info.error is None
    # The op's rules apply: its type rule refuses boolean data, as every arithmetic reduction does.
    refused = ShapeEngine(parse_ir(_toy_ir(keep_dims="false", etype="boolean"), Weights(_AXES_BIN)))
    assert refused.reductions[0].error == "Element type of data input must be numeric. Got: boolean"


def test_without_the_toy_op_its_layer_is_an_op_of_no_opset() -> None:
    """Not registered, the toy op is what it is to OpenVINO: an op opset1 does not hold, refused where it is built."""
    with pytest.raises(IRStructureError, match="Opset opset1 doesn't contain the operation with type: ToySumSquare"):
        parse_ir(_toy_ir(keep_dims="true"), Weights(_AXES_BIN))
    extension = _reduction_xml("ToySumSquare", "extension", "f32", "true", (2, 3, 4), 1).encode()
    assert ShapeEngine(parse_ir(extension, Weights(_AXES_BIN))).reductions == ()  # (an extension's op)


def test_toy_op_runs_on_both_backends(toy: ToySumSquare) -> None:
    spec = LayerSpec(
        type="ToySumSquare", keep_dims=True, data_type=ELEMENT_TYPES["f32"], data_shape=PartialShape.static([2, 3, 4]),
        axes_type=ELEMENT_TYPES["i64"], axes_shape=PartialShape.static([1]), axes=(1,),
    )  # fmt: skip
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4
    expected = np.sum(data.astype(np.float64) ** 2, axis=1, keepdims=True).astype(np.float32)
    numpy_result = NumPyBackend().infer(spec, [data])
    openvino_result = OpenVINOBackend("CPU", "f32", cache=LayerCache(4)).infer(spec, [data])
    assert numpy_result.ok and openvino_result.ok, (numpy_result.error, openvino_result.error)
    np.testing.assert_array_equal(numpy_result.output, expected)
    np.testing.assert_allclose(openvino_result.output, expected, rtol=1e-6)


def test_toy_op_reaches_check_inspect_and_run(toy: ToySumSquare) -> None:
    """check, inspect and run know nothing of the toy op but what the registry says."""
    from ovreduce.check import check_model
    from ovreduce.check.inspect import inspect_model
    from ovreduce.run import run_layer

    model = parse_ir(_toy_ir(keep_dims="true"), Weights(_AXES_BIN))
    checked = check_model(model)
    [reduction] = checked.reductions
    assert (reduction.type, reduction.status, reduction.inferred_output_shape) == ("ToySumSquare", "ok", [2, 1, 4])
    assert checked.ok
    inspected = inspect_model(model)
    assert [view.type for view in inspected.layers] == ["ToySumSquare"] and inspected.reduction_count == 1
    report = run_layer(model, "r", backends=["numpy", "openvino"], precision="f32")
    assert report.ok, report.to_json()
    assert [c.ok for c in report.comparisons] == [True]
    assert report.outputs["numpy"].shape == (2, 1, 4)
    # A broken declaration of the toy op is found like any reduction's.
    declared = b"<dim>2</dim><dim>1</dim><dim>4</dim></port></output>"
    xml = _toy_ir(keep_dims="true").replace(declared, b"<dim>2</dim><dim>4</dim></port></output>")
    stale = parse_ir(xml, Weights(_AXES_BIN))
    assert [f.code for f in check_model(stale).findings if f.severity == "error"][:1] == ["reduce-output-mismatch"]


def test_toy_op_appears_in_every_op_list_the_tool_prints(
    toy: ToySumSquare, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lists of reductions are the registry's: the library's errors, the CLI's, the reference's functions."""
    from ovreduce.cli import main
    from ovreduce.errors import InputError
    from ovreduce.reference import evaluate
    from ovreduce.run import layer_spec

    every = ", ".join(reductions())
    assert every.endswith(", ReduceLogicalOr, ToySumSquare")
    with pytest.raises(InputError, match=f"expected one of: {every}$"):
        reduction("Relu")
    model = parse_ir(_toy_ir(keep_dims="true"), Weights(_AXES_BIN))
    with pytest.raises(InputError, match=f"is not a reduction; ovreduce runs {every} layers$"):
        layer_spec(model, "x")
    xml = tmp_path / "toy.xml"
    xml.write_bytes(_toy_ir(keep_dims="true"))
    xml.with_suffix(".bin").write_bytes(_AXES_BIN)
    assert main(["run", str(xml), "--layer", "x"]) == 2
    assert f"ovreduce runs {every} layers" in capsys.readouterr().err
    assert main(["run", str(xml)]) == 2  # without --layer: the model's reductions, the toy op's layer among them
    assert re.search(r"\n  2 +r +ToySumSquare\n", capsys.readouterr().err)
    assert "reduce_toy_sum_square" in dir(evaluate)
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(evaluate.reduce_toy_sum_square(data, [1], True), (data * data).sum(1, keepdims=True))
    assert [evaluate.alias(t) for t in reductions()][-3:] == [
        "reduce_logical_and", "reduce_logical_or", "reduce_toy_sum_square",
    ]  # fmt: skip
    with pytest.raises(AttributeError):
        evaluate.reduce_relu  # noqa: B018  (no such reduction, no such function)


# -- helpers ------------------------------------------------------------------------------------------------
_AXES_BIN = np.array([1], dtype=np.int64).tobytes()


def _reduction_xml(op_type: str, version: str, etype: str, keep_dims: str, shape: tuple[int, ...], axis: int) -> str:
    """Parameter x -> op_type(x, Const axes = [axis]) -> Result, with the output dims OpenVINO would write."""
    precision = {"f32": "FP32", "boolean": "BOOL"}[etype]
    out = [1 if i == axis else d for i, d in enumerate(shape) if keep_dims == "true" or i != axis]
    x = layer(0, "x", "Parameter", data={"shape": ",".join(map(str, shape)), "element_type": etype},
              outputs=[port(0, shape, precision)])  # fmt: skip
    ins = [port(0, shape, precision), port(1, (1,), "I64")]
    reduction = layer(2, "r", op_type, version=version, data={"keep_dims": keep_dims}, inputs=ins,
                      outputs=[port(2, out, precision)])  # fmt: skip
    axes = layer(1, "axes", "Const", data={"element_type": "i64", "shape": "1", "offset": "0", "size": "8"},
                 outputs=[port(0, (1,), "I64")])  # fmt: skip
    out_layer = layer(3, "out", "Result", inputs=[port(0, out, precision)])
    return net([x, axes, reduction, out_layer], [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)])


def _toy_ir(*, keep_dims: str, etype: str = "f32") -> bytes:
    return _reduction_xml("ToySumSquare", "opset1", etype, keep_dims, (2, 3, 4), 1).encode()


def _single_reduction_xml(op_type: str, version: str, etype: str) -> str:
    return _reduction_xml(op_type, version, etype, "false", (2, 3), 1)
