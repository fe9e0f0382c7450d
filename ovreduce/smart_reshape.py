"""OpenVINO's SmartReshape rewrites, as ovreduce's shape inference under a reshape follows them.

``Model.reshape`` (OpenVINO's, which ``audit``, ``conform`` and every OpenVINO user call) runs the SmartReshape
passes on the model as read before it infers the new shapes, wherever the reshape changes a Parameter's shape (or
one is dynamic): those passes rewrite constant shape patterns, so the reshaped model's shapes are not those of the
file's graph re-inferred. ovreduce follows them in one place, here:

- **ReshapeTo1D** (ported): a Reshape whose pattern is a Const (directly) and whose output is 1-D reads its pattern
  as ``[-1]``: it flattens whatever it is given.
- The others are recognised, not ported: the layer whose shapes the rewrite changes is unresolved under the
  reshape, its reason naming the rewrite, so OpenVINO's own inference is asked for what follows (as for any
  unresolved input), never a shape OpenVINO's reshaped model does not have. These are StridedSliceSqueeze and
  SqueezeStridedSlice (a Squeeze with constant axes after a StridedSlice with constant begin/end/strides, or before
  one), TransposeMatMul (a MatMul fed by a Transpose with a constant order), ReshapeAMatMul/ReshapeBMatMul and
  ReshapeSinkingMatMul (a Reshape to 2-D feeding a MatMul), BroadcastConstRangeReplacement (a bidirectional
  Broadcast of a constant ``0, 1, ..., n-1``, 5 < n < 500).

The patterns are matched on the file's graph (ranks from the dims the output ports declare), a little more widely
than OpenVINO matches them: a layer matched in vain is only left to OpenVINO's inference.
"""

from __future__ import annotations

from ovreduce.ir.model import IRModel, Layer

__all__ = ["REWRITTEN_FIRST", "reshape_to_1d", "unported_rewrite"]

REWRITTEN_FIRST = "OpenVINO's reshape rewrites "
"""How the reason of a layer left unresolved for a rewrite ovreduce does not port begins."""


def _producer(model: IRModel, layer: Layer, index: int) -> Layer | None:
    if index >= len(layer.inputs):
        return None
    ref = model.producer(layer.id, layer.inputs[index].id)
    return None if ref is None else model.layer(ref[0])


def _is(layer: Layer | None, *types: str) -> bool:
    return layer is not None and layer.type in types


def _const(layer: Layer | None) -> bool:
    return _is(layer, "Const")


def _rank(layer: Layer) -> int | None:
    """The rank output port 0 declares (None: no port)."""
    return len(layer.outputs[0].dims) if layer.outputs else None


def _squeeze_v0(layer: Layer | None) -> bool:
    """A Squeeze of opset1 to opset14 (v0; opset15's is another op the rewrites do not match)."""
    return _is(layer, "Squeeze") and layer is not None and layer.version not in ("opset15", "opset16")


def _single_consumer(model: IRModel, layer: Layer) -> bool:
    return bool(layer.outputs) and len(model.consumers(layer.id, layer.outputs[0].id)) == 1


def reshape_to_1d(model: IRModel, layer: Layer) -> bool:
    """Whether OpenVINO's ReshapeTo1D rewrites ``layer``'s pattern to ``[-1]``: a Reshape whose pattern comes
    straight from a Const and whose output is 1-D."""
    return layer.type == "Reshape" and _const(_producer(model, layer, 1)) and _rank(layer) == 1


def unported_rewrite(model: IRModel, layer: Layer) -> str | None:
    """The SmartReshape rewrite that changes ``layer``'s shapes and that ovreduce does not port; None: none does."""
    kind = layer.type
    if _squeeze_v0(layer) and _const(_producer(model, layer, 1)):
        sliced = _producer(model, layer, 0)
        if (
            _is(sliced, "StridedSlice")
            and sliced is not None
            and _single_consumer(model, sliced)
            and all(_const(_producer(model, sliced, i)) for i in (1, 2, 3))
        ):
            return "StridedSliceSqueeze"
    if kind == "StridedSlice" and all(_const(_producer(model, layer, i)) for i in (1, 2, 3)):
        squeeze = _producer(model, layer, 0)
        if (
            _squeeze_v0(squeeze)
            and squeeze is not None
            and _const(_producer(model, squeeze, 1))
            and _single_consumer(model, squeeze)
        ):
            return "SqueezeStridedSlice"
    if kind == "MatMul":
        for index in (0, 1):
            transpose = _producer(model, layer, index)
            if _is(transpose, "Transpose") and transpose is not None and _const(_producer(model, transpose, 1)):
                return "TransposeMatMul"
    if kind == "Reshape" and _rank(layer) == 2 and layer.outputs:
        for to_layer, to_port in model.consumers(layer.id, layer.outputs[0].id):
            matmul = model.layer(to_layer)
            if matmul.type != "MatMul":
                continue
            found = [i for i, p in enumerate(matmul.inputs[:2]) if p.id == to_port]
            if not found:
                continue
            index = found[0]
            other = _producer(model, matmul, 1 - index)
            if not _is(other, "Transpose", "Reshape"):
                return "ReshapeAMatMul" if index == 0 else "ReshapeBMatMul"
            if index == 0 and _const(_producer(model, layer, 1)) and _const(other):
                return "ReshapeSinkingMatMul"
    if kind == "Broadcast" and layer.version not in ("opset1", "opset2"):
        mode = layer.data.get("mode", "numpy").strip().lower()
        data = _producer(model, layer, 0)
        held = None if data is None or not _const(data) else data.shape
        shape = held.to_list() if held is not None and held.is_static else None
        if mode == "bidirectional" and shape is not None:
            count = 1
            for d in shape:
                count *= d
            if sum(1 for d in shape if d != 1) == 1 and 5 < count < 500:
                return "BroadcastConstRangeReplacement"
    return None
