"""Files that are not what they claim: devices, FIFOs, weights that shrink while in use, empty weights,
Unicode digits where OpenVINO reads ASCII. Each gets a precise error, never a hang, a crash or a read
without end. Every case runs in a subprocess under an address-space limit and a timeout, as an attacker's
file would meet the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ovreduce.errors import IRStructureError, WeightsError
from ovreduce.ir.parser import load_ir, parse_ir

SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples"
ALL = SAMPLES / "all_reductions.xml"


def _cli(*args: str, memory: int = 2 << 30, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``ovreduce ARGS`` in a child limited to ``memory`` bytes of address space."""
    limit = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))"
    code = f"{limit}; import sys; from ovreduce.cli import main; sys.exit(main({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_xml_is_refused_without_reading_it(device: str) -> None:
    done = _cli("check", device, memory=1 << 30, timeout=30)
    assert done.returncode == 2, done
    assert f"cannot read {device}: it is a device, expected an IR .xml file" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_fifo_as_the_xml_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "model.xml"
    os.mkfifo(fifo)
    done = _cli("check", str(fifo), timeout=30)
    assert done.returncode == 2, done
    assert "it is a FIFO, expected an IR .xml file" in done.stdout


def test_a_device_as_the_weights_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="cannot read weights file /dev/zero: it is a device"):
        load_ir(ALL, "/dev/zero")


def test_weights_truncated_while_in_use_are_an_error_not_sigbus(tmp_path: Path) -> None:
    """A mapped .bin cut short kills the process with SIGBUS on the next access past its end; ovreduce reads
    with pread, so a shrunken file is a short read and a precise error."""
    xml, weights = tmp_path / "m.xml", tmp_path / "m.bin"
    xml.write_bytes(ALL.read_bytes())
    weights.write_bytes((SAMPLES / "all_reductions.bin").read_bytes())
    model = load_ir(xml)
    try:
        assert model.weights is not None
        os.truncate(weights, 0)
        with pytest.raises(WeightsError, match="shorter than when it was opened"):
            model.weights.view()
    finally:
        model.close()


def test_an_empty_bin_for_a_model_with_consts_says_where(tmp_path: Path) -> None:
    xml = tmp_path / "m.xml"
    xml.write_bytes(ALL.read_bytes())
    (tmp_path / "m.bin").write_bytes(b"")
    done = _cli("check", str(xml))
    assert done.returncode == 2, done
    assert "lies outside" in done.stdout and "(0 bytes)" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(("target", "reason"), [("m.bin", "Too many levels of symbolic links"),
                                              ("elsewhere.bin", "No such file or directory")])  # fmt: skip
def test_a_bin_link_that_leads_nowhere_is_named_with_why(tmp_path: Path, target: str, reason: str) -> None:
    """OpenVINO reads such a model as one without weights; the error says the link is there and where it fails."""
    xml = tmp_path / "m.xml"
    xml.write_bytes(ALL.read_bytes())
    (tmp_path / "m.bin").symlink_to(target)
    with pytest.raises(
        WeightsError, match=f"there is none \\(expected .*m.bin, a link that leads to no file: {reason}\\)"
    ):
        load_ir(xml)


@pytest.mark.parametrize("digit", ["²", "٣", "３", "𝟑", "_1"])
def test_dims_take_ascii_digits_only_as_openvino_reads_them(tmp_path: Path, digit: str) -> None:
    xml = tmp_path / "m.xml"
    xml.write_text(ALL.read_text().replace("<dim>4</dim>", f"<dim>{digit}</dim>", 1), encoding="utf-8")
    with pytest.raises(IRStructureError, match=f"<dim>{digit}</dim> is not an integer"):
        load_ir(xml, SAMPLES / "all_reductions.bin")


@pytest.mark.parametrize("value", ["٢", "２", "_1", "+3", "9" * 5000, "0" * 5000 + "9" * 20, "99999999999999999999"])
def test_int_attributes_take_ascii_int64_only(value: str) -> None:
    """OpenVINO reads int attributes in ASCII digits, with no plus sign, as int64; Python's int() would take Unicode
    digits, underscores and a plus, and raise its own ValueError past 4300 digits. (The differential cases, against
    OpenVINO's reader, are in tests/ops/test_hostile_attributes.py.)"""
    from ovreduce.errors import ShapeInferenceError
    from ovreduce.ops.rules import int_attr, ints_attr

    model = load_ir(ALL, SAMPLES / "all_reductions.bin")
    model.close()
    hostile = model.layers[0]._replace(data={"a": value, "b": f"1,{value}"})
    with pytest.raises(ShapeInferenceError, match=r"^Cannot parse '.*' to number$"):
        int_attr(hostile, "a", 0)
    with pytest.raises(ShapeInferenceError, match=r"^Cannot parse '.*' in \"1,.*\"$"):
        ints_attr(hostile, "b")
    assert ints_attr(hostile._replace(data={"b": " 1, -2 ,3,"}), "b") == (1, -2, 3)
    assert int_attr(hostile._replace(data={"a": "0" * 5000 + "7"}), "a", 0) == 7


@pytest.mark.parametrize("where", ["Parameter", "Const"])
def test_a_shape_of_thousands_of_digits_is_read_as_openvino_reads_it(tmp_path: Path, where: str) -> None:
    """A dim written with more digits than Python's int() converts (4,300): with leading zeros it is the number
    OpenVINO reads; one past int64 is refused in the product's words, briefly, not Python's ("Exceeds the limit
    (4300 digits) for integer string conversion") after the whole attribute."""
    import openvino as ov

    from ovreduce.shapes import PartialShape

    old = 'shape="2,3,4,5"' if where == "Parameter" else 'element_type="i64" shape="1"'
    text = ALL.read_text()
    assert old in text
    xml = tmp_path / "m.xml"
    (tmp_path / "m.bin").write_bytes((SAMPLES / "all_reductions.bin").read_bytes())

    def written(dim: str) -> str:
        return text.replace(old, old.replace('"2,', f'"{dim},').replace('"1"', f'"{dim}"'), 1)

    xml.write_text(written("0" * 5000 + ("2" if where == "Parameter" else "1")))
    ops = [op for op in ov.Core().read_model(str(xml)).get_ops() if op.get_type_name() in ("Parameter", "Constant")]
    expected = {op.get_friendly_name(): PartialShape.parse(str(op.get_output_partial_shape(0))) for op in ops}
    model = load_ir(xml)
    model.close()
    assert {layer.name: layer.shape for layer in model.layers if layer.type in ("Parameter", "Const")} == expected
    xml.write_text(written("9" * 5000))
    with pytest.raises(IRStructureError, match=r"\(5000 digits\) does not fit in int64") as info:
        load_ir(xml)
    assert "4300" not in str(info.value) and len(str(info.value)) < 400, str(info.value)


@pytest.mark.parametrize("element", ["data", "rt_info"])
def test_thousands_of_attributes_parse_in_linear_time(tmp_path: Path, element: str) -> None:
    """lxml's attrib mapping is quadratic in the attribute count (12 s for 40,000 on one <data>); 200,000
    attributes (about 3 MB) must parse well inside the hang guard, in a child under an address-space limit."""
    attrs = " ".join(f'a{i}="{i}"' for i in range(200_000))
    text = ALL.read_text()
    if element == "data":
        text = text.replace("<data ", f"<data {attrs} ", 1)
    else:
        text = text.replace("</layer>", f'<rt_info><attribute name="x" version="0" {attrs}/></rt_info></layer>', 1)
    xml = tmp_path / "m.xml"
    xml.write_text(text)
    (tmp_path / "m.bin").write_bytes((SAMPLES / "all_reductions.bin").read_bytes())
    done = _cli("check", str(xml), "--format", "json", timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("axis", ["3", "1000", "-1", "-5"])
@pytest.mark.parametrize("kind", ["ti", "loop"])
def test_a_slicing_axis_the_input_does_not_have_is_refused_as_openvino_does(
    tmp_path: Path, kind: str, axis: str
) -> None:
    """OpenVINO reads a port map's slicing axis as unsigned and refuses the model when it is not an axis of the
    sliced input; ovreduce said nothing (the body was only left unfed)."""
    import re

    import openvino as ov

    from tests.ir import subgraphs

    model = subgraphs.ti_model() if kind == "ti" else subgraphs.loop_model(keep_dims=True)
    path = subgraphs.save(model, tmp_path, kind)
    path.write_text(re.sub(r'axis="[^"]*"', f'axis="{axis}"', path.read_text(), count=1))
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))
    with pytest.raises(IRStructureError, match=f"axis={axis} but input port [0-9] has rank 3; expected an axis from 0"):
        load_ir(path)


@pytest.mark.parametrize("kind", ["ti", "loop", "if"])
def test_a_negative_output_port_in_a_port_map_is_refused_as_openvino_does(tmp_path: Path, kind: str) -> None:
    import re

    import openvino as ov

    from tests.ir import subgraphs

    model = {"ti": subgraphs.ti_model, "if": subgraphs.if_model}.get(kind, lambda: subgraphs.loop_model())()
    path = subgraphs.save(model, tmp_path, kind)
    text = re.sub(r'(<output [^>]*external_port_id=")[0-9-]+', r"\g<1>-7", path.read_text(), count=1)
    path.write_text(text)
    with pytest.raises(RuntimeError):
        ov.Core().read_model(str(path))
    # OpenVINO reads no more of an <output> with a negative id than the number: the output it was mapping is
    # left without one, which it refuses (as ovreduce's check does, naming the unmapped output)
    done = _cli("check", str(path))
    assert done.returncode == 2, done
    assert "UNREADABLE" in done.stdout and "maps" in done.stdout and "OpenVINO refuses the model" in done.stdout


def test_a_lower_case_const_is_no_op_and_no_crash(tmp_path: Path) -> None:
    """OpenVINO translates the IR's "Const" only as written ("const" is no op to it, and it refuses the model):
    ovreduce's check does not take it for a Const, and refuses the model in OpenVINO's words instead of failing
    inside."""
    import openvino as ov

    from tests.ir.test_differential import AXES, BASE

    xml = tmp_path / "m.xml"
    xml.write_text(BASE.replace('type="Const"', 'type="const"'))
    xml.with_suffix(".bin").write_bytes(AXES)
    with pytest.raises(RuntimeError, match="doesn't contain the operation with type: const"):
        ov.Core().read_model(str(xml))
    done = _cli("check", "--verbose", str(xml))
    assert "internal error" not in done.stderr and "Traceback" not in done.stdout + done.stderr
    assert "UNREADABLE" in done.stdout and "doesn't contain the operation with type: const" in done.stdout, done


def test_a_hundred_thousand_escaped_commas_make_one_name() -> None:
    """A name of escaped commas is joined once, not once per comma (which took seconds for a 2 MB file)."""
    from ovreduce.ir.weights import Weights
    from tests.ir.test_differential import AXES, BASE

    model = parse_ir(BASE.replace('names="x"', 'names="' + "\\," * 100_000 + 'x"').encode(), Weights(AXES))
    assert model.layer("0").outputs[0].names == ("," * 100_000 + "x",)


def test_a_layer_with_twenty_thousand_ports_reads_its_edges_and_names_a_duplicate_port() -> None:
    """Every edge finds its port by id in a layer of thousands (a walk of the ports per edge was quadratic), and a
    port id used twice among them is named."""
    n = 20_000
    ports = "".join(f'<port id="{i}" precision="FP32"><dim>1</dim></port>' for i in range(n))
    layers = [
        '<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1" element_type="f32"/>'
        '<output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>',
        f'<layer id="1" name="cat" type="Concat" version="opset1"><data axis="0"/><input>{ports}</input>'
        f'<output><port id="{n}" precision="FP32"><dim>{n}</dim></port></output></layer>',
    ]
    edges = "".join(f'<edge from-layer="0" from-port="0" to-layer="1" to-port="{i}"/>' for i in range(n))
    xml = f'<net name="m" version="11"><layers>{"".join(layers)}</layers><edges>{edges}</edges></net>'
    model = parse_ir(xml.encode())
    assert len(model.edges) == n and model.producer("1", str(n - 1)) == ("0", "0")
    twice = xml.replace(f'<port id="{n - 1}" precision', '<port id="7" precision', 1)
    with pytest.raises(IRStructureError, match="port id 7 is used twice"):
        parse_ir(twice.encode())


@pytest.mark.parametrize("shared", ["0", "1"])
def test_an_output_sharing_an_input_ports_id_is_read_as_openvino_reads_it(tmp_path: Path, shared: str) -> None:
    """Edges say whether they mean an input or an output port: OpenVINO reads and compiles such a layer."""
    import openvino as ov

    from ovreduce.check import check_model

    declared = '<port id="2" precision="FP32" names="mean_last">'
    text = ALL.read_text().replace(declared, declared.replace('"2"', f'"{shared}"'))
    text = text.replace('from-layer="19" from-port="2"', f'from-layer="19" from-port="{shared}"')
    (tmp_path / "m.xml").write_text(text)
    (tmp_path / "m.bin").write_bytes((SAMPLES / "all_reductions.bin").read_bytes())
    report = check_model(load_ir(tmp_path / "m.xml"))
    [layer] = [r for r in report.reductions if r.layer_name == "mean_last"]
    [node] = [n for n in ov.Core().read_model(tmp_path / "m.xml").get_ops() if n.get_friendly_name() == "mean_last"]
    assert report.ok and layer.inferred_output_shape == [2, 3, 4, 1]
    assert str(node.get_output_partial_shape(0)) == "[2,3,4,1]"
