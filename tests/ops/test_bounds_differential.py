"""Output dims whose bounds come from values known only at run time, against the installed OpenVINO runtime: a Pad whose
pads are computed from dims (a ShapeOf taken apart, added to, converted to i32, a Parameter's value of no bounds), as
the Mamba, Zamba2 and LFM2 exports compute them. Each IR is built with OpenVINO's opset API, saved, and read by both:
every layer's shape, as ``read_model`` infers it and again after ``Model.reshape``, must be what ovreduce's shape
engine infers (OpenVINO reads the pads' per-element bounds: a dim padded by a pad of ``2..5`` is the dim plus
``2..5``, not ``?``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset12 as ops12
import openvino.opset13 as ops
import pytest

from ovreduce import load_ir
from ovreduce.infer import ShapeEngine
from ovreduce.shapes import PartialShape

from .test_shape_bounds import _differences


def _c(values: Any, dtype: Any = np.int64) -> Any:
    return ops.constant(np.array(values, dtype))


def _dims(x: Any, *index: int) -> Any:
    """Dims ``index`` of ``x`` as a 1-D i64 value (ShapeOf, then Gather)."""
    return ops.gather(ops.shape_of(x), _c(list(index)), _c(0))


def _pads(*parts: Any) -> Any:
    """A 1-D pads value: the parts (lists of constants, or values) concatenated."""
    return ops.concat([_c(p) if isinstance(p, list) else p for p in parts], 0)


Graph = Callable[[Any, Any], Any]  # (x, y) -> the Pad


def _by_a_dim(x: Any, y: Any) -> Any:  # the last dim padded at the front by a dim of y, 1 at the back
    return ops.pad(x, _pads([0, 0], _dims(y, 0)), _c([0, 0, 1]), "constant")


def _by_a_dim_both_sides(x: Any, y: Any) -> Any:  # Mamba's causal conv: both pads a dim of y less one
    pad = ops.subtract(_dims(y, 0), _c([1]))
    return ops.pad(x, _pads([0, 0], pad), _pads([0, 0], pad), "constant")


def _to_a_size(x: Any, y: Any) -> Any:  # padded at the back to a size: a bound less the dim
    return ops.pad(x, _c([0, 0, 0]), _pads([0, 0], ops.subtract(_c([40]), _dims(x, 2))), "constant")


def _cropped_by_a_dim(x: Any, y: Any) -> Any:  # a negative pad (a crop) of a dim's bounds
    return ops.pad(x, _pads([0, 0], ops.subtract(_c([0]), _dims(y, 0))), _c([0, 0, 1]), "constant")


def _by_i32_dims(x: Any, y: Any) -> Any:  # the pads as i32: ShapeOf's dims converted
    pads = ops.convert(_pads([0], _dims(y, 0, 0)), np.int32)
    return ops.pad(x, pads, ops.convert(_c([0, 1, 0]), np.int32), "constant")


def _reflected_by_a_dim(x: Any, y: Any) -> Any:  # reflect: the checks read the pads' lower bounds
    return ops.pad(x, _pads([0, 0], _dims(y, 0)), _c([0, 0, 0]), "reflect")


def _by_a_value_of_no_bounds(x: Any, y: Any) -> Any:  # a pad OpenVINO has no bounds of: the rank only
    return ops.pad(x, _pads([0, 0], ops.convert(ops.reduce_max(y, _c([0]), True), np.int64)), _c([0, 0, 1]), "constant")


def _by_a_dim_from_zero_up(x: Any, y: Any) -> Any:  # a pad of 0..: infinite padding, the upper bound unbounded
    return ops.pad(x, _pads([0, 0], _dims(y, 0)), _pads([0, 0], _dims(y, 0)), "edge")


CASES: dict[str, tuple[str, str, Graph]] = {  # x's shape, y's shape, the graph
    "pad-by-a-dim": ("[?,128,3..8]", "[2..5]", _by_a_dim),
    "pad-both-sides-by-a-dim-less-one": ("[?,128,?]", "[4]", _by_a_dim_both_sides),
    "pad-both-sides-by-a-bounded-dim-less-one": ("[2,128,5..]", "[3..6]", _by_a_dim_both_sides),
    "pad-to-a-size": ("[1,96,..30]", "[1]", _to_a_size),
    "pad-static-to-a-size": ("[1,96,30]", "[1]", _to_a_size),
    "crop-by-a-dim": ("[?,128,3..8]", "[2..5]", _cropped_by_a_dim),
    "pad-by-i32-dims": ("[3,4,5..9]", "[1..2]", _by_i32_dims),
    "reflect-by-a-dim": ("[2,8,9]", "[1..3]", _reflected_by_a_dim),
    "pad-by-a-value-of-no-bounds": ("[2,8,9]", "[3]", _by_a_value_of_no_bounds),
    "pad-by-a-dim-from-zero": ("[2,8,9]", "[?]", _by_a_dim_from_zero_up),
}
RESHAPES: dict[str, tuple[str, str]] = {  # the case, reshaped to other x and y shapes
    "pad-by-a-dim": ("[4,128,6]", "[3]"),
    "pad-both-sides-by-a-dim-less-one": ("[1..3,128,10..20]", "[2..4]"),
    "pad-to-a-size": ("[1,96,8..16]", "[1]"),
    "crop-by-a-dim": ("[?,128,?]", "[0..2]"),
    "reflect-by-a-dim": ("[2,8,1..9]", "[1]"),
    "pad-by-a-dim-from-zero": ("[2,8,?]", "[1..]"),
}


def _model(case: str) -> ov.Model:
    xs, ys, graph = CASES[case]
    x = ops.parameter(ov.PartialShape(xs), np.float32, name="x")
    y = ops.parameter(ov.PartialShape(ys), np.float32, name="y")
    pad = graph(x, y)
    pad.set_friendly_name("pad")
    return ov.Model([ops.result(ops.reduce_mean(pad, _c([0]), True))], [x, y], case)


def _compare(case: str, tmp_path: Path, reshape: tuple[str, str] | None) -> ov.Model:
    xml = tmp_path / "m.xml"
    ov.save_model(_model(case), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    shapes = None
    if reshape is not None:
        model.reshape({"x": ov.PartialShape(reshape[0]), "y": ov.PartialShape(reshape[1])})
        shapes = {"x": PartialShape.parse(reshape[0]), "y": PartialShape.parse(reshape[1])}
    _agrees(xml, model, shapes)
    return model


def _agrees(xml: Path, model: ov.Model, shapes: dict[str, PartialShape] | None = None) -> None:
    """Every layer output ovreduce infers for ``xml`` (under ``shapes``) is the one OpenVINO infers in ``model``."""
    ir = load_ir(xml)
    try:
        assert _differences(ShapeEngine(ir, shapes), model) == []
    finally:
        ir.close()


def _node_shape(model: ov.Model, name: str = "pad") -> str:
    return str(next(n for n in model.get_ordered_ops() if n.get_friendly_name() == name).get_output_partial_shape(0))


@pytest.mark.parametrize("case", list(CASES))
def test_a_pad_of_computed_pads_is_openvinos(case: str, tmp_path: Path) -> None:
    _compare(case, tmp_path, None)


@pytest.mark.parametrize("case", list(RESHAPES))
def test_a_pad_of_computed_pads_after_reshape_is_openvinos(case: str, tmp_path: Path) -> None:
    _compare(case, tmp_path, RESHAPES[case])


def test_the_cases_pad_by_bounds(tmp_path: Path) -> None:
    """The cases are about bounds: OpenVINO knows the padded dims in part (not a rank of dynamic dims only)."""
    assert _node_shape(_compare("pad-by-a-dim", tmp_path, None)) == "[?,128,6..14]"
    assert _node_shape(_compare("pad-both-sides-by-a-dim-less-one", tmp_path, None)) == "[?,128,6..]"
    assert _node_shape(_compare("pad-both-sides-by-a-bounded-dim-less-one", tmp_path, None)) == "[2,128,9..]"
    assert _node_shape(_compare("pad-by-a-dim-from-zero", tmp_path, None)) == "[2,8,9..]"
    assert _node_shape(_compare("pad-by-a-value-of-no-bounds", tmp_path, None)) == "[?,?,?]"


# -- GroupNormalization ---------------------------------------------------------------------------------------------
def _group_norm_model(shape: str, channels: int, scale: str | None = None) -> ov.Model:
    """A VAE's block: a 3x3 Convolution (its spatial dims ``1..`` where the input's are dynamic), GroupNormalization
    of 8 groups, Swish; ``scale`` the shape of a scale given as a Parameter (None: a Constant of the channels)."""
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    weights = ops.constant(np.ones((channels, 4, 3, 3), np.float32))
    conv = ops.convolution(x, weights, [1, 1], [1, 1], [1, 1], [1, 1])
    params = [x]
    if scale is None:
        gamma: Any = ops.constant(np.ones(channels, np.float32))
    else:
        gamma = ops.parameter(ov.PartialShape(scale), np.float32, name="scale")
        params.append(gamma)
    norm = ops12.group_normalization(conv, gamma, ops.constant(np.zeros(channels, np.float32)), 8, 1e-5)
    norm.set_friendly_name("norm")
    out = ops.reduce_mean(ops.swish(norm), _c([2, 3]), True)
    return ov.Model([ops.result(out)], params, "group-norm")


GROUP_NORMS: dict[str, tuple[str, int, str | None, dict[str, str] | None]] = {
    # x's shape, the channels, the scale's shape (None: a Constant), a reshape
    "dynamic-spatial-dims": ("[?,4,?,?]", 32, None, None),
    "interval-dims": ("[1..2,4,5..9,?]", 16, None, None),
    "dynamic-channels-scale": ("[1,4,8,8]", 32, "[?]", None),
    "reshaped-to-static": ("[?,4,?,?]", 32, None, {"x": "[2,4,16,16]"}),
    "reshaped-to-intervals": ("[1,4,8,8]", 32, None, {"x": "[1..3,4,2..,8]"}),
}


@pytest.mark.parametrize("case", list(GROUP_NORMS))
def test_a_group_normalization_keeps_the_dims_openvino_infers(case: str, tmp_path: Path) -> None:
    """OpenVINO's GroupNormalization gives its data shape as it is: the ``1..`` a Convolution infers stays ``1..``."""
    shape, channels, scale, reshape = GROUP_NORMS[case]
    xml = tmp_path / "m.xml"
    ov.save_model(_group_norm_model(shape, channels, scale), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    if reshape:
        model.reshape({k: ov.PartialShape(v) for k, v in reshape.items()})
    shapes = {k: PartialShape.parse(v) for k, v in (reshape or {}).items()}
    _agrees(xml, model, shapes or None)


@pytest.mark.parametrize(
    ("attribute", "scale", "refused"),
    [
        ('num_groups="8"', None, False),
        ('num_groups="0"', None, True),  # not positive
        ('num_groups="64"', None, True),  # more groups than channels
        ('num_groups="5"', None, True),  # not dividing the channels
        ('num_groups="8x"', None, False),  # OpenVINO's reader takes the number it begins with
        ('epsilon="x"', None, True),  # a number OpenVINO's reader cannot read
        ('num_groups="8"', "[16]", True),  # the scale's length not the channels'
        ('num_groups="8"', "[2,16]", True),  # a scale not 1-D
        ('num_groups="8"', "[32]", False),
        ('num_groups="8"', "[20..40]", False),
    ],
)
def test_a_group_normalization_is_refused_as_openvino_refuses_it(
    attribute: str, scale: str | None, refused: bool, tmp_path: Path
) -> None:
    """The layer's attribute rewritten in the IR, or its scale (a Parameter) reshaped: ovreduce leaves the output
    unresolved, saying why, exactly where OpenVINO refuses the model or the reshape."""
    xml = tmp_path / "m.xml"
    ov.save_model(_group_norm_model("[?,4,?,?]", 32, None if scale is None else "[?]"), str(xml))
    name = attribute.split("=")[0]
    text = xml.read_text()
    start = text.index(f'{name}="', text.index('type="GroupNormalization"'))
    xml.write_text(text[:start] + attribute + text[text.index('"', start + len(name) + 2) + 1 :])
    try:
        model = ov.Core().read_model(str(xml))
        if scale is not None:
            model.reshape({"scale": ov.PartialShape(scale)})
        openvino_refuses = False
    except RuntimeError:
        openvino_refuses = True
    assert openvino_refuses == refused
    ir = load_ir(xml)
    try:
        norm = next(layer for layer in ir.layers if layer.name == "norm")
        reshape = None if scale is None else {"scale": PartialShape.parse(scale)}
        state = ShapeEngine(ir, reshape).state((norm.id, norm.outputs[0].id))
        assert (state.shape is None) == refused, state
        assert not refused or "GroupNormalization" in state.reason
    finally:
        ir.close()


# -- Interpolate ----------------------------------------------------------------------------------------------------
def _sizes_of(y: Any) -> Any:  # the spatial dims of y, as a segformer's decode head upsamples to them (i64)
    return _dims(y, 2, 3)


def _i32_sizes_of(y: Any) -> Any:  # the same, converted to i32 and back as the export writes it
    return ops.convert(ops.gather(ops.convert(ops.shape_of(y), np.int32), _c([2, 3]), _c(0)), np.int32)


def _no_bounds(y: Any) -> Any:  # a value OpenVINO has no bounds of
    return ops.convert(y, np.int64)


def _one_size(y: Any) -> Any:
    return _dims(y, 3)


Sizes = Callable[[Any], Any]
INTERPOLATES: dict[str, tuple[str, str, Sizes, list[int] | None]] = {  # x's shape, y's shape, the sizes, the axes
    "sizes-of-dynamic-dims": ("[?,32,?,?]", "[?,16,?,?]", _sizes_of, [2, 3]),
    "sizes-of-interval-dims": ("[?,32,4,4]", "[1,16,2..8,1..]", _sizes_of, [2, 3]),
    "i32-sizes": ("[?,32,?,?]", "[1,16,2..8,5]", _i32_sizes_of, [2, 3]),
    "sizes-on-one-axis": ("[?,32,?,?]", "[1,16,2..8,5]", _one_size, [2]),
    "sizes-on-every-axis": ("[?,32,?,?]", "[1,16,2..8,5]", ops.shape_of, None),
    "sizes-the-shape-of-y": ("[?,32,?,?]", "[2..8,1..]", ops.shape_of, [2, 3]),
    "sizes-of-no-bounds": ("[?,32,?,?]", "[2]", _no_bounds, [2, 3]),
}


def _interpolate_model(case: str) -> ov.Model:
    xs, ys, sizes, axes = INTERPOLATES[case]
    x = ops.parameter(ov.PartialShape(xs), np.float32, name="x")
    y = ops.parameter(ov.PartialShape(ys), np.float32 if sizes is not _no_bounds else np.int32, name="y")
    node = ops.interpolate(x, sizes(y), "linear_onnx", "sizes", pads_begin=[0, 0, 1, 0],
                           coordinate_transformation_mode="pytorch_half_pixel",
                           axes=None if axes is None else _c(axes))  # fmt: skip
    node.set_friendly_name("interpolate")
    return ov.Model([ops.result(node)], [x, y], case)


@pytest.mark.parametrize("case", list(INTERPOLATES))
def test_an_interpolate_to_computed_sizes_is_openvinos(case: str, tmp_path: Path) -> None:
    """Interpolate to sizes computed from dims: OpenVINO reads the sizes' bounds (``evaluate_as_partial_shape``), so an
    upsample to a feature map's ``1..`` dims is ``1..``, not ``?``."""
    xml = tmp_path / "m.xml"
    ov.save_model(_interpolate_model(case), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    _agrees(xml, model)
    if case == "sizes-of-interval-dims":
        assert _node_shape(model, "interpolate") == "[?,32,2..8,1..]"


def test_an_interpolate_to_too_few_computed_sizes_is_refused(tmp_path: Path) -> None:
    """Sizes of bounds but fewer than the axes (y reshaped to one dim, its ShapeOf the sizes for axes [2, 3]): OpenVINO
    refuses the reshape, and ovreduce leaves the output unresolved, saying why."""
    xml = tmp_path / "m.xml"
    ov.save_model(_interpolate_model("sizes-the-shape-of-y"), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    with pytest.raises(RuntimeError, match="does not match the number of axes"):
        model.reshape({"y": ov.PartialShape("[2..8]")})
    ir = load_ir(xml)
    try:
        layer = next(layer for layer in ir.layers if layer.name == "interpolate")
        state = ShapeEngine(ir, {"y": PartialShape.parse("[2..8]")}).state((layer.id, layer.outputs[0].id))
        assert state.shape is None
        assert "The number of elements in the 'sizes' input does not match the number of axes 2" in state.reason
    finally:
        ir.close()


# -- Broadcast ------------------------------------------------------------------------------------------------------
BIDIRECTIONAL: dict[str, tuple[str, int]] = {  # the data's shape, the target's length (its values of no bounds)
    "zamba2-expand": ("[?,1,?,?,8]", 5),  # torch's expand of a mamba state: the 8 stays
    "target-shorter": ("[2..4,1,3,?,1]", 3),
    "target-longer": ("[1,5..9,6]", 5),
    "data-of-ones": ("[1,1]", 2),
    "data-of-dynamic-rank": ("...", 3),
}


@pytest.mark.parametrize("case", list(BIDIRECTIONAL))
def test_a_bidirectional_broadcast_to_a_target_of_no_bounds_keeps_the_data_dims(case: str, tmp_path: Path) -> None:
    """A bidirectional Broadcast to a target of which OpenVINO knows the length only (its elements computed at run time
    from a Parameter's values): OpenVINO merges the data's dims into that many dynamic ones (numpy rules), so a data
    dim other than 1 stays in the output."""
    shape, n = BIDIRECTIONAL[case]
    x = ops.parameter(ov.PartialShape(shape), np.float32, name="x")
    p = ops.parameter(ov.PartialShape([n]), np.int64, name="p")
    node = ops.broadcast(x, ops.abs(p), broadcast_spec="BIDIRECTIONAL")
    node.set_friendly_name("broadcast")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(node)], [x, p], case), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    _agrees(xml, model)
    if case == "zamba2-expand":
        assert _node_shape(model, "broadcast") == "[?,?,?,?,8]"


# -- Slice ----------------------------------------------------------------------------------------------------------
def _buffer(x: Any, y: Any) -> Any:  # BERT's position ids: a buffer [1,512] sliced to the sequence's length
    buffer = _c(np.arange(512).reshape(1, 512))
    return ops.slice(buffer, _c([0]), _dims(x, 1), _c([1]), _c([1]))


def _window(x: Any, y: Any) -> Any:  # a conv state's last positions: x[..., d - 4 : d] (Mamba, LFM2)
    d = _dims(x, 2)
    return ops.slice(x, ops.subtract(d, _c([4])), d, _c([1]), _c([2]))


def _tail(x: Any, y: Any) -> Any:  # from a start that may be either side of 0: x[:, :, d(y) - 5 :]
    return ops.slice(x, ops.subtract(_dims(y, 0), _c([5])), _c([2**63 - 1]), _c([1]), _c([2]))


def _stepped(x: Any, y: Any) -> Any:  # every second element up to a dim of y, and back from it
    forward = ops.slice(x, _c([0]), _dims(y, 0), _c([2]), _c([2]))
    return ops.slice(forward, _dims(y, 0), _c([-(2**63)]), _c([-1]), _c([2]))


def _i32_bounds(x: Any, y: Any) -> Any:  # start and stop as i32: ShapeOf's dims converted
    start = ops.convert(ops.subtract(_dims(y, 0), _c([1])), np.int32)
    return ops.slice(x, start, ops.convert(_c([2**31 - 1]), np.int32), _c([1]), _c([2]))


def _partly_known(x: Any, y: Any) -> Any:  # start known on one axis, of no bounds (a Parameter's value) on the other
    start = ops.concat([_dims(y, 0), ops.convert(ops.reduce_max(y, _c([0]), True), np.int64)], 0)
    return ops.slice(x, start, _c([64, 64]), _c([1, 1]), _c([0, 2]))


SLICES: dict[str, tuple[str, str, Graph, tuple[str, str] | None]] = {  # x's, y's shapes, the graph, a reshape
    "a-buffer-to-a-sequence": ("[?,1..64]", "[1]", _buffer, ("[2,5..9]", "[1]")),
    "a-window-of-the-last-dims": ("[1..4,8,3..67]", "[1]", _window, ("[2,8,?]", "[1]")),
    "a-tail-from-either-side-of-0": ("[2,3,10..20]", "[1..9]", _tail, ("[2,3,4..30]", "[3..7]")),
    "steps-of-2-and-minus-1": ("[2,3,?]", "[2..9]", _stepped, ("[2,3,5..6]", "[4..20]")),
    "i32-start-and-stop": ("[2,3,?]", "[2..9]", _i32_bounds, None),
    "start-of-no-bounds-on-one-axis": ("[4,3,?]", "[2..9]", _partly_known, None),
}


@pytest.mark.parametrize(
    ("case", "reshaped"), [(c, False) for c in SLICES] + [(c, True) for c, v in SLICES.items() if v[3] is not None]
)
def test_a_slice_of_computed_start_and_stop_is_openvinos(case: str, reshaped: bool, tmp_path: Path) -> None:
    """Slice-8 of start and stop computed from dims: OpenVINO slices by their bounds (``make_dim``), so BERT's position
    ids sliced to a sequence of ``1..64`` are ``[1,1..64]``, not ``[1,0..64]``."""
    xs, ys, graph, reshape = SLICES[case]
    x = ops.parameter(ov.PartialShape(xs), np.float32, name="x")
    y = ops.parameter(ov.PartialShape(ys), np.float32, name="y")
    node = graph(x, y)
    node.set_friendly_name("slice")
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(node)], [x, y], case), str(xml), compress_to_fp16=False)
    model = ov.Core().read_model(str(xml))
    shapes = None
    if reshaped and reshape is not None:
        model.reshape({"x": ov.PartialShape(reshape[0]), "y": ov.PartialShape(reshape[1])})
        shapes = {"x": PartialShape.parse(reshape[0]), "y": PartialShape.parse(reshape[1])}
    _agrees(xml, model, shapes)
    if case == "a-buffer-to-a-sequence" and not reshaped:
        assert _node_shape(model, "slice") == "[1,1..64]"
