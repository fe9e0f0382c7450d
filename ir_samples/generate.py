"""Regenerate every sample IR in this folder with OpenVINO's own ``save_model``.

    python ir_samples/generate.py

Good samples (written by OpenVINO, so their declared dims are OpenVINO's truth):

* ``spec_examples.xml``   the four ReduceMean examples of the OpenVINO ReduceMean-1 specification
* ``all_reductions.xml``  every member of the Reduce* family, with scalar/negative/duplicate/empty axes
* ``dynamic.xml``         dynamic and interval dims, and a dynamic-rank input
* ``runtime_axes.xml``    axes that come from a Parameter, so they are only known at run time
* ``rmsnorm.xml``         an RMSNorm block (x / sqrt(mean(x^2) + eps) * gamma), fp16-compressed weights
* ``convert_axes.xml``    axes through a Const -> Convert chain, and a chain of reductions
* ``rmsnorm_f16.xml``     two RMSNorms of activations scaled by 300: ``exposed/`` squares them past f16's 65504,
                          ``kept/`` is the same block marked to stay in f32 (rt_info ``precise``, as OpenVINO
                          saves its ``disable_fp16_compression`` mark): ``ovreduce audit --target f16``

``broken/`` holds copies edited by hand (by :func:`break_samples`), one per finding ovreduce reports.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import openvino as ov
from lxml import etree
from openvino import opset13 as ops

HERE = Path(__file__).resolve().parent


def _axes(values: list[int], dtype: type = np.int64) -> ov.Node:
    return ops.constant(np.array(values, dtype=dtype))


def _named(node: ov.Node, name: str) -> ov.Node:
    node.set_friendly_name(name)
    node.output(0).get_tensor().set_names({name})
    return node


def spec_examples() -> ov.Model:
    x = ops.parameter([6, 12, 10, 24], ov.Type.f32, name="data")
    outs = [
        _named(ops.reduce_mean(x, _axes([2, 3]), True), "mean_hw_keep"),
        _named(ops.reduce_mean(x, _axes([2, 3]), False), "mean_hw"),
        _named(ops.reduce_mean(x, _axes([1]), False), "mean_channels"),
        _named(ops.reduce_mean(x, _axes([-2]), False), "mean_minus2"),
    ]
    return ov.Model(outs, [x], "reduce_mean_spec_examples")


def all_reductions() -> ov.Model:
    x = ops.parameter([2, 3, 4, 5], ov.Type.f32, name="x")
    b = ops.parameter([2, 3, 4], ov.Type.boolean, name="mask")
    outs = [
        _named(ops.reduce_mean(x, _axes([-1]), True), "mean_last"),
        _named(ops.reduce_sum(x, ops.constant(np.int64(1)), False), "sum_scalar_axis"),
        _named(ops.reduce_max(x, _axes([0, -4]), False), "max_duplicate_axes"),
        _named(ops.reduce_min(x, _axes([], np.int64), True), "min_empty_axes"),
        _named(ops.reduce_prod(x, _axes([1, 2], np.int32), True), "prod_i32_axes"),
        _named(ops.reduce_l1(x, _axes([0, 1, 2, 3]), False), "l1_all"),
        _named(ops.reduce_l2(x, _axes([3]), True), "l2_last"),
        _named(ops.reduce_logical_and(b, _axes([2]), False), "all_last"),
        _named(ops.reduce_logical_or(b, _axes([0]), True), "any_first"),
    ]
    return ov.Model(outs, [x, b], "all_reductions")


def dynamic() -> ov.Model:
    x = ops.parameter(ov.PartialShape("[?,3..8,16,1..]"), ov.Type.f32, name="x")
    y = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f16, name="y")
    outs = [
        _named(ops.reduce_mean(x, _axes([2]), False), "mean_static_dim"),
        _named(ops.reduce_mean(x, _axes([1, 3]), True), "mean_interval_dims"),
        _named(ops.reduce_sum(y, _axes([0]), True), "sum_dynamic_rank"),
    ]
    return ov.Model(outs, [x, y], "dynamic_shapes")


def runtime_axes() -> ov.Model:
    x = ops.parameter([4, 6, 8], ov.Type.f32, name="x")
    one = ops.parameter([1], ov.Type.i64, name="axis")
    many = ops.parameter([2], ov.Type.i64, name="axes")
    outs = [
        _named(ops.reduce_mean(x, one, False), "mean_one_runtime_axis"),
        _named(ops.reduce_mean(x, many, False), "mean_two_runtime_axes"),
        _named(ops.reduce_mean(x, many, True), "mean_runtime_axes_keep"),
    ]
    return ov.Model(outs, [x, one, many], "runtime_axes")


def rmsnorm() -> ov.Model:
    hidden = 64
    x = ops.parameter(ov.PartialShape(f"[1,?,{hidden}]"), ov.Type.f32, name="hidden_states")
    square = ops.power(x, ops.constant(np.float32(2.0)))
    mean = _named(ops.reduce_mean(square, _axes([-1]), True), "rmsnorm/variance")
    eps = ops.add(mean, ops.constant(np.float32(1e-6)))
    norm = ops.divide(x, ops.sqrt(eps))
    gamma = ops.constant(np.linspace(0.5, 1.5, hidden, dtype=np.float32).reshape(1, 1, hidden))
    out = _named(ops.multiply(norm, gamma), "rmsnorm/output")
    return ov.Model([out], [x], "rmsnorm_block")


def convert_axes() -> ov.Model:
    x = ops.parameter([8, 16, 32], ov.Type.f32, name="x")
    axes = ops.convert(ops.constant(np.array([2], np.int32)), ov.Type.i64)
    first = _named(ops.reduce_sum(x, axes, False), "sum_convert_axes")
    second = _named(ops.reduce_max(first, _axes([-1]), True), "max_of_sum")
    third = _named(ops.reduce_mean(second, _axes([0]), False), "mean_of_max")
    return ov.Model([third], [x], "convert_axes_chain")


def rmsnorm_f16() -> ov.Model:
    hidden = 64
    x = ops.parameter([1, 8, hidden], ov.Type.f32, name="hidden_states")
    loud = _named(ops.multiply(x, ops.constant(np.float32(300.0))), "activations")

    def block(prefix: str) -> ov.Node:
        square = _named(ops.power(loud, ops.constant(np.float32(2.0))), f"{prefix}/square")
        mean = _named(ops.reduce_mean(square, _axes([-1]), True), f"{prefix}/variance")
        eps = _named(ops.add(mean, ops.constant(np.float32(1e-6))), f"{prefix}/add_eps")
        root = _named(ops.sqrt(eps), f"{prefix}/sqrt")
        return _named(ops.divide(loud, root), f"{prefix}/output")

    return ov.Model([block("exposed"), block("kept")], [x], "rmsnorm_f16")


# Layers (by name prefix) of a sample that carry OpenVINO's mark to keep them in the original precision
KEPT: dict[str, str] = {"rmsnorm_f16": "kept/"}


def _mark_kept(xml: Path, prefix: str) -> None:
    """Add the ``precise`` rt_info attribute (OpenVINO's saved ``disable_fp16_compression``) to the layers of
    ``xml`` named with ``prefix``, written where and as OpenVINO's serializer writes a layer's rt_info (after its
    ``<data>``): the Python API cannot set it, and OpenVINO reads it back."""
    layer = re.compile(
        r'(?m)^(\t+)<layer id="[0-9]+" name="' + re.escape(prefix) + r'[^"]*"[^>]*>\n(?:\1\t<data [^>]*>\n)?'
    )

    def mark(found: re.Match[str]) -> str:
        indent = found[1] + "\t"
        return f'{found[0]}{indent}<rt_info>\n{indent}\t<attribute name="precise" version="0" />\n{indent}</rt_info>\n'

    text, marked = layer.subn(mark, xml.read_text(encoding="utf-8"))
    assert marked, f"no layer of {xml} is named {prefix}..."
    xml.write_text(text, encoding="utf-8")


GOOD: dict[str, tuple[Callable[[], ov.Model], bool]] = {
    "spec_examples": (spec_examples, False),
    "all_reductions": (all_reductions, False),
    "dynamic": (dynamic, False),
    "runtime_axes": (runtime_axes, False),
    "rmsnorm": (rmsnorm, True),
    "convert_axes": (convert_axes, False),
    "rmsnorm_f16": (rmsnorm_f16, False),
}


# -- hand-broken copies ------------------------------------------------------------------------------------
def _layer(root: etree._Element, name: str) -> etree._Element:
    found = root.find(f".//layers/layer[@name='{name}']")
    assert found is not None, name
    return found


def _stale_output(root: etree._Element) -> None:
    """reduce-output-mismatch (+ the edge to the Result): declared [6,12,1] for an inferred [6,12,1,1]."""
    for layer in (_layer(root, "mean_hw_keep"), root.find(".//layers/layer[@type='Result']")):
        assert layer is not None
        port = layer.find("output/port") if layer.get("type") != "Result" else layer.find("input/port")
        assert port is not None
        port.remove(port.findall("dim")[-1])


def _keep_dims_yes(root: etree._Element) -> None:
    """bool-attr-invalid: keep_dims="yes" is read as false, so the declared [6,12,1,1] is stale too."""
    data = _layer(root, "mean_hw_keep").find("data")
    assert data is not None
    data.set("keep_dims", "yes")


def _missing_keep_dims(root: etree._Element) -> None:
    """keep-dims-missing (info only): OpenVINO defaults to false, which this layer already declares."""
    data = _layer(root, "mean_hw").find("data")
    assert data is not None
    del data.attrib["keep_dims"]


def _edge_dims(root: etree._Element) -> None:
    """edge-dims-mismatch: the reduction's data port declares 13 channels, the Parameter 12."""
    dims = _layer(root, "mean_channels").findall("input/port/dim")
    dims[1].text = "13"


def _precision(root: etree._Element) -> None:
    """edge-precision-mismatch and precision-mismatch: an f32 reduction that declares f16 ports."""
    layer = _layer(root, "mean_minus2")
    for port in layer.findall("input/port")[:1] + layer.findall("output/port"):
        port.set("precision", "FP16")


def _parameter_shape(root: etree._Element) -> None:
    """parameter-shape-mismatch: the shape attribute says 6x12x10x20, the port dims 6x12x10x24."""
    data = _layer(root, "data").find("data")
    assert data is not None
    data.set("shape", "6,12,10,20")


def _axis_out_of_range(root: etree._Element) -> None:
    """reduce-invalid: the axes Const of 'mean_channels' points at a second Const holding [7]."""
    axes_edge = root.find(".//edges/edge[@to-layer='{}'][@to-port='1']".format(_layer(root, "mean_channels").get("id")))
    assert axes_edge is not None
    const = root.find(".//layers/layer[@id='{}']".format(axes_edge.get("from-layer")))
    assert const is not None
    data = const.find("data")
    assert data is not None
    data.set("offset", str(_SEVEN_OFFSET))


_SEVEN_OFFSET = -1  # set by break_samples: where the extra int64 7 lies in the copied .bin

BROKEN: dict[str, tuple[str, Callable[[etree._Element], None]]] = {
    "stale_output": ("spec_examples", _stale_output),
    "keep_dims_yes": ("spec_examples", _keep_dims_yes),
    "missing_keep_dims": ("spec_examples", _missing_keep_dims),
    "edge_dims": ("spec_examples", _edge_dims),
    "precision": ("spec_examples", _precision),
    "parameter_shape": ("spec_examples", _parameter_shape),
    "axis_out_of_range": ("spec_examples", _axis_out_of_range),
}


def break_samples(out_dir: Path) -> None:
    global _SEVEN_OFFSET
    broken = out_dir / "broken"
    shutil.rmtree(broken, ignore_errors=True)
    broken.mkdir()
    for name, (source, edit) in BROKEN.items():
        tree = etree.parse(str(out_dir / f"{source}.xml"))
        weights = (out_dir / f"{source}.bin").read_bytes()
        if name == "axis_out_of_range":
            _SEVEN_OFFSET = len(weights)
            weights += np.array([7], np.int64).tobytes()
        edit(tree.getroot())
        tree.write(str(broken / f"{name}.xml"), xml_declaration=True, encoding="utf-8")
        (broken / f"{name}.bin").write_bytes(weights)
    print(f"wrote {len(BROKEN)} broken samples to {broken}")


def main(out_dir: Path = HERE) -> None:
    for name, (build, compress) in GOOD.items():
        ov.save_model(build(), str(out_dir / f"{name}.xml"), compress_to_fp16=compress)
        if name in KEPT:
            _mark_kept(out_dir / f"{name}.xml", KEPT[name])
    print(f"wrote {len(GOOD)} samples to {out_dir}")
    break_samples(out_dir)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
