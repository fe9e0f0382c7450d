"""ScaledDotProductAttention-13, the attention of every current optimum-intel export.

The rule is ``shape_infer`` of src/core/shape_inference/include/scaled_dot_product_attention_shape_inference.hpp, with
the element types ``ScaledDotProductAttention::validate_and_infer_types`` merges (as OpenVINO 2026.4 has them):

* query ``[N..., L, E]``, key ``[N..., S, E]``, value ``[N..., S, Ev]``: query's and key's ``E`` and key's and value's
  ``S`` merge, the batch dims ``N...`` broadcast (NumPy's rules; a dynamic rank where query's is);
* an attention mask ``[N..., L, S]`` (not read when ``causal``): its ``L`` and ``S`` broadcast with the others';
* a scale of one element (checked where it is the last input);
* a sink ``[N..., L, 1]`` of query's rank (gpt-oss's), its dims broadcast with query's own.

The output is ``[N..., L, Ev]``, in the inputs' merged type.
"""

from __future__ import annotations

from collections.abc import Sequence

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import LAST_OPSET, LayerContext, PortState
from ovreduce.ops.elementwise import broadcast_shapes
from ovreduce.ops.rules import BOOLEAN, ShapeRule, bool_attr, real, typed
from ovreduce.shapes import Dimension, PartialShape, broadcast_merge, merge

__all__ = ["ScaledDotProductAttention13"]


def _batch(shape: PartialShape) -> PartialShape:
    assert shape.dims is not None
    return PartialShape(shape.dims[:-2])


def _broadcast_into(n_dims: PartialShape, batch: PartialShape) -> PartialShape | None:
    """``PartialShape::broadcast_merge_into(n_dims, batch, NUMPY)``; None where it fails."""
    try:
        return broadcast_shapes(n_dims, batch, "numpy")
    except ShapeInferenceError:
        return None


class ScaledDotProductAttention13(ShapeRule):
    """ScaledDotProductAttention-13: query, key, value, then an attention mask and a scale where given."""

    type = "ScaledDotProductAttention"
    version = "opset13"
    inputs = range(3, 2**31)  # (OpenVINO reads the first six: a sink is the sixth)
    boolean_attributes = ("causal",)

    def __init__(self) -> None:
        self.opsets = range(13, LAST_OPSET + 1)

    def _merged(self, layer: Layer, inputs: Sequence[PortState]) -> tuple[ElementType | None, str | None]:
        """The inputs' merged element type (a mask of booleans, or one ``causal`` ignores, not merged), and OpenVINO's
        refusal of the types, if any."""
        causal = bool_attr(layer, "causal", False)
        types = [typed(state) for state in inputs]
        if len(types) >= 4 and not causal and types[3] is not None and not real(types[3]) and types[3] != BOOLEAN:
            return None, "The element type of attention_mask must be either floating-point or boolean."
        merged = types[0] if types else None
        for index, etype in enumerate(types[1:], start=1):
            if (index == 3 and (etype == BOOLEAN or causal)) or etype is None:
                continue
            if merged is not None and merged != etype:
                return None, "Mixed input types are not supported."
            merged = etype
        if merged is not None and not real(merged):
            return None, "The element type of the input tensor must be a floating-point."
        return merged, None

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        merged = self._merged(layer, inputs)[0]
        if merged is None and inputs:
            merged = inputs[0].element_type
        return [merged if merged is not None else port.precision for port in layer.outputs]

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        refusal = self._merged(layer, [ctx.input(i) for i in range(len(layer.inputs))])[1]
        if refusal is not None:
            raise ShapeInferenceError(refusal)
        causal = bool_attr(layer, "causal", False)
        count = len(inputs)
        dynamic = Dimension.dynamic()
        l_dim = e_dim = s_dim = ev_dim = dynamic
        query, key, value = inputs[0], inputs[1], inputs[2]
        n_dims = query
        if query.dims is not None:
            if len(query.dims) < 3:
                raise ShapeInferenceError("Query input rank length must be at least 3 or more.")
            n_dims = _batch(query)
            l_dim, e_dim = query.dims[-2], query.dims[-1]
        if key.dims is not None:
            merged = _broadcast_into(n_dims, _batch(key)) if len(key.dims) >= 3 else None
            e = merge(e_dim, key.dims[-1]) if merged is not None else None
            if merged is None or e is None:
                raise ShapeInferenceError("Key input shape not compatible with other inputs.")
            n_dims, e_dim, s_dim = merged, e, key.dims[-2]
        if value.dims is not None:
            merged = _broadcast_into(n_dims, _batch(value)) if len(value.dims) >= 3 else None
            s = merge(s_dim, value.dims[-2]) if merged is not None else None
            if merged is None or s is None:
                raise ShapeInferenceError("Value input shape not compatible with other inputs.")
            n_dims, s_dim, ev_dim = merged, s, value.dims[-1]
        if count >= 4 and not causal:
            mask = inputs[3]
            if mask.dims is not None and len(mask.dims) != 0:
                ok = len(mask.dims) >= 2
                l_new = broadcast_merge(l_dim, mask.dims[-2]) if ok else None
                s_new = broadcast_merge(s_dim, mask.dims[-1]) if l_new is not None else None
                ok = s_new is not None
                if ok and len(mask.dims) >= 3:
                    merged = _broadcast_into(n_dims, _batch(mask))
                    ok = merged is not None
                    n_dims = merged if merged is not None else n_dims
                if not ok or l_new is None or s_new is None:
                    raise ShapeInferenceError("Attention mask input shape not compatible with other inputs.")
                l_dim, s_dim = l_new, s_new
        if count == 5:
            scale = inputs[4]
            if scale.dims is not None and scale.is_static:
                one = Dimension.static(1)
                if not (len(scale.dims) == 0 or (len(scale.dims) == 1 and scale.dims[0].compatible(one))):
                    raise ShapeInferenceError("Scale input must be scalar or have 1 element.")
        if count >= 6:
            self._sink(query, inputs[5])
        if n_dims.dims is None:
            return [n_dims]
        return [PartialShape((*n_dims.dims, l_dim, ev_dim))]

    @staticmethod
    def _sink(query: PartialShape, sink: PartialShape) -> None:
        """OpenVINO's refusal of a sink not ``[N..., L, 1]`` of query's rank, its dims broadcast with query's."""
        if query.dims is None or sink.dims is None:
            return
        if len(sink.dims) != len(query.dims):
            raise ShapeInferenceError("The rank of sink input shape must be equal to the query input rank.")
        fits = all(broadcast_merge(q, s) is not None for q, s in zip(query.dims[:-1], sink.dims[:-1], strict=True))
        if not fits or not sink.dims[-1].compatible(Dimension.static(1)):
            raise ShapeInferenceError("Sink input has not compatible shape.")
