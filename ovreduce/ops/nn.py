"""Neural-network ops: MatMul, Convolution, GroupConvolution, MaxPool, AvgPool, BatchNormInference,
GroupNormalization.

Written after OpenVINO's ``matmul_shape_inference.hpp``, ``convolution_shape_inference(_util).hpp``,
``group_convolution_shape_inference.hpp``, ``pooling_shape_inference_util.hpp``, ``batch_norm_shape_inference.hpp``
and ``group_normalization_shape_inference.hpp``, with its Dimension arithmetic (:mod:`ovreduce.shapes`): a dynamic or
interval dim in a spatial axis gives the interval OpenVINO computes, not the declared dim.
"""

from __future__ import annotations

from collections.abc import Sequence

from ovreduce.errors import ShapeInferenceError
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType
from ovreduce.ir.model import Layer
from ovreduce.ops.base import LayerContext, PortState
from ovreduce.ops.rules import (
    ELEMENT_TYPE,
    PAD_TYPE,
    ROUNDING,
    NotReadNativelyError,
    ShapeRule,
    bool_attr,
    int_attr,
    ints_attr,
    normalize_axis,
    real_attr,
    shape_value,
    str_attr,
    typed,
    value_ports,
)
from ovreduce.shapes import (
    Dimension,
    PartialShape,
    broadcast_merge,
    ceil_div,
    const_dim,
    dilated,
    dim_add,
    dim_div,
    dim_mul,
    dim_sub,
    floor_div,
    merge,
    padded,
)

__all__ = [
    "AvgPool",
    "BatchNormInference",
    "Convolution1",
    "ConvolutionBackpropData1",
    "GroupConvolution1",
    "GroupNormalization12",
    "MatMul0",
    "MaxPool",
]

_ONE = Dimension.static(1)


class MatMul0(ShapeRule):
    """MatMul-0: ``transpose_a``/``transpose_b`` (ignored for 1-D inputs), batch dims broadcast."""

    type = "MatMul"
    inputs = range(2, 3)
    version = "opset1"
    boolean_attributes = ("transpose_a", "transpose_b")

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        type_a, type_b = typed(ctx.input(0)), typed(ctx.input(1))
        if type_a is not None and type_b is not None and type_a != type_b:
            raise ShapeInferenceError(f"Arguments do not have the same element type (arg0 element type: {type_a}, "
                                      f"arg1 element type: {type_b}).")  # fmt: skip
        a, b = inputs[0], inputs[1]
        if a.dims is None or b.dims is None:
            return [PartialShape(None)]
        if not a.dims or not b.dims:
            raise ShapeInferenceError("Scalars are not supported as MatMul inputs.")
        ta = bool_attr(ctx.layer, "transpose_a", False)
        tb = bool_attr(ctx.layer, "transpose_b", False)
        da, db = list(a.dims), list(b.dims)
        if len(da) == 1:
            da = [_ONE, da[0]]
        elif ta:
            da[-2], da[-1] = da[-1], da[-2]
        if len(db) == 1:
            db = [db[0], _ONE]
        elif tb:
            db[-2], db[-1] = db[-1], db[-2]
        # a dynamic dim that cannot match is let through, as OpenVINO does "for backward compatibility"
        if merge(da[-1], db[-2]) is None and da[-1].is_static and db[-2].is_static:
            raise ShapeInferenceError(
                f"Incompatible MatMul matrix dimension. First input dimension={da[-1]} at COL_INDEX_DIM={len(da) - 1} "
                f"doesn't match the second input dimension={db[-2]} at ROW_INDEX_DIM={len(db) - 2}"
            )
        rank = max(len(da), len(db))
        ba = [_ONE] * (rank - len(da)) + da[:-2]
        bb = [_ONE] * (rank - len(db)) + db[:-2]
        batch: list[Dimension] = []
        for i, (x, y) in enumerate(zip(ba, bb, strict=True)):
            d = broadcast_merge(x, y)
            if d is None and x.is_static and y.is_static:
                raise ShapeInferenceError(f"Incompatible MatMul batch dimension. Can't merge first input dimension={x} "
                                          f"with second input dimension={y} at index={i}")  # fmt: skip
            batch.append(Dimension.dynamic() if d is None else d)
        out = [*batch]
        if len(a.dims) > 1:
            out.append(da[-2])
        if len(b.dims) > 1:
            out.append(db[-1])
        return [PartialShape(tuple(out))]


# -- convolutions and pooling ---------------------------------------------------------------------------------
def _spatial_attrs(layer: Layer, n: int, names: Sequence[str]) -> list[tuple[int, ...]]:
    out = []
    for name in names:
        values = ints_attr(layer, name)
        if values is None or not values:
            values = (1,) * n if name in ("strides", "dilations") else (0,) * n
        if len(values) != n:
            raise ShapeInferenceError(
                f"{name.capitalize().replace('_', ' ')} should be defined for all and only spatial dimensions."
            )
        if name in ("strides", "dilations") and any(v < 0 for v in values):
            raise NotReadNativelyError(f"its {name} {list(values)} has a negative value, read by OpenVINO as a size")
        out.append(values)
    return out


def _padding(dim: Dimension, kernel: int, dilation: int, stride: int) -> tuple[int, int]:
    """``dim::padding``: SAME padding of a static dim; (0, 0) for another."""
    if not dim.is_static:
        return 0, 0
    dilated_kernel = dilation * (kernel - 1) + 1 if kernel >= 1 else -1
    tmp = (dim.lo + stride - 1) // stride
    total = max(0, (tmp - 1) * stride + dilated_kernel - dim.lo)
    return total // 2, total - total // 2


def _window(
    data: Dimension, kernel: Dimension, pads: int, dilation: int, stride: int, ceil: bool, what: str
) -> Dimension:
    """One output dim of a window op with explicit pads: ``(data + pads - dilated kernel) / stride + 1``."""
    dim = dim_add(data, const_dim(pads))
    kd = dilated(kernel, dilation)
    if dim.is_static and kd.is_static and kd.lo > dim.lo:
        raise ShapeInferenceError(
            f"{what} after dilation has size (dim: {kd.lo}) larger than the data shape after padding (dim: {dim.lo})"
        )
    diff = dim_sub(dim, kd)
    return dim_add(ceil_div(diff, stride) if ceil else floor_div(diff, stride), _ONE)


def _no_window_in_padding(windows: Dimension, stride: int, data: Dimension, begin: int) -> Dimension:
    """``ceil_torch`` (``disallow_pooling_start_in_padding``): ceil's count of ``windows`` less a last window that
    would start in the end padding, bound by bound: the count's lower bound against the data dim's lower bound,
    its upper against the upper (an unbounded data dim leaves it unbounded). Sizes are unsigned there: where the
    data and the begin padding are both 0, the window is kept."""

    def bound(count: int, size: int) -> int:
        return count - 1 if (count - 1) * stride >= size + begin > 0 else count

    if data.is_static:
        return Dimension.static(bound(windows.lo, data.lo))
    lo = bound(windows.lo, data.lo)
    hi = None if data.hi is None or windows.hi is None else bound(windows.hi, data.hi)
    if hi is not None and hi < lo:  # OpenVINO's empty interval, which it reads back as a dynamic dim
        return Dimension.dynamic()
    return Dimension(lo, hi)


def _same_data_and_filters_types(ctx: LayerContext) -> None:
    data, filters = typed(ctx.input(0)), typed(ctx.input(1))
    if data is not None and filters is not None and data != filters:
        raise ShapeInferenceError(f"Element types for data batch and filters do not match (data batch element type: "
                                  f"{data}, filters element type: {filters}).")  # fmt: skip


class _ConvBase(ShapeRule):
    filter_prefix = 2  # filter dims before the spatial ones

    def __init__(self, opsets: range) -> None:
        self.enums = {"auto_pad": PAD_TYPE}
        self.opsets = opsets

    def channels(self, data: PartialShape, filters: PartialShape) -> Dimension:
        raise NotImplementedError

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        _same_data_and_filters_types(ctx)
        data, filters = inputs[0], inputs[1]
        if data.dims is not None and len(data.dims) not in (3, 4, 5):
            raise ShapeInferenceError(f"Expected a 3D, 4D or 5D tensor for the input. Got: {data}")
        if data.dims is not None:
            n = len(data.dims) - 2
        elif filters.dims is not None:
            n = len(filters.dims) - self.filter_prefix
        else:
            strides = ints_attr(layer, "strides") or ints_attr(layer, "dilations") or ints_attr(layer, "pads_begin")
            if not strides:
                return [PartialShape(None)]
            n = len(strides)
        if filters.dims is not None and len(filters.dims) != n + self.filter_prefix:
            raise ShapeInferenceError(
                f"Data batch and filters rank do not match (data batch shape: {data}, filters shape: {filters})."
            )
        strides, dilations, pb, pe = _spatial_attrs(layer, n, ("strides", "dilations", "pads_begin", "pads_end"))
        if 0 in strides:
            raise ShapeInferenceError(f"Strides has zero dimension(s). {list(strides)}")
        if 0 in dilations:
            raise ShapeInferenceError(f"Filter dilations has zero dimension(s). {list(dilations)}")
        d_dims = data.dims if data.dims is not None else PartialShape.dynamic(n + 2).dims
        f_dims = filters.dims if filters.dims is not None else PartialShape.dynamic(n + self.filter_prefix).dims
        assert d_dims is not None and f_dims is not None
        auto_pad = str_attr(layer, "auto_pad", "explicit")
        out = [d_dims[0], self.channels(data, filters)]
        for i in range(n):
            dd, fd = d_dims[2 + i], f_dims[self.filter_prefix + i]
            if auto_pad in ("same_upper", "same_lower"):
                out.append(ceil_div(dd, strides[i]))
                continue
            pads = 0 if auto_pad == "valid" else pb[i] + pe[i]
            out.append(_window(dd, fd, pads, dilations[i], strides[i], False, "Kernel"))
        return [PartialShape(tuple(out))]


class Convolution1(_ConvBase):
    """Convolution-1: data [N, C_in, spatial], filters [C_out, C_in, kernel]."""

    type = "Convolution"
    inputs = range(2, 3)
    version = "opset1"

    def channels(self, data: PartialShape, filters: PartialShape) -> Dimension:
        if data.dims is not None and filters.dims is not None and not data.dims[1].compatible(filters.dims[1]):
            raise ShapeInferenceError(
                f"Data batch channel count ({data.dims[1]}) does not match filter input channel count "
                f"({filters.dims[1]})."
            )
        return filters.dims[0] if filters.dims is not None else Dimension.dynamic()


class GroupConvolution1(_ConvBase):
    """GroupConvolution-1: filters [G, C_out/G, C_in/G, kernel]; output channels G x C_out/G."""

    type = "GroupConvolution"
    inputs = range(2, 3)
    version = "opset1"
    filter_prefix = 3

    def channels(self, data: PartialShape, filters: PartialShape) -> Dimension:
        if filters.dims is None:
            return Dimension.dynamic()
        groups = filters.dims[0]
        if data.dims is not None and filters.dims[2].is_static:
            per_group = filters.dims[2].lo
            quotient = dim_div(data.dims[1], per_group) if per_group else None
            merged = merge(groups, quotient) if quotient is not None else None
            if merged is None:
                raise ShapeInferenceError(
                    "Input channels dimension of data batch is incompatible with filter groups or input channels."
                )
            groups = merged
        return dim_mul(groups, filters.dims[1])


class _Pool(ShapeRule):
    """MaxPool / AvgPool: ``kernel``, ``strides``, ``pads_begin``/``pads_end``, ``auto_pad``, ``rounding_type``
    (and MaxPool-8's ``dilations``); the output keeps N and C."""

    inputs = range(1, 2)

    def __init__(self, type: str, version: str, opsets: range, outputs: int = 1) -> None:
        self.type = type
        self.version = version
        self.opsets = opsets
        self.outputs = outputs
        self.enums = {"auto_pad": PAD_TYPE, "rounding_type": ROUNDING}
        self.boolean_attributes = ("exclude-pad",) if type == "AvgPool" else ()
        if outputs == 2:  # MaxPool-8 and -14, which give the indices too
            self.enums["index_element_type"] = ELEMENT_TYPE

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        data = inputs[0]
        kernel = ints_attr(layer, "kernel") or ()
        n = len(kernel)
        if self.outputs == 2:  # the indices' axis, read (and checked against the rank) as the op is made
            axis = int_attr(layer, "axis", 0)
            if data.dims is not None:
                normalize_axis(axis, len(data.dims))
        rounding = str_attr(layer, "rounding_type", "floor")
        if data.dims is None:
            self._check_rounding(rounding)
            shape = PartialShape.dynamic(n + 2) if n else PartialShape(None)
            return [shape] * self.outputs
        if len(data.dims) not in (3, 4, 5):
            raise ShapeInferenceError(f"Expected a 3D, 4D or 5D tensor for the input. Got: {data}")
        if len(data.dims) - 2 != n:
            raise ShapeInferenceError(f"Expected kernel size to be equal to input size - 2. Got: {n}")
        for dim, what in ((data.dims[0], "Batch size"), (data.dims[1], "Channel count")):
            if dim.is_static and dim.lo == 0:  # pooling_shape_inference_util.hpp refuses an empty batch/channel
                raise ShapeInferenceError(f"{what} is zero.")
        small = next((i for i, k in enumerate(kernel) if k < 1), None)
        if small is not None and not data.dims[2 + small].is_static:
            raise NotReadNativelyError(f"its kernel {list(kernel)} has a size below 1, read by OpenVINO as a size")
        if small is not None:  # OpenVINO reads it unsigned: 0 dilates to 2**64 - 1, -2 is 2**64 - 2
            raise ShapeInferenceError(
                f"Kernel {list(kernel)} has a size below 1 at axis {small}: after dilation it is "
                f"larger than the data shape after padding (OpenVINO reads sizes unsigned)"
            )
        if not ints_attr(layer, "strides"):  # a convolution's default of ones is not a pooling's
            raise ShapeInferenceError("Expected strides size to be equal to input size - 2. Got: 0")
        for i, (k, d) in enumerate(zip(kernel, ints_attr(layer, "dilations") or (), strict=False)):
            if d < 0 and k > 1 and data.dims[2 + i].is_static:  # read unsigned: the dilated kernel wraps past 2**64
                size = ((k - 1) * (d % 2**64) + 1) % 2**64
                if size == 0:
                    raise ShapeInferenceError(f"Kernel after dilation has dimension less than 1 (dim: 0) at axis {i}.")
                raise ShapeInferenceError(f"Kernel after dilation has size (dim: {size}) larger than the data shape "
                                          f"after padding (the dilation {d} read unsigned)")  # fmt: skip
        strides, dilations, pb, pe = _spatial_attrs(layer, n, ("strides", "dilations", "pads_begin", "pads_end"))
        if 0 in strides:
            raise ShapeInferenceError(f"Strides has zero dimension(s). {list(strides)}")
        if 0 in dilations:
            raise ShapeInferenceError(f"Kernel dilations has zero dimension(s). {list(dilations)}")
        self._check_rounding(rounding)
        auto_pad = str_attr(layer, "auto_pad", "explicit")
        if auto_pad == "explicit" and min((*pb, *pe), default=0) < 0:  # read unsigned: a pad past any dim
            raise ShapeInferenceError(f"Cannot get length of dynamic dimension (the pads {list(pb)} and {list(pe)} are "
                                      f"read unsigned)")  # fmt: skip
        out = [data.dims[0], data.dims[1]]
        exclude_pad = bool_attr(layer, "exclude-pad", True)
        for i in range(n):
            dd = data.dims[2 + i]
            if auto_pad in ("same_upper", "same_lower"):
                if not dd.is_static:
                    out.append(Dimension.dynamic())
                    continue
                pads = sum(_padding(dd, kernel[i], dilations[i], strides[i]))
                begin = _padding(dd, kernel[i], dilations[i], strides[i])[0 if auto_pad == "same_upper" else 1]
            elif auto_pad == "valid":
                pads, begin = 0, 0
            else:
                pads, begin = pb[i] + pe[i], pb[i]
            dim = _window(dd, Dimension.static(kernel[i]), pads, dilations[i], strides[i], rounding != "floor",
                          "Kernel")  # fmt: skip
            end = pads - begin
            # checked on a static dim only, after the kernel's size, with the pads auto_pad gives
            if self.type == "AvgPool" and exclude_pad and dd.is_static and not kernel[i] > max(begin, end):
                raise ShapeInferenceError(
                    f"Kernel after dilation is sometimes entirely in the padding area for axis {i} (dilated kernel "
                    f"dimension: {kernel[i]}, padding below dimension: {begin}, padding above dimension: {end}) "
                    "and this is not allowed."
                )
            out.append(_no_window_in_padding(dim, strides[i], dd, begin) if rounding == "ceil_torch" else dim)
        shape = PartialShape(tuple(out))
        return [shape] * self.outputs

    def _check_rounding(self, rounding: str) -> None:
        if rounding == "ceil_torch" and self.version != "opset14":  # pooling v14 brought it
            raise ShapeInferenceError("Rounding CEIL_TORCH is not supported.")

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        first = super().types(layer, inputs)
        if self.outputs == 1:
            return first[:1]
        index_type = ELEMENT_TYPES.get(str_attr(layer, "index_element_type", "i64"), ELEMENT_TYPES["i64"])
        return [first[0], index_type]


def MaxPool(version: str, opsets: range) -> _Pool:  # noqa: N802 - a family of registry entries
    return _Pool("MaxPool", version, opsets, 1 if version == "opset1" else 2)


def AvgPool(version: str, opsets: range) -> _Pool:  # noqa: N802
    return _Pool("AvgPool", version, opsets)


class BatchNormInference(ShapeRule):
    """BatchNormInference: the data shape, its channel dim merged with the 1-D gamma/beta/mean/variance."""

    type = "BatchNormInference"
    inputs = range(5, 6)

    def __init__(self, version: str, opsets: range) -> None:
        self.version = version
        self.opsets = opsets
        self.data_index = 2 if version == "opset1" else 0

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        epsilon = real_attr(ctx.layer, "epsilon", 0.0)
        if not epsilon >= 0:  # NaN too
            raise ShapeInferenceError(f"Attribute 'epsilon' must be non negative value. Got: {epsilon:g}")
        data = inputs[self.data_index]
        channel = Dimension.dynamic()
        for i, shape in enumerate(inputs):
            if i == self.data_index or shape.dims is None:
                continue
            if len(shape.dims) != 1:
                raise ShapeInferenceError(f"Shape for input {i} must be 1D. Got: {shape}")
            merged = merge(channel, shape.dims[0])
            if merged is None:
                raise ShapeInferenceError("Shapes for gamma/beta/mean/variance do not match.")
            channel = merged
        if data.dims is None:
            return [data]
        if len(data.dims) < 2:
            raise ShapeInferenceError(f"Input argument must have rank of at least 2 (input argument shape: {data}).")
        merged = merge(data.dims[1], channel)
        if merged is None:
            raise ShapeInferenceError("Input channel dimension does not match shape for gamma/beta/mean/variance.")
        return [PartialShape((data.dims[0], merged, *data.dims[2:]))]

    def types(self, layer: Layer, inputs: Sequence[PortState]) -> list[ElementType | None]:
        src = inputs[self.data_index].element_type if len(inputs) > self.data_index else None
        return [src if src is not None else port.precision for port in layer.outputs]


class GroupNormalization12(ShapeRule):
    """GroupNormalization-12 (``group_normalization_shape_inference.hpp``): the data shape as it is, after the checks of
    ``num_groups`` (above 0, at most the channels and dividing them where those are static) and of the 1-D scale and
    bias (their length the channels' where known, and each other's)."""

    type = "GroupNormalization"
    version = "opset12"
    inputs = range(3, 4)

    def __init__(self, opsets: range) -> None:
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        groups = int_attr(ctx.layer, "num_groups", 0)
        real_attr(ctx.layer, "epsilon", 0.0)  # (read as OpenVINO reads it: a number it cannot read is refused)
        data, scale, bias = inputs[0], inputs[1], inputs[2]
        if groups <= 0:
            raise ShapeInferenceError("The number of groups needs to be a positive integer value")
        for shape, what in ((scale, "scale"), (bias, "bias")):
            if shape.dims is not None and len(shape.dims) != 1:
                raise ShapeInferenceError(f"The {what} input is required to be 1D")
        if data.dims is not None:
            if len(data.dims) < 2:
                raise ShapeInferenceError("The input tensor is required to be at least 2D")
            channels = data.dims[1]
            for shape, what in ((scale, "scale"), (bias, "bias")):
                if shape.dims is not None and not channels.compatible(shape.dims[0]):
                    raise ShapeInferenceError(
                        f"The {what} input shape needs to match the channel dimension in the data input"
                    )
            if channels.is_static and groups > channels.lo:
                raise ShapeInferenceError("The number of groups must not exceed the number of channels in the input "
                                          "tensor")  # fmt: skip
            if channels.is_static and channels.lo % groups:
                raise ShapeInferenceError("The number of channels is required to be evenly divisible by the number of "
                                          "groups")  # fmt: skip
        if not scale.compatible(bias):
            raise ShapeInferenceError("The shapes of both scale and bias inputs need to match")
        return [data]


class ConvolutionBackpropData1(ShapeRule):
    """ConvolutionBackpropData-1 (``convolution_backprop_shape_inference(_util).hpp``): data [N, C_in,
    spatial], filters [C_in, C_out, kernel], optional ``output_shape`` (the spatial dims, taken as they are).
    Without it each spatial dim is ``(d - 1) * stride + dilated kernel``, padded by ``output_padding -
    pads_begin - pads_end`` (``dim::padded``); ``auto_pad`` same_upper/same_lower/valid pads nothing then."""

    value_inputs = value_ports((2, "output_shape", ""))

    type = "ConvolutionBackpropData"
    inputs = range(2, 4)
    version = "opset1"

    def __init__(self, opsets: range) -> None:
        self.enums = {"auto_pad": PAD_TYPE}
        self.opsets = opsets

    def shapes(self, ctx: LayerContext, inputs: list[PartialShape]) -> list[PartialShape]:
        layer = ctx.layer
        _same_data_and_filters_types(ctx)
        data, filters = inputs[0], inputs[1]
        has_spatial = len(inputs) >= 3
        spatial: PartialShape | None = None
        if has_spatial:
            if inputs[2].rank not in (None, 1):
                raise ShapeInferenceError("Input delivering output shape must have rank 1.")
            shape_value(ctx, 2)  # an output shape computed to a negative value: OpenVINO's refusal
            info = ctx.value(2)
            if info.kind == "const" and info.values is not None:
                values = [v - (1 << 64) if v >= 1 << 63 else v for v in info.values]
                spatial = PartialShape(tuple(const_dim(v) for v in values))
            elif inputs[2].is_static and inputs[2].dims:
                spatial = PartialShape.dynamic(inputs[2].dims[0].lo)
            else:
                spatial = PartialShape(None)
        n: int | None = None
        if data.dims is not None:
            n = len(data.dims) - 2
        elif filters.dims is not None:
            n = len(filters.dims) - 2
        elif spatial is not None and spatial.dims:
            n = len(spatial.dims)
        else:
            for name in ("strides", "dilations", "pads_begin", "pads_end", "output_padding"):
                attr = ints_attr(layer, name)
                if attr:
                    n = len(attr)
                    break
        if n is None:
            return [PartialShape(None)]
        if has_spatial and spatial is not None and spatial.dims is not None and len(spatial.dims) != n:
            raise ShapeInferenceError("Output shape should be defined for all and only spatial dimensions.")
        if data.rank is not None and filters.rank is not None and data.rank != filters.rank:
            raise ShapeInferenceError(
                f"Data batch and filters rank do not match (data batch shape: {data}, filters shape: {filters})."
            )
        if data.dims is not None and filters.dims is not None and not data.dims[1].compatible(filters.dims[0]):
            raise ShapeInferenceError(
                f"Data batch channel count ({data.dims[1]}) does not match filter input channel count "
                f"({filters.dims[0]})."
            )
        if data.dims is not None and len(data.dims) not in (3, 4, 5):
            raise ShapeInferenceError(f"Expected a 3D, 4D or 5D tensor for the input. Got: {data}")
        strides, dilations, pb, pe, out_pad = _spatial_attrs(
            layer, n, ("strides", "dilations", "pads_begin", "pads_end", "output_padding")
        )
        if 0 in strides:
            raise ShapeInferenceError(f"Strides has zero dimension(s). {list(strides)}")
        if 0 in dilations:
            raise ShapeInferenceError(f"Filter dilations has zero dimension(s). {list(dilations)}")
        out = [
            data.dims[0] if data.dims is not None else Dimension.dynamic(),
            filters.dims[1] if filters.dims is not None else Dimension.dynamic(),
        ]
        if has_spatial:
            assert spatial is not None
            if spatial.dims is None:
                return [PartialShape((*out, *(Dimension.dynamic() for _ in range(n))))]
            return [PartialShape((*out, *spatial.dims))]
        if str_attr(layer, "auto_pad", "explicit") in ("same_upper", "same_lower", "valid"):
            pb, pe = (0,) * n, (0,) * n
        d_dims = data.dims[2:] if data.dims is not None else PartialShape.dynamic(n).dims
        f_dims = filters.dims[2:] if filters.dims is not None else PartialShape.dynamic(n).dims
        assert d_dims is not None and f_dims is not None
        for i in range(n):
            dim = dim_mul(dim_sub(d_dims[i], _ONE), Dimension.static(strides[i]))
            dim = dim_add(dim, dilated(f_dims[i], dilations[i]))
            out.append(padded(dim, out_pad[i] - pb[i] - pe[i]))
        return [PartialShape(tuple(out))]
