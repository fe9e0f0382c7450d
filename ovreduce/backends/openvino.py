"""The OpenVINO runtime backend: one reduction built as a single-layer model, compiled once, run many times.

Constant axes become a Constant and runtime axes a Parameter, exactly as in the IR. The inference
precision is explicit: ``f32`` (the default for comparisons: on CPUs with bf16 support OpenVINO would
otherwise pick bf16 by itself), ``f16``, ``bf16``, or ``default`` to leave the device's own choice.
Compiled layers are cached by everything that defines them (the layer spec, the device and the
precision), so running the same layer again costs one inference, not a compile.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce._openvino import clean_message, core, openvino
from ovreduce.backends.base import BackendResult, LayerSpec
from ovreduce.errors import DeviceNotAvailableError, InputError
from ovreduce.ir.dtypes import ELEMENT_TYPES

__all__ = [
    "PRECISIONS",
    "OpenVINOBackend",
    "available_devices",
    "check_device",
    "device_info",
    "from_tensor",
    "precision_name",
    "to_tensor",
]

PRECISIONS = ("f32", "f16", "bf16", "default")
_VIRTUAL = ("AUTO", "MULTI", "HETERO", "BATCH")
_FACTORIES = {
    "ReduceMean": "reduce_mean",
    "ReduceSum": "reduce_sum",
    "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min",
    "ReduceProd": "reduce_prod",
    "ReduceL1": "reduce_l1",
    "ReduceL2": "reduce_l2",
    "ReduceLogicalAnd": "reduce_logical_and",
    "ReduceLogicalOr": "reduce_logical_or",
}


def available_devices() -> list[str]:
    """The devices the installed OpenVINO can use here (``CPU``, ``GPU.0``...)."""
    return list(core().available_devices)


def check_device(device: str) -> None:
    """:class:`DeviceNotAvailableError` listing the available devices unless ``device`` can be used."""
    devices = available_devices()
    base = device.split(":", 1)[0].split(".", 1)[0].upper()
    if device in devices or base in _VIRTUAL or any(d.split(".", 1)[0] == device for d in devices):
        return
    hint = ""
    if base == "GPU":
        hint = (
            " OpenVINO's GPU plugin drives Intel GPUs only, through OpenCL (libOpenCL.so.1 and Intel's "
            "compute runtime must be installed)."
        )
    elif base == "NPU":
        hint = " The NPU plugin needs an Intel NPU and its driver."
    raise DeviceNotAvailableError(
        f"device {device!r} is not available on this machine; available: {', '.join(devices) or 'none'}.{hint}"
    )


def device_info() -> list[dict[str, Any]]:
    """Each available device with its full name and capabilities (``ovreduce devices``)."""
    out = []
    for dev in available_devices():
        info: dict[str, Any] = {"device": dev}
        for prop, key in (
            ("FULL_DEVICE_NAME", "full_name"),
            ("OPTIMIZATION_CAPABILITIES", "capabilities"),
            ("INFERENCE_PRECISION_HINT", "default_inference_precision"),
            ("DEVICE_ARCHITECTURE", "architecture"),
        ):
            try:
                value = core().get_property(dev, prop)
            except Exception:  # a property this plugin does not have
                continue
            if key == "default_inference_precision":
                info[key] = precision_name(value)
            else:
                info[key] = [str(v) for v in value] if isinstance(value, list | tuple) else str(value)
        out.append(info)
    return out


@dataclass
class _Compiled:
    compiled: Any
    precision: str


class _Cache:
    """A bounded LRU of compiled layers, safe for concurrent use."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], _Compiled] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> _Compiled | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return item

    def put(self, key: tuple[Any, ...], item: _Compiled) -> None:
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


CACHE = _Cache(64)


def precision_name(value: Any) -> str:
    """``f32``/``f16``/``bf16`` for what OpenVINO reports (an ``ov.Type`` or a string)."""
    name = value.get_type_name() if hasattr(value, "get_type_name") else str(value)
    return {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}.get(name.lower(), name.lower())


class OpenVINOBackend:
    """Runs reductions on an OpenVINO device.

    Args:
        device: an OpenVINO device name (``CPU``, ``GPU``, ``GPU.1``, ``AUTO``...).
        precision: ``f32``, ``f16``, ``bf16`` or ``default``.

    Raises:
        DeviceNotAvailableError: the device is not available here.
        InputError: an unknown precision.
    """

    def __init__(self, device: str = "CPU", precision: str = "f32") -> None:
        if precision not in PRECISIONS:
            raise InputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        check_device(device)
        self.device = device
        self.precision = precision
        self.name = f"openvino:{device}"

    def _config(self) -> dict[str, str]:
        return {} if self.precision == "default" else {"INFERENCE_PRECISION_HINT": self.precision}

    def compiled(self, spec: LayerSpec) -> _Compiled:
        """The compiled layer, from the cache when it is there; raises whatever OpenVINO raises."""
        key = (*spec.key(), self.device, self.precision)
        item = CACHE.get(key)
        if item is not None:
            return item
        model = _build_model(spec)
        compiled = core().compile_model(model, self.device, self._config())
        try:
            effective = precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
        except Exception:  # a plugin without the property
            effective = self.precision
        item = _Compiled(compiled, effective)
        CACHE.put(key, item)
        return item

    def infer(self, spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]]) -> BackendResult:
        start = time.perf_counter()
        try:
            item = self.compiled(spec)
        except Exception as exc:  # OpenVINO's build or compile failure is this backend's result
            return BackendResult(self.name, None, f"failed: {clean_message(exc)}", self.precision,
                                 time.perf_counter() - start)  # fmt: skip
        try:
            # A request per call: concurrent runs of one layer need no lock, and no cached request keeps its
            # last (zero-copy) input alive after the call.
            request = item.compiled.create_infer_request()
            tensors = [to_tensor(a, t) for a, t in zip(inputs, _input_types(spec), strict=True)]
            request.infer(tensors)
            output = from_tensor(request.get_output_tensor(0))
        except Exception as exc:  # an inference failure is this backend's result too
            return BackendResult(self.name, None, f"failed: {clean_message(exc)}", item.precision,
                                 time.perf_counter() - start)  # fmt: skip
        return BackendResult(self.name, output, None, item.precision, time.perf_counter() - start)


def _input_types(spec: LayerSpec) -> list[str]:
    return [spec.data_type.name] + ([spec.axes_type.name] if spec.runtime_axes else [])


def _build_model(spec: LayerSpec) -> Any:
    ov = openvino()
    from openvino import opset13 as ops

    data = ops.parameter(ov.PartialShape(str(spec.data_shape)), getattr(ov.Type, spec.data_type.name), name="data")
    params = [data]
    if spec.axes is None:
        axes = ops.parameter(ov.PartialShape(str(spec.axes_shape)), getattr(ov.Type, spec.axes_type.name), name="axes")
        params.append(axes)
    else:
        values = np.array(spec.axes, dtype=spec.axes_type.numpy)
        if spec.axes_shape.rank == 0 and values.size == 1:
            values = values.reshape(())
        axes = ops.constant(values)
    node = getattr(ops, _FACTORIES[spec.type])(data, axes, spec.keep_dims)
    node.set_friendly_name(spec.layer_name or spec.type)
    return ov.Model([node], params, f"ovreduce_{spec.type}")


def to_tensor(array: npt.NDArray[Any], type_name: str) -> Any:
    """An OpenVINO tensor holding ``array`` as element type ``type_name`` (bf16 via its bits).

    The tensor wraps the array's memory (no copy: a copy of a large input costs more than the reduction);
    leave the array unchanged while the tensor is in use. An array whose dtype is not ``type_name``'s is
    copied as it is, so that OpenVINO sees, and refuses, the mismatch.
    """
    ov = openvino()
    array = np.asarray(array, order="C")  # not ascontiguousarray: it turns a 0-d array into shape (1,)
    etype = ELEMENT_TYPES.get(type_name)
    if etype is None or etype.numpy is None or etype.is_packed or np.dtype(etype.numpy) != array.dtype:
        return ov.Tensor(array)
    raw = array.view(np.uint16) if type_name == "bf16" else array
    return ov.Tensor(raw, ov.Shape(list(array.shape)), getattr(ov.Type, type_name))


def from_tensor(tensor: Any) -> npt.NDArray[Any]:
    """A copy of an OpenVINO tensor as a NumPy array (bf16 as ``ml_dtypes.bfloat16``)."""
    data = tensor.data
    if tensor.get_element_type().get_type_name() == "bf16":
        import ml_dtypes

        return np.array(data.view(np.uint16), copy=True).view(ml_dtypes.bfloat16)
    return np.array(data, copy=True)
