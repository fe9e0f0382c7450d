"""OpenVINO extensions (``ovreduce._openvino``): openvino-tokenizers' loaded with the one Core, user-named ones
loaded once, and a model that needs an extension no one loaded told which ops and where they come from.

Everything runs on the installed OpenVINO and openvino-tokenizers (a core dependency); where a test needs a
process without the package, it hides it in a fresh interpreter (tests/ir/extension_ops.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import openvino_tokenizers
import pytest

import ovreduce
from ovreduce import _openvino
from ovreduce.check import check_model
from ovreduce.errors import InputError, IRStructureError
from ovreduce.ir.parser import load_ir
from ovreduce.shapes import PartialShape
from tests.ir.extension_ops import TOKENIZER_IR, TOKENIZER_IR_OPS, python, save_unknown_op_ir

LIBRARY = str(openvino_tokenizers._ext_path)
PIP = 'pip install "openvino-tokenizers==2026.4.1.*"'


def test_the_core_comes_with_the_tokenizers_extension() -> None:
    model = _openvino.core().read_model(str(TOKENIZER_IR))
    assert [i.get_element_type().get_type_name() for i in model.inputs] == ["string"]
    assert _openvino.tokenizers_status() is None
    assert _openvino.Extension("openvino_tokenizers", LIBRARY) in _openvino.loaded_extensions()


@pytest.mark.parametrize("name", ["openvino_tokenizers", LIBRARY], ids=["module", "library"])
def test_an_extension_is_loaded_once(name: str) -> None:
    """Named as a module or as its library, again and again: the library loaded with the Core, not another copy."""
    before = _openvino.loaded_extensions()
    assert ovreduce.load_extensions([name, name]) == (_openvino.Extension("openvino_tokenizers", LIBRARY),) * 2
    assert _openvino.loaded_extensions() == before


def test_a_library_named_by_path_is_what_reads_the_model() -> None:
    """Without openvino-tokenizers' module, its library named by path is all OpenVINO needs."""
    code = (
        "from ovreduce import _openvino as o\n"
        f"assert o.tokenizers_status() == 'openvino-tokenizers is not installed'\n"
        f"o.load_extensions([{LIBRARY!r}])\n"
        f"print(o.core().read_model({str(TOKENIZER_IR)!r}).outputs[0].get_any_name())\n"
    )
    done = python(code)
    assert (done.returncode, done.stdout.strip()) == (0, "input_ids"), done.stderr


EXPECTED = (
    "expected an OpenVINO extension library (a .so, .dll or .dylib file) or the name of a Python module that "
    "provides one, such as openvino_tokenizers"
)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing/libcustom.so", f"missing/libcustom.so: no such file; {EXPECTED}"),
        ("custom.dll", f"custom.dll: no such file; {EXPECTED}"),
        ("no_such_module", f"no_such_module: no such file, and no Python module of that name is installed; {EXPECTED}"),
        ("", f"an empty extension name; {EXPECTED}"),
        ("json", "json: the Python module names no OpenVINO extension library (expected its path as json._ext_path, "
                 "as openvino_tokenizers gives it); name the library file instead"),
    ],
    ids=["path", "dll", "module", "empty", "module-without-library"],
)  # fmt: skip
def test_a_name_that_gives_no_extension(name: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        ovreduce.load_extensions([name])
    assert (caught.value.message, caught.value.parameter) == (message, "extensions")


def test_a_folder_is_no_extension(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"^{re.escape(str(tmp_path))}: not a file; expected an OpenVINO extension"):
        ovreduce.load_extensions([str(tmp_path)])


def test_a_file_openvino_refuses(tmp_path: Path) -> None:
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"not a shared library")
    with pytest.raises(InputError) as caught:
        ovreduce.load_extensions([str(fake)])
    message = caught.value.message
    assert message.startswith(f"{fake}: OpenVINO 2026.4.1 could not load it as an extension: Cannot add extension.")
    assert message.endswith("; expected an extension library built for this OpenVINO")
    assert str(fake) not in {e.library for e in _openvino.loaded_extensions()}


def test_every_name_is_found_before_any_is_loaded(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^missing\.so: no such file"):
        ovreduce.load_extensions(["json", "missing.so"])  # json would fail later, when it is loaded


def test_the_tokenizer_op_list_is_the_installed_library_s() -> None:
    """Every op TOKENIZER_OPS names is registered by the installed library (its type names are in the binary)."""
    binary = Path(LIBRARY).read_bytes()
    assert {op for op in _openvino.TOKENIZER_OPS if b"\0" + op.encode() + b"\0" not in binary} == set()


def test_an_op_no_extension_provides_is_named(tmp_path: Path) -> None:
    model = load_ir(save_unknown_op_ir(tmp_path))
    [failed] = [f for f in check_model(model, engine="openvino").findings if f.code == "openvino-read-failed"]
    assert failed.message == (
        "OpenVINO could not read the model: the model has an op of no OpenVINO opset that no loaded extension "
        "provides: Frobnicate (version 'extension'); load the OpenVINO extension library that provides it "
        "(OpenVINO: Cannot create Frobnicate layer custom id:1 from unsupported opset: extension)"
    )


def test_where_no_native_rule_reaches_a_reduction_the_note_says_why_openvino_could_not(tmp_path: Path) -> None:
    """Reshaped, the ReduceSum's input (the unknown op's output) is OpenVINO's to infer, and it cannot read the
    model: the reduction stays unresolved, and the note says which op no extension provides."""
    report = check_model(load_ir(save_unknown_op_ir(tmp_path)), reshape={"x": PartialShape.static((4, 3))})
    assert report.reductions[0].status == "unresolved"
    assert report.notes == (
        "1 reduction input(s) stay unresolved: OpenVINO could not read the model either: the model has an op of no "
        "OpenVINO opset that no loaded extension provides: Frobnicate (version 'extension'); load the OpenVINO "
        "extension library that provides it (OpenVINO: Cannot create Frobnicate layer custom id:1 from unsupported "
        "opset: extension)",
    )


def test_tokenizer_ops_without_the_package_say_what_to_install() -> None:
    code = (
        "import json\nfrom ovreduce.check import check_model\nfrom ovreduce.ir.parser import load_ir\n"
        f"report = check_model(load_ir({str(TOKENIZER_IR)!r}), engine='openvino')\n"
        "print(json.dumps([f.message for f in report.findings if f.code == 'openvino-read-failed']))\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr
    [message] = json.loads(done.stdout)
    assert message == (
        "OpenVINO could not read the model: the model has ops of no OpenVINO opset that no loaded extension "
        f"provides: {', '.join(TOKENIZER_IR_OPS)} (version 'extension'); they are openvino-tokenizers' ops: "
        f"openvino-tokenizers is not installed; install the release for OpenVINO 2026.4.1: {PIP} (OpenVINO: "
        "Cannot create SpecialTokensSplit layer SpecialTokensSplit_16502 id:20 from unsupported opset: extension)"
    )


def test_tokenizer_and_other_ops_each_get_their_advice(tmp_path: Path) -> None:
    """A model with an op of openvino-tokenizers and one of nobody's, in a process without the package."""
    path = save_unknown_op_ir(tmp_path)
    ops = [("Frobnicate", "extension"), ("RegexSplit", "extension"), ("Parameter", "opset1")]
    code = (
        "import openvino as ov\nfrom ovreduce import _openvino as o\n"
        f"try:\n    o.core().read_model({str(path)!r})\nexcept Exception as exc:\n"
        f"    print(o.read_failure(exc, {ops!r}))\n"
    )
    done = python(code)
    assert done.stdout.strip() == (
        "the model has ops of no OpenVINO opset that no loaded extension provides: Frobnicate, RegexSplit (version "
        "'extension'); RegexSplit is openvino-tokenizers' op: openvino-tokenizers is not installed; install the "
        f"release for OpenVINO 2026.4.1: {PIP}; for Frobnicate, load the OpenVINO extension library that provides it "
        "(OpenVINO: Cannot create Frobnicate layer custom id:1 from unsupported opset: extension)"
    ), done.stderr


def test_an_op_of_a_newer_opset_is_openvino_s_own_message(tmp_path: Path) -> None:
    """opset99 is no extension's: OpenVINO's words stand alone, and the reader refuses the model as they say."""
    path = save_unknown_op_ir(tmp_path, "Relu", "opset99")
    with pytest.raises(RuntimeError) as info:
        _openvino.core().read_model(str(path))
    assert _openvino.read_failure(info.value) == "Cannot create Relu layer custom id:1 from unsupported opset: opset99"
    with pytest.raises(IRStructureError, match="unsupported opset: 'opset99'; OpenVINO refuses the model"):
        load_ir(path)


def test_openvino_is_not_imported_to_find_an_extension() -> None:
    code = (
        "import sys\nfrom ovreduce import _openvino as o\n"
        "o.find_extension('openvino_tokenizers')\n"
        "print(sorted(m for m in ('openvino', 'openvino_tokenizers') if m in sys.modules))\n"
    )
    done = python(code, without_tokenizers=False)
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize("made_by", ["2027.1.0.0-100-abcdef", None])
def test_a_tokenizer_op_the_loaded_release_lacks_names_the_releases(tmp_path: Path, made_by: str | None) -> None:
    """A tokenizer made by a newer openvino-tokenizers holds an op the loaded one lacks: the refusal said to load the
    extension library that provides it (with openvino-tokenizers loaded, its other ops read) and named no release.
    It names the loaded release and the one the tokenizer's rt_info says made it, and sends nobody to --extension."""
    from ovreduce.audit import audit_model

    source = Path(__file__).resolve().parent / "exports" / "llama_int4" / "openvino_tokenizer"
    text = source.with_suffix(".xml").read_text(encoding="utf-8")
    text = text.replace('type="Truncate" version="extension"', 'type="TruncateV2" version="extension"', 1)
    text = re.sub(r'\s*<openvino_tokenizers_version value="[^"]*" />', "", text)
    if made_by is not None:
        text = text.replace("</rt_info>", f'<openvino_tokenizers_version value="{made_by}" /></rt_info>', 1)
    path = tmp_path / "openvino_tokenizer.xml"
    path.write_text(text, encoding="utf-8")
    path.with_suffix(".bin").write_bytes(source.with_suffix(".bin").read_bytes())
    with pytest.raises(RuntimeError, match="TruncateV2"):  # OpenVINO's own reader, openvino-tokenizers loaded
        _openvino.core().read_model(str(path))
    model = load_ir(path)
    try:
        error = audit_model(model).error
    finally:
        model.close()
    loaded = _openvino._version("openvino-tokenizers")  # the package's release, as pip knows it
    said = f"TruncateV2 (version 'extension'); it is no op of the loaded openvino-tokenizers {loaded}, though"
    assert error is not None and said in error, error
    assert _openvino.LOAD_EXTENSION not in error, error
    if made_by is not None:
        assert f"the tokenizer was made by openvino-tokenizers {made_by} (its rt_info): install that release" in error
    else:
        assert "a newer openvino-tokenizers' op, most likely" in error, error
