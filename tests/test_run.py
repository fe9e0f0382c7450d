"""ovreduce.run on the bundled IR samples: every reduction layer runs on NumPy and OpenVINO CPU (f32) and they
agree; inputs are given, generated or refused with a message that says what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovreduce.errors import InputError, LimitExceededError, NotFoundError
from ovreduce.ir.parser import load_ir
from ovreduce.ops.registry import reductions
from ovreduce.run import layer_spec, prepare_inputs, run_layer
from ovreduce.shapes import PartialShape
from tests.cpu import reduction_executes_in

SAMPLES = Path(__file__).resolve().parent.parent / "ir_samples"

# Inputs a layer cannot run without: runtime axes, and a shape for data of dynamic rank.
GIVEN: dict[str, dict[str, Any]] = {
    "mean_one_runtime_axis": {"inputs": {"1": np.array([1], np.int64)}},
    "mean_two_runtime_axes": {"inputs": {"1": np.array([0, 2], np.int64)}},
    "mean_runtime_axes_keep": {"inputs": {"1": np.array([0, 2], np.int64)}},
    "sum_dynamic_rank": {"shapes": {"0": PartialShape.parse("[2,3]")}},
}
# Layers the CPU plugin cannot compile at all (the whole sample model fails to compile on CPU the same way): an
# output of dynamic rank. (A Parameter of dynamic rank never reaches it: the layer compiles for its inputs'
# shapes.) Seeded f32 data triggers none of the value defects.
CPU_CANNOT_COMPILE = {
    "mean_two_runtime_axes": "CPU plug-in doesn't support ReduceMean operation with dynamic rank",
}


def _sample_layers() -> list[Any]:
    cases = []
    for xml in sorted(SAMPLES.glob("*.xml")):
        model = load_ir(xml)
        try:
            for layer in model.layers:
                if layer.type in reductions():
                    cases.append(pytest.param(xml.name, layer.name, id=f"{xml.stem}-{layer.name}"))
        finally:
            model.close()
    return cases


SAMPLE_LAYERS = _sample_layers()


def test_the_samples_hold_every_reduction_type() -> None:
    types = set()
    for xml in SAMPLES.glob("*.xml"):
        model = load_ir(xml)
        types |= {layer.type for layer in model.layers if layer.type in reductions()}
        model.close()
    assert types == set(reductions())
    assert len(SAMPLE_LAYERS) >= 20


@pytest.mark.parametrize(("xml", "name"), SAMPLE_LAYERS)
def test_every_sample_reduction_runs_and_agrees(xml: str, name: str) -> None:
    model = load_ir(SAMPLES / xml)
    try:
        report = run_layer(model, name, **GIVEN.get(name, {}))
    finally:
        model.close()
    numpy_result, ov_result = report.results
    assert numpy_result.backend == "numpy" and ov_result.backend == "openvino:CPU"
    assert numpy_result.ok, numpy_result.error
    if name in CPU_CANNOT_COMPILE:
        assert not ov_result.ok and ov_result.error is not None
        assert ov_result.error.startswith("failed: ") and CPU_CANNOT_COMPILE[name] in ov_result.error
        assert not report.ok
        return
    assert ov_result.ok, ov_result.error
    assert ov_result.precision == "f32"
    (comparison,) = report.comparisons
    assert comparison.ok, comparison.to_json()
    assert report.ok
    doc = report.to_json()
    json.dumps(doc, allow_nan=False)
    assert doc["layer"]["layer_name"] == name


def test_seeded_inputs_are_reproducible() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    first = run_layer(model, "mean_last", seed=3)
    second = run_layer(model, "mean_last", seed=3)
    other = run_layer(model, "mean_last", seed=4)
    model.close()
    assert np.array_equal(first.inputs[0], second.inputs[0])
    assert not np.array_equal(first.inputs[0], other.inputs[0])


# -- which layer -----------------------------------------------------------------------------------------------
def test_unknown_layer() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    with pytest.raises(NotFoundError, match="no layer with id or name 'nope'"):
        run_layer(model, "nope")


def test_non_reduction_layer() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    with pytest.raises(InputError, match="is not a reduction; ovreduce runs ReduceMean"):
        layer_spec(model, "x")


def test_layer_by_id_and_by_name_are_the_same() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    by_name = layer_spec(model, "l1_all")
    assert layer_spec(model, by_name.layer_id) == by_name
    assert (by_name.type, by_name.axes, by_name.keep_dims) == ("ReduceL1", (0, 1, 2, 3), False)


# -- runtime axes ---------------------------------------------------------------------------------------------------
def test_runtime_axes_must_be_given() -> None:
    model = load_ir(SAMPLES / "runtime_axes.xml")
    with pytest.raises(InputError) as info:
        run_layer(model, "mean_one_runtime_axis")
    assert "takes its axes at run time" in str(info.value)
    assert "give input 1 (or 'axis') as an array of shape [1] of i64" in str(info.value)
    assert "in [-3, 2]" in str(info.value) and "--" not in str(info.value)
    assert info.value.parameter == "inputs"  # the front end names its own option for it


@pytest.mark.parametrize("key", ["1", "axis"])
def test_runtime_axes_by_port_or_parameter_name(key: str) -> None:
    model = load_ir(SAMPLES / "runtime_axes.xml")
    report = run_layer(model, "mean_one_runtime_axis", inputs={key: np.array([2], np.int64)})
    assert report.ok
    assert report.results[0].output is not None and report.results[0].output.shape == (4, 6)
    np.testing.assert_allclose(report.results[0].output, report.inputs[0].mean(axis=2), rtol=1e-6)


def test_an_unknown_input_name_lists_the_known_ones() -> None:
    model = load_ir(SAMPLES / "runtime_axes.xml")
    with pytest.raises(InputError) as info:
        run_layer(model, "mean_one_runtime_axis", inputs={"nope": np.array([2])})
    assert "'nope' names no input" in str(info.value)
    assert "0, 1, axes, axis, data, x" in str(info.value)


def test_a_given_array_of_the_wrong_shape_is_refused() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    with pytest.raises(InputError, match=r"has shape \[2, 3\] but the layer expects \[2,3,4,5\]"):
        run_layer(model, "mean_last", inputs={"x": np.zeros((2, 3), np.float32)})


def test_a_given_array_is_cast_within_its_kind_with_a_note() -> None:
    model = load_ir(SAMPLES / "all_reductions.xml")
    data = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    report = run_layer(model, "mean_last", inputs={"0": data})
    assert report.ok
    assert report.inputs[0].dtype == np.float32
    assert report.notes == ["input 0 (data): cast from float64 to f32"]
    zeros = run_layer(model, "mean_last", inputs={"0": np.zeros((2, 3, 4, 5), np.float64)})
    assert zeros.ok and zeros.notes == [
        "input 0 (data): cast from float64 to f32",
        "the backends agree on an input that cannot show an error: every one of its 120 input elements is 0.0",
    ]


# -- dynamic shapes ---------------------------------------------------------------------------------------------
def test_dynamic_dims_are_set_to_one_with_a_note() -> None:
    model = load_ir(SAMPLES / "dynamic.xml")
    report = run_layer(model, "mean_static_dim")
    assert report.inputs[0].shape == (1, 3, 16, 1)  # ? -> 1, 3..8 -> 3 (its lower bound), 1.. -> 1
    assert report.notes == [
        "input 0 (data): dynamic dimension 0 (?) set to 1",
        "input 0 (data): dynamic dimension 1 (3..8) set to 3",
        "input 0 (data): dynamic dimension 3 (1..) set to 1",
    ]
    assert report.ok


def test_shape_override_for_dynamic_input() -> None:
    model = load_ir(SAMPLES / "dynamic.xml")
    report = run_layer(model, "mean_interval_dims", shapes={"x": PartialShape.parse("[2,5,16,3]")})
    assert report.inputs[0].shape == (2, 5, 16, 3)
    assert report.notes == []
    assert report.ok
    assert report.results[1].output is not None and report.results[1].output.shape == (2, 1, 16, 1)


@pytest.mark.parametrize(("given", "chosen"), [("[?,?,16,?]", (1, 3, 16, 1)), ("[2,?,16,4..6]", (2, 3, 16, 4))])
def test_dynamic_dims_of_a_shape_override_stay_within_the_layers(given: str, chosen: tuple[int, ...]) -> None:
    """A '?' given for a dim the layer bounds (3..8) takes a size within those bounds, as with no shape at all: it was
    set to 1, which OpenVINO refused ("the layer expects [?,3..8,16,1..]")."""
    model = load_ir(SAMPLES / "dynamic.xml")
    report = run_layer(model, "mean_static_dim", shapes={"x": PartialShape.parse(given)})
    assert report.inputs[0].shape == chosen
    assert report.ok and all(result.ok for result in report.results), [r.error for r in report.results]


def test_incompatible_shape_override_is_refused() -> None:
    model = load_ir(SAMPLES / "dynamic.xml")
    with pytest.raises(InputError, match="not compatible with the layer's"):
        run_layer(model, "mean_static_dim", shapes={"x": PartialShape.parse("[2,9,16,1]")})


def test_dynamic_rank_needs_a_shape() -> None:
    model = load_ir(SAMPLES / "dynamic.xml")
    with pytest.raises(InputError, match="dynamic rank; give its shape") as info:
        prepare_inputs(model, layer_spec(model, "sum_dynamic_rank"))
    assert info.value.parameter == "shapes"


def test_a_rank_past_numpys_limit_is_refused_and_a_shape_is_advised_only_where_one_helps(tmp_path: Path) -> None:
    """An input of rank 70 cannot be made. Where the layer's rank is the model's (a Reshape to 70 dims), no shape the
    user gives changes it, and the refusal names no option to give one; a shape given a dynamic-rank input does."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 3], np.float32, name="x")
    deep = ops.reshape(x, ops.constant(np.array([3] + [1] * 69, np.int64)), special_zero=False)
    mean = ops.reduce_mean(deep, ops.constant(np.array([0], np.int64)), keep_dims=False, name="deep_mean")
    ov.save_model(ov.Model([mean], [x]), tmp_path / "deep.xml")
    xml = (tmp_path / "deep.xml").read_text()  # the 70 dims the ports declare left out (ovreduce reads 64 at most)
    (tmp_path / "deep.xml").write_text(re.sub(r"(<port [^>]*>)(?:\s*<dim>\d+</dim>){65,}", r"\1", xml))
    model = load_ir(tmp_path / "deep.xml")
    with pytest.raises(InputError, match="would have rank 70") as info:
        prepare_inputs(model, layer_spec(model, "deep_mean"))
    assert info.value.parameter is None
    dynamic = load_ir(SAMPLES / "dynamic.xml")
    with pytest.raises(InputError, match="would have rank 70") as info:
        prepare_inputs(dynamic, layer_spec(dynamic, "sum_dynamic_rank"), shapes={"y": PartialShape.static([1] * 70)})
    assert info.value.parameter == "shapes"


def test_element_limit() -> None:
    model = load_ir(SAMPLES / "spec_examples.xml")
    with pytest.raises(LimitExceededError, match="17280 elements, more than the limit of 1000"):
        run_layer(model, "mean_hw", max_elements=1000)


# -- the ovreduce.run/v1 document ------------------------------------------------------------------------------------
def test_run_document() -> None:
    model = load_ir(SAMPLES / "runtime_axes.xml")
    report = run_layer(model, "mean_runtime_axes_keep", inputs={"axes": np.array([0, 2], np.int64)})
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert {"schema", "ok", "layer", "inputs", "results", "comparisons"} <= set(doc)
    assert doc["schema"] == "ovreduce.run/v1" and doc["ok"] is True
    assert doc["layer"]["axes"] is None  # runtime axes
    assert [(i["shape"], i["datatype"]) for i in doc["inputs"]] == [([4, 6, 8], "FP32"), ([2], "INT64")]
    numpy_doc, ov_doc = doc["results"]
    assert numpy_doc["shape"] == ov_doc["shape"] == [1, 6, 1]
    assert numpy_doc["datatype"] == ov_doc["datatype"] == "FP32"
    assert ov_doc["precision"] == "f32" and ov_doc["effective_precision"] == "f32"
    assert doc["comparisons"][0]["reference"] == "numpy" and doc["comparisons"][0]["candidate"] == "openvino:CPU"


# -- ReduceMax/ReduceMin over an empty set: undefined in the specification -----------------------------------------
def _empty_ir(folder: Path, op: str, type_name: str, shape: list[int], axes: list[int], keep_dims: bool) -> Path:
    """``Parameter(type_name, shape) -> op(Const axes) -> Result``, written by OpenVINO itself."""
    import openvino as ov
    import openvino.opset1 as ops

    data = ops.parameter(shape, getattr(ov.Type, type_name), name="x")
    build = ops.reduce_max if op == "ReduceMax" else ops.reduce_min
    node = build(data, ops.constant(np.array(axes, np.int64)), keep_dims)
    node.set_friendly_name("reduce")
    xml = folder / f"{op}_{type_name}.xml"
    ov.save_model(ov.Model([ops.result(node)], [data], "empty"), str(xml), compress_to_fp16=False)
    return xml


EMPTY_TYPES = ("f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8")
EMPTY_LAYOUTS = [
    pytest.param([2, 0, 3], [1], False, id="middle"),
    pytest.param([2, 0, 3], [1], True, id="middle-keep"),
    pytest.param([0, 4], [0], False, id="first"),
    pytest.param([3, 0], [-1], True, id="last-keep"),
    pytest.param([2, 3, 0], [0, 2], False, id="two-axes"),
    pytest.param([0], [0], False, id="to-a-scalar"),
]


@pytest.mark.parametrize(("shape", "axes", "keep_dims"), EMPTY_LAYOUTS)
@pytest.mark.parametrize("type_name", EMPTY_TYPES)
@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_an_empty_max_or_min_agrees_on_cpu_and_says_why(
    tmp_path: Path, op: str, type_name: str, shape: list[int], axes: list[int], keep_dims: bool
) -> None:
    """The CPU's value for an empty ReduceMax/ReduceMin differs from OpenVINO's reference implementation's
    for several types (see test_what_the_cpu_gives_for_an_empty_max_or_min), and that is no defect: the
    specification leaves it undefined. The run agrees, counts those elements as undefined, and says why."""
    model = load_ir(_empty_ir(tmp_path, op, type_name, shape, axes, keep_dims))
    try:
        report = run_layer(model, "reduce")
    finally:
        model.close()
    numpy_result, ov_result = report.results
    assert numpy_result.ok and ov_result.ok, (numpy_result.error, ov_result.error)
    assert numpy_result.output is not None and ov_result.output is not None
    assert ov_result.output.shape == numpy_result.output.shape
    (comparison,) = report.comparisons
    assert report.ok and comparison.ok, comparison.to_json()
    assert comparison.undefined == comparison.total == numpy_result.output.size > 0
    assert comparison.mismatched == 0
    (note,) = numpy_result.notes
    assert note.startswith(f"{op} over an empty set") and "the specification leaves the value undefined" in note
    doc = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert doc["ok"] is True and doc["comparisons"][0]["undefined"] == numpy_result.output.size
    assert note in doc["results"][0]["notes"]


# What OpenVINO 2026.4's CPU plugin gives (f32 inference precision) for a ReduceMax / ReduceMin over an empty
# set, against OpenVINO's reference implementation (tests/reference/test_openvino_evaluate.py), by element type
# and the precision the CPU executes a reduction of that type in (tests/cpu.py reads it from OpenVINO): f32 max
# agrees (-FLT_MAX) but f32 min is FLT_MAX, not +inf; f64 gives f32's limits; bf16 executed natively (CPUs
# with bf16 instructions) gives bf16's finite limits, and executed through f32 (AVX2) +-inf; i64 and u64 give
# i32's limits (u64 as -2^31 wrapped); u32 gives 2^31 and 2^31 - 1; i16 gives 0 and -1.
CPU_GIVES: dict[tuple[str, str], tuple[Any, Any]] = {
    ("f64", "f32"): (-3.4028234663852886e38, 3.4028234663852886e38),
    ("f32", "f32"): (-3.4028234663852886e38, 3.4028234663852886e38),
    ("f16", "f32"): (-np.inf, np.inf),
    ("bf16", "bf16"): (-3.3895313892515355e38, 3.3895313892515355e38),
    ("bf16", "f32"): (-np.inf, np.inf),
    ("i64", "i32"): (-(2**31), 2**31 - 1),
    ("i32", "i32"): (-(2**31), 2**31 - 1),
    ("i16", "i32"): (0, -1),
    ("i8", "i8"): (-128, 127),
    ("u64", "i32"): (2**64 - 2**31, 2**31 - 1),
    ("u32", "i32"): (2**31, 2**31 - 1),
    ("u16", "i32"): (0, 65535),
    ("u8", "u8"): (0, 255),
}


@pytest.mark.parametrize("type_name", EMPTY_TYPES)
def test_what_the_cpu_gives_for_an_empty_max_or_min(tmp_path: Path, type_name: str) -> None:
    """A record of the CPU plugin's values (a failure here means the plugin changed, not ovreduce)."""
    executes = reduction_executes_in(type_name)
    gives = []
    for op in ("ReduceMax", "ReduceMin"):
        model = load_ir(_empty_ir(tmp_path, op, type_name, [2, 0, 3], [1], False))
        try:
            report = run_layer(model, "reduce", backends=["openvino"])
        finally:
            model.close()
        (result,) = report.results
        assert result.ok and result.output is not None, result.error
        assert report.document.results[0].runtime_precision == executes
        assert result.output.shape == (2, 3) and len(set(result.output.reshape(-1).tolist())) == 1
        value = result.output.reshape(-1)[0]
        gives.append(value.item() if result.output.dtype.kind in "iu" else float(value))
    assert tuple(gives) == CPU_GIVES[type_name, executes]


def test_a_u64_axis_of_2_pow_64_minus_1_is_axis_minus_1_to_the_reference(tmp_path: Path) -> None:
    """OpenVINO reads Const axes through int64, so u64 2^64-1 is -1 (check infers the shape so): the reference
    of ``run`` reduces the last axis rather than refusing the layer."""
    import openvino as ov
    import openvino.opset13 as ops

    data = ops.parameter([2, 3, 4], ov.Type.f32, name="data")
    node = ops.reduce_sum(data, ops.constant(np.array([2**64 - 1], np.uint64)), False)
    ov.save_model(ov.Model([ops.result(node)], [data], "u64"), str(tmp_path / "u64.xml"), compress_to_fp16=False)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    model = load_ir(tmp_path / "u64.xml")
    try:
        report = run_layer(model, "2", inputs={"0": x}, backends=["numpy"])
    finally:
        model.close()
    (result,) = report.results
    assert result.ok, result.error
    np.testing.assert_array_equal(report.outputs["numpy"], x.sum(axis=-1))


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_a_sum_that_cancels_is_judged_by_what_it_adds(tmp_path: Path, op: str) -> None:
    """A float sum errs in proportion to the magnitudes it adds: 4,000 normal values summing to -0.13 from terms
    whose |x| add to 3,176. OpenVINO's f32 sum was called a disagreement against the f64 reference (its error is
    1e-5 of the result, 4e-9 of what it added); the allowance it gets now says so in the document."""
    from tests.api.irs import reduce_ir

    xml, bin_data = reduce_ir(op=op, shape="4000,3", dims=(4000, 3), axes=(0,))
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(bin_data)
    model = load_ir(tmp_path / "m.xml")
    for seed in range(8):
        report = run_layer(model, "reduce", seed=seed)
        [comparison] = report.comparisons
        assert comparison.ok, (seed, comparison)
        assert comparison.allowance_max is not None
        assert op == "ReduceMean" or comparison.allowance_max > 100 * comparison.atol  # the sum's terms add to ~3,000
    explicit = run_layer(model, "reduce", seed=2, rtol=1e-5)  # tolerances given: taken as they are
    assert explicit.comparisons[0].allowance_max is None


def test_an_input_given_under_two_names_is_refused(tmp_path: Path) -> None:
    """Its port index and its Parameter's name: which one would be used depended on a set's order (the API and
    the CLI disagreed from one process to the next)."""
    from ovreduce.audit import audit_model
    from tests.api.irs import reduce_ir

    xml, bin_data = reduce_ir(op="ReduceMean", shape="2,3", dims=(2, 3), axes=(1,), param_name="d")
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(bin_data)
    model = load_ir(tmp_path / "m.xml")
    one, five = np.ones((2, 3), np.float32), np.full((2, 3), 5, np.float32)
    with pytest.raises(InputError, match="input 0 \\(data\\) is given twice, as '0' and 'd'"):
        run_layer(model, "reduce", inputs={"d": five, "0": one}, backends=["numpy"])
    with pytest.raises(InputError, match="is given twice, as '0' and 'd'"):
        run_layer(model, "reduce", shapes={"d": PartialShape.parse("[2,3]"), "0": PartialShape.parse("[2,3]")})
    with pytest.raises(InputError, match="input 'd' is given twice, as '0' and 'd'"):
        audit_model(model, inputs={"d": five, "0": one})
    assert run_layer(model, "reduce", inputs={"d": five}, backends=["numpy"]).ok


def test_a_port_index_names_its_own_input_whatever_the_parameters_are_called(tmp_path: Path) -> None:
    """Parameters named ``1`` (the data) and ``0`` (the axes): ``1`` went to both inputs, and how ``0`` and ``1``
    were read depended on the other names given. An index names its own input; so does KServe's alias."""
    import openvino as ov
    from openvino import opset13 as ops

    from ovreduce.audit import audit_model

    data, axes = ops.parameter([1], np.int64, name="1"), ops.parameter([1], np.int64, name="0")
    reduce = ops.reduce_sum(data, axes, True)
    reduce.set_friendly_name("reduce")
    ov.save_model(ov.Model([reduce], [data, axes]), tmp_path / "m.xml", compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    spec = layer_spec(model, "reduce")
    seven, zero = np.array([7], np.int64), np.array([0], np.int64)
    for given in ({"0": seven, "1": zero}, {"1": zero, "0": seven}):
        prepared = prepare_inputs(model, spec, given=given)
        assert [a.tolist() for a in prepared.arrays] == [[7], [0]]
    with pytest.raises(InputError, match="takes its axes at run time") as advice:
        prepare_inputs(model, spec, given={"0": seven})
    assert "(or" not in str(advice.value)  # no name that would lead to the data
    aliased = prepare_inputs(model, spec, given={"axes": zero, "data": seven}, aliases=("data", "axes"))
    assert [a.tolist() for a in aliased.arrays] == [[7], [0]]
    doc = audit_model(model, inputs={"0": seven, "1": zero}).to_json()
    assert [(i["name"], i["origin"]) for i in doc["inputs"]] == [("1", "given"), ("0", "given")]


def test_two_inputs_of_one_name_are_refused_by_that_name(tmp_path: Path) -> None:
    import openvino as ov
    from openvino import opset13 as ops

    from ovreduce.audit import audit_model

    first, second = ops.parameter([2], np.float32, name="x"), ops.parameter([2], np.float32, name="x")
    reduce = ops.reduce_sum(ops.add(first, second), ops.constant(np.array([0], np.int64)), False)
    ov.save_model(ov.Model([reduce], [first, second]), tmp_path / "m.xml", compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    with pytest.raises(InputError, match="'x' names input 'x' and input 'x_1'; give each input by a name only"):
        audit_model(model, inputs={"x": np.ones(2, np.float32)})
    assert audit_model(model, inputs={"0": np.ones(2, np.float32), "1": np.ones(2, np.float32)}).to_json()["ok"]


def test_an_f64_layer_computed_in_f32_says_so_where_f64_would_disagree(tmp_path: Path) -> None:
    """OpenVINO's CPU computes f64 in f32 (a known defect): judged at f32's tolerance, 1e8 + 1 - 1e8 = 0 agrees. The
    document says that at f64's it would not, and by how much; an f64 sum f32 computes exactly says nothing."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([3], ov.Type.f64, name="x")
    total = ops.reduce_sum(x, ops.constant(np.array([0], np.int64)), False, name="total")
    ov.save_model(ov.Model([total], [x]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    try:
        lossy = run_layer(model, "total", inputs={"x": np.array([1e8, 1.0, -1e8])})
        exact = run_layer(model, "total", inputs={"x": np.array([1.0, 2.0, 3.0])})
    finally:
        model.close()
    assert lossy.comparisons[0].ok  # as documented: the tolerance of the precision it was computed in
    [note] = [n for n in lossy.notes if "f64" in n]
    assert "computes f64 in f32, a known defect" in note and "not at f64's (1e-12/1e-09), off by 1 at most" in note
    assert not [n for n in exact.notes if "f64" in n]
    model = load_ir(tmp_path / "m.xml")
    try:  # an atol given that the error meets: f64's rtol with it passes too, nothing to say
        loose = run_layer(model, "total", inputs={"x": np.array([1e8, 1.0, -1e8])}, atol=1.0)
    finally:
        model.close()
    assert loose.comparisons[0].ok and not [n for n in loose.notes if "f64" in n]


def test_an_f64_reduction_is_judged_in_what_it_executed_in(tmp_path: Path) -> None:
    """An f64 ReduceSum at --precision bf16: OpenVINO's CPU executes it in f32 whatever the model was compiled for, so
    it is judged at f32's tolerance, and no note calls it computed in bf16."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([3, 4], ov.Type.f64, name="x")
    total = ops.reduce_sum(x, ops.constant(np.array([1], np.int64)), False, name="total")
    ov.save_model(ov.Model([total], [x]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    try:
        report = run_layer(
            model, "total", precision="bf16", inputs={"x": np.random.default_rng(0).normal(0, 1, (3, 4))}
        )
    finally:
        model.close()
    ran = report.results[1].runtime_precision
    assert ran is not None, report.results[1]
    want = {"f32": (1e-5, 1e-5), "f64": (1e-12, 1e-9)}.get(ran, (1e-2, 1e-2))  # (bf16's, were it executed in bf16)
    assert (report.comparisons[0].atol, report.comparisons[0].rtol) == want, (ran, report.comparisons[0])
    assert not [n for n in report.notes if "computed this f64 reduction in bf16" in n] or ran == "bf16", report.notes


@pytest.mark.parametrize(("width", "wide"), [(4096, True), (64, False)])
def test_an_agreement_at_a_tolerance_too_wide_to_show_an_error_says_so(tmp_path: Path, width: int, wide: bool) -> None:
    """At bf16 a mean of 4,096 values is judged at rtol 0.5 (grown with the elements, as OpenVINO's own bf16 execution
    needs): an output of 0 would agree with any positive mean. The agreement stands, and a note says it shows no
    error smaller than that; a mean of 64 values is judged tightly, and says nothing."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([1, width], ov.Type.f32, name="x")
    mean = ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), False, name="mean")
    ov.save_model(ov.Model([mean], [x]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    try:
        report = run_layer(model, "mean", precision="bf16")
        given = run_layer(model, "mean", precision="bf16", rtol=0.5)
    finally:
        model.close()
    notes = [n for n in report.notes if "the agreement shows no smaller error" in n]
    # (a CPU without bf16 computes in f32, judged tightly: tests/cpu.py)
    judged_wide = report.comparisons[0].rtol >= 0.1
    assert judged_wide == (wide and report.results[1].precision == "bf16"), report.comparisons[0]
    assert report.outcome == "agree" and bool(notes) == judged_wide, report.notes
    if judged_wide:
        assert f"grown with the {width} elements" in notes[0]
    assert not [n for n in given.notes if "the agreement shows no smaller error" in n]  # an rtol given is the user's


@pytest.mark.parametrize(("op", "decides"), [("ReduceLogicalAnd", False), ("ReduceLogicalOr", True)])
@pytest.mark.parametrize(
    ("shape", "axes"), [((8, 3, 4), [1, 2]), ((3, 4), [0, -1]), ((4, 3, 2), [0]), ((2, 3, 4), [2, 0])]
)
def test_a_logical_reduction_runs_on_slices_each_output_of_which_one_element_decides(
    tmp_path: Path, op: str, decides: bool, shape: tuple[int, ...], axes: list[int]
) -> None:
    """At fair odds, each slice of 12 booleans held a False (an AND's output) or a True (an OR's) about 6 times: no
    output depended on any one element. The data made now holds the deciding value once or not at all in each slice,
    both where there are two slices or more; an input whose slices hold it twice or more is run, and said to show
    no error; one that holds it once, last, is established (a kernel that misses the last element gets it wrong)."""
    import openvino as ov
    from openvino import opset13 as ops

    flags = ops.parameter(list(shape), bool, name="flags")
    build = ops.reduce_logical_and if op == "ReduceLogicalAnd" else ops.reduce_logical_or
    reduction = build(flags, ops.constant(np.array(axes)), False, name="r")
    ov.save_model(ov.Model([reduction], [flags]), tmp_path / "m.xml")
    model = load_ir(tmp_path / "m.xml")
    reduced = tuple(a % len(shape) for a in axes)
    for seed in range(5):
        report = run_layer(model, "r", seed=seed)
        assert report.ok and not report.notes, report
        counts = np.sum(report.inputs[0] == decides, axis=reduced).reshape(-1)
        assert set(counts.tolist()) <= {0, 1} and (counts.size == 1 or set(counts.tolist()) == {0, 1}), counts
        assert np.array_equal(report.results[0].output.reshape(-1), counts == (1 if decides else 0))
    index = np.indices(shape)  # each element's place in its slice:
    place = np.ravel_multi_index(tuple(index[a] for a in reduced), tuple(shape[a] for a in reduced))
    twice = np.where(place < 2, decides, not decides)
    where = f"axes {sorted(reduced)} of input shape {list(shape)}"
    given = run_layer(model, "r", inputs={"flags": twice})
    assert given.ok and given.notes == [
        f"the backends agree on an input that cannot show an error: each slice it reduces ({where}) holds {decides} "
        f"twice or more: every output element is {decides}, and stays so whichever one element a kernel misses or "
        f"misreads"
    ], given.notes
    last = np.where(place == place.max(), decides, not decides)
    assert run_layer(model, "r", inputs={"flags": last}).notes == []


@pytest.mark.parametrize(("op", "etype"), [("ReduceMax", np.uint8), ("ReduceMin", np.int8), ("ReduceMax", np.int16)])
def test_an_integer_max_or_min_runs_on_slices_whose_extreme_is_there_once(tmp_path: Path, op: str, etype: type) -> None:
    """Made over an 8-bit type's whole range, each slice of 4,096 held the type's limit about 16 times: every output
    was that limit, whatever a kernel missed. Made now, each slice's extreme is there once; an input whose slices hold
    the limit twice or more is run, and said to show no error."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([4, 4096], etype, name="x")
    build = ops.reduce_max if op == "ReduceMax" else ops.reduce_min
    ov.save_model(ov.Model([build(x, ops.constant(np.array([1])), False, name="r")], [x]), tmp_path / "m.xml")
    model = load_ir(tmp_path / "m.xml")
    for seed in range(3):
        report = run_layer(model, "r", seed=seed)
        assert report.ok and not report.notes, report
        data, out = report.inputs[0], report.results[0].output
        assert np.all(np.sum(data == out[:, None], axis=1) == 1), np.sum(data == out[:, None], axis=1)
    limit = np.iinfo(etype).max if op == "ReduceMax" else np.iinfo(etype).min
    twice = np.random.default_rng(0).integers(-100, 100, (4, 4096)).astype(etype)
    twice[:, 5] = twice[:, 9] = limit
    given = run_layer(model, "r", inputs={"x": twice})
    assert given.ok and given.notes == [
        f"the backends agree on an input that cannot show an error: each slice it reduces (axes [1] of input shape "
        f"[4, 4096]) holds {limit} twice or more: every output element is {limit}, and stays so whichever one element "
        f"a kernel misses or misreads"
    ], given.notes


@pytest.mark.parametrize(("etype", "width"), [(np.float32, 64), (np.float32, 2000), (np.int32, 64), (np.int16, 64)])
def test_a_product_runs_on_factors_each_of_which_shows(tmp_path: Path, etype: type, width: int) -> None:
    """Normal floats made a product of 64 below any tolerance (of 2,000, exactly 0), and 64 seeded integers held 32
    factors of 2, so the product wrapped to 0: a kernel that gives zeros agreed. The factors made now give products
    that zeros do not match; a product within the tolerance of 0, given, is run and said to show no error."""
    import openvino as ov
    from openvino import opset13 as ops

    from ovreduce.compare import compare

    x = ops.parameter([4, width], etype, name="x")
    prod = ops.reduce_prod(x, ops.constant(np.array([1])), False, name="r")
    ov.save_model(ov.Model([prod], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    for seed in range(3):
        report = run_layer(model, "r", seed=seed)
        assert report.ok and not report.notes, report
        [agreement] = report.comparisons
        expected = report.results[0].output
        zeros = compare(expected, np.zeros_like(expected), atol=agreement.atol, rtol=agreement.rtol)
        assert not zeros.ok, expected
    if etype == np.float32:
        given = np.random.default_rng(0).standard_normal((4, width)).astype(etype)
        within = "within the absolute tolerance (1e-05) of 0"
    else:
        given = np.random.default_rng(0).choice([2, 4, 6], (4, width)).astype(etype)  # 64 factors of 2 or more
        within = "0"
    report = run_layer(model, "r", inputs={"x": given})
    assert report.ok and report.notes == [
        f"the backends agree on an input that cannot show an error: every output element the reference computes is "
        f"{within} (a product of many small factors, or one that wraps to 0), as a kernel that misses elements or "
        f"gives zeros computes it"
    ], report.notes


def test_a_logical_reduction_of_a_scalar_runs_on_a_scalar(tmp_path: Path) -> None:
    """The booleans made for a logical reduction kept their rank 0 no longer (a scalar came out [1]), and OpenVINO was
    reported failed on ovreduce's input."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter(ov.PartialShape([]), bool, name="x")
    reduction = ops.reduce_logical_and(x, ops.constant(np.array([], np.int64)), False, name="all")
    ov.save_model(ov.Model([reduction], [x]), tmp_path / "m.xml")
    report = run_layer(load_ir(tmp_path / "m.xml"), "all")
    assert report.inputs[0].shape == () and all(r.error is None for r in report.results), report


def test_a_long_sum_is_allowed_its_rounding_once_alike_in_run_audit_and_conform(tmp_path: Path) -> None:
    """An f16 ReduceSum over 4,096 normal values per row is judged at rtol 2^-10 x sqrt(4096), grown for the rounding a
    long sum accumulates; its allowance multiplied the sum of |x| by that grown rtol again (205 against sums of 22 to
    81), so an output of 0, the negated sum or twice the sum agreed. Each element is now allowed the table's rtol
    times the sum of |x| it adds, the same in run, audit and conform: OpenVINO's sums agree, and none of those would."""
    import onnx
    import openvino as ov
    from onnx import TensorProto, helper, numpy_helper
    from openvino import opset13 as ops

    from ovreduce.audit import audit_model
    from ovreduce.compare import compare
    from ovreduce.conform import conform_model

    x = np.random.default_rng(0).standard_normal((4, 4096)).astype(np.float16)
    data = ops.parameter([4, 4096], ov.Type.f16, name="x")
    total = ops.reduce_sum(data, ops.constant(np.array([1], np.int64)), False, name="total")
    ov.save_model(ov.Model([total], [data]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="total", keepdims=0)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4, 4096])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4])],
        initializer=[numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    proto.ir_version = 9
    onnx.save(proto, str(tmp_path / "m.onnx"))
    model = load_ir(tmp_path / "m.xml")
    try:
        report = run_layer(model, "total", inputs={"x": x}, precision="f32")
        audited = audit_model(model, inputs={"x": x}, precision="f32")
    finally:
        model.close()
    conformed = conform_model(tmp_path / "m.onnx", inputs={"x": x})
    [judged] = report.comparisons
    [row] = [layer for layer in audited.layers if layer.layer_name == "total"]
    [node] = conformed.nodes
    assert judged.ok and row.status == "ok" and node.status == "ok", (judged, row, node)
    sums = report.outputs["numpy"].astype(np.float64)
    mass = np.abs(x.astype(np.float64)).sum(axis=1)
    assert judged.allowance_max == pytest.approx(1e-3 * mass.max())  # f16's rtol, not grown
    assert row.allowance_max == judged.allowance_max == node.allowance_max, (row, node)
    for wrong in (np.zeros_like(sums), -sums, 2 * sums):  # each is off by its whole sum or more
        assert not compare(sums, wrong, atol=judged.atol, rtol=judged.rtol, allowance=1e-3 * mass).ok
    assert not [n for n in report.notes if "the agreement shows no smaller error" in n], report.notes


@pytest.mark.parametrize("etype", ["f16", "bf16", "f32"])
def test_a_product_of_generated_floats_is_established_in_every_float_type(tmp_path: Path, etype: str) -> None:
    """run makes a ReduceProd's input as factors whose product is about 1 (normal values gave ~1e-20 over 128 of
    them, within the tolerance of 0): for f16 and f32, but not for bf16, a void-kind type of ml_dtypes, whose product
    stayed that small and agreed on an input that cannot show an error. Each is established now."""
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([2, 128], getattr(ov.Type, etype), name="x")
    prod = ops.reduce_prod(x, ops.constant(np.array([1], np.int64)), False, name="red")
    ov.save_model(ov.Model([prod], [x]), str(tmp_path / "m.xml"), compress_to_fp16=False)
    model = load_ir(tmp_path / "m.xml")
    try:
        report = run_layer(model, "red")
    finally:
        model.close()
    assert report.outcome == "agree" and report.not_established is None, report.notes
    assert np.all(np.abs(report.outputs["numpy"].astype(np.float64)) > report.comparisons[0].atol)


@pytest.mark.parametrize(
    ("option", "value"),
    [("atol", -1.0), ("atol", float("nan")), ("rtol", float("inf")), ("rtol", "0.1"), ("seed", -1), ("seed", 2**63),
     ("seed", 1.5), ("seed", True)],
)  # fmt: skip
@pytest.mark.parametrize("function", ["run_layer", "audit_model", "conform_model"])
def test_the_library_refuses_the_options_the_commands_refuse(function: str, option: str, value: Any) -> None:
    """A negative or NaN tolerance made a false ``disagree`` (every reduction ``error`` in an audit), a negative seed
    NumPy's own ValueError, from the library, where the CLI and the service refuse them: an InputError naming the
    parameter."""
    import ovreduce

    if function == "conform_model":
        call = lambda **kw: ovreduce.conform_model(ONNX, **kw)  # noqa: E731
    elif function == "audit_model":
        call = lambda **kw: ovreduce.audit_model(load_ir(SAMPLES / "spec_examples.xml"), precision="f32", **kw)  # noqa: E731
    else:
        call = lambda **kw: run_layer(load_ir(SAMPLES / "spec_examples.xml"), "8", precision="f32", **kw)  # noqa: E731
    with pytest.raises(InputError) as caught:
        call(**{option: value})
    assert caught.value.parameter == option
    assert str(caught.value).startswith(f"{option} must be ")


ONNX = SAMPLES.parent / "tests" / "golden" / "models" / "several_reductions.onnx"


def test_numpy_numbers_are_options_like_any_other() -> None:
    """The refusal is of values, not of types: NumPy's scalars are taken, and 0 is a tolerance."""
    model = load_ir(SAMPLES / "spec_examples.xml")
    report = run_layer(model, "8", precision="f32", atol=np.float32(1e-4), rtol=0, seed=np.int64(3))
    assert report.ok
