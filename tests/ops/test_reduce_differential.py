"""ovreduce's Reduce* shape inference against the installed OpenVINO runtime, the ground truth.

Random cases (tests/ops/gen_models.py) are built with OpenVINO's Python API, 16 independent cases to a
saved model. For every reduction OpenVINO accepted, ovreduce's inferred output shape must equal the one
``Core.read_model`` infers for the saved file, the untouched file must check clean, and a copy with one
declared output dim altered must be flagged at exactly that layer. For every reduction OpenVINO refused
while building, ovreduce's shape rule must refuse too, with OpenVINO's message. Invalid IRs that the
Python API cannot save are made by editing saved ones (the ``HAND_EDITS`` table): ovreduce must report
``reduce-invalid`` with the message ``read_model`` refuses the same file with.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

from ovreduce import ModelCheck, ReductionCheck, check_model, load_ir, parse_ir
from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import element_type
from ovreduce.ir.weights import Weights
from ovreduce.ops.registry import reductions
from ovreduce.shapes import Dimension, PartialShape

from .gen_models import CONSTRUCTORS, Case, StepResult, batches, build_batch, last_line, random_cases

SEED = 2026
CASES = random_cases(SEED, 640)
BATCHES = batches(CASES, 16)
BATCH_OF = {case.id: i for i, batch in enumerate(BATCHES) for case in batch}
MIN_COMPARED = 500


def to_shape(pshape: Any) -> PartialShape:
    """An ``openvino.PartialShape`` as ovreduce's, intervals and dynamic rank included."""
    if pshape.rank.is_dynamic:
        return PartialShape(None)
    dims = []
    for d in pshape:
        hi = int(d.get_max_length())
        dims.append(Dimension(max(int(d.get_min_length()), 0), None if hi < 0 else hi))
    return PartialShape(tuple(dims))


@dataclass
class Saved:
    """One saved batch: OpenVINO's view of it and ovreduce's check of the untouched file."""

    xml: Path
    xml_bytes: bytes
    steps: dict[str, list[StepResult]]
    openvino: dict[str, PartialShape]  # reduction name -> shape read_model infers
    report: ModelCheck


@pytest.fixture(scope="module")
def core() -> Any:
    return ov.Core()


@pytest.fixture(scope="module")
def saved_batch(tmp_path_factory: pytest.TempPathFactory, core: Any) -> Callable[[int], Saved]:
    """Batch index -> the saved batch, built on first use (so one selected test builds one batch)."""
    cache: dict[int, Saved] = {}
    folder = tmp_path_factory.mktemp("differential")

    def get(index: int) -> Saved:
        if index not in cache:
            built = build_batch(BATCHES[index], f"batch{index}")
            xml = folder / f"batch{index:02d}.xml"
            ov.save_model(built.model, str(xml), compress_to_fp16=False)
            names = {s.name for steps in built.steps.values() for s in steps if s.node is not None}
            read = core.read_model(str(xml))
            shapes = {n.get_friendly_name(): to_shape(n.get_output_partial_shape(0)) for n in read.get_ordered_ops()}
            model = load_ir(xml)
            try:
                report = check_model(model)
            finally:
                model.close()
            cache[index] = Saved(xml, xml.read_bytes(), built.steps, {n: shapes[n] for n in names}, report)
        return cache[index]

    return get


def _refusal_by_ovreduce(step: StepResult) -> str | None:
    """ovreduce's shape rule on the inputs OpenVINO refused: its message, or None if it accepts them."""
    try:
        reductions()[step.op].output_shape(
            to_shape(step.data_shape),
            to_shape(step.axes_shape),
            step.axes,
            step.keep_dims,
            data_type=element_type(step.data_type),
            axes_type=element_type(step.axes_type),
        )
    except ShapeInferenceError as exc:
        return exc.message
    return None


# -- (a) every reduction: ovreduce's shape is OpenVINO's, refusals are shared ------------------------------
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reduction_matches_openvino(case: Case, saved_batch: Callable[[int], Saved]) -> None:
    saved = saved_batch(BATCH_OF[case.id])
    reports = {r.layer_name: r for r in saved.report.reductions}
    for step in saved.steps[case.id]:
        if step.refusal is not None:
            assert _refusal_by_ovreduce(step) == step.refusal, (
                f"{step.name}: OpenVINO refuses {step.op}(data {step.data_shape} {step.data_type}, axes "
                f"{step.axes} {step.axes_shape} {step.axes_type}, keep_dims={step.keep_dims}) with "
                f"{step.refusal!r}; ovreduce's message must be the same"
            )
            continue
        report = reports[step.name]
        expected = saved.openvino[step.name]
        assert expected == to_shape(step.node.get_output_partial_shape(0)), "read_model differs from the build"
        assert inferred(report) == expected, (
            f"{step.name}: ovreduce infers {report.inferred_output_shape} for {step.op}(input "
            f"{report.input_shape}, axes {step.axes} {step.axes_shape}, keep_dims={step.keep_dims}); "
            f"OpenVINO infers {expected}"
        )
        assert report.status == "ok", f"{step.name}: status {report.status}"


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[f"s{SEED}-batch{i:02d}" for i in range(len(BATCHES))])
def test_untouched_model_checks_clean(index: int, saved_batch: Callable[[int], Saved]) -> None:
    saved = saved_batch(index)
    assert saved.report.error is None
    errors = [f"{f.code} {f.layer_name}: {f.message}" for f in saved.report.findings if f.severity == "error"]
    assert errors == []
    assert {r.layer_name for r in saved.report.reductions} == set(saved.openvino)


# -- (b) one declared output dim altered: flagged at exactly that layer -----------------------------------
def _eligible(root: Any, names: list[str]) -> Iterator[tuple[str, Any]]:
    """Reductions (in ``names`` order) whose output port declares a static dim, with that port."""
    layers = {el.get("name"): el for el in root.iter("layer")}
    for name in names:
        port = layers[name].find("output/port")
        if port is not None and any(d.text.strip() != "-1" for d in port.findall("dim")):
            yield name, port


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_altered_output_dim_is_flagged(case: Case, saved_batch: Callable[[int], Saved]) -> None:
    saved = saved_batch(BATCH_OF[case.id])
    root = etree.fromstring(saved.xml_bytes)
    own = [s.name for s in saved.steps[case.id] if s.node is not None]
    # This case's reductions first, then the batch's others (from this case on), so every case alters one.
    ids = list(saved.steps)
    start = ids.index(case.id)
    others = [s.name for cid in ids[start + 1 :] + ids[:start] for s in saved.steps[cid] if s.node is not None]
    target = next(_eligible(root, own + others), None)
    assert target is not None, "no reduction in the batch declares a static output dim"
    name, port = target
    rng = random.Random(name)
    dim = rng.choice([d for d in port.findall("dim") if d.text.strip() != "-1"])
    dim.text = str(int(dim.text) + rng.randint(1, 3))  # any other size contradicts a static dim
    with Weights(saved.xml.with_suffix(".bin")) as weights:
        report = check_model(parse_ir(etree.tostring(root), weights, source="altered.xml"))
    flagged = {f.layer_name for f in report.findings if f.code == "reduce-output-mismatch"}
    assert flagged == {name}


# -- coverage: the generator still produces what this file claims to test -----------------------------------
def test_generator_coverage(saved_batch: Callable[[int], Saved]) -> None:
    compared: list[StepResult] = []
    refused: list[StepResult] = []
    for index in range(len(BATCHES)):
        for steps in saved_batch(index).steps.values():
            compared += [s for s in steps if s.refusal is None]
            refused += [s for s in steps if s.refusal is not None]
    assert len(compared) >= MIN_COMPARED
    assert {s.op for s in compared} == set(reductions())
    outputs = [to_shape(s.node.get_output_partial_shape(0)) for s in compared]
    inputs = [to_shape(s.data_shape) for s in compared]
    assert any(s.dims is None for s in outputs), "no dynamic-rank output"
    assert any(s.dims is None for s in inputs), "no dynamic-rank input"
    assert any(d.hi is not None and not d.is_static for s in outputs if s.dims for d in s.dims), "no interval"
    assert any(s.dims == () for s in inputs), "no scalar input"
    assert any(s.axes is None for s in compared), "no runtime axes"
    assert any(s.axes == [] for s in compared), "no empty axes"
    assert any(s.axes and len(set(s.axes)) < len(s.axes) for s in compared), "no literally duplicate axes"
    assert any(s.axes and min(s.axes) < 0 for s in compared), "no negative axes"
    assert any(s.name.endswith("/r2") for s in compared), "no chain 3 deep"
    messages = collections.Counter(r.refusal.split(" out of")[0].split(" Got")[0] for r in refused if r.refusal)
    for expected in (
        "Element type of data input must be numeric.",
        "Element type of data input must be boolean.",
        "Element type of axes input must be integer.",
        "Axes input must be a scalar or 1D input.",
        "Accessing out-of-range dimension",
    ):
        assert messages[expected] > 0, f"no case refused with {expected!r}: {messages}"
    assert any(m.startswith("Axis ") for m in messages), "no out-of-range axis"


# -- invalid IRs the Python API cannot save: made by editing a saved file ------------------------------------
@dataclass(frozen=True)
class HandEdit:
    id: str
    data_shape: list[int]
    data_type: str
    op: str
    axes: list[int]
    axes_type: str
    keep_dims: bool
    edit: str  # "axes_bytes", "keep_dims", "data_type", "axes_type", "axes_shape"
    value: Any
    message: str
    convert: bool = False  # axes through Const -> Convert(i64)


HAND_EDITS = [
    HandEdit("axis-too-large", [2, 3, 4], "f32", "ReduceSum", [1], "i64", False, "axes_bytes", [3],
             "Axis 3 out of the tensor rank range [-3, 2]."),
    HandEdit("axis-too-small-keep", [2, 3, 4], "f32", "ReduceMean", [0, 1], "i64", True, "axes_bytes", [0, -4],
             "Axis -4 out of the tensor rank range [-3, 2]."),
    HandEdit("axis-out-of-range-i32", [5], "f16", "ReduceMax", [0], "i32", True, "axes_bytes", [1],
             "Axis 1 out of the tensor rank range [-1, 0]."),
    HandEdit("axis-out-of-range-via-convert", [2, 2, 2, 2], "f32", "ReduceL2", [1, 2], "i32", False, "axes_bytes",
             [1, 9], "Axis 9 out of the tensor rank range [-4, 3].", convert=True),
    HandEdit("axis-out-of-range-logical", [3, 1], "boolean", "ReduceLogicalOr", [1], "i64", False, "axes_bytes",
             [-3], "Axis -3 out of the tensor rank range [-2, 1]."),
    HandEdit("scalar-axis-out-of-range", [], "f32", "ReduceProd", [0], "i64", False, "axes_bytes", [1],
             "Axis 1 out of the tensor rank range [-1, 0]."),
    HandEdit("scalar-axis-keep-dims", [], "f32", "ReduceMin", [0], "i64", False, "keep_dims", "true",
             "Accessing out-of-range dimension"),
    HandEdit("bool-data-mean", [2, 3], "f32", "ReduceMean", [1], "i64", False, "data_type", "boolean",
             "Element type of data input must be numeric. Got: boolean"),
    HandEdit("f32-data-logical", [2, 3], "boolean", "ReduceLogicalAnd", [1], "i64", False, "data_type", "f32",
             "Element type of data input must be boolean."),
    HandEdit("f32-axes", [2, 3], "f32", "ReduceSum", [1], "i32", False, "axes_type", "f32",
             "Element type of axes input must be integer. Got: f32"),
    HandEdit("2d-axes", [2, 3], "f32", "ReduceL1", [0, 1], "i64", True, "axes_shape", [1, 2],
             "Axes input must be a scalar or 1D input. Got: [1,2]"),
]  # fmt: skip
_PRECISION = {"boolean": "BOOL", "f32": "FP32"}


def _save_single(edit: HandEdit, folder: Path) -> Path:
    data = ops.parameter(ov.PartialShape(edit.data_shape), getattr(ov.Type, edit.data_type), name="data")
    axes_const = ops.constant(np.array(edit.axes, dtype=np.dtype(edit.axes_type.replace("i", "int"))))
    axes_const.set_friendly_name("axes")
    axes = ops.convert(axes_const, "i64") if edit.convert else axes_const
    ctor = {"ReduceSum": ops.reduce_sum, "ReduceMean": ops.reduce_mean, "ReduceMax": ops.reduce_max,
            "ReduceL2": ops.reduce_l2, "ReduceL1": ops.reduce_l1, "ReduceProd": ops.reduce_prod,
            "ReduceMin": ops.reduce_min, "ReduceLogicalOr": ops.reduce_logical_or,
            "ReduceLogicalAnd": ops.reduce_logical_and}[edit.op]  # fmt: skip
    node = ctor(data, axes, edit.keep_dims)
    node.set_friendly_name("reduce")
    xml = folder / "model.xml"
    ov.save_model(ov.Model([ops.result(node)], [data], edit.id), str(xml), compress_to_fp16=False)
    return xml


def _apply(edit: HandEdit, xml: Path) -> None:
    root = etree.fromstring(xml.read_bytes())
    layers = {el.get("name"): el for el in root.iter("layer")}
    reduce, axes, data = layers["reduce"], layers["axes"], layers["data"]
    if edit.edit == "axes_bytes":
        const = axes.find("data")
        raw = np.array(edit.value, dtype=np.dtype(edit.axes_type.replace("i", "int"))).tobytes()
        assert len(raw) == int(const.get("size"))
        blob = bytearray(xml.with_suffix(".bin").read_bytes())
        offset = int(const.get("offset"))
        blob[offset : offset + len(raw)] = raw
        xml.with_suffix(".bin").write_bytes(bytes(blob))
    elif edit.edit == "keep_dims":
        reduce.find("data").set("keep_dims", edit.value)
    elif edit.edit == "data_type":
        data.find("data").set("element_type", edit.value)
        for port in (data.find("output/port"), reduce.find("input/port")):
            port.set("precision", _PRECISION[edit.value])
    elif edit.edit == "axes_type":
        axes.find("data").set("element_type", edit.value)
        for port in (axes.find("output/port"), reduce.findall("input/port")[1]):
            port.set("precision", _PRECISION[edit.value])
    elif edit.edit == "axes_shape":
        axes.find("data").set("shape", ",".join(str(d) for d in edit.value))
        for port in (axes.find("output/port"), reduce.findall("input/port")[1]):
            for dim in port.findall("dim"):
                port.remove(dim)
            for size in edit.value:
                etree.SubElement(port, "dim").text = str(size)
    else:  # pragma: no cover - a typo in the table
        raise AssertionError(edit.edit)
    xml.write_bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))


@pytest.mark.parametrize("edit", HAND_EDITS, ids=[e.id for e in HAND_EDITS])
def test_hand_edited_invalid_ir(edit: HandEdit, tmp_path: Path, core: Any) -> None:
    xml = _save_single(edit, tmp_path)
    core.read_model(str(xml))  # the untouched file is valid
    _apply(edit, xml)
    with pytest.raises(RuntimeError) as refused:
        core.read_model(str(xml))
    assert last_line(refused.value) == edit.message
    model = load_ir(xml)
    try:
        report = check_model(model)
    finally:
        model.close()
    invalid = [(f.layer_name, f.message) for f in report.findings if f.code == "reduce-invalid"]
    assert [(name, message[: len(edit.message)]) for name, message in invalid] == [("reduce", edit.message)], invalid
    assert [r.status for r in report.reductions] == ["error"]  # (OpenVINO's words first, then what they leave out)


# -- unusual but valid files ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Unusual:
    id: str
    op: str
    data_shape: str
    data_type: str
    axes: Any  # a NumPy array (a Const) or (shape, element type) of a runtime axes Parameter
    keep_dims: bool = False


UNUSUAL = [
    # OpenVINO reads u64 axes through int64: 2^64-1 is axis -1.
    Unusual("u64-max-is-axis-minus-1", "ReduceSum", "[2,3,4]", "f32", np.array([2**64 - 1], dtype=np.uint64)),
    # is_integral_number() is "not real, not boolean": string data passes the arithmetic check ...
    Unusual("string-data", "ReduceMax", "[2,3]", "string", np.array([1], dtype=np.int64)),
    Unusual("string-data-keep", "ReduceSum", "[2,?]", "string", np.array([-1], dtype=np.int32), True),
    # ... and string, nf4 and dynamic axes pass the axes check.
    Unusual("string-axes", "ReduceMean", "[2,3,4]", "f32", ("[1]", "string")),
    Unusual("nf4-axes", "ReduceL1", "[2,3,4]", "f32", ("[1]", "nf4")),
    Unusual("dynamic-axes-type", "ReduceL2", "[2,3,4]", "f32", ("[2]", "dynamic"), True),
    Unusual("dynamic-data-type-logical", "ReduceLogicalAnd", "[2,3]", "dynamic", np.array([0], dtype=np.int64)),
    Unusual("u1-data", "ReduceProd", "[8,2]", "u1", np.array([0], dtype=np.int64)),
    Unusual("f8-data", "ReduceMin", "[3,4]", "f8e4m3", np.array(1, dtype=np.int64), True),
    Unusual("scalar-axis-0-of-a-scalar", "ReduceMean", "[]", "f32", np.array([0, -1], dtype=np.int64)),
    Unusual("runtime-axes-of-a-scalar", "ReduceSum", "[]", "f32", ("[1]", "i64")),
]


@pytest.mark.parametrize("case", UNUSUAL, ids=[u.id for u in UNUSUAL])
def test_unusual_valid_file(case: Unusual, tmp_path: Path, core: Any) -> None:
    data = ops.parameter(ov.PartialShape(case.data_shape), getattr(ov.Type, case.data_type), name="data")
    params = [data]
    if isinstance(case.axes, np.ndarray):
        axes = ops.constant(case.axes).output(0)
    else:
        params.append(ops.parameter(ov.PartialShape(case.axes[0]), getattr(ov.Type, case.axes[1]), name="axes"))
        axes = params[-1].output(0)
    node = getattr(ops, CONSTRUCTORS[case.op])(data, axes, case.keep_dims)
    xml = tmp_path / "model.xml"
    ov.save_model(ov.Model([ops.result(node)], params, case.id), str(xml), compress_to_fp16=False)
    expected = to_shape(core.read_model(str(xml)).get_results()[0].get_output_partial_shape(0))
    model = load_ir(xml)
    try:
        report = check_model(model)
    finally:
        model.close()
    assert [inferred(r) for r in report.reductions] == [expected]
    assert [f.message for f in report.findings if f.severity == "error"] == []


def inferred(report: ReductionCheck) -> PartialShape | None:
    """The report's inferred output shape as a shape (None when unresolved)."""
    return PartialShape.from_json(report.inferred_output_shape) if report.inferred_output_resolved else None


def test_fp16_compressed_file(tmp_path: Path, core: Any) -> None:
    """compress_to_fp16 writes f32 Consts as f16 Const -> Convert(f32): the data shape flows through it."""
    data = ops.constant(np.ones((4, 5, 6), dtype=np.float32))
    axes = ops.convert(ops.constant(np.array([2, -3], dtype=np.float16)), "i64")
    node = ops.reduce_mean(data, axes, True)
    node.set_friendly_name("reduce")
    param = ops.parameter(ov.PartialShape([1]), ov.Type.f32, name="unused")
    xml = tmp_path / "model.xml"
    ov.save_model(ov.Model([ops.result(node)], [param], "fp16"), str(xml), compress_to_fp16=True)
    types = {el.find("data").get("element_type") for el in etree.fromstring(xml.read_bytes()).iter("layer")
             if el.get("type") == "Const"}  # fmt: skip
    assert "f16" in types
    expected = to_shape(core.read_model(str(xml)).get_results()[0].get_output_partial_shape(0))
    model = load_ir(xml)
    try:
        report = check_model(model)
    finally:
        model.close()
    assert [inferred(r) for r in report.reductions] == [expected] == [PartialShape.static([1, 5, 1])]
    assert [f.message for f in report.findings if f.severity == "error"] == []


def test_convert_that_wraps_axes_is_refused_as_openvino_refuses_it(tmp_path: Path, core: Any) -> None:
    """Const i64 -1 -> Convert(u8) is axis 255 for OpenVINO, and for ovreduce, which folds the wrap as OpenVINO does:
    both refuse the model in the same words."""
    edit = HandEdit("wrap", [2, 3], "f32", "ReduceSum", [1], "i64", False, "axes_bytes", [-1], "", convert=True)
    xml = _save_single(edit, tmp_path)
    root = etree.fromstring(xml.read_bytes())
    convert = next(el for el in root.iter("layer") if el.get("type") == "Convert")
    convert.find("data").set("destination_type", "u8")
    convert.find("output/port").set("precision", "U8")
    reduce = next(el for el in root.iter("layer") if el.get("name") == "reduce")
    reduce.findall("input/port")[1].set("precision", "U8")
    xml.write_bytes(etree.tostring(root))
    _apply(edit, xml)
    with pytest.raises(RuntimeError) as refused:
        core.read_model(str(xml))
    assert last_line(refused.value) == "Axis 255 out of the tensor rank range [-2, 1]."
    model = load_ir(xml)
    try:
        report = check_model(model)
    finally:
        model.close()
    assert [r.status for r in report.reductions] == ["error"]
    found = [(f.code, f.message) for f in report.findings if f.layer_name == "reduce"]
    assert found == [("reduce-invalid", last_line(refused.value))], found
