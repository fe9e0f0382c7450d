"""The NumPy reference backend: each op's reference kernel behind the backend interface.

The kernel runs through :func:`ovreduce.reference.openvino.reduce_with_notes`, which validates the inputs
as OpenVINO does and finds the op in the registry.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from ovreduce.backends.base import BackendResult, LayerSpec
from ovreduce.errors import OvReduceError
from ovreduce.reference.openvino import reduce_with_notes

__all__ = ["NumPyBackend"]


class NumPyBackend:
    """Runs a reduction on the NumPy reference (OpenVINO semantics, computed exactly where it matters)."""

    name = "numpy"

    def infer(self, spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]]) -> BackendResult:
        start = time.perf_counter()
        axes: Any = spec.axes if spec.axes is not None else inputs[1]
        try:
            output, notes = reduce_with_notes(spec.type, inputs[0], axes, spec.keep_dims, version=spec.version)
        except OvReduceError as exc:
            return BackendResult(self.name, None, f"failed: {exc.message}", seconds=time.perf_counter() - start)
        return BackendResult(self.name, output, None, seconds=time.perf_counter() - start, notes=tuple(notes))
