"""Models that need an OpenVINO extension: a hand-written IR with an op of no opset, the tokenizer IR of a committed
export, and a fresh interpreter in which openvino-tokenizers cannot be imported (where it is not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "tests" / "exports" / "llama_int4"
TOKENIZER_IR = LLAMA / "openvino_tokenizer.xml"
# the extension ops of the llama export's tokenizer IR (layers of version="extension"; StringTensorUnpack and
# StringTensorPack are opset15's)
TOKENIZER_IR_OPS = ["BPETokenizer", "CombineSegments", "RaggedToDense", "RegexSplit", "SpecialTokensSplit", "Truncate"]

# As if openvino-tokenizers were not installed: its import fails and importlib finds no such module.
WITHOUT_TOKENIZERS = "import sys; sys.modules['openvino_tokenizers'] = None\n"


def unknown_op_ir(op_type: str = "Frobnicate", version: str = "extension") -> str:
    """x[2,3] f32 -> ``op_type`` of ``version`` -> ReduceSum over axis 1 -> Result: OpenVINO knows the op only
    from an extension."""
    port = '<port id="{id}" precision="FP32"><dim>2</dim><dim>3</dim></port>'
    return f"""<?xml version="1.0"?>
<net name="needs_an_extension" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2,3" element_type="f32"/>
      <output>{port.format(id=0)}</output>
    </layer>
    <layer id="1" name="custom" type="{op_type}" version="{version}">
      <input>{port.format(id=0)}</input>
      <output>{port.format(id=1)}</output>
    </layer>
    <layer id="2" name="axes" type="Const" version="opset1">
      <data element_type="i64" shape="1" offset="0" size="8"/>
      <output><port id="0" precision="I64"><dim>1</dim></port></output>
    </layer>
    <layer id="3" name="sum" type="ReduceSum" version="opset1">
      <data keep_dims="false"/>
      <input>{port.format(id=0)}<port id="1" precision="I64"><dim>1</dim></port></input>
      <output><port id="2" precision="FP32"><dim>2</dim></port></output>
    </layer>
    <layer id="4" name="out" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="3" to-port="0"/>
    <edge from-layer="2" from-port="0" to-layer="3" to-port="1"/>
    <edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
  </edges>
</net>
"""


def save_unknown_op_ir(folder: Path, op_type: str = "Frobnicate", version: str = "extension") -> Path:
    """:func:`unknown_op_ir` as ``folder/<op_type>.xml`` with its ``.bin`` (the axes, ``[1]``)."""
    path = folder / f"{op_type}.xml"
    path.write_text(unknown_op_ir(op_type, version))
    path.with_suffix(".bin").write_bytes((1).to_bytes(8, "little"))
    return path


def python(code: str, *, without_tokenizers: bool = True) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter at the repository's root (openvino-tokenizers hidden unless told)."""
    prefix = WITHOUT_TOKENIZERS if without_tokenizers else ""
    return subprocess.run(
        [sys.executable, "-c", prefix + code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
