"""A constant's type in an IR is "Const", as written: OpenVINO's reader translates only that name to its Constant, and
reads the values from the weights only for it. "Constant" (opset1's own name, in any case) is a Constant without data
to it, which it refuses where an op's shape inference reads the values (a reduction's axes: "ptr is Null") and reads
elsewhere; "const" in another case is no op. The reader refuses exactly what OpenVINO refuses (differential against
``read_model``), where ``check`` called such a model clean with the axes unresolved."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model
from ovreduce.errors import ElementTypeError, IRStructureError

from .irxml import edge, layer, net, parameter, port

_AXES = {"element_type": "i64", "shape": "1", "offset": "0", "size": "8"}


def _axes_of_a_reduction(ctype: str, version: str, *, reached: bool = True) -> str:
    """x[1,3] -> ReduceSum over the axes a layer of type ``ctype`` gives (to a Result, where ``reached``)."""
    layers = [
        parameter(0, "x", "1,3", dims=(1, 3)),
        layer(1, "axes", ctype, version=version, data=_AXES, outputs=[port(0, (1,), "I64")]),
        layer(
            2,
            "sum",
            "ReduceSum",
            data={"keep_dims": "false"},
            inputs=[port(0, (1, 3)), port(1, (1,), "I64")],
            outputs=[port(2, (1,))],
        ),
        layer(3, "relu", "ReLU", inputs=[port(0, (1, 3))], outputs=[port(1, (1, 3))]),
        layer(4, "out", "Result", inputs=[port(0, (1,) if reached else (1, 3))]),
    ]
    last = edge(2, 2, 4, 0) if reached else edge(3, 1, 4, 0)
    return net(layers, [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(0, 0, 3, 0), last])


def _added(ctype: str, version: str) -> str:
    """x[1,3] + (a layer of type ``ctype``), then ReduceSum over a Const's axes: the values are never read."""
    layers = [
        parameter(0, "x", "1,3", dims=(1, 3)),
        layer(
            1,
            "c",
            ctype,
            version=version,
            data={**_AXES, "element_type": "f32", "shape": "1,3", "size": "12", "offset": "8"},
            outputs=[port(0, (1, 3))],
        ),
        layer(2, "add", "Add", inputs=[port(0, (1, 3)), port(1, (1, 3))], outputs=[port(2, (1, 3))]),
        layer(3, "axes", "Const", data=_AXES, outputs=[port(0, (1,), "I64")]),
        layer(
            4,
            "sum",
            "ReduceSum",
            data={"keep_dims": "false"},
            inputs=[port(0, (1, 3)), port(1, (1,), "I64")],
            outputs=[port(2, (1,))],
        ),
        layer(5, "out", "Result", inputs=[port(0, (1,))]),
    ]
    return net(layers, [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 4, 0), edge(3, 0, 4, 1), edge(4, 2, 5, 0)])


def _openvino_refusal(xml: Path) -> str | None:
    try:
        ov.Core().read_model(str(xml))
    except RuntimeError as exc:
        return str(exc)
    return None


def _write(folder: Path, text: str) -> Path:
    xml = folder / "m.xml"
    xml.write_text(text)
    xml.with_suffix(".bin").write_bytes(struct.pack("<q", 1) + bytes(12))
    return xml


TYPES = ["Const", "Constant", "constant", "CONSTANT", "const", "CONST"]
VERSIONS = ["opset1", "opset5", "opset16", "opset17", "experimental"]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("ctype", TYPES)
@pytest.mark.parametrize("build", [_axes_of_a_reduction, _added], ids=["axes", "added"])
def test_the_reader_refuses_the_constants_openvino_refuses(
    tmp_path: Path, build: object, ctype: str, version: str
) -> None:
    assert callable(build)
    xml = _write(tmp_path, build(ctype, version))
    refused = _openvino_refusal(xml)
    if refused is None:
        model = load_ir(xml)
        assert check_model(model).ok
        return
    with pytest.raises(IRStructureError, match="OpenVINO refuses the model") as info:
        load_ir(xml)
    said = str(info.value)
    if ctype != "Const":
        assert "(the IR's name of the op)" in said or "as written" in said
    if "ptr is Null" in refused:
        assert f"layer id=1 name='axes' ({ctype})" in said and "layer id=2 name='sum' (ReduceSum)" in said
        assert '"ptr is Null"' in said and 'expected type="Const"' in said
    if "doesn't contain" in refused:
        assert f"Opset {version} doesn't contain the operation with type: {ctype}" in said


def test_a_constant_nothing_builds_is_no_refusal(tmp_path: Path) -> None:
    """OpenVINO builds only the layers before a Result: a reduction reaching none is not built, and the model reads."""
    xml = _write(tmp_path, _axes_of_a_reduction("Constant", "opset1", reached=False))
    assert _openvino_refusal(xml) is None
    load_ir(xml)


def test_check_refuses_the_model_with_the_layer_and_what_was_expected(tmp_path: Path) -> None:
    from ovreduce.check import check_paths

    xml = _write(tmp_path, _axes_of_a_reduction("Constant", "opset1"))
    assert "ptr is Null" in (_openvino_refusal(xml) or "")
    (checked,) = check_paths([xml]).models
    assert not checked.ok and checked.error is not None and checked.error.code == "ir.structure"
    line = next(n for n, text in enumerate(xml.read_text().splitlines(), 1) if 'name="axes"' in text)
    assert checked.error.line == line  # the Constant's own
    assert "layer id=1 name='axes' (Constant)" in checked.error.message
    assert 'expected type="Const"' in checked.error.message


def test_a_constant_in_a_body_is_refused_as_at_the_top(tmp_path: Path) -> None:
    """The then-body's axes typed "Constant": OpenVINO refuses the model as it validates the body ("ptr is Null")."""
    import re

    from .test_port_map_negative_ids import _if

    path = _if(tmp_path, None)
    head, then = path.read_text().split("<then_body>", 1)
    path.write_text(head + "<then_body>" + re.sub('type="Const"', 'type="Constant"', then, count=1))
    assert "ptr is Null" in (_openvino_refusal(path) or "")
    with pytest.raises(IRStructureError, match=r"\(ReduceSum\) reads its axes from it: OpenVINO refuses the model"):
        load_ir(path)


@pytest.mark.parametrize(
    ("build", "etype", "reached"),
    [
        *((_added, t, True) for t in ("f32", "F32", "FP32", "Fp32", "fp32", "float32")),
        *((_axes_of_a_reduction, t, True) for t in ("i64", "I64", "INT64", "int64", "iNT64")),
        (_added, "F32", False),
        (_axes_of_a_reduction, "I64", False),
    ],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", str(v)),
)
def test_a_constants_element_type_is_read_as_openvino_reads_it(
    tmp_path: Path, build: object, etype: str, reached: bool
) -> None:
    """A Const's ``<data>`` has ``size``, ``offset`` and ``element_type``, which OpenVINO's reader also parses as
    where its weights are (for a model cache without them), there with ``ov::element::Type``'s names (``f32``,
    ``FP32``, not ``F32``), where the Const's own attribute takes a type's name in any case (``F32``, not ``FP32``):
    the reader refuses a Const's type exactly where OpenVINO refuses the model, which it builds only where a Result
    reaches it."""
    assert callable(build)
    text = build("Const", "opset1") if build is _added else build("Const", "opset1", reached=reached)
    name = "c" if build is _added else "axes"
    own = re.compile(rf'(<layer id="\d+" name="{name}" type="Const"[^>]*>\s*<data [^>]*element_type=")[^"]*"')
    text, count = own.subn(lambda found: f'{found[1]}{etype}"', text)
    assert count == 1
    if not reached and build is _added:  # the Add's output reaches no Result: the sum reads x itself
        text = text.replace('from-layer="2" from-port="2" to-layer="4"', 'from-layer="0" from-port="0" to-layer="4"')
    xml = _write(tmp_path, text)
    refused = _openvino_refusal(xml)
    if refused is None:
        assert check_model(load_ir(xml)).ok
        return
    with pytest.raises(ElementTypeError, match=r"OpenVINO refuses the model|unknown element type") as info:
        load_ir(xml)
    if "Unsupported element type" in refused:
        assert f"Unsupported element type: {etype}" in str(info.value)
