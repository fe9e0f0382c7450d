"""An IR's ``<pre-process>`` (Model Optimizer's mean values): OpenVINO's reader applies it in every IR version,
refusing a block whose means do not fit the input (blobs past the ``.bin`` or of the wrong size, a reference to no
input, too few channels, a channel id out of range, a dynamic input...) and inserting a Subtract after the input
otherwise. ovreduce never looked at it: ``check`` called OK files OpenVINO refuses, and said nothing of the Subtract.
Differential against ``read_model``: ovreduce refuses what OpenVINO refuses, in its words, and notes the Subtract
where OpenVINO inserts one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from ovreduce import load_ir
from ovreduce.check import check_model
from ovreduce.errors import IRError

_BLOBS = """<channel id="0"><mean offset="8" size="16"/></channel>
        <channel id="1"><mean offset="24" size="16"/></channel>
        <channel id="2"><mean offset="40" size="16"/></channel>"""
_SCALARS = (
    '<channel id="0"><mean value="1.5"/></channel><channel id="1"><mean value="2"/></channel>'
    '<channel id="2"><mean value="3"/></channel>'
)
_BASE = f"""<?xml version="1.0" ?>
<net name="Network" version="10">
    <pre-process mean-precision="FP32" reference-layer-name="input">
        {_BLOBS}
    </pre-process>
    <layers>
        <layer name="input" type="Parameter" id="0" version="opset1">
            <data shape="1,3,2,2" element_type="f32"/>
            <output><port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim></port></output>
        </layer>
        <layer id="1" name="axes" type="Const" version="opset1">
            <data element_type="i64" shape="1" offset="0" size="8"/>
            <output><port id="0" precision="I64"><dim>1</dim></port></output>
        </layer>
        <layer id="2" name="red" type="ReduceMean" version="opset1"><data keep_dims="false"/>
            <input><port id="0" precision="FP32"><dim>1</dim><dim>3</dim><dim>2</dim><dim>2</dim></port>
            <port id="1" precision="I64"><dim>1</dim></port></input>
            <output><port id="2" precision="FP32"><dim>1</dim><dim>2</dim><dim>2</dim></port></output>
        </layer>
        <layer name="output" type="Result" id="3" version="opset1">
            <input><port id="0" precision="FP32"><dim>1</dim><dim>2</dim><dim>2</dim></port></input>
        </layer>
    </layers>
    <edges>
        <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
        <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
        <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
    </edges>
</net>
"""
_BIN = np.array([1], np.int64).tobytes() + np.full(12, 100.0, np.float32).tobytes()
_V11 = ('version="10"', 'version="11"')

CASES: dict[str, list[tuple[str, str]]] = {
    "valid blobs": [],
    "valid values": [(_BLOBS, _SCALARS)],
    "valid, in an IR v11": [_V11],
    "channel ids left out": [(f'<channel id="{i}">', "<channel>") for i in range(3)],
    "a blank reference-layer-name (the rank-4 input)": [('reference-layer-name="input"', 'reference-layer-name=" "')],
    "a reference-layer-name with blanks around": [('reference-layer-name="input"', 'reference-layer-name=" input "')],
    "no reference-layer-name": [('reference-layer-name="input"', "")],
    "one channel's value twice": [(_BLOBS, _SCALARS.replace('<channel id="2">', '<channel id="1">'))],
    "an unknown mean-precision (not read)": [('mean-precision="FP32"', 'mean-precision="XYZ"')],
    "a second <pre-process> (not read)": [("</pre-process>", '</pre-process><pre-process reference-layer-name="x"/>')],
    "a block without means": [(_BLOBS, "")],
    "an i32 input (4-byte blobs)": [('element_type="f32"', 'element_type="i32"')],
    # refused
    "mean values past the .bin": [('offset="40" size="16"', 'offset="48" size="16"')],
    "a mean blob of the wrong size": [('offset="40" size="16"', 'offset="40" size="8"')],
    "an f16 input (its blobs of 8 bytes)": [('element_type="f32"', 'element_type="f16"')],
    "a reference-layer-name of no input": [('reference-layer-name="input"', 'reference-layer-name="nope"')],
    "a reference-layer-name of a Const": [('reference-layer-name="input"', 'reference-layer-name="axes"')],
    "two channels' means for three channels": [('<channel id="2"><mean offset="40" size="16"/></channel>', "")],
    "a channel without a mean": [('<channel id="2"><mean offset="40" size="16"/></channel>', '<channel id="2"/>')],
    "a channel id out of range": [('<channel id="2">', '<channel id="5">')],
    "a channel id not a number": [('<channel id="1">', '<channel id="1x">')],
    "a negative channel id": [('<channel id="1">', '<channel id="-1">')],
    "a mean without value or size": [('<mean offset="40" size="16"/>', "<mean/>")],
    "a mean of a size without an offset": [('<mean offset="40" size="16"/>', '<mean size="16"/>')],
    "values and blobs mixed": [('<mean offset="40" size="16"/>', '<mean value="1"/>')],
    "a value not a number": [(_BLOBS, _SCALARS.replace('"2"', '"2x"'))],
    "a dynamic input, in an IR v11": [_V11, ('shape="1,3,2,2"', 'shape="1,3,?,2"')],
    "an input of rank 6": [('shape="1,3,2,2"', 'shape="1,3,2,2,1,1"')],
}
for _type, _size in [("boolean", 4), ("string", 128), ("u1", 1), ("i4", 1), ("f8e4m3", 4), ("dynamic", 0)]:
    _sized = [(f'offset="{o}" size="16"', f'offset="{o}" size="{_size}"') for o in (8, 24, 40)]
    CASES[f"values for a {_type} input"] = [(_BLOBS, _SCALARS), ('element_type="f32"', f'element_type="{_type}"')]
    CASES[f"blobs for a {_type} input"] = [*_sized, ('element_type="f32"', f'element_type="{_type}"')]

_OPENVINO = r"""
import sys, openvino as ov
try:
    m = ov.Core().read_model(sys.argv[1])
    print("READS", sum(op.get_type_name() == "Subtract" for op in m.get_ordered_ops()))
except Exception as e:
    print("REFUSES", str(e).strip().splitlines()[-1])
"""


def _write(folder: Path, subs: list[tuple[str, str]]) -> Path:
    text = _BASE
    for old, new in subs:
        assert old in text, old
        text = text.replace(old, new)
    xml = folder / "model.xml"
    xml.write_text(text)
    xml.with_suffix(".bin").write_bytes(_BIN)
    return xml


def _openvino(xml: Path) -> tuple[bool, str]:
    try:
        model = ov.Core().read_model(str(xml))
    except RuntimeError as exc:
        return False, re.sub(r" at offset \d+$", "", str(exc).strip().splitlines()[-1])
    return True, str(sum(op.get_type_name() == "Subtract" for op in model.get_ordered_ops()))


@pytest.mark.parametrize("case", list(CASES))
def test_the_block_is_read_and_refused_as_openvino_reads_it(tmp_path: Path, case: str) -> None:
    xml = _write(tmp_path, CASES[case])
    reads, said = _openvino(xml)
    if not reads:
        with pytest.raises(IRError) as info:
            load_ir(xml)
        assert "<pre-process>" in str(info.value) and "OpenVINO refuses the model" in str(info.value)
        # (std::stoll's own word, for an id of no digits; OpenVINO builds the layers before it reads the block, and
        # the ReduceMean refuses a boolean input first)
        if said != "stoll" and "must be numeric" not in said:
            assert said in str(info.value), (said, str(info.value))
        return
    checked = check_model(load_ir(xml))
    assert checked.ok, checked.findings
    noted = [n for n in checked.notes if n.startswith("<pre-process>")]
    assert len(noted) == int(said), (said, checked.notes)  # a note where OpenVINO inserts its Subtract
    if noted:
        assert "OpenVINO subtracts mean values" in noted[0] and "from input 'input'" in noted[0], noted


def test_two_blobs_for_one_channel_crash_openvino_and_are_refused(tmp_path: Path) -> None:
    """Channels 0, 1, 1: three blobs for three channels, none for channel 2, a null input to the Concat OpenVINO
    builds of them: its reader crashes (run in a child process)."""
    xml = _write(tmp_path, [('<channel id="2">', '<channel id="1">')])
    child = subprocess.run([sys.executable, "-c", _OPENVINO, str(xml)], capture_output=True, text=True, timeout=120)
    assert child.returncode < 0 or child.stdout.startswith("REFUSES"), (child.returncode, child.stdout)
    with pytest.raises(IRError, match="two mean blobs for channel 1 and none for channel 2: OpenVINO's reader crashes"):
        load_ir(xml)
