"""MaxPool-1/8/14 and AvgPool-1/14 against the installed OpenVINO's reader: random data shapes (static, zero-sized,
interval and dynamic spatial dims, a dynamic rank), kernels, strides, dilations, pads, ``auto_pad`` modes and rounding
types (``ceil_torch`` over an interval dim above all), each written as an IR. ovreduce must infer the shape
``read_model`` infers, and refuse the models it refuses."""

from __future__ import annotations

import random
from pathlib import Path

import openvino as ov
import pytest

from .test_reshape_differential import read_both

SPATIAL = [0, 1, 2, 3, 4, 5, 7, 9, "?", "0..1", "0..4", "1..3", "2..3", "5..9", "3..", "1..12", "4..6"]
OPS = [("MaxPool", "opset1"), ("MaxPool", "opset8"), ("MaxPool", "opset14"), ("AvgPool", "opset1"),
       ("AvgPool", "opset14")]  # fmt: skip
ROUNDING = ["floor", "ceil", "ceil_torch", "ceil_torch"]
AUTO_PAD = ["explicit", "explicit", "valid", "same_upper", "same_lower", "notset"]


def _dims(shape: list[int | str] | None) -> str:
    return "".join(f"<dim>{-1 if not isinstance(d, int) else d}</dim>" for d in shape or ())


def _write(folder: Path, shape: list[int | str] | None, op: tuple[str, str], attrs: dict[str, str]) -> Path:
    """An IR of a Parameter of ``shape`` (None: a dynamic rank) and one pooling layer named ``op`` (MaxPool-8 and
    -14 give the indices too)."""
    outputs = 2 if op in (("MaxPool", "opset8"), ("MaxPool", "opset14")) else 1
    text = "..." if shape is None else ",".join(map(str, shape))
    data = " ".join(f'{name}="{value}"' for name, value in attrs.items())
    ports = "".join(f'<port id="{1 + i}" precision="{"I64" if i else "FP32"}"/>' for i in range(outputs))
    results = "".join(f'<layer id="{2 + i}" name="out{i}" type="Result" version="opset1"><input><port id="0"/>'
                      f'</input></layer>' for i in range(outputs))  # fmt: skip
    edges = "".join(f'<edge from-layer="1" from-port="{1 + i}" to-layer="{2 + i}" to-port="0"/>'
                    for i in range(outputs))  # fmt: skip
    (folder / "m.xml").write_text(f"""<?xml version="1.0"?>
<net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="{text}" element_type="f32"/>
<output><port id="0" precision="FP32" names="x">{_dims(shape)}</port></output></layer>
<layer id="1" name="op" type="{op[0]}" version="{op[1]}"><data {data}/><input><port id="0">{_dims(shape)}</port>
</input><output>{ports}</output></layer>{results}
</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>{edges}</edges></net>""")
    return folder / "m.xml"


def _attrs(rng: random.Random, op: tuple[str, str], n: int) -> dict[str, str]:
    def ints(low: int, high: int) -> str:
        return ",".join(str(rng.randint(low, high)) for _ in range(n))

    attrs = {"kernel": ints(1, 4), "strides": ints(1, 4), "pads_begin": ints(0, 3), "pads_end": ints(0, 3),
             "auto_pad": rng.choice(AUTO_PAD), "rounding_type": rng.choice(ROUNDING)}  # fmt: skip
    if op[0] == "MaxPool" and op[1] != "opset1":
        attrs["dilations"] = ints(1, 3)
    if op[0] == "AvgPool":
        attrs["exclude-pad"] = rng.choice(["true", "false"])
    return attrs


# ceil_torch over an interval: each bound's last window dropped where it starts in the padding; the last, an upper
# bound dropped below the lower, is OpenVINO's empty interval, which it reads back as a dynamic dim
CEIL_TORCH = [
    (("MaxPool", "opset14"), [3, 2, "5..9"], {"strides": "3", "dilations": "3", "pads_end": "2", "kernel": "2"}),
    (("MaxPool", "opset14"), [3, 2, "2..3"], {"strides": "2", "kernel": "1", "auto_pad": "valid"}),
    (("AvgPool", "opset14"), [3, 2, "5..9"], {"strides": "3", "pads_end": "1", "kernel": "2", "exclude-pad": "false"}),
    (("MaxPool", "opset14"), [1, 1, "0..1"], {"strides": "4", "pads_end": "3", "kernel": "1"}),
]


@pytest.mark.parametrize(("op", "shape", "attrs"), CEIL_TORCH, ids=[f"{c[0][0]}-{c[1][2]}" for c in CEIL_TORCH])
def test_ceil_torch_over_an_interval_is_openvinos(
    op: tuple[str, str], shape: list[int | str], attrs: dict[str, str], tmp_path: Path
) -> None:
    attrs = {"pads_begin": "0", "pads_end": "0", "rounding_type": "ceil_torch", **attrs}
    expected, state = read_both(ov.Core(), _write(tmp_path, shape, op, attrs))
    assert expected is not None and not expected.is_static
    assert state.shape == expected


@pytest.mark.parametrize("seed", range(4))
def test_a_pooling_shape_is_openvinos(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    core = ov.Core()
    wrong, refused, intervals = [], 0, 0
    for case in range(250):
        op = rng.choice(OPS)
        n = rng.randint(1, 3)
        dims: list[int | str] = [rng.choice([1, 2, "?"]), rng.choice([1, 3, "?"])]
        dims += [rng.choice(SPATIAL) for _ in range(n)]
        shape = None if rng.random() < 0.05 else dims
        attrs = _attrs(rng, op, n)
        folder = tmp_path / str(case)
        folder.mkdir()
        expected, state = read_both(core, _write(folder, shape, op, attrs))
        refused += expected is None
        intervals += attrs["rounding_type"] == "ceil_torch" and any(isinstance(d, str) for d in dims[2:])
        if state.shape != expected:
            wrong.append(f"{op} {shape} {attrs}: ovreduce {state.shape} {state.reason}, OpenVINO {expected}")
    assert refused >= 1 and intervals >= 25, (refused, intervals)
    assert wrong == [], "\n".join(wrong)
