"""The interface every runtime sits behind: ``infer(spec, inputs) -> BackendResult``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy.typing as npt

from ovreduce.ir.dtypes import ElementType
from ovreduce.shapes import PartialShape

__all__ = ["Backend", "BackendResult", "LayerSpec"]


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """Everything that defines one reduction layer for execution (and nothing about where it came from
    except its id and name, for reports).

    ``axes`` holds constant axes; ``None`` means runtime axes, passed as the second input. ``type`` and
    ``version`` name the op in the registry (:func:`ovreduce.ops.registry.reduction`).
    """

    type: str
    keep_dims: bool
    data_type: ElementType
    data_shape: PartialShape
    axes_type: ElementType
    axes_shape: PartialShape
    axes: tuple[int, ...] | None
    layer_id: str = ""
    layer_name: str = ""
    version: str = ""  # the IR's version="opsetN": which version of the op (""/unknown: its newest)

    @property
    def runtime_axes(self) -> bool:
        return self.axes is None

    def fitted(self, inputs: Sequence[npt.NDArray[Any]]) -> LayerSpec:
        """This layer with its inputs' declared shapes replaced by the static shapes of ``inputs`` (what a
        runtime compiles, as ``Model.reshape`` would: a dynamic rank or dim in the IR does not reach it).

        Raises:
            ValueError: an input's shape does not fit the shape the layer declares for it.
        """
        declared = [self.data_shape] + ([self.axes_shape] if self.runtime_axes else [])
        fitted = []
        for index, (shape, array) in enumerate(zip(declared, inputs, strict=False)):
            static = PartialShape.static(array.shape)
            if not shape.compatible(static):
                raise ValueError(f"input {index} has shape {list(array.shape)} but the layer expects {shape}")
            fitted.append(static)
        if len(fitted) != len(declared):
            raise ValueError(f"the layer takes {len(declared)} input(s), {len(fitted)} were given")
        return replace(self, data_shape=fitted[0], axes_shape=fitted[1] if self.runtime_axes else self.axes_shape)

    def key(self) -> tuple[Any, ...]:
        """Everything that defines the compiled layer (id and name excluded)."""
        return (
            self.type, self.keep_dims, self.data_type.name, str(self.data_shape),
            self.axes_type.name, str(self.axes_shape), self.axes, self.version,
        )  # fmt: skip


@dataclass(frozen=True)
class BackendResult:
    """What one backend produced: an output, or why it failed (its own message)."""

    backend: str
    output: npt.NDArray[Any] | None
    error: str | None = None
    precision: str | None = None  # the precision the backend computed in, where it has a choice
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    runtime_precision: str | None = None  # what the runtime's execution graph ran the reduction in, where it says
    judged_in: str | None = None  # the precision whose tolerance judges the output, where ``precision`` is unknown

    @property
    def ok(self) -> bool:
        return self.error is None and self.output is not None


class Backend(Protocol):
    """A runtime that can execute a reduction layer."""

    name: str

    def infer(self, spec: LayerSpec, inputs: Sequence[npt.NDArray[Any]]) -> BackendResult:
        """Run ``spec`` on ``inputs`` (data, and axes when they are runtime axes); never raises for a
        failure of the runtime itself: that is a result with ``error`` set."""
        ...
