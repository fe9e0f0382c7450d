"""The OpenVINO backend itself: its compiled-layer cache, precisions, devices, runtime axes, dynamic shapes
and the bf16 tensor conversion. Everything runs on the installed OpenVINO runtime; nothing is mocked."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import openvino as ov
import pytest

from ovreduce.backends.numpy import NumPyBackend
from ovreduce.backends.openvino import (
    LayerCache,
    OpenVINOBackend,
    available_devices,
    check_device,
    from_tensor,
    precision_name,
    to_tensor,
)
from ovreduce.compare import compare, default_tolerances
from ovreduce.errors import DeviceNotAvailableError, InputError

from .layers import describe, layer, run

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8


@pytest.fixture
def cache() -> LayerCache:
    return LayerCache(64)


def _counts(cache: LayerCache) -> tuple[int, int]:
    return cache.hits, cache.misses


def _delta(cache: LayerCache, before: tuple[int, int]) -> tuple[int, int]:
    return cache.hits - before[0], cache.misses - before[1]


# -- the compiled-layer cache ---------------------------------------------------------------------------------
def test_backends_own_their_cache_unless_given_one(cache: LayerCache) -> None:
    assert OpenVINOBackend("CPU", "f32").cache is not OpenVINOBackend("CPU", "f32").cache
    assert OpenVINOBackend("CPU", "f32", cache=cache).cache is cache


def test_cache_is_bounded() -> None:
    small = LayerCache(2)
    backend = OpenVINOBackend("CPU", "f32", cache=small)
    for axis in range(3):
        assert backend.infer(layer("ReduceSum", "f32", [2, 3, 4], [axis], False), [X]).ok
    assert len(small) == 2
    before = _counts(small)
    backend.infer(layer("ReduceSum", "f32", [2, 3, 4], [0], False), [X])  # the least recently used: evicted
    assert _delta(small, before) == (0, 1)


def test_same_layer_compiles_once(cache: LayerCache) -> None:
    spec = layer("ReduceMean", "f32", [2, 3, 4], [1], False)
    backend = OpenVINOBackend("CPU", "f32", cache=cache)
    before = _counts(cache)
    first = backend.infer(spec, [X])
    assert _delta(cache, before) == (0, 1)
    second = backend.infer(spec, [X + 1])
    assert _delta(cache, before) == (1, 1)
    # A new backend object on the same cache, and the same layer under another id and name, still hit it.
    renamed = dataclasses.replace(spec, layer_id="99", layer_name="another_name")
    OpenVINOBackend("CPU", "f32", cache=cache).infer(renamed, [X])
    assert _delta(cache, before) == (2, 1)
    assert first.ok and second.ok
    assert first.output is not None and second.output is not None
    np.testing.assert_allclose(second.output, first.output + 1, rtol=1e-6)
    assert backend.compiled(spec) is backend.compiled(spec)


@pytest.mark.parametrize(
    ("device", "precision"),
    [
        pytest.param("CPU", "bf16", id="other-precision"),
        pytest.param("CPU", "default", id="default-precision"),
        pytest.param("AUTO", "f32", id="other-device"),
    ],
)
def test_other_precision_or_device_compiles_again(device: str, precision: str, cache: LayerCache) -> None:
    spec = layer("ReduceSum", "f32", [2, 3, 4], [0, 2], True)
    OpenVINOBackend("CPU", "f32", cache=cache).infer(spec, [X])  # compiled for CPU/f32
    before = _counts(cache)
    result = OpenVINOBackend(device, precision, cache=cache).infer(spec, [X])
    assert result.ok, result.error
    assert _delta(cache, before) == (0, 1)
    OpenVINOBackend(device, precision, cache=cache).infer(spec, [X])
    assert _delta(cache, before) == (1, 1)


@pytest.mark.parametrize("device", ["CPU", "AUTO", "HETERO:CPU", "MULTI:CPU"])
@pytest.mark.parametrize("precision", ["default", "f16", "f32"])
def test_the_effective_precision_is_what_openvino_reports_or_none(device: str, precision: str) -> None:
    """AUTO, HETERO and MULTI report no inference precision: the precision asked for was reported as the one
    computed in (``default`` among them, no precision at all). It is unknown, said so, and the output is judged
    with the coarsest tolerance the request allows, not one finer than what the device may compute in."""
    spec = layer("ReduceSum", "f32", [2, 3, 4], [1], False)
    backend = OpenVINOBackend(device, precision)
    result = backend.infer(spec, [X])
    assert result.ok, result.error
    try:  # OpenVINO's own answer, asked of the same compiled model
        reported = precision_name(backend.compiled(spec).compiled.get_property("INFERENCE_PRECISION_HINT"))
    except RuntimeError:
        reported = None
    assert result.precision == reported
    if reported is None:
        assert result.judged_in == ("f32" if precision == "f32" else "bf16")
        assert any("does not report the precision it computed in" in n for n in result.notes), result.notes
    else:
        assert device == "CPU" and result.notes == ()


def test_other_layer_key_compiles_again(cache: LayerCache) -> None:
    backend = OpenVINOBackend("CPU", "f32", cache=cache)
    base = layer("ReduceSum", "f32", [2, 3, 4], [1], False)
    backend.infer(base, [X])
    for other in (
        layer("ReduceSum", "f32", [2, 3, 4], [1], True),  # keep_dims
        layer("ReduceSum", "f32", [2, 3, 4], [2], False),  # axes
        layer("ReduceMax", "f32", [2, 3, 4], [1], False),  # type
        layer("ReduceSum", "f32", [2, 3, 4], [1], False, axes_type="i32"),  # axes element type
        dataclasses.replace(base, version="opset8"),  # the IR's opset
    ):
        before = _counts(cache)
        assert backend.infer(other, [X]).ok
        assert _delta(cache, before) == (0, 1), other


# -- precisions ---------------------------------------------------------------------------------------------
def test_default_precision_reports_the_devices_own_choice() -> None:
    hint = ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    expected = hint.to_string()  # "bf16" on a CPU with bf16 support, "f32" otherwise
    result = OpenVINOBackend("CPU", "default").infer(layer("ReduceMean", "f32", [2, 3, 4], [2]), [X])
    assert result.ok, result.error
    assert result.precision == expected
    # ... and the comparison of its f32 output uses that precision's tolerances.
    report = run(layer("ReduceMean", "f32", [2, 3, 4], [2]), [X], precision="default")
    assert (report.comparisons[0].atol, report.comparisons[0].rtol) == default_tolerances("f32", expected, 4)


def test_f32_precision_is_f32() -> None:
    result = OpenVINOBackend("CPU", "f32").infer(layer("ReduceMean", "f32", [2, 3, 4], [2]), [X])
    assert result.precision == "f32"


def test_unknown_precision_is_an_input_error() -> None:
    with pytest.raises(InputError, match="precision 'f64' is not one of f32, f16, bf16, default"):
        OpenVINOBackend("CPU", "f64")


# -- devices ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["GPU", "NPU", "GPU.1", "NPU.3"])
def test_unavailable_device_lists_the_available_ones(device: str) -> None:
    devices = ov.Core().available_devices
    if device in devices:
        pytest.skip(f"{device} is available here")
    with pytest.raises(DeviceNotAvailableError) as info:
        OpenVINOBackend(device, "f32")
    message = str(info.value)
    assert f"device {device!r} is not available on this machine" in message
    assert f"available: {', '.join(devices)}" in message
    assert info.value.code == "backend.device"
    if device.startswith("GPU"):
        assert "Intel GPUs" in message


@pytest.mark.parametrize("device", ["CPU:", "CPU..", "CPU.-1", "GPU.0x1", "MULTI:CPU.x"])
def test_a_device_spelled_as_openvino_does_not_list_it_is_an_input_error(device: str) -> None:
    with pytest.raises(InputError, match="a device is written as OpenVINO lists it"):
        check_device(device)


@pytest.mark.parametrize("device", ["CPU.0", "CPU.1", "HETERO:CPU.0", "AUTO:CPU.0"])
def test_an_index_on_the_cpu_is_an_input_error_not_a_device_missing_here(device: str) -> None:
    """OpenVINO's CPU plugin refuses any device id, on every machine: the name is wrong (400, exit 2), the machine
    lacks nothing (503)."""
    with pytest.raises(InputError, match="the CPU device takes no index; write CPU"):
        check_device(device)
    x = ov.opset13.parameter([2], ov.Type.f32)
    with pytest.raises(RuntimeError):  # OpenVINO refuses it too
        ov.Core().compile_model(ov.Model([ov.opset13.relu(x)], [x]), device)


@pytest.mark.parametrize("device", ["FOO", "cpu", "Gpu", "CPU(2)", "TEMPLATE", "", "C\x00PU", "MULTI:cpu"])
def test_a_device_openvino_does_not_know_is_an_input_error(device: str) -> None:
    """A name OpenVINO has no plugin for is the caller's mistake (400, exit 2), not a device missing here (503)."""
    with pytest.raises(InputError, match="is not a device OpenVINO knows") as info:
        check_device(device)
    assert "available here: " + ", ".join(ov.Core().available_devices) in str(info.value)
    x = ov.opset13.parameter([2], ov.Type.f32)
    with pytest.raises(RuntimeError):  # OpenVINO refuses it too
        ov.Core().compile_model(ov.Model([ov.opset13.relu(x)], [x]), device)


@pytest.mark.parametrize("device", ["MULTI:", "HETERO:", "BATCH:", "MULTI:CPU,", "BATCH:CPU(0)", "BATCH:CPU(x)",
                                    "HETERO:CPU,,CPU", "MULTI:MULTI:CPU", "HETERO:AUTO:CPU", "AUTO:AUTO:CPU",
                                    "BATCH:CPU(99999999999999999999)", "BATCH:CPU(²)", "MULTI:CPU(٣)",
                                    "MULTI:-CPU", "HETERO:CPU(2)",
                                    "MULTI", "HETERO", "BATCH", "multi:CPU", "Auto", "hetero:CPU"])  # fmt: skip
def test_a_virtual_device_with_an_unusable_list_is_an_input_error(device: str) -> None:
    """Left to OpenVINO, these failed at compile time, and a run, audit or conform reported the model as failing."""
    with pytest.raises(InputError, match=r"is not a device of its list|a virtual device is written"):
        check_device(device)


@pytest.mark.parametrize(
    "device", ["AUTO", "AUTO:", "AUTO:CPU", "MULTI:CPU", "MULTI:CPU(2)", "HETERO:CPU", "BATCH:CPU(4)", "AUTO:-GPU"]
)
def test_usable_virtual_devices_pass(device: str) -> None:
    """(AUTO excluding every device of the machine is refused: ``AUTO:-CPU`` where CPU is all there is.)"""
    check_device(device)
    if device.startswith(("MULTI", "HETERO", "BATCH")) and "GPU" not in ov.Core().available_devices:
        with pytest.raises(DeviceNotAvailableError):  # every device of the list is checked
            check_device(device.replace("CPU", "GPU"))


def test_available_devices_are_openvinos() -> None:
    assert available_devices() == list(ov.Core().available_devices)
    assert "CPU" in available_devices()


@pytest.mark.skipif(not any(d.startswith("GPU") for d in ov.Core().available_devices), reason="no Intel GPU available")
def test_gpu_runs_a_layer_and_agrees() -> None:
    rng = np.random.default_rng(7)
    data = rng.standard_normal((8, 64, 32)).astype(np.float32)
    report = run(layer("ReduceMean", "f32", [8, 64, 32], [1, 2], True), [data], device="GPU")
    assert report.results[1].backend == "openvino:GPU"
    assert report.ok, describe(report)


# -- runtime axes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("axes", "keep_dims"),
    [
        pytest.param([0], False, id="0"),
        pytest.param([1], False, id="1"),
        pytest.param([-1], False, id="minus-1"),
        pytest.param([0, 2], True, id="0-2-keep"),
        pytest.param([2, 2], True, id="duplicate-keep"),
        pytest.param([0, 1, 2], True, id="all-keep"),
    ],
)
@pytest.mark.parametrize("axes_type", ["i64", "i32"])
def test_runtime_axes_agree_with_constant_axes(axes: list[int], keep_dims: bool, axes_type: str) -> None:
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 6, 8)).astype(np.float32)
    backend = OpenVINOBackend("CPU", "f32")
    constant = backend.infer(layer("ReduceSum", "f32", [4, 6, 8], axes, keep_dims, axes_type=axes_type), [data])
    runtime_spec = layer("ReduceSum", "f32", [4, 6, 8], None, keep_dims, axes_count=len(axes), axes_type=axes_type)
    axes_values = np.array(axes, dtype=np.int64 if axes_type == "i64" else np.int32)
    runtime = backend.infer(runtime_spec, [data, axes_values])
    assert constant.ok and runtime.ok, (constant.error, runtime.error)
    assert constant.output is not None and runtime.output is not None
    count = data.size // constant.output.size
    atol, rtol = default_tolerances("f32", "f32", count)
    assert compare(constant.output, runtime.output, atol=atol, rtol=rtol).ok
    assert run(runtime_spec, [data, axes_values]).ok


def test_runtime_axes_reuse_one_compiled_layer(cache: LayerCache) -> None:
    spec = layer("ReduceMax", "f32", [4, 6, 8], None, False, axes_count=1)
    data = np.arange(4 * 6 * 8, dtype=np.float32).reshape(4, 6, 8)
    backend = OpenVINOBackend("CPU", "f32", cache=cache)
    before = _counts(cache)
    shapes = []
    for axis in (0, 1, 2):
        result = backend.infer(spec, [data, np.array([axis])])
        assert result.ok, result.error
        assert result.output is not None
        np.testing.assert_array_equal(result.output, data.max(axis=axis))
        shapes.append(result.output.shape)
    assert shapes == [(6, 8), (4, 8), (4, 6)]
    assert _delta(cache, before) == (2, 1)


def test_runtime_axis_out_of_range_is_a_failed_result() -> None:
    spec = layer("ReduceMax", "f32", [4, 6, 8], None, False, axes_count=1)
    data = np.zeros((4, 6, 8), np.float32)
    result = OpenVINOBackend("CPU", "f32").infer(spec, [data, np.array([3])])
    assert not result.ok and result.output is None
    assert result.error is not None and result.error.startswith("failed: ")
    numpy_result = NumPyBackend().infer(spec, [data, np.array([3])])
    assert numpy_result.error == "failed: Axis 3 out of the tensor rank range [-3, 2]."


# -- dynamic data shapes ----------------------------------------------------------------------------------------
def test_dynamic_data_shape_runs_with_concrete_inputs(cache: LayerCache) -> None:
    spec = layer("ReduceMean", "f32", "[?,3..8,16]", [1], False)
    rng = np.random.default_rng(5)
    before = _counts(cache)
    for shape in ((2, 5, 16), (7, 3, 16), (1, 8, 16)):
        data = rng.standard_normal(shape).astype(np.float32)
        report = run(spec, [data], cache=cache)
        assert report.ok, describe(report)
        assert report.results[1].output is not None
        assert report.results[1].output.shape == (shape[0], 16)
    assert _delta(cache, before)[1] == 3  # compiled for each shape, as the plugin would see a reshaped model
    run(spec, [np.ones((7, 3, 16), np.float32)], cache=cache)
    assert _delta(cache, before)[1] == 3  # the same shape again is served from the cache


def test_input_outside_the_interval_is_a_failed_result() -> None:
    spec = layer("ReduceMean", "f32", "[?,3..8,16]", [1], False)
    result = OpenVINOBackend("CPU", "f32").infer(spec, [np.zeros((2, 9, 16), np.float32)])
    assert not result.ok
    assert result.error is not None and result.error.startswith("failed: ")
    assert "Traceback" not in result.error and "\n" not in result.error


# -- bf16 through the tensor conversion ---------------------------------------------------------------------------
# zero, minus zero, the smallest subnormal, the largest finite, its negative, inf, one, a quiet NaN, the smallest
# normal, and an ordinary value: bit patterns, so nothing is lost in a float conversion on the way.
BF16_BITS = np.array([0x0000, 0x8000, 0x0001, 0x7F7F, 0xFF7F, 0x7F80, 0x3F80, 0x7FC0, 0x0080, 0xC0A0], np.uint16)


def test_bf16_tensor_round_trip_keeps_every_bit() -> None:
    values = BF16_BITS.copy().view(ml_dtypes.bfloat16).reshape(2, 5)
    tensor = to_tensor(values, "bf16")
    assert tensor.get_element_type() == ov.Type.bf16
    assert list(tensor.get_shape()) == [2, 5]
    back = from_tensor(tensor)
    assert back.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(back.view(np.uint16), BF16_BITS.reshape(2, 5))
    # to_tensor wraps the array's memory (no copy of a large input); from_tensor copies the tensor's.
    values[0, 0] = 2.0
    assert tensor.data.view(np.uint16)[0, 0] == 0x4000
    tensor.data.view(np.uint16)[...] = 0
    np.testing.assert_array_equal(back.view(np.uint16), BF16_BITS.reshape(2, 5))


def test_a_mismatched_dtype_is_refused_by_openvino() -> None:
    result = OpenVINOBackend("CPU", "f32").infer(layer("ReduceSum", "f32", [2, 3], [1]), [np.ones((2, 3), np.float64)])
    assert not result.ok
    assert result.error is not None and result.error.startswith("failed: ") and "precision: f64" in result.error


def test_read_only_and_non_contiguous_inputs() -> None:
    read_only = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), np.float32).reshape(2, 3)
    transposed = np.arange(6, dtype=np.float32).reshape(3, 2).T
    backend = OpenVINOBackend("CPU", "f32")
    for data in (read_only, transposed):
        result = backend.infer(layer("ReduceSum", "f32", [2, 3], [1]), [data])
        assert result.ok, result.error
        assert result.output is not None
        np.testing.assert_array_equal(result.output, data.sum(axis=1))


def test_bf16_layer_inputs_and_outputs_are_bf16() -> None:
    values = BF16_BITS.view(ml_dtypes.bfloat16)
    result = OpenVINOBackend("CPU", "f32").infer(layer("ReduceMax", "bf16", [values.size], [], True), [values])
    assert result.ok, result.error
    assert result.output is not None and result.output.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(result.output.view(np.uint16), BF16_BITS)  # the identity, bit for bit


def test_bf16_reduction_agrees_with_the_reference() -> None:
    data = (np.arange(64, dtype=np.float32).reshape(4, 16) / 4).astype(ml_dtypes.bfloat16)
    report = run(layer("ReduceSum", "bf16", [4, 16], [1], False), [data])
    assert report.ok, describe(report)
    assert report.results[1].output is not None
    # Row r sums (16r + k)/4 for k < 16: 64r + 30, all exact in bf16 for r < 4.
    np.testing.assert_array_equal(report.results[1].output.astype(np.float32), [30.0, 94.0, 158.0, 222.0])


@pytest.mark.parametrize("type_name", ["f16", "f64", "i8", "u8", "i32", "i64", "u64", "boolean"])
def test_tensor_round_trip(type_name: str) -> None:
    from ovreduce.ir.dtypes import ELEMENT_TYPES

    dtype = ELEMENT_TYPES[type_name].numpy
    if type_name == "boolean":
        values = np.array([[True, False, True]])
    elif np.dtype(dtype).kind == "f":
        values = np.array([[0.0, -0.0, np.inf, -np.inf, 1.5, np.finfo(dtype).max]], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        values = np.array([[info.min, info.max, 0, 1]], dtype=dtype)
    back = from_tensor(to_tensor(values, type_name))
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back, values)
    assert from_tensor(to_tensor(np.array(values.reshape(-1)[0]), type_name)).shape == ()  # rank 0 stays rank 0


@pytest.mark.parametrize("rank", [32, 33])
def test_a_rank_past_the_cpu_plugins_says_so(rank: int) -> None:
    """The CPU plugin holds a tensor's dimensions in a 32-bit set: 32 run, 33 fail in libstdc++'s words, which the
    result replaces with the limit and the input that passes it."""
    data = np.ones([1] * rank, np.float32)
    result = OpenVINOBackend("CPU", "f32").infer(layer("ReduceSum", "f32", [1] * rank, [0], False), [data])
    if rank <= 32:
        assert result.ok and result.output is not None and result.output.shape == (1,) * (rank - 1), result
    else:
        assert result.error == (f"failed: a tensor has more than 32 dimensions: OpenVINO's CPU plugin runs tensors of "
                                f"at most 32; input 0 has {rank} dimensions")  # fmt: skip
