"""``--layer`` with the bare id or name of a layer inside a sub-graph body names the path that reaches it ("did
you mean 2/then/6?"), where it used to say only "no layer"; the path it names runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovreduce import load_ir
from ovreduce.errors import NotFoundError
from tests.ir import subgraphs

from .inprocess import run_cli


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return subgraphs.save(subgraphs.deep_if_model(), tmp_path_factory.mktemp("deep"), "deep")


def test_a_body_layers_id_names_its_path(capsys: pytest.CaptureFixture[str], deep: Path) -> None:
    model = load_ir(deep)
    ref = model.locate("If_1/then/ReduceMean_deep")
    layer_id = ref.layer.id
    assert ref.body_path is not None and layer_id not in {layer.id for layer in model.layers}, "a body-only id"
    with pytest.raises(NotFoundError) as caught:
        model.locate(layer_id)
    assert caught.value.candidates == (ref.path,)
    assert f"did you mean {ref.path!r}?" in caught.value.message

    for command in ("run", "inspect"):
        status, out, err = run_cli(capsys, command, str(deep), "--layer", layer_id)
        assert (status, out) == (2, "")
        assert f"no layer with id or name {layer_id!r} at the top level of {deep}" in err, err
        assert err.count("did you mean") == 1 and f"did you mean {ref.path!r}?" in err, err

    status, out, err = run_cli(capsys, "run", str(deep), "--layer", ref.path, "--format", "json")
    assert status == 0, err
    assert '"body_path": "' + ref.body_path + '"' in out


def test_a_body_layers_name_names_its_path(capsys: pytest.CaptureFixture[str], deep: Path) -> None:
    ref = load_ir(deep).locate("If_1/else/ReduceSum_else")
    status, _, err = run_cli(capsys, "run", str(deep), "--layer", "ReduceSum_else")
    assert status == 2
    assert f"did you mean {ref.path!r}?" in err and err.count("did you mean") == 1, err


def test_a_top_level_layer_that_is_no_reduction_names_the_body_reductions_of_its_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = subgraphs.save(subgraphs.if_model(), tmp_path, "if")
    model = load_ir(path)
    container = model.locate("If_1").layer
    then = model.locate("If_1/then/ReduceMean_then")
    other = model.locate("If_1/else/ReduceSum_else")
    assert then.layer.id == other.layer.id == container.id, "the bodies' reductions share the If's id"
    status, _, err = run_cli(capsys, "run", str(path), "--layer", container.id)
    assert status == 2
    assert "(If) is not a reduction" in err
    assert f"did you mean {then.path!r} or {other.path!r}?" in err, err


def test_an_unknown_key_still_says_no_layer(capsys: pytest.CaptureFixture[str], deep: Path) -> None:
    with pytest.raises(NotFoundError) as caught:
        load_ir(deep).locate("98")
    assert caught.value.candidates == ()
    assert "no layer with id or name '98'" in caught.value.message and "did you mean" not in caught.value.message
