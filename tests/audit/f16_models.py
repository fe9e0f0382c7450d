"""Models for the target-precision tests (``audit --target f16|bf16``), made from committed IRs.

* :func:`loud_llama`: the tiny INT4 llama of ``tests/exports/llama_int4`` with its embedding table scaled
  (the f16 scale of its INT8 weights multiplied), so that the first RMSNorm's input exceeds 256 and its
  ``Power(x, 2)`` overflows f16 (65504), while bf16 (f32's range) holds it.
* :func:`mark_kept`: a copy of an IR whose named layers carry OpenVINO's mark to keep them in the original
  precision (rt_info ``precise``, as OpenVINO saves ``disable_fp16_compression``), as a model saved after
  OpenVINO's mixed-precision marking carries them.

Run ``python -m tests.audit.f16_models DIR`` to write both variants of the llama to DIR.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import openvino as ov
from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "tests" / "exports" / "llama_int4" / "openvino_model.xml"
EMBEDDING_SCALE = "self.model.embed_tokens.weight/fq_weights_0"  # Multiply(weights - zero point, f16 scale)
FIRST_NORM = "__module.model.layers.0.input_layernorm"
NORMS = (
    "__module.model.layers.0.input_layernorm",
    "__module.model.layers.0.post_attention_layernorm",
    "__module.model.layers.1.input_layernorm",
    "__module.model.layers.1.post_attention_layernorm",
    "__module.model.norm",
)


def loud_llama(path: Path, factor: float = 8000.0) -> Path:
    """The tiny llama with its embedding ``factor`` times larger, saved at ``path`` (.xml, .bin beside it)."""
    model = ov.Core().read_model(LLAMA)
    scale = next(op for op in model.get_ordered_ops() if op.get_friendly_name() == EMBEDDING_SCALE)
    port = next(
        i for i in range(scale.get_input_size()) if scale.input_value(i).get_node().get_type_name() == "Constant"
    )
    old = scale.input_value(port).get_node()
    values = np.array(old.get_data(), copy=True).astype(np.float32) * factor
    new = ov.op.Constant(values.astype(np.float16))
    new.set_friendly_name(old.get_friendly_name())
    scale.input(port).replace_source_output(new.output(0))
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def mark_kept(source: Path, target: Path, prefixes: Iterable[str]) -> Path:
    """A copy of the IR ``source`` at ``target`` whose layers named with one of ``prefixes`` carry the mark to
    keep them in the original precision; the weights are copied beside it."""
    tree = etree.parse(str(source))
    wanted = tuple(prefixes)
    marked = 0
    for layer in tree.getroot().iter("layer"):
        if not str(layer.get("name", "")).startswith(wanted):
            continue
        info = layer.find("rt_info")
        if info is None:
            info = etree.Element("rt_info")
            data = layer.find("data")
            layer.insert(0 if data is None else list(layer).index(data) + 1, info)
        etree.SubElement(info, "attribute", name="precise", version="0")
        marked += 1
    if not marked:
        raise ValueError(f"no layer of {source} is named with {wanted}")
    tree.write(str(target), xml_declaration=True, encoding="utf-8")
    target.with_suffix(".bin").write_bytes(source.with_suffix(".bin").read_bytes())
    return target


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    loud = loud_llama(out / "loud_llama.xml")
    mark_kept(loud, out / "loud_llama_marked.xml", [f"{norm}/" for norm in NORMS])
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
