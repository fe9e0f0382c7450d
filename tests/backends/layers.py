"""Single reduction layers to run through ``ovreduce.run.run_spec`` (NumPy reference first, OpenVINO second)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ovreduce.backends.base import LayerSpec
from ovreduce.backends.numpy import NumPyBackend
from ovreduce.backends.openvino import LayerCache, OpenVINOBackend
from ovreduce.ir.dtypes import ELEMENT_TYPES
from ovreduce.run import RunReport, run_spec
from ovreduce.shapes import PartialShape


def layer(
    op: str,
    type_name: str,
    shape: Sequence[int] | str,
    axes: Sequence[int] | int | None,
    keep_dims: bool = False,
    *,
    axes_count: int | None = None,
    axes_type: str = "i64",
) -> LayerSpec:
    """A LayerSpec: ``shape`` static dims or OpenVINO syntax (``"[?,3..8]"``); ``axes`` a list, one int (a
    rank-0 axes input) or None (runtime axes, ``axes_count`` of them)."""
    data_shape = PartialShape.parse(shape) if isinstance(shape, str) else PartialShape.static(list(shape))
    if axes is None:
        axes_shape = PartialShape.static([axes_count if axes_count is not None else 1])
        values: tuple[int, ...] | None = None
    elif isinstance(axes, int):
        axes_shape, values = PartialShape.static([]), (axes,)
    else:
        axes_shape, values = PartialShape.static([len(axes)]), tuple(axes)
    return LayerSpec(
        type=op,
        keep_dims=keep_dims,
        data_type=ELEMENT_TYPES[type_name],
        data_shape=data_shape,
        axes_type=ELEMENT_TYPES[axes_type],
        axes_shape=axes_shape,
        axes=values,
        layer_name=f"{op}_{type_name}",
    )


def run(
    spec: LayerSpec,
    inputs: Sequence[npt.NDArray[Any]],
    *,
    device: str = "CPU",
    precision: str = "f32",
    cache: LayerCache | None = None,
) -> RunReport:
    """The NumPy reference and OpenVINO on ``device`` at ``precision``, compared with the default tolerances."""
    backends = [NumPyBackend(), OpenVINOBackend(device, precision, cache=cache)]
    return run_spec(spec, inputs, backends, requested_precision=precision)


def array(type_name: str, values: Any) -> npt.NDArray[Any]:
    return np.array(values, dtype=ELEMENT_TYPES[type_name].numpy)


def describe(report: RunReport) -> str:
    """Enough of the report to see why an assertion failed."""
    lines = [f"{r.backend}: ok={r.ok} error={r.error} output={r.output!r}" for r in report.results]
    lines += [f"{c.reference} vs {c.candidate}: {c.to_json()}" for c in report.comparisons]
    return "\n".join(lines)
