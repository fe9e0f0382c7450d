"""ReadValue and Assign: a stateful model's variables (every stateful LLM's KV cache).

After src/core/src/op/read_value.cpp and assign.cpp:

* ReadValue-3: its init value's shape and type (the variable is made of them);
* ReadValue-6: the variable's ``variable_shape`` and ``variable_type`` (a dynamic rank and type when absent); with an
  init value, the variable's shape must relax the init value's (hold every shape it may have) and its type be dynamic
  or the init value's, else OpenVINO refuses the model; a variable of dynamic rank and type takes the init value's
  shape and type. A reshape of the model leaves the variable as the IR declares it;
* Assign-3 and Assign-6: their input's shape and type. Under a reshape (as OpenVINO validates the model again),
  Assign-6's input must be compatible with its variable's declared shape and type (the ReadValue-6 of its
  ``variable_id``), else OpenVINO refuses the reshape; its reader does not check it.

Their values are known at run time only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

from ovreduce.errors import ElementTypeError, ShapeInferenceError
from ovreduce.ir.dtypes import ElementType, element_type
from ovreduce.ir.model import Layer
from ovreduce.ops.base import LayerContext, PortState, ValueInfo
from ovreduce.ops.rules import ELEMENT_TYPE, TYPED, ShapeRule, typed
from ovreduce.shapes import PartialShape

__all__ = ["Assign", "ReadValue3", "ReadValue6", "VariableContext"]


class VariableContext(LayerContext, Protocol):
    """What Assign-6 asks besides its inputs: the layer declaring its variable, and whether the model is reshaped."""

    def variable(self, variable_id: str) -> Layer | None:
        """The first ReadValue of the graph whose ``variable_id`` this is; None when there is none."""
        ...

    def reshaped(self) -> bool:
        """Whether the model is reshaped so that OpenVINO validates every node again (a reshape of every Parameter it
        names to the static shape it has is none)."""
        ...


class _Variable(ShapeRule):
    """A ReadValue or Assign: its value is a variable's state, known at run time only (OpenVINO folds neither, nor
    bounds it), whatever its input."""

    def fold(self, ctx: LayerContext) -> ValueInfo:
        variable = ctx.layer.data.get("variable_id", "")
        return ValueInfo("runtime", None, f"the state of the variable {variable!r}, known at run time only")


class ReadValue3(_Variable):
    """ReadValue-3: the init value's shape and type."""

    type = "ReadValue"
    version = "opset3"
    inputs = range(1, 2)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        return [inputs[0]]


def _variable(layer: Layer) -> tuple[PartialShape, ElementType | None, bool]:
    """The variable's shape and element type as the layer's attributes give them (absent: a dynamic rank, a dynamic
    type; None: a type ovreduce does not know), and whether the shape holds an empty interval (``1..0``, which
    OpenVINO reads as a dim that relaxes none: a dynamic one to ovreduce).

    Raises:
        ShapeInferenceError: ``variable_shape`` is no shape.
    """
    text = layer.data.get("variable_shape")
    empty = False
    try:
        shape = PartialShape(None) if text is None else PartialShape.parse(text)
    except ValueError as exc:
        try:
            shape, empty = PartialShape.parse(text or "", empty_as_dynamic=True), True
        except ValueError:
            raise ShapeInferenceError(f"variable_shape={text!r}: {exc}") from None
    name = layer.data.get("variable_type")
    try:
        etype = element_type("dynamic" if name is None else name)
    except ElementTypeError:
        return shape, None, empty
    return shape, etype, empty


class ReadValue6(_Variable):
    """ReadValue-6: the variable's shape and type, checked against the init value's where there is one."""

    type = "ReadValue"
    version = "opset6"
    inputs = range(0, 2)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets
        self.enums = {"variable_type": ELEMENT_TYPE}  # (a type OpenVINO does not name is its refusal of the model)

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        try:
            shape, etype, _ = _variable(layer)
        except ShapeInferenceError:
            etype = None
            shape = PartialShape(())
        if etype is not None and etype.name == "dynamic" and shape.rank is None and inputs:
            etype = inputs[0].element_type  # the init value's
        return [etype if etype is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        shape, etype, empty = _variable(ctx.layer)
        if not inputs:
            return [shape]
        initial = inputs[0]
        if empty or not shape.contains(initial):
            raise ShapeInferenceError(
                f"The shape specified in the Variable has to extend (relax) the shape inferred from the initializing "
                f"subgraph. Variable shape: {shape} Initialization shape: {initial}"
            )
        given = typed(ctx.input(0))
        if etype is not None and etype.name != "dynamic" and given is not None and given != etype:
            raise ShapeInferenceError(
                f"The type specified in the Variable has to extend (relax) the type inferred from the initializing "
                f"subgraph. Variable type: {etype} Initialization type: {given}"
            )
        if shape.rank is None and etype is not None and etype.name == "dynamic":
            return [initial]
        return [shape]


class Assign(_Variable):
    """Assign-3 and Assign-6: their input's shape and type."""

    type = "Assign"
    inputs = range(1, 2)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        if self.version == "opset6":
            self._check_variable(cast(VariableContext, ctx), inputs[0])
        return [inputs[0]]

    @staticmethod
    def _check_variable(ctx: VariableContext, given: PartialShape) -> None:
        """OpenVINO's refusal (``Assign::validate_and_infer_types`` of v6) of an input its variable's declared type or
        shape does not admit: under a reshape only, as its IR reader makes the node before it knows the variable."""
        variable = ctx.variable(ctx.layer.data.get("variable_id", ""))
        if variable is None or variable.version != "opset6" or not ctx.reshaped():
            return
        try:
            shape, etype, empty = _variable(variable)
        except ShapeInferenceError:
            return  # (the ReadValue's own refusal)
        state = ctx.input(0)
        given_type = state.element_type if state.origin in TYPED else None
        if given_type is not None and given_type.name == "dynamic":
            given_type = None
        if etype is not None and etype.name != "dynamic" and given_type is not None and given_type != etype:
            raise ShapeInferenceError(
                f"The type specified in the Variable is not compatible with the input type. Input type: {given_type} "
                f"Variable type: {etype}"
            )
        # (OpenVINO validates the model as read before it reshapes it: the input as the file declares it is checked too)
        port = ctx.layer.inputs[0] if ctx.layer.inputs else None
        read = PartialShape.from_port_dims(port.dims) if port is not None and port.dims else None
        for input_shape in (read, given):
            if input_shape is not None and not empty and not shape.compatible(input_shape):
                raise ShapeInferenceError(
                    f"The shape specified in the Variable is not compatible with the shape of the input. Input shape: "
                    f"{input_shape} Variable shape: {shape}"
                )
